"""Holonomic constraints of kinematic loops and their derivatives (seed 000 eqs. 5-7).

    c(y, t) = 0,     c' = C y' + b' = 0,     c'' = C y'' + b'' = 0,     C = dc/dy.

For a loop closure between frames a and b (differences Dr = r_b - r_a etc.):

* translation along the unit vector d = S_in e_i (an axis of frame ``in_frame``):
      c = d.Dr,   C = d^T DJ_T + (d x Dr)^T J_R,in,   b' = d.Dvbar + (d x Dr).wbar_in,
      b'' = (alphabar_in x d + w_in x (w_in x d)).Dr + 2 (w_in x d).Dv + d.Dabar;
* rotation about axis k of frame a, with (i, j, k) cyclic, u_n = S_a e_n, w_n = S_b e_n:
      c = (u_j.w_i - u_i.w_j) / 2          (= sin of the relative angle for a rotation about k)
      n = (w_i x u_j - w_j x u_i) / 2,     c' = (w_b - w_a).n,
      C = n^T DJ_R,   b' = Dwbar.n,   b'' = Dalphabar.n + Dw.n'.

All pieces are built from the frame kinematics (intermediate variables), so nothing large is
ever differentiated.  General constraints c(y, t) given as expressions are differentiated
symbolically: C = dc/dy, b' = dc/dt (through t and time parameters), b'' = d/dt(C y' + b')
with y'' = 0.

Nonholonomic constraints A(y, t) y' + a(y, t) = 0 (seed 004 sec. 3.5) have no position level:
they add rows to C, b' and b'' only,

    C = A = d(A y' + a)/dy',   b' = a = (A y' + a) at y' = 0,   b'' = d/dt(A y' + a) at y'' = 0,

after the m holonomic rows, so that G = [C_h; A] ((m + p) x f) and c holds the m rows of the
position level (``Equations.mh``).
"""

from __future__ import annotations

import sympy as sp

from ..model.multibody import System
from ..model.time_derivative import TimeDerivative
from .kinematics import Kinematics, cross, expression_kinematics, time_partial

_CYCLIC = {"x": ("y", "z"), "y": ("z", "x"), "z": ("x", "y")}
_AXIS = {"x": 0, "y": 1, "z": 2}


def _dot(a, b):
    return (sp.Matrix(a).T * sp.Matrix(b))[0]


def loop_constraints(loop, kin: Kinematics, w):
    """Rows (c, C, b', b'') of one loop closure."""
    A, B, K = kin[loop.a], kin[loop.b], kin[loop.in_frame]
    dr = w.matrix(B.r - A.r)
    dv = w.matrix(B.v - A.v)
    dJT = w.matrix(B.JT - A.JT)
    dab = w.matrix(B.abar - A.abar)
    dvb = B.vbar - A.vbar
    rows = []
    for ax in loop.translations:
        d = K.S[:, _AXIS[ax]]
        dxr = w.matrix(cross(d, dr))
        wd = w.matrix(cross(K.omega, d))
        c = _dot(d, dr)
        C = d.T * dJT + dxr.T * K.JR
        b1 = _dot(d, dvb) + _dot(dxr, K.omegabar)
        ddd = cross(K.alphabar, d) + cross(K.omega, wd)
        b2 = _dot(ddd, dr) + 2 * _dot(wd, dv) + _dot(d, dab)
        rows.append((c, C, b1, b2))
    for ax in loop.rotations:
        i, j = (_AXIS[n] for n in _CYCLIC[ax])
        ui, uj, wi, wj = A.S[:, i], A.S[:, j], B.S[:, i], B.S[:, j]
        c = (_dot(uj, wi) - _dot(ui, wj)) / 2
        n = w.matrix((cross(wi, uj) - cross(wj, ui)) / 2)
        dw = w.matrix(B.omega - A.omega)
        ndot = (cross(cross(B.omega, wi), uj) + cross(wi, cross(A.omega, uj))
                - cross(cross(B.omega, wj), ui) - cross(wj, cross(A.omega, ui))) / 2
        C = n.T * (B.JR - A.JR)
        b1 = _dot(B.omegabar - A.omegabar, n)
        b2 = _dot(B.alphabar - A.alphabar, n) + _dot(dw, ndot)
        rows.append((c, C, b1, b2))
    return rows


