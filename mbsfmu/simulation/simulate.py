"""``mbsfmu.simulate``: integrate a model and sample the result on a regular grid (or given times).

simulate checks the arguments, builds the equations with numbers and the formulation, and hands
the run over: to the C engine (:mod:`.engine_run`) where it runs the method and formulation, else
to a reference stepper of :mod:`mbsfmu.reference.integrators` (from a consistent start) driven by the one
sampling loop :func:`mbsfmu.reference.integrators.sample`.  Either way the output is a :class:`.Result`.
"""

from __future__ import annotations

import inspect
import math
import sys

import numpy as np

from ..codegen.compile import CompileError, find_compiler
from ..core.checks import finite_number, fixed_names
from ..core.errors import ParameterError, SimulationError, SimulationInterrupted, stop_reason
from ..core.formulation_choice import check_formulation_name, check_minimal, check_nonholonomic, check_options
from ..core.solver_settings import (  # noqa: F401 (ATOL_FACTOR: the CLI's help)
    ATOL_FACTOR,
    METHOD_ALIASES,
    canonical_method,
    check_setting,
    effective_atol,
)
from ..engine.c_kernel import use_c_kernel
from ..equations.derive import derive
from ..equations.input_schedule import InputSchedule
from ..model.initial_values import resolve as resolve_initial
from ..model.loader import system_of
from ..reference.consistent_initialization import consistent_state
from ..reference.constraint_rank import check_rank
from ..reference.formulations import make_formulation
from ..reference.integrators import SOLVERS, UNPROJECTED_SOLVERS, make_stepper, sample
from .engine_run import ENGINE_METHODS, engine_applies, run_on_engine
from .result import Result
from .run_clock import RunClock
from .run_failure import run_failure
from .run_monitor import RunMonitor
from .sensitivity_columns import SensitivityRequest, request

#: The reference integrator of simulate's own method names on the numpy backend (scipy's methods
#: run under their own names): each the engine's method of that name -- 'explicit' is the
#: stabilized Dormand-Prince 5(4) of seed 004 (RKSTAB), trees included (plain DOPRI5 there, as on
#: the engine); 'dop853' and 'stiff' are Dormand-Prince 8(5,3) and Radau IIA 5 with scipy's step
#: control
REFERENCE_INTEGRATORS = {"explicit": "rkstab", "dop853": "DOP853", "stiff": "Radau"}
#: scipy's methods (DOP853, scipy's spelling, is the same method as our 'dop853')
SCIPY_METHODS = tuple(UNPROJECTED_SOLVERS)
#: the scipy methods that messages and help list: those that are not one of our methods
OTHER_SCIPY_METHODS = tuple(m for m in SCIPY_METHODS if canonical_method(m) == m)
#: what simulate's own method names run by their canonical names (docs/architecture.md, Glossary),
#: the same method on either backend
METHOD_DESCRIPTIONS = {
    "explicit": "rkstab, the stabilized Dormand-Prince 5(4) (plain DOPRI5 for trees)",
    "rkstab": "RKSTAB, the same as 'explicit'",
    "dop853": "Dormand-Prince 8(5,3) projected after every step (the engine's step control on backend 'c', "
              "scipy's on 'numpy'; scipy's spelling DOP853 means the same); fewer steps than rkstab below "
              "rtol ~1e-7",
    "stiff": "Radau IIA of order 5, projecting after every step for loops (RADAU5's step control on backend "
             "'c', scipy's on 'numpy')",
}
#: the backends: the C engine and the readable numpy reference
BACKENDS = ("c", "numpy")



#: simulate's output interval when none is given (and the only dt that goes with ``times``)
DEFAULT_DT = 0.01

#: the largest result simulate() allocates up front (output rows x columns x 8 bytes)
MAX_RESULT_BYTES = 2**30


def simulate_defaults() -> dict:
    """The defaults of simulate's keywords (the CLI shows these in its help)."""
    return {k: p.default for k, p in inspect.signature(simulate).parameters.items()
            if p.default is not inspect.Parameter.empty}


def _positive(name: str, v) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or not (
            math.isfinite(v) and v > 0):
        raise ParameterError(f"{name} must be a positive number, got {v!r}")


