"""Equations of motion in minimal form by Newton-Euler and d'Alembert/Jourdain (seed 002 §2).

For each rigid body i with mass m_i and inertia I_i about its centre of gravity (cg-frame
components, index b), the Newton-Euler equations (eqs. 1, 2) are projected onto the
generalized coordinates with the Jacobians of the centre of gravity (eqs. 8-10):

    M = sum_i  m_i J_T,i^T J_T,i + J_Rb,i^T I_i J_Rb,i                         (eq. 11)
    k = sum_i  m_i J_T,i^T abar_i + J_Rb,i^T (I_i alphabar_b,i + w_b,i x I_i w_b,i)
    q = sum_i  m_i J_T,i^T g + sum_forces J_T^T f + sum_torques J_R^T l + Q_gen

with J_Rb = S^T J_R and w_b = S^T w in body components (fewer terms for diagonal inertia).
The reactions drop out because J^T q^(r) = 0 (d'Alembert's principle, eq. 10).  Flexible bodies
add their terms to M, k, q and the energies from :mod:`.flexible`.  Each body's
contribution is added to the system matrices one at a time from intermediate variables, so the
cost grows with the number of bodies times f^2, never with the size of nested expressions.

A point-to-point spring-damper from frame a to frame b with d = r_b - r_a, L = |d|,
e = d / L, L' = e.(v_b - v_a) and tension F = c (L - L0) + d L' contributes
q += -F (J_T,b - J_T,a)^T e.
"""

from __future__ import annotations

import sympy as sp

from ..core.errors import ModelError, SingularMassMatrixError
from . import flexible
from .intermediates import Intermediates
from .kinematics import Kinematics, cross, dot, matmul


def assemble(system, kin: Kinematics, w: Intermediates):
    """Return (M, k, q, kinetic energy, potential energy) built from intermediate variables."""
    check_moved(system, kin)
    q_applied = applied_forces(system, kin, w)
    T, V = energies(system, kin, w)
    return (mass_matrix(system, kin, w), bias_forces(system, kin, w),
            generalized_forces(system, kin, w, q_applied), T, V)


def _body_jacobians(kin: Kinematics, w: Intermediates, body):
    """(K, J_T, J_Rb = S^T J_R) of a body's cg frame."""
    K = kin[body.cg_frame]
    return K, K.JT, w.matrix(matmul(K.S.T, K.JR))


def check_moved(system, kin: Kinematics, own: dict | None = None) -> None:
    """SingularMassMatrixError if a coordinate moves no body (a zero column of every body's
    Jacobians).  With ``own`` (frame -> indices of the coordinates that place it alone, see
    :mod:`.articulated_body`) a coordinate moves a body iff its joint column is not zero and a
    body's cg frame is its frame or below it, which needs no Jacobian of a whole frame."""
    f = len(system.y)
    moved = [False] * f
    if own is None:
        for body in system.bodies.values():
            K = kin[body.cg_frame]
            for j in range(f):
                if any(K.JT[:, j]) or any(K.JR[:, j]):
                    moved[j] = True
        for j in flexible.moved(system, kin):
            moved[j] = True
    else:
        carries = set()
        for body in system.bodies.values():
            name = body.cg_frame
            while name not in carries and name != "ISYS":
                carries.add(name)
                name = system.frames[name].ref
        for name, idx in own.items():
            if idx and name in carries:
                JR, JT = kin.joint_columns(name, idx)
                for c, j in enumerate(idx):
                    moved[j] = any(JR[:, c]) or any(JT[:, c])
    unmoved = [system.y[j] for j in range(f) if not moved[j]]
    if unmoved:
        raise SingularMassMatrixError(
            "the mass matrix is singular: coordinate(s) "
            + ", ".join(repr(str(s)) for s in unmoved)
            + " move no body with mass (attach a body whose placement depends on them)")


def mass_matrix(system, kin: Kinematics, w: Intermediates) -> sp.Matrix:
    """M of eq. 11, each entry one sum over the bodies (lower triangle, mirrored)."""
    f = len(system.y)
    # every entry is collected as a list of terms over all bodies and summed once at the end
    # (repeated ``+=`` would re-sort a growing sum each time)
    M_terms = [[[] for _ in range(a + 1)] for a in range(f)]  # lower triangle
    for body in system.bodies.values():
        _, JT, JRb = _body_jacobians(kin, w, body)
        m, I = body.mass, body.inertia
        cT = _columns(JT)
        cR = _columns(JRb)
        pT = _columns(w.matrix(m * JT))
        pR = _columns(w.matrix(matmul(I, JRb)))
        for a in range(f):
            if not (any(cT[a]) or any(cR[a])):
                continue
            row = M_terms[a]
            for b in range(a + 1):
                row[b].extend(_products(cT[a], pT[b]))
                row[b].extend(_products(cR[a], pR[b]))
    flexible.add_mass_terms(system, kin, M_terms)
    M = sp.zeros(f, f)
    for a in range(f):
        for b in range(a + 1):
            M[a, b] = M[b, a] = sp.Add(*M_terms[a][b])
    return M


