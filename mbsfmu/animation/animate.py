"""Animation of a simulation result: the scene of every (or every n-th) output sample, written
as HTML or GIF on request (:meth:`mbsfmu.simulation.Result.animate`, ``mbsfmu animate``)."""

from __future__ import annotations

import math
import numbers
import pathlib

import numpy as np

from ..errors import ParameterError
from . import render
from .scene import Scene, build_scene

#: frames per second of the default playback speed are kept in this range
FPS_RANGE = (1.0, 30.0)


class Animation:
    """The drawn motion of a result: one animation frame per kept output sample.

    ``times`` (samples,), ``frame_names``, ``points`` (samples, frames, 3: every frame origin
    in ISYS components), ``rotations`` (samples, frames, 3, 3) and ``lines`` (the stick figure
    and flexible bodies, :class:`~mbsfmu.animation.scene.Polyline`) come from the
    :class:`~mbsfmu.animation.scene.Scene`; ``fps`` is the playback speed of written files."""

    def __init__(self, scene: Scene, fps: float):
        self.scene = scene
        self.fps = fps

    times = property(lambda self: self.scene.times)
    frame_names = property(lambda self: self.scene.frame_names)
    points = property(lambda self: self.scene.points)
    rotations = property(lambda self: self.scene.rotations)
    lines = property(lambda self: self.scene.lines)
    wires = property(lambda self: self.scene.wires)

    def __len__(self) -> int:
        return self.scene.samples

    def write(self, path, dpi: float = 80, size: float = 5.0) -> pathlib.Path:
        """Write the animation: ``.html`` (a self-contained page with a player) or ``.gif``;
        ``dpi`` and ``size`` (inches, the figure is square) set the image size."""
        for name, v in (("dpi", dpi), ("size", size)):
            _positive(name, v)
        return render.write(self.scene, path, self.fps, dpi, size)

    def __repr__(self) -> str:
        return (f"<Animation {self.scene.title!r}: {len(self)} frames, t = {self.times[0]:g}.."
                f"{self.times[-1]:g} s, {len(self.frame_names)} frame origins, {len(self.lines)} lines>")


def animate(result, path=None, fps: float | None = None, every: int = 1, dpi: float = 80,
            size: float = 5.0) -> Animation:
    """The animation of ``result`` (see :mod:`mbsfmu.animation.scene` for what is drawn),
    written to ``path`` (.html or .gif) when given.

    ``every``: keep every n-th output sample (default all: one animation frame per sample).
    ``fps``: playback frames per second; the default plays in real time, 1 / (dt every), kept
    within 1-30 frames per second."""
    if not isinstance(every, numbers.Integral) or isinstance(every, bool) or every < 1:
        raise ParameterError(f"animate: every must be a positive integer, got {every!r}")
    if path is not None:
        render.animation_format(path)  # refuse an unknown suffix before any work
    keep = slice(None, None, int(every))
    t = np.asarray(result.t)[keep]
    if len(t) == 0:
        raise ParameterError("animate: the result has no samples")
    if fps is None:
        step = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
        real_time = round(1.0 / step, 6) if step > 0 else FPS_RANGE[1]  # 20, not 19.999999999999996
        fps = min(max(real_time, FPS_RANGE[0]), FPS_RANGE[1])
    _positive("fps", fps)
    U = None if result.u is None else np.asarray(result.u)[..., keep]
    scene = build_scene(result.system, result.numeric, t, np.asarray(result.y)[:, keep], U)
    anim = Animation(scene, float(fps))
    if path is not None:
        anim.write(path, dpi=dpi, size=size)
    return anim


def _positive(name, v) -> None:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (math.isfinite(v) and v > 0):
        raise ParameterError(f"animate: {name} must be a positive number, got {v!r}")
