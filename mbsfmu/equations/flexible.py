"""The equations of motion of flexible bodies (seed 002 "Step 2-4 (elastic)"; Schwertassek and
Wallrapp, *Dynamik flexibler Mehrkörpersysteme*, the Standard Input Data).

A flexible body moves as its frame of reference R plus the elastic deformation of its n
elastic coordinates q (:mod:`mbsfmu.model.elastic.modal_data`).  With z = [v; w; q'] (the
velocity of R's origin and R's angular velocity, both in R components, and q') its kinetic
energy is T = 1/2 z^T Mbar(q) z.  The body's equations are the Euler-Poincaré equations
(Lagrange's equations in the quasi-velocities v, w), exact for any T(q, z), so the energy is
conserved to integration error:

    p = Mbar(q) z = [p_v; p_w; p_q],
    h = Mbar z' + Mbar' z + [ w~ p_v ;  w~ p_w + v~ p_v ;  -dT/dq ]        (inertia forces)

with Mbar' = sum_j q'_j dMbar/dq_j and dT/dq_j = 1/2 z^T (dMbar/dq_j) z.  (The translational row
is d/dt p_v + w x p_v: for a rigid body, p_v = m v + w x mdCM and with d/dt v = S^T a_R - w x v
it is m S^T a_R + ..., Newton's law in R components; the rotational row is Euler's about R's
origin.)

R's kinematics (seed 002 eqs. 3-7, :mod:`.kinematics`; S: R -> ISYS, all in ISYS components)
give v = S^T v_R, w = S^T w_R and

    z' = J_z y'' + zbar',    J_z = [S^T J_T; S^T J_R; E],
    zbar' = [S^T abar - w~ v ; S^T alphabar ; 0]

(E picks the columns of the body's elastic coordinates; d/dt(S^T v_R) = S^T a_R - w~ S^T v_R and
d/dt(S^T w_R) = S^T alpha_R).  Projected with J_z^T (Jourdain's principle, as the rigid bodies
in :mod:`.newton_euler`), the body adds

    M += J_z^T Mbar J_z,
    k += J_z^T (Mbar zbar' + Mbar' z + [w~ p_v; w~ p_w + v~ p_v; -dT/dq]),
    q += J_z^T [m g_R; mdCM(q)~ g_R; Ct g_R] - E^T (f_K Ke q + f_D De q' + K_sigma q),   g_R = S^T g,
    T += 1/2 z^T Mbar z,      V += -g^T (m r_R + S mdCM(q)) + 1/2 f_K q^T Ke q,

with the body's stiffness and damping factors f_K, f_D (1 unless given; constants of the model).

**Geometric stiffening** (``data.ksigma`` and ``geometric_stiffening``):
K_sigma = ksigma.M0 + sum_l ksigma.M1[:, :, l] load_l over :data:`~mbsfmu.model.elastic.
modal_data.LOAD_CASES`, with the loads taken as a quasi-static estimate of the stresses: the
acceleration of R's origin less gravity is -g_R (R's own acceleration taken as zero: it would
make the load depend on y'' and M unsymmetric), the angular acceleration zero, and the six
products of w.  K_sigma q is no potential force, so energy is conserved only without it.

Every quantity is stored with the intermediates (``w.aux``), the modal numbers as sympy Floats
(exact zeros dropped), nothing is simplified.  The tree algorithms (articulated body, recursive
Newton-Euler) do not apply to models with flexible bodies (:func:`~.articulated_body.
own_coordinates` says so), which therefore always use this assembly.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import sympy as sp

from ..model.elastic.modal_data import linear_form
from .kinematics import cross, dot, matmul, skew


def _num(x) -> sp.Expr:
    x = float(x)
    return sp.Float(x) if x != 0.0 else sp.S.Zero


class FlexibleBodyTerms:
    """The symbolic quantities of one flexible body, each formed once on first use."""

    def __init__(self, system, kin, body):
        self.system, self.kin, self.w, self.body = system, kin, kin.w, body
        self.data = body.data
        self.n = body.data.n
        index = {c: i for i, c in enumerate(system.coordinates_)}
        self.idx = [index[c] for c in body.coordinates]
        cs = [system.coordinates_[c] for c in body.coordinates]
        self.q = [c.symbol for c in cs]
        self.qd = [c.velocity for c in cs]
        self.K = kin[body.frame]
        self.f = len(system.y)

    # ------------------------------------------------------------ the body's mass matrix
    @cached_property
    def mdCM(self) -> sp.Matrix:
        """mdCM(q) = M0 + M1 q (R components)."""
        d = self.data.mdCM
        return self.w.matrix(sp.Matrix([linear_form(d.M0[i], d.M1[i], self.q) for i in range(3)]))

    def _J_entry(self, i, l) -> sp.Expr:
        J = self.data.J
        terms = [_num(J.M0[i][l])]
        if J.M1 is not None:
            terms += [_num(J.M1[i, l, j]) * self.q[j] for j in range(self.n)]
        if J.M2 is not None:
            for j in range(self.n):
                terms.append(_num(J.M2[i, l, j, j]) * self.q[j] ** 2)
                for k in range(j + 1, self.n):
                    terms.append(_num(J.M2[i, l, j, k] + J.M2[i, l, k, j]) * self.q[j] * self.q[k])
        return sp.Add(*terms)

    @cached_property
    def J(self) -> sp.Matrix:
        """J(q) = M0 + M1 q + M2 q q, symmetric (upper triangle formed, mirrored)."""
        out = sp.zeros(3, 3)
        for i in range(3):
            for l in range(i, 3):
                out[i, l] = out[l, i] = self.w.aux(self._J_entry(i, l))
        return out

    def dJ(self, j) -> sp.Matrix:
        """dJ/dq_j = M1[:, :, j] + sum_k (M2[:, :, j, k] + M2[:, :, k, j]) q_k (formed once)."""
        cache = self.__dict__.setdefault("_dJ", {})
        if j not in cache:
            cache[j] = self._form_dJ(j)
        return cache[j]

    def _form_dJ(self, j) -> sp.Matrix:
        J = self.data.J
        out = sp.zeros(3, 3)
        for i in range(3):
            for l in range(i, 3):
                terms = [_num(J.M1[i, l, j])] if J.M1 is not None else []
                if J.M2 is not None:
                    terms += [_num(J.M2[i, l, j, k] + J.M2[i, l, k, j]) * self.q[k] for k in range(self.n)]
                out[i, l] = out[l, i] = self.w.aux(sp.Add(*terms))
        return out

    def _Cr1(self, j) -> np.ndarray:
        Cr = self.data.Cr
        return np.zeros((self.n, 3)) if Cr.M1 is None else np.asarray(Cr.M1)[:, :, j]

    @cached_property
    def Cr(self) -> sp.Matrix:
        """Cr(q) = M0 + M1 q (n x 3)."""
        Cr = self.data.Cr
        M1 = np.zeros((self.n, 3, self.n)) if Cr.M1 is None else np.asarray(Cr.M1)
        return self.w.matrix(sp.Matrix(self.n, 3, lambda a, i: linear_form(Cr.M0[a][i], M1[a, i], self.q)))

    @cached_property
    def Mbar(self) -> sp.Matrix:
        """Mbar(q), (6 + n) square (modal_data's module docstring)."""
        n, d = self.n, self.data
        M = sp.zeros(6 + n, 6 + n)
        m = _num(d.mass)
        for i in range(3):
            M[i, i] = m
        mc = skew(self.mdCM)
        M[3:6, 0:3] = mc
        M[0:3, 3:6] = mc.T
        M[3:6, 3:6] = self.J
        Ct = sp.Matrix(n, 3, lambda a, i: _num(d.Ct.M0[a][i]))
        M[6:, 0:3] = Ct
        M[0:3, 6:] = Ct.T
        M[6:, 3:6] = self.Cr
        M[3:6, 6:] = self.Cr.T
        M[6:, 6:] = sp.Matrix(n, n, lambda a, b: _num(d.Me[a][b]))
        return M

    # ------------------------------------------------------------ velocities and momenta
    @cached_property
    def v(self) -> sp.Matrix:
        return self.w.matrix(matmul(self.K.S.T, self.K.v))

    @cached_property
    def omega(self) -> sp.Matrix:
        return self.w.matrix(matmul(self.K.S.T, self.K.omega))

    @cached_property
    def z(self) -> sp.Matrix:
        return sp.Matrix([*self.v, *self.omega, *self.qd])

    @cached_property
    def p(self) -> sp.Matrix:
        """p = Mbar z."""
        return self.w.matrix(matmul(self.Mbar, self.z))

    @cached_property
    def Jz(self) -> sp.Matrix:
        """J_z = [S^T J_T; S^T J_R; E], (6 + n) x f."""
        K = self.K
        E = sp.zeros(self.n, self.f)
        for a, j in enumerate(self.idx):
            E[a, j] = 1
        return sp.Matrix.vstack(self.w.matrix(matmul(K.S.T, K.JT)), self.w.matrix(matmul(K.S.T, K.JR)), E)

    # ------------------------------------------------------------ inertia forces
    def _Mdot_z(self) -> sp.Matrix:
        """Mbar' z = [cdot~^T w; cdot~ v + J' w + Cr'^T q'; Cr' w], cdot = M1 q' the rate of mdCM."""
        w, n, v, om, qd = self.w, self.n, self.v, self.omega, self.qd
        d = self.data
        cdot = w.matrix(sp.Matrix([linear_form(0.0, d.mdCM.M1[i], qd) for i in range(3)]))
        Jdot = sp.zeros(3, 3)
        if d.J.M1 is not None or d.J.M2 is not None:
            for j in range(n):
                Jdot += self.dJ(j) * qd[j]
            Jdot = w.matrix(Jdot)
        Crdot = w.matrix(sp.Matrix(n, 3, lambda a, i: linear_form(0.0, [self._Cr1(j)[a, i] for j in range(n)],
                                                                    qd)))
        top = cross(om, cdot)
        mid = matmul(skew(cdot), v) + matmul(Jdot, om) + matmul(Crdot.T, sp.Matrix(qd))
        bot = matmul(Crdot, om)
        return sp.Matrix([*top, *mid, *bot])

    def _dT_dq(self) -> list:
        """dT/dq_j = (M1_j x v) . w + 1/2 w^T dJ/dq_j w + q'^T Cr1_j w  (M1_j: column j of mdCM.M1)."""
        d, v, om, qd = self.data, self.v, self.omega, self.qd
        out = []
        for j in range(self.n):
            c = [_num(x) for x in np.asarray(d.mdCM.M1)[:, j]]
            terms = [dot(cross(sp.Matrix(c), v), om)]
            if d.J.M1 is not None or d.J.M2 is not None:
                dJ = self.dJ(j)
                terms.append(dot(om, matmul(dJ, om)) / 2)
            Cr1 = self._Cr1(j)
            if np.any(Cr1):
                C = sp.Matrix([[_num(x) for x in row] for row in Cr1])
                terms.append(dot(sp.Matrix(qd), matmul(C, om)))
            out.append(self.w.aux(sp.Add(*terms)))
        return out

    @cached_property
    def hbar(self) -> sp.Matrix:
        """The inertia forces at y'' = 0: Mbar zbar' + Mbar' z + [w~ p_v; w~ p_w + v~ p_v; -dT/dq]."""
        K, w, v, om, p = self.K, self.w, self.v, self.omega, self.p
        zbar = sp.Matrix([*w.matrix(matmul(K.S.T, K.abar) - cross(om, v)),
                          *w.matrix(matmul(K.S.T, K.alphabar)), *([0] * self.n)])
        pv, pw = p[0:3, :], p[3:6, :]
        gyro = sp.Matrix([*cross(om, pv), *(cross(om, pw) + cross(v, pv)), *[-x for x in self._dT_dq()]])
        return w.matrix(matmul(self.Mbar, zbar) + self._Mdot_z() + gyro)

    # ------------------------------------------------------------ applied forces
    @cached_property
    def g_R(self) -> sp.Matrix:
        return self.w.matrix(matmul(self.K.S.T, self.system.gravity_vector))

    def gravity_wrench(self) -> sp.Matrix:
        """[m g_R; mdCM(q)~ g_R; Ct g_R]."""
        d, g = self.data, self.g_R
        Ct = sp.Matrix(self.n, 3, lambda a, i: _num(d.Ct.M0[a][i]))
        return self.w.matrix(sp.Matrix([*(_num(d.mass) * g), *cross(self.mdCM, g), *matmul(Ct, g)]))

    def elastic_forces(self) -> list:
        """-(Ke q + De q' + K_sigma q), one entry per elastic coordinate."""
        d, n, q, qd = self.data, self.n, self.q, self.qd
        Ke = np.asarray(d.Ke, dtype=float)
        fk, fd = self.body.stiffness_factor, self.body.damping_factor
        stiff = self.body.geometric_stiffening and d.ksigma is not None
        K0 = np.asarray(d.ksigma.M0, dtype=float) if stiff and d.ksigma.M0 is not None else np.zeros((n, n))
        out = []
        loads = self._loads() if stiff else []
        for a in range(n):
            terms = [-fk * _num(Ke[a, b]) * q[b] for b in range(n)]
            terms += [-_num(K0[a, b]) * q[b] for b in range(n)]
            terms += [-fd * _num(d.De[a][b]) * qd[b] for b in range(n)]
            if stiff:
                for b in range(n):
                    Kab = sp.Add(*[_num(d.ksigma.M1[a, b, l]) * ld for l, ld in enumerate(loads)])
                    if Kab != 0:
                        terms.append(-self.w.aux(Kab) * q[b])
            out.append(sp.Add(*terms))
        return out

    def _loads(self) -> list:
        """The loads of LOAD_CASES for K_sigma: a = -g_R, alpha = 0, the products of w."""
        om, g = self.omega, self.g_R
        return [-g[0], -g[1], -g[2], 0, 0, 0, om[0] ** 2, om[1] ** 2, om[2] ** 2,
                om[0] * om[1], om[1] * om[2], om[2] * om[0]]

    # ------------------------------------------------------------ energies
    def kinetic_energy(self) -> sp.Expr:
        return dot(self.z, self.p) / 2

    def potential_energy(self) -> sp.Expr:
        """-g^T (m r_R + S mdCM(q)) + 1/2 q^T Ke q."""
        d, K, q = self.data, self.K, self.q
        V = []
        g = self.system.gravity_vector
        if any(g):
            V.append(-dot(g, _num(d.mass) * K.r + matmul(K.S, self.mdCM)))
        Ke = np.asarray(d.Ke, dtype=float)
        fk = self.body.stiffness_factor
        V += [fk * _num(Ke[a, b]) * q[a] * q[b] / 2 for a in range(self.n) for b in range(self.n)]
        return sp.Add(*V)


def terms(system, kin) -> list[FlexibleBodyTerms]:
    """The :class:`FlexibleBodyTerms` of every flexible body (formed once per Kinematics)."""
    cache = kin.__dict__.setdefault("_flexible_terms", {})
    out = []
    for body in getattr(system, "flexible_bodies", {}).values():
        if body.name not in cache:
            cache[body.name] = FlexibleBodyTerms(system, kin, body)
        out.append(cache[body.name])
    return out


def _col(A, j) -> list:
    return list(A[:, j])


def add_mass_terms(system, kin, M_terms) -> None:
    """M += J_z^T Mbar J_z (lower triangle of the term lists of :func:`.newton_euler.mass_matrix`)."""
    for b in terms(system, kin):
        Jz = b.Jz
        P = b.w.matrix(matmul(b.Mbar, Jz))
        cols = [_col(Jz, a) for a in range(b.f)]
        pcols = [_col(P, a) for a in range(b.f)]
        for a in range(b.f):
            if not any(cols[a]):
                continue
            for c in range(a + 1):
                M_terms[a][c].extend(x * y for x, y in zip(cols[a], pcols[c]) if x != 0 and y != 0)


def add_bias_terms(system, kin, k_terms) -> None:
    """k += J_z^T hbar."""
    for b in terms(system, kin):
        h = list(b.hbar)
        for a in range(b.f):
            k_terms[a].extend(x * y for x, y in zip(_col(b.Jz, a), h) if x != 0 and y != 0)


def add_gravity_terms(system, kin, q_terms) -> None:
    """q += J_z^T [m g_R; mdCM~ g_R; Ct g_R]."""
    if not any(system.gravity_vector):
        return
    for b in terms(system, kin):
        Q = list(b.gravity_wrench())
        for a in range(b.f):
            q_terms[a].extend(x * y for x, y in zip(_col(b.Jz, a), Q) if x != 0 and y != 0)


def elastic_forces(system, kin) -> sp.Matrix:
    """-E^T (Ke q + De q' + K_sigma q) of every flexible body (f x 1)."""
    q = sp.zeros(len(system.y), 1)
    for b in terms(system, kin):
        for j, e in zip(b.idx, b.elastic_forces()):
            q[j] += e
    return q


def kinetic_energy(system, kin) -> sp.Expr:
    return sp.Add(*[b.kinetic_energy() for b in terms(system, kin)])


def potential_energy(system, kin) -> sp.Expr:
    return sp.Add(*[b.potential_energy() for b in terms(system, kin)])


def moved(system, kin) -> set[int]:
    """The coordinates that move a flexible body: its elastic ones and those in R's Jacobians."""
    out = set()
    index = {c: i for i, c in enumerate(system.coordinates_)}
    for body in getattr(system, "flexible_bodies", {}).values():
        out |= {index[c] for c in body.coordinates}
        K = kin[body.frame]
        out |= {j for j in range(len(system.y)) if any(K.JT[:, j]) or any(K.JR[:, j])}
    return out
