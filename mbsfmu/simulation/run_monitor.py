"""Watching a run step by step: progress reports and the stiffness diagnostic.

The integrators call the monitor after every accepted step with the new time t, the step size h
and, where the method allows, Hairer's stiffness estimate h rho (HNW II, Sec. IV.2: rho =
|f(t+h, x_new) - f(t+h, x_s)| / |x_new - x_s| for the stage s with c_s = 1 approximates the
dominant eigenvalue |lambda| of the Jacobian).  The monitor

* reports progress to a user callback ``progress(t, t_end)`` at most every ``every`` seconds of
  wall time;
* for an explicit method, warns once (:class:`~mbsfmu.errors.StiffnessWarning`) when
  - the step is limited by stability, not accuracy: h rho stays above 80 % of the method's
    stability boundary on the negative real axis (3.3 for Dormand-Prince 5(4), 6.1 for DOP853)
    for ``STIFF_STEPS`` accepted steps in a row while more than ``MIN_REMAINING`` steps remain:
    the model is stiff, and an L-stable implicit method takes far fewer steps; or
  - the step size has collapsed relative to the interval: the mean step over the last
    ``window`` steps is below ``COLLAPSE_RATIO`` (t_end - t0), so the run would need more than
    1/COLLAPSE_RATIO steps (a fast motion is being resolved).
  The warning names the step size, the estimate of |lambda| where there is one, the projected
  number of steps and the remedy, ``method='stiff'``.
"""

from __future__ import annotations

import time
import warnings

from ..errors import StiffnessWarning
from ..runtime.constants import STIFFNESS

#: negative-real-axis stability boundary |h lambda| of the explicit methods
STABILITY_BOUNDARY = {"RK45": STIFFNESS["boundary_rkstab"], "rkstab": STIFFNESS["boundary_rkstab"],
                      "DOP853": STIFFNESS["boundary_dop853"]}
#: consecutive stability-limited steps, and steps still to go, before the stiffness warning
STIFF_STEPS = STIFFNESS["steps"]
MIN_REMAINING = STIFFNESS["min_remaining"]
#: mean step / interval below which an explicit run is reported as collapsed
COLLAPSE_RATIO = STIFFNESS["collapse_ratio"]


class RunMonitor:
    def __init__(self, name: str, t0: float, t_end: float, method: str, progress=None,
                 every: float = 0.2, window: int = STIFFNESS["window"]):
        self.name, self.t0, self.t_end = name, t0, t_end
        self.explicit = method in ("RK23", *STABILITY_BOUNDARY)
        self.boundary = STABILITY_BOUNDARY.get(method)
        self.progress, self.every, self.window = progress, every, window
        self.steps = 0
        self.warned = False
        self._stiff_run = 0
        self._t_window = t0
        self._steps_window = 0
        self._next_report = time.perf_counter()
        self.report(t0)

    def report(self, t: float) -> None:
        if self.progress is not None:
            self.progress(t, self.t_end)
            self._next_report = time.perf_counter() + self.every

    def __call__(self, t: float, h: float, h_rho: float | None = None) -> None:
        """One accepted step of size h ended at t; h_rho is Hairer's stiffness estimate."""
        self.steps += 1
        self._steps_window += 1
        if self.progress is not None and (self.steps & 15) == 0 and \
                time.perf_counter() >= self._next_report:
            self.report(t)
        if not self.explicit or self.warned:
            return
        if h_rho is not None and self.boundary is not None:
            self._stiff_run = self._stiff_run + 1 if h_rho > STIFFNESS["fraction"] * self.boundary else 0
            if self._stiff_run >= STIFF_STEPS and (self.t_end - t) / h > MIN_REMAINING:
                self._warn(t, h, f"the step is limited by stability, not accuracy (h |lambda| = "
                                 f"{h_rho:.3g} with |lambda| ~ {h_rho / h:.3g} 1/s)")
                return
        if self._steps_window >= self.window:
            mean_h = (t - self._t_window) / self._steps_window
            self._t_window, self._steps_window = t, 0
            if mean_h < COLLAPSE_RATIO * (self.t_end - self.t0):
                self._warn(t, mean_h, "its steps have collapsed relative to the interval")

    def _warn(self, t: float, h: float, why: str) -> None:
        self.warned = True
        remaining = (self.t_end - t) / h if h > 0 else float("inf")
        warnings.warn(
            f"{self.name}: the explicit method is taking steps of {h:.3g} s at t = {t:.6g} s, "
            f"about {remaining:.3g} more to t_end = {self.t_end:g} s; {why}: the model is "
            "probably stiff (a very stiff spring or damper). method='stiff' (mbsfmu simulate "
            "--method stiff) takes far fewer steps where the fast motion is damped or not "
            "excited (an undamped fast oscillation has to be resolved by any method)",
            StiffnessWarning, stacklevel=3)

    def finish(self, t: float) -> None:
        self.report(t)
