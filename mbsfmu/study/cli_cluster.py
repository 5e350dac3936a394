"""A Dask cluster of separate processes on this machine, started with Dask's own command-line
tools (``dask scheduler``, ``dask worker``): what the tests and ``bench/sweep.py`` use to stand
in for a real cluster.

Each process runs in its own process group (so stopping it stops its children) with its output
in a log file; :meth:`CliCluster.stop` sends SIGTERM, then SIGKILL after 5 s.  Workers run one
thread each, by default without a nanny, so the worker is the process started here: killing it
loses the worker, as a crashed machine would.  With ``nanny=True`` each worker has Dask's nanny,
which starts a new worker process when the old one dies (as in a real deployment); killing the
process group still loses both.
"""

from __future__ import annotations

import os
import pathlib
import signal
import socket
import subprocess
import sys
import time

from ..core.errors import ParameterError

START_TIMEOUT = 30  # s for the scheduler and every worker to be up


def dask_command(kind: str) -> list[str]:
    """The `dask scheduler` / `dask worker` command of this interpreter's environment (the `dask`
    script next to it, else the same modules run with ``-m``), so PATH does not matter."""
    script = pathlib.Path(sys.executable).with_name("dask")
    if script.is_file():
        return [str(script), kind]
    return [sys.executable, "-m", f"distributed.cli.dask_{kind}"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CliCluster:
    """A scheduler and ``n_workers`` single-threaded workers on 127.0.0.1, logs in ``folder``.

    ``pythonpath`` is put in front of the workers' PYTHONPATH (so they import this checkout);
    ``allowed_failures``: the scheduler's ``distributed.scheduler.allowed-failures`` (how many
    workers may die running a task before it fails with KilledWorker; Dask's default 3)."""

    def __init__(self, folder, n_workers: int = 2, pythonpath=None, nanny: bool = False,
                 allowed_failures: int | None = None):
        self.folder = pathlib.Path(folder)
        self.n_workers = n_workers
        self.address = f"tcp://127.0.0.1:{free_port()}"
        paths = [str(pythonpath)] if pythonpath else []
        self.env = {**os.environ,
                    "PYTHONPATH": os.pathsep.join(filter(None, [*paths, os.environ.get("PYTHONPATH")]))}
        if allowed_failures is not None:
            self.env["DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES"] = str(allowed_failures)
        self.procs: list[subprocess.Popen] = []
        self.workers: list[subprocess.Popen] = []
        self.logs = []
        port = self.address.rsplit(":", 1)[1]
        self._start(dask_command("scheduler") + ["--host", "127.0.0.1", "--port", port, "--no-dashboard"],
                    "scheduler")
        for i in range(n_workers):
            self._start(dask_command("worker") + [self.address, "--nthreads", "1",
                                                  "--nanny" if nanny else "--no-nanny",
                                                  "--no-dashboard", "--host", "127.0.0.1", "--name", f"w{i}"],
                        f"worker{i}")
            self.workers.append(self.procs[-1])

    def _start(self, cmd, name):
        log = open(self.folder / f"{name}.log", "w")
        self.logs.append(log)
        self.procs.append(subprocess.Popen(cmd, cwd=self.folder, env=self.env, stdout=log,
                                           stderr=subprocess.STDOUT, start_new_session=True))

    def connect(self, timeout: float = START_TIMEOUT):
        """A ``distributed.Client`` once every worker is connected; a ParameterError with the
        logs after ``timeout`` seconds."""
        from distributed import Client

        deadline = time.monotonic() + timeout
        client = None
        while client is None:
            try:
                client = Client(self.address, timeout=5)
            except OSError:
                if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                    raise ParameterError(f"no Dask scheduler at {self.address}:\n{self.log_text()}") from None
                time.sleep(0.2)
        try:
            client.wait_for_workers(self.n_workers, timeout=max(1.0, deadline - time.monotonic()))
        except TimeoutError:
            client.close()
            raise ParameterError(f"{self.n_workers} workers did not connect within {timeout} s:\n"
                                 f"{self.log_text()}") from None
        return client

    def log_text(self) -> str:
        for log in self.logs:
            log.flush()
        return "\n".join(pathlib.Path(log.name).read_text()[-2000:] for log in self.logs)

    def stop(self) -> None:
        # the workers first, and the scheduler once they are gone: a worker told to stop says
        # goodbye to its scheduler, and one whose scheduler went first retries until killed
        workers = [p for p in self.procs if p in self.workers]
        for group in (workers, [p for p in self.procs if p not in workers]):
            for p in group:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGTERM)
            for p in group:
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=10)
        for log in self.logs:
            log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