def output_grid(t_end, dt, columns: int = 1) -> np.ndarray:
    """0, dt, 2 dt, ... up to and including t_end (t_end appended if not on the grid).

    ``columns`` (values per row) sizes the result: a grid whose result would exceed
    MAX_RESULT_BYTES is refused before anything is allocated."""
    for name, v in (("t_end", t_end), ("dt", dt)):
        _positive(name, v)
    t_end, dt = float(t_end), float(dt)
    rows = math.floor(t_end / dt + 1e-9) + 2
    size = rows * max(columns, 1) * 8
    if size > MAX_RESULT_BYTES:
        raise ParameterError(
            f"t_end = {t_end:g} with dt = {dt:g} asks for {rows:,} output rows ({size / 2**30:,.1f} "
            f"GiB for {columns} columns, more than the {MAX_RESULT_BYTES / 2**30:g} GiB limit); "
            f"choose dt >= {t_end * columns * 8 / MAX_RESULT_BYTES:.3g}")
    n = int(math.floor(t_end / dt + 1e-9))
    grid = np.arange(n + 1) * dt
    if abs(grid[-1] - t_end) <= 1e-9 * max(1.0, t_end):
        grid[-1] = t_end
    else:
        grid = np.append(grid, t_end)
    return grid


def output_times(times, t_end=None, columns: int = 1) -> np.ndarray:
    """An explicit output grid (``simulate(..., times=...)``), checked: a 1-D sequence of at least
    two finite, strictly increasing times that starts at 0 (the run's start is an output point,
    as on the regular grid) and ends where the run ends: at ``t_end`` when it is given (to 1e-12
    relative), else at its last time.  ``columns`` sizes the result as for :func:`output_grid`."""
    try:
        grid = np.array(times, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"times must be a sequence of numbers, got {times!r:.80}") from None
    if grid.ndim != 1 or grid.size < 2:
        raise ParameterError(f"times must be a 1-D sequence of at least two times, got shape {grid.shape}")
    bad = np.flatnonzero(~np.isfinite(grid))
    if bad.size:
        raise ParameterError(f"times[{bad[0]}] is {grid[bad[0]]:g}: the output times must be finite")
    if grid[0] != 0.0:
        raise ParameterError(f"times must start at 0 (the run starts there), got times[0] = {grid[0]:g}")
    steps = np.flatnonzero(np.diff(grid) <= 0)
    if steps.size:
        k = int(steps[0])
        raise ParameterError(f"times must increase strictly: times[{k}] = {float(grid[k])!r}, "
                             f"times[{k + 1}] = {float(grid[k + 1])!r}")
    if t_end is not None:
        _positive("t_end", t_end)
        if abs(grid[-1] - t_end) > 1e-12 * max(1.0, abs(t_end)):
            raise ParameterError(f"times end at {float(grid[-1])!r} but t_end = {float(t_end)!r}; the run "
                                 "ends at the last output time (leave t_end out, or end times at it)")
    size = grid.size * max(columns, 1) * 8
    if size > MAX_RESULT_BYTES:
        raise ParameterError(f"times has {grid.size:,} output times ({size / 2**30:,.1f} GiB for {columns} "
                             f"columns, more than the {MAX_RESULT_BYTES / 2**30:g} GiB limit)")
    return grid


def initial_state(system, initial=None) -> np.ndarray:
    """Initial [y, y'] from the model's values, overridden by ``initial``
    (:func:`mbsfmu.model.initial_values.resolve`, which checks every name and value, also those
    of the named initial conditions)."""
    return resolve_initial(system, initial).x0


_BACKEND: list[str] = []  # the default backend, decided once per process


def default_backend() -> str:
    """'c' if a C compiler is found, else 'numpy' (said once, on stderr)."""
    if not _BACKEND:
        try:
            find_compiler()
            _BACKEND.append("c")
        except CompileError as exc:
            print(f"mbsfmu: {exc}; simulating with the numpy reference (slower)", file=sys.stderr)
            _BACKEND.append("numpy")
    return _BACKEND[0]


