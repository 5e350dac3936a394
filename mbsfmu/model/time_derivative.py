"""The total time derivative of a model's expressions, d/dt through its coordinates, time and
time-dependent parameters (the chain rule with y -> y' -> y'' and p -> p' -> p''): what
:meth:`LagrangianSystem.velocity` gives a user and what the kinematics of :mod:`mbsfmu.equations`
differentiate with (seed 002 eqs. 4-5, the velocities and accelerations of the frames).
"""

from __future__ import annotations

import sympy as sp


class TimeDerivative:
    """Total time derivative d/dt through coordinates, time and time-dependent parameters."""

    def __init__(self, system):
        self.t = system.t
        chain = []  # (symbol, its time derivative)
        for c in system.coordinates_.values():
            chain.append((c.symbol, c.velocity))
            chain.append((c.velocity, c.acceleration))
        for p in system.time_parameters.values():
            chain.append((p.symbol, p.velocity))
            chain.append((p.velocity, p.acceleration))
        self.chain = dict(chain)
        self.accelerations = {c.acceleration for c in system.coordinates_.values()}

    def __call__(self, expr, without_ydd: bool = False):
        if isinstance(expr, sp.MatrixBase):
            return expr.applyfunc(lambda e: self(e, without_ydd))
        expr = sp.sympify(expr)
        out = sp.diff(expr, self.t) if self.t in expr.free_symbols else sp.S.Zero
        for s in expr.free_symbols:
            ds = self.chain.get(s)
            if ds is None or (without_ydd and ds in self.accelerations):
                continue
            out += sp.diff(expr, s) * ds
        return out
