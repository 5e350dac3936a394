"""Mesh files as visual shapes (issue 27): ``System.visual(name, 'mesh', file=...)`` reads an STL
(binary, ASCII) or OBJ through trimesh when the model is made and keeps its vertices placed in
the frame, p = offset + R (scale * v).  The files are written by the test (tests/support/
mesh_files.py); bad files are in tests/fuzz/test_catalogue_cli_animate.py."""

import pathlib

import numpy as np
import pytest
import trimesh
from mesh_files import CONE_HEIGHT, CONE_RADIUS, CONE_SECTIONS, write_cone

import mbsfmu
from mbsfmu import rot_x

ROOT = pathlib.Path(__file__).resolve().parents[2]
DP = str(ROOT / "models" / "double_pendulum.py")


@pytest.mark.parametrize("kind", ["stl", "ascii.stl", "obj"])
def test_visual_mesh_is_the_files_vertices_scaled_rotated_and_moved(tmp_path, kind):
    """Every vertex of the file (trimesh.load) becomes offset + R (scale * v), R = rot_x(0.3)
    (given as the Rotation, as rel_rot is),
    scale per axis (2, 3, 0.5), offset (0.1, -0.2, 0.3), to 1e-15; the triangles are the file's;
    the cone has its 2 + 2 * sections triangles' vertices (apex, base centre, rim: sections + 2)."""
    path = write_cone(tmp_path, kind)
    s = mbsfmu.load_model(DP)
    c, sn = np.cos(0.3), np.sin(0.3)
    R = np.array([[1, 0, 0], [0, c, -sn], [0, sn, c]])  # rot_x(0.3): frame -> its reference
    scale, offset = (2.0, 3.0, 0.5), (0.1, -0.2, 0.3)
    s.visual("P2", "mesh", size=scale, file=path, offset=offset, rotation=rot_x(0.3), color="tab:green")
    v = s.visuals["P2"]
    ref = trimesh.load(path, force="mesh")
    assert len(ref.vertices) == CONE_SECTIONS + 2 and len(ref.faces) == 2 * CONE_SECTIONS
    want = np.asarray(offset) + (ref.vertices * scale) @ R.T
    np.testing.assert_allclose(v.mesh.vertices, want, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(v.mesh.faces, ref.faces)
    assert v.shape == "mesh" and v.size == scale and v.mesh.file == str(path)
    # the cone's apex (0, 0, H) sits at offset + R (0, 0, 0.5 H), its rim at radius r in the
    # file's x-y plane: a wrong rotation, order or scale would not
    apex = np.asarray(offset) + R @ [0.0, 0.0, 0.5 * CONE_HEIGHT]
    assert np.min(np.linalg.norm(v.mesh.vertices - apex, axis=1)) < 1e-15
    back = (v.mesh.vertices - offset) @ R / scale  # in the file's units again
    on_base = np.abs(back[:, 2]) < 1e-12
    assert on_base.sum() == CONE_SECTIONS + 1  # rim and base centre
    # the files' precision: float32 (STL), 8 decimals (trimesh's OBJ)
    assert np.linalg.norm(back[on_base, :2], axis=1).max() == pytest.approx(CONE_RADIUS, rel=1e-7)


def test_visual_mesh_scale_defaults_to_one_and_accepts_one_number(tmp_path):
    """No size: the file's own units; one number scales every axis alike."""
    path = write_cone(tmp_path, "stl")
    ref = trimesh.load(path, force="mesh").vertices
    s = mbsfmu.load_model(DP)
    s.visual("P1", "mesh", file=str(path))
    np.testing.assert_array_equal(s.visuals["P1"].mesh.vertices, ref)
    s.visual("P1", "mesh", file=path, size=0.001)
    np.testing.assert_allclose(s.visuals["P1"].mesh.vertices, 0.001 * ref, rtol=1e-15)
    assert s.visuals["P1"].size == (0.001,)
