"""A sweep on a real Dask cluster ends, and says why (issue 23): a scheduler and workers started
as separate processes with Dask's own command-line tools (``CliCluster``), then

* the scheduler is killed mid-sweep: SweepError at once, naming the scheduler;
* every worker is killed mid-sweep: SweepError after ``cluster_timeout`` without a worker;
* a run kills its worker process (a real segmentation fault, in a metric function): a failed row
  naming the run and its parameters, every other run of its batch a row as usual.

Each ends within a bounded time with every finished row in ``out`` and on the error's
``.rows``, and those rows equal a synchronous sweep's bit for bit.  The bounds are generous (a
loaded 2-core machine); what is asserted is that the call ends, not how fast.
"""

import pathlib
import threading
import time

import pandas as pd
import pytest

import mbsfmu
from mbsfmu.core.errors import SweepError
from mbsfmu.study.results import read_rows

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
CART = str(ROOT / "models" / "cart_pendulum.py")
#: what "ends" means here: far above the few seconds each case takes, far below a hang
BOUND = 120


def _slow_final_x():
    """A metric slow enough that a kill lands mid-sweep; made inside a function, so it travels
    to the workers by value (a test module is not importable there)."""
    def final_x(result):
        time.sleep(0.25)
        return result["x"][-1]

    return final_x


def _kill_when_rows(out, n_rows, kill):
    """A thread that calls ``kill()`` once ``out`` holds ``n_rows`` rows."""
    def watch():
        deadline = time.monotonic() + BOUND
        while time.monotonic() < deadline:
            if out.exists() and len(out.read_text().splitlines()) > n_rows:
                kill()
                return
            time.sleep(0.02)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _same_as_synchronous(rows, design):
    """The finished rows equal those of a synchronous sweep of the same runs, bit for bit."""
    local = mbsfmu.sweep(CART, design, t_end=0.5, metrics={"x_end": "final(x)"}, scheduler="synchronous")
    local = local.set_index("run").loc[rows["run"]]
    assert rows["x_end"].tolist() == local["x_end"].tolist()


def _ended_with_rows(call, out, design, pattern):
    """Run ``call``; it must raise SweepError matching ``pattern`` within BOUND seconds, with
    the rows of ``out`` on the error: some but not all runs, each once, all ok."""
    start = time.monotonic()
    with pytest.raises(SweepError, match=pattern) as info:
        call()
    took = time.monotonic() - start
    assert took < BOUND, took
    rows = info.value.rows
    written = read_rows(out).sort_values("run").reset_index(drop=True)
    n = len(pd.DataFrame(design))
    assert 0 < len(rows) < n and (rows["status"] == "ok").all(), rows["message"].tolist()
    assert rows["run"].tolist() == written["run"].tolist() == sorted(set(written["run"]))
    assert f"the {len(rows)} rows that finished are in {str(out)!r}" in str(info.value)
    _same_as_synchronous(rows, design)
    return info.value, took


def test_scheduler_killed_mid_sweep_ends_the_sweep_at_once(start_cli_cluster, tmp_path):
    cluster = start_cli_cluster()
    out = tmp_path / "rows.csv"
    design = {"m": [0.1 + 0.02 * i for i in range(12)]}
    killer = _kill_when_rows(out, 2, lambda: cluster.procs[0].kill())  # the scheduler, SIGKILL
    exc, took = _ended_with_rows(
        lambda: mbsfmu.sweep(CART, design, t_end=0.5, metrics={"x_end": _slow_final_x()}, out=out,
                             scheduler=cluster.address, batch=1, cluster_timeout=60),
        out, design, rf"the connection to the Dask scheduler at {cluster.address} was lost")
    killer.join(timeout=10)
    assert cluster.procs[0].poll() is not None  # it was killed mid-sweep
    assert took < 60  # at once, not after cluster_timeout
    assert "runs did not finish (runs " in str(exc)
    # the same call on another scheduler runs only the missing runs
    df = mbsfmu.sweep(CART, design, t_end=0.5, metrics={"x_end": _slow_final_x()}, out=out,
                      scheduler="synchronous")
    assert df["run"].tolist() == list(range(12)) and (df["status"] == "ok").all()
    _same_as_synchronous(df, design)


