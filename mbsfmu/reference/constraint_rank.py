"""The reference's rank check of a run's constraints at its consistent start (the numpy backend,
and the pythonfmu FMU where it runs the reference; the engine makes its own, mbs_form_rank):
redundant constraints (rank C < m, seed 000 eq. 6) are an error unless the formulation takes them
(``qr`` and ``svd``: their rank-revealing decomposition constrains only rank C directions).
"""

from __future__ import annotations

import numpy as np

from ..core.errors import ConstraintError


def check_rank(formulation, t, y):
    """Redundant constraints are an error unless the formulation takes them."""
    num = formulation.numeric
    _, C, _ = num.constraint_parts(t, y)
    sv = np.linalg.svd(C, compute_uv=False)
    tol = 1e-9 * (sv[0] if sv.size and sv[0] > 0 else 1.0)
    rank = int(np.sum(sv > tol))
    if rank < num.m and not formulation.handles_redundant:
        raise ConstraintError(
            f"{num.system.name}: the {num.m} constraints are redundant (rank of C is {rank} "
            f"with tolerance {tol:.1e}); formulation {formulation.name!r} cannot take redundant "
            "constraints: use 'qr' or 'svd'")
    return rank
