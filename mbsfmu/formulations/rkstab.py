r"""RKSTAB: Dormand–Prince 5(4) with post-stabilization inside the step (seed 004 §4.2–4.3 (RKSTAB)).

The integrator solves x' = F(t, x), optionally with a projection ``project(t, x)`` that maps a state
back onto the invariant manifold (for a multibody system h(q, v) = (g(q), G(q) v) = 0, e.g. the
post-stabilization PStab of seed 004 eq. 3.68).

Base method (Dormand & Prince; Hairer–Nørsett–Wanner's DOPRI5), Butcher tableau (seed eq. 4.9)::

    c    | A
    -----+----------------------------------------------------------------------------------
    0    |
    1/5  | 1/5
    3/10 | 3/40        9/40
    4/5  | 44/45       -56/15       32/9
    8/9  | 19372/6561  -25360/2187  64448/6561  -212/729
    1    | 9017/3168   -355/33      46732/5247  49/176   -5103/18656
    1    | 35/384       0           500/1113    125/192  -2187/6784    11/84
    -----+----------------------------------------------------------------------------------
    b    | 35/384       0           500/1113    125/192  -2187/6784    11/84     0
    b^   | 5179/57600   0           7571/16695  393/640  -92097/339200 187/2100  1/40

One attempted step of size h from (t_n, z_n), with k_1 = F(t_n, z_n) known (FSAL):

1. stages k_i = F(t_n + c_i h, z_n + h sum_{j<i} a_ij k_j), i = 2..6;
2. 5th-order solution  z~ = z_n + h sum_{j=1..6} b_j k_j            (local extrapolation);
3. stabilization       z_{n+1} = project(t_n + h, z~)              (seed eq. 4.10; plain DOPRI5 if
   ``project`` is None, z_{n+1} = z~);
4. k_7 = F(t_n + h, z_{n+1}) at the *stabilized* point             (seed eq. 4.11, instead of 4.12);
5. 4th-order companion z^ = z_n + h sum_{j=1..6} b^_j k_j + h b^_7 k_7   (seed eq. 4.13);
6. error estimate      err = z_{n+1} - z^ = (z_{n+1} - z~) + h sum_{j=1..7} (b_j - b^_j) k_j,

and the step is accepted when ||err|| <= 1 in the RMS norm
||err|| = sqrt(1/n sum_i (err_i / sc_i)^2),  sc_i = atol_i + rtol max(|z_n,i|, |z_{n+1},i|).
The projection is applied to every *attempted* step before the error test, and since k_7 is taken at
z_{n+1}, k_1 of the next step equals k_7 (FSAL): an accepted step costs 6 evaluations of F and one
projection. Seed Theorem 4.1: the stabilized step keeps local error O(h^6), the drift is O(h^12).
The default atol = rtol/10 is the seed's setting for all its experiments.

Step-size control is DOPRI5's (Hairer's code): with fac11 = err^(1/5 - 0.75 beta), beta = 0.04,
h_new = h / max(1/10, min(5, fac11 / (err_prev^beta * 0.9))), i.e. safety 0.9, factor limits
[0.2, 10], PI-stabilised by the previous accepted error; no increase right after a rejection.

Dense output is DOPRI5's continuous 4th-order extension (Hairer's CONTD5): with theta = (t - t_n)/h,

    z(t) = r1 + theta (r2 + (1 - theta) (r3 + theta (r4 + (1 - theta) r5))),
    r1 = z_n, r2 = z_{n+1} - z_n, r3 = h k_1 - r2, r4 = r2 - h k_7 - r3,
    r5 = h (d1 k1 + d3 k3 + d4 k4 + d5 k5 + d6 k6 + d7 k7),

which interpolates z_n, z_{n+1} and the slopes k_1, k_7 at both ends. The interpolant leaves the
manifold slightly, so output points inside a step are projected again when ``project_output``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mbsfmu.errors import ParameterError, SimulationError

__all__ = ["RKResult", "integrate"]

# Dormand–Prince 5(4) tableau (seed eq. 4.9).
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A2 = np.array([1 / 5])
_A3 = np.array([3 / 40, 9 / 40])
_A4 = np.array([44 / 45, -56 / 15, 32 / 9])
_A5 = np.array([19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729])
_A6 = np.array([9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656])
_B = np.array([35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84])  # b_1..b_6, b_7 = 0
_BHAT = np.array([5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40])
_E = np.concatenate((_B, [0.0])) - _BHAT  # b - b^ (7 entries)
# Hairer's CONTD5 dense-output coefficients (d2 = 0).
_D = np.array([
    -12715105075 / 11282082432,
    0.0,
    87487479700 / 32700410799,
    -10690763975 / 1880347072,
    701980252875 / 199316789632,
    -1453857185 / 822651844,
    69997945 / 29380423,
])

_SAFETY = 0.9
_FACMIN = 0.2  # smallest allowed step ratio h_new / h
_FACMAX = 10.0  # largest allowed step ratio
_BETA = 0.04  # PI stabilisation of the controller (Hairer's DOPRI5 default)
_EXPO1 = 0.2 - 0.75 * _BETA
_NONFINITE_SHRINK = 0.2  # step ratio after a step that produced non-finite values

# Coefficients of the combinations of the rows [x, k_1, ..., k_7] used in one step; multiplied by h
# (and column 0 reset to 1) once per attempt: rows 0..4 are the arguments of stages 2..6, row 5 the
# 5th-order solution z~, row 6 the error combination h (b - b^) (column 0 unused there).
_TABLE = np.zeros((7, 8))
for _i, _a in enumerate((_A2, _A3, _A4, _A5, _A6, _B)):
    _TABLE[_i, 1 : _a.size + 1] = _a
_TABLE[6, 1:] = _E
del _i, _a


@dataclass
class RKResult:
    """Result of :func:`integrate`.

    t: output times, shape (m,); x: states, shape (n, m); nfev: evaluations of ``rhs``;
    nproj: calls of ``project`` (attempted steps + projected output points); naccept / nreject:
    accepted / rejected steps; status: 0 when the end of the interval was reached; message: text.
    """

    t: np.ndarray
    x: np.ndarray
    nfev: int
    nproj: int
    naccept: int
    nreject: int
    status: int
    message: str


def _rms(v):
    return math.sqrt(float(np.dot(v, v)) / v.size)


def _initial_step(rhs, t0, x0, f0, span, max_step, rtol, atol):
    """Hairer's starting-step heuristic (HNW I, Sec. II.4); returns (h, nfev)."""
    scale = atol + rtol * np.abs(x0)
    d0 = _rms(x0 / scale)
    d1 = _rms(f0 / scale)
    # not (d >= 1e-5) also catches NaN (a zero scale: atol = 0 and a zero component)
    h0 = 1e-6 if not (d0 >= 1e-5 and d1 >= 1e-5 and math.isfinite(d0 + d1)) else 0.01 * d0 / d1
    h0 = min(h0, span)
    f1 = np.asarray(rhs(t0 + h0, x0 + h0 * f0), dtype=float)
    d2 = _rms((f1 - f0) / scale) / h0 if f1.shape == f0.shape else math.nan
    if not math.isfinite(d2):
        return min(h0, max_step), 1
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1 / 5)
    return min(100 * h0, h1, span, max_step), 1


