"""Shared by the compiled-backend tests: a small model, and the build of the integrators' C
test harnesses."""

import pathlib
import subprocess

import sympy as sp

from mbsfmu import System, rot_z


def shaker() -> System:
    """A pendulum on a pivot driven along x by a time parameter (exercises the tp argument)."""
    s = System("shaker")
    a, w, m, l, g = s.constants(a=0.1, w=3.0, m=0.7, l=0.4, g=9.81)
    (phi,) = s.coordinates("phi")
    p = s.time_parameter("p", a * s.t**3 * sp.sin(w * s.t))
    s.gravity([0, -g, 0])
    s.frame("pivot", ref="ISYS", pos=[p, 0, 0])
    s.body("bob", ref="pivot", rel_rot=rot_z(phi), cg_pos=[l, 0, 0], mass=m,
           inertia=[0, m * l**2 / 12, m * l**2 / 12])
    return s


# ---------------------------------------------------------------- C harnesses of the integrators
#: the engine's C sources
RUNTIME = pathlib.Path(__file__).resolve().parents[1] / "mbsfmu" / "runtime"
#: strict C99, warnings as errors: the runtime must build warning-free
CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic"]
#: address and undefined-behaviour sanitizers, stopping at the first report
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]


def compile_harness(tmp, harness: str, sources, output, extra=(), shared=True) -> subprocess.CompletedProcess:
    """gcc the test harness text ``harness`` (written to ``tmp/harness.c``) with the runtime files
    ``sources`` into ``output`` (a shared library, or a program with ``shared=False``), with
    :data:`CFLAGS` and ``extra``; the finished process (return code and gcc's messages).  The
    headers the runtime generates from Python (mbsfmu.runtime.GENERATED_HEADERS) are written to
    ``tmp`` as the engine's build writes them."""
    from mbsfmu.runtime import GENERATED_HEADERS, source

    path = tmp / "harness.c"
    path.write_text(harness)
    for name in GENERATED_HEADERS:
        (tmp / name).write_text(source(name))
    cmd = ["gcc", *CFLAGS, *extra, *(["-shared", "-fPIC"] if shared else []), f"-I{RUNTIME}", f"-I{tmp}",
           str(path), *map(str, sources), "-lm", "-o", str(output)]
    return subprocess.run(cmd, capture_output=True, text=True)
