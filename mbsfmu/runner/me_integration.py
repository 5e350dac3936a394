"""Model Exchange in the FMU block: the block integrates the FMU's continuous states over each
communication step itself, with one of scipy's integrators stepped one step at a time.

The FMU gives y' = f(t, y, u) (``SetTime``, ``SetContinuousStates``, ``GetDerivatives``); over the
communication step ``[t, t + dt]`` the inputs ``u`` are held (zero-order hold, as the
Co-Simulation block holds them), so the integrator starts afresh at every communication point
(the right-hand side jumps there), with the step size it had reached as its first step.  After
each accepted step the FMU gets the accepted time and states and, if it needs it,
``CompletedIntegratorStep``; when that asks for an event (a model with constraints whose drift
passed ``constraint_tolerance``: the FMU projects its states) the block does the event
iteration (enter Event Mode, ``NewDiscreteStates`` / ``UpdateDiscreteStates`` until no new
discrete states are needed, enter Continuous-Time Mode) and starts the integrator again from
the FMU's states at that time (the states changed, or the right-hand side did).

Methods (:data:`METHODS`, names as scipy.integrate spells them, case does not matter): RK45
(Dormand-Prince 5(4)), DOP853 (Dormand-Prince 8(5,3)), Radau (implicit Runge-Kutta Radau IIA of
order 5) and BDF (variable-order backward differentiation 1..5); the implicit two form their
Jacobian by finite differences of f.  The error per step is kept below ``atol + rtol |y|``
(componentwise, scipy's norm).  Defaults: :data:`DEFAULT_METHOD`, :data:`DEFAULT_RTOL`,
:data:`DEFAULT_ATOL`, no limit on the step.

Limits: state events (event indicators) and time events are not handled: an FMU that declares
event indicators is refused when the block is made, one that schedules a time event stops the
run with a BlockError saying so (use its Co-Simulation interface).
"""

from __future__ import annotations

import ctypes
import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.integrate import BDF, DOP853, RK45, Radau

from .block import BlockError

#: the integration methods of the Model Exchange block: scipy's name -> its OdeSolver
METHODS = {"RK45": RK45, "DOP853": DOP853, "Radau": Radau, "BDF": BDF}
DEFAULT_METHOD = "DOP853"
DEFAULT_RTOL = 1e-8
DEFAULT_ATOL = 1e-10
#: the range of rtol (below about 100 machine epsilons scipy raises it itself, with a warning)
RTOL_RANGE = (1e-13, 0.1)
#: how many event iterations (NewDiscreteStates calls) one event may take
MAX_EVENT_ITERATIONS = 100


@dataclass(frozen=True)
class IntegratorSettings:
    """The integrator of a Model Exchange block: ``method`` (a key of :data:`METHODS`), the
    tolerances and the largest step (inf: no limit)."""

    method: str = DEFAULT_METHOD
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    max_step: float = math.inf

    def as_dict(self) -> dict:
        return {"method": self.method, "rtol": self.rtol, "atol": self.atol, "max_step": self.max_step}


