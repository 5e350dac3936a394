"""Compile generated C source into a shared library, cached by the hash of source and flags.

The cache directory is ``$MBSFMU_CACHE`` or ``~/.cache/mbsfmu``; the compiler is ``$CC`` or
``gcc`` (falling back to ``cc``).  Files are written under temporary names and renamed into
place, so parallel processes compiling the same source do not collide.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..core.errors import MbsError

CFLAGS = ("-std=c99", "-O2", "-fno-math-errno", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared")
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
                       "the compiled kernel")


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
    cc = find_compiler()
    key = hashlib.sha256("\0".join([source, cc, *CFLAGS, *LIBS]).encode()).hexdigest()[:24]
    safe = re.sub(r"[^A-Za-z0-9_]", "_", name)[:40] or "model"
    return _build(cc, source, f"{safe}_{key}", ".so", (), name)


class MissingPythonHeaders(CompileError):
    """Python.h of the running interpreter is not installed (no extension modules)."""


def python_include_dirs() -> list[str]:
    """The include folders of a CPython extension that uses numpy's C API; CompileError if
    Python.h is missing (the interpreter's development headers are not installed)."""
    py = sysconfig.get_paths()["include"]
    if not (pathlib.Path(py) / "Python.h").exists():
        raise MissingPythonHeaders(f"Python.h not found in {py}: install the development headers of "
                           f"this Python (e.g. python3-dev) to build extension modules")
    return [py, np.get_include()]


_NATIVE: dict[str, tuple[str, ...]] = {}


def native_flags(cc: str) -> tuple[str, ...]:
    """``("-march=native",)`` if ``cc`` accepts it, else ``()`` (asked once per compiler).

    Only for code that runs where it is compiled (the in-process kernels): FMU binaries stay
    portable."""
    if cc not in _NATIVE:
        try:
            res = subprocess.run([cc, "-march=native", "-x", "c", "-E", "-o", os.devnull, "-"],
                                 input="", capture_output=True, text=True, timeout=60)
            ok = res.returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        _NATIVE[cc] = ("-march=native",) if ok else ()
    return _NATIVE[cc]


def cpu_identity() -> str:
    """The processor's model and feature flags (part of the cache key of ``-march=native``
    builds, so a cache shared between different machines never hands one the other's code)."""
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return f"{platform.machine()} {platform.processor()}"
    keep = [ln for ln in text.splitlines()[:60] if ln.split(":")[0].strip() in ("model name", "flags")]
    return "\n".join(dict.fromkeys(keep))


def compile_extension(template: str, stem: str) -> tuple[str, pathlib.Path]:
    """(module name, path) of a CPython extension module built from ``template``.

    The module is compiled for this processor (:func:`native_flags`).  Its name is
    ``<stem>_<hash>`` (the hash covers the template, the compiler, the flags, the processor and
    the Python and numpy headers used); every ``@MODULE@`` in the template is replaced by it,
    so ``PyInit_@MODULE@`` names the init function.  Cached like :func:`compile_shared`."""
    cc = find_compiler()
    incs = python_include_dirs()
    native = native_flags(cc)
    ident = [template, cc, *CFLAGS, *LIBS, *incs, sysconfig.get_config_var("EXT_SUFFIX") or "",
             *native, cpu_identity() if native else ""]
    key = hashlib.sha256("\0".join(ident).encode()).hexdigest()[:24]
    module = f"{re.sub(r'[^A-Za-z0-9_]', '_', stem)[:40]}_{key}"
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    path = _build(cc, template.replace("@MODULE@", module), module, suffix,
                  (*native, *(f"-I{d}" for d in incs)), stem)
    return module, path


def compile_engine(files: dict[str, str], compiled: tuple[str, ...], stem: str,
                   include_dirs: tuple = (), model_files: tuple = ("model.c", "model_config.h")
                   ) -> tuple[str, pathlib.Path]:
    """(module name, path) of a CPython extension built from several C files.

    ``files`` maps file names to their text (every ``@MODULE@`` is replaced by the module name),
    ``compiled`` names the ones to compile; the others are headers, found with ``include_dirs``
    first in the same folder.  Built for this processor like :func:`compile_extension` and cached
    by the hash of every file, the compiler, the flags, the processor and the Python headers.

    Each file is compiled to an object of its own, as many at a time as there are processors,
    then linked.  A file that includes none of ``model_files`` (the generated ones: the engine's
    integrators, formulations and linear algebra) is the same for every model: its object is
    cached by the hash of its text and of the headers it includes, so a new model compiles only
    its own files and the few engine files that are sized by its ``model_config.h``.  A file
    started early by :func:`precompile_object` is waited for, not compiled again."""
    cc = find_compiler()
    incs = python_include_dirs()
    native = native_flags(cc)
    ident = [*(f"{k}\0{v}" for k, v in sorted(files.items())), *compiled, cc, *CFLAGS, *LIBS, *incs,
             *map(str, include_dirs), sysconfig.get_config_var("EXT_SUFFIX") or "", *native,
             cpu_identity() if native else ""]
    key = hashlib.sha256("\0".join(ident).encode()).hexdigest()[:24]
    module = f"{re.sub(r'[^A-Za-z0-9_]', '_', stem)[:40]}_{key}"
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    d = cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    so = d / f"{module}{suffix}"
    if so.exists():
        return module, so
    global compile_count
    common, incflags, shared_key = _object_flags(cc, include_dirs)
    with tempfile.TemporaryDirectory(dir=d, prefix=module + ".src.") as tmp:
        src = pathlib.Path(tmp)
        for name, text in files.items():
            (src / name).write_text(text.replace("@MODULE@", module))
        jobs, objects, pending = [], [], []
        for name in compiled:
            obj = _shared_object(name, files, model_files, shared_key, d)
            if obj is None:
                obj = src / (pathlib.Path(name).stem + ".o")
            objects.append(obj)
            future = _PENDING.get(obj)
            if future is not None:  # being compiled already (precompile_object)
                pending.append((obj, future))
            elif not obj.exists():
                jobs.append((len(files[name]), name, obj))
        # the largest first, so that the generated model overlaps with the small engine files
        jobs.sort(key=lambda j: j[0], reverse=True)
        cpus = max(1, (os.cpu_count() or 1) - len(pending))
        with ThreadPoolExecutor(max_workers=max(1, min(len(jobs), cpus))) as pool:
            futures = [pool.submit(_compile_object, [*common, *_size_flags(size), f"-I{src}", *incflags],
                                   src / name, obj, f"{stem!r} ({name})") for size, name, obj in jobs]
            for f in futures:
                f.result()
            for obj, f in pending:
                f.result()
                _PENDING.pop(obj, None)
        fd, out = tempfile.mkstemp(dir=d, prefix=so.name + ".", suffix=".tmp")
        os.close(fd)
        try:
            run_compiler([cc, "-shared", "-fPIC", "-o", out, *map(str, objects), *LIBS], repr(stem))
            compile_count += 1
            os.replace(out, so)
        finally:
            pathlib.Path(out).unlink(missing_ok=True)
    return module, so


def _object_flags(cc: str, include_dirs) -> tuple[list[str], list[str], list[str]]:
    """(compiler and flags, include flags, what else keys a cached object) of the objects of
    :func:`compile_engine`."""
    incs = python_include_dirs()
    native = native_flags(cc)
    common = [cc, *(f for f in CFLAGS if f != "-shared"), "-fvisibility=hidden", *native]
    incflags = [f"-I{i}" for i in (*include_dirs, *incs)]
    return common, incflags, [*common, *incflags, *LIBS, cpu_identity() if native else ""]


#: how much lower the priority of a background compile is (precompile_object)
BACKGROUND_NICENESS = 5

#: objects being compiled in the background (precompile_object): path -> future
_PENDING: dict[pathlib.Path, object] = {}
_BACKGROUND = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="mbsfmu-precompile")


