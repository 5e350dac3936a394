"""The slave of mbsfmu's pythonfmu FMUs: one class, run inside the importing tool's Python.

Each FMU's script (written by :func:`mbsfmu.fmu.pythonfmu_export.build_pythonfmu`) subclasses
:class:`MbsfmuSlave` with the model's own values as class attributes: ``MODEL_FILE``,
``MODEL_NAME``, ``MODEL_GUID``, ``BINARY`` (the guard library's name), ``FORMULATION``,
``SOLVER`` (the start value of the parameter ``solver``, by name), ``VARIABLES`` (names in
value-reference order, as at build time) and ``N_STATE`` (length of the integrator state [y, y']).

The model runs on the C engine (:class:`mbsfmu.engine.extension.Engine`: the instance layer of
``mbs_instance.h`` that the native FMU's ``fmi2_glue.c`` runs as well): fmi2SetReal and
fmi2GetReal are its values (checked by it as well), fmi2ExitInitializationMode is its consistent
start, fmi2DoStep its do-step with dense output (the integrator continues across communication
points and restarts only after an input or parameter changed) and FMU states are its saved state.
So both FMU flavours take the same steps and give the same values at every communication point.
The engine's extension is compiled when the FMU is instantiated, in the importer's process (once
per model and mbsfmu version: mbsfmu's compile cache keeps it).  Where that is not possible (no C
compiler), or the FMU's formulation is not one of :data:`mbsfmu.engine.extension.ENGINE_FORMULATIONS`,
the instance integrates with the numpy formulations and the Python RKSTAB of
:mod:`mbsfmu.reference.formulations` instead (restarted at every fmi2DoStep, so its steps differ from the
native FMU's; outputs are updated at communication points only) and says so with a warning at
fmi2Instantiate.

The integration method is the Integer parameter ``solver`` (fmi2SetInteger / fmi2GetInteger; 0 =
rkstab, 1 = stiff, 2 = dop853), as in the native FMU: on the engine it is the engine's method, on the
numpy path 'stiff' and 'dop853' are scipy's Radau and DOP853 with the formulation's projection after
every step.  At fmi2Terminate the
work of each method that ran is logged under ``logStatistics`` (with debug logging on, as pythonfmu
passes messages), in the native FMU's words.

Every FMI call is checked in full before anything changes; a refused call changes nothing and
reports why (function, variable, value, time) through the FMU's guard library, which passes the
message to the importer's logger and returns fmi2Error (see mbsfmu.fmu.pythonfmu_export).
No exception leaves a method that pythonfmu calls: pythonfmu would turn it into fmi2Fatal.
"""

import base64
import ctypes
import hashlib
import json
import logging
import math
import os
import pathlib
import sys
import warnings

import numpy as np
from pythonfmu import Fmi2Causality, Fmi2Initial, Fmi2Slave, Fmi2Variability, Integer, Real
from pythonfmu.enums import Fmi2Status

from mbsfmu.codegen.fmu_variables import fmu_variables
from mbsfmu.core.constants import MAX_STEPS_PER_CALL, METHOD_KINDS
from mbsfmu.core.errors import ParameterError
from mbsfmu.core.solver_settings import check_setting, effective_atol
from mbsfmu.engine.extension import ENGINE_FORMULATIONS, Engine
from mbsfmu.equations.derive import derive
from mbsfmu.equations.numeric_model import NumericModel
from mbsfmu.fmu.model_description import LOG_STATISTICS
from mbsfmu.model.loader import load_model
from mbsfmu.reference.consistent_initialization import consistent_state
from mbsfmu.reference.constraint_rank import check_rank
from mbsfmu.reference.formulations import make_formulation
from mbsfmu.reference.integrators import integrate, integrate_projected

TIME_RTOL = 1e-9  # a communication point must match the FMU time within 1e-9 (1 + |t|)
ENGINE_MAX_STEPS = MAX_STEPS_PER_CALL  # internal steps one fmi2DoStep may take on the engine
NUMPY_MAX_STEPS = 1_000_000  # the same on the numpy path
MODES = ("instantiated", "initialization", "step", "terminated", "error")
STEPPING = ("step", "terminated", "error")  # modes that have an integrator state
OUTPUTS = ("residual", "output", "reaction")  # calculated outputs: never set
STATE_FORMAT = "mbsfmu-pythonfmu-state"
STATE_VERSION = 2
STATE_HEADER = ("format", "version", "guid", "model", "sha256")
STATE_FIELDS = ("mode", "time", "stop_time", "backend", "data")
NUMPY = "numpy"  # the backend name of the numpy path
METHOD_NAMES = {k: n for n, k in METHOD_KINDS.items()}  # solver value -> method name
#: the numpy path's scipy method for the engine's methods other than rkstab (projected after each step)
SCIPY_FALLBACK = {"stiff": "Radau", "dop853": "DOP853"}
AFTER_ERROR = "restore a state with fmi2SetFMUstate, or fmi2Reset"

_GUARDS = []  # guard libraries found by the slaves of this module
_NAMESPACES = []  # see keep_namespace


def keep_namespace(namespace: dict) -> None:
    """Hold one more reference to an FMU script's module namespace.

    pythonfmu 0.7's library finds the slave class by running the script again at every
    fmi2Instantiate, and afterwards releases one reference to the module's namespace that it
    never took (``Py_DECREF`` of the borrowed ``PyModule_GetDict``).  The script calls this at its
    top level, so that each of those runs first takes the reference that is then released; without
    it the namespace is freed and the next fmi2Instantiate fails (or crashes)."""
    _NAMESPACES.append(namespace)


