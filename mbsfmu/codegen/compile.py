"""Compile generated C source into a shared library, cached by the hash of source and flags.

The cache directory is ``$MBSFMU_CACHE`` or ``~/.cache/mbsfmu``; the compiler is ``$CC`` or
``gcc`` (falling back to ``cc``).  Files are written under temporary names and renamed into
place, so parallel processes compiling the same source do not collide.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

from ..errors import MbsError

CFLAGS = ("-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared")
LIBS = ("-lm",)

#: number of compiler runs in this process (the cache avoids them)
compile_count = 0


class CompileError(MbsError, RuntimeError):
    """The C compiler is missing or rejected the generated source."""


def cache_dir() -> pathlib.Path:
    d = os.environ.get("MBSFMU_CACHE")
    return pathlib.Path(d) if d else pathlib.Path.home() / ".cache" / "mbsfmu"


def find_compiler() -> str:
    cc = os.environ.get("CC")
    if cc:
        if shutil.which(cc) is None:
            raise CompileError(f"C compiler {cc!r} (from $CC) not found on PATH")
        return cc
    for cand in ("gcc", "cc"):
        if shutil.which(cand):
            return cand
    raise CompileError("no C compiler found: install gcc (or set $CC to a C99 compiler) to use "
                       "the compiled backend")


def _atomic_write(path: pathlib.Path, data: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise


def compile_shared(source: str, name: str) -> pathlib.Path:
    """Path of a shared library built from ``source`` (compiled once, then taken from the cache)."""
    global compile_count
    cc = find_compiler()
    key = hashlib.sha256("\0".join([source, cc, *CFLAGS, *LIBS]).encode()).hexdigest()[:24]
    safe = re.sub(r"[^A-Za-z0-9_]", "_", name)[:40] or "model"
    d = cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    so = d / f"{safe}_{key}.so"
    if so.exists():
        return so
    src = d / f"{safe}_{key}.c"
    _atomic_write(src, source)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=so.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        cmd = [cc, *CFLAGS, "-o", tmp, str(src), *LIBS]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as exc:
            raise CompileError(f"cannot run C compiler {cc!r}: {exc}") from None
        compile_count += 1
        if res.returncode != 0:
            raise CompileError(f"compiling {name!r} failed ({' '.join(cmd)}):\n"
                               f"{res.stderr.strip() or res.stdout.strip()}")
        os.replace(tmp, so)
    finally:
        pathlib.Path(tmp).unlink(missing_ok=True)
    return so
