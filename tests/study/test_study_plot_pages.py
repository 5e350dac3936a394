"""A sweep's plots and the sensitivity indices' bar chart as interactive pages (issue 27 item 5):
the metric over a parameter, the heat map over two, the histogram's counts and the indices with
their confidence intervals are the study's own numbers, under the image's words."""

import numpy as np
import pytest
from oscillator_models import oscillator
from plot_pages import page_like_image
from scipy import stats

import mbsfmu
from mbsfmu.core.errors import ParameterError
from mbsfmu.study import designs, plot_study, sobol_indices

CART = "models/cart_pendulum.py"
RUN = dict(t_end=0.5, scheduler="synchronous")


def test_line_plot_page(tmp_path):
    df = mbsfmu.sweep(CART, {"m": [0.3, 0.1, 0.2], "mc": [1.0]}, metrics={"th": "max(theta)"}, **RUN)
    ax = plot_study(df, tmp_path / "l.html")
    (t,) = page_like_image(tmp_path / "l.html", ax.figure)
    order = np.argsort(df["m"].to_numpy())
    assert np.array_equal(t["x"], df["m"].to_numpy()[order])
    assert np.array_equal(t["y"], df["th"].to_numpy()[order])
    assert t["mode"] == "lines+markers"


def test_heat_map_plot_page(tmp_path):
    df = mbsfmu.sweep(CART, {"m": "0.1:0.3:3", "theta": [0.1, 0.2, 0.4, 0.5]}, metrics={"th": "max(theta)"},
                      **RUN)
    ax = plot_study(df, tmp_path / "h.html")
    (t,) = page_like_image(tmp_path / "h.html", ax.figure)
    assert t["type"] == "heatmap" and t["colorbar"]["title"]["text"] == "th"
    np.testing.assert_allclose(t["x"], [0.05, 0.15, 0.25, 0.35], rtol=0, atol=1e-15)  # cell edges
    np.testing.assert_allclose(t["y"], [0.05, 0.15, 0.3, 0.45, 0.55], rtol=0, atol=1e-15)
    for i, theta in enumerate([0.1, 0.2, 0.4, 0.5]):
        for j, m in enumerate(np.linspace(0.1, 0.3, 3)):
            assert t["z"][i, j] == df.loc[(df["theta"] == theta) & (df["m"] == m), "th"].item()


def test_histogram_plot_page(tmp_path):
    design = designs.monte_carlo({"m": stats.norm(0.2, 0.02), "mc": (0.8, 1.2)}, 30, seed=4)
    df = mbsfmu.sweep(CART, design, metrics={"x_end": "final(x)"}, **RUN)
    df.loc[3, "status"] = "failed"  # a failed row is not drawn
    ax = plot_study(df, tmp_path / "h.html", bins=6)
    (t,) = page_like_image(tmp_path / "h.html", ax.figure)
    counts, edges = np.histogram(df.loc[df["status"] == "ok", "x_end"], bins=6)
    assert t["y"].tolist() == counts.tolist() == [p.get_height() for p in ax.patches]
    np.testing.assert_allclose(t["x"], (edges[1:] + edges[:-1]) / 2, rtol=1e-15)
    np.testing.assert_allclose(t["width"], np.diff(edges), rtol=1e-12)


def test_indices_plot_page(tmp_path):
    r = sobol_indices(oscillator(), {"x": (-1.0, 1.0), "der(x)": (-1.0, 1.0)}, n=8,
                      metrics={"xf": "final(x)", "vf": "final(der(x))"}, t_end=1.0, scheduler="synchronous",
                      plot=tmp_path / "s.html")
    fig = r.plot()
    traces = page_like_image(tmp_path / "s.html", fig)
    assert [(t["name"], t["xaxis"], t["showlegend"]) for t in traces] == [
        ("first order S1", "x", True), ("total ST", "x", True),
        ("first order S1", "x2", False), ("total ST", "x2", False)]  # one legend entry each
    for t, (metric, column) in zip(traces, [("xf", "S1"), ("xf", "ST"), ("vf", "S1"), ("vf", "ST")]):
        table = r.indices.xs(metric, level="metric")
        assert t["x"] == ["x", "der(x)"]
        assert np.array_equal(t["y"], table[column].to_numpy(), equal_nan=True)
        assert np.array_equal(t["error_y"]["array"], table[f"{column}_conf"].to_numpy(), equal_nan=True)


def test_plot_study_refuses_what_it_refused_before(tmp_path):
    df = mbsfmu.sweep(CART, {"m": [0.1, 0.2]}, metrics={"th": "max(theta)"}, **RUN)
    with pytest.raises(ParameterError, match="kind must be one of line, heatmap, hist, got 'pie'"):
        plot_study(df, tmp_path / "p.html", kind="pie")
    assert not (tmp_path / "p.html").exists()
