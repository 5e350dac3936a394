"""Fuzz suite of the native FMU: random FMI call sequences (the driver tests/fuzz/fmi_fuzz.c with
its FMI 2.0 adapter fmi2_fuzz.c or its FMI 3.0 adapter fmi3_fuzz.c) compiled with the FMU's own
sources/, plainly and with AddressSanitizer + UndefinedBehaviorSanitizer, for Co-Simulation and
Model Exchange instances of one binary.

The drivers are compiled from the sources/ of a native FMU (``mbsfmu.build_fmu``) with
``fmu_interfaces.h`` declaring both interfaces, and, for FMI 3.0, ``fmi3_glue.c`` in place of
``fmi2_glue.c`` (the contract of issue 26: one FMU layer, one glue file per version).  The
description file they read is written from :func:`mbsfmu.codegen.fmu_variables.fmu_variables`
plus the variables of Model Exchange (``der(x,2)`` at nvars + 1 + j, ``constraint_tolerance`` at
nvars + 1 + f for models with constraints); FMI 3.0 has no deprecated name ``solver``.

Each run must end with 0 bad calls accepted, 0 refusals without a message naming the function and
culprit, 0 refused calls that changed the instance, 0 results lost after a failed call, 0 errors
without a message, 0 good calls refused and 0 results that break a documented rule; the sanitized
build must print no sanitizer report.  The seeds are fixed, so a failure is reproducible with the
command the assertion prints.
"""

import os
import pathlib
import re
import subprocess
import zipfile

import pytest
from fmu_support import MODELS

fmpy = pytest.importorskip("fmpy")

from mbsfmu.codegen.c_source import sizes  # noqa: E402
from mbsfmu.codegen.compile import compile_objects, run_compiler  # noqa: E402
from mbsfmu.codegen.fmu_variables import fmu_variables  # noqa: E402
from mbsfmu.equations.derive import derive  # noqa: E402
from mbsfmu.fmu.declared_variables import declaration  # noqa: E402
from mbsfmu.fmu.native import COMPILED_SOURCES, INTERFACES_HEADER, fmi_include_dir, interfaces_header  # noqa: E402
from mbsfmu.model.loader import load_model  # noqa: E402
from mbsfmu.runtime import source  # noqa: E402

pytestmark = pytest.mark.slow

HERE = pathlib.Path(__file__).resolve().parent
DRIVER = HERE / "fmi_fuzz.c"
ADAPTERS = {2: HERE / "fmi2_fuzz.c", 3: HERE / "fmi3_fuzz.c"}
GLUES = {2: "fmi2_glue.c", 3: "fmi3_glue.c"}
#: model -> number of calls per run: about 0.6 s plain and 1 s sanitized; the builds take longer
#: (the engine, the model and the driver compiled once per model and flag set, ~5 s plain and ~9 s
#: sanitized, then an adapter and a glue per FMI version, ~1 s)
CALLS = {"slider_crank": 30000, "cart_pendulum": 30000}
#: failed steps expected: the cart's input takes absurd values (1e300) that overflow the state
FAILED_STEPS = {"slider_crank": 0, "cart_pendulum": 1}
#: the draws follow the variable table and the driver's choices (moved on with Model Exchange)
SEED = 20261204
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]

_KINDS = {"coordinate": "state", "velocity": "state", "residual": "calc", "output": "calc",
          "reaction": "calc", "input": "input", "initial_condition": "fixed", "acceleration": "accel",
          "constraint_tolerance": "ctol",
          "time": "calc"}  # the independent variable: read like a calculated output, never set


def description(model_file: pathlib.Path, guid: str, fmi_version: int) -> str:
    """The driver's description file: GUID, sizes f and m, and each variable's vr, kind and name
    (those an FMU of the FMI version that declares both interfaces declares:
    :func:`mbsfmu.fmu.declared_variables.declaration`)."""
    system = load_model(model_file)
    n = sizes(derive(system))
    lines = [f"guid {guid}", f"sizes {n['F']} {n['M']}"]
    for v in declaration(fmu_variables(system), fmi_version, "both").variables:
        if v.kind in ("solver", "deprecated"):
            kind = "method" if v.type == "Integer" else "solver"
        elif v.kind == "constant":
            kind = "fixed" if v.variability == "fixed" else "tunable"
        else:
            kind = _KINDS[v.kind]
        lines.append(f"{v.value_reference} {kind} {v.name}")
    assert all(" " not in line.split(" ", 2)[2] for line in lines[2:])
    return "\n".join(lines) + "\n"


