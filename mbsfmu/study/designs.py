"""Designs of a parameter study: which parameter sets to run, each a pandas DataFrame (one column
per parameter, one row per run).

- :func:`factorial`: every combination of value lists or ``START:STOP:N`` ranges (N values,
  ``numpy.linspace(START, STOP, N)``); the first parameter varies slowest.
- :func:`latin_hypercube` and :func:`sobol`: ``n`` points of ``scipy.stats.qmc`` in [0, 1)^d,
  scaled to the bounds, ``x = lo + u (hi - lo)``.
- :func:`monte_carlo`: ``n`` independent draws from ``scipy.stats`` distributions.
- :func:`table`: an explicit table (CSV file or DataFrame).

The random designs take a ``seed``: the same seed gives the same design.  A design has at most
:data:`MAX_RUNS` runs (checked before anything is allocated: ``0:1:10**12`` would ask numpy for
terabytes), and its values are finite numbers.
"""

from __future__ import annotations

import itertools
import math
import os
import warnings

import numpy as np
import pandas as pd

from ..core.errors import ParameterError

#: the names the CLI's --design accepts
DESIGNS = ("factorial", "lhs", "sobol", "montecarlo")
#: the most runs a design may have (a million: about 100 MB of rows file; split a larger study)
MAX_RUNS = 10**6


def parse_range(name: str, text) -> np.ndarray:
    """The values of one parameter: ``'START:STOP:N'`` (N values from START to STOP), ``'v1,v2,...'``,
    a number, or a sequence of numbers."""
    if isinstance(text, str):
        if ":" in text:
            parts = text.split(":")
            if len(parts) != 3:
                raise ParameterError(f"parameter {name!r}: range {text!r} is not START:STOP:N")
            start, stop = (_number(name, p) for p in parts[:2])
            try:
                n = int(parts[2])
            except ValueError:
                raise ParameterError(f"parameter {name!r}: N = {parts[2]!r} in {text!r} is not a whole "
                                     "number") from None
            return _linspace(name, start, stop, n)
        return np.array([_number(name, p) for p in text.split(",")])
    values = np.atleast_1d(np.asarray(text, dtype=float))
    if values.size == 0 or not np.all(np.isfinite(values)):
        raise ParameterError(f"parameter {name!r}: needs at least one finite value, got {text!r}")
    return values


