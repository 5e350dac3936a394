"""Running a study on Dask: runs grouped into batches, one task per batch.

The target travels to the workers as a small :class:`Target` (a model file's path, a pickled
``System``, an FMU file's path, a pickled diagram factory or an SSP file's path,
:mod:`.diagram_target`); each worker process loads it once and keeps it in :data:`_LOADED` (the
model derived and compiled, the FMU unpacked, the SSP imported, once per process), so a task
costs one dictionary look-up besides its runs.

Schedulers: ``None`` starts a ``distributed.LocalCluster`` of worker processes on this machine
(closed at the end); ``'tcp://host:port'`` or a ``distributed.Client`` runs on that cluster;
``'synchronous'``, ``'threads'`` or ``'processes'`` use Dask's single-machine schedulers, one
wave of batches per ``dask.compute``.  Finished batches are handed back as they come, so the
caller can write them at once.

Without a given ``batch``, the first wave is one run per task, one per worker (each worker loads
the target meanwhile); the first of these rows to come back times a run, and the rest go in
batches of :func:`default_batch` runs.  On a ``distributed`` cluster a run that kills its worker
process becomes a failed row, and a cluster that cannot go on (scheduler lost, no worker for
``cluster_timeout`` seconds) ends the sweep with SweepError: see :mod:`.failures`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import logging
import math
import numbers
import os
import pathlib
import queue
import re
import tempfile
import time
import uuid

from ..core.errors import ParameterError, SimulationError, SweepError
from ..fmu.fmpy_callbacks import fmi3_recorder, recorded_messages
from ..model import Model
from ..model.initial_values import settable_names as initial_names
from ..model.loader import load_model
from ..simulation import simulate
from . import definition, diagram_target, failures, quiet_workers
from .metrics import worst
from .trajectories import of_result

#: per worker process: target key -> loaded target (System, or FMU folder and description)
_LOADED: dict = {}
#: per worker process: how often each target was loaded (the tests read it)
LOAD_COUNT: dict = {}

#: the key of a row's trajectory on its way from a worker (never a column)
TRAJECTORY = "_trajectory"

LOCAL_SCHEDULERS = ("synchronous", "sync", "single-threaded", "threads", "processes")
#: seconds to wait for a remote scheduler before giving up
CONNECT_TIMEOUT = 10
#: seconds a sweep waits while its cluster has no worker or its scheduler does not answer
CLUSTER_TIMEOUT = 60
#: seconds between two looks at the cluster while no task ends
POLL_SECONDS = 0.5
#: how often the rows of a finished task are fetched before the sweep gives up on them
FETCH_TRIES = 3
#: a Dask scheduler address: [SCHEME://]HOST:PORT
ADDRESS = re.compile(r"(?:(?P<scheme>[A-Za-z]+)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>\d+)")
#: the communication protocols of distributed
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")
#: the target kinds a sweep runs, by file suffix
TARGET_FILES = {".py": "model", ".fmu": "fmu", ".ssp": "ssp"}
#: the target kinds whose runs are block diagrams (:mod:`.diagram_target`)
DIAGRAM_KINDS = ("factory", "ssp")
#: what a sweep runs, as its errors say it
TARGET_FORMS = ("a model file (.py), an FMU (.fmu), an SSP file (.ssp), a System or a function that returns "
                "a Diagram")


class Target:
    """What runs: kind 'model' (a model file), 'system' (a pickled System), 'fmu' (an FMU file),
    'factory' (a pickled function of the parameters that returns a Diagram) or 'ssp' (an SSP
    file)."""

    def __init__(self, kind: str, path: str | None = None, payload: bytes | None = None, system=None,
                 name: str = ""):
        self.kind, self.path, self.payload = kind, path, payload
        self.local = system  # the System (or factory) itself, for schedulers in this process
        self.label = (repr(path) if path is not None else diagram_target.factory_label(system)
                      if kind == "factory" else f"System {name!r}")
        token = payload if payload is not None else str(path).encode()
        self.key = f"{kind}:{hashlib.sha1(token).hexdigest()}" if payload is not None else f"{kind}:{path}"
        if path is not None:  # a file edited between two sweeps is loaded again, not taken from _LOADED
            self.key += f":{hashlib.sha1(pathlib.Path(path).read_bytes()).hexdigest()}"

    @property
    def diagram(self) -> bool:
        """Whether the runs are block diagrams."""
        return self.kind in DIAGRAM_KINDS

    def __getstate__(self):
        return {"kind": self.kind, "path": self.path, "payload": self.payload, "key": self.key,
                "label": self.label, "local": None}

    @property
    def loaded(self) -> bool:
        return self.key in _LOADED

    def load(self):
        """The loaded target, once per process."""
        if self.key not in _LOADED:
            LOAD_COUNT[self.key] = LOAD_COUNT.get(self.key, 0) + 1
            _LOADED[self.key] = self._load()
        return _LOADED[self.key]

    def _load(self):
        if self.kind == "model":
            return load_model(self.path)
        if self.kind in ("system", "factory"):
            if self.local is not None:
                return self.local
            import cloudpickle

            return cloudpickle.loads(self.payload)
        if self.kind == "ssp":
            return diagram_target.load_ssp(self.path)

        from fmpy import extract, read_model_description

        try:
            folder = extract(self.path, unzipdir=tempfile.mkdtemp(prefix="mbsfmu-sweep-"))
            return folder, read_model_description(self.path)
        except Exception as exc:
            raise ParameterError(f"sweep target {self.label} cannot be read as an FMU "
                                 f"({type(exc).__name__}: {exc})") from None


def is_diagram(target) -> bool:
    """Whether ``target`` is a block diagram: a function (not a System) or an ``.ssp`` file."""
    if isinstance(target, (str, os.PathLike)):
        return (pathlib.Path(target).suffix.lower() == ".ssp"
                or (isinstance(target, str) and diagram_target.FACTORY_SPEC.match(target) is not None
                    and not pathlib.Path(target).exists()))
    return callable(target) and not isinstance(target, (Model, type))


def make_target(target, in_process: bool) -> Target:
    """The Target of ``target`` (a model, FMU or SSP file, a System, or a diagram factory, also
    named by text as ``'FILE.py:FUNCTION'``)."""
    if isinstance(target, str) and is_diagram(target) and diagram_target.FACTORY_SPEC.match(target):
        target = diagram_target.load_factory(target)
    if isinstance(target, Model):
        if in_process:
            return Target("system", payload=str(id(target)).encode(), system=target, name=target.name)
        import cloudpickle

        try:
            payload = cloudpickle.dumps(target)
        except Exception as exc:
            raise ParameterError(
                f"System {target.name!r} cannot be sent to worker processes ({exc}): pass the model "
                "file, or run with scheduler='synchronous'") from None
        return Target("system", payload=payload, name=target.name)
    if not isinstance(target, (str, os.PathLike)) and is_diagram(target):
        if in_process:
            token = f"{id(target)}:{definition.digest(target)}".encode()
            return Target("factory", payload=token, system=target)
        return Target("factory", payload=diagram_target.factory_payload(target), system=target)
    if isinstance(target, (str, os.PathLike)):
        p = pathlib.Path(target).resolve()
        kinds = f"a sweep runs {TARGET_FORMS}"
        if p.is_dir():
            raise ParameterError(f"sweep target {str(target)!r} is a directory: {kinds}")
        if not p.is_file():
            raise ParameterError(f"sweep target {str(target)!r} does not exist")
        if p.suffix.lower() not in TARGET_FILES:
            raise ParameterError(f"sweep target {str(target)!r} is neither a model file, an FMU nor an SSP: "
                                 f"{kinds}")
        return Target(TARGET_FILES[p.suffix.lower()], path=str(p))
    raise ParameterError(f"sweep target must be {TARGET_FORMS}, got {type(target).__name__} {target!r:.60}")


def settable_names(target: Target) -> set:
    """The names a design may set on the target, loaded in this process."""
    loaded = target.load()
    if target.kind == "ssp":
        return set(diagram_target.ssp_settable(loaded))
    if target.kind == "fmu":
        return {v.name for v in loaded[1].modelVariables if v.causality in ("parameter", "input")
                or (v.initial in ("exact", "approx") and v.causality != "independent")}
    return {*loaded.constants_, *initial_names(loaded), *loaded.inputs}


def check_options(scheduler, workers, batch, connect_timeout, cluster_timeout) -> None:
    """The options of how a sweep runs, checked before anything runs or is written."""
    for name, value in (("workers", workers), ("batch", batch)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral)
                                  or value < 1):
            raise ParameterError(f"{name} must be a whole number >= 1, got {value!r}")
    for name, value in (("connect_timeout", connect_timeout), ("cluster_timeout", cluster_timeout)):
        if (isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value)
                or value <= 0):
            raise ParameterError(f"{name} must be a number of seconds > 0, got {value!r}")
    check_scheduler(scheduler)


def check_scheduler(scheduler) -> None:
    """None, a ``distributed.Client``, a single-machine scheduler's name, or an address
    ``[SCHEME://]HOST:PORT`` (SCHEME one of :data:`SCHEMES`, default tcp; PORT 1-65535)."""
    forms = (f"an address tcp://HOST:PORT (or HOST:PORT, or {', '.join(s + '://' for s in SCHEMES[1:])}), "
             f"a distributed.Client, or one of {', '.join(LOCAL_SCHEDULERS)}")
    if scheduler is None or (isinstance(scheduler, str) and scheduler in LOCAL_SCHEDULERS):
        return
    if isinstance(scheduler, str):
        m = ADDRESS.fullmatch(scheduler)
        if not m or (m["scheme"] or "tcp").lower() not in SCHEMES or not 0 < int(m["port"]) < 65536:
            raise ParameterError(f"scheduler {scheduler!r} is not a Dask scheduler: give {forms}")
        return
    from distributed import Client

    if not isinstance(scheduler, Client):
        raise ParameterError(f"scheduler must be {forms}; got {type(scheduler).__name__} {scheduler!r:.60}")
    if scheduler.status != "running":
        raise ParameterError(f"scheduler: the distributed.Client given is {scheduler.status}, not running")


def run_batch(target: Target, runs: list, settings: dict, metrics: list,
              journal: failures.Journal | None = None) -> list[dict]:
    """Run every (run number, {name: value}) of a batch; each gives one row, whatever happens.

    With a ``journal`` (on a distributed cluster) the task notes on the scheduler when it loads
    the target and, in an attempt after a worker died while running it, each run before
    starting it; a run at which such an attempt died is a failed row instead of a run, a target
    whose loading killed two workers a SweepError (see :mod:`.failures`)."""
    state = journal.begin() if journal is not None else {"attempt": 1, "killed": []}
    retry, killed = state["attempt"] > 1, state["killed"]
    if killed.count("load") >= 2:
        raise SweepError(f"the worker process died while loading the sweep target {target.label}: "
                         f"{killed.count('load')} worker processes died ({failures.CRASH_CAUSES})")
    if journal is not None and not target.loaded:
        journal.at("load")
        loaded = target.load()
        journal.at(None)
    else:
        loaded = target.load()
    rows, how = [], failures.died_in_batch(state["attempt"] - 1)
    for run, values in runs:
        if run in killed:
            rows.append(failures.killed_row(run, values, metrics, how))
            continue
        if retry:
            journal.at(run)
        rows.append(run_one(target, loaded, run, values, settings, metrics))
    if retry:
        journal.at(None)
    return rows


def run_one(target, loaded, run: int, values: dict, settings: dict, metrics: list) -> dict:
    """One row: the parameters, the metrics, and the status: the worst verdict of the metrics
    ('ok', 'not settled', 'diverged': :mod:`.metrics`) with their reasons as the message, every
    metric kept; 'diverged' too for a run that stopped with a SimulationError after a metric's
    signal left its bound or became non-finite, or a diagram run stopped by a signal that is not
    finite (the metrics then nan, but those of the linearized loop); else 'failed' with the
    error and no metric."""
    row = {"run": run, **values}
    start = time.perf_counter()
    try:
        result = _simulate(target, loaded, values, settings)
        verdicts = []
        for m in metrics:
            try:
                verdicts.append(m.evaluate(result))
            except Exception as exc:
                raise ParameterError(f"metric {m.name!r} failed on run {run}: {type(exc).__name__}: "
                                     f"{exc}") from exc
            row[m.name] = verdicts[-1].value
        row.update(status=worst(verdicts), message="; ".join(v.note for v in verdicts if v.note))
        if settings.get("trajectories"):
            row[TRAJECTORY] = of_result(result)
    except Exception as exc:
        broke = _diverged(exc, metrics)
        row.update({m.name: float("nan") if broke else None for m in metrics})
        loop = getattr(exc, "loop", None)  # a diagram's linearized loop, made before its run failed
        if loop is not None:
            row.update({m.name: m.evaluate(diagram_target.LinearOnly(loop)).value for m in metrics
                        if m.function is None and m.linear})
        row.update(status="diverged" if broke else "failed",
                   message=f"{broke}; the run stopped: {failures.error_text(exc)}" if broke else
                   failures.error_text(exc))
    row["wall_s"] = time.perf_counter() - start
    return row


def _diverged(exc: Exception, metrics: list) -> str:
    """Why a run stopped by a SimulationError diverged: the first metric whose signal left its
    bound or became non-finite in the part of the run reached (``exc.result``), else ''."""
    partial = getattr(exc, "result", None)
    if not isinstance(exc, SimulationError) or partial is None:
        return ""
    for m in metrics:
        if m.function is None:
            try:
                broke = m.divergence(partial)
            except ParameterError:  # the partial result lacks the signal: no verdict
                continue
            if broke is not None:
                return broke.note
    return diagram_target.non_finite(exc)


def _simulate(target, loaded, values: dict, settings: dict):
    if target.kind == "fmu":
        return _simulate_fmu(loaded, values, settings["fmu"])
    if target.diagram:
        build = diagram_target.make_diagram if target.kind == "factory" else diagram_target.ssp_diagram
        return diagram_target.run(build(loaded, {**settings.get("fixed", {}), **values}), settings)

    system = loaded
    params, initial, inputs = split_values(system, values)
    kw = dict(settings["simulate"])
    if inputs:
        kw["inputs"] = {**(kw.get("inputs") or {}), **inputs}
    return simulate(system, params=params or None, initial=initial or None, **kw)


def _simulate_fmu(loaded, values: dict, options: dict):
    """fmpy's simulate_fmu with the FMU's log recorded: an error carries what the FMU logged
    (``fmu_log``, quoted in the failed row); a ``logger`` of the caller still gets every message.
    FMI 2.0 messages come through fmpy's logger proxy (:func:`recorded_messages`), FMI 3.0 ones
    through a ``logMessage`` of the run's own (fmpy hands it to the FMU directly)."""
    from fmpy import simulate_fmu

    folder, md = loaded
    opts = dict(options)
    messages = []
    also = opts.pop("logger", None)
    if md.fmiVersion.startswith("3"):
        opts["logger"] = fmi3_recorder(messages, also)
        recording = contextlib.nullcontext()
    else:
        recording = recorded_messages(messages, also=also)
    with recording:
        try:
            return simulate_fmu(folder, model_description=md, start_values=dict(values), **opts)
        except Exception as exc:
            exc.fmu_log = failures.fmu_log_text(messages)
            raise


def split_values(system, values: dict) -> tuple[dict, dict, dict]:
    """A parameter set as simulate's params (constants), initial (coordinates, der(NAME), DNAME,
    named initial conditions and their rates: :mod:`mbsfmu.model.initial_values`) and inputs
    (constant values)."""
    params, initial, inputs = {}, {}, {}
    for name, v in values.items():
        v = float(v)
        if name in system.constants_:
            params[name] = v
        elif name in system.inputs:
            inputs[name] = v
        else:
            initial[name] = v
    return params, initial, inputs


def batches(runs: list, size: int) -> list[list]:
    return [runs[i:i + size] for i in range(0, len(runs), size)]


#: the least work a task should carry (s): about 100 times Dask's overhead per task (1-2 ms
#: measured, bench/sweep.py), so that the scheduler is not the limit even on many workers
MIN_TASK_SECONDS = 0.2


def default_batch(n_runs: int, workers: int, per_run: float | None = None) -> int:
    """Runs per task: about four tasks per worker (few tasks, and the work still balances),
    raised to MIN_TASK_SECONDS of work when one run takes ``per_run`` seconds, but never so far
    that a worker gets no task."""
    workers = max(workers, 1)
    size = -(-n_runs // (4 * workers))
    if per_run is not None and per_run > 0:
        size = max(size, min(-(-n_runs // workers), int(-(-MIN_TASK_SECONDS // per_run))))
    return max(1, size)



def execute(target, todo: list, settings, metrics, *, scheduler=None, workers=None, batch=None,
            connect_timeout: float = CONNECT_TIMEOUT, cluster_timeout: float = CLUSTER_TIMEOUT):
    """Run every (run, values) of ``todo`` on Dask, ``batch`` runs per task (default: sized as
    the module says); yield each task's rows as it finishes."""
    if isinstance(scheduler, str) and scheduler in LOCAL_SCHEDULERS:
        yield from _execute_local(target, todo, settings, metrics, scheduler, workers, batch)
        return
    client, owned = connect(scheduler, workers, connect_timeout)
    try:
        sweep = ClusterSweep(client, target, settings, metrics, cluster_timeout)
        yield from sweep.run(todo, batch, worker_count(client, workers))
    finally:
        if owned:  # our own cluster's teardown (also after SIGTERM or Ctrl-C): its races, such
            # as a worker asking the closing scheduler for metadata, are not the user's business
            cluster = client.cluster
            with quiet_logger("distributed"):
                close_client(client)
                cluster.close()


@contextlib.contextmanager
def quiet_logger(name: str):
    """Only CRITICAL records of the logger ``name`` (and of its children that inherit its level)
    while the block runs."""
    log = logging.getLogger(name)
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


def close_client(client) -> None:
    """Close a ``distributed.Client``; one that lost its scheduler closes at once and without
    logging the traceback of its cancelled reconnection."""
    if client.status in ("running", "closed"):
        client.close()
        return
    with quiet_logger("distributed.client"):
        client.close(timeout=5)


class ClusterSweep:
    """The tasks of one sweep on a ``distributed`` client: submitted with a journal each, their
    ends taken from a queue, a killed batch split into its runs, the cluster watched."""

    def __init__(self, client, target, settings, metrics, cluster_timeout: float):
        self.client, self.target, self.settings, self.metrics = client, target, settings, metrics
        self.token = uuid.uuid4().hex
        self.address = getattr(client.scheduler, "address", "?")
        self.watch = failures.ClusterWatch(client, cluster_timeout, self.address)
        self.timeout = cluster_timeout
        self.pending: dict = {}       # future -> (task name, runs)
        self.ended = queue.Queue()    # futures that finished, erred or were cancelled
        self.left: dict = {}          # run -> values, every run without a row yet
        self.fetches: dict = {}       # task name -> failed attempts to fetch its rows
        self.count = 0

    def run(self, todo: list, batch: int | None, n_workers: int):
        self.left = dict(todo)
        rest = []
        if batch is None and len(todo) > 1:
            probes, rest = todo[:max(1, n_workers)], todo[max(1, n_workers):]
            for item in probes:
                self.submit([item])
        else:
            for part in batches(todo, batch or default_batch(len(todo), n_workers)):
                self.submit(part)
        try:
            while self.pending:
                try:
                    fut = self.ended.get(timeout=POLL_SECONDS)
                except queue.Empty:
                    self.watch.check(lambda: self.not_finished(idle=True))
                    continue
                rows = self.outcome(fut, *self.pending.pop(fut))
                if not rows:
                    continue
                for row in rows:
                    self.left.pop(row["run"], None)
                yield rows
                if rest:  # the first row back times a run: the rest in batches
                    per_run = rows[0]["wall_s"] if rows[0]["status"] == "ok" else None
                    for part in batches(rest, default_batch(len(rest), n_workers, per_run)):
                        self.submit(part)
                    rest = []
        finally:
            if self.client.status == "running":  # else every call waits for a reconnection
                if self.pending:
                    self.client.cancel(list(self.pending))
                failures.Journal.drop(self.client, self.token)

    def submit(self, runs: list, name: str | None = None) -> None:
        name = name or f"b{self.count}"
        self.count += 1
        fut = self.client.submit(run_batch, self.target, runs, self.settings, self.metrics,
                                 failures.Journal(self.token, name), key=f"mbsfmu-sweep-{name}-{self.token}")
        self.track(fut, name, runs)

    def track(self, fut, name, runs) -> None:
        self.pending[fut] = (name, runs)
        fut.add_done_callback(self.ended.put)

    def outcome(self, fut, name: str, runs: list) -> list | None:
        """The rows of a task that ended (None if it went back to the cluster: its result was
        lost with a worker and is computed again, or could not be fetched yet)."""
        from distributed.scheduler import KilledWorker

        if fut.status not in ("finished", "error", "cancelled"):
            self.track(fut, name, runs)  # its result was lost with a worker: computed again
            return None
        try:
            rows = fut.result(timeout=self.timeout)
        except KilledWorker as exc:
            return self.isolate(name, runs, exc)
        except (Exception, asyncio.CancelledError) as exc:
            if fut.status == "error":  # the task itself raised, outside any run
                if isinstance(exc, SweepError):
                    raise SweepError(f"{exc}: {self.not_finished()}") from None
                raise SweepError(f"a task of the sweep failed on the Dask cluster outside any run "
                                 f"({failures.error_text(exc)}): {self.not_finished()}") from None
            if fut.status != "cancelled" and self.client.status == "running":
                time.sleep(POLL_SECONDS)  # a lost scheduler shows as a closing client soon
            self.fetches[name] = self.fetches.get(name, 0) + 1
            if fut.status != "cancelled" and self.client.status == "running":
                if self.fetches[name] <= FETCH_TRIES:
                    self.track(fut, name, runs)
                    return None
                raise SweepError(f"the rows of runs {failures.run_ranges(r for r, _ in runs)} could not be "
                                 f"fetched from the Dask cluster ({type(exc).__name__}: {exc}): "
                                 f"{self.not_finished()}") from None
            reason = getattr(exc, "reason", None) or type(exc).__name__
            raise SweepError(f"the connection to the Dask scheduler at {self.address} was lost ({reason}): "
                             f"{self.not_finished()}") from None
        fut.release()
        return rows

    def isolate(self, name: str, runs: list, exc) -> list:
        """A task that Dask gave up on (KilledWorker): the runs its journal names as killers are
        failed rows, a single run is one, the others run again one per task."""
        state = failures.Journal.read(self.client, self.token).get(name)
        killed = failures.killed_runs(state)
        if "load" in killed:
            raise SweepError(f"the worker process died while loading the sweep target {self.target.label} "
                             f"({failures.CRASH_CAUSES}): {self.not_finished()}")
        if len(runs) == 1:
            (run, values), = runs
            return [failures.killed_row(run, values, self.metrics, failures.died_alone(exc))]
        rows = [failures.killed_row(run, values, self.metrics, failures.died_in_batch(state["attempt"]))
                for run, values in runs if run in killed]
        for item in runs:
            if item[0] not in killed:
                self.submit([item], name=f"{name}.{item[0]}")
        return rows

    def not_finished(self, idle: bool = False) -> str:
        """Which runs have no row yet; on a cluster where no task runs (``idle``: no worker),
        also the runs that its tasks were at when their workers died."""
        text = f"{len(self.left)} runs did not finish (runs {failures.run_ranges(self.left)})"
        if idle:
            journals = failures.Journal.read(self.client, self.token).values()
            at = sorted({r for s in journals for r in failures.killed_runs(s) if r in self.left})
            if at:
                text += "; worker processes died while running " + ", ".join(
                    failures.describe_run(r, self.left[r]) for r in at)
        return text


def worker_count(scheduler, workers=None) -> int:
    """The number of workers a sweep spreads over: ``workers`` if given, those of a
    ``distributed.Client``, the local cluster's (as many as CPUs, at most 4), a single-machine
    scheduler's (1 for the synchronous one whatever ``workers`` says, else the CPUs), else 4."""
    if isinstance(scheduler, str) and scheduler in ("synchronous", "sync", "single-threaded"):
        return 1
    if workers:
        return workers
    if scheduler is None:
        return min(os.cpu_count() or 1, 4)
    if isinstance(scheduler, str) and scheduler in LOCAL_SCHEDULERS:
        return os.cpu_count() or 1
    info = getattr(scheduler, "scheduler_info", None)
    if callable(info):
        try:
            return max(1, len(info().get("workers", {})))
        except Exception:  # a client that lost its scheduler: the runs will say so
            return 4
    return 4


def connect(scheduler, workers=None, timeout: float = CONNECT_TIMEOUT):
    """(client, whether we started it) for ``scheduler``; a remote scheduler that does not
    answer within ``timeout`` seconds is a ParameterError naming its address."""
    from distributed import Client

    if isinstance(scheduler, Client):
        return scheduler, False
    if scheduler is None:
        from distributed import LocalCluster

        n = worker_count(None, workers)
        # the scheduler's HTTP server on a free port of this machine only (with None it still
        # takes 8787, and a second sweep beside the first warns that the port is in use)
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address="127.0.0.1:0")
        client = Client(cluster)
        quiet_workers.register(client)
        return client, True
    if isinstance(scheduler, str):
        try:
            return Client(scheduler, timeout=timeout), False
        except (OSError, TimeoutError) as exc:
            raise ParameterError(f"cannot reach the Dask scheduler at {scheduler!r} within "
                                 f"{timeout:g} s ({type(exc).__name__}: {exc})") from None
    raise ParameterError(f"scheduler must be None, an address 'tcp://host:port', a distributed.Client or "
                         f"one of {', '.join(LOCAL_SCHEDULERS)}; got {scheduler!r}")



def _execute_local(target, todo, settings, metrics, scheduler, workers, batch):
    """Dask's single-machine schedulers, one wave of tasks per ``dask.compute``; with the
    'processes' scheduler one pool of ``workers`` processes serves every wave (each loads the
    target once), and the first wave (one run per task) times a run to size the batches."""
    import dask
    import dask.multiprocessing

    in_process = scheduler != "processes"
    wave = worker_count(scheduler, workers)
    pool = None if in_process else concurrent.futures.ProcessPoolExecutor(
        wave, mp_context=dask.multiprocessing.get_context(),
        initializer=dask.multiprocessing.initialize_worker_process)

    def compute(group):
        parts = [dask.delayed(run_batch, pure=False)(target, b, settings, metrics) for b in group]
        try:
            return dask.compute(*parts, scheduler=scheduler, **({"pool": pool} if pool else {}))
        except concurrent.futures.process.BrokenProcessPool as exc:
            runs = [run for b in group for run, _ in b]
            raise SweepError(f"a worker process of Dask's {scheduler!r} scheduler died while running one of "
                             f"runs {failures.run_ranges(runs)} ({failures.CRASH_CAUSES}), which one it "
                             f"cannot tell; on the default local cluster such a run is a failed row "
                             f"({type(exc).__name__})") from None

    try:
        if batch is None and not in_process and len(todo) > 1:
            done = compute([[item] for item in todo[:wave]])
            yield from done
            todo, first = todo[wave:], done[0][0]
            size = default_batch(len(todo), wave, first["wall_s"] if first["status"] == "ok" else None)
        else:
            size = batch or default_batch(len(todo), (workers or 1) if in_process else wave)
        tasks = batches(todo, size)
        for i in range(0, len(tasks), wave):
            yield from compute(tasks[i:i + wave])
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
