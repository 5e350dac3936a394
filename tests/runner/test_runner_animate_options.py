"""The runner result's animate takes the options of mbsfmu.Result.animate (issue 27 item 4):
``deformation_scale`` for a flexible model FMU in a diagram, ``dpi``/``size``/``player`` passed
through to the same writer, and the view a pythonfmu FMU carries.

The poses drawn are compared with the model's own pose function (NumericModel.pose_series of the
model file) at the recorded coordinates of the drawn rows, the elastic coordinates multiplied by
the scale here (to 1e-12 m: the carried program and the generated numpy code evaluate the same
expressions); independent of both, the rotating beam's tip drawn in its hub's frame (the hub
turns by the closed-form spin-up angle theta(t) of models/rotating_beam.py) lies at s times the
FMU's own output ``tip_deflection`` across the beam."""

import pathlib

import numpy as np
import pytest

import mbsfmu
from blocks import FMU, Constant
from mbsfmu.animation.model_view import read_view
from mbsfmu.model.loader import load_model
from mbsfmu.runner import Diagram

MODELS = pathlib.Path(__file__).resolve().parents[2] / "models"
TOL = 1e-12  # m
S = 100.0
STEP, FPS = 0.005, 20.0  # every 10th row drawn


def run_alone(fmu, t_end, **parameters):
    """A diagram of the FMU alone (no inputs), every output recorded."""
    d = Diagram(STEP)
    d.add("plant", FMU(fmu, parameters=parameters))
    return d.run(t_end)


def model_poses(system, res, rows, scale=1.0):
    """The model's pose function at the recorded coordinates of ``rows``, the flexible bodies'
    elastic coordinates multiplied by ``scale``."""
    num = mbsfmu.derive(system).numeric()
    names = list(num.coordinate_names)
    Y = np.array([res[f"plant.{c}"][rows] for c in names])
    elastic = [c for body in system.flexible_bodies.values() for c in body.coordinates]
    Y[[names.index(c) for c in elastic]] *= scale
    return num.pose_series(list(system.frames), res.t[rows], Y)


@pytest.fixture(scope="module")
def beam(built_fmu):
    """The rotating beam's FMU run alone for 3 s of its spin-up."""
    return run_alone(built_fmu(MODELS / "rotating_beam.py"), 3.0)


@pytest.fixture(scope="module")
def pendulum(built_fmu):
    return run_alone(built_fmu(MODELS / "flexible_double_pendulum.py"), 1.0)


@pytest.mark.parametrize("name", ["rotating_beam", "flexible_double_pendulum"])
def test_animate_a_flexible_fmu_at_scale_1_and_100(name, beam, pendulum, tmp_path):
    res = {"rotating_beam": beam, "flexible_double_pendulum": pendulum}[name]
    system = load_model(MODELS / f"{name}.py")
    rows = np.arange(0, len(res.t), 10)
    assert rows[-1] == len(res.t) - 1
    page = tmp_path / "flex.html"
    one, scaled = res.animate(fps=FPS), res.animate(page, fps=FPS, deformation_scale=S)
    for anim, scale in ((one, 1.0), (scaled, S)):
        assert np.array_equal(anim.times, res.t[rows])
        r, R = model_poses(system, res, rows, scale)
        assert np.max(np.abs(anim.points - r)) < TOL and np.max(np.abs(anim.rotations - R)) < TOL
    assert scaled.scene.title == f"plant: {system.title} (elastic deformation x100)"
    assert "(elastic deformation x100)" in page.read_text()
    assert one.scene.title == f"plant: {system.title}"


def test_animate_the_rotating_beam_tip_at_s_times_its_deflection(beam):
    """The tip node drawn in the hub frame, rot_z(theta(t))^T r: across the beam s times the FMU's
    output tip_deflection (it reaches 3 mm in 3 s, so the drawn 0.3 m is seen), along it the beam's
    length 10 m (its bending modes do not move the tip along x: phi_x ~ 1e-15)."""
    rows = np.arange(0, len(beam.t), 10)
    t = beam.t[rows]
    W, T = 6.0, 15.0
    theta = W / T * (t**2 / 2 + (T / (2 * np.pi)) ** 2 * (np.cos(2 * np.pi * t / T) - 1))
    deflection = beam["plant.tip_deflection"][rows]
    assert np.max(np.abs(deflection)) > 1e-3
    for scale in (1.0, S):
        anim = beam.animate(fps=FPS, deformation_scale=scale)
        tip = anim.points[:, anim.frame_names.index("beam_11")]
        c, s = np.cos(theta), np.sin(theta)
        along, across = c * tip[:, 0] + s * tip[:, 1], -s * tip[:, 0] + c * tip[:, 1]
        np.testing.assert_allclose(across, scale * deflection, rtol=0, atol=1e-12)
        np.testing.assert_allclose(along, 10.0, rtol=0, atol=1e-12)
        assert np.max(np.abs(tip[:, 2])) < 1e-15


