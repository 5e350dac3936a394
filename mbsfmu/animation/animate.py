"""Animation of a simulation result: the scene of every (or every n-th) output sample, written
as HTML or GIF on request (:meth:`mbsfmu.simulation.Result.animate`, ``mbsfmu animate``)."""

from __future__ import annotations

import math
import numbers
import pathlib

import numpy as np

from ..core.errors import ParameterError
from ..core.output_files import check_output_path
from . import render, viewer
from .scene import Scene, build_scene, check_deformation_scale

#: frames per second of the default playback speed are kept in this range
FPS_RANGE = (1.0, 30.0)
#: the fastest playback asked for (a GIF counts frame durations in hundredths of a second)
FPS_MAX = 100.0
#: the most animation frames drawn into one file (each is an image of its own)
MAX_FRAMES = 10_000
#: the largest image side in pixels (dpi x size)
MAX_PIXELS = 4000
#: what an .html file holds: the interactive three.js viewer of the poses (:mod:`.viewer`) or
#: matplotlib's player of pre-rendered images (:mod:`.render`)
PLAYERS = ("3d", "images")


class Animation:
    """The drawn motion of a result: one animation frame per kept output sample.

    ``times`` (samples,), ``frame_names``, ``points`` (samples, frames, 3: every frame origin
    in ISYS components), ``rotations`` (samples, frames, 3, 3) and ``lines`` (the stick figure
    and flexible bodies, :class:`~mbsfmu.animation.scene.Polyline`) come from the
    :class:`~mbsfmu.animation.scene.Scene`; ``fps`` is the playback speed of written files."""

    def __init__(self, scene: Scene, fps: float, traces=(), axes=()):
        self.scene = scene
        self.fps = fps
        self.traces, self.axes = traces, axes  # what the 3D viewer adds (frame names)

    times = property(lambda self: self.scene.times)
    frame_names = property(lambda self: self.scene.frame_names)
    points = property(lambda self: self.scene.points)
    rotations = property(lambda self: self.scene.rotations)
    lines = property(lambda self: self.scene.lines)
    wires = property(lambda self: self.scene.wires)

    def __len__(self) -> int:
        return self.scene.samples

    def write(self, path, dpi: float = 80, size: float = 5.0, player: str = "3d") -> pathlib.Path:
        """Write the animation: ``.html`` (a self-contained page: with ``player='3d'`` the
        interactive three.js viewer, with ``'images'`` a player of matplotlib images) or
        ``.gif``; ``dpi`` and ``size`` (inches, the figure is square) set the image size of the
        images and the GIF."""
        check_options(path, dpi=dpi, size=size, player=player, viewer_extras=bool(self.traces or self.axes))
        if player == "3d" and render.animation_format(path) == "html":
            return viewer.write_viewer(self.scene, path, self.fps, self.traces, self.axes)
        return render.write(self.scene, path, self.fps, dpi, size)

    def _repr_html_(self) -> str:
        """The 3D viewer inline in a Jupyter notebook (the page in an iframe's srcdoc)."""
        return viewer.iframe(self.scene, self.fps, self.traces, self.axes)

    def __repr__(self) -> str:
        return (f"<Animation {self.scene.title!r}: {len(self)} frames, t = {self.times[0]:g}.."
                f"{self.times[-1]:g} s, {len(self.frame_names)} frame origins, {len(self.lines)} lines>")


def animate(result, path=None, fps: float | None = None, every: int = 1, dpi: float = 80,
            size: float = 5.0, player: str = "3d", traces=(), axes=(),
            deformation_scale: float = 1.0) -> Animation:
    """The animation of ``result`` (see :mod:`mbsfmu.animation.scene` for what is drawn),
    written to ``path`` (.html or .gif) when given.

    ``every``: keep every n-th output sample (default all: one animation frame per sample).
    ``fps``: playback frames per second; the default plays in real time, 1 / (dt every), kept
    within 1-30 frames per second.  ``player``: what an .html file holds (:data:`PLAYERS`);
    ``traces`` and ``axes``: frame names whose origin's path, or whose x, y, z axes, the 3D
    viewer draws; ``deformation_scale``: the flexible bodies are drawn with their elastic
    coordinates multiplied by it (a finite number > 0; not 1 only for a model with a flexible
    body)."""
    check_options(path, fps, every, dpi, size, samples=len(result.t), player=player,
                  viewer_extras=bool(traces or axes))  # before any work
    check_deformation_scale(result.system, deformation_scale)
    keep = slice(None, None, int(every))
    t = np.asarray(result.t)[keep]
    if fps is None:
        step = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
        real_time = round(1.0 / step, 6) if step > 0 else FPS_RANGE[1]  # 20, not 19.999999999999996
        fps = min(max(real_time, FPS_RANGE[0]), FPS_RANGE[1])
    _positive("fps", fps)
    U = None if result.u is None else np.asarray(result.u)[..., keep]
    scene = build_scene(result.system, result.numeric, t, np.asarray(result.y)[:, keep], U,
                        deformation_scale=deformation_scale)
    return scene_animation(scene, fps, path, dpi, size, player, traces, axes)


