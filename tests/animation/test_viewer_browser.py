"""The 3D viewer page in a real browser (issue 27): headless Chromium (Debian's package, driven
by Playwright's Python client) opens the page with the network off; it loads without console
errors or requests leaving the file, a marked frame sits in the screenshot where the pendulum's
closed-form kinematics, projected through the page's camera in numpy, puts it at two time-slider
positions (also a natural-coordinate model's point where its coordinates put it, a mesh shape
where its frame's pose puts its vertices, and a slider-crank's loop closed where both its
branches meet), and playing advances the time.  Screenshots and pages are kept in
out/test-artifacts/ (the `artifacts` fixture)."""

import contextlib
import pathlib

import numpy as np
import pytest
from browser_support import (
    CAMERA_JS,
    MARK_RGB,
    launch,
    marker_centre,
    offline_page,
    playwright_client,
    project,
    skip_without_browser,
)
from double_pendulum_kinematics import closed_form
from mesh_files import CONE_HEIGHT, write_cone
from PIL import Image
from scipy.spatial import ConvexHull

import mbsfmu

ROOT = pathlib.Path(__file__).resolve().parents[2]
DP = str(ROOT / "models" / "double_pendulum.py")
#: the marker's colour (a colour the page draws nowhere else) and how close a pixel must be to it
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
def page(dp, artifacts):
    """The viewer page of ``dp`` (with the tip's path and the links' axes) opened offline in
    headless Chromium; yields the page, the console messages and page errors seen, and every
    request that was not for the file itself."""
    path = artifacts / "dp.html"
    dp.animate(path, traces=["P2_cg"], axes=["P1", "P2"])
    with opened(path) as seen:
        yield seen


@contextlib.contextmanager
def opened(path):
    """The page at ``path`` in headless Chromium, offline (see :func:`page`)."""
    with playwright_api.sync_playwright() as p:
        browser = launch(p)
        try:
            pg, messages, outside = offline_page(browser, path, viewport=VIEWPORT, device_scale_factor=1)
            pg.goto(path.as_uri())
            pg.wait_for_function("window.mbsViewer !== undefined", timeout=20_000)
            yield pg, messages, outside
        finally:
            browser.close()


def set_slider(pg, i):
    """Move the time slider to sample i as a user's drag does (an 'input' event)."""
    pg.eval_on_selector("#slider", "(e, v) => { e.value = v; e.dispatchEvent(new Event('input')); }", str(i))


def check_marker(pg, frame, where, samples, artifacts, stem, color=MARK_RGB, radius=0.06):
    """Mark ``frame`` (in ``color``, RGB); at each slider position i of ``samples`` the marker's
    centre in a screenshot is within PIXEL_TOL px of ``where[i]`` projected through the page's
    camera.  Returns the centres seen."""
    pg.evaluate(f"mbsViewer.markFrame('{frame}', 'rgb({','.join(map(str, color))})', {radius})")
    seen = []
    for i in samples:
        set_slider(pg, i)
        assert pg.evaluate("mbsViewer.sample") == i
        png = artifacts / f"{stem}_sample{i}.png"
        pg.screenshot(path=str(png))
        got = marker_centre(png, color)
        want = project(pg.evaluate(CAMERA_JS), where[i])
        assert np.linalg.norm(got - want) <= PIXEL_TOL, (i, got, want)
        seen.append(got)
    return seen


def test_a_natural_coordinate_model_sits_where_its_coordinates_put_it(artifacts):
    """The four-bar chain in natural coordinates (y up, seen from +z): the marker on the point
    A1 sits at its coordinates (A1_x, A1_y, 0) at slider positions 5 and 15, within PIXEL_TOL."""
    res = mbsfmu.simulate(str(ROOT / "models" / "four_bar_natural.py"), t_end=1.0, dt=0.05, backend="numpy")
    path = artifacts / "fb.html"
    res.animate(path)
    where = np.stack([res["A1_x"], res["A1_y"], 0 * res.t], axis=1)
    with opened(path) as (pg, messages, outside):
        seen = check_marker(pg, "A1", where, (5, 15), artifacts, "fb")
        assert np.linalg.norm(seen[1] - seen[0]) > 30
        assert messages == [] and outside == []


