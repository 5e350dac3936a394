"""``mbsfmu.optimize``: a metric of a run minimized (or maximized) over bounded constants and
initial values, with constraints on other metrics, by scipy.optimize with the exact gradients of
:func:`~mbsfmu.sensitivity.gradient.gradient` (seed 002 §4, deterministic optimization).

The problem, for parameters p in the box lo <= p <= hi and metrics f, c_i of a run to t_end
(``final(S)``, ``integral(S)``, ``mean(S)``, :mod:`.metrics`):

    minimize f(p)  (or maximize: minimize -f)   subject to   c_i(p) <= v_i,  >= v_i  or  == v_i

**Scaling.**  The minimizer works in u = (p - lo) / (hi - lo) in [0, 1]^n, so that parameters of
different units weigh alike (df/du_j = df/dp_j (hi_j - lo_j)); the objective is divided by
|f(p0)| and each constraint c_i - v_i by max(|v_i|, |c_i(p0)|) (1 where these are zero), p0 the
start, so that the tolerances are relative.

**Minimizer.**  Without constraints, L-BFGS-B: a quasi-Newton method that keeps the bounds
itself (projected gradient), needs only f and its gradient and converges superlinearly on the
smooth metrics of a run.  With constraints, SLSQP: sequential quadratic programming with a BFGS
Hessian of the Lagrangian, which takes equality and inequality constraints with their exact
Jacobians and the bounds, and asks for objective and constraints at the same points.
trust-constr is not used: its interior-point iterations take many more evaluations, and each
evaluation here is a run.

**One run per point.**  Each new parameter vector is one call of ``gradient()`` that computes
the objective, every constraint and all their gradients at once (by the direct or the adjoint
method, ``mode``); the result is kept by the vector's bits, so scipy's separate calls of the
objective, its gradient and the constraints at one point cost one run.

**History and resume.**  Every evaluation is a row of the result's ``history`` and, with
``history=FILE``, a record of that file, written as it is made (:mod:`.optimization_history`).
The minimizers are deterministic and the file keeps the values bit for bit, so a rerun with the
same file asks for the same points; those found in the file are taken from it (no run), and the
optimization continues where it stopped.  ``max_evaluations`` counts every evaluation, those
taken from the file included: a run stopped by it continues with a larger one.
"""

from __future__ import annotations

import math
import re
import sys
import time

import numpy as np
import pandas as pd
from scipy.optimize import minimize as scipy_minimize

from ..core.checks import finite_number
from ..core.errors import ParameterError, SimulationError
from ..identification.search_checks import count, fixed_values, ranges, split_values, start_point, values_text
from ..model.loader import system_of
from ..study import definition
from ..study.batch import is_diagram
from . import diagram_optimization as diagrams
from .gradient import choose_mode, gradient
from .metrics import parse_metrics
from .optimization_history import HistoryFile, check_resume
from .optimization_result import OptimizationResult

#: the relations of a constraint
RELATIONS = ("<=", ">=", "==")
#: gradient()'s keywords that pass through optimize's ``**options``
PASSED_ON = ("atol", "inputs", "formulation_options", "fixed", "max_step")
#: the name of the objective among the metrics (a constraint may not take it)
OBJECTIVE = "objective"
#: largest scaled violation of a constraint that counts as satisfied
FEASIBLE = 1e-6
_CONSTRAINT = re.compile(r"^(.*?)\s*(<=|>=|==)\s*([^<>=]+)$")


