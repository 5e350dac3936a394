"""The content of a plot, said once for every way of drawing it: a :class:`Figure` is a grid of
:class:`Panel` s, each holding what is drawn in it (:class:`Line`, :class:`Bars`,
:class:`Heatmap`, :class:`Histogram`) with its title, axis labels, scales and limits.

The plots of the package (a result's signals, a sweep's metric, sensitivity indices, a fit, an
optimization, a Bode plot, mode shapes) build one of these; :mod:`.matplotlib_figure` draws it as an
image (PNG, PDF, SVG, ...), :mod:`.plotly_figure` as an interactive page (.html), so both show the
same arrays under the same words.  The styles are matplotlib's words (format strings' markers and
line styles, colour names such as ``"C0"``, ``"0.35"``, ``"tab:blue"``); the page converts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Line:
    """A curve y over x: ``linestyle`` '-' (solid), '--' (dashed) or '' (points only), ``marker``
    None, '.' or 'o'; ``step`` True draws a zero-order hold (each value held until the next x);
    ``label`` None keeps it out of the legend; ``color`` None takes the next colour of the
    panel's cycle.  NaN in x or y breaks the curve (several segments in one line)."""

    x: np.ndarray
    y: np.ndarray
    label: str | None = None
    linestyle: str = "-"
    marker: str | None = None
    step: bool = False
    color: str | None = None
    width: float | None = None
    size: float | None = None

    def __post_init__(self):
        self.x = np.asarray(self.x, dtype=float)
        self.y = np.asarray(self.y, dtype=float)


@dataclass
class Bars:
    """One bar per category (its ``heights``), with symmetric ``errors`` (None: none); the
    Bars of one panel stand side by side in each category (a group)."""

    categories: list[str]
    heights: np.ndarray
    label: str | None = None
    errors: np.ndarray | None = None
    color: str | None = None

    def __post_init__(self):
        self.categories = [str(c) for c in self.categories]
        self.heights = np.asarray(self.heights, dtype=float)
        self.errors = None if self.errors is None else np.asarray(self.errors, dtype=float)


@dataclass
class Heatmap:
    """Values ``z`` (rows over y, columns over x) on cells between the edges ``x_edges`` (one more
    than the columns) and ``y_edges``; ``label`` names the colour scale."""

    x_edges: np.ndarray
    y_edges: np.ndarray
    z: np.ndarray
    label: str

    def __post_init__(self):
        self.x_edges, self.y_edges, self.z = (np.asarray(a, dtype=float)
                                              for a in (self.x_edges, self.y_edges, self.z))


@dataclass
class Histogram:
    """How many of ``values`` fall in each bin between the ``edges``; the last bin holds its
    right edge (numpy's rule), a value that is not finite (a failed metric) is in none
    (matplotlib's rule): :meth:`counts`."""

    values: np.ndarray
    edges: np.ndarray

    def __post_init__(self):
        self.values, self.edges = np.asarray(self.values, dtype=float), np.asarray(self.edges, dtype=float)

    def counts(self) -> np.ndarray:
        return np.histogram(self.values[np.isfinite(self.values)], self.edges)[0]


@dataclass
class Panel:
    """One axes: what is drawn (``items``), ``title``, ``xlabel``, ``ylabel``; ``xlog`` a
    logarithmic x axis; ``ylim`` fixed y limits; ``hlines`` horizontal reference lines (y, colour,
    width); ``equal`` the same scale on both axes; ``legend`` the legend's font size (None: no
    legend); ``grid`` drawn; ``title_size`` the title's font size (None: the default)."""

    items: list = field(default_factory=list)
    title: str | None = None
    xlabel: str | None = None
    ylabel: str | None = None
    xlog: bool = False
    ylim: tuple[float, float] | None = None
    hlines: list[tuple[float, str, float]] = field(default_factory=list)
    equal: bool = False
    legend: str | float | None = None
    legend_loc: str = "best"
    grid: bool = False
    title_size: str | float | None = None


@dataclass
class Figure:
    """``panels`` in rows (a list of rows of :class:`Panel`), under the ``title`` (None: none) in
    ``title_size``; ``size`` (width, height) in inches and ``dpi`` of the image; ``sharex``
    False, True (all panels) or 'col' (each column); ``height_ratios`` of the rows (None:
    equal); ``layout`` 'tight' or 'constrained' (matplotlib's placement of the panels)."""

    panels: list[list[Panel]]
    title: str | None = None
    size: tuple[float, float] = (8.0, 4.5)
    dpi: float = 100
    sharex: bool | str = False
    height_ratios: list[float] | None = None
    layout: str = "tight"
    title_size: str | float | None = None

    @property
    def rows(self) -> int:
        return len(self.panels)

    @property
    def cols(self) -> int:
        return len(self.panels[0])

    def all_panels(self) -> list[Panel]:
        """The panels row by row."""
        return [p for row in self.panels for p in row]


def column(panels: list[Panel], **figure) -> Figure:
    """A figure of ``panels`` one above the other."""
    return Figure([[p] for p in panels], **figure)


def histogram_edges(values, bins: int) -> np.ndarray:
    """The ``bins`` + 1 edges of equal bins over the range of the finite ``values`` (numpy's and
    matplotlib's default histogram)."""
    values = np.asarray(values, dtype=float)
    return np.histogram_bin_edges(values[np.isfinite(values)], bins)
