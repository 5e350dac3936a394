"""Parameter studies: run one model or FMU over a design of parameter sets on Dask.

``designs`` makes the parameter sets, ``metrics`` what each run keeps, ``runner`` runs batches
of runs on a Dask scheduler (the model loaded once per worker process), ``results`` keeps the
rows in a CSV file that a restarted study resumes from.  :func:`sweep` ties them together.
"""

from __future__ import annotations

import pandas as pd

from ..errors import ParameterError, SweepError
from . import designs, failures, metrics, plots, results, runner, trajectories
from .designs import factorial, latin_hypercube, monte_carlo, sobol, table
from .plots import plot_study
from .trajectories import TrajectoryStore

__all__ = ["sweep", "plot_study", "factorial", "latin_hypercube", "sobol", "monte_carlo", "table", "designs",
           "metrics", "plots", "results", "runner", "trajectories", "failures"]


def sweep(target, design, *, t_end, dt=None, rtol=None, metrics=None, keep=None, out=None, scheduler=None,
          batch=None, workers=None, progress=False, plot=None, trajectories=None,
          connect_timeout=runner.CONNECT_TIMEOUT, cluster_timeout=runner.CLUSTER_TIMEOUT,
          **simulate_kwargs) -> pd.DataFrame:
    """Run ``target`` once per row of ``design`` and return one row per run.

    ``target``: a model file or :class:`~mbsfmu.System` (run with :func:`mbsfmu.simulate`, the
    row's values as constants, initial values or constant inputs by name) or an FMU file (run
    with ``fmpy.simulate_fmu``, the row as ``start_values``).  ``design``: a DataFrame (see
    :mod:`.designs`), a CSV file, or ``{name: values}`` for a full factorial.  ``t_end``, ``dt``
    (output interval), ``rtol`` and ``simulate_kwargs`` (method, formulation, inputs, ...; for an
    FMU, fmpy's options) are the settings of every run.

    ``metrics``: ``{name: 'KIND(SIGNAL)' | ('KIND', 'SIGNAL') | f(result)}`` (see
    :mod:`.metrics`); default the final value of every coordinate (for an FMU, of every output).
    ``keep``: more signals whose final values become columns (named after the signal).

    The returned DataFrame has the columns ``run`` (the design's row), the parameters, the
    metrics, ``status`` ('ok' or 'failed'), ``message`` (the error of a failed run) and
    ``wall_s``.  A run that fails is a row, never an abort.  With ``out`` (CSV) each batch's rows
    are appended as it finishes, and a sweep started again with the same ``out`` runs only the
    runs not in it; an ``out`` ending in ``.parquet`` is written as Parquet at the end (the rows
    grow in ``OUT.partial.csv`` until then, see :mod:`.results`).  ``trajectories``: a folder
    (one CSV per run) or a ``.npz`` file (one array per run) for the whole trajectories, see
    :mod:`.trajectories`.

    ``scheduler``: None (a local cluster of ``workers`` processes, started and closed here),
    ``'tcp://host:port'`` or a ``distributed.Client`` (that cluster), or ``'synchronous'``,
    ``'threads'``, ``'processes'`` (Dask's single-machine schedulers).  ``batch``: runs per task
    (default: about four tasks per worker, counted on the cluster, and at least
    :data:`runner.MIN_TASK_SECONDS` of work per task as timed on the first run to come back
    from a worker).  ``connect_timeout``: seconds to wait for a remote scheduler before a
    ParameterError.  On a cluster a run that kills its worker process is a failed row; a
    scheduler that goes away, or a cluster without any worker for ``cluster_timeout`` seconds
    (default 60), ends the sweep with :class:`~mbsfmu.errors.SweepError`, whose ``rows`` are
    every row that finished (written to ``out`` too); see :mod:`.failures`.  ``progress``: a
    progress bar with the rate and the time left (tqdm) on stderr.  ``plot``: a
    file to draw the first metric in with :func:`.plot_study` (over one parameter, a heat map over
    two, else a histogram); ``df.attrs['parameters']`` names the design's columns for it.
    """
    runner.check_options(scheduler, workers, batch, connect_timeout, cluster_timeout)
    design = _design(design)
    in_process = isinstance(scheduler, str) and scheduler in ("synchronous", "sync", "single-threaded",
                                                              "threads")
    target_ = runner.make_target(target, in_process)
    settable = runner.settable_names(target_)
    unknown = [c for c in design.columns if c not in settable]
    if unknown:
        raise ParameterError(f"unknown parameter(s) {', '.join(map(repr, unknown))} of the sweep target "
                             f"(it has: {', '.join(sorted(settable))})")
    chosen = _metrics(metrics, keep, target_)
    settings = _settings(target_, t_end, dt, rtol, simulate_kwargs, chosen, trajectories is not None)
    header = results.columns(list(design.columns), [m.name for m in chosen])
    if len(set(header)) != len(header):
        clash = sorted({c for c in header if header.count(c) > 1})
        raise ParameterError(f"metric names must differ from each other, the parameters and run, status, "
                             f"message, wall_s (clash: {', '.join(clash)})")
    rowfile = results.RowFile(out, header, design) if out is not None else None
    done = rowfile.done.to_dict("records") if rowfile is not None else []
    finished = {int(r["run"]) for r in done}
    todo = [(i, {c: float(v) for c, v in row.items()}) for i, row in enumerate(design.to_dict("records"))
            if i not in finished]
    rows = list(done)
    store = TrajectoryStore(trajectories) if trajectories is not None else None
    bar = _bar(len(design), len(done)) if progress else None

    def take(batch_rows):
        for row in batch_rows:
            traj = row.pop(runner.TRAJECTORY, None)
            if store is not None and traj is not None:
                store.write(row["run"], traj)
        if rowfile is not None:
            rowfile.write(batch_rows)
        rows.extend(batch_rows)
        if bar is not None:
            bar.update(len(batch_rows))

    complete = False
    client = None
    try:
        if isinstance(scheduler, str) and scheduler not in runner.LOCAL_SCHEDULERS:
            # connect first: a scheduler that does not answer fails before any run, and the
            # cluster's worker count sizes the batches
            client, _ = runner.connect(scheduler, workers, connect_timeout)
            scheduler = client
        if todo:
            for batch_rows in runner.execute(target_, todo, settings, chosen, scheduler=scheduler,
                                             workers=workers, batch=batch, connect_timeout=connect_timeout,
                                             cluster_timeout=cluster_timeout):
                take(batch_rows)
        complete = True
    except SweepError as exc:  # the cluster could not go on: the error carries every finished row
        raise failures.attach_rows(exc, results.frame(rows, header), rowfile and rowfile.path) from None
    finally:
        if bar is not None:
            bar.close()
        if not complete and rowfile is not None:
            rowfile.close()
        if client is not None:
            runner.close_client(client)
    df = results.frame(rows, header)
    df.attrs["parameters"] = list(design.columns)
    if rowfile is not None:
        rowfile.finish(df)
    if store is not None:
        store.finish()
    if plot is not None:
        plot_study(df, plot)
    return df


