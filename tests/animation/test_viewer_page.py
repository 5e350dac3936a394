"""The 3D viewer page's content (issue 27): the poses it carries decode to the scene's to
float32 precision, its shapes sit at the right frames with their sizes and colours, and the
three.js it inlines is the vendored one with its licence named.  (What a browser makes of the
page: test_viewer_browser.py.)"""

import base64
import html
import json
import pathlib
import re

import numpy as np
import pytest

import mbsfmu
from mbsfmu.animation import viewer
from mbsfmu.core.errors import ParameterError

ROOT = pathlib.Path(__file__).resolve().parents[2]
DP = str(ROOT / "models" / "double_pendulum.py")


def page_data(text):
    """The JSON scene data of a viewer page and its float32 arrays decoded."""
    m = re.search(r'<script id="mbs-data" type="application/json">(.*?)</script>', text, re.S)
    data = json.loads(m.group(1))
    arrays = {k: np.frombuffer(base64.b64decode(data[k]), dtype="<f4")
              for k in ("times", "positions", "rotations")}
    return data, arrays


@pytest.fixture(scope="module")
def shaped():
    s = mbsfmu.load_model(DP)
    s.visual("P2", shape="sphere", size=0.2, color="tab:red")
    s.visual("P1", shape="box", size=(0.1, 0.2, 0.4))
    s.visual("P1_cg", shape="cylinder", size=[0.05, 0.3])
    return mbsfmu.simulate(s, t_end=0.3, dt=0.1, backend="numpy")


def test_page_carries_the_poses_of_every_sample(shaped, tmp_path):
    """times (n,), positions (n, frames, 3) and the rotations of the two shaped frames (P1_cg,
    P2_cg) equal the animation's to float32 rounding (relative 2^-24, absolute 1e-7 near 0)."""
    path = tmp_path / "s.html"
    anim = shaped.animate(path)
    data, a = page_data(path.read_text())
    n, names = len(shaped.t), anim.frame_names
    assert data["samples"] == n and data["frames"] == names and data["fps"] == anim.fps
    np.testing.assert_allclose(a["times"], shaped.t, rtol=2**-24, atol=1e-7)
    np.testing.assert_allclose(a["positions"].reshape(n, len(names), 3), anim.points, rtol=2**-24, atol=1e-7)
    shaped_frames = [names.index("P1_cg"), names.index("P2_cg")]
    np.testing.assert_allclose(a["rotations"].reshape(n, 2, 3, 3), anim.rotations[:, shaped_frames],
                               rtol=2**-24, atol=1e-7)
    shapes = {s["name"]: s for s in data["shapes"]}
    assert shapes["P2"] == {"name": "P2", "shape": "sphere", "size": [0.2], "color": "#d62728",
                            "frame": names.index("P2_cg"), "slot": 1}
    assert shapes["P1"]["shape"] == "box" and shapes["P1"]["size"] == [0.1, 0.2, 0.4]
    assert shapes["P1"]["frame"] == shapes["P1_cg"]["frame"] == names.index("P1_cg")
    assert shapes["P1"]["slot"] == shapes["P1_cg"]["slot"] == 0
    assert [ln["frames"] for ln in data["lines"]] == [list(ln.frames) for ln in anim.lines]


def test_page_inlines_the_vendored_three_js(shaped, tmp_path):
    """One file: the vendored three.js and the viewer script inline, no <script src>, no
    stylesheet link; the bundle names its version and licence, and the licence ships beside it."""
    path = tmp_path / "s.html"
    shaped.animate(path)
    text = path.read_text()
    assert viewer.THREE_JS.read_text() in text and viewer.VIEWER_JS.read_text() in text
    assert "<script src" not in text and "<link" not in text
    version = (viewer.THREE_JS.parent / "VERSION").read_text().strip()
    assert re.fullmatch(r"three@0\.\d+\.\d+", version)
    assert f"(npm {version}) with OrbitControls; MIT License" in text
    assert "MIT License" in (viewer.THREE_JS.parent / "LICENSE-three.txt").read_text()


def test_notebook_shows_the_page_inline(shaped):
    """An Animation in a notebook is the same page, inline in an iframe (srcdoc, HTML-escaped)."""
    anim = shaped.animate()
    out = anim._repr_html_()
    m = re.fullmatch(r'<iframe srcdoc="([^"]*)" style="[^"]*" title="Double Pendulum"></iframe>', out)
    assert m is not None
    assert html.unescape(m.group(1)) == viewer.viewer_page(anim.scene, anim.fps)


