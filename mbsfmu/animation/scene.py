"""What an animation draws, as numbers: frame origins, stick lines, shape wires per sample.

From a :class:`~mbsfmu.model.System` and a trajectory y(t) the scene holds, for every output
sample,

* the origin r_K (ISYS components) of every frame K, ISYS included (``points``, shape
  (samples, frames, 3)) and its rotation S_K (``rotations``), both from the symbolic kinematics
  of seed 002 eq. 3 (:meth:`NumericModel.pose_series`);
* the stick figure (``lines``): each frame's origin joined to its reference frame's origin,
  segments that keep zero length over the whole motion left out, and so are the segments from a
  flexible body's frame of reference to its node frames (its polyline draws those; straight
  chords from the root to each node would hide the bending).  A segment belongs to the body
  of the frame it leads to (a body's primary and cg frames are the body's, any other frame is
  its reference frame's body); a body's primary frame leads from a point of its parent, so that
  segment is drawn in the parent's colour; segments on ISYS are the ground's (grey);
* each flexible body (``system.flexible_bodies``: name -> object with ``node_frames``) as one
  polyline through its node frames' origins, in node order;
* the wire frame of every shape given with :meth:`System.visual` (``wires``), placed at the
  frame's pose: world points r_K + S_K p for the shape's local edge points p (a mesh's: the
  edges of its vertices' bounding box in the frame; the wire also carries the mesh itself,
  which the 3D viewer draws).

``deformation_scale`` s draws flexible bodies with their elastic coordinates q multiplied by s
(the other coordinates as they are): the node frames are placed at c(s q), so where c is linear
in q (a node's position in its body's frame of reference) the drawn deflection is s times the
computed one; a body hanging from a node frame also follows that node's rotation at s q.

A natural-coordinate model (:class:`~mbsfmu.model.LagrangianSystem`, seed 003) has no frames:
its scene's "frames" are the points of its elements and distance constraints (``system.drawn``:
a rod's two ends, a point mass, a rigid element's global points, a distance's two ends; a
distance is drawn as a line, so a loop closed by one shows closed), each evaluated from the
coordinates, named by its declared point (``A1``) or as ``<element>[i]``, with no rotation
(identity); each element with two or more points is a polyline through them (closed for three
or more).  A planar
model (dim 2) lies in the x-y plane with y up (``Scene.up``), a spatial one has z up.

Nothing here plots; :mod:`.render` draws a scene.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import ModelError, ParameterError
from ..equations.derive import derive
from ..model.lagrangian import LagrangianSystem
from ..model.meshes import MeshShape
from ..model.multibody import System

#: colour of the segments fixed to the ground (ISYS)
GROUND_COLOR = "0.55"
#: points per circle of the sphere and cylinder wires
CIRCLE_POINTS = 49


@dataclass(frozen=True)
class Polyline:
    """A line through the origins of frames (indices into ``Scene.frame_names``), drawn in
    ``color``; ``name`` is the body (or flexible body) it belongs to, '' for the ground."""

    name: str
    frames: tuple[int, ...]
    color: str


@dataclass(frozen=True)
class Wire:
    """The edges of a shape in ISYS components at every sample: ``points`` (samples, m, 3),
    consecutive points joined, rows of NaN separating the edges; ``frame`` (index into
    ``Scene.frame_names``) is the frame the shape sits at and ``size`` its visual's size values,
    so a viewer can draw the solid shape at the frame's pose instead."""

    name: str
    shape: str
    points: np.ndarray
    color: str
    frame: int = -1
    size: tuple = ()
    mesh: object = None  # a mesh shape's MeshShape (vertices in the frame, faces)


@dataclass
class Scene:
    """Everything an animation draws, per output sample (see the module docstring)."""

    title: str
    times: np.ndarray              # (samples,)
    frame_names: list[str]
    points: np.ndarray             # (samples, frames, 3) frame origins, ISYS components
    rotations: np.ndarray          # (samples, frames, 3, 3) frame rotations S_K
    lines: list[Polyline]
    wires: list[Wire]
    up: tuple = (0.0, 0.0, 1.0)    # the direction shown upwards

    @property
    def samples(self) -> int:
        return len(self.times)

    def line_points(self, line: Polyline) -> np.ndarray:
        """The polyline's vertices at every sample, (samples, len(line.frames), 3)."""
        return self.points[:, list(line.frames)]

    def bounds(self) -> tuple[np.ndarray, float]:
        """Centre (3,) and half width of one cube holding every point and wire over the whole
        motion (half width 1 for a scene that is a single point)."""
        clouds = [self.points.reshape(-1, 3)] + [w.points.reshape(-1, 3) for w in self.wires]
        allp = np.concatenate(clouds)
        allp = allp[np.all(np.isfinite(allp), axis=1)]
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        half = float(np.max(hi - lo)) / 2
        return (lo + hi) / 2, half if half > 0 else 1.0


