"""The crane loop of examples/crane_loop.py swept as a diagram factory (issue 28, "How it must be
shown"): ``mbsfmu.sweep(crane_loop, {"rope_length": ..., "load_mass": ...})`` over the example's
grid (8 rope lengths x 6 loads) on a local Dask cluster of two workers, each run a 20 s
simulation with the example's metrics (the trolley settled within 2 % of its step, counted from
the reference's step and held for 2 s; the rope angle within ±0.5 rad) and the largest real
part of the loop's discrete closed-loop poles (``linearize={"domain": "discrete"}``):

* every row's status is 'ok' exactly where the linear verdict is stable (sigma < 0), the
  others 'not settled' or 'diverged', and the grid holds both; sigma equals
  ``mbsfmu.linearize(crane_loop(L, m), domain="discrete").largest_real_part`` of a serial
  call to 1e-12 relative;
* a study stopped part way (its rows file cut after some rows, the last one cut off) and
  resumed takes the sound rows, runs the rest and returns the first study's rows (wall time
  aside) bit for bit; a second resume runs nothing.
"""

import pathlib

import numpy as np
import pandas as pd
import pytest

import mbsfmu
from examples import crane_loop as example

DESIGN = {"rope_length": list(example.LENGTHS), "load_mass": list(example.LOADS)}
METRICS = {**example.METRICS, "sigma": "largest_real_part"}
OPTIONS = dict(t_end=example.T_END, metrics=METRICS, linearize=example.LINEARIZE, workers=2)


def _same(got, want):
    pd.testing.assert_frame_equal(got.drop(columns="wall_s").reset_index(drop=True),
                                  want.drop(columns="wall_s").reset_index(drop=True), check_exact=True)


@pytest.mark.slow
def test_crane_sweep_on_a_local_cluster_agrees_with_the_poles_and_resumes(tmp_path):
    example.plant_fmu()  # built once here, before the workers start
    out = tmp_path / "rows.csv"
    first = mbsfmu.sweep(example.crane_loop, DESIGN, out=out, **OPTIONS)
    assert len(first) == len(example.LENGTHS) * len(example.LOADS)
    stable = first["sigma"] < 0
    assert stable.any() and (~stable).any()
    assert (first.loc[stable, "status"] == "ok").all(), first.loc[stable]
    assert first.loc[~stable, "status"].isin(["not settled", "diverged"]).all(), first.loc[~stable]
    # the corner: gains for 2 m lose a 1 m rope with 77.5 kg
    corner = first[(first["rope_length"] == 1.0) & (first["load_mass"] == 77.5)].iloc[0]
    assert corner["sigma"] > 0 and corner["status"] != "ok"
    for row in first.sample(n=4, random_state=1).itertuples():
        serial = mbsfmu.linearize(example.crane_loop(row.rope_length, row.load_mass),
                                  **example.LINEARIZE).largest_real_part
        assert row.sigma == pytest.approx(serial, rel=1e-12)

    # stopped part way: 20 rows done, the 21st cut off in the middle of its line
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:21]) + lines[21][: len(lines[21]) // 2])
    with pytest.warns(Warning, match="cut off"):
        again = mbsfmu.sweep(example.crane_loop, DESIGN, out=out, **OPTIONS)
    assert again.attrs["resume"]["taken"] == 20 and again.attrs["resume"]["ran"] == len(first) - 20
    _same(again, first)
    once_more = mbsfmu.sweep(example.crane_loop, DESIGN, out=out, **OPTIONS)
    assert once_more.attrs["resume"]["taken"] == len(first) and once_more.attrs["resume"]["ran"] == 0
    _same(once_more, first)
    assert np.array_equal(pd.read_csv(out)["run"].to_numpy(), np.arange(len(first)))
    assert pathlib.Path(f"{out}.definition.json").is_file() or any(tmp_path.glob("*.definition.json"))