def _design(design) -> pd.DataFrame:
    if isinstance(design, dict):
        return designs.factorial(design)
    return designs.table(design)


def _metrics(spec, keep, target) -> list:
    if spec is None and not keep:
        loaded = target.load()
        if target.kind == "fmu":
            names = [v.name for v in loaded[1].modelVariables if v.causality == "output"]
        else:
            names = list(loaded.coordinates_)
        spec = {n: ("final", n) for n in names}
    chosen = metrics.make_metrics(spec)
    chosen += [metrics.Metric(n, ("final", n)) for n in keep or []]
    return chosen


def _settings(target, t_end, dt, rtol, simulate_kwargs, chosen, keep_trajectories: bool) -> dict:
    if target.kind == "fmu":
        fmu = {"stop_time": t_end, "output_interval": dt, "relative_tolerance": rtol}
        signals = [m.signal for m in chosen if m.signal is not None]
        fmu = {k: v for k, v in fmu.items() if v is not None}
        if (signals and "output" not in simulate_kwargs and all(m.function is None for m in chosen)
                and not keep_trajectories):
            fmu["output"] = list(dict.fromkeys(signals))
        return {"fmu": {**fmu, **simulate_kwargs}, "trajectories": keep_trajectories}
    kw = {"t_end": t_end, "dt": dt, "rtol": rtol}
    return {"simulate": {**{k: v for k, v in kw.items() if v is not None}, **simulate_kwargs},
            "trajectories": keep_trajectories}


def _bar(total, done):
    import sys

    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="run", desc="sweep", file=sys.stderr)
