"""What a sweep checks before its first run, so that a bad input is one clear error instead of a
failed row per run.

- the design's columns are names the target can set (:func:`design_names`);
- every metric's signal is a signal of the target's result (:func:`metric_signals`);
- the settings of the runs: for a model or System, every keyword is one of
  :func:`mbsfmu.simulate`'s and passes simulate's own checks (``check_settings``: method,
  tolerances, step limit, the output grid of t_end and dt; the formulation and its options; the
  fixed coordinates of consistent initialization); for an FMU, every keyword is one of
  ``fmpy.simulate_fmu``'s and t_end, dt and rtol are checked as for simulate
  (:func:`simulate_settings`, :func:`fmu_settings`); the interface fmpy runs (``fmi_type``
  'CoSimulation' or 'ModelExchange') is one the FMU declares, and fmpy's Model Exchange
  integrator (``solver`` 'CVode' or 'Euler') is chosen only for Model Exchange
  (:func:`fmu_interface`);
- fixed values given to the sweep (``params``, ``initial``, ``inputs``; for an FMU
  ``start_values``) name what they set, are numbers (an input may be a function of t), and
  do not set a design column too: they are merged with every run's values;
- every constant without a value is set by the design or a fixed value.
"""

from __future__ import annotations

import inspect
import math

from ..core.checks import check_fixed_names, finite_number
from ..core.errors import ParameterError
from ..core.formulation_choice import check_formulation_name, check_nonholonomic
from ..core.solver_settings import check_setting
from ..equations.derive import derive
from ..equations.numeric_model import NumericModel
from ..reference.formulations import make_formulation
from ..simulation import simulate
from ..simulation.simulate import check_settings, initial_state, output_grid
from . import definition

#: the keywords of simulate that a sweep sets itself or that make no sense per run
SWEEP_OWNED = {"model": "the target", "progress": "the sweep's own progress=", "progress_every": None}
#: fmpy.simulate_fmu keywords the sweep sets: name -> the sweep's keyword to use instead
FMU_OWNED = {"filename": "the target", "model_description": "the target", "stop_time": "t_end",
             "output_interval": "dt", "relative_tolerance": "rtol",
             "step_size": "dt (fmpy's Euler takes one step per output interval, whatever step_size says)"}
#: fmpy's fmi_type values -> the model description's element of that interface
FMI_TYPES = {"CoSimulation": "coSimulation", "ModelExchange": "modelExchange"}
#: fmpy's Model Exchange integrators (simulate_fmu's solver=)
ME_SOLVERS = ("CVode", "Euler")


def design_names(columns, settable: set) -> None:
    unknown = [c for c in columns if c not in settable]
    if unknown:
        raise ParameterError(f"unknown parameter(s) {', '.join(map(repr, unknown))} of the sweep target "
                             f"(it has: {', '.join(sorted(settable))})")


def metric_signals(metrics: list, known: list, target_name: str) -> None:
    """Every KIND(SIGNAL) metric's signal (and reference signal) is in ``known``."""
    for m in metrics:
        for signal in (m.signals if m.function is None else ()):
            if signal not in known:
                raise ParameterError(f"metric {m.name!r} = {m.text}: no signal {signal!r} in {target_name} "
                                     f"(signals: {', '.join(known)})")


def _unknown_keywords(options: dict, signature: inspect.Signature, owned: dict, what: str) -> None:
    for name in options:
        if name in owned:
            instead = f"; use {owned[name]}" if owned[name] else ""
            raise ParameterError(f"sweep: keyword {name!r} of {what} is set by the sweep itself{instead}")
        if name not in signature.parameters:
            raise ParameterError(f"sweep: {what} has no keyword {name!r} (it takes: "
                                 f"{', '.join(p for p in signature.parameters if p not in owned)})")


