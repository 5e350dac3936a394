"""The slave's side of the FMU's guard library (``pythonfmu_guard.c``, see
:mod:`mbsfmu.fmu.pythonfmu_export`): find the guard that is handling the current FMI call and
report refusals and warnings through it, which passes them to the importer's logger at once and
makes the call return fmi2Error."""

import ctypes
import os
import pathlib
import sys

from pythonfmu.enums import Fmi2Status

from .text import num

GUARDS = []  # guard libraries found by the slaves of this process


def find_guard(resources, binary):
    """The FMU's guard library that is handling this instantiation (the FMU's binary, loaded by
    the importer), else None (at build time, on Windows).  It is looked for where the FMU keeps
    it, then among the libraries the process has loaded under its name (an importer may load a
    copy of the binary from elsewhere)."""
    if resources is None or not sys.platform.startswith("linux"):
        return None
    expected = pathlib.Path(resources).parent / "binaries" / "linux64" / f"{binary}.so"
    lib = open_guard(expected)
    if lib is None:
        try:
            with open("/proc/self/maps") as maps:
                loaded = {f[5] for f in (line.split(None, 5) for line in maps.read().splitlines())
                          if len(f) == 6 and f[5].endswith(f"/{binary}.so")}
        except OSError:
            loaded = set()
        lib = next((g for g in map(open_guard, sorted(loaded)) if g is not None), None)
    if lib is not None and all(g._handle != lib._handle for g in GUARDS):
        GUARDS.append(lib)
    return lib


def open_guard(path):
    """The already loaded library at ``path`` if it is a guard handling a call now, else None."""
    try:
        lib = ctypes.CDLL(str(path), mode=os.RTLD_NOLOAD | os.RTLD_LOCAL)
        lib.mbsfmu_guard_report.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p]
        lib.mbsfmu_guard_report.restype = ctypes.c_int
        lib.mbsfmu_guard_time.argtypes = [ctypes.c_double]
        lib.mbsfmu_guard_time.restype = ctypes.c_int
        lib.mbsfmu_guard_active.restype = ctypes.c_int
        lib.mbsfmu_guard_call_time.argtypes = [ctypes.POINTER(ctypes.c_double)]
        lib.mbsfmu_guard_call_time.restype = ctypes.c_int
        return lib if lib.mbsfmu_guard_active() else None
    except (OSError, AttributeError):
        return None


def to_guard(status, text):
    """Log through the guard that is handling the current call; False if there is none."""
    category = b"logStatusError" if status >= Fmi2Status.error else b"logStatusWarning"
    data = text.encode("utf-8", "replace")
    return any(g.mbsfmu_guard_report(int(status), category, data) for g in GUARDS)


def call_time():
    """' at t=<time>' of the instance whose call a guard is handling ('' if none): for the
    static state functions, which pythonfmu calls without the instance."""
    t = ctypes.c_double()
    return next((f" at t={num(t.value)}" for g in GUARDS if g.mbsfmu_guard_call_time(ctypes.byref(t))), "")