def optimize(
    model,
    minimize: str | None = None,
    maximize: str | None = None,
    params: dict | None = None,
    t_end: float | None = None,
    constraints: dict | None = None,
    start: dict | None = None,
    constants: dict | None = None,
    initial: dict | None = None,
    mode: str = "auto",
    method: str | None = None,
    rtol: float = 1e-8,
    formulation: str | None = None,
    history=None,
    resume: str = "check",
    max_evaluations: int = 200,
    progress=False,
    ftol: float = 1e-14,
    gtol: float = 1e-8,
    minimizer: str | None = None,
    xtol: float = 1e-8,
    linearize: dict | None = None,
    **options,
) -> OptimizationResult:
    """Minimize the metric ``minimize`` (or maximize ``maximize``; a metric 'final(S)',
    'integral(S)' or 'mean(S)' of a run to ``t_end``) over ``params`` ({name: (low, high)} or
    'LOW:HIGH'; constants, initial values x and der(x), named initial conditions) subject to
    ``constraints`` ({name: ('integral(S)', '<=', value)} or 'integral(S) <= value'; relations
    <=, >= and ==), with exact gradients (module docstring).

    ``start``: {name: value} within the bounds (default: the model's value where it lies within
    the range, else the middle).  ``constants`` and ``initial`` fix other values of every run;
    ``mode`` ('auto', 'forward', 'adjoint') is gradient()'s, ``method``, ``rtol``,
    ``formulation`` and ``**options`` (atol, inputs, formulation_options, fixed, max_step) the
    runs' (simulate's).  ``history``: a .csv or .jsonl file that every evaluation is appended to
    and that a rerun resumes from (``resume='restart'`` moves one of another optimization aside
    instead of refusing it).  ``max_evaluations``: the most evaluations (runs plus those taken
    from the history).  ``progress``: True for a line per evaluation on stderr, or a function
    called with each evaluation's row.  ``ftol``, ``gtol``: the minimizer's tolerances on the
    scaled objective's change and (L-BFGS-B) the largest component of its projected gradient.

    Every argument is checked before any run (a ParameterError naming it); a failed run is a
    SimulationError naming the parameter values it ran with (the evaluations before it are in
    the history file).

    ``model`` may also be a block diagram (:mod:`.diagram_optimization`): a function of the
    parameters that returns a Diagram, or an SSP file (``block.parameter`` names); the
    objective and constraints are then a sweep's metrics of its run to ``t_end`` (or of its
    linearized loop, ``linearize=``), ``constants=`` its fixed values, ``**options`` Diagram.run's,
    and ``minimizer`` 'Nelder-Mead' (default), 'Powell', 'COBYLA' (default with constraints),
    or 'L-BFGS-B' / 'SLSQP' with forward differences; ``xtol``: the derivative-free minimizers'
    tolerance on the parameters scaled to [0, 1].  For a model, ``minimizer`` may only name
    the gradient minimizer it uses (L-BFGS-B, or SLSQP with constraints)."""
    clock = time.perf_counter()
    if is_diagram(model):  # a function that returns a Diagram, or an SSP file
        given = [k for k, v in (("method", method), ("initial", initial), ("formulation", formulation),
                                ("mode", None if mode == "auto" else mode)) if v is not None]
        if given:
            raise ParameterError(f"optimize: {given[0]}= is of a model's runs; a diagram target's "
                                 "minimizer is minimizer=, its fixed values constants=")
        return _optimize_diagram(model, minimize, maximize, params, t_end, constraints, start, constants,
                                 history, resume, max_evaluations, progress, ftol, xtol, minimizer, linearize,
                                 options, clock)
    if linearize is not None:
        raise ParameterError("optimize: linearize= is for a diagram target (a function that returns a "
                             "Diagram, or an SSP file)")
    system = system_of(model)
    sense, objective = _objective(minimize, maximize)
    names, lower, upper = ranges(system, params, "optimize", "optimize")
    t_end = _t_end(t_end)
    bounds_of = parse_constraints(constraints)
    metrics = parse_metrics(system, {OBJECTIVE: objective, **{n: c[0] for n, c in bounds_of.items()}})
    x0 = start_point(system, names, lower, upper, start, "optimize", "optimized parameter")
    fixed_constants, fixed_initial = fixed_values(
        system, names, constants, initial, "optimize", "optimized parameter"
    )
    _check_options(options)
    max_evaluations = count("optimize max_evaluations", max_evaluations)
    ftol = _positive(ftol, "ftol")
    gtol = _positive(gtol, "gtol")
    check_resume(resume)
    if not (isinstance(progress, bool) or callable(progress)):
        raise ParameterError(f"optimize progress must be True, False or a function, got {progress!r}")
    mode = choose_mode(mode, len(names), len(metrics))
    algorithm = "SLSQP" if bounds_of else "L-BFGS-B"
    if minimizer is not None and minimizer != algorithm:
        raise ParameterError(f"optimize: minimizer {minimizer!r}: a model's runs give exact gradients, "
                             f"minimized by {algorithm}" + (" (with constraints)" if bounds_of else "")
                             + "; the derivative-free minimizers are for a diagram target")
    run = dict(mode=mode, method=method, rtol=rtol, formulation=formulation, **options)
    entries = definition.normalized(
        {
            "model": f"{type(system).__name__} {system.name!r} sha256 {definition.digest(system)}",
            "objective": f"{sense} {objective}",
            **{f"constraint {n}": " ".join(map(str, c)) for n, c in bounds_of.items()},
            "parameters": names,
            "bounds": {n: [float(a), float(b)] for n, a, b in zip(names, lower, upper)},
            "start": dict(zip(names, map(float, x0))),
            "t_end": t_end,
            "constants": definition.describe(fixed_constants),
            "initial": definition.describe(fixed_initial),
            **{k: definition.describe(v) for k, v in run.items()},
            "minimizer": algorithm,
            "ftol": ftol,
            "gtol": gtol,
        }
    )
    file = None
    if history is not None:
        file = HistoryFile(history, names, [m.name for m in metrics], entries, resume)
    problem = _Problem(
        system,
        metrics,
        names,
        lower,
        upper,
        t_end,
        run,
        fixed_constants,
        fixed_initial,
        file,
        max_evaluations,
        progress,
        sense,
        bounds_of,
    )
    return _solved(problem, x0, upper, (algorithm, ftol, gtol), file, system.name, sense, objective, mode,
                   clock)


