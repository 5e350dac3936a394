"""A fit's plot as an interactive page (issue 27 item 5): per signal the data points, the fitted
model's curve and the residuals are the fit's own arrays, and the curve is the closed form of the
fitted oscillator, x0 cos(sqrt(k/m) t)."""

import math

import numpy as np
import pandas as pd
from oscillator_models import M, oscillator
from plot_pages import page_like_image

import mbsfmu
from mbsfmu.plotting import matplotlib_figure


def test_fit_plot_page_draws_data_model_and_residuals(tmp_path):
    t = np.linspace(0.05, 2.0, 30)
    data = 0.3 * np.cos(2.0 * t) + 0.01 * np.random.default_rng(1).standard_normal(len(t))
    res = mbsfmu.fit(oscillator(), pd.DataFrame({"time": t, "x": data}), {"x": (0, 1), "k": (5, 10)}, ["x"])
    page = tmp_path / "fit.html"
    assert res.plot(page) == str(page)
    points, curve, residuals = page_like_image(page, matplotlib_figure.draw(res.figure()))
    assert (points["name"], points["mode"], curve["name"], curve["mode"]) == ("data", "markers",
                                                                              "fitted model", "lines")
    for trace in (points, curve, residuals):
        assert np.array_equal(trace["x"], t)
    assert np.array_equal(points["y"], data) and np.array_equal(curve["y"], res.fitted[:, 0])
    assert np.array_equal(residuals["y"], data - res.fitted[:, 0]) and residuals["yaxis"] == "y2"
    x0, k = res.values["x"], res.values["k"]
    np.testing.assert_allclose(curve["y"], x0 * np.cos(math.sqrt(k / M) * t), atol=1e-6)
