"""What every model has, whichever front end made it: the base of :class:`~mbsfmu.model.System`
(frames and bodies, seed 002 sec. 4.1) and :class:`~mbsfmu.model.LagrangianSystem` (energies
and natural coordinates, seed 003 ch. 1-3).

A model is a name and title, symbols (constants, generalized coordinates y with their rates
y' = ``D<q>`` and accelerations ``D2<q>``, time parameters, inputs; :mod:`.declarations`),
their initial values, generalized forces, gravity, holonomic and nonholonomic constraints
with the initial conditions of a constrained system (:mod:`.constraints`), and user outputs
(:mod:`.outputs`).  Its equations of motion ``M(y, t) y'' + k(y, y', t) = q(y, y', t, u)``
with the constraints ``c(y, t) = 0`` (and ``A y' + a = 0``) come from the derivation that
fits its front end (:func:`mbsfmu.derive`, which keeps them on the model until it changes: the
model never imports its derivation), so simulation, code generation, the C
engine, the FMUs and the analysis take any model alike.

Expressions may be sympy expressions built from the returned symbols or strings that are read
in the model's namespace (``"L1*sin(alpha)"``); every error names the offending element, and
a refused command changes nothing.  Names live in namespaces (:mod:`.names`).  A command of the
other front end (``body()`` on a LagrangianSystem) is a ModelError that names what to use
instead (:attr:`Model.ELSEWHERE`).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable

import sympy as sp

from ..core.errors import MbsError, ModelError, ParameterError
from .constraints import Constraints
from .declarations import Declarations
from .elements import (
    Constant,
    Coordinate,
    GeneralizedForce,
    HolonomicConstraint,
    InitialCondition,
    Input,
    NonholonomicConstraint,
    Output,
    TimeParameter,
)
from .names import FORCES, SYMBOLS, Names, t
from .outputs import Outputs


class CommandNotAvailable(ModelError, AttributeError):
    """A command of the other front end (``body()`` on a LagrangianSystem): a ModelError that
    names the replacement, and an AttributeError, so ``hasattr`` is False for it."""


class Model(Declarations, Constraints, Outputs):
    """What both front ends share (see the module docstring); not used by itself."""

    #: commands of the other front end that this one does not have: name -> what to use instead
    ELSEWHERE: dict[str, str] = {}
    #: why the commands of :attr:`ELSEWHERE` are missing (said in their message)
    ELSEWHERE_WHY = ""

    def __init__(self, name: str, title: str = ""):
        if not name or not str(name).isidentifier():
            raise ModelError(f"system name {name!r} must be a valid identifier")
        self.name = str(name)
        self.title = title or self.name
        self.t = t
        self.constants_: dict[str, Constant] = {}
        self.coordinates_: dict[str, Coordinate] = {}
        self.time_parameters: dict[str, TimeParameter] = {}
        self.inputs: dict[str, Input] = {}
        self.generalized_forces: list[GeneralizedForce] = []
        self.holonomic: list[HolonomicConstraint] = []
        self.nonholonomic: list[NonholonomicConstraint] = []
        self.initial_conditions: list[InitialCondition] = []
        self.outputs: dict[str, Output] = {}
        self.gravity_vector = sp.zeros(3, 1)  # in ISYS components
        self._names = Names()
        self._namespace: dict[str, sp.Basic] = {"t": t}
        self._equations = None

    def __getattr__(self, name: str):
        """Only called for a name the model does not have: a command of the other front end
        is a :class:`CommandNotAvailable` that names its replacement."""
        instead = type(self).ELSEWHERE.get(name)
        if instead is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        raise CommandNotAvailable(f"{self.__dict__.get('name', '?')}: {name}() is not available in a "
                                  f"{type(self).__name__} ({self.ELSEWHERE_WHY}); use {instead}")

    # ------------------------------------------------------------------ names and symbols
    def _claim(self, name: str, what: str, space: str = SYMBOLS, fmu: bool = False) -> None:
        """Take ``name`` in namespace ``space`` for ``what`` ("constant 'm'"); ``fmu``: the name
        also becomes an FMU variable (:meth:`.names.Names.claim`)."""
        self._names.claim(name, what, space, fmu)
        self._changed()

    def _check_name(self, name: str, what: str, space: str = SYMBOLS, fmu: bool = False) -> None:
        """The checks of :meth:`_claim` without taking the name."""
        self._names.check(name, what, space, fmu)

    def _symbol(self, name: str, what: str, fmu: bool = False) -> sp.Symbol:
        self._claim(name, what, SYMBOLS, fmu)
        s = sp.Symbol(name, real=True)
        self._namespace[name] = s
        return s

    def _changed(self) -> None:
        """Forget the equations derived so far (the model changed)."""
        self._equations = None

    # ------------------------------------------------------------------ expressions
    def expr(self, value, where: str = "expression") -> sp.Expr:
        """Turn a number, string or sympy expression into a checked sympy expression."""
        try:
            if isinstance(value, str):
                e = sp.sympify(value, locals=dict(self._namespace))
            else:
                e = sp.sympify(value)
        except (sp.SympifyError, TypeError, SyntaxError) as exc:
            raise ModelError(f"{where}: cannot read {value!r} as an expression ({exc})"
                             + self._sympy_names(value)) from None
        if not isinstance(e, sp.Expr):
            raise ModelError(f"{where}: {value!r} is not a scalar expression" + self._sympy_names(value))
        known = set(self._namespace.values())
        unknown = [s for s in e.free_symbols if s not in known]
        if unknown:
            names = ", ".join(sorted(str(s) for s in unknown))
            raise ModelError(
                f"{where}: unknown symbol(s) {names}; declare them with constants(), "
                "coordinates(), time_parameter() or input() and use the returned symbols"
            )
        return e

    def _sympy_names(self, value) -> str:
        """'; zeta is a sympy function, ...' for the undeclared names in a string that sympy
        reads as its own functions (zeta, gamma, beta, ...), else ''."""
        if not isinstance(value, str):
            return ""
        names = sorted({n for n in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", value)
                        if n not in self._namespace and callable(getattr(sp, n, None))})
        if not names:
            return ""
        return (f"; {', '.join(names)} {'is a sympy function' if len(names) == 1 else 'are sympy functions'}"
                ", not a declared symbol: declare it with constants(), coordinates(), "
                "time_parameter() or input() (or choose another name) and use the returned symbol")

    def _matrix3(self, value, where: str) -> sp.Matrix:
        """A checked 3 x 3 matrix of expressions; three values are its diagonal."""
        try:
            M = sp.Matrix(value)
        except Exception as exc:  # sympy raises many kinds here
            raise ModelError(f"{where}: cannot read {value!r} as a 3x3 matrix ({exc})") from None
        if M.shape == (3, 1) or M.shape == (1, 3):
            M = sp.diag(*list(M))
        if M.shape != (3, 3):
            raise ModelError(f"{where}: a 3x3 matrix (or 3 principal values) is needed, got {M.shape}")
        return M.applyfunc(lambda v: self.expr(v, where))

    # ------------------------------------------------------------------ forces and gravity
    def generalized_force(self, name: str, coordinate: str, expression) -> str:
        """A generalized force added to the right-hand side q of one coordinate's equation."""
        where = f"generalized force {name!r}"
        coordinate = getattr(coordinate, "name", coordinate)
        if coordinate not in self.coordinates_:
            raise ModelError(f"{where}: {coordinate!r} is not a coordinate")
        el = GeneralizedForce(name, coordinate, self.expr(expression, where))
        self._claim(name, where, FORCES)
        self.generalized_forces.append(el)
        return name

    def gravity(self, vector) -> None:
        """Set the gravity vector (``gravity_vector``, ISYS components)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ queries
    @property
    def y(self) -> list[sp.Symbol]:
        return [c.symbol for c in self.coordinates_.values()]

    @property
    def yd(self) -> list[sp.Symbol]:
        return [c.velocity for c in self.coordinates_.values()]

    @property
    def ydd(self) -> list[sp.Symbol]:
        return [c.acceleration for c in self.coordinates_.values()]

    def default_parameters(self, strict: bool = True) -> dict[str, float]:
        """Default constant values; ``strict`` raises for constants without a value."""
        out = {}
        for c in self.constants_.values():
            if c.value is None:
                if strict:
                    raise ParameterError(f"constant {c.name!r} has no value; give one in "
                                         "constant()/constants() or with params={...}")
                continue
            out[c.name] = c.value
        return out

    def elements_with_mass(self) -> list:
        """The elements with mass and inertia (each with ``name``, ``mass`` and ``inertia``, the
        3 x 3 tensor about its centre of gravity), whose values the parameter checks test."""
        raise NotImplementedError

    #: ``derive(model) -> Equations``, registered by :mod:`mbsfmu.equations` when it is imported
    #: (:meth:`register_derivation`); only the deprecated :meth:`equations` calls it, so that the
    #: model never imports its own derivation
    _derivation = None

    @staticmethod
    def register_derivation(derive: Callable) -> None:
        """Make ``derive`` (:func:`mbsfmu.derive`) what :meth:`equations` calls, for every front end."""
        Model._derivation = staticmethod(derive)

    def equations(self):
        """Deprecated for one release: ``mbsfmu.derive(s)`` returns the same equations of motion.

        Warns with a DeprecationWarning; an MbsError if no derivation is registered."""
        kind = type(self).__name__
        warnings.warn(f"{kind}.equations() is deprecated and goes away in the next release: use "
                      "mbsfmu.derive(s), which returns the same Equations", DeprecationWarning, stacklevel=2)
        if self._derivation is None:
            raise MbsError(f"{self.name}: {kind}.equations() finds no derivation of the equations of motion "
                           "(mbsfmu.equations registers it when it is imported): import mbsfmu and call "
                           "mbsfmu.derive(s)")
        return self._derivation(self)

    def cached_equations(self, derive: Callable):
        """``derive(self)``, computed once and kept until the model changes: the equations of
        motion, which :func:`mbsfmu.derive` (the derivation of :mod:`mbsfmu.equations`) keeps
        here so that every stage shares one derivation and a pickled model takes it along.  The
        model itself never derives: it is the description the equations are derived from."""
        if self._equations is None:
            self._equations = derive(self)
        return self._equations

    def summary(self) -> str:
        """What the model holds, one kind of thing per line."""
        lines = [f"system {self.name!r} ({self.title})"]
        lines.append(f"  coordinates ({len(self.coordinates_)}): " + ", ".join(
            f"{c.name}={c.initial:g} (D={c.initial_velocity:g})" for c in self.coordinates_.values()))
        lines.append(f"  constants ({len(self.constants_)}): " + ", ".join(
            f"{c.name}={c.value!r}" for c in self.constants_.values()))
        lines.append(f"  inputs ({len(self.inputs)}): " + ", ".join(
            f"{u.name}={u.default:g}" for u in self.inputs.values()))
        lines.append(f"  time parameters ({len(self.time_parameters)}): " + ", ".join(
            self.time_parameters))
        lines += self._summary_elements()
        if self.constrained:
            nh = {h.name for h in self.nonholonomic}
            lines.append(f"  constraints ({len(self.constraint_names)}): " + ", ".join(
                n + (" (nonholonomic)" if n in nh else "") for n in self.constraint_names))
        return "\n".join(lines)

    def _summary_elements(self) -> list[str]:
        """The summary's lines of the front end's own elements."""
        return []
