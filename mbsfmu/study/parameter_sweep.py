"""The parameter sweep: :func:`sweep` runs a target over a design on Dask and keeps one row per
run, tying together the study's parts (:mod:`.designs`, :mod:`.metrics`, :mod:`.checks`,
:mod:`.batch`, :mod:`.results`, :mod:`.definition`, :mod:`.trajectories`, :mod:`.plots`)."""

from __future__ import annotations

import logging
import sys
import warnings

import pandas as pd

from ..core.checks import finite_number
from ..core.errors import ParameterError, StudyWarning, SweepError
from ..core.output_files import plot_path
from ..simulation.result import signal_names
from . import batch as _batch  # the module, by a name that sweep's keyword batch= does not hide
from . import checks, definition, designs, diagram_target, failures, metrics, results
from .plots import plot_study
from .trajectories import TrajectoryStore

__all__ = ["sweep"]

log = logging.getLogger("mbsfmu.study")
#: damaged rows and failed runs listed one by one in a warning, at most
MAX_LISTED = 20


def sweep(target, design, *, t_end=None, dt=None, rtol=None, metrics=None, keep=None, out=None,
          scheduler=None, batch=None, workers=None, progress=False, plot=None, trajectories=None,
          connect_timeout=_batch.CONNECT_TIMEOUT, cluster_timeout=_batch.CLUSTER_TIMEOUT, resume="check",
          retry_failed=False, linearize=None,
          **simulate_kwargs) -> pd.DataFrame:
    """Run ``target`` once per row of ``design`` and return one row per run.

    ``target``: a model file or :class:`~mbsfmu.System` (run with :func:`mbsfmu.simulate`, the
    row's values as constants, initial values (coordinates, rates, the named initial conditions
    of :mod:`mbsfmu.model.initial_values`) or constant inputs by name) or an FMU file (run with
    ``fmpy.simulate_fmu``, the row as ``start_values``; a named initial condition is a
    parameter), or a block diagram (:mod:`.diagram_target`): a function of the parameters that
    returns a :class:`~mbsfmu.runner.Diagram` (the row as its keyword arguments, ``params=``
    fixed ones) or an SSP file (the row's ``block.parameter`` values set on its FMU blocks),
    each run's diagram run with ``Diagram.run(t_end, **simulate_kwargs)`` (``record``,
    ``algebraic_loops``, ``loop_tol``, ``loop_max_iter``, ``check_finite``, ``rollback``; not
    ``realtime`` nor ``live``), its metrics read from the signals ``block.port`` or, for the
    kinds of the linearized closed loop ('largest_real_part', 'stable', ...), from
    ``mbsfmu.linearize(diagram, **linearize)`` (no run at all when every metric is one of
    these: then ``t_end`` may be left out).  ``design``: a DataFrame (see :mod:`.designs`), a CSV
    file, or ``{name: values}``
    for a full factorial.  ``t_end``, ``dt``
    (output interval), ``rtol`` and ``simulate_kwargs`` (method, formulation, ...; for an FMU,
    fmpy's options) are the settings of every run; ``params=``, ``initial=`` and ``inputs=``
    (for an FMU ``start_values=``) are fixed values merged with every run's (a name is given
    either there or as a design column).  Everything that can be checked is checked before the
    first run (:mod:`.checks`): a bad input is a ParameterError, and nothing is written.

    ``metrics``: ``{name: 'KIND(SIGNAL)' | ('KIND', 'SIGNAL') | f(result)}`` (see
    :mod:`.metrics`); default the final value of every coordinate (for an FMU, of every output).
    ``keep``: more signals whose final values become columns (named after the signal).

    The returned DataFrame has the columns ``run`` (the design's row), the parameters, the
    metrics, ``status`` ('ok'; 'unstable', 'not settled' or 'diverged', the verdicts of the metrics, see
    :mod:`.metrics`; or 'failed'), ``message`` (why a row is not 'ok': the verdicts' reasons, or
    the error of a failed run) and ``wall_s``, in run order.  A run that fails is a row, never
    an abort; a row 'not settled' or 'diverged' keeps its metrics (nan where there is none).
    With ``out`` (CSV) each batch's rows are appended as it finishes, and a sweep started again with the same
    ``out`` takes the file's sound rows and runs only the others (see :mod:`.results`): rows of
    another definition (target, settings, design, metrics, see :mod:`.definition`) are refused
    unless ``resume='restart'`` (move the old rows aside, start over) or ``resume='keep'``
    (keep them on purpose); damaged rows are run again with a StudyWarning naming file and line;
    ``retry_failed=True`` runs the failed rows again (not those 'not settled' or 'diverged', which
    are finished runs).  ``df.attrs['resume']`` says how many rows
    were taken from the file and how many runs ran.  An ``out`` ending in ``.parquet`` is
    written as Parquet at the end (the rows grow in ``OUT.partial.csv`` until then).
    ``trajectories``: a folder (one CSV per run) or a ``.npz`` file (one array per run) for the
    whole trajectories, see :mod:`.trajectories`.

    ``scheduler``: None (a local cluster of ``workers`` processes, started and closed here),
    ``'tcp://host:port'`` or a ``distributed.Client`` (that cluster), or ``'synchronous'``,
    ``'threads'``, ``'processes'`` (Dask's single-machine schedulers).  ``batch``: runs per task
    (default: about four tasks per worker, counted on the cluster, and at least
    :data:`.batch.MIN_TASK_SECONDS` of work per task as timed on the first run to come back
    from a worker).  ``connect_timeout``: seconds to wait for a remote scheduler before a
    ParameterError.  On a cluster a run that kills its worker process is a failed row; a
    scheduler that goes away, or a cluster without any worker for ``cluster_timeout`` seconds
    (default 60), ends the sweep with :class:`~mbsfmu.core.errors.SweepError`, whose ``rows`` are
    every row that finished (written to ``out`` too); see :mod:`.failures`.  ``progress``: a
    progress bar with the rate and the time left (tqdm) on stderr.  ``plot``: a
    file to draw the first metric in with :func:`.plot_study` (over one parameter, a heat map over
    two, else a histogram); ``df.attrs['parameters']`` names the design's columns for it.
    """
    _batch.check_options(scheduler, workers, batch, connect_timeout, cluster_timeout)
    design = _design(design)
    results.check_resume(resume)
    if plot is not None:
        plot_path(plot, "plot", [("rows file", out)])
    in_process = isinstance(scheduler, str) and scheduler in ("synchronous", "sync", "single-threaded",
                                                              "threads")
    target_ = _batch.make_target(target, in_process)
    loaded = target_.load()
    if target_.diagram:
        chosen, settings, fixed, entries = _diagram_settings(
            target_, loaded, design, t_end, dt, rtol, metrics, keep, linearize, simulate_kwargs,
            trajectories is not None)
    else:
        if linearize is not None:
            raise ParameterError("sweep: linearize= is for a diagram target (a function that returns a "
                                 "Diagram, or an SSP file)")
        if t_end is None:
            raise ParameterError("sweep: t_end= (the end time of every run) is required")
        settable = _batch.settable_names(target_)
        checks.design_names(design.columns, settable)
        chosen = _metrics(metrics, keep, lambda: _outputs(target_))
        _no_linear(chosen)
        settings, fixed, entries = _settings(target_, loaded, t_end, dt, rtol, simulate_kwargs, chosen,
                                             design, settable, trajectories is not None)
        for m in chosen:  # t_end checked by _settings
            m.check_time(t_end)
    header = results.columns(list(design.columns), [m.name for m in chosen])
    # a System's digest from the caller's object (a worker's copy is unpickled, the digest is not)
    own = target if target_.kind in ("system", "factory") else loaded
    defined = definition.of_sweep(target_, own, entries, design, chosen, keep)
    rowfile = (results.RowFile(out, header, design, defined, resume, retry_failed)
               if out is not None else None)
    store = TrajectoryStore(trajectories) if trajectories is not None else None
    done = rowfile.done if rowfile is not None else []
    finished = {r["run"] for r in done}
    todo = [(i, {**fixed, **{c: float(v) for c, v in row.items()}})
            for i, row in enumerate(design.to_dict("records")) if i not in finished]
    report = _resume_report(rowfile, out, done, len(todo))
    client = None
    if isinstance(scheduler, str) and scheduler not in _batch.LOCAL_SCHEDULERS and todo:
        # connect first: a scheduler that does not answer fails before any run (and before any
        # file is written), and the cluster's worker count sizes the batches
        client, _ = _batch.connect(scheduler, workers, connect_timeout)
        scheduler = client
    rows = list(done)
    complete = False
    bar = None
    try:
        if rowfile is not None:
            for old, new in rowfile.open(store.paths if store is not None else ()):
                log.info("%s moved aside to %s", old, new)
                report["moved"].append((str(old), str(new)))
        if store is not None:
            store.open()
        bar = _bar(len(design), len(done)) if progress else None

        def take(batch_rows):
            for row in batch_rows:
                traj = row.pop(_batch.TRAJECTORY, None)
                if store is not None and traj is not None:
                    store.write(row["run"], traj)
            if rowfile is not None:
                rowfile.write(batch_rows)
            rows.extend(batch_rows)
            if bar is not None:
                bar.update(len(batch_rows))

        if todo:
            for batch_rows in _batch.execute(target_, todo, settings, chosen, scheduler=scheduler,
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
            _batch.close_client(client)
    df = results.frame(rows, header)
    df.attrs["parameters"] = list(design.columns)
    df.attrs["resume"] = report
    if rowfile is not None:
        rowfile.finish(df)
    if store is not None:
        store.finish()
    if plot is not None:
        plot_study(df, plot)
    return df


def _resume_report(rowfile, out, done: list, to_run: int) -> dict:
    """What a sweep took from its rows file and what it runs (``df.attrs['resume']``), said as
    a log line and, for damaged or failed rows taken, a StudyWarning."""
    failed = [r["run"] for r in done if r["status"] == "failed"]
    report = {"file": None if out is None else str(out), "taken": len(done), "failed_taken": len(failed),
              "ran": to_run, "damaged": list(rowfile.problems) if rowfile is not None else [],
              "retried": list(rowfile.retried) if rowfile is not None else [], "moved": []}
    if rowfile is None:
        return report
    name = str(out)
    if rowfile.problems:
        shown = rowfile.problems[:MAX_LISTED]
        more = len(rowfile.problems) - len(shown)
        warnings.warn(f"{name}: {len(rowfile.problems)} row(s) are not sound and are run again:\n  "
                      + "\n  ".join(shown) + (f"\n  ... and {more} more" if more else ""),
                      StudyWarning, stacklevel=3)
    if failed:
        warnings.warn(f"{name}: {len(failed)} failed row(s) taken from the file as they are (run(s) "
                      f"{_runs(failed)}); retry_failed=True (--retry-failed) runs them again", StudyWarning,
                      stacklevel=3)
    log.info("%s: %d row(s) taken from the file (%d failed), %d run(s) to run", name, len(done), len(failed),
             to_run)
    return report


def _runs(runs: list) -> str:
    shown = ", ".join(map(str, runs[:MAX_LISTED]))
    return shown + (f", ... ({len(runs)} in all)" if len(runs) > MAX_LISTED else "")


def _design(design) -> pd.DataFrame:
    if isinstance(design, dict):
        return designs.factorial(design)
    return designs.table(design)


def _outputs(target) -> list[str]:
    """The signals whose final values a model's or an FMU's sweep keeps by default: the
    coordinates, or the FMU's outputs."""
    loaded = target.load()
    if target.kind == "fmu":
        return [v.name for v in loaded[1].modelVariables if v.causality == "output"]
    return list(loaded.coordinates_)


def _metrics(spec, keep, defaults) -> list:
    """The metrics of ``spec`` and the final values of ``keep``; without either, the final
    values of the signals ``defaults()`` names."""
    if spec is None and not keep:
        spec = {n: ("final", n) for n in defaults()}
    if keep is not None and (isinstance(keep, str) or not all(isinstance(k, str) for k in keep)):
        raise ParameterError(f"keep must be a list of signal names, got {keep!r}")
    chosen = metrics.make_metrics(spec)
    chosen += [metrics.Metric(n, ("final", n)) for n in keep or []]
    return chosen


def _no_linear(chosen: list) -> None:
    linear = [m for m in chosen if m.function is None and m.linear]
    if linear:
        raise ParameterError(f"metric {linear[0].name!r} = {linear[0].text}: a metric of the linearized "
                             "closed loop is for a diagram target (a function that returns a Diagram, or an "
                             "SSP file)")


def _diagram_settings(target, loaded, design, t_end, dt, rtol, metrics_, keep, linearize, options,
                      keep_trajectories: bool):
    """(metrics, settings, fixed values, definition entries) of a diagram target
    (:mod:`.diagram_target`), everything checked on the diagram of the first run."""
    options = dict(options)
    for name, value in (("dt", dt), ("rtol", rtol)):
        if value is not None:
            options[name] = value
    fixed = checks.mapping(options.pop("params", None), "params")
    columns = list(design.columns)
    if target.kind == "factory":
        diagram_target.check_factory(loaded, columns, fixed)
        checks.not_in_design(fixed, columns, "params")
        probe = _probe(loaded, design, fixed)
    else:
        diagram_target.check_ssp_names(columns, loaded)
        diagram_target.check_ssp_names(fixed, loaded, "params= name")
        checks.not_in_design(fixed, columns, "params")
        for name, value in fixed.items():
            fixed[name] = finite_number(value, f"sweep: params {name!r}")
        probe = loaded
    chosen = _metrics(metrics_, keep, lambda: probe.recorded_signals(
        options.get("record"), algebraic_loops=options.get("algebraic_loops", "error")))
    settings, entries = diagram_target.run_settings(probe, t_end, options, linearize, chosen,
                                                    keep_trajectories)
    factory = target.kind == "factory"
    entries = {**diagram_target.identity(target.kind, target.local if factory else target.path,
                                         probe if factory else None),
               **entries, "params": definition.describe(fixed)}
    settings["fixed"] = fixed  # merged into every run's values where its diagram is built, not sent per row
    return chosen, settings, {}, entries


def _probe(factory, design, fixed: dict):
    """The diagram of the first run that the factory makes (of the first few rows): what the
    checks look at; a ParameterError if none of them makes one."""
    errors = []
    for row in design.head(diagram_target.PROBE_ROWS).to_dict("records"):
        try:
            return diagram_target.make_diagram(factory, {**fixed, **{c: float(v) for c, v in row.items()}})
        except diagram_target.FactoryError as exc:
            errors.append(str(exc))
    if not errors:
        raise ParameterError("sweep: the design has no row")
    raise ParameterError(f"sweep: no diagram to check the study on: {errors[0]}"
                         + (f" (and on the next {len(errors) - 1} row(s))" if len(errors) > 1 else ""))


def _settings(target, loaded, t_end, dt, rtol, simulate_kwargs, chosen, design, settable,
              keep_trajectories: bool) -> tuple[dict, dict, dict]:
    """(the settings the batches take, the fixed values of every run, the definition entries of
    the settings), every metric's signal and every keyword checked (:mod:`.checks`)."""
    signals = [s for m in chosen if m.function is None for s in m.signals]
    if target.kind == "fmu":
        md = loaded[1]
        checks.metric_signals(chosen, ["time", *(v.name for v in md.modelVariables)], f"FMU {md.modelName!r}")
        only = all(m.function is None for m in chosen) and not keep_trajectories
        fmu, fixed, entries = checks.fmu_settings(md, t_end, dt, rtol, simulate_kwargs, list(design.columns),
                                                  settable, signals, only)
        return {"fmu": fmu, "trajectories": keep_trajectories}, fixed, entries
    checks.metric_signals(chosen, signal_names(loaded), repr(loaded.name))
    kw, fixed, entries = checks.simulate_settings(loaded, t_end, dt, rtol, simulate_kwargs,
                                                  list(design.columns))
    return {"simulate": kw, "trajectories": keep_trajectories}, fixed, entries


def _bar(total, done):
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="run", desc="sweep", file=sys.stderr)
