"""``mbsfmu.fit``: constants and initial values of a model identified from a measurement by
nonlinear least squares, with the Jacobian from the direct method.

The fitted parameters p (constants, initial values of coordinates and rates, named initial
conditions: whatever ``simulate(..., sensitivities=...)`` takes) minimize

    S(p) = sum_s w_s sum_i (y_s(t_i; p) - d_s,i)^2

over the box lo <= p <= hi, where d_s,i is the measured value of signal s at the data time t_i
and y_s(t_i; p) the model's, from a run on exactly the data times (``simulate(times=...)``), and
w_s the weight of signal s (default 1; w_s = 1 / sigma_s^2 with sigma_s the noise of signal s
makes S a chi-square).  The minimizer is scipy's trust-region reflective method
(``scipy.optimize.least_squares(method='trf')``, which keeps every iterate inside the box) on the
residuals r = sqrt(w_s) (y_s - d_s); each evaluation is one engine run with the forward
sensitivities of the parameters (seed 002 §4), which gives the residuals and their Jacobian
J = sqrt(w_s) dy_s/dp together, to the integrator's tolerance, so the residuals and the
Jacobian of the same p cost one run.  The estimates' standard errors and correlations come
from J at the optimum (:mod:`.fit_statistics`).

Everything is checked before any run (:func:`fit`); the Jacobian at the start is checked for
rank after the first run, so parameters the signals cannot tell apart are named before the
minimizer takes a step.
"""

from __future__ import annotations

import inspect
import time

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from ..core.checks import finite_number
from ..core.errors import IdentifiabilityError, ParameterError, SimulationError
from ..model.loader import system_of
from ..simulation import simulate
from ..simulation.result import signal_values
from .fit_result import FitResult
from .fit_statistics import covariance, singularity
from .measured_data import read_data
from .search_checks import (
    count,
    fixed_values,
    keyed,
    ranges,
    split_values,
    start_point,
    values_text,
)

#: simulate's keywords that fit sets itself (the others pass through **options)
FIT_OWNED = ("t_end", "dt", "times", "sensitivities", "params", "progress", "progress_every")
#: simulate's keywords that pass through fit's ``**options``
PASSED_ON = tuple(
    k
    for k in inspect.signature(simulate).parameters
    if k not in ("model", "rtol", "method", "formulation", "initial", *FIT_OWNED)
)


def fit(
    model,
    data,
    params: dict,
    signals,
    weights: dict | None = None,
    t_end: float | None = None,
    start: dict | None = None,
    constants: dict | None = None,
    initial: dict | None = None,
    rtol: float = 1e-8,
    method: str = "explicit",
    formulation: str | None = None,
    max_evaluations: int = 100,
    xtol: float = 1e-10,
    ftol: float = 1e-10,
    gtol: float = 1e-10,
    **options,
) -> FitResult:
    """Fit the parameters ``params`` ({name: (low, high)}, or 'LOW:HIGH') of ``model`` (a
    System, a LagrangianSystem or a model file) to the measured ``signals`` of ``data`` (a CSV
    file or a pandas DataFrame with a ``time`` column and one column per signal) by nonlinear
    least squares (module docstring).

    ``signals``: coordinates, ``der(coordinate)``, user outputs (expressions, frame kinematics,
    reactions) or constraint multipliers by name.  ``weights``: {signal: w_s > 0} (default 1).
    ``t_end``: the run's end (default: the last data time; no data time may lie after it).
    ``start``: the minimizer's start {name: value} within the bounds (default: the model's
    value where it lies within the bounds, else the middle of the range).  ``constants`` and
    ``initial`` fix other constants and initial values of every run (as ``params`` and
    ``initial`` of :func:`mbsfmu.simulate`); ``rtol``, ``method``, ``formulation`` and
    ``**options`` (atol, max_step, fixed, inputs, formulation_options) are simulate's.
    ``max_evaluations`` bounds the residual evaluations of the minimizer; ``xtol``, ``ftol``,
    ``gtol`` are its stopping tolerances (scipy's).

    Returns a :class:`FitResult` (estimates, standard errors, correlations, residuals, the
    history of every evaluation, a plot).  Every argument is checked before any run (a
    ParameterError naming it); parameters that the signals cannot tell apart are an
    :class:`~mbsfmu.core.errors.IdentifiabilityError` after the first run, naming the
    combination; a failed run is a SimulationError naming the parameter values it ran with."""
    clock = time.perf_counter()
    system = system_of(model)
    names, lower, upper = ranges(system, params, "fit", "fit")
    signals = _signals(system, signals)
    w = _weights(weights, signals)
    measured = read_data(data, signals, t_end)
    n, p = measured.values.size, len(names)
    if n <= p:
        raise ParameterError(
            f"fit: {n} data value(s) for {p} parameter(s); a fit needs more data values than "
            "parameters (n > p) to estimate them and the noise"
        )
    x0 = start_point(system, names, lower, upper, start, "fit", "fitted parameter")
    fixed_constants, fixed_initial = fixed_values(system, names, constants, initial, "fit",
                                                  "fitted parameter")
    _check_options(options)
    count("fit max_evaluations", max_evaluations)
    grid, rows = measured.grid(t_end)
    problem = _Problem(
        system,
        names,
        signals,
        measured,
        rows,
        w,
        dict(times=grid, rtol=rtol, method=method, formulation=formulation, **options),
        fixed_constants,
        fixed_initial,
    )
    _, J0 = problem.evaluate(x0)
    why = singularity(J0, names)
    if why is not None:
        raise IdentifiabilityError(f"fit at the start ({values_text(names, x0)}): {why}")
    sol = least_squares(
        problem.residuals,
        x0,
        jac=problem.jacobian,
        bounds=(lower, upper),
        method="trf",
        x_scale="jac",
        xtol=xtol,
        ftol=ftol,
        gtol=gtol,
        max_nfev=max_evaluations,
    )
    r, J = problem.evaluate(sol.x)
    ssr = float(r @ r)
    why = singularity(J, names)
    cov = s2 = None
    if why is None:
        cov, s2 = covariance(J, ssr, n)
    fitted = problem.model_values(sol.x)
    return FitResult(
        system.name,
        names,
        sol.x.copy(),
        x0,
        lower,
        upper,
        cov,
        s2,
        why,
        ssr,
        n,
        fitted,
        measured,
        w,
        problem.history_frame(),
        problem.runs,
        int(sol.nfev),
        int(sol.njev or 0),
        int(sol.status),
        str(sol.message),
        time.perf_counter() - clock,
        J.copy(),
    )