def check_settings(system, t_end, dt, method, rtol, atol, max_step, backend, progress=None,
                   times=None) -> tuple:
    """simulate's checks of its settings, before any work (a sweep makes them once before its
    runs): the method, the tolerances and step limit (:mod:`mbsfmu.core.solver_settings`), the
    progress callback, the output grid of ``t_end`` and ``dt`` or the explicit ``times``
    (:func:`output_times`; then ``dt`` must be left at its default) with its size, and the
    backend.  Returns (the integrator's method name, rtol, atol, max_step, the grid, the
    backend); a bad setting is a ParameterError naming it."""
    scipy_method = REFERENCE_INTEGRATORS.get(method, method) if isinstance(method, str) else method
    if scipy_method not in SCIPY_METHODS and scipy_method != "rkstab":
        raise ParameterError(f"unknown method {method!r}; use one of "
                             f"{', '.join(map(repr, METHOD_DESCRIPTIONS))} or a scipy method: "
                             f"{', '.join(OTHER_SCIPY_METHODS)}")
    rtol = check_setting("rtol", rtol, api=True)
    atol = None if atol is None else check_setting("atol", atol, api=True)
    max_step = check_setting("max_step", max_step, api=True)
    if progress is not None and not callable(progress):
        raise ParameterError(f"progress must be a function progress(t, t_end), got {progress!r}")
    columns = 2 * len(system.coordinates_) + 1 + len(system.inputs)
    if times is None and t_end is None:
        raise ParameterError("give t_end (the end time of the run) or times (its output times)")
    if times is None:
        grid = output_grid(t_end, dt, columns)
    elif dt != DEFAULT_DT:
        raise ParameterError(f"give either dt (a regular grid) or times (an explicit one), not both: "
                             f"dt = {dt!r} with times")
    else:
        grid = output_times(times, t_end, columns)
    backend = default_backend() if backend is None else backend
    if backend not in BACKENDS:
        raise ParameterError(f"unknown backend {backend!r}; use 'numpy' or 'c'")
    return scipy_method, rtol, atol, max_step, grid, backend


