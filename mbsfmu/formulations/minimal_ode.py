"""First-order form of the minimal equations of motion of a tree-structured system.

With the state x = [y, y'] (seed 002 eq. 11):

    x' = [ y',  M(y,t)^-1 (q(y,y',t,u) - k(y,y',t)) ].
"""

from __future__ import annotations

import numpy as np

from .base import Formulation


class MinimalODE(Formulation):
    """x' = F(t, x) for systems without constraints."""

    name = "minimal"

    def rhs(self, t, x):
        f = self.f
        y, yd = x[:f], x[f:]
        ydd = self.numeric.accelerations(t, y, yd, self.inputs(t))
        return np.concatenate((yd, ydd))
