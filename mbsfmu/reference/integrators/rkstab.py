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

Singular positions (optional hook ``weak(t, x_new, d) -> rho``, the formulation's
``weak_directions``): near a rank drop of the constraint Jacobian the projection's correction
d = z_{n+1} - z~ holds rounding amplified by 1 / pivot^2 along the weak constraint directions; the
hook removes that share from d before it is counted (step 6) and returns a regularity ratio rho in
[0, 1] of z_{n+1} that vanishes linearly at the singular position.  The vector field there is
smooth along the motion but its rounding grows like the same 1 / pivot^2, so no stage should come
close to the singular time: when rho falls (rho_n < rho_{n-1}, rho_n < 0.1), the singular time is
predicted by linear extrapolation, t* = t_n + D with D = rho_n (t_n - t_{n-1}) / (rho_{n-1} - rho_n),
and if D <= 2.5 h the next step is shortened to h = D / (j + 0.55), j >= 0 the smallest integer
with h <= the controller's proposal, so that t* falls 0.55 into a step, in the gap between the
stages c = 3/10 and 4/5, a quarter step from every point where F is evaluated (after accepted and
rejected steps alike; only ever shortening).

In the code: :class:`RKStab` is the stepper (:mod:`.stepper`): ``_attempt`` is steps 1-6 above,
``_accept`` / ``_reject`` the step-size control, ``dense`` the continuous extension;
:func:`integrate` runs it with the common output loop :func:`~.stepper.sample`.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.constants import RKSTAB
from ...core.errors import ParameterError, SimulationError
from .stepper import Stepper, StepperResult, check_settings, sample

__all__ = ["RKStab", "integrate"]

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

# Step-size control, written once for this reference and the engine (constants.RKSTAB, generated
# into the engine's mbs_step_constants.h).
_ORDER = RKSTAB["order"]  # the error estimate is O(h^5)
_SAFETY = RKSTAB["safety"]
_FACMIN = RKSTAB["facmin"]  # smallest allowed step ratio h_new / h
_FACMAX = RKSTAB["facmax"]  # largest allowed step ratio
_BETA = RKSTAB["beta"]  # PI stabilisation of the controller (Hairer's DOPRI5 default)
_EXPO1 = 1 / _ORDER - RKSTAB["beta_weight"] * _BETA
_NONFINITE_SHRINK = RKSTAB["nonfinite_shrink"]  # step ratio after a step that produced non-finite values
# singular positions: place steps when the regularity ratio falls below _PLACE_WATCH, so that the
# predicted singular time falls _PLACE_THETA into a step (between c = 3/10 and 4/5), when it is at
# most _PLACE_REACH proposed steps ahead
_PLACE_WATCH, _PLACE_THETA, _PLACE_REACH = RKSTAB["place_watch"], RKSTAB["place_theta"], RKSTAB["place_reach"]

# Coefficients of the combinations of the rows [x, k_1, ..., k_7] used in one step; multiplied by h
# (and column 0 reset to 1) once per attempt: rows 0..4 are the arguments of stages 2..6, row 5 the
# 5th-order solution z~, row 6 the error combination h (b - b^) (column 0 unused there).
_TABLE = np.zeros((7, 8))
for _i, _a in enumerate((_A2, _A3, _A4, _A5, _A6, _B)):
    _TABLE[_i, 1 : _a.size + 1] = _a
_TABLE[6, 1:] = _E
del _i, _a


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
        h1 = (0.01 / max(d1, d2)) ** (1 / _ORDER)
    return min(100 * h0, h1, span, max_step), 1