def bias_forces(system, kin: Kinematics, w: Intermediates) -> sp.Matrix:
    """k of eq. 11: the Jacobians' projection of the inertia forces at y'' = 0."""
    f = len(system.y)
    k_terms = [[] for _ in range(f)]
    for body in system.bodies.values():
        K, JT, JRb = _body_jacobians(kin, w, body)
        m, I = body.mass, body.inertia
        wb = w.matrix(matmul(K.S.T, K.omega))
        alb = w.matrix(matmul(K.S.T, K.alphabar))
        Iw = w.matrix(matmul(I, wb))
        cT = _columns(JT)
        cR = _columns(JRb)
        hT = list(w.matrix(m * K.abar))
        hR = list(w.matrix(matmul(I, alb) + cross(wb, Iw)))
        for a in range(f):
            k_terms[a].extend(_products(cT[a], hT))
            k_terms[a].extend(_products(cR[a], hR))
    flexible.add_bias_terms(system, kin, k_terms)
    return sp.Matrix(f, 1, [sp.Add(*t) for t in k_terms])


def gravity_forces(system, kin: Kinematics) -> list[list]:
    """The terms of q from gravity, per coordinate: sum_i m_i J_T,i^T g."""
    f = len(system.y)
    q_terms = [[] for _ in range(f)]
    g = system.gravity_vector
    if any(g):
        for body in system.bodies.values():
            cT = _columns(kin[body.cg_frame].JT)
            mg = list(body.mass * g)
            for a in range(f):
                q_terms[a].extend(_products(cT[a], mg))
        flexible.add_gravity_terms(system, kin, q_terms)
    return q_terms


def generalized_forces(system, kin: Kinematics, w: Intermediates, q_applied=None) -> sp.Matrix:
    """q of eq. 11: gravity plus the force elements (:func:`applied_forces`)."""
    f = len(system.y)
    q = sp.Matrix(f, 1, [sp.Add(*t) for t in gravity_forces(system, kin)])
    return q + (applied_forces(system, kin, w) if q_applied is None else q_applied)


def energies(system, kin: Kinematics, w: Intermediates) -> tuple:
    """(kinetic energy, potential energy of gravity and springs)."""
    T_terms = []
    for body in system.bodies.values():
        K = kin[body.cg_frame]
        m, I = body.mass, body.inertia
        wb = w.matrix(matmul(K.S.T, K.omega))
        Iw = w.matrix(matmul(I, wb))
        T_terms.append((m * dot(K.v, K.v) + dot(wb, Iw)) / 2)
    T_terms.append(flexible.kinetic_energy(system, kin))
    return sp.Add(*T_terms), potential_energy(system, kin, w)


def potential_energy(system, kin: Kinematics, w: Intermediates) -> sp.Expr:
    """Potential energy of gravity and springs (the second half of :func:`energies`)."""
    g = system.gravity_vector
    V = sp.Add(*[-(body.mass * dot(g, kin[body.cg_frame].r)) for body in system.bodies.values()
                 if any(g)])
    V += flexible.potential_energy(system, kin)
    for sd in system.spring_dampers:
        A, B = kin[sd.a], kin[sd.b]
        d = w.matrix(B.r - A.r)
        L = w.aux(sp.sqrt((d.T * d)[0]))
        V += sd.stiffness * (L - sd.rest_length) ** 2 / 2
    return V


def applied_forces(system, kin: Kinematics, w: Intermediates) -> sp.Matrix:
    """The part of q from the force elements (no gravity): spring-dampers, applied forces and
    torques, generalized forces.  These are the joint forces of the articulated-body and the
    recursive Newton-Euler algorithms, which take gravity as an acceleration of ISYS."""
    f = len(system.y)
    q = sp.zeros(f, 1)
    for sd in system.spring_dampers:
        A, B = kin[sd.a], kin[sd.b]
        d = w.matrix(B.r - A.r)
        L = w.aux(sp.sqrt((d.T * d)[0]))
        e = w.matrix(d / L)
        Ld = w.aux((e.T * (B.v - A.v))[0])
        F = w.aux(sd.stiffness * (L - sd.rest_length) + sd.damping * Ld)
        q += -F * (w.matrix(B.JT - A.JT).T * e)

    for el in system.applied:
        Kf = kin[el.frame]
        vec = kin[el.in_frame].S * el.vector if el.in_frame != "ISYS" else el.vector
        vec = w.matrix(vec)
        J = Kf.JT if el.kind == "force" else Kf.JR
        q += J.T * vec

    q += flexible.elastic_forces(system, kin)
    index = {c: i for i, c in enumerate(system.coordinates_)}
    for gf in system.generalized_forces:
        q[index[gf.coordinate]] += gf.expression

    bad = [s for s in sp.Matrix(q).free_symbols if s in set(system.ydd)]
    if bad:
        raise ModelError(f"q depends on accelerations {bad}: a force element may not "
                         "depend on accelerations")
    return q


def _columns(A) -> list[list]:
    """The columns of a matrix as lists of entries."""
    return [list(A[:, j]) for j in range(A.cols)]


def _products(a, b) -> list:
    """The nonzero products a_i b_i (the terms of the dot product a . b)."""
    return [x * y for x, y in zip(a, b) if x and y]


