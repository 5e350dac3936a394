"""The signals a diagram run recorded: one row per diagram step, one column per ``block.port``."""

from __future__ import annotations

import csv
import difflib
import io
import pathlib
from collections.abc import Sequence

import numpy as np


class Result:
    """Recorded signals of a :class:`~mbsfmu.runner.diagram.Diagram` run.

    ``time``: the time points (``t0 + n * step``); ``res["block.port"]``: that signal at those
    points; ``signals``: the recorded names in column order; ``values``: the ``(len(time),
    len(signals))`` array; ``stats``: run statistics (``steps``, ``wall_time`` [s],
    ``loop_iterations``, ``rollback``, and with ``realtime=True`` the real-time statistics of
    :mod:`mbsfmu.runner.realtime`).
    """

    def __init__(self, time: np.ndarray, signals: Sequence[str], values: np.ndarray,
                 stats: dict | None = None):
        self.time = np.asarray(time, dtype=float)
        self.signals = tuple(signals)
        self.values = np.asarray(values, dtype=float).reshape(len(self.time), len(self.signals))
        self.stats = dict(stats or {})
        self._column = {name: j for j, name in enumerate(self.signals)}

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self.values[:, self._column[name]]
        except (KeyError, TypeError):
            close = difflib.get_close_matches(str(name), self.signals, n=5, cutoff=0.5)
            hint = (f"close names: {', '.join(close)}" if close else
                    f"recorded: {', '.join(self.signals[:20])}"
                    + (", ..." if len(self.signals) > 20 else ""))
            raise KeyError(f"no recorded signal {name!r}; {hint}") from None

    def __contains__(self, name) -> bool:
        return name in self._column

    def __len__(self) -> int:
        return len(self.time)

    def __repr__(self) -> str:
        span = f"t = {self.time[0]:g} .. {self.time[-1]:g}" if len(self.time) else "empty"
        return f"Result({len(self.time)} points, {span}, {len(self.signals)} signals)"

    def to_csv(self, path) -> pathlib.Path:
        """Write ``time,block.port,...`` and one row per time point (``%.17g``: round-trips)."""
        path = pathlib.Path(path)
        head = io.StringIO()
        csv.writer(head, lineterminator="\n").writerow(["time", *self.signals])
        with open(path, "w", newline="") as f:
            f.write(head.getvalue())
            if len(self.time):
                np.savetxt(f, np.column_stack([self.time, self.values]), delimiter=",",
                           fmt="%.17g")
        return path

    def plot(self, signals: Sequence[str] | None = None, path=None):
        """A matplotlib Figure with one axes per block (its signals against time).

        Made without pyplot (no GUI backend, no global figure list); saved as PNG if ``path``.
        """
        from matplotlib.figure import Figure

        names = list(self.signals if signals is None else signals)
        cols = [self[name] for name in names]  # KeyError for unknown names, before drawing
        groups: dict[str, list[int]] = {}
        for i, name in enumerate(names):
            groups.setdefault(name.split(".", 1)[0], []).append(i)
        n = max(1, len(groups))
        fig = Figure(figsize=(7.0, 1.0 + 2.0 * n), layout="constrained")
        axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
        for ax, (block, idx) in zip(axes, groups.items()):
            for i in idx:
                ax.step(self.time, cols[i], where="post", label=names[i])
            ax.set_ylabel(block)
            ax.legend(loc="best", fontsize="small")
            ax.grid(True, alpha=0.3)
        axes[-1].set_xlabel("time [s]")
        if path is not None:
            fig.savefig(path, format="png", dpi=100)
        return fig
