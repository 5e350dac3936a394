"""The reference integrators (the C engine has its own, in :mod:`mbsfmu.runtime`).

Each integrator is a :class:`~.stepper.Stepper` (one accepted step at a time, the step's
continuous extension, the projection after the step) and :func:`~.stepper.sample` is the one
loop that drives any of them over an interval and records the output:

* :mod:`.rkstab` -- RKSTAB, Dormand-Prince 5(4) with the projection inside the step (seed 004
  §4.2-4.3), for systems with constraints;
* :mod:`.projected_scipy` -- scipy's one-step methods (DOP853, Radau, RK45, RK23; BDF and LSODA
  without projection) stepped by hand, projecting after every step.

``make_stepper(method, rhs, x0, t_span, ...)`` builds the stepper of a method name.
"""

from __future__ import annotations

from .projected_scipy import SOLVERS, UNPROJECTED_SOLVERS, ProjectedScipy, integrate_projected
from .rkstab import RKStab, integrate
from .stepper import Stepper, StepperResult, sample

#: the methods of :func:`make_stepper`
METHODS = ("rkstab", *UNPROJECTED_SOLVERS)


def make_stepper(method: str, rhs, x0, t_span, project=None, rtol=1e-6, atol=None,
                 max_step=float("inf"), weak=None) -> Stepper:
    """The stepper of ``method`` ('rkstab' or a scipy method of ``UNPROJECTED_SOLVERS``) for
    x' = rhs(t, x) on t_span, projecting with ``project`` (None: no projection); ``atol`` None is
    the method's default; ``weak`` is RKSTAB's hook for singular positions (:mod:`.rkstab`)."""
    settings = {"rtol": rtol, "max_step": max_step, **({} if atol is None else {"atol": atol})}
    if method == "rkstab":
        return RKStab(rhs, x0, t_span, project=project, weak=weak, **settings)
    return ProjectedScipy(rhs, x0, t_span, method, project=project, **settings)


__all__ = ["Stepper", "StepperResult", "sample", "make_stepper", "METHODS", "RKStab", "integrate",
           "ProjectedScipy", "integrate_projected", "SOLVERS", "UNPROJECTED_SOLVERS"]