def test_page_loads_offline_without_errors_and_draws_the_pendulum_where_it_is(dp, page, artifacts):
    """At slider positions 25 and 80 the marker on P2_cg (the lower link's tip) is within
    PIXEL_TOL px of the closed-form tip L1 (0, sin a, -cos a) + L2 (0, sin(a+p), -cos(a+p))
    projected through the page's camera; the two positions differ on screen (it moves); the
    page reports the slider's time, and no console message, page error or request leaves it."""
    pg, messages, outside = page
    tip = closed_form(dp["alpha"], dp["phi"])[:, 4]
    seen = check_marker(pg, "P2_cg", tip, (25, 80), artifacts, "dp")
    for i in (25, 80):
        set_slider(pg, i)
        assert pg.evaluate("mbsViewer.time") == pytest.approx(dp.t[i], abs=1e-6)
        assert pg.inner_text("#time") == f"t = {dp.t[i]:.3f} s"
    assert np.linalg.norm(seen[1] - seen[0]) > 30  # the tip moved on screen
    assert messages == [] and outside == []


def test_playing_advances_the_time(page, artifacts):
    """play() runs the clock: after half a second of wall-clock time the sample has advanced;
    pause() stops it."""
    pg, messages, _ = page
    assert pg.evaluate("mbsViewer.sample") == 0 and not pg.evaluate("mbsViewer.playing")
    pg.click("#play")
    pg.wait_for_timeout(500)
    assert pg.evaluate("mbsViewer.playing")
    t_play = pg.evaluate("mbsViewer.time")
    pg.screenshot(path=str(artifacts / "dp_playing.png"))
    assert t_play > 0.05
    pg.click("#play")
    t_paused = pg.evaluate("mbsViewer.time")
    pg.wait_for_timeout(300)
    assert pg.evaluate("mbsViewer.time") == t_paused and not pg.evaluate("mbsViewer.playing")
    assert messages == []


#: the mesh's colour (teal: no other drawn thing has it) and how a pixel of it is told, shaded
#: by the lights: green and blue about equal, red well below them
MESH_COLOR = "#00a0a0"
#: how far outside the projected outline antialiased mesh pixels may lie, and how far inside the
#: outline the mesh must cover the pixels [px]
EDGE_PX = 2.0
#: the part of the screenshot looked at around the mesh's outline [px]
WINDOW_PX = 40


def teal(rgb):
    r, g, b = (rgb[..., i].astype(float) for i in range(3))
    return (g > 50) & (r < 0.5 * g) & (np.abs(g - b) < 0.25 * g)


def rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def test_a_mesh_shape_is_drawn_where_its_frame_puts_its_vertices(artifacts):
    """A cone (trimesh's primitive, written by the test as binary STL) on the double pendulum's
    lower link, scaled (0.3, 0.3, 0.5), rotated by rot_x(0.5) and moved by (0, 0, 0.1) in P2's cg
    frame.  At slider positions 25 and 80, with every vertex's world point r + S_x(a + p) p_v from
    the closed form projected through the page's camera in numpy: the teal pixels of the
    screenshot near it (WINDOW_PX) all lie within EDGE_PX of the projected vertices' convex hull
    (the silhouette of a convex body), and cover at least 80 % of the pixels deeper than EDGE_PX
    inside it; then a marker on a frame placed at the cone's apex is within PIXEL_TOL px of the
    apex's projection."""
    stl = write_cone(artifacts, "stl")
    s = mbsfmu.load_model(DP)
    scale, offset, R = np.array([0.3, 0.3, 0.5]), np.array([0.0, 0.0, 0.1]), rot_x(0.5)
    s.visual("P2_cg", "mesh", size=tuple(scale), file=stl, offset=tuple(offset), rotation=mbsfmu.rot_x(0.5),
             color=MESH_COLOR)  # on the frame: the link keeps its own colour
    apex_local = offset + R @ (scale * [0.0, 0.0, CONE_HEIGHT])
    s.frame("apex", ref="P2_cg", pos=list(apex_local))
    res = mbsfmu.simulate(s, t_end=1.0, dt=0.01, backend="numpy")
    path = artifacts / "mesh.html"
    res.animate(path)
    local = s.visuals["P2_cg"].mesh.vertices
    tip = closed_form(res["alpha"], res["phi"])[:, 4]
    S = [rot_x(a + p) for a, p in zip(res["alpha"], res["phi"])]
    with opened(path) as (pg, messages, outside):
        for i in (25, 80):
            set_slider(pg, i)
            png = artifacts / f"mesh_sample{i}.png"
            pg.screenshot(path=str(png))
            cam = pg.evaluate(CAMERA_JS)
            pix = np.array([project(cam, tip[i] + S[i] @ v) for v in local])
            hull = ConvexHull(pix)
            rgb = np.asarray(Image.open(png).convert("RGB"), dtype=int)
            rows, cols = np.indices(rgb.shape[:2])
            centres = np.stack([cols.ravel() + 0.5, rows.ravel() + 0.5], axis=1)
            # signed distance to the hull (outside > 0), exact inside, a lower bound outside
            dist = (centres @ hull.equations[:, :2].T + hull.equations[:, 2]).max(axis=1)
            # the pixels within WINDOW_PX of the outline's bounding box (the ISYS z axis is bluish too)
            lo, hi = pix.min(axis=0) - WINDOW_PX, pix.max(axis=0) + WINDOW_PX
            near = np.all((centres >= lo) & (centres <= hi), axis=1)
            hit = teal(rgb).ravel() & near
            assert hit.sum() > 200, f"the mesh is not in {png} ({hit.sum()} teal pixels)"
            assert not np.any(hit & (dist > EDGE_PX)), (i, np.sort(dist[hit])[-5:])
            inner = dist < -EDGE_PX
            assert hit[inner].mean() >= 0.8, (i, hit[inner].mean())
        want = np.array([tip[i] + S[i] @ apex_local for i in range(len(res.t))])
        check_marker(pg, "apex", want, (25, 80), artifacts, "mesh", radius=0.03)
        assert messages == [] and outside == []


#: the second and third markers' colours (cyan, yellow: unlike the bodies' C0-C2 and the axes)
MARK2_RGB, MARK3_RGB = np.array([0, 255, 255]), np.array([255, 255, 0])


def test_a_constraint_loop_is_drawn_closed(artifacts):
    """The slider-crank (models/slider_crank.py): the loop closes where the crank's free end
    (branch slider - rod - crank) meets the fixed pivot at ISYS's origin.  From the simulated
    coordinates, the closed form crank_end = (x, 0, 0) + l (cos a, sin a, 0) + r (cos(a + b),
    sin(a + b), 0) is within 1e-8 of the origin at slider positions 5 and 15 (the loop residual),
    and there a marker on crank_end (magenta) and then one on ISYS (cyan, the other branch) are
    each within PIXEL_TOL px of it projected; a marker on the rod's far end (the crank pin, yellow) sits
    at (x + l cos a, l sin a, 0) and has moved > 10 px between the two positions."""
    res = mbsfmu.simulate(str(ROOT / "models" / "slider_crank.py"), t_end=1.0, dt=0.05, backend="numpy")
    path = artifacts / "sc.html"
    res.animate(path)
    x, a, b, zero = res["x"], res["alpha"], res["beta"], 0 * res.t
    r, l = 0.15, 0.5
    pin = np.stack([x + l * np.cos(a), l * np.sin(a), zero], axis=1)
    end = pin + r * np.stack([np.cos(a + b), np.sin(a + b), zero], axis=1)
    samples = (5, 15)
    assert np.abs(x[5] - x[15]) > 0.05  # the slider moved
    assert np.linalg.norm(end[list(samples)], axis=1).max() < 1e-8
    with opened(path) as (pg, messages, outside):
        check_marker(pg, "crank_end", end, samples, artifacts, "sc_end", radius=0.03)
        check_marker(pg, "ISYS", 0 * end, samples, artifacts, "sc_pivot", color=MARK2_RGB, radius=0.03)
        seen = check_marker(pg, "rod_end", pin, samples, artifacts, "sc_pin", color=MARK3_RGB, radius=0.03)
        assert np.linalg.norm(seen[1] - seen[0]) > 10
        assert messages == [] and outside == []
