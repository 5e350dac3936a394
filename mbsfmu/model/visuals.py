"""How the animation (:mod:`mbsfmu.animation`) draws a System's bodies, frames and flexible
bodies: a shape (line, sphere, box, cylinder) of positive sizes, or a mesh file (:mod:`.meshes`),
and a matplotlib colour.
"""

from __future__ import annotations

from ..core.errors import ModelError
from .element_checks import visual_size
from .elements import Visual
from .meshes import read_mesh


class Visuals:
    """The drawing command of a System (a part of :class:`~mbsfmu.model.System`)."""

    #: shapes of :meth:`visual` and the size values each takes (with their meaning)
    VISUAL_SHAPES = {"line": (), "sphere": ("radius",), "box": ("length x", "length y", "length z"),
                     "cylinder": ("radius", "length"), "mesh": ("scale",)}

    def visual(self, name: str, shape: str = "line", size=None, color: str | None = None, file=None,
               offset=None, rotation=None) -> str:
        """How the animation (:mod:`mbsfmu.animation`) draws a body, a frame or a flexible body.

        For a body, ``color`` colours its stick lines and the shape sits at its centre of
        gravity (the cg frame's pose); for a frame, the shape sits at that frame.  ``shape``:
        ``'line'`` (the stick figure only, no size), ``'sphere'`` (size = radius), ``'box'``
        (size = edge lengths along the frame's x, y, z, or one number for a cube) or
        ``'cylinder'`` (size = (radius, length), axis along the frame's z); sizes are positive
        numbers in model length units.  ``'mesh'``: the triangle mesh of ``file`` (an STL,
        binary or ASCII, or an OBJ; read now, :func:`~mbsfmu.model.meshes.read_mesh`), its
        vertices v placed at offset + rotation (size * v) in the frame (size = scale, one
        number or one per axis, default 1: e.g. 0.001 for a file in mm; ``offset`` 3 numbers,
        ``rotation`` a 3x3 rotation matrix, defaults 0 and identity).  ``color`` is any
        matplotlib colour ('tab:red', '#1f77b4').  The 3D viewer draws solid shapes; the
        matplotlib images draw wire frames (edges, three great circles, two rims and four
        generators; a mesh's bounding box)."""
        where = f"visual({name!r})"
        name = getattr(name, "name", name)
        known = list(self.frames) + list(self.flexible_bodies)
        if not isinstance(name, str) or name not in known:
            raise ModelError(f"{where}: no body, frame or flexible body of that name "
                             f"(known: {', '.join(known)})")
        if shape not in self.VISUAL_SHAPES:
            raise ModelError(f"visual of {name!r}: unknown shape {shape!r} "
                             f"(shapes: {', '.join(self.VISUAL_SHAPES)})")
        if shape != "line" and name in self.flexible_bodies:
            raise ModelError(f"visual of {name!r}: a flexible body is drawn as a line through its "
                             f"nodes; give only a color (shape 'line'), not {shape!r}")
        mesh = None
        if shape == "mesh":
            mesh = read_mesh(name, file, 1.0 if size is None else size, offset, rotation)
            values = mesh.scale
        elif file is not None or offset is not None or rotation is not None:
            raise ModelError(f"visual of {name!r}: file, offset and rotation are for shape 'mesh', "
                             f"not {shape!r}")
        else:
            values = visual_size(name, shape, size, self.VISUAL_SHAPES[shape])
        if color is not None:
            from matplotlib.colors import is_color_like  # matplotlib: loaded only for a colour

            if not isinstance(color, str) or not is_color_like(color):
                raise ModelError(f"visual of {name!r}: {color!r} is not a matplotlib colour "
                                 "(e.g. 'tab:red', 'C1', '#1f77b4')")
        self.visuals[name] = Visual(name, shape, values, color, mesh)
        return name
