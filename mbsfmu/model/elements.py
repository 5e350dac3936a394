"""Plain records for the elements of a multibody model (seed 002 sec. 4.1).

They hold sympy expressions only; all checking happens in :class:`mbsfmu.model.System`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import sympy as sp

from .rotations import Rotation


@dataclass
class Constant:
    """A named model constant with an optional default value (becomes an FMU parameter)."""

    name: str
    symbol: sp.Symbol
    value: float | None
    description: str = ""
    min: float = -math.inf  # declared bounds (inclusive, as FMI's min/max attributes)
    max: float = math.inf


@dataclass
class Coordinate:
    """A generalized coordinate y_k with its velocity and acceleration symbols."""

    name: str
    symbol: sp.Symbol
    velocity: sp.Symbol
    acceleration: sp.Symbol
    initial: float = 0.0
    initial_velocity: float = 0.0
    guess: bool = False           # initial position is only a guess for consistent initialization
    guess_velocity: bool = False  # the same for the velocity


@dataclass
class TimeParameter:
    """A prescribed function of time p(t), with symbols for p, p' and p''.

    Either ``expressions`` holds sympy expressions in t for (p, p', p''), or ``functions`` holds
    Python callables of t for the same three quantities."""

    name: str
    symbol: sp.Symbol
    velocity: sp.Symbol
    acceleration: sp.Symbol
    expressions: tuple | None = None
    functions: tuple[Callable, Callable, Callable] | None = None


@dataclass
class Input:
    """An input u whose value comes from outside (becomes an FMU input)."""

    name: str
    symbol: sp.Symbol
    default: float = 0.0
    min: float = -math.inf  # declared bounds (inclusive, as FMI's min/max attributes)
    max: float = math.inf


@dataclass
class Frame:
    """A coordinate frame placed in its reference frame ``ref``.

    ``position`` is the vector from the origin of ``ref`` to the origin of this frame, in ``ref``
    components; ``rotation`` maps components in this frame to components in ``ref``."""

    name: str
    ref: str | None
    position: sp.Matrix = field(default_factory=lambda: sp.zeros(3, 1))
    rotation: Rotation = field(default_factory=Rotation)


@dataclass
class Body:
    """A rigid body: primary frame ``frame`` and centre-of-gravity frame ``cg_frame``.

    ``inertia`` is the inertia tensor about the centre of gravity in cg-frame components."""

    name: str
    frame: str
    cg_frame: str
    mass: sp.Expr
    inertia: sp.Matrix


@dataclass
class SpringDamper:
    """Point-to-point spring-damper from frame ``a`` to frame ``b``.

    Tension f = k (L - L0) + d L' acts on b towards a and on a towards b."""

    name: str
    a: str
    b: str
    stiffness: sp.Expr
    damping: sp.Expr
    rest_length: sp.Expr


@dataclass
class AppliedForce:
    """A force (``kind='force'``, acting at the frame origin) or a torque on ``frame``.

    Components are given in frame ``in_frame``."""

    name: str
    kind: str
    frame: str
    vector: sp.Matrix
    in_frame: str


@dataclass
class GeneralizedForce:
    """A generalized force acting directly on one coordinate's equation."""

    name: str
    coordinate: str
    expression: sp.Expr


@dataclass
class LoopClosure:
    """Loop-closing conditions between frames ``a`` and ``b``.

    ``translations`` lists the axes of frame ``in_frame`` along which the origins of a and b
    must coincide; ``rotations`` the axes of ``in_frame`` about which a and b may not rotate
    relative to each other."""

    name: str
    a: str
    b: str
    translations: str
    rotations: str
    in_frame: str


@dataclass
class HolonomicConstraint:
    """A general holonomic constraint c(y, t) = 0 given as an expression.  ``product``, if
    given, is (u, v, r) with c = u . v - r (u, v vector expressions, r one of constants and
    time): the natural-coordinate constraints (distances, right angles, unit lengths, an
    element's rigidity), whose rows are then derived from the kinematics of u and v
    (:func:`mbsfmu.equations.constraints.product_rows`) instead of by differentiating c."""

    name: str
    expression: sp.Expr
    product: tuple | None = None


@dataclass
class NonholonomicConstraint:
    """A constraint on the velocities, linear in them: A(y, t) y' + a(y, t) = 0, given as the
    expression A y' + a (one row)."""

    name: str
    expression: sp.Expr


@dataclass
class InitialCondition:
    """An extra condition  expression(y) = value  (and optionally  d/dt expression = rate)
    used only to find consistent initial values of a system with constraints."""

    name: str
    expression: sp.Expr
    value: float
    rate: float | None = None


@dataclass
class Output:
    """A user-named output signal (an FMU output): an expression of t, the coordinates and
    their rates, constants, time parameters and inputs; or a component of a frame's kinematics
    (``frame``, ``quantity``, ``component``); or the Lagrange multiplier of one constraint row
    (``constraint``).  Outputs that depend on inputs have direct feed-through."""

    name: str
    description: str
    expression: sp.Expr | None = None
    frame: str | None = None
    quantity: str | None = None
    component: int = 0
    constraint: str | None = None


@dataclass
class Visual:
    """How the animation draws a body, a frame or a flexible body (:meth:`System.visual`).

    ``shape`` is ``'line'`` (the stick figure only), ``'sphere'`` (``size`` = (radius,)),
    ``'box'`` (edge lengths along the frame's x, y, z) or ``'cylinder'`` ((radius, length),
    axis along the frame's z) or ``'mesh'`` (``size`` = its scale; ``mesh`` the
    :class:`~mbsfmu.model.meshes.MeshShape` read from the file, vertices in the frame);
    ``color`` a matplotlib colour or None for the default."""

    name: str
    shape: str = "line"
    size: tuple[float, ...] = ()
    color: str | None = None
    mesh: object = None


# ---------------------------------------------------------------- natural-coordinate front end
@dataclass
class KineticForm:
    """The kinetic energy of an element as a quadratic form in the velocities of vectors,
    T = 1/2 sum_ab metric_ab x_a' . x_b' with a constant ``metric``: each of ``vectors`` is a
    point or vector expression of the coordinates (and time) or ("cross", i, j), the cross
    product x_i x x_j of two earlier ones.  Lagrange's equations of such a T are
    M = sum_ab metric_ab J_a^T J_b and k = sum_ab metric_ab J_a^T (x_b'' at y'' = 0), with
    J_a = dx_a/dy (:func:`mbsfmu.equations.lagrange.inertia_terms`)."""

    vectors: list
    metric: sp.Matrix


@dataclass
class EnergyTerm:
    """One term of the kinetic energy T, the potential V or the Rayleigh dissipation function R
    of a :class:`~mbsfmu.model.lagrangian.LagrangianSystem` (``kind`` "T", "V" or "R"),
    named after what added it (a rod, a user's ``kinetic_energy(...)``); an element's T also
    has its ``form`` (the derivation uses it instead of differentiating the expression)."""

    name: str
    kind: str
    expression: sp.Expr
    form: KineticForm | None = None


@dataclass
class Mass:
    """A mass m whose centre of gravity is at the position ``cg`` (a vector expression of the
    coordinates): its weight enters V as -m g.cg once gravity is set.  ``inertia`` is the
    element's inertia tensor about its centre of gravity (zero for a point mass, (0, J, J) for
    a rod, the polar moment J as diag(J/2, J/2, J) for a planar body), for the parameter checks
    that a body's mass properties get (:func:`mbsfmu.equations.parameter_requirements.
    body_checks`)."""

    name: str
    mass: sp.Expr
    cg: sp.Matrix
    inertia: sp.Matrix = field(default_factory=lambda: sp.zeros(3, 3))


@dataclass
class PointSpringDamper:
    """Spring-damper between the points ``a`` and ``b`` (vector expressions):
    V = k (L - L0)^2 / 2 and R = d L'^2 / 2 with L = |a - b|."""

    name: str
    a: sp.Matrix
    b: sp.Matrix
    stiffness: sp.Expr
    damping: sp.Expr
    rest_length: sp.Expr


@dataclass
class PointForce:
    """A force ``vector`` (global components) acting at the point ``point`` (a vector
    expression): generalized force Q = (d point / dy)^T vector."""

    name: str
    point: sp.Matrix
    vector: sp.Matrix


@dataclass
class FlexibleBody:
    """A flexible body (seed 002 "Step 2-4 (elastic)"; Schwertassek and Wallrapp's SID): its
    frame of reference ``frame`` (named as the body), its modal data ``data`` (a
    :class:`~mbsfmu.model.elastic.ModalData`), the names of its elastic coordinates
    ``coordinates`` (one per mode, in mode order) and of its nodal frames ``node_frames`` (one
    per node, in node order, placed in ``frame``).  ``geometric_stiffening``: whether the
    geometric stiffness of ``data.ksigma`` enters the equations."""

    name: str
    frame: str
    data: object
    coordinates: list[str]
    node_frames: list[str]
    geometric_stiffening: bool = True
    stiffness_factor: sp.Expr = sp.S.One  # multiplies Ke (an expression of constants)
    damping_factor: sp.Expr = sp.S.One    # multiplies De
