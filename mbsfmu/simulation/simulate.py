"""``mbsfmu.simulate``: integrate a model and sample the result on a regular grid."""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.integrate import solve_ivp

from ..errors import ConstraintError, ParameterError, SimulationError
from ..formulations import make_formulation
from ..formulations.consistent_initialization import consistent_state
from ..model.system import finite_number
from .projected_scipy import SOLVERS, integrate_projected
from .result import Result

#: Method aliases: an explicit method and a stiff (implicit) one.  For systems with
#: constraints 'explicit' is the stabilized Dormand-Prince 5(4) of seed 004 (RKSTAB).
METHODS = {"explicit": "DOP853", "stiff": "Radau"}
SCIPY_METHODS = ("RK23", "RK45", "DOP853", "Radau", "BDF", "LSODA")


def output_grid(t_end: float, dt: float) -> np.ndarray:
    """0, dt, 2 dt, ... up to and including t_end (t_end appended if not on the grid)."""
    if not (math.isfinite(t_end) and t_end > 0):
        raise ParameterError(f"t_end must be a positive number, got {t_end!r}")
    if not (math.isfinite(dt) and dt > 0):
        raise ParameterError(f"dt must be a positive number, got {dt!r}")
    n = int(math.floor(t_end / dt + 1e-9))
    grid = np.arange(n + 1) * dt
    if abs(grid[-1] - t_end) <= 1e-9 * max(1.0, t_end):
        grid[-1] = t_end
    else:
        grid = np.append(grid, t_end)
    return grid


def initial_state(system, initial=None) -> np.ndarray:
    """Initial [y, y'] from the model's values, overridden by ``initial``.

    Keys of ``initial`` are coordinate names for positions and ``der(name)`` or ``Dname`` for
    velocities.  Values given here count as given (not guesses) for consistent initialization."""
    coords = system.coordinates_
    y = np.array([c.initial for c in coords.values()], dtype=float)
    yd = np.array([c.initial_velocity for c in coords.values()], dtype=float)
    names = list(coords)
    for key, val in (initial or {}).items():
        v = finite_number(val, f"initial value {key!r}")
        if key in coords:
            y[names.index(key)] = v
        elif key.startswith("der(") and key.endswith(")") and key[4:-1] in coords:
            yd[names.index(key[4:-1])] = v
        elif key.startswith("D") and key[1:] in coords:
            yd[names.index(key[1:])] = v
        else:
            raise ParameterError(f"initial value {key!r}: not a coordinate or velocity of "
                                 f"{system.name!r} (coordinates: {', '.join(names)})")
    return np.concatenate((y, yd))


def _system_of(model):
    from ..model import System

    if isinstance(model, System):
        return model
    if hasattr(model, "system") and hasattr(model, "M"):
        return model.system
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        from ..model.loader import load_model

        return load_model(model)
    raise TypeError(f"simulate() needs a System, Equations or a model file, got {type(model)!r}")


def check_rank(formulation, t, y):
    """Redundant constraints are an error unless the formulation takes them."""
    num = formulation.numeric
    _, C, _ = num.constraint_parts(t, y)
    sv = np.linalg.svd(C, compute_uv=False)
    tol = 1e-9 * (sv[0] if sv.size and sv[0] > 0 else 1.0)
    rank = int(np.sum(sv > tol))
    if rank < num.m and not formulation.handles_redundant:
        raise ConstraintError(
            f"{num.system.name}: the {num.m} constraints are redundant (rank of C is {rank} "
            f"with tolerance {tol:.1e}); formulation {formulation.name!r} cannot take redundant "
            "constraints: use 'qr' or 'svd'")
    return rank


