"""The equations the sensitivity analysis differentiates, and their derivatives.

With the accelerations a = y'' and the multipliers lambda of the index-1 form (seed 000 eqs.
3, 7-8) as further arguments, the equations of motion are the residuals

    R(y, y', p; a, lambda) = M a - (q - k) - C^T lambda        (f rows, eq. 8; seed 002 eq. 11)
    G(y, y', p; a)         = C a + b''                         (m rows, eq. 7)

and the constraints on the position and velocity level and the model's extra initial
conditions (``System.initial_condition``)

    c(y, p) (mh rows, eq. 5),   V = C y' + b' (m rows, eq. 6),   e(y, p),   E y' (nic rows each).

Along a direction (dy, dy', dp) of the state and the constants their **tangent** (forward
mode, :func:`~.derivatives.tangent`) is the right-hand side of the sensitivity equations; for
weights on R, G, c, V their **adjoint** (reverse mode, :func:`~.derivatives.adjoint`) is the
adjoint equations' (:mod:`mbsfmu.runtime` ``mbs_sensitivity.c`` uses both).  For a tree on
joint coordinates M a - (q - k) is the inverse dynamics of the recursive Newton-Euler algorithm
(:mod:`.recursive_newton_euler`, a in the places of y'), so M is never assembled.

The argument vectors of the generated functions (``z``):

* tangent: ``z = [a (f), lambda (m), dy (f), dy' (f), dp (nprm)]``,
  out ``= [dR (f), dG (m), dc (mh), dV (m), de (nic), d(E y') (nic)]``;
* adjoint: ``z = [a (f), lambda (m), wR (f), wG (m), wc (mh), wV (m)]``,
  out ``= [bar y (f), bar y' (f), bar p (nprm)]`` of ``wR.R + wG.G + wc.c + wV.V``;
* output tangent: ``z = [dy (f), dy' (f), dp (nprm)]``, out = the tangents of the expression
  outputs (:func:`~.outputs.expression_outputs`).

For a tree run on the articulated-body algorithm (:mod:`.articulated_body`) the accelerations
are an explicit function y'' = a(y, y', p) over the intermediates, and its own tangent and
adjoint need no linear system at all (:func:`tree_sensitivity_equations`):

* tree tangent: ``z = [dy, dy', dp]`` per direction, out = da (f);
* tree adjoint: ``z = [mu (f)]`` per weighting, out = ``[bar y, bar y', bar p]`` of mu . a.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .articulated_body import articulated_accelerations
from .derivatives import adjoint, substitute, tangent
from .outputs import expression_outputs
from .recursive_newton_euler import recursive_newton_euler


@dataclass
class SensitivityEquations:
    """The generated functions' outputs (lists of expressions over the intermediates) and the
    symbols of their ``z`` arguments, in order."""

    z_tangent: list
    tangent: list
    z_adjoint: list
    adjoint: list
    adjoint_weights: list
    z_outputs: list
    outputs_tangent: list


@dataclass
class TreeSensitivityEquations:
    """The tangent and adjoint of the articulated-body accelerations, and their z symbols."""

    z_tangent: list
    tangent: list
    z_adjoint: list
    adjoint: list


def tree_sensitivity_equations(eqs) -> TreeSensitivityEquations | None:
    """For a model whose engine runs the articulated-body algorithm; None for others (derived
    once per Equations object)."""
    return eqs.derived("tree_sensitivity_equations", _derive_tree)


def _derive_tree(eqs) -> TreeSensitivityEquations | None:
    ydd = articulated_accelerations(eqs)
    if ydd is None:
        return None
    system, w = eqs.system, eqs.intermediates
    f = len(system.y)
    prm = [c.symbol for c in system.constants_.values()]
    dy, dyd, dp = _vector("tdy", f), _vector("tdyd", f), _vector("tdp", len(prm))
    seeds = {**dict(zip(system.y, dy)), **dict(zip(system.yd, dyd)), **dict(zip(prm, dp))}
    tan = tangent(w, list(ydd), seeds)
    mu = _vector("tmu", f)
    adj = adjoint(w, list(ydd), mu, list(system.y) + list(system.yd) + prm)
    return TreeSensitivityEquations(dy + dyd + dp, tan, mu, adj)


def sensitivity_equations(eqs) -> SensitivityEquations:
    """Derived once per Equations object."""
    return eqs.derived("sensitivity_equations", _derive)


def _vector(name: str, n: int) -> list:
    return [sp.Symbol(f"_{name}{i}", real=True) for i in range(n)]


def residuals(eqs, a, lam) -> tuple[list, list, list, list]:
    """R, G, c, V (module doc) over the intermediates of ``eqs``."""
    system, w = eqs.system, eqs.intermediates
    f, m = len(system.y), eqs.m
    rn = recursive_newton_euler(eqs) if not m else None
    if rn is not None and rn.mass_times is not None:
        Ma = substitute(w, rn.mass_times, dict(zip(system.yd, a)))
        R = [w.aux(x - h) for x, h in zip(Ma, rn.force)]
    else:
        R = list(eqs.M * sp.Matrix(a) - (eqs.q - eqs.k))
    if not m:
        return R, [], [], []
    C = eqs.C
    R = [r - sum((C[j, i] * lam[j] for j in range(m)), sp.S.Zero) for i, r in enumerate(R)]
    G = list(C * sp.Matrix(a) + eqs.b2)
    V = list(C * sp.Matrix(system.yd) + eqs.b1)
    c = list(eqs.c) if eqs.mh else []
    assert len(R) == f
    return R, G, c, V


def initial_condition_rows(system) -> tuple[list, list]:
    """e and E y' of the extra initial conditions (closed form)."""
    ics = system.initial_conditions
    e = [ic.expression for ic in ics]
    Eyd = [sum((sp.diff(x, q) * qd for q, qd in zip(system.y, system.yd)), sp.S.Zero) for x in e]
    return e, Eyd


def _derive(eqs) -> SensitivityEquations:
    system, w = eqs.system, eqs.intermediates
    f, m, mh = len(system.y), eqs.m, eqs.mh
    prm = [c.symbol for c in system.constants_.values()]
    a, lam = _vector("sa", f), _vector("sl", m)
    R, G, c, V = residuals(eqs, a, lam)
    e, Eyd = initial_condition_rows(system)
    dy, dyd, dp = _vector("sdy", f), _vector("sdyd", f), _vector("sdp", len(prm))
    seeds = {**dict(zip(system.y, dy)), **dict(zip(system.yd, dyd)), **dict(zip(prm, dp))}
    tan = tangent(w, R + G + c + V + e + Eyd, seeds)
    wR, wG, wc, wV = _vector("swR", f), _vector("swG", m), _vector("swc", mh), _vector("swV", m)
    adj = adjoint(w, R + G + c + V, wR + wG + wc + wV, list(system.y) + list(system.yd) + prm)
    outs = expression_outputs(eqs)
    out_tan = tangent(w, outs, seeds) if outs else []
    return SensitivityEquations(a + lam + dy + dyd + dp, tan, a + lam + wR + wG + wc + wV, adj,
                                wR + wG + wc + wV, dy + dyd + dp, out_tan)
