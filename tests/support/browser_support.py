"""The real browser of the browser tests (3D viewer, live scope): Debian's Chromium, headless,
driven by Playwright's Python client (the test extra) at /usr/bin/chromium; Playwright's own
browser download is never used.

``ci/test`` installs the browser (``ci/browser_deps``); in CI it also sets
MBSFMU_REQUIRE_BROWSER=1, and then a missing browser or client fails these tests instead of
skipping them, so that they cannot silently vanish.
"""

import os
import pathlib
import shutil

import numpy as np
import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
#: a missing browser fails instead of skipping (CI)
REQUIRED = os.environ.get("MBSFMU_REQUIRE_BROWSER") == "1"
#: software WebGL (no GPU here), and none of Chromium's own background connections
FLAGS = ["--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def skip_without_browser() -> list:
    """The marks of a browser test module: skip with the reason when Chromium is missing,
    unless REQUIRED."""
    if REQUIRED:
        return []
    return [pytest.mark.skipif(not pathlib.Path(CHROMIUM).exists(),
                               reason="the browser test needs Debian's chromium (ci/browser_deps)")]


def playwright_client():
    """``playwright.sync_api``; where it is missing the calling test module is skipped with the
    reason, unless REQUIRED (then the ImportError fails it)."""
    if REQUIRED:
        import playwright.sync_api

        return playwright.sync_api
    return pytest.importorskip("playwright.sync_api", reason="the browser test needs playwright (test extra)")


def launch(playwright, *args: str):
    """Headless Chromium started by ``playwright`` (a sync_playwright() context)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=[*FLAGS, *args])


#: the marker's colour (``mbsViewer.markFrame``; a colour the viewer draws nowhere else) and how
#: close a pixel must be to it
MARK_RGB, MARK_TOL = np.array([255, 0, 255]), 40


def project(cam, x):
    """Pixel (column, row) of the world point x seen by a perspective camera given by its
    position, target, up vector, vertical field of view [deg], aspect and the canvas rectangle:
    view = lookAt, clip = perspective projection, then the viewport map."""
    eye, target, up = (np.array(cam[k], dtype=float) for k in ("position", "target", "up"))
    back = eye - target
    back /= np.linalg.norm(back)             # camera z axis (looks along -z)
    right = np.cross(up, back)
    right /= np.linalg.norm(right)
    upc = np.cross(back, right)
    d = x - eye
    xc, yc, zc = d @ right, d @ upc, d @ back
    f = 1.0 / np.tan(np.radians(cam["fov"]) / 2)
    ndc = np.array([f / cam["aspect"] * xc / -zc, f * yc / -zc])
    left, top, w, h = cam["rect"]
    return np.array([left + (ndc[0] + 1) / 2 * w, top + (1 - ndc[1]) / 2 * h])


CAMERA_JS = """() => { const v = mbsViewer, c = v.camera, r = v.renderer.domElement.getBoundingClientRect();
  return {position: c.position.toArray(), target: v.controls.target.toArray(), up: c.up.toArray(),
          fov: c.fov, aspect: c.aspect, rect: [r.left, r.top, r.width, r.height]}; }"""


def marker_centre(png, color=MARK_RGB) -> np.ndarray:
    """Centroid (column, row) of the pixels of the marker's colour (``color``) in a screenshot,
    in the coordinates of the projection (pixel (i, j) covers [i, i + 1] x [j, j + 1])."""
    from PIL import Image

    rgb = np.asarray(Image.open(png).convert("RGB"), dtype=int)
    hit = np.all(np.abs(rgb - np.asarray(color)) <= MARK_TOL, axis=-1)
    assert hit.sum() >= 20, f"the marker is not in {png} ({hit.sum()} pixels of its colour)"
    rows, cols = np.nonzero(hit)
    return np.array([cols.mean(), rows.mean()]) + 0.5


def watch(pg) -> tuple[list, list]:
    """(messages, requests) of the page ``pg`` as they come: its console messages and page
    errors ('type: text') and the URLs it asks for."""
    messages, requests = [], []
    pg.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    pg.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
    pg.on("request", lambda r: requests.append(r.url))
    return messages, requests


def offline_page(browser, path, **context):
    """A page of ``browser`` for the file ``path``, offline: a request for anything but the file
    is aborted and noted.  Returns (page, messages, outside): the console messages and page
    errors ('type: text') and the URLs asked for outside the file, as they come.  ``context``:
    options of the browser context (viewport, ...)."""
    ctx = browser.new_context(offline=True, **context)
    outside = []

    def only_the_file(route):
        if route.request.url == path.as_uri():
            return route.continue_()
        outside.append(route.request.url)
        return route.abort()

    ctx.route("**/*", only_the_file)
    pg = ctx.new_page()
    messages, _ = watch(pg)
    return pg, messages, outside
