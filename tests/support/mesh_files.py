"""Small mesh files written by the tests themselves (trimesh's primitives, no downloaded file):
a cone in binary STL, ASCII STL and OBJ, for the mesh shapes of ``System.visual``."""

import pathlib

import trimesh

#: the cone: base radius and height [m], its apex on +z (so a wrong rotation shows)
CONE_RADIUS, CONE_HEIGHT, CONE_SECTIONS = 0.5, 1.0, 16


def cone():
    """The test cone as a trimesh.Trimesh (base centred on the origin, apex at z = CONE_HEIGHT)."""
    return trimesh.creation.cone(radius=CONE_RADIUS, height=CONE_HEIGHT, sections=CONE_SECTIONS)


def write_cone(folder, kind: str) -> pathlib.Path:
    """The cone written to ``folder`` as ``kind``: 'stl' (binary), 'ascii.stl' or 'obj'."""
    path = pathlib.Path(folder) / f"cone.{kind}"
    mesh = cone()
    if kind == "ascii.stl":
        path.write_text(trimesh.exchange.stl.export_stl_ascii(mesh))
    else:
        mesh.export(path)
    return path
