"""The pythonfmu kind of our FMI 2.0 Co-Simulation FMUs.

:func:`build_pythonfmu` writes a small slave script (a ``pythonfmu.Fmi2Slave`` subclass named
after the model) and builds an FMU from it with pythonfmu's ``FmuBuilder``; the model file is
bundled in the FMU's ``resources/model/`` folder, and the model's view beside it
(``resources/mbsfmu_viewer.json``, :mod:`mbsfmu.animation.model_view`, as in the native kind: a
diagram's result draws the FMU block's plant).  The FMU exposes exactly the variables of
:func:`mbsfmu.codegen.fmu_variables.fmu_variables` (same names, causality, variability, initial
and start values, in the same value-reference order).

At run time the slave (:class:`mbsfmu.fmu.pythonfmu_slave.MbsfmuSlave`) loads the model file
and runs it on mbsfmu's C engine (:mod:`mbsfmu.engine.extension`), whose Python extension is
compiled at fmi2Instantiate in the importer's process (once per model; mbsfmu's compile cache
keeps it): the instance layer the native FMU runs too.  Values are checked and set by the engine,
fmi2ExitInitializationMode is its consistent start (loops: the formulation chosen at build time,
default ``'qr'``; trees: the minimal ODE), and every ``fmi2DoStep`` its do-step with dense
output: the RKSTAB integrator continues across communication points and restarts only after an
input or parameter changed, inputs held over the step.  So this kind takes the same steps as
the native FMU (both give the same values at every communication point, bit for bit on the same
machine).  Where the engine cannot be compiled (no C compiler) or does not have the formulation,
the slave integrates with the numpy formulations and the Python RKSTAB of
:mod:`mbsfmu.reference.formulations` instead (scipy's Radau with the same projection for ``method`` =
stiff), restarted at every ``fmi2DoStep``, and says so with a warning at fmi2Instantiate.  The
integration method is the Integer parameter ``method`` as in the native FMU (``method=`` of the
build is its start value; the old name ``solver`` works for one release, with a deprecation
warning through the FMU's logger), and the work of each method is logged under ``logStatistics`` at
fmi2Terminate.

**Bad calls.** pythonfmu 0.7.0's FMI library (C++) turns every Python exception into
``fmi2Fatal`` and releases the Python instance, has no other way to return ``fmi2Error``, and
passes log messages to the importer only while debug logging is on. So the FMU's binary
(``binaries/linux64/<model>.so``) is a small guard library compiled at build time
(``pythonfmu_guard.c``) that loads pythonfmu's library (renamed ``pythonfmu-export.so``) and
forwards every call to it. The slave itself is :class:`mbsfmu.fmu.pythonfmu_slave.MbsfmuSlave`;
each FMU's script only subclasses it with the model's values. The guard checks the instance, the
pointer arguments and the GUID itself; while the slave handles a call, the slave reports each
refusal to the guard (``mbsfmu_guard_report``), which logs it to the importer at once, debug
logging or not, and returns ``fmi2Error``. The slave validates a whole call before it applies
any of it, so a refused call changes nothing, and never lets an exception reach pythonfmu. FMU
states are handles the guard registers (a pointer that is not a live state of this model is
refused without being read); their contents carry the model's GUID and a SHA-256 checksum and
are checked at ``fmi2SetFMUstate`` and ``fmi2DeSerializeFMUstate``. On Windows the FMU keeps
pythonfmu's binary: the slave refuses the same calls, but the importer sees ``fmi2OK``
(``fmi2Discard`` for ``fmi2DoStep``) and the messages only with debug logging on.

Limitations: the FMU runs inside the importing tool's Python interpreter (pythonfmu's binary
uses the host's libpython), and that interpreter must have ``mbsfmu`` (with numpy, scipy and
sympy) installed, and a C compiler for the engine (see above): only the model file is bundled, not
mbsfmu itself.  The model file must not import other local files.  Building needs a C compiler
(the guard; the engine is compiled then as well, since pythonfmu's builder instantiates the slave
to write modelDescription.xml).  FMU states are those of the engine build that saved them
(another mbsfmu version, or an instance on the numpy path, refuses them with a message).
pythonfmu's generated modelDescription.xml has no ``InitialUnknowns``, no ``dependencies`` in
``<Outputs>`` and no ``min``/``max`` (completed here), and it declares ``needsExecutionTool="true"``.
Directional derivatives are not offered.  Direct feed-through user outputs follow an input set
between communication points (on the numpy path they are updated at communication points only).
"""