@dataclass(frozen=True)
class Shape:
    """A shape of :meth:`System.visual` as drawn: at the frame ``frame`` (index into the
    layout's frame names), its visual's ``size`` values and ``color``; a mesh shape's
    :class:`~mbsfmu.model.meshes.MeshShape` in ``mesh``."""

    name: str
    shape: str
    size: tuple
    color: str
    frame: int
    mesh: object = None


@dataclass(frozen=True)
class Layout:
    """What a model draws, before any motion: the frames (a natural-coordinate model's points),
    the candidate stick segments (a frame's origin joined to its reference frame's; those that
    keep zero length over a motion are left out by :func:`scene_of`), the lines always drawn
    (flexible bodies, natural elements), the shapes and the direction shown upwards.  A model's
    layout is :func:`layout_of`; it travels with an FMU as JSON (:mod:`.model_view`)."""

    title: str
    frame_names: list
    segments: list          # Polyline (ref, frame) pairs
    lines: list             # Polyline
    shapes: list            # Shape
    up: tuple = (0.0, 0.0, 1.0)

    def to_dict(self) -> dict:
        return {"title": self.title, "frames": list(self.frame_names),
                "segments": [[p.name, list(p.frames), p.color] for p in self.segments],
                "lines": [[p.name, list(p.frames), p.color] for p in self.lines],
                "shapes": [[s.name, s.shape, list(s.size), s.color, s.frame, _mesh_dict(s.mesh)]
                           for s in self.shapes],
                "up": list(self.up)}

    @classmethod
    def from_dict(cls, d: dict) -> Layout:
        """The layout of :meth:`to_dict`; a KeyError, TypeError or ValueError where ``d`` is
        malformed (the caller names the file)."""
        frames = [str(n) for n in d["frames"]]

        def lines(rows):
            out = []
            for name, idx, color in rows:
                idx = tuple(int(i) for i in idx)
                if any(not 0 <= i < len(frames) for i in idx):
                    raise ValueError(f"line {name!r} refers to a frame that does not exist")
                out.append(Polyline(str(name), idx, str(color)))
            return out

        shapes = [Shape(str(n), str(sh), tuple(float(x) for x in size), str(c), int(k), _mesh_of(mesh))
                  for n, sh, size, c, k, mesh in d["shapes"]]
        for s in shapes:
            if not (s.shape in SHAPES or (s.shape == "mesh" and s.mesh is not None)) or \
                    not 0 <= s.frame < len(frames):
                raise ValueError(f"shape {s.name!r}: unknown shape {s.shape!r} or frame {s.frame}")
        return cls(str(d["title"]), frames, lines(d["segments"]), lines(d["lines"]), shapes,
                   tuple(float(c) for c in d["up"]))


def layout_of(system) -> Layout:
    """The :class:`Layout` of ``system`` (see the module docstring)."""
    check_drawable(system)
    if isinstance(system, LagrangianSystem):
        _, names, lines = _natural_points(system)
        up = (0.0, 1.0, 0.0) if system.dim == 2 else (0.0, 0.0, 1.0)
        return Layout(system.title, names, [], lines, [], up)
    names = list(system.frames)
    index = {n: i for i, n in enumerate(names)}
    colors = _body_colors(system)
    shapes = [_shape(system, v, index, colors) for v in system.visuals.values() if v.shape != "line"]
    return Layout(system.title, names, _stick_segments(system, names, index, colors),
                  _flexible_lines(system, index, colors), shapes)


