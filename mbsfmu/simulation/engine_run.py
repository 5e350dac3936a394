"""``simulate(..., backend='c')`` on the C engine: prepare one instance, run the grid in one call.

The run is the one the native FMU makes (same C code, same steps): the model's start values with
the user's ``initial`` values set (and so held first at the consistent start), constants from
``params``, inputs held or given as functions of t (then called from C at every right-hand
side), the solver settings as the FMU's parameters.  Everything the :class:`.Result` of the run
offers comes from the engine: at every output point it records, besides the states and the
constraint residual, the Lagrange multipliers, the accelerations and the residuals on the
position and velocity level (:data:`RECORD`).  A refused start is explained by the engine too
(the violated row, the held coordinates and what conflicts; the rank of C; the coordinate whose
mass pivot failed), and raised as the exception its reason calls for (:data:`START_ERRORS`).
Nothing here builds a Python formulation or touches the reference.
"""

from __future__ import annotations

import math
import time
import warnings

from ..core.errors import (
    ConstraintError,
    InconsistentInitialValuesWarning,
    MbsError,
    ModelError,
    ParameterError,
    SimulationError,
    SimulationInterrupted,
    SingularMassMatrixError,
    StiffnessWarning,
    stop_reason,
)
from ..core.solver_settings import METHOD_ALIASES, METHODS
from ..engine.extension import ENGINE_FORMULATIONS, Engine, EngineError
from .run_clock import RunClock

#: simulate's methods the engine runs, and its method for each: its own and their other names
ENGINE_METHODS = {**{m: m for m in METHODS}, **METHOD_ALIASES}

#: what the engine records at every output point besides the values (mbsfmu.core.constants.RECORD)
RECORD = ("multipliers", "accelerations", "residuals")

#: the exception of a start the engine refused, by its reason (EngineError.failure; others: a
#: SimulationError with the engine's message)
START_ERRORS = {"values": ParameterError, "inconsistent": ConstraintError, "redundant": ConstraintError,
                "singular_mass": SingularMassMatrixError, "not_finite": ModelError}


def engine_applies(system, method: str, formulation: str) -> bool:
    """True if the engine runs this combination (else simulate takes the numpy path)."""
    if method not in ENGINE_METHODS:
        return False
    if any(c.value is None for c in system.constants_.values()):
        return False  # the engine's start values need every constant's value
    return not system.constrained or formulation in ENGINE_FORMULATIONS


def _adjoint_run(system, eng, req, grid, tick, progress_every, clock):
    """The adjoint method's run from the started engine to grid[-1] (mbs_adj_run): (T, X, stats,
    recorded) with the start only and recorded['adjoint'] = (values, gradient)."""
    x0 = eng.x.copy()
    started = time.perf_counter()
    clock.start_run()
    values, grad, status, message, code, counts = eng.run_adjoint(
        req.what, req.index, [k for k, _ in req.adjoint], [s for _, s in req.adjoint], float(grid[-1]),
        points=req.points, progress=tick, every=progress_every)
    clock.stop_run()
    stats = dict(eng.statistics(), engine_seconds=time.perf_counter() - started, backend="c", engine="c",
                 sensitivities=len(req.names))
    stats.update(zip(("nfev", "naccept", "nreject", "nproj"), counts[:4]))
    stats.update(zip(("adjoint_nfev", "adjoint_naccept", "adjoint_nreject"), counts[4:7]))
    if status != 0:
        if isinstance(message, KeyboardInterrupt):
            how = stop_reason(message)
            raise SimulationInterrupted(f"{system.name}: {how} during the adjoint method's run; it "
                                        "keeps no partial result", None) from message
        if isinstance(message, BaseException):
            raise message
        raise SimulationError(f"{system.name}: {message}")
    return grid[:1], x0[:, None], stats, {"adjoint": (values, grad)}


def refused_start(exc: EngineError) -> MbsError:
    """The exception of a start the engine refused with ``exc``, by its reason."""
    return START_ERRORS.get(exc.failure, SimulationError)(str(exc))


