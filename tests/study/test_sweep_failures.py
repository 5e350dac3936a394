"""How a sweep ends when something other than a run goes wrong (issue 23), on Dask's
single-machine schedulers and on a local cluster in this process; the real-cluster cases
(scheduler and workers killed, a run that crashes its worker) are in
tests/fuzz/test_sweep_cluster_failures.py.

* an FMU target's failed row quotes what the FMU logged (here: the parameter it refuses);
* a run that crashes its worker on a cluster whose scheduler gives up on a task at the first
  dead worker (``allowed-failures`` 0) is still found, run by run, and is a failed row;
* a target that cannot be loaded on the workers, or whose loading kills them, ends the sweep
  with SweepError naming it, not Dask's error;
* a crash under the 'processes' scheduler ends the sweep with the rows that finished.
"""

import os

import dask
import pytest

import mbsfmu
from mbsfmu.core.errors import SweepError
from mbsfmu.study.results import read_rows

CART = "models/cart_pendulum.py"
SLIDER = "models/slider_crank.py"
THETAS = [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45]


def crash_at(theta):
    """A metric that crashes its process with a segmentation fault on the run that starts at
    ``theta`` (made in a function: it travels to the workers by value)."""
    def final_x(result):
        if result["theta"][0] == theta:
            import ctypes

            ctypes.string_at(0)
        return result["x"][-1]

    return final_x


@pytest.fixture(scope="module")
def impatient():
    """A local cluster of two worker processes whose scheduler fails a task at the first worker
    that dies running it (allowed-failures 0)."""
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_an_fmu_failed_row_quotes_the_fmu(built_fmu, capsys):
    from fmpy import simulate_fmu

    fmu = built_fmu(SLIDER)
    seen = []
    df = mbsfmu.sweep(fmu, {"r": [0.15, 0.0]}, t_end=0.2, dt=0.01, metrics={"x_end": "final(x)"},
                      scheduler="synchronous", logger=lambda *args: seen.append(args[-1]))
    assert df["status"].tolist() == ["ok", "failed"]
    # what the FMU says, printed by fmpy's own default logger
    capsys.readouterr()
    with pytest.raises(Exception, match="fmi2ExitInitializationMode failed with status 3"):
        simulate_fmu(str(fmu), start_values={"r": 0.0}, stop_time=0.2)
    printed = capsys.readouterr().out.strip().splitlines()
    (said,) = [line.removeprefix("[ERROR] ") for line in printed if line.startswith("[ERROR] ")]
    assert "parameter 'r' = 0 is not allowed" in said
    assert df["message"][1] == ("FMICallException: fmi2ExitInitializationMode failed with status 3 (error); "
                                f"the FMU logged: [error] {said}")
    assert said.encode() in seen  # a logger of the caller still gets the FMU's messages


@pytest.mark.slow
def test_a_crash_is_a_failed_row_when_dask_gives_up_at_once(impatient, tmp_path):
    """allowed-failures 0: the batch's task fails at the first crash; its runs then run one per
    task, and the crashing run's own task fails: that run is the failed row."""
    out = tmp_path / "rows.csv"
    df = mbsfmu.sweep(CART, {"theta": THETAS}, t_end=0.5, metrics={"x_end": crash_at(0.25)}, out=out,
                      scheduler=impatient, batch=4)
    assert df["status"].tolist() == ["ok"] * 3 + ["failed"] + ["ok"] * 4, df["message"].tolist()
    assert df["message"][3].startswith("the worker process died while running run 3 (theta=0.25): 1 worker "
                                       "process died while running it alone, the last one at tcp://")
    local = mbsfmu.sweep(CART, {"theta": THETAS}, t_end=0.5, metrics={"x_end": "final(x)"},
                         scheduler="synchronous")
    ok = df["status"] == "ok"
    assert df.loc[ok, "x_end"].tolist() == local.loc[ok, "x_end"].tolist()  # bit for bit
    assert read_rows(out).sort_values("run")["status"].tolist() == df["status"].tolist()
    impatient.wait_for_workers(2, timeout=120)  # the nannies start new workers (slowly on a loaded machine)


