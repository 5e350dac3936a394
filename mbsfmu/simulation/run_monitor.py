"""Watching a run step by step: progress reports and the stiffness diagnostic.

The integrators call the monitor after every accepted step with the new time t, the step size h
and, where the method allows, Hairer's stiffness estimate h rho (HNW II, Sec. IV.2: rho =
|f(t+h, x_new) - f(t+h, x_s)| / |x_new - x_s| for the stage s with c_s = 1 approximates the
dominant eigenvalue |lambda| of the Jacobian).  The monitor

* reports progress to a user callback ``progress(t, t_end)`` at most every ``every`` seconds of
  wall time;
* for an explicit method, warns once (:class:`~mbsfmu.core.errors.StiffnessWarning`) when the step is
  limited by stability, not accuracy: h rho is above 80 % of the method's stability boundary on
  the negative real axis (3.3 for Dormand-Prince 5(4), 6.1 for DOP853) for ``STIFF_STEPS``
  accepted steps, never ``STIFF_GAP`` steps in a row below it in between (one low value is the
  estimate's noise), while more than ``MIN_REMAINING`` steps remain, at rtol <= ``RTOL_MAX``
  (1e-3; at looser tolerances the accuracy-limited step of an ordinary motion reaches the
  stability boundary itself).  Then the model is stiff, and an L-stable implicit method takes
  far fewer steps.  The warning names the step
  size, the estimate of |lambda|, the projected number of steps and the remedy,
  ``method='stiff'``.

  Nothing else is called stiff.  A run that needs many steps because its span is long or its
  tolerance tight (a pendulum over 10^4 s at rtol 1e-10), or because it resolves a fast motion
  that is really there (an undamped stiff spring), takes steps limited by accuracy, with h rho
  well inside the stability region; an implicit method would have to take them too.  A method
  without the estimate (RK23) is not diagnosed.
"""

from __future__ import annotations

import time
import warnings

from ..core.constants import STIFFNESS
from ..core.errors import StiffnessWarning

#: negative-real-axis stability boundary |h lambda| of the explicit methods
STABILITY_BOUNDARY = {"RK45": STIFFNESS["boundary_rkstab"], "rkstab": STIFFNESS["boundary_rkstab"],
                      "DOP853": STIFFNESS["boundary_dop853"]}
#: stability-limited steps (not separated by STIFF_GAP below the threshold in a row), and steps
#: still to go, before the stiffness warning (the engine counts the same, mbs_rk_stiff_count)
STIFF_STEPS = STIFFNESS["steps"]
STIFF_GAP = STIFFNESS["gap"]
MIN_REMAINING = STIFFNESS["min_remaining"]
RTOL_MAX = STIFFNESS["rtol_max"]


class RunMonitor:
    def __init__(self, name: str, t0: float, t_end: float, method: str, progress=None,
                 every: float = 0.2, rtol: float = 1e-8):
        self.name, self.t0, self.t_end = name, t0, t_end
        self.boundary = STABILITY_BOUNDARY.get(method) if rtol <= RTOL_MAX else None
        self.progress, self.every = progress, every
        self.steps = 0
        self.warned = False
        self._stiff_run = self._below = 0
        self._next_report = time.perf_counter()
        self.report(t0)

    def report(self, t: float) -> None:
        if self.progress is not None:
            self.progress(t, self.t_end)
            self._next_report = time.perf_counter() + self.every

    def __call__(self, t: float, h: float, h_rho: float | None = None) -> None:
        """One accepted step of size h ended at t; h_rho is Hairer's stiffness estimate."""
        self.steps += 1
        if self.progress is not None and (self.steps & 15) == 0 and \
                time.perf_counter() >= self._next_report:
            self.report(t)
        if self.boundary is None or h_rho is None or self.warned:
            return
        if h_rho > STIFFNESS["fraction"] * self.boundary:
            self._stiff_run, self._below = self._stiff_run + 1, 0
        else:
            self._below += 1
            if self._below >= STIFF_GAP:
                self._stiff_run = 0
        if self._stiff_run >= STIFF_STEPS and (self.t_end - t) / h > MIN_REMAINING:
            self._warn(t, h, f"the step is limited by stability, not accuracy (h |lambda| = "
                             f"{h_rho:.3g} with |lambda| ~ {h_rho / h:.3g} 1/s)")

    def _warn(self, t: float, h: float, why: str) -> None:
        self.warned = True
        remaining = (self.t_end - t) / h if h > 0 else float("inf")
        warnings.warn(
            f"{self.name}: the explicit method is taking steps of {h:.3g} s at t = {t:.6g} s, "
            f"about {remaining:.3g} more to t_end = {self.t_end:g} s; {why}: the model is "
            "stiff (a very stiff spring or damper). method='stiff' (mbsfmu simulate --method stiff) "
            "takes far fewer steps where the fast motion is damped or not excited",
            StiffnessWarning, stacklevel=3)

    def finish(self, t: float) -> None:
        self.report(t)
