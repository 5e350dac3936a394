"""The Lagrangian front end: a model given by its energies and holonomic constraints, in
natural coordinates or any other coordinates (seed 003 ch. 1-3).

Instead of bodies placed in frames, the user gives the kinetic energy T(y, y', t), the potential
V(y, t) (or a Lagrangian L = T - V), a Rayleigh dissipation function R(y, y', t), generalized
forces Q(y, y', t, u), holonomic constraints c(y, t) = 0 and nonholonomic constraints
A(y, t) y' + a(y, t) = 0.  Lagrange's equations of the first
kind (seed 003 eq. 1.2.1, derived in :mod:`mbsfmu.equations.lagrange`) give the same
``M y'' + k = q`` with constraints as :class:`~mbsfmu.model.System`, so simulation, code
generation, the C engine and both FMU kinds take a LagrangianSystem unchanged::

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
The commands come one concern per module: energies (:mod:`.energies`), elements and forces at
points (:mod:`.natural_elements`), constraints and their redundancy checks
(:mod:`.natural_constraints`), the values at the start these checks use (:mod:`.start_values`).

What it shares with :class:`~mbsfmu.model.System` (symbols, constraints, outputs, generalized
forces) is :class:`~mbsfmu.model.base.Model`; the two are siblings.  Frames do not exist here
(points and gravity are in ISYS components): outputs are expressions (:meth:`point_output`
gives a point's coordinates and velocity), and a System's frame-based commands (``body``,
``frame``, ``loop``, ``force``, ``torque``, ``frame_output``, ``flexible_body``, ...) are a
ModelError naming their replacement (:attr:`LagrangianSystem.ELSEWHERE`).
"""

from __future__ import annotations

import sympy as sp

from ..core.checks import finite_number
from ..core.errors import ModelError
from .base import Model
from .elements import EnergyTerm, Mass, PointForce, PointSpringDamper
from .energies import Energies
from .names import FRAMES
from .natural_constraints import NaturalConstraints
from .natural_elements import NaturalElements
from .start_values import StartValues
from .time_derivative import TimeDerivative

_AXES = "xyz"


class LagrangianSystem(Energies, NaturalElements, NaturalConstraints, StartValues, Model):
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
        self.drawn: list[tuple[str, tuple]] = []       # (element or distance, its points): the animation's
        self._gradients: dict = {}                     # constraint -> parts of dc/dy
        self.nonzero_parameters: dict[str, str] = {}   # constant -> why it must not be 0

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

    def gravity(self, vector) -> None:
        """The gravity vector (``dim`` components), e.g. ``gravity([0, -g])`` in 2D with y up:
        every element with mass gets the potential -m g . r_cg."""
        g = self.pv(vector, "gravity")
        self._refuse(sp.Matrix(g), "gravity", ("y",), "gravity may depend on constants and time only")
        self.gravity_field = g
        self.gravity_vector = sp.Matrix(list(g) + [0] * (3 - self.dim))
        self._changed()

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
