"""The linearization's plots as interactive pages (issue 27 item 5): the Bode plot's magnitude and
phase are those of the transfer function's polynomials, the mode plot draws the mechanism at the
operating point and displaced along each mode (seed 002's double pendulum), or for a model
without frames the mode shapes as bars; the words are the image's."""

import pathlib

import numpy as np
import pytest
from plot_pages import page_figure, page_like_image

import mbsfmu
from mbsfmu.analysis.modal import bode_figure, frame_positions, modes, modes_figure
from mbsfmu.plotting import matplotlib_figure

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def double_pendulum():
    s = mbsfmu.load_model(str(ROOT / "models" / "double_pendulum.py"))
    return mbsfmu.linearize(s, at={}, symbolic=False, equilibrium=True)


def test_bode_plot_page_is_the_transfer_function(tmp_path):
    cart = mbsfmu.load_model(ROOT / "models" / "cart_pendulum.py")
    lin = mbsfmu.linearize(cart, at={"x": 0, "theta": 0}, inputs=["F"], outputs=["x", "theta"],
                           equilibrium=True)
    page = tmp_path / "bode.html"
    lin.bode(page)
    traces = page_like_image(page, matplotlib_figure.draw(bode_figure(lin.numeric())))
    assert [(t["name"], t["yaxis"]) for t in traces] == [("F → x", "y"), ("F → theta", "y"), ("", "y2"),
                                                          ("", "y2")]
    for k, output in enumerate(["x", "theta"]):
        f = traces[k]["x"]
        num, den = lin.transfer_function("F", output)
        G = np.polyval(num, 2j * np.pi * f) / np.polyval(den, 2j * np.pi * f)
        np.testing.assert_allclose(traces[k]["y"], 20 * np.log10(np.abs(G)), rtol=0, atol=1e-8)
        np.testing.assert_allclose(traces[k + 2]["y"], np.degrees(np.unwrap(np.angle(G))), rtol=0, atol=1e-7)
        assert np.array_equal(traces[k + 2]["x"], f)
    _, layout = page_figure(page)
    assert layout["xaxis"]["type"] == layout["xaxis2"]["type"] == "log"


def test_mode_plot_page_draws_the_mechanism(double_pendulum, tmp_path):
    lin = double_pendulum
    page = tmp_path / "modes.html"
    lin.plot_modes(page)
    traces = page_like_image(page, matplotlib_figure.draw(modes_figure(lin.numeric())))
    positions, names, refs = frame_positions(lin.numeric())
    links = [(names.index(r), i) for i, r in enumerate(refs) if r is not None]

    def drawn(p):  # the links in the y-z plane, one NaN between links
        rows = [[p[j, a], p[i, a], np.nan] for j, i in links for a in (1, 2)]
        return np.ravel(rows[0::2]), np.ravel(rows[1::2])

    p0 = positions(np.zeros(2))
    np.testing.assert_allclose(p0[:, 2], [0, 0, -1, -1, -2], atol=1e-15)
    assert len(traces) == 4  # per mode: at rest (grey), displaced (blue)
    for k, mode in enumerate(modes(lin.numeric())):
        rest, displaced = traces[2 * k], traces[2 * k + 1]
        assert rest["xaxis"] == displaced["xaxis"] == ("x" if k == 0 else "x2")
        for got, want in zip((rest["x"], rest["y"]), drawn(p0)):
            np.testing.assert_array_equal(got, want)
        # displaced along the mode's shape, the largest first-order displacement a fifth of the
        # mechanism's size (2 m)
        shape = np.array([mode.shape[c].real for c in lin.coordinates])
        d = (positions(1e-6 * shape) - p0) / 1e-6
        eps = 0.2 * 2.0 / np.max(np.abs(d))
        for got, want in zip((displaced["x"], displaced["y"]), drawn(positions(eps * shape))):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_mode_plot_page_of_a_model_without_frames_draws_the_shapes(double_pendulum, tmp_path):
    lin = mbsfmu.linearize(double_pendulum.to_system(), at={}, symbolic=False, equilibrium=True)
    page = tmp_path / "modes.html"
    lin.plot_modes(page, count=1)
    (bars,) = page_like_image(page, matplotlib_figure.draw(modes_figure(lin.numeric(), 1)))
    (mode,) = modes(lin.numeric())[:1]
    assert bars["type"] == "bar" and bars["x"] == list(mode.shape)
    np.testing.assert_array_equal(bars["y"], [v.real for v in mode.shape.values()])
    _, layout = page_figure(page)
    assert layout["yaxis"]["range"] == [-1.1, 1.1]