def pose_expressions(system) -> list:
    """The symbolic pose of every frame of :func:`layout_of`'s ``frame_names``, 12 expressions a
    frame: the origin r_K (ISYS components, seed 002 eq. 3) and the rotation S_K row by row (a
    natural-coordinate model's point: its coordinates, 0 for z of a planar one, and the
    identity), in the coordinates, time, time parameters, inputs and constants."""
    if isinstance(system, LagrangianSystem):
        exprs = _natural_points(system)[0]
        eye = (1, 0, 0, 0, 1, 0, 0, 0, 1)
        return [x for p in exprs for x in (*p, *([0] * (3 - len(p))), *eye)]
    kin = derive(system).kinematics
    return [x for n in system.frames for x in (*kin[n].r, *kin[n].S)]


def build_scene(system, numeric, t, Y, U=None, title: str | None = None,
                deformation_scale: float = 1.0) -> Scene:
    """The scene of ``system`` along the trajectory Y (f, samples) at times t, with the parameter
    values bound in ``numeric`` (a :class:`NumericModel`) and inputs U (default its inputs);
    ``deformation_scale`` multiplies the flexible bodies' elastic coordinates (module
    docstring; the title says it when it is not 1)."""
    layout = layout_of(system)
    check_deformation_scale(system, deformation_scale)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    if isinstance(system, LagrangianSystem):
        exprs = _natural_points(system)[0]
        dim = system.dim
        vals = numeric.configuration_series("natural_points", lambda: [c for p in exprs for c in p],
                                            t, Y, U)
        n = len(t)
        points = np.zeros((n, len(exprs), 3))
        points[:, :, :dim] = np.moveaxis(vals.reshape(len(exprs), dim, n), -1, 0)
        rotations = np.broadcast_to(np.eye(3), (n, len(exprs), 3, 3)).copy()
        return scene_of(layout, t, points, rotations, title)
    title = title or system.title
    if deformation_scale != 1:
        Y, title = scale_deformation(np.reshape(Y, (numeric.f, -1)), elastic_rows(system, numeric),
                                     deformation_scale, title)
    points, rotations = numeric.pose_series(layout.frame_names, t, Y, U)
    return scene_of(layout, t, points, rotations, title)


def scene_of(layout: Layout, t, points, rotations, title: str | None = None,
             drop_still: bool = True) -> Scene:
    """The :class:`Scene` of ``layout`` with the frames' origins ``points`` (samples, frames, 3)
    and rotations (samples, frames, 3, 3) at the times ``t``: the stick segments that move
    apart at some sample (every one if not ``drop_still``), the lines, each shape's wire at its
    frame's pose."""
    scale = max(float(np.max(np.abs(points))), 1.0) if points.size else 1.0
    lines = [seg for seg in layout.segments if not drop_still or
             np.max(np.linalg.norm(points[:, seg.frames[1]] - points[:, seg.frames[0]], axis=-1))
             > 1e-12 * scale]  # a zero-length segment (two frames at one point) is left out
    wires = [_wire(s, points, rotations) for s in layout.shapes]
    return Scene(title or layout.title, np.asarray(t, dtype=float), list(layout.frame_names), points,
                 rotations, lines + list(layout.lines), wires, tuple(layout.up))


def elastic_coordinates(system) -> list[str]:
    """The names of the flexible bodies' elastic coordinates (none for a model without one)."""
    return [c for body in getattr(system, "flexible_bodies", {}).values() for c in body.coordinates]


def elastic_rows(system, numeric) -> list[int]:
    """The rows of the flexible bodies' elastic coordinates in a trajectory Y."""
    names = list(numeric.coordinate_names)
    return [names.index(c) for c in elastic_coordinates(system)]


def scale_deformation(Y, rows, scale: float, title: str) -> tuple[np.ndarray, str]:
    """A copy of the trajectory Y (coordinates, samples) with the elastic coordinates' ``rows``
    multiplied by ``scale`` (module docstring), and ``title`` saying so."""
    Y = np.array(Y, dtype=float)
    Y[list(rows)] *= scale
    return Y, f"{title} (elastic deformation x{scale:g})"


def check_deformation_scale(system, scale) -> None:
    """A ParameterError for a deformation scale that is not a finite number > 0, or not 1 for a
    model with no flexible body."""
    check_deformation_scale_of(system.name, bool(getattr(system, "flexible_bodies", None)), scale)


