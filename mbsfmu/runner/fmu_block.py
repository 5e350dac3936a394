"""An FMU as a block of a diagram: FMI 2.0 and FMI 3.0, Co-Simulation and Model Exchange (driven
through fmpy's ``FMU2Slave``/``FMU3Slave``/``FMU2Model``/``FMU3Model``, whose C functions
:mod:`.fmi_access` calls per version): the runner's own block type for FMUs, which SSP import
makes (:mod:`.ssp`); the standard blocks offer it as ``blocks.FMU``.  (Its counterpart
:mod:`.block_fmu` exports a Python block as an FMU.)

Ports are the FMU's own variables, with their names as in ``modelDescription.xml`` (which may
contain dots, e.g. ``rod_centre.x``): the inputs are the variables with ``causality="input"``,
the outputs those with ``causality="output"`` (or the names given as ``outputs=``).  A port's
type is the variable's type (FMI 3.0's Float64/Float32 as ``"Real"``, its integer types and every
Enumeration as ``"Integer"``).

Interface: ``interface='cs'`` runs the FMU's Co-Simulation (its own integrator), ``'me'`` its
Model Exchange (the block integrates the continuous states with a scipy integrator,
:mod:`.me_integration`: ``method``, ``rtol``, ``atol``, ``max_step``); the default is
Co-Simulation if the FMU declares it, else Model Exchange.

Block semantics over one communication step ``[t, t + dt)`` (see :mod:`mbsfmu.runner.block`):

* ``output(t, u)`` sets the inputs that some output depends on directly (only when their values
  changed since they were last set) and reads the outputs: the FMU's values at the communication
  point ``t``.  It does not step the FMU.
* ``update(t, u)`` sets the inputs and calls ``fmi2DoStep``/``fmi3DoStep(t, dt)`` (Co-Simulation)
  or integrates the states from ``t`` to ``t + dt`` (Model Exchange); the inputs are held over
  the step (zero-order hold), as FMI Co-Simulation does without input derivatives.

Feed-through comes from ``<ModelStructure><Outputs>``/``<Output>``: an output without a
``dependencies`` attribute depends on every input (the FMI default), an empty one on none.
Outputs chosen with ``outputs=`` that are not listed there (locals, parameters) are taken to
depend on every input unless they are parameters or constants.

The hot path calls the FMU's C functions directly with value-reference and value arrays
allocated once per start (fmpy's ``getReal``/``setReal`` build new ctypes arrays on every call
and raise on a bad status; here the status is checked in place).  A Warning counts as success
(the step was taken; the message stays in :attr:`FMU.messages`); Discard, Error, Fatal and
Pending raise :class:`BlockError` with the messages the FMU logged.

**Loaded once per process.**  An FMU file's model description and its unpacked folder are kept
per process (:data:`FMU_FILES`, keyed by the file's resolved path, size and modification time):
the FMU blocks of one file made again and again (a sweep's factory makes new blocks for every
run) parse and unzip it once; each block still gets its own instance at every start.  An FMU
that declares ``canBeInstantiatedOnlyOncePerProcess`` is unpacked per block, as before (its
copies of the shared library keep their global state apart).
"""

from __future__ import annotations

import collections
import difflib
import logging
import math
import numbers
import pathlib
import shutil
import tempfile
import threading
import weakref

from ..animation.model_view import read_view
from ..core.errors import ModelError
from .block import Block, BlockError
from .fmi_access import INTERFACES, VERSIONS, access, open_instance, status_name
from .me_integration import MeIntegration, integrator_settings

_log = logging.getLogger(__name__)

_OK, _WARNING, _DISCARD, _ERROR, _FATAL = 0, 1, 2, 3, 4
#: how many FMU log messages a block keeps (oldest dropped first)
MAX_MESSAGES = 200


