"""Plots of a study's rows: a metric over one parameter, a heat map over two, a histogram.

Only the rows with status 'ok' are drawn, and parameters held at one value are no axis.  The
kind follows the design unless given: one parameter gives a line of the metric over it; two
parameters on a full grid (a factorial) a heat map; anything else (Monte Carlo, Latin
hypercube, more parameters) a histogram of the metric.
Drawn on a ``matplotlib.figure.Figure`` (no pyplot, no display needed).
"""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd

from ..core.errors import ParameterError
from .results import STATUS_COLUMNS

KINDS = ("line", "heatmap", "hist")


def plot_study(df: pd.DataFrame, path=None, *, metric: str | None = None, params=None,
               kind: str | None = None, bins: int | None = None):
    """Draw ``metric`` of the study ``df`` (the DataFrame of :func:`mbsfmu.sweep`) and return the Axes;
    with ``path`` also write the figure (PNG, ...) there.

    ``params``: the design's parameter columns (default: those :func:`sweep` recorded in
    ``df.attrs``); ``metric``: default the first metric column; ``kind``: 'line', 'heatmap' or
    'hist' (default from the design, see the module); ``bins``: the histogram's (default about
    the square root of the number of rows)."""
    from matplotlib.figure import Figure

    params = list(params if params is not None else df.attrs.get("parameters", []))
    if not params:
        raise ParameterError("plot_study: give params= (the design's parameter columns)")
    missing = [p for p in params if p not in df.columns]
    metrics = [c for c in df.columns if c not in ("run", *params, *STATUS_COLUMNS)]
    metric = metric if metric is not None else (metrics[0] if metrics else None)
    if missing or metric not in df.columns:
        raise ParameterError(f"plot_study: no column {', '.join(map(repr, missing or [metric]))} in the "
                             f"study (columns: {', '.join(df.columns)})")
    ok = df[df["status"] == "ok"] if "status" in df else df
    params = [p for p in params if ok[p].nunique() > 1] or params  # a parameter held fixed is no axis
    if kind is None:
        kind = "line" if len(params) == 1 else "heatmap" if _is_grid(ok, params) else "hist"
    if kind not in KINDS:
        raise ParameterError(f"plot_study: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    fig = Figure(figsize=(6, 4.5), layout="constrained")
    ax = fig.add_subplot()
    values = ok[metric].to_numpy(dtype=float)
    if kind == "line":
        x = ok[params[0]].to_numpy(dtype=float)
        order = np.argsort(x, kind="stable")
        ax.plot(x[order], values[order], "o-")
        ax.set_xlabel(params[0])
        ax.set_ylabel(metric)
    elif kind == "heatmap":
        if len(params) != 2 or not _is_grid(ok, params):
            raise ParameterError("plot_study: a heat map needs two parameters on a full grid (a factorial)")
        grid = ok.pivot_table(index=params[1], columns=params[0], values=metric, aggfunc="first")
        x, y = (_edges(v.to_numpy(dtype=float)) for v in (grid.columns, grid.index))
        mesh = ax.pcolormesh(x, y, grid.to_numpy(dtype=float), shading="flat")
        fig.colorbar(mesh, ax=ax, label=metric)
        ax.set_xlabel(params[0])
        ax.set_ylabel(params[1])
    else:
        ax.hist(values, bins=bins or max(5, int(np.sqrt(len(values)))))
        ax.set_xlabel(metric)
        ax.set_ylabel("runs")
    ax.set_title(f"{metric}: {len(ok)} of {len(df)} runs ok")
    if path is not None:
        fig.savefig(pathlib.Path(path), dpi=100)
    return ax


def _is_grid(df, params) -> bool:
    if len(params) != 2 or df.empty:
        return False
    a, b = (df[p].nunique() for p in params)
    return a > 1 and b > 1 and a * b == len(df) and not df.duplicated(params).any()


def _edges(centres: np.ndarray) -> np.ndarray:
    """Cell edges around sorted centres (half-way between neighbours)."""
    if len(centres) == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    mid = (centres[1:] + centres[:-1]) / 2
    return np.concatenate([[2 * centres[0] - mid[0]], mid, [2 * centres[-1] - mid[-1]]])
