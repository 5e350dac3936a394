"""The import graph of ``mbsfmu`` and ``blocks`` is a stack of layers that only point down.

The graph is read from the source by ``ast``: every import statement counts, at module level and
inside functions; relative imports are resolved; ``from package import name`` imports the
submodule ``package.name`` where that is a module, else the package (its ``__init__``).  (Python
also runs the ``__init__`` of every parent package; the graph leaves that implicit edge out, so a
package's ``__init__`` may gather its submodules' names without tying them to each other.)

A package is ``mbsfmu.<name>`` (a subpackage, or a top-level module such as ``cli``), the
top-level ``mbsfmu`` itself (its ``__init__``, the public API) and ``blocks``.  Checked:

* no cycle among modules and none among packages;
* :data:`LAYERS`, bottom to top: a package imports only packages of the layers below its own and
  those listed before it in its own layer (the one fixed order within a layer), never a pair of
  :data:`FENCED`;
* the fence between the engine and the Python reference: no module of ``mbsfmu.engine`` nor any
  module an engine run starts from (:data:`ENGINE_RUN`) reaches ``mbsfmu.reference``, however
  indirectly;
* an import inside a function is of an optional or heavy third-party package of
  :data:`LATE_IMPORTS`, not of mbsfmu or blocks (an import there would hide a cycle from a
  reader, not from Python) but for the few of :data:`LATE_INTERNAL`, each pointing down and kept
  late for the reason it gives.
"""

import ast
import collections
import pathlib

import pytest

ROOT = next(p for p in pathlib.Path(__file__).resolve().parents if (p / "mbsfmu" / "__init__.py").exists())

#: the layers, bottom to top; within a layer, a package may import the packages listed before it
LAYERS = (
    ("core", ("core",         # errors, settings and their ranges, constants shared with C, checks
              "runtime")),    # the C engine's sources (Python: only the helper that finds them)
    ("model", ("model",)),
    ("equations", ("equations",)),
    ("codegen", ("codegen",)),
    ("engine", ("engine",     # the Python side of the C engine
                "reference")),  # the Python formulations and integrators: the oracle, the fallback
    ("uses", ("plotting",  # a plot's content said once, drawn as an image or an interactive page
              "animation", "simulation", "fmu", "runner", "blocks", "analysis", "study",
              "identification",  # fit: runs simulate, takes the study's bounds
              "sensitivity")),   # gradients and optimization: least-squares metrics read measured data
    ("tools", ("natural", "mbsfmu", "cli", "__main__")),
)
#: packages of one layer that never import each other
FENCED = {("engine", "reference"), ("reference", "engine")}
#: where the runs on the engine start: none of them may reach the reference
ENGINE_RUN = ("mbsfmu.simulation.engine_run", "mbsfmu.fmu.native")

#: the third-party packages a function may import, and why not at the top of the module
LATE_IMPORTS = {
    "fmpy": "optional (the fmu extra): FMU blocks, FMU sweeps, the FMI headers of native builds",
    "pythonfmu": "optional (the fmu extra): the pythonfmu export",
    "matplotlib": "heavy: plots and animations only",
    "plotly": "heavy: the interactive pages of plots (.html) only",
    "dask": "heavy: the sweeps' schedulers",
    "distributed": "heavy: the sweeps' clusters",
    "cloudpickle": "comes with distributed: a System sent to a sweep's workers",
    "control": "optional (the control extra): python-control models of a linearization",
    "tqdm": "progress bars of the CLI and the sweeps only",
    "pyarrow": "heavy: parquet files of results",
    "scipy.signal": "heavy (about 1 s to import): LTI blocks, transfer functions, pole placement",
    "scipy.stats": "heavy (about 1 s to import): the random designs of sweeps and the CLI",
    "SALib": "optional (the sensitivity extra): the designs and estimators of global sensitivity",
    "trimesh": "heavy (about 0.5 s to import): the mesh files of System.visual only",
}

#: the imports of mbsfmu or blocks inside a function, each pointing down (the graph and its checks
#: include it) and kept there for the reason given
LATE_INTERNAL = {
    ("mbsfmu.analysis.control_design", "blocks.control"):
        "StateFeedbackGain.block(): `import mbsfmu` imports the analysis, and loads no module of blocks, "
        "so that the runner is seen to run without them (tests/runner/test_ssp.py)",
}


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for top in ("mbsfmu", "blocks"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()

Import = collections.namedtuple("Import", "source target line in_function")


class _Imports(ast.NodeVisitor):
    """The import statements of one module: (line, in a function, the names they import)."""

    def __init__(self, module: str, path: pathlib.Path):
        self.package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        self.depth = 0
        self.found = []  # (line, in_function, [dotted names, each a module or module.attribute])

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node):
        self.found.append((node.lineno, self.depth > 0, [a.name for a in node.names]))

    def visit_ImportFrom(self, node):
        if node.level:
            parts = self.package.split(".")
            base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
        else:
            base = node.module
        self.found.append((node.lineno, self.depth > 0, [f"{base}.{a.name}" for a in node.names]))


