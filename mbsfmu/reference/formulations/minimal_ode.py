"""First-order form of the minimal equations of motion of a tree-structured system.

With the state x = [y, y'] (seed 002 eq. 11):

    x' = [ y',  M(y,t)^-1 (q(y,y',t,u) - k(y,y',t)) ].

With the compiled kernel (:func:`mbsfmu.engine.c_kernel.use_c_kernel`, which gives the numeric
model a ``compiled_rhs``) and inputs that are constants, the whole right-hand side is one call of
the C engine's minimal ODE (the generated articulated-body algorithm where the model has joint
coordinates, else M and a Cholesky solve); inputs given as functions of time, or an interpreter
without the headers the engine extension needs, go through the per-state kernel.  The reference
imports nothing of the engine: the compiled right-hand side comes with the numeric model.
"""

from __future__ import annotations

import numpy as np

from .base import Formulation


class MinimalODE(Formulation):
    """x' = F(t, x) for systems without constraints."""

    name = "minimal"

    def __init__(self, numeric, inputs=None):
        super().__init__(numeric, inputs)
        compiled = getattr(numeric, "compiled_rhs", None)
        if compiled is not None and not self.inputs.time_varying:
            rhs = compiled()   # same x' = F(t, x), one call of the engine
            if rhs is not None:   # else no engine extension: the per-state kernel (ctypes) below
                self.rhs = rhs

    def rhs(self, t, x):
        f = self.f
        y, yd = x[:f], x[f:]
        ydd = self.numeric.accelerations(t, y, yd, self.inputs(t))
        return np.concatenate((yd, ydd))
