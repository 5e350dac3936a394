"""Plots of a study's rows: a metric over one parameter, a heat map over two, a histogram; and
the bar chart of global sensitivity indices (:func:`plot_indices`).

The rows of finished runs are drawn (a failed run has no metric), and parameters held at one
value are no axis.  Runs that did not settle or diverged (their status, :mod:`.metrics`) are
marked apart, each status in its colour (:data:`MARKED`) and with its legend entry, never as a
value of the metric: on a line at their value where the metric has one, else on the top edge of
the plot; on a heat map as a point on their cell (left empty where the metric has no value); a
histogram counts only the 'ok' runs and its title the others.  The kind follows the design
unless given: one parameter gives a line of the metric over it; two
parameters on a full grid (a factorial) a heat map; anything else (Monte Carlo, Latin
hypercube, more parameters) a histogram of the metric.
Described once (:mod:`mbsfmu.plotting`) and drawn on a ``matplotlib.figure.Figure`` (no pyplot, no
display needed) or as an interactive page (a path ending in .html).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.errors import ParameterError
from ..core.output_files import plot_path
from ..plotting import (
    Bars,
    Figure,
    Heatmap,
    Histogram,
    Line,
    Panel,
    column,
    histogram_edges,
    matplotlib_figure,
    write,
)
from .results import STATUS_COLUMNS

KINDS = ("line", "heatmap", "hist")
#: the statuses of finished runs that are not 'ok', and their colours on a study plot
MARKED = {"unstable": "tab:purple", "not settled": "tab:orange", "diverged": "tab:red"}
#: marked statuses whose metrics are still the run's values (the linearized loop's, e.g. its
#: largest real part), drawn with the 'ok' rows' values
VALUED = ("unstable",)


def plot_study(df: pd.DataFrame, path=None, *, metric: str | None = None, params=None,
               kind: str | None = None, bins: int | None = None):
    """Draw ``metric`` of the study ``df`` (the DataFrame of :func:`mbsfmu.sweep`) and return the Axes;
    with ``path`` also write the figure there: an image (PNG, ...) or, for a name ending in
    .html, an interactive page (checked first: :func:`~mbsfmu.core.output_files.plot_path`).  The
    other arguments are :func:`study_figure`'s."""
    path = plot_path(path, "plot_study: path") if path is not None else None
    figure = study_figure(df, metric=metric, params=params, kind=kind, bins=bins)
    fig = matplotlib_figure.draw(figure)
    if path is not None:
        write(figure, path, fig)
    return fig.axes[0]