def _find_guard(resources, binary):
    """The FMU's guard library that is handling this instantiation (the FMU's binary, loaded by
    the importer), else None (at build time, on Windows).  It is looked for where the FMU keeps
    it, then among the libraries the process has loaded under its name (an importer may load a
    copy of the binary from elsewhere)."""
    if resources is None or not sys.platform.startswith("linux"):
        return None
    expected = pathlib.Path(resources).parent / "binaries" / "linux64" / f"{binary}.so"
    lib = _open_guard(expected)
    if lib is None:
        try:
            with open("/proc/self/maps") as maps:
                loaded = {f[5] for f in (line.split(None, 5) for line in maps.read().splitlines())
                          if len(f) == 6 and f[5].endswith(f"/{binary}.so")}
        except OSError:
            loaded = set()
        lib = next((g for g in map(_open_guard, sorted(loaded)) if g is not None), None)
    if lib is not None and all(g._handle != lib._handle for g in _GUARDS):
        _GUARDS.append(lib)
    return lib


def _open_guard(path):
    """The already loaded library at ``path`` if it is a guard handling a call now, else None."""
    try:
        lib = ctypes.CDLL(str(path), mode=os.RTLD_NOLOAD | os.RTLD_LOCAL)
        lib.mbsfmu_guard_report.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p]
        lib.mbsfmu_guard_report.restype = ctypes.c_int
        lib.mbsfmu_guard_time.argtypes = [ctypes.c_double]
        lib.mbsfmu_guard_time.restype = ctypes.c_int
        lib.mbsfmu_guard_active.restype = ctypes.c_int
        lib.mbsfmu_guard_call_time.argtypes = [ctypes.POINTER(ctypes.c_double)]
        lib.mbsfmu_guard_call_time.restype = ctypes.c_int
        return lib if lib.mbsfmu_guard_active() else None
    except (OSError, AttributeError):
        return None


def _to_guard(status, text):
    """Log through the guard that is handling the current call; False if there is none."""
    category = b"logStatusError" if status >= Fmi2Status.error else b"logStatusWarning"
    data = text.encode("utf-8", "replace")
    return any(g.mbsfmu_guard_report(int(status), category, data) for g in _GUARDS)


def _call_time():
    """' at t=<time>' of the instance whose call a guard is handling ('' if none): for the
    static state functions, which pythonfmu calls without the instance."""
    t = ctypes.c_double()
    return next((f" at t={_num(t.value)}" for g in _GUARDS if g.mbsfmu_guard_call_time(ctypes.byref(t))), "")


def _num(v):
    """A number as Python writes it back exactly (0.05, 1e+300, nan, inf)."""
    try:
        return repr(float(v))
    except (TypeError, ValueError, OverflowError):
        return repr(v)


def _vr(vr):
    """The value reference the importer passed (pythonfmu hands them over as C ints)."""
    return int(vr) & 0xFFFFFFFF


def _a(type_name):
    """'a Real', 'an Integer'."""
    return f"{'an' if type_name[0] in 'AEIOU' else 'a'} {type_name}"


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# ---------------------------------------------------------------- FMU states
# A state is {format, version, guid, model, sha256, payload}: payload is the JSON text of
# {mode, time, stop_time, backend, data} and sha256 its checksum; backend names what saved it (the
# engine's build, or "numpy") and data is its state (the engine's saved state in base64, or the
# numpy path's {values, x}).  Serialized, it is the JSON header (everything but payload) on one
# line, a newline, then the payload.

def _seal(model, payload):
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return {"format": STATE_FORMAT, "version": STATE_VERSION, "guid": model.MODEL_GUID,
            "model": model.MODEL_NAME,
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "payload": text}


def _open_state(model, state):
    """(None, payload) for a state of this model whose checksum and contents are right, else
    (why not, None)."""
    if isinstance(state, dict) and "refused" in state:
        return f"it was refused when it was deserialized ({state['refused']})", None
    if not isinstance(state, dict) or any(k not in state for k in (*STATE_HEADER, "payload")):
        return "it is not a state of an mbsfmu pythonfmu FMU", None
    if state["format"] != STATE_FORMAT or state["version"] != STATE_VERSION:
        return f"unknown state format {state['format']!r} version {state['version']!r}", None
    if state["guid"] != model.MODEL_GUID:
        return (f"it was made by model {state['model']!r} (GUID {state['guid']!r}), this FMU is model "
                f"{model.MODEL_NAME!r} (GUID {model.MODEL_GUID!r}): a state of another FMU, or a corrupted "
                "header"), None
    text = state["payload"]
    if not isinstance(text, str) or not isinstance(state["sha256"], str) or \
            hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() != state["sha256"]:
        return "its checksum does not match its contents (corrupted or truncated)", None
    try:
        p = json.loads(text)
    except ValueError:
        return "its contents are not readable", None
    problem = _payload_problem(model, p)
    return (problem, None) if problem else (None, p)