class FmuFiles:
    """The FMU files of this process: each file's model description, read once, and its folder,
    unpacked once and removed when the process ends; ``extractions`` counts the unpackings per
    file (tests read it).  A file changed on disk (another size or modification time) is read
    again."""

    def __init__(self):
        self._lock = threading.Lock()
        self._descriptions: dict = {}
        self._folders: dict = {}
        self.extractions: collections.Counter = collections.Counter()

    @staticmethod
    def key(path: pathlib.Path) -> tuple:
        st = path.stat()
        return str(path.resolve()), st.st_size, st.st_mtime_ns

    def description(self, path: pathlib.Path):
        """The model description of the FMU file ``path`` (fmpy's, not validated)."""
        from fmpy import read_model_description

        key = self.key(path)
        with self._lock:
            if key not in self._descriptions:
                self._descriptions[key] = read_model_description(str(path), validate=False)
            return self._descriptions[key]

    def folder(self, path: pathlib.Path, prefix: str) -> str:
        """The folder the FMU file ``path`` is unpacked in, shared by its blocks in this process."""
        key = self.key(path)
        with self._lock:
            d = self._folders.get(key)
            if d is None or not pathlib.Path(d).is_dir():
                d = self.extract(path, prefix)
                self._folders[key] = d
                weakref.finalize(self, shutil.rmtree, d, True)
            return d

    def extract(self, path: pathlib.Path, prefix: str) -> str:
        """Unpack the FMU file into a new temporary folder (counted)."""
        from fmpy import extract

        d = tempfile.mkdtemp(prefix=prefix)
        extract(str(path), d)
        self.extractions[str(path.resolve())] += 1
        return d

    def clear(self) -> None:
        """Forget every file (their folders are removed at exit)."""
        with self._lock:
            self._descriptions.clear()
            self._folders.clear()


#: the FMU files of this process (see :class:`FmuFiles`)
FMU_FILES = FmuFiles()


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
            _log.log(level, "%s [%s] %s: %s", self.forward, status_name(status), category, text)


def _check_value(name: str, kind: str, value):
    """``value`` converted for a variable of port type ``kind``; BlockError if it does not fit."""
    if kind == "Real":
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
    elif kind == "Integer":
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)
    elif kind == "Boolean":
        if isinstance(value, bool) or type(value).__name__ == "bool_":
            return bool(value)
    elif kind == "String":
        if isinstance(value, str):
            return value
    article = "an" if kind[0] in "AEIOU" else "a"
    raise BlockError(f"{name!r} is {article} {kind} variable; got {value!r} of type {type(value).__name__}")


def _check_range(v, kind: str, value, where: str) -> None:
    """BlockError if a Real/Integer value (port type ``kind``) lies outside the variable's declared
    min/max (the modelDescription's attributes, inclusive), naming the variable, the value and
    the range."""
    if kind not in ("Real", "Integer"):
        return
    lo = float(v.min) if v.min is not None else -math.inf
    hi = float(v.max) if v.max is not None else math.inf
    if value < lo or value > hi:  # (NaN is the FMU's to refuse, with its own message)
        raise BlockError(f"{where} = {value!r} is outside its declared range [{lo!r}, {hi!r}]")


