"""An optimization's plot as an interactive page (issue 27 item 5): the objective and the
constraint per evaluation and each parameter's path scaled to its range are the history's
numbers, under the image's words."""

import numpy as np
from oscillator_models import oscillator
from plot_pages import page_like_image

import mbsfmu
from mbsfmu.plotting import matplotlib_figure


def test_optimization_plot_page_draws_the_history(tmp_path):
    res = mbsfmu.optimize(oscillator(), minimize="integral(energy_spring)",
                          params={"x": (-1, 1), "der(x)": (-2, 2)}, t_end=1.0,
                          constraints={"end": ("final(x)", ">=", 0.1)}, start={"x": 0.3})
    page = tmp_path / "opt.html"
    res.plot(page)
    objective, end, x, v = page_like_image(page, matplotlib_figure.draw(res.figure()))
    h = res.history
    n = np.arange(1, len(h) + 1)
    for trace in (objective, end, x, v):
        assert np.array_equal(trace["x"], n)
    assert np.array_equal(objective["y"], h["objective"].to_numpy())
    assert np.array_equal(end["y"], h["end"].to_numpy()) and end["line"]["dash"] == "dash"
    assert x["name"] == "x in [-1, 1]" and v["name"] == "der(x) in [-2, 2]"
    np.testing.assert_allclose(x["y"], (h["x"].to_numpy() + 1) / 2, rtol=0, atol=1e-15)
    np.testing.assert_allclose(v["y"], (h["der(x)"].to_numpy() + 2) / 4, rtol=0, atol=1e-15)
