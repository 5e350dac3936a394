"""Animation of any model's motion: a stick figure of its frames, flexible bodies and shapes in
3D, written as a self-contained HTML player or a GIF.

:mod:`.scene` computes what is drawn (pure numpy), :mod:`.render` draws it with matplotlib,
:mod:`.animate` ties both to a :class:`~mbsfmu.simulation.Result` (``result.animate(path)``).
"""

from .animate import Animation, animate, check_options
from .scene import Polyline, Scene, Wire, build_scene

__all__ = ["Animation", "animate", "check_options", "Scene", "Polyline", "Wire", "build_scene"]
