"""What the Jacobian at the optimum says about the estimates of a nonlinear least-squares fit.

The fit minimizes S(p) = sum_i r_i(p)^2 over the p parameters, r_i = sqrt(w_i) (model_i(p) -
data_i) on n data values, with the Jacobian J = dr/dp (n x p).  Linearized about the optimum,
with independent errors of variance sigma^2 / w_i (so ``weights = 1 / sigma_s^2`` per signal make
s^2 ~ 1):

    s^2 = S(p*) / (n - p)                   the estimated variance of a unit-weight residual
    Cov(p*) = s^2 (J^T J)^-1                the covariance of the estimates
    se_k = sqrt(Cov_kk),   rho_jk = Cov_jk / (se_j se_k)

For a model linear in its parameters (r = A p - d) these are exactly the ordinary least-squares
results, Cov = sigma^2 (A^T A)^-1.  (J^T J)^-1 is formed from the singular value decomposition
of J with its columns scaled to unit length (J = Js D, D = diag |J_k|; Js = U S V^T), which
makes the test of rank independent of the parameters' units: where the smallest singular value
of Js is below :data:`SINGULAR` of the largest, the parameters are not identifiable from these
signals (some combination dp = D^-1 v of them, v the last right singular vector, leaves every
fitted signal unchanged to first order), and there are no standard errors to report.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import IdentifiabilityError

#: the smallest singular value of the column-scaled Jacobian, relative to its largest, below
#: which the fit is singular: cond(J^T J) > 1e12; the sensitivities' own relative error
#: (~ the tolerance, 1e-8 by default) stays far below it, the correlation of two parameters
#: that only a combination of is identified is then 1 - 1e-12 or closer
SINGULAR = 1e-6


def singularity(J: np.ndarray, names: list[str]) -> str | None:
    """None if the columns of ``J`` (one per parameter of ``names``) are independent, else why
    not in words: the parameters that the fitted signals do not depend on, or the combination
    of parameters that changes none of them."""
    norms = np.linalg.norm(J, axis=0)
    scale = norms.max() if norms.size else 0.0
    flat = [n for n, v in zip(names, norms) if not v > 1e-14 * scale] if scale > 0 else list(names)
    if flat:
        return (
            f"the fitted signals do not depend on {', '.join(map(repr, flat))} (the sensitivities "
            "are zero at the data times): fit without it, or fit a signal it changes"
        )
    if len(names) == 1:
        return None
    _, s, vt = np.linalg.svd(J / norms, full_matrices=False)
    if s[-1] >= SINGULAR * s[0]:
        return None
    dp = vt[-1] / norms
    dp /= dp[np.argmax(np.abs(dp))]  # the largest component +1: the direction's sign is arbitrary
    involved = [(n, c) for n, c in zip(names, dp) if abs(c) > 1e-3]
    ratio = " : ".join(f"{c:+.4g}" for _, c in involved)
    who = ", ".join(repr(n) for n, _ in involved)
    return (
        f"the parameters {who} cannot be told apart from these signals: changing them together along "
        f"{' : '.join('d' + n for n, _ in involved)} = {ratio} leaves every fitted signal unchanged (the "
        f"column-scaled Jacobian's singular values {s[-1]:.2g} and {s[0]:.2g}); fix one of them (give its "
        "value in constants= or initial=) or fit a signal that separates them"
    )


def covariance(J: np.ndarray, ssr: float, n: int) -> tuple[np.ndarray, float]:
    """(Cov(p*), s^2) of the module docstring; an :class:`IdentifiabilityError` if J is
    singular (the caller names the parameters: :func:`singularity`)."""
    p = J.shape[1]
    norms = np.linalg.norm(J, axis=0)
    if not np.all(norms > 0):
        raise IdentifiabilityError("the Jacobian has a zero column")
    _, s, vt = np.linalg.svd(J / norms, full_matrices=False)
    if s[-1] < SINGULAR * s[0]:
        raise IdentifiabilityError("the Jacobian is singular")
    s2 = ssr / (n - p)
    inner = (vt.T / s**2) @ vt  # (Js^T Js)^-1
    return s2 * inner / np.outer(norms, norms), s2
