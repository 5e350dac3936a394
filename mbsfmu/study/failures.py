"""What a sweep does when something other than a run fails: a worker process that dies, a
scheduler that goes away, a cluster without workers.

**A run that kills its worker** (a segmentation fault, ``os._exit``, the out-of-memory killer)
takes the task of its batch with it, and Dask gives the task to another worker.  Each task keeps
a small :class:`Journal` on the scheduler (``Client.set_metadata``, which outlives any worker):
every attempt counts itself and notes when it loads the target (the first task of a worker
process); an attempt after a worker died while running the task (a retry) also notes each run
before starting it.  When a retry dies too, the next attempt finds the run it was at and gives
it a ``failed`` row instead of running it again; the other runs of the batch run as usual.  So
a poisoned run costs two worker processes, while a killed worker alone (a machine lost) costs
nothing: the retry runs the whole batch.  A target whose loading killed two workers ends the
sweep.  A cluster whose scheduler gives up on a task sooner
(``distributed.scheduler.allowed-failures`` < 2; Dask's default is 3) fails the task with
``KilledWorker``; the sweep then takes the journal's word for the runs it names and runs the
batch's other runs one per task, and a single run whose task is killed is a ``failed`` row
(:func:`killed_row`).  The journals cost two calls to the scheduler per task.

**The sweep as a whole** ends with :class:`~mbsfmu.core.errors.SweepError` when it cannot go on: the
scheduler connection is lost, the cluster has had no worker for ``cluster_timeout`` seconds
(:class:`ClusterWatch`), or a task fails outside any run (the target cannot be loaded, mbsfmu
is missing on a worker).  Its message names what happened and the runs that did not finish;
``sweep`` attaches every row that finished (:func:`attach_rows`).
"""

from __future__ import annotations

import time

from ..core.errors import SweepError

#: the scheduler metadata key under which the journals of all sweeps live
JOURNALS = "mbsfmu-sweep"
#: what a run that killed its worker process may have been
CRASH_CAUSES = "a crash such as a segmentation fault, os._exit, a fatal signal or the out-of-memory killer"
#: the most FMU log messages a failed row quotes (the last ones)
FMU_LOG_LINES = 5


def describe_run(run: int, values: dict) -> str:
    """``run 7 (r=0.12, m=0.5)``: a run and its parameter values."""
    return f"run {run} (" + ", ".join(f"{k}={float(v)!r}" for k, v in values.items()) + ")"


def run_ranges(runs) -> str:
    """Run numbers as ``0, 2-5, 9``."""
    runs = sorted(set(int(r) for r in runs))
    parts, i = [], 0
    while i < len(runs):
        j = i
        while j + 1 < len(runs) and runs[j + 1] == runs[j] + 1:
            j += 1
        parts.append(str(runs[i]) if i == j else f"{runs[i]}-{runs[j]}")
        i = j + 1
    return ", ".join(parts)


def error_text(exc: BaseException) -> str:
    """A failed row's message: the error, and for an FMU what the FMU logged before it."""
    text = f"{type(exc).__name__}: {exc}"
    log = getattr(exc, "fmu_log", None)
    return f"{text.rstrip('. ')}; the FMU logged: {log}" if log else text


def fmu_log_text(messages: list) -> str:
    """The FMU's own words for a failure: its error and fatal messages (else its warnings),
    the last :data:`FMU_LOG_LINES` of them, as ``[error] text | [error] text``."""
    labels = {1: "warning", 2: "discard", 3: "error", 4: "fatal"}
    worst = [m for m in messages if m[0] >= 2] or [m for m in messages if m[0] == 1]
    return " | ".join(f"[{labels.get(s, s)}] {text.strip()}" for s, _, text in worst[-FMU_LOG_LINES:])


def killed_row(run: int, values: dict, metrics: list, how: str) -> dict:
    """The ``failed`` row of a run that took its worker process down."""
    return {"run": run, **values, **{m.name: None for m in metrics}, "status": "failed",
            "message": f"the worker process died while running {describe_run(run, values)}: {how} "
                       f"({CRASH_CAUSES}; the worker's log says which)", "wall_s": None}


def scheduler_call(operation: str, **arguments):
    """Call the scheduler's ``operation`` from a task, over its worker's own connection.

    Not through ``distributed.get_client()``: that opens a second client in the worker process,
    which a worker stopped mid-task (the sweep's own cluster closing after Ctrl-C or SIGTERM)
    leaves open at exit, and Python then prints its failed clean-up to the user's terminal."""
    from distributed import get_worker
    from distributed.utils import sync

    worker = get_worker()
    return sync(worker.loop, getattr(worker.scheduler, operation), **arguments)


