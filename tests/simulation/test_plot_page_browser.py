"""A result's plot page in a real browser (issue 27 item 5): headless Chromium (Debian's package,
driven by Playwright) opens the page with the network off and only the file allowed; it loads
without console errors or requests leaving the file, draws one trace per signal, the mouse
over a sample shows that sample's time and value, and a click on a legend entry hides its
curve and a second click shows it.  The page and its screenshot are kept
in out/test-artifacts/ (the `artifacts` fixture)."""

import pathlib
import re

import pytest
from browser_support import launch, offline_page, playwright_client, skip_without_browser

import mbsfmu

ROOT = pathlib.Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, *skip_without_browser()]  # Chromium and a 4.8 MB page: about 9 s
playwright_api = playwright_client()

#: where sample k of trace i sits on the page (CSS pixels): plotly's axes map data to the plot area
WHERE = """([i, k]) => {
    const gd = document.querySelector('.js-plotly-plot'), L = gd._fullLayout, d = gd.calcdata[i][k];
    const box = gd.getBoundingClientRect();
    return [box.left + L.xaxis._offset + L.xaxis.c2p(d.x), box.top + L.yaxis._offset + L.yaxis.c2p(d.y)];
}"""


def test_plot_page_loads_offline_draws_and_hovers(artifacts):
    res = mbsfmu.simulate(mbsfmu.load_model(ROOT / "models" / "cart_pendulum.py"), t_end=1.0, dt=0.05)
    page = artifacts / "r.html"
    res.plot(page)
    with playwright_api.sync_playwright() as p:
        browser = launch(p)
        try:
            pg, messages, outside = offline_page(browser, page, viewport={"width": 900, "height": 600})
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
            pg.screenshot(path=str(artifacts / "plot_page_hover.png"))
            pg.locator(".legend .traces").first.click()  # the legend hides x ...
            pg.wait_for_function("document.querySelectorAll('.scatterlayer .trace').length === 1")
            assert pg.evaluate("document.querySelector('.js-plotly-plot').data[0].visible") == "legendonly"
            pg.locator(".legend .traces").first.click()  # ... and shows it again
            pg.wait_for_function("document.querySelectorAll('.scatterlayer .trace').length === 2")
        finally:
            browser.close()
    assert not [m for m in messages if m.startswith(("error", "pageerror"))], messages
    assert outside == []
    numbers = [float(v.replace("−", "-")) for v in re.findall(r"[−-]?\d+\.?\d*(?:e[−-]?\d+)?", label)]
    assert "theta" in label
    assert numbers[0] == pytest.approx(res.t[k], abs=1e-3)
    assert numbers[1] == pytest.approx(res["theta"][k], abs=1e-3)
