"""The model descriptions and the sources/ of the native FMU kinds FMI 2.0 / 3.0 x Co-Simulation /
Model Exchange / both (issue 26), without compiling: :func:`mbsfmu.fmu.native.native_fmu_parts`
makes everything of an FMU but its binary; fmpy validates and reads what it wrote (the contract
between the build and the C glue: states, derivatives, value references, capability flags).

The FMI 2.0 Co-Simulation description is compared with files in ``golden/`` written by the writer
before FMI 3.0 and Model Exchange came (``model_description_xml`` of commit 87cfcc3): it must not
change by a byte.  (Where a variable's description changes on purpose, write them anew with the
arguments of :func:`test_fmi2_cs_description_is_unchanged`.)
"""

import pathlib
import re
from xml.etree import ElementTree

import pytest
from fmpy import read_model_description
from fmpy.validation import validate_fmu
from fmu_support import MODELS

import mbsfmu
from mbsfmu.codegen.fmu_variables import engine_variables, fmu_variables
from mbsfmu.fmu.model_description import model_description_xml
from mbsfmu.fmu.native import native_fmu_parts

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"
KINDS = [(v, i) for v in (2, 3) for i in ("cs", "me", "both")]
#: a tree with an input and user outputs (one feeds the input through), a loop model with user
#: outputs, a loop model, and a tree with a time parameter (its outputs depend on time)
MODELS_USED = ["cart_pendulum", "flyball_governor", "four_bar", "rotating_beam"]


def _unpacked(parts, folder: pathlib.Path) -> pathlib.Path:
    """The FMU's description files as an unpacked FMU folder (what fmpy validates)."""
    (folder / "sources").mkdir(parents=True)
    (folder / "modelDescription.xml").write_text(parts.model_description)
    for name in ("buildDescription.xml", "fmu_interfaces.h"):
        if name in parts.generated:
            (folder / "sources" / name).write_text(parts.generated[name])
    return folder


@pytest.fixture(scope="module")
def described(tmp_path_factory):
    made = {}

    def describe(model, fmi_version, interface):
        key = (model, fmi_version, interface)
        if key not in made:
            parts = native_fmu_parts(MODELS / f"{model}.py", fmi_version=fmi_version, interface=interface)
            folder = _unpacked(parts, tmp_path_factory.mktemp(f"{model}_{fmi_version}_{interface}"))
            made[key] = parts, folder, read_model_description(str(folder))
        return made[key]

    return describe


@pytest.mark.parametrize("fmi_version, interface", KINDS)
@pytest.mark.parametrize("model", MODELS_USED)
def test_description_validates(described, model, fmi_version, interface):
    parts, folder, md = described(model, fmi_version, interface)
    assert validate_fmu(str(folder)) == []
    assert md.fmiVersion == f"{fmi_version}.0"
    assert (md.coSimulation is not None) == (interface in ("cs", "both"))
    assert (md.modelExchange is not None) == (interface in ("me", "both"))
    assert md.guid == parts.guid  # FMI 3.0: the instantiationToken
    assert f'#define MBS_GUID "{parts.guid}"' in parts.generated["model_config.h"]  # the C model's


@pytest.mark.parametrize("fmi_version, interface", KINDS)
@pytest.mark.parametrize("model", ["cart_pendulum", "four_bar"])
def test_states_derivatives_and_value_references(described, model, fmi_version, interface):
    """The contract's variables: the engine's at 0..nvars-1 in every kind, ``solver`` at nvars in
    FMI 2.0 only, ``der(x_j,2)`` at nvars+1+j with Model Exchange only, ``constraint_tolerance``
    at nvars+1+f with Model Exchange of a model with loops only, ``time`` at nvars+2+f in FMI
    3.0 only; the states x_0..x_f-1, der(x_0)..der(x_f-1), their derivatives der(x_j) and
    der(x_j,2) in that order."""
    parts, _, md = described(model, fmi_version, interface)
    system = mbsfmu.load_model(MODELS / f"{model}.py")
    engine = engine_variables(fmu_variables(system))
    nvars, coords = len(engine), list(system.coordinates_)
    f = len(coords)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    assert [vr[v.name] for v in engine] == list(range(nvars))
    assert ("solver" in vr) == (fmi_version == 2) and vr.get("solver", nvars) == nvars
    me = interface in ("me", "both")
    accelerations = [f"der({c},2)" for c in coords]
    assert [vr.get(a) for a in accelerations] == ([nvars + 1 + j for j in range(f)] if me else [None] * f)
    assert vr.get("constraint_tolerance") == (nvars + 1 + f if me and system.constrained else None)
    assert vr.get("time") == (nvars + 2 + f if fmi_version == 3 else None)
    variable = {v.name: v for v in md.modelVariables}
    if fmi_version == 3:
        assert variable["time"].causality == "independent" and variable["time"].start is None
    if "constraint_tolerance" in vr:
        tolerance = variable["constraint_tolerance"]
        assert (tolerance.causality, tolerance.variability) == ("parameter", "tunable")
        assert float(tolerance.start) == 1e-6
    derivatives = [d.variable for d in md.derivatives]
    if not me:
        assert derivatives == []
        return
    assert [d.name for d in derivatives] == [f"der({c})" for c in coords] + accelerations
    assert [d.derivative.name for d in derivatives] == coords + [f"der({c})" for c in coords]
    for a in derivatives[f:]:
        assert (a.causality, a.variability, a.initial, a.start) == ("local", "continuous", "calculated", None)
    assert md.numberOfEventIndicators == 0


