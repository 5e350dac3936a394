"""Writing a plot: the file's suffix chooses the drawing (.html: an interactive page, else an
image)."""

from __future__ import annotations

import pathlib

from . import matplotlib_figure, plotly_figure
from .figure import Figure

#: the suffix of an interactive page
PAGE = ".html"


def write(figure: Figure, path, drawn=None) -> None:
    """Write ``figure`` to ``path`` (checked before: :func:`mbsfmu.core.output_files.plot_path`):
    a path ending in .html gets the interactive page of :mod:`.plotly_figure`, any other the
    matplotlib image (``drawn``: the matplotlib Figure of ``figure`` when already at hand)."""
    if pathlib.Path(path).suffix.lower() == PAGE:
        plotly_figure.save(figure, path)
    else:
        matplotlib_figure.save(figure, path, drawn)
