"""Plots described once (:mod:`.figure`) and written as an image by matplotlib
(:mod:`.matplotlib_figure`: .png, .pdf, .svg, ...) or as an interactive page by plotly
(:mod:`.plotly_figure`: .html); :func:`write` chooses by the file's suffix."""

from .figure import Bars, Figure, Heatmap, Histogram, Line, Panel, column, histogram_edges
from .write import write

__all__ = ["Bars", "Figure", "Heatmap", "Histogram", "Line", "Panel", "column", "histogram_edges", "write"]
