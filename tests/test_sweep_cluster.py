"""Sweeps on a real dask.distributed cluster (issue 14): a scheduler and two workers started as
separate processes on 127.0.0.1 with Dask's own command-line tools.  A sweep of a model file and
of a native FMU gives the rows of a local synchronous sweep bit for bit, and a worker killed in
the middle of a sweep costs no row (the scheduler runs its tasks again on the other worker)."""

import os
import pathlib
import signal
import socket
import subprocess
import sys
import threading
import time

import pandas as pd
import pytest

import mbsfmu
from mbsfmu.study.results import read_rows

ROOT = pathlib.Path(__file__).resolve().parents[1]
CART = str(ROOT / "models" / "cart_pendulum.py")
METRICS = {"x_final": "final(x)", "theta_max": "max(theta)", "theta_rms": "rms(theta)"}
START_TIMEOUT = 30  # s for the scheduler and both workers to be up


def _dask_command(kind: str) -> list[str]:
    """The `dask scheduler` / `dask worker` command of this interpreter's environment (the `dask`
    script next to it, else the same command-line modules run with ``-m``), so PATH does not matter."""
    script = pathlib.Path(sys.executable).with_name("dask")
    if script.is_file():
        return [str(script), kind]
    return [sys.executable, "-m", f"distributed.cli.dask_{kind}"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A scheduler and two single-threaded workers (no nanny: the worker is the process we start,
    so killing it loses the worker) in their own process groups."""

    def __init__(self, tmp_path):
        self.address = f"tcp://127.0.0.1:{_free_port()}"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                                          os.environ.get("PYTHONPATH")]))}
        self.procs = []
        self.logs = []

        def start(cmd, name):
            log = open(tmp_path / f"{name}.log", "w")
            self.logs.append(log)
            self.procs.append(subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=log,
                                               stderr=subprocess.STDOUT, start_new_session=True))

        port = self.address.rsplit(":", 1)[1]
        start(_dask_command("scheduler") + ["--host", "127.0.0.1", "--port", port, "--no-dashboard"],
              "scheduler")
        self.workers = []
        for i in range(2):
            start(_dask_command("worker") + [self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                             "--host", "127.0.0.1", "--name", f"w{i}"], f"worker{i}")
            self.workers.append(self.procs[-1])

    def wait(self):
        """A client once both workers are connected (a clear failure, with the logs, after the timeout)."""
        from distributed import Client

        deadline = time.monotonic() + START_TIMEOUT
        client = None
        while client is None:
            try:
                client = Client(self.address, timeout=5)
            except OSError:
                if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                    pytest.fail(f"no Dask scheduler at {self.address}:\n{self.log_text()}")
                time.sleep(0.2)
        try:
            client.wait_for_workers(2, timeout=max(1.0, deadline - time.monotonic()))
        except TimeoutError:
            client.close()
            pytest.fail(f"two workers did not connect within {START_TIMEOUT} s:\n{self.log_text()}")
        return client

    def log_text(self) -> str:
        for log in self.logs:
            log.flush()
        return "\n".join(pathlib.Path(log.name).read_text()[-2000:] for log in self.logs)

    def stop(self):
        for p in reversed(self.procs):  # workers first, then the scheduler
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
        for log in self.logs:
            log.close()


@pytest.fixture
def cluster(tmp_path, request):
    c = Cluster(tmp_path)
    request.addfinalizer(c.stop)  # always, even when the start-up fails
    c.client = c.wait()
    request.addfinalizer(lambda: c.client.close(timeout=5))
    return c


def _rows(df):
    return df.drop(columns="wall_s")


def test_model_and_fmu_sweeps_on_a_cluster_equal_local_sweeps(cluster, tmp_path):
    design = {"m": "0.1:0.3:4", "theta": [0.1, 0.2]}  # 8 runs
    remote = mbsfmu.sweep(CART, design, t_end=1.0, metrics=METRICS, scheduler=cluster.address, batch=2)
    local = mbsfmu.sweep(CART, design, t_end=1.0, metrics=METRICS, scheduler="synchronous")
    assert len(remote) == 8 and (remote["status"] == "ok").all(), remote["message"].tolist()
    pd.testing.assert_frame_equal(_rows(remote), _rows(local), check_exact=True)  # bit for bit

    fmu = mbsfmu.build_fmu(CART, tmp_path / "cart.fmu", backend="native")
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
