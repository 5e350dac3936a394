"""Animation of a model (issue 15 item 4): the drawn points equal closed-form kinematics, the
HTML and GIF files hold one frame per output sample, visual() refuses bad shapes, and the
command line animates a model file and a result CSV."""

import pathlib
import re
from types import SimpleNamespace

import numpy as np
import pytest
import sympy as sp
from double_pendulum_kinematics import closed_form
from PIL import Image

import mbsfmu
from mbsfmu.animation import Animation
from mbsfmu.cli import main
from mbsfmu.core.errors import ModelError, ParameterError
from mbsfmu.simulation import Result

ROOT = pathlib.Path(__file__).resolve().parents[2]
DP = str(ROOT / "models" / "double_pendulum.py")
SMALL = dict(dpi=30, size=3.0)


def rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


@pytest.fixture(scope="module")
def dp_result():
    """Seed 002's double pendulum (L1 = L2 = 1) over 0.5 s, 11 output samples."""
    return mbsfmu.simulate(DP, t_end=0.5, dt=0.05, backend="numpy")


def test_points_are_the_closed_form_kinematics_per_sample(dp_result):
    """One animation frame per output sample; the drawn frame origins and rotations equal the
    closed-form position r = L1 (0, sin a, -cos a) + L2 (0, sin(a+p), -cos(a+p)) and
    S = R_x(a + p) of the pendulum to 1e-12; the stick figure is the two links, coloured per
    body, the zero-length segments (ISYS-P1, P1_cg-P2) left out."""
    res = dp_result
    anim = res.animate()
    assert isinstance(anim, Animation) and len(anim) == len(res.t) == 11
    np.testing.assert_array_equal(anim.times, res.t)
    assert anim.frame_names == ["ISYS", "P1", "P1_cg", "P2", "P2_cg"]
    assert anim.points.shape == (11, 5, 3)
    alpha, phi = res["alpha"], res["phi"]
    assert np.ptp(alpha) > 0.1 and np.ptp(phi) > 0.1  # it moves
    np.testing.assert_allclose(anim.points, closed_form(alpha, phi), rtol=0, atol=1e-12)
    for i in range(len(res.t)):
        np.testing.assert_allclose(anim.rotations[i, 4], rot_x(alpha[i] + phi[i]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(anim.rotations[i, 1], rot_x(alpha[i]), rtol=0, atol=1e-12)
    assert [(ln.name, ln.frames) for ln in anim.lines] == [("P1", (1, 2)), ("P2", (3, 4))]
    assert anim.lines[0].color != anim.lines[1].color
    # every second sample, and a refused step
    assert len(res.animate(every=2)) == 6
    with pytest.raises(ParameterError, match="every must be a positive integer"):
        res.animate(every=0)
    with pytest.raises(ParameterError, match="fps must be a positive number, got 0"):
        res.animate(fps=0)
    assert res.animate().fps == 20 and res.animate(every=2).fps == 10  # real time: 1 / (dt every)


def test_time_parameters_are_evaluated_at_each_sample():
    """A pendulum hung from a support that a time parameter p(t) = A sin(w t) moves along x:
    the support frame's drawn origin is (A sin(w t), 0, 0) at every sample, the pendulum's tip
    L below the support rotated by the coordinate."""
    s = mbsfmu.System("shaken")
    A, w, L = s.constants(A=0.3, w=4.0, L=0.7)
    p = s.time_parameter("p", A * sp.sin(w * s.t))
    (q,) = s.coordinates("q")
    s.gravity([0, 0, -9.81])
    s.frame("support", rel_pos=[p, 0, 0])
    s.body("arm", ref="support", rel_rot=mbsfmu.rot_y(q), cg_pos=[0, 0, -L], mass=1.0,
           inertia=[0.01, 0.01, 0.01])
    s.initial(q=0.5)
    res = mbsfmu.simulate(s, t_end=0.6, dt=0.1, backend="numpy")
    anim = res.animate()
    k = anim.frame_names.index("support")
    t = res.t
    np.testing.assert_allclose(anim.points[:, k], np.stack([0.3 * np.sin(4 * t), 0 * t, 0 * t], 1),
                               rtol=0, atol=1e-12)
    tip = anim.points[:, anim.frame_names.index("arm_cg")]
    q_t = res["q"]
    expect = np.stack([0.3 * np.sin(4 * t) - 0.7 * np.sin(q_t), 0 * t, -0.7 * np.cos(q_t)], 1)
    np.testing.assert_allclose(tip, expect, rtol=0, atol=1e-12)


def test_a_closed_loop_is_drawn_closed():
    """The slider-crank's loop 'pivot' joins the crank's end to the ISYS origin in x and y: in
    every drawn sample the origin of crank_end is at (0, 0) to the simulation's constraint
    tolerance, and the rod and crank are drawn at their constant lengths l and r."""
    res = mbsfmu.simulate(str(ROOT / "models" / "slider_crank.py"), t_end=0.2, dt=0.05, backend="numpy")
    anim = res.animate()
    names = anim.frame_names
    end = anim.points[:, names.index("crank_end")]
    assert len(anim) == 5 and np.max(np.abs(end[:, :2])) < 1e-7
    params = res.numeric.params
    for a, b, length in (("rod", "rod_end", params["l"]), ("crank", "crank_end", params["r"])):
        d = anim.points[:, names.index(b)] - anim.points[:, names.index(a)]
        np.testing.assert_allclose(np.linalg.norm(d, axis=1), length, rtol=1e-12)


def test_a_natural_coordinate_model_is_drawn_from_its_points(tmp_path, capsys):
    """Issue 27 item 2: the N = 2 four-bar chain in natural coordinates (seed 003 sec. 5.1) is
    drawn from its points: the moving points A_j equal their coordinates (A_j_x, A_j_y) at every
    sample, the ground pivots stay at (j l, 0), the five rods are lines of length l = 1 joining
    them (cranks O_j A_j, couplers A_(i-1) A_i), in the x-y plane with y up; the command line
    animates the model file."""
    path = str(ROOT / "models" / "four_bar_natural.py")
    res = mbsfmu.simulate(path, t_end=1.0, dt=0.05, backend="numpy")
    anim = res.animate()
    names = anim.frame_names
    assert sorted(names) == ["A0", "A1", "A2", "crank0[0]", "crank1[0]", "crank2[0]"]
    assert anim.scene.up == (0.0, 1.0, 0.0)
    for j in range(3):
        np.testing.assert_array_equal(anim.points[:, names.index(f"A{j}")],
                                      np.stack([res[f"A{j}_x"], res[f"A{j}_y"], 0 * res.t], axis=1))
        np.testing.assert_array_equal(anim.points[:, names.index(f"crank{j}[0]")],
                                      np.broadcast_to([j, 0.0, 0.0], (len(res.t), 3)))
    assert np.ptp(res["A0_x"]) > 0.5  # it moves
    drawn = {ln.name: [names[k] for k in ln.frames] for ln in anim.lines}
    assert drawn == {"crank0": ["crank0[0]", "A0"], "crank1": ["crank1[0]", "A1"],
                     "crank2": ["crank2[0]", "A2"], "coupler1": ["A0", "A1"], "coupler2": ["A1", "A2"]}
    for ln in anim.lines:
        a, b = anim.points[:, ln.frames[0]], anim.points[:, ln.frames[1]]
        np.testing.assert_allclose(np.linalg.norm(b - a, axis=1), 1.0, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(anim.rotations, np.broadcast_to(np.eye(3), anim.rotations.shape))
    assert main(["animate", path, "--t-end", "0.1", "--out", str(tmp_path / "fb.html")]) == 0
    assert "fb.html" in capsys.readouterr().out


def test_html_is_self_contained_with_one_frame_per_sample(dp_result, tmp_path):
    path = tmp_path / "dp.html"
    anim = dp_result.animate(path, player="images", **SMALL)
    text = path.read_text()
    assert text.startswith("<!DOCTYPE html>") and "</html>" in text
    assert "http://" not in text and "https://" not in text and "<link" not in text
    frames = re.findall(r'frames\[\d+\] = "data:image/png;base64,', text)
    assert len(frames) == len(dp_result.t) == len(anim)
    assert f"new Array({len(dp_result.t)})" in text
    assert 'class="fa' not in text  # buttons carry text symbols, not font icons


def test_gif_has_one_frame_per_sample(dp_result, tmp_path):
    path = tmp_path / "dp.gif"
    dp_result.animate(path, fps=10, **SMALL)
    with Image.open(path) as im:
        assert im.n_frames == len(dp_result.t)
        assert im.size == (90, 90)  # 3 inch at 30 dpi


def test_unknown_suffix_is_refused_before_any_work(dp_result, tmp_path):
    with pytest.raises(ParameterError, match=r"unknown suffix '\.mp4'.*\.html.*\.gif"):
        dp_result.animate(tmp_path / "dp.mp4")
    assert not (tmp_path / "dp.mp4").exists()


def test_shapes_are_wire_frames_at_the_frame_pose(dp_result, tmp_path):
    """A sphere on body P2 sits at its cg (every wire point at the radius from it); a box on
    body P1 sits at P1's cg, every wire point on its faces (|local x, y, z| = half edges, one
    coordinate at its bound) in the cg frame's axes; a cylinder on frame P1_cg has its rims at
    radius r about the frame's z axis, within +-length/2."""
    s = mbsfmu.load_model(DP)
    s.visual("P2", shape="sphere", size=0.2, color="tab:red")
    s.visual("P1", shape="box", size=(0.1, 0.2, 0.4))
    s.visual("P1_cg", shape="cylinder", size=[0.05, 0.3])
    res = mbsfmu.simulate(s, t_end=0.3, dt=0.1, backend="numpy")
    anim = res.animate(tmp_path / "shapes.gif", **SMALL)
    wires = {w.name: w for w in anim.wires}
    assert set(wires) == {"P2", "P1", "P1_cg"}
    assert wires["P2"].color == "tab:red" and anim.lines[1].color == "tab:red"
    names = anim.frame_names
    for name, frame in (("P2", "P2_cg"), ("P1", "P1_cg"), ("P1_cg", "P1_cg")):
        w = wires[name].points
        k = names.index(frame)
        local = np.einsum("nji,nmj->nmi", anim.rotations[:, k], w - anim.points[:, k, None, :])
        ok = np.all(np.isfinite(local), axis=-1)
        loc = local[ok]
        if name == "P2":
            np.testing.assert_allclose(np.linalg.norm(loc, axis=-1), 0.2, rtol=0, atol=1e-12)
        elif name == "P1":
            # box edges: two of the three local coordinates at their bound, the third within
            at_bound = np.isclose(np.abs(loc), [0.05, 0.1, 0.2], rtol=0, atol=1e-12)
            assert np.all(at_bound.sum(axis=1) >= 2) and np.all(np.abs(loc) <= [0.05 + 1e-12, 0.1 + 1e-12,
                                                                                0.2 + 1e-12])
            assert len(loc) == 12 * 2 * len(res.t)  # 12 edges of 2 points per sample
        else:
            np.testing.assert_allclose(np.hypot(loc[:, 0], loc[:, 1]), 0.05, rtol=0, atol=1e-12)
            assert np.all(np.abs(loc[:, 2]) <= 0.15 + 1e-12) and np.ptp(loc[:, 2]) > 0.3 - 1e-12


def test_visual_errors_name_the_element_and_the_bad_value():
    s = mbsfmu.load_model(DP)
    cases = [
        (dict(name="P3"), r"visual\('P3'\): no body, frame or flexible body of that name \(known: ISYS, P1"),
        (dict(name="P1", shape="cone"), r"visual of 'P1': unknown shape 'cone' \(shapes: line, sphere, box"),
        (dict(name="P1", shape="sphere"), r"'P1': shape 'sphere' needs a size \(radius\)"),
        (dict(name="P1", shape="sphere", size=-0.1), r"'P1': the radius of the sphere must be a positive"),
        (dict(name="P1", shape="box", size=(1, 2)), r"'P1': shape 'box' takes 3 size value\(s\)"),
        (dict(name="P2_cg", shape="cylinder", size=(0.1, "long")),
         r"'P2_cg': the length of the cylinder must be a positive number, got 'long'"),
        (dict(name="P1", shape="line", size=0.1), r"'P1': shape 'line' takes no size"),
        (dict(name="P1", color="no-such-colour"), r"'P1': 'no-such-colour' is not a matplotlib colour"),
        (dict(name="P1", shape="box", size=float("nan")), r"'P1': the length x of the box must be"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ModelError, match=message):
            s.visual(**kwargs)
    assert s.visuals == {}
    assert s.visual("P1", shape="box", size=0.3).endswith("P1")
    assert s.visuals["P1"].size == (0.3, 0.3, 0.3)


def test_flexible_bodies_are_polylines_through_their_nodes(dp_result):
    """A stand-in for an elastic body: system.flexible_bodies maps a name to an object with
    node_frames; it is drawn as one line through those frames' origins, in node order."""
    system = dp_result.system
    system.flexible_bodies = {"beam": SimpleNamespace(node_frames=["ISYS", "P1_cg", "P2_cg"])}
    try:
        system.visual("beam", color="tab:green")
        anim = dp_result.animate()
        beam = [ln for ln in anim.lines if ln.name == "beam"]
        assert len(beam) == 1 and beam[0].frames == (0, 2, 4) and beam[0].color == "tab:green"
        alpha, phi = dp_result["alpha"], dp_result["phi"]
        np.testing.assert_allclose(anim.scene.line_points(beam[0]), closed_form(alpha, phi)[:, [0, 2, 4]],
                                   rtol=0, atol=1e-12)
        with pytest.raises(ModelError, match="a flexible body is drawn as a line"):
            system.visual("beam", shape="box", size=1.0)
        system.flexible_bodies = {"beam": SimpleNamespace(node_frames=["P1_cg", "tip"])}
        with pytest.raises(ModelError, match=r"flexible body 'beam': unknown node frame\(s\) 'tip'"):
            dp_result.animate()
    finally:
        del system.flexible_bodies
        system.visuals.clear()


def test_mode_plot_geometry_uses_the_substituted_constants():
    """modal.frame_positions now evaluates through the same pose_series: with L1 = 2 given to
    linearize, the hanging pendulum's origins are at 0, -2, -3 on z (before, the default 1)."""
    from mbsfmu.analysis.modal import frame_positions

    s = mbsfmu.load_model(DP)
    lin = mbsfmu.linearize(s, at={}, params={"L1": 2.0}, symbolic=False, equilibrium=True)
    positions, names, _ = frame_positions(lin)
    np.testing.assert_allclose(positions(np.zeros(2))[:, 2], [0, 0, -2, -2, -3], rtol=0, atol=1e-15)
    np.testing.assert_allclose(positions(np.array([0.3, 0.0]))[2], [0, 2 * np.sin(0.3), -2 * np.cos(0.3)],
                               rtol=0, atol=1e-15)


def test_cli_animates_a_model_file_and_a_result_csv(tmp_path, capsys):
    gif = tmp_path / "dp.gif"
    assert main(["animate", DP, "--t-end", "0.2", "--dt", "0.05", "--backend", "numpy", "--set", "L1=2",
                 "--out", str(gif), "--dpi", "30"]) == 0
    assert "5 frames" in capsys.readouterr().out
    with Image.open(gif) as im:
        assert im.n_frames == 5
    csv = tmp_path / "dp.csv"
    assert main(["simulate", DP, "--t-end", "0.3", "--dt", "0.1", "--backend", "numpy",
                 "--out", str(csv)]) == 0
    html = tmp_path / "dp.html"
    assert main(["animate", str(csv), "--model", DP, "--out", str(html), "--dpi", "30",
                 "--player", "images"]) == 0
    assert "4 frames" in capsys.readouterr().out
    assert len(re.findall(r"data:image/png;base64,", html.read_text())) == 4
    # the CSV's motion, drawn: the result read back animates to the closed form
    res = Result.read_csv(csv, mbsfmu.load_model(DP))
    expect = closed_form(res["alpha"], res["phi"])
    np.testing.assert_allclose(res.animate().points, expect, rtol=0, atol=1e-12)


def test_cli_bad_input_exits_2_with_a_clear_message(tmp_path, capsys):
    csv = tmp_path / "dp.csv"
    assert main(["simulate", DP, "--t-end", "0.1", "--dt", "0.1", "--backend", "numpy",
                 "--out", str(csv)]) == 0
    capsys.readouterr()
    cart = str(ROOT / "models" / "cart_pendulum.py")
    out = str(tmp_path / "a.html")
    cases = [
        (["animate", str(csv), "--model", cart, "--out", out],
         "does not match model 'cart_pendulum': missing column(s) x, theta, der(x), der(theta)"),
        (["animate", str(csv), "--out", out], "a result CSV needs its model: --model MODEL.py"),
        (["animate", str(csv), "--model", DP, "--out", str(tmp_path / "a.mp4")], "unknown suffix '.mp4'"),
        (["animate", str(csv), "--model", DP, "--set", "alpha=1", "--out", out],
         "--set takes constants only"),
        (["animate", str(tmp_path / "x.txt"), "--out", out], "neither a model (.py) nor a result CSV"),
        (["animate", str(csv), "--model", DP, "--t-end", "1", "--out", out], "--t-end is for a model file"),
        (["animate", DP, "--model", DP, "--t-end", "1", "--out", out], "--model is for a result CSV"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("mbsfmu: error: ") and message in err, err
    assert not (tmp_path / "a.html").exists()