def test_all_workers_killed_mid_sweep_ends_after_cluster_timeout(start_cli_cluster, tmp_path):
    cluster = start_cli_cluster()
    out = tmp_path / "rows.csv"
    design = {"m": [0.1 + 0.02 * i for i in range(12)]}

    def kill_workers():
        for w in cluster.workers:
            w.kill()

    killer = _kill_when_rows(out, 2, kill_workers)
    exc, took = _ended_with_rows(
        lambda: mbsfmu.sweep(CART, design, t_end=0.5, metrics={"x_end": _slow_final_x()}, out=out,
                             scheduler=cluster.address, batch=1, cluster_timeout=2),
        out, design, rf"the Dask cluster at {cluster.address} has had no worker for 2 s \(cluster_timeout, 2 "
                     r"before\): \d+ runs did not finish")
    killer.join(timeout=10)
    assert all(w.poll() is not None for w in cluster.workers)
    assert took > 2  # it waited cluster_timeout for a worker to come back


def test_a_run_that_kills_its_worker_is_a_failed_row(start_cli_cluster, tmp_path):
    """Two runs of one batch each crash their worker process with SIGSEGV (a worker with a nanny,
    which starts a new worker process): each becomes a failed row naming it, and the other runs
    of the batch and of the sweep run as usual (Dask's default allowed-failures, 3)."""
    cluster = start_cli_cluster(nanny=True)
    out = tmp_path / "rows.csv"
    thetas = [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45]
    poisoned = {0.15, 0.25}

    def crash_on_poisoned(result):  # defined here, so it travels to the workers by value
        if result["theta"][0] in poisoned:
            import ctypes

            ctypes.string_at(0)  # reads address 0: a segmentation fault
        return result["x"][-1]

    start = time.monotonic()
    df = mbsfmu.sweep(CART, {"theta": thetas}, t_end=0.5, metrics={"x_end": crash_on_poisoned}, out=out,
                      scheduler=cluster.address, batch=4)
    assert time.monotonic() - start < BOUND
    assert df["run"].tolist() == list(range(8))
    bad = df[df["theta"].isin(poisoned)]
    assert (bad["status"] == "failed").all() and bad["x_end"].isna().all()
    for run, theta, message in zip(bad["run"], bad["theta"], bad["message"]):
        died = f"the worker process died while running run {run} (theta={theta!r}): "
        assert message.startswith(died), message
        assert "segmentation fault" in message
    good = df[~df["theta"].isin(poisoned)]
    assert (good["status"] == "ok").all(), good["message"].tolist()
    local = mbsfmu.sweep(CART, {"theta": thetas}, t_end=0.5, metrics={"x_end": "final(x)"},
                         scheduler="synchronous")
    assert good["x_end"].tolist() == local.loc[good.index, "x_end"].tolist()
    written = read_rows(out).sort_values("run").reset_index(drop=True)
    assert written["run"].tolist() == list(range(8))
    assert written["status"].tolist() == df["status"].tolist()


def test_a_crashing_run_that_leaves_no_worker_is_named(start_cli_cluster, tmp_path):
    """Workers without a nanny are not replaced: the crashing run takes both down (the second
    time on a retry that noted the run), and the sweep ends after cluster_timeout naming it."""
    cluster = start_cli_cluster()
    out = tmp_path / "rows.csv"

    def crash_on_run_2(result):
        if result["theta"][0] == 0.2:
            import ctypes

            ctypes.string_at(0)
        return result["x"][-1]

    start = time.monotonic()
    pattern = (rf"the Dask cluster at {cluster.address} has had no worker for 2 s \(cluster_timeout, 2 "
               r"before\): \d runs did not finish \(runs .*\); worker processes died while running run 2 "
               r"\(theta=0.2\)")
    with pytest.raises(SweepError, match=pattern) as info:
        mbsfmu.sweep(CART, {"theta": [0.1, 0.15, 0.2, 0.25]}, t_end=0.5, metrics={"x_end": crash_on_run_2},
                     out=out, scheduler=cluster.address, batch=4, cluster_timeout=2)
    assert time.monotonic() - start < BOUND
    assert all(w.poll() is not None for w in cluster.workers)
    assert info.value.rows.empty and read_rows(out).empty
