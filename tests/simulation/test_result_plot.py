"""A simulation result's plot (issue 27 item 5): the image as before, and for a name ending in
.html one self-contained interactive page that draws the result's columns themselves under the
image's title and labels."""

import pathlib

import numpy as np
import pytest
from plot_pages import page_like_image

import mbsfmu
from mbsfmu.plotting import matplotlib_figure

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def res():
    return mbsfmu.simulate(mbsfmu.load_model(ROOT / "models" / "cart_pendulum.py"), t_end=1.0)


def test_plot_page_draws_the_result_columns(res, tmp_path):
    page = tmp_path / "r.html"
    res.plot(page)
    traces = page_like_image(page, matplotlib_figure.draw(res.figure()))
    assert [t["name"] for t in traces] == ["x", "theta"]
    for t in traces:
        assert np.array_equal(t["x"], res.t) and np.array_equal(t["y"], res[t["name"]])
    res.plot(page, signals=["theta"], title="swing")
    traces = page_like_image(page, matplotlib_figure.draw(res.figure(["theta"], "swing")))
    assert len(traces) == 1 and np.array_equal(traces[0]["y"], res["theta"])


def test_plot_png_is_unchanged_in_kind(res, tmp_path):
    png = tmp_path / "r.png"
    res.plot(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fig = matplotlib_figure.draw(res.figure())
    (ax,) = fig.axes
    assert ax.get_title() == "Cart with inverted pendulum" and ax.get_xlabel() == "time [s]"
    assert [line.get_label() for line in ax.lines] == ["x", "theta"]
    assert np.array_equal(ax.lines[1].get_ydata(), res["theta"])