def run_on_engine(system, numeric, formulation, schedule, grid, start, fixed, rtol, atol,
                  max_step, options, progress, progress_every, result, method="explicit", clock=None,
                  sensitivities=None):
    """Integrate over ``grid`` on the engine; returns (T, X, stats, recorded) or raises like simulate.
    ``start`` (:class:`mbsfmu.model.initial_values.InitialValues`): the coordinates and rates set
    (start values) and the named initial conditions' values and rates set (the instance's
    parameters of the same names).  ``formulation`` is the formulation's name ('minimal' for a
    tree), ``schedule`` the run's :class:`~mbsfmu.equations.input_schedule.InputSchedule`;
    ``recorded`` holds, per name of :data:`RECORD`, the engine's values at the output points
    reached (``(k, n)`` arrays) and 'constraint_residual' (the published residual).  ``clock`` (a
    :class:`.run_clock.RunClock`) times building or loading the engine and the run; ``result(T, X,
    stats, recorded, **extra)`` makes the partial Result of a failed or interrupted run.
    ``sensitivities``: None, or a :class:`.sensitivity_columns.SensitivityRequest`: then the run
    integrates the forward sensitivities with the state (mbs_sensitivity.h) and ``recorded`` also
    holds 'sensitivities' (names, (k, np, width) array) and, where it asks for integrals,
    'integrals' ((k, 1 + np, nq) array); or for the adjoint method (``adjoint`` set) it runs
    mbs_adj_run to grid[-1] and returns the start only, with 'adjoint' (values, gradient, stats)
    in ``recorded``."""
    clock = clock or RunClock()
    try:
        with clock.compiling():
            eng = Engine(system, formulation, options, method=ENGINE_METHODS[method],
                         sensitivities=sensitivities is not None)
    except EngineError as exc:  # an option the model cannot take (the partition's count)
        raise ParameterError(str(exc)) from None
    eng.set(dict(zip(numeric.constant_names, map(float, numeric.prm))))
    if inputs_vary := schedule.time_varying:
        eng.set_functions(inputs=lambda t: schedule(t))
    else:
        eng.set(dict(zip(numeric.input_names, map(float, numeric.u))))
    if system.time_parameters and any(p.functions is not None for p in system.time_parameters.values()):
        eng.set_functions(inputs=(lambda t: schedule(t)) if inputs_vary else None,
                          time_parameters=lambda t: numeric._tp_at(t))
    eng.set({"solver_rtol": rtol, "solver_atol": atol,
             "max_internal_step": 0.0 if math.isinf(max_step) else max_step})
    names = numeric.coordinate_names
    x0 = start.x0
    eng.set({g: float(x0[names.index(g)] if g in names else x0[numeric.f + names.index(g[4:-1])])
             for g in start.given})
    eng.set(start.conditions)
    t_end = float(grid[-1])
    try:
        warning = eng.start(0.0, t_end, hold=list(fixed) if fixed else None)
    except EngineError as exc:
        raise refused_start(exc) from None
    if warning:
        warnings.warn(InconsistentInitialValuesWarning(f"{system.name}: {warning}"), stacklevel=3)
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
    req = sensitivities
    if req is not None and req.adjoint is not None:
        return _adjoint_run(system, eng, req, grid, tick, progress_every, clock)
    if req is None:
        rec, reached, status, message, code = eng.run(grid, progress=tick, every=progress_every,
                                                      record=RECORD)
    else:
        rec, sens, quad, reached, status, message, code, counts = eng.run_sensitivities(
            grid, req.what, req.index, progress=tick, every=progress_every, record=RECORD,
            error_control=req.error_control, integrals=req.integrals)
    clock.stop_run()
    stiffness_warning()
    stats = dict(eng.statistics(), engine_seconds=time.perf_counter() - start, backend="c",
                 engine="c")
    if req is not None:  # the augmented integration's work, not the instance's
        stats.update(zip(("nfev", "naccept", "nreject", "nproj"), counts), sensitivities=len(req.names))
    if numeric.m and formulation == "partition":
        stats["partition_switches"] = [(t, [n for n, d in zip(names, dep) if not d])
                                       for t, dep in eng.instance.switches()]
    f = numeric.f
    T, X = grid[:reached], rec[:reached, :2 * f].T
    recorded = {name: v.T for name, v in eng.recorded(rec[:reached], RECORD).items()}
    if numeric.m:
        recorded["constraint_residual"] = rec[:reached, 2 * f]
    if req is not None:
        recorded["sensitivities"] = (list(req.names), sens[:reached])
        if req.integrals:
            recorded["integrals"] = quad[:reached]
    if status != 0:
        if isinstance(message, KeyboardInterrupt):  # Ctrl-C, or SIGTERM (errors.Terminated)
            how = stop_reason(message)
            raise SimulationInterrupted(
                f"{system.name}: {how} at t={T[-1]:.6g} of {t_end:g} s; the result so far "
                "is in .result", result(T, X, stats, recorded, partial=True, stop_reason=how)) from message
        if isinstance(message, MbsError):  # from the inputs or time parameters
            message.result = (result(T, X, stats, recorded, partial=True, stop_reason=str(message))
                              if reached else None)
            raise message
        if isinstance(message, BaseException):
            raise message
        exc = SimulationError(f"{system.name}: {message}")
        exc.result = result(T, X, stats, recorded, partial=True, stop_reason=str(exc)) if reached else None
        raise exc
    if progress is not None:
        progress(t_end, t_end)
    return T, X, stats, recorded