def test_traces_and_axes_are_named_frames(shaped, tmp_path):
    """traces= and axes= name frames: the page lists their indices, an axes frame's rotation
    joins the posed frames (P1 between P1_cg's shapes and P2_cg's), and an unknown name is
    refused naming the known ones, with no file written."""
    path = tmp_path / "t.html"
    anim = shaped.animate(path, traces="P2_cg", axes=["P1"])
    names = anim.frame_names
    data, a = page_data(path.read_text())
    assert data["traces"] == [names.index("P2_cg")]
    posed = sorted({names.index(n) for n in ("P1", "P1_cg", "P2_cg")})
    assert data["axes"] == [{"frame": names.index("P1"), "slot": posed.index(names.index("P1"))}]
    np.testing.assert_allclose(a["rotations"].reshape(len(shaped.t), 3, 3, 3), anim.rotations[:, posed],
                               rtol=2**-24, atol=1e-7)
    bad = tmp_path / "bad.html"
    with pytest.raises(ParameterError, match=r"animate: axes: unknown frame 'P3' \(frames: ISYS, P1, P1_cg, "
                                             r"P2, P2_cg\)"):
        shaped.animate(bad, axes=["P1", "P3"])
    assert not bad.exists()


def test_cli_writes_the_viewer_with_traces_and_axes(tmp_path, capsys):
    """mbsfmu animate writes the 3D viewer by default, --trace and --axes name frames."""
    from mbsfmu.cli import main

    out = tmp_path / "dp.html"
    assert main(["animate", DP, "--t-end", "0.2", "--dt", "0.05", "--backend", "numpy", "--out", str(out),
                 "--trace", "P2_cg", "--axes", "P1", "--axes", "P2"]) == 0
    assert "5 frames" in capsys.readouterr().out
    data, a = page_data(out.read_text())
    names = data["frames"]
    assert data["samples"] == 5 and data["traces"] == [names.index("P2_cg")]
    assert [ax["frame"] for ax in data["axes"]] == [names.index("P1"), names.index("P2")]


def test_page_carries_a_mesh_as_float32_vertices_and_uint32_triangles(tmp_path):
    """A mesh shape (a cone written by the test as binary STL, trimesh.creation.cone) on P2:
    the page's vertices decode to trimesh's vertices v of the file mapped to offset + R (scale *
    v), R = rot_x(0.3), to float32 rounding, and its triangles to the file's; the shape sits at
    P2's cg frame with the scale as its size; the matplotlib wire is the bounding box."""
    import trimesh
    from mesh_files import write_cone

    from mbsfmu import rot_x

    stl = write_cone(tmp_path, "stl")
    s = mbsfmu.load_model(DP)
    scale, offset = (0.1, 0.2, 0.3), (0.0, 0.05, -0.1)
    s.visual("P2", "mesh", size=scale, file=stl, offset=offset, rotation=rot_x(0.3), color="tab:green")
    res = mbsfmu.simulate(s, t_end=0.2, dt=0.1, backend="numpy")
    anim = res.animate(tmp_path / "m.html")
    data, _ = page_data((tmp_path / "m.html").read_text())
    (shape,) = data["shapes"]
    ref = trimesh.load(stl, force="mesh")
    c, sn = np.cos(0.3), np.sin(0.3)
    R = np.array([[1, 0, 0], [0, c, -sn], [0, sn, c]])
    want = np.asarray(offset) + (ref.vertices * scale) @ R.T
    vertices = np.frombuffer(base64.b64decode(shape["vertices"]), dtype="<f4").reshape(-1, 3)
    faces = np.frombuffer(base64.b64decode(shape["faces"]), dtype="<u4").reshape(-1, 3)
    np.testing.assert_allclose(vertices, want, rtol=2**-24, atol=1e-8)
    np.testing.assert_array_equal(faces, ref.faces)
    assert shape["shape"] == "mesh" and shape["size"] == list(scale) and shape["color"] == "#2ca02c"
    assert shape["frame"] == anim.frame_names.index("P2_cg") and shape["slot"] == 0
    box = anim.wires[0].points[0]  # sample 0: r_K + S_K p for the box corners p
    k = anim.frame_names.index("P2_cg")
    local = (box[np.all(np.isfinite(box), axis=1)] - anim.points[0, k]) @ anim.rotations[0, k]
    np.testing.assert_allclose(local.min(axis=0), want.min(axis=0), atol=1e-12)
    np.testing.assert_allclose(local.max(axis=0), want.max(axis=0), atol=1e-12)
