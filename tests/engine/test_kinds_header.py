"""The numbers the engine's API shares with Python are written once (issue 24 item 2): the
formulation kinds, the integration methods, the flags of what a run records and the reasons of a
refused start live in :mod:`mbsfmu.core.constants` and are generated into ``mbs_kinds.h`` (by the
generator of the step-control constants, :data:`mbsfmu.runtime.GENERATED_HEADERS`).  The compiled
header gives the Python values; no hand-written C file defines them again, nor compares two copies
(the static assert ``kinds_agree`` and the ``#error`` over the method numbers are gone).
"""

import ctypes
import re

import pytest
from c_support import RUNTIME, compile_harness

from mbsfmu.core import constants
from mbsfmu.core.solver_settings import METHODS
from mbsfmu.runtime import ENGINE_HEADERS, ENGINE_SOURCES, GENERATED_HEADERS, source

TABLES = {"MBS_FORM": constants.FORMULATION_KINDS, "MBS_METHOD": constants.METHOD_KINDS,
          "MBS_RECORD": constants.RECORD, "MBS_START": constants.START_FAILURES}


def _macros():
    return [f"{prefix}_{name.upper()}" for prefix, table in TABLES.items() for name in table]


def test_the_compiled_header_gives_the_python_values(tmp_path):
    """A C file that includes mbs_formulation.h (as the engine does) reads every number back, and
    the formulation names in number order."""
    macros = _macros()
    harness = "\n".join([
        '#include "mbs_formulation.h"',
        f"static const long values[] = {{{', '.join(macros)}}};",
        "static const char *const names[] = {MBS_FORMULATION_NAMES};",
        "long value(int i) { return values[i]; }",
        "const char *name(int i) { return names[i]; }",
        "int nnames(void) { return (int)(sizeof names / sizeof names[0]); }", ""])
    built = compile_harness(tmp_path, harness, [], tmp_path / "kinds.so")
    assert built.returncode == 0, built.stderr
    lib = ctypes.CDLL(str(tmp_path / "kinds.so"))
    lib.value.restype = ctypes.c_long
    lib.name.restype = ctypes.c_char_p
    want = [v for table in TABLES.values() for v in table.values()]
    assert [lib.value(i) for i in range(len(macros))] == want
    kinds = constants.FORMULATION_KINDS
    assert [lib.name(i).decode() for i in range(lib.nnames())] == sorted(kinds, key=kinds.get)


def test_the_numbers_are_written_once():
    """Generated for every build (never kept in the source folder); the solver values of the FMU
    variable 'method' are the method numbers; no hand-written runtime file defines a generated name
    or checks one copy against another."""
    name = constants.KINDS_HEADER
    assert name in GENERATED_HEADERS and name in ENGINE_HEADERS and not (RUNTIME / name).exists()
    assert {n: i for i, n in enumerate(METHODS)} == constants.METHOD_KINDS
    text = source(name)
    for macro, value in zip(_macros(), [v for t in TABLES.values() for v in t.values()]):
        assert f"#define {macro} {value}\n" in text
    names = "|".join([*_macros(), "MBS_FORMULATION_NAMES"])
    defined = re.compile(rf"#define\s+({names})\b|\b({names})\s*=\s*\d")  # a macro, or an enum's member
    for file in (*ENGINE_SOURCES, *ENGINE_HEADERS, "fmi2_glue.c", "fmi3_glue.c", "mbs_fmu.c", "mbs_fmu.h",
                 "mbs_python.c"):
        if file in GENERATED_HEADERS:
            continue
        text = source(file)
        assert not defined.search(text), f"{file} defines a number of {name} again"
        assert "kinds_agree" not in text and "MBS_FORM_KIND_" not in text, file


@pytest.mark.parametrize("table", ["FORMULATION_KINDS", "METHOD_KINDS"])
def test_kind_numbers_must_count_from_zero(monkeypatch, table):
    """The C code indexes name tables by these numbers: a gap is refused when the header is made."""
    monkeypatch.setitem(getattr(constants, table), "extra", 99)
    with pytest.raises(AssertionError):
        constants.kinds_header()
