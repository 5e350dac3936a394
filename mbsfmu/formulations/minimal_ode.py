"""First-order form of the minimal equations of motion of a tree-structured system.

With the state x = [y, y'] (seed 002 eq. 11):

    x' = [ y',  M(y,t)^-1 (q(y,y',t,u) - k(y,y',t)) ].

With the compiled kernel (``NumericModel.use_c_kernel()``) and inputs that are constants, the
whole right-hand side is one call of :class:`~mbsfmu.codegen.c_rhs.CompiledRHS`, the C engine's
minimal ODE (the generated articulated-body algorithm where the model has joint coordinates,
else M and a Cholesky solve); inputs given as functions of time, or an interpreter without the
headers the engine extension needs, go through the per-state kernel.
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
            from ..codegen.c_rhs import CompiledRHS, MissingPythonHeaders

            try:
                self.rhs = CompiledRHS(numeric)   # same x' = F(t, x), one call of the engine
            except MissingPythonHeaders:
                pass   # no engine extension: the per-state kernel (ctypes) below

    def rhs(self, t, x):
        f = self.f
        y, yd = x[:f], x[f:]
        ydd = self.numeric.accelerations(t, y, yd, self.inputs(t))
        return np.concatenate((yd, ydd))
