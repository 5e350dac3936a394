"""Native (Python-free) FMUs, FMI 2.0 or 3.0, Co-Simulation, Model Exchange or both: the C engine
+ the generated model + the FMI glue.

:func:`build_native_fmu` writes the model's half of the engine's contract
(:func:`~mbsfmu.codegen.c_model.model_sources`: ``model.c``, ``model_aba.c``, ``model_tree.c``
and ``model_config.h``) next to the engine's sources (``mbsfmu/runtime``: the instance layer,
formulations, integrators, parameter rules, linear algebra), the version-free FMU layer
``mbs_fmu.c`` and the FMI glue of the version (``fmi2_glue.c`` or ``fmi3_glue.c``) in the FMU's
``sources/`` folder with the generated header ``fmu_interfaces.h`` (which interfaces the FMU
declares; :mod:`.fmi_options`) and, in FMI 3.0, ``buildDescription.xml``; it compiles them into
``binaries/linux64/<modelIdentifier>.so`` (FMI 2.0) or ``binaries/x86_64-linux/`` (FMI 3.0), no
libpython, and writes ``modelDescription.xml`` (:mod:`.model_description`) and, for a model
with something to draw, ``resources/mbsfmu_viewer.json``: its frames, shapes and the program of
its poses, which the runner's results draw (:mod:`mbsfmu.animation.model_view`).  The FMU's variables
and value references are those of :func:`~mbsfmu.codegen.fmu_variables.fmu_variables`, with what
each version and interface adds (:mod:`.declared_variables`).  :func:`native_fmu_parts` makes
everything but the binary, :func:`write_fmu` is the one place that writes an FMU archive.

The FMU runs exactly the code ``simulate(backend='c')`` runs (the instance layer of
``mbs_instance.c``), so both take the same steps. Models with loops run the formulation chosen
at build time, any of :data:`NATIVE_FORMULATIONS` (``'qr'`` by default: optimal partitioning
with the projection inside every RKSTAB step, copes with redundant constraints); trees run the
articulated-body algorithm where it applies. Start values are made consistent at
``fmi2ExitInitializationMode`` / ``fmi3ExitInitializationMode``. Time parameters must be
expressions (Python callables cannot run without Python). FMU state get/set/serialize is
supported; binaries are built for Linux x86-64 only.

The integration method of Co-Simulation is the tunable parameter ``method`` (FMI 2.0: an
Integer, FMI 3.0: an Enumeration; 0 = ``rkstab``, the explicit stabilized DOPRI5 that continues
past communication points; 1 = ``stiff``, Radau IIA 5, which stops at each one; 2 = ``dop853``,
the stabilized Dormand-Prince 8(5,3)); ``method=`` of the
build chooses its start value (its old name ``solver``, of the build and of FMI 2.0 FMUs, works
for one release with a deprecation message), and setting it between do-steps switches the method
(the integrator restarts at the next step). At fmi2Terminate / fmi3Terminate the work of each
method is logged under ``logStatistics``.
"""

from __future__ import annotations

import pathlib
import platform
import tempfile
import uuid
import weakref
import zipfile
from dataclasses import dataclass, field

from ..animation.model_view import view_resources
from ..codegen.c_model import MODEL_FILES, MODEL_HEADER, model_sources
from ..codegen.c_source import sizes
from ..codegen.compile import CompileError, compile_objects, find_compiler, run_compiler
from ..codegen.fmu_variables import engine_variables, fmu_variables
from ..core.constants import FORMULATION_KINDS
from ..core.errors import ModelError, renamed_keyword
from ..core.formulation_choice import DEFAULT_FORMULATION, check_formulation_name, check_nonholonomic
from ..core.solver_settings import DEFAULT_METHOD, DEPRECATED_FMU_NAMES, check_setting
from ..equations.derive import derive
from ..equations.mass_regularity import check_regular_mass
from ..model import Model
from ..model.initial_values import condition_variables
from ..model.loader import load_model
from ..runtime import ENGINE_HEADERS, ENGINE_SOURCES, source
from .fmi_options import (
    DEFAULT_FMI_VERSION,
    DEFAULT_INTERFACE,
    FMU_LAYER_HEADERS,
    FMU_LAYER_SOURCES,
    GLUE,
    INTERFACES_HEADER,
    PLATFORM_DIR,
    check_fmi_options,
    interfaces_header,
)
from .model_description import fmu_path, model_description_xml, model_identifier
from .model_description_fmi3 import build_description
from .reference_results import documentation_files

#: the name of FMI 3.0's build description in sources/
BUILD_DESCRIPTION = "buildDescription.xml"
#: formulations the C runtime offers for models with loops: all of the engine's
NATIVE_FORMULATIONS = tuple(k for k in FORMULATION_KINDS if k != "minimal")
CFLAGS = ("-std=c99", "-shared", "-fPIC", "-O2", "-fno-math-errno", "-Wall", "-Wextra", "-fvisibility=hidden")


def runtime_files(fmi_version: int) -> tuple[str, ...]:
    """The files of ``mbsfmu/runtime`` in the sources/ of an FMU of ``fmi_version``."""
    return (GLUE[fmi_version], *FMU_LAYER_SOURCES, *FMU_LAYER_HEADERS, *ENGINE_SOURCES, *ENGINE_HEADERS)


