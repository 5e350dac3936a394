"""Global sensitivity of a study's metrics over parameter ranges: Sobol' indices and Morris
screening.  The designs and the estimators are SALib's; the runs are a :func:`mbsfmu.sweep`
(Dask, the rows file, resume, failed runs as rows).

Each parameter X_i varies independently and uniformly over its range [lo_i, hi_i]; a metric
Y = f(X_1, ..., X_p) is a number of each run (``'final(x)'``, ``'max(theta)'``, a function of
the result: see :mod:`.metrics`).

**Sobol' indices** apportion the variance V = Var[Y] among the parameters::

    S1_i  = Var[E[Y | X_i]] / V                        first order: the share X_i explains alone
    ST_i  = E[Var[Y | X_~i]] / V                       total: the share X_i has any part in
    S2_ij = Var[E[Y | X_i, X_j]] / V - S1_i - S1_j     the pair's interaction

(X_~i: every parameter but X_i.)  0 <= S1_i <= ST_i <= 1 and sum_i S1_i <= 1; ST_i - S1_i is
X_i's share in interactions; ST_i = 0 means X_i does not matter over these ranges; an additive
f has ST_i = S1_i and sum_i S1_i = 1.  The estimators (``SALib.analyze.sobol``, Saltelli et
al. 2010, ST by Jansen's formula) take two independent n x p matrices A, B of a scrambled Sobol'
sequence and the p matrices A_B^(i), A with its column i from B (Saltelli's scheme,
``SALib.sample.sobol``: these rows are the design)::

    S1_i ~ mean(f(B) (f(A_B^(i)) - f(A))) / V,     ST_i ~ mean((f(A) - f(A_B^(i)))^2) / (2 V)

with V the variance of f over A and B.  Cost: **n (p + 2) runs**, n (2p + 2) with the
second-order indices.  n must be a power of 2 (Sobol' points are balanced only then); the
error falls as 1/sqrt(n).  ``S1_conf`` (``ST_conf``, ``S2_conf``) is the half-width of the
confidence interval at ``conf_level``, z sigma of a bootstrap over the n rows of A and B.

**Morris screening** (elementary effects, ``SALib.sample.morris``, ``SALib.analyze.morris``)
costs **r (p + 1) runs** (r = n trajectories): each trajectory walks a grid of ``levels``
levels of the unit cube, one parameter at a time, by Delta = levels / (2 (levels - 1))::

    EE_i = (f(x + Delta e_i) - f(x)) / Delta       x in the unit cube: the change of Y per
                                                   whole range hi_i - lo_i of X_i
    mu_i = mean(EE_i),   mu*_i = mean(|EE_i|),   sigma_i = std(EE_i)    over the trajectories

mu* (Campolongo et al. 2007) ranks the parameters by influence, mu*_i = 0 when X_i changes
nothing; sigma_i says how much X_i's effect depends on where it and the others are
(nonlinearity, interactions).  For f = sum_i a_i X_i, EE_i = a_i (hi_i - lo_i) exactly and
sigma_i = 0.  ``mu_star_conf`` is a bootstrap over the trajectories.

Both estimators pair each run with the others of its base row or trajectory, so dropping a
failed run would bias every index: rows with a failed run, or a metric that is not a finite
number, are refused with :class:`~mbsfmu.core.errors.StudyError` naming the runs (its ``rows``
hold every row; with ``out`` the same call takes the rows that are done, and
``retry_failed=True`` runs the failed ones again).  A metric with the same value in every run
has no variance to apportion: its Sobol' indices are NaN, with a StudyWarning.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import pandas as pd

from ..core.errors import ParameterError, StudyError, StudyWarning
from ..core.output_files import plot_path
from . import designs, failures
from .parameter_sweep import sweep
from .plots import plot_indices
from .results import STATUS_COLUMNS

#: the fewest base samples of Sobol' indices (a power of 2): fewer give the bootstrap nothing to draw
SOBOL_MIN_N = 8
#: the fewest Morris trajectories: sigma and the bootstrap need two
MORRIS_MIN_N = 2
#: the default seed of the designs and the bootstraps: the same design every call, so that a
#: study with a rows file resumes
DEFAULT_SEED = 0
SOBOL_COLUMNS = ("S1", "S1_conf", "ST", "ST_conf")
MORRIS_COLUMNS = ("mu_star", "mu_star_conf", "mu", "sigma")
SECOND_ORDER_COLUMNS = ("S2", "S2_conf")
#: failed runs a refusal names one by one, at most
MAX_LISTED = 20


class GlobalSensitivity:
    """The indices of a global sensitivity study (module docstring).

    ``indices``: a DataFrame indexed by (metric, parameter) with the columns S1, S1_conf, ST,
    ST_conf (Sobol') or mu_star, mu_star_conf, mu, sigma (Morris); ``second_order``: for Sobol'
    with second-order indices, indexed by (metric, parameter, other) with S2, S2_conf, else
    None; ``rows``: the sweep's rows (one per run); ``ranges``: {parameter: (lo, hi)}; ``n``:
    base samples (Sobol') or trajectories (Morris); ``seed``, ``conf_level``, ``levels``
    (Morris) as given."""

    def __init__(self, method: str, indices: pd.DataFrame, rows: pd.DataFrame, ranges: dict, n: int, seed,
                 conf_level: float, second_order: pd.DataFrame | None = None, levels: int | None = None):
        self.method, self.indices, self.rows, self.ranges = method, indices, rows, ranges
        self.n, self.seed, self.conf_level = n, seed, conf_level
        self.second_order, self.levels = second_order, levels

    @property
    def runs(self) -> int:
        return len(self.rows)

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(self.indices.index.get_level_values("metric")))

    def plot(self, path=None, *, metric=None):
        """A bar chart of the indices with their confidence intervals, one panel per metric (or
        only ``metric``); written to ``path`` if given; returns the matplotlib Figure."""
        if path is not None:
            path = plot_path(path, "plot")
        return plot_indices(self.indices, path, metric=metric, conf_level=self.conf_level)

    def to_dict(self) -> dict:
        """Everything as JSON values (NaN as None): method, n, runs, seed, conf_level, ranges,
        indices (one record per metric and parameter), second_order."""
        out = {"method": self.method, "n": self.n, "runs": self.runs, "seed": self.seed,
               "conf_level": self.conf_level, "ranges": {k: list(v) for k, v in self.ranges.items()},
               "indices": _records(self.indices)}
        if self.levels is not None:
            out["levels"] = self.levels
        if self.second_order is not None:
            out["second_order"] = _records(self.second_order)
        return out

    def __str__(self) -> str:
        what = ("Sobol' indices" if self.method == "sobol" else "Morris elementary effects")
        size = f"n = {self.n} {'trajectories' if self.method == 'morris' else 'base samples'}"
        half = f"*_conf: half-width of the {self.conf_level:.0%} confidence interval"
        table = self.indices.to_string(float_format=lambda v: f"{v:.4g}")
        text = f"{what} over {len(self.ranges)} parameters, {size}, {self.runs} runs ({half})\n{table}"
        if self.second_order is not None:
            text += "\n" + self.second_order.to_string(float_format=lambda v: f"{v:.4g}")
        return text

    def __repr__(self) -> str:
        return (f"<GlobalSensitivity {self.method}: {len(self.metrics)} metric(s) x {len(self.ranges)} "
                f"parameter(s), {self.runs} runs>")


def sobol_indices(target, ranges: dict, *, t_end=None, n: int = 512, metrics=None, second_order: bool = False,
                  seed=DEFAULT_SEED, conf_level: float = 0.95, resamples: int = 100, plot=None,
                  **sweep_options) -> GlobalSensitivity:
    """First-order and total Sobol' indices (with second-order ones if ``second_order``) of every
    metric over ``ranges = {name: (lo, hi) | 'LO:HI'}``: n (p + 2) runs of ``target``, n (2p + 2)
    with ``second_order`` (module docstring).

    ``target``, ``t_end``, ``metrics`` and ``sweep_options`` (out, resume, retry_failed,
    scheduler, workers, batch, progress, dt, rtol, params, initial, method, ...) are
    :func:`mbsfmu.sweep`'s; a name of ``ranges`` is anything a sweep's design may set (a
    constant, an initial value, an input).  ``n``: base samples, a power of 2 >= 8; ``seed``:
    of the Sobol' sequence's scrambling and of the bootstrap (the default gives the same design
    every call, so a study with ``out`` resumes; None: a fresh one); ``conf_level`` and
    ``resamples``: the bootstrap's.  ``plot``: a file for :meth:`GlobalSensitivity.plot`.
    Everything is checked before the first run; rows with a failed run are refused after the
    runs with :class:`~mbsfmu.core.errors.StudyError`."""
    names, lo, hi = designs.parse_bounds(ranges)
    p = len(names)
    if not isinstance(second_order, bool):
        raise ParameterError(f"second_order must be True or False, got {second_order!r}")
    n = _sobol_n(n, p, second_order)
    plot = _settings(seed, conf_level, resamples, plot, sweep_options)
    sample, analyze = _salib("sobol")
    problem = _problem(names, lo, hi)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # n is a power of 2 (checked); nothing else to say
        x = sample(problem, n, calc_second_order=second_order, scramble=True, skip_values=0, seed=seed)
    rows, outputs = _run(target, names, x, t_end, metrics, sweep_options, "Sobol' indices")
    first, second = [], []
    for metric, y in outputs.items():
        if np.ptp(y) == 0:
            warnings.warn(f"metric {metric!r} is {float(y[0])!r} in every run: no variance to apportion, its "
                          "Sobol' indices are NaN", StudyWarning, stacklevel=2)
            first += [(metric, name, *[math.nan] * 4) for name in names]
            second += [(metric, a, b, math.nan, math.nan) for i, a in enumerate(names) for b in names[i + 1:]]
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            si = analyze(problem, y, calc_second_order=second_order, num_resamples=resamples,
                         conf_level=conf_level, seed=_bootstrap_rng(seed))
        first += [(metric, name, *(float(si[c][i]) for c in SOBOL_COLUMNS)) for i, name in enumerate(names)]
        if second_order:
            second += [(metric, a, names[j], float(si["S2"][i, j]), float(si["S2_conf"][i, j]))
                       for i, a in enumerate(names) for j in range(i + 1, p)]
    indices = _frame(first, ["metric", "parameter"], SOBOL_COLUMNS)
    pairs = _frame(second, ["metric", "parameter", "other"], SECOND_ORDER_COLUMNS) if second_order else None
    result = GlobalSensitivity("sobol", indices, rows, dict(zip(names, zip(lo.tolist(), hi.tolist()))), n,
                               seed, conf_level, second_order=pairs)
    if plot is not None:
        result.plot(plot)
    return result


def morris_screening(target, ranges: dict, *, t_end=None, n: int = 20, levels: int = 4, metrics=None,
                     seed=DEFAULT_SEED, conf_level: float = 0.95, resamples: int = 100, plot=None,
                     **sweep_options) -> GlobalSensitivity:
    """Morris elementary effects (mu*, mu, sigma) of every metric over ``ranges = {name: (lo,
    hi) | 'LO:HI'}``: ``n`` trajectories on a grid of ``levels`` levels (even, >= 2), n (p + 1)
    runs of ``target`` (module docstring).  The other arguments are those of
    :func:`sobol_indices`."""
    names, lo, hi = designs.parse_bounds(ranges)
    p = len(names)
    n = _whole("n", n, MORRIS_MIN_N, "trajectories; sigma and the confidence interval need two, 10 to 50 "
                                     "are usual")
    _check_runs(n, p + 1, "n (p + 1)")
    levels = _whole("levels", levels, 2, "grid levels")
    if levels % 2:
        raise ParameterError(f"levels = {levels} is odd: with Delta = levels / (2 (levels - 1)) an odd grid "
                             f"reaches its levels unequally often (a biased sample); use {levels - 1} or "
                             f"{levels + 1}")
    plot = _settings(seed, conf_level, resamples, plot, sweep_options)
    sample, analyze = _salib("morris")
    problem = _problem(names, lo, hi)
    x = sample(problem, n, num_levels=levels, seed=seed)
    rows, outputs = _run(target, names, x, t_end, metrics, sweep_options, "Morris elementary effects")
    records = []
    for metric, y in outputs.items():
        ee = analyze(problem, x, y, num_resamples=resamples, conf_level=conf_level, num_levels=levels,
                     seed=_bootstrap_rng(seed))
        records += [(metric, name, *(float(np.asarray(ee[c], dtype=float)[i]) for c in MORRIS_COLUMNS))
                    for i, name in enumerate(names)]
    indices = _frame(records, ["metric", "parameter"], MORRIS_COLUMNS)
    result = GlobalSensitivity("morris", indices, rows, dict(zip(names, zip(lo.tolist(), hi.tolist()))), n,
                               seed, conf_level, levels=levels)
    if plot is not None:
        result.plot(plot)
    return result


def _salib(method: str):
    """(sample, analyze) of SALib for ``method``."""
    try:
        if method == "sobol":
            from SALib.analyze.sobol import analyze
            from SALib.sample.sobol import sample
        else:
            from SALib.analyze.morris import analyze
            from SALib.sample.morris import sample
    except ImportError:
        raise ImportError("global sensitivity needs SALib: pip install 'mbsfmu[sensitivity]' (or pip install "
                          "SALib)") from None
    return sample, analyze


def _problem(names, lo, hi) -> dict:
    return {"num_vars": len(names), "names": list(names), "bounds": [[a, b] for a, b in zip(lo, hi)]}


def _whole(name: str, value, least: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be a whole number, got {value!r}")
    if value < least:
        raise ParameterError(f"{name} = {value}: too few {what}; use {name} >= {least}")
    return int(value)


def _check_runs(n: int, per: int, formula: str) -> None:
    if n * per > designs.MAX_RUNS:
        raise ParameterError(f"n = {n} asks for {formula} = {n * per:,} runs, more than a design may have "
                             f"(MAX_RUNS = {designs.MAX_RUNS:,})")


def _sobol_n(n, p: int, second_order: bool) -> int:
    """``n`` checked: a power of 2 >= SOBOL_MIN_N, the runs within MAX_RUNS."""
    per, formula = (2 * p + 2, "n (2p + 2)") if second_order else (p + 2, "n (p + 2)")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ParameterError(f"n must be a whole number (base samples, a power of 2), got {n!r}")
    n = int(n)
    if n < SOBOL_MIN_N:
        raise ParameterError(f"n = {n} base samples are too few for the estimators and their bootstrap; "
                             f"use a power of 2 >= {SOBOL_MIN_N} (512 or more is usual; {formula} runs)")
    if n & (n - 1):
        low = 1 << (n.bit_length() - 1)
        raise ParameterError(f"n = {n} is not a power of 2 (Sobol' points are balanced only then); use "
                             f"n = {low} or n = {2 * low} ({formula} = {low * per:,} or {2 * low * per:,} "
                             f"runs for {p} parameter{'s' if p > 1 else ''})")
    _check_runs(n, per, formula)
    return n


def _settings(seed, conf_level, resamples, plot, sweep_options: dict):
    """Check the options both methods share; the plot's path (checked) or None."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise ParameterError(f"seed must be a whole number >= 0 or None, got {seed!r}")
    if (isinstance(conf_level, bool) or not isinstance(conf_level, numbers.Real)
            or not 0 < conf_level < 1):
        raise ParameterError(f"conf_level must be a number between 0 and 1 (0.95: a 95 % interval), got "
                             f"{conf_level!r}")
    _whole("resamples", resamples, 2, "bootstrap draws for a confidence interval (100 to 1000 are usual)")
    if "design" in sweep_options:
        raise ParameterError("keyword 'design': the design comes from the ranges and n")
    return plot_path(plot, "plot", [("rows file", sweep_options.get("out"))]) if plot is not None else None


def _bootstrap_rng(seed):
    """A generator for SALib's bootstrap, the same for every metric (SALib's Sobol' analysis
    takes an int seed 0 as no seed: a Generator is always one)."""
    return np.random.default_rng(seed)


def _run(target, names: list, x: np.ndarray, t_end, metrics, sweep_options: dict, what: str):
    """The rows of a sweep of ``target`` over the design ``x``, and every metric's values
    ({metric: array in run order}); rows with a failed run or a metric that is not a finite
    number are a StudyError."""
    rows = sweep(target, pd.DataFrame(x, columns=names), t_end=t_end, metrics=metrics, **sweep_options)
    out = sweep_options.get("out")
    failed = rows.loc[rows["status"] == "failed", "run"].tolist()
    if failed:
        first = rows.loc[rows["run"] == failed[0]].iloc[0]
        values = {name: first[name] for name in names}
        again = ("the same call with out= takes the rows that are done, and retry_failed=True "
                 "(--retry-failed) runs the failed ones again" if out is None else
                 f"the rows are in {str(out)!r}: the same call with retry_failed=True (--retry-failed) "
                 "runs the failed ones again and takes the others from the file")
        raise _refused(
            f"{what} need every run, and {len(failed)} of {len(rows)} failed (runs {_listed(failed)}); "
            f"leaving them out would bias every index (the estimators pair each run with others). The first: "
            f"{failures.describe_run(failed[0], values)}: {first['message']}. Change what makes them fail "
            f"(the metric, the ranges, the method or rtol); {again}", rows)
    metric_names = [c for c in rows.columns if c not in ("run", *names, *STATUS_COLUMNS)]
    outputs = {}
    for m in metric_names:
        y = rows[m].to_numpy(dtype=float)
        bad = np.nonzero(~np.isfinite(y))[0]
        if bad.size:
            runs = rows["run"].to_numpy()[bad].tolist()
            raise _refused(f"{what}: metric {m!r} is not a finite number in {len(runs)} run(s) "
                           f"({_listed(runs)}; run {runs[0]}: {float(y[bad[0]])!r}); the indices need a "
                           "number from every run: give a metric that has one", rows)
        outputs[m] = y
    return rows, outputs


def _refused(message: str, rows: pd.DataFrame) -> StudyError:
    exc = StudyError(message)
    exc.rows = rows
    return exc


def _listed(runs: list) -> str:
    """Runs as ranges ``0, 2-5, 9``, at most MAX_LISTED of them."""
    parts = failures.run_ranges(runs).split(", ")
    if len(parts) <= MAX_LISTED:
        return ", ".join(parts)
    return ", ".join(parts[:MAX_LISTED]) + f", ... ({len(runs)} runs in all)"


def _frame(records: list, index: list, columns) -> pd.DataFrame:
    df = pd.DataFrame(records, columns=[*index, *columns])
    return df.set_index(index)


def _records(df: pd.DataFrame) -> list[dict]:
    return [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
            for r in df.reset_index().to_dict("records")]