def _resolve(name: str) -> str | None:
    """The module of mbsfmu or blocks that the dotted ``name`` imports (a module, or a name in
    one), or None for a third-party or standard module."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _all_imports():
    """Every import statement of every module, and the third-party ones inside functions."""
    internal, late_third_party = [], []
    for module, path in MODULES.items():
        visitor = _Imports(module, path)
        visitor.visit(ast.parse(path.read_text()))
        for line, in_function, names in visitor.found:
            for name in names:
                target = _resolve(name)
                if target is None:
                    if in_function:
                        late_third_party.append(Import(module, name, line, True))
                elif target != module:
                    internal.append(Import(module, target, line, in_function))
    return internal, late_third_party


IMPORTS, LATE_THIRD_PARTY = _all_imports()
GRAPH = collections.defaultdict(set)
for _i in IMPORTS:
    GRAPH[_i.source].add(_i.target)


def package(module: str) -> str:
    """The package of a module (see the module docstring)."""
    parts = module.split(".")
    return parts[0] if parts[0] == "blocks" or len(parts) == 1 else parts[1]


def _layer_of() -> dict[str, tuple[int, int]]:
    """package -> (layer index, position within the layer)."""
    return {p: (i, j) for i, (_, packages) in enumerate(LAYERS) for j, p in enumerate(packages)}


def allowed(source: str, target: str) -> bool:
    """Whether package ``source`` may import package ``target`` (see :data:`LAYERS`)."""
    where = _layer_of()
    return source == target or (where[target] < where[source] and (source, target) not in FENCED)


def cycles(graph: dict) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return out


def _package_graph() -> dict[str, set]:
    out = collections.defaultdict(set)
    for source, targets in GRAPH.items():
        for target in targets:
            if package(source) != package(target):
                out[package(source)].add(package(target))
    return out


def _where(source: str, target: str) -> str:
    lines = sorted({i.line for i in IMPORTS if i.source == source and i.target == target})
    return f"{MODULES[source].relative_to(ROOT)}:{','.join(map(str, lines))} imports {target}"


def test_the_graph_is_read():
    """The reader finds what the layers are made of (a guard against a reader that sees nothing)."""
    assert {"mbsfmu.core.errors", "mbsfmu.engine.extension", "mbsfmu.reference.formulations",
            "blocks.control"} <= set(MODULES)
    assert "mbsfmu.core.errors" in GRAPH["mbsfmu.model.base"]
    # from-import of a submodule, relative, inside a package __init__
    assert "mbsfmu.study.checks" in GRAPH["mbsfmu.study"]
    # a name imported from a package's __init__ is an import of the package
    assert "mbsfmu.model" in GRAPH["mbsfmu.study.batch"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_package_has_its_layer():
    packages = {package(m) for m in MODULES}
    listed = [p for _, ps in LAYERS for p in ps]
    assert len(listed) == len(set(listed))
    assert packages == set(listed), (f"packages missing from LAYERS: {sorted(packages - set(listed))}; "
                                     f"listed but absent: {sorted(set(listed) - packages)}")


def test_no_cycle_among_modules():
    found = cycles(GRAPH)
    assert not found, "import cycles among modules:\n" + "\n".join(
        " -> ".join(c) + "\n  " + "\n  ".join(_where(a, b) for a in c for b in sorted(GRAPH[a]) if b in c)
        for c in found)


def test_no_cycle_among_packages():
    found = cycles(_package_graph())
    assert not found, f"import cycles among packages: {found}"


@pytest.mark.parametrize("layer", [name for name, _ in LAYERS])
def test_each_package_imports_only_what_its_layer_allows(layer):
    packages = dict(LAYERS)[layer]
    wrong = [_where(s, t) for s, targets in sorted(GRAPH.items()) for t in sorted(targets)
             if package(s) in packages and not allowed(package(s), package(t))]
    assert not wrong, f"imports against the layers ({layer}):\n" + "\n".join(wrong)


def _reach(start: str) -> dict[str, str]:
    """Every module ``start`` imports, directly or not: module -> the module that imports it."""
    seen, todo = {start: ""}, [start]
    while todo:
        v = todo.pop()
        for w in GRAPH.get(v, ()):
            if w not in seen:
                seen[w] = v
                todo.append(w)
    return seen


@pytest.mark.parametrize("start", sorted(m for m in MODULES if package(m) == "engine") + list(ENGINE_RUN))
def test_engine_runs_never_reach_the_reference(start):
    reached = _reach(start)
    hit = sorted(m for m in reached if package(m) == "reference")
    if hit:
        chain, m = [], hit[0]
        while m:
            chain.append(m)
            m = reached[m]
        pytest.fail(f"{start} reaches the reference: {' <- '.join(chain)}")


def test_no_function_imports_mbsfmu_or_blocks():
    late = [f"{MODULES[i.source].relative_to(ROOT)}:{i.line} imports {i.target}" for i in IMPORTS
            if i.in_function and (i.source, i.target) not in LATE_INTERNAL]
    assert not late, "imports inside functions (move them to the top of the module):\n" + "\n".join(late)


def test_the_late_internal_imports_are_there_and_point_down():
    """Each entry of LATE_INTERNAL is an import inside a function (drop it once it is gone) that
    the layers allow."""
    late = {(i.source, i.target) for i in IMPORTS if i.in_function}
    assert set(LATE_INTERNAL) <= late, f"not imported inside a function: {sorted(set(LATE_INTERNAL) - late)}"
    assert all(allowed(package(s), package(t)) for s, t in LATE_INTERNAL)


def test_functions_import_only_optional_or_heavy_packages():
    def listed(name):
        return any(name == p or name.startswith(p + ".") for p in LATE_IMPORTS)

    wrong = [f"{MODULES[i.source].relative_to(ROOT)}:{i.line} imports {i.target}" for i in LATE_THIRD_PARTY
             if not listed(i.target)]
    assert not wrong, ("imports inside functions of packages that are neither optional nor heavy (move them "
                       "to the top of the module, or list the package in LATE_IMPORTS with the reason):\n"
                       + "\n".join(wrong))