def compiled_sources(fmi_version: int) -> tuple[str, ...]:
    """The C files compiled into the binary of an FMU of ``fmi_version``."""
    return (GLUE[fmi_version], *FMU_LAYER_SOURCES, *ENGINE_SOURCES, *MODEL_FILES)


#: the C files compiled into an FMI 2.0 FMU's binary
COMPILED_SOURCES = compiled_sources(2)


def fmi_include_dir(fmi_version: int = 2) -> pathlib.Path:
    """Folder with the FMI headers of ``fmi_version`` (fmi2Functions.h ..., fmi3Functions.h ...):
    fmpy's c-code folder."""
    try:
        import fmpy
    except ImportError:  # pragma: no cover
        raise CompileError("the FMI headers are taken from fmpy: install fmpy") from None
    d = pathlib.Path(fmpy.__file__).resolve().parent / "c-code"
    header = f"fmi{fmi_version}Functions.h"
    if not (d / header).exists():  # pragma: no cover
        raise CompileError(f"{header} not found in {d}")
    return d


def _check_platform() -> None:
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise CompileError(f"native FMUs are built for Linux x86-64 only (this is {platform.system()} "
                           f"{platform.machine()})")


@dataclass(frozen=True)
class NativeFmuParts:
    """Everything of a native FMU but its binary."""

    name: str                    # the model's name
    ident: str                   # modelIdentifier: the binary's name
    guid: str                    # FMI 2.0 guid / FMI 3.0 instantiationToken (the C model's MBS_GUID)
    fmi_version: int
    interface: str
    model_description: str       # modelDescription.xml
    generated: dict              # files of sources/ written for this model: name -> text
    runtime: tuple               # files of sources/ copied from mbsfmu/runtime
    compiled: tuple              # the files of sources/ compiled into the binary
    resources: dict = field(default_factory=dict)  # files of resources/: archive name -> text

    @property
    def binary(self) -> str:
        """The binary's path inside the FMU."""
        return f"binaries/{PLATFORM_DIR[self.fmi_version]}/{self.ident}.so"

    def sources(self) -> list[str]:
        """The names of the files in the FMU's sources/ folder."""
        return sorted({*self.runtime, *self.generated})


def native_fmu_parts(model, formulation: str | None = None, method: str = DEFAULT_METHOD,
                     fmi_version=DEFAULT_FMI_VERSION, interface: str = DEFAULT_INTERFACE) -> NativeFmuParts:
    """The :class:`NativeFmuParts` of a native FMU of ``model`` (a model file or a System); the
    arguments as :func:`build_native_fmu` takes them.  Every refusal of a build is raised here,
    before anything is compiled or written."""
    check_setting("method", method, api=True)  # before any work
    fmi_version, interface = check_fmi_options(fmi_version, interface)
    system = model if isinstance(model, Model) else load_model(pathlib.Path(model))
    if formulation is not None:
        check_formulation_name(formulation)
    formulation = formulation or DEFAULT_FORMULATION
    if not system.constrained:
        formulation = DEFAULT_FORMULATION  # trees run the minimal ODE whatever was asked
    if formulation not in NATIVE_FORMULATIONS:
        raise ModelError(f"{system.name}: formulation {formulation!r} needs a system without "
                         f"constraints (for loops choose one of {', '.join(NATIVE_FORMULATIONS)})")
    check_nonholonomic(system, formulation)
    check_regular_mass(derive(system), formulation)
    callables = [p.name for p in system.time_parameters.values() if p.functions is not None]
    if callables:
        raise ModelError(f"{system.name}: time parameter(s) {', '.join(callables)} are given as "
                         "Python functions, which cannot run in a native FMU; give them as "
                         "expressions of t, or build the pythonfmu kind")
    variables = fmu_variables(system, method)  # fails early (e.g. constants without values)
    n = sizes(derive(system))
    ident = model_identifier(system.name)
    nvars = (2 * n["F"] + (n["M"] > 0) + len(system.outputs) + n["NPRM"] + 4 + n["NU"]
             + len(condition_variables(system)))
    assert len(engine_variables(variables)) == nvars  # ... and the deprecated names after them
    assert [v.value_reference for v in variables[nvars:]] == list(range(nvars, len(variables)))
    assert [v.name for v in variables[nvars:]] == list(DEPRECATED_FMU_NAMES)
    compiled = compiled_sources(fmi_version)
    # the model's files are the same in every kind (so a build of another kind takes their
    # objects from the compile cache); the FMU's GUID is in fmu_interfaces.h: the first kind
    # keeps the model's, every other one has its own (an FMU state is of one kind)
    model_files = dict(_model_sources(system, formulation, method, variables, ident))
    guid = model_files.pop("guid")
    if (fmi_version, interface) != (2, "cs"):
        guid = "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"{guid}:fmi{fmi_version}:{interface}")) + "}"
    description = model_description_xml(system, ident, guid=guid, can_get_set_state=True,
                                        directional_derivatives=True, variables=variables,
                                        source_files=compiled if fmi_version == 2 else (),
                                        fmi_version=fmi_version, interface=interface)
    generated = {**model_files, INTERFACES_HEADER: interfaces_header(interface, guid)}
    assert set(model_files) == {*MODEL_FILES, MODEL_HEADER}
    if fmi_version == 3:
        generated[BUILD_DESCRIPTION] = build_description(ident, compiled)
    return NativeFmuParts(system.name, ident, guid, fmi_version, interface, description, generated,
                          runtime_files(fmi_version), compiled, view_resources(system))