class Journal:
    """A task's notes on the scheduler: how often it was started, and in a retry the run it is
    at (``'load'`` while the target loads), so that the next attempt knows what the last dead
    worker was doing.  Created by the client, used by the task on its worker."""

    def __init__(self, token: str, task: str):
        self.keys = [JOURNALS, token, task]

    def begin(self) -> dict:
        """Count this attempt; ``{'attempt': n, 'killed': [run or 'load', ...]}``, where killed
        lists what a retry before this one was at when its worker died."""
        before = scheduler_call("get_metadata", keys=self.keys, default=None)
        state = {"attempt": before["attempt"] + 1 if before else 1, "killed": killed_runs(before), "at": None}
        scheduler_call("set_metadata", keys=self.keys, value=state)
        return state

    def at(self, what) -> None:
        """Note what this attempt starts now (a run number, 'load'; None when done)."""
        scheduler_call("set_metadata", keys=self.keys + ["at"], value=what)

    @staticmethod
    def read(client, token: str) -> dict:
        """{task: state} of every journal of a sweep (empty if the scheduler has none, or
        the client has lost it: then every call would wait for a reconnection)."""
        if client.status != "running":
            return {}
        try:
            return client.get_metadata([JOURNALS, token], None) or {}
        except Exception:  # the scheduler is gone: nothing to read
            return {}

    @staticmethod
    def drop(client, token: str) -> None:
        """Forget a sweep's journals (an empty entry stays: the scheduler has no delete)."""
        try:
            client.set_metadata([JOURNALS, token], None)
        except Exception:  # the scheduler is gone, and the journals with it
            pass


def killed_runs(state: dict | None) -> list:
    """What the retries of a task were at when their workers died (runs, or 'load'), from the
    journal of a task that is not running (else its last entry is the run it is at now)."""
    if not state:
        return []
    return list(state.get("killed", [])) + ([state["at"]] if state.get("at") is not None else [])


def died_in_batch(deaths: int) -> str:
    """How a run was found through its task's journal, after ``deaths`` worker processes died."""
    return f"{deaths} worker processes died while running its batch, the last one during this run"


def died_alone(exc) -> str:
    """How a run was found from Dask's KilledWorker for a task of this run alone."""
    n = getattr(exc, "allowed_failures", 0) + 1
    last = getattr(getattr(exc, "last_worker", None), "address", "?")
    return (f"{n} worker process{'es' if n > 1 else ''} died while running it alone, the last one at "
            f"{last} (Dask's KilledWorker)")


class ClusterWatch:
    """Ends a sweep whose cluster cannot run it: :meth:`check` (called while no task ends)
    raises SweepError once the scheduler has had no worker, or has not answered, for
    ``timeout`` seconds in a row."""

    def __init__(self, client, timeout: float, address: str):
        self.client, self.timeout, self.address = client, timeout, address
        self.since = time.monotonic()  # the last time a worker was seen
        self.workers_seen = 0

    def check(self, left) -> None:
        """Raise SweepError (its message ends with ``left()``, the runs not done) if the cluster
        has been without a worker, or without an answer, for longer than the timeout."""
        now = time.monotonic()
        try:
            n = len(self.client.nthreads(callback_timeout=max(1.0, min(self.timeout, 10.0))))
            answered = True
        except Exception:  # no answer in time, or the connection is closing
            n, answered = 0, False
        if n:
            self.since, self.workers_seen = now, max(self.workers_seen, n)
            return
        if now - self.since > self.timeout:
            had = f", {self.workers_seen} before" if self.workers_seen else ""
            what = (f"the Dask cluster at {self.address} has had no worker for {self.timeout:g} s "
                    f"(cluster_timeout{had})" if answered else
                    f"the Dask scheduler at {self.address} has not answered for {self.timeout:g} s "
                    f"(cluster_timeout)")
            raise SweepError(f"{what}: {left()}")


def attach_rows(exc: SweepError, rows, out=None) -> SweepError:
    """``exc`` carrying ``rows`` (the DataFrame of every finished row), its message saying where
    they are."""
    exc.rows = rows
    where = f"in {str(out)!r} and " if out is not None else ""
    exc.args = (f"{exc.args[0] if exc.args else ''}; the {len(rows)} rows that finished are {where}on this "
                f"error's .rows" + ("; the same call runs the missing runs" if out is not None else ""),)
    return exc
