"""An FMI 2.0 Co-Simulation FMU as a block of a diagram (driven through fmpy's ``FMU2Slave``): the
runner's own block type for FMUs, which SSP import makes (:mod:`.ssp`); the standard blocks offer
it as ``blocks.FMU``.  (Its counterpart :mod:`.block_fmu` exports a Python block as an FMU.)

Ports are the FMU's own variables, with their names as in ``modelDescription.xml`` (which may
contain dots, e.g. ``rod_centre.x``): the inputs are the variables with ``causality="input"``,
the outputs those with ``causality="output"`` (or the names given as ``outputs=``).  A port's
type is the variable's type (Enumeration as ``"Integer"``).

Block semantics over one communication step ``[t, t + dt)`` (see :mod:`mbsfmu.runner.block`):

* ``output(t, u)`` sets the inputs that some output depends on directly (only when their values
  changed since they were last set) and reads the outputs: the FMU's values at the communication
  point ``t``.  It does not step the FMU.
* ``update(t, u)`` sets the inputs and calls ``fmi2DoStep(t, dt)``; the inputs are held over the
  step (zero-order hold), as FMI 2.0 Co-Simulation does without input derivatives.

Feed-through comes from ``<ModelStructure><Outputs>``: an output ``Unknown`` without a
``dependencies`` attribute depends on every input (the FMI 2.0 default), an empty one on none.
Outputs chosen with ``outputs=`` that are not listed there (locals, parameters) are taken to
depend on every input unless they are parameters or constants.

The hot path calls the FMU's C functions directly with value-reference and value arrays
allocated once per start (fmpy's ``getReal``/``setReal`` build new ctypes arrays on every call
and raise on a bad status; here the status is checked in place).  ``fmi2Warning`` counts as
success (the step was taken; the message stays in :attr:`FMU.messages`); ``fmi2Discard``,
``fmi2Error``, ``fmi2Fatal`` and ``fmi2Pending`` raise :class:`BlockError` with the messages the
FMU logged.
"""

from __future__ import annotations

import collections
import ctypes
import difflib
import logging
import math
import numbers
import pathlib
import shutil
import tempfile
import weakref

from ..fmu.fmpy_callbacks import recording_callbacks
from .block import Block, BlockError

_log = logging.getLogger(__name__)

_STATUS = ("OK", "Warning", "Discard", "Error", "Fatal", "Pending")
_OK, _WARNING, _DISCARD, _ERROR, _FATAL = 0, 1, 2, 3, 4
_PORT_TYPE = {"Real": "Real", "Integer": "Integer", "Enumeration": "Integer", "Boolean": "Boolean",
              "String": "String"}
#: how many FMU log messages a block keeps (oldest dropped first)
MAX_MESSAGES = 200


def _status_name(status: int) -> str:
    return _STATUS[status] if 0 <= status < len(_STATUS) else f"illegal status {status}"


def _close_names(name: str, names) -> str:
    close = difflib.get_close_matches(name, list(names), n=5, cutoff=0.5)
    return f" (close names: {', '.join(close)})" if close else ""


class _Messages(collections.deque):
    """The FMU's log messages ``(status, category, text)``; forwarded to :mod:`logging` when the
    block was created with ``log=True``."""

    def __init__(self, forward: str | None):
        super().__init__(maxlen=MAX_MESSAGES)
        self.forward = forward

    def append(self, item):
        super().append(item)
        if self.forward is not None:
            status, category, text = item
            level = logging.WARNING if status >= _WARNING else logging.INFO
            _log.log(level, "%s [%s] %s: %s", self.forward, _status_name(status), category, text)


def _check_value(name: str, kind: str, value):
    """``value`` converted for a variable of FMI type ``kind``; BlockError if it does not fit."""
    if kind == "Real":
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
    elif kind in ("Integer", "Enumeration"):
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)
    elif kind == "Boolean":
        if isinstance(value, bool) or type(value).__name__ == "bool_":
            return bool(value)
    elif kind == "String":
        if isinstance(value, str):
            return value
    raise BlockError(f"{name!r} is a {kind} variable; got {value!r} of type {type(value).__name__}")