def _validate(x0, t_span, rtol, atol, t_eval, first_step, max_step, max_steps, min_step):
    x0 = np.array(x0, dtype=float)
    if x0.ndim != 1 or x0.size == 0:
        raise ParameterError(f"x0 must be a non-empty 1-D array, got shape {x0.shape}")
    if not np.all(np.isfinite(x0)):
        raise ParameterError(f"x0 is not finite at indices {np.flatnonzero(~np.isfinite(x0)).tolist()}")
    try:
        t0, t1 = (float(v) for v in t_span)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"t_span must be two numbers (t0, t1), got {t_span!r}") from exc
    if not (math.isfinite(t0) and math.isfinite(t1)):
        raise ParameterError(f"t_span must be finite, got {t_span!r}")
    if not t1 > t0:
        raise ParameterError(f"t_span must satisfy t1 > t0 (forward integration only), got ({t0}, {t1})")
    rtol = float(rtol)
    if not (rtol > 0 and math.isfinite(rtol)):
        raise ParameterError(f"rtol must be positive and finite, got {rtol}")
    if atol is None:
        atol = rtol / 10
    atol = np.asarray(atol, dtype=float)
    if atol.ndim > 1 or (atol.ndim == 1 and atol.shape != x0.shape):
        raise ParameterError(f"atol must be a scalar or have shape {x0.shape}, got shape {atol.shape}")
    if not np.all(np.isfinite(atol)) or np.any(atol < 0):
        raise ParameterError("atol must be finite and non-negative")
    if atol.ndim == 0:
        atol = float(atol)
    if t_eval is not None:
        t_eval = np.array(t_eval, dtype=float).ravel()
        if not np.all(np.isfinite(t_eval)):
            raise ParameterError("t_eval must be finite")
        if np.any(np.diff(t_eval) < 0):
            raise ParameterError("t_eval must be sorted in increasing order")
        if t_eval.size and (t_eval[0] < t0 or t_eval[-1] > t1):
            raise ParameterError(
                f"t_eval must lie within t_span [{t0}, {t1}], got [{t_eval[0]}, {t_eval[-1]}]"
            )
    max_step = float(max_step)
    if not max_step > 0:
        raise ParameterError(f"max_step must be positive, got {max_step}")
    if first_step is not None:
        first_step = float(first_step)
        if not (first_step > 0 and math.isfinite(first_step)):
            raise ParameterError(f"first_step must be positive and finite, got {first_step}")
    if int(max_steps) < 1:
        raise ParameterError(f"max_steps must be at least 1, got {max_steps}")
    if min_step is None:
        min_step = 1e-14 * (t1 - t0)
    min_step = float(min_step)
    if not min_step >= 0:
        raise ParameterError(f"min_step must be non-negative, got {min_step}")
    return x0, t0, t1, rtol, atol, t_eval, first_step, max_step, int(max_steps), min_step


