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

from ..animation.animate import Animation, check_options, frame_samples, scene_animation
from ..core.errors import deprecated
from ..core.output_files import plot_path
from ..plotting import Figure, Line, Panel, column, matplotlib_figure, write
from .scheduling import DiagramError

#: frames per second :meth:`Result.animate` draws by default (a 1 kHz run: every 10th row)
ANIMATION_FPS = 100.0


class Result:
    """Recorded signals of a :class:`~mbsfmu.runner.diagram.Diagram` run.

    ``t``: the time points (``t0 + n * step``); ``res["block.port"]``: that signal at those
    points (``res["time"]`` is ``t``); ``columns``: ``time`` and the recorded signals in column
    order; ``values``: the ``(len(t), len(columns) - 1)`` array of the signals; ``stats``: run
    statistics (``steps``, ``wall_time`` [s], ``loop_iterations``, ``rollback``, and with
    ``realtime=True`` the real-time statistics of :mod:`mbsfmu.runner.realtime`); ``views``:
    what the blocks of the run can draw (block name -> :meth:`~mbsfmu.runner.block.Block.view`),
    which :meth:`animate` draws.
    """

    def __init__(self, t: np.ndarray, signals: Sequence[str], values: np.ndarray,
                 stats: dict | None = None, views: dict | None = None):
        self.t = np.asarray(t, dtype=float)
        self.views = dict(views or {})
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

    def animate(self, path=None, block: str | None = None, fps: float = ANIMATION_FPS, traces=(),
                axes=(), dpi: float = 80, size: float = 5.0, player: str = "3d",
                deformation_scale: float = 1.0) -> Animation:
        """The 3D animation of the model inside the FMU block ``block`` (default: the one block of
        the run whose FMU carries its view, ``resources/mbsfmu_viewer.json``, which
        ``mbsfmu.build_fmu`` writes into both kinds of FMU it builds from a model), drawn from
        the recorded coordinates ``<block>.<coordinate>`` with the model's constants as the block
        set them; written to ``path`` (``.html``: the interactive 3D viewer, or ``.gif``) when
        given.

        ``fps``: frames per second drawn (default :data:`ANIMATION_FPS`): every k-th row with
        k = round(1 / (fps step)), and the last row (:func:`~mbsfmu.animation.animate.
        frame_samples`); the page plays in real time (so there is no ``every=``: the rows follow
        from ``fps``).  The other options are those of :meth:`mbsfmu.Result.animate`, checked
        by the same functions: ``traces``, ``axes`` (frame names whose origin's path, or whose
        x, y, z axes, the 3D viewer draws), ``dpi`` and ``size`` (of the GIF and the images
        page), ``player`` (what an .html file holds: ``'3d'`` or ``'images'``) and
        ``deformation_scale`` (the flexible bodies drawn with their elastic coordinates
        multiplied by it, the title says so; not 1 only for a model with a flexible body).  A
        DiagramError names a block that does not exist or has no view (and why: e.g. an FMU not
        built by mbsfmu from a model), several candidates, or a signal the run did not record
        (and how to record it); a ParameterError a bad option.  A refused call writes nothing."""
        fps = ANIMATION_FPS if fps is None else fps
        check_options(path, fps, dpi=dpi, size=size, player=player, viewer_extras=bool(traces or axes))
        name, view, params = self._view(block)
        view.check_deformation_scale(deformation_scale)
        Y = np.array([self._view_signal(name, c) for c in view.coordinates]).reshape(-1, len(self.t))
        keep = frame_samples(self.t, fps)
        check_options(path, fps, samples=len(keep))
        t = self.t[keep]
        scene = view.scene(t, Y[:, keep], params, title=f"{name}: {view.layout.title}",
                           deformation_scale=deformation_scale)
        playback = (len(t) - 1) / (t[-1] - t[0]) if len(t) > 1 and t[-1] > t[0] else float(fps)
        return scene_animation(scene, min(playback, float(fps)), path, dpi, size, player, traces, axes)

    def _view(self, block):
        """(name, ModelView, constants) of the block to draw (see :meth:`animate`); a block whose
        carried view holds no pose (a model with a time parameter given as a Python function,
        which a pythonfmu FMU runs) counts as one without a view, with that reason."""
        missing = {n: v if isinstance(v, str) else "its FMU's view holds no pose: "
                   f"{v[0].unavailable}" for n, v in self.views.items()
                   if isinstance(v, str) or v[0].program is None}
        drawable = {n: v for n, v in self.views.items() if n not in missing}
        if block is None:
            if len(drawable) == 1:
                block = next(iter(drawable))
            elif drawable:
                raise DiagramError(f"animate: {len(drawable)} blocks of this run carry a 3D view "
                                   f"({', '.join(drawable)}); choose one with block=")
            else:
                why = "; ".join(f"{n}: {v}" for n, v in missing.items())
                raise DiagramError("animate: no block of this run carries a 3D view (an FMU block of "
                                   "an FMU that mbsfmu.build_fmu built from a model does)"
                                   + (f"; {why}" if why else ""))
        if isinstance(block, str) and block in missing:
            raise DiagramError(f"animate: block {block!r} has no 3D view: {missing[block]}")
        if not isinstance(block, str) or block not in drawable:
            known = ", ".join(drawable) or "none"
            raise DiagramError(f"animate: no block {block!r} with a 3D view in this run (blocks with "
                               f"one: {known})")
        view, params = drawable[block]
        return block, view, params

    def _view_signal(self, block, coordinate):
        signal = f"{block}.{coordinate}"
        if signal not in self._column:
            raise DiagramError(
                f"animate: the run did not record {signal!r}, the coordinate {coordinate!r} of the "
                f"model in {block!r}; record it: Diagram.run(..., record=[..., {signal!r}]) (or "
                f"record=[{block!r}] for all of the block's outputs; a coordinate is an output of "
                "the FMU block unless its outputs= leaves it out)")
        return self[signal]