class FMU(Block):
    """An FMI 2.0 or 3.0 FMU, Co-Simulation or Model Exchange, as a block.

    ``parameters``: ``{name: value}`` for variables with ``causality="parameter"``;
    ``start_values``: ``{name: value}`` for any other variable with a settable start (inputs,
    initial states with ``initial="exact"``/``"approx"``); both are set before
    ``EnterInitializationMode`` on every :meth:`start` (FMI 2.0: after ``fmi2SetupExperiment``).
    ``outputs``: the output port names (default: every ``causality="output"`` variable); any
    variable of the FMU may be named.  ``instance_name`` defaults to the model identifier;
    ``log=True`` switches the FMU's debug logging on and forwards its messages to the
    :mod:`logging` logger ``mbsfmu.runner.fmu_block``.

    ``interface``: ``'cs'`` (Co-Simulation) or ``'me'`` (Model Exchange); None: Co-Simulation if
    the FMU declares it, else Model Exchange.  With Model Exchange the block integrates the
    states: ``method`` (RK45, DOP853, Radau or BDF; default DOP853), ``rtol`` (default 1e-8),
    ``atol`` (default 1e-10), ``max_step`` (default: no limit), see :mod:`.me_integration`;
    these four are refused with Co-Simulation (set the FMU's own tolerance parameters instead).
    """

    def __init__(self, path, *, parameters=None, start_values=None, instance_name=None, log=False,
                 outputs=None, sample_time=None, interface=None, method=None, rtol=None, atol=None,
                 max_step=None):
        self.path = pathlib.Path(path)
        if not self.path.is_file():
            raise BlockError(f"FMU file {str(self.path)!r} does not exist")
        try:
            md = FMU_FILES.description(self.path)
        except Exception as exc:  # fmpy raises plain Exceptions for broken archives/XML
            raise BlockError(f"cannot read the model description of {str(self.path)!r}: {exc}") from exc
        if md.fmiVersion not in VERSIONS:
            raise BlockError(f"{self.path.name}: FMI version {md.fmiVersion} (the FMU block takes FMI "
                             f"{' and '.join(VERSIONS)})")
        self.model_description = md
        self.fmi_version = VERSIONS[md.fmiVersion]
        self.interface = self._interface(interface)
        integrator = {"method": method, "rtol": rtol, "atol": atol, "max_step": max_step}
        self._integrator_options = integrator
        if self.interface == "cs":
            given = [k for k, v in integrator.items() if v is not None]
            if given:
                raise BlockError(f"{self.path.name}: {', '.join(given)} set{'s' if len(given) == 1 else ''} "
                                 "the integrator of Model Exchange; this block runs the FMU's Co-Simulation, "
                                 "whose integrator is the FMU's own (set its tolerance parameters, or "
                                 "choose interface='me')")
            self.integrator = None
        else:
            if md.numberOfEventIndicators:
                raise BlockError(f"{self.path.name} declares {md.numberOfEventIndicators} event "
                                 "indicator(s): the FMU block's Model Exchange does not locate state "
                                 "events; run its Co-Simulation interface")
            try:
                self.integrator = integrator_settings(**integrator)
            except BlockError as exc:
                raise BlockError(f"{self.path.name}: {exc}") from None
        self.variables = {v.name: v for v in md.modelVariables}
        self.inputs = tuple(v.name for v in md.modelVariables if v.causality == "input")
        if outputs is None:
            self.outputs = tuple(v.name for v in md.modelVariables if v.causality == "output")
        else:
            self.outputs = tuple(outputs)
            for name in self.outputs:
                self._variable(name, "output")
        for name in self.inputs + self.outputs:
            if self._access(name) is None:
                raise BlockError(f"{name!r} has type {self.variables[name].type}, not a port type")
        self.sample_time = sample_time
        self.instance_name = instance_name or self._description().modelIdentifier
        self.log = bool(log)
        self.parameters = self._checked(parameters or {}, "parameter")
        self.start_values = self._checked(start_values or {}, "start value")
        self.messages = _Messages(self.instance_name if self.log else None)
        self._feedthrough = self._read_feedthrough()
        ft_inputs = {i for deps in self._feedthrough.values() for i in deps}
        self._ft_mask = [name in ft_inputs for name in self.inputs]
        self._fmi = None  # the running instance (fmi_access)
        self._me = None  # its Model Exchange integration
        self._statistics = {}  # the integration's statistics at the last release
        self._unzip_dir = None
        self._cleanup = None
        self._states: weakref.WeakSet = weakref.WeakSet()
        self._failed = False
        self._fatal = False
        self._initialized = False
        self._view = None  # the model's view, read on the first view()

    def with_values(self, parameters=None, start_values=None) -> FMU:
        """A new block of the same FMU file with the same options and values, ``parameters`` and
        ``start_values`` ({name: value}, checked as by the constructor) set on top: a block of
        its own (own instance, own values) that shares the process's parsed and unpacked FMU."""
        return FMU(self.path, parameters={**self.parameters, **(parameters or {})},
                   start_values={**self.start_values, **(start_values or {})},
                   instance_name=self.instance_name, log=self.log, outputs=self.outputs,
                   sample_time=self.sample_time, interface=self.interface, **self._integrator_options)

    def settable(self) -> dict:
        """{name: 'parameter' | 'start value'}: the variables that ``with_values`` sets (the
        parameters; the inputs and the variables with an exact or approximate start)."""
        out = {}
        for v in self.model_description.modelVariables:
            if v.causality == "parameter" and v.variability != "constant":
                out[v.name] = "parameter"
            elif v.causality == "input" or (v.initial in ("exact", "approx") and v.causality != "independent"
                                            and v.variability != "constant"):
                out[v.name] = "start value"
        return out

    # ---- description ------------------------------------------------------------------------

    def _interface(self, interface) -> str:
        """The interface the block runs ('cs' or 'me'), checked against what the FMU declares."""
        md = self.model_description
        declared = {"cs": md.coSimulation is not None, "me": md.modelExchange is not None}
        names = {"cs": "Co-Simulation", "me": "Model Exchange"}
        if not any(declared.values()):
            raise BlockError(f"{self.path.name} declares neither Co-Simulation nor Model Exchange")
        if interface is None:
            return "cs" if declared["cs"] else "me"
        if not isinstance(interface, str) or interface not in INTERFACES:
            raise BlockError(f"interface {interface!r} is not an FMI interface of the FMU block; choose "
                             "'cs' (Co-Simulation) or 'me' (Model Exchange)")
        if not declared[interface]:
            other = next(k for k in declared if declared[k])
            raise BlockError(f"{self.path.name} does not declare {names[interface]} (only "
                             f"{names[other]}): interface={interface!r} needs an FMU built with "
                             f"interface='{interface}' or 'both'")
        return interface

    def _description(self):
        """The model description's element of the interface the block runs."""
        md = self.model_description
        return md.coSimulation if self.interface == "cs" else md.modelExchange

    def _access(self, name):
        return access(self.fmi_version, self.variables[name].type)

    def value_type(self, name) -> str | None:
        """The type of the FMU variable ``name`` as the block reads and sets it: Real, Integer,
        Boolean or String (None: a type the block does not handle, e.g. FMI 3.0's Binary)."""
        acc = self._access(name)
        return None if acc is None else acc.port

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
            kind = self._access(name)
            if kind is None:
                raise BlockError(f"{name!r} of {self.path.name} has type {v.type}, which the block does "
                                 "not set")
            checked[name] = _check_value(name, kind.port, value)
            _check_range(v, kind.port, checked[name], f"{role} {name!r} of {self.path.name}")
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
        return self._access(port).port

    def feedthrough(self):
        return dict(self._feedthrough)

    def view(self):
        """The view the FMU carries (``resources/mbsfmu_viewer.json``, written by
        ``mbsfmu.build_fmu`` for a model with something to draw) and the block's parameters that
        are the model's constants; or why there is none (see :meth:`Block.view`)."""
        if self._view is None:
            try:
                view = read_view(self.path)
            except ModelError as exc:
                self._view = str(exc)
            else:
                self._view = (view, {k: v for k, v in self.parameters.items() if k in view.constants})
        return self._view

    @property
    def can_get_state(self) -> bool:
        return bool(self._description().canGetAndSetFMUstate)

    def statistics(self) -> dict:
        """Model Exchange: the integrator's work since the last start, also after the stop
        (``steps``, ``rhs_calls``, ``events``: see :class:`~.me_integration.MeIntegration`);
        Co-Simulation or not started: {}."""
        return self._me.statistics() if self._me is not None else dict(self._statistics)

    # ---- life cycle -------------------------------------------------------------------------

    def _extract(self):
        """The FMU's folder: the process's shared one (:class:`FmuFiles`), or the block's own
        for an FMU that can be instantiated only once per process."""
        if self._unzip_dir is None or not pathlib.Path(self._unzip_dir).is_dir():
            prefix = f"mbsfmu_{self.path.stem}_"
            if self._description().canBeInstantiatedOnlyOncePerProcess:
                d = FMU_FILES.extract(self.path, prefix)
                self._cleanup = weakref.finalize(self, shutil.rmtree, d, True)
            else:
                d = FMU_FILES.folder(self.path, prefix)
            self._unzip_dir = d
        return self._unzip_dir

    def start(self, t0, dt):
        self._release()
        self._statistics = {}
        self.dt = float(dt)
        self.messages.clear()
        try:
            fmi = open_instance(self.model_description, self._extract(), self.interface,
                                self.instance_name, self._call)
        except Exception as exc:
            raise BlockError(f"cannot load {self.path.name}: {exc}") from exc
        try:
            fmi.instantiate(self.messages, self.log)
        except Exception as exc:
            fmi.fmu.freeLibrary()
            raise BlockError(f"{fmi.prefix}Instantiate of {self.path.name} failed"
                             + self._log_text()) from exc
        self._fmi = fmi
        self._failed = self._fatal = self._initialized = False
        self._make_groups()
        fmi.setup(float(t0))
        for name, value in {**self.start_values, **self.parameters}.items():
            self._set_one(name, value)
        fmi.enter_initialization(float(t0))
        fmi.call("ExitInitializationMode")
        self._initialized = True
        if self.interface == "me":
            self._me = MeIntegration(fmi, self.model_description.numberOfContinuousStates, self.integrator)
            self._me.start(float(t0))

    def _make_groups(self):
        def groups(names):
            by_access: dict = {}
            for i, name in names:
                pos, vrs = by_access.setdefault(self._access(name), ([], []))
                pos.append(i)
                vrs.append(self.variables[name].valueReference)
            return [self._fmi.group(acc, pos, vrs) for acc, (pos, vrs) in by_access.items()]

        indexed = list(enumerate(self.inputs))
        self._in_ft = groups([(i, n) for i, n in indexed if self._ft_mask[i]])
        self._in_rest = groups([(i, n) for i, n in indexed if not self._ft_mask[i]])
        self._out = groups(list(enumerate(self.outputs)))
        # the common case, only Real outputs in port order: the buffer is the result
        self._out_plain = (len(self._out) == 1 and self._out[0].access.port == "Real"
                           and self._out[0].positions == list(range(len(self.outputs))))

    def _set_one(self, name, value):
        acc = self._access(name)
        g = self._fmi.group(acc, [0], [self.variables[name].valueReference])
        g.buffer[0] = value.encode() if acc.port == "String" else value
        self._call(f"{self._fmi.prefix}Set{acc.name} of {name!r} = {value!r}", self._fmi.set(g))

    def stop(self):
        self._release()
        if self._cleanup is not None:  # the block's own folder (the shared one stays)
            self._cleanup()
            self._cleanup = None
            self._unzip_dir = None

    def _release(self):
        if self._me is not None:
            self._statistics = self._me.statistics()
        fmi, self._fmi, self._me = self._fmi, None, None
        if fmi is None:
            return
        for state in list(self._states):
            state.free()
        if not self._fatal:  # after a Fatal status no function of the FMU may be called
            try:
                fmi.release(terminate=self._initialized and not self._failed)
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
        lines = [f"  [{status_name(s)}] {text}" for s, _, text in self.messages]
        self.messages.clear()
        return "; the FMU logged:\n" + "\n".join(lines)

    def _call(self, what, status):
        """Raise BlockError for a status worse than Warning."""
        if status > _WARNING:
            self._fail(what, status)

    def _fail(self, what, status, extra=""):
        if status >= _ERROR:
            self._failed = True
        if status == _FATAL:
            self._fatal = True
        prefix = f"fmi{self.fmi_version}"
        raise BlockError(f"{what} of {self.path.name} returned {prefix}{status_name(status)}{extra}"
                         + self._log_text())

    # ---- stepping (the hot path) ------------------------------------------------------------

    def _set_inputs(self, groups, u):
        for g in groups:
            values = [u[i] for i in g.positions]
            if values == g.last:  # NaN != NaN: a NaN is passed on every time
                continue
            kind = g.access.port
            try:
                if kind == "String":
                    g.buffer[:] = [s.encode() for s in values]
                else:
                    g.buffer[:] = values
            except TypeError as exc:
                names = [self.inputs[i] for i in g.positions]
                raise BlockError(f"inputs {names} of type {kind}: cannot take {values!r}") from exc
            status = self._fmi.set(g)
            if status > _WARNING:
                g.last = None
                bad = [f"{self.inputs[i]} = {u[i]!r}" for i in g.positions
                       if isinstance(u[i], float) and not math.isfinite(u[i])]
                shown = bad or [f"{self.inputs[i]} = {u[i]!r}" for i in g.positions]
                self._fail(f"setting the input{'s' if len(shown) > 1 else ''} {', '.join(shown)}",
                           status)
            g.last = values

    def output(self, t, u):
        if self._fmi is None:
            raise BlockError(f"{self.instance_name}: output() before start()")
        if self._in_ft:
            self._set_inputs(self._in_ft, u)
        if self._out_plain:
            g = self._out[0]
            status = self._fmi.get(g)
            if status > _WARNING:
                self._fail("reading the outputs", status)
            return g.buffer[:]
        y = [None] * len(self.outputs)
        for g in self._out:
            status = self._fmi.get(g)
            kind = g.access.port
            if status > _WARNING:
                self._fail(f"reading the {kind} outputs", status)
            values = g.buffer[:]
            if kind == "Boolean":
                values = [v != 0 for v in values]
            elif kind == "String":
                values = [v.decode() for v in values]
            for i, v in zip(g.positions, values):
                y[i] = v
        return y

    def update(self, t, u):
        if self._fmi is None:
            raise BlockError(f"{self.instance_name}: update() before start()")
        if self._in_ft:
            self._set_inputs(self._in_ft, u)
        if self._in_rest:
            self._set_inputs(self._in_rest, u)
        if self._me is not None:
            self._me.advance(t, t + self.dt)
            return
        status = self._fmi.do_step(t, self.dt)
        if status != _OK and status != _WARNING:
            extra = ""
            if status == _DISCARD:
                last = self._fmi.last_successful_time()
                extra = "" if last is None else f" (last successful time {last:.17g})"
            self._fail(f"fmi{self.fmi_version}DoStep(t={t!r}, h={self.dt!r})", status, extra)

    # ---- state snapshots --------------------------------------------------------------------

    def get_state(self):
        if not self.can_get_state:
            return None
        if self._fmi is None:
            raise BlockError(f"{self.instance_name}: get_state() before start()")
        state = _FMUState(self, self._fmi.get_fmu_state())
        self._states.add(state)
        return state

    def set_state(self, state):
        if state is None:
            raise BlockError(f"{self.instance_name}: no state to restore (get_state returned None)")
        if not isinstance(state, _FMUState) or state.owner() is not self or state.fmi is not self._fmi \
                or state.ptr is None:
            raise BlockError(f"{self.instance_name}: the state was not taken from this running instance "
                             "(or the block was restarted or stopped since)")
        self._fmi.set_fmu_state(state.ptr)
        if self._me is not None:
            self._me.first_step = state.first_step  # the integrator continues as it did then
        for g in self._in_ft + self._in_rest:
            g.last = None  # the restored FMU holds the inputs of the snapshot


class _FMUState:
    """An FMU state owned by one FMU instance (with Model Exchange also the step size the block's
    integrator had reached); freed when collected or when the block stops (whichever comes
    first)."""

    __slots__ = ("owner", "fmi", "ptr", "first_step", "__weakref__")

    def __init__(self, block: FMU, ptr):
        self.owner = weakref.ref(block)
        self.fmi = block._fmi
        self.ptr = ptr
        self.first_step = None if block._me is None else block._me.first_step

    def free(self):
        ptr, self.ptr = self.ptr, None
        if ptr is not None and self.fmi is not None:
            self.fmi.free_fmu_state(ptr)
        self.fmi = None

    def __del__(self):
        try:
            block = self.owner()
            if block is not None and block._fmi is self.fmi and not block._fatal:
                self.free()
        except Exception:
            pass