def simulate(model, t_end: float | None = None, dt: float = DEFAULT_DT, method: str = "explicit",
             rtol: float = 1e-8, atol: float | None = None, params: dict | None = None,
             initial: dict | None = None, inputs: dict | None = None,
             formulation: str | None = None, formulation_options: dict | None = None,
             fixed=(), max_step: float = math.inf, backend: str | None = None,
             progress=None, progress_every: float = 0.2, sensitivities=None,
             sensitivity_error_control: str = "all", times=None) -> Result:
    """Simulate a model from t = 0 to ``t_end``.

    ``method``: ``'explicit'`` (the stabilized Dormand-Prince RKSTAB, trees included; ``'rkstab'``
    is the same), ``'dop853'`` (scipy's spelling ``'DOP853'`` means the same), ``'stiff'`` (Radau
    IIA, with the formulation's projection after every step for loops) or a scipy ``solve_ivp``
    method (see :data:`METHOD_DESCRIPTIONS` and :mod:`mbsfmu.reference.integrators`); each of
    simulate's own names is the same method on both backends.  ``result.stats["method"]`` names
    what ran by its canonical name (``'rkstab'``, ``'dop853'``, ``'stiff'``, or scipy's name of a
    scipy method).  ``formulation`` chooses how loop constraints are kept (see
    :mod:`mbsfmu.reference.formulations`; default ``'qr'``) with ``formulation_options``;
    ``fixed`` names coordinates that keep their given initial values during consistent
    initialization.
    ``backend``: ``'c'`` runs the C engine (the native FMU's code, compiled once per model and
    cached; where a method or formulation is not in the engine, the compiled equations under the
    Python integrator), ``'numpy'`` the readable Python reference; the default (None) is ``'c'``
    wherever a C compiler is found, else ``'numpy'`` with a one-line message.
    ``rtol``, ``atol``: tolerances; ``atol`` None (or 0) is rtol / 10 with constraints and rtol / 100
    without (:func:`mbsfmu.core.solver_settings.default_atol`, the rule of every path, FMUs included).
    ``params`` overrides constants, ``initial`` the initial state, ``inputs`` maps input names to
    numbers or functions of t.  ``initial`` takes coordinates (``x``), their rates (``der(x)`` or
    ``Dx``) and the named initial conditions of a model with constraints (``crank_angle``, and
    where the condition declares a rate ``der(crank_angle)`` or ``Dcrank_angle``;
    :mod:`mbsfmu.model.initial_values`): the consistent initialization then solves the condition
    for that value; a coordinate given too moves if it contradicts it.  Returns a :class:`Result`
    on the grid 0, dt, ..., t_end, or on the explicit output grid ``times`` (a measurement's times:
    finite, strictly increasing, starting at 0 and ending at ``t_end``, which may then be left
    out; ``dt`` is not used and any dt but its default is refused with it), where the methods'
    dense output gives the solution at exactly those times.

    ``result.stats`` counts the work (``nfev``, ``steps``, ...) and times the call in parts
    (:mod:`.run_clock`): ``setup_seconds`` (wall time before the integration: equations, code,
    consistent start), ``compile_seconds`` (the part of it spent generating and compiling the
    model's C code or loading it from the cache), ``run_seconds`` (wall time of the integration)
    and ``cpu_seconds`` (CPU time of this process during the integration only, never the
    compilation: the cost of the method).

    Long runs: ``progress(t, t_end)`` is called at the start, at most every ``progress_every``
    seconds of wall time and at the end; an explicit method whose step is limited by stability
    warns once with a :class:`~mbsfmu.core.errors.StiffnessWarning` (:mod:`.run_monitor`).  Nothing
    computed is lost: a failure raises SimulationError and Ctrl-C (or SIGTERM turned into
    :class:`~mbsfmu.core.errors.Terminated`) raises :class:`~mbsfmu.core.errors.SimulationInterrupted`, both
    with ``.result``, the Result up to the last output point reached (``result.partial`` is true).
    ``sensitivities``: names of constants, initial values (a coordinate, ``der(coordinate)``) and
    named initial conditions (:mod:`.sensitivity_columns`): the engine integrates the forward
    sensitivities of the exact solution by each of them with the state (the direct method,
    ``mbs_sensitivity.h``); :meth:`Result.sensitivity` reads them.  ``sensitivity_error_control``:
    'all' (the error test measures the sensitivities too: they are as accurate as the state) or
    'state' (the state alone: the plain run's steps, fewer of them; the sensitivities follow them
    uncontrolled).
    The arguments are checked before any work: a bad one raises ParameterError naming it."""
    clock = RunClock()
    system = system_of(model)
    scipy_method, rtol, atol, max_step, grid, backend = check_settings(
        system, t_end, dt, method, rtol, atol, max_step, backend, progress, times)
    if finite_number(progress_every, "progress_every") < 0:
        raise ParameterError(f"progress_every must be a number of seconds >= 0, got {progress_every!r}")
    fixed = fixed_names(fixed)
    start = resolve_initial(system, initial)
    eqs = derive(system)
    numeric = eqs.numeric(params)
    name = check_formulation_name(formulation)
    check_nonholonomic(system, name)
    check_minimal(name, bool(numeric.m))
    options = check_options(name, formulation_options, bool(numeric.m))
    schedule = InputSchedule(numeric, inputs)
    x0, given = start.x0, start.given
    f = numeric.f
    if sensitivities is None or isinstance(sensitivities, SensitivityRequest):
        columns = sensitivities
    else:
        columns = request(system, sensitivities, sensitivity_error_control)
    on_engine = backend == "c" and engine_applies(system, method, name if numeric.m else "minimal")
    if columns is not None and not on_engine:
        raise ParameterError(f"sensitivities are integrated by the C engine: backend {backend!r} with "
                             f"method {method!r} has none (use backend='c' and method 'explicit', "
                             "'dop853' or 'stiff')")
    if on_engine:
        return _simulate_on_engine(system, numeric, name if numeric.m else "minimal", schedule, grid, start,
                                   fixed, rtol, atol, max_step, inputs, options, progress,
                                   progress_every, method, clock, columns)
    form = make_formulation(name, numeric, schedule, **options)
    if backend == "c":
        with clock.compiling():
            use_c_kernel(numeric)  # scipy's methods on the compiled equations
    if numeric.m:
        x0 = consistent_state(numeric, x0, fixed=fixed, given=given,
                              targets=start.condition_targets(system))
        check_rank(form, 0.0, x0[:f])
        form.record_pivot_scale(0.0, x0[:f])
    atol = effective_atol(atol, rtol, bool(numeric.m))
    numeric.check_state(0.0, x0[:f], x0[f:], form.inputs(0.0))
    project = form.project if numeric.m and form.projects else None
    if numeric.m and scipy_method not in SOLVERS and scipy_method != "rkstab":
        raise ParameterError(f"method {method!r} cannot be combined with constraints; use "
                             f"'explicit' (rkstab), 'dop853', 'stiff' or one of {', '.join(SOLVERS)}")
    return _simulate_with_stepper(system, numeric, form, grid, x0, scipy_method, project, rtol, atol,
                                  max_step, inputs, backend, progress, progress_every, clock,
                                  method_name(method, scipy_method))