def _check_range(v, value, where: str) -> None:
    """BlockError if a Real/Integer value lies outside the variable's declared min/max (the
    modelDescription's attributes, inclusive), naming the variable, the value and the range."""
    if v.type not in ("Real", "Integer", "Enumeration"):
        return
    lo = float(v.min) if v.min is not None else -math.inf
    hi = float(v.max) if v.max is not None else math.inf
    if value < lo or value > hi:  # (NaN is the FMU's to refuse, with its own message)
        raise BlockError(f"{where} = {value!r} is outside its declared range [{lo!r}, {hi!r}]")


class _Group:
    """Variables of one FMI type handled with one C call: value references and a value buffer."""

    __slots__ = ("kind", "positions", "vrs", "buffer", "n", "last")

    def __init__(self, kind: str, positions: list[int], vrs: list[int]):
        from fmpy.fmi2 import fmi2Boolean, fmi2Integer, fmi2Real, fmi2String, fmi2ValueReference

        ctype = {"Real": fmi2Real, "Integer": fmi2Integer, "Boolean": fmi2Boolean,
                 "String": fmi2String}[kind]
        self.kind = kind
        self.positions = positions  # indices into u (inputs) or into the output tuple
        self.n = len(vrs)
        self.vrs = (fmi2ValueReference * self.n)(*vrs)
        self.buffer = (ctype * self.n)()
        self.last = None  # the values last set (inputs), None: unknown