def check_deformation_scale_of(model: str, flexible: bool, scale) -> None:
    """:func:`check_deformation_scale` for the model named ``model`` that has a flexible body
    (``flexible``) or not; also for a model known only by its carried view."""
    ok = isinstance(scale, (int, float, np.floating)) and not isinstance(scale, bool)
    if not (ok and np.isfinite(scale) and scale > 0):
        raise ParameterError(f"animate: deformation_scale must be a finite number > 0, got {scale!r}")
    if scale != 1 and not flexible:
        raise ParameterError(f"animate: deformation_scale {scale:g} scales flexible bodies' elastic "
                             f"coordinates, and model {model!r} has no flexible body; leave it at 1")


def check_drawable(system) -> None:
    """A ModelError for a model with nothing to draw: a System with no frame besides ISYS, a
    LagrangianSystem with no element (rod, point mass, rigid body) or distance constraint."""
    if isinstance(system, LagrangianSystem):
        if not system.drawn:
            raise ModelError(f"animate: model {system.name!r} has no rod, point mass, rigid body or "
                             "distance constraint, so there is nothing to draw")
    elif not isinstance(system, System) or len(system.frames) < 2:
        raise ModelError(f"animate: model {system.name!r} has no frames besides ISYS, so there is "
                         "nothing to draw")


def drawn_frame_names(system) -> list[str]:
    """The names of the scene's frames (a natural-coordinate model's: its points) before any
    simulation, for checking names a user gives."""
    check_drawable(system)
    if isinstance(system, LagrangianSystem):
        return _natural_points(system)[1]
    return list(system.frames)


def _natural_points(system):
    """A natural-coordinate model's drawn points: their expressions (tuples), names, and the
    elements' polylines through them."""
    index, exprs, names = {}, [], []
    by_value = {tuple(p): n for n, p in system.pvs.items()}
    lines = []
    for i, (element, pts) in enumerate(system.drawn):
        ks = []
        for j, p in enumerate(pts):
            key = tuple(p)
            if key not in index:
                index[key] = len(exprs)
                exprs.append(key)
                names.append(by_value.get(key, f"{element}[{j}]"))
            ks.append(index[key])
        if len(ks) >= 3:
            ks.append(ks[0])
        if len(ks) >= 2:
            lines.append(Polyline(element, tuple(ks), f"C{i % 10}"))
    return exprs, names, lines


def _body_colors(system) -> dict[str, str]:
    """Each body's and flexible body's colour: its visual's, else the next of matplotlib's
    default cycle C0, C1, ..."""
    out = {}
    owners = list(system.bodies) + list(system.flexible_bodies)
    for i, name in enumerate(owners):
        v = system.visuals.get(name)
        out[name] = v.color if v is not None and v.color else f"C{i % 10}"
    return out


def _owner(system, frame: str) -> str:
    """The body a frame belongs to ('' for ISYS and frames fixed to it)."""
    by_frame = {b.frame: b.name for b in system.bodies.values()}
    by_frame.update({b.cg_frame: b.name for b in system.bodies.values()})
    while frame is not None:
        if frame in by_frame:
            return by_frame[frame]
        frame = system.frames[frame].ref
    return ""


def _stick_segments(system, names, index, colors) -> list[Polyline]:
    primary = {b.frame for b in system.bodies.values()}
    nodes = {(n, getattr(b, "frame", None)) for b in getattr(system, "flexible_bodies", {}).values()
             for n in b.node_frames}
    segments = []
    for name in names:
        ref = system.frames[name].ref
        if ref is None or (name, ref) in nodes:  # a node placed in its body's frame: drawn by the
            continue                             # body's polyline, not by a chord from that frame
        owner = _owner(system, ref if name in primary else name)
        segments.append(Polyline(owner, (index[ref], index[name]), colors.get(owner, GROUND_COLOR)))
    return segments


def _flexible_lines(system, index, colors) -> list[Polyline]:
    lines = []
    for name, body in getattr(system, "flexible_bodies", {}).items():
        nodes = list(getattr(body, "node_frames", []))
        unknown = [n for n in nodes if n not in index]
        if unknown:
            raise ModelError(f"flexible body {name!r}: unknown node frame(s) {', '.join(map(repr, unknown))} "
                             f"(known frames: {', '.join(index)})")
        if len(nodes) < 2:
            raise ModelError(f"flexible body {name!r}: at least two node frames are needed to draw it, "
                             f"got {nodes}")
        lines.append(Polyline(name, tuple(index[n] for n in nodes), colors[name]))
    return lines


