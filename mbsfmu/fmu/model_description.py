"""The FMI 2.0 Co-Simulation model description of a model (docs/guide/fmus.md, Variables).

Variables, in value-reference order:

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
  constraints, rtol / 100 without, :func:`mbsfmu.solver_settings.default_atol`), and ``method``,
  the integration method, a tunable Integer parameter (0 = rkstab, 1 = stiff, 2 = dop853,
  :data:`mbsfmu.solver_settings.METHODS`) whose start value the export chooses;
* the model's inputs: continuous inputs held over each communication step;
* last, ``solver``: the old name of ``method`` (:data:`mbsfmu.solver_settings.DEPRECATED_FMU_NAMES`),
  kept for one release; setting it sets ``method`` and logs a deprecation warning.

The integrator runs inside the FMU, so the coordinates and rates do not depend directly on an
input (empty dependencies in ``<Outputs>``); initial unknowns depend on all start values and
parameters.

Log categories: ``logEvents``, ``logStatusWarning``, ``logStatusError`` and ``logStatistics`` (the
integrator's work per method, logged at fmi2Terminate), ``logAll`` for all of them.
"""

from __future__ import annotations

import math
import pathlib
import re
import uuid
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from ..solver_settings import BY_NAME, DEFAULT_METHOD, DEPRECATED_FMU_NAMES, SOLVER_SETTINGS, check_setting


@dataclass
class FmuVariable:
    name: str
    value_reference: int
    causality: str
    variability: str
    initial: str | None
    start: float | None
    description: str = ""
    kind: str = ""  # coordinate, velocity, residual, output, reaction, constant, solver, input, deprecated
    dependencies: tuple = ()  # names of the inputs an output depends on directly
    min: float = -math.inf  # declared bounds (FMI min/max attributes, written when finite)
    max: float = math.inf
    type: str = "Real"  # FMI type: Real, or Integer (method)


def model_identifier(name: str) -> str:
    """A C identifier for the FMU's modelIdentifier (binary name) derived from a model name."""
    ident = re.sub(r"\W", "_", name)
    return ident if ident and not ident[0].isdigit() else f"m_{ident}"


def fmu_path(out_path, ident: str) -> pathlib.Path:
    """``out_path`` itself if it names a ``.fmu`` file, else ``out_path/<ident>.fmu``; the
    parent folder is created."""
    out_path = pathlib.Path(out_path)
    if out_path.suffix != ".fmu":
        out_path = out_path / f"{ident}.fmu"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    return out_path


#: the log categories of both FMU kinds besides those pythonfmu declares itself
LOG_STATISTICS = ("logStatistics", "integrator statistics per method (accepted and rejected steps, "
                  "right-hand sides, Jacobians, LU decompositions) at fmi2Terminate")