class _Problem:
    """The residuals and Jacobian of the fit as functions of p, one engine run per new p (the
    last run is kept: the minimizer asks for r and J of the same p), and the history of every
    run."""

    def __init__(self, system, names, signals, measured, rows, weights, run_options, constants, initial):
        self.system, self.names, self.signals = system, names, signals
        self.measured, self.rows, self.run_options = measured, rows, run_options
        self.constants, self.initial = constants, initial
        self.sqrt_w = np.sqrt(weights)
        self.runs, self.history, self._last = 0, [], None

    def _run(self, p):
        p = np.asarray(p, dtype=float)
        if self._last is not None and np.array_equal(self._last[0], p):
            return self._last[1:]
        params, initial = split_values(self.system, self.names, p, self.constants, self.initial)
        started = time.perf_counter()
        try:
            res = simulate(
                self.system, params=params, initial=initial, sensitivities=self.names, **self.run_options
            )
        except SimulationError as exc:
            failure = SimulationError(
                f"fit: the run with {values_text(self.names, p)} failed (evaluation {self.runs + 1}): {exc}"
            )
            failure.result, failure.history = exc.result, self.history_frame()
            raise failure from exc
        self.runs += 1
        k = self.rows
        model = np.column_stack([signal_values(res, s)[k] for s in self.signals])
        jac = np.stack(
            [np.column_stack([res.sensitivity(s, nm)[k] for nm in self.names]) for s in self.signals]
        )
        r = ((model - self.measured.values) * self.sqrt_w).T.ravel()  # signal by signal
        J = (jac * self.sqrt_w[:, None, None]).reshape(-1, len(self.names))
        self.history.append(
            {
                "evaluation": self.runs,
                **dict(zip(self.names, map(float, p))),
                "cost": 0.5 * float(r @ r),
                "seconds": time.perf_counter() - started,
            }
        )
        self._last = (p.copy(), r, J, model)
        return r, J, model

    def evaluate(self, p):
        r, J, _ = self._run(p)
        return r, J

    def residuals(self, p):
        return self._run(p)[0]

    def jacobian(self, p):
        return self._run(p)[1]

    def model_values(self, p):
        return self._run(p)[2]

    def history_frame(self):
        return pd.DataFrame(self.history, columns=["evaluation", *self.names, "cost", "seconds"])


def fittable_signals(system) -> list[str]:
    """The signals a fit takes (those whose sensitivities a run computes)."""
    coords = list(system.coordinates_)
    rows = list(system.constraint_names) if system.constrained else []
    return [*coords, *(f"der({c})" for c in coords), *getattr(system, "outputs", {}), *rows]



def _signals(system, signals) -> list[str]:
    if isinstance(signals, str):
        signals = [signals]
    try:
        signals = list(signals)
    except TypeError:
        raise ParameterError(f"fit signals must be a list of names, got {signals!r}") from None
    if not signals:
        raise ParameterError("fit: give at least one signal to fit (a column of the data)")
    known = fittable_signals(system)
    for s in signals:
        if s not in known:
            raise ParameterError(
                f"fit signal {s!r}: not a signal of {system.name!r} (coordinates, der(coordinate), "
                f"outputs and constraints: {', '.join(known)})"
            )
    dup = sorted({s for s in signals if signals.count(s) > 1})
    if dup:
        raise ParameterError(f"fit signals: {', '.join(map(repr, dup))} given more than once")
    return signals



def _weights(weights, signals) -> np.ndarray:
    weights = keyed(weights, "fit weights", signals, "fitted signal")
    out = np.array([finite_number(weights.get(s, 1.0), f"fit weight of {s!r}") for s in signals])
    for s, v in zip(signals, out):
        if not v > 0:
            raise ParameterError(f"fit weight of {s!r} must be a positive number, got {weights[s]!r}")
    return out






def _check_options(options: dict) -> None:
    owned = [k for k in options if k in FIT_OWNED]
    if owned:
        raise ParameterError(
            f"fit: simulate's keyword {owned[0]!r} is set by the fit itself (the data times make "
            "the output grid; t_end= and constants= are fit's own)"
        )
    unknown = [k for k in options if k not in PASSED_ON]
    if unknown:
        raise ParameterError(
            f"fit: unknown keyword {unknown[0]!r} (simulate's that pass through: {', '.join(PASSED_ON)})"
        )

