"""The FMI 3.0 model description (Co-Simulation, Model Exchange or both) of a model and the
build description ``sources/buildDescription.xml`` (docs/guide/fmus.md, Variables).

The variables and the facts of the model structure are those of
:func:`mbsfmu.fmu.declared_variables.declaration` (no ``solver``; ``time``, the independent
variable); here they are ``Float64`` elements, but for the integration method ``method``, an
``Enumeration`` of the type ``IntegrationMethod`` (:data:`ENUMERATION_TYPES`: its items are the
method names with their numbers, :data:`mbsfmu.core.solver_settings.METHODS`), read and set with
fmi3GetInt64/fmi3SetInt64.  ``<ModelStructure>`` refers to value references.

The model structure is that of the FMI 2.0 description
(:mod:`~mbsfmu.fmu.model_description_fmi2`): ``Output`` elements with the inputs each output
feeds through, ``ContinuousStateDerivative`` elements in state order for Model Exchange, and the
``InitialUnknown`` elements.  Co-Simulation: variable communication step size, FMU state
get/set/serialize, directional and adjoint derivatives, no event mode, no intermediate update.
Model Exchange: no event indicators, no directional derivatives; ``needsCompletedIntegratorStep``
for models with constraints
(:func:`~mbsfmu.fmu.declared_variables.needs_completed_integrator_step`).
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from ..core.solver_settings import BY_NAME, METHODS, SOLVER_SETTINGS
from . import description_xml as shared
from .declared_variables import Declaration, needs_completed_integrator_step
from .fmi_options import declares

#: FMU parameters that are a choice of named values: parameter name -> its enumeration type
ENUMERATION_TYPES = {"method": "IntegrationMethod"}
assert set(ENUMERATION_TYPES) == {s.name for s in SOLVER_SETTINGS if s.choices}
#: the FMI 3.0 element of each of our FMI types (an Integer is an enumeration, above)
FLOAT = {"Real": "Float64"}


def _type_definitions() -> list[str]:
    lines = ["  <TypeDefinitions>"]
    for name, type_name in ENUMERATION_TYPES.items():
        setting = BY_NAME[name]
        lines.append(f"    <EnumerationType name={quoteattr(type_name)}"
                     f" description={quoteattr('values of the parameter ' + name)}>")
        lines += [f"      <Item name={quoteattr(item)} value=\"{setting.low + i}\""
                  f" description={quoteattr(METHODS[item])}/>" for i, item in enumerate(setting.choices)]
        lines.append("    </EnumerationType>")
    return lines + ["  </TypeDefinitions>"]


def fmi3_model_description(system, model_identifier: str, guid: str, declared: Declaration,
                           interface: str = "cs", can_get_set_state: bool = True,
                           directional_derivatives: bool = False,
                           generation_tool: str = "mbsfmu") -> str:
    """modelDescription.xml text of an FMI 3.0 FMU of ``system`` declaring ``interface``
    (``'cs'``, ``'me'`` or ``'both'``) and the variables ``declared``; ``guid`` is its
    ``instantiationToken``.  Directional and adjoint derivatives are offered by the
    Co-Simulation interface only (both or neither)."""
    cs, me = declares(interface)
    common = (' needsExecutionTool="false" canBeInstantiatedOnlyOncePerProcess="false"'
              f' canGetAndSetFMUState="{shared.xml_bool(can_get_set_state)}"'
              f' canSerializeFMUState="{shared.xml_bool(can_get_set_state)}"')
    ident = quoteattr(model_identifier)
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        "<fmiModelDescription",
        '  fmiVersion="3.0"',
        f"  modelName={quoteattr(system.name)}",
        f"  instantiationToken={quoteattr(guid)}",
        f"  description={quoteattr(system.title)}",
        f"  generationTool={quoteattr(generation_tool)}",
        '  variableNamingConvention="structured">',
    ]
    if me:
        lines.append(f"  <ModelExchange modelIdentifier={ident}{common}"
                     ' providesDirectionalDerivatives="false" providesAdjointDerivatives="false"'
                     ' needsCompletedIntegratorStep='
                     f'"{shared.xml_bool(needs_completed_integrator_step(system))}"'
                     ' providesEvaluateDiscreteStates="false"/>')
    if cs:
        derivatives = shared.xml_bool(directional_derivatives)
        lines.append(f"  <CoSimulation modelIdentifier={ident}{common}"
                     f' providesDirectionalDerivatives="{derivatives}"'
                     f' providesAdjointDerivatives="{derivatives}"'
                     ' canHandleVariableCommunicationStepSize="true" maxOutputDerivativeOrder="0"'
                     ' providesIntermediateUpdate="false" mightReturnEarlyFromDoStep="false"'
                     ' canReturnEarlyAfterIntermediateUpdate="false" hasEventMode="false"'
                     ' providesEvaluateDiscreteStates="false"/>')
    lines += _type_definitions()
    lines += shared.log_categories(3)
    lines += [shared.DEFAULT_EXPERIMENT, "  <ModelVariables>"]
    state_of = declared.derivative_of()
    for v in declared.variables:
        attrs = " ".join(shared.variable_attributes(v))
        if v.name in ENUMERATION_TYPES:
            lines.append(f"    <Enumeration {attrs} declaredType={quoteattr(ENUMERATION_TYPES[v.name])}"
                         f"{shared.value_attributes(v)}/>")
            continue
        derivative = (f' derivative="{state_of[v.name].value_reference}"' if v.name in state_of else "")
        lines.append(f"    <{FLOAT[v.type]} {attrs}{shared.value_attributes(v)}{derivative}/>")
    lines.append("  </ModelVariables>")
    lines.append("  <ModelStructure>")
    for v in declared.outputs():
        knowns = [d.value_reference for d in declared.dependencies(v)]
        deps = shared.unknown_list(knowns, "dependent")
        lines.append(f'    <Output valueReference="{v.value_reference}"{deps}/>')
    for d in declared.derivatives:
        deps = shared.unknown_list([d.value_reference], "constant") if d.kind == "velocity" else ""
        lines.append(f'    <ContinuousStateDerivative valueReference="{d.value_reference}"{deps}/>')
    for v in declared.initial_unknowns():
        lines.append(f'    <InitialUnknown valueReference="{v.value_reference}"/>')
    lines.append("  </ModelStructure>")
    lines.append("</fmiModelDescription>")
    return "\n".join(lines) + "\n"


def build_description(model_identifier: str, source_files) -> str:
    """``sources/buildDescription.xml``: one build configuration that compiles ``source_files``
    (C99, the folder ``sources/`` on the include path, no preprocessor definitions: the generated
    header ``fmu_interfaces.h`` carries them) and links the C math library."""
    return "\n".join([
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<fmiBuildDescription fmiVersion="3.0">',
        f"  <BuildConfiguration modelIdentifier={quoteattr(model_identifier)}>",
        '    <SourceFileSet language="C99">',
        *[f"      <SourceFile name={quoteattr(f)}/>" for f in source_files],
        "    </SourceFileSet>",
        '    <Library name="m" external="true" description="the C math library (libm)"/>',
        "  </BuildConfiguration>",
        "</fmiBuildDescription>",
    ]) + "\n"
