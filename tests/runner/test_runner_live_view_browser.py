"""The live page's 3D view in a real browser (issue 27 item 3): headless Chromium (Debian's
package, as the other browser tests) opens the live page of a 3 s real-time run of ci/demo's
closed loop (the cart-pendulum FMU and a discrete LQR); the page shows the plant's 3D view in a
frame, which moves while the run runs and, at the end, draws the rod's centre where the runner's
last recorded row puts it: (x + l sin theta, 0, l cos theta), l = 0.5 m, projected through the
view's camera in numpy, within 0.3 px of the marker in a screenshot.  No console error, no
request but to the run's own server.  Screenshots are kept in out/test-artifacts/ (the `artifacts`
fixture)."""

import pathlib
import sys
import threading
import time

import numpy as np
import pytest
from browser_support import (
    CAMERA_JS,
    launch,
    marker_centre,
    playwright_client,
    project,
    skip_without_browser,
    watch,
)

from mbsfmu.model.loader import load_model
from mbsfmu.runner.live import LiveView

pytestmark = [pytest.mark.slow, *skip_without_browser()]
playwright_api = playwright_client()

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "cart_pendulum.py"
sys.path.insert(0, str(ROOT / "ci"))

from closed_loop_demo import CONTROL_PERIOD, build_diagram, lqr_gain  # noqa: E402


def test_the_live_3d_view_follows_the_run_and_ends_where_the_runner_ends(built_fmu, artifacts):
    d = build_diagram(built_fmu(MODEL), lqr_gain(load_model(MODEL), CONTROL_PERIOD)[0])
    view = LiveView(announce=False)
    out = {}
    run = threading.Thread(target=lambda: out.update(res=d.run(3.0, realtime=True, live=view)))
    with playwright_api.sync_playwright() as p:
        browser = launch(p, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 1100}, device_scale_factor=1)
            messages, requests = watch(page)
            run.start()
            while view.url is None:
                time.sleep(0.005)
            page.goto(view.url)
            page.wait_for_selector("#views iframe", timeout=20_000)
            deadline = time.monotonic() + 20
            while not any(f.url.endswith("/view/plant") for f in page.frames):
                assert time.monotonic() < deadline, ("no 3D view frame", messages, requests)
                page.wait_for_timeout(50)  # (the client takes the browser's events during its calls)
            frame = next(f for f in page.frames if f.url.endswith("/view/plant"))
            frame.wait_for_function("window.mbsLive && window.mbsLive.poses > 3 && mbsViewer.time > 0.5",
                                    timeout=20_000)
            mid = frame.evaluate("[window.mbsLive.ended, mbsViewer.time, window.mbsLive.pose.row]")
            frame.locator("canvas").screenshot(path=artifacts / "live_3d_running.png")
            frame.wait_for_function("window.mbsLive.ended", timeout=20_000)
            run.join(20)
            last = frame.evaluate("window.mbsLive.pose")
            frame.evaluate("mbsViewer.markFrame('rod_cg', '#ff00ff')")
            cam = frame.evaluate(CAMERA_JS)
            png = artifacts / "live_3d_ended.png"
            frame.locator("canvas").screenshot(path=png)
        finally:
            browser.close()
    res = out["res"]
    assert mid[0] is False and 0.5 < mid[1] < 3.0 and mid[2] < 3000  # seen while the run ran
    assert last["row"] == 3000 and last["coordinates"] == [res["plant.x"][-1], res["plant.theta"][-1]]
    x, th = res["plant.x"][-1], res["plant.theta"][-1]
    want = project({**cam, "rect": [0, 0, *cam["rect"][2:]]},
                   np.array([x + 0.5 * np.sin(th), 0.0, 0.5 * np.cos(th)]))
    assert np.linalg.norm(marker_centre(png) - want) <= 0.3
    assert messages == [] and all(u.startswith(view.url) for u in requests), (messages, requests)
