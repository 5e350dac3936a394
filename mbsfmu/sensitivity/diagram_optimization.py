"""``mbsfmu.optimize`` of a block diagram: controller gains (or any parameter of a diagram) tuned
against a metric of its closed-loop run, without gradients of the run.

The target is what a sweep takes as a diagram (:mod:`mbsfmu.study.diagram_target`): a function
of the parameters that returns a :class:`~mbsfmu.runner.Diagram` (the optimized parameters and
the fixed ``constants=`` are its keyword arguments) or an SSP file (``block.parameter``).  The
objective and the constraints are a sweep's metrics (``'ise(plant.y, reference=ref.y)'``,
``'maxabs(ctrl.y)'``, ``'largest_real_part'``, ...), each evaluation one run of the diagram
(:func:`mbsfmu.study.batch.run_one`, in this process).

**The problem** is :mod:`.optimization`'s: p in the box lo <= p <= hi scaled to u in [0, 1]^n,
the objective divided by |f(p0)|, each constraint by max(|v_i|, |c_i(p0)|).

**Minimizers** (``minimizer=``; the word ``method`` is the integration method's):

- ``'Nelder-Mead'`` (default without constraints): the simplex method, bounded (scipy clips the
  simplex into the box); stops when the simplex is within ``xtol`` in u and the objective
  within ``ftol`` of the scaled objective;
- ``'Powell'``: line searches along conjugate directions within the box (``xtol``, ``ftol``);
- ``'COBYLA'`` (default with constraints): linear approximations of objective and constraints on
  a simplex, in a trust region that shrinks to ``xtol``; the box as constraints;
- ``'L-BFGS-B'``, ``'SLSQP'``: the gradient minimizers with forward differences of step
  ``fd_step`` in u (each a run: n + 1 runs per gradient).

**A run that diverged or did not settle** (its metrics' verdict, :mod:`mbsfmu.study.metrics`)
counts as +inf for the objective (and as violating every constraint), so that the search moves
away from unstable gains (a row 'unstable', a metric of the linearized loop, keeps its value:
the largest real part of an unstable loop is what a search for stability minimizes); a run that
failed is a SimulationError naming the parameter values, as for a model.  History file and
resume as :mod:`.optimization` (the gradient columns nan).
"""

from __future__ import annotations

import inspect
import math
import time

import numpy as np
from scipy.optimize import minimize as scipy_minimize

from ..core.checks import finite_number
from ..core.errors import ParameterError, SimulationError
from ..identification.search_checks import values_text
from ..study import batch, diagram_target
from ..study.designs import parse_bounds
from ..study.metrics import make_metrics

#: the minimizers of a diagram target, by their scipy names (keys in lower case)
MINIMIZERS = {m.lower(): m for m in ("Nelder-Mead", "Powell", "COBYLA", "L-BFGS-B", "SLSQP")}
#: those that take the constraints
CONSTRAINED = ("COBYLA", "SLSQP")
#: those that need a gradient (forward differences)
GRADIENT = ("L-BFGS-B", "SLSQP")
#: forward-difference step in the scaled parameters u
FD_STEP = 1e-6


def choose(minimizer, constrained: bool) -> str:
    """The minimizer's scipy name (default: Nelder-Mead, COBYLA with constraints)."""
    if minimizer is None:
        return "COBYLA" if constrained else "Nelder-Mead"
    name = MINIMIZERS.get(str(minimizer).lower()) if isinstance(minimizer, str) else None
    if name is None:
        raise ParameterError(f"optimize: minimizer {minimizer!r} is not one of "
                             f"{', '.join(MINIMIZERS.values())} (the integration method is method=)")
    if constrained and name not in CONSTRAINED:
        raise ParameterError(f"optimize: minimizer {name!r} takes no constraints; use 'COBYLA' or 'SLSQP'")
    return name


