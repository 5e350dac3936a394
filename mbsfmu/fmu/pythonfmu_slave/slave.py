"""The slave class of mbsfmu's pythonfmu FMUs: loading the model, choosing what integrates,
reporting, and the FMI modes (set-up, initialization, steps, termination).  Its variables are
:mod:`.variables`, its FMU states :mod:`.states`, its integrators :mod:`.engine_backend` and
:mod:`.numpy_backend` (see the package docstring)."""

import logging
import math
import pathlib

from pythonfmu import Fmi2Slave
from pythonfmu.enums import Fmi2Status

from mbsfmu.codegen.fmu_variables import engine_variables, fmu_variables
from mbsfmu.engine.extension import ENGINE_FORMULATIONS
from mbsfmu.fmu.model_description import LOG_STATISTICS
from mbsfmu.model.loader import load_model

from .backend import refusal_text, statistics_text
from .engine_backend import EngineBackend
from .guard import find_guard, to_guard
from .numpy_backend import NumpyBackend
from .states import FMUStates
from .text import num
from .variables import Variables

TIME_RTOL = 1e-9  # a communication point must match the FMU time within 1e-9 (1 + |t|)
AFTER_ERROR = "restore a state with fmi2SetFMUstate, or fmi2Reset"
_NAMESPACES = []  # see keep_namespace


def keep_namespace(namespace: dict) -> None:
    """Hold one more reference to an FMU script's module namespace.

    pythonfmu 0.7's library finds the slave class by running the script again at every
    fmi2Instantiate, and afterwards releases one reference to the module's namespace that it
    never took (``Py_DECREF`` of the borrowed ``PyModule_GetDict``).  The script calls this at its
    top level, so that each of those runs first takes the reference that is then released; without
    it the namespace is freed and the next fmi2Instantiate fails (or crashes)."""
    _NAMESPACES.append(namespace)


class MbsfmuSlave(Variables, FMUStates, Fmi2Slave):
    """An mbsfmu model as an FMI 2.0 Co-Simulation slave (subclassed per model, see the package
    docstring)."""

    MODEL_FILE = MODEL_NAME = MODEL_GUID = BINARY = ""
    FORMULATION = None
    METHOD = "rkstab"
    VARIABLES: list = []
    N_STATE = 0
    log_categories = {**Fmi2Slave.log_categories, LOG_STATISTICS[0]: LOG_STATISTICS[1]}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.guid = self.MODEL_GUID  # pythonfmu writes it into modelDescription.xml
        self.guard = find_guard(self.resources, self.BINARY)
        self.time = 0.0
        self.stop_time = None
        self.mode = "instantiated"
        try:
            self.system = load_model(pathlib.Path(self.resources) / "model" / self.MODEL_FILE)
            self.fmu_vars = fmu_variables(self.system, self.METHOD)
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
        self.instance_vars = engine_variables(self.fmu_vars)  # those the backend holds (no deprecated names)
        self.deprecated_said = set()  # deprecated names whose use was logged
        self.vr_hmax = next(v.value_reference for v in self.fmu_vars if v.name == "max_internal_step")
        self.vr_rtol = next(v.value_reference for v in self.fmu_vars if v.name == "solver_rtol")
        self.rtol_set = False  # solver_rtol was set: fmi2SetupExperiment's tolerance does not replace it
        self.backend = self._backend()
        # kept here: reading it from the engine before a do-step would compute the outputs of
        # inputs set since the last one, which the native FMU does only when they are read
        self.hmax = self.backend.get([self.vr_hmax])[0]
        self._register_variables()
        self._tell_time()

    def _backend(self):
        """The C engine, or the numpy path where the engine cannot run this FMU (with a warning)."""
        constrained = self.system.constrained
        try:
            if constrained and self.FORMULATION is not None and self.FORMULATION not in ENGINE_FORMULATIONS:
                why = f"the formulation {self.FORMULATION!r} is not one of the C engine's"
            else:
                return EngineBackend(self.system, self.FORMULATION, [v.name for v in self.instance_vars],
                                     self._warn, self.METHOD)
        except Exception as exc:
            text = str(exc).strip().replace("\n", " ")
            why = (f"the C engine could not be built or loaded here ({type(exc).__name__}: "
                   f"{text[:600]}{'...' if len(text) > 600 else ''})")
        self._warn("fmi2Instantiate", f"{why}: this instance integrates with mbsfmu's numpy formulations "
                   "instead (restarted at every fmi2DoStep; its steps differ from those of the native FMU)")
        return NumpyBackend(self)

    # ------------------------------------------------------------ reporting
    def _report(self, status, fn, text):
        message = f"{fn} at t={num(self.time)}: {text}"
        if to_guard(status, message):
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

    # ------------------------------------------------------------ modes
    def setup_experiment(self, start_time, stop_time=None, tolerance=None):
        fn = "fmi2SetupExperiment"
        try:
            if self.mode != "instantiated":
                return self._wrong_mode(fn, ("instantiated",))
            if not math.isfinite(start_time):
                return self._fail(fn, f"start time {num(start_time)} is not finite; nothing was changed")
            if stop_time is not None and not (math.isfinite(stop_time) and stop_time >= start_time):
                return self._fail(fn, f"stop time {num(stop_time)} is not a finite time at or after the "
                                  f"start time {num(start_time)}; nothing was changed")
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
            return self._fail(fn, f"{refusal_text(exc)}{held}; the FMU stays in initialization mode: "
                              "correct the value and call fmi2ExitInitializationMode again")
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
                self._fail(fn, f"communication step size {num(h)} must be > 0 and finite; "
                           "nothing was changed")
                return False
            if not math.isfinite(t0) or abs(t0 - self.time) > TIME_RTOL * (1 + abs(self.time)):
                self._fail(fn, f"current communication point {num(t0)} does not match the FMU time "
                           f"{num(self.time)}; nothing was changed")
                return False
            hmax = self.hmax
            limit = self.backend.max_steps
            if hmax > 0 and h / hmax > limit:
                self._fail(fn, f"max_internal_step = {num(hmax)} would need more than {limit} internal "
                           f"steps for the communication step of {num(h)}; raise max_internal_step or "
                           "shorten the step; nothing was changed")
                return False
        except Exception as exc:
            self._internal(fn, exc)
            return False
        try:
            self.backend.do_step(fn, t0, h)
        except Exception as exc:
            self.mode = "error"
            self._fail(fn, f"{refusal_text(exc)}; the outputs and time of t={num(self.time)} stay valid; "
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
