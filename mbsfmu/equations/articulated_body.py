"""y'' of a tree model in O(N) by the articulated-body algorithm (Featherstone's ABA), symbolically.

Instead of assembling M and q - k and solving M y'' = q - k, the accelerations are written
directly as intermediate variables over the kinematics of :mod:`.kinematics` (seed 002
notation: S_K rotation, r_K origin, w_K angular velocity, J_T,K / J_R,K Jacobians, abar_K /
alphabar_K the accelerations with y'' = 0, all in ISYS components).

**When it applies** ("joint coordinates", :func:`aba_applicable`): no constraints, and every
coordinate appears in the relative placement (position or rotation in its reference frame) of
exactly one frame, its *own* frame, and in at most :data:`MAX_JOINT_COORDINATES` coordinates
per frame.  Then the Jacobian columns of a frame K for the coordinates that are not K's own
are the rigid transport of those of its reference frame P (eqs. 4-5), and K's own columns at
K's origin form the joint matrix

    S_K = [J_R,K[:, own]; J_T,K[:, own]]          (6 x n_K, rotational rows first).

**Spatial quantities.**  Motions (alpha, a) and wrenches (n, f) are referred to the origin of a
frame, in ISYS components.  With rho = r_K - r_P = S_P r_rel, a motion is carried from P to K
and a wrench from K back to P by

    X:   alpha_K = alpha_P,   a_K = a_P + alpha_P x rho        (X = [1 0; -tilde(rho) 1])
    X^T: n_P = n_K + rho x f_K,   f_P = f_K,

and a spatial inertia by I_P = X^T I_K X, i.e. for I = [A B; B^T C]:

    B_P = B + tilde(rho) C,   A_P = A - B tilde(rho) + tilde(rho) B_P^T,   C_P = C.

The accelerations are split as a = abar + Delta, where Delta is the part linear in y'' (it has
no velocity terms, so it obeys the rigid transport above plus each joint's own term).  A body
contributes at its cg frame (about the cg) the inertia I = blockdiag(I_w, m 1) with
I_w = S I_b S^T (I_b the inertia tensor in cg-frame components) and the bias wrench

    p = (I_w alphabar + w x (I_w w),  m abar)

(Newton-Euler, eqs. 1-2, with y'' = 0).  Frames without a body contribute nothing.

**Applied forces** enter as joint forces tau: by the principle of virtual work the row of
M y'' + k = q that belongs to coordinate j is the projection S_j^T of the wrench that the
subtree below joint j transmits, so tau = q.  Gravity is taken out of q (its terms
sum_i m_i J_T,i^T g cancel symbolically) and applied instead as the acceleration -g of ISYS
(Featherstone's trick: m (a - g) = f for every body), which replaces the O(N^2) projection of
the weights on the Jacobians by an O(N) transport.

**Backward pass** (leaves to root), frame K with the children c:

    I^A_K = I_K + sum_c X_c^T I^a_c X_c,      p^A_K = p_K + sum_c X_c^T p^a_c,
    own coordinates:  U = I^A_K S_K,  D = S_K^T U,  u = tau_K - S_K^T p^A_K,
                      V = U D^-1,  I^a_K = I^A_K - V U^T,  p^a_K = p^A_K + V u,
    a rigid offset frame (no own coordinates): I^a_K = I^A_K, p^a_K = p^A_K.

D (n_K x n_K) is factored symbolically as L diag(d) L^T; its pivots d_j must be positive
(:attr:`ArticulatedBody.pivots`, checked by the generated C).  Where a column of S_K is a unit
vector e_k the identities S^T V = 1, I^a S = 0 and S^T p^a = tau set row k of V, row and column
k of I^a and entry k of p^a exactly (fewer operations).

**Forward pass** (root to leaves) from Delta_ISYS = (0, -g):

    Delta_K = X_K Delta_P,   y''_K = D^-1 u - V^T Delta_K,   Delta_K += S_K y''_K.

Every entry is stored with ``w.aux``; symmetric matrices are computed on their upper triangle
and mirrored, and sympy's exact zeros (planar models, unit axes, bodies on an axis) drop terms
before anything is generated.  The result agrees with M^-1 (q - k) to rounding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ..model.multibody import System
from .kinematics import cross, matmul, skew
from .newton_euler import _products

#: the largest number of own coordinates of one frame handled by the ABA
MAX_JOINT_COORDINATES = 6


@dataclass
class ArticulatedBody:
    """The result of :func:`articulated_body`.

    ``ydd`` is None when the model does not qualify; ``reason`` then says why.  ``pivots``
    lists, in the order they are formed, (coordinate index, pivot d_j, diagonal of D) for the
    checks of the generated code (the diagonal is empty for a 1 x 1 D)."""

    ydd: sp.Matrix | None
    reason: str | None = None
    pivots: list = field(default_factory=list)


def own_coordinates(system) -> tuple[dict[str, list[int]], str | None]:
    """{frame name: indices of its own coordinates} and a reason why the model does not qualify
    (models with flexible bodies never do: their elastic coordinates place every node frame and
    their inertia is no rigid body's, see :mod:`.flexible`)."""
    if not isinstance(system, System):
        return {}, f"a {type(system).__name__} has no frames (the algorithm runs on a tree of frames)"
    if system.flexible_bodies:
        return {}, (f"the model has flexible bodies ({', '.join(system.flexible_bodies)}); they use the "
                    "Newton-Euler/Jourdain assembly of M, k and q")
    index = {c: i for i, c in enumerate(system.y)}
    names = list(system.coordinates_)
    owner: dict[int, str] = {}
    own: dict[str, list[int]] = {}
    for fr in list(system.frames.values())[1:]:
        used = fr.position.free_symbols | fr.rotation.matrix().free_symbols
        mine = sorted(index[s] for s in used if s in index)
        for j in mine:
            if j in owner:
                return own, (f"coordinate {names[j]!r} places both frame {owner[j]!r} and frame "
                             f"{fr.name!r} (each coordinate must belong to one joint)")
            owner[j] = fr.name
        if len(mine) > MAX_JOINT_COORDINATES:
            return own, (f"frame {fr.name!r} has {len(mine)} coordinates (at most "
                         f"{MAX_JOINT_COORDINATES} per frame)")
        own[fr.name] = mine
    unused = [names[j] for j in range(len(names)) if j not in owner]
    if unused:
        return own, f"coordinate(s) {', '.join(map(repr, unused))} place no frame"
    return own, None


def aba_applicable(system) -> str | None:
    """None if the articulated-body algorithm applies to ``system``, else the reason it does not
    (structural checks only; :func:`articulated_body` may still find a pivot that is
    identically zero)."""
    if system.constrained:
        return "the model has constraints (kinematic loops)"
    return own_coordinates(system)[1]


def articulated_accelerations(eqs) -> sp.Matrix | None:
    """y'' (f x 1 over ``eqs.intermediates``) by the articulated-body algorithm, or None if the
    model does not qualify (see :func:`articulated_body` for the reason)."""
    return articulated_body(eqs).ydd


def articulated_body(eqs) -> ArticulatedBody:
    """The articulated-body algorithm of ``eqs`` (computed once per Equations object)."""
    return eqs.derived("articulated_body", _derive)


# ---------------------------------------------------------------- spatial algebra
def _sym6(w, M) -> sp.Matrix:
    """A symmetric 6 x 6 matrix whose upper triangle is stored as intermediates, mirrored."""
    out = sp.zeros(6, 6)
    for i in range(6):
        for j in range(i, 6):
            out[i, j] = out[j, i] = w.aux(M[i, j])
    return out


def _transport_inertia(w, I: sp.Matrix, rho: sp.Matrix) -> sp.Matrix:
    """X^T I X for X = [1 0; -tilde(rho) 1] (upper triangle of the new A block only)."""
    if not any(rho):
        return I
    R = skew(rho)
    A, B, C = I[:3, :3], I[:3, 3:], I[3:, 3:]
    Bn = w.matrix(B + matmul(R, C))
    BR = matmul(B, R)
    RB = matmul(R, Bn.T)
    out = sp.zeros(6, 6)
    for i in range(3):
        for j in range(i, 3):
            out[i, j] = out[j, i] = w.aux(A[i, j] - BR[i, j] + RB[i, j])
        for j in range(3):
            out[i, 3 + j] = out[3 + j, i] = Bn[i, j]
            out[3 + i, 3 + j] = C[i, j]
    return out


def _transport_wrench(w, p: sp.Matrix, rho: sp.Matrix) -> sp.Matrix:
    """(n + rho x f, f)."""
    if not any(rho):
        return p
    n = w.matrix(p[:3, :] + cross(rho, p[3:, :]))
    return sp.Matrix([*n, *p[3:, :]])


def _transport_motion(w, d: sp.Matrix, rho: sp.Matrix) -> sp.Matrix:
    """(alpha, a + alpha x rho)."""
    if not any(rho) or not any(d[:3, :]):
        return d
    a = w.matrix(d[3:, :] + cross(d[:3, :], rho))
    return sp.Matrix([*d[:3, :], *a])


def _unit_row(col) -> int | None:
    """k if the column is the unit vector e_k, else None."""
    nz = [k for k, x in enumerate(col) if x != 0]
    if len(nz) == 1 and col[nz[0]] == 1:
        return nz[0]
    return None


# ---------------------------------------------------------------- the algorithm
def _derive(eqs) -> ArticulatedBody:
    system = eqs.system
    if eqs.m:
        return ArticulatedBody(None, "the model has constraints (kinematic loops)")
    own, reason = own_coordinates(system)
    if reason:
        return ArticulatedBody(None, reason)
    w = eqs.intermediates
    kin = eqs.kinematics
    names = list(system.coordinates_)
    f = len(system.y)
    frames = list(system.frames.values())[1:]
    g = system.gravity_vector

    # joint forces: q without the weights (gravity acts as the acceleration -g of ISYS)
    tau = [w.aux(x) for x in eqs.q_applied]

    # body inertias and bias wrenches at their cg frames
    body_at = {b.cg_frame: b for b in system.bodies.values()}
    IA: dict[str, sp.Matrix | None] = {fr.name: None for fr in frames}
    pA: dict[str, sp.Matrix | None] = {fr.name: None for fr in frames}
    for name, b in body_at.items():
        K = kin[name]
        S, Ib, m = K.S, b.inertia, b.mass
        SI = matmul(S, Ib)
        Iw = sp.zeros(3, 3)
        for i in range(3):
            for j in range(i, 3):
                Iw[i, j] = Iw[j, i] = w.aux(sp.Add(*_products(list(SI[i, :]), list(S[j, :]))))
        if not any(Iw) and m == 0:
            continue
        I = sp.zeros(6, 6)
        I[:3, :3] = Iw
        I[3:, 3:] = m * sp.eye(3)
        Iwo = w.matrix(matmul(Iw, K.omega))
        n = w.matrix(matmul(Iw, K.alphabar) + cross(K.omega, Iwo))
        fo = w.matrix(m * K.abar)
        IA[name] = _sym6(w, I)
        pA[name] = sp.Matrix([*n, *fo])

    # backward pass
    rho = {fr.name: w.matrix(matmul(kin[fr.ref].S, fr.position)) for fr in frames}
    joint: dict[str, tuple] = {}   # frame -> (own indices, S, V, D^-1 u)
    pivots = []
    for fr in reversed(frames):
        K = kin[fr.name]
        I, p = IA[fr.name], pA[fr.name]
        idx = own[fr.name]
        if idx:
            S = sp.Matrix.vstack(*kin.joint_columns(fr.name, idx))
            if I is None:
                return ArticulatedBody(None, f"coordinate {names[idx[0]]!r} moves no mass")
            I = _sym6(w, I)
            p = w.matrix(p)
            nK = len(idx)
            U = w.matrix(matmul(I, S))
            D = sp.zeros(nK, nK)
            for i in range(nK):
                for j in range(i, nK):
                    D[i, j] = D[j, i] = w.aux(sp.Add(*_products(list(S[:, i]), list(U[:, j]))))
            solve, d = _ldl(w, D)
            for j in range(nK):
                if d[j] == 0:
                    return ArticulatedBody(None, f"the articulated inertia of coordinate "
                                                 f"{names[idx[j]]!r} is identically zero")
                pivots.append((idx[j], d[j], [D[i, i] for i in range(nK)] if nK > 1 else []))
            uvec = [w.aux(tau[idx[j]] - sp.Add(*_products(list(S[:, j]), list(p))))
                    for j in range(nK)]
            Dinv_u = solve(uvec)
            V = sp.zeros(6, nK)
            for r in range(6):
                if any(U[r, :]):
                    V[r, :] = sp.Matrix([solve(list(U[r, :]))])
            units = {}
            for j in range(nK):
                k = _unit_row(list(S[:, j]))
                if k is not None:
                    units[k] = j
                    V[k, :] = sp.zeros(1, nK)
                    V[k, j] = 1
            Ia = sp.zeros(6, 6)
            for i in range(6):
                for j in range(i, 6):
                    if i in units or j in units:
                        continue
                    Ia[i, j] = Ia[j, i] = w.aux(
                        I[i, j] - sp.Add(*_products(list(V[i, :]), list(U[j, :]))))
            pa = sp.Matrix([tau[idx[units[i]]] if i in units
                            else w.aux(p[i] + sp.Add(*_products(list(V[i, :]), uvec)))
                            for i in range(6)])
            joint[fr.name] = (idx, S, V, Dinv_u)
            I, p = Ia, pa
        if fr.ref == "ISYS" or I is None:
            continue
        It = _transport_inertia(w, I, rho[fr.name])
        pt = _transport_wrench(w, p, rho[fr.name])
        if IA[fr.ref] is None:
            IA[fr.ref], pA[fr.ref] = It, pt
        else:
            IA[fr.ref] = IA[fr.ref] + It
            pA[fr.ref] = pA[fr.ref] + pt

    # forward pass
    ydd = [None] * f
    delta = {"ISYS": sp.Matrix([0, 0, 0, *(-g)])}
    for fr in frames:
        d = _transport_motion(w, delta[fr.ref], rho[fr.name])
        if fr.name in joint:
            idx, S, V, Dinv_u = joint[fr.name]
            acc = [w.aux(Dinv_u[j] - sp.Add(*_products(list(V[:, j]), list(d))))
                   for j in range(len(idx))]
            for j, a in zip(idx, acc):
                ydd[j] = a
            d = w.matrix(d + S * sp.Matrix(acc))
        delta[fr.name] = d
    return ArticulatedBody(sp.Matrix(f, 1, ydd), None, pivots)


def _ldl(w, D: sp.Matrix):
    """D = L diag(d) L^T of a small symmetric matrix; returns (solve, d) where solve(b) is the
    list D^-1 b over intermediates."""
    n = D.rows
    L = sp.eye(n)
    d = []
    inv = []
    for j in range(n):
        dj = w.aux(D[j, j] - sp.Add(*[L[j, k] ** 2 * d[k] for k in range(j)]))
        d.append(dj)
        inv.append(w.aux(1 / dj) if dj != 0 else sp.S.Zero)
        for i in range(j + 1, n):
            L[i, j] = w.aux((D[i, j] - sp.Add(*[L[i, k] * L[j, k] * d[k] for k in range(j)]))
                            * inv[j])

    def solve(b):
        z = []
        for i in range(n):
            z.append(w.aux(b[i] - sp.Add(*[L[i, k] * z[k] for k in range(i)])))
        z = [w.aux(z[i] * inv[i]) for i in range(n)]
        x = [None] * n
        for i in reversed(range(n)):
            x[i] = w.aux(z[i] - sp.Add(*[L[k, i] * x[k] for k in range(i + 1, n)]))
        return x

    return solve, d