@pytest.mark.parametrize("fmi_version", [2, 3])
@pytest.mark.parametrize("model, loops", [("cart_pendulum", False), ("four_bar", True)])
def test_capability_flags(described, model, loops, fmi_version):
    """The contract's flags, as the XML states them (fmpy reads FMI 3.0's
    providesDirectionalDerivatives into no field) and as fmpy reads them."""
    parts, _, md = described(model, fmi_version, "both")
    root = ElementTree.fromstring(parts.model_description)
    cs, me = root.find("CoSimulation").attrib, root.find("ModelExchange").attrib
    state = {2: "FMUstate", 3: "FMUState"}[fmi_version]
    directional = {2: "providesDirectionalDerivative", 3: "providesDirectionalDerivatives"}[fmi_version]
    for flags in (cs, me):
        assert flags[f"canGetAndSet{state}"] == flags[f"canSerialize{state}"] == "true"
    assert (cs[directional], me[directional]) == ("true", "false")
    assert cs["canHandleVariableCommunicationStepSize"] == "true"
    assert me["modelIdentifier"] == cs["modelIdentifier"] == model
    if fmi_version == 3:
        assert (cs["providesAdjointDerivatives"], me["providesAdjointDerivatives"]) == ("true", "false")
        assert cs["hasEventMode"] == "false"
        assert me["needsCompletedIntegratorStep"] == str(loops).lower()
    else:
        assert me["completedIntegratorStepNotNeeded"] == str(not loops).lower()
    assert md.modelExchange.needsCompletedIntegratorStep == loops
    assert md.coSimulation.canGetAndSetFMUstate and md.modelExchange.canSerializeFMUstate


def test_fmi3_method_is_an_enumeration(described):
    _, _, md = described("slider_crank", 3, "cs")
    method = next(v for v in md.modelVariables if v.name == "method")
    assert method.type == "Enumeration" and method.declaredType.name == "IntegrationMethod"
    items = [(i.name, int(i.value)) for i in method.declaredType.items]
    assert items == [("rkstab", 0), ("stiff", 1), ("dop853", 2)]
    assert (method.causality, method.variability, method.start) == ("parameter", "tunable", "0")
    assert {v.type for v in md.modelVariables if v.name != "method"} == {"Float64"}


def test_output_dependencies(described):
    """drive_power feeds the input F through in every kind; with Model Exchange a calculated
    output depends on the states, in FMI 3.0 on the constants, and on time where the model has
    time parameters; a coordinate output depends on nothing."""
    def deps(model, fmi_version, interface, output):
        _, _, md = described(model, fmi_version, interface)
        unknown = next(u for u in md.outputs if u.variable.name == output)
        return {v.name for v in unknown.dependencies}

    assert deps("cart_pendulum", 2, "cs", "drive_power") == {"F"}
    assert deps("cart_pendulum", 2, "me", "drive_power") == {"F", "x", "theta", "der(x)", "der(theta)"}
    assert deps("cart_pendulum", 3, "cs", "drive_power") == {"F", "mc", "m", "l", "g", "d"}
    assert deps("cart_pendulum", 3, "both", "x") == set()
    assert "time" in deps("rotating_beam", 3, "cs", "tip_deflection")
    assert "time" not in deps("cart_pendulum", 3, "both", "drive_power")


@pytest.mark.parametrize("fmi_version, interface", KINDS)
def test_sources_and_binary_layout(described, fmi_version, interface):
    """sources/ holds the version's glue (not the other's), the FMU layer, the generated
    fmu_interfaces.h and, in FMI 3.0, buildDescription.xml listing the compiled files."""
    parts, _, md = described("four_bar", fmi_version, interface)
    other = {2: "fmi3_glue.c", 3: "fmi2_glue.c"}[fmi_version]
    sources = parts.sources()
    assert f"fmi{fmi_version}_glue.c" in sources and other not in sources
    assert {"mbs_fmu.c", "mbs_fmu.h", "fmu_interfaces.h", "model.c", "model_config.h"} <= set(sources)
    assert parts.compiled[:2] == (f"fmi{fmi_version}_glue.c", "mbs_fmu.c")
    assert set(parts.compiled) <= set(sources)
    header = parts.generated["fmu_interfaces.h"]
    assert re.search(r"#define MBS_FMU_CS (\d)", header)[1] == str(int(interface in ("cs", "both")))
    assert re.search(r"#define MBS_FMU_ME (\d)", header)[1] == str(int(interface in ("me", "both")))
    assert parts.binary == f"binaries/{ {2: 'linux64', 3: 'x86_64-linux'}[fmi_version]}/four_bar.so"
    assert ("buildDescription.xml" in sources) == (fmi_version == 3)
    [config] = md.buildConfigurations
    assert config.modelIdentifier == "four_bar"
    assert [f for s in config.sourceFileSets for f in s.sourceFiles] == list(parts.compiled)


def test_kinds_have_their_own_guid(described):
    """A state saved by one kind of FMU is not another's: each kind has its own GUID (FMI 2.0
    Co-Simulation keeps the one it always had)."""
    guids = {described("four_bar", v, i)[0].guid for v, i in KINDS}
    assert len(guids) == len(KINDS)


@pytest.mark.parametrize("model, kw", [
    ("cart_pendulum", {}),
    ("slider_crank", {"guid": "{golden-guid}", "directional_derivatives": True,
                      "source_files": ("fmi2_glue.c", "model.c"), "method": "stiff"}),
])
def test_fmi2_cs_description_is_unchanged(model, kw):
    system = mbsfmu.load_model(MODELS / f"{model}.py")
    kw = dict(kw)
    method = kw.pop("method", None)
    if method:
        kw["variables"] = fmu_variables(system, method)
    text = model_description_xml(system, system.name, **kw)
    assert text == (GOLDEN / f"fmi2_cs_{model}.xml").read_text()
    assert text == model_description_xml(system, system.name, fmi_version=2, interface="cs", **kw)