class RKStab(Stepper):
    """RKSTAB as a :class:`~mbsfmu.reference.integrators.stepper.Stepper` (arguments as :func:`integrate`).

    One :meth:`step` makes attempts (:meth:`_attempt`: stages, stabilization, error norm) until
    one passes the error test, with DOPRI5's step-size control (:meth:`_accept`,
    :meth:`_reject`); :meth:`dense` is the continuous extension of the accepted step."""

    def __init__(self, rhs, x0, t_span, *, project=None, rtol=1e-6, atol=None, first_step=None,
                 max_step=np.inf, max_steps=1_000_000, min_step=None, project_output=True, weak=None):
        (self.x0, self.t0, self.t1, self.rtol, self.atol, self.first_step, self.max_step,
         self.max_steps, self.min_step) = check_settings(x0, t_span, rtol, atol, first_step, max_step,
                                                         max_steps, min_step)
        self.rhs, self.project, self.project_output = rhs, project, project_output
        self.weak = weak if project is not None else None
        self.t, self.x, self.h = self.t0, self.x0, 0.0
        self.nfev = self.nproj = self.naccept = self.nreject = 0

    def start(self) -> None:
        """k_1 = F(t0, x0), the first step size and the work rows of the stages."""
        rhs, x, t0, n = self.rhs, self.x, self.t0, self.x.size
        f0 = np.array(rhs(t0, x), dtype=float)
        self.nfev = 1
        if f0.shape != (n,):
            raise ParameterError(f"rhs(t, x) must return shape ({n},), got {f0.shape}")
        if not np.all(np.isfinite(f0)):
            raise SimulationError(f"right-hand side is not finite at the initial point t={t0!r}")
        span = self.t1 - t0
        if self.first_step is None:
            h, k = _initial_step(rhs, t0, x, f0, span, self.max_step, self.rtol, self.atol)
            self.nfev += k
        else:
            h = min(self.first_step, span, self.max_step)
        self._h = h  # the size of the next attempt

        # Row 0 of KX holds the current state x, rows 1..7 the stages k_1..k_7, so that every stage
        # argument x + h sum_j a_ij k_j is a single dot product with a row of CB = [1 | h A]
        # (rebuilt in place once per attempt); see _TABLE.
        self._KX = KX = np.empty((8, n))
        KX[0] = x
        KX[1] = f0
        self._K = KX[1:]
        self._CB = CB = np.empty_like(_TABLE)
        self._stages = tuple((_C[i], CB[i - 1, : i + 1], KX[: i + 1], i + 1) for i in range(1, 5))
        self._stage6 = CB[4, :6], KX[:6]  # stage 6 argument (c_6 = 1)
        self._solution = CB[5, :7], KX[:7]  # 5th-order solution z~
        self._abs_x = np.abs(x)
        self._arg6 = None  # the argument of stage 6 of the last attempt
        self._fsal = False  # True once a step is accepted: its k_7 is the next step's k_1
        self._facold = 1e-4
        self._rejected = False
        self._last_failure = ""
        self._nattempt = 0
        self._hmin = max(self.min_step, 10.0 * np.spacing(max(abs(t0), abs(self.t1))))
        if self.weak is not None:  # regularity of the start, for the step placement
            self._rho = float(self.weak(t0, x, np.zeros(n)))
            self._rho_new, self._rho_prev, self._t_rho_prev = self._rho, math.inf, t0

    def step(self) -> None:
        """Attempts from (t, x) until one passes the error test ||err|| <= 1."""
        KX = self._KX
        if self._fsal:
            KX[0] = self.x
            KX[1] = KX[7]  # FSAL: k_1 of this step is k_7 of the last one
        t = self.t
        while True:
            h = self._h
            if self._nattempt >= self.max_steps:
                raise SimulationError(f"maximum number of steps ({self.max_steps}) exceeded at t={t!r} "
                                      f"(h={h:.3e}) before t1={self.t1!r}")
            if h < self._hmin:
                raise SimulationError(f"step size underflow at t={t!r}: h={h:.3e} < "
                                      f"min_step={self._hmin:.3e}{self._last_failure}")
            self._nattempt += 1
            if t + 1.01 * h >= self.t1:
                h = self.t1 - t
                t_new = self.t1
            else:
                t_new = t + h
            attempt = self._attempt(h, t_new)
            if attempt is None:
                self._reject(" (the right-hand side returned non-finite values)", h * _NONFINITE_SHRINK)
                continue
            x_new, abs_x_new, err_norm = attempt
            if not math.isfinite(err_norm):
                if np.all(np.isfinite(x_new)) and np.all(np.isfinite(KX[7])):
                    why = " (the scaled error overflows: tolerances too small?)"
                else:
                    why = " (the right-hand side or the projection returned non-finite values)"
                self._reject(why, h * _NONFINITE_SHRINK)
                continue
            if err_norm <= 1.0:
                self._accept(h, t_new, x_new, abs_x_new, err_norm)
                return
            self._reject(" (repeated error-test failures)",
                         h / min(1.0 / _FACMIN, err_norm**_EXPO1 / _SAFETY))

    def _attempt(self, h, t_new):
        """One attempted step of size h (steps 1-6 of the module docstring): (z_{n+1}, |z_{n+1}|,
        ||err||), or None where a stage argument or z~ is not finite (rhs never sees such a
        state)."""
        rhs, t, KX, CB = self.rhs, self.t, self._KX, self._CB
        isfinite = math.isfinite
        np.multiply(_TABLE, h, out=CB)
        CB[:6, 0] = 1.0
        for c, cb, kx, i in self._stages:  # stages 2..5
            arg = cb.dot(kx)
            if not isfinite(arg.dot(arg)):
                return None
            KX[i] = rhs(t + c * h, arg)
            self.nfev += 1
        cb6, kx6 = self._stage6
        arg = cb6.dot(kx6)
        if not isfinite(arg.dot(arg)):
            return None
        KX[6] = rhs(t_new, arg)
        self.nfev += 1
        self._arg6 = arg
        cb_sol, kx_sol = self._solution
        x_tilde = cb_sol.dot(kx_sol)
        if not isfinite(x_tilde.dot(x_tilde)):
            return None

        cb_err = CB[6, 1:]  # h (b - b^), applied to k_1..k_7
        if self.project is not None:
            x_new = np.array(self.project(t_new, x_tilde), dtype=float)
            self.nproj += 1
            if x_new.shape != x_tilde.shape:
                raise ParameterError(f"project(t, x) must return shape {x_tilde.shape}, got {x_new.shape}")
            KX[7] = rhs(t_new, x_new)
            err = x_new - x_tilde
            if self.weak is not None:  # the rounding along weak constraint directions is no error
                self._rho_new = float(self.weak(t_new, x_new, err))
            err += cb_err.dot(self._K)
        else:
            x_new = x_tilde
            KX[7] = rhs(t_new, x_new)
            err = cb_err.dot(self._K)
        self.nfev += 1

        abs_x_new = np.abs(x_new)
        err /= self.atol + self.rtol * np.maximum(self._abs_x, abs_x_new)
        return x_new, abs_x_new, math.sqrt(float(err.dot(err)) / err.size)

    def _accept(self, h, t_new, x_new, abs_x_new, err_norm) -> None:
        """Take the attempt; the next step size from DOPRI5's PI controller with the previous
        accepted error, never larger than h right after a rejection."""
        fac = err_norm**_EXPO1 / self._facold**_BETA / _SAFETY
        fac = min(1.0 / _FACMIN, max(1.0 / _FACMAX, fac))
        h_next = min(h / fac, self.max_step)
        if self._rejected:
            h_next = min(h_next, h)
        self._facold = max(err_norm, 1e-4)
        self._rejected = False
        self._last_failure = ""
        self.naccept += 1
        self.t_old, self.x_old = self.t, self.x
        self.t, self.x, self.h = t_new, x_new, h
        self._abs_x = abs_x_new
        self._fsal = True
        self._h = h_next
        if self.weak is not None:
            self._rho_prev, self._t_rho_prev, self._rho = self._rho, self.t_old, self._rho_new
            self._place()

    def _reject(self, why: str, h_next: float) -> None:
        self.nreject += 1
        self._rejected = True
        self._last_failure = why
        self._h = h_next
        if self.weak is not None:
            self._place()

    def _place(self) -> None:
        """Shorten the next step so that a predicted singular time falls 0.55 into a step (module
        docstring)."""
        rho, rho_prev = self._rho, self._rho_prev
        if not (rho < rho_prev < math.inf and rho < _PLACE_WATCH):
            return
        D = rho * (self.t - self._t_rho_prev) / (rho_prev - rho)
        H = self._h
        if not (0.0 < D <= _PLACE_REACH * H):
            return
        self._h = D / (max(0, math.ceil(D / H - _PLACE_THETA)) + _PLACE_THETA)

    @property
    def h_rho(self) -> float | None:
        """Hairer's stiffness estimate of the last step: stage 6 and k_7 are both taken at t + h."""
        KX = self._KX
        dx = self.x - self._arg6
        dxx = float(dx.dot(dx))
        dk = KX[7] - KX[6]
        return self.h * math.sqrt(float(dk.dot(dk)) / dxx) if dxx > 0 else None

    def dense(self, ts: np.ndarray) -> np.ndarray:
        """The continuous extension (CONTD5, module docstring) of the last step at ``ts``,
        projected again where ``project_output``."""
        x, x_new, h, K = self.x_old, self.x, self.h, self._K
        r2 = x_new - x
        r3 = h * K[0] - r2
        r4 = r2 - h * K[6] - r3
        r5 = h * _D.dot(K)
        th = ((ts - self.t_old) / h)[:, None]
        th1 = 1.0 - th
        X = x + th * (r2 + th1 * (r3 + th * (r4 + th1 * r5)))
        if self.project is not None and self.project_output:
            for i in range(len(ts)):
                X[i] = self.project(ts[i], X[i])
            self.nproj += len(ts)
        return X


