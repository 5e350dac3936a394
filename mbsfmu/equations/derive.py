"""Derivation driver: kinematics (seed 002 steps 2-3), assembly (step 4), constraints."""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .constraints import constraint_equations
from .intermediates import Intermediates
from .kinematics import Kinematics
from .newton_euler import assemble


@dataclass
class Equations:
    """Equations of motion of a system in minimal form (seed 002 eq. 11).

    ``M``, ``k``, ``q`` and the energies are sympy objects over the intermediate variables in
    ``intermediates``; ``expanded(expr)`` substitutes those back."""

    system: object
    intermediates: Intermediates
    kinematics: Kinematics
    M: sp.Matrix
    k: sp.Matrix
    q: sp.Matrix
    kinetic_energy: sp.Expr
    potential_energy: sp.Expr
    c: sp.Matrix = None    # constraints c(y,t) = 0 (seed 000 eq. 5), m x 1
    C: sp.Matrix = None    # constraint Jacobian dc/dy, m x f (eq. 6)
    b1: sp.Matrix = None   # b' (eq. 6)
    b2: sp.Matrix = None   # b'' (eq. 7)

    @property
    def n_constraints(self) -> int:
        return 0 if self.c is None else self.c.rows

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

    def derived(self, key: str, compute):
        """``compute(self)``, computed once per Equations object and kept under ``key`` (the
        derived forms of later stages: generated C source, articulated-body algorithm,
        parameter requirements)."""
        cache = self.__dict__.setdefault("_derived", {})
        if key not in cache:
            cache[key] = compute(self)
        return cache[key]

    def numeric(self, params=None):
        """A numerical evaluator of these equations (:class:`~.numeric_model.NumericModel`)."""
        from .numeric_model import NumericModel

        return NumericModel(self, params)


def derive(system) -> Equations:
    """Derive the equations of motion of ``system`` (seed 002 §2, steps 1-4)."""
    w = Intermediates()
    kin = Kinematics(system, w)
    M, k, q, T, V = assemble(system, kin, w)
    c, C, b1, b2 = constraint_equations(system, kin, w)
    return Equations(system, w, kin, M, k, q, T, V, c, C, b1, b2)
