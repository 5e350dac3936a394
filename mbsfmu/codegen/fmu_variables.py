"""The FMU variables of a model, in value-reference order: the variables of both FMU kinds,
of the engine's model source (its tables of names, kinds and start values, :mod:`.c_model`) and
of the model description (docs/guide/fmus.md, Variables).

* every generalized coordinate by its own name and its velocity as ``der(<name>)``: outputs,
  continuous; their start values are the initial state (``initial="exact"`` for trees,
  ``"approx"`` for models with loops, whose consistent initialization may move them);
* ``constraint_residual`` for models with constraints: the max-norm of c at the end of the step,
  with nonholonomic constraints A y' + a = 0 the larger of that and max |A y' + a|;
* the user outputs (``System.output``, ``frame_output``, ``reaction_outputs``): calculated
  outputs; those that depend on inputs list them as dependencies (direct feed-through);
* every model constant: a parameter, ``tunable`` unless the constraints (c, or the rows
  A y' + a of nonholonomic ones) depend on it (changing the geometry of a closed loop in the
  middle of a run would leave the state inconsistent);
* the solver settings ``solver_rtol``, ``solver_atol`` and ``max_internal_step``: tunable
  parameters (``solver_atol`` starts at 0, which means the rule of ``simulate``: rtol / 10 with
  constraints, rtol / 100 without, :func:`mbsfmu.core.solver_settings.default_atol`), and
  ``method``, the integration method, a tunable Integer parameter (0 = rkstab, 1 = stiff,
  2 = dop853, :data:`mbsfmu.core.solver_settings.METHODS`) whose start value the export chooses;
* the model's inputs: continuous inputs held over each communication step;
* for a model with constraints, each named initial condition's value ``e`` and then the rate
  ``der(e)`` of each that declares one (``System.initial_condition``): parameters with
  variability ``fixed`` and initial ``exact``, settable until fmi2ExitInitializationMode, where
  the consistent initialization solves e(y) = e and E(y) y' = der(e) with the constraints
  (:func:`mbsfmu.model.initial_values.condition_variables`, the names ``simulate(initial=...)``
  takes);
* last, ``solver``: the old name of ``method``
  (:data:`mbsfmu.core.solver_settings.DEPRECATED_FMU_NAMES`), kept for one release; setting it
  sets ``method`` and logs a deprecation warning.  The engine's instance holds the variables
  before it (:func:`engine_variables`); the FMU's glue maps it.

The record of one variable and the names the export adds are :mod:`mbsfmu.core.fmu_layout`;
listing a model's variables needs its derived equations (which constants the constraints fix,
which outputs an input feeds through), so it lives here, above :mod:`mbsfmu.equations`.
"""

from __future__ import annotations

from ..core.errors import ParameterError
from ..core.fmu_layout import RESIDUAL, FmuVariable
from ..core.solver_settings import (
    BY_NAME,
    DEFAULT_METHOD,
    DEPRECATED_FMU_NAMES,
    SOLVER_SETTINGS,
    check_setting,
)
from ..equations.derive import derive
from ..equations.outputs import feedthrough
from ..model.initial_values import condition_variables


def fmu_variables(system, method: str = DEFAULT_METHOD,
                  unset_constants: bool = False) -> list[FmuVariable]:
    """The FMU variables of a System, in value-reference order; ``method`` (a name of
    :data:`mbsfmu.core.solver_settings.METHODS` or an alias) is the start value of the parameter
    ``method``.  The deprecated names (kind ``deprecated``) come last.
    A constant without a value is a ParameterError, unless ``unset_constants`` (then its start is
    None: for builds whose caller hands every parameter value in, never for an FMU)."""
    number = check_setting("method", method, api=True)
    loops = system.constrained
    out: list[FmuVariable] = []

    def add(*args, **kw):
        out.append(FmuVariable(args[0], len(out), *args[1:], **kw))

    init = "approx" if loops else "exact"
    for c in system.coordinates_.values():
        add(c.name, "output", "continuous", init, c.initial, f"generalized coordinate {c.name}",
            kind="coordinate")
    for c in system.coordinates_.values():
        add(f"der({c.name})", "output", "continuous", init, c.initial_velocity,
            f"velocity of {c.name}", kind="velocity")
    if loops:
        add(RESIDUAL, "output", "continuous", "calculated", None,
            "max-norm of the constraint residual c at the end of the step"
            + (" and of A y' + a of the nonholonomic constraints" if system.nonholonomic else ""),
            kind="residual")
    geometry = set()
    if loops:
        eqs = derive(system)
        mh = eqs.mh  # the constants of c and of nonholonomic rows A y' + a are fixed
        held = list(eqs.c) + list(eqs.C[mh:, :]) + list(eqs.b1[mh:, :])
        geometry = {s.name for e in held for s in eqs.expanded(e).free_symbols}
    if system.outputs:
        deps = feedthrough(derive(system))
        for o in system.outputs.values():
            add(o.name, "output", "continuous", "calculated", None, o.description,
                kind="reaction" if o.constraint else "output", dependencies=tuple(deps[o.name]))
    for c in system.constants_.values():
        if c.value is None and not unset_constants:
            raise ParameterError(f"constant {c.name!r} has no value; an FMU needs a start value "
                                 "for every parameter")
        variability = "fixed" if c.name in geometry else "tunable"
        add(c.name, "parameter", variability, "exact", c.value, c.description or "model constant",
            kind="constant", min=c.min, max=c.max)
    for st in SOLVER_SETTINGS:
        add(st.name, "parameter", "tunable", "exact", number if st.choices else st.default, st.description,
            kind="solver", min=0.0 if st.zero_means else st.low, max=st.high, type=st.type)
    for u in system.inputs.values():
        add(u.name, "input", "continuous", None, u.default, "model input", kind="input",
            min=u.min, max=u.max)
    conditions = {ic.name: ic for ic in system.initial_conditions}
    for var, name, start in condition_variables(system):
        expression = conditions[name].expression
        what = (f"value of {expression} at the start" if var == name
                else f"rate d/dt ({expression}) at the start")
        add(var, "parameter", "fixed", "exact", start, f"named initial condition {name!r}: the {what} "
            "(the consistent initialization solves for it)", kind="initial_condition")
    for old, new in DEPRECATED_FMU_NAMES.items():
        st = BY_NAME[new]
        add(old, "parameter", "tunable", "exact", number, f"deprecated, goes away in the next release: "
            f"the old name of {new!r}, which it sets", kind="deprecated", min=st.low, max=st.high,
            type=st.type)
    return out


def engine_variables(variables: list[FmuVariable]) -> list[FmuVariable]:
    """The variables the engine's instance holds (value references 0, 1, ...): all but the
    deprecated names, which the FMU maps to the variable they name."""
    return [v for v in variables if v.kind != "deprecated"]
