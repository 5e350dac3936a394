"""The pipeline's stages form no import cycle: every module of a stage, imported in a fresh
interpreter, loads only earlier stages (ARCHITECTURE.md: model -> equations -> formulations ->
integrators -> codegen -> runtime -> simulation -> fmu -> runner).

The top-level package is replaced by an empty one in the probe: ``mbsfmu/__init__.py`` gathers
the public API of every stage, so importing it would hide what each stage itself needs.  Imports
inside functions (optional accelerators such as ``NumericModel.use_c_kernel``) are not counted.
"""

import ast
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PIPELINE = ("model", "equations", "formulations", "integrators", "codegen", "runtime", "simulation", "fmu",
            "runner")
#: what every stage may use: the exceptions, the solver settings, and the C engine's sources and
#: the numbers it shares with Python (the runtime package module and runtime.constants, which
#: import nothing of mbsfmu)
SHARED = {"mbsfmu.errors", "mbsfmu.solver_settings", "mbsfmu.runtime", "mbsfmu.runtime.constants"}

PROBE = r"""
import importlib, json, pkgutil, sys, types

root, stage = sys.argv[1:]
top = types.ModuleType("mbsfmu")
top.__path__ = [root + "/mbsfmu"]
sys.modules["mbsfmu"] = top
package = importlib.import_module("mbsfmu." + stage)
for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    try:
        importlib.import_module(info.name)
    except ModuleNotFoundError as exc:  # an optional dependency (fmpy, pythonfmu) not installed
        if exc.name.startswith("mbsfmu"):
            raise
print(json.dumps(sorted(m for m in sys.modules if m.startswith("mbsfmu."))))
"""


@pytest.mark.parametrize("stage", PIPELINE)
def test_stage_imports_only_earlier_stages(stage):
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT), stage], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout.splitlines()[-1])
    allowed = PIPELINE[: PIPELINE.index(stage) + 1]
    later = [m for m in loaded if m not in SHARED and m.split(".")[1] not in allowed]
    assert not later, f"mbsfmu.{stage} imports later stages: {later}"


#: imports inside functions that go against the pipeline, each for a reason; a new one fails below
LATE_BACKWARD_IMPORTS = {
    ("mbsfmu.model.base", "mbsfmu.equations"): "Model.equations(), the derivation as a method",
    ("mbsfmu.model.system", "mbsfmu.equations.parameter_requirements"): "the mass-property rules, "
                                                                         "written once",
    ("mbsfmu.model.lagrangian", "mbsfmu.equations.kinematics"): "LagrangianSystem.velocity(), the total "
                                                                 "time derivative written once",
    ("mbsfmu.equations.numeric_model", "mbsfmu.codegen.c_backend"): "NumericModel.use_c_kernel, the compiled "
                                                                     "per-state evaluation",
    ("mbsfmu.formulations.minimal_ode", "mbsfmu.codegen.c_rhs"): "the compiled right-hand side of trees",
    ("mbsfmu.codegen.c_rhs", "mbsfmu.runtime.engine"): "CompiledRHS, the engine's right-hand side "
                                                        "(no copy of its own)",
    ("mbsfmu.codegen.c_model", "mbsfmu.fmu.model_description"): "the FMU variables the engine's model "
                                                                "source lists",
}


def _imports(path: pathlib.Path, module: str):
    """The modules that the import statements of a module name (module level or not)."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            if target == "mbsfmu":
                yield from (f"mbsfmu.{a.name}" for a in node.names)
            else:
                yield target
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


def test_late_imports_against_the_pipeline_are_the_known_ones():
    """Imports of later stages (only inside functions, or the test above fails) are the listed ones."""
    found = set()
    for path in sorted((ROOT / "mbsfmu").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        stage = module.split(".")[1] if module.count(".") else None
        if stage not in PIPELINE:
            continue
        for target in _imports(path, module):
            if not target.startswith("mbsfmu.") or target in SHARED:
                continue
            other = target.split(".")[1]
            if other in PIPELINE and PIPELINE.index(other) > PIPELINE.index(stage):
                found.add((module, target))
    assert found == set(LATE_BACKWARD_IMPORTS)
