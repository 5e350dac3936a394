"""Independent coordinates at an operating point and the velocity transformation (seed 000 §4).

With m holonomic constraints c(y) = 0 and their Jacobian C = ∂c/∂y (m x f), the coordinates
split into m dependent ones y_d and n = f - m independent ones y_i such that the square block
C_d is regular.  Near the operating point the constraints then define y_d as a function of y_i
(implicit function theorem), and every admissible velocity is

    ẏ = J_i ẏ_i,     J_i = P [I; -C_d⁻¹ C_i]                       (seed 000 eqs. 11-13)

(P sorts the rows back into the model's order).  The best-conditioned choice of C_d is found
by the column-pivoted QR decomposition of C, C Π = Q R (seed 000 eqs. 20-24): the first m
pivot columns are the dependent coordinates, the rest the independent ones.

The second derivatives of the constraint manifold y(y_i) follow from differentiating
C(y(y_i)) J_i = 0 once more:

    C_d ∂²y_d/∂y_ia ∂y_ib = -[Σ_kl ∂C_jk/∂y_l (J_i)_ka (J_i)_lb]_j                        (1)

which is the same curvature term that the convective acceleration -b'' = γ carries for a
motion along the manifold (γ_j = -ẏᵀ ∂²c_j/∂y² ẏ for scleronomic constraints).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..core.errors import ConstraintError, ParameterError

#: a C_d whose smallest pivot is below this fraction of the largest is treated as singular
SINGULAR_PIVOT = 1e-10


def choose_independent(C0: np.ndarray, coordinates: list[str], constraint_names: list[str],
                       independent=None) -> tuple[list[int], list[int]]:
    """(independent, dependent) coordinate indices at the point where C = ``C0`` (numbers).

    Without ``independent`` (names) the column-pivoted QR of C0 chooses; with it the named
    coordinates are checked: n = f - m of them, and C_d regular."""
    m, f = C0.shape
    if independent is None:
        if m == 0:
            return list(range(f)), []
        _, R, piv = scipy.linalg.qr(C0, pivoting=True, mode="economic")
        d = np.abs(np.diag(R))
        if m > f or d[-1] <= SINGULAR_PIVOT * max(d[0], 1e-300):
            worst = constraint_names[int(np.argmin(np.abs(np.diag(R))))] if m <= f else "?"
            raise ConstraintError(
                f"the constraint Jacobian has rank below {m} at the operating point (a singular "
                f"position or redundant constraints; pivot ratio {d[-1] / max(d[0], 1e-300):.1e}, "
                f"near constraint {worst!r}): no set of independent coordinates exists there")
        dep = sorted(int(p) for p in piv[:m])
        return [k for k in range(f) if k not in dep], dep
    names = [independent] if isinstance(independent, str) else list(independent)
    unknown = [n for n in names if n not in coordinates]
    if unknown:
        raise ParameterError(f"independent: unknown coordinate(s) {unknown} "
                             f"(coordinates: {', '.join(coordinates)})")
    if len(set(names)) != f - m:
        raise ParameterError(f"independent: {f} coordinates and {m} constraints leave {f - m} "
                             f"independent coordinate(s), got {len(set(names))}: {names}")
    ind = [k for k, n in enumerate(coordinates) if n in names]
    dep = [k for k in range(f) if k not in ind]
    if m:
        s = np.linalg.svd(C0[:, dep], compute_uv=False)
        if s[-1] <= SINGULAR_PIVOT * max(s[0], 1e-300):
            raise ConstraintError(
                f"independent coordinates {names}: the constraint Jacobian of the dependent ones "
                f"({', '.join(coordinates[k] for k in dep)}) is singular at the operating point "
                f"(singular value ratio {s[-1] / max(s[0], 1e-300):.1e}); choose others or let "
                "linearize choose")
    return ind, dep


def velocity_transformation(C0, ind: list[int], dep: list[int], solve):
    """J_i (f x n) with J_i[ind] = I and J_i[dep] = -C_d⁻¹ C_i; ``solve(A, B)`` solves A X = B
    (numpy or sympy, matching C0)."""
    f, n = len(ind) + len(dep), len(ind)
    rows = [None] * f
    if dep:
        X = -solve(_cols(C0, dep), _cols(C0, ind))
        for r, k in enumerate(dep):
            rows[k] = [X[r, a] for a in range(n)]
    for a, k in enumerate(ind):
        rows[k] = [1 if b == a else 0 for b in range(n)]
    return rows


def _cols(M, idx):
    if isinstance(M, np.ndarray):
        return M[:, idx]
    return M.extract(list(range(M.rows)), list(idx))
