"""The sensitivity functions of a model in C (built into the engine on demand).

Three functions with the arguments of the model contract and more (the layouts of
:mod:`mbsfmu.equations.sensitivity_equations`):

``void mbs_sens_tangent(t, y, yd, prm, u, tp, const double *z, int nd, double *out)``
    the tangents of R, G, c, V, e, E y' at the given a, lambda (``z[0 .. f + m)``) along ``nd``
    directions (dy, dy', dp), direction k at ``z + f + m + k (2 f + nprm)``, its outputs at
    ``out + k * MBS_SENS_NTANGENT``;
``void mbs_sens_outputs(t, y, yd, prm, u, tp, const double *z, int nd, double *out)``
    the tangents of the expression outputs along ``nd`` directions (direction k at
    ``z + k (2 f + nprm)``, outputs at ``out + k * MBS_NOUT_EXPR``);
``void mbs_sens_adjoint(t, y, yd, prm, u, tp, const double *z, int nd, double *out)``
    the gradients by y, y', p of wR.R + wG.G + wc.c + wV.V at the given a, lambda
    (``z[0 .. f + m)``) for ``nd`` weightings, weighting k at ``z + f + m + k (f + 2 m + mh)``,
    its gradient at ``out + k (2 f + nprm)``.

Each evaluates the equations' intermediates and the partial derivatives once and only the
derivatives' definitions per direction (a loop over the directions): the cost of k directions is
one evaluation plus k linear combinations per definition, not k evaluations.
"""

from __future__ import annotations

import sympy as sp

from ..equations.sensitivity_equations import sensitivity_equations, tree_sensitivity_equations
from .c_printer import CPrinter
from .c_source import c_names, print_c

#: the generated functions, in the order they are printed
SENSITIVITY_FUNCTIONS = ("sens_tangent", "sens_outputs", "sens_adjoint")

_HEAD = ("double t, const double *y, const double *yd, const double *prm, const double *u, "
         "const double *tp, const double *z, int nd, double *out")


def _directional(name: str, eqs, fixed: list, seeds: list, outputs: list, width: int) -> list[str]:
    """``void mbs_<name>(..., z, nd, out)``: the intermediates that no seed reaches once, then
    per direction k the ones that depend on the seeds and the ``outputs`` into
    ``out + k * width`` (``fixed``: the symbols of ``z`` before the directions; ``seeds``: those
    of one direction)."""
    system, w = eqs.system, eqs.intermediates
    names = dict(c_names(eqs))
    names.update((s, f"z[{i}]") for i, s in enumerate(fixed))
    names.update((s, f"zd[{i}]") for i, s in enumerate(seeds))
    printer = CPrinter(names)
    outputs = [sp.sympify(o) for o in outputs]
    reached = set(seeds)
    base, per_direction = [], []
    for sym in w.needed_for(outputs):
        if w.definitions[sym].free_symbols & reached:
            reached.add(sym)
            per_direction.append(sym)
        else:
            base.append(sym)

    def define(sym, indent):
        return f"{indent}const double {sym} = {print_c(printer, w.definitions[sym], str(sym), system)};"

    lines = [f"void mbs_{name}({_HEAD})", "{", "    int k;",
             *[f"    (void){a};" for a in ("t", "y", "yd", "prm", "u", "tp", "z")],
             *[define(s, "    ") for s in base],
             "    for (k = 0; k < nd; k++) {",
             f"        const double *zd = z + {len(fixed)} + k * {len(seeds)};",
             f"        double *o = out + k * {max(width, 1)};",
             "        (void)zd;",
             "        (void)o;",
             *[define(s, "        ") for s in per_direction]]
    for i, o in enumerate(outputs):
        lines.append(f"        o[{i}] = {print_c(printer, o, f'output {i} of {name}', system)};")
    lines += ["    }", "}"]
    return lines


def sensitivity_functions(eqs, tree: bool = False) -> list[str]:
    """The C lines of the three functions (module doc), and with ``tree`` (a build whose runs use
    the articulated-body algorithm) ``mbs_sens_tree_tangent`` and ``mbs_sens_tree_adjoint``: the
    tangent of y'' = a(y, y', p) along ``nd`` directions (dy, dy', dp) and the gradient of
    mu . a for ``nd`` weightings mu (f each), from the algorithm's own intermediates."""
    se = sensitivity_equations(eqs)
    n_fixed = len(se.z_tangent) - len(se.z_outputs)
    lines = [""]
    lines += _directional("sens_tangent", eqs, se.z_tangent[:n_fixed], se.z_tangent[n_fixed:],
                          se.tangent, len(se.tangent))
    lines.append("")
    lines += _directional("sens_outputs", eqs, [], se.z_outputs, se.outputs_tangent, len(se.outputs_tangent))
    lines.append("")
    n_fixed = len(se.z_adjoint) - len(se.adjoint_weights)
    lines += _directional("sens_adjoint", eqs, se.z_adjoint[:n_fixed], se.z_adjoint[n_fixed:], se.adjoint,
                          len(se.adjoint))
    if tree:
        te = tree_sensitivity_equations(eqs)
        lines += ["", *_directional("sens_tree_tangent", eqs, [], te.z_tangent, te.tangent, len(te.tangent))]
        lines += ["", *_directional("sens_tree_adjoint", eqs, [], te.z_adjoint, te.adjoint, len(te.adjoint))]
    return lines
