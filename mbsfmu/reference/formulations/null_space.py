"""The null space of the constraint Jacobian and the accelerations it gives (seed 000 §4.3-4.5),
shared by the optimal partitioning (:mod:`.optimal_partitioning`) and the multipliers of every
formulation (:meth:`.base.Formulation.multipliers`).

A rank-revealing decomposition of C^T splits the coordinate space into the constrained
directions (Q1 or U1) and an orthonormal basis J of the null space of C (the directions of free
motion):

    QR  (eq. 20):  C^T P = [Q1 Q2] [R1; 0]       J = Q2,  C = P R1^T Q1^T
    SVD (eq. 25):  C^T = [U1 U2] [S; 0] V^T      J = U2,  C = V S U1^T

and the minimum-norm solution of C x = b (eqs. 24, 28).  With gamma = -C^+ b'' the accelerations
of eq. 8 are  y'' = J (J^T M J)^-1 J^T (q - k - M gamma) + gamma  (eq. 31), defined also for
redundant constraints.  The rank is decided with ``rank_tol`` relative to the largest pivot or
singular value.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg


class NullSpaceDecomposition:
    """Null-space basis J (f x (f-r)) and a pseudo-inverse solver for C x = b."""

    def __init__(self, C, method, rank_tol):
        m, f = C.shape
        if method == "qr":
            # plain Householder QR first (cheap); column pivoting only if the rank is in doubt
            Q, R = np.linalg.qr(C.T, mode="complete")
            d = np.abs(np.diag(R[:m, :m]))
            if d.size and d.min() > rank_tol * d.max():
                r, P = m, np.arange(m)
            else:
                Q, R, P = scipy.linalg.qr(C.T, pivoting=True)
                d = np.abs(np.diag(R))
                r = int(np.sum(d > rank_tol * d[0])) if d.size and d[0] > 0 else 0
            self.Q1, self.J = Q[:, :r], Q[:, r:]
            self.R1 = R[:r, :r]
            self.P = P[:r]  # rows of C that carry the rank
            self._solve = self._solve_qr
        else:
            U, s, Vt = np.linalg.svd(C.T)
            r = int(np.sum(s > rank_tol * s[0])) if s.size and s[0] > 0 else 0
            self.U1, self.J = U[:, :r], U[:, r:]
            self.s, self.V1 = s[:r], Vt[:r].T
            self._solve = self._solve_svd
        self.rank = r

    def _solve_qr(self, b):
        # C x = b with x in range(Q1):  R1^T (Q1^T x) = b[P]
        z = np.linalg.solve(self.R1.T, b[self.P])
        return self.Q1 @ z

    def _solve_svd(self, b):
        return self.U1 @ ((self.V1.T @ b) / self.s)

    def pinv_solve(self, b):
        """Minimum-norm x with C x = b (b consistent with the range of C)."""
        return self._solve(b)


def reduced_accelerations(M, h, C, b2, rank_tol):
    """y'' of eq. 8 by the null-space form of eq. 31 (QR of C^T; defined for redundant C)."""
    d = NullSpaceDecomposition(C, "qr", rank_tol)
    gamma = -d.pinv_solve(b2)
    J = d.J
    return J @ np.linalg.solve(J.T @ M @ J, J.T @ (h - M @ gamma)) + gamma