class FMU(Block):
    """An FMI 2.0 Co-Simulation FMU as a block.

    ``parameters``: ``{name: value}`` for variables with ``causality="parameter"``;
    ``start_values``: ``{name: value}`` for any other variable with a settable start (inputs,
    initial states with ``initial="exact"``/``"approx"``); both are set after
    ``fmi2SetupExperiment`` and before ``fmi2EnterInitializationMode`` on every :meth:`start`.
    ``outputs``: the output port names (default: every ``causality="output"`` variable); any
    variable of the FMU may be named.  ``instance_name`` defaults to the model identifier;
    ``log=True`` switches the FMU's debug logging on and forwards its messages to the
    :mod:`logging` logger ``mbsfmu.runner.fmu_block``.
    """

    def __init__(self, path, *, parameters=None, start_values=None, instance_name=None, log=False,
                 outputs=None, sample_time=None):
        from fmpy import read_model_description

        self.path = pathlib.Path(path)
        if not self.path.is_file():
            raise BlockError(f"FMU file {str(self.path)!r} does not exist")
        try:
            md = read_model_description(str(self.path), validate=False)
        except Exception as exc:  # fmpy raises plain Exceptions for broken archives/XML
            raise BlockError(f"cannot read the model description of {str(self.path)!r}: {exc}") from exc
        if md.fmiVersion != "2.0":
            raise BlockError(f"{self.path.name}: FMI version {md.fmiVersion} (the FMU block takes FMI 2.0)")
        if md.coSimulation is None:
            raise BlockError(f"{self.path.name}: the FMU does not support Co-Simulation")
        self.model_description = md
        self.variables = {v.name: v for v in md.modelVariables}
        self.inputs = tuple(v.name for v in md.modelVariables if v.causality == "input")
        if outputs is None:
            self.outputs = tuple(v.name for v in md.modelVariables if v.causality == "output")
        else:
            self.outputs = tuple(outputs)
            for name in self.outputs:
                self._variable(name, "output")
        for name in self.inputs + self.outputs:
            if self.variables[name].type not in _PORT_TYPE:
                raise BlockError(f"{name!r} has type {self.variables[name].type}, not a port type")
        self.sample_time = sample_time
        self.instance_name = instance_name or md.coSimulation.modelIdentifier
        self.log = bool(log)
        self.parameters = self._checked(parameters or {}, "parameter")
        self.start_values = self._checked(start_values or {}, "start value")
        self.messages = _Messages(self.instance_name if self.log else None)
        self._feedthrough = self._read_feedthrough()
        ft_inputs = {i for deps in self._feedthrough.values() for i in deps}
        self._ft_mask = [name in ft_inputs for name in self.inputs]
        self._slave = None
        self._callbacks = None
        self._unzip_dir = None
        self._cleanup = None
        self._states: weakref.WeakSet = weakref.WeakSet()
        self._failed = False
        self._fatal = False
        self._initialized = False

    # ---- description ------------------------------------------------------------------------

    def _variable(self, name, role):
        v = self.variables.get(name)
        if v is None:
            raise BlockError(f"{self.path.name} has no variable {name!r} (for {role})"
                             + _close_names(name, self.variables))
        return v

    def _checked(self, values, role):
        """Check names, causality and types of parameters / start values; returns a copy."""
        checked = {}
        for name, value in dict(values).items():
            v = self._variable(name, role)
            if role == "parameter":
                if v.causality != "parameter":
                    params = [n for n, w in self.variables.items() if w.causality == "parameter"]
                    raise BlockError(f"{name!r} of {self.path.name} is not a parameter (causality "
                                     f"{v.causality})" + _close_names(name, params))
            elif not (v.causality == "input" or (v.variability != "constant"
                                                 and v.initial in ("exact", "approx"))):
                raise BlockError(f"the start value of {name!r} of {self.path.name} cannot be set "
                                 f"(causality {v.causality}, variability {v.variability}, "
                                 f"initial {v.initial})")
            if v.variability == "constant":
                raise BlockError(f"{name!r} of {self.path.name} is a constant")
            checked[name] = _check_value(name, v.type, value)
            _check_range(v, checked[name], f"{role} {name!r} of {self.path.name}")
        return checked

    def _read_feedthrough(self):
        listed = {u.variable.name: u for u in self.model_description.outputs}
        result = {}
        for name in self.outputs:
            unknown = listed.get(name)
            if unknown is not None:
                deps = self.inputs if unknown.dependencies is None else tuple(
                    d.name for d in unknown.dependencies if d.causality == "input")
            elif self.variables[name].causality in ("parameter", "calculatedParameter") or \
                    self.variables[name].variability in ("constant", "fixed"):
                deps = ()
            else:
                deps = self.inputs
            if deps:
                result[name] = tuple(deps)
        return result

    def port_type(self, port):
        v = self.variables.get(port)
        if v is None or (port not in self.inputs and port not in self.outputs):
            raise BlockError(f"{self.path.name} has no port {port!r}"
                             + _close_names(port, self.inputs + self.outputs))
        return _PORT_TYPE[v.type]

    def feedthrough(self):
        return dict(self._feedthrough)

    @property
    def can_get_state(self) -> bool:
        return bool(self.model_description.coSimulation.canGetAndSetFMUstate)

    # ---- life cycle -------------------------------------------------------------------------

    def _extract(self):
        if self._unzip_dir is None or not pathlib.Path(self._unzip_dir).is_dir():
            from fmpy import extract

            d = tempfile.mkdtemp(prefix=f"mbsfmu_{self.path.stem}_")
            extract(str(self.path), d)
            self._unzip_dir = d
            self._cleanup = weakref.finalize(self, shutil.rmtree, d, True)
        return self._unzip_dir

    def start(self, t0, dt):
        from fmpy.fmi2 import FMU2Slave

        self._release()
        md = self.model_description
        self.dt = float(dt)
        self.messages.clear()
        try:
            slave = FMU2Slave(guid=md.guid, unzipDirectory=self._extract(),
                              modelIdentifier=md.coSimulation.modelIdentifier,
                              instanceName=self.instance_name)
        except Exception as exc:
            raise BlockError(f"cannot load {self.path.name}: {exc}") from exc
        self._callbacks = recording_callbacks(self.messages)
        try:
            slave.instantiate(callbacks=self._callbacks, loggingOn=self.log)
        except Exception as exc:
            slave.freeLibrary()
            raise BlockError(f"fmi2Instantiate of {self.path.name} failed" + self._log_text()) from exc
        self._slave = slave
        self._failed = self._fatal = self._initialized = False
        f = slave._functions
        self._c = slave.component
        self._f_get = {"Real": f["fmi2GetReal"], "Integer": f["fmi2GetInteger"],
                       "Boolean": f["fmi2GetBoolean"], "String": f["fmi2GetString"]}
        self._f_set = {"Real": f["fmi2SetReal"], "Integer": f["fmi2SetInteger"],
                       "Boolean": f["fmi2SetBoolean"], "String": f["fmi2SetString"]}
        self._f_step = f["fmi2DoStep"]
        self._make_groups()
        self._call("fmi2SetupExperiment", f["fmi2SetupExperiment"](self._c, 0, 0.0, float(t0), 0, 0.0))
        for name, value in {**self.start_values, **self.parameters}.items():
            self._set_one(name, value)
        self._call("fmi2EnterInitializationMode", f["fmi2EnterInitializationMode"](self._c))
        self._call("fmi2ExitInitializationMode", f["fmi2ExitInitializationMode"](self._c))
        self._initialized = True

    def _make_groups(self):
        def groups(names):
            by_kind: dict[str, tuple[list, list]] = {}
            for i, name in names:
                v = self.variables[name]
                pos, vrs = by_kind.setdefault(_PORT_TYPE[v.type], ([], []))
                pos.append(i)
                vrs.append(v.valueReference)
            return [_Group(kind, pos, vrs) for kind, (pos, vrs) in by_kind.items()]

        indexed = list(enumerate(self.inputs))
        self._in_ft = groups([(i, n) for i, n in indexed if self._ft_mask[i]])
        self._in_rest = groups([(i, n) for i, n in indexed if not self._ft_mask[i]])
        self._out = groups(list(enumerate(self.outputs)))
        # the common case, only Real outputs in port order: the buffer is the result
        self._out_plain = (len(self._out) == 1 and self._out[0].kind == "Real"
                           and self._out[0].positions == list(range(len(self.outputs))))

    def _set_one(self, name, value):
        v = self.variables[name]
        slave = self._slave
        kind = _PORT_TYPE[v.type]
        if kind == "Real":
            fn, arr = "fmi2SetReal", (ctypes.c_double * 1)(value)
        elif kind == "Integer":
            fn, arr = "fmi2SetInteger", (ctypes.c_int * 1)(value)
        elif kind == "Boolean":
            fn, arr = "fmi2SetBoolean", (ctypes.c_int * 1)(value)
        else:
            fn, arr = "fmi2SetString", (ctypes.c_char_p * 1)(value.encode())
        vr = (ctypes.c_uint * 1)(v.valueReference)
        self._call(f"{fn} of {name!r} = {value!r}", slave._functions[fn](slave.component, vr, 1, arr))

    def stop(self):
        self._release()
        if self._cleanup is not None:
            self._cleanup()
            self._cleanup = None
            self._unzip_dir = None

    def _release(self):
        slave, self._slave = self._slave, None
        if slave is None:
            return
        for state in list(self._states):
            state.free()
        if not self._fatal:  # after fmi2Fatal no function of the FMU may be called
            try:
                f = slave._functions
                if self._initialized and not self._failed:
                    f["fmi2Terminate"](slave.component)
                f["fmi2FreeInstance"](slave.component)
                slave.freeLibrary()
            except Exception as exc:  # stop must not fail; keep what the FMU said
                _log.warning("releasing %s: %s", self.instance_name, exc)
        self._initialized = False

    def __del__(self):
        try:
            self._release()
        except Exception:
            pass

    # ---- errors -----------------------------------------------------------------------------

    def _log_text(self):
        if not self.messages:
            return ""
        lines = [f"  [{_status_name(s)}] {text}" for s, _, text in self.messages]
        self.messages.clear()
        return "; the FMU logged:\n" + "\n".join(lines)

    def _call(self, what, status):
        """Raise BlockError for a status worse than fmi2Warning."""
        if status > _WARNING:
            self._fail(what, status)

    def _fail(self, what, status, extra=""):
        if status >= _ERROR:
            self._failed = True
        if status == _FATAL:
            self._fatal = True
        raise BlockError(f"{what} of {self.path.name} returned fmi2{_status_name(status)}{extra}"
                         + self._log_text())

    # ---- stepping (the hot path) ------------------------------------------------------------

    def _set_inputs(self, groups, u):
        for g in groups:
            values = [u[i] for i in g.positions]
            if values == g.last:  # NaN != NaN: a NaN is passed on every time
                continue
            try:
                if g.kind == "String":
                    g.buffer[:] = [s.encode() for s in values]
                else:
                    g.buffer[:] = values
            except TypeError as exc:
                names = [self.inputs[i] for i in g.positions]
                raise BlockError(f"inputs {names} of type {g.kind}: cannot take {values!r}") from exc
            status = self._f_set[g.kind](self._c, g.vrs, g.n, g.buffer)
            if status > _WARNING:
                g.last = None
                bad = [f"{self.inputs[i]} = {u[i]!r}" for i in g.positions
                       if isinstance(u[i], float) and not math.isfinite(u[i])]
                shown = bad or [f"{self.inputs[i]} = {u[i]!r}" for i in g.positions]
                self._fail(f"setting the input{'s' if len(shown) > 1 else ''} {', '.join(shown)}",
                           status)
            g.last = values

    def output(self, t, u):
        if self._slave is None:
            raise BlockError(f"{self.instance_name}: output() before start()")
        if self._in_ft:
            self._set_inputs(self._in_ft, u)
        if self._out_plain:
            g = self._out[0]
            status = self._f_get["Real"](self._c, g.vrs, g.n, g.buffer)
            if status > _WARNING:
                self._fail("reading the outputs", status)
            return g.buffer[:]
        y = [None] * len(self.outputs)
        for g in self._out:
            status = self._f_get[g.kind](self._c, g.vrs, g.n, g.buffer)
            if status > _WARNING:
                self._fail(f"reading the {g.kind} outputs", status)
            values = g.buffer[:]
            if g.kind == "Boolean":
                values = [v != 0 for v in values]
            elif g.kind == "String":
                values = [v.decode() for v in values]
            for i, v in zip(g.positions, values):
                y[i] = v
        return y

    def update(self, t, u):
        if self._slave is None:
            raise BlockError(f"{self.instance_name}: update() before start()")
        if self._in_ft:
            self._set_inputs(self._in_ft, u)
        if self._in_rest:
            self._set_inputs(self._in_rest, u)
        status = self._f_step(self._c, t, self.dt, 1)
        if status != _OK and status != _WARNING:
            extra = ""
            if status == _DISCARD:
                try:
                    extra = f" (last successful time {self._slave.getRealStatus(2):.17g})"
                except Exception:
                    pass
            self._fail(f"fmi2DoStep(t={t!r}, h={self.dt!r})", status, extra)

    # ---- state snapshots --------------------------------------------------------------------

    def get_state(self):
        if not self.can_get_state:
            return None
        if self._slave is None:
            raise BlockError(f"{self.instance_name}: get_state() before start()")
        from fmpy.fmi2 import fmi2FMUstate

        ptr = fmi2FMUstate()
        self._call("fmi2GetFMUstate",
                   self._slave._functions["fmi2GetFMUstate"](self._c, ctypes.byref(ptr)))
        state = _FMUState(self, ptr)
        self._states.add(state)
        return state

    def set_state(self, state):
        if state is None:
            raise BlockError(f"{self.instance_name}: no state to restore (get_state returned None)")
        if not isinstance(state, _FMUState) or state.owner() is not self or state.slave is not self._slave \
                or state.ptr is None:
            raise BlockError(f"{self.instance_name}: the state was not taken from this running instance "
                             "(or the block was restarted or stopped since)")
        self._call("fmi2SetFMUstate", self._slave._functions["fmi2SetFMUstate"](self._c, state.ptr))
        for g in self._in_ft + self._in_rest:
            g.last = None  # the restored FMU holds the inputs of the snapshot


class _FMUState:
    """An ``fmi2FMUstate`` owned by one FMU instance; freed when collected or when the block
    stops (whichever comes first)."""

    __slots__ = ("owner", "slave", "ptr", "__weakref__")

    def __init__(self, block: FMU, ptr):
        self.owner = weakref.ref(block)
        self.slave = block._slave
        self.ptr = ptr

    def free(self):
        ptr, self.ptr = self.ptr, None
        if ptr is not None and self.slave is not None:
            self.slave._functions["fmi2FreeFMUstate"](self.slave.component, ctypes.byref(ptr))
        self.slave = None

    def __del__(self):
        try:
            block = self.owner()
            if block is not None and block._slave is self.slave and not block._fatal:
                self.free()
        except Exception:
            pass
