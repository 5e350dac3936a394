"""Plots of a study's rows: a metric over one parameter, a heat map over two, a histogram; and
the bar chart of global sensitivity indices (:func:`plot_indices`).

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


#: the bars of each method's indices: (column, its confidence column or None, label)
INDEX_BARS = {"sobol": (("S1", "S1_conf", "first order S1"), ("ST", "ST_conf", "total ST")),
              "morris": (("mu_star", "mu_star_conf", "mu*"), ("sigma", None, "sigma"))}


def plot_indices(indices: pd.DataFrame, path=None, *, metric: str | None = None, conf_level: float = 0.95):
    """Bar chart of global sensitivity indices (the ``indices`` of a
    :class:`~mbsfmu.study.global_sensitivity.GlobalSensitivity`): one panel per metric (or only
    ``metric``), per parameter two bars, S1 and ST (Sobol') or mu* and sigma (Morris), the
    confidence intervals as error bars; written to ``path`` if given.  Returns the Figure."""
    from matplotlib.figure import Figure

    method = "sobol" if "S1" in indices.columns else "morris"
    metrics = list(dict.fromkeys(indices.index.get_level_values("metric")))
    if metric is not None:
        if metric not in metrics:
            raise ParameterError(f"plot: no metric {metric!r} among the indices (metrics: "
                                 f"{', '.join(metrics)})")
        metrics = [metric]
    fig = Figure(figsize=(6.5, 1.0 + 2.6 * len(metrics)), layout="constrained")
    axes = fig.subplots(len(metrics), 1, squeeze=False)[:, 0]
    for ax, name in zip(axes, metrics):
        table = indices.xs(name, level="metric")
        x = np.arange(len(table))
        for k, (column, conf, label) in enumerate(INDEX_BARS[method]):
            errors = table[conf].to_numpy(dtype=float) if conf else None
            ax.bar(x + (k - 0.5) * 0.38, table[column].to_numpy(dtype=float), 0.38, yerr=errors, capsize=3,
                   label=label)
        ax.set_xticks(x, [str(p) for p in table.index])
        ax.axhline(0.0, color="0.5", linewidth=0.8)
        ax.set_title(name)
        ax.set_ylabel("index" if method == "sobol" else "effect per range")
        ax.legend(fontsize="small")
    what = "Sobol' indices" if method == "sobol" else "Morris elementary effects"
    fig.suptitle(f"{what} (error bars: {conf_level:.0%} confidence)")
    if path is not None:
        fig.savefig(pathlib.Path(path), dpi=100)
    return fig
