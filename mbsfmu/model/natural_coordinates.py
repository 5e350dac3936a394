"""Natural coordinates: rigid elements described by the global coordinates of points and
vectors (seed 003 ch. 2, after Garcia de Jalon's "natural coordinates").

A planar or spatial rigid element is described by *basic points and vectors* (PVs): a point
P0 and further points P_k or vectors u_k fixed in the element.  They give the basis vectors

    e_k = P_k - P0   (a point)        e_k = u_k   (a vector)

whose components in an element-fixed frame are the constants E_k = X_k - X0 (X_k the local
position of P_k) or U_k (the local direction of u_k).  Every material point of the element,
at local position X, is then at

    r(X) = P0 + sum_k c_k w_k,       c = E^-1 (X - X0),                                    (1)

with the basis w of the element's kind and E = [E_1 ... ] its local components:

* 2D, two PVs: w = (e_1, R e_1), R the rotation by +90 degrees (R (a, b) = (-b, a)), which is
  linear, so two PVs suffice (E = [E_1, R E_1]);
* 3D, four PVs: w = (e_1, e_2, e_3), all linear in the coordinates (E = [E_1 E_2 E_3]);
* 3D, three PVs (seed 003 sec. 2.2: the origin O, a point or vector A along the local x axis,
  a point or vector B in the local x-y plane, e.g. the wheel carrier B_T G H of sec. 6.3):
  w = (e_1, e_2, e_1 x e_2) and E = [E_1, E_2, E_1 x E_2].  The third direction is the cross
  product, as the seed's z_t = x_t x y_t (eq. 2.2.4), so it keeps the handedness; E_1 and E_2
  must not be parallel (three basic points not on one line).

The kinetic energy T = 1/2 int |r'|^2 dm is, with w_k' the velocities of the basis vectors
(w_3' = e_1' x e_2 + e_1 x e_2' for three PVs),

    T = 1/2 m |P0'|^2 + m P0' . sum_k cg_k w_k' + 1/2 sum_kl G_kl w_k' . w_l'               (2)

with cg = E^-1 (X_cg - X0) and G = E^-1 J_o E^-T, J_o = int (X - X0)(X - X0)^T dm
= (tr I/2) 1 - I + m d d^T (I the inertia tensor about the centre of gravity in the element
frame, d = X_cg - X0).  In 2D the cross terms vanish (e_1' . R e_1' = 0) and
sum_kl G_kl w_k'.w_l' = g |e_1'|^2 with g = (J + m |d|^2) / |E_1|^2, J the polar moment
about the centre of gravity.  With two or four PVs the mass matrix is constant; with three
(as in the seed, whose DAE has "a non-constant inertia mass matrix") it is quadratic in the
coordinates.  Wherever the PVs form a rigid configuration (the constraints below hold) eq. (2)
is the seed's T = 1/2 m |C'|^2 + 1/2 w^T I w (sec. 2.4, with C the centre of gravity and w
the angular velocity of the frame Q = [x y z] of eqs. 2.2.3-2.2.4): both are the kinetic
energy of the same rigid motion.  The element stays rigid under the constraints

    e_k . e_l = E_k . E_l     (k <= l, the given basis vectors only)

(seed 003 sec. 2.5: distances, right angles, unit vectors; for the wheel carrier the seed's
C1-C3).  A point fixed in the element (a *body point*) is eq. (1) at its local position, a
vector fixed in it sum_k c_k w_k with c = E^-1 U.

A thin rod from A to B (all mass on the segment) is the special case with no transverse
extent: T = m/6 (A'^2 + A'.B' + B'^2) (seed 003 sec. 2.4, the formula cited there).
"""

from __future__ import annotations

import sympy as sp

from ..core.errors import ModelError
from .elements import KineticForm


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


