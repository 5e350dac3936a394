"""The slave of mbsfmu's pythonfmu FMUs: one class, run inside the importing tool's Python.

Each FMU's script (written by :func:`mbsfmu.fmu.pythonfmu_export.build_pythonfmu`) subclasses
:class:`MbsfmuSlave` with the model's own values as class attributes: ``MODEL_FILE``,
``MODEL_NAME``, ``MODEL_GUID``, ``BINARY`` (the guard library's name), ``FORMULATION``,
``VARIABLES`` (names in value-reference order, as at build time) and ``N_STATE`` (length of the
integrator state [y, y']).

Every FMI call is checked in full before anything changes; a refused call changes nothing and
reports why (function, variable, value, time) through the FMU's guard library, which passes the
message to the importer's logger and returns fmi2Error (see mbsfmu.fmu.pythonfmu_export).
No exception leaves a method that pythonfmu calls: pythonfmu would turn it into fmi2Fatal.
"""

import ctypes
import hashlib
import json
import math
import os
import pathlib
import sys
import warnings

import numpy as np
from pythonfmu import Fmi2Causality, Fmi2Initial, Fmi2Slave, Fmi2Variability, Real
from pythonfmu.enums import Fmi2Status

TIME_RTOL = 1e-9  # a communication point must match the FMU time within 1e-9 (1 + |t|)
MAX_STEPS = 1_000_000  # internal steps one fmi2DoStep may take
MODES = ("instantiated", "initialization", "step", "terminated", "error")
STEPPING = ("step", "terminated", "error")  # modes that have an integrator state
OUTPUTS = ("residual", "output", "reaction")  # calculated outputs: never set
STATE_FORMAT = "mbsfmu-pythonfmu-state"
STATE_VERSION = 1
STATE_HEADER = ("format", "version", "guid", "model", "sha256")
STATE_FIELDS = ("mode", "time", "stop_time", "values", "x")
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


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# ---------------------------------------------------------------- FMU states
# A state is {format, version, guid, model, sha256, payload}: payload is the JSON text of
# {mode, time, stop_time, values, x} and sha256 its checksum.  Serialized, it is the JSON header
# (everything but payload) on one line, a newline, then the payload.

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
    values = p["values"]
    if not isinstance(values, dict) or sorted(values) != sorted(model.VARIABLES):
        return "its values are not those of this model's variables"
    for name in model.VARIABLES:
        if not _is_number(values[name]) or math.isnan(values[name]):
            return f"the value of {name!r} is {values[name]!r}"
    x = p["x"]
    if p["mode"] in STEPPING:
        if not isinstance(x, list) or len(x) != model.N_STATE or \
                not all(_is_number(v) and math.isfinite(v) for v in x):
            return f"its integrator state is not {model.N_STATE} finite numbers"
    elif x is not None:
        return f"mode {p['mode']!r} has no integrator state"
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


