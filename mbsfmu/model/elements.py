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
    """A general holonomic constraint c(y, t) = 0 given as an expression."""

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