def _payload_problem(model, p):
    if not isinstance(p, dict) or sorted(p) != sorted(STATE_FIELDS):
        return "its contents do not have the fields " + ", ".join(STATE_FIELDS)
    if p["mode"] not in MODES:
        return f"unknown mode {p['mode']!r}"
    if not (_is_number(p["time"]) and math.isfinite(p["time"])):
        return f"time {p['time']!r} is not a finite number"
    if p["stop_time"] is not None and not (_is_number(p["stop_time"]) and math.isfinite(p["stop_time"])):
        return f"stop time {p['stop_time']!r} is not a finite number"
    if p["backend"] == NUMPY:
        return _numpy_data_problem(model, p["mode"], p["data"])
    if not isinstance(p["backend"], str) or not isinstance(p["data"], str):
        return "its engine state is not readable"
    try:
        base64.b64decode(p["data"], validate=True)
    except ValueError:  # binascii.Error
        return "its engine state is not readable"
    return None


def _numpy_data_problem(model, mode, data):
    if not isinstance(data, dict) or sorted(data) != ["values", "x"]:
        return "its numpy state does not have the fields values, x"
    values = data["values"]
    if not isinstance(values, dict) or sorted(values) != sorted(model.VARIABLES):
        return "its values are not those of this model's variables"
    for name in model.VARIABLES:
        if not _is_number(values[name]) or math.isnan(values[name]):
            return f"the value of {name!r} is {values[name]!r}"
    x = data["x"]
    if mode in STEPPING:
        if not isinstance(x, list) or len(x) != model.N_STATE or \
                not all(_is_number(v) and math.isfinite(v) for v in x):
            return f"its integrator state is not {model.N_STATE} finite numbers"
    elif x is not None:
        return f"mode {mode!r} has no integrator state"
    return None


def _read_state(model, data):
    """(None, state) for serialized bytes of a state of this model, else (why not, None)."""
    head, newline, payload = bytes(data).partition(b"\n")
    if not newline:
        return "it has no header line", None
    try:
        header = json.loads(head.decode("utf-8"))
    except ValueError:  # also UnicodeDecodeError
        return "its header is not readable", None
    if not isinstance(header, dict) or sorted(header) != sorted(STATE_HEADER):
        return "its header does not have the fields " + ", ".join(STATE_HEADER), None
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        return "its contents are not UTF-8 text (corrupted)", None
    state = {**header, "payload": text}
    problem, _ = _open_state(model, state)
    return (problem, None) if problem else (None, state)


# ---------------------------------------------------------------- what integrates
# Two backends with one face: get/set values by value reference (set checks everything first and
# raises _Refused, changing nothing), set_time, start and do_step (warning texts go to warn(fn,
# text); a failure raises and leaves the values of the last communication point), time, save and
# restore (JSON-able data, see the FMU states above), and statistics: ({method name: counters},
# the current method's name), the counters being accepted, rejected, nfev, njev and ndec (None
# where the integrator does not count them), each method's since the start.


def statistics_text(work, current):
    """The logStatistics message of both FMU flavours ('integrator statistics: solver stiff
    (current): 187 accepted and 3 rejected steps, 1301 right-hand sides, 40 Jacobians, 62 LU
    decompositions'), the current method first, the others only if they did any work."""
    parts = []
    for name in sorted(work, key=lambda n: n != current):
        w = work[name]
        if name != current and not any(w.values()):
            continue
        items = [f"{w['accepted']} accepted and {w['rejected']} rejected steps" if w["rejected"] is not None
                 else f"{w['accepted']} accepted steps", f"{w['nfev']} right-hand sides"]
        items += [f"{w[k]} {label}" for k, label in (("njev", "Jacobians"), ("ndec", "LU decompositions"))
                  if w[k] is not None]
        parts.append(f"solver {name}{' (current)' if name == current else ''}: {', '.join(items)}")
    return "integrator statistics: " + "; ".join(parts)

class _Refused(Exception):
    """A call the backend refused or could not do; its message says why (nothing was changed)."""


