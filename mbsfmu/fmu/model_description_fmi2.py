"""The FMI 2.0 model description (Co-Simulation, Model Exchange or both) of a model
(docs/guide/fmus.md, Variables).

The variables and the facts of the model structure are those of
:func:`mbsfmu.fmu.declared_variables.declaration`; here they are written as ``ScalarVariable``
elements of type ``Real`` (``method`` and ``solver``: ``Integer``), referred to by their index
(position + 1) in ``<ModelStructure>``.

The integrator of a Co-Simulation FMU runs inside it, so the coordinates and rates do not depend
directly on an input (empty dependencies in ``<Outputs>``, in an FMU with Model Exchange too, as
the outputs that are states are their own values); initial unknowns depend on all start values
and parameters.  With Model Exchange, ``<Derivatives>`` lists the derivatives of the states in
state order: the velocity ``der(x)`` (the derivative of ``x``: it depends on the state ``der(x)``
alone, with the constant factor 1) and then the accelerations ``der(x,2)`` (they depend on all
states and inputs: no dependencies written); ``completedIntegratorStepNotNeeded`` is false for a
model with constraints (:func:`~mbsfmu.fmu.declared_variables.needs_completed_integrator_step`).
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from .declared_variables import Declaration, needs_completed_integrator_step
from .description_xml import (
    DEFAULT_EXPERIMENT,
    log_categories,
    unknown_list,
    value_attributes,
    variable_attributes,
    xml_bool,
)
from .fmi_options import declares


def _interface(element: str, model_identifier: str, flags: str, source_files) -> list[str]:
    """The lines of one interface element (``ModelExchange`` or ``CoSimulation``)."""
    lines = [f"  <{element} modelIdentifier={quoteattr(model_identifier)}{flags}"
             + (">" if source_files else "/>")]
    if source_files:
        lines += (["    <SourceFiles>"] + [f"      <File name={quoteattr(f)}/>" for f in source_files]
                  + ["    </SourceFiles>", f"  </{element}>"])
    return lines


def fmi2_model_description(system, model_identifier: str, guid: str, declared: Declaration,
                           interface: str = "cs", can_get_set_state: bool = True,
                           directional_derivatives: bool = False, generation_tool: str = "mbsfmu",
                           source_files=()) -> str:
    """modelDescription.xml text of an FMI 2.0 FMU of ``system`` declaring ``interface``
    (``'cs'``, ``'me'`` or ``'both'``) and the variables ``declared``; ``source_files`` (names in
    the FMU's ``sources/``) are listed so that importers can rebuild the binary.  Directional
    derivatives are offered by the Co-Simulation interface only."""
    cs, me = declares(interface)
    state = xml_bool(can_get_set_state)
    state_flags = f' canGetAndSetFMUstate="{state}" canSerializeFMUstate="{state}"'
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
    ]
    if me:
        lines += _interface("ModelExchange", model_identifier,
                            ' needsExecutionTool="false" completedIntegratorStepNotNeeded='
                            f'"{xml_bool(not needs_completed_integrator_step(system))}"'
                            ' canBeInstantiatedOnlyOncePerProcess="false"'
                            ' canNotUseMemoryManagementFunctions="true"' + state_flags
                            + ' providesDirectionalDerivative="false"', source_files)
    if cs:
        lines += _interface("CoSimulation", model_identifier,
                            ' needsExecutionTool="false" canHandleVariableCommunicationStepSize="true"'
                            ' canInterpolateInputs="false" maxOutputDerivativeOrder="0"'
                            ' canRunAsynchronuously="false" canBeInstantiatedOnlyOncePerProcess="false"'
                            ' canNotUseMemoryManagementFunctions="true"' + state_flags
                            + f' providesDirectionalDerivative="{xml_bool(directional_derivatives)}"',
                            source_files)
    lines += log_categories(2)
    lines += [DEFAULT_EXPERIMENT, "  <ModelVariables>"]
    index = {v.name: i + 1 for i, v in enumerate(declared.variables)}
    state_of = declared.derivative_of()
    for v in declared.variables:
        derivative = f' derivative="{index[state_of[v.name].name]}"' if v.name in state_of else ""
        lines.append(f"    <ScalarVariable {' '.join(variable_attributes(v))}>"
                     f"<{v.type}{value_attributes(v)}{derivative}/></ScalarVariable>")
    lines.append("  </ModelVariables>")
    lines.append("  <ModelStructure>")
    lines.append("    <Outputs>")
    for v in declared.outputs():
        lines.append(f'      <Unknown index="{index[v.name]}"'
                     f'{unknown_list([index[d.name] for d in declared.dependencies(v)], "dependent")}/>')
    lines.append("    </Outputs>")
    if declared.derivatives:
        lines.append("    <Derivatives>")
        for d in declared.derivatives:
            deps = unknown_list([index[d.name]], "constant") if d.kind == "velocity" else ""
            lines.append(f'      <Unknown index="{index[d.name]}"{deps}/>')
        lines.append("    </Derivatives>")
    initial_unknowns = declared.initial_unknowns()
    if initial_unknowns:
        lines.append("    <InitialUnknowns>")
        for v in initial_unknowns:
            lines.append(f'      <Unknown index="{index[v.name]}"/>')
        lines.append("    </InitialUnknowns>")
    lines.append("  </ModelStructure>")
    lines.append("</fmiModelDescription>")
    return "\n".join(lines) + "\n"