def extract_sources(fmu: pathlib.Path, out: pathlib.Path, guid: str) -> pathlib.Path:
    """The FMU's sources/ under ``out``, declaring both interfaces (with the FMU's ``guid``), with
    FMI 3.0's glue beside FMI 2.0's."""
    src = out / "sources"
    with zipfile.ZipFile(fmu) as z:
        z.extractall(out)
    (src / INTERFACES_HEADER).write_text(interfaces_header("both", guid))
    (src / GLUES[3]).write_text(source(GLUES[3]))
    return src


def driver_flags(src: pathlib.Path, sanitize: bool) -> list[str]:
    return ["-std=c99", "-g", "-O1" if sanitize else "-O2", "-Wall", "-Wextra", "-Werror",
            *(SANITIZE if sanitize else []), f"-I{fmi_include_dir()}", f"-I{HERE}", f"-I{src}"]


#: the objects of the engine, the model and the version-free driver per folder (build_driver),
#: by source file name
_SHARED: dict[pathlib.Path, dict[str, pathlib.Path]] = {}
#: every object linked into a driver (by its executable), by source file name
LINKED: dict[pathlib.Path, dict[str, pathlib.Path]] = {}


def build_driver(src: pathlib.Path, fmi_version: int, sanitize: bool) -> pathlib.Path:
    """The driver for the FMI version, plain or sanitized, next to ``src``: the engine, the model
    and the version-free driver are compiled once per flag set, the adapter and the glue of the
    version linked with them."""
    flags = driver_flags(src, sanitize)
    objects = src.parent / f"objects_{'asan' if sanitize else 'plain'}_{fmi_version}"
    shared = src.parent / f"objects_{'asan' if sanitize else 'plain'}"
    if shared not in _SHARED:  # (compile_objects may hand out objects of its cache)
        shared.mkdir()
        sources = [DRIVER, *(src / f for f in COMPILED_SOURCES if f != GLUES[2])]
        _SHARED[shared] = dict(zip((p.name for p in sources),
                                   compile_objects(["gcc", *flags], sources, shared, "the fuzz driver")))
    objects.mkdir()
    sources = [ADAPTERS[fmi_version], src / GLUES[fmi_version]]
    own = compile_objects(["gcc", *flags], sources, objects, "the fuzz driver")
    exe = src.parent / f"fuzz{fmi_version}{'_asan' if sanitize else ''}"
    LINKED[exe] = {**_SHARED[shared], **dict(zip((p.name for p in sources), own))}
    run_compiler(["gcc", *flags, "-o", str(exe), *map(str, LINKED[exe].values()), "-lm"], "the fuzz driver")
    return exe


@pytest.fixture(scope="module")
def drivers(built_fmu, tmp_path_factory):
    """``driver(name, fmi_version, sanitize)``: the driver's executable and description file for
    the model, built once per module."""
    built, folders = {}, {}

    def get(name, fmi_version, sanitize):
        if name not in folders:
            fmu = built_fmu(MODELS / f"{name}.py")
            out = tmp_path_factory.mktemp(f"fuzz_{name}")
            guid = fmpy.read_model_description(str(fmu)).guid
            for v in ADAPTERS:
                (out / f"description{v}.txt").write_text(description(MODELS / f"{name}.py", guid, v))
            folders[name] = extract_sources(fmu, out, guid)
        key = (name, fmi_version, sanitize)
        if key not in built:
            built[key] = build_driver(folders[name], fmi_version, sanitize)
        return built[key], folders[name].parent / f"description{fmi_version}.txt"

    return get


def sanitizer_report(stderr: str) -> bool:
    """AddressSanitizer/LeakSanitizer ('==N==ERROR: ...Sanitizer') or UBSan ('runtime error:')."""
    return "Sanitizer" in stderr or "runtime error:" in stderr


def run_fuzz(exe, desc, seed, calls, env=None):
    """Run the driver; its counters, stderr and the command line (to reproduce a failure)."""
    args = [str(exe), str(desc), str(seed), str(calls)]
    res = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env)
    cmd = " ".join(args)
    assert res.returncode == 0, f"{cmd} exited {res.returncode}:\n{res.stderr[-4000:]}"
    m = re.search(r"calls=\d+.*", res.stdout)
    assert m, res.stdout
    counts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(0))}
    return counts, res.stderr, cmd


ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1",
           UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")