def _shape(system, visual, index, colors) -> Shape:
    """A visual's shape; a body's shape sits at its cg frame."""
    body = system.bodies.get(visual.name)
    frame = body.cg_frame if body is not None else visual.name
    color = visual.color or colors.get(visual.name) or colors.get(_owner(system, frame), GROUND_COLOR)
    return Shape(visual.name, visual.shape, tuple(float(x) for x in visual.size), color, index[frame],
                 visual.mesh if visual.shape == "mesh" else None)


def _wire(shape: Shape, points, rotations) -> Wire:
    """A shape's local edge points p (NaN rows between edges; a mesh's: the edges of its
    vertices' bounding box) mapped to r_K + S_K p at every sample."""
    k = shape.frame
    if shape.shape == "mesh":
        vertices = shape.mesh.vertices
        lo, hi = vertices.min(axis=0), vertices.max(axis=0)
        local = box_edges(*(hi - lo)) + (lo + hi) / 2
    else:
        local = SHAPES[shape.shape](*shape.size)
    world = points[:, k, None, :] + np.einsum("nij,mj->nmi", rotations[:, k], local)
    return Wire(shape.name, shape.shape, world, shape.color, k, shape.size, shape.mesh)


def _mesh_dict(mesh):
    """A mesh shape as JSON-ready lists (None for other shapes)."""
    if mesh is None:
        return None
    return {"file": str(mesh.file), "vertices": np.asarray(mesh.vertices, dtype=float).ravel().tolist(),
            "faces": np.asarray(mesh.faces, dtype=int).ravel().tolist(),
            "scale": [float(x) for x in mesh.scale]}


def _mesh_of(d):
    """The MeshShape of :func:`_mesh_dict`; a ValueError for vertices that are not finite
    triples or faces that are not triples of their indices."""
    if d is None:
        return None
    vertices = np.asarray(d["vertices"], dtype=float).reshape(-1, 3)
    faces = np.asarray(d["faces"], dtype=np.int64).reshape(-1, 3)
    if not np.all(np.isfinite(vertices)) or len(faces) == 0 or faces.min() < 0 or \
            faces.max() >= len(vertices):
        raise ValueError(f"mesh {d.get('file')!r}: vertices not finite or faces not indices of them")
    return MeshShape(str(d["file"]), vertices, faces, tuple(float(x) for x in d["scale"]))


_BREAK = np.full((1, 3), np.nan)


def _circle(radius, axis: int, offset: float = 0.0) -> np.ndarray:
    """A circle of ``radius`` about the local ``axis`` (0, 1, 2), centred ``offset`` along it."""
    phi = np.linspace(0.0, 2 * np.pi, CIRCLE_POINTS)
    out = np.zeros((CIRCLE_POINTS, 3))
    a, b = [i for i in range(3) if i != axis]
    out[:, a], out[:, b], out[:, axis] = radius * np.cos(phi), radius * np.sin(phi), offset
    return out


def _join(pieces) -> np.ndarray:
    out = []
    for p in pieces:
        out += [p, _BREAK]
    return np.concatenate(out[:-1])


def sphere_edges(radius) -> np.ndarray:
    """Three great circles of the sphere, about the frame's x, y and z axes."""
    return _join([_circle(radius, axis) for axis in range(3)])


def box_edges(lx, ly, lz) -> np.ndarray:
    """The 12 edges of a box centred on the frame's origin, edges along its x, y, z axes."""
    h = np.array([lx, ly, lz]) / 2
    corners = [np.array([sx, sy, sz]) * h for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    edges = [np.array([a, b]) for i, a in enumerate(corners) for b in corners[i + 1:]
             if np.count_nonzero(a != b) == 1]
    return _join(edges)


def cylinder_edges(radius, length) -> np.ndarray:
    """The two rims and four generators of a cylinder centred on the frame's origin, its axis
    along the frame's z axis."""
    rims = [_circle(radius, 2, s * length / 2) for s in (-1, 1)]
    gens = [np.array([[radius * c, radius * s, -length / 2], [radius * c, radius * s, length / 2]])
            for c, s in ((1, 0), (0, 1), (-1, 0), (0, -1))]
    return _join(rims + gens)


#: shape -> local edge points from the visual's size values
SHAPES = {"sphere": sphere_edges, "box": box_edges, "cylinder": cylinder_edges}
