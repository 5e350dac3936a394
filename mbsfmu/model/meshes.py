"""Mesh files as visual shapes (:meth:`System.visual` with ``shape='mesh'``): a triangle mesh
read from an STL (binary or ASCII) or OBJ file by trimesh, checked, and placed in the frame it is
drawn at.

A vertex v of the file becomes the point of the frame K (K components)

    p = offset + R (scale * v)        (scale per axis, R a proper rotation matrix),

so the drawn vertex is r_K + S_K p in ISYS components, the same map as the other shapes' points
(:mod:`mbsfmu.animation.scene`).  The file is read when the model is made (``visual()``): a
bad file is reported where the model names it, and writing a page later reads no file.
"""

from __future__ import annotations

import math
import numbers
import pathlib
from dataclasses import dataclass

import numpy as np

from ..core.errors import ModelError
from .rotations import Rotation

#: file suffixes read as meshes (trimesh's file types)
MESH_SUFFIXES = {".stl": "stl", ".obj": "obj"}
#: the most triangles and vertices of one mesh (a page carries 12 bytes per vertex and per
#: triangle, base64: 100 000 triangles of a closed mesh are about 2.4 MB)
MAX_TRIANGLES = 100_000
MAX_VERTICES = 100_000


@dataclass(frozen=True, eq=False)  # compared and hashed as one object: its fields are arrays
class MeshShape:
    """A triangle mesh placed in its frame: ``vertices`` (V, 3) float, the points p of the module
    docstring (frame components, model length units), ``faces`` (F, 3) indices into them,
    counter-clockwise seen from outside as in the file; ``file`` the path it was read from and
    ``scale`` its scale (one or three numbers)."""

    file: str
    vertices: np.ndarray
    faces: np.ndarray
    scale: tuple = (1.0,)


def read_mesh(name: str, file, scale=1.0, offset=None, rotation=None) -> MeshShape:
    """The mesh of ``file`` for the visual of ``name``, scaled by ``scale`` (one positive number
    or one per axis), rotated by ``rotation`` (3x3, orthonormal, determinant +1, or
    a constant :class:`~mbsfmu.model.rotations.Rotation` such as rot_x(0.3)) and moved by
    ``offset`` (3 numbers) in the frame (module docstring).  Duplicate vertices are merged (as
    trimesh.load does).  A ModelError, naming the body and the file, for a missing or unreadable
    file, a suffix other than .stl/.obj, a mesh with no triangle or of no area, a vertex that is
    not finite, or more than MAX_TRIANGLES triangles or MAX_VERTICES vertices."""
    where = f"visual of {name!r}"
    scale = _numbers(where, "scale", scale, (1, 3), positive=True)
    offset = np.zeros(3) if offset is None else _numbers(where, "offset", offset, (3,))
    R = np.eye(3) if rotation is None else _rotation(where, rotation)
    if not isinstance(file, (str, pathlib.Path)):
        raise ModelError(f"{where}: a mesh needs its file (file='part.stl' or .obj), got {file!r}")
    path = pathlib.Path(file)
    where = f"{where}: mesh file {str(file)!r}"
    kind = MESH_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise ModelError(f"{where}: unknown suffix {path.suffix or '(none)'!r}; mesh files are "
                         f"{', '.join(MESH_SUFFIXES)}")
    if path.is_dir():
        raise ModelError(f"{where}: is a directory, not a mesh file")
    if not path.is_file():
        raise ModelError(f"{where}: no such file (relative paths start at the working directory "
                         f"{str(pathlib.Path.cwd())!r})")
    import trimesh  # loaded only for a mesh

    try:
        with open(path, "rb") as fh:
            raw = trimesh.load(fh, file_type=kind, force="mesh", process=False)
        vertices = np.asarray(raw.vertices, dtype=float).reshape(-1, 3)
        faces = np.asarray(raw.faces, dtype=np.int64).reshape(-1, 3)
    except Exception as exc:  # any parser's failure is an unreadable file
        raise ModelError(f"{where}: not a readable {kind.upper()} mesh "
                         f"({type(exc).__name__}: {exc})") from None
    if len(faces) == 0:
        raise ModelError(f"{where}: no triangle read from it ({len(vertices)} vertices): an empty or "
                         f"damaged file, or not {kind.upper()}")
    bad = ~np.all(np.isfinite(vertices), axis=1)
    if bad.any():
        raise ModelError(f"{where}: vertex {int(np.argmax(bad))} is not finite "
                         f"({vertices[np.argmax(bad)].tolist()}; {int(bad.sum())} of {len(vertices)} "
                         f"vertices are not)")
    mesh = trimesh.Trimesh(vertices, faces, process=True)  # duplicate vertices merged
    vertices, faces = np.asarray(mesh.vertices, dtype=float), np.asarray(mesh.faces, dtype=np.int64)
    if len(faces) > MAX_TRIANGLES or len(vertices) > MAX_VERTICES:
        raise ModelError(f"{where}: {len(faces)} triangles and {len(vertices)} vertices, more than "
                         f"{MAX_TRIANGLES} triangles or {MAX_VERTICES} vertices; simplify the mesh")
    if not mesh.area > 0:
        raise ModelError(f"{where}: its {len(faces)} triangles have no area (all vertices on one "
                         f"point or line)")
    placed = offset + (vertices * scale) @ R.T
    return MeshShape(str(file), placed, faces, tuple(float(x) for x in scale))


def _numbers(where, what, value, lengths, positive=False) -> np.ndarray:
    """``value`` as finite (positive) floats, one or three as ``lengths`` allows."""
    values = list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value]
    ok = len(values) in lengths and all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)
        and (v > 0 or not positive) for v in values)
    if not ok:
        kind = "positive numbers" if positive else "finite numbers"
        count = " or ".join(str(n) for n in lengths)
        raise ModelError(f"{where}: the mesh's {what} must be {count} {kind}, got {_shown(value)!r}")
    return np.array(values, dtype=float)


def _rotation(where, rotation) -> np.ndarray:
    """A 3x3 rotation matrix, orthonormal to 1e-9 with determinant +1, or a
    :class:`~mbsfmu.model.rotations.Rotation` of constant angles (its matrix, as ``rel_rot``
    places a frame)."""
    try:
        R = np.array(rotation.matrix() if isinstance(rotation, Rotation) else rotation, dtype=float)
    except (TypeError, ValueError):
        R = None
    if R is None or R.shape != (3, 3) or not np.all(np.isfinite(R)) \
            or np.abs(R @ R.T - np.eye(3)).max() > 1e-9 or np.linalg.det(R) < 0:
        raise ModelError(f"{where}: the mesh's rotation must be a 3x3 rotation matrix (orthonormal, "
                         f"determinant +1) or a rotation of constant angles (e.g. rot_z(0.3)), "
                         f"got {_shown(rotation)!r}")
    return R


def _shown(value):
    """A value as a message shows it: an array as its nested list (one line)."""
    return value.tolist() if isinstance(value, np.ndarray) else value
