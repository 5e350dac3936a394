"""Coordinate partitioning with a fixed choice of independent coordinates (seed 000 §4.2).

With y split into independent y_i and dependent y_d, C = [C_i  C_d] (eq. 11):

    J_i   = [I; -C_d^-1 C_i]                      (eq. 12)
    y'    = J_i y_i' + theta,    theta = [0; -C_d^-1 b']       (eq. 14, 17)
    y''   = J_i y_i'' + gamma,   gamma = [0; -C_d^-1 b'']      (eq. 15)
    (J_i^T M J_i) y_i'' = J_i^T (q - k - M gamma)              (eq. 16, 18)

The right-hand side uses the velocities of eq. 14; after each accepted step the dependent
coordinates are solved from c(y_i, y_d) = 0 by Newton's method and the dependent velocities from
eq. 13 (the generalized coordinate partitioning of Wehage and Haug), so positions do not drift.

If C_d becomes ill-conditioned (cond > ``cond_max``, default 1e3) the partition is switched to the one
chosen by QR with column pivoting of C at that configuration (the dependent coordinates are the
m best-conditioned columns); each switch is recorded in ``switches``.  If C has lost rank no
partition exists and a ConstraintError names the configuration.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ...core.constants import DEFAULTS
from ...core.errors import ConstraintError, ParameterError
from .base import Formulation


class CoordinatePartitioning(Formulation):
    name = "partition"
    projects = True

    def __init__(self, numeric, inputs=None, independent=None, cond_max: float = DEFAULTS["cond_max"],
                 newton_tol: float = DEFAULTS["newton_tol"], newton_max: int = DEFAULTS["newton_max"]):
        super().__init__(numeric, inputs)
        names = numeric.coordinate_names
        self.cond_max = float(cond_max)
        self.newton_tol, self.newton_max = float(newton_tol), int(newton_max)
        self.switches: list[tuple[float, list[str]]] = []
        self.nproj = 0
        if independent is None:
            self.ind = None  # chosen at the first evaluation
        else:
            independent = [independent] if isinstance(independent, str) else list(independent)
            bad = [n for n in independent if n not in names]
            if bad:
                raise ParameterError(f"partition: unknown independent coordinate(s) {bad} "
                                     f"(coordinates: {', '.join(names)})")
            if len(independent) != self.f - self.m:
                raise ParameterError(
                    f"partition: {self.f} coordinates and {self.m} constraints leave "
                    f"{self.f - self.m} independent coordinates, got {len(independent)}: "
                    f"{independent}")
            self._set([names.index(n) for n in independent])

    def _set(self, ind):
        self.ind = np.array(sorted(ind), dtype=int)
        self.dep = np.array([j for j in range(self.f) if j not in set(ind)], dtype=int)

    @property
    def independent(self) -> list[str]:
        return [self.numeric.coordinate_names[j] for j in self.ind]

    def _choose(self, t, y, C):
        """Partition by QR with column pivoting of C: pivot columns become dependent."""
        _, R, piv = scipy.linalg.qr(C, pivoting=True, mode="economic")
        d = np.abs(np.diag(R))
        if d.size and d[-1] <= 1e-10 * d[0]:
            raise ConstraintError(
                f"{self.numeric.system.name}: the constraint Jacobian has lost rank "
                f"{self.where(t, y)}: no choice of independent coordinates exists there "
                "(a singular configuration, or redundant constraints: use 'qr' or 'svd')")
        self._set([j for j in range(self.f) if j not in set(piv[:self.m])])
        self.switches.append((t, self.independent))

    def _Cd(self, t, y, C):
        if self.ind is None:
            self._choose(t, y, C)
        Cd = C[:, self.dep]
        if np.linalg.cond(Cd) > self.cond_max:
            self._choose(t, y, C)
            Cd = C[:, self.dep]
        return Cd

    def rhs(self, t, x):
        f = self.f
        y, v = x[:f], x[f:].copy()
        num = self.numeric
        c, C, b1 = num.constraint_parts(t, y)
        Cd = self._Cd(t, y, C)
        Ci = C[:, self.ind]
        Cd_inv = np.linalg.inv(Cd)
        v[self.dep] = -Cd_inv @ (Ci @ v[self.ind] + b1)                            # eq. 14
        M, h, c, C, b1, b2 = num.constrained_parts(t, y, v, self.inputs(t))
        J = np.zeros((f, f - self.m))
        J[self.ind, np.arange(f - self.m)] = 1.0
        J[self.dep] = -Cd_inv @ Ci                                                 # eq. 12
        gamma = np.zeros(f)
        gamma[self.dep] = -Cd_inv @ b2                                             # eq. 15
        Mi = J.T @ M @ J
        ydd_i = np.linalg.solve(Mi, J.T @ (h - M @ gamma))                        # eq. 16
        return np.concatenate((v, J @ ydd_i + gamma))                              # eq. 18

    def project(self, t, x):
        """Solve the dependent coordinates from c = 0 (Newton) and velocities from eq. 13."""
        self.nproj += 1
        f = self.f
        y, v = x[:f].copy(), x[f:].copy()
        num = self.numeric
        c, C, b1 = num.constraint_parts(t, y)
        self._Cd(t, y, C)
        for it in range(self.newton_max + 1):
            if np.max(np.abs(c)) <= self.newton_tol:
                break
            if it == self.newton_max:
                it = -1
                break
            y[self.dep] -= np.linalg.solve(C[:, self.dep], c)
            c, C, b1 = num.constraint_parts(t, y)
        if it < 0:
            raise ConstraintError(
                f"{num.system.name}: Newton's method for the dependent coordinates "
                f"{[num.coordinate_names[j] for j in self.dep]} did not converge "
                f"{self.where(t, y)} (residual {np.max(np.abs(c)):.3g})")
        v[self.dep] = -np.linalg.solve(C[:, self.dep], C[:, self.ind] @ v[self.ind] + b1)
        return np.concatenate((y, v))
