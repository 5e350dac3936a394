"""C for y'' by the articulated-body algorithm (:mod:`mbsfmu.equations.articulated_body`).

``aba_source(eqs)`` writes

    int mbs_aba(double t, const double *y, const double *yd, const double *prm,
                const double *u, const double *tp, double *out)

with the same arguments and printing as the functions of :mod:`.c_source` (every intermediate
it needs as a ``const double _wN`` local in definition order), which writes y'' (f values) to
``out`` and returns 0, or j + 1 as soon as the pivot d of coordinate j fails: it must be finite
and above ``MBS_ABA_PIVOT_MIN`` (a 1 x 1 joint inertia D) or above ``MBS_ABA_PIVOT_RTOL``
times the largest |D_ii| of its joint (a joint with several coordinates, D = L diag(d) L^T).
Each test is placed right after the last intermediate it reads, so no division by a failed
pivot is ever used.  It is appended to the model source of :func:`.c_source.generate_c`, whose
``#define MBS_F`` etc. it relies on.
"""

from __future__ import annotations

import re

import sympy as sp

from ..core.errors import ModelError
from ..equations.articulated_body import articulated_body
from .c_printer import CPrinter
from .c_source import c_names, function_lines, print_c

PIVOT_DEFINES = """#ifndef MBS_ABA_PIVOT_RTOL
#define MBS_ABA_PIVOT_RTOL 1e-14 /* a joint's pivot relative to its largest diagonal entry */
#endif
#ifndef MBS_ABA_PIVOT_MIN
#define MBS_ABA_PIVOT_MIN 1e-300 /* the smallest 1 x 1 joint inertia accepted */
#endif
"""


def aba_source(eqs) -> str:
    """C source of ``mbs_aba`` for ``eqs`` (ModelError if the ABA does not apply)."""
    ab = articulated_body(eqs)
    if ab.ydd is None:
        raise ModelError(f"{eqs.system.name}: the articulated-body algorithm does not apply: "
                         f"{ab.reason}")
    system = eqs.system
    w = eqs.intermediates
    printer = CPrinter(c_names(eqs))

    def body(expr, what):
        return print_c(printer, expr, what, system)

    # the pivot tests, each with the intermediates it reads
    checks = []
    for j, d, diag in ab.pivots:
        ds = body(d, f"pivot of coordinate {j}")
        if diag:
            ref = f"fabs({body(diag[-1], 'pivot reference')})"
            for e in reversed(diag[:-1]):
                ref = f"fmax(fabs({body(e, 'pivot reference')}), {ref})"
            cond = f"!({ds} > MBS_ABA_PIVOT_RTOL * {ref} && {ds} < HUGE_VAL)"
        else:
            cond = f"!({ds} > MBS_ABA_PIVOT_MIN && {ds} < HUGE_VAL)"
        deps = set()
        for e in [d, *diag]:
            deps |= {s for s in sp.sympify(e).free_symbols if s in w.definitions}
        checks.append((deps, f"    if ({cond}) return {j + 1};"))

    outputs = list(ab.ydd)
    needed = w.needed_for(outputs + [e for _, d, diag in ab.pivots for e in (d, *diag)])
    lines = []
    pending = list(checks)

    def emit_ready(defined):
        nonlocal pending
        rest = []
        for deps, line in pending:
            if deps <= defined:
                lines.append(line)
            else:
                rest.append((deps, line))
        pending = rest

    # every call of a function of the arguments alone (cos(y[1]), sqrt(prm[0]), ...) is made
    # first: a call clobbers all floating-point registers, so calls in the middle of the
    # straight-line code would spill every live value around each of them
    calls = set()
    for s in needed:
        calls |= {c for c in w.definitions[s].atoms(sp.Function)
                  if not (c.free_symbols & w.definitions.keys())}
    # innermost first: a call inside another is read from its local
    for i, c in enumerate(sorted(calls, key=lambda c: (sp.count_ops(c), sp.default_sort_key(c.args)))):
        sym = f"_f{i}"
        lines.append(f"    const double {sym} = {body(c, 'a function call')};")
        printer.names[c] = sym
    defined: set = set()
    emit_ready(defined)
    for s in needed:
        lines.append(f"    const double {s} = {body(w.definitions[s], str(s))};")
        defined.add(s)
        if any(s in deps for deps, _ in pending):
            emit_ready(defined)
    if pending:  # cannot happen: every dependency is among the needed intermediates
        raise ModelError(f"{system.name}: internal error placing the pivot tests of mbs_aba")
    for i, e in enumerate(outputs):
        lines.append(f"    out[{i}] = {body(e, f'acceleration {i}')};")
    prologue = ("    /* y'' by the articulated-body algorithm (mbsfmu.equations.articulated_body) */",)
    return PIVOT_DEFINES + "\n".join(function_lines("int", "mbs_aba", lines, prologue)) + "\n"


def flop_count(source: str) -> int:
    """A rough operation count of generated C (``+ - * /`` and function calls), for benchmarks."""
    body = "\n".join(ln.split("=", 1)[1] for ln in source.splitlines()
                     if ln.strip().startswith(("const double", "out[")) and "=" in ln)
    body = re.sub(r"\d+\.\d+(e[-+]?\d+)?|\[\d+\]", "0", body)
    return len(re.findall(r"[-+*/]|\b(?:sin|cos|sqrt|tan|exp|log|pow)\(", body))