def holonomic_rows(h, system, D: TimeDerivative):
    """Row (c, C, b', b'') of a constraint given as an expression c(y, t)."""
    y, yd = system.y, system.yd
    c = h.expression
    C = sp.Matrix([c]).jacobian(y)
    b1 = sp.expand(D(c) - (C * sp.Matrix(yd))[0])
    b2 = D((C * sp.Matrix(yd))[0] + b1, without_ydd=True)
    return [(c, C, b1, b2)]


def product_rows(h, system, D: TimeDerivative, w):
    """Row (c, C, b', b'') of a constraint c = u . v - r(t) (``h.product``) from the
    kinematics of u and v (intermediate variables, :func:`.kinematics.expression_kinematics`):

        C = v^T J_u + u^T J_v,   b' = u_t . v + u . v_t - r',
        b'' = a0_u . v + 2 u' . v' + u . a0_v - r''

    (u_t the partial time derivative, a0 the acceleration at y'' = 0): the same as
    :func:`holonomic_rows` of the expression, without differentiating its product."""
    u, v, r = h.product
    xu, Ju, vu, au = expression_kinematics(u, system, D, w)
    xv, Jv, vv, av = expression_kinematics(v, system, D, w)
    c = _dot(xu, xv) - r
    C = (xv.T * Ju + xu.T * Jv)
    b1 = _dot(time_partial(u, system), xv) + _dot(xu, time_partial(v, system)) - D(r)
    b2 = _dot(au, xv) + 2 * _dot(vu, vv) + _dot(xu, av) - D(D(r))
    return [(c, C, b1, b2)]


def nonholonomic_rows(h, system, D: TimeDerivative):
    """Row (None, A, a, A' y' + a') of a nonholonomic constraint given as the expression
    A y' + a (linear in y', checked by the model): no position-level row."""
    e = h.expression
    yd = system.yd
    A = sp.Matrix([e]).jacobian(yd)
    a = e.xreplace({v: 0 for v in yd})
    return [(None, A, a, D(e, without_ydd=True))]


def constraint_equations(system, kin: Kinematics, w):
    """Stacked c (m), C (m + p x f), b' (m + p), b'' (m + p) of all loops and constraints, in
    the order of ``system.constraint_names`` (the m holonomic rows, then the p nonholonomic
    ones, which have no row in c); rows are stored as intermediate variables.  Only a System
    has loops (between its frames)."""
    rows = []
    for lp in system.loops if isinstance(system, System) else ():
        rows += loop_constraints(lp, kin, w)
    for h in system.holonomic:
        if getattr(h, "product", None) is not None:
            rows += product_rows(h, system, kin.D, w)
        else:
            rows += holonomic_rows(h, system, kin.D)
    for h in system.nonholonomic:
        rows += nonholonomic_rows(h, system, kin.D)
    f = len(system.y)
    if not rows:
        return sp.zeros(0, 1), sp.zeros(0, f), sp.zeros(0, 1), sp.zeros(0, 1)
    held = [r for r in rows if r[0] is not None]
    c = sp.Matrix([w.aux(r[0]) for r in held]) if held else sp.zeros(0, 1)
    C = sp.Matrix.vstack(*[w.matrix(sp.Matrix(r[1]).reshape(1, f)) for r in rows])
    b1 = sp.Matrix([w.aux(r[2]) for r in rows])
    b2 = sp.Matrix([w.aux(r[3]) for r in rows])
    return c, C, b1, b2
