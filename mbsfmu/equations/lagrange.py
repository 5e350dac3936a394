"""Equations of motion from Lagrange's equations of the first kind (seed 003 eqs. 1.2.1-1.2.3).

For a :class:`~mbsfmu.model.lagrangian.LagrangianSystem` with kinetic energy T(y, y', t),
potential V(y, t), Rayleigh dissipation function R(y, y', t), generalized forces Q and holonomic
constraints c(y, t) = 0,

    d/dt dT/dy' - dT/dy = -dV/dy - dR/dy' + Q + C^T lambda

is written in the form of :class:`~mbsfmu.equations.minimal_form.Equations`, M y'' + k = q (the
multipliers are added by the formulations, seed 000 eq. 3), with

    M = d2T/dy'dy'
    k = (d2T/dy'dy) y' + d2T/dy'dt - dT/dy        (d/dt dT/dy' at y'' = 0, minus dT/dy)
    q = -dV/dy - dR/dy' + Q

(time parameters count as time: d/dt runs through them).  The constraints, C = dc/dy,
b' = dc/dt and b'' (C y'' + b'' = c'') come from :func:`~.constraints.holonomic_rows`.  T, V and R
are sums of small terms (one per element or user call), differentiated term by term; spring-
dampers between points are assembled from intermediate variables as in
:mod:`.newton_euler` (length L = |a - b|, direction e, L' = e.(a' - b'), tension
F = k (L - L0) + d L', q -= F (d(a - b)/dy)^T e), which is -dV/dy - dR/dy' of their
V = k (L - L0)^2 / 2 and R = d L'^2 / 2 without differentiating a square root.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..core.errors import ModelError, SingularMassMatrixError
from ..model.time_derivative import TimeDerivative
from .constraints import constraint_equations
from .intermediates import Intermediates
from .kinematics import (
    Kinematics,
    cross,
    dot,
    expression_kinematics,
    jacobian,
    matmul,
    skew,
)
from .minimal_form import Equations


@dataclass
class LagrangeParts:
    """M, k, q and the energies of a Lagrangian system (over intermediate variables)."""

    M: sp.Matrix
    k: sp.Matrix
    q: sp.Matrix
    T: sp.Expr
    V: sp.Expr


@dataclass
class LagrangeEquations(Equations):
    """:class:`~.derive.Equations` of a LagrangianSystem: the same attributes, with M, k, q and
    the energies from Lagrange's equations (derived at once: the models are small and the
    checks need M).  ``kinematics`` holds the inertial frame only."""

    parts: LagrangeParts = None

    @property
    def M(self) -> sp.Matrix:
        return self.parts.M

    @property
    def k(self) -> sp.Matrix:
        return self.parts.k

    @property
    def q(self) -> sp.Matrix:
        return self.parts.q

    def _energies(self):
        return self.parts.T, self.parts.V

    def is_derived(self, key: str) -> bool:
        return key in ("M", "k", "q", "energies") or super().is_derived(key)


def derive_lagrange(system) -> LagrangeEquations:
    """M, k, q, energies and constraints of a LagrangianSystem (see the module docstring)."""
    w = Intermediates()
    kin = Kinematics(system, w)  # only ISYS: the constraint rows need its time derivative
    D = kin.D
    M, k = inertia_terms(system, D, w)
    q = applied_terms(system, D, w)
    T, V = energies(system, w)
    c, C, b1, b2 = constraint_equations(system, kin, w)
    return LagrangeEquations(system, w, kin, q, c, C, b1, b2, parts=LagrangeParts(M, k, q, T, V))


def _partials(expr, index: dict) -> dict[int, sp.Expr]:
    """{j: d expr / d s_j} for the symbols s_j of ``index`` (symbol -> j) that expr contains."""
    return {index[s]: sp.diff(expr, s) for s in expr.free_symbols if s in index}


def gravity_terms(system) -> list[sp.Expr]:
    """-m g . r_cg of every element with mass (nothing without gravity)."""
    g = system.gravity_field
    if not any(g):
        return []
    return [-m.mass * sum((gi * ri for gi, ri in zip(g, m.cg)), sp.S.Zero) for m in system.masses]


def form_kinematics(form, system, D: TimeDerivative, w: Intermediates,
                    full: bool = True) -> list[tuple]:
    """(x, J, v, a0) of every vector of a :class:`~mbsfmu.model.elements.KineticForm`: the
    vector, its Jacobian dx/dy, its velocity x' and its acceleration at y'' = 0, as
    intermediate variables (for a cross product J and a0 None unless ``full``).  A vector expression is
    differentiated; a cross product x = x_i x x_j by the product rule (J = x_i~ J_j - x_j~ J_i,
    x' = x_i' x x_j + x_i x x_j', a0 = a0_i x x_j + 2 x_i' x x_j' + x_i x a0_j), so nothing
    larger than its factors is differentiated."""
    out = []
    for vec in form.vectors:
        if isinstance(vec, tuple):
            (xi, Ji, vi, ai), (xj, Jj, vj, aj) = out[vec[1]], out[vec[2]]
            x = w.matrix(cross(xi, xj))
            v = w.matrix(cross(vi, xj) + cross(xi, vj))
            J = a0 = None
            if full:
                J = w.matrix(matmul(skew(xi), Jj) - matmul(skew(xj), Ji))
                a0 = w.matrix(cross(ai, xj) + 2 * cross(vi, vj) + cross(xi, aj))
        else:
            x, J, v, a0 = expression_kinematics(vec, system, D, w)
        out.append((x, J, v, a0))
    return out


def inertia_terms(system, D: TimeDerivative, w: Intermediates) -> tuple[sp.Matrix, sp.Matrix]:
    """M = d2T/dy'dy' and k = d/dt(dT/dy')|_(y''=0) - dT/dy, term by term; an element's term
    from its quadratic form T = 1/2 sum_ab G_ab x_a' . x_b' (x_a = x_a(y, t)), for which
    Lagrange's equations are sum_ab G_ab J_a^T x_b'' (the dT/dy terms cancel the J_a'^T
    ones), so M = sum_ab G_ab J_a^T J_b and k = sum_ab G_ab J_a^T a0_b; a user's term by
    differentiating it.  A coordinate whose velocity is in no term of T and that is in no
    constraint is a SingularMassMatrixError naming it, a mass matrix that depends on the
    velocities a ModelError.  A coordinate without mass that constraints fix is allowed (M
    singular, the augmented system regular: :mod:`.mass_regularity`)."""
    f = len(system.y)
    iy = {s: j for j, s in enumerate(system.y)}
    iyd = {s: j for j, s in enumerate(system.yd)}
    M_terms = [[[] for _ in range(f)] for _ in range(f)]
    k_terms = [[] for _ in range(f)]
    for term in system.energy_terms:
        if term.kind != "T":
            continue
        if term.form is not None:
            kin = form_kinematics(term.form, system, D, w)
            G = term.form.metric
            for a, (_, Ja, _, _) in enumerate(kin):
                for b, (_, Jb, _, a0b) in enumerate(kin):
                    if G[a, b] == 0:
                        continue
                    Mab, kab = matmul(Ja.T, Jb), matmul(Ja.T, a0b)
                    for i in range(f):
                        if kab[i]:
                            k_terms[i].append(G[a, b] * kab[i])
                        for j in range(f):
                            if Mab[i, j]:
                                M_terms[i][j].append(G[a, b] * Mab[i, j])
            continue
        T = term.expression
        for i, p in _partials(T, iyd).items():      # p_i = dT/dy'_i
            for j, mij in _partials(p, iyd).items():
                M_terms[i][j].append(mij)
            k_terms[i].append(D(p, without_ydd=True))
        for i, dTdy in _partials(T, iy).items():
            k_terms[i].append(-dTdy)
    M = sp.Matrix(f, f, lambda i, j: sp.Add(*M_terms[i][j]))
    constrained = set().union(*(h.expression.free_symbols for h in system.holonomic),
                              *(h.expression.free_symbols for h in system.nonholonomic))
    free = [str(system.y[j]) for j in range(f) if not any(M[:, j])
            and not {system.y[j], system.yd[j]} & constrained]
    if free:
        raise SingularMassMatrixError(
            f"{system.name}: the mass matrix is singular: the velocity of coordinate(s) "
            + ", ".join(map(repr, free)) + " appears in no term of the kinetic energy T and "
            "in no constraint, so nothing determines its motion (give the point a mass: "
            "point_mass(), rod(), rigid_body() or kinetic_energy(), or constrain it)")
    moving = M.free_symbols & set(system.yd)
    if moving:
        raise ModelError(f"{system.name}: the kinetic energy is not quadratic in the velocities: "
                         f"its mass matrix d2T/dy'dy' depends on {', '.join(sorted(map(str, moving)))}")
    k = sp.Matrix(f, 1, [sp.Add(*t) for t in k_terms])
    return M, k


def applied_terms(system, D: TimeDerivative, w: Intermediates) -> sp.Matrix:
    """q = -dV/dy - dR/dy' + Q: potentials (gravity included), dissipation, spring-dampers,
    forces at points and generalized forces."""
    f = len(system.y)
    iy = {s: j for j, s in enumerate(system.y)}
    iyd = {s: j for j, s in enumerate(system.yd)}
    q_terms = [[] for _ in range(f)]
    potentials = [t.expression for t in system.energy_terms if t.kind == "V"] + gravity_terms(system)
    for V in potentials:
        for i, d in _partials(V, iy).items():
            q_terms[i].append(-d)
    for t in system.energy_terms:
        if t.kind == "R":
            for i, d in _partials(t.expression, iyd).items():
                q_terms[i].append(-d)
    for sd in system.point_springs:
        d = w.matrix(sd.a - sd.b)
        J = jacobian(sd.a - sd.b, system.y)
        L = w.aux(sp.sqrt(sum((x * x for x in d), sp.S.Zero)))
        e = w.matrix(d / L)
        Ld = w.aux(sum((ei * vi for ei, vi in zip(e, D(sd.a - sd.b, without_ydd=True))), sp.S.Zero))
        F = w.aux(sd.stiffness * (L - sd.rest_length) + sd.damping * Ld)
        for i, Qi in enumerate(J.T * e):
            if Qi != 0:
                q_terms[i].append(-F * Qi)
    for pf in system.point_forces:
        J = jacobian(pf.point, system.y)
        for i, Qi in enumerate(J.T * pf.vector):
            if Qi != 0:
                q_terms[i].append(Qi)
    index = {c: i for i, c in enumerate(system.coordinates_)}
    for gf in system.generalized_forces:
        q_terms[index[gf.coordinate]].append(gf.expression)
    return sp.Matrix(f, 1, [sp.Add(*t) for t in q_terms])


def energies(system, w: Intermediates) -> tuple[sp.Expr, sp.Expr]:
    """(T, V): the kinetic energy and the potential of the conservative forces (gravity, the
    user's V terms, springs)."""
    T = sp.S.Zero
    for term in system.energy_terms:
        if term.kind == "T" and term.form is not None:
            G = term.form.metric
            v = [vel for _, _, vel, _ in form_kinematics(term.form, system, TimeDerivative(system), w,
                                                         full=False)]
            T += sp.Add(*[G[a, b] * dot(v[a], v[b]) for a in range(len(v)) for b in range(len(v))
                          if G[a, b] != 0]) / 2
        elif term.kind == "T":
            T += term.expression
    V = sp.Add(*[t.expression for t in system.energy_terms if t.kind == "V"], *gravity_terms(system))
    for sd in system.point_springs:
        if sd.stiffness != 0:
            d = w.matrix(sd.a - sd.b)
            L = w.aux(sp.sqrt(sum((x * x for x in d), sp.S.Zero)))
            V += sd.stiffness * (L - sd.rest_length) ** 2 / 2
    return T, V