def fmu_variables(system, method: str = DEFAULT_METHOD, unset_constants: bool = False) -> list[FmuVariable]:
    """The FMU variables of a System, in value-reference order; ``method`` (a name of
    :data:`mbsfmu.solver_settings.METHODS` or an alias) is the start value of the parameter
    ``method``.  The deprecated names (kind ``deprecated``) come last: the engine's instance
    holds the variables before them (:func:`engine_variables`).
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
        add("constraint_residual", "output", "continuous", "calculated", None,
            "max-norm of the constraint residual c at the end of the step"
            + (" and of A y' + a of the nonholonomic constraints" if system.nonholonomic else ""),
            kind="residual")
    geometry = set()
    if loops:
        eqs = system.equations()
        mh = eqs.mh  # the constants of c and of nonholonomic rows A y' + a are fixed
        held = list(eqs.c) + list(eqs.C[mh:, :]) + list(eqs.b1[mh:, :])
        geometry = {s.name for e in held for s in eqs.expanded(e).free_symbols}
    if system.outputs:
        from ..equations.outputs import feedthrough

        deps = feedthrough(system.equations())
        for o in system.outputs.values():
            add(o.name, "output", "continuous", "calculated", None, o.description,
                kind="reaction" if o.constraint else "output", dependencies=tuple(deps[o.name]))
    for c in system.constants_.values():
        if c.value is None and not unset_constants:
            from ..errors import ParameterError

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


def model_description_xml(system, model_identifier: str, guid: str | None = None,
                          can_get_set_state: bool = True, directional_derivatives: bool = False,
                          generation_tool: str = "mbsfmu", source_files=(), variables=None) -> str:
    """modelDescription.xml text for an FMI 2.0 Co-Simulation FMU of ``system``; ``source_files``
    (names in the FMU's ``sources/``) are listed so that importers can rebuild the binary;
    ``variables`` defaults to ``fmu_variables(system)``."""
    variables = fmu_variables(system) if variables is None else variables
    guid = guid or "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"mbsfmu:{model_identifier}")) + "}"
    flag = "true" if can_get_set_state else "false"
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        "<fmiModelDescription",
        '  fmiVersion="2.0"',
        f"  modelName={quoteattr(system.name)}",
        f"  guid={quoteattr(guid)}",
        f"  description={quoteattr(system.title)}",
        f"  generationTool={quoteattr(generation_tool)}",
        '  variableNamingConvention="structured"',
        '  numberOfEventIndicators="0">',
        f"  <CoSimulation modelIdentifier={quoteattr(model_identifier)}"
        ' needsExecutionTool="false" canHandleVariableCommunicationStepSize="true"'
        ' canInterpolateInputs="false" maxOutputDerivativeOrder="0"'
        ' canRunAsynchronuously="false" canBeInstantiatedOnlyOncePerProcess="false"'
        ' canNotUseMemoryManagementFunctions="true"'
        f' canGetAndSetFMUstate="{flag}" canSerializeFMUstate="{flag}"'
        f' providesDirectionalDerivative="{"true" if directional_derivatives else "false"}"'
        + (">" if source_files else "/>"),
        *(["    <SourceFiles>"] + [f"      <File name={quoteattr(f)}/>" for f in source_files]
          + ["    </SourceFiles>", "  </CoSimulation>"] if source_files else []),
        "  <LogCategories>",
        '    <Category name="logEvents" description="initialization and parameter changes"/>',
        '    <Category name="logStatusWarning" description="warnings"/>',
        '    <Category name="logStatusError" description="errors"/>',
        f"    <Category name={quoteattr(LOG_STATISTICS[0])} description={quoteattr(LOG_STATISTICS[1])}/>",
        '    <Category name="logAll" description="everything"/>',
        "  </LogCategories>",
        "  <DefaultExperiment startTime=\"0.0\" stepSize=\"0.001\"/>",
        "  <ModelVariables>",
    ]
    for v in variables:
        attrs = [f"name={quoteattr(v.name)}", f'valueReference="{v.value_reference}"',
                 f"description={quoteattr(v.description)}", f'causality="{v.causality}"',
                 f'variability="{v.variability}"']
        if v.initial:
            attrs.append(f'initial="{v.initial}"')
        number = int if v.type == "Integer" else repr
        typed = f' start="{number(v.start)}"' if v.start is not None else ""
        typed += f' min="{number(v.min)}"' if math.isfinite(v.min) else ""
        typed += f' max="{number(v.max)}"' if math.isfinite(v.max) else ""
        lines.append(f"    <ScalarVariable {' '.join(attrs)}><{v.type}{typed}/></ScalarVariable>")
    lines.append("  </ModelVariables>")
    lines.append("  <ModelStructure>")
    outputs = [v for v in variables if v.causality == "output"]
    index = {v.name: v.value_reference + 1 for v in variables}
    lines.append("    <Outputs>")
    for v in outputs:
        deps = " ".join(str(index[d]) for d in v.dependencies)
        kinds = f' dependenciesKind="{" ".join("dependent" for _ in v.dependencies)}"' if deps else ""
        lines.append(f'      <Unknown index="{v.value_reference + 1}" dependencies="{deps}"{kinds}/>')
    lines.append("    </Outputs>")
    initial_unknowns = [v for v in outputs if v.initial in ("approx", "calculated")]
    if initial_unknowns:
        lines.append("    <InitialUnknowns>")
        for v in initial_unknowns:
            lines.append(f'      <Unknown index="{v.value_reference + 1}"/>')
        lines.append("    </InitialUnknowns>")
    lines.append("  </ModelStructure>")
    lines.append("</fmiModelDescription>")
    return "\n".join(lines) + "\n"
