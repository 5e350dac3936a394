"""A :class:`~.figure.Figure` drawn by matplotlib: a ``matplotlib.figure.Figure`` (no pyplot, no
GUI backend, no global figure list) that :func:`save` writes as an image (PNG, PDF, SVG, ...)."""

from __future__ import annotations

import numpy as np

from .figure import Bars, Figure, Heatmap, Histogram, Line, Panel

#: the bars of a group share this much of a category's width (matplotlib's default for one)
GROUP_WIDTH = 0.76


def draw(figure: Figure):
    """The matplotlib Figure of ``figure``."""
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=figure.size, layout="constrained" if figure.layout == "constrained" else None)
    grid = dict(height_ratios=figure.height_ratios) if figure.height_ratios else None
    axes = fig.subplots(figure.rows, figure.cols, squeeze=False, sharex=figure.sharex, gridspec_kw=grid)
    for r, row in enumerate(figure.panels):
        for c, panel in enumerate(row):
            _panel(fig, axes[r, c], panel)
    if figure.title is not None:
        fig.suptitle(figure.title, **({"fontsize": figure.title_size} if figure.title_size else {}))
    if figure.layout == "tight":
        fig.tight_layout()
    return fig


def save(figure: Figure, path, drawn=None) -> None:
    """Write ``figure`` as the image format of the suffix of ``path`` (``drawn``: its matplotlib
    Figure when already at hand)."""
    (drawn if drawn is not None else draw(figure)).savefig(path, dpi=figure.dpi)


def _panel(fig, ax, panel: Panel) -> None:
    bars = [item for item in panel.items if isinstance(item, Bars)]
    for y, color, width in panel.hlines:
        ax.axhline(y, color=color, lw=width)
    for item in panel.items:
        if isinstance(item, Line):
            _line(ax, item)
        elif isinstance(item, Heatmap):
            mesh = ax.pcolormesh(item.x_edges, item.y_edges, item.z, shading="flat")
            fig.colorbar(mesh, ax=ax, label=item.label)
        elif isinstance(item, Histogram):
            ax.hist(item.values, bins=item.edges)
    if bars:
        _bars(ax, bars)
    if panel.xlog:
        ax.set_xscale("log")
    if panel.ylim is not None:
        ax.set_ylim(*panel.ylim)
    if panel.equal:
        ax.set_aspect("equal", adjustable="datalim")
    if panel.title is not None:
        ax.set_title(panel.title, **({"fontsize": panel.title_size} if panel.title_size else {}))
    if panel.xlabel is not None:
        ax.set_xlabel(panel.xlabel)
    if panel.ylabel is not None:
        ax.set_ylabel(panel.ylabel)
    if panel.legend is not None:
        ax.legend(loc=panel.legend_loc, fontsize=panel.legend)
    if panel.grid:
        ax.grid(True, which="both" if panel.xlog else "major", alpha=0.3)


def _line(ax, line: Line) -> None:
    style = {k: v for k, v in (("color", line.color), ("lw", line.width), ("ms", line.size),
                               ("label", line.label)) if v is not None}
    fmt = (line.marker or "") + line.linestyle
    if line.step:
        ax.step(line.x, line.y, fmt, where="post", **style)
    else:
        ax.plot(line.x, line.y, fmt, **style)


def _bars(ax, bars: list[Bars]) -> None:
    """Each category's bars side by side: with n Bars each GROUP_WIDTH / n wide around it (one:
    0.8, matplotlib's default)."""
    n = len(bars)
    width = GROUP_WIDTH / n if n > 1 else 0.8
    x = np.arange(len(bars[0].categories))
    for k, b in enumerate(bars):
        style = {k: v for k, v in (("color", b.color), ("label", b.label)) if v is not None}
        if b.errors is not None:
            style.update(yerr=b.errors, capsize=3)
        ax.bar(x + (k - (n - 1) / 2) * width, b.heights, width, **style)
    ax.set_xticks(x, bars[0].categories)
