"""The generated half of the engine's model contract (``mbsfmu/runtime/mbs_model.h``).

:func:`model_sources` writes the two files each model contributes to a build of the C engine
(the native FMU and the Python binding compile the same two files with the same runtime):

``model_config.h``
    sizes (``MBS_NY``, ``MBS_NPRM``, ...), the model's name and GUID, the default formulation of
    this build, the constants shared with Python (:mod:`mbsfmu.runtime.constants`) and the
    ranges of the solver settings (:mod:`mbsfmu.solver_settings`).
``model.c``
    the generated equations (:func:`~mbsfmu.codegen.c_source.generate_c_functions`) and the
    tables the contract declares: variable names, kinds and start values in value-reference
    order (:func:`~mbsfmu.fmu.model_description.fmu_variables`), the guess flags and initial
    conditions for consistent initialization, the names of the constraint rows, the sources of
    the user outputs and the parameter rules (:mod:`mbsfmu.equations.parameter_requirements`).
``model_aba.c``
    for a tree on joint coordinates ``mbs_aba`` (:mod:`~mbsfmu.codegen.c_aba`), otherwise
    nothing.  A file of its own so that a build compiles it in parallel with ``model.c``: for
    a large tree the two are of about the same size, and each takes the compiler seconds.  It
    includes no model header (it needs no size and no GUID), so it is final as soon as it is
    printed: ``model_sources(..., on_file=...)`` hands it over then, and the engine build
    starts compiling it (:func:`~mbsfmu.codegen.compile.precompile_object`) while Python
    generates ``model.c``.
``model_tree.c``
    for a build with ``mbs_aba``, the recursive Newton-Euler parts ``mbs_mass_times`` and
    ``mbs_tree_force`` of its ``mbs_dynamics`` (most of ``model.c`` otherwise), likewise
    self-contained and handed over before the parameter probe runs; otherwise nothing.

:data:`MODEL_FILES` names the compiled ones.  The GUID hashes all files, so a state saved by
one build is never restored into another.
"""

from __future__ import annotations

import math
import uuid

from ..errors import ModelError
from ..runtime import constants
from .c_source import generate_c_functions, sizes

#: the generated files a build compiles (with the engine's), and the header they share
MODEL_FILES = ("model.c", "model_aba.c", "model_tree.c")
MODEL_HEADER = "model_config.h"

#: variable kinds as the engine numbers them (MBS_VAR_* in mbs_model.h)
VAR_KINDS = {"coordinate": 0, "velocity": 0, "residual": 1, "output": 1, "reaction": 1, "input": 4}


def c_string(s: str) -> str:
    """A C string literal of s (non-printable and non-ASCII bytes as octal escapes)."""
    out = []
    for b in s.encode():
        ch = chr(b)
        if ch in '"\\?':
            out.append("\\" + ch)
        elif 32 <= b < 127:
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def _c_double(v: float) -> str:
    return ("INFINITY" if v > 0 else "-INFINITY") if math.isinf(v) else repr(float(v))


def _table(ctype: str, name: str, values: list, fmt=repr) -> str:
    """A table of the contract (at least one element, so that empty tables are valid C)."""
    body = ", ".join(fmt(v) for v in values) if values else "0"
    return f"const {ctype} {name}[{max(len(values), 1)}] = {{{body}}};"


def _kind(v) -> int:
    if v.kind in VAR_KINDS:
        return VAR_KINDS[v.kind]
    return 2 if v.variability == "fixed" else 3  # parameters: fixed or tunable


def _aba(eqs) -> str:
    """``mbs_aba`` where the articulated-body algorithm applies (a tree on joint coordinates)."""
    if eqs.n_constraints:
        return ""
    from .c_aba import aba_source

    try:
        return aba_source(eqs)
    except ModelError:
        return ""


def _output_sources(system) -> list[int]:
    """Per user output: its index among the expression outputs (>= 0) or -(constraint row + 1)."""
    src, n_expr, rows = [], 0, system.constraint_names
    for o in system.outputs.values():
        if o.constraint is not None:
            src.append(-(rows.index(o.constraint) + 1))
        else:
            src.append(n_expr)
            n_expr += 1
    return src


def _variable_tables(variables) -> list[str]:
    starts = [float(v.start) if v.start is not None else 0.0 for v in variables]
    return [
        _table("double", "mbs_start", starts),
        f"const char *const mbs_names[{len(variables)}] = {{\n    "
        + ",\n    ".join(c_string(v.name) for v in variables) + "};",
        _table("unsigned char", "mbs_kind", [_kind(v) for v in variables], str),
    ]


def _initialization_tables(system) -> list[str]:
    coords = list(system.coordinates_.values())
    ics = system.initial_conditions
    rows = system.constraint_names + [ic.name for ic in ics]
    return [
        _table("unsigned char", "mbs_guess", [int(bool(c.guess)) for c in coords], str),
        _table("unsigned char", "mbs_guess_velocity", [int(bool(c.guess_velocity)) for c in coords], str),
        _table("double", "mbs_ic_value", [float(ic.value) for ic in ics]),
        _table("double", "mbs_ic_rate", [float(ic.rate or 0.0) for ic in ics]),
        _table("unsigned char", "mbs_ic_has_rate", [int(ic.rate is not None) for ic in ics], str),
        _table("char *const", "mbs_row_names", [c_string(r) for r in rows], str)
        if rows else "const char *const mbs_row_names[1] = {NULL};",
    ]


