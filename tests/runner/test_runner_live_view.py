"""The live page's 3D view of a model block (issue 27 item 3, second half): during a real-time run
of ci/demo's closed loop (the cart-pendulum FMU and a discrete LQR) the live server streams the
pose of the plant at the latest recorded row, computed in its own thread from the record.

Every streamed pose equals the model's own pose function (NumericModel.pose_series of the model
file) at the recorded coordinates of the row it names, to 1e-12 m; the streamed coordinates are
the runner's record exactly; the last pose is the run's last row; the 3D page is the viewer page
(three.js inlined, nothing from the network) following its stream; a block whose coordinates
are not recorded gets no 3D view, and the run says why."""

import pathlib
import sys
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

import mbsfmu
from mbsfmu.model.loader import load_model
from mbsfmu.runner.live import LiveView, read_events

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "cart_pendulum.py"
sys.path.insert(0, str(ROOT / "ci"))

from closed_loop_demo import CONTROL_PERIOD, build_diagram, lqr_gain  # noqa: E402

TOL = 1e-12


@pytest.fixture(scope="module")
def loop(built_fmu):
    fmu = built_fmu(MODEL)
    return lambda: build_diagram(fmu, lqr_gain(load_model(MODEL), CONTROL_PERIOD)[0])


def test_streamed_poses_are_the_pose_function_at_the_streamed_rows(loop):
    view = LiveView(announce=False, rate=30)
    got, page, meta = [], {}, []

    def read():
        while view.url is None:
            time.sleep(0.005)
        time.sleep(0.2)
        got.extend(read_events(view.url + "poses/plant"))

    def look():
        while view.url is None:
            time.sleep(0.005)
        time.sleep(0.3)
        meta.append(next(read_events(view.url)))
        page["html"] = urllib.request.urlopen(view.url + "view/plant", timeout=10).read().decode()

    threads = [threading.Thread(target=read), threading.Thread(target=look)]
    for th in threads:
        th.start()
    res = loop().run(1.5, realtime=True, live=view)
    for th in threads:
        th.join(15)
    assert meta[0][0] == "meta" and meta[0][1]["views"] == ["plant"]
    live = res.stats["live"]
    assert live["views"] == ["plant"] and live["views_missing"] == {}
    assert got[-1] == ("end", {"status": "finished", "rows": 1501})
    poses = [d for k, d in got[:-1] if k == "pose"]
    assert 3 <= len(poses) == len(got) - 1 <= 30 * 1.5 + 2  # at most rate a second
    assert live["pose_messages"] == len(poses)
    rows = np.array([p["row"] for p in poses])
    assert np.all(np.diff(rows) > 0) and rows[-1] == 1500
    system = load_model(MODEL)
    num = mbsfmu.derive(system).numeric()
    Y = np.array([res["plant.x"][rows], res["plant.theta"][rows]])
    assert np.array_equal(np.array([p["coordinates"] for p in poses]).T, Y)  # the record, exactly
    assert np.array_equal([p["t"] for p in poses], res.t[rows])
    r, S = num.pose_series(list(system.frames), res.t[rows], Y)
    got_r = np.array([p["positions"] for p in poses]).reshape(r.shape)
    assert np.max(np.abs(got_r - r)) < TOL
    assert all(p["rotations"] == [] for p in poses)  # no shapes: no rotation is sent
    html = page["html"]
    assert '"/poses/plant"' in html and "window.mbsViewer.setPose" in html and "three.js" in html.lower()
    assert "http://" not in html.replace("http://www.w3.org", "") and "src=\"http" not in html


def test_a_block_without_its_coordinates_recorded_gets_no_view(loop):
    view = LiveView(announce=False)
    errors = []

    def probe():
        while view.url is None:
            time.sleep(0.005)
        try:
            urllib.request.urlopen(view.url + "view/plant", timeout=5)
        except urllib.error.HTTPError as exc:
            errors.append((exc.code, exc.read().decode()))

    th = threading.Thread(target=probe)
    th.start()
    res = loop().run(0.3, realtime=True, live=view, record=["plant.x", "sat.y"])
    th.join(10)
    assert res.stats["live"]["views"] == []
    assert res.stats["live"]["views_missing"] == {"plant": "not recorded: plant.theta"}
    assert errors and errors[0][0] == 404 and "no 3D view of a block 'plant' in this run" in errors[0][1]
