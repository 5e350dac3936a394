"""The CLI's plot options write an interactive page for a name ending in .html (issue 27 item 5):
`simulate --plot`, `linearize --bode/--modes` and `sweep --plot` draw the numbers written to the
CSV files, and the help names both kinds of file."""

import numpy as np
import pandas as pd
import pytest
from plot_pages import is_page, page_figure

from mbsfmu.cli import main


def test_simulate_plot_page_draws_the_csv_columns(tmp_path):
    out, page = tmp_path / "c.csv", tmp_path / "c.html"
    assert main(["simulate", "models/cart_pendulum.py", "--t-end", "0.5", "--out", str(out),
                 "--plot", str(page)]) == 0
    csv = pd.read_csv(out)
    traces, layout = page_figure(page)
    assert is_page(page) and [t["name"] for t in traces] == ["x", "theta"]
    for t in traces:  # the CSV's %.17g round-trips the doubles exactly
        assert np.array_equal(t["x"], csv["time"].to_numpy())
        assert np.array_equal(t["y"], csv[t["name"]].to_numpy())
    assert layout["xaxis"]["title"]["text"] == "time [s]"


def test_linearize_and_sweep_plot_pages(tmp_path, capsys):
    bode, modes = tmp_path / "b.html", tmp_path / "m.html"
    assert main(["linearize", "models/cart_pendulum.py", "--at", "x=0", "--at", "theta=0", "--inputs", "F",
                 "--outputs", "x", "--equilibrium", "--bode", str(bode), "--modes", str(modes)]) == 0
    assert is_page(bode) and is_page(modes)
    assert [t["name"] for t in page_figure(bode)[0]][:1] == ["F → x"]
    out, page = tmp_path / "s.csv", tmp_path / "s.html"
    assert main(["sweep", "models/cart_pendulum.py", "--param", "m=0.1:0.3:3", "--metric", "th=max(theta)",
                 "--t-end", "0.3", "--out", str(out), "--scheduler", "synchronous", "--plot", str(page)]) == 0
    assert f"plot -> {page}" in capsys.readouterr().out
    (line,), _ = page_figure(page)
    rows = pd.read_csv(out).sort_values("m")
    assert np.array_equal(line["x"], rows["m"].to_numpy())
    assert np.array_equal(line["y"], rows["th"].to_numpy())


def test_plot_help_names_images_and_pages(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    assert "--plot FILE.png|FILE.html" in capsys.readouterr().out
