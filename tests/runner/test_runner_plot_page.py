"""A block-diagram result's plot as an interactive page (issue 27 item 5): one subplot per block,
each recorded signal held from sample to sample (a step line) with the recorded values, the
image's labels."""

import numpy as np
from plot_pages import page_like_image
from runner_support import Clock, Gain

from mbsfmu.runner import Diagram


def test_runner_plot_page_draws_the_recorded_signals(tmp_path):
    d = Diagram(0.1)
    d.add("src", Clock())
    d.add("g", Gain(2.0))
    d.connect("src.y", "g.u")
    res = d.run(1.0)
    page = tmp_path / "run.html"
    fig = res.plot(page)  # the matplotlib Figure, as for an image
    traces = page_like_image(page, fig)
    assert [(t["name"], t["xaxis"], t["line"]["shape"]) for t in traces] == [("src.y", "x", "hv"),
                                                                             ("g.y", "x2", "hv")]
    for t in traces:
        assert np.array_equal(t["x"], res.t) and np.array_equal(t["y"], res[t["name"]])
    np.testing.assert_array_equal(traces[1]["y"], 2.0 * np.asarray(res.t))  # the gain of the clock
    assert not (tmp_path / "run.png").exists()