def _solved(problem, x0, upper, how: tuple, file, label: str, sense: str, objective: str, mode: str,
            clock: float) -> OptimizationResult:
    """Solve ``problem`` from ``x0`` (``upper``: the parameters' upper bounds; ``how``: the
    minimizer and its two tolerances), the history file closed at the end whatever happens, and
    the result."""
    try:
        sol, stopped = problem.solve(x0, *how)
    finally:
        if file is not None:
            file.close()
    best = problem.record_of(sol) if sol is not None else problem.best()
    bounds_of = problem.bounds_of
    return OptimizationResult(
        model=label,
        sense=sense,
        objective=objective,
        names=problem.names,
        lower=problem.lower,
        upper=upper,
        start=x0,
        optimum=best["parameters"].copy(),
        value=float(best["values"][0]),
        constraints={n: (float(best["values"][1 + i]), *c[1:]) for i, (n, c) in enumerate(bounds_of.items())},
        constraint_specs={n: c[0] for n, c in bounds_of.items()},
        gradient=best["gradient"].copy(),
        success=bool(sol is not None and sol.success),
        message=stopped or str(sol.message),
        algorithm=how[0],
        mode=mode,
        evaluations=len(problem.records),
        runs=problem.runs,
        taken=problem.taken,
        iterations=int(getattr(sol, "nit", 0) or 0) if sol is not None else 0,
        history=problem.history_frame(),
        seconds=time.perf_counter() - clock,
        history_file=None if file is None else str(file.path),
        moved=[(str(a), str(b)) for a, b in (file.moved if file is not None else [])],
        dropped=list(file.problems) if file is not None else [],
    )