from __future__ import annotations

import hashlib
import math
import pathlib
import sys
import tempfile
import uuid
import xml.etree.ElementTree as ET
import zipfile

from ..animation.model_view import view_resources
from ..codegen.compile import find_compiler, run_compiler
from ..codegen.fmu_variables import fmu_variables
from ..core.errors import renamed_keyword
from ..core.formulation_choice import check_formulation_name, check_nonholonomic
from ..core.solver_settings import DEFAULT_METHOD, canonical_method, check_setting
from ..equations.derive import derive
from ..equations.mass_regularity import check_regular_mass
from ..model.loader import load_model
from .model_description import fmu_path, model_identifier

#: file name of pythonfmu's FMI library inside the FMU, beside the guard
INNER_LIBRARY = "pythonfmu-export.so"

#: the guard library's C source (compiled per model with a generated guard_config.h)
GUARD_SOURCE = pathlib.Path(__file__).resolve().parent / "pythonfmu_guard.c"
#: the package of the slave class every generated script subclasses (its modules enter the GUID)
SLAVE_PACKAGE = pathlib.Path(__file__).resolve().parent / "pythonfmu_slave"

_SCRIPT = """\
\"\"\"pythonfmu slave of the model {model_file}, generated by mbsfmu (needs mbsfmu installed).\"\"\"

import mbsfmu.fmu.pythonfmu_slave as _slave

_slave.keep_namespace(globals())


class {ident}(_slave.MbsfmuSlave):
    \"\"\"mbsfmu model {model_name} as an FMI 2.0 Co-Simulation slave.\"\"\"

    MODEL_FILE = {model_file!r}
    MODEL_NAME = {model_name!r}
    MODEL_GUID = {guid!r}
    BINARY = {ident!r}
    FORMULATION = {formulation!r}
    METHOD = {method!r}
    VARIABLES = {variables!r}
    N_STATE = {n_state}
"""