def rod_form(mass, a, b, inertia=None, length=None) -> KineticForm:
    """A slender rod's T as the quadratic form of its ends A, B.  Thin and uniform (``inertia``
    None): metric m/6 [[2, 1], [1, 2]], T = m/6 (A'^2 + A'.B' + B'^2).  With the moment of
    inertia J about its centre across the rod (no spin about its axis, as seed 003 sec. 6.3's
    rods): T = m/2 |(A' + B')/2|^2 + J/2 |B' - A'|^2 / l^2, metric
    [[m/4 + J/l^2, m/4 - J/l^2], [m/4 - J/l^2, m/4 + J/l^2]] (J = m l^2 / 12 is the thin rod)."""
    if inertia is None:
        metric = mass * sp.Matrix([[2, 1], [1, 2]]) / 6
    else:
        s, d = mass / 4, inertia / length**2
        metric = sp.Matrix([[s + d, s - d], [s - d, s + d]])
    return KineticForm([sp.Matrix(a), sp.Matrix(b)], metric)


def form_kinetic_energy(form: KineticForm, velocities) -> sp.Expr:
    """T = 1/2 sum_ab metric_ab x_a' . x_b' of a form, given the velocities x_a'."""
    G = form.metric
    n = G.shape[0]
    return sp.Add(*[G[a, b] * dot(velocities[a], velocities[b]) for a in range(n) for b in range(n)
                    if G[a, b] != 0]) / 2


def point_mass_form(mass, p) -> KineticForm:
    """T = m |p'|^2 / 2 as a quadratic form."""
    return KineticForm([sp.Matrix(p)], sp.Matrix([[mass]]))