def precompile_object(name: str, text: str, include_dirs: tuple = ()) -> None:
    """Start compiling the C file ``name`` (``text``, which includes no header with quotes) in
    the background to the cached object that :func:`compile_engine` links for a file of that
    name and text; compile_engine waits for it instead of compiling it again.

    A model's largest generated file (``model_aba.c``) is compiled this way while Python still
    generates the rest of the model, so gcc and the code generation run on two cores at once.
    Errors surface in compile_engine."""
    if _include_closure(name, {name: text}) is None or "@MODULE@" in text:
        raise ValueError(f"{name}: only a file that includes no quoted header can be precompiled")
    cc = find_compiler()
    common, incflags, shared_key = _object_flags(cc, include_dirs)
    d = cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    obj = _shared_object(name, {name: text}, (), shared_key, d)
    if obj.exists() or obj in _PENDING:
        return

    def job():
        with tempfile.TemporaryDirectory(dir=d, prefix=obj.stem + ".src.") as tmp:
            source = pathlib.Path(tmp) / name
            source.write_text(text)
            # below the Python process that generates the rest, which is the critical path
            _compile_object([*common, *_size_flags(len(text)), *incflags], source, obj, repr(name),
                            niceness=BACKGROUND_NICENESS)

    future = _BACKGROUND.submit(job)
    _PENDING[obj] = future
    future.add_done_callback(lambda _f: _PENDING.pop(obj, None))


_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def _include_closure(name: str, files: dict[str, str]) -> set[str] | None:
    """The files ``name`` includes with quotes, directly or not (itself too); None if one of
    them is not among ``files`` (a header from elsewhere, whose text is not known here)."""
    seen, stack = set(), [name]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        if n not in files:
            return None
        seen.add(n)
        stack.extend(_INCLUDE.findall(files[n]))
    return seen


def _shared_object(name, files, model_files, ident, d: pathlib.Path) -> pathlib.Path | None:
    """The cache path of the object of ``name`` if it is the same for every model (it includes
    none of ``model_files`` and no ``@MODULE@``), else None."""
    closure = _include_closure(name, files)
    if closure is None or closure & set(model_files) or any("@MODULE@" in files[n] for n in closure):
        return None
    key = hashlib.sha256("\0".join([*(f"{n}\0{files[n]}" for n in sorted(closure)), *ident])
                         .encode()).hexdigest()[:24]
    (d / "objects").mkdir(exist_ok=True)
    return d / "objects" / f"{pathlib.Path(name).stem}_{key}.o"