class MbsfmuSlave(Fmi2Slave):
    """An mbsfmu model as an FMI 2.0 Co-Simulation slave (subclassed per model, see the module
    docstring)."""

    MODEL_FILE = MODEL_NAME = MODEL_GUID = BINARY = ""
    FORMULATION = None
    VARIABLES: list = []
    N_STATE = 0

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.guid = self.MODEL_GUID  # pythonfmu writes it into modelDescription.xml
        self.guard = _find_guard(self.resources, self.BINARY)
        self.time = 0.0
        self.stop_time = None
        self.mode = "instantiated"
        self.numeric = self.form = self.x = None
        try:
            from mbsfmu.fmu.model_description import fmu_variables
            from mbsfmu.model.loader import load_model

            self.system = load_model(pathlib.Path(self.resources) / "model" / self.MODEL_FILE)
            self.fmu_vars = fmu_variables(self.system)
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
        self.values = {v.name: (0.0 if v.start is None else float(v.start)) for v in self.fmu_vars}
        for v in self.fmu_vars:
            self.register_variable(Real(
                v.name, start=v.start, description=v.description,
                causality=Fmi2Causality[v.causality], variability=Fmi2Variability[v.variability],
                initial=Fmi2Initial[v.initial] if v.initial else None,
                getter=lambda n=v.name: self.values[n],
                setter=lambda x, n=v.name: self.values.__setitem__(n, float(x))))
        self._tell_time()

    # ------------------------------------------------------------ reporting
    def _report(self, status, fn, text):
        message = f"{fn} at t={_num(self.time)}: {text}"
        if not _to_guard(status, message):
            self.log(message.replace("%", "%%"), status)  # pythonfmu: shown with debug logging on

    def _fail(self, fn, text):
        """Report the refusal of a call (fmi2Error); returns None."""
        self._report(Fmi2Status.error, fn, text)

    def _internal(self, fn, exc):
        self._fail(fn, f"internal error {type(exc).__name__}: {exc}; nothing was changed")

    def _tell_time(self):
        if self.guard is not None:
            self.guard.mbsfmu_guard_time(self.time)

    def _wrong_mode(self, fn, allowed):
        hint = f"; {AFTER_ERROR}" if self.mode == "error" else ""
        return self._fail(fn, f"not allowed in mode {self.mode!r} (only in {' or '.join(allowed)}){hint}")

    # ------------------------------------------------------------ variables
    def _names(self, *kinds):
        return [v.name for v in self.fmu_vars if v.kind in kinds]

    def _params(self):
        return {n: self.values[n] for n in self._names("constant")}

    def _inputs(self):
        return {n: self.values[n] for n in self._names("input")}

    @staticmethod
    def _label(var):
        return f"{var.name!r} (value reference {var.value_reference})"

    def _value_problem(self, var, value):
        """Why ``value`` is no value for the parameter or input ``var`` (None if it is one)."""
        from mbsfmu.errors import ParameterError
        from mbsfmu.solver_settings import check_setting

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

    def get_real(self, vrs):
        try:
            out, unknown = [], []
            for vr in vrs:
                var = self.by_vr.get(_vr(vr))
                out.append(self.values[var.name] if var is not None else math.nan)
                if var is None:
                    unknown.append(_vr(vr))
            if unknown:
                self._fail("fmi2GetReal", f"unknown value reference {unknown[0]} (of {len(unknown)} "
                           f"unknown; the model has value references 0 to {len(self.fmu_vars) - 1})")
            return out
        except Exception as exc:
            self._internal("fmi2GetReal", exc)
            return [math.nan] * len(vrs)

    def set_real(self, vrs, values):
        fn = "fmi2SetReal"
        try:
            if self.mode not in ("instantiated", "initialization", "step"):
                return self._wrong_mode(fn, ("instantiated", "initialization", "step"))
            changes = {}
            for vr, value in zip(vrs, values):
                var = self.by_vr.get(_vr(vr))
                if var is None:
                    return self._fail(fn, f"unknown value reference {_vr(vr)} (value {_num(value)}; the "
                                      f"model has value references 0 to {len(self.fmu_vars) - 1}); "
                                      "nothing was changed")
                problem = self._set_problem(var, float(value))
                if problem:
                    return self._fail(fn, f"{self._label(var)} = {_num(value)} refused: {problem}; "
                                      "nothing was changed")
                changes[var.name] = float(value)
            if self.mode == "step":  # tunable parameters between steps: the model checks them
                params = {n: changes.get(n, v) for n, v in self._params().items()}
                if params != self.numeric.params:
                    try:
                        self.numeric.set_params(params)
                    except Exception as exc:
                        given = ", ".join(f"{n} = {_num(v)}" for n, v in changes.items())
                        return self._fail(fn, f"{given} refused: {exc}; nothing was changed")
            self.values.update(changes)
        except Exception as exc:
            self._internal(fn, exc)

    def _no_variables(self, fn, type_name, vrs):
        if len(vrs):
            self._fail(fn, f"unknown value reference {_vr(vrs[0])}: the model has no {type_name} "
                       "variables (all are Real)")

    def get_integer(self, vrs):
        self._no_variables("fmi2GetInteger", "Integer", vrs)
        return [0] * len(vrs)

    def get_boolean(self, vrs):
        self._no_variables("fmi2GetBoolean", "Boolean", vrs)
        return [False] * len(vrs)

    def get_string(self, vrs):
        self._no_variables("fmi2GetString", "String", vrs)
        return [""] * len(vrs)

    def set_integer(self, vrs, values):
        self._no_variables("fmi2SetInteger", "Integer", vrs)

    def set_boolean(self, vrs, values):
        self._no_variables("fmi2SetBoolean", "Boolean", vrs)

    def set_string(self, vrs, values):
        self._no_variables("fmi2SetString", "String", vrs)

    # ------------------------------------------------------------ model and outputs
    def _build(self, params, inputs):
        """NumericModel and formulation for these parameter and input values."""
        from mbsfmu.formulations import make_formulation

        numeric = self.system.equations().numeric(params)
        numeric.set_inputs(inputs)
        return numeric, make_formulation(self.FORMULATION if numeric.m else None, numeric)

    def _outputs(self, numeric, form, t, x):
        """The output values at (t, x): coordinates, rates, constraint residual, user outputs."""
        f = numeric.f
        out = dict(zip(self._names("coordinate"), map(float, x[:f])))
        out.update(zip(self._names("velocity"), map(float, x[f:])))
        if numeric.m:
            c = numeric.constraint_parts(t, x[:f])[0]
            out["constraint_residual"] = float(np.max(np.abs(c))) if len(c) else 0.0
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

    def _held_inputs(self):
        return "".join(f"; input {n} = {_num(v)}" for n, v in self._inputs().items())

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
            self.time = float(start_time)
            self.stop_time = None if stop_time is None else float(stop_time)
            self._tell_time()
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
        caught = []
        try:
            from mbsfmu.formulations.consistent_initialization import consistent_state
            from mbsfmu.simulation.simulate import check_rank

            t = self.time
            with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
                warnings.simplefilter("always")
                numeric, form = self._build(self._params(), self._inputs())
                x0 = np.array([self.values[n] for n in self._names("coordinate") + self._names("velocity")])
                if numeric.m:
                    given = [v.name for v in self.fmu_vars if v.kind in ("coordinate", "velocity")
                             and self.values[v.name] != v.start]
                    x0 = consistent_state(numeric, x0, t0=t, given=given)
                    check_rank(form, t, x0[:numeric.f])
                numeric.check_state(t, x0[:numeric.f], x0[numeric.f:], form.inputs(t))
                outputs = self._outputs(numeric, form, t, x0)
        except Exception as exc:
            self._warn_all(fn, caught)
            return self._fail(fn, f"{type(exc).__name__}: {exc}{self._held_inputs()}; the FMU stays in "
                              "initialization mode: correct the value and call fmi2ExitInitializationMode "
                              "again")
        self._warn_all(fn, caught)
        self.numeric, self.form, self.x = numeric, form, x0
        self.values.update(outputs)
        self.mode = "step"

    def _warn_all(self, fn, caught):
        for text in dict.fromkeys(str(w.message) for w in caught or ()):
            self._report(Fmi2Status.warning, fn, text)

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
            hmax = self.values["max_internal_step"]
            if hmax > 0 and h / hmax > MAX_STEPS:
                self._fail(fn, f"max_internal_step = {_num(hmax)} would need more than {MAX_STEPS} internal "
                           f"steps for the communication step of {_num(h)}; raise max_internal_step or "
                           "shorten the step; nothing was changed")
                return False
        except Exception as exc:
            self._internal(fn, exc)
            return False
        caught = []
        t1 = t0 + h
        try:
            from mbsfmu.formulations.rkstab import integrate

            with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
                warnings.simplefilter("always")
                params = self._params()
                if params != self.numeric.params:
                    self.numeric.set_params(params)
                self.numeric.set_inputs(self._inputs())
                project = self.form.project if self.form.projects else None
                sol = integrate(self.form, self.x, (self.time, t1), project=project,
                                rtol=self.values["solver_rtol"], atol=self.values["solver_atol"],
                                t_eval=[t1], max_step=hmax if hmax > 0 else math.inf, max_steps=MAX_STEPS)
                x = np.array(sol.x[:, -1], dtype=float)
                if not np.all(np.isfinite(x)):
                    raise FloatingPointError(f"the state became non-finite at t={_num(t1)}")
                outputs = self._outputs(self.numeric, self.form, t1, x)
        except Exception as exc:
            self._warn_all(fn, caught)
            self.mode = "error"
            self._fail(fn, f"integration from t={_num(self.time)} to {_num(t1)} failed: "
                       f"{type(exc).__name__}: {exc}{self._held_inputs()}; the outputs and time of "
                       f"t={_num(self.time)} stay valid; {AFTER_ERROR}")
            return False
        self._warn_all(fn, caught)
        self.x = x
        self.time = t1
        self.values.update(outputs)
        self._tell_time()
        return True

    def terminate(self):
        if self.mode not in ("step", "error"):
            return self._wrong_mode("fmi2Terminate", ("step", "error"))
        self.mode = "terminated"

    # ------------------------------------------------------------ FMU state
    def _get_fmu_state(self):
        try:
            return _seal(self, {"mode": self.mode, "time": self.time, "stop_time": self.stop_time,
                          "values": dict(self.values),
                          "x": None if self.x is None else [float(v) for v in self.x]})
        except Exception as exc:
            self._internal("fmi2GetFMUstate", exc)
            return {"refused": "fmi2GetFMUstate failed"}

    def _set_fmu_state(self, state):
        fn = "fmi2SetFMUstate"
        try:
            problem, p = _open_state(self, state)
            values = p["values"] if p else {}
            for var in self.fmu_vars if p else ():
                v = float(values[var.name])
                if var.kind in ("constant", "solver", "input"):
                    why = self._value_problem(var, v)
                else:
                    why = None if math.isfinite(v) else "not finite"
                if why:
                    problem = f"{self._label(var)} = {_num(v)}: {why}"
                    break
            if problem:
                return self._fail(fn, f"state refused: {problem}; nothing was changed")
            numeric, form = self.numeric, self.form
            if p["mode"] in STEPPING:
                params = {n: float(values[n]) for n in self._names("constant")}
                try:
                    if numeric is None:
                        numeric, form = self._build(params, {n: values[n] for n in self._names("input")})
                    elif params != numeric.params:
                        numeric.set_params(params)
                except Exception as exc:
                    return self._fail(fn, f"state refused: {type(exc).__name__}: {exc}; nothing was changed")
            else:
                numeric = form = None
            self.numeric, self.form = numeric, form
            self.values = {n: float(values[n]) for n in self.VARIABLES}
            self.x = None if p["x"] is None else np.array(p["x"], dtype=float)
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