def mapping(value, keyword: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ParameterError(f"sweep: {keyword}= must be a dict {{name: value}}, got {value!r}")
    return dict(value)


def not_in_design(fixed: dict, columns, keyword: str, alias=lambda n: n) -> None:
    both = [n for n in fixed if alias(n) in {alias(c) for c in columns}]
    if both:
        raise ParameterError(f"sweep: {', '.join(map(repr, both))} given both in {keyword}= and as a design "
                             "column; give each value in one place")


def simulate_settings(system, t_end, dt, rtol, options: dict, columns) -> tuple[dict, dict, dict]:
    """(the keywords of every run's simulate call, the fixed values merged into each run's values,
    the definition entries of the settings) for a model or System target; a bad keyword or value
    is a ParameterError naming it, before any run."""
    signature = inspect.signature(simulate)
    _unknown_keywords(options, signature, SWEEP_OWNED, "simulate()")
    given = {k: v for k, v in {"t_end": t_end, "dt": dt, "rtol": rtol}.items() if v is not None}
    bound = signature.bind(system, **given, **options)
    bound.apply_defaults()
    args = {k: v for k, v in bound.arguments.items() if k not in SWEEP_OWNED}
    *_, backend = check_settings(system, args["t_end"], args["dt"], args["method"], args["rtol"],
                                 args["atol"], args["max_step"], args["backend"])
    formulation = check_formulation_name(args["formulation"])
    check_nonholonomic(system, formulation)
    fixed = args["fixed"]
    check_fixed_names(list(system.coordinates_), [fixed] if isinstance(fixed, str) else list(fixed or ()))

    params = mapping(args["params"], "params")
    for name, value in params.items():
        if name not in system.constants_:
            raise ParameterError(f"sweep: params= names {name!r}, not a constant of {system.name!r} "
                                 f"(constants: {', '.join(system.constants_) or 'none'})")
        params[name] = finite_number(value, f"sweep: params {name!r}")
    not_in_design(params, columns, "params")
    initial = mapping(args["initial"], "initial")
    initial_state(system, initial)  # simulate's check of the names and values
    not_in_design(initial, columns, "initial", _velocity_name)
    initial = {k: float(v) for k, v in initial.items()}
    inputs = mapping(args["inputs"], "inputs")
    for name, value in inputs.items():
        if name not in system.inputs:
            raise ParameterError(f"sweep: inputs= names {name!r}, not an input of {system.name!r} "
                                 f"(inputs: {', '.join(system.inputs) or 'none'})")
        if not callable(value):
            finite_number(value, f"sweep: input {name!r}")
    not_in_design(inputs, columns, "inputs")
    unset = [c.name for c in system.constants_.values()
             if c.value is None and c.name not in params and c.name not in columns]
    if unset:
        raise ParameterError(f"sweep: constant(s) {', '.join(map(repr, unset))} of {system.name!r} have no "
                             "value: give them as a design column or in params=")
    options_ = args["formulation_options"]
    if options_ is not None and not isinstance(options_, dict):
        raise ParameterError(f"sweep: formulation_options= must be a dict, got {options_!r}")
    if options_ and system.constrained:
        _formulation_options(system, formulation, options_, params)

    run_kw = {k: v for k, v in args.items() if k not in ("params", "initial")}
    run_kw = {k: v for k, v in run_kw.items() if k in given or k in options}
    entries = {k: definition.describe(v) for k, v in args.items()}
    entries["backend"] = backend  # the default resolved: it decides which engine computes the rows
    return run_kw, {**params, **initial}, entries


def _velocity_name(name: str) -> str:
    """'Dx' and 'der(x)' are the same initial value."""
    if name.startswith("der(") and name.endswith(")"):
        return "D" + name[4:-1]
    return name


def _formulation_options(system, formulation, options, params) -> None:
    """Build the formulation once with the options (no run): a bad option is simulate's
    ParameterError now instead of a failed row per run."""
    values = {c.name: c.value if c.value is not None else 1.0 for c in system.constants_.values()}
    values.update(params)
    numeric = NumericModel(derive(system), values, check=False)
    make_formulation(formulation, numeric, None, **options)


def fmu_interface(md, options: dict) -> str:
    """The interface fmpy runs the FMU ``md`` with under ``options`` ('CoSimulation' or
    'ModelExchange'; fmpy's default: Co-Simulation where declared); a ParameterError for an
    ``fmi_type`` that is not one or that the FMU does not declare, and for a ``solver`` that is
    not one of fmpy's Model Exchange integrators or is given for a Co-Simulation run."""
    declared = [t for t, element in FMI_TYPES.items() if getattr(md, element) is not None]
    fmi_type = options.get("fmi_type")
    if fmi_type is None:
        fmi_type = "CoSimulation" if "CoSimulation" in declared else "ModelExchange"
    elif not isinstance(fmi_type, str) or fmi_type not in FMI_TYPES:
        raise ParameterError(f"sweep: fmi_type {fmi_type!r} is not an interface fmpy runs; choose "
                             f"{' or '.join(map(repr, FMI_TYPES))}")
    elif fmi_type not in declared:
        raise ParameterError(f"sweep: the FMU does not declare {fmi_type} (it declares "
                             f"{' and '.join(declared) or 'neither interface'}): build it with "
                             "interface='me' or 'both' for Model Exchange, 'cs' or 'both' for Co-Simulation")
    if "solver" in options:
        solver = options["solver"]
        if fmi_type != "ModelExchange":
            raise ParameterError(f"sweep: solver={solver!r} chooses fmpy's Model Exchange integrator, but "
                                 "the FMU runs as Co-Simulation (its own integrator): add "
                                 "fmi_type='ModelExchange'")
        if not isinstance(solver, str) or solver not in ME_SOLVERS:
            raise ParameterError(f"sweep: solver {solver!r} is not an integrator of fmpy's Model Exchange; "
                                 f"choose {' or '.join(map(repr, ME_SOLVERS))}")
    return fmi_type


def fmu_settings(md, t_end, dt, rtol, options: dict, columns, settable: set, signals: list,
                 only_signals: bool) -> tuple[dict, dict, dict]:
    """(fmpy.simulate_fmu's options for every run, the fixed start values merged into each run's
    values, the definition entries) for an FMU target.  ``signals``: the metrics' signals, which
    must be recorded; ``only_signals``: record only them (no function metric, no trajectories)."""
    from fmpy import simulate_fmu

    _unknown_keywords(options, inspect.signature(simulate_fmu), FMU_OWNED, "fmpy.simulate_fmu()")
    fmu_interface(md, options)
    output_grid(t_end, t_end if dt is None else dt, len(signals) + 1)  # t_end and dt as simulate checks them
    if rtol is not None:
        check_setting("rtol", rtol, api=True)
    start = mapping(options.get("start_values"), "start_values")
    for name, value in start.items():
        if name not in settable:
            raise ParameterError(f"sweep: start_values= names {name!r}, not a parameter, input or start "
                                 f"value of the FMU (it has: {', '.join(sorted(settable))})")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isfinite(value):
            raise ParameterError(f"sweep: start value {name!r} = {value!r} is not finite")
    not_in_design(start, columns, "start_values")
    opts = {"stop_time": t_end, "output_interval": dt, "relative_tolerance": rtol}
    opts = {k: v for k, v in opts.items() if v is not None}
    opts.update({k: v for k, v in options.items() if k != "start_values"})
    known = [v.name for v in md.modelVariables]
    if "output" in options:
        recorded = list(options["output"] or [])
        missing = [s for s in signals if s not in recorded and s != "time"]
        if missing:
            raise ParameterError(f"sweep: the metrics need signal(s) {', '.join(map(repr, missing))} that "
                                 "output= does not record; add them to output=")
    elif signals:  # recorded: the signals, and with trajectories or a function metric the outputs too
        outputs = [] if only_signals else [v.name for v in md.modelVariables if v.causality == "output"]
        opts["output"] = list(dict.fromkeys([*outputs, *(s for s in signals if s in known)]))
    entries = {"t_end": t_end, "dt": dt, "rtol": rtol}
    entries.update({k: definition.describe(v) for k, v in options.items()})
    return opts, start, entries
