"""Optimal linear combinations of the coordinates by QR or SVD (seed 000 §4.3-4.5).

A rank-revealing decomposition of C^T splits the coordinate space into the constrained
directions (Q1 or U1) and the directions of free motion J_i (Q2 or U2, an orthonormal null-space
basis of C):

    QR  (eq. 20):  C^T P = [Q1 Q2] [R1; 0]       J_i = Q2,  C = P R1^T Q1^T
    SVD (eq. 25):  C^T = [U1 U2] [S; 0] V^T      J_i = U2,  C = V S U1^T

With the minimum-norm particular solutions  theta = -C^+ b'  and  gamma = -C^+ b''
(eqs. 24, 28; for QR C^+ b = Q1 R1^-T P^T b restricted to the rank):

    y'  = J_i J_i^T (y' - theta) + theta                                         (eq. 30)
    y'' = J_i (J_i^T M J_i)^-1 J_i^T (q - k - M gamma) + gamma                    (eq. 31)

(eq. 31 of the seed prints the bracket with the opposite sign; the form above follows from
eq. 29 and is the one that reproduces the equations of motion.)  After each accepted step the
positions are corrected by minimum-norm Gauss-Newton steps  y <- y - C^+ c  and the velocities
by eq. 30, so neither level drifts.  With nonholonomic rows A y' + a = 0 (the last rows of C)
the Gauss-Newton steps use the holonomic rows C_h of C only (the positions have no other
condition), eqs. 30 and 31 all rows.  The rank is decided with the tolerance ``rank_tol``
relative to the largest singular value / pivot (default 1e-9), which makes redundant
constraints (rank-deficient C, e.g. a planar four-bar closed in 3D) harmless: only r = rank(C)
directions are constrained.
"""

from __future__ import annotations

import numpy as np

from ...core.constants import DEFAULTS, SINGULAR_STEP
from ...core.errors import ConstraintError, ParameterError
from .base import Formulation
from .null_space import NullSpaceDecomposition


class OptimalPartitioning(Formulation):
    projects = True
    handles_redundant = True

    def __init__(self, numeric, inputs=None, method: str = "qr", rank_tol: float = DEFAULTS["rank_tol"],
                 newton_tol: float = DEFAULTS["newton_tol"], newton_max: int = DEFAULTS["newton_max"]):
        super().__init__(numeric, inputs)
        if method not in ("qr", "svd"):
            raise ParameterError(f"optimal partitioning: method must be 'qr' or 'svd', got {method!r}")
        self.method = self.name = method
        self.rank_tol = float(rank_tol)
        self.newton_tol, self.newton_max = float(newton_tol), int(newton_max)
        self.nproj = 0
        self.rank = None

    def decompose(self, C):
        d = NullSpaceDecomposition(C, self.method, self.rank_tol)
        self.rank = d.rank
        return d

    def rhs(self, t, x):
        f = self.f
        y, v = x[:f], x[f:]
        num = self.numeric
        c, C, b1 = num.constraint_parts(t, y)
        d = self.decompose(C)
        J = d.J
        theta = -d.pinv_solve(b1)
        v = J @ (J.T @ (v - theta)) + theta                                        # eq. 30
        M, h, c, C, b1, b2 = num.constrained_parts(t, y, v, self.inputs(t))
        gamma = -d.pinv_solve(b2)
        Mi = J.T @ M @ J
        ydd = J @ np.linalg.solve(Mi, J.T @ (h - M @ gamma)) + gamma               # eq. 31
        return np.concatenate((v, ydd))

    def project(self, t, x):
        self.nproj += 1
        f = self.f
        y, v = x[:f].copy(), x[f:]
        num = self.numeric
        c, C, b1 = num.constraint_parts(t, y)
        mh = len(c)
        for _ in range(self.newton_max):
            if np.max(np.abs(c), initial=0.0) <= self.newton_tol:
                break
            y -= self.decompose(C[:mh]).pinv_solve(c)
            c, C, b1 = num.constraint_parts(t, y)
        else:
            raise ConstraintError(
                f"{num.system.name}: the position projection did not converge "
                f"{self.where(t, y)} (residual {np.max(np.abs(c)):.3g}); the constraints may "
                "not be satisfiable here")
        if mh and self._near_rank_drop(C):
            # near a rank drop |c| <= newton_tol leaves y off the branch by up to newton_tol / pivot
            # along the weak directions, and the velocities off by that over the pivot again: one
            # more step brings it to the rounding of c
            y -= self.decompose(C[:mh]).pinv_solve(c)
            c, C, b1 = num.constraint_parts(t, y)
        # eq. 30 written as v - C^+ (C v + b'): the same in exact arithmetic (I - J J^T = C^+ C),
        # but its rounding error scales with the residual instead of with |v|, which the
        # stabilized error estimate of RKSTAB would otherwise see at tight tolerances
        v = v - self.decompose(C).pinv_solve(C @ v + b1)
        return np.concatenate((y, v))

    def _pivots_of(self, C):
        """(Q, |diagonal of R|, rank, scale) of the column-pivoted QR C^T P = Q R; the scale is the
        larger of |R_00| and :attr:`pivot_scale` (None for Q, ... when C has no nonzero pivot)."""
        Q, piv, _, scale = self._pivoted_qr(C, with_q=True)
        if not (piv.size and piv[0] > 0.0):
            return None, piv, 0, 0.0
        return Q, piv, int(np.sum(piv > self.rank_tol * piv[0])), scale

    def _near_rank_drop(self, C) -> bool:
        """Whether a pivot within the rank lies below SINGULAR_STEP['weak'] of the scale."""
        _, piv, r, scale = self._pivots_of(C)
        return r > 0 and bool(piv[r - 1] < SINGULAR_STEP["weak"] * scale)

    def weak_directions(self, t, x, d):
        """RKSTAB's hook at singular positions (mbs_form_weak in the engine): at the projected
        state x, the column-pivoted QR C^T P = Q R; pivots |R_kk| (k < rank) below
        SINGULAR_STEP['weak'] times the scale (the larger of |R_00| and :attr:`pivot_scale`) mark
        weak constraint directions Q[:, k].  Near a rank drop c is known only to rounding eps there
        while C is of the size of the pivot p, so the projection fixes positions along them only to
        eps / p and velocities to eps / p^2: that share of the projection's correction d (positions
        and velocities, changed in place) is rounding, not an error of the step, and is removed.
        Returns the regularity ratio |R_(r-1)(r-1)| / scale (1 without a pivot)."""
        f = self.f
        Q, piv, r, scale = self._pivots_of(self.numeric.constraint_parts(t, x[:f])[1])
        if not r:
            return 1.0
        weak = np.flatnonzero(piv[:r] < SINGULAR_STEP["weak"] * scale)
        if weak.size:
            Qw = Q[:, weak]
            d[:f] -= Qw @ (Qw.T @ d[:f])
            d[f:] -= Qw @ (Qw.T @ d[f:])
        return float(piv[r - 1] / scale)