@pytest.mark.parametrize("sanitize", [False, True], ids=["plain", "asan-ubsan"])
@pytest.mark.parametrize("fmi_version", [2, 3], ids=["fmi2", "fmi3"])
@pytest.mark.parametrize("name", list(CALLS))
def test_random_call_sequences(drivers, name, fmi_version, sanitize):
    exe, desc = drivers(name, fmi_version, sanitize)
    counts, stderr, cmd = run_fuzz(exe, desc, SEED, CALLS[name], ENV)
    print(f"{name} FMI {fmi_version} ({'asan+ubsan' if sanitize else 'plain'}): {counts}")
    assert not sanitizer_report(stderr), f"{cmd}\n{stderr[-4000:]}"
    assert counts["calls"] >= CALLS[name]
    # the sequences reach deep states: refusals, steps that pass and fail, restored states, Model
    # Exchange integration with derivative evaluations, events and (with loops) projections
    assert counts["bad"] >= CALLS[name] // 3
    assert counts["steps_ok"] >= 600 and counts["steps_failed"] >= FAILED_STEPS[name]
    assert counts["restored"] >= 50 and counts["deserialized"] >= 100
    assert counts["me_steps"] >= 3000 and counts["derivatives"] >= counts["me_steps"]
    if name == "slider_crank":
        assert counts["projections"] >= 3000 and counts["events"] >= counts["projections"]
    else:
        assert counts["projections"] == 0 and counts["events"] >= 50
    if fmi_version == 3 and name == "cart_pendulum":  # outputs that depend on an input
        assert counts["dual_checks"] >= 10
    for key in ("accepted", "unnamed", "changed", "lost", "silent", "refused_good", "wrong"):
        assert counts[key] == 0, f"{key}={counts[key]}: {cmd}\n{stderr[-4000:]}"


#: glue broken on purpose (file, text, replacement) and the counter of the run that must see it
MUTANTS = {
    "continuous states set in event mode": (
        "mbs_fmu.c", "size_t n)\n{\n    if (!me_call(c, fn, MBS_IN(MBS_FMU_CONTINUOUS))",
        "size_t n)\n{\n    if (!me_call(c, fn, MBS_IN(MBS_FMU_CONTINUOUS) | MBS_IN(MBS_FMU_EVENT))",
        "accepted"),
    "a projection that does not move the state": (
        "mbs_instance.c", "    memcpy(I->d.x, x, sizeof x);\n    I->d.me_moved = 1;\n    *changed = 1;",
        "    I->d.me_moved = 1;\n    *changed = 1;", "wrong"),
    "FMU states of the other interface taken": (
        "mbs_fmu.c", "if (interface != c->interface) {", "if (0) {", "accepted"),
}


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_the_checks_catch_a_broken_glue(drivers, tmp_path, mutant):
    """The FMI 2.0 driver linked with one file of the glue broken on purpose: the run sees it (so
    a run with 0 on every counter means something)."""
    file, text, replacement, key = MUTANTS[mutant]
    exe, desc = drivers("slider_crank", 2, False)
    src = exe.parent / "sources"
    code = (src / file).read_text()
    assert text in code, f"the mutation of {mutant!r} no longer applies to {file}"
    (tmp_path / file).write_text(code.replace(text, replacement, 1))
    (broken,) = compile_objects(["gcc", *driver_flags(src, False)], [tmp_path / file], tmp_path, "a mutant")
    objects = {**LINKED[exe], file: broken}
    mutant_exe = tmp_path / "fuzz_mutant"
    run_compiler(["gcc", "-o", str(mutant_exe), *map(str, objects.values()), "-lm"], "a mutant")
    counts, _, cmd = run_fuzz(mutant_exe, desc, SEED, CALLS["slider_crank"])
    assert counts[key] > 0, cmd


def test_the_sanitizers_are_active(drivers):
    """The sanitized driver reports a heap over-read it is made to do, in the words the fuzz test
    looks for (so a clean fuzz run means something)."""
    exe, _ = drivers("cart_pendulum", 3, True)
    res = subprocess.run([str(exe), "--selftest"], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1"))
    assert res.returncode != 0
    assert sanitizer_report(res.stderr)
