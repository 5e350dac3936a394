"""Natural coordinates: rigid elements described by the global coordinates of points and
vectors (seed 003 ch. 2, after Garcia de Jalon's "natural coordinates").

A planar or spatial rigid element is described by *basic points and vectors* (PVs): a point
P0 and further points P_k or vectors u_k fixed in the element.  They give the basis vectors

    e_k = P_k - P0   (a point)        e_k = u_k   (a vector)

whose components in an element-fixed frame are the constants E_k = X_k - X0 (X_k the local
position of P_k) or U_k (the local direction of u_k).  Every material point of the element,
at local position X, is then at

    r(X) = P0 + sum_k c_k e_k,       c = E^-1 (X - X0),                                    (1)

in 3D with three basis vectors (E = [E_1 E_2 E_3] non-singular); in 2D with one basis vector
e_1 and e_2 = R e_1, R the rotation by +90 degrees (R (a, b) = (-b, a)), which is linear, so
two PVs suffice (E = [E_1, R E_1]).  Because r is *linear* in the PVs with constant c, the
kinetic energy T = 1/2 int |r'|^2 dm is a quadratic form with a constant mass matrix
(seed 003 sec. 2.4 gives T for the CoM/angular-velocity split; this is the same energy):

    T = 1/2 m |P0'|^2 + m P0' . sum_k cg_k e_k' + 1/2 sum_kl G_kl e_k' . e_l'             (2)

with cg = E^-1 (X_cg - X0) and G = E^-1 J_o E^-T, J_o = int (X - X0)(X - X0)^T dm
= (tr I/2) 1 - I + m d d^T (I the inertia tensor about the centre of gravity in the element
frame, d = X_cg - X0).  In 2D the cross terms vanish (e_1' . R e_1' = 0) and
sum_kl G_kl e_k'.e_l' = g |e_1'|^2 with g = (J + m |d|^2) / |E_1|^2, J the polar moment
about the centre of gravity.  The element stays rigid under the constraints
e_k . e_l = E_k . E_l (k <= l; seed 003 sec. 2.5: distances, right angles, unit vectors).

A thin rod from A to B (all mass on the segment) is the special case with no transverse
extent: T = m/6 (A'^2 + A'.B' + B'^2) (seed 003 sec. 2.4, the formula cited there).
"""

from __future__ import annotations

import sympy as sp

from ..errors import ModelError


def dot(a, b) -> sp.Expr:
    """a . b of two column vectors."""
    return sp.Add(*[x * y for x, y in zip(a, b)])


def perp(a) -> sp.Matrix:
    """R a, the planar vector a turned by +90 degrees: (-a_y, a_x)."""
    return sp.Matrix([-a[1], a[0]])


def cross2(a, b) -> sp.Expr:
    """The scalar cross product a_x b_y - a_y b_x of two planar vectors."""
    return a[0] * b[1] - a[1] * b[0]


def thin_rod_kinetic_energy(mass, ad, bd) -> sp.Expr:
    """T = m/6 (A'^2 + A'.B' + B'^2) of a thin uniform rod with end velocities A', B'."""
    return mass * (dot(ad, ad) + dot(ad, bd) + dot(bd, bd)) / 6


class RigidElement:
    """The constant coefficients of eqs. (1) and (2) of one rigid element.

    ``origin`` is the local position X0 of the first point; ``basis`` the local components E_k
    of the basis vectors (one in 2D, three in 3D); ``cg`` the local centre of gravity;
    ``inertia`` the polar moment about the centre of gravity (2D) or the 3 x 3 inertia tensor
    about it in element-frame components (3D)."""

    def __init__(self, where: str, dim: int, origin, basis, mass, cg, inertia):
        self.dim = dim
        need = 1 if dim == 2 else 3
        if len(basis) != need:
            raise ModelError(f"{where}: a {dim}D rigid element needs {need + 1} basic points and "
                             f"vectors (a first point and {need} more), got {len(basis) + 1}")
        X0 = sp.Matrix(origin)
        E = sp.Matrix.hstack(*basis, *( [perp(basis[0])] if dim == 2 else []))
        det = sp.expand(E.det())
        if det == 0:
            raise ModelError(f"{where}: the basic points and vectors are degenerate (their local "
                             f"coordinates span no {dim}D basis: det = 0)")
        d = sp.Matrix(cg) - X0
        Einv = E.inv()
        self.basis = [sp.Matrix(b) for b in basis]
        self.mass = mass
        self.c = [sp.factor_terms(x) for x in Einv * d]   # eq. (1) at the centre of gravity
        if dim == 2:
            self.g = sp.factor_terms((inertia + mass * dot(d, d)) / dot(basis[0], basis[0]))
        else:
            I = sp.Matrix(inertia)
            Jo = I.trace() / 2 * sp.eye(3) - I + mass * d * d.T
            self.G = (Einv * Jo * Einv.T).applyfunc(sp.factor_terms)

    def vectors(self, e):
        """The basis vectors used in eq. (1): e_1 and R e_1 in 2D, e_1, e_2, e_3 in 3D."""
        return [e[0], perp(e[0])] if self.dim == 2 else list(e)

    def cg_position(self, p0, e) -> sp.Matrix:
        """Global centre of gravity P0 + sum_k cg_k e_k (eq. 1)."""
        out = sp.Matrix(p0)
        for ck, ek in zip(self.c, self.vectors(e)):
            if ck != 0:
                out += ck * ek
        return out

    def kinetic_energy(self, p0d, ed) -> sp.Expr:
        """T of eq. (2) from the velocities of P0 and of the basis vectors."""
        m = self.mass
        wd = self.vectors(ed)
        terms = [m * dot(p0d, p0d) / 2]
        cross = sp.Add(*[ck * dot(p0d, wk) for ck, wk in zip(self.c, wd) if ck != 0])
        terms.append(m * cross)
        if self.dim == 2:
            terms.append(self.g * dot(ed[0], ed[0]) / 2)
        else:
            for k in range(3):
                for j in range(3):
                    if self.G[k, j] != 0:
                        terms.append(self.G[k, j] * dot(ed[k], ed[j]) / 2)
        return sp.Add(*terms)

    def rigidity(self, e) -> list[tuple[str, sp.Expr]]:
        """(label, e_k . e_l - E_k . E_l) for k <= l: the element keeps its shape."""
        out = []
        n = len(self.basis)
        for k in range(n):
            for j in range(k, n):
                out.append((f"e{k + 1}e{j + 1}", dot(e[k], e[j]) - dot(self.basis[k], self.basis[j])))
        return out