class _EngineBackend:
    """The C engine, as the native FMU runs it."""

    max_steps = ENGINE_MAX_STEPS

    def __init__(self, system, formulation, names, warn, solver):
        self.engine = Engine(system, formulation, method=solver)  # also the value of 'solver'
        if self.engine.names != list(names):
            raise RuntimeError(f"the engine has the variables {self.engine.names}, the FMU {list(names)}")
        self.vr_solver = self.engine.vr["solver"]
        self.method = METHOD_KINDS[solver]  # kept here: reading it could compute outputs
        self.work = {}  # counters of the methods the run switched away from
        self.instance = self.engine.instance
        self.error = self.engine.module.EngineError
        self.name = f"engine {self.engine.module.__name__}"  # the build: its saved states only
        self.warn = warn
        self.stiffness_said = False
        self.numeric = None
        if any(p.functions is not None for p in system.time_parameters.values()):
            # time parameters given as Python functions: the engine calls them (expressions among
            # them depend on the parameters, kept in step with the engine's in _sync)

            self.numeric = NumericModel(derive(system), check=False)
            self.instance.set_functions(None, lambda t: self.numeric._tp_at(t))

    def _sync(self, vrs=None, values=None):
        """The parameter values of the time-parameter functions: those just set, or all (read
        only where the engine has its outputs, so that reading computes nothing)."""
        if self.numeric is None:
            return
        names, constants = self.engine.names, self.numeric.constant_names
        if vrs is None:
            params = dict(zip(constants, self.engine.get(constants).tolist()))
        else:
            params = {names[r]: float(v) for r, v in zip(vrs, values) if names[r] in self.numeric.params}
        if params:
            self.numeric.set_params({**self.numeric.params, **params}, check=False)

    def get(self, vrs):
        try:
            return self.instance.get(vrs).tolist()
        except self.error as exc:
            raise _Refused(str(exc)) from None

    def set(self, vrs, values):
        method = next((int(v) for r, v in zip(reversed(vrs), reversed(values)) if r == self.vr_solver),
                      self.method)
        # a switch of the method: its counters are readable only while it is the current one
        before = self._counters() if method != self.method else None
        try:
            self.instance.set(vrs, values)
        except self.error as exc:
            raise _Refused(str(exc)) from None
        if before is not None:
            self.work[METHOD_NAMES[self.method]] = before
            self.method = method
        self._sync(vrs, values)

    def _counters(self):
        """The current method's counters since the start (the engine's statistics are those of the
        current method, its Jacobians and decompositions those of the stiff one)."""
        st = self.instance.statistics()
        stiff = self.method == METHOD_KINDS["stiff"]
        return {"accepted": st["naccept"], "rejected": st["nreject"], "nfev": st["nfev"],
                "njev": st["njev"] if stiff else 0, "ndec": st["ndec"] if stiff else 0}

    def statistics(self):
        current = METHOD_NAMES[self.method]
        return {**self.work, current: self._counters()}, current

    def set_time(self, t0, t_stop):
        self.instance.set_time(t0, math.inf if t_stop is None else t_stop)

    def start(self, fn):
        try:
            warning = self.instance.start(None)
        except self.error as exc:
            raise _Refused(str(exc)) from None
        self.work = {}
        self.stiffness_said = False
        if warning:
            self.warn(fn, warning)

    def do_step(self, fn, t, h):
        try:
            self.instance.do_step(t, h)
        except self.error as exc:
            raise _Refused(str(exc)) from None
        if not self.stiffness_said:  # the engine's stiffness diagnostic, said once per run
            text = self.instance.statistics()["stiffness"]
            if text:
                self.stiffness_said = True
                self.warn(fn, text)

    @property
    def time(self):
        return self.instance.time

    def save(self):
        return base64.b64encode(self.instance.save()).decode("ascii")

    def restore(self, data, mode, time):
        try:
            self.instance.restore(base64.b64decode(data))
        except self.error as exc:
            raise _Refused(str(exc)) from None
        # a restored state has its outputs: reading computes nothing.  The counters of a method
        # other than the restored one are not readable: statistics name the restored one only
        self.method = int(self.instance.get([self.vr_solver])[0])
        self.work = {}
        self._sync()


