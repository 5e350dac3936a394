"""The FMI 2.0 Co-Simulation model description of a model (docs/guide/fmus.md, Variables).

The variables, in value-reference order, are those of
:func:`mbsfmu.codegen.fmu_variables.fmu_variables` (coordinates, velocities ``der(<name>)``,
``constraint_residual`` for models with constraints, the user outputs, the constants, the
solver settings, the inputs), the variables the engine's model source lists too.

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
from xml.sax.saxutils import quoteattr

from ..codegen.fmu_variables import fmu_variables


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