#: the generated C of a model's equations per build options, while the equations live: the FMUs
#: of one System in several kinds generate it once (a large model's C takes seconds to print)
#: (by the equations' id, the entry dropped with them)
_GENERATED: dict[int, dict] = {}


def _model_sources(system, formulation: str, method: str, variables, ident: str) -> dict[str, str]:
    """:func:`~mbsfmu.codegen.c_model.model_sources` of ``system``, kept with its equations."""
    eqs = derive(system)
    if id(eqs) not in _GENERATED:
        _GENERATED[id(eqs)] = {}
        weakref.finalize(eqs, _GENERATED.pop, id(eqs), None)
    kept = _GENERATED[id(eqs)]
    key = (formulation, method, ident)
    if key not in kept:
        kept[key] = model_sources(system, formulation, variables, tag=f"native:{ident}")
    return kept[key]


def write_sources(parts: NativeFmuParts, folder: pathlib.Path) -> None:
    """Write the FMU's sources/ files into ``folder``."""
    for name in parts.runtime:
        (folder / name).write_text(source(name))
    for name, text in parts.generated.items():
        (folder / name).write_text(text)


def write_fmu(out_path: pathlib.Path, parts: NativeFmuParts, binary: pathlib.Path,
              sources: pathlib.Path, documentation: dict | None = None) -> None:
    """Write the FMU archive at ``out_path`` (replaced whole, never left half written): the model
    description, the ``binary``, the files of the folder ``sources``, the parts' resources (the
    model's view, :mod:`mbsfmu.animation.model_view`) and ``documentation``
    (archive name -> bytes: the model's reference result, :func:`.documentation_files`)."""
    tmp_fmu = out_path.with_name(out_path.name + ".tmp")
    with zipfile.ZipFile(tmp_fmu, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("modelDescription.xml", parts.model_description)
        zf.write(binary, parts.binary)
        for f in sorted(sources.iterdir()):
            zf.write(f, f"sources/{f.name}")
        for name, data in {**parts.resources, **(documentation or {})}.items():
            zf.writestr(name, data)
    tmp_fmu.replace(out_path)


def build_native_fmu(model, out_path, formulation: str | None = None, method: str | None = None, *,
                     solver: str | None = None, fmi_version=DEFAULT_FMI_VERSION,
                     interface: str = DEFAULT_INTERFACE) -> pathlib.Path:
    """Build a native FMU of ``model`` (a model file or a System) at ``out_path`` (a ``.fmu``
    file name, or a folder that receives ``<model name>.fmu``); returns its path.

    ``formulation`` chooses how loop constraints are kept: one of :data:`NATIVE_FORMULATIONS`,
    ``'qr'`` by default; tree models always run the minimal ODE.  ``method`` is the start value
    of the FMU parameter ``method``: ``'rkstab'`` (None: the default), ``'stiff'`` or ``'dop853'``
    (:data:`mbsfmu.core.solver_settings.METHODS`; also ``'explicit'`` and ``'DOP853'``).
    ``fmi_version``: 2 (FMI 2.0, the default) or 3 (FMI 3.0); ``interface``: ``'cs'``
    (Co-Simulation, the default), ``'me'`` (Model Exchange) or ``'both'`` (:mod:`.fmi_options`).
    ``solver=`` is the deprecated name of ``method=``."""
    method = renamed_keyword("build_native_fmu", "method", method, "solver", solver, DEFAULT_METHOD)
    parts = native_fmu_parts(model, formulation, method, fmi_version, interface)
    _check_platform()
    out_path = fmu_path(out_path, parts.ident)
    documentation = documentation_files(model)  # the model file's reference result, if it has one
    cc = find_compiler()
    with tempfile.TemporaryDirectory(prefix="mbsfmu_native_") as tmp:
        tmp = pathlib.Path(tmp)
        src = tmp / "sources"
        src.mkdir()
        write_sources(parts, src)
        so = tmp / parts.binary
        so.parent.mkdir(parents=True)
        # one object per file, in parallel (the generated model.c and model_aba.c of a large
        # tree take seconds each), then linked
        what = f"the native FMU of {parts.name!r}"
        (tmp / "objects").mkdir()
        objects = compile_objects([cc, *(f for f in CFLAGS if f != "-shared"),
                                   f"-I{fmi_include_dir(parts.fmi_version)}", f"-I{src}"],
                                  [src / f for f in parts.compiled], tmp / "objects", what)
        run_compiler([cc, "-shared", "-fPIC", "-o", str(so), *map(str, objects), "-lm"], what)
        write_fmu(out_path, parts, so, src, documentation)
    return out_path
