"""Equations of motion in minimal form by Newton-Euler and d'Alembert/Jourdain (seed 002 §2).

For each rigid body i with mass m_i and inertia I_i about its centre of gravity (cg-frame
components, index b), the Newton-Euler equations (eqs. 1, 2) are projected onto the
generalized coordinates with the Jacobians of the centre of gravity (eqs. 8-10):

    M = sum_i  m_i J_T,i^T J_T,i + J_Rb,i^T I_i J_Rb,i                         (eq. 11)
    k = sum_i  m_i J_T,i^T abar_i + J_Rb,i^T (I_i alphabar_b,i + w_b,i x I_i w_b,i)
    q = sum_i  m_i J_T,i^T g + sum_forces J_T^T f + sum_torques J_R^T l + Q_gen

with J_Rb = S^T J_R and w_b = S^T w in body components (fewer terms for diagonal inertia).
The reactions drop out because J^T q^(r) = 0 (d'Alembert's principle, eq. 10).  Each body's
contribution is added to the system matrices one at a time from intermediate variables, so the
cost grows with the number of bodies times f^2, never with the size of nested expressions.

A point-to-point spring-damper from frame a to frame b with d = r_b - r_a, L = |d|,
e = d / L, L' = e.(v_b - v_a) and tension F = c (L - L0) + d L' contributes
q += -F (J_T,b - J_T,a)^T e.
"""

from __future__ import annotations

import sympy as sp

from ..errors import ModelError, SingularMassMatrixError
from .intermediates import Intermediates
from .kinematics import Kinematics, cross, matmul


def assemble(system, kin: Kinematics, w: Intermediates):
    """Return (M, k, q, kinetic energy, potential energy) built from intermediate variables."""
    f = len(system.y)
    # every entry of M, k, q and the energies is collected as a list of terms over all bodies
    # and summed once at the end (repeated ``+=`` would re-sort a growing sum each time)
    M_terms = [[[] for _ in range(a + 1)] for a in range(f)]  # lower triangle
    k_terms = [[] for _ in range(f)]
    q_terms = [[] for _ in range(f)]
    T_terms = []
    V_terms = []
    g = system.gravity_vector
    moved = [False] * f

    for body in system.bodies.values():
        K = kin[body.cg_frame]
        m, I = body.mass, body.inertia
        JT = K.JT
        JRb = w.matrix(matmul(K.S.T, K.JR))
        wb = w.matrix(matmul(K.S.T, K.omega))
        alb = w.matrix(matmul(K.S.T, K.alphabar))
        Iw = w.matrix(matmul(I, wb))
        cT = _columns(JT)
        cR = _columns(JRb)
        for j in range(f):
            if any(cT[j]) or any(cR[j]):
                moved[j] = True
        # mass matrix, lower triangle then mirrored (symmetric by construction)
        pT = _columns(w.matrix(m * JT))
        pR = _columns(w.matrix(matmul(I, JRb)))
        for a in range(f):
            if not (any(cT[a]) or any(cR[a])):
                continue
            row = M_terms[a]
            for b in range(a + 1):
                row[b].extend(_products(cT[a], pT[b]))
                row[b].extend(_products(cR[a], pR[b]))
        hT = list(w.matrix(m * K.abar))
        hR = list(w.matrix(matmul(I, alb) + cross(wb, Iw)))
        for a in range(f):
            k_terms[a].extend(_products(cT[a], hT))
            k_terms[a].extend(_products(cR[a], hR))
        if any(g):
            mg = list(m * g)
            for a in range(f):
                q_terms[a].extend(_products(cT[a], mg))
            V_terms.append(-(m * _dot(g, K.r)))
        T_terms.append((m * _dot(K.v, K.v) + _dot(wb, Iw)) / 2)

    unmoved = [system.y[j] for j in range(f) if not moved[j]]
    if unmoved:
        raise SingularMassMatrixError(
            "the mass matrix is singular: coordinate(s) "
            + ", ".join(repr(str(s)) for s in unmoved)
            + " move no body with mass (attach a body whose placement depends on them)")
    M = sp.zeros(f, f)
    for a in range(f):
        for b in range(a + 1):
            M[a, b] = M[b, a] = sp.Add(*M_terms[a][b])
    k = sp.Matrix(f, 1, [sp.Add(*t) for t in k_terms])
    q = sp.Matrix(f, 1, [sp.Add(*t) for t in q_terms])
    T = sp.Add(*T_terms)
    V = sp.Add(*V_terms)

    for sd in system.spring_dampers:
        A, B = kin[sd.a], kin[sd.b]
        d = w.matrix(B.r - A.r)
        L = w.aux(sp.sqrt((d.T * d)[0]))
        e = w.matrix(d / L)
        Ld = w.aux((e.T * (B.v - A.v))[0])
        F = w.aux(sd.stiffness * (L - sd.rest_length) + sd.damping * Ld)
        q += -F * (w.matrix(B.JT - A.JT).T * e)
        V += sd.stiffness * (L - sd.rest_length) ** 2 / 2

    for el in system.applied:
        Kf = kin[el.frame]
        vec = kin[el.in_frame].S * el.vector if el.in_frame != "ISYS" else el.vector
        vec = w.matrix(vec)
        J = Kf.JT if el.kind == "force" else Kf.JR
        q += J.T * vec

    index = {c: i for i, c in enumerate(system.coordinates_)}
    for gf in system.generalized_forces:
        q[index[gf.coordinate]] += gf.expression

    for name, vec in (("k", k), ("q", q)):
        bad = [s for s in sp.Matrix(vec).free_symbols if s in set(system.ydd)]
        if bad:
            raise ModelError(f"{name} depends on accelerations {bad}: a force element may not "
                             "depend on accelerations")
    return M, k, q, T, V


def _columns(A) -> list[list]:
    """The columns of a matrix as lists of entries."""
    return [list(A[:, j]) for j in range(A.cols)]


def _products(a, b) -> list:
    """The nonzero products a_i b_i (the terms of the dot product a . b)."""
    return [x * y for x, y in zip(a, b) if x and y]


def _dot(a, b):
    """a . b as one sum of the nonzero products (what ``(a.T * b)[0]`` gives)."""
    return sp.Add(*_products(a, b))