class _NumpyBackend:
    """The numpy formulations with the Python RKSTAB, or scipy's Radau with the formulation's
    projection after every step for 'stiff', restarted at every do-step (where the C engine cannot
    be built).  The values live in a dict by name."""

    name = NUMPY
    max_steps = NUMPY_MAX_STEPS

    def __init__(self, slave):
        self.slave = slave
        self.system = slave.system
        self.names = [v.name for v in slave.fmu_vars]
        self.values = {v.name: (0.0 if v.start is None else float(v.start)) for v in slave.fmu_vars}
        self.numeric = self.form = self.x = None
        self.time = 0.0
        self.work = {}  # counters per method since the start (summed over the do-steps)

    def _of(self, *kinds):
        return {v.name: self.values[v.name] for v in self.slave.fmu_vars if v.kind in kinds}

    def get(self, vrs):
        return [self.values[self.names[vr]] for vr in vrs]

    def set(self, vrs, values):
        changes = {self.names[vr]: float(v) for vr, v in zip(vrs, values)}
        if self.numeric is not None:  # tunable parameters while stepping: the model checks them
            params = {n: changes.get(n, v) for n, v in self._of("constant").items()}
            if params != self.numeric.params:
                try:
                    self.numeric.set_params(params)
                except Exception as exc:
                    raise _Refused(str(exc)) from None
        self.values.update(changes)

    def set_time(self, t0, t_stop):
        self.time = t0

    def _build(self, params, inputs):
        numeric = derive(self.system).numeric(params)
        numeric.set_inputs(inputs)
        return numeric, make_formulation(self.slave.FORMULATION if numeric.m else None, numeric)

    def _outputs(self, numeric, form, t, x):
        """The output values at (t, x): coordinates, rates, constraint residual, user outputs."""
        f = numeric.f
        out = dict(zip(self._of("coordinate"), map(float, x[:f])))
        out.update(zip(self._of("velocity"), map(float, x[f:])))
        if numeric.m:  # max |c|, and max |A y' + a| of nonholonomic rows
            c, C, b1 = numeric.constraint_parts(t, x[:f])
            r = np.concatenate((c, C[len(c):] @ x[f:] + b1[len(c):]))
            out["constraint_residual"] = float(np.max(np.abs(r))) if len(r) else 0.0
        outputs = list(self.system.outputs.values())
        if outputs:
            expr = iter(numeric.expression_outputs(t, x[:f], x[f:], form.inputs(t)))
            lam = None
            if any(o.constraint for o in outputs):
                lam = dict(zip(self.system.constraint_names, form.multipliers(t, x)))
            for o in outputs:
                out[o.name] = float(lam[o.constraint] if o.constraint else next(expr))
        bad = [n for n, v in out.items() if not math.isfinite(v)]
        if bad:
            raise FloatingPointError(f"output {bad[0]!r} is {out[bad[0]]!r} at t={_num(t)}")
        return out

    def start(self, fn):
        t = self.time
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
                warnings.simplefilter("always")
                numeric, form = self._build(self._of("constant"), self._of("input"))
                x0 = np.array(list(self._of("coordinate").values()) + list(self._of("velocity").values()))
                if numeric.m:
                    given = [v.name for v in self.slave.fmu_vars if v.kind in ("coordinate", "velocity")
                             and self.values[v.name] != v.start]
                    x0 = consistent_state(numeric, x0, t0=t, given=given)
                    check_rank(form, t, x0[:numeric.f])
                numeric.check_state(t, x0[:numeric.f], x0[numeric.f:], form.inputs(t))
                outputs = self._outputs(numeric, form, t, x0)
        finally:
            self.slave._warn_all(fn, caught)
        self.numeric, self.form, self.x = numeric, form, x0
        self.values.update(outputs)
        self.work = {}

    def _integrate(self, method, t1, project, hmax):
        """One do-step's integration from (time, x) to t1: the solution and its counters."""
        rtol = self.values["solver_rtol"]
        atol = effective_atol(self.values["solver_atol"], rtol, bool(self.numeric.m))
        max_step = hmax if hmax > 0 else math.inf
        if method in SCIPY_FALLBACK:
            sol = integrate_projected(self.form, self.x, (self.time, t1), SCIPY_FALLBACK[method], [t1],
                                      project=project, rtol=rtol, atol=atol, max_step=max_step,
                                      max_steps=NUMPY_MAX_STEPS)
            # scipy's methods count neither their rejected steps nor Radau's decompositions
            stiff = method == "stiff"
            return sol, {"accepted": sol.naccept, "rejected": None, "nfev": sol.nfev,
                         "njev": sol.extra.get("njev", 0) if stiff else 0, "ndec": None if stiff else 0}
        sol = integrate(self.form, self.x, (self.time, t1), project=project, rtol=rtol, atol=atol,
                        t_eval=[t1], max_step=max_step, max_steps=NUMPY_MAX_STEPS)
        return sol, {"accepted": sol.naccept, "rejected": sol.nreject, "nfev": sol.nfev, "njev": 0, "ndec": 0}

    def statistics(self):
        return dict(self.work), METHOD_NAMES[int(self.values["solver"])]

    def do_step(self, fn, t0, h):
        t1 = t0 + h
        hmax = self.values["max_internal_step"]
        method = METHOD_NAMES[int(self.values["solver"])]
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
                warnings.simplefilter("always")
                params = self._of("constant")
                if params != self.numeric.params:
                    self.numeric.set_params(params)
                self.numeric.set_inputs(self._of("input"))
                project = self.form.project if self.form.projects else None
                sol, counts = self._integrate(method, t1, project, hmax)
                x = np.array(sol.x[:, -1], dtype=float)
                if not np.all(np.isfinite(x)):
                    raise FloatingPointError(f"the state became non-finite at t={_num(t1)}")
                outputs = self._outputs(self.numeric, self.form, t1, x)
        except Exception as exc:
            held = "".join(f"; input {n} = {_num(v)}" for n, v in self._of("input").items())
            raise _Refused(f"integration from t={_num(self.time)} to {_num(t1)} failed: "
                           f"{type(exc).__name__}: {exc}{held}") from None
        finally:
            self.slave._warn_all(fn, caught)
        self.x = x
        self.time = t1
        self.values.update(outputs)
        total = self.work.setdefault(method, dict.fromkeys(counts, 0))
        for k, v in counts.items():
            total[k] = None if v is None else total[k] + v

    def save(self):
        return {"values": dict(self.values), "x": None if self.x is None else [float(v) for v in self.x]}

    def restore(self, data, mode, time):
        values = {n: float(data["values"][n]) for n in self.names}
        for var in self.slave.fmu_vars:
            v = values[var.name]
            if var.kind in ("constant", "solver", "input"):
                why = self.slave._value_problem(var, v)
            else:
                why = None if math.isfinite(v) else "not finite"
            if why:
                raise _Refused(f"{self.slave._label(var)} = {_num(v)}: {why}")
        numeric, form = self.numeric, self.form
        if mode in STEPPING:
            params = {v.name: values[v.name] for v in self.slave.fmu_vars if v.kind == "constant"}
            try:
                if numeric is None:
                    numeric, form = self._build(params, {v.name: values[v.name] for v in self.slave.fmu_vars
                                                         if v.kind == "input"})
                elif params != numeric.params:
                    numeric.set_params(params)
            except Exception as exc:
                raise _Refused(f"{type(exc).__name__}: {exc}") from None
        else:
            numeric = form = None
        self.numeric, self.form = numeric, form
        self.values = values
        self.x = None if data["x"] is None else np.array(data["x"], dtype=float)
        self.time = float(time)
        self.work = {}  # not part of the state: statistics count on from the restore


def _why(exc):
    return str(exc) if isinstance(exc, _Refused) else f"{type(exc).__name__}: {exc}"


