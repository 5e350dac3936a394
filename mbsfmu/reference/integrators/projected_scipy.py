"""scipy's one-step integrators (DOP853, Radau, RK45, ..., BDF and LSODA without projection)
stepped by hand, with a projection after every accepted step for formulations that keep
constraints by projection.

After each step the solver's state is replaced by its projection onto the constraint manifold,

    x_{n+1} = project(t_{n+1}, x~_{n+1}),

the post-stabilization of seed 004 sec. 3.4 (eqs. 3.66 and 3.68 for ``projection``; the
formulation's own correction for ``qr``, ``svd``, ``partition``), and an explicit method's stored
derivative is recomputed there.  Output points inside a step come from the step's dense
output, projected as well.  Stepping by hand (rather than ``solve_ivp``) lets a monitor watch
every step (progress, stiffness diagnostic) and keeps what was computed when a run fails or is
interrupted: the exception then carries ``partial = (t, x)``, the output points reached.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import BDF, DOP853, LSODA, RK23, RK45, Radau

from ...core.errors import ParameterError, SimulationError
from .stepper import Stepper, StepperResult, check_settings, sample

#: Methods whose state can be replaced between steps, so that a projection can be applied.
SOLVERS = {"RK23": RK23, "RK45": RK45, "DOP853": DOP853, "Radau": Radau}
#: Also BDF and LSODA where nothing is projected (they keep a history a projection would not
#: reach).
UNPROJECTED_SOLVERS = {**SOLVERS, "BDF": BDF, "LSODA": LSODA}


class ProjectedScipy(Stepper):
    """scipy's ``method`` as a :class:`~mbsfmu.reference.integrators.stepper.Stepper`, projecting the end
    state of every step (:meth:`stabilize`) where ``project`` is given."""

    def __init__(self, rhs, x0, t_span, method, project=None, rtol=1e-6, atol=1e-8,
                 max_step=np.inf, max_steps=10_000_000):
        if method not in UNPROJECTED_SOLVERS:
            raise ParameterError(f"unknown method {method!r}; use one of {', '.join(UNPROJECTED_SOLVERS)}")
        self.x0, self.t0, self.t1, rtol, atol, _, max_step, self.max_steps, _ = check_settings(
            x0, t_span, rtol, atol, None, max_step, max_steps, None)
        self.rhs, self.method, self.project = rhs, method, project
        self.options = {"rtol": rtol, "atol": atol, "max_step": max_step}
        self.t, self.x, self.h = self.t0, self.x0, 0.0
        self.nproj = self.naccept = 0
        self.solver = None

    def start(self) -> None:
        self.solver = UNPROJECTED_SOLVERS[self.method](self.rhs, self.t0, self.x0.copy(), self.t1,
                                                       **self.options)

    @property
    def finished(self) -> bool:
        return self.solver.status != "running"

    @property
    def nfev(self) -> int:
        return self.solver.nfev if self.solver is not None else 0

    def step(self) -> None:
        solver, method = self.solver, self.method
        t_old, self._y_old = solver.t, solver.y
        msg = solver.step()
        if solver.status == "failed":
            raise SimulationError(f"{method} failed at t={solver.t:.6g}: {msg}")
        self.naccept += 1
        if self.naccept > self.max_steps:
            raise SimulationError(f"{method}: more than {self.max_steps} steps before t={solver.t:.6g}")
        if not np.all(np.isfinite(solver.y)):
            raise SimulationError(f"{method}: the solution became non-finite at t={solver.t:.6g}")
        if solver.t <= t_old:
            raise SimulationError(f"{method}: no progress at t={solver.t:.6g}")
        self._y_end = solver.y  # before the projection (the stiffness estimate's end point)
        self.t, self.x, self.h = solver.t, solver.y, solver.t - t_old

    def dense(self, ts: np.ndarray) -> np.ndarray:
        """The step's dense output at ``ts``, each point projected."""
        dense = self.solver.dense_output()
        X = np.empty((len(ts), self.x0.size))
        for i, t in enumerate(ts):
            X[i] = dense(t)
            if not np.all(np.isfinite(X[i])):  # DOP853's interpolant has stages of its own
                raise SimulationError(f"{self.method}: the dense output is not finite at t={t:.6g}")
            if self.project is not None:
                X[i] = self.project(t, X[i])
                self.nproj += 1
        return X

    def stabilize(self) -> None:
        if self.project is None:
            return
        solver = self.solver
        solver.y = self.project(solver.t, solver.y)
        self.nproj += 1
        if hasattr(solver, "f"):
            solver.f = self.rhs(solver.t, solver.y)
        self.x = solver.y

    @property
    def h_rho(self) -> float | None:
        return stiffness_estimate(self.solver, self._y_old, self._y_end)

    def extra(self) -> dict:
        return {"njev": getattr(self.solver, "njev", 0)}


def integrate_projected(rhs, x0, t_span, method, t_eval, project=None, rtol=1e-6, atol=1e-8,
                        max_step=np.inf, max_steps=10_000_000, monitor=None) -> StepperResult:
    """Integrate x' = rhs(t, x) with scipy's ``method``, projecting after each step (if
    ``project``); ``monitor(t, h, h_rho)`` is called after every accepted step."""
    stepper = ProjectedScipy(rhs, x0, t_span, method, project=project, rtol=rtol, atol=atol,
                             max_step=max_step, max_steps=max_steps)
    return sample(stepper, t_eval, monitor)


def stiffness_estimate(solver, y_old, y_new) -> float | None:
    """Hairer's h rho of the last step of an explicit Runge-Kutta solver (None for others):
    rho = |f(t+h, y_new) - f(t+h, y_s)| / |y_new - y_s| with the stage s at c_s = 1, whose
    argument is y_s = y_old + h sum_j a_sj k_j (HNW II, Sec. IV.2)."""
    C = getattr(solver, "C", None)
    K = getattr(solver, "K", None)
    if C is None or K is None or not hasattr(solver, "A") or C[-1] != 1.0:
        return None
    s = len(C) - 1
    h = solver.h_previous
    y_s = y_old + h * (K[:s].T @ solver.A[s, :s])
    dy = np.linalg.norm(y_new - y_s)
    if not dy > 0.0:
        return None
    return h * float(np.linalg.norm(K[s + 1] - K[s])) / dy
