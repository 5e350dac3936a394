"""Sweeps on a real dask.distributed cluster (issue 14): a scheduler and two workers started as
separate processes on 127.0.0.1 with Dask's own command-line tools.  A sweep of a model file and
of a native FMU gives the rows of a local synchronous sweep bit for bit, and a worker killed in
the middle of a sweep costs no row (the scheduler runs its tasks again on the other worker)."""

import pathlib
import threading
import time

import pandas as pd
import pytest

import mbsfmu
from mbsfmu.study.results import read_rows

ROOT = pathlib.Path(__file__).resolve().parents[1]
CART = str(ROOT / "models" / "cart_pendulum.py")
METRICS = {"x_final": "final(x)", "theta_max": "max(theta)", "theta_rms": "rms(theta)"}


@pytest.fixture
def cluster(start_cli_cluster):
    """A scheduler and two single-threaded workers without nanny (the worker is the process we
    start, so killing it loses the worker), each in its own process group."""
    return start_cli_cluster()


def _rows(df):
    return df.drop(columns="wall_s")


def test_model_and_fmu_sweeps_on_a_cluster_equal_local_sweeps(cluster, tmp_path):
    design = {"m": "0.1:0.3:4", "theta": [0.1, 0.2]}  # 8 runs
    remote = mbsfmu.sweep(CART, design, t_end=1.0, metrics=METRICS, scheduler=cluster.address, batch=2)
    local = mbsfmu.sweep(CART, design, t_end=1.0, metrics=METRICS, scheduler="synchronous")
    assert len(remote) == 8 and (remote["status"] == "ok").all(), remote["message"].tolist()
    pd.testing.assert_frame_equal(_rows(remote), _rows(local), check_exact=True)  # bit for bit

    fmu = mbsfmu.build_fmu(CART, tmp_path / "cart.fmu", kind="native")
    fmu_design = {"m": [0.1, 0.2, 0.3], "mc": [1.0, 2.0]}  # 6 runs
    opts = dict(t_end=1.0, dt=0.01, metrics={"x_end": "final(x)", "theta_max": "max(theta)"}, batch=1)
    remote = mbsfmu.sweep(fmu, fmu_design, scheduler=cluster.client, **opts)
    local = mbsfmu.sweep(fmu, fmu_design, scheduler="synchronous", **opts)
    assert (remote["status"] == "ok").all(), remote["message"].tolist()
    pd.testing.assert_frame_equal(_rows(remote), _rows(local), check_exact=True)
    # both workers took part
    assert len(cluster.client.scheduler_info()["workers"]) == 2


def test_a_worker_killed_mid_sweep_loses_no_row(cluster, tmp_path):
    out = tmp_path / "rows.csv"
    n = 16

    def slow_x_end(result):  # defined here, so it travels to the workers by value
        time.sleep(0.3)
        return result["x"][-1]

    killed = {}

    def kill_after_first_rows():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if out.exists() and len(out.read_text().splitlines()) >= 3:  # header and two rows
                killed["rows_before"] = len(out.read_text().splitlines()) - 1
                cluster.workers[0].kill()  # SIGKILL: no goodbye to the scheduler
                return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_after_first_rows, daemon=True)
    killer.start()
    design = {"m": f"0.1:0.4:{n}"}
    df = mbsfmu.sweep(CART, design, t_end=1.0, metrics={"x_end": slow_x_end}, out=out,
                      scheduler=cluster.address, batch=1)
    killer.join(timeout=10)
    assert cluster.workers[0].poll() is not None and 0 < killed["rows_before"] < n  # killed mid-sweep
    assert len(cluster.client.scheduler_info()["workers"]) == 1
    assert df["run"].tolist() == list(range(n)) and (df["status"] == "ok").all(), df["message"].tolist()
    written = read_rows(out)
    assert sorted(written["run"]) == list(range(n))  # every row in the file, once
    local = mbsfmu.sweep(CART, design, t_end=1.0, metrics={"x_end": "final(x)"}, scheduler="synchronous")
    assert df["x_end"].tolist() == local["x_end"].tolist()
