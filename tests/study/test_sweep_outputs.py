"""Parameter studies (issue 14, second slice): the settling-time metric, kept trajectories (one
file per run or one array file, resumed), Parquet rows, a derived System on worker processes,
an unreachable scheduler within a bounded time, and the progress bar with its ETA."""

import io
import socket
import time

import numpy as np
import pandas as pd
import pytest

import mbsfmu
from mbsfmu.cli import main
from mbsfmu.core.errors import ParameterError
from mbsfmu.study import metrics, trajectories

CART = "models/cart_pendulum.py"


def test_settling_time_of_a_first_order_decay():
    # s = 1 - exp(-t/tau) enters the 2 % band of its step at the closed-form time below; on a grid
    # the metric is the first grid time at or after it
    tau, t = 0.3, np.linspace(0.0, 5.0, 5001)
    s = 1 - np.exp(-t / tau)
    s_end = s[-1]
    band = 0.02 * (s_end - s[0])
    # |s - s_n| = exp(-t/tau) - exp(-5/tau) <= band  <=>  t >= -tau ln(band + exp(-5/tau))
    t_closed = -tau * np.log(band + np.exp(-5.0 / tau))
    assert abs(metrics.settling_time(t, s) - t_closed) <= 1e-3 + 1e-12  # one grid step
    t_closed5 = -tau * np.log(0.05 * (s_end - s[0]) + np.exp(-5 / tau))
    assert abs(metrics.settling_time(t, s, 0.05) - t_closed5) <= 1e-3
    # a damped oscillation ending where it started: the band is about its largest deviation
    w = np.exp(-t) * np.sin(8 * t) * (5.0 - t) / 5.0
    assert w[0] == w[-1] == 0.0
    ts = metrics.settling_time(t, w)
    assert np.all(np.abs(w[t >= ts] - w[-1]) <= 0.02 * np.abs(w - w[-1]).max())
    assert np.abs(w[t < ts][-1] - w[-1]) > 0.02 * np.abs(w - w[-1]).max()
    assert metrics.settling_time(t, np.full_like(t, 2.0)) == 0.0  # never leaves the band


@pytest.mark.parametrize("spec, band", [("settling(theta)", 0.02), ("settling(theta, 5%)", 0.05),
                                        ("settling( theta , 0.1 )", 0.1)])
def test_settling_metric_parses_its_band(spec, band):
    m = metrics.Metric("ts", spec)
    assert (m.kind, m.signal, m.band) == ("settling", "theta", band)


@pytest.mark.parametrize("spec", ["settling(theta, 150%)", "settling(theta, 0)", "settled(theta)"])
def test_bad_settling_specs_are_named(spec):
    with pytest.raises(ParameterError, match="'ts'"):
        metrics.Metric("ts", spec)


def test_settling_rows_equal_single_runs():
    # the cart's pendulum is still swinging at t_end = 3 s (outside its band around the last
    # sample within the last 10 % of the run): the rows say 'not settled', nan, and why
    df = mbsfmu.sweep(CART, {"d": [0.5, 2.0]}, t_end=3.0, dt=0.01,
                      metrics={"ts": "settling(theta)", "ts5": "settling(theta, 5%)", "mx": "max(theta)"},
                      scheduler="synchronous")
    assert (df["status"] == "not settled").all(), df["message"].tolist()
    system = mbsfmu.load_model(CART)
    for _, row in df.iterrows():
        r = mbsfmu.simulate(system, t_end=3.0, dt=0.01, params={"d": row["d"]})
        assert np.isnan(row["ts"]) and np.isnan(row["ts5"])
        assert row["mx"] == np.max(r["theta"])  # the row keeps its other metrics
        assert "metric 'ts': theta is still outside its 2 % band" in row["message"]
        assert "metric 'ts5': theta is still outside its 5 % band" in row["message"]
        # over the window before the last 10 %, the same samples give the metric of the rule
        held = metrics.Metric("ts", "settling(theta, hold=0)")(r)
        assert held == metrics.settling_time(r.t, r["theta"]) and held < 3.0


