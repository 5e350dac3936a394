"""Post-stabilization PStab (seed 004 §3.4, Algorithm 3.3, eqs. 3.66 and 3.68).

The index-1 formulation (seed 000 eq. 8) is integrated, and after every accepted step the state
is projected back onto the invariant manifold h(y, y') = (c, C y' + b') = 0 with

    F = M^-1 C^T (C M^-1 C^T)^-1                                          (3.66, S-both)

    y  <- y  - F c(y)           (applied twice, 3.68: the drift becomes O(h^(2(p+1))); a
                                 correction stops early once max |c| <= newton_tol)
    y' <- y' - F (C y' + b')    (with C, b' at the corrected y)

Nonholonomic rows A y' + a = 0 (the last rows of C) take part in the velocity correction only
(seed 004 eq. 3.75): the position corrections use F_h = W_h (C_h W_h)^-1 of the holonomic rows
C_h (W_h = M^-1 C_h^T), the velocity correction F of all rows of C.

``weighting='identity'`` uses the better-conditioned F = C^T (C C^T)^-1 of eq. 3.69 (Remark
3.4), advisable when very heavy and very light bodies are mixed.  M and C are evaluated once at
the new point and reused for the position iterations, as in Algorithm 3.3.
"""

from __future__ import annotations

import numpy as np

from ...core.constants import DEFAULTS
from ...core.errors import ConstraintError
from .dae import DAE


class PostStabilization(DAE):
    name = "projection"
    projects = True

    def __init__(self, numeric, inputs=None, weighting: str = "mass",
                 iterations: int = DEFAULTS["iterations"], newton_tol: float = DEFAULTS["newton_tol"]):
        super().__init__(numeric, inputs)  # the options are checked by make_formulation (OPTIONS)
        self.weighting = weighting
        self.iterations = int(iterations)
        self.newton_tol = float(newton_tol)
        self.nproj = 0

    def _F(self, t, y, M, C):
        """The stabilization matrix F (f x m) of eq. 3.66 or 3.69."""
        try:
            if self.weighting == "mass":
                W = np.linalg.solve(M, C.T)           # M^-1 C^T
            else:
                W = C.T
            S = C @ W                                  # C M^-1 C^T  or  C C^T
            return W @ np.linalg.inv(S) if S.size else W
        except np.linalg.LinAlgError:
            raise ConstraintError(
                f"{self.numeric.system.name}: projection impossible {self.where(t, y)}: "
                "C M^-1 C^T is singular (redundant constraints or a singular configuration; "
                "use formulation 'qr' or 'svd' for redundant constraints)") from None

    def project(self, t, x):
        self.nproj += 1
        f = self.f
        y, yd = x[:f].copy(), x[f:].copy()
        num = self.numeric
        M, _, c, C, b1, _ = num.constrained_parts(t, y, yd, self.inputs(t))
        F = self._F(t, y, M, C)
        mh = len(c)
        Fh = F if mh == len(C) else self._F(t, y, M, C[:mh])
        for _ in range(self.iterations):
            if not np.max(np.abs(c), initial=0.0) > self.newton_tol:
                break
            y -= Fh @ c
            c, C, b1 = num.constraint_parts(t, y)
        yd -= F @ (C @ yd + b1)
        return np.concatenate((y, yd))