def _number(name: str, text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ParameterError(f"parameter {name!r}: {text.strip()!r} is not a number") from None
    if not math.isfinite(v):
        raise ParameterError(f"parameter {name!r}: {text.strip()!r} is not finite")
    return v


def _linspace(name: str, start: float, stop: float, n: int) -> np.ndarray:
    if n < 1:
        raise ParameterError(f"parameter {name!r}: a range needs N >= 1 values, got N = {n}")
    if n > MAX_RUNS:
        raise ParameterError(f"parameter {name!r}: N = {n} values is more than a design may have "
                             f"(MAX_RUNS = {MAX_RUNS:,} runs)")
    if stop < start:
        raise ParameterError(f"parameter {name!r}: reversed range, STOP = {stop:g} < START = {start:g}")
    return np.linspace(start, stop, n)


def factorial(values: dict) -> pd.DataFrame:
    """Every combination of the parameters' values (``{name: 'START:STOP:N' | 'v1,v2' | [v, ...]}``):
    prod_i N_i rows."""
    if not values:
        raise ParameterError("a factorial design needs at least one parameter")
    columns = {name: parse_range(name, v) for name, v in values.items()}
    size = math.prod(len(v) for v in columns.values())
    if size > MAX_RUNS:
        counts = " x ".join(f"{len(v)} ({name})" for name, v in columns.items())
        raise ParameterError(f"a factorial design of {counts} = {size:,} runs is more than a design may have "
                             f"(MAX_RUNS = {MAX_RUNS:,})")
    rows = list(itertools.product(*columns.values()))
    return pd.DataFrame(rows, columns=list(columns), dtype=float)


def parse_bounds(bounds: dict) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(names, lo, hi) of ``{name: (lo, hi) | 'LO:HI'}``, each finite with lo < hi."""
    if not isinstance(bounds, dict):
        raise ParameterError(f"parameter bounds are {{name: (lo, hi)}}, got {type(bounds).__name__} "
                             f"{bounds!r:.60}")
    if not bounds:
        raise ParameterError("a design needs at least one parameter with bounds (lo, hi)")
    names, lo, hi = [], [], []
    for name, b in bounds.items():
        if isinstance(b, str):
            parts = b.split(":")
            if len(parts) not in (2, 3):
                raise ParameterError(f"parameter {name!r}: bounds {b!r} are not LO:HI")
            b = [_number(name, p) for p in parts[:2]]
        try:
            a, z = (float(x) for x in b)
        except (TypeError, ValueError):
            raise ParameterError(f"parameter {name!r}: bounds must be (lo, hi), got {b!r}") from None
        if not (math.isfinite(a) and math.isfinite(z)) or z <= a:
            raise ParameterError(f"parameter {name!r}: bounds need lo < hi (finite), got ({a:g}, {z:g})")
        names.append(name)
        lo.append(a)
        hi.append(z)
    return names, np.array(lo), np.array(hi)


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ParameterError(f"the number of samples must be a whole number >= 1, got {n!r}")
    if n > MAX_RUNS:
        raise ParameterError(f"the number of samples {n} is more than a design may have "
                             f"(MAX_RUNS = {MAX_RUNS:,} runs)")
    return int(n)


def _qmc(engine_class, d: int, seed, **options):
    try:  # scipy >= 1.15 calls the seed rng
        return engine_class(d, rng=np.random.default_rng(seed), **options)
    except TypeError:
        return engine_class(d, seed=seed, **options)


def latin_hypercube(bounds: dict, n: int, seed=None) -> pd.DataFrame:
    """``n`` points of a Latin hypercube (one point in each of the n equal slices of every
    parameter's range), scaled to ``bounds = {name: (lo, hi)}``."""
    from scipy.stats import qmc

    n = _check_n(n)
    names, lo, hi = parse_bounds(bounds)
    u = _qmc(qmc.LatinHypercube, len(names), seed).random(n)
    return pd.DataFrame(qmc.scale(u, lo, hi), columns=names)


def sobol(bounds: dict, n: int, seed=None) -> pd.DataFrame:
    """The first ``n`` points of a scrambled Sobol sequence scaled to ``bounds``; its balance
    properties hold for n a power of 2."""
    from scipy.stats import qmc

    n = _check_n(n)
    names, lo, hi = parse_bounds(bounds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # n not a power of 2: allowed, said above
        u = _qmc(qmc.Sobol, len(names), seed, scramble=True).random(n)
    return pd.DataFrame(qmc.scale(u, lo, hi), columns=names)


def monte_carlo(distributions: dict, n: int, seed=None) -> pd.DataFrame:
    """``n`` independent draws of every parameter from its frozen ``scipy.stats`` distribution
    (``{'m': scipy.stats.norm(1.0, 0.05)}``), from one generator seeded with ``seed``; a pair
    (lo, hi) is the uniform distribution on [lo, hi]."""
    from scipy import stats

    n = _check_n(n)
    if not distributions:
        raise ParameterError("a Monte Carlo design needs at least one parameter distribution")
    rng = np.random.default_rng(seed)
    columns = {}
    for name, dist in distributions.items():
        if not hasattr(dist, "rvs"):
            _, lo, hi = parse_bounds({name: dist})
            dist = stats.uniform(lo[0], hi[0] - lo[0])
        columns[name] = _draw(name, dist, n, rng)
    return pd.DataFrame(columns)


def _draw(name: str, dist, n: int, rng) -> np.ndarray:
    """``n`` draws of one parameter; a distribution whose parameters scipy refuses, or that
    gives values that are not finite numbers, is a ParameterError naming the parameter."""
    what = _distribution_text(dist)
    try:
        values = np.asarray(dist.rvs(size=n, random_state=rng), dtype=float)
    except (ValueError, TypeError) as exc:
        raise ParameterError(f"parameter {name!r}: distribution {what}: {exc}") from None
    if values.shape != (n,) or not np.all(np.isfinite(values)):
        raise ParameterError(f"parameter {name!r}: distribution {what} gives values that are not finite "
                             "numbers (are its parameters finite?)")
    return values


def _distribution_text(dist) -> str:
    """'norm(1.0, -0.1)' for a frozen scipy.stats distribution."""
    gen = getattr(dist, "dist", dist)
    args = [*map(repr, getattr(dist, "args", ())),
            *(f"{k}={v!r}" for k, v in getattr(dist, "kwds", {}).items())]
    return f"{getattr(gen, 'name', type(gen).__name__)}({', '.join(args)})"


def table(source) -> pd.DataFrame:
    """An explicit design: a DataFrame or a CSV file with one column per parameter."""
    if isinstance(source, pd.DataFrame):
        df = source.copy()
    elif isinstance(source, (str, os.PathLike)):
        try:
            df = pd.read_csv(source)
        except (OSError, ValueError, pd.errors.ParserError) as exc:
            raise ParameterError(f"design table {str(source)!r}: cannot read it as CSV "
                                 f"({type(exc).__name__}: {exc})") from None
    else:
        raise ParameterError("a design is a DataFrame, a CSV file or {name: values}, got "
                             f"{type(source).__name__}")
    if df.empty or not len(df.columns):
        raise ParameterError("the design table has no rows or no columns")
    if df.columns.duplicated().any():
        raise ParameterError(f"design table: column {df.columns[df.columns.duplicated()][0]!r} appears twice")
    bad = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
    if bad:
        raise ParameterError(f"design table: column(s) {', '.join(map(str, bad))} are not numeric")
    if len(df) > MAX_RUNS:
        raise ParameterError(f"design table: {len(df):,} rows is more than a design may have "
                             f"(MAX_RUNS = {MAX_RUNS:,} runs)")
    df = df.reset_index(drop=True).astype(float)
    for c in df.columns:
        rows = np.nonzero(~np.isfinite(df[c].to_numpy()))[0]
        if rows.size:
            bad = float(df[c].iat[rows[0]])
            raise ParameterError(f"design table: column {c!r} row {rows[0]} is {bad!r}, not a finite number")
    return df