def build_pythonfmu(model_path, out_path, formulation=None, method=None, *, solver=None) -> pathlib.Path:
    """Build a pythonfmu FMU of the model file ``model_path`` at ``out_path`` (a ``.fmu`` file
    name, or a folder that receives ``<model name>.fmu``); returns the FMU's path.

    ``formulation`` chooses how loop constraints are kept (see :mod:`mbsfmu.reference.formulations`,
    default ``'qr'``); trees always use the minimal ODE.  ``method`` is the start value of the
    FMU parameter ``method`` (``'rkstab'``, the default for None, ``'stiff'`` or ``'dop853'``;
    also ``'explicit'`` and ``'DOP853'``); ``solver=`` is its deprecated name.  The FMU needs
    ``mbsfmu`` installed in the Python interpreter of the tool that runs it (see the module
    docstring).  Its GUID is
    derived from the model file, the formulation, the method and the slave and guard templates, so
    that a state of another model (or of another build of the slave) is recognized as foreign."""
    model_path = pathlib.Path(model_path).resolve()
    method = renamed_keyword("build_pythonfmu", "method", method, "solver", solver, DEFAULT_METHOD)
    check_setting("method", method, api=True)
    method = canonical_method(method)
    if formulation is not None:
        check_formulation_name(formulation)
    system = load_model(model_path)
    check_nonholonomic(system, formulation)
    check_regular_mass(derive(system), formulation)
    variables = fmu_variables(system, method)  # fails early (e.g. constants without values)
    ident = model_identifier(system.name)
    source = model_path.read_bytes()
    slave = [f.read_bytes() for f in sorted(SLAVE_PACKAGE.glob("*.py"))]
    digest = hashlib.sha256(b"\0".join([source, repr(formulation).encode(), method.encode(),
                                         *slave, GUARD_SOURCE.read_bytes()])).hexdigest()
    guid = "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"mbsfmu-pythonfmu:{digest}")) + "}"
    module_name = f"mbsfmu_slave_{ident}_{digest[:10]}"
    script = _SCRIPT.format(ident=ident, model_name=system.name, model_file=model_path.name,
                            guid=guid, formulation=formulation, method=method,
                            variables=[v.name for v in variables],
                            n_state=2 * len(system.coordinates_))
    out_path = fmu_path(out_path, ident)
    files = {f"model/{model_path.name}": source}
    for name, text in view_resources(system).items():  # the view, as the native kind carries it
        files[str(pathlib.PurePosixPath(name).relative_to("resources"))] = text.encode()
    built = build_with_pythonfmu(script, module_name, out_path, files,
                                 canGetAndSetFMUstate=True, canSerializeFMUstate=True)
    complete_model_structure(built, variables)
    install_guard(built, ident, guid, system.name)
    return built


def c_string(text: str) -> str:
    """``text`` as the contents of a C string literal (octal escapes, no trigraphs)."""
    out = []
    for b in text.encode("utf-8"):
        c = chr(b)
        out.append(c if 32 <= b < 127 and c not in '"\\?' else f"\\{b:03o}")
    return "".join(out)


def compile_guard(ident: str, guid: str, model_name: str, folder: pathlib.Path) -> pathlib.Path:
    """Compile the guard library (:data:`GUARD_SOURCE`) for one model into ``folder``, with its
    guard_config.h (GUID, model name, name of pythonfmu's library)."""
    (folder / "guard_config.h").write_text(
        f'#define GUARD_GUID "{c_string(guid)}"\n#define GUARD_MODEL "{c_string(model_name)}"\n'
        f'#define GUARD_INNER "{c_string(INNER_LIBRARY)}"\n')
    lib = folder / f"{ident}.so"
    cc = find_compiler()
    cmd = [cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", f"-I{folder}",
           "-o", str(lib), str(GUARD_SOURCE), "-ldl", "-lpthread"]
    run_compiler(cmd, "the pythonfmu guard library")
    return lib


