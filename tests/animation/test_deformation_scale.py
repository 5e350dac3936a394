"""Drawing flexible bodies with their deformation scaled (issue 27): ``animate(...,
deformation_scale=s)`` places the node frames at the elastic coordinates s q.

The flexible double pendulum (models/flexible_double_pendulum.py) places a node k of a beam in
its frame of reference R at c_k(q) = M0_k + phi_k q (flexible_body's docstring), and the first
beam's R is rot_x(alpha) about the ISYS origin: its node k sits at S_x(alpha) (M0_k + phi_k q),
linear in q, so the drawn deflection is exactly s times the computed one, and that one is
S_x(alpha) phi_k q.  The second beam hangs from the first one's tip node frame, which is also
rotated by the small angles psi q of that node: its nodes move with rot(s psi q), not linear in
q, and their drawn deflection differs from s times the computed one by second-order terms."""

import pathlib

import numpy as np
import pytest

import mbsfmu
from mbsfmu.animation.scene import elastic_rows

ROOT = pathlib.Path(__file__).resolve().parents[2]
FLEX = str(ROOT / "models" / "flexible_double_pendulum.py")
S = 100.0
BEAM = 1.0  # the beams' length [m]


@pytest.fixture(scope="module")
def drawn():
    """The pendulum over 1 s (21 samples) drawn at scale 1 and S, and undeformed (its elastic
    coordinates set to 0 here, the hinge angles as simulated)."""
    res = mbsfmu.simulate(FLEX, t_end=1.0, dt=0.05)
    one, scaled = res.animate(), res.animate(deformation_scale=S)
    Y0 = np.array(res.y, dtype=float)
    elastic = [c for b in res.system.flexible_bodies.values() for c in b.coordinates]  # P1_q01 ...
    Y0[[res.numeric.coordinate_names.index(c) for c in elastic]] = 0.0
    undeformed, _ = res.numeric.pose_series(one.frame_names, res.t, Y0)
    return res, one, scaled, undeformed


def rot_x(a):
    """S_x(a) for each angle of ``a``: (n, 3, 3)."""
    c, s, o, z = np.cos(a), np.sin(a), np.ones_like(a), np.zeros_like(a)
    return np.stack([np.stack([o, z, z], -1), np.stack([z, c, -s], -1), np.stack([z, s, c], -1)], -2)


def test_first_beam_is_drawn_with_s_times_its_deflection(drawn):
    """Every node frame of P1 (and P2's first node, P1's tip): drawn at scale S minus undeformed
    equals S times (drawn at scale 1 minus undeformed), to 1e-12 m; the deflection at scale 1 is
    S_x(alpha) phi_k q from the modal data (to 1e-12 m) and reaches 0.1 mm, so the test sees it."""
    res, one, scaled, undeformed = drawn
    body = res.system.flexible_bodies["P1"]
    q = np.array([res[c] for c in body.coordinates])  # (modes, samples)
    names = one.frame_names
    for node, frame in zip(body.data.nodes, body.node_frames):
        k = names.index(frame)
        d1, ds = one.points[:, k] - undeformed[:, k], scaled.points[:, k] - undeformed[:, k]
        np.testing.assert_allclose(ds, S * d1, rtol=0, atol=1e-12)
        want = np.einsum("nij,jn->ni", rot_x(res["alpha"]), np.array(node.phi, float) @ q)
        np.testing.assert_allclose(d1, want, rtol=0, atol=1e-12)
    tip = names.index(body.node_frames[-1])
    assert np.abs(one.points[:, tip] - undeformed[:, tip]).max() > 1e-4
    np.testing.assert_allclose(scaled.points[:, names.index("P2_1")], scaled.points[:, tip], atol=1e-15)


def test_second_beam_follows_the_scaled_tip_rotation(drawn):
    """P2's nodes: drawn at scale S minus undeformed differs from S times the unscaled deflection
    by no more than the second-order terms of rot(S theta), theta the first beam's tip angle psi q:
    (S theta)^2 BEAM + S^2 theta |u2| (u2 the second beam's own deflection); and that is at
    most 10 % of the drawn deflection (the picture is the scaled one)."""
    res, one, scaled, undeformed = drawn
    p1, p2 = (res.system.flexible_bodies[b] for b in ("P1", "P2"))
    tip = p1.data.nodes[-1]
    theta = np.abs(np.array(tip.psi, float) @ np.array([res[c] for c in p1.coordinates])).max()
    u2 = max(np.abs(np.array(nd.phi, float) @ np.array([res[c] for c in p2.coordinates])).max()
             for nd in p2.data.nodes)
    bound = (S * theta) ** 2 * BEAM + S**2 * theta * u2
    names = one.frame_names
    for frame in p2.node_frames[1:]:
        k = names.index(frame)
        d1, ds = one.points[:, k] - undeformed[:, k], scaled.points[:, k] - undeformed[:, k]
        err = np.linalg.norm(ds - S * d1, axis=1).max()
        assert err <= bound, (frame, err, bound)
        assert err <= 0.1 * np.linalg.norm(ds, axis=1).max()


def test_the_page_says_the_scale_and_scale_one_changes_nothing(drawn, tmp_path):
    """The title (the page's label) names the scale; scale 1 draws the simulated positions."""
    res, one, scaled, _ = drawn
    assert scaled.scene.title == "Flexible Double Pendulum (elastic deformation x100)"
    assert one.scene.title == "Flexible Double Pendulum"
    path = tmp_path / "f.html"
    res.animate(path, deformation_scale=S)
    assert '"title":"Flexible Double Pendulum (elastic deformation x100)"' in path.read_text()
    assert sorted(elastic_rows(res.system, res.numeric)) == [2, 3, 4, 5, 6, 7]
    exact, _ = res.numeric.pose_series(one.frame_names, res.t, res.y)
    np.testing.assert_array_equal(one.points, exact)


def test_cli_draws_with_the_deformation_scale(tmp_path, capsys):
    """mbsfmu animate --deformation-scale 50 writes the page of animate(deformation_scale=50):
    the same title and node positions (float32)."""
    import base64
    import json
    import re

    from mbsfmu.cli import main

    out = tmp_path / "f.html"
    assert main(["animate", FLEX, "--t-end", "0.2", "--dt", "0.1", "--out", str(out),
                 "--deformation-scale", "50"]) == 0
    data = json.loads(re.search(r'<script id="mbs-data" type="application/json">(.*?)</script>',
                                out.read_text(), re.S).group(1))
    assert data["title"] == "Flexible Double Pendulum (elastic deformation x50)"
    want = mbsfmu.simulate(FLEX, t_end=0.2, dt=0.1).animate(deformation_scale=50).points
    got = np.frombuffer(base64.b64decode(data["positions"]), dtype="<f4").reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=2**-24, atol=1e-7)


def test_a_beam_is_drawn_through_its_nodes_only(drawn):
    """The flexible double pendulum's lines are the two beams' polylines through their node
    frames and nothing else: no straight chord from a beam's frame of reference to its nodes
    (which would hide the bending the scale shows); the other segments have zero length (P1 at
    ISYS's origin, P2 at P1's tip node)."""
    _, one, _, _ = drawn
    lines = [(ln.name, [one.frame_names[i] for i in ln.frames]) for ln in one.lines]
    assert lines == [("P1", ["P1_1", "P1_4", "P1_8", "P1_11"]), ("P2", ["P2_1", "P2_4", "P2_8", "P2_11"])]
