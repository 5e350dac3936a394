"""A :class:`~.figure.Figure` drawn by plotly: an interactive page (zoom, pan, values under the
cursor, a legend that hides and shows curves) in one self-contained HTML file, plotly.js inlined
so that it opens without a network.

Each :class:`~.figure.Panel` is one subplot, in the same grid, with the same title and axis
labels; lines, bars, the heat map and the histogram's bins carry the same arrays as the image;
matplotlib's colours (``"C0"``, ``"0.35"``, the cycle of a panel) are converted to the same hex
colours."""

from __future__ import annotations

import itertools

import numpy as np

from .figure import Bars, Figure, Heatmap, Histogram, Line, Panel

#: pixels per inch of the page (the figure's size in inches, as on a screen)
PX_PER_INCH = 100
#: the least height of a page's figure in pixels
MIN_HEIGHT = 450
#: pixels per matplotlib point (line widths, marker sizes)
PX_PER_POINT = 4 / 3


def draw(figure: Figure):
    """The ``plotly.graph_objects.Figure`` of ``figure``."""
    from plotly.subplots import make_subplots

    shared = {True: "all", "col": "columns"}.get(figure.sharex, False)
    panels = figure.all_panels()
    fig = make_subplots(rows=figure.rows, cols=figure.cols, shared_xaxes=shared,
                        row_heights=figure.height_ratios, subplot_titles=[p.title or "" for p in panels],
                        vertical_spacing=min(0.3 / figure.rows, 0.12) if figure.rows > 1 else 0.0)
    shown: set[str] = set()
    for r, row in enumerate(figure.panels):
        for c, panel in enumerate(row):
            _panel(fig, panel, r + 1, c + 1, r * figure.cols + c + 1, shown)
    fig.update_layout(template="plotly_white", barmode="group", hovermode="closest",
                      height=max(figure.size[1] * PX_PER_INCH, MIN_HEIGHT), title=figure.title,
                      margin=dict(t=90 if figure.title else 50))
    return fig


def save(figure: Figure, path) -> None:
    """Write ``figure`` as one self-contained interactive page (plotly.js inlined)."""
    draw(figure).write_html(path, include_plotlyjs=True, full_html=True,
                            config={"displaylogo": False, "scrollZoom": True})


def _hex(color: str) -> str:
    from matplotlib.colors import to_hex

    return to_hex(color)


def _panel(fig, panel: Panel, row: int, col: int, index: int, shown: set[str]) -> None:
    """Draw ``panel`` in the subplot (row, col), the ``index``-th; a label is in the legend once
    (``shown``: the labels there already), and its entry hides and shows it in every panel."""
    at = dict(row=row, col=col)
    # matplotlib's colour cycles of the panel: one for lines, one for bars (patches)
    lines, patches = (itertools.cycle([f"C{i}" for i in range(10)]) for _ in range(2))
    for y, color, width in panel.hlines:
        fig.add_hline(y=y, line_color=_hex(color), line_width=width * PX_PER_POINT, **at)
    for item in panel.items:
        if isinstance(item, (Line, Bars)):
            label = item.label if panel.legend is not None else None
            trace = (_line(item, item.color or next(lines)) if isinstance(item, Line)
                     else _bars(item, item.color or next(patches)))
            trace.update(legendgroup=label, showlegend=bool(label) and label not in shown)
            shown.add(label)
            fig.add_trace(trace, **at)
        elif isinstance(item, Heatmap):
            fig.add_trace(_heatmap(item), **at)
        elif isinstance(item, Histogram):
            fig.add_trace(_histogram(item, next(patches)), **at)
    axis = "x" if index == 1 else f"x{index}"
    fig.update_xaxes(title_text=panel.xlabel, type="log" if panel.xlog else None, **at)
    fig.update_yaxes(title_text=panel.ylabel, range=list(panel.ylim) if panel.ylim else None,
                     scaleanchor=axis if panel.equal else None, scaleratio=1 if panel.equal else None,
                     **at)


def _line(line: Line, color: str):
    import plotly.graph_objects as go

    mode = "+".join(m for m, on in (("lines", line.linestyle != ""), ("markers", line.marker)) if on)
    return go.Scatter(x=line.x, y=line.y, mode=mode, name=line.label or "",
                      line=dict(color=_hex(color), width=(line.width or 1.5) * PX_PER_POINT,
                                dash="dash" if line.linestyle == "--" else "solid",
                                shape="hv" if line.step else "linear"),
                      marker=dict(color=_hex(color), size=(line.size or 6.0) * PX_PER_POINT),
                      connectgaps=False)


def _bars(bars: Bars, color: str):
    import plotly.graph_objects as go

    errors = None if bars.errors is None else dict(type="data", array=bars.errors, visible=True)
    return go.Bar(x=bars.categories, y=bars.heights, error_y=errors, name=bars.label,
                  marker_color=_hex(color))


def _heatmap(heatmap: Heatmap):
    import plotly.graph_objects as go

    return go.Heatmap(x=heatmap.x_edges, y=heatmap.y_edges, z=heatmap.z, colorscale="Viridis",
                      colorbar=dict(title=dict(text=heatmap.label, side="right")))


def _histogram(histogram: Histogram, color: str):
    """The bins as bars over their edges, their heights the counts (:meth:`Histogram.counts`)."""
    import plotly.graph_objects as go

    edges = histogram.edges
    return go.Bar(x=(edges[1:] + edges[:-1]) / 2, y=histogram.counts(), width=np.diff(edges),
                  marker_color=_hex(color), showlegend=False, name="runs")