def _optimize_diagram(target, minimize, maximize, params, t_end, constraints, start, constants, history,
                      resume, max_evaluations, progress, ftol, xtol, minimizer, linearize, options,
                      clock) -> OptimizationResult:
    """optimize() of a diagram target (:mod:`.diagram_optimization`)."""
    sense, objective = _objective(minimize, maximize)
    names, lower, upper = diagrams.bounds(params)
    bounds_of = parse_constraints(constraints)
    algorithm = diagrams.choose(minimizer, bool(bounds_of))
    if constants is not None and not isinstance(constants, dict):
        raise ParameterError(f"optimize constants must be a dict {{name: value}}, got {constants!r}")
    runs = diagrams.DiagramRuns(target, names, constants, t_end,
                                {OBJECTIVE: objective, **{n: c[0] for n, c in bounds_of.items()}}, linearize,
                                options)
    x0 = diagrams.start_point(runs, names, lower, upper, start)
    max_evaluations = count("optimize max_evaluations", max_evaluations)
    ftol, xtol = _positive(ftol, "ftol"), _positive(xtol, "xtol")
    check_resume(resume)
    if not (isinstance(progress, bool) or callable(progress)):
        raise ParameterError(f"optimize progress must be True, False or a function, got {progress!r}")
    entries = definition.normalized({
        **runs.prepare(x0),
        "objective": f"{sense} {objective}",
        **{f"constraint {n}": " ".join(map(str, c)) for n, c in bounds_of.items()},
        "parameters": names,
        "bounds": {n: [float(a), float(b)] for n, a, b in zip(names, lower, upper)},
        "start": dict(zip(names, map(float, x0))),
        "constants": definition.describe(runs.fixed),
        "minimizer": algorithm, "ftol": ftol, "xtol": xtol,
    })
    file = HistoryFile(history, names, [m.name for m in runs.metrics], entries, resume) if history else None
    problem = _DiagramProblem(runs, names, lower, upper, file, max_evaluations, progress, sense, bounds_of)
    mode = "finite differences" if algorithm in diagrams.GRADIENT else "none"
    return _solved(problem, x0, upper, (algorithm, ftol, xtol), file, runs.label(), sense, objective, mode,
                   clock)


def parse_constraints(constraints) -> dict[str, tuple[str, str, float]]:
    """``{name: (metric, relation, value)}`` from ``{name: (metric, relation, value)}`` or
    ``{name: 'metric <= value'}``; a ParameterError naming the constraint otherwise."""
    if constraints is None:
        return {}
    if not isinstance(constraints, dict):
        raise ParameterError(
            "optimize constraints must be a dict {name: ('integral(S)', '<=', value)} or "
            f"{{name: 'integral(S) <= value'}}, got {constraints!r:.80}"
        )
    out = {}
    for name, spec in constraints.items():
        where = f"optimize constraint {name!r}"
        if not isinstance(name, str) or not name.strip():
            raise ParameterError(f"{where}: the name must be a non-empty string")
        if name == OBJECTIVE:
            raise ParameterError(f"{where}: {OBJECTIVE!r} names the objective; call the constraint otherwise")
        if isinstance(spec, str):
            m = _CONSTRAINT.match(spec.strip())
            if m is None:
                raise ParameterError(
                    f"{where}: {spec!r} is not 'METRIC <= VALUE' (or >=, ==), e.g. 'integral(energy) <= 0.5'"
                )
            spec = m.groups()
        if not isinstance(spec, (tuple, list)) or len(spec) != 3:
            raise ParameterError(
                f"{where}: {spec!r} is not (metric, relation, value), e.g. ('final(x)', '>=', 0.1)"
            )
        metric, relation, value = spec
        if relation not in RELATIONS:
            raise ParameterError(f"{where}: relation {relation!r} is not one of {', '.join(RELATIONS)}")
        if not isinstance(metric, str):
            raise ParameterError(f"{where}: the metric {metric!r} is not a text such as 'final(x)'")
        out[name] = (metric.strip(), relation, finite_number(value, f"{where}: the value"))
    return out