def install_guard(fmu: pathlib.Path, ident: str, guid: str, model_name: str) -> None:
    """Make the guard library the FMU's Linux binary: pythonfmu's library moves beside it as
    :data:`INNER_LIBRARY` (see the module docstring)."""
    binary = f"binaries/linux64/{ident}.so"
    with zipfile.ZipFile(fmu) as zf:
        entries = [(info, zf.read(info.filename)) for info in zf.infolist()]
    if binary not in [info.filename for info, _ in entries]:
        raise RuntimeError(f"pythonfmu's build of {fmu} has no {binary}")
    with tempfile.TemporaryDirectory(prefix="mbsfmu_guard_") as tmp:
        guard = compile_guard(ident, guid, model_name, pathlib.Path(tmp)).read_bytes()
    tmp = fmu.with_suffix(".fmu.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in entries:
            if info.filename == binary:
                zf.writestr(f"binaries/linux64/{INNER_LIBRARY}", data)
                zf.writestr(binary, guard)
            else:
                zf.writestr(info, data)
    tmp.replace(fmu)


def build_with_pythonfmu(script: str, module_name: str, out_path, files: dict[str, bytes],
                         **options) -> pathlib.Path:
    """Build an FMU with pythonfmu's ``FmuBuilder`` from the slave ``script`` and return its
    path.

    The script is written as ``<module_name>.py`` into a temporary folder together with
    ``files`` (relative path -> content); each top-level entry of ``files`` (a file, or a folder
    such as ``model/``) becomes a project file in the FMU's resources.  ``options`` are the
    builder's capability flags.  The builder imports the script as a module and leaves its
    folder on ``sys.path``: both are undone afterwards."""
    from pythonfmu import FmuBuilder

    with tempfile.TemporaryDirectory(prefix="mbsfmu_pythonfmu_") as tmp:
        tmp = pathlib.Path(tmp)
        script_file = tmp / f"{module_name}.py"
        script_file.write_text(script)
        tops = []
        for rel, data in files.items():
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            top = tmp / pathlib.PurePosixPath(rel).parts[0]
            if top not in tops:
                tops.append(top)
        saved_path = list(sys.path)
        try:
            built = FmuBuilder.build_FMU(script_file, dest=out_path, project_files=tops, **options)
        finally:
            sys.path[:] = saved_path
            sys.modules.pop(module_name, None)
    return pathlib.Path(built)


def _declare_bounds(elements, fmu_vars) -> None:
    """min and max of the FmuVariables ``fmu_vars`` (where finite) on their <ScalarVariable>
    ``elements``; variables without bounds (the runner's block FMUs describe theirs without) are
    left as they are."""
    by_name = {v.name: v for v in fmu_vars if hasattr(v, "min")}
    for element in elements:
        v = by_name.get(element.get("name"))
        typed = element.find(v.type) if v is not None else None
        for key, value in (("min", v.min), ("max", v.max)) if typed is not None else ():
            if math.isfinite(value):
                typed.set(key, str(int(value)) if v.type == "Integer" else repr(float(value)))


def complete_model_structure(fmu_path: pathlib.Path, fmu_vars=None) -> None:
    """Add what pythonfmu's modelDescription.xml leaves out: the output dependencies (none for
    coordinates and rates, which the integrator inside computes; the inputs of direct
    feed-through user outputs, from ``fmu_vars``), <InitialUnknowns> for the outputs with initial
    'approx' or 'calculated' (coordinates of loop models, user outputs) and the declared bounds
    (``min``, ``max``: of constants, inputs and solver settings, e.g. 0 and 2 of ``method``)."""
    with zipfile.ZipFile(fmu_path) as zf:
        entries = [(info, zf.read(info.filename)) for info in zf.infolist()]
    root = ET.fromstring(dict((i.filename, d) for i, d in entries)["modelDescription.xml"])
    variables = root.find("ModelVariables").findall("ScalarVariable")
    structure = root.find("ModelStructure")
    outputs = structure.find("Outputs")
    deps = {v.value_reference + 1: v.dependencies for v in fmu_vars or []}
    index = {v.name: v.value_reference + 1 for v in fmu_vars or []}
    for unknown in outputs.findall("Unknown") if outputs is not None else []:
        names = deps.get(int(unknown.get("index")), ())
        unknown.set("dependencies", " ".join(str(index[n]) for n in names))
        if names:
            unknown.set("dependenciesKind", " ".join("dependent" for _ in names))
    _declare_bounds(variables, fmu_vars or [])
    initial = [i + 1 for i, v in enumerate(variables) if v.get("causality") == "output"
               and v.get("initial", "calculated") in ("approx", "calculated")]
    if initial and structure.find("InitialUnknowns") is None:
        block = ET.Element("InitialUnknowns")
        for index in initial:
            ET.SubElement(block, "Unknown", index=str(index))
        children = list(structure)
        position = children.index(outputs) + 1 if outputs is not None else len(children)
        structure.insert(position, block)
    xml = ET.tostring(root, encoding="UTF-8", xml_declaration=True)
    tmp = fmu_path.with_suffix(".fmu.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in entries:
            zf.writestr(info, xml if info.filename == "modelDescription.xml" else data)
    tmp.replace(fmu_path)