@pytest.mark.parametrize("kind", ["folder", "npz"])
def test_trajectories_equal_single_runs_and_survive_a_stop(tmp_path, kind):
    where = tmp_path / ("traj" if kind == "folder" else "traj.npz")
    out = tmp_path / "rows.csv"
    design = {"m": "0.1:0.3:5"}
    calls, limit = [], [3]

    def stops(result):  # the same metric both times (a resume checks it), a stop the first time
        calls.append(1)
        if limit[0] is not None and len(calls) > limit[0]:
            raise KeyboardInterrupt
        return result["x"][-1]

    with pytest.raises(KeyboardInterrupt):
        mbsfmu.sweep(CART, design, t_end=0.5, dt=0.05, metrics={"x_end": stops}, out=out,
                     trajectories=where, scheduler="synchronous", batch=1)
    calls.clear()
    limit[0] = None
    df = mbsfmu.sweep(CART, design, t_end=0.5, dt=0.05, metrics={"x_end": stops}, out=out,
                      trajectories=where, scheduler="synchronous", batch=1)
    assert len(df) == 5 and (df["status"] == "ok").all()
    kept = trajectories.read(where)
    assert sorted(kept) == list(range(5))
    system = mbsfmu.load_model(CART)
    for _, row in df.iterrows():
        r = mbsfmu.simulate(system, t_end=0.5, dt=0.05, params={"m": row["m"]})
        tr = kept[int(row["run"])]
        assert list(tr.dtype.names) == r.columns
        for c in r.columns:
            assert np.array_equal(np.asarray(tr[c], dtype=float), r[c])  # bit for bit
    if kind == "npz":
        assert not (tmp_path / "traj.npz.parts").exists()


def test_failed_runs_have_no_trajectory(tmp_path):
    df = mbsfmu.sweep(CART, {"m": [0.2, -1.0]}, t_end=0.2, dt=0.1, trajectories=tmp_path / "t",
                      scheduler="synchronous")
    assert df["status"].tolist() == ["ok", "failed"]
    assert sorted(trajectories.read(tmp_path / "t")) == [0]


def test_fmu_trajectories(tmp_path, built_fmu):
    from fmpy import simulate_fmu

    fmu = built_fmu(CART)
    df = mbsfmu.sweep(fmu, {"m": [0.1, 0.25]}, t_end=0.5, dt=0.05, metrics={"x_end": "final(x)"},
                      trajectories=tmp_path / "t.npz", scheduler="synchronous")
    kept = trajectories.read(tmp_path / "t.npz")
    for _, row in df.iterrows():
        r = simulate_fmu(str(fmu), start_values={"m": row["m"]}, stop_time=0.5, output_interval=0.05)
        assert kept[int(row["run"])].dtype.names == r.dtype.names
        assert all(np.array_equal(kept[int(row["run"])][c], r[c]) for c in r.dtype.names)


def test_parquet_rows_resume_and_read_back_exactly(tmp_path):
    out = tmp_path / "rows.parquet"
    calls, limit = [], [2]

    def stops(result):  # the same metric both times (a resume checks it), a stop the first time
        calls.append(1)
        if limit[0] is not None and len(calls) > limit[0]:
            raise KeyboardInterrupt
        return result["x"][-1]

    design = {"m": "0.1:0.3:4"}
    with pytest.raises(KeyboardInterrupt):
        mbsfmu.sweep(CART, design, t_end=0.5, metrics={"x_end": stops}, out=out, scheduler="synchronous",
                     batch=1)
    assert not out.exists() and len(pd.read_csv(tmp_path / "rows.parquet.partial.csv")) == 2
    calls.clear()
    limit[0] = None
    df = mbsfmu.sweep(CART, design, t_end=0.5, metrics={"x_end": stops}, out=out, scheduler="synchronous",
                      batch=1)
    assert len(calls) == 2  # the two finished runs were not run again
    back = pd.read_parquet(out)
    assert back["run"].tolist() == list(range(4)) and not (tmp_path / "rows.parquet.partial.csv").exists()
    fresh = mbsfmu.sweep(CART, design, t_end=0.5, metrics={"x_end": "final(x)"}, scheduler="synchronous")
    assert back["x_end"].tolist() == fresh["x_end"].tolist() == df["x_end"].tolist()  # bit for bit


@pytest.mark.slow
def test_a_derived_and_simulated_system_runs_on_worker_processes():
    system = mbsfmu.load_model(CART)
    mbsfmu.simulate(system, t_end=0.1)  # derived, compiled, its engine loaded in this process
    df = mbsfmu.sweep(system, {"m": [0.1, 0.2]}, t_end=0.5, metrics={"x_end": "final(x)"},
                      scheduler="processes", workers=2)
    assert (df["status"] == "ok").all(), df["message"].tolist()
    for _, row in df.iterrows():
        assert row["x_end"] == mbsfmu.simulate(system, t_end=0.5, params={"m": row["m"]})["x"][-1]