#: a generated file larger than this is compiled at -O1: its straight-line functions take gcc
#: several times longer at -O2 (a 20-link chain's 570 kB model.c: 7.2 s at -O2, 4.4 s at -O1)
#: and all but mbs_aba are off the hot path
LARGE_SOURCE_BYTES = 300_000


def _size_flags(size: int) -> tuple[str, ...]:
    """Extra flags (after CFLAGS) for a file of ``size`` characters."""
    return ("-O1",) if size > LARGE_SOURCE_BYTES else ()


def compile_objects(base: list[str], sources: list[pathlib.Path], out_dir: pathlib.Path,
                    what: str) -> list[pathlib.Path]:
    """Compile each of ``sources`` with the command ``base`` (compiler and flags, no ``-c``/``-o``)
    to an object in ``out_dir``, as many at a time as there are processors, the largest first;
    a file over :data:`LARGE_SOURCE_BYTES` at -O1 (:func:`_size_flags`).  Returns the objects
    in the order of ``sources`` (for a link command).

    A file that includes (with quotes, directly or not) only files of its own folder has its
    object in the cache, keyed by the texts of those files, the command and the processor-
    independent flags: the FMUs of one model for another FMI version or interface compile only
    their glue (which includes the FMI headers from elsewhere) and link."""
    objects, jobs, folders = [], [], {}
    for src in sources:
        if src.parent not in folders:  # the texts of each folder's C files, read once
            folders[src.parent] = {p.name: p.read_text() for p in src.parent.iterdir()
                                   if p.suffix in (".c", ".h")}
        obj = _cached_object(base, src, folders[src.parent]) or out_dir / f"{src.stem}.o"
        objects.append(obj)
        if not obj.exists():
            jobs.append((src, obj))
    jobs.sort(key=lambda j: j[0].stat().st_size, reverse=True)
    with ThreadPoolExecutor(max_workers=max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
        futures = [pool.submit(_compile_object, [*base, *_size_flags(src.stat().st_size)], src, obj,
                               f"{what} ({src.name})") for src, obj in jobs]
        for f in futures:
            f.result()
    return objects


def _cached_object(base: list[str], src: pathlib.Path, files: dict[str, str]) -> pathlib.Path | None:
    """The object cache's path for ``src`` compiled with ``base``, or None if it includes a file
    from outside its folder (``files``: the texts of the folder's C files by name)."""
    closure = _include_closure(src.name, files)
    if closure is None:
        return None
    # the include folders are not part of the key: every file the source includes with quotes is
    # in its own folder (its text is in the key), and the build's folder is a temporary one
    flags = [f for f in base if not f.startswith("-I")]
    ident = [*flags, *_size_flags(src.stat().st_size), *(f"{n}\0{files[n]}" for n in sorted(closure))]
    key = hashlib.sha256("\0".join(ident).encode()).hexdigest()[:24]
    folder = cache_dir() / "objects"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{src.stem}_{key}.o"


def _compile_object(base: list[str], source: pathlib.Path, obj: pathlib.Path, what: str,
                    niceness: int = 0) -> None:
    """Compile ``source`` to ``obj`` (written under a temporary name, then renamed)."""
    fd, tmp = tempfile.mkstemp(dir=obj.parent, prefix=obj.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        run_compiler([*base, "-c", "-o", tmp, str(source)], what, niceness)
        os.replace(tmp, obj)
    finally:
        pathlib.Path(tmp).unlink(missing_ok=True)


def run_compiler(cmd: list[str], what: str, niceness: int = 0) -> None:
    """Run the compiler command ``cmd`` (``niceness`` > 0: at that lower priority, through
    ``nice`` where it is installed); a CompileError naming ``what``, the command and the
    compiler's output if it cannot run or fails."""
    nice = shutil.which("nice") if niceness else None
    run = [nice, "-n", str(niceness), *cmd] if nice else cmd
    try:
        res = subprocess.run(run, capture_output=True, text=True)
    except OSError as exc:
        raise CompileError(f"cannot run C compiler {cmd[0]!r} for {what}: {exc}") from None
    if res.returncode != 0:
        raise CompileError(f"compiling {what} failed ({' '.join(cmd)}):\n"
                           f"{res.stderr.strip() or res.stdout.strip()}")


def _build(cc, source, stem, suffix, extra, name) -> pathlib.Path:
    """Compile ``source`` into ``<cache>/<stem><suffix>`` unless it is there already."""
    global compile_count
    d = cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    so = d / f"{stem}{suffix}"
    if so.exists():
        return so
    src = d / f"{stem}.c"
    _atomic_write(src, source)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=so.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        run_compiler([cc, *CFLAGS, *extra, "-o", tmp, str(src), *LIBS], repr(name))
        compile_count += 1
        os.replace(tmp, so)
    finally:
        pathlib.Path(tmp).unlink(missing_ok=True)
    return so
