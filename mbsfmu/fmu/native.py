"""Native (Python-free) FMI 2.0 Co-Simulation FMUs: the C engine + the generated model + FMI glue.

:func:`build_native_fmu` writes the model's half of the engine's contract
(:func:`~mbsfmu.codegen.c_model.model_sources`: ``model.c``, ``model_aba.c`` and
``model_config.h``) next to the engine's sources (``mbsfmu/runtime``: the instance layer,
formulations, RKSTAB, parameter rules, linear algebra) and the FMI glue ``fmi2_glue.c`` in the
FMU's ``sources/`` folder, compiles them into ``binaries/linux64/<modelIdentifier>.so`` (no
libpython) and writes ``modelDescription.xml``. The FMU's variables and value references are
those of :func:`~mbsfmu.codegen.fmu_variables.fmu_variables`.

The FMU runs exactly the code ``simulate(backend='c')`` runs (the instance layer of
``mbs_instance.c``), so both take the same steps. Models with loops run the formulation chosen
at build time, any of :data:`NATIVE_FORMULATIONS` (``'qr'`` by default: optimal partitioning
with the projection inside every RKSTAB step, copes with redundant constraints); trees run the
articulated-body algorithm where it applies. Start values are made consistent at
``fmi2ExitInitializationMode``. Time parameters must be expressions (Python callables cannot run
without Python). FMU state get/set/serialize is supported; binaries are built for Linux x86-64
only.

The integration method is the tunable Integer parameter ``method`` (0 = ``rkstab``, the explicit
stabilized DOPRI5 that continues past communication points; 1 = ``stiff``, Radau IIA 5, which
stops at each one; 2 = ``dop853``, the stabilized Dormand-Prince 8(5,3)); ``method=`` of the
build chooses its start value (its old name ``solver``, of the build and of the FMU, works for
one release with a deprecation message), and setting it between do-steps switches the method (the
integrator restarts at the next step). At fmi2Terminate the work of each method is logged under
``logStatistics``.
"""

from __future__ import annotations

import pathlib
import platform
import tempfile
import zipfile

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
from ..runtime import ENGINE_HEADERS, ENGINE_SOURCES, source, source_dir
from .model_description import fmu_path, model_description_xml, model_identifier
from .reference_results import documentation_files

RUNTIME = source_dir()
RUNTIME_SOURCES = ("fmi2_glue.c", *ENGINE_SOURCES, *ENGINE_HEADERS)
#: the C files compiled into the FMU's binary
COMPILED_SOURCES = ("fmi2_glue.c", *ENGINE_SOURCES, *MODEL_FILES)
#: formulations the C runtime offers for models with loops: all of the engine's
NATIVE_FORMULATIONS = tuple(k for k in FORMULATION_KINDS if k != "minimal")
CFLAGS = ("-std=c99", "-shared", "-fPIC", "-O2", "-fno-math-errno", "-Wall", "-Wextra", "-fvisibility=hidden")


def fmi_include_dir() -> pathlib.Path:
    """Folder with the FMI 2.0 headers (fmi2Functions.h ...): fmpy's c-code folder."""
    try:
        import fmpy
    except ImportError:  # pragma: no cover
        raise CompileError("the FMI 2.0 headers are taken from fmpy: install fmpy") from None
    d = pathlib.Path(fmpy.__file__).resolve().parent / "c-code"
    if not (d / "fmi2Functions.h").exists():  # pragma: no cover
        raise CompileError(f"fmi2Functions.h not found in {d}")
    return d


def _platform_dir() -> str:
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise CompileError(f"native FMUs are built for linux64 only (this is {platform.system()} "
                           f"{platform.machine()})")
    return "linux64"


def build_native_fmu(model, out_path, formulation: str | None = None, method: str | None = None, *,
                     solver: str | None = None) -> pathlib.Path:
    """Build a native FMI 2.0 Co-Simulation FMU of ``model`` (a model file or a System) at
    ``out_path`` (a ``.fmu`` file name, or a folder that receives ``<model name>.fmu``).

    ``formulation`` chooses how loop constraints are kept: one of :data:`NATIVE_FORMULATIONS`,
    ``'qr'`` by default; tree models always run the minimal ODE.  ``method`` is the start value
    of the FMU parameter ``method``: ``'rkstab'`` (None: the default), ``'stiff'`` or ``'dop853'``
    (:data:`mbsfmu.core.solver_settings.METHODS`; also ``'explicit'`` and ``'DOP853'``).
    ``solver=`` is the deprecated name of ``method=``."""
    method = renamed_keyword("build_native_fmu", "method", method, "solver", solver, DEFAULT_METHOD)
    check_setting("method", method, api=True)  # before any work
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
    eqs = derive(system)
    n = sizes(eqs)
    ident = model_identifier(system.name)
    files = model_sources(system, formulation, variables, tag=f"native:{ident}")
    guid = files["guid"]
    xml = model_description_xml(system, ident, guid=guid, can_get_set_state=True,
                                directional_derivatives=True, source_files=COMPILED_SOURCES,
                                variables=variables)
    nvars = (2 * n["F"] + (n["M"] > 0) + len(system.outputs) + n["NPRM"] + 4 + n["NU"]
             + len(condition_variables(system)))
    assert len(engine_variables(variables)) == nvars  # ... and the deprecated names after them
    assert [v.value_reference for v in variables[nvars:]] == list(range(nvars, len(variables)))
    assert [v.name for v in variables[nvars:]] == list(DEPRECATED_FMU_NAMES)

    out_path = fmu_path(out_path, ident)
    documentation = documentation_files(model)  # the model file's reference result, if it has one
    plat = _platform_dir()
    cc = find_compiler()
    with tempfile.TemporaryDirectory(prefix="mbsfmu_native_") as tmp:
        tmp = pathlib.Path(tmp)
        src = tmp / "sources"
        src.mkdir()
        for name in RUNTIME_SOURCES:
            (src / name).write_text(source(name))
        for name in (*MODEL_FILES, MODEL_HEADER):
            (src / name).write_text(files[name])
        so = tmp / "binaries" / plat / f"{ident}.so"
        so.parent.mkdir(parents=True)
        # one object per file, in parallel (the generated model.c and model_aba.c of a large
        # tree take seconds each), then linked
        what = f"the native FMU of {system.name!r}"
        (tmp / "objects").mkdir()
        objects = compile_objects([cc, *(f for f in CFLAGS if f != "-shared"), f"-I{fmi_include_dir()}",
                                   f"-I{src}"], [src / f for f in COMPILED_SOURCES], tmp / "objects", what)
        run_compiler([cc, "-shared", "-fPIC", "-o", str(so), *map(str, objects), "-lm"], what)
        tmp_fmu = out_path.with_name(out_path.name + ".tmp")
        with zipfile.ZipFile(tmp_fmu, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("modelDescription.xml", xml)
            zf.write(so, f"binaries/{plat}/{ident}.so")
            for f in sorted(src.iterdir()):
                zf.write(f, f"sources/{f.name}")
            for name, data in documentation.items():
                zf.writestr(name, data)
        tmp_fmu.replace(out_path)
    return out_path
