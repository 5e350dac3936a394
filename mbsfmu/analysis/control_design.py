"""Control design on a linearization: continuous and discrete LQR, pole placement.

All return a :class:`StateFeedbackGain`: the law δu = -K (x - x_ref) in the deviations from the
operating point, with the state and input names of the linear model, so the gain can be wired
to a plant's outputs by name (``gain.block()`` is the runner's ``StateFeedback`` block).

* ``lqr``: minimizes ∫ xᵀQx + uᵀRu dt;  K = R⁻¹ Bᵀ P with AᵀP + PA - PBR⁻¹BᵀP + Q = 0.
* ``dlqr``: the plant discretized with a zero-order hold at ``period`` (Ad, Bd), minimizing
  Σ xᵀQx + uᵀRu;  K = (R + BdᵀPBd)⁻¹ BdᵀPAd with the discrete Riccati equation for P.
* ``place``: K with eig(A - BK) = ``poles`` (scipy.signal.place_poles).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError


@dataclass
class StateFeedbackGain:
    """δu = -K (x - x_ref): K (inputs x states), the names, the closed-loop poles."""

    K: np.ndarray
    states: list
    inputs: list
    poles: np.ndarray          # eig(A - BK), or of Ad - Bd K for a discrete design
    period: float | None = None
    operating_point: dict | None = None

    def block(self, references=(), sample_time: float | None = None):
        """The runner block ``blocks.control.StateFeedback`` of this gain."""
        from blocks.control import StateFeedback

        u0 = [float(self.operating_point.get(n, 0.0)) for n in self.inputs] if self.operating_point else None
        x0 = ([float(self.operating_point.get(n, 0.0)) for n in self.states]
              if self.operating_point else None)
        return StateFeedback(self.K, self.states, self.inputs, references=references, x0=x0, u0=u0,
                             sample_time=sample_time if sample_time is not None else self.period)


def _model(lin):
    lin = lin.numeric() if hasattr(lin, "numeric") else lin
    return lin, np.asarray(lin.A, float), np.asarray(lin.B, float)


def _weights(Q, R, n, m):
    Q = np.diag(np.asarray(Q, float)) if np.ndim(Q) == 1 else np.asarray(Q, float)
    R = np.diag(np.asarray(R, float)) if np.ndim(R) == 1 else np.atleast_2d(np.asarray(R, float))
    if Q.shape != (n, n) or R.shape != (m, m):
        raise ParameterError(f"LQR weights: Q must be {n}x{n} (or {n} diagonal entries) and R {m}x{m}, "
                             f"got {Q.shape} and {R.shape}")
    return Q, R


def _gain(lin, K, poles, period=None):
    point = {k: v for k, v in lin.point.items() if isinstance(v, (int, float))}
    return StateFeedbackGain(np.atleast_2d(K), list(lin.states), list(lin.inputs), poles, period,
                             point)


def lqr(lin, Q, R) -> StateFeedbackGain:
    """Continuous-time LQR (see the module docstring)."""
    from scipy.linalg import solve_continuous_are

    lin, A, B = _model(lin)
    Q, R = _weights(Q, R, A.shape[0], B.shape[1])
    P = solve_continuous_are(A, B, Q, R)
    K = np.linalg.solve(R, B.T @ P)
    return _gain(lin, K, np.linalg.eigvals(A - B @ K))


def dlqr(lin, Q, R, period: float) -> StateFeedbackGain:
    """Discrete-time LQR of the zero-order-hold discretization at ``period``."""
    from scipy.linalg import solve_discrete_are
    from scipy.signal import cont2discrete

    lin, A, B = _model(lin)
    Q, R = _weights(Q, R, A.shape[0], B.shape[1])
    Ad, Bd, *_ = cont2discrete((A, B, np.eye(len(A)), np.zeros((len(A), B.shape[1]))), period)
    P = solve_discrete_are(Ad, Bd, Q, R)
    K = np.linalg.solve(R + Bd.T @ P @ Bd, Bd.T @ P @ Ad)
    return _gain(lin, K, np.linalg.eigvals(Ad - Bd @ K), period)


def place(lin, poles) -> StateFeedbackGain:
    """State feedback with the closed-loop poles ``poles`` (continuous time)."""
    from scipy.signal import place_poles

    lin, A, B = _model(lin)
    res = place_poles(A, B, np.asarray(poles))
    return _gain(lin, res.gain_matrix, np.linalg.eigvals(A - B @ res.gain_matrix))