class MbsfmuSlave(Fmi2Slave):
    """An mbsfmu model as an FMI 2.0 Co-Simulation slave (subclassed per model, see the module
    docstring)."""

    MODEL_FILE = MODEL_NAME = MODEL_GUID = BINARY = ""
    FORMULATION = None
    SOLVER = "rkstab"
    VARIABLES: list = []
    N_STATE = 0
    log_categories = {**Fmi2Slave.log_categories, LOG_STATISTICS[0]: LOG_STATISTICS[1]}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.guid = self.MODEL_GUID  # pythonfmu writes it into modelDescription.xml
        self.guard = _find_guard(self.resources, self.BINARY)
        self.time = 0.0
        self.stop_time = None
        self.mode = "instantiated"
        try:
            self.system = load_model(pathlib.Path(self.resources) / "model" / self.MODEL_FILE)
            self.fmu_vars = fmu_variables(self.system, self.SOLVER)
            names = [v.name for v in self.fmu_vars]
            if names != self.VARIABLES:
                raise RuntimeError(f"the installed mbsfmu gives the model the variables {names}, the FMU "
                                   f"was built with {self.VARIABLES}: rebuild the FMU with this mbsfmu")
        except Exception as exc:
            self._report(Fmi2Status.error, "fmi2Instantiate",
                         f"cannot load the model file {self.MODEL_FILE!r}: {type(exc).__name__}: {exc}")
            raise
        self.description = self.system.title or None
        self.by_vr = {v.value_reference: v for v in self.fmu_vars}
        self.vr_hmax = next(v.value_reference for v in self.fmu_vars if v.name == "max_internal_step")
        self.vr_rtol = next(v.value_reference for v in self.fmu_vars if v.name == "solver_rtol")
        self.rtol_set = False  # solver_rtol was set: fmi2SetupExperiment's tolerance does not replace it
        self.backend = self._backend()
        # kept here: reading it from the engine before a do-step would compute the outputs of
        # inputs set since the last one, which the native FMU does only when they are read
        self.hmax = self.backend.get([self.vr_hmax])[0]
        for v in self.fmu_vars:
            integer = v.type == "Integer"
            get, put = (self.get_integer, self.set_integer) if integer else (self.get_real, self.set_real)
            self.register_variable((Integer if integer else Real)(
                v.name, start=v.start, description=v.description,
                causality=Fmi2Causality[v.causality], variability=Fmi2Variability[v.variability],
                initial=Fmi2Initial[v.initial] if v.initial else None,
                getter=lambda r=v.value_reference, get=get: get([r])[0],
                setter=lambda x, r=v.value_reference, put=put: put([r], [x])))
        self._tell_time()

    def _backend(self):
        """The C engine, or the numpy path where the engine cannot run this FMU (with a warning)."""
        constrained = self.system.constrained
        try:
            if constrained and self.FORMULATION is not None and self.FORMULATION not in ENGINE_FORMULATIONS:
                why = f"the formulation {self.FORMULATION!r} is not one of the C engine's"
            else:
                return _EngineBackend(self.system, self.FORMULATION, self.VARIABLES, self._warn, self.SOLVER)
        except Exception as exc:
            text = str(exc).strip().replace("\n", " ")
            why = (f"the C engine could not be built or loaded here ({type(exc).__name__}: "
                   f"{text[:600]}{'...' if len(text) > 600 else ''})")
        self._warn("fmi2Instantiate", f"{why}: this instance integrates with mbsfmu's numpy formulations "
                   "instead (restarted at every fmi2DoStep; its steps differ from those of the native FMU)")
        return _NumpyBackend(self)

    # ------------------------------------------------------------ reporting
    def _report(self, status, fn, text):
        message = f"{fn} at t={_num(self.time)}: {text}"
        if _to_guard(status, message):
            return
        if status < Fmi2Status.error and not hasattr(self, "backend"):
            # a warning while the slave is being made, without the guard: pythonfmu 0.7 crashes
            # when it frees an instance whose first messages are still queued (its destructor's
            # clearLogBuffer), so Python's logging has it
            logging.getLogger(__name__).warning("%s", message)
        else:
            self.log(message.replace("%", "%%"), status)  # pythonfmu: shown with debug logging on

    def _fail(self, fn, text):
        """Report the refusal of a call (fmi2Error); returns None."""
        self._report(Fmi2Status.error, fn, text)

    def _warn(self, fn, text):
        self._report(Fmi2Status.warning, fn, text)

    def _warn_all(self, fn, caught):
        for text in dict.fromkeys(str(w.message) for w in caught or ()):
            self._warn(fn, text)

    def _internal(self, fn, exc):
        self._fail(fn, f"internal error {type(exc).__name__}: {exc}; nothing was changed")

    def _tell_time(self):
        if self.guard is not None:
            self.guard.mbsfmu_guard_time(self.time)

    def _wrong_mode(self, fn, allowed):
        hint = f"; {AFTER_ERROR}" if self.mode == "error" else ""
        return self._fail(fn, f"not allowed in mode {self.mode!r} (only in {' or '.join(allowed)}){hint}")

    # ------------------------------------------------------------ variables
    @staticmethod
    def _label(var):
        return f"{var.name!r} (value reference {var.value_reference})"

    def _value_problem(self, var, value):
        """Why ``value`` is no value for the parameter or input ``var`` (None if it is one)."""
        if var.kind == "solver":
            try:
                check_setting(var.name, value)
            except ParameterError as exc:
                return str(exc)
            return None
        if not math.isfinite(value):
            return "not a finite number"
        if not var.min <= value <= var.max:
            return f"outside its declared range [{_num(var.min)}, {_num(var.max)}]"
        return None

    def _set_problem(self, var, value):
        """Why fmi2SetReal may not give ``var`` the value ``value`` now (None if it may)."""
        if var.kind in OUTPUTS:
            return "it is a calculated output of the FMU and can never be set"
        if var.kind in ("coordinate", "velocity") and self.mode == "step":
            return ("it is a state of the integrator inside the FMU: it can be set (as a start value) "
                    "only before fmi2ExitInitializationMode")
        if var.kind == "constant" and var.variability == "fixed" and self.mode == "step":
            return ("it is a fixed parameter (the constraints depend on it): it can be set only before "
                    "fmi2ExitInitializationMode")
        return self._value_problem(var, value)

    def _get(self, fn, type_name, vrs):
        """The values of the value references ``vrs`` of FMI type ``type_name`` (NaN, or 0 for
        Integers, where refused)."""
        cast, missing = (int, 0) if type_name == "Integer" else (float, math.nan)
        try:
            refs = [_vr(vr) for vr in vrs]
            unknown = [r for r in refs if r not in self.by_vr]
            wrong = next((self.by_vr[r] for r in refs if r in self.by_vr and self.by_vr[r].type != type_name),
                         None)
            if wrong is not None:
                self._fail(fn, f"{self._label(wrong)} is {_a(wrong.type)} variable: use fmi2Get{wrong.type}")
                return [missing] * len(vrs)
            values = iter(self.backend.get([r for r in refs if r in self.by_vr]))
            out = [missing if r in unknown else cast(next(values)) for r in refs]
            if unknown:
                self._fail(fn, f"unknown value reference {unknown[0]} (of {len(unknown)} "
                           f"unknown; the model has value references 0 to {len(self.fmu_vars) - 1})")
            return out
        except _Refused as exc:
            self._fail(fn, str(exc))
        except Exception as exc:
            self._internal(fn, exc)
        return [missing] * len(vrs)

    def _set(self, fn, type_name, vrs, values):
        """Set the value references ``vrs`` of FMI type ``type_name``: all of them or none."""
        try:
            if self.mode not in ("instantiated", "initialization", "step"):
                return self._wrong_mode(fn, ("instantiated", "initialization", "step"))
            refs, given = [], []
            for vr, value in zip(vrs, values):
                var = self.by_vr.get(_vr(vr))
                if var is None:
                    return self._fail(fn, f"unknown value reference {_vr(vr)} (value {_num(value)}; the "
                                      f"model has value references 0 to {len(self.fmu_vars) - 1}); "
                                      "nothing was changed")
                if var.type != type_name:
                    return self._fail(fn, f"{self._label(var)} is {_a(var.type)} variable: use "
                                      f"fmi2Set{var.type}; nothing was changed")
                number = int(value) if type_name == "Integer" else float(value)
                problem = self._set_problem(var, number)
                if problem:
                    shown = number if type_name == "Integer" else _num(value)
                    return self._fail(fn, f"{self._label(var)} = {shown} refused: {problem}; "
                                      "nothing was changed")
                refs.append(var.value_reference)
                given.append(float(number))
            if refs:
                self.backend.set(refs, given)
                self.hmax = next((v for r, v in zip(reversed(refs), reversed(given)) if r == self.vr_hmax),
                                 self.hmax)
                self.rtol_set |= self.vr_rtol in refs
        except _Refused as exc:  # the model's rules for the parameter values together
            text = ", ".join(f"{self.fmu_vars[r].name} = {_num(v)}" for r, v in zip(refs, given))
            self._fail(fn, f"{text} refused: {exc}; nothing was changed")
        except Exception as exc:
            self._internal(fn, exc)

    def get_real(self, vrs):
        return self._get("fmi2GetReal", "Real", vrs)

    def set_real(self, vrs, values):
        self._set("fmi2SetReal", "Real", vrs, values)

    def get_integer(self, vrs):
        """The Integer variable: the method 'solver'."""
        return self._get("fmi2GetInteger", "Integer", vrs)

    def set_integer(self, vrs, values):
        self._set("fmi2SetInteger", "Integer", vrs, values)

    def _no_variables(self, fn, type_name, vrs):
        if len(vrs):
            self._fail(fn, f"unknown value reference {_vr(vrs[0])}: the model has no {type_name} "
                       "variables (all are Real but the Integer 'solver')")

    def get_boolean(self, vrs):
        self._no_variables("fmi2GetBoolean", "Boolean", vrs)
        return [False] * len(vrs)

    def get_string(self, vrs):
        self._no_variables("fmi2GetString", "String", vrs)
        return [""] * len(vrs)

    def set_boolean(self, vrs, values):
        self._no_variables("fmi2SetBoolean", "Boolean", vrs)

    def set_string(self, vrs, values):
        self._no_variables("fmi2SetString", "String", vrs)

    def _held_inputs(self):
        inputs = [v for v in self.fmu_vars if v.kind == "input"]
        values = self.backend.get([v.value_reference for v in inputs])
        return "".join(f"; input {v.name} = {_num(x)}" for v, x in zip(inputs, values))

    # ------------------------------------------------------------ modes
    def setup_experiment(self, start_time, stop_time=None, tolerance=None):
        fn = "fmi2SetupExperiment"
        try:
            if self.mode != "instantiated":
                return self._wrong_mode(fn, ("instantiated",))
            if not math.isfinite(start_time):
                return self._fail(fn, f"start time {_num(start_time)} is not finite; nothing was changed")
            if stop_time is not None and not (math.isfinite(stop_time) and stop_time >= start_time):
                return self._fail(fn, f"stop time {_num(stop_time)} is not a finite time at or after the "
                                  f"start time {_num(start_time)}; nothing was changed")
            self.backend.set_time(float(start_time), None if stop_time is None else float(stop_time))
            self.time = float(start_time)
            self.stop_time = None if stop_time is None else float(stop_time)
            self._tell_time()
            # the importer's tolerance is solver_rtol's value unless that was set (as in the native FMU)
            if tolerance is not None and not self.rtol_set:
                problem = self._set_problem(self.by_vr[self.vr_rtol], float(tolerance))
                if problem:
                    return self._warn(fn, f"the tolerance is not taken ({problem}); solver_rtol keeps "
                                      "its value")
                self.backend.set([self.vr_rtol], [float(tolerance)])
        except Exception as exc:
            self._internal(fn, exc)

    def enter_initialization_mode(self):
        if self.mode != "instantiated":
            return self._wrong_mode("fmi2EnterInitializationMode", ("instantiated",))
        self.mode = "initialization"

    def exit_initialization_mode(self):
        fn = "fmi2ExitInitializationMode"
        if self.mode != "initialization":
            return self._wrong_mode(fn, ("initialization",))
        try:
            self.backend.start(fn)
        except Exception as exc:
            try:
                held = self._held_inputs()
            except Exception:
                held = ""
            return self._fail(fn, f"{_why(exc)}{held}; the FMU stays in initialization mode: correct the "
                              "value and call fmi2ExitInitializationMode again")
        self.mode = "step"

    def do_step(self, current_time, step_size):
        fn = "fmi2DoStep"
        ok = self._do_step(fn, current_time, step_size)
        # with the guard, a refused step is fmi2Error; without it (no guard library), False makes
        # pythonfmu return fmi2Discard, so that the importer sees at least that it failed
        return ok or self.guard is not None

    def _do_step(self, fn, t0, h):
        try:
            if self.mode != "step":
                self._wrong_mode(fn, ("step",))
                return False
            if not (h > 0 and math.isfinite(h)):
                self._fail(fn, f"communication step size {_num(h)} must be > 0 and finite; "
                           "nothing was changed")
                return False
            if not math.isfinite(t0) or abs(t0 - self.time) > TIME_RTOL * (1 + abs(self.time)):
                self._fail(fn, f"current communication point {_num(t0)} does not match the FMU time "
                           f"{_num(self.time)}; nothing was changed")
                return False
            hmax = self.hmax
            limit = self.backend.max_steps
            if hmax > 0 and h / hmax > limit:
                self._fail(fn, f"max_internal_step = {_num(hmax)} would need more than {limit} internal "
                           f"steps for the communication step of {_num(h)}; raise max_internal_step or "
                           "shorten the step; nothing was changed")
                return False
        except Exception as exc:
            self._internal(fn, exc)
            return False
        try:
            self.backend.do_step(fn, t0, h)
        except Exception as exc:
            self.mode = "error"
            self._fail(fn, f"{_why(exc)}; the outputs and time of t={_num(self.time)} stay valid; "
                       f"{AFTER_ERROR}")
            return False
        self.time = self.backend.time
        self._tell_time()
        return True

    def terminate(self):
        if self.mode not in ("step", "error"):
            return self._wrong_mode("fmi2Terminate", ("step", "error"))
        self.mode = "terminated"
        try:  # as the native FMU: the work of each method (pythonfmu passes it with debug logging on)
            text = statistics_text(*self.backend.statistics())
            self.log(text.replace("%", "%%"), Fmi2Status.ok, LOG_STATISTICS[0])
        except Exception as exc:
            self._internal("fmi2Terminate", exc)

    # ------------------------------------------------------------ FMU state
    def _get_fmu_state(self):
        try:
            return _seal(self, {"mode": self.mode, "time": self.time, "stop_time": self.stop_time,
                                "backend": self.backend.name, "data": self.backend.save()})
        except Exception as exc:
            self._internal("fmi2GetFMUstate", exc)
            return {"refused": "fmi2GetFMUstate failed"}

    def _set_fmu_state(self, state):
        fn = "fmi2SetFMUstate"
        try:
            problem, p = _open_state(self, state)
            if p is not None and p["backend"] != self.backend.name:
                problem = (f"it was saved by an instance running on {p['backend']}, this instance runs "
                           f"on {self.backend.name} (another build of mbsfmu's engine, or the numpy path "
                           "where no C compiler was found): restore it where it was saved")
            if problem:
                return self._fail(fn, f"state refused: {problem}; nothing was changed")
            try:
                self.backend.restore(p["data"], p["mode"], p["time"])
            except _Refused as exc:
                return self._fail(fn, f"state refused: {exc}; nothing was changed")
            self.hmax = self.backend.get([self.vr_hmax])[0]  # a restored state has its outputs
            self.time = float(p["time"])
            self.stop_time = None if p["stop_time"] is None else float(p["stop_time"])
            self.mode = p["mode"]
            self._tell_time()
        except Exception as exc:
            self._internal(fn, exc)

    @classmethod
    def _fmu_state_to_bytes(cls, state):
        try:
            head = json.dumps({k: state[k] for k in STATE_HEADER}, sort_keys=True, separators=(",", ":"))
            return (head + "\n" + state["payload"]).encode("utf-8")
        except Exception as exc:
            _to_guard(Fmi2Status.error, f"fmi2SerializeFMUstate{_call_time()}: the state cannot be "
                      f"serialized: {type(exc).__name__}: {exc}")
            return b""

    @classmethod
    def _fmu_state_from_bytes(cls, data):
        try:
            problem, state = _read_state(cls, data)
        except Exception as exc:
            problem, state = f"internal error {type(exc).__name__}: {exc}", None
        if problem:
            _to_guard(Fmi2Status.error, f"fmi2DeSerializeFMUstate{_call_time()}: serialized state of "
                      f"{len(data)} bytes refused: {problem}")
            return {"refused": problem}
        return state
