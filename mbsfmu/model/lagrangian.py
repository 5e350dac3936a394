"""The Lagrangian front end: a model given by its energies and holonomic constraints, in
natural coordinates or any other coordinates (seed 003 ch. 1-3).

Instead of bodies placed in frames, the user gives the kinetic energy T(y, y', t), the potential
V(y, t) (or a Lagrangian L = T - V), a Rayleigh dissipation function R(y, y', t), generalized
forces Q(y, y', t, u), holonomic constraints c(y, t) = 0 and nonholonomic constraints
A(y, t) y' + a(y, t) = 0.  Lagrange's equations of the first
kind (seed 003 eq. 1.2.1, derived in :mod:`mbsfmu.equations.lagrange`) give the same
``M y'' + k = q`` with constraints as :class:`~mbsfmu.model.System`, so simulation, code
generation, the C engine and both FMU flavours take a LagrangianSystem unchanged::

    s = LagrangianSystem("pendulum", dim=2)
    m, l, g = s.constants(m=1.0, l=1.0, g=9.81)
    A = s.point("A", initial=(1.0, 0.0))
    s.gravity([0, -g])
    s.point_mass("bob", A, m)
    s.distance("string", A, [0, 0], l)

Natural-coordinate building blocks (seed 003 ch. 2): :meth:`point` and :meth:`unit_vector`
declare the coordinates of a point or vector (a point shared by two elements is a revolute or
spherical joint); :meth:`rod`, :meth:`rigid_body` (from two PVs in 2D, three or four in 3D)
and :meth:`point_mass` add elements and their weight; :meth:`body_point` and
:meth:`body_vector` give a point or axis fixed in a rigid element; :meth:`distance`,
:meth:`perpendicular`, :meth:`unit_length` and :meth:`prismatic` add constraints;
:meth:`spring_damper` and :meth:`point_force` act between or at points; :meth:`rates` gives
the rate symbols D<q> of a point or coordinate (the helpers dot, cross, perp, cross2 are in
:mod:`mbsfmu.natural`).  Points are sympy column vectors of expressions (``dim``
components); a fixed point is any list of numbers or constants.

Everything is checked when it is declared and a refused declaration leaves no trace: masses
positive, inertias possible, lengths positive, damping >= 0, a user's T and R positive
semi-definite (the motion with T < 0 is named), constraints twice differentiable.  An
element's constraint identical to an existing one is left out; one that depends on the
existing ones at the initial configuration is added with a RedundantConstraintWarning.
Points and elements share one namespace (the frames' of a System), springs and forces another.

What it shares with :class:`~mbsfmu.model.System` (symbols, constraints, outputs, generalized
forces) is :class:`~mbsfmu.model.base.Model`; the two are siblings.  Frames do not exist here
(points and gravity are in ISYS components): outputs are expressions (:meth:`point_output`
gives a point's coordinates and velocity), and a System's frame-based commands (``body``,
``frame``, ``loop``, ``force``, ``torque``, ``frame_output``, ``flexible_body``, ...) are a
ModelError naming their replacement (:attr:`LagrangianSystem.ELSEWHERE`).
"""

from __future__ import annotations

import warnings

import numpy as np
import sympy as sp

from ..errors import ModelError, RedundantConstraintWarning
from .base import Model
from .elements import Body, EnergyTerm, Mass, PointForce, PointSpringDamper
from .names import FORCES, FRAMES, t
from .natural_coordinates import (
    RigidElement,
    dot,
    form_kinetic_energy,
    perp,
    point_mass_form,
    rod_form,
)
from .system import check_differentiable, check_mass_properties, finite_number

#: relative tolerances: of the identity check of element constraints (values at random points),
#: of the redundancy check (distance of a new gradient from the span of the others, relative to
#: its length) and of the definiteness check of T (eigenvalues relative to the largest)
IDENTICAL_RTOL = 1e-9
REDUNDANT_RTOL = 1e-9
DEFINITE_RTOL = 1e-9

_AXES = "xyz"


