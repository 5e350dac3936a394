"""Parameter studies (issue 14, first slice): designs, sweep rows against single runs, failed
runs as rows, resume, an FMU target, the default process-based local cluster, the CLI."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mbsfmu
from mbsfmu.cli import main
from mbsfmu.core.errors import ParameterError
from mbsfmu.study import batch, designs
from mbsfmu.study.results import read_rows

CART = "models/cart_pendulum.py"
SLIDER = "models/slider_crank.py"
METRICS = {"x_final": "final(x)", "theta_max": ("max", "theta"), "theta_rms": "rms(theta)",
           "dx_min": "min(der(x))"}


def _expected(system, values, t_end=1.0):
    r = mbsfmu.simulate(system, t_end=t_end, params={k: v for k, v in values.items() if k != "theta"},
                        initial={"theta": values["theta"]} if "theta" in values else None)
    return {"x_final": r["x"][-1], "theta_max": np.max(r["theta"]),
            "theta_rms": np.sqrt(np.mean(np.square(r["theta"]))), "dx_min": np.min(r["der(x)"])}


def test_rows_equal_single_simulate_runs_bit_for_bit():
    design = {"m": "0.1:0.3:3", "theta": [0.1, 0.2]}
    df = mbsfmu.sweep(CART, design, t_end=1.0, metrics=METRICS, scheduler="synchronous", batch=2)
    assert len(df) == 6 and (df["status"] == "ok").all()
    system = mbsfmu.load_model(CART)
    for _, row in df.iterrows():
        want = _expected(system, {"m": row["m"], "theta": row["theta"]})
        for name, v in want.items():
            assert row[name] == v, (name, row["run"])  # tolerance 0: the same run, bit for bit
    # the model was loaded (derived, compiled) once in this process for all six runs
    assert batch.LOAD_COUNT[batch.make_target(CART, True).key] == 1


def test_designs_size_bounds_and_seed():
    f = designs.factorial({"a": "0:1:5", "b": "1,2,3"})
    assert f.shape == (15, 2) and list(f["a"].unique()) == list(np.linspace(0, 1, 5))
    bounds = {"a": (0.1, 0.5), "b": "2:3"}
    for make in (designs.latin_hypercube, designs.sobol):
        d = make(bounds, 16, seed=7)
        assert d.shape == (16, 2)
        assert d["a"].between(0.1, 0.5).all() and d["b"].between(2, 3).all()
        assert d.equals(make(bounds, 16, seed=7)) and not d.equals(make(bounds, 16, seed=8))
    lhs = designs.latin_hypercube({"a": (0.0, 1.0)}, 10, seed=1)  # one point in each tenth
    assert sorted(np.floor(lhs["a"] * 10).astype(int)) == list(range(10))
    mc = designs.monte_carlo({"m": stats.norm(1.0, 0.1), "l": (0.4, 0.6)}, 2000, seed=3)
    assert mc.shape == (2000, 2) and mc["l"].between(0.4, 0.6).all()
    assert abs(mc["m"].mean() - 1.0) < 0.01 and abs(mc["m"].std() - 0.1) < 0.01  # ~4 sigma of the estimates
    assert mc.equals(designs.monte_carlo({"m": stats.norm(1.0, 0.1), "l": (0.4, 0.6)}, 2000, seed=3))
    table = designs.table(pd.DataFrame({"m": [0.1, 0.2]}))
    assert table["m"].tolist() == [0.1, 0.2]


@pytest.mark.parametrize("bad, words", [({"a": "0:1:0"}, "N >= 1"), ({"a": "1:0:3"}, "reversed"),
                                        ({"a": "0:x:3"}, "not a number")])
def test_bad_ranges_are_named(bad, words):
    with pytest.raises(ParameterError, match=words):
        designs.factorial(bad)


def test_bad_input_before_any_run(tmp_path):
    with pytest.raises(ParameterError, match="'mass'"):
        mbsfmu.sweep(CART, {"mass": [1.0]}, t_end=0.1, scheduler="synchronous")
    with pytest.raises(ParameterError, match="unknown kind 'median'"):
        mbsfmu.sweep(CART, {"m": [0.1]}, t_end=0.1, metrics={"q": "median(x)"}, scheduler="synchronous")
    with pytest.raises(ParameterError, match=r"metric 'q' = max\(zz\): no signal 'zz' in 'cart_pendulum'"):
        mbsfmu.sweep(CART, {"m": [0.1]}, t_end=0.1, metrics={"q": "max(zz)"}, out=tmp_path / "q.csv",
                     scheduler="synchronous")
    assert not list(tmp_path.iterdir())  # refused before the runs: nothing written
    df = mbsfmu.sweep(CART, {"m": [0.1]}, t_end=0.1, metrics={"q": lambda r: r["zz"][-1]},
                      scheduler="synchronous")
    assert df["status"][0] == "failed" and "metric 'q'" in df["message"][0] and "run 0" in df["message"][0]


def test_failing_runs_are_rows_not_aborts():
    df = mbsfmu.sweep(SLIDER, {"l": [0.5, 0.05]}, t_end=0.5, metrics={"res": "max(constraint_residual)"},
                      scheduler="synchronous")
    assert df["status"].tolist() == ["ok", "failed"]
    assert df["res"][0] < 1e-10
    assert "ConstraintError" in df["message"][1] and "no consistent initial state" in df["message"][1]
    assert np.isnan(df["res"][1])
    neg = mbsfmu.sweep(CART, {"mc": [1.0, -1.0]}, t_end=0.2, scheduler="synchronous")
    assert neg["status"].tolist() == ["ok", "failed"] and "mass must be positive" in neg["message"][1]


def test_interrupted_sweep_resumes_without_rerunning(tmp_path):
    out = tmp_path / "rows.csv"
    calls = []

    def counted(result):
        calls.append(1)
        if stop_after[0] is not None and len(calls) > stop_after[0]:
            raise KeyboardInterrupt  # a stop: not a failed run, the sweep ends here
        return result["x"][-1]

    design = {"m": "0.1:0.3:6"}
    stop_after = [4]
    with pytest.raises(KeyboardInterrupt):
        mbsfmu.sweep(CART, design, t_end=0.5, metrics={"x_end": counted}, out=out, scheduler="synchronous",
                     batch=1)
    assert len(pd.read_csv(out)) == 4
    calls.clear()
    stop_after[0] = None
    df = mbsfmu.sweep(CART, design, t_end=0.5, metrics={"x_end": counted}, out=out, scheduler="synchronous",
                      batch=1)
    assert len(calls) == 2  # only the two runs not in the file
    assert df["run"].tolist() == list(range(6)) and (df["status"] == "ok").all()
    fresh = mbsfmu.sweep(CART, design, t_end=0.5, metrics={"x_end": "final(x)"}, scheduler="synchronous")
    assert df["x_end"].tolist() == fresh["x_end"].tolist()  # read back from the CSV bit for bit
    assert len(pd.read_csv(out)) == 6
    with pytest.raises(ParameterError, match=r"another sweep definition:\n  design: 6 runs, sha256 \w+ in "
                                             r"rows.csv, 6 runs, sha256 \w+ now"):
        mbsfmu.sweep(CART, {"m": "0.2:0.3:6"}, t_end=0.5, metrics={"x_end": counted}, out=out,
                     scheduler="synchronous")


def test_fmu_target_equals_simulate_fmu(tmp_path):
    from fmpy import simulate_fmu

    fmu = mbsfmu.build_fmu(CART, tmp_path / "cart.fmu", kind="native")
    df = mbsfmu.sweep(fmu, {"m": [0.1, 0.25]}, t_end=1.0, dt=0.01, metrics={"x_end": "final(x)",
                      "theta_max": "max(theta)"}, scheduler="synchronous")
    assert (df["status"] == "ok").all(), df["message"].tolist()
    for _, row in df.iterrows():
        r = simulate_fmu(str(fmu), start_values={"m": row["m"]}, stop_time=1.0, output_interval=0.01,
                         output=["x", "theta"])
        assert row["x_end"] == r["x"][-1] and row["theta_max"] == np.max(r["theta"])  # bit for bit


def test_default_local_cluster_of_processes(tmp_path):
    out = tmp_path / "rows.csv"
    df = mbsfmu.sweep(CART, {"m": "0.1:0.3:4"}, t_end=1.0, metrics=METRICS, out=out, workers=2)
    system = mbsfmu.load_model(CART)
    assert (df["status"] == "ok").all()
    for _, row in df.iterrows():
        want = _expected(system, {"m": row["m"]})
        assert all(row[k] == v for k, v in want.items())  # worker processes: still bit for bit
    back = read_rows(out)
    assert back.sort_values("run")["x_final"].tolist() == df["x_final"].tolist()


def test_cli_sweep(tmp_path, capsys):
    out = tmp_path / "cli.csv"
    rc = main(["sweep", CART, "--param", "m=0.1:0.2:2", "--param", "theta=0.1,0.2", "--metric",
               "xm=max(x)", "--t-end", "0.5", "--out", str(out), "--scheduler", "synchronous"])
    assert rc == 0
    df = pd.read_csv(out)
    assert len(df) == 4 and (df["status"] == "ok").all() and "xm" in df
    rc = main(["sweep", CART, "--param", "m=0.1:0.2", "--design", "lhs", "--samples", "3", "--seed", "1",
               "--t-end", "0.2", "--out", str(tmp_path / "lhs.csv"), "--scheduler", "synchronous"])
    assert rc == 0 and len(pd.read_csv(tmp_path / "lhs.csv")) == 3