def _objective(minimize, maximize) -> tuple[str, str]:
    if (minimize is None) == (maximize is None):
        raise ParameterError(
            "optimize: give exactly one of minimize= and maximize= (a metric such as "
            "'final(x)' or 'integral(energy)')" + (", not both" if minimize is not None else "")
        )
    sense, spec = ("minimize", minimize) if minimize is not None else ("maximize", maximize)
    if isinstance(spec, dict):
        raise ParameterError(
            f"optimize {sense}: one metric, not a dict ({spec!r:.60}); write {sense}='final(x)'"
        )
    return sense, spec


def _t_end(t_end) -> float:
    if (
        isinstance(t_end, bool)
        or not isinstance(t_end, (int, float, np.integer, np.floating))
        or not (math.isfinite(t_end) and t_end > 0)
    ):
        raise ParameterError(f"optimize t_end must be a positive number, got {t_end!r}")
    return float(t_end)


def _positive(v, name: str) -> float:
    v = finite_number(v, f"optimize {name}")
    if not v > 0:
        raise ParameterError(f"optimize {name} must be a positive number, got {v!r}")
    return v


def _check_options(options: dict) -> None:
    unknown = [k for k in options if k not in PASSED_ON]
    if unknown:
        owned = {
            "params": "the optimized constants are params=; fix others with constants=",
            "wrt": "the optimized parameters are params=",
            "metrics": "give minimize= and constraints=",
            "progress": "progress= is optimize's own",
        }
        why = owned.get(unknown[0], f"the keywords that pass through to the runs: {', '.join(PASSED_ON)}")
        raise ParameterError(f"optimize: unknown keyword {unknown[0]!r} ({why})")


class _Budget(Exception):
    """max_evaluations reached (caught by :meth:`_Problem.solve`)."""