def _positive(name: str, value, lo: float = 0.0, hi: float = math.inf, inf_ok: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise BlockError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if math.isnan(value) or value <= 0 or (math.isinf(value) and not inf_ok) or not lo <= value <= hi:
        if (lo, hi) != (0.0, math.inf):
            bounds = f"in [{lo:g}, {hi:g}]"
        else:
            bounds = "> 0" if inf_ok else "> 0 and finite"
        raise BlockError(f"{name} must be {bounds}, got {value!r}")
    return value


def integrator_settings(method=None, rtol=None, atol=None, max_step=None) -> IntegratorSettings:
    """The checked settings (None: the default); a BlockError names a bad one."""
    out = {}
    if method is not None:
        names = {k.lower(): k for k in METHODS}
        if not isinstance(method, str) or method.lower() not in names:
            raise BlockError(f"method {method!r} is not an integration method of the Model Exchange FMU "
                             f"block; choose one of {', '.join(METHODS)} (scipy.integrate's, any case)")
        out["method"] = names[method.lower()]
    if rtol is not None:
        out["rtol"] = _positive("rtol", rtol, *RTOL_RANGE)
    if atol is not None:
        out["atol"] = _positive("atol", atol)
    if max_step is not None:
        out["max_step"] = _positive("max_step", max_step, inf_ok=True)
    return IntegratorSettings(**out)


class MeIntegration:
    """The integration of one instantiated Model Exchange FMU (``inst``, an
    :class:`~.fmi_access.FmiInstance`) with ``n`` continuous states.  Counters since the start:
    ``steps`` accepted integrator steps, ``rhs_calls`` derivative evaluations, ``events`` event
    iterations after completed steps (projections of a constrained model)."""

    def __init__(self, inst, n: int, settings: IntegratorSettings):
        self.inst, self.n, self.settings = inst, n, settings
        self.solver_class = METHODS[settings.method]
        self.needs_completed_step = inst.needs_completed_step
        self._x, self._dx = np.zeros(n), np.zeros(n)
        p = ctypes.POINTER(ctypes.c_double)
        self._x_ptr, self._dx_ptr = self._x.ctypes.data_as(p), self._dx.ctypes.data_as(p)
        self.first_step = None  # the step size the integrator had reached (None: let it choose)
        self.steps = self.rhs_calls = self.events = 0

    def start(self, t0: float) -> None:
        """After ``ExitInitializationMode`` (the FMU is in Event Mode): the event iteration, then
        Continuous-Time Mode."""
        self._event_iteration(t0)

    def statistics(self) -> dict:
        return {"steps": self.steps, "rhs_calls": self.rhs_calls, "events": self.events}

    # ---- the FMU as y' = f(t, y) ----------------------------------------------------------------

    def _set(self, t: float, y) -> None:
        self.inst.set_time(t)
        self._x[:] = y
        self.inst.set_states(self._x_ptr, self.n)

    def rhs(self, t: float, y) -> np.ndarray:
        self._set(t, y)
        self.inst.get_derivatives(self._dx_ptr, self.n)
        self.rhs_calls += 1
        return self._dx.copy()

    def states(self) -> np.ndarray:
        self.inst.get_states(self._x_ptr, self.n)
        return self._x.copy()

    # ---- events -------------------------------------------------------------------------------

    def _event_iteration(self, t: float) -> None:
        """In Event Mode: new discrete states until none are needed, then Continuous-Time Mode."""
        for _ in range(MAX_EVENT_ITERATIONS):
            needed, terminate, _, next_time = self.inst.update_discrete_states()
            if terminate:
                raise BlockError(f"the FMU asked to terminate the simulation in its event at t = {t!r}")
            if next_time is not None:
                raise BlockError(f"the FMU schedules a time event at t = {next_time!r}, which the Model "
                                 "Exchange FMU block does not handle; run its Co-Simulation interface")
            if not needed:
                break
        else:
            raise BlockError(f"the FMU's event iteration at t = {t!r} did not end after "
                             f"{MAX_EVENT_ITERATIONS} updates of its discrete states")
        self.inst.call("EnterContinuousTimeMode")

    def _completed_step(self, t: float) -> bool:
        """``CompletedIntegratorStep`` at the accepted step ``t``; True if it led to an event."""
        enter, terminate = self.inst.completed_step()
        if terminate:
            raise BlockError(f"the FMU asked to terminate the simulation after the step to t = {t!r}")
        if not enter:
            return False
        self.inst.call("EnterEventMode")
        self._event_iteration(t)
        self.events += 1
        return True

    # ---- one communication step ---------------------------------------------------------------

    def advance(self, t0: float, t1: float) -> None:
        """Integrate the FMU's states from ``t0`` to ``t1`` with the inputs as set; on return the
        FMU holds the time ``t1`` and the states there."""
        if self.n == 0:
            self.inst.set_time(t1)
            return
        s = self.settings
        t, y = t0, self.states()
        while True:
            first = None if self.first_step is None else min(self.first_step, t1 - t)
            solver = self.solver_class(self.rhs, t, y, t1, rtol=s.rtol, atol=s.atol,
                                       max_step=s.max_step, first_step=first)
            while solver.status == "running":
                message = solver.step()
                if solver.status == "failed":
                    raise BlockError(f"Model Exchange: {s.method} failed at t = {solver.t!r} "
                                     f"(from t = {t0!r} to {t1!r}): {message}")
                self.steps += 1
                # the step the solver would take next (h_abs, in all four of scipy's classes), not
                # the last one, which the end of the communication step may have cut short
                self.first_step = getattr(solver, "h_abs", None) or solver.step_size
                self._set(solver.t, solver.y)
                if self.needs_completed_step and self._completed_step(solver.t):
                    break  # start again from the FMU's states after the event
            else:
                return
            if solver.status == "finished":
                return
            t, y = solver.t, self.states()
