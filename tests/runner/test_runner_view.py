"""A block-diagram result draws its plant (issue 27 item 4): the closed loop that ci/demo runs
(the inverted cart-pendulum FMU balanced by a discrete LQR, ci/closed_loop_demo.py), animated
from the run's recorded coordinates through the view its FMU carries.

The poses drawn equal the model's own pose function (NumericModel.pose_series of the model file,
with the constants the block set) at the recorded coordinates of the drawn rows, to 1e-12 m;
the rows drawn are every k-th at the frame rate, first and last kept; a 10 s run at 1 kHz gives a
page whose data (the page less the inlined three.js and viewer script) is well under 1 MB."""

import pathlib
import shutil
import sys
import zipfile

import numpy as np
import pytest

import mbsfmu
from blocks import FMU
from mbsfmu.animation import viewer
from mbsfmu.animation.model_view import RESOURCE
from mbsfmu.model.loader import load_model

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "cart_pendulum.py"
sys.path.insert(0, str(ROOT / "ci"))

from closed_loop_demo import CONTROL_PERIOD, build_diagram, lqr_gain  # noqa: E402

TOL = 1e-12  # m: the carried program and the generated numpy code, same expressions


@pytest.fixture(scope="module")
def cart(built_fmu):
    return built_fmu(MODEL)


@pytest.fixture(scope="module")
def gain():
    return lqr_gain(load_model(MODEL), CONTROL_PERIOD)[0]


@pytest.fixture(scope="module")
def loop(cart, gain):
    """The demo's closed loop, 10 s at 1 kHz."""
    return build_diagram(cart, gain).run(10.0)


def model_poses(res, rows, params=None):
    """The model's own pose function at the recorded coordinates of ``rows``."""
    system = load_model(MODEL)
    num = mbsfmu.derive(system).numeric()
    num.set_params(params or {})
    Y = np.array([res["plant.x"][rows], res["plant.theta"][rows]])
    return num.pose_series(list(system.frames), res.t[rows], Y)


def test_the_closed_loop_draws_its_plant(loop, tmp_path):
    page = tmp_path / "loop.html"
    anim = loop.animate(page)
    rows = np.arange(0, 10001, 10)
    assert np.array_equal(anim.times, loop.t[rows])      # 100 frames per second, first and last
    assert anim.fps == pytest.approx(100.0, rel=1e-9)     # plays in real time
    r, S = model_poses(loop, rows)
    assert np.max(np.abs(anim.points - r)) < TOL and np.max(np.abs(anim.rotations - S)) < TOL
    assert anim.frame_names == ["ISYS", "cart", "cart_cg", "rod", "rod_cg"]
    assert np.ptp(anim.points[:, 1, 0]) > 0.4          # the cart moves to the reference
    library = len(viewer.THREE_JS.read_bytes()) + len(viewer.VIEWER_JS.read_bytes())
    data = page.stat().st_size - library
    assert data < 0.2e6, f"{data / 1e6:.3f} MB of data"    # 14.7 MB before (issue 27)
    assert "plant: Cart with inverted pendulum" in page.read_text()


def test_the_blocks_constants_and_a_gif(cart, gain, tmp_path):
    """A block that sets l draws the rod with that l: the rod's cg at (x + l sin theta, 0, l cos theta),
    closed form; fps 20 keeps every 50th row and the last."""
    d = build_diagram(cart, gain, parameters={"l": 0.45, "solver_rtol": 1e-8})
    res = d.run(1.005)
    anim = res.animate(tmp_path / "loop.gif", fps=20)
    rows = np.r_[np.arange(0, 1006, 50), 1005]
    assert np.array_equal(anim.times, res.t[rows])
    x, th = res["plant.x"][rows], res["plant.theta"][rows]
    cg = np.stack([x + 0.45 * np.sin(th), 0 * x, 0.45 * np.cos(th)], axis=-1)
    assert np.max(np.abs(anim.points[:, 4] - cg)) < 1e-14
    r, _ = model_poses(res, rows, {"l": 0.45})
    assert np.max(np.abs(anim.points - r)) < TOL
    assert (tmp_path / "loop.gif").read_bytes()[:6] == b"GIF89a"


def test_a_failed_run_draws_what_it_recorded(cart, gain):
    """The result a failed run carries can be drawn up to the failure."""
    from blocks import Function
    from mbsfmu.runner import BlockRunError

    d = build_diagram(cart, gain)
    d.add("alarm", Function(lambda t, x: 1.0 / (t < 0.5), inputs=("x",), outputs=("y",)))
    d.connect("plant.x", "alarm.x")
    with pytest.raises(BlockRunError) as info:
        d.run(1.0)
    anim = info.value.result.animate()
    assert anim.times[-1] == info.value.result.t[-1] and 0.4 < anim.times[-1] < 0.5


def test_fmu_without_the_view_and_two_views(cart, gain, tmp_path):
    """An FMU with its view removed is named with the reason; with two plants, block= chooses."""
    bare = tmp_path / "bare.fmu"
    with zipfile.ZipFile(cart) as src, zipfile.ZipFile(bare, "w") as dst:
        for item in src.infolist():
            if item.filename != RESOURCE:
                dst.writestr(item, src.read(item.filename))
    d = build_diagram(bare, gain)
    res = d.run(0.05)
    assert res.views["plant"] == (f"bare.fmu carries no {RESOURCE}, so the viewer cannot draw it: an "
                                  "FMU carries its model's view when mbsfmu.build_fmu built it from a "
                                  "model (either kind), and this one was built elsewhere or by an "
                                  "mbsfmu before the 3D viewer")
    twin = tmp_path / "twin.fmu"
    shutil.copy(cart, twin)
    d.add("twin", FMU(twin, parameters={"l": 0.3}))
    d.connect("sat.y", "twin.F")
    res = d.run(0.05)
    anim = res.animate(block="twin")
    assert np.allclose(anim.points[:, 4, 2], 0.3 * np.cos(res["twin.theta"][[0, 10, 20, 30, 40, 50]]))