def simulate(model, t_end: float, dt: float = 0.01, method: str = "explicit",
             rtol: float = 1e-8, atol: float | None = None, params: dict | None = None,
             initial: dict | None = None, inputs: dict | None = None,
             formulation: str | None = None, formulation_options: dict | None = None,
             fixed=(), max_step: float = math.inf, backend: str = "numpy") -> Result:
    """Simulate a model from t = 0 to ``t_end``.

    ``method``: ``'explicit'`` (trees: DOP853; loops: the stabilized Dormand-Prince RKSTAB),
    ``'stiff'`` (Radau, with the formulation's projection after every step for loops) or a
    scipy ``solve_ivp`` method.  ``formulation`` chooses how loop constraints are kept (see
    :mod:`mbsfmu.formulations`; default ``'qr'``) with ``formulation_options``; ``fixed`` names
    coordinates that keep their given initial values during consistent initialization.
    ``backend`` evaluates the equations with generated Python/numpy code (``'numpy'``, the
    reference) or with the generated C kernel compiled by gcc (``'c'``, several times faster).
    ``params`` overrides constants, ``initial`` the initial state, ``inputs`` maps input names
    to numbers or functions of t.  Returns a :class:`Result` on the grid 0, dt, ..., t_end."""
    system = _system_of(model)
    scipy_method = METHODS.get(method, method)
    if scipy_method not in SCIPY_METHODS and scipy_method != "rkstab":
        raise ParameterError(f"unknown method {method!r}; use 'explicit', 'stiff', 'rkstab' or "
                             f"one of {', '.join(SCIPY_METHODS)}")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ParameterError(f"{name} must be a positive number, got {v!r}")
    grid = output_grid(float(t_end), float(dt))
    eqs = system.equations()
    numeric = eqs.numeric(params)
    if backend == "c":
        numeric.use_c_kernel()
    elif backend != "numpy":
        raise ParameterError(f"unknown backend {backend!r}; use 'numpy' or 'c'")
    form = make_formulation(formulation, numeric, inputs, **(formulation_options or {}))
    x0 = initial_state(system, initial)
    f = numeric.f
    if numeric.m:
        given = [k if not k.startswith("D") or k in system.coordinates_ else f"der({k[1:]})"
                 for k in (initial or {})]
        x0 = consistent_state(numeric, x0, fixed=fixed, given=given)
        check_rank(form, 0.0, x0[:f])
        if method == "explicit":
            scipy_method = "rkstab"
        atol = rtol / 10 if atol is None else atol
    else:
        atol = rtol * 1e-2 if atol is None else atol
    numeric.check_state(0.0, x0[:f], x0[f:], form.inputs(0.0))
    start = time.perf_counter()
    stats = {"method": scipy_method, "formulation": form.name, "rtol": rtol, "atol": atol,
             "backend": backend}
    if numeric.m == 0 and scipy_method != "rkstab":
        sol = solve_ivp(form, (0.0, grid[-1]), x0, method=scipy_method, t_eval=grid,
                        rtol=rtol, atol=atol, max_step=max_step)
        if sol.status != 0:
            raise SimulationError(f"{system.name}: integration stopped at t={sol.t[-1]:.6g} "
                                  f"with {scipy_method}: {sol.message}")
        T, X = sol.t, sol.y
        stats.update(nfev=sol.nfev, njev=sol.njev)
    else:
        project = form.project if form.projects else None
        if scipy_method == "rkstab":
            from ..formulations.rkstab import integrate

            sol = integrate(form, x0, (0.0, grid[-1]), project=project, rtol=rtol, atol=atol,
                            t_eval=grid, max_step=max_step)
        elif scipy_method in SOLVERS:
            sol = integrate_projected(form, x0, (0.0, grid[-1]), scipy_method, grid, project,
                                      rtol=rtol, atol=atol, max_step=max_step)
        else:
            raise ParameterError(f"method {method!r} cannot be combined with constraints; use "
                                 f"'explicit' (RKSTAB), 'stiff' (Radau) or {', '.join(SOLVERS)}")
        T, X = sol.t, sol.x
        stats.update(nfev=sol.nfev, nproj=sol.nproj, naccept=sol.naccept, nreject=sol.nreject)
    stats["cpu_seconds"] = time.perf_counter() - start
    stats["rhs_calls"] = form.nfev
    if not np.all(np.isfinite(X)):
        raise SimulationError(f"{system.name}: the solution became non-finite")
    U = None
    if inputs:
        U = np.array([form.inputs(ti) for ti in T]).T
    if hasattr(form, "switches"):
        stats["partition_switches"] = list(form.switches)
    return Result(numeric, T, X[:f], X[f:], U, stats=stats, formulation=form)
