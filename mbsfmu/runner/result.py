"""The signals a diagram run recorded: one row per diagram step, one column per ``block.port``.

Its naming is that of :class:`mbsfmu.Result` (a ``simulate`` run): ``res.t``, ``res[name]`` (also
``res["time"]``), ``res.columns``, ``res.stats``, ``res.to_csv(path)``, ``res.plot(path)``.  The
old spellings ``res.time`` and ``res.signals`` work for one release with a DeprecationWarning.
"""

from __future__ import annotations

import csv
import difflib
import io
import pathlib
from collections.abc import Sequence

import numpy as np

from ..core.errors import deprecated
from ..core.output_files import plot_path
from ..plotting import Figure, Line, Panel, column, matplotlib_figure, write


class Result:
    """Recorded signals of a :class:`~mbsfmu.runner.diagram.Diagram` run.

    ``t``: the time points (``t0 + n * step``); ``res["block.port"]``: that signal at those
    points (``res["time"]`` is ``t``); ``columns``: ``time`` and the recorded signals in column
    order; ``values``: the ``(len(t), len(columns) - 1)`` array of the signals; ``stats``: run
    statistics (``steps``, ``wall_time`` [s], ``loop_iterations``, ``rollback``, and with
    ``realtime=True`` the real-time statistics of :mod:`mbsfmu.runner.realtime`).
    """

    def __init__(self, t: np.ndarray, signals: Sequence[str], values: np.ndarray,
                 stats: dict | None = None):
        self.t = np.asarray(t, dtype=float)
        self._signals = tuple(signals)
        self.values = np.asarray(values, dtype=float).reshape(len(self.t), len(self._signals))
        self.stats = dict(stats or {})
        self._column = {name: j for j, name in enumerate(self._signals)}

    @property
    def columns(self) -> list[str]:
        """Every name ``res[name]`` reads: ``time``, then the recorded signals ``block.port`` in
        column order (the header :meth:`to_csv` writes)."""
        return ["time", *self._signals]

    @property
    def time(self) -> np.ndarray:
        """Deprecated name of :attr:`t`."""
        deprecated("runner Result.time", "Result.t (as mbsfmu.Result names it)")
        return self.t

    @property
    def signals(self) -> tuple[str, ...]:
        """Deprecated: the recorded signals are :attr:`columns` after ``time``."""
        deprecated("runner Result.signals", "Result.columns (time first, then the signals)")
        return self._signals

    def __getitem__(self, name: str) -> np.ndarray:
        if name == "time":
            return self.t
        try:
            return self.values[:, self._column[name]]
        except (KeyError, TypeError):
            close = difflib.get_close_matches(str(name), self._signals, n=5, cutoff=0.5)
            hint = (f"close names: {', '.join(close)}" if close else
                    f"recorded: {', '.join(self._signals[:20])}"
                    + (", ..." if len(self._signals) > 20 else ""))
            raise KeyError(f"no recorded signal {name!r}; {hint}") from None

    def __contains__(self, name) -> bool:
        return name == "time" or name in self._column

    def __len__(self) -> int:
        return len(self.t)

    def __repr__(self) -> str:
        span = f"t = {self.t[0]:g} .. {self.t[-1]:g}" if len(self.t) else "empty"
        return f"Result({len(self.t)} points, {span}, {len(self._signals)} signals)"

    def to_csv(self, path) -> pathlib.Path:
        """Write the :attr:`columns` (``time,block.port,...``) and one row per time point
        (``%.17g``: round-trips); returns the path."""
        path = pathlib.Path(path)
        head = io.StringIO()
        csv.writer(head, lineterminator="\n").writerow(self.columns)
        with open(path, "w", newline="") as f:
            f.write(head.getvalue())
            if len(self.t):
                np.savetxt(f, np.column_stack([self.t, self.values]), delimiter=",",
                           fmt="%.17g")
        return path

    def figure(self, signals: Sequence[str] | None = None) -> Figure:
        """One panel per block (its ``signals``, default all, held from sample to sample against
        time) as a :class:`mbsfmu.plotting.Figure` (what :meth:`plot` draws)."""
        names = list(self._signals if signals is None else signals)
        cols = [self[name] for name in names]  # KeyError for unknown names, before drawing
        groups: dict[str, list[int]] = {}
        for i, name in enumerate(names):
            groups.setdefault(name.split(".", 1)[0], []).append(i)
        panels = [Panel([Line(self.t, cols[i], label=names[i], step=True) for i in idx], ylabel=block,
                        legend="small", grid=True) for block, idx in groups.items()] or [Panel()]
        panels[-1].xlabel = "time [s]"
        return column(panels, size=(7.0, 1.0 + 2.0 * len(panels)), sharex=True, layout="constrained")

    def plot(self, path=None, signals: Sequence[str] | None = None):
        """A matplotlib Figure with one axes per block (its ``signals``, default all, against
        time), written to ``path`` if given: an image (PNG, ...) or, for a name ending in .html,
        an interactive page (the argument order of :meth:`mbsfmu.Result.plot`; a list
        of signals as the first argument, the old order, works for one release with a
        DeprecationWarning).  Made without pyplot (no GUI backend, no global figure list)."""
        if isinstance(path, (list, tuple)):  # plot(["a.y"], path): the old order
            deprecated("runner Result.plot(signals, path) with the signals first",
                       "Result.plot(path, signals=...) (as mbsfmu.Result.plot takes them)")
            path, signals = signals, path
        if path is not None:
            path = plot_path(path, "plot")
        figure = self.figure(signals)
        fig = matplotlib_figure.draw(figure)
        if path is not None:
            write(figure, path, fig)
        return fig
