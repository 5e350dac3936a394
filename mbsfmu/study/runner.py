"""Running a study on Dask: runs grouped into batches, one task per batch.

The target travels to the workers as a small :class:`Target` (a model file's path, a pickled
``System`` or an FMU file's path); each worker process loads it once and keeps it in
:data:`_LOADED` (the model derived and compiled, or the FMU unpacked, once per process), so a
task costs one dictionary look-up besides its runs.

Schedulers: ``None`` starts a ``distributed.LocalCluster`` of worker processes on this machine
(closed at the end); ``'tcp://host:port'`` or a ``distributed.Client`` runs on that cluster;
``'synchronous'``, ``'threads'`` or ``'processes'`` use Dask's single-machine schedulers, one
wave of batches per ``dask.compute``.  Finished batches are handed back as they come, so the
caller can write them at once.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import time

from ..errors import ParameterError

#: per worker process: target key -> loaded target (System, or FMU folder and description)
_LOADED: dict = {}
#: per worker process: how often each target was loaded (the tests read it)
LOAD_COUNT: dict = {}

#: the key of a row's trajectory on its way from a worker (never a column)
TRAJECTORY = "_trajectory"

LOCAL_SCHEDULERS = ("synchronous", "sync", "single-threaded", "threads", "processes")
#: seconds to wait for a remote scheduler before giving up
CONNECT_TIMEOUT = 10


class Target:
    """What runs: kind 'model' (a model file), 'system' (a pickled System) or 'fmu' (an FMU file)."""

    def __init__(self, kind: str, path: str | None = None, payload: bytes | None = None, system=None):
        self.kind, self.path, self.payload = kind, path, payload
        self.local = system  # the System itself, for schedulers in this process
        token = payload if payload is not None else str(path).encode()
        self.key = f"{kind}:{hashlib.sha1(token).hexdigest()}" if payload is not None else f"{kind}:{path}"
        if path is not None:  # a file edited between two sweeps is loaded again, not taken from _LOADED
            self.key += f":{hashlib.sha1(pathlib.Path(path).read_bytes()).hexdigest()}"

    def __getstate__(self):
        return {"kind": self.kind, "path": self.path, "payload": self.payload, "key": self.key,
                "local": None}

    def load(self):
        """The loaded target, once per process."""
        if self.key not in _LOADED:
            LOAD_COUNT[self.key] = LOAD_COUNT.get(self.key, 0) + 1
            _LOADED[self.key] = self._load()
        return _LOADED[self.key]

    def _load(self):
        if self.kind == "model":
            from ..model.loader import load_model

            return load_model(self.path)
        if self.kind == "system":
            if self.local is not None:
                return self.local
            import cloudpickle

            return cloudpickle.loads(self.payload)
        import tempfile

        from fmpy import extract, read_model_description

        folder = extract(self.path, unzipdir=tempfile.mkdtemp(prefix="mbsfmu-sweep-"))
        return folder, read_model_description(self.path)


def make_target(target, in_process: bool) -> Target:
    """The Target of ``target`` (a model or FMU file, or a System)."""
    from ..model import System

    if isinstance(target, System):
        if in_process:
            return Target("system", payload=str(id(target)).encode(), system=target)
        import cloudpickle

        try:
            payload = cloudpickle.dumps(target)
        except Exception as exc:
            raise ParameterError(
                f"System {target.name!r} cannot be sent to worker processes ({exc}): pass the model "
                "file, or run with scheduler='synchronous'") from None
        return Target("system", payload=payload)
    if isinstance(target, (str, os.PathLike)):
        p = pathlib.Path(target).resolve()
        if not p.is_file():
            raise ParameterError(f"sweep target {str(target)!r} does not exist")
        return Target("fmu" if p.suffix.lower() == ".fmu" else "model", path=str(p))
    raise ParameterError(f"sweep target must be a model file, a System or an FMU file, got {type(target)!r}")


def settable_names(target: Target) -> set:
    """The names a design may set on the target, loaded in this process."""
    loaded = target.load()
    if target.kind == "fmu":
        return {v.name for v in loaded[1].modelVariables if v.causality in ("parameter", "input")
                or (v.initial in ("exact", "approx") and v.causality != "independent")}
    coords = list(loaded.coordinates_)
    return {*loaded.constants_, *coords, *(f"der({c})" for c in coords), *(f"D{c}" for c in coords),
            *loaded.inputs}


def run_batch(target: Target, runs: list, settings: dict, metrics: list) -> list[dict]:
    """Run every (run number, {name: value}) of a batch; each gives one row, whatever happens."""
    loaded = target.load()
    return [run_one(target, loaded, run, values, settings, metrics) for run, values in runs]


def run_one(target, loaded, run: int, values: dict, settings: dict, metrics: list) -> dict:
    """One row: the parameters, the metrics, and status 'ok', or 'failed' with the error."""
    row = {"run": run, **values}
    start = time.perf_counter()
    try:
        result = _simulate(target, loaded, values, settings)
        for m in metrics:
            try:
                row[m.name] = m(result)
            except Exception as exc:
                raise ParameterError(f"metric {m.name!r} failed on run {run}: {type(exc).__name__}: "
                                     f"{exc}") from exc
        row.update(status="ok", message="")
        if settings.get("trajectories"):
            from .trajectories import of_result

            row[TRAJECTORY] = of_result(result)
    except Exception as exc:
        row.update({m.name: None for m in metrics})
        row.update(status="failed", message=f"{type(exc).__name__}: {exc}")
    row["wall_s"] = time.perf_counter() - start
    return row


def _simulate(target, loaded, values: dict, settings: dict):
    if target.kind == "fmu":
        from fmpy import simulate_fmu

        folder, md = loaded
        opts = dict(settings["fmu"])
        return simulate_fmu(folder, model_description=md, start_values=dict(values), **opts)
    from ..simulation import simulate

    system = loaded
    params, initial, inputs = split_values(system, values)
    kw = dict(settings["simulate"])
    if inputs:
        kw["inputs"] = {**(kw.get("inputs") or {}), **inputs}
    return simulate(system, params=params or None, initial=initial or None, **kw)


def split_values(system, values: dict) -> tuple[dict, dict, dict]:
    """A parameter set as simulate's params (constants), initial (coordinates, der(NAME), DNAME)
    and inputs (constant values)."""
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


def execute(target, tasks: list, settings, metrics, scheduler=None, workers=None,
            connect_timeout: float = CONNECT_TIMEOUT):
    """Run the batches of ``tasks`` on Dask; yield each batch's rows as it finishes."""
    if isinstance(scheduler, str) and scheduler in LOCAL_SCHEDULERS:
        yield from _execute_local(target, tasks, settings, metrics, scheduler, workers)
        return
    client, owned = connect(scheduler, workers, connect_timeout)
    try:
        from distributed import as_completed

        futures = [client.submit(run_batch, target, batch, settings, metrics, pure=False)
                   for batch in tasks]
        try:
            for fut in as_completed(futures):
                yield fut.result()
        finally:
            for fut in futures:
                fut.cancel()
    finally:
        if owned:
            cluster = client.cluster
            client.close()
            cluster.close()


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
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
        return Client(cluster), True
    if isinstance(scheduler, str):
        try:
            return Client(scheduler, timeout=timeout), False
        except (OSError, TimeoutError) as exc:
            raise ParameterError(f"cannot reach the Dask scheduler at {scheduler!r} within "
                                 f"{timeout:g} s ({type(exc).__name__}: {exc})") from None
    raise ParameterError(f"scheduler must be None, an address 'tcp://host:port', a distributed.Client or "
                         f"one of {', '.join(LOCAL_SCHEDULERS)}; got {scheduler!r}")


def _execute_local(target, tasks, settings, metrics, scheduler, workers):
    import dask

    wave = worker_count(scheduler, workers)
    for i in range(0, len(tasks), wave):
        parts = [dask.delayed(run_batch, pure=False)(target, b, settings, metrics) for b in tasks[i:i + wave]]
        yield from dask.compute(*parts, scheduler=scheduler)