def study_figure(df: pd.DataFrame, *, metric: str | None = None, params=None, kind: str | None = None,
                 bins: int | None = None) -> Figure:
    """The plot of ``metric`` of the study ``df`` as a :class:`mbsfmu.plotting.Figure`.

    ``params``: the design's parameter columns (default: those :func:`sweep` recorded in
    ``df.attrs``); ``metric``: default the first metric column; ``kind``: 'line', 'heatmap' or
    'hist' (default from the design, see the module); ``bins``: the histogram's (default about
    the square root of the number of rows)."""
    params = list(params if params is not None else df.attrs.get("parameters", []))
    if not params:
        raise ParameterError("plot_study: give params= (the design's parameter columns)")
    missing = [p for p in params if p not in df.columns]
    metrics = [c for c in df.columns if c not in ("run", *params, *STATUS_COLUMNS)]
    metric = metric if metric is not None else (metrics[0] if metrics else None)
    if missing or metric not in df.columns:
        raise ParameterError(f"plot_study: no column {', '.join(map(repr, missing or [metric]))} in the "
                             f"study (columns: {', '.join(df.columns)})")
    status = df["status"] if "status" in df else pd.Series("ok", index=df.index)
    done = df[status.isin(["ok", *MARKED])]
    ok = done[status[done.index] == "ok"]
    marked = {s: done[status[done.index] == s] for s in MARKED}
    params = [p for p in params if done[p].nunique() > 1] or params  # a parameter held fixed is no axis
    if kind is None:
        kind = "line" if len(params) == 1 else "heatmap" if _is_grid(done, params) else "hist"
    if kind not in KINDS:
        raise ParameterError(f"plot_study: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    values = ok[metric].to_numpy(dtype=float)
    if kind == "line":
        x = ok[params[0]].to_numpy(dtype=float)
        order = np.argsort(x, kind="stable")
        finite = done[metric].to_numpy(dtype=float)
        finite = finite[np.isfinite(finite)]
        top = float(finite.max()) if finite.size else 1.0
        items = [Line(x[order], values[order], marker="o", label="ok")]
        items += [Line(rows[params[0]], rows[metric].fillna(top), linestyle="", marker="o", color=MARKED[s],
                       label=f"{s} ({len(rows)})") for s, rows in marked.items() if len(rows)]
        panel = Panel(items, xlabel=params[0], ylabel=metric,
                      legend="small" if len(items) > 1 else None)
    elif kind == "heatmap":
        if len(params) != 2 or not _is_grid(done, params):
            raise ParameterError("plot_study: a heat map needs two parameters on a full grid (a factorial)")
        shown = status[done.index].isin(["ok", *VALUED])
        grid = done.assign(**{metric: done[metric].where(shown)}).pivot_table(
            index=params[1], columns=params[0], values=metric, aggfunc="first", dropna=False)
        x, y = (_edges(v.to_numpy(dtype=float)) for v in (grid.columns, grid.index))
        items = [Heatmap(x, y, grid.to_numpy(dtype=float), label=metric)]
        items += [Line(rows[params[0]], rows[params[1]], linestyle="", marker="o", color=MARKED[s],
                       label=f"{s} ({len(rows)})") for s, rows in marked.items() if len(rows)]
        panel = Panel(items, xlabel=params[0], ylabel=params[1], legend="small" if len(items) > 1 else None)
    else:
        edges = histogram_edges(values, bins or max(5, int(np.sqrt(len(values)))))
        panel = Panel([Histogram(values, edges)], xlabel=metric, ylabel="runs")
    others = "".join(f", {len(rows)} {s}" for s, rows in marked.items() if len(rows))
    panel.title = f"{metric}: {len(ok)} of {len(df)} runs ok{others}"
    return Figure([[panel]], size=(6, 4.5), layout="constrained")


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
    """Bar chart of global sensitivity indices (:func:`indices_figure`), written to ``path`` if
    given (an image, or an interactive page for a name ending in .html).  Returns the
    matplotlib Figure."""
    path = plot_path(path, "plot_indices: path") if path is not None else None
    figure = indices_figure(indices, metric=metric, conf_level=conf_level)
    fig = matplotlib_figure.draw(figure)
    if path is not None:
        write(figure, path, fig)
    return fig


def indices_figure(indices: pd.DataFrame, *, metric: str | None = None, conf_level: float = 0.95) -> Figure:
    """Bar chart of global sensitivity indices (the ``indices`` of a
    :class:`~mbsfmu.study.global_sensitivity.GlobalSensitivity`): one panel per metric (or only
    ``metric``), per parameter two bars, S1 and ST (Sobol') or mu* and sigma (Morris), the
    confidence intervals as error bars, as a :class:`mbsfmu.plotting.Figure`."""
    method = "sobol" if "S1" in indices.columns else "morris"
    metrics = list(dict.fromkeys(indices.index.get_level_values("metric")))
    if metric is not None:
        if metric not in metrics:
            raise ParameterError(f"plot: no metric {metric!r} among the indices (metrics: "
                                 f"{', '.join(metrics)})")
        metrics = [metric]
    panels = []
    for name in metrics:
        table = indices.xs(name, level="metric")
        bars = [Bars(table.index, table[column].to_numpy(dtype=float), label=label,
                     errors=table[conf].to_numpy(dtype=float) if conf else None)
                for column, conf, label in INDEX_BARS[method]]
        panels.append(Panel(bars, title=name, ylabel="index" if method == "sobol" else "effect per range",
                            hlines=[(0.0, "0.5", 0.8)], legend="small"))
    what = "Sobol' indices" if method == "sobol" else "Morris elementary effects"
    return column(panels, title=f"{what} (error bars: {conf_level:.0%} confidence)",
                  size=(6.5, 1.0 + 2.6 * len(metrics)), layout="constrained")