class _Problem:
    """The scaled problem of the module docstring as functions of u, one ``gradient()`` per new
    parameter vector (or a record of the history file), and the evaluations made."""

    def __init__(
        self,
        system,
        metrics,
        names,
        lower,
        upper,
        t_end,
        run,
        constants,
        initial,
        file,
        max_evaluations,
        progress,
        sense,
        bounds_of,
    ):
        self.system, self.metrics, self.names = system, metrics, names
        self.lower, self.span = lower, upper - lower
        self.t_end, self.run, self.constants, self.initial = t_end, run, constants, initial
        self.file, self.max_evaluations, self.progress = file, max_evaluations, progress
        self.sign = 1.0 if sense == "minimize" else -1.0
        self.bounds_of = bounds_of
        self.stored = {r["parameters"].tobytes(): r for r in (file.records if file is not None else [])}
        self.seen: dict = {}
        self.records: list[dict] = []
        self.runs = self.taken = 0
        self.scales = None

    # ---------------------------------------------------------------- evaluations
    def p_of(self, u) -> np.ndarray:
        return self.lower + np.asarray(u, dtype=float) * self.span

    def evaluate(self, p) -> dict:
        """The record of the point p: kept, from the history file, or from a run."""
        p = np.ascontiguousarray(p, dtype=float)
        key = p.tobytes()
        if key in self.seen:
            return self.seen[key]
        if len(self.records) >= self.max_evaluations:
            raise _Budget
        record = self.stored.get(key)
        if record is not None:
            record = dict(record, resumed=True)
            self.taken += 1
        else:
            record = self._run(p)
            self.runs += 1
        record["evaluation"] = len(self.records)
        if not record["resumed"] and self.file is not None:
            self.file.append(record)
        self.records.append(record)
        self.seen[key] = record
        self._report(record)
        return record

    def _run(self, p) -> dict:
        params, initial = split_values(self.system, self.names, p, self.constants, self.initial)
        started = time.perf_counter()
        try:
            g = gradient(
                self.system,
                {m.name: f"{m.kind}({m.signal})" for m in self.metrics},
                self.names,
                self.t_end,
                params=params,
                initial=initial,
                **self.run,
            )
        except SimulationError as exc:
            raise SimulationError(
                f"optimize: the run with {values_text(self.names, p)} failed (evaluation "
                f"{len(self.records) + 1}): {exc}"
            ) from exc
        grad = g.gradient.loc[[m.name for m in self.metrics], self.names].to_numpy(dtype=float)
        return {
            "parameters": p.copy(),
            "values": np.array([g.values[m.name] for m in self.metrics]),
            "gradient": grad,
            "gradient_norm": float(np.linalg.norm(grad[0] * self.span)),
            "seconds": time.perf_counter() - started,
            "resumed": False,
        }

    def _report(self, r: dict) -> None:
        if self.progress is False:
            return
        row = self._row(r)
        if callable(self.progress):
            self.progress(row)
            return
        cons = "".join(f", {n} = {v:.8g}" for n, v in zip(self.bounds_of, r["values"][1:]))
        print(
            f"evaluation {r['evaluation'] + 1}: {values_text(self.names, r['parameters'])} -> objective "
            f"{r['values'][0]:.10g}{cons}, |grad| = {r['gradient_norm']:.3g}, "
            + ("from the history" if r["resumed"] else f"{r['seconds']:.3f} s"),
            file=sys.stderr,
            flush=True,
        )

    def _row(self, r: dict) -> dict:
        return {
            "evaluation": r["evaluation"],
            **dict(zip(self.names, map(float, r["parameters"]))),
            "objective": float(r["values"][0]),
            **dict(zip(self.bounds_of, map(float, r["values"][1:]))),
            "gradient_norm": r["gradient_norm"],
            "seconds": r["seconds"],
            "resumed": r["resumed"],
        }

    def history_frame(self) -> pd.DataFrame:
        columns = [
            "evaluation",
            *self.names,
            "objective",
            *self.bounds_of,
            "gradient_norm",
            "seconds",
            "resumed",
        ]
        return pd.DataFrame([self._row(r) for r in self.records], columns=columns)

    # ---------------------------------------------------------------- the scaled problem
    def _scaled(self, u, i: int) -> tuple[float, np.ndarray]:
        """Value and gradient by u of the scaled function i (0: the objective, 1.. the
        constraints as g(u) >= 0 or == 0)."""
        r = self.evaluate(self.p_of(u))
        if i == 0:
            s = self.sign / self.scales[0]
            return s * r["values"][0], s * r["gradient"][0] * self.span
        _, relation, value = list(self.bounds_of.values())[i - 1]
        s = (-1.0 if relation == "<=" else 1.0) / self.scales[i]
        return s * (r["values"][i] - value), s * r["gradient"][i] * self.span

    def violation(self, r: dict) -> float:
        """The largest scaled violation of a constraint at the record r."""
        worst = 0.0
        for i, (_, relation, value) in enumerate(self.bounds_of.values(), start=1):
            d = (r["values"][i] - value) / self.scales[i]
            worst = max(worst, {"<=": d, ">=": -d, "==": abs(d)}[relation])
        return worst

    def solve(self, p0, algorithm: str, ftol: float, gtol: float):
        """(scipy's result, None), or (None, why) when max_evaluations stopped it."""
        try:
            u0 = (p0 - self.lower) / self.span
            first = self.evaluate(self.p_of(u0))  # the bits the minimizer asks for
            f0 = abs(first["values"][0])
            self.scales = [f0 if f0 > 0 else 1.0]
            for i, (_, _, value) in enumerate(self.bounds_of.values(), start=1):
                s = max(abs(value), abs(first["values"][i]))
                self.scales.append(s if s > 0 else 1.0)
            box = [(0.0, 1.0)] * len(u0)
            if algorithm == "L-BFGS-B":
                sol = scipy_minimize(
                    lambda u: self._scaled(u, 0),
                    u0,
                    jac=True,
                    method="L-BFGS-B",
                    bounds=box,
                    options=dict(ftol=ftol, gtol=gtol, maxiter=10**6, maxfun=10**6),
                )
            else:
                cons = [
                    {
                        "type": "eq" if c[1] == "==" else "ineq",
                        "fun": lambda u, i=i: self._scaled(u, i)[0],
                        "jac": lambda u, i=i: self._scaled(u, i)[1],
                    }
                    for i, c in enumerate(self.bounds_of.values(), start=1)
                ]
                sol = scipy_minimize(
                    lambda u: self._scaled(u, 0)[0],
                    u0,
                    jac=lambda u: self._scaled(u, 0)[1],
                    method="SLSQP",
                    bounds=box,
                    constraints=cons,
                    options=dict(ftol=ftol, maxiter=10**6),
                )
            return sol, None
        except _Budget:
            return None, (
                f"stopped after max_evaluations = {self.max_evaluations} evaluations (rerun with the "
                "same history file and a larger max_evaluations to continue)"
            )

    def record_of(self, sol) -> dict:
        """The record at scipy's answer (kept; evaluated if scipy ended on a point it did not
        ask for, the best one where the budget forbids that)."""
        try:
            return self.evaluate(self.p_of(np.clip(sol.x, 0.0, 1.0)))
        except _Budget:
            return self.best()

    def best(self) -> dict:
        """The evaluation with the lowest objective among those that meet the constraints (the
        least violating one where none does)."""
        feasible = [r for r in self.records if self.violation(r) <= FEASIBLE]
        if feasible:
            return min(feasible, key=lambda r: self.sign * r["values"][0])
        return min(self.records, key=self.violation)