def cross(a, b) -> sp.Matrix:
    """a x b of two 3D column vectors."""
    return sp.Matrix([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


class RigidElement:
    """The constant coefficients of eqs. (1) and (2) of one rigid element.

    ``origin`` is the local position X0 of the first point; ``basis`` the local components E_k
    of the given basis vectors (one in 2D, two or three in 3D); ``cg`` the local centre of
    gravity; ``inertia`` the polar moment about the centre of gravity (2D) or the 3 x 3 inertia
    tensor about it in element-frame components (3D).  ``labels`` name the PVs (P0 first) in
    messages."""

    def __init__(self, where: str, dim: int, origin, basis, mass, cg, inertia, labels=None):
        self.dim = dim
        allowed = (1,) if dim == 2 else (2, 3)
        if len(basis) not in allowed:
            need = "2 basic points and vectors (a first point and 1 more)" if dim == 2 else (
                "3 or 4 basic points and vectors (a first point and 2 or 3 more)")
            raise ModelError(f"{where}: a {dim}D rigid element needs {need}, got {len(basis) + 1}")
        X0 = sp.Matrix(origin)
        self.basis = [sp.Matrix(b) for b in basis]
        self.crossed = dim == 3 and len(basis) == 2
        E = sp.Matrix.hstack(*self.basis, *self._completion(self.basis))
        det = sp.expand(E.det())
        if det == 0:
            named = ", ".join(labels or [f"PV {k}" for k in range(len(basis) + 1)])
            if self.crossed:
                raise ModelError(f"{where}: its basic points and vectors {named} are collinear: "
                                 "three basic points (or a point and two vectors) must span a plane")
            raise ModelError(f"{where}: the basic points and vectors {named} are degenerate (their "
                             f"local coordinates span no {dim}D basis: det = 0)")
        d = sp.Matrix(cg) - X0
        self.Einv = E.inv()
        self.origin = X0
        self.mass = mass
        self.c = [sp.factor_terms(x) for x in self.Einv * d]   # eq. (1) at the centre of gravity
        if dim == 2:
            self.g = sp.factor_terms((inertia + mass * dot(d, d)) / dot(basis[0], basis[0]))
        else:
            I = sp.Matrix(inertia)
            Jo = I.trace() / 2 * sp.eye(3) - I + mass * d * d.T
            self.G = (self.Einv * Jo * self.Einv.T).applyfunc(sp.factor_terms)

    def _completion(self, e) -> list:
        """The basis vectors that follow from the given ones: R e_1 in 2D, e_1 x e_2 in 3D
        with three PVs, none with four."""
        if self.dim == 2:
            return [perp(e[0])]
        return [cross(e[0], e[1])] if self.crossed else []

    def vectors(self, e) -> list:
        """The basis w of eq. (1) from the given basis vectors e."""
        return list(e) + self._completion(e)

    def velocities(self, e, ed) -> list:
        """w' from e and e': e_1' and R e_1' in 2D; with three PVs e_1' x e_2 + e_1 x e_2'."""
        if self.dim == 2:
            return [ed[0], perp(ed[0])]
        if self.crossed:
            return [ed[0], ed[1], cross(ed[0], e[1]) + cross(e[0], ed[1])]
        return list(ed)

    def combination(self, coefficients, e) -> sp.Matrix:
        """sum_k coefficients_k w_k (w from the given basis vectors e)."""
        out = sp.zeros(self.dim, 1)
        for ck, wk in zip(coefficients, self.vectors(e)):
            if ck != 0:
                out += ck * wk
        return out

    def cg_position(self, p0, e) -> sp.Matrix:
        """Global centre of gravity P0 + sum_k cg_k w_k (eq. 1)."""
        return sp.Matrix(p0) + self.combination(self.c, e)

    def point(self, p0, e, local) -> sp.Matrix:
        """The global position of the material point at local position X (eq. 1)."""
        c = self.Einv * (sp.Matrix(local) - self.origin)
        return sp.Matrix(p0) + self.combination([sp.factor_terms(x) for x in c], e)

    def direction(self, e, local) -> sp.Matrix:
        """The global components of the element-fixed vector with local components U."""
        return self.combination([sp.factor_terms(x) for x in self.Einv * sp.Matrix(local)], e)

    def kinetic_energy(self, p0d, e, ed) -> sp.Expr:
        """T of eq. (2) from the velocity of P0, the basis vectors e and their velocities."""
        m = self.mass
        wd = self.velocities(e, ed)
        terms = [m * dot(p0d, p0d) / 2]
        cross_terms = sp.Add(*[ck * dot(p0d, wk) for ck, wk in zip(self.c, wd) if ck != 0])
        terms.append(m * cross_terms)
        if self.dim == 2:
            terms.append(self.g * dot(ed[0], ed[0]) / 2)
        else:
            for k in range(3):
                for j in range(3):
                    if self.G[k, j] != 0:
                        terms.append(self.G[k, j] * dot(wd[k], wd[j]) / 2)
        return sp.Add(*terms)

    def kinetic_form(self, p0, e) -> KineticForm:
        """Eq. (2) as a quadratic form in (P0', w_1', ...): metric [[m, m cg^T], [m cg, G]] (in
        2D G = diag(g, 0): R e_1 enters only through the centre of gravity); the third vector
        of a three-PV element is the cross product of the first two."""
        m, n = self.mass, len(self.c)
        metric = sp.zeros(n + 1, n + 1)
        metric[0, 0] = m
        for k, ck in enumerate(self.c):
            metric[0, k + 1] = metric[k + 1, 0] = m * ck
        if self.dim == 2:
            metric[1, 1] = self.g
        else:
            metric[1:, 1:] = self.G
        vectors = [sp.Matrix(p0), *[sp.Matrix(v) for v in e]]
        if self.dim == 2:
            vectors.append(perp(e[0]))
        elif self.crossed:
            vectors.append(("cross", 1, 2))
        return KineticForm(vectors, metric)

    def rigidity(self, e) -> list[tuple]:
        """(label, e_k, e_l, E_k . E_l) for k <= l: the constraints e_k . e_l - E_k . E_l = 0
        that keep the element's shape."""
        out = []
        n = len(self.basis)
        for k in range(n):
            for j in range(k, n):
                out.append((f"e{k + 1}e{j + 1}", e[k], e[j], dot(self.basis[k], self.basis[j])))
        return out