@pytest.mark.slow
def test_unreachable_scheduler_fails_within_bounded_time():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(ParameterError, match=rf"cannot reach the Dask scheduler at 'tcp://127.0.0.1:{port}' "
                                             r"within 2 s"):
        mbsfmu.sweep(CART, {"m": [0.1]}, t_end=0.1, scheduler=f"tcp://127.0.0.1:{port}", connect_timeout=2)
    assert time.monotonic() - start < 20  # 2 s asked; Dask's retries and our start-up on top
    start = time.monotonic()
    assert main(["sweep", CART, "--param", "m=0.1", "--t-end", "0.1", "--out", "/tmp/unused-rows.csv",
                 "--scheduler", f"tcp://127.0.0.1:{port}", "--connect-timeout", "1"]) == 2
    assert time.monotonic() - start < 20


def test_progress_bar_shows_rate_and_time_left(monkeypatch):
    import sys

    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    mbsfmu.sweep(CART, {"m": "0.1:0.3:4"}, t_end=0.2, scheduler="synchronous", batch=1, progress=True)
    text = err.getvalue()
    assert "sweep" in text and "4/4" in text
    assert "run/s" in text or "s/run" in text   # the rate
    assert "<" in text and "00:00" in text       # elapsed<remaining, tqdm's ETA


@pytest.mark.parametrize("n, workers, per_run, size", [
    (2000, 2, None, 250),      # four tasks per worker
    (2000, 2, 0.0046, 250),    # already long enough
    (2000, 100, None, 5),
    (2000, 100, 0.0046, 20),   # raised towards 0.2 s per task (44 runs), but each worker gets one
    (100000, 100, 0.0046, 250),
    (3, 4, 1e-4, 1)])
def test_default_batch_carries_enough_work_per_task(n, workers, per_run, size):
    from mbsfmu.study import batch

    assert batch.default_batch(n, workers, per_run) == size


def test_first_run_sizes_the_batches_and_is_a_row(monkeypatch):
    from mbsfmu.study import batch

    seen = []
    real = batch.default_batch
    monkeypatch.setattr(batch, "default_batch", lambda n, w, per_run=None: seen.append((n, w, per_run))
                        or real(n, w, per_run))
    df = mbsfmu.sweep(CART, {"m": "0.1:0.3:5"}, t_end=0.5, metrics={"x_end": "final(x)"},
                      scheduler="processes", workers=2)
    assert df["run"].tolist() == list(range(5)) and (df["status"] == "ok").all()
    (n, w, per_run), = seen
    # the first wave is one run per task on each of the 2 workers (never here: a run that kills
    # its process must not take the caller with it); run 0's time sizes the batches of the other 3
    assert n == 3 and w == 2 and 0 < per_run == df["wall_s"].iloc[0]
    fresh = mbsfmu.sweep(CART, {"m": "0.1:0.3:5"}, t_end=0.5, metrics={"x_end": "final(x)"},
                         scheduler="synchronous")
    assert df["x_end"].tolist() == fresh["x_end"].tolist()


def test_worker_count_follows_the_scheduler():
    import os
    from types import SimpleNamespace

    from mbsfmu.study import batch

    cluster = SimpleNamespace(scheduler_info=lambda: {"workers": {"a": 1, "b": 2, "c": 3}})
    assert batch.worker_count(cluster) == 3
    assert batch.worker_count(cluster, workers=7) == 7
    assert batch.worker_count(None) == min(os.cpu_count() or 1, 4)
    assert batch.worker_count("synchronous") == 1
    assert batch.worker_count("processes") == (os.cpu_count() or 1)


def test_trajectories_folder_that_is_a_file_is_named(tmp_path):
    blocker = tmp_path / "runs"
    blocker.write_text("not a folder")
    with pytest.raises(ParameterError, match=r"trajectories '.*runs' exists and is not a folder"):
        mbsfmu.sweep(CART, {"m": [0.1]}, t_end=0.1, trajectories=blocker, scheduler="synchronous")
    assert blocker.read_text() == "not a folder"  # left as it was