def _worker_only(tmp_path, body: str):
    """A model file that loads here but runs ``body`` when a worker process loads it."""
    path = tmp_path / "picky.py"
    path.write_text(f"import os\nfrom mbsfmu import load_model\n\n\ndef model():\n"
                    f"    if os.getpid() != {os.getpid()}:\n        {body}\n"
                    f"    return load_model({os.path.abspath(CART)!r})\n")
    return path


@pytest.mark.slow
def test_a_target_that_fails_to_load_on_the_workers_is_named(impatient, tmp_path):
    path = _worker_only(tmp_path, "raise RuntimeError('no licence on this machine')")
    pattern = (r"a task of the sweep failed on the Dask cluster outside any run \(ModelError: .*picky.py.*"
               r"no licence on this machine\): 4 runs did not finish \(runs 0-3\); the 0 rows that finished "
               r"are on this error's .rows")
    with pytest.raises(SweepError, match=pattern) as info:
        mbsfmu.sweep(path, {"m": [0.1, 0.2, 0.3, 0.4]}, t_end=0.2, scheduler=impatient, batch=2)
    assert info.value.rows.empty and list(info.value.rows.columns)[:2] == ["run", "m"]


@pytest.mark.slow
def test_a_target_whose_loading_kills_the_workers_is_named(impatient, tmp_path):
    path = _worker_only(tmp_path, "os._exit(3)")
    with pytest.raises(SweepError, match=r"the worker process died while loading the sweep target "
                                         r"'.*picky.py' \(a crash such as a segmentation fault"):
        mbsfmu.sweep(path, {"m": [0.1, 0.2, 0.3, 0.4]}, t_end=0.2, scheduler=impatient, batch=2)


@pytest.mark.slow
def test_a_crash_under_the_processes_scheduler_ends_with_the_rows(tmp_path):
    out = tmp_path / "rows.csv"
    pattern = (r"a worker process of Dask's 'processes' scheduler died while running one of runs 2-3 \(a "
               r"crash such as a segmentation fault.*\), which one it cannot tell; .*the 2 rows that "
               r"finished are in")
    with pytest.raises(SweepError, match=pattern) as info:
        mbsfmu.sweep(CART, {"theta": THETAS[:4]}, t_end=0.5, metrics={"x_end": crash_at(0.25)}, out=out,
                     scheduler="processes", workers=2, batch=1)
    rows = info.value.rows
    assert rows["run"].tolist() == [0, 1] and (rows["status"] == "ok").all()
    assert info.value.result is rows
    assert read_rows(out)["run"].tolist() == [0, 1]


def worker_state(dask_worker):
    """(whether the worker process opened a client of its own, its 'distributed' log level)."""
    import logging

    return dask_worker._client is not None, logging.getLogger("distributed").getEffectiveLevel()


def test_the_journal_opens_no_client_in_the_workers(impatient):
    """The tasks' journals reach the scheduler over their workers' own connections: a second
    client in a worker process, left open when a stop cuts the worker's closing short, prints
    its failed clean-up into the user's terminal (the SIGTERM test of tests/fuzz saw it)."""
    df = mbsfmu.sweep(CART, {"theta": THETAS[:4]}, t_end=0.2, dt=0.01, metrics={"x_end": "final(x)"},
                      scheduler=impatient, batch=2)
    assert (df["status"] == "ok").all() and len(df) == 4
    states = impatient.run(worker_state)
    assert len(states) == 2 and not any(opened for opened, _ in states.values()), states


def test_the_own_cluster_quiets_only_its_workers_logs():
    """The sweep's own local cluster: its worker processes log only CRITICAL records (their
    teardown races are not the user's business); this process keeps its logging."""
    import logging

    from mbsfmu.study.batch import connect

    level = logging.getLogger("distributed").getEffectiveLevel()
    client, owned = connect(None, 1)
    try:
        assert owned
        assert [lv for _, lv in client.run(worker_state).values()] == [logging.CRITICAL]
        assert logging.getLogger("distributed").getEffectiveLevel() == level < logging.CRITICAL
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()