def integrate(rhs, x0, t_span, *, project=None, rtol=1e-6, atol=None, t_eval=None,
              first_step=None, max_step=np.inf, max_steps=1_000_000, min_step=None,
              project_output=True, monitor=None) -> RKResult:
    """Integrate x' = rhs(t, x) on t_span with RKSTAB (seed 004 §4.2–4.3 (RKSTAB)).

    Dormand–Prince 5(4), 5th-order solution propagated; if ``project`` is given, every attempted
    step's 5th-order result z~ is stabilized, z_{n+1} = project(t_{n+1}, z~), *before* the error test,
    k_7 = rhs(t_{n+1}, z_{n+1}) (FSAL) and err = z_{n+1} - z^ with the 4th-order companion
    z^ = z_n + h (sum_{j<=6} b^_j k_j + b^_7 k_7). See the module docstring for the tableau.

    Parameters
    ----------
    rhs : callable ``rhs(t, x) -> ndarray`` of shape (n,).
    x0 : initial state, shape (n,). It is used (and output at t0) as given, not projected.
    t_span : (t0, t1) with t1 > t0.
    project : callable ``project(t, x) -> ndarray`` returning the stabilized state, or None for plain
        DOPRI5. Exceptions it raises propagate unchanged.
    rtol, atol : tolerances of the RMS error norm, sc = atol + rtol * max(|x_old|, |x_new|); atol is
        a scalar or an array of shape (n,), default rtol / 10 (the seed's default).
    t_eval : sorted output times within t_span; None outputs every accepted step (including t0).
        Points inside a step come from the 4th-order continuous extension (projected again when
        ``project_output`` and ``project`` is given); points that coincide with a step end (always the
        case for t1) are the step's end state exactly.
    first_step : initial step; default from Hairer's heuristic.
    max_step : upper bound of the step size.
    max_steps : maximum number of attempted steps (accepted + rejected); exceeding it raises.
    min_step : smallest allowed step, default 1e-14 * (t1 - t0); a step is never allowed below
        10 ulp(t) either. A step-size underflow raises.
    monitor : callable ``monitor(t, h)`` called after every accepted step (progress, stiffness
        diagnostic); what it raises propagates.

    A SimulationError or KeyboardInterrupt raised during the steps carries ``partial = (t, x)``:
    the output points of ``t_eval`` reached so far (every accepted step without ``t_eval``).

    Returns
    -------
    RKResult

    Raises
    ------
    ParameterError : bad arguments (reversed t_span, non-finite x0, unsorted t_eval, ...).
    SimulationError : step-size underflow (after error-test failures or non-finite values of rhs or
        project), non-finite rhs at t0, too many steps. Each message names t and h.
    """
    x, t0, t1, rtol, atol, t_eval, first_step, max_step, max_steps, min_step = _validate(
        x0, t_span, rtol, atol, t_eval, first_step, max_step, max_steps, min_step
    )
    n = x.size
    f0 = np.array(rhs(t0, x), dtype=float)
    nfev = 1
    if f0.shape != (n,):
        raise ParameterError(f"rhs(t, x) must return shape ({n},), got {f0.shape}")
    if not np.all(np.isfinite(f0)):
        raise SimulationError(f"right-hand side is not finite at the initial point t={t0!r}")
    span = t1 - t0
    if first_step is None:
        h, k = _initial_step(rhs, t0, x, f0, span, max_step, rtol, atol)
        nfev += k
    else:
        h = min(first_step, span, max_step)

    # Preallocated storage. Row 0 of KX holds the current state x, rows 1..7 the stages k_1..k_7, so
    # that every stage argument x + h sum_j a_ij k_j is a single dot product with a row of
    # CB = [1 | h A] (rebuilt in place once per attempt); see _TABLE.
    KX = np.empty((8, n))
    KX[0] = x
    KX[1] = f0
    K = KX[1:]
    CB = np.empty_like(_TABLE)
    cb_one = CB[:6, 0]
    stages = tuple((_C[i], CB[i - 1, : i + 1], KX[: i + 1], i + 1) for i in range(1, 5))
    cb6, kx6 = CB[4, :6], KX[:6]  # stage 6 argument (c_6 = 1)
    cb_sol, kx_sol = CB[5, :7], KX[:7]  # 5th-order solution z~
    cb_err = CB[6, 1:]  # h (b - b^), applied to k_1..k_7
    absolute, maximum, multiply = np.abs, np.maximum, np.multiply
    isfinite, sqrt = math.isfinite, math.sqrt
    stabilize = project is not None
    abs_x = absolute(x)

    # Output bookkeeping.
    dense = t_eval is not None
    if dense:
        m = t_eval.size
        X = np.empty((m, n))
        ie = int(np.searchsorted(t_eval, t0, side="right"))  # points equal to t0 get x0
        X[:ie] = x
        out_t = t_eval
    else:
        ts, xs = [t0], [x]
        m = ie = 0

    t = t0
    naccept = nreject = nattempt = 0
    nproj = 0
    facold = 1e-4
    rejected = False
    last_failure = ""
    hmin = max(min_step, 10.0 * np.spacing(max(abs(t0), abs(t1))))

    try:
        while t < t1:
            if nattempt >= max_steps:
                raise SimulationError(
                    f"maximum number of steps ({max_steps}) exceeded at t={t!r} (h={h:.3e}) before t1={t1!r}"
                )
            if h < hmin:
                raise SimulationError(
                    f"step size underflow at t={t!r}: h={h:.3e} < min_step={hmin:.3e}{last_failure}"
                )
            nattempt += 1
            if t + 1.01 * h >= t1:
                h = t1 - t
                t_new = t1
            else:
                t_new = t + h
            multiply(_TABLE, h, out=CB)
            cb_one[:] = 1.0

            # Stages 2..6 and the 5th-order solution z~. A non-finite stage argument (from a non-finite
            # k_j or an overflow) ends the attempt, which is rejected: rhs never sees a non-finite state.
            for c, cb, kx, i in stages:
                arg = cb.dot(kx)
                if not isfinite(arg.dot(arg)):
                    finite = False
                    break
                KX[i] = rhs(t + c * h, arg)
                nfev += 1
            else:
                arg = cb6.dot(kx6)
                if isfinite(arg.dot(arg)):
                    KX[6] = rhs(t_new, arg)
                    nfev += 1
                    x_tilde = cb_sol.dot(kx_sol)
                    finite = isfinite(x_tilde.dot(x_tilde))
                else:
                    finite = False
            if not finite:
                nreject += 1
                rejected = True
                last_failure = " (the right-hand side returned non-finite values)"
                h *= _NONFINITE_SHRINK
                continue

            if stabilize:
                x_new = np.array(project(t_new, x_tilde), dtype=float)
                nproj += 1
                if x_new.shape != (n,):
                    raise ParameterError(f"project(t, x) must return shape ({n},), got {x_new.shape}")
                KX[7] = rhs(t_new, x_new)
                err = (x_new - x_tilde) + cb_err.dot(K)
            else:
                x_new = x_tilde
                KX[7] = rhs(t_new, x_new)
                err = cb_err.dot(K)
            nfev += 1

            abs_x_new = absolute(x_new)
            err /= atol + rtol * maximum(abs_x, abs_x_new)
            err_norm = sqrt(float(err.dot(err)) / n)
            if not isfinite(err_norm):
                nreject += 1
                rejected = True
                if np.all(np.isfinite(x_new)) and np.all(np.isfinite(KX[7])):
                    last_failure = " (the scaled error overflows: tolerances too small?)"
                else:
                    last_failure = " (the right-hand side or the projection returned non-finite values)"
                h *= _NONFINITE_SHRINK
                continue

            fac11 = err_norm**_EXPO1
            if err_norm <= 1.0:
                # Accepted: PI controller with the previous accepted error.
                fac = fac11 / facold**_BETA / _SAFETY
                fac = min(1.0 / _FACMIN, max(1.0 / _FACMAX, fac))
                h_next = min(h / fac, max_step)
                if rejected:
                    h_next = min(h_next, h)
                facold = max(err_norm, 1e-4)
                rejected = False
                last_failure = ""
                naccept += 1

                if dense:
                    if ie < m and t_eval[ie] <= t_new:
                        je = int(np.searchsorted(t_eval, t_new, side="right"))
                        jin = je  # points [jin, je) coincide with the step end
                        while jin > ie and t_eval[jin - 1] == t_new:
                            jin -= 1
                        if jin > ie:
                            # Points strictly inside the step: continuous extension (vectorized).
                            r2 = x_new - x
                            r3 = h * K[0] - r2
                            r4 = r2 - h * K[6] - r3
                            r5 = h * _D.dot(K)
                            th = ((t_eval[ie:jin] - t) / h)[:, None]
                            th1 = 1.0 - th
                            X[ie:jin] = x + th * (r2 + th1 * (r3 + th * (r4 + th1 * r5)))
                            if stabilize and project_output:
                                for i in range(ie, jin):
                                    X[i] = project(t_eval[i], X[i])
                                nproj += jin - ie
                        X[jin:je] = x_new
                        ie = je
                else:
                    ts.append(t_new)
                    xs.append(x_new)

                t = t_new
                x = x_new
                abs_x = abs_x_new
                KX[0] = x_new
                KX[1] = KX[7]  # FSAL: k_1 of the next step is k_7 of this one
                if monitor is not None:
                    # Hairer's stiffness estimate: stage 6 and k_7 are both taken at t + h
                    dx = x_new - arg
                    dxx = float(dx.dot(dx))
                    dk = KX[7] - KX[6]
                    monitor(t, h, h * math.sqrt(float(dk.dot(dk)) / dxx) if dxx > 0 else None)
                h = h_next
            else:
                nreject += 1
                rejected = True
                last_failure = " (repeated error-test failures)"
                h = h / min(1.0 / _FACMIN, fac11 / _SAFETY)

    except (SimulationError, KeyboardInterrupt) as exc:
        if dense:
            exc.partial = (t_eval[:ie].copy(), np.ascontiguousarray(X[:ie].T))
        else:
            exc.partial = (np.array(ts), np.ascontiguousarray(np.array(xs).T))
        raise

    if dense:
        if ie < m:  # only possible for points equal to t1 hit by rounding; use the end state
            X[ie:] = x
        x_out = np.ascontiguousarray(X.T)
    else:
        out_t = np.array(ts)
        x_out = np.ascontiguousarray(np.array(xs).T)
    return RKResult(
        t=out_t,
        x=x_out,
        nfev=nfev,
        nproj=nproj,
        naccept=naccept,
        nreject=nreject,
        status=0,
        message="The solver successfully reached the end of the integration interval.",
    )
