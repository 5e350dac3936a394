"""The natural-coordinate elements of a LagrangianSystem (seed 003 ch. 2): point masses, rods and
rigid bodies (from two to four basic points and vectors; their kinetic energies and rigidity
constraints in :mod:`.natural_coordinates`), points and axes fixed in a rigid element, and the
force elements between or at points (spring-dampers, forces).  Masses, lengths, damping and
inertias are checked where they have values at the start; elements and points share one
namespace (the frames' of a System), force elements have their own.
"""

from __future__ import annotations

import sympy as sp

from ..core.errors import ModelError
from .element_checks import check_mass_properties
from .elements import Body, EnergyTerm, Mass, PointForce, PointSpringDamper
from .names import FORCES, FRAMES, t
from .natural_coordinates import RigidElement, dot, form_kinetic_energy, point_mass_form, rod_form
from .start_values import number, shown


class NaturalElements:
    """The element commands of a LagrangianSystem (a part of :class:`~mbsfmu.model.LagrangianSystem`)."""

    def point_mass(self, name: str, point, mass) -> str:
        """A point mass m >= 0 at ``point``: T = m |point'|^2 / 2 and its weight.  Elements
        (point masses, rods, rigid bodies) and points share one namespace, the frames' of a
        System."""
        where = f"point mass {name!r}"
        self._check_name(name, where, FRAMES)
        p = self.pv(point, where)
        m = self._mass(mass, where)
        self._claim(name, where, FRAMES)
        pd = self.velocity(p)
        self._element(name, m * dot(pd, pd) / 2, Mass(name, m, p), point_mass_form(m, p))
        self.drawn.append((name, (p,)))
        return name

    def rod(self, name: str, a, b, mass, length=None, inertia=None) -> str:
        """A slender rod (mass >= 0) from ``a`` to ``b``: thin and uniform (seed 003 sec. 2.4:
        T = m/6 (A'^2 + A'.B' + B'^2)), or with ``inertia`` J >= 0, its moment of inertia about
        its centre across it (T = m/2 |C'|^2 + J/2 |B' - A'|^2 / l^2, no spin about its axis,
        as seed 003 sec. 6.3's rods; needs ``length``; for a rod given by its moment J_a about
        the end a, J = J_a - m l^2 / 4); its weight at the midpoint; with ``length`` (> 0) the
        distance constraint ``<name>_length``: |a - b|^2 - length^2 = 0 (sec. 2.5)."""
        where = f"rod {name!r}"
        self._check_name(name, where, FRAMES)
        pa, pb = self.pv(a, where + " end a"), self.pv(b, where + " end b")
        if pa == pb:
            raise ModelError(f"{where}: both ends are the same point")
        m = self._mass(mass, where)
        ell = None if length is None else self._length(length, where)
        J = None
        if inertia is not None:
            if ell is None:
                raise ModelError(f"{where}: a rod with an inertia needs its length (T has J |B' - "
                                 "A'|^2 / l^2)")
            J = self._property(inertia, where, "moment of inertia", "")
        self._claim(name, where, FRAMES)
        form = rod_form(m, pa, pb, J, ell)
        self._element(name, form_kinetic_energy(form, [self.velocity(pa), self.velocity(pb)]),
                      Mass(name, m, (pa + pb) / 2, sp.diag(0, J, J) if J is not None else sp.zeros(3, 3)),
                      form)
        self.drawn.append((name, (pa, pb)))
        if ell is not None:
            self._rigidity(name, "length", pa - pb, pa - pb, ell**2)
            self._length_parameters(ell, where)
        return name

    def rigid_body(self, name: str, mass, points, vectors=(), cg=None, inertia=0,
                   rigid: bool = True) -> str:
        """A rigid element in natural coordinates (seed 003 ch. 2; the formulas are in
        :mod:`mbsfmu.model.natural_coordinates`).

        ``points`` is a list of (global point, local position) pairs, the first one the
        element's reference point; ``vectors`` a list of (global vector, local direction)
        pairs.  In 2D two PVs in all (a second point or a vector); in 3D four, whose local
        coordinates span the space (constant mass matrix), or three, as the seed's frames from
        three basic PVs (sec. 2.2: a point, a second point or vector and a third one, not on a
        line with them, e.g. the wheel carrier B_T G H of sec. 6.3; the third direction is the
        cross product of the first two, the mass matrix depends on the coordinates).  A global
        PV may be any point or vector expression: a point of another element
        (:meth:`body_point`) joins the two there.  ``cg`` is the local centre of gravity
        (default: the local origin), ``inertia`` the polar moment about it (2D) or the inertia
        tensor about it in local components (3D, a 3 x 3 matrix or three principal values);
        mass and inertia must be possible (as for :meth:`System.body`).  With ``rigid`` the
        constraints ``<name>_e<k><l>``: e_k.e_l = E_k.E_l keep the element's shape; one
        identical to an existing constraint (e.g. the unit length of a shared vector) is not
        added, one that depends on the existing ones at the initial configuration is added with
        a :class:`~mbsfmu.core.errors.RedundantConstraintWarning` naming both (leave it out with
        ``rigid=False`` and the constraints the element needs, e.g. :meth:`distance`)."""
        where = f"rigid body {name!r}"
        self._check_name(name, where, FRAMES)
        if not isinstance(rigid, bool):
            raise ModelError(f"{where}: rigid must be True or False, got {rigid!r}")
        if not isinstance(points, (list, tuple)) or not isinstance(vectors, (list, tuple)):
            raise ModelError(f"{where}: points and vectors are lists of (global, local) pairs")
        points, vectors = list(points), list(vectors)
        if not points:
            raise ModelError(f"{where}: needs at least one point (its reference point)")
        glob, local, labels = [], [], []
        for i, pair in enumerate(points + vectors):
            kind = "point" if i < len(points) else "vector"
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ModelError(f"{where}: each {kind} is a pair (global {kind}, local coordinates)")
            glob.append(self.pv(pair[0], f"{where} {kind} {i}"))
            loc = self._local(pair[1], f"{where} local coordinates of {kind} {i}")
            local.append(loc)
            labels.append(f"{self._label(glob[-1], f'{kind} {i}')} (local {tuple(loc)})")
        m = self._constant_expr(mass, where + " mass")
        X0 = local[0]
        cg = X0 if cg is None else self.pv(cg, where + " cg")
        if self.dim == 2:
            J = self._property(inertia, where, "polar moment of inertia", "")
            self._check_mass_properties(name, m, sp.zeros(3, 3))
        else:
            none = isinstance(inertia, (int, float)) and inertia == 0
            J = self._matrix3(sp.zeros(3, 3) if none else inertia, where + " inertia")
            J = J.applyfunc(lambda x: self._constant_expr(x, where + " inertia"))
            self._check_mass_properties(name, m, J)
        n_pts = len(points)
        basis = [local[k] - X0 for k in range(1, n_pts)] + local[n_pts:]
        elem = RigidElement(where, self.dim, X0, basis, m, cg, J, labels)
        e = [glob[k] - glob[0] for k in range(1, n_pts)] + glob[n_pts:]
        ed = [self.velocity(v) for v in e]
        self._claim(name, where, FRAMES)
        self.elements[name] = (elem, glob[0], e)
        self.drawn.append((name, tuple(glob[:n_pts])))
        tensor = sp.diag(J / 2, J / 2, J) if self.dim == 2 else J
        self._element(name, elem.kinetic_energy(self.velocity(glob[0]), e, ed),
                      Mass(name, m, elem.cg_position(glob[0], e), tensor), elem.kinetic_form(glob[0], e))
        if rigid:
            for label, u, v, r in elem.rigidity(e):
                self._rigidity(name, label, u, v, r)
        return name

    def _check_mass_properties(self, name: str, m, I3: sp.Matrix) -> None:
        """The checks of System.body (positive mass, possible inertia tensor) where mass and
        inertia have values at the start."""
        start = {k: v for k, v in self._start_values().items() if k in
                 {c.symbol for c in self.constants_.values()} | {t}}
        values = [number(x) for x in [sp.sympify(m).xreplace(start), *I3.xreplace(start)]]
        if all(v is not None for v in values):
            try:
                check_mass_properties(Body(name, name, name, sp.Float(values[0]),
                                           sp.Matrix(3, 3, values[1:])), {})
            except ModelError as exc:
                raise ModelError(f"rigid body {name!r}: {str(exc).split(': ', 1)[1]}") from None

    def _label(self, pv: sp.Matrix, fallback: str) -> str:
        """The name of a declared point or vector that ``pv`` is, else ``fallback``."""
        for name, p in self.pvs.items():
            if p == pv:
                return repr(name)
        for name, (_, p0, _) in self.elements.items():
            if p0 == pv:
                return f"{fallback} (the reference point of {name!r})"
        return fallback

    def body_point(self, element: str, local) -> sp.Matrix:
        """The global position of the point of the rigid element ``element`` (a
        :meth:`rigid_body`) at the local position ``local``: eq. (1) of
        :mod:`~mbsfmu.model.natural_coordinates`, r = P0 + sum_k c_k w_k, an expression of
        the element's basic points and vectors.  Use it like a point: as the end of a spring,
        where a force acts, in an output, in a constraint, or as a basic point of another
        element (a joint there)."""
        elem, p0, e = self._element_of(element, "body_point")
        return elem.point(p0, e, self._local(local, f"body_point({element!r}) local position"))

    def body_vector(self, element: str, local) -> sp.Matrix:
        """The global components of the vector fixed in the rigid element ``element`` with
        local components ``local`` (sum_k c_k w_k, c = E^-1 U): an axis of the element."""
        elem, _, e = self._element_of(element, "body_vector")
        return elem.direction(e, self._local(local, f"body_vector({element!r}) local components"))

    def _local(self, value, where: str) -> sp.Matrix:
        """Local coordinates: ``dim`` expressions of constants only."""
        loc = self.pv(value, where)
        self._refuse(loc, where, ("y",), "local coordinates are constants")
        if loc.has(t) or any(x.free_symbols & {p.symbol for p in self.time_parameters.values()}
                             for x in loc):
            raise ModelError(f"{where}: local coordinates are constants, not functions of time")
        return loc

    def _element_of(self, element, command: str):
        if element not in self.elements:
            others = [n for n in self._names[FRAMES] if n not in self.elements]
            hint = (f" ({element!r} is {self._names[FRAMES][element]}, which has no local frame)"
                    if element in others else "")
            raise ModelError(f"{command}(): {element!r} is not a rigid body{hint}; rigid bodies: "
                             f"{', '.join(self.elements) or 'none'}")
        return self.elements[element]

    def _element(self, name, T, mass: Mass, form) -> None:
        self.energy_terms.append(EnergyTerm(name, "T", T, form))
        self.masses.append(mass)
        self._changed()

    def point_force(self, name: str, point, vector) -> str:
        """A force ``vector`` (global components; it may depend on inputs, velocities and time)
        acting at ``point``: Q = (d point/dy)^T vector.  Force elements have a namespace of
        their own (a force may share its name with a point, an element or a constant)."""
        where = f"force {name!r}"
        self._check_name(name, where, FORCES)
        p = self.pv(point, where + " point")
        if not isinstance(vector, (sp.MatrixBase, list, tuple)) or len(vector) != self.dim:
            raise ModelError(f"{where}: a force vector of {self.dim} components is needed")
        f = sp.Matrix([self.expr(v, where) for v in vector])
        self._claim(name, where, FORCES)
        self.point_forces.append(PointForce(name, p, f))
        return name

    def spring_damper(self, name: str, a, b, stiffness=0, damping=0, rest_length=0) -> str:
        """Spring-damper between the points ``a`` and ``b``: V = k (L - L0)^2 / 2 and
        R = d L'^2 / 2 with L = |a - b| (seed 003 secs. 2.4, 2.6); a force element (its own
        namespace, like :meth:`point_force`)."""
        where = f"spring-damper {name!r}"
        self._check_name(name, where, FORCES)
        pa, pb = self.pv(a, where + " end a"), self.pv(b, where + " end b")
        if pa == pb:
            raise ModelError(f"{where}: both ends are the same point")
        el = PointSpringDamper(
            name, pa, pb, self._constant_expr(stiffness, f"{where} stiffness"),
            self._property(damping, where, "damping", " (a negative damping feeds energy in: "
                              "R = d L'^2 / 2 must be >= 0)"),
            self._property(rest_length, where, "rest length", " (a length)"))
        self._claim(name, where, FORCES)
        self.point_springs.append(el)
        return name

    def _constant_expr(self, value, where) -> sp.Expr:
        """A checked property (mass, length, stiffness, ...): an expression of constants and
        time; a number must be finite and real."""
        e = self.expr(value, where)
        self._refuse(e, where, ("y", "yd", "u"), "a property may depend on constants and time only")
        if e.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or (e.is_number and e.is_real is False):
            raise ModelError(f"{where}: {value!r} is not a finite real number")
        return e

    def _property(self, value, where: str, what: str, why: str = "", strict: bool = False) -> sp.Expr:
        """A checked property (:meth:`_constant_expr`) that must be >= 0 (``strict``: > 0)
        where it has a value at the start; ``why`` ends the message."""
        e = self._constant_expr(value, f"{where} {what}")
        v = self._at_start(e)
        if v is not None and (v <= 0 if strict else v < 0):
            raise ModelError(f"{where}: the {what} must be {'positive' if strict else '>= 0'}, got "
                             f"{shown(e, v)}{why}")
        return e

    def _mass(self, value, where: str) -> sp.Expr:
        """A checked mass: an expression of constants, positive where it has a value at the
        start (a negative mass makes the kinetic energy indefinite; an element without mass
        adds nothing)."""
        m = self._property(value, where, "mass", " (a negative mass gives a kinetic energy that is "
                           "negative for some motion; an element without mass adds nothing: leave "
                           "it out, a massless link is a distance())", strict=True)
        if m.has(t) or m.free_symbols & {p.symbol for p in self.time_parameters.values()}:
            raise ModelError(f"{where}: the mass may depend on constants only, not on time")
        return m

    def _length(self, value, where: str) -> sp.Expr:
        """A checked length: an expression of constants and time, > 0 where it has a value at
        the start."""
        return self._property(value, where, "length", " (|a - b| = length has no solution for a "
                              "negative length, and a length 0 leaves the constraint without a "
                              "gradient; two points that coincide are one shared point)", strict=True)

    def _length_parameters(self, ell: sp.Expr, where: str) -> None:
        """Record the constants whose value 0 makes the length ``ell`` 0 (the parameter checks
        refuse them: ``nonzero_parameters``); called once the element is added."""
        start = self._start_values()
        for c in self.constants_.values():
            if c.symbol in ell.free_symbols and number(ell.xreplace({**start, c.symbol: 0})) == 0:
                self.nonzero_parameters.setdefault(c.name, f"with {c.name} = 0 the length of {where} "
                                                   "is 0 (the constraint has no gradient)")