def scene_animation(scene: Scene, fps: float, path=None, dpi: float = 80, size: float = 5.0,
                    player: str = "3d", traces=(), axes=()) -> Animation:
    """The :class:`Animation` of ``scene`` played at ``fps`` (the frames ``traces`` and ``axes``
    checked against the scene's), written to ``path`` when given (:meth:`Animation.write`): the
    end of :func:`animate` and of the runner's ``Result.animate``, whose options were checked by
    :func:`check_options` before the scene was drawn."""
    check_viewer_frames(scene.frame_names, traces, axes)
    anim = Animation(scene, float(fps), traces, axes)
    if path is not None:
        anim.write(path, dpi=dpi, size=size, player=player)
    return anim


def frame_samples(t, fps: float) -> np.ndarray:
    """The indices of the samples of ``t`` (increasing, evenly spaced as a diagram's grid) drawn at
    ``fps`` frames per second: every k-th sample with k = max(1, round(1 / (fps dt))) for the
    median spacing dt, so the frames are dt k apart, and the last sample too (the end of the
    run is always shown)."""
    t = np.asarray(t, dtype=float)
    n = len(t)
    if n < 2:
        return np.arange(n)
    dt = float(np.median(np.diff(t)))
    k = max(1, round(1.0 / (fps * dt))) if dt > 0 else 1
    idx = np.arange(0, n, k)
    return idx if idx[-1] == n - 1 else np.append(idx, n - 1)


def check_options(path=None, fps: float | None = None, every: int = 1, dpi: float = 80,
                  size: float = 5.0, samples: int | None = None, player: str = "3d",
                  viewer_extras: bool = False) -> None:
    """A ParameterError for options of :func:`animate` that cannot work, checked before any
    simulation or drawing: the file (a writable file name with a known suffix), ``every`` (a
    positive integer), ``fps`` (None or in (0, FPS_MAX]), ``dpi`` and ``size`` (positive, at most
    MAX_PIXELS pixels a side) and, given the number of output ``samples``, that there is one to
    draw and at most MAX_FRAMES frames; ``player`` one of PLAYERS, and ``viewer_extras`` (traces or
    axes asked for) only with a file the 3D viewer writes."""
    if player not in PLAYERS:
        raise ParameterError(f"animate: player must be one of {', '.join(map(repr, PLAYERS))}, "
                             f"got {player!r}")
    if viewer_extras and path is not None and (player != "3d" or render.animation_format(path) != "html"):
        raise ParameterError(f"animate: traces and axes are drawn by the 3D viewer only (an .html file "
                             f"with player '3d'), not in {str(path)!r} with player {player!r}")
    if not isinstance(every, numbers.Integral) or isinstance(every, bool) or every < 1:
        raise ParameterError(f"animate: every must be a positive integer, got {every!r}")
    if path is not None:
        check_output_path(path, "animate: path")
        render.animation_format(path)
    for name, v in (("fps", fps), ("dpi", dpi), ("size", size)):
        if v is not None:
            _positive(name, v)
    if fps is not None and fps > FPS_MAX:
        raise ParameterError(f"animate: fps must be at most {FPS_MAX:g} frames per second, got {fps!r}")
    if dpi * size > MAX_PIXELS:
        raise ParameterError(f"animate: dpi {dpi:g} x size {size:g} in = {dpi * size:.0f} pixels a side, "
                             f"more than {MAX_PIXELS}; choose a smaller dpi")
    if samples is not None:
        frames = -(-samples // int(every))
        if frames == 0:
            raise ParameterError("animate: the result has no samples")
        if frames > MAX_FRAMES:
            n = -(-samples // MAX_FRAMES)
            of = f" (one in {every} of {samples} samples)" if every > 1 else ""
            raise ParameterError(f"animate: {frames} frames{of} are more than {MAX_FRAMES}; keep every n-th "
                                 f"sample with n >= {n} (every=, --every) or use a longer output interval")


def check_viewer_frames(frame_names, traces=(), axes=()) -> None:
    """A ParameterError for ``traces`` or ``axes`` that are not names of ``frame_names``
    (checked by the command line before it simulates)."""
    viewer.frame_indices(list(frame_names), traces, "traces")
    viewer.frame_indices(list(frame_names), axes, "axes")


def _positive(name, v) -> None:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (math.isfinite(v) and v > 0):
        raise ParameterError(f"animate: {name} must be a positive number, got {v!r}")
