"""scipy's one-step integrators (Radau, BDF, RK45, DOP853, ...) with a projection after every
accepted step, for formulations that keep constraints by projection.

The solver is stepped by hand; after each step its state is replaced by ``project(t, x)`` (and
an explicit method's stored derivative is recomputed there).  Output points inside a step come
from the step's dense output, projected as well.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import DOP853, RK23, RK45, Radau

from ..errors import SimulationError

#: Methods whose state can be replaced between steps (BDF and LSODA keep a history that a
#: projection would not reach, so they are not offered here).
SOLVERS = {"RK23": RK23, "RK45": RK45, "DOP853": DOP853, "Radau": Radau}


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
                        max_step=np.inf, max_steps=10_000_000):
    """Integrate x' = rhs(t, x) with scipy's ``method``, projecting after each step."""
    solver = SOLVERS[method](rhs, t_span[0], np.array(x0, dtype=float), t_span[1], rtol=rtol,
                             atol=atol, max_step=max_step)
    out = np.empty((len(x0), len(t_eval)))
    k = 0
    while k < len(t_eval) and t_eval[k] <= t_span[0]:
        out[:, k] = x0
        k += 1
    nproj = steps = 0
    while solver.status == "running":
        t_old = solver.t
        msg = solver.step()
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
    return StepperResult(t=np.asarray(t_eval), x=out, nfev=solver.nfev, nproj=nproj,
                         naccept=steps, message="ok")
