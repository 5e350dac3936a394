"""``simulate(..., backend='c')`` on the C engine: prepare one instance, run the grid in one call.

The run is the one the native FMU makes (same C code, same steps): the model's start values with
the user's ``initial`` values set (and so held first at the consistent start), constants from
``params``, inputs held or given as functions of t (then called from C at every right-hand
side), the solver settings as the FMU's parameters.  What the engine cannot explain as well as
the Python reference (an inconsistent start, redundant constraints, a singular configuration at
the start) the caller explains (``explain``: :func:`.simulate.simulate` re-checks it with the
reference so the exception and its message stay the same); this module imports nothing of the
reference.
"""

from __future__ import annotations

import math
import time
import warnings

from ..core.errors import (
    InconsistentInitialValuesWarning,
    MbsError,
    SimulationError,
    SimulationInterrupted,
    StiffnessWarning,
    stop_reason,
)
from ..core.solver_settings import METHOD_ALIASES, METHODS
from ..engine.extension import ENGINE_FORMULATIONS, Engine, EngineError
from .constraint_rank import check_rank
from .run_clock import RunClock

#: simulate's methods the engine runs, and its method for each: its own and their other names
ENGINE_METHODS = {**{m: m for m in METHODS}, **METHOD_ALIASES}


def engine_applies(system, method: str, formulation: str) -> bool:
    """True if the engine runs this combination (else simulate takes the numpy path)."""
    if method not in ENGINE_METHODS:
        return False
    if any(c.value is None for c in system.constants_.values()):
        return False  # the engine's start values need every constant's value
    return not system.constrained or formulation in ENGINE_FORMULATIONS


def run_on_engine(system, numeric, form, grid, x0, given: list, fixed, rtol, atol, max_step,
                  inputs, options, progress, progress_every, result, method="explicit", clock=None,
                  explain=None):
    """Integrate over ``grid`` on the engine; returns (T, X, stats) or raises like simulate.
    ``clock`` (a :class:`.run_clock.RunClock`) times building or loading the engine and the run;
    ``explain(exc)``, if given, is the exception raised for the engine's refusal ``exc`` of the
    start (else a SimulationError with the engine's message)."""
    clock = clock or RunClock()
    with clock.compiling():
        eng = Engine(system, form.name if numeric.m else "minimal", options, method=ENGINE_METHODS[method])
    eng.set(dict(zip(numeric.constant_names, map(float, numeric.prm))))
    schedule = form.inputs
    if inputs and schedule.time_varying:
        eng.set_functions(inputs=lambda t: schedule(t))
    else:
        eng.set(dict(zip(numeric.input_names, map(float, numeric.u))))
    if system.time_parameters and any(p.functions is not None for p in system.time_parameters.values()):
        eng.set_functions(inputs=(lambda t: schedule(t)) if schedule.time_varying else None,
                          time_parameters=lambda t: numeric._tp_at(t))
    eng.set({"solver_rtol": rtol, "solver_atol": atol,
             "max_internal_step": 0.0 if math.isinf(max_step) else max_step})
    names = numeric.coordinate_names
    eng.set({g: float(x0[names.index(g)] if g in names else x0[numeric.f + names.index(g[4:-1])])
             for g in given})
    t_end = float(grid[-1])
    try:
        warning = eng.start(0.0, t_end, hold=list(fixed) if fixed else None)
    except EngineError as exc:
        raise (explain(exc) if explain else SimulationError(str(exc))) from None
    if warning:
        warnings.warn(InconsistentInitialValuesWarning(f"{system.name}: {warning}"), stacklevel=3)
    if numeric.m:
        check_rank(form, 0.0, eng.x[:numeric.f])
    start = time.perf_counter()

    warned = []

    def stiffness_warning():
        msg = eng.statistics()["stiffness"]
        if msg and not warned:
            warned.append(msg)
            warnings.warn(StiffnessWarning(f"{system.name}: {msg}: method='stiff' (mbsfmu simulate "
                                           "--method stiff)"), stacklevel=4)

    def tick(t):
        stiffness_warning()
        if progress is not None:
            progress(t, t_end)

    if progress is not None:
        progress(0.0, t_end)
    clock.start_run()
    rec, reached, status, message, code = eng.run(grid, progress=tick, every=progress_every)
    clock.stop_run()
    stiffness_warning()
    stats = dict(eng.statistics(), engine_seconds=time.perf_counter() - start, backend="c",
                 engine="c")
    if numeric.m:
        form.rank = stats["rank"]  # what the reference formulation would report
        if form.name == "partition":
            names = numeric.coordinate_names
            stats["partition_switches"] = [(t, [n for n, d in zip(names, dep) if not d])
                                           for t, dep in eng.instance.switches()]
    f = numeric.f
    T, X = grid[:reached], rec[:reached, :2 * f].T
    if status != 0:
        if isinstance(message, KeyboardInterrupt):  # Ctrl-C, or SIGTERM (errors.Terminated)
            how = stop_reason(message)
            raise SimulationInterrupted(
                f"{system.name}: {how} at t={T[-1]:.6g} of {t_end:g} s; the result so far "
                "is in .result", result(T, X, stats, partial=True, stop_reason=how)) from message
        if isinstance(message, MbsError):  # from the inputs or time parameters
            message.result = result(T, X, stats, partial=True, stop_reason=str(message)) if reached else None
            raise message
        if isinstance(message, BaseException):
            raise message
        exc = SimulationError(f"{system.name}: {message}")
        exc.result = result(T, X, stats, partial=True, stop_reason=str(exc)) if reached else None
        raise exc
    if progress is not None:
        progress(t_end, t_end)
    return T, X, stats
