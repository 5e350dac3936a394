"""scipy's one-step integrators (DOP853, Radau, RK45, ..., BDF and LSODA without projection)
stepped by hand, with a projection after every accepted step for formulations that keep
constraints by projection.

After each step the solver's state is replaced by ``project(t, x)`` (and an explicit method's
stored derivative is recomputed there).  Output points inside a step come from the step's dense
output, projected as well.  Stepping by hand (rather than ``solve_ivp``) lets a monitor watch
every step (progress, stiffness diagnostic) and keeps what was computed when a run fails or is
interrupted: the exception then carries ``partial = (t, x)``, the output points reached.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import BDF, DOP853, LSODA, RK23, RK45, Radau

from ..errors import SimulationError

#: Methods whose state can be replaced between steps, so that a projection can be applied.
SOLVERS = {"RK23": RK23, "RK45": RK45, "DOP853": DOP853, "Radau": Radau}
#: Also BDF and LSODA where nothing is projected (they keep a history a projection would not
#: reach).
UNPROJECTED_SOLVERS = {**SOLVERS, "BDF": BDF, "LSODA": LSODA}


@dataclass
class StepperResult:
    t: np.ndarray
    x: np.ndarray
    nfev: int = 0
    nproj: int = 0
    naccept: int = 0
    nreject: int = 0
    status: int = 0
    message: str = ""
    extra: dict = field(default_factory=dict)


def integrate_projected(rhs, x0, t_span, method, t_eval, project=None, rtol=1e-6, atol=1e-8,
                        max_step=np.inf, max_steps=10_000_000, monitor=None):
    """Integrate x' = rhs(t, x) with scipy's ``method``, projecting after each step (if
    ``project``); ``monitor(t, h)`` is called after every accepted step."""
    solver = UNPROJECTED_SOLVERS[method](rhs, t_span[0], np.array(x0, dtype=float), t_span[1],
                                         rtol=rtol, atol=atol, max_step=max_step)
    out = np.empty((len(x0), len(t_eval)))
    k = 0
    while k < len(t_eval) and t_eval[k] <= t_span[0]:
        out[:, k] = x0
        k += 1
    nproj = steps = 0
    try:
        while solver.status == "running":
            t_old, y_old = solver.t, solver.y
            msg = solver.step()
            y_end = solver.y
            if solver.status == "failed":
                raise SimulationError(f"{method} failed at t={solver.t:.6g}: {msg}")
            steps += 1
            if steps > max_steps:
                raise SimulationError(f"{method}: more than {max_steps} steps before t={solver.t:.6g}")
            if not np.all(np.isfinite(solver.y)):
                raise SimulationError(f"{method}: the solution became non-finite at t={solver.t:.6g}")
            dense = solver.dense_output() if k < len(t_eval) and t_eval[k] < solver.t else None
            while k < len(t_eval) and t_eval[k] <= solver.t:
                if t_eval[k] == solver.t or dense is None:
                    xk = solver.y.copy()
                else:
                    xk = dense(t_eval[k])
                if project is not None:
                    xk = project(t_eval[k], xk)
                    nproj += 1
                out[:, k] = xk
                k += 1
            if project is not None:
                solver.y = project(solver.t, solver.y)
                nproj += 1
                if hasattr(solver, "f"):
                    solver.f = rhs(solver.t, solver.y)
                if t_eval[k - 1] == solver.t if k else False:
                    out[:, k - 1] = solver.y
            if solver.t <= t_old:
                raise SimulationError(f"{method}: no progress at t={solver.t:.6g}")
            if monitor is not None:
                monitor(solver.t, solver.t - t_old, stiffness_estimate(solver, y_old, y_end))
    except (SimulationError, KeyboardInterrupt) as exc:
        exc.partial = (np.asarray(t_eval[:k]).copy(), out[:, :k].copy())
        raise
    return StepperResult(t=np.asarray(t_eval), x=out, nfev=solver.nfev, nproj=nproj,
                         naccept=steps, message="ok", extra={"njev": getattr(solver, "njev", 0)})


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