def integrate(rhs, x0, t_span, *, project=None, rtol=1e-6, atol=None, t_eval=None,
              first_step=None, max_step=np.inf, max_steps=1_000_000, min_step=None,
              project_output=True, monitor=None, weak=None) -> StepperResult:
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
    monitor : callable ``monitor(t, h, h_rho)`` called after every accepted step (progress,
        stiffness diagnostic); what it raises propagates.
    weak : callable ``weak(t, x_new, d) -> rho`` (with ``project``): removes the rounding share of
        the projection's correction d in place and returns the regularity ratio of x_new, for
        singular positions (module docstring); None: not used.

    A SimulationError or KeyboardInterrupt raised during the steps carries ``partial = (t, x)``:
    the output points of ``t_eval`` reached so far (every accepted step without ``t_eval``).

    Returns
    -------
    StepperResult

    Raises
    ------
    ParameterError : bad arguments (reversed t_span, non-finite x0, unsorted t_eval, ...).
    SimulationError : step-size underflow (after error-test failures or non-finite values of rhs or
        project), non-finite rhs at t0, too many steps. Each message names t and h.
    """
    stepper = RKStab(rhs, x0, t_span, project=project, rtol=rtol, atol=atol, first_step=first_step,
                     max_step=max_step, max_steps=max_steps, min_step=min_step,
                     project_output=project_output, weak=weak)
    return sample(stepper, t_eval, monitor)