class DiagramRuns:
    """One evaluation = one run of the target's diagram: its metrics' values and verdict."""

    def __init__(self, target, names: list, fixed: dict, t_end, metrics: dict, linearize, options: dict):
        self.target = batch.make_target(target, in_process=True)
        self.loaded = self.target.load()
        self.names = names
        fixed = dict(fixed or {})
        if self.target.kind == "factory":
            diagram_target.check_factory(self.loaded, names, fixed, "optimize")
            probe = None
        else:
            diagram_target.check_ssp_names(names, self.loaded, "optimized parameter", "optimize")
            diagram_target.check_ssp_names(fixed, self.loaded, "constants= name", "optimize")
            fixed = {k: finite_number(v, f"optimize constants {k!r}") for k, v in fixed.items()}
            probe = self.loaded
        both = [n for n in fixed if n in names]
        if both:
            raise ParameterError(f"optimize: {', '.join(map(repr, both))} given both as an optimized "
                                 "parameter and in constants=")
        self.fixed = fixed
        self.metrics = make_metrics(metrics)
        self.t_end = t_end
        self.linearize = linearize
        self.options = options
        self.probe = probe
        self.settings = None

    def prepare(self, p0) -> dict:
        """Check the settings on the diagram at the start point; the definition entries."""
        if self.probe is None:
            self.probe = diagram_target.make_diagram(self.loaded, self.values(p0))
        self.settings, entries = diagram_target.run_settings(self.probe, self.t_end, dict(self.options),
                                                             self.linearize, self.metrics, False, "optimize")
        kind = self.target.kind
        own = self.target.local if kind == "factory" else self.target.path
        return {**diagram_target.identity(kind, own, self.probe if kind == "factory" else None), **entries}

    def values(self, p) -> dict:
        return {**self.fixed, **{n: float(v) for n, v in zip(self.names, p)}}

    def defaults(self) -> dict:
        """The factory's default values of the optimized parameters (the start where in range)."""
        if self.target.kind != "factory":
            return {}
        params = inspect.signature(self.loaded).parameters
        return {n: params[n].default for n in self.names if n in params
                and isinstance(params[n].default, (int, float)) and not isinstance(params[n].default, bool)}

    def run(self, p) -> tuple[np.ndarray, str]:
        """(the metrics' values, the row's status) of the run at p; a failed run raises."""
        row = batch.run_one(self.target, self.loaded, 0, self.values(p), self.settings, self.metrics)
        if row["status"] == "failed":
            raise SimulationError(f"optimize: the run with {values_text(self.names, p)} failed: "
                                  f"{row['message']}")
        return np.array([float(row[m.name]) for m in self.metrics]), row["status"]

    def label(self) -> str:
        return self.target.label


def start_point(runs: DiagramRuns, names, lower, upper, start) -> np.ndarray:
    """``start``'s values, else the factory's defaults within the range, else the middle."""
    if start is not None and not isinstance(start, dict):
        raise ParameterError(f"optimize start must be a dict {{name: value}}, got {start!r}")
    start = dict(start or {})
    unknown = [n for n in start if n not in names]
    if unknown:
        raise ParameterError(f"optimize start names {', '.join(map(repr, unknown))}, not an optimized "
                             f"parameter ({', '.join(names)})")
    defaults = runs.defaults()
    x0 = []
    for n, lo, hi in zip(names, lower, upper):
        if n in start:
            v = finite_number(start[n], f"optimize start of {n!r}")
            if not lo <= v <= hi:
                raise ParameterError(f"optimize start of {n!r}: {v:g} is outside its range [{lo:g}, {hi:g}]")
        else:
            v = float(defaults[n]) if n in defaults and lo <= defaults[n] <= hi else 0.5 * (lo + hi)
        x0.append(v)
    return np.array(x0)


def bounds(params) -> tuple[list, np.ndarray, np.ndarray]:
    if not isinstance(params, dict) or not params:
        raise ParameterError("optimize: give at least one parameter to optimize with its range "
                             "{name: (low, high)}")
    return parse_bounds(params)


def solve(problem, u0, algorithm: str, ftol: float, xtol: float):
    """scipy's minimize of the scaled problem with a derivative-free minimizer or forward
    differences (module docstring)."""
    n = len(u0)
    box = [(0.0, 1.0)] * n

    def objective(u):
        return problem.scaled_value(u, 0)

    cons = [{"type": "eq" if c[1] == "==" else "ineq", "fun": lambda u, i=i: problem.scaled_value(u, i)}
            for i, c in enumerate(problem.bounds_of.values(), start=1)]
    if algorithm == "Nelder-Mead":
        return scipy_minimize(objective, u0, method=algorithm, bounds=box,
                              options=dict(xatol=xtol, fatol=ftol, maxiter=10**6, maxfev=10**6))
    if algorithm == "Powell":
        return scipy_minimize(objective, u0, method=algorithm, bounds=box,
                              options=dict(xtol=xtol, ftol=ftol, maxiter=10**6, maxfev=10**6))
    if algorithm == "COBYLA":
        return scipy_minimize(objective, u0, method=algorithm, bounds=box, constraints=cons,
                              options=dict(rhobeg=0.25, tol=xtol, maxiter=10**6))
    opts = dict(ftol=ftol, maxiter=10**6)
    if algorithm == "L-BFGS-B":
        opts.update(maxfun=10**6, eps=FD_STEP)
        return scipy_minimize(objective, u0, method=algorithm, bounds=box, options=opts)
    return scipy_minimize(objective, u0, method=algorithm, bounds=box, constraints=cons,
                          options={**opts, "eps": FD_STEP})


#: the statuses of a run whose metrics do not measure the loop (a row 'unstable', from the
#: linearized loop, keeps its values: minimizing the largest real part starts there)
UNUSABLE = ("not settled", "diverged")


def evaluation(runs: DiagramRuns, p, sign: float) -> dict:
    """The record of a run at p: a run that diverged or did not settle as +inf for the
    objective (sense included) and nan for the constraints."""
    started = time.perf_counter()
    values, status = runs.run(p)
    if status in UNUSABLE or not math.isfinite(values[0]):
        values = np.array([sign * math.inf, *([math.nan] * (len(values) - 1))])
    return {"parameters": np.asarray(p, dtype=float).copy(), "values": values,
            "gradient": np.full((len(values), len(p)), np.nan), "gradient_norm": math.nan,
            "seconds": time.perf_counter() - started, "resumed": False, "status": status}