class LagrangianSystem(Model):
    """A system given by T, V (or L), R, Q and holonomic constraints; points have ``dim``
    (2 or 3) components."""

    ELSEWHERE = {
        "frame": "point() and unit_vector()",
        "body": "rigid_body(), rod() or point_mass()",
        "loop": "shared points, distance() or constraint()",
        "force": "point_force()",
        "torque": "point_force() on two points or generalized_force()",
        "frame_output": "point_output()",
        "flexible_body": "a System (flexible bodies need a frame of reference)",
        "deflection_output": "a System (flexible bodies need a frame of reference)",
        "visual": "a System (the animation draws frames and bodies)",
        "vector": "pv() (points and vectors of dim components)",
    }
    ELSEWHERE_WHY = "natural coordinates have no frames"

    def __init__(self, name: str, title: str = "", dim: int = 3):
        super().__init__(name, title)
        if isinstance(dim, bool) or dim not in (2, 3) or not isinstance(dim, int):
            raise ModelError(f"system {name!r}: dim must be 2 or 3, got {dim!r}")
        self.dim = dim
        self.energy_terms: list[EnergyTerm] = []
        self.masses: list[Mass] = []
        self.point_springs: list[PointSpringDamper] = []
        self.point_forces: list[PointForce] = []
        self.gravity_field = sp.zeros(dim, 1)
        self.pvs: dict[str, sp.Matrix] = {}            # declared points and vectors by name
        self.elements: dict[str, tuple] = {}           # rigid elements: (RigidElement, P0, e)
        self._gradients: dict = {}                     # constraint -> parts of dc/dy
        self.nonzero_parameters: dict[str, str] = {}   # constant -> why it must not be 0

    # ------------------------------------------------------------------ checked expressions
    def _symbols_of(self, *kinds: str) -> set:
        """The declared symbols of the given kinds ('y', 'yd', 'u', 'tp')."""
        out = set()
        if "y" in kinds:
            out |= set(self.y)
        if "yd" in kinds:
            out |= set(self.yd)
        if "u" in kinds:
            out |= {u.symbol for u in self.inputs.values()}
        return out

    def _scalar(self, value, where: str) -> sp.Expr:
        """A checked scalar expression; a matrix (other than 1 x 1) or a list is refused."""
        if isinstance(value, sp.MatrixBase) or hasattr(value, "shape") and getattr(value, "shape", ()) != ():
            shape = tuple(value.shape)
            if shape in ((1, 1), (1,)):
                value = value[0]
            else:
                raise ModelError(f"{where} must be a scalar, got a "
                                 f"{' x '.join(map(str, shape))} matrix")
        elif isinstance(value, (list, tuple, set, dict)):
            raise ModelError(f"{where} must be a scalar, got a {type(value).__name__} of {len(value)} "
                             "items")
        return self.expr(value, where)

    def _refuse(self, e: sp.Expr, where: str, kinds: tuple[str, ...], why: str) -> None:
        bad = e.free_symbols & self._symbols_of(*kinds)
        if bad:
            raise ModelError(f"{where}: {why}, not on {', '.join(sorted(map(str, bad)))}")

    def pv(self, value, where: str = "point") -> sp.Matrix:
        """A point or vector: ``dim`` checked expressions of coordinates, time, time parameters
        and constants (a list of numbers or constants for a fixed one)."""
        if isinstance(value, sp.MatrixBase):
            items = list(value)
        elif isinstance(value, (list, tuple)) or len(getattr(value, "shape", ())) == 1:
            items = [v.item() if hasattr(v, "item") else v for v in value]  # numpy scalars too
        else:
            raise ModelError(f"{where}: a point or vector of {self.dim} components is needed, got "
                             f"{value!r}")
        if len(items) != self.dim:
            raise ModelError(f"{where}: a point or vector of {self.dim} components is needed, got "
                             f"{len(items)}")
        out = sp.Matrix([self.expr(v, where) for v in items])
        for e in out:
            self._refuse(e, where, ("yd", "u"), "a point may depend on coordinates, time, time "
                         "parameters and constants only")
        return out

    def velocity(self, value):
        """d/dt of an expression or point (through the coordinates, t and time parameters):
        ``s.velocity(A)`` is A' in terms of the velocity symbols ``D<coordinate>``."""
        from ..equations.kinematics import TimeDerivative

        D = TimeDerivative(self)
        if isinstance(value, sp.MatrixBase):
            return value.applyfunc(lambda e: D(e, without_ydd=True))
        return D(self.expr(value, "velocity()"), without_ydd=True)

    def rates(self, coordinates):
        """The rate symbols D<q> (see :meth:`Model.rates`); here also of a point or vector
        given by its name: ``s.rates("A")`` is the column (DA_x, DA_y(, DA_z))."""
        if isinstance(coordinates, str) and coordinates in self.pvs:
            coordinates = self.pvs[coordinates]
        return super().rates(coordinates)

    # ------------------------------------------------------------------ coordinates of points
    def point(self, name: str, initial, velocity=None, guess: bool = False) -> sp.Matrix:
        """Declare a point whose ``dim`` global coordinates ``<name>_x``, ``<name>_y``(, ``_z``)
        are generalized coordinates, with initial position and velocity; ``guess=True`` makes
        both only starting values of the consistent initialization.  Returns the point."""
        return self._pv_coordinates(name, initial, velocity, guess, f"point {name!r}")

    def unit_vector(self, name: str, initial, velocity=None, guess: bool = False,
                    unit: bool = True) -> sp.Matrix:
        """Declare a vector whose components are generalized coordinates (like :meth:`point`);
        with ``unit`` it keeps unit length (the constraint ``<name>_unit``: u.u - 1 = 0).
        A vector shared by two elements is the axis of a revolute joint (seed 003 sec. 2.5)."""
        u = self._pv_coordinates(name, initial, velocity, guess, f"vector {name!r}")
        if unit:
            self.unit_length(f"{name}_unit", u)
        return u

    def _pv_coordinates(self, name, initial, velocity, guess, where) -> sp.Matrix:
        def numbers(values, what):
            if isinstance(values, (str, bytes)) or (values is not None and not hasattr(values, "__len__")):
                raise ModelError(f"{where}: {what} needs {self.dim} numbers (a list or array), got "
                                 f"{values!r}")
            values = list(values) if values is not None else [0.0] * self.dim
            if len(values) != self.dim:
                raise ModelError(f"{where}: {what} needs {self.dim} components, got {len(values)}")
            return [finite_number(v, f"{where} {what}") for v in values]

        p0, v0 = numbers(initial, "initial position"), numbers(velocity, "initial velocity")
        self._check_name(name, where, FRAMES)
        for ax in _AXES[:self.dim]:
            for n in (f"{name}_{ax}", f"D{name}_{ax}", f"D2{name}_{ax}"):
                self._check_name(n, f"coordinate {n!r} of {where}", fmu=n == f"{name}_{ax}")
        self._claim(name, where, FRAMES)
        syms = [self.coordinate(f"{name}_{ax}", p, v) for ax, p, v in zip(_AXES, p0, v0)]
        if guess:
            self.initial_guess(**{f"{name}_{ax}": p for ax, p in zip(_AXES, p0)},
                               **{f"D{name}_{ax}": v for ax, v in zip(_AXES, v0)})
        self.pvs[name] = sp.Matrix(syms)
        return self.pvs[name]

    # ------------------------------------------------------------------ energies and forces
    def kinetic_energy(self, T, name: str = "T") -> None:
        """Add a term to the kinetic energy T(y, y', t); it must be quadratic in the velocities
        with a mass matrix d2T/dy'dy' that does not depend on them."""
        where = f"kinetic energy {name!r}"
        e = self._scalar(T, where)
        self._refuse(e, where, ("u",), "T may depend on coordinates, velocities, time, time "
                     "parameters and constants only")
        if not e.free_symbols & set(self.yd):
            raise ModelError(f"{where}: {e} depends on no velocity (T is a function of the "
                             "velocities D<coordinate>; a term without them belongs in "
                             "potential_energy())")
        self._check_kinetic_energy(e, where)
        self.energy_terms.append(EnergyTerm(name, "T", e))
        self._changed()

    def _check_kinetic_energy(self, T: sp.Expr, where: str, kind: str = "T") -> None:
        """A ModelError unless the matrix d2T/dy'dy' of the term T (of ``kind`` "T", a kinetic
        energy, or "R", a Rayleigh function) is positive semi-definite at the initial
        configuration and at one random configuration (the other symbols at their defaults,
        t = 0), naming the motion that would have T < 0.  Skipped where a symbol has no value
        (a constant without default, a time parameter given by functions) or the term is not
        quadratic in the velocities (the derivation reports that for T; R may be any function)."""
        matrix, what = (("mass matrix", "a kinetic energy") if kind == "T" else
                        ("damping matrix", "a Rayleigh function (R < 0 feeds energy in)"))
        rates = [v for v in self.yd if v in T.free_symbols]
        configurations = (("the initial configuration", self._start_values()),
                          ("a random configuration", self._start_values(np.random.default_rng(3))))
        for at, values in configurations:
            # the numbers first: the Hessian of a numeric quadratic polynomial is cheap
            Tn = T.xreplace({k: v for k, v in values.items() if k not in set(rates)})
            if Tn.free_symbols - set(rates):
                return
            poly = Tn.as_poly(*rates)
            if poly is None or poly.total_degree() > 2:
                return
            A = np.zeros((len(rates), len(rates)))    # T = 1/2 y'^T A y' + ...
            for monom, coeff in poly.terms():
                c = _number(coeff)
                if c is None:
                    return
                if sum(monom) == 2:
                    i, j = [k for k, e in enumerate(monom) for _ in range(e)]
                    A[i, j] += c if i != j else 2 * c
                    A[j, i] += c if i != j else 0.0
            w, V = np.linalg.eigh(0.5 * (A + A.T))
            tol = DEFINITE_RTOL * max(float(np.abs(w).max()), 1e-300)
            if w[0] >= -tol:
                continue
            definite = ("negative definite" if w[-1] < -tol else "indefinite" if w[-1] > tol
                        else "negative semi-definite")
            v = np.abs(V[:, 0])
            moving = [str(r)[1:] for r, a in zip(rates, v) if a > 0.1 * v.max()]
            motion = ("every motion" if definite == "negative definite" else
                      f"moving coordinate {moving[0]!r}" if len(moving) == 1 else
                      f"moving the coordinates {', '.join(map(repr, moving))} together")
            raise ModelError(f"{where} is {definite} in the velocities: {motion} gives {kind} < 0 "
                             f"(eigenvalue {w[0]:.3g} of its {matrix} d2{kind}/dy'dy' at {at}); "
                             f"{what} must be >= 0 for every motion")

    def _start_values(self, rng=None) -> dict:
        """Numbers for the declared symbols: the coordinates at their initial values (with
        ``rng``: perturbed by N(0, 0.3)), the rates at their initial values, t = 0, constants
        at their defaults and time parameters at t = 0 where those exist (the others are left
        symbolic)."""
        out = {t: 0.0}
        for c in self.coordinates_.values():
            out[c.symbol] = c.initial + (float(rng.normal(0.0, 0.3)) if rng is not None else 0.0)
            out[c.velocity] = c.initial_velocity
        out.update({c.symbol: c.value for c in self.constants_.values() if c.value is not None})
        for p in self.time_parameters.values():
            if p.expressions is not None:
                for sym, e in zip((p.symbol, p.velocity, p.acceleration), p.expressions):
                    value = _number(e.xreplace(out))
                    if value is not None:
                        out[sym] = value
        return out

    def _at_start(self, e: sp.Expr) -> float | None:
        """The value of a property (mass, length) at the start, or None if it depends on a
        symbol without a value (a constant without default)."""
        return _number(sp.sympify(e).xreplace(self._start_values()))

    def potential_energy(self, V, name: str = "V") -> None:
        """Add a term to the potential V(y, t) (conservative forces: q = -dV/dy)."""
        where = f"potential energy {name!r}"
        e = self._scalar(V, where)
        self._refuse(e, where, ("yd", "u"), "V may depend on coordinates, time, time parameters "
                     "and constants only (velocity-dependent potentials belong in lagrangian())")
        self.energy_terms.append(EnergyTerm(name, "V", e))
        self._changed()

    def lagrangian(self, L, name: str = "L") -> None:
        """Add a Lagrangian L(y, y', t) (a scalar): its terms with velocities count as kinetic
        energy, the rest (with opposite sign) as potential; precisely T = L - L|_(y'=0) and
        V = -L|_(y'=0), so T + V is the energy for the usual L = T - V."""
        where = f"Lagrangian {name!r}"
        e = self._scalar(L, where)
        self._refuse(e, where, ("u",), "L may depend on coordinates, velocities, time, time "
                     "parameters and constants only")
        yd = set(self.yd)
        args = e.args if e.is_Add else (e,)
        moving = sp.Add(*[a for a in args if a.free_symbols & yd])
        rest = sp.Add(*[a for a in args if not a.free_symbols & yd])
        at_rest = moving.xreplace({v: 0 for v in yd})
        if moving != 0:
            self._check_kinetic_energy(moving - at_rest, where)
            self.energy_terms.append(EnergyTerm(name, "T", moving - at_rest))
        if rest + at_rest != 0:
            self.energy_terms.append(EnergyTerm(name, "V", -(rest + at_rest)))
        self._changed()

    def dissipation(self, R, name: str = "R") -> None:
        """Add a term to the Rayleigh dissipation function R(y, y', t): q = -dR/dy'
        (seed 003 eq. 1.2.3)."""
        where = f"dissipation function {name!r}"
        e = self._scalar(R, where)
        self._refuse(e, where, ("u",), "R may depend on coordinates, velocities, time, time "
                     "parameters and constants only")
        if not e.free_symbols & set(self.yd):
            raise ModelError(f"{where}: {e} depends on no velocity (R must be a function of the "
                             "velocities)")
        self._check_kinetic_energy(e, where, "R")
        self.energy_terms.append(EnergyTerm(name, "R", e))
        self._changed()

    def gravity(self, vector) -> None:
        """The gravity vector (``dim`` components), e.g. ``gravity([0, -g])`` in 2D with y up:
        every element with mass gets the potential -m g . r_cg."""
        g = self.pv(vector, "gravity")
        self._refuse(sp.Matrix(g), "gravity", ("y",), "gravity may depend on constants and time only")
        self.gravity_field = g
        self.gravity_vector = sp.Matrix(list(g) + [0] * (3 - self.dim))
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
                             f"{_shown(e, v)}{why}")
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
            if c.symbol in ell.free_symbols and _number(ell.xreplace({**start, c.symbol: 0})) == 0:
                self.nonzero_parameters.setdefault(c.name, f"with {c.name} = 0 the length of {where} "
                                                   "is 0 (the constraint has no gradient)")

    # ------------------------------------------------------------------ elements
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
        a :class:`~mbsfmu.errors.RedundantConstraintWarning` naming both (leave it out with
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
        values = [_number(x) for x in [sp.sympify(m).xreplace(start), *I3.xreplace(start)]]
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

    def _rigidity(self, element: str, label: str, u, v, r) -> str | None:
        """Add the constraint ``<element>_<label>``: u . v - r = 0 made by an element, unless
        the same one (or its negative) exists; warn if it depends on the existing ones at the
        start."""
        name = f"{element}_{label}"
        expr = dot(u, v) - r
        if self._identical(expr) is not None:
            return None
        others = self._dependence(expr)
        self._product(name, u, v, r)
        if others is not None:
            warnings.warn(RedundantConstraintWarning(
                f"{self.name}: the constraint {name!r} that {self._names[FRAMES][element]} adds "
                f"is redundant at the initial configuration: its gradient is "
                + (f"a combination of those of {', '.join(map(repr, others))}" if others else "zero")
                + "; only the formulations 'qr' and 'svd' take redundant constraints (the others "
                "refuse the model); leave it out with rigid_body(..., rigid=False) and the "
                "element's other constraints (distance(), perpendicular())"), stacklevel=3)
        return name

    def _identical(self, expr) -> str | None:
        """The name of a holonomic constraint whose expression is ``expr`` or -``expr`` (up to
        rounding of their numbers) as a function of all its symbols, else None.  Decided by
        values, not by expanding: a candidate must have the same symbols, and it is identical
        if its values agree with expr's at three random points (every symbol uniform in
        [0.5, 1.5]) to IDENTICAL_RTOL of their size."""
        e = sp.sympify(expr)
        syms = e.free_symbols
        candidates = [h for h in self.holonomic if h.expression.free_symbols == syms]
        if not candidates:
            return None
        rng = np.random.default_rng(7)
        points = [dict(zip(syms, rng.uniform(0.5, 1.5, len(syms)))) for _ in range(3)]
        mine = [_number(e.xreplace(p)) for p in points]
        if any(v is None for v in mine):
            return None
        for h in candidates:
            theirs = [_number(h.expression.xreplace(p)) for p in points]
            if any(v is None for v in theirs):
                continue
            for sign in (1.0, -1.0):
                if all(abs(a - sign * b) <= IDENTICAL_RTOL * (abs(a) + abs(b) + 1e-300)
                       for a, b in zip(mine, theirs)):
                    return h.name
        return None

    def _gradient_row(self, key, expr, values: dict) -> np.ndarray | None:
        """dc/dy of the constraint expression ``expr`` at ``values`` (None if a symbol has no
        value there or c is not finite), by complex steps: dc/dy_j = Im c(y + i h e_j) / h with
        h = 1e-30, exact to rounding for the analytic expressions a constraint may hold (its
        non-smooth functions are refused, a Piecewise is differentiated symbolically); one
        vectorized evaluation of c lambdified once (kept under ``key``)."""
        if key not in self._gradients:
            syms = sorted(expr.free_symbols, key=str)
            self._gradients[key] = (syms, sp.lambdify(syms, expr, "numpy"))
        syms, fn = self._gradients[key]
        if any(x not in values for x in syms):
            return None
        index = {q: j for j, q in enumerate(self.y)}
        moving = [k for k, x in enumerate(syms) if x in index]
        row = np.zeros(len(index))
        if not moving:
            return row
        if expr.has(sp.Piecewise):
            for k in moving:
                value = _number(sp.diff(expr, syms[k]).xreplace(values))
                if value is None:
                    return None
                row[index[syms[k]]] = value
            return row
        h = 1e-30
        args = []
        for k, x in enumerate(syms):
            arg = np.full(len(moving), complex(values[x]))
            if k in moving:
                arg[moving.index(k)] += 1j * h
            args.append(arg)
        with np.errstate(all="ignore"):
            out = np.broadcast_to(np.asarray(fn(*args), dtype=complex), (len(moving),))
        for m, k in enumerate(moving):
            row[index[syms[k]]] = out[m].imag / h
        return row if np.all(np.isfinite(row)) and np.all(np.isfinite(out.real)) else None

    def _dependence(self, expr) -> list[str] | None:
        """None if the gradient of the new constraint ``expr`` at the initial configuration (the
        symbols as in :meth:`_start_values`, constants without default 0.7) is independent of
        those of the holonomic constraints already there, else the names of those it is a
        combination of ([] for a zero gradient): the numerical rank of the constraint Jacobian
        at the start, not a symbolic comparison.  The distance of the new gradient from the
        span of the others, relative to its length, is compared with REDUNDANT_RTOL."""
        values = self._start_values()
        values.update({c.symbol: 0.7 for c in self.constants_.values() if c.value is None})
        g = self._gradient_row(None, sp.sympify(expr), values)
        self._gradients.pop(None, None)
        if g is None:
            return None
        scale = float(np.abs(g).max())
        if scale == 0.0:
            return []
        rows, names = [], []
        for h in self.holonomic:
            r = self._gradient_row(h.name, h.expression, values)
            if r is not None and r.any():
                rows.append(r)
                names.append(h.name)
        if not rows:
            return None
        G = np.array(rows)
        coef, *_ = np.linalg.lstsq(G.T, g, rcond=None)
        if np.abs(G.T @ coef - g).max() > REDUNDANT_RTOL * scale:
            return None
        big = np.abs(coef) * np.abs(G).max(axis=1)
        return [n for n, c in zip(names, big) if c > 1e-6 * big.max()]

    # ------------------------------------------------------------------ constraints
    def constraint(self, name: str, expression) -> str:
        """A holonomic constraint c(y, t) = 0 (seed 003 eq. 1.2.2); twice differentiable in
        the coordinates and time (its rows of C and b'' need the derivatives)."""
        where = f"constraint {name!r}"
        e = self._scalar(expression, where)
        vel = e.free_symbols & set(self.yd)
        if vel:
            raise ModelError(
                f"{where} is velocity-dependent (it contains {', '.join(sorted(map(str, vel)))}): a "
                "holonomic constraint c(y, t) = 0 may depend on coordinates, time, time parameters "
                "and constants only; a constraint on the velocities A(y, t) y' + a(y, t) = 0 is a "
                "nonholonomic_constraint()")
        smooth = set(self.y) | {t} | {p.symbol for p in self.time_parameters.values()}
        check_differentiable(e, smooth, where, 2, "its rows of C = dc/dy and b'' need its first "
                             "and second derivatives")
        return super().constraint(name, e)

    def nonholonomic_constraint(self, name: str, expression) -> str:
        """A nonholonomic constraint A(y, t) y' + a(y, t) = 0, given as the scalar A y' + a
        (see :meth:`Model.nonholonomic_constraint`; ``velocity(point)`` and ``rates(point)``
        help build it)."""
        if isinstance(expression, (sp.MatrixBase, list, tuple, set, dict)) or getattr(
                expression, "shape", ()) != ():  # a 1 x 1 matrix is its element, others refused
            expression = self._scalar(expression, f"nonholonomic constraint {name!r}")
        return super().nonholonomic_constraint(name, expression)

    def distance(self, name: str, a, b, length) -> str:
        """|a - b|^2 - length^2 = 0 (seed 003 sec. 2.5, rigidity); the length must be positive
        (checked where it has a value: a number, or constants with defaults)."""
        where = f"distance constraint {name!r}"
        pa, pb = self.pv(a, where), self.pv(b, where)
        if pa == pb:
            raise ModelError(f"{where}: both ends are the same point")
        ell = self._length(length, where)
        self._product(name, pa - pb, pa - pb, ell**2)
        self._length_parameters(ell, where)
        return name

    def _product(self, name: str, u, v, r) -> str:
        """The constraint u . v - r = 0 (u, v point or vector expressions, r of constants and
        time), kept with its factors so that its rows come from the kinematics of u and v."""
        self.constraint(name, dot(u, v) - r)
        self.holonomic[-1].product = (sp.Matrix(u), sp.Matrix(v), sp.sympify(r))
        return name

    def perpendicular(self, name: str, u, v) -> str:
        """u . v = 0 (seed 003 sec. 2.5, a right angle kept between two vectors)."""
        where = f"perpendicularity constraint {name!r}"
        return self._product(name, self.pv(u, where), self.pv(v, where), 0)

    def unit_length(self, name: str, u) -> str:
        """u . u - 1 = 0 (a unit vector)."""
        pu = self.pv(u, f"unit-length constraint {name!r}")
        return self._product(name, pu, pu, 1)

    def prismatic(self, name: str, p, u, q, v=None, normals=None) -> list[str]:
        """A prismatic joint (seed 003 sec. 2.5): the point ``q`` of the second element stays
        on the line through the point ``p`` of the first along its vector ``u``.

        2D: ``<name>_line``: (q - p) x u = 0, and with ``v`` (a vector of the second element)
        ``<name>_parallel``: u x v = 0, so the elements do not rotate relative to each other.
        3D: ``normals`` (n1, n2) are two vectors of the first element perpendicular to u;
        ``<name>_n1``, ``<name>_n2``: (q - p) . n_i = 0, and with ``v`` also v . n_i = 0.  The
        two independent equations per condition avoid the redundant third component of a
        cross product; the relative rotation about the axis is kept by sharing a vector
        perpendicular to u between the elements (as the seed suggests) or by a constraint."""
        where = f"prismatic joint {name!r}"
        pp, pu, pq = self.pv(p, where + " p"), self.pv(u, where + " u"), self.pv(q, where + " q")
        pvv = None if v is None else self.pv(v, where + " v")
        names = []
        if self.dim == 2:
            if normals is not None:
                raise ModelError(f"{where}: normals are for 3D joints only")
            names.append(self._product(f"{name}_line", perp(pq - pp), pu, 0))
            if pvv is not None:
                names.append(self._product(f"{name}_parallel", perp(pu), pvv, 0))
            return names
        if normals is None or len(normals) != 2:
            raise ModelError(f"{where}: a 3D prismatic joint needs normals=(n1, n2), two vectors of "
                             "the first element perpendicular to u")
        ns = [self.pv(n, where + " normal") for n in normals]
        for i, n in enumerate(ns, 1):
            names.append(self._product(f"{name}_n{i}", pq - pp, n, 0))
        if pvv is not None:
            for i, n in enumerate(ns, 1):
                names.append(self._product(f"{name}_v{i}", pvv, n, 0))
        return names

    # ------------------------------------------------------------------ outputs
    def point_output(self, prefix: str, point, velocity: bool = False) -> list[str]:
        """Outputs ``<prefix>.x``, ``.y`` (, ``.z``) of a point's global coordinates, with
        ``velocity`` also ``.vx``, ``.vy`` (, ``.vz``): the natural-coordinate counterpart of
        ``frame_output``."""
        p = self.pv(point, f"point output {prefix!r}")
        names = [self.output(f"{prefix}.{ax}", e, f"position of {prefix} ({ax})")
                 for ax, e in zip(_AXES, p)]
        if velocity:
            names += [self.output(f"{prefix}.v{ax}", e, f"velocity of {prefix} ({ax})")
                      for ax, e in zip(_AXES, self.velocity(p))]
        return names

    # ------------------------------------------------------------------ queries
    def elements_with_mass(self) -> list[Mass]:
        """The point masses, rods and rigid bodies (mass, centre of gravity, inertia)."""
        return list(self.masses)

    def _summary_elements(self) -> list[str]:
        lines = []
        for kind, label in (("T", "kinetic energy"), ("V", "potential energy"), ("R", "dissipation")):
            names = [t.name for t in self.energy_terms if t.kind == kind]
            if names:
                lines.append(f"  {label} ({len(names)}): " + ", ".join(names))
        forces = [e.name for e in self.point_springs + self.point_forces + self.generalized_forces]
        lines.append(f"  force elements ({len(forces)}): " + ", ".join(forces))
        return lines


def _number(e) -> float | None:
    """float(e) if e is a finite real number, else None."""
    try:
        v = complex(e)
    except (TypeError, ValueError):
        return None
    return v.real if v.imag == 0 and np.isfinite(v.real) else None


def _numeric_matrix(M: sp.Matrix) -> np.ndarray | None:
    """M as a float array, or None if an entry is not a finite real number."""
    values = [_number(x) for x in M]
    if any(v is None for v in values):
        return None
    return np.array(values, dtype=float).reshape(M.shape)


def _shown(e: sp.Expr, value: float) -> str:
    """'-1' for a number, 'l = -1 (its value at the start)' for an expression."""
    return f"{value:g}" if e.is_number else f"{e} = {value:g} (its value at the start)"
