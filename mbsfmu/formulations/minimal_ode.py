"""First-order form of the minimal equations of motion of a tree-structured system.

With the state x = [y, y'] (seed 002 eq. 11):

    x' = [ y',  M(y,t)^-1 (q(y,y',t,u) - k(y,y',t)) ].

With the compiled backend (``NumericModel.use_c_kernel()``) and inputs that are constants, the
whole right-hand side is one call of :class:`~mbsfmu.codegen.c_rhs.CompiledRHS` (the generated
articulated-body algorithm where the model has joint coordinates, else M and a Cholesky solve
in C); inputs given as functions of time go through the per-state kernel as before.
"""

from __future__ import annotations

import numpy as np

from .base import Formulation


class MinimalODE(Formulation):
    """x' = F(t, x) for systems without constraints."""

    name = "minimal"

    def __init__(self, numeric, inputs=None):
        super().__init__(numeric, inputs)
        if getattr(numeric, "backend", "numpy") == "c" and not self.inputs.time_varying:
            from ..codegen.c_rhs import CompiledRHS

            self.rhs = CompiledRHS(numeric)   # same x' = F(t, x), one compiled call

    def rhs(self, t, x):
        f = self.f
        y, yd = x[:f], x[f:]
        ydd = self.numeric.accelerations(t, y, yd, self.inputs(t))
        return np.concatenate((yd, ydd))
