"""The one stepper interface of the reference integrators and the one loop that samples a run.

Every integrator of this package is a :class:`Stepper`: it is set up with x' = F(t, x) on
(t0, t1), an optional projection ``project(t, x)`` onto the constraint manifold and its settings,
and then advanced one accepted step at a time.  :func:`sample` drives any stepper over an
interval and records the output (as fmpy's ``simulate_fmu`` drives its solver objects): the
states at the output times ``t_eval``, or at every accepted step without them.

One step, as :func:`sample` runs it::

    stepper.step()                    the integrator's accepted step from t_old to t
    stepper.dense(ts)                 output times strictly inside the step, from the step's
                                      continuous extension (projected where the stepper projects)
    stepper.stabilize()               post-step projection of the end state (for the methods that
                                      do not project inside the step)
    x at output times equal to t      the step's end state, exactly
    monitor(t, h, h_rho)              progress and the stiffness diagnostic

The continuous extension belongs to the step as the integrator took it (DOP853's uses the
step's end point and slope), which is why it is sampled before ``stabilize``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...core.constants import COLLAPSE
from ...core.errors import ParameterError, SimulationError

__all__ = ["Stepper", "StepperResult", "sample", "check_output_times", "check_settings"]


@dataclass
class StepperResult:
    """Result of :func:`sample`.

    t: output times, shape (m,); x: states, shape (n, m); nfev: evaluations of the right-hand
    side; nproj: calls of ``project``; naccept / nreject: accepted / rejected steps (0 rejected
    where the method does not count them); status: 0 when the end of the interval was reached;
    message: text; extra: counters of one method (``njev``)."""

    t: np.ndarray
    x: np.ndarray
    nfev: int = 0
    nproj: int = 0
    naccept: int = 0
    nreject: int = 0
    status: int = 0
    message: str = ""
    extra: dict = field(default_factory=dict)


class Stepper:
    """What :func:`sample` needs of an integrator.

    Attributes: ``t0``, ``t1`` (the interval), ``x0`` (the initial state, output at t0 as
    given), ``t`` and ``x`` (the end of the last accepted step), ``h`` (its size, as the method
    defines it), ``h_rho`` (Hairer's stiffness estimate of the last step, or None), and the
    counters ``nfev``, ``nproj``, ``naccept``, ``nreject`` and :meth:`extra`."""

    t0: float
    t1: float
    x0: np.ndarray
    t: float
    x: np.ndarray
    h: float
    nfev = nproj = naccept = nreject = 0

    @property
    def finished(self) -> bool:
        """True once the end of the interval is reached."""
        return self.t >= self.t1

    @property
    def h_rho(self) -> float | None:
        return None

    def start(self) -> None:
        """Evaluate what the first step needs (the right-hand side at t0, the first step size)."""

    def step(self) -> None:  # pragma: no cover - abstract
        """One accepted step from ``t`` (raises SimulationError where the method fails)."""
        raise NotImplementedError

    def dense(self, ts: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """States at the times ``ts`` strictly inside the last step, shape (len(ts), n)."""
        raise NotImplementedError

    def stabilize(self) -> None:
        """Project the end state of the step (nothing for methods that project inside it)."""

    def extra(self) -> dict:
        return {}


def check_output_times(t_eval, t0: float, t1: float) -> np.ndarray | None:
    """``t_eval`` as a float array, checked: finite, sorted, within [t0, t1]."""
    if t_eval is None:
        return None
    t_eval = np.array(t_eval, dtype=float).ravel()
    if not np.all(np.isfinite(t_eval)):
        raise ParameterError("t_eval must be finite")
    if np.any(np.diff(t_eval) < 0):
        raise ParameterError("t_eval must be sorted in increasing order")
    if t_eval.size and (t_eval[0] < t0 or t_eval[-1] > t1):
        raise ParameterError(f"t_eval must lie within t_span [{t0}, {t1}], got [{t_eval[0]}, {t_eval[-1]}]")
    return t_eval


def check_settings(x0, t_span, rtol, atol, first_step, max_step, max_steps, min_step):
    """The settings of a stepper, checked: (x0 as a float array, t0, t1, rtol, atol (rtol / 10 where
    None; a scalar or one value per state), first_step, max_step, max_steps, min_step (default
    1e-14 (t1 - t0))); a ParameterError names the first bad one."""
    x0 = np.array(x0, dtype=float)
    if x0.ndim != 1 or x0.size == 0:
        raise ParameterError(f"x0 must be a non-empty 1-D array, got shape {x0.shape}")
    if not np.all(np.isfinite(x0)):
        raise ParameterError(f"x0 is not finite at indices {np.flatnonzero(~np.isfinite(x0)).tolist()}")
    try:
        t0, t1 = (float(v) for v in t_span)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"t_span must be two numbers (t0, t1), got {t_span!r}") from exc
    if not (math.isfinite(t0) and math.isfinite(t1)):
        raise ParameterError(f"t_span must be finite, got {t_span!r}")
    if not t1 > t0:
        raise ParameterError(f"t_span must satisfy t1 > t0 (forward integration only), got ({t0}, {t1})")
    rtol = float(rtol)
    if not (rtol > 0 and math.isfinite(rtol)):
        raise ParameterError(f"rtol must be positive and finite, got {rtol}")
    if atol is None:
        atol = rtol / 10
    atol = np.asarray(atol, dtype=float)
    if atol.ndim > 1 or (atol.ndim == 1 and atol.shape != x0.shape):
        raise ParameterError(f"atol must be a scalar or have shape {x0.shape}, got shape {atol.shape}")
    if not np.all(np.isfinite(atol)) or np.any(atol < 0):
        raise ParameterError("atol must be finite and non-negative")
    if atol.ndim == 0:
        atol = float(atol)
    max_step = float(max_step)
    if not max_step > 0:
        raise ParameterError(f"max_step must be positive, got {max_step}")
    if first_step is not None:
        first_step = float(first_step)
        if not (first_step > 0 and math.isfinite(first_step)):
            raise ParameterError(f"first_step must be positive and finite, got {first_step}")
    if int(max_steps) < 1:
        raise ParameterError(f"max_steps must be at least 1, got {max_steps}")
    if min_step is None:
        min_step = 1e-14 * (t1 - t0)
    min_step = float(min_step)
    if not min_step >= 0:
        raise ParameterError(f"min_step must be non-negative, got {min_step}")
    return x0, t0, t1, rtol, atol, first_step, max_step, int(max_steps), min_step


class _Record:
    """The output of a run: the states at ``t_eval``, or at every accepted step without it."""

    def __init__(self, t_eval, t0, x0):
        self.t_eval = t_eval
        if t_eval is None:
            self.ts, self.xs = [t0], [x0]
        else:
            self.X = np.empty((t_eval.size, x0.size))
            self.ie = int(np.searchsorted(t_eval, t0, side="right"))  # points equal to t0 get x0
            self.X[: self.ie] = x0

    def step(self, stepper) -> None:
        """Record the accepted step that ended at ``stepper.t`` and stabilize it."""
        t_eval, t = self.t_eval, stepper.t
        if t_eval is None:
            stepper.stabilize()
            self.ts.append(t)
            self.xs.append(stepper.x)
            return
        ie = self.ie
        if ie < t_eval.size and t_eval[ie] <= t:
            je = int(np.searchsorted(t_eval, t, side="right"))
            jin = je  # points [jin, je) coincide with the step end
            while jin > ie and t_eval[jin - 1] == t:
                jin -= 1
            if jin > ie:
                self.X[ie:jin] = stepper.dense(t_eval[ie:jin])
                self.ie = jin
            stepper.stabilize()
            self.X[jin:je] = stepper.x
            self.ie = je
        else:
            stepper.stabilize()

    def partial(self):
        """(t, x) of the output points reached."""
        if self.t_eval is None:
            return np.array(self.ts), np.ascontiguousarray(np.array(self.xs).T)
        return self.t_eval[: self.ie].copy(), np.ascontiguousarray(self.X[: self.ie].T)

    def complete(self, x_end):
        """(t, x) at the end of the run (output points left by rounding get the end state)."""
        if self.t_eval is None:
            return self.partial()
        self.X[self.ie:] = x_end
        return self.t_eval, np.ascontiguousarray(self.X.T)


def sample(stepper: Stepper, t_eval=None, monitor=None) -> StepperResult:
    """Run ``stepper`` to the end of its interval and return the states at ``t_eval`` (sorted
    times within the interval; None: every accepted step, including t0).

    ``monitor(t, h, h_rho)`` is called after every accepted step (progress, stiffness
    diagnostic); what it raises propagates.  A run whose step size collapses (COLLAPSE['steps']
    accepted steps in a row shorter than COLLAPSE['ratio'] of the interval, as in the engine)
    ends with a SimulationError.  Any exception raised during the steps (a
    SimulationError of the method, an error of the right-hand side or projection, a
    KeyboardInterrupt) carries ``partial = (t, x)``: the output points reached so far."""
    t_eval = check_output_times(t_eval, stepper.t0, stepper.t1)
    stepper.start()
    record = _Record(t_eval, stepper.t0, stepper.x0)
    h_collapse, short = COLLAPSE["ratio"] * (stepper.t1 - stepper.t0), 0
    try:
        while not stepper.finished:
            stepper.step()
            short = short + 1 if stepper.h < h_collapse else 0
            if short >= COLLAPSE["steps"]:  # creeping towards a point it never reaches
                raise SimulationError(
                    f"{type(stepper).__name__}: the step size collapsed ({short} accepted steps in a row "
                    f"shorter than {COLLAPSE['ratio']:g} of the interval) at t={stepper.t:.9g}: the "
                    "solution is not smooth here")
            record.step(stepper)
            if monitor is not None:
                monitor(stepper.t, stepper.h, stepper.h_rho)
    except BaseException as exc:  # the method's failure, the model's, Ctrl-C: keep what was computed
        exc.partial = record.partial()
        raise
    t, x = record.complete(stepper.x)
    return StepperResult(t=t, x=x, nfev=stepper.nfev, nproj=stepper.nproj, naccept=stepper.naccept,
                         nreject=stepper.nreject, status=0, extra=stepper.extra(),
                         message="The solver successfully reached the end of the integration interval.")