def method_name(method: str, integrator: str) -> str:
    """``result.stats["method"]``: the canonical name of what ran for the asked ``method`` on
    the reference ``integrator`` ('stiff' for 'stiff', 'rkstab' or 'dop853' for our other
    names, scipy's own name for a scipy method asked by that name)."""
    if method == "stiff":
        return "stiff"
    ours = method in METHOD_DESCRIPTIONS or method in METHOD_ALIASES
    return canonical_method(integrator) if ours else integrator


def _simulate_with_stepper(system, numeric, form, grid, x0, scipy_method, project, rtol, atol, max_step,
                           inputs, backend, progress, progress_every, clock, name) -> Result:
    """The run of simulate on a reference stepper (:mod:`mbsfmu.reference.integrators`), as a Result
    (``name``: the method's name in its statistics)."""
    f = numeric.f
    stats = {"method": name, "formulation": form.name, "rtol": rtol, "atol": atol,
             "backend": backend}
    monitor = RunMonitor(system.name, 0.0, float(grid[-1]), scipy_method, progress,
                         every=float(progress_every), rtol=rtol)

    def result(T, X, **extra):
        clock.stop_run()
        stats.update(clock.stats())
        stats["rhs_calls"] = form.nfev
        stats["steps"] = monitor.steps
        if hasattr(form, "switches"):
            stats["partition_switches"] = list(form.switches)
        U = np.array([form.inputs(ti) for ti in T]).T if inputs else None
        return Result(numeric, T, X[:f], X[f:], U, stats=stats, formulation=form, **extra)

    weak = getattr(form, "weak_directions", None) if project else None  # singular positions
    clock.start_run()
    stepper = make_stepper(scipy_method, form, x0, (0.0, grid[-1]), project=project, rtol=rtol, atol=atol,
                           max_step=max_step, weak=weak)
    try:
        sol = sample(stepper, grid, monitor)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (errors.Terminated)
        how = stop_reason(exc)
        partial = _partial(exc, result, how)
        raise SimulationInterrupted(
            f"{system.name}: {how} at t={partial.t[-1]:.6g} of {grid[-1]:g} s; "
            "the result so far is in .result", partial) from exc
    except Exception as exc:  # every failure: a SimulationError with .result (run_failure.py)
        failure = run_failure(exc, system, form, stepper, name,
                              lambda e, why: _partial(e, result, why))
        raise failure from failure.__cause__
    T, X = sol.t, sol.x
    stats.update(nfev=sol.nfev, nproj=sol.nproj, naccept=sol.naccept, nreject=sol.nreject,
                 njev=sol.extra.get("njev", 0))
    if not np.all(np.isfinite(X)):
        raise SimulationError(f"{system.name}: the solution became non-finite")
    res = result(T, X)
    try:
        monitor.finish(float(grid[-1]))
    except KeyboardInterrupt as exc:  # at the very end: the result is complete
        raise SimulationInterrupted(f"{system.name}: interrupted after the run; the complete "
                                    "result is in .result", res) from exc
    return res


def _simulate_on_engine(system, numeric, formulation, schedule, grid, start, fixed, rtol, atol, max_step,
                        inputs, options, progress, progress_every, method, clock, columns=None) -> Result:
    """The engine's run of simulate (see :mod:`.engine_run`), as a Result whose multipliers,
    accelerations and residuals are the engine's."""
    atol = effective_atol(atol, rtol, bool(numeric.m))
    f = numeric.f
    stats = {"method": ENGINE_METHODS[method], "formulation": formulation, "rtol": rtol, "atol": atol,
             "backend": "c"}

    def result(T, X, run_stats, recorded, **extra):
        clock.stop_run()
        stats.update(run_stats, rhs_calls=run_stats["nfev"], steps=run_stats["naccept"])
        stats.update(clock.stats())
        U = np.array([schedule(ti) for ti in T]).T if inputs else None
        return Result(numeric, T, X[:f], X[f:], U, stats=stats, recorded=recorded, **extra)

    T, X, run_stats, recorded = run_on_engine(system, numeric, formulation, schedule, grid, start, fixed,
                                              rtol, atol, max_step, options, progress, progress_every, result,
                                              method, clock, columns)
    return result(T, X, run_stats, recorded)


def _partial(exc, result, reason):
    """The partial Result of an interrupted or failed run (the output points it reached), or
    None where the integrator had not started."""
    t, x = getattr(exc, "partial", (None, None))
    if t is None:
        return None
    return result(t, x, partial=True, stop_reason=reason)
