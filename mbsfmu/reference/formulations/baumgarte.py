"""Baumgarte stabilization (seed 004 §2, seed 000 eq. 7 modified).

The acceleration-level constraint c'' = 0 is replaced by

    c'' + 2 alpha c' + beta^2 c = 0,     i.e.  C y'' + b'' + 2 alpha (C y' + b') + beta^2 c = 0,

so that constraint violations decay like a damped oscillator instead of drifting.  A
nonholonomic row A y' + a = 0 has no position level and gets the velocity term only,

    A y'' + (A' y' + a') + 2 alpha (A y' + a) = 0,

so its violation decays like exp(-2 alpha t).  Default
alpha = beta = 10 1/s (critically damped at 10 rad/s): fast enough to pull the slider-crank back
within a fraction of a second, slow enough not to make the ODE stiff for an explicit method.  The
best pair is problem-dependent (seed 004 Tables 4.1-4.5); large values add stiffness.
"""

from __future__ import annotations

import numpy as np

from ...core.constants import DEFAULTS
from .dae import DAE


class Baumgarte(DAE):
    name = "baumgarte"

    def __init__(self, numeric, inputs=None, alpha: float = DEFAULTS["alpha"],
                 beta: float = DEFAULTS["beta"]):
        super().__init__(numeric, inputs)
        self.alpha, self.beta = float(alpha), float(beta)  # checked by make_formulation (OPTIONS)

    def _extra(self, c, C, b1, yd):
        extra = 2.0 * self.alpha * (C @ yd + b1)
        extra[:len(c)] += self.beta**2 * c    # the holonomic rows (the first ones of C)
        return extra

    def rhs(self, t, x):
        f = self.f
        y, yd = x[:f], x[f:]
        return np.concatenate((yd, self.accelerations(t, y, yd, self._extra)))