def _parameter_rule_tables(system, eqs) -> list[str]:
    """The tables of mbs_param_rules (mbs_parameters.h): declared bounds of the constants and
    inputs, the bodies whose mass properties are checked with the constants they use, and the
    reasons why constants must not be zero."""
    from ..equations.parameter_requirements import parameter_requirements

    req = parameter_requirements(eqs)
    consts = list(system.constants_.values())
    names = [c.name for c in consts]
    starts, flat = [0], []
    for b in req.bodies:
        flat += [names.index(n) for n in b.parameters]
        starts.append(len(flat))
    inputs = list(system.inputs.values())
    why = ", ".join(c_string(req.nonzero[n]) if n in req.nonzero else "NULL" for n in names)
    return [
        _table("double", "mbs_prm_min", [c.min for c in consts], _c_double),
        _table("double", "mbs_prm_max", [c.max for c in consts], _c_double),
        f"const char *const mbs_prm_nonzero_why[{max(len(names), 1)}] = {{{why or 'NULL'}}};",
        _table("char *const", "mbs_body_check_names", [c_string(b.body) for b in req.bodies], str)
        if req.bodies else "const char *const mbs_body_check_names[1] = {NULL};",
        _table("int", "mbs_body_prm_start", starts, str),
        _table("int", "mbs_body_prm", flat, str),
        _table("double", "mbs_u_min", [u.min for u in inputs], _c_double),
        _table("double", "mbs_u_max", [u.max for u in inputs], _c_double),
    ]


def model_sources(system, formulation: str = "qr", variables=None, tag: str = "",
                  on_file=None) -> dict[str, str]:
    """``{"model_config.h": ..., "model.c": ..., "model_aba.c": ..., "guid": ...}`` of ``system``
    (see the module docstring) for a build whose default
    formulation is ``formulation``.  ``variables`` defaults to ``fmu_variables(system)``;
    ``tag`` (e.g. "native") enters the GUID so that different kinds of build differ;
    ``on_file(name, text)``, if given, is called with ``model_aba.c`` and ``model_tree.c`` as
    soon as each is final."""
    from ..fmu.model_description import fmu_variables
    from ..solver_settings import c_macros as solver_macros

    variables = fmu_variables(system) if variables is None else variables
    eqs = system.equations()
    n = sizes(eqs)
    aba = _aba(eqs)
    title = str(system.name).replace("*/", "* /")
    aba_c = "\n".join([
        f"/* Model {title}: y'' by the articulated-body algorithm"
        + (" (mbs_aba, see mbs_model.h)." if aba else ": does not apply (no mbs_aba).")
        + "\n   Generated by mbsfmu (mbsfmu.codegen.c_model); do not edit. */",
        "#include <math.h>",
        "",
        aba if aba else "typedef int mbs_no_aba; /* not an empty translation unit */",
    ])
    if on_file is not None:
        on_file("model_aba.c", aba_c)
    # a tree run on the articulated-body algorithm: mbs_dynamics (only for runs without it)
    # by recursive Newton-Euler, so M and k are neither derived nor compiled
    separate: dict = {}
    functions, tp_native = generate_c_functions(eqs, tree_dynamics=bool(aba), separate=separate)
    tree_c = "\n".join([
        f"/* Model {title}: M v and q - k by recursive Newton-Euler"
        + (" (mbs_mass_times, mbs_tree_force for mbs_dynamics)." if separate["model_tree.c"]
           else ": not used (no articulated-body build).")
        + "\n   Generated by mbsfmu (mbsfmu.codegen.c_model); do not edit. */",
        "#include <math.h>",
        "",
        separate["model_tree.c"] or "typedef int mbs_no_tree; /* not an empty translation unit */",
    ])
    if on_file is not None:  # final: compiled while the parameter probe runs
        on_file("model_tree.c", tree_c)
    src = _output_sources(system)
    model_c = "\n".join([
        f"/* Model {title}: equations and tables of the engine's model contract (mbs_model.h).",
        "   Generated by mbsfmu (mbsfmu.codegen.c_model); do not edit. */",
        "#include <math.h>",
        "#include <stddef.h>",
        "",
        '#include "mbs_model.h"',
        functions,
        *_variable_tables(variables),
        *_initialization_tables(system),
        _table("int", "mbs_out_src", src, str),
        *_parameter_rule_tables(system, eqs),
        "",
    ])
    config = [
        f"/* Build settings and sizes of model {title}; generated by mbsfmu, do not edit. */",
        f"#define MBS_MODEL_NAME {c_string(system.name)}",
        *[f"#define MBS_{k} {v}" for k, v in n.items()],
        f"#define MBS_NIC {len(system.initial_conditions)}",
        f"#define MBS_NOUT {len(system.outputs)}",
        f"#define MBS_NOUT_EXPR {sum(1 for v in src if v >= 0)}",
        f"#define MBS_NREACT {sum(1 for v in src if v < 0)}",
        f"#define MBS_NBODYCHECK {len(_parameter_body_count(system, eqs))}",
        f"#define MBS_TP_FUNCTION {int(tp_native)}",
        f"#define MBS_HAS_ABA {int(bool(aba))}",
        f"#define MBS_NVARS {len(variables)}",
        f"#define MBS_FORMULATION {constants.FORMULATION_KINDS[formulation]} /* {formulation} */",
        constants.c_macros(),
        solver_macros(),
        "",
    ]
    config_text = "\n".join(config)
    hashed = f"mbsfmu:{tag}:{model_c}:{aba_c}:{tree_c}:{config_text}"
    guid = "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, hashed)) + "}"
    config_text = f"#define MBS_GUID {c_string(guid)}\n{config_text}"
    return {"model_config.h": config_text, "model.c": model_c, "model_aba.c": aba_c,
            "model_tree.c": tree_c, "guid": guid}


def _parameter_body_count(system, eqs) -> list:
    from ..equations.parameter_requirements import body_checks

    return body_checks(system)
