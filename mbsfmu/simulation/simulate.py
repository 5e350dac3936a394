"""``mbsfmu.simulate``: integrate a model and sample the result on a regular grid."""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.integrate import solve_ivp

from ..errors import ParameterError, SimulationError
from ..formulations import MinimalODE
from .result import Result

#: Method aliases: an explicit high-order method and a stiff (implicit) one.
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
    velocities."""
    coords = system.coordinates_
    y = np.array([c.initial for c in coords.values()], dtype=float)
    yd = np.array([c.initial_velocity for c in coords.values()], dtype=float)
    names = list(coords)
    for key, val in (initial or {}).items():
        try:
            v = float(val)
        except (TypeError, ValueError):
            raise ParameterError(f"initial value {key!r}: {val!r} is not a number") from None
        if not math.isfinite(v):
            raise ParameterError(f"initial value {key!r}: {val!r} is not finite")
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


def simulate(model, t_end: float, dt: float = 0.01, method: str = "explicit",
             rtol: float = 1e-8, atol: float | None = None, params: dict | None = None,
             initial: dict | None = None, inputs: dict | None = None,
             max_step: float = math.inf) -> Result:
    """Simulate a tree-structured model from t = 0 to ``t_end``.

    ``method`` is ``'explicit'`` (DOP853), ``'stiff'`` (Radau) or any scipy ``solve_ivp`` method.
    ``params`` overrides constants, ``initial`` the initial state, ``inputs`` maps input names
    to numbers or functions of t.  Returns a :class:`Result` sampled at 0, dt, ..., t_end from
    the integrator's dense output."""
    system = _system_of(model)
    scipy_method = METHODS.get(method, method)
    if scipy_method not in SCIPY_METHODS:
        raise ParameterError(f"unknown method {method!r}; use 'explicit', 'stiff' or one of "
                             f"{', '.join(SCIPY_METHODS)}")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ParameterError(f"{name} must be a positive number, got {v!r}")
    atol = rtol * 1e-2 if atol is None else atol
    grid = output_grid(float(t_end), float(dt))
    eqs = system.equations()
    numeric = eqs.numeric(params)
    x0 = initial_state(system, initial)
    ode = MinimalODE(numeric, inputs)
    f = numeric.f
    numeric.check_state(0.0, x0[:f], x0[f:], ode.inputs_at(0.0))
    start = time.perf_counter()
    sol = solve_ivp(ode, (0.0, grid[-1]), x0, method=scipy_method, t_eval=grid,
                    rtol=rtol, atol=atol, max_step=max_step)
    cpu = time.perf_counter() - start
    if sol.status != 0:
        raise SimulationError(f"{system.name}: integration stopped at t={sol.t[-1]:.6g} "
                              f"with {scipy_method}: {sol.message}")
    if not np.all(np.isfinite(sol.y)):
        raise SimulationError(f"{system.name}: the solution became non-finite")
    U = None
    if inputs:
        U = np.array([ode.inputs_at(ti) for ti in sol.t]).T
    return Result(numeric, sol.t, sol.y[:f], sol.y[f:], U,
                  stats={"method": scipy_method, "nfev": sol.nfev, "njev": sol.njev,
                         "cpu_seconds": cpu, "rtol": rtol, "atol": atol})
