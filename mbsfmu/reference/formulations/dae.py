"""Acceleration-level DAE in explicit form (seed 000 eq. 9), deliberately unstabilized.

    y'' and lambda from  [[M, C^T], [C, 0]] [y''; -lambda] = [q - k; -b'']        (eq. 8)

Only c'' = 0 is enforced, so integration errors make c and c' drift (seed 000 §5, Fig. 3).
"""

from __future__ import annotations

import numpy as np

from ...core.errors import ConstraintError
from .base import Formulation, kkt_solve


class DAE(Formulation):
    name = "dae"

    def accelerations(self, t, y, yd, b2_extra=None):
        M, h, c, C, b1, b2 = self.numeric.constrained_parts(t, y, yd, self.inputs(t))
        if b2_extra is not None:
            b2 = b2 + b2_extra(c, C, b1, yd)
        try:
            ydd, _ = kkt_solve(M, h, C, b2)
        except np.linalg.LinAlgError:
            raise ConstraintError(
                f"{self.numeric.system.name}: the matrix [[M, C^T], [C, 0]] is singular "
                f"{self.where(t, y)}: a singular configuration or redundant constraints "
                "(use formulation 'qr' or 'svd' for redundant constraints)") from None
        return ydd

    def rhs(self, t, x):
        f = self.f
        y, yd = x[:f], x[f:]
        return np.concatenate((yd, self.accelerations(t, y, yd)))
