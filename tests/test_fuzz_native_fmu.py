"""Fuzz suite of the native FMU: random FMI call sequences (tests/fuzz/fmi_fuzz.c) compiled with
the FMU's own sources/, plainly and with AddressSanitizer + UndefinedBehaviorSanitizer.

Each run must end with 0 bad calls accepted, 0 refusals without a message naming the function and
culprit, 0 refused calls that changed the instance, 0 results lost after a failed step, 0 errors
without a message and 0 good calls refused; the sanitized build must print no sanitizer report.
The seeds are fixed, so a failure is reproducible with the command the assertion prints.
"""

import os
import pathlib
import re
import subprocess
import zipfile

import pytest
from fmu_support import MODELS

fmpy = pytest.importorskip("fmpy")

from mbsfmu.fmu.native import COMPILED_SOURCES, build_native_fmu, fmi_include_dir  # noqa: E402

DRIVER = pathlib.Path(__file__).resolve().parent / "fuzz" / "fmi_fuzz.c"
#: model -> number of calls per build (the sanitized build is ~5x slower; both take seconds)
CALLS = {"slider_crank": 30000, "cart_pendulum": 30000}
#: failed steps expected: the cart's input takes absurd values (1e300) that overflow the state
FAILED_STEPS = {"slider_crank": 0, "cart_pendulum": 3}
#: the draws follow the variable table (moved on when issue 24 added the deprecated name solver)
SEED = 20261126
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]


def description(fmu: pathlib.Path) -> str:
    """The driver's description file: the GUID and each variable's vr, kind and name."""
    md = fmpy.read_model_description(str(fmu))
    lines = [f"guid {md.guid}"]
    solver = {"solver_rtol", "solver_atol", "max_internal_step"}
    for v in sorted(md.modelVariables, key=lambda v: v.valueReference):
        if v.causality == "output":
            kind = "calc" if v.initial == "calculated" else "state"
        elif v.causality == "input":
            kind = "input"
        elif v.name in solver:
            kind = "solver"
        elif v.type == "Integer":
            kind = "method"  # the integration method 'method', or its deprecated name 'solver'
        else:
            kind = "fixed" if v.variability == "fixed" else "tunable"
        assert " " not in v.name
        lines.append(f"{v.valueReference} {kind} {v.name}")
    return "\n".join(lines) + "\n"


def build_driver(fmu: pathlib.Path, out: pathlib.Path, sanitize: bool) -> pathlib.Path:
    src = out / "sources"
    if not src.exists():
        with zipfile.ZipFile(fmu) as z:
            z.extractall(out)
    exe = out / ("fuzz_asan" if sanitize else "fuzz")
    cmd = ["gcc", "-std=c99", "-g", "-O1" if sanitize else "-O2", "-Wall", "-Wextra", "-Werror",
           *(SANITIZE if sanitize else []), f"-I{fmi_include_dir()}", f"-I{src}",
           str(DRIVER), *(str(src / f) for f in COMPILED_SOURCES), "-o", str(exe), "-lm"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"
    return exe


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    out = tmp_path_factory.mktemp("fuzz_fmus")
    return {name: build_native_fmu(MODELS / f"{name}.py", out) for name in CALLS}


def sanitizer_report(stderr: str) -> bool:
    """AddressSanitizer/LeakSanitizer ('==N==ERROR: ...Sanitizer') or UBSan ('runtime error:')."""
    return "Sanitizer" in stderr or "runtime error:" in stderr


def run_fuzz(exe, desc, seed, calls, env=None):
    res = subprocess.run([str(exe), str(desc), str(seed), str(calls)], capture_output=True,
                         text=True, timeout=600, env=env)
    cmd = f"{exe} {desc} {seed} {calls}"
    assert res.returncode == 0, f"{cmd} exited {res.returncode}:\n{res.stderr[-4000:]}"
    m = re.search(r"calls=\d+.*", res.stdout)
    assert m, res.stdout
    counts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(0))}
    return counts, res.stderr, cmd


@pytest.mark.parametrize("sanitize", [False, True], ids=["plain", "asan-ubsan"])
@pytest.mark.parametrize("name", list(CALLS))
def test_random_call_sequences(fmus, tmp_path_factory, name, sanitize):
    out = tmp_path_factory.mktemp(f"fuzz_{name}")
    desc = out / "description.txt"
    desc.write_text(description(fmus[name]))
    exe = build_driver(fmus[name], out, sanitize)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    counts, stderr, cmd = run_fuzz(exe, desc, SEED, CALLS[name], env)
    print(f"{name} ({'asan+ubsan' if sanitize else 'plain'}): {counts}")
    assert not sanitizer_report(stderr), f"{cmd}\n{stderr[-4000:]}"
    assert counts["calls"] >= CALLS[name]
    # the sequences reach deep states: refusals, steps that pass and fail, restored states
    assert counts["bad"] >= CALLS[name] // 10
    assert counts["steps_ok"] >= 800 and counts["steps_failed"] >= FAILED_STEPS[name]
    assert counts["restored"] >= 50 and counts["deserialized"] >= 20
    for key in ("accepted", "unnamed", "changed", "lost", "silent", "refused_good"):
        assert counts[key] == 0, f"{key}={counts[key]}: {cmd}\n{stderr[-4000:]}"


def test_the_sanitizers_are_active(fmus, tmp_path):
    """The sanitized driver reports a heap over-read it is made to do, in the words the fuzz test
    looks for (so a clean fuzz run means something)."""
    exe = build_driver(fmus["cart_pendulum"], tmp_path, sanitize=True)
    res = subprocess.run([str(exe), "--selftest"], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1"))
    assert res.returncode != 0
    assert sanitizer_report(res.stderr)
