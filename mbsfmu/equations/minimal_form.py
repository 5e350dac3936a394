"""The equations of motion of a model in minimal form, M(y,t) y'' + k(y,y',t) = q(y,y',t,u)
(seed 002 eq. 11), with its constraints c(y,t) = 0, C = dc/dy, b', b'' (seed 000 eqs. 5-7).

An :class:`Equations` object holds what every use needs at once (the kinematics of all frames,
without the whole Jacobians, which are formed per frame on first use; the forces of the force
elements; the constraints) and derives the assembled M, k and q (and the energies) when first
asked for: a tree run on the articulated-body algorithm (:mod:`.articulated_body`) needs none of
them, and M is the one quantity that grows as N f^2 with the number of bodies N and coordinates
f.  :func:`mbsfmu.equations.derive.derive` builds it for a model.
"""

from __future__ import annotations

import ctypes
import types
from dataclasses import dataclass

import sympy as sp

from ..core.errors import deprecated
from .intermediates import Intermediates
from .kinematics import Kinematics
from .newton_euler import bias_forces, energies, generalized_forces, mass_matrix
from .numeric_model import NumericModel


@dataclass
class Equations:
    """Equations of motion of a system in minimal form (seed 002 eq. 11).

    ``M``, ``k``, ``q`` and the energies are sympy objects over the intermediate variables in
    ``intermediates``, each derived on first access (:meth:`is_derived` tells which were);
    ``expanded(expr)`` substitutes the intermediates back."""

    system: object
    intermediates: Intermediates
    kinematics: Kinematics
    q_applied: sp.Matrix   # the part of q from the force elements (no gravity)
    c: sp.Matrix = None    # holonomic constraints c(y,t) = 0 (seed 000 eq. 5), mh x 1
    C: sp.Matrix = None    # constraint Jacobian dc/dy, then the rows A of the m - mh nonholonomic
                           # constraints A y' + a = 0: m x f (eq. 6)
    b1: sp.Matrix = None   # b' (eq. 6), then a: m
    b2: sp.Matrix = None   # b'' (eq. 7), then A' y' + a': m

    @property
    def M(self) -> sp.Matrix:
        """Mass matrix (f x f, eq. 11)."""
        return self.derived("M", lambda e: mass_matrix(e.system, e.kinematics, e.intermediates))

    @property
    def k(self) -> sp.Matrix:
        """Generalized Coriolis, centrifugal and gyroscopic forces (f x 1, eq. 11)."""
        return self.derived("k", lambda e: bias_forces(e.system, e.kinematics, e.intermediates))

    @property
    def q(self) -> sp.Matrix:
        """Generalized applied forces, gravity included (f x 1, eq. 11)."""
        return self.derived("q", lambda e: generalized_forces(e.system, e.kinematics,
                                                              e.intermediates, e.q_applied))

    @property
    def kinetic_energy(self) -> sp.Expr:
        return self._energies()[0]

    @property
    def potential_energy(self) -> sp.Expr:
        return self._energies()[1]

    def _energies(self):
        return self.derived("energies", lambda e: energies(e.system, e.kinematics, e.intermediates))

    def is_derived(self, key: str) -> bool:
        """Whether the quantity ``key`` ("M", "k", "q", "energies", or a key of
        :meth:`derived`) has been derived for this object."""
        return key in self.__dict__.get("_derived", {})

    @property
    def f(self) -> int:
        """Number of generalized coordinates y (seed 002's f)."""
        return len(self.system.y)

    @property
    def m(self) -> int:
        """Rows of C (and b', b'', multipliers): holonomic and nonholonomic."""
        return 0 if self.C is None else self.C.rows

    @property
    def mh(self) -> int:
        """Rows of c: the holonomic constraints, which come first among the rows of C."""
        return 0 if self.c is None else self.c.rows

    @property
    def n_constraints(self) -> int:
        """Deprecated name of :attr:`m`."""
        deprecated("Equations.n_constraints", "Equations.m")
        return self.m

    @property
    def n_holonomic(self) -> int:
        """Deprecated name of :attr:`mh`."""
        deprecated("Equations.n_holonomic", "Equations.mh")
        return self.mh

    @property
    def y(self):
        return self.system.y

    @property
    def yd(self):
        return self.system.yd

    def expanded(self, expr):
        """Closed-form version of any expression or matrix over intermediate variables."""
        return self.intermediates.expand(expr)

    def frame(self, name: str):
        """Symbolic kinematics of a frame (over intermediate variables)."""
        return self.kinematics[name]

    def frame_expanded(self, name: str) -> dict[str, sp.Matrix]:
        """Closed-form kinematics of a frame (ISYS components): position, rotation, velocity,
        angular velocity, acceleration and angular acceleration (in terms of the acceleration
        symbols ``D2<name>``), and the Jacobians JT, JR (seed 002 eqs. 3-7)."""
        K = self.kinematics[name]
        ex = self.intermediates.expand
        ydd = sp.Matrix(self.system.ydd)
        JT, JR, abar, alphabar = ex(K.JT), ex(K.JR), ex(K.abar), ex(K.alphabar)
        return {"position": ex(K.r), "rotation": ex(K.S), "velocity": ex(K.v),
                "angular_velocity": ex(K.omega), "acceleration": JT * ydd + abar,
                "angular_acceleration": JR * ydd + alphabar, "JT": JT, "JR": JR,
                "abar": abar, "alphabar": alphabar}

    def __getstate__(self):
        """The state to pickle (a sweep sends a System to Dask workers): the symbolic results
        go along, compiled code does not (an extension module or a loaded library belongs to
        one process and is built again, from the compile cache, where it is needed)."""
        state = dict(self.__dict__)
        state.pop("_numeric_cache", None)
        if "_derived" in state:
            state["_derived"] = {k: v for k, v in state["_derived"].items() if not _compiled(v)}
        return state

    def derived(self, key: str, compute):
        """``compute(self)``, computed once per Equations object and kept under ``key`` (the
        derived forms of later stages: generated C source, articulated-body algorithm,
        parameter requirements)."""
        cache = self.__dict__.setdefault("_derived", {})
        if key not in cache:
            cache[key] = compute(self)
        return cache[key]

    def numeric(self, params=None, check: bool = True):
        """A numerical evaluator of these equations (:class:`~.numeric_model.NumericModel`);
        ``check``: the parameter values must meet the model's requirements."""
        return NumericModel(self, params, check=check)


def _compiled(value) -> bool:
    """Whether a derived value is (or holds) code loaded into this process."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    return any(isinstance(v, (types.ModuleType, ctypes.CDLL)) for v in items)