def test_animate_passes_dpi_size_and_player_to_the_writer(pendulum, tmp_path):
    """player='images' writes the matplotlib page (one PNG per drawn frame), dpi and size set the
    GIF's pixels: 40 dpi x 2 in = 80 pixels a side."""
    gif = tmp_path / "small.gif"
    pendulum.animate(gif, fps=10, dpi=40, size=2.0, deformation_scale=S)
    from PIL import Image

    with Image.open(gif) as im:
        assert im.size == (80, 80) and im.n_frames == 11
    images = tmp_path / "images.html"
    anim = pendulum.animate(images, fps=10, player="images")
    assert images.read_text().count("data:image/png;base64") == len(anim.times) == 11


def test_animate_a_pythonfmu_block(built_fmu):
    """A pythonfmu FMU of the cart pendulum carries the view too: in a diagram with a constant
    force, the block's l drawn; the rod's cg at (x + l sin theta, 0, l cos theta), closed form."""
    fmu = built_fmu(MODELS / "cart_pendulum.py", kind="pythonfmu")
    d = Diagram(0.01)
    d.add("force", Constant(1.0))
    d.add("plant", FMU(fmu, parameters={"l": 0.45}))
    d.connect("force.y", "plant.F")
    res = d.run(0.5)
    anim = res.animate()
    assert anim.scene.title == "plant: Cart with inverted pendulum"
    assert np.array_equal(anim.times, res.t)  # 100 frames per second at a 0.01 s step: every row
    x, th = res["plant.x"], res["plant.theta"]
    assert np.ptp(x) > 0.05
    cg = np.stack([x + 0.45 * np.sin(th), 0 * x, 0.45 * np.cos(th)], axis=-1)
    assert np.max(np.abs(anim.points[:, anim.frame_names.index("rod_cg")] - cg)) < 1e-14
    system = load_model(MODELS / "cart_pendulum.py")
    num = mbsfmu.derive(system).numeric()
    num.set_params({"l": 0.45})
    r, R = num.pose_series(list(system.frames), res.t, np.array([x, th]))
    assert np.max(np.abs(anim.points - r)) < TOL and np.max(np.abs(anim.rotations - R)) < TOL


FN_DRIVE = '''
import math

import mbsfmu


def model():
    s = mbsfmu.System("fn_drive", "cart on a Python-function drive")
    (q,) = s.coordinates("q")
    p = s.time_parameter("p", function=math.sin, function_d=math.cos, function_dd=lambda t: -math.sin(t))
    s.frame("rail", "ISYS", rel_pos=[p, 0, 0])
    s.body("b", ref="rail", rel_pos=[q, 0, 0], mass=1.0, inertia=[1, 1, 1])
    s.gravity([0, 0, -9.81])
    return s
'''


def test_animate_says_why_a_pythonfmu_of_a_function_drive_has_no_pose(tmp_path):
    """The pythonfmu kind runs a model whose time parameter is a Python function (the native kind
    refuses it); its FMU carries the layout but no pose, and animate says why."""
    (tmp_path / "fn_drive.py").write_text(FN_DRIVE)
    fmu = mbsfmu.build_fmu(tmp_path / "fn_drive.py", tmp_path / "fn_drive.fmu", kind="pythonfmu")
    assert read_view(fmu).layout.frame_names == ["ISYS", "rail", "b", "b_cg"]
    d = Diagram(0.01)
    d.add("plant", FMU(fmu))
    res = d.run(0.05)
    why = ("its FMU's view holds no pose: time parameter 'p' of model 'fn_drive' is a Python function, "
           "which the FMU cannot carry")
    with pytest.raises(mbsfmu.runner.DiagramError) as info:
        res.animate(block="plant")
    assert str(info.value) == f"animate: block 'plant' has no 3D view: {why}"
    with pytest.raises(mbsfmu.runner.DiagramError, match=r"no block of this run carries a 3D view .*; "
                                                          r"plant: its FMU's view holds no pose"):
        res.animate()