class _DiagramProblem(_Problem):
    """The scaled problem of a diagram target: values only, one run per new point
    (:mod:`.diagram_optimization`); a run that diverged or did not settle is +inf."""

    #: the scaled value that stands for +inf (the minimizers take finite numbers)
    HUGE = 1e30

    def __init__(self, runs, names, lower, upper, file, max_evaluations, progress, sense, bounds_of):
        super().__init__(None, runs.metrics, names, lower, upper, runs.t_end, {}, {}, {}, file,
                         max_evaluations, progress, sense, bounds_of)
        self.diagram_runs = runs

    def _run(self, p) -> dict:
        return diagrams.evaluation(self.diagram_runs, p, self.sign)

    def scaled_value(self, u, i: int) -> float:
        """The scaled function i at u (0: the objective; 1..: the constraints as g >= 0 or == 0)."""
        r = self.evaluate(self.p_of(np.clip(u, 0.0, 1.0)))
        v = r["values"][i]
        if i == 0:
            return self.sign * v / self.scales[0] if math.isfinite(v) else self.HUGE
        if not math.isfinite(v):
            return -self.HUGE
        _, relation, value = list(self.bounds_of.values())[i - 1]
        return (-1.0 if relation == "<=" else 1.0) * (v - value) / self.scales[i]

    def solve(self, p0, algorithm: str, ftol: float, xtol: float):
        try:
            u0 = (p0 - self.lower) / self.span
            first = self.evaluate(self.p_of(u0))
            f0 = abs(first["values"][0])
            self.scales = [f0 if 0 < f0 < math.inf else 1.0]
            for i, (_, _, value) in enumerate(self.bounds_of.values(), start=1):
                s = max(abs(value), abs(first["values"][i]) if math.isfinite(first["values"][i]) else 0.0)
                self.scales.append(s if s > 0 else 1.0)
            return diagrams.solve(self, u0, algorithm, ftol, xtol), None
        except _Budget:
            return None, (
                f"stopped after max_evaluations = {self.max_evaluations} evaluations (rerun with the "
                "same history file and a larger max_evaluations to continue)"
            )
