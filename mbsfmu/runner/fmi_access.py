"""The C functions of one FMI version as the FMU block calls them (:mod:`.fmu_block`): a small
adapter per version, so that the block has one implementation of its semantics for FMI 2.0 and
FMI 3.0, Co-Simulation and Model Exchange.

What differs between the versions, and what :class:`Fmi2Instance` / :class:`Fmi3Instance` hide:

* variable access: FMI 2.0 has ``fmi2Get/Set{Real,Integer,Boolean,String}`` (an Enumeration is an
  Integer); FMI 3.0 has one pair per type (``Float64``, ``Float32``, ``Int8`` .. ``UInt64``,
  ``Boolean``, ``String``; an Enumeration is read and set as ``Int64``), with the number of values
  after the value buffer.  :func:`access` maps a variable to its port type and C access;
* initialization: FMI 2.0 sets up the experiment (``fmi2SetupExperiment``) and then takes the
  start values; FMI 3.0 takes them after instantiation and gets the start time with
  ``fmi3EnterInitializationMode``;
* the step: ``fmi2DoStep(t, h, true)`` / ``fmi3DoStep(t, h, true, &eventEncountered,
  &terminateSimulation, &earlyReturn, &lastSuccessfulTime)``;
* Model Exchange: ``fmi2GetDerivatives`` / ``fmi3GetContinuousStateDerivatives``, the event
  iteration ``fmi2NewDiscreteStates`` (one event-info record) / ``fmi3UpdateDiscreteStates``
  (one pointer per flag), and whether the FMU needs ``CompletedIntegratorStep``
  (``completedIntegratorStepNotNeeded`` / ``needsCompletedIntegratorStep``);
* FMU states ``fmi2Get/Set/FreeFMUstate`` / ``fmi3Get/Set/FreeFMUState`` and the log callback
  (FMI 2.0's callback record / FMI 3.0's ``logMessage``).

Every method returns the FMI status of its call to the instance's ``check(what, status)`` (the
block's), which raises for a status worse than Warning; the hot-path methods ``get``/``set``/
``do_step`` return the status to the caller instead.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from ..fmu.fmpy_callbacks import fmi3_recorder, recording_callbacks
from .block import BlockError

#: the FMI versions the block runs (the model description's fmiVersion)
VERSIONS = {"2.0": 2, "3.0": 3}
#: the block's interface names -> fmpy's
INTERFACES = {"cs": "CoSimulation", "me": "ModelExchange"}
_STATUS = ("OK", "Warning", "Discard", "Error", "Fatal", "Pending")


@dataclass(frozen=True)
class Access:
    """How a variable is read and set: ``port`` its port type (Real, Integer, Boolean, String),
    ``name`` the suffix of its Get/Set functions, ``ctype`` the C type of one value."""

    port: str
    name: str
    ctype: type


_INTEGERS3 = {"Int8": ctypes.c_int8, "UInt8": ctypes.c_uint8, "Int16": ctypes.c_int16,
              "UInt16": ctypes.c_uint16, "Int32": ctypes.c_int32, "UInt32": ctypes.c_uint32,
              "Int64": ctypes.c_int64, "UInt64": ctypes.c_uint64}
#: variable type -> access, per FMI version
ACCESS = {
    2: {"Real": Access("Real", "Real", ctypes.c_double),
        "Integer": Access("Integer", "Integer", ctypes.c_int),
        "Enumeration": Access("Integer", "Integer", ctypes.c_int),
        "Boolean": Access("Boolean", "Boolean", ctypes.c_int),
        "String": Access("String", "String", ctypes.c_char_p)},
    3: {"Float64": Access("Real", "Float64", ctypes.c_double),
        "Float32": Access("Real", "Float32", ctypes.c_float),
        **{t: Access("Integer", t, c) for t, c in _INTEGERS3.items()},
        "Enumeration": Access("Integer", "Int64", ctypes.c_int64),
        "Boolean": Access("Boolean", "Boolean", ctypes.c_bool),
        "String": Access("String", "String", ctypes.c_char_p)},
}


def access(version: int, var_type: str) -> Access | None:
    """The access of a variable of ``var_type`` in an FMU of FMI ``version`` (None: not a port
    type, e.g. FMI 3.0's Binary and Clock)."""
    return ACCESS[version].get(var_type)


class Group:
    """Variables of one access read or set with one C call: their positions (in ``u`` or in the
    outputs), value references and a value buffer; ``last``: the values last set (None: unknown);
    ``args``: the arguments of the C call."""

    __slots__ = ("access", "positions", "vrs", "buffer", "n", "last", "args")

    def __init__(self, acc: Access, positions: list[int], vrs: list[int], component, version: int):
        self.access = acc
        self.positions = positions
        self.n = len(vrs)
        self.vrs = (ctypes.c_uint * self.n)(*vrs)
        self.buffer = (acc.ctype * self.n)()
        self.last = None
        self.args = (component, self.vrs, self.n, self.buffer) + ((self.n,) if version == 3 else ())


def status_name(status: int) -> str:
    return _STATUS[status] if 0 <= status < len(_STATUS) else f"illegal status {status}"


class FmiInstance:
    """One instantiated FMU of one version and interface (base of the two versions): ``fmu`` the
    fmpy object, ``c`` its instance pointer, ``f`` its C functions by name."""

    version = 0
    prefix = ""

    def __init__(self, md, unzip_dir: str, interface: str, instance_name: str, check):
        self.md = md
        self.interface = interface
        self.check = check
        desc = md.coSimulation if interface == "cs" else md.modelExchange
        self.fmu = self._classes()[interface](guid=md.guid, unzipDirectory=unzip_dir,
                                              modelIdentifier=desc.modelIdentifier,
                                              instanceName=instance_name)
        self.c = None
        self.f = self.fmu._functions

    def instantiate(self, messages, log: bool) -> None:
        """Instantiate (fmpy raises if the FMU returns no instance; the library stays loaded)."""
        self._instantiate(messages, log)
        self.c = self.fmu.component
        suffixes = {a.name for a in ACCESS[self.version].values()}
        self.getter = {s: self.f[f"{self.prefix}Get{s}"] for s in suffixes}
        self.setter = {s: self.f[f"{self.prefix}Set{s}"] for s in suffixes}

    def group(self, acc: Access, positions: list[int], vrs: list[int]) -> Group:
        return Group(acc, positions, vrs, self.c, self.version)

    def get(self, g: Group) -> int:
        return self.getter[g.access.name](*g.args)

    def set(self, g: Group) -> int:
        return self.setter[g.access.name](*g.args)

    def call(self, name: str, *args, what: str | None = None) -> None:
        """``<prefix><name>(c, *args)``, its status checked."""
        self.check(what or f"{self.prefix}{name}", self.f[self.prefix + name](self.c, *args))

    def release(self, terminate: bool) -> None:
        """Terminate (if ``terminate``), free the instance and unload the library."""
        if terminate:
            self.f[self.prefix + "Terminate"](self.c)
        self.f[self.prefix + "FreeInstance"](self.c)
        self.fmu.freeLibrary()

    # ---- FMU states ---------------------------------------------------------------------------

    def get_fmu_state(self):
        ptr = ctypes.c_void_p()
        self.call(self._state_name("Get"), ctypes.byref(ptr))
        return ptr

    def set_fmu_state(self, ptr) -> None:
        self.call(self._state_name("Set"), ptr)

    def free_fmu_state(self, ptr) -> None:
        self.f[self.prefix + self._state_name("Free")](self.c, ctypes.byref(ptr))

    # ---- Model Exchange -----------------------------------------------------------------------

    def set_time(self, t: float) -> None:
        self.check(f"{self.prefix}SetTime", self.f[self.prefix + "SetTime"](self.c, t))

    def set_states(self, x_ptr, n: int) -> None:
        self.check(f"{self.prefix}SetContinuousStates",
                   self.f[self.prefix + "SetContinuousStates"](self.c, x_ptr, n))

    def get_states(self, x_ptr, n: int) -> None:
        self.call("GetContinuousStates", x_ptr, n)

    def completed_step(self) -> tuple[bool, bool]:
        """``CompletedIntegratorStep`` (no FMU state is set back before it): (enter event mode,
        terminate simulation)."""
        enter, terminate = self._bool(), self._bool()
        self.call("CompletedIntegratorStep", 1, ctypes.byref(enter), ctypes.byref(terminate))
        return bool(enter.value), bool(terminate.value)


class Fmi2Instance(FmiInstance):
    version = 2
    prefix = "fmi2"
    _bool = ctypes.c_int

    @staticmethod
    def _classes():
        from fmpy.fmi2 import FMU2Model, FMU2Slave

        return {"cs": FMU2Slave, "me": FMU2Model}

    @staticmethod
    def _state_name(verb: str) -> str:
        return f"{verb}FMUstate"

    def _instantiate(self, messages, log):
        self.callbacks = recording_callbacks(messages)  # kept as long as the instance
        self.fmu.instantiate(callbacks=self.callbacks, loggingOn=log)

    def setup(self, t0: float) -> None:
        self.call("SetupExperiment", 0, 0.0, t0, 0, 0.0)

    def enter_initialization(self, t0: float) -> None:
        self.call("EnterInitializationMode")

    def do_step(self, t: float, h: float) -> int:
        return self.f["fmi2DoStep"](self.c, t, h, 1)

    def last_successful_time(self) -> float | None:
        """After a discarded step: the FMU's last successful time, if it tells."""
        try:
            return self.fmu.getRealStatus(2)  # fmi2LastSuccessfulTime
        except Exception:
            return None

    def get_derivatives(self, dx_ptr, n: int) -> None:
        self.check("fmi2GetDerivatives", self.f["fmi2GetDerivatives"](self.c, dx_ptr, n))

    def update_discrete_states(self) -> tuple[bool, bool, bool, float | None]:
        """One ``fmi2NewDiscreteStates``: (new discrete states needed, terminate simulation,
        values of the continuous states changed, next event time or None)."""
        from fmpy.fmi2 import fmi2EventInfo

        info = fmi2EventInfo()
        self.call("NewDiscreteStates", ctypes.byref(info))
        return (bool(info.newDiscreteStatesNeeded), bool(info.terminateSimulation),
                bool(info.valuesOfContinuousStatesChanged),
                info.nextEventTime if info.nextEventTimeDefined else None)

    @property
    def needs_completed_step(self) -> bool:
        return not self.md.modelExchange.completedIntegratorStepNotNeeded


class Fmi3Instance(FmiInstance):
    version = 3
    prefix = "fmi3"
    _bool = ctypes.c_bool

    @staticmethod
    def _classes():
        from fmpy.fmi3 import FMU3Model, FMU3Slave

        return {"cs": FMU3Slave, "me": FMU3Model}

    @staticmethod
    def _state_name(verb: str) -> str:
        return f"{verb}FMUState"

    def _instantiate(self, messages, log):
        self.fmu.instantiate(loggingOn=log, logMessage=fmi3_recorder(messages))
        b, self._last = ctypes.c_bool, ctypes.c_double()
        self._flags = (b(), b(), b())  # eventEncountered, terminateSimulation, earlyReturn
        self._step_refs = (*(ctypes.byref(x) for x in self._flags), ctypes.byref(self._last))

    def setup(self, t0: float) -> None:
        """FMI 3.0 has no experiment setup: the start time goes with the initialization."""

    def enter_initialization(self, t0: float) -> None:
        self.call("EnterInitializationMode", False, 0.0, t0, False, 0.0)

    def do_step(self, t: float, h: float) -> int:
        status = self.f["fmi3DoStep"](self.c, t, h, True, *self._step_refs)
        if status <= 1 and self._flags[1].value:
            raise BlockError(f"fmi3DoStep(t={t!r}, h={h!r}): the FMU asked to terminate the "
                             f"simulation (last successful time {self._last.value!r})")
        return status

    def last_successful_time(self) -> float | None:
        return self._last.value

    def get_derivatives(self, dx_ptr, n: int) -> None:
        self.check("fmi3GetContinuousStateDerivatives",
                   self.f["fmi3GetContinuousStateDerivatives"](self.c, dx_ptr, n))

    def update_discrete_states(self) -> tuple[bool, bool, bool, float | None]:
        """One ``fmi3UpdateDiscreteStates``: as :meth:`Fmi2Instance.update_discrete_states`."""
        flags = [ctypes.c_bool() for _ in range(5)]
        next_time = ctypes.c_double()
        self.call("UpdateDiscreteStates", *(ctypes.byref(x) for x in flags), ctypes.byref(next_time))
        needed, terminate, _, changed, defined = (x.value for x in flags)
        return needed, terminate, changed, next_time.value if defined else None

    @property
    def needs_completed_step(self) -> bool:
        return bool(self.md.modelExchange.needsCompletedIntegratorStep)


def open_instance(md, unzip_dir: str, interface: str, instance_name: str, check) -> FmiInstance:
    """The adapter of ``md``'s FMI version for ``interface`` ('cs' or 'me'), its library loaded
    (not yet instantiated)."""
    cls = Fmi2Instance if VERSIONS[md.fmiVersion] == 2 else Fmi3Instance
    return cls(md, unzip_dir, interface, instance_name, check)
