"""The 3D viewer page in a real browser (issue 27): headless Chromium (Debian's package, driven
by Playwright's Python client) opens the page with the network off; it loads without console
errors or requests leaving the file, a marked frame sits in the screenshot where the pendulum's
closed-form kinematics, projected through the page's camera in numpy, puts it at two time-slider
positions (also a natural-coordinate model's point where its coordinates put it), and playing
advances the time.  Screenshots stay in the test's tmp_path."""

import contextlib
import pathlib

import numpy as np
import pytest
from browser_support import CAMERA_JS, launch, marker_centre, playwright_client, project, skip_without_browser
from double_pendulum_kinematics import closed_form

import mbsfmu

ROOT = pathlib.Path(__file__).resolve().parents[2]
DP = str(ROOT / "models" / "double_pendulum.py")
#: how far the marker's centre may lie from the projected point [px]: antialiased edges and a
#: perspective sphere's outline, slightly off-centre (seen: 0.03 px)
PIXEL_TOL = 0.3
VIEWPORT = {"width": 800, "height": 600}

pytestmark = skip_without_browser()
playwright_api = playwright_client()


@pytest.fixture(scope="module")
def dp():
    """The double pendulum over 1 s at 100 samples per second, and its viewer page."""
    res = mbsfmu.simulate(DP, t_end=1.0, dt=0.01, backend="numpy")
    return res


@pytest.fixture
def page(dp, tmp_path):
    """The viewer page of ``dp`` (with the tip's path and the links' axes) opened offline in
    headless Chromium; yields the page, the console messages and page errors seen, and every
    request that was not for the file itself."""
    path = tmp_path / "dp.html"
    dp.animate(path, traces=["P2_cg"], axes=["P1", "P2"])
    with opened(path) as seen:
        yield seen


@contextlib.contextmanager
def opened(path):
    """The page at ``path`` in headless Chromium, offline (see :func:`page`)."""
    with playwright_api.sync_playwright() as p:
        browser = launch(p)
        try:
            ctx = browser.new_context(offline=True, viewport=VIEWPORT, device_scale_factor=1)
            outside = []

            def only_the_file(route):
                if route.request.url == path.as_uri():
                    return route.continue_()
                outside.append(route.request.url)
                return route.abort()

            ctx.route("**/*", only_the_file)
            pg = ctx.new_page()
            messages = []
            pg.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
            pg.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
            pg.goto(path.as_uri())
            pg.wait_for_function("window.mbsViewer !== undefined", timeout=20_000)
            yield pg, messages, outside
        finally:
            browser.close()


def set_slider(pg, i):
    """Move the time slider to sample i as a user's drag does (an 'input' event)."""
    pg.eval_on_selector("#slider", "(e, v) => { e.value = v; e.dispatchEvent(new Event('input')); }", str(i))


def check_marker(pg, frame, where, samples, tmp_path, stem):
    """Mark ``frame``; at each slider position i of ``samples`` the marker's centre in a
    screenshot is within PIXEL_TOL px of ``where[i]`` projected through the page's camera.
    Returns the centres seen."""
    pg.evaluate(f"mbsViewer.markFrame('{frame}', '#ff00ff', 0.06)")
    seen = []
    for i in samples:
        set_slider(pg, i)
        assert pg.evaluate("mbsViewer.sample") == i
        png = tmp_path / f"{stem}_sample{i}.png"
        pg.screenshot(path=str(png))
        got = marker_centre(png)
        want = project(pg.evaluate(CAMERA_JS), where[i])
        assert np.linalg.norm(got - want) <= PIXEL_TOL, (i, got, want)
        seen.append(got)
    return seen


def test_a_natural_coordinate_model_sits_where_its_coordinates_put_it(tmp_path):
    """The four-bar chain in natural coordinates (y up, seen from +z): the marker on the point
    A1 sits at its coordinates (A1_x, A1_y, 0) at slider positions 5 and 15, within PIXEL_TOL."""
    res = mbsfmu.simulate(str(ROOT / "models" / "four_bar_natural.py"), t_end=1.0, dt=0.05, backend="numpy")
    path = tmp_path / "fb.html"
    res.animate(path)
    where = np.stack([res["A1_x"], res["A1_y"], 0 * res.t], axis=1)
    with opened(path) as (pg, messages, outside):
        seen = check_marker(pg, "A1", where, (5, 15), tmp_path, "fb")
        assert np.linalg.norm(seen[1] - seen[0]) > 30
        assert messages == [] and outside == []


def test_page_loads_offline_without_errors_and_draws_the_pendulum_where_it_is(dp, page, tmp_path):
    """At slider positions 25 and 80 the marker on P2_cg (the lower link's tip) is within
    PIXEL_TOL px of the closed-form tip L1 (0, sin a, -cos a) + L2 (0, sin(a+p), -cos(a+p))
    projected through the page's camera; the two positions differ on screen (it moves); the
    page reports the slider's time, and no console message, page error or request leaves it."""
    pg, messages, outside = page
    tip = closed_form(dp["alpha"], dp["phi"])[:, 4]
    seen = check_marker(pg, "P2_cg", tip, (25, 80), tmp_path, "dp")
    for i in (25, 80):
        set_slider(pg, i)
        assert pg.evaluate("mbsViewer.time") == pytest.approx(dp.t[i], abs=1e-6)
        assert pg.inner_text("#time") == f"t = {dp.t[i]:.3f} s"
    assert np.linalg.norm(seen[1] - seen[0]) > 30  # the tip moved on screen
    assert messages == [] and outside == []


def test_playing_advances_the_time(page, tmp_path):
    """play() runs the clock: after half a second of wall-clock time the sample has advanced;
    pause() stops it."""
    pg, messages, _ = page
    assert pg.evaluate("mbsViewer.sample") == 0 and not pg.evaluate("mbsViewer.playing")
    pg.click("#play")
    pg.wait_for_timeout(500)
    assert pg.evaluate("mbsViewer.playing")
    t_play = pg.evaluate("mbsViewer.time")
    pg.screenshot(path=str(tmp_path / "dp_playing.png"))
    assert t_play > 0.05
    pg.click("#play")
    t_paused = pg.evaluate("mbsViewer.time")
    pg.wait_for_timeout(300)
    assert pg.evaluate("mbsViewer.time") == t_paused and not pg.evaluate("mbsViewer.playing")
    assert messages == []
