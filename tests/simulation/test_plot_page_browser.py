"""A result's plot page in a real browser (issue 27 item 5): headless Chromium (Debian's package,
driven by Playwright) opens the page with the network off and only the file allowed; it loads
without console errors or requests leaving the file, draws one trace per signal, and the mouse
over a sample shows that sample's time and value.  The screenshot stays in the test's
tmp_path."""

import pathlib
import re

import pytest
from browser_support import launch, playwright_client, skip_without_browser

import mbsfmu

ROOT = pathlib.Path(__file__).resolve().parents[2]

pytestmark = skip_without_browser()
playwright_api = playwright_client()

#: where sample k of trace i sits on the page (CSS pixels): plotly's axes map data to the plot area
WHERE = """([i, k]) => {
    const gd = document.querySelector('.js-plotly-plot'), L = gd._fullLayout, d = gd.calcdata[i][k];
    const box = gd.getBoundingClientRect();
    return [box.left + L.xaxis._offset + L.xaxis.c2p(d.x), box.top + L.yaxis._offset + L.yaxis.c2p(d.y)];
}"""


def test_plot_page_loads_offline_draws_and_hovers(tmp_path):
    res = mbsfmu.simulate(mbsfmu.load_model(ROOT / "models" / "cart_pendulum.py"), t_end=1.0, dt=0.05)
    page = tmp_path / "r.html"
    res.plot(page)
    with playwright_api.sync_playwright() as p:
        browser = launch(p)
        try:
            ctx = browser.new_context(offline=True, viewport={"width": 900, "height": 600})
            outside, messages = [], []

            def only_the_file(route):
                if route.request.url == page.as_uri():
                    return route.continue_()
                outside.append(route.request.url)
                return route.abort()

            ctx.route("**/*", only_the_file)
            pg = ctx.new_page()
            pg.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
            pg.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
            pg.goto(page.as_uri())
            pg.wait_for_selector(".js-plotly-plot .scatterlayer .trace", timeout=20_000)
            assert pg.locator(".scatterlayer .trace").count() == 2  # x and theta
            assert pg.locator(".legend .traces").count() == 2
            k = 14  # a sample where x and theta lie apart
            assert abs(res["theta"][k] - res["x"][k]) > 0.05
            x, y = pg.evaluate(WHERE, [1, k])
            pg.mouse.move(x, y)
            pg.wait_for_selector(".hoverlayer .hovertext", timeout=5_000)
            label = pg.locator(".hoverlayer .hovertext").first.text_content()
            pg.screenshot(path=str(tmp_path / "plot_page_hover.png"))
        finally:
            browser.close()
    assert not [m for m in messages if m.startswith(("error", "pageerror"))], messages
    assert outside == []
    numbers = [float(v.replace("−", "-")) for v in re.findall(r"[−-]?\d+\.?\d*(?:e[−-]?\d+)?", label)]
    assert "theta" in label
    assert numbers[0] == pytest.approx(res.t[k], abs=1e-3)
    assert numbers[1] == pytest.approx(res["theta"][k], abs=1e-3)
