"""The live scope in a real browser (issue 27): headless Chromium (Debian's package, driven by
Playwright's Python client, as the 3D viewer's browser test) opens the page of a 5 s real-time run
while it runs; the page loads without console errors and asks for nothing but its own server, the
scope follows the run, and when the run has ended the scope's last values (in its state and as the
numbers its table shows) equal the runner's last recorded row exactly.  Cursor, zoom and pause act
on the page.  Screenshots are kept in
out/test-artifacts/ (the `artifacts` fixture)."""

import math
import threading
import time

import pytest
from browser_support import launch, playwright_client, skip_without_browser, watch

from mbsfmu.runner import Block, Diagram
from mbsfmu.runner.live import LiveView

pytestmark = [pytest.mark.slow, *skip_without_browser()]
playwright_api = playwright_client()


class Plant(Block):
    """Two signals in one block, one in another: two axes."""

    outputs = ("x", "v")

    def output(self, t, u):
        return (math.sin(3.0 * t) * math.exp(-0.1 * t), 3.0 * math.cos(3.0 * t))


class Ramp(Block):
    outputs = ("y",)

    def output(self, t, u):
        return (0.25 * t + 1.0 / 3.0,)


def test_the_page_follows_a_5_s_run_and_ends_with_the_runners_last_values(artifacts):
    d = Diagram(1e-3)
    d.add("plant", Plant())
    d.add("ramp", Ramp())
    view = LiveView(window=2.0, announce=False)
    out = {}
    run = threading.Thread(target=lambda: out.update(res=d.run(5.0, realtime=True, live=view)))
    with playwright_api.sync_playwright() as p:
        browser = launch(p, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 700})
            messages, requests = watch(page)
            run.start()
            while view.url is None:
                time.sleep(0.005)
            page.goto(view.url)
            page.wait_for_function("window.scope.lastT !== null && window.scope.lastT > 1.5",
                                   timeout=20_000)
            running = page.evaluate("[window.scope.ended, window.scope.lastT]")
            page.screenshot(path=artifacts / "live_running.png")
            box = page.locator("#scope").bounding_box()
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 3)
            cursor_text = page.locator("#values tr >> nth=0").locator("td.cursor").inner_text()
            page.mouse.wheel(0, -100)  # zoom in on the time axis: pauses the view
            zoomed = page.evaluate("[window.scope.paused, window.scope.view]")
            page.mouse.dblclick(box["x"] + box["width"] / 2, box["y"] + box["height"] / 3)
            followed = page.evaluate("[window.scope.paused, window.scope.view]")
            page.wait_for_function("window.scope.ended", timeout=20_000)
            run.join(20)
            state = page.evaluate("({last: window.scope.last, lastT: window.scope.lastT, "
                                  "status: window.scope.status, signals: window.scope.meta.signals})")
            shown = page.locator("#values td.last").all_inner_texts()
            end_cursor = page.locator("#values tr >> nth=0").locator("td.cursor").inner_text()
            page.screenshot(path=artifacts / "live_ended.png")
        finally:
            browser.close()
    res = out["res"]
    assert running[0] is False and 1.5 < running[1] < 5.0  # it was seen while the run ran
    assert "(t = " in cursor_text  # the values at the cursor
    assert zoomed[0] is True and zoomed[1][1] - zoomed[1][0] < 2.0  # zoomed in: < the window
    assert followed == [False, None]  # double-click: follow the run again
    # the cursor stays at its place on the screen: at the end it reads the time of that pixel
    # column of the last window [3, 5] s (plot area: 70 px left margin, 10 px right), within a
    # group of the decimation (2 ms) and a pixel (2 s / 920 px)
    frac = (box["width"] / 2 - 70) / (box["width"] - 80)
    assert float(end_cursor.split("t = ")[1].split()[0]) == pytest.approx(3.0 + 2.0 * frac, abs=0.005)
    assert state["signals"] == ["plant.x", "plant.v", "ramp.y"]
    assert state["last"] == res.values[-1].tolist()  # exactly
    assert state["lastT"] == pytest.approx(5.0, abs=1e-12)
    assert [float(s) for s in shown] == res.values[-1].tolist()  # the numbers the table shows
    assert state["status"].startswith("run ended (finished) at t = 5.000 s, 5001 steps")
    assert messages == [] and all(u.startswith(view.url) for u in requests), (messages, requests)
    assert (artifacts / "live_ended.png").stat().st_size > 10_000
