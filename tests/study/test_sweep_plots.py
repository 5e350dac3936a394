"""Plots of a study (issue 14 item 4): a metric over one parameter, a heat map over two, a
histogram for Monte Carlo; the PNG is written and the drawn data are the DataFrame's."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mbsfmu
from mbsfmu.cli import main
from mbsfmu.core.errors import ParameterError
from mbsfmu.study import designs, plot_study

CART = "models/cart_pendulum.py"
PNG = b"\x89PNG\r\n\x1a\n"


def _png(path):
    return path.read_bytes()[:8] == PNG and path.stat().st_size > 1000


def test_metric_over_one_parameter(tmp_path):
    png = tmp_path / "line.png"
    df = mbsfmu.sweep(CART, {"m": [0.3, 0.1, 0.2], "mc": [1.0]}, t_end=0.5,
                      metrics={"x_end": "final(x)", "th": "max(theta)"}, scheduler="synchronous", plot=png)
    assert _png(png)
    ax = plot_study(df, metric="th")  # the design's mc is held at one value: a line over m
    line = ax.lines[0]
    order = np.argsort(df["m"].to_numpy())
    assert np.array_equal(line.get_xdata(), df["m"].to_numpy()[order])
    assert np.array_equal(line.get_ydata(), df["th"].to_numpy()[order])
    assert ax.get_xlabel() == "m" and ax.get_ylabel() == "th"


def test_heat_map_over_two_parameters(tmp_path):
    png = tmp_path / "map.png"
    df = mbsfmu.sweep(CART, {"m": "0.1:0.3:3", "theta": [0.1, 0.2, 0.4, 0.5]}, t_end=0.5,
                      metrics={"th": "max(theta)"}, scheduler="synchronous")
    ax = plot_study(df, png)
    assert _png(png)
    mesh = ax.collections[0]
    values = np.asarray(mesh.get_array()).reshape(4, 3)  # rows: theta, columns: m
    for i, theta in enumerate([0.1, 0.2, 0.4, 0.5]):
        for j, m in enumerate(np.linspace(0.1, 0.3, 3)):
            assert values[i, j] == df.loc[(df["theta"] == theta) & (df["m"] == m), "th"].item()
    assert ax.get_xlabel() == "m" and ax.get_ylabel() == "theta"


def test_histogram_of_a_monte_carlo_study(tmp_path):
    design = designs.monte_carlo({"m": stats.norm(0.2, 0.02), "mc": (0.8, 1.2)}, 30, seed=4)
    df = mbsfmu.sweep(CART, design, t_end=0.5, metrics={"x_end": "final(x)"}, scheduler="synchronous")
    df.loc[3, "status"] = "failed"  # a failed row is not drawn
    png = tmp_path / "hist.png"
    ax = plot_study(df, png, bins=6)
    assert _png(png)
    heights = [p.get_height() for p in ax.patches]
    assert len(heights) == 6 and sum(heights) == 29
    counts, _ = np.histogram(df.loc[df["status"] == "ok", "x_end"], bins=6)
    assert heights == counts.tolist()
    with pytest.raises(ParameterError, match="'nope'"):
        plot_study(df, metric="nope")
    with pytest.raises(ParameterError, match="full grid"):
        plot_study(df, kind="heatmap")


def test_cli_plot(tmp_path):
    out, png = tmp_path / "rows.csv", tmp_path / "cli.png"
    rc = main(["sweep", CART, "--param", "m=0.1:0.3:4", "--metric", "xm=max(x)", "--t-end", "0.3", "--out",
               str(out), "--scheduler", "synchronous", "--plot", str(png)])
    assert rc == 0 and _png(png) and len(pd.read_csv(out)) == 4


def _verdict_rows():
    """A 3 x 2 factorial of (c, k) whose runs are ok, not settled (settling time nan) or diverged."""
    df = pd.DataFrame({"run": range(6), "c": [0.1, 0.2, 0.3] * 2, "k": [1.0] * 3 + [2.0] * 3,
                       "ts": [4.0, np.nan, 3.0, np.nan, 2.5, 2.0],
                       "status": ["ok", "not settled", "ok", "diverged", "ok", "ok"],
                       "message": ["", "x is still outside", "", "x leaves its bound", "", ""],
                       "wall_s": [0.1] * 6})
    df.attrs["parameters"] = ["c", "k"]
    return df


def test_runs_that_did_not_settle_or_diverged_are_marked_not_coloured_as_times(tmp_path):
    df = _verdict_rows()
    ax = plot_study(df, tmp_path / "map.png")
    values = np.asarray(ax.collections[0].get_array()).reshape(2, 3)  # rows: k, columns: c
    assert np.array_equal(np.isnan(values), [[False, True, False], [True, False, False]])
    assert values[0, 0] == 4.0 and values[1, 2] == 2.0
    marks = {line.get_label(): (line.get_color(), list(line.get_xdata()), list(line.get_ydata()))
             for line in ax.lines}
    assert marks == {"not settled (1)": ("tab:orange", [0.2], [1.0]),
                     "diverged (1)": ("tab:red", [0.1], [2.0])}
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["not settled (1)", "diverged (1)"]
    assert ax.get_title() == "ts: 4 of 6 runs ok, 1 not settled, 1 diverged"
    # over one parameter: the ok runs are the line, the others points on the top edge
    one = df[df["k"] == 1.0].copy()
    one.loc[0, "status"] = "diverged"
    one.attrs["parameters"] = ["c"]
    ax = plot_study(one, metric="ts")
    lines = {line.get_label(): line for line in ax.lines}
    assert list(lines["ok"].get_xdata()) == [0.3] and list(lines["ok"].get_ydata()) == [3.0]
    assert list(lines["not settled (1)"].get_ydata()) == [4.0]  # top: the largest value drawn
    assert list(lines["diverged (1)"].get_ydata()) == [4.0]  # its value 4.0, kept in the row
    assert lines["diverged (1)"].get_linestyle() == "None"
