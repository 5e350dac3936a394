"""Control design on a linearization: continuous and discrete LQR, pole placement.

All return a :class:`StateFeedbackGain`: the law δu = -K (x - x_ref) in the deviations from the
operating point, with the state and input names of the linear model, so the gain can be wired
to a plant's outputs by name (``gain.block()`` is the runner's ``StateFeedback`` block).

* ``lqr``: minimizes ∫ xᵀQx + uᵀRu dt;  K = R⁻¹ Bᵀ P with AᵀP + PA - PBR⁻¹BᵀP + Q = 0.
* ``dlqr``: the plant discretized with a zero-order hold at ``period`` (Ad, Bd), minimizing
  Σ xᵀQx + uᵀRu;  K = (R + BdᵀPBd)⁻¹ BdᵀPAd with the discrete Riccati equation for P.
* ``place``: K with eig(A - BK) = ``poles`` (scipy.signal.place_poles).

What each needs is checked first, and a ParameterError names what is missing: Q = Qᵀ >= 0 and
R = Rᵀ > 0 of the right sizes; for the Riccati equations a stabilizing solution, which exists
when every mode that is not stable (Re λ >= 0, or |λ| >= 1 for the discrete plant) can be moved
by the inputs, rank [A - λI, B] = n (Hautus test), and Q sees every mode on the stability
boundary, rank [A - λI; Q] = n there; for ``place`` every mode movable, one pole per state,
complex ones in conjugate pairs (the gain is real) and none more often than rank B.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_continuous_are, solve_discrete_are

from ..core.errors import ParameterError
from ..equations.parameter_requirements import moving_coordinates
from ..model.matrices import check_symmetric, real_array
from . import arguments
from .linear_model import Linearization


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
        """The runner block ``blocks.control.StateFeedback`` of this gain; ``references``: the
        names of the states (one or a list) that follow a reference input ``<name>_ref``."""
        # imported here so that ``import mbsfmu`` (which imports this module) loads nothing of
        # blocks: the runner runs without it (tests/test_layout.py, LATE_INTERNAL)
        from blocks.control import StateFeedback

        references = arguments.name_list(references, "block: references", self.states, "state")

        u0 = [float(self.operating_point.get(n, 0.0)) for n in self.inputs] if self.operating_point else None
        x0 = ([float(self.operating_point.get(n, 0.0)) for n in self.states]
              if self.operating_point else None)
        return StateFeedback(self.K, self.states, self.inputs, references=references, x0=x0, u0=u0,
                             sample_time=sample_time if sample_time is not None else self.period)


def _model(lin, where: str):
    """(numeric linearization, A, B); ParameterError unless ``lin`` is a Linearization with
    states and inputs."""
    if not isinstance(lin, Linearization):
        raise ParameterError(f"{where}: the plant must be a linearization (mbsfmu.linearize's "
                             f"result), got {type(lin).__name__}")
    lin = lin.numeric()
    A, B = np.asarray(lin.A, float), np.asarray(lin.B, float)
    if B.shape[1] == 0:
        raise ParameterError(f"{where}: the linear model of {lin.system_name!r} has no inputs "
                             "(linearize with inputs=[...])")
    if A.shape[0] == 0:
        raise ParameterError(f"{where}: the linear model of {lin.system_name!r} has no states")
    return lin, A, B


def _weight(W, size: int, names, where: str, definite: bool) -> np.ndarray:
    """A weight matrix (size x size, or its diagonal) that is symmetric and positive
    (semi)definite; ParameterError naming it otherwise."""
    W = arguments.real_array(W, where)
    if W.ndim == 1:
        W = np.diag(W)
    elif W.ndim == 0:
        W = W.reshape(1, 1)
    if W.shape != (size, size):
        raise ParameterError(f"{where} must be {size}x{size} or {size} diagonal entries (one per "
                             f"{', '.join(names)}), got the shape {W.shape}")
    check_symmetric(W, where, definite=definite, rtol=WEIGHT_RTOL, error=ParameterError)
    return W


#: relative tolerances of the weights' symmetry and definiteness, and of the rank tests below
WEIGHT_RTOL = 1e-10
RANK_RTOL = 1e-9


def _weights(lin, Q, R, where):
    return (_weight(Q, len(lin.states), lin.states, f"{where}: Q", definite=False),
            _weight(R, len(lin.inputs), lin.inputs, f"{where}: R", definite=True))


def _rank_deficient(M) -> np.ndarray | None:
    """A unit vector w with w^H M = 0 (rank(M) < rows) or None."""
    U, sv, _ = np.linalg.svd(M)
    scale = max(np.linalg.norm(M), 1e-300)
    if sv.size < M.shape[0] or sv[-1] <= RANK_RTOL * scale:
        return U[:, -1]
    return None


def _unit_columns(M) -> np.ndarray:
    """M with each nonzero column scaled to length 1 (an input's or a weight's scale does not
    change what it reaches or sees, but would the rank tests' tolerance)."""
    norms = np.linalg.norm(M, axis=0)
    return M / np.where(norms > 0, norms, 1.0)


def _unreachable_modes(A, B, which) -> list[tuple[complex, np.ndarray]]:
    """(eigenvalue, w) of the modes of A for which ``which(eigenvalue)`` holds and that the
    inputs cannot move (Hautus test: rank [A - lambda I, B] < n, w^H [A - lambda I, B] = 0)."""
    out = []
    n = A.shape[0]
    B = _unit_columns(B)
    for lam in np.unique(np.round(np.linalg.eigvals(A), 12)):
        if which(lam):
            w = _rank_deficient(np.hstack([A - lam * np.eye(n), B]))
            if w is not None:
                out.append((complex(lam), w))
    return out


def _number(z) -> str:
    """A real or complex number as text (a real one without '+0j')."""
    z = complex(z)
    return f"{z.real:.6g}" if z.imag == 0 else f"{z:.6g}"


def _mode_text(lam, w, lin) -> str:
    return (f"the mode with eigenvalue {_number(lam)} (in the states: "
            f"{moving_coordinates(lin.states, w, 'state')})")


def _check_stabilizable(lin, A, B, Q, where, unstable, on_boundary):
    """Before the Riccati equation: every mode that is not stable (``unstable(lambda)``) must be
    reachable from the inputs, and Q must see every mode on the stability boundary; otherwise
    no stabilizing solution exists, and the ParameterError names the mode."""
    for lam, w in _unreachable_modes(A, B, unstable):
        raise ParameterError(f"{where}: {_mode_text(lam, w, lin)} is not stable and the inputs "
                             f"{list(lin.inputs)} cannot move it: no state feedback stabilizes it")
    n = A.shape[0]
    Q = _unit_columns(Q)
    for lam in np.unique(np.round(np.linalg.eigvals(A), 12)):
        if on_boundary(lam):
            # rank [A - lambda I; Q] < n: a v with (A - lambda I) v = 0 and Q v = 0
            w = _rank_deficient(np.vstack([A - lam * np.eye(n), Q]).T)
            if w is not None:
                raise ParameterError(f"{where}: Q gives no weight to {_mode_text(lam, w, lin)}, which "
                                     "is on the stability boundary: weight those states in Q")


def _riccati(solve, where, *args):
    """solve(*args), with scipy's failures as a ParameterError naming the function."""
    try:
        P = solve(*args)
    except (np.linalg.LinAlgError, ValueError) as exc:
        raise ParameterError(f"{where}: the Riccati equation has no stabilizing solution ({exc})") \
            from None
    return P


def _gain(lin, K, poles, period=None):
    point = {k: v for k, v in lin.point.items() if isinstance(v, (int, float))}
    return StateFeedbackGain(np.atleast_2d(K), list(lin.states), list(lin.inputs), poles, period,
                             point)


def lqr(lin, Q, R) -> StateFeedbackGain:
    """Continuous-time LQR (see the module docstring).  Q: symmetric positive semidefinite
    (n x n or its n diagonal entries, n states), R: symmetric positive definite (inputs x
    inputs or its diagonal); (A, B) stabilizable and no mode on the imaginary axis unseen by Q,
    else a ParameterError naming the weight or the mode."""
    lin, A, B = _model(lin, "lqr")
    Q, R = _weights(lin, Q, R, "lqr")
    tol = RANK_RTOL * max(1.0, float(np.max(np.abs(np.linalg.eigvals(A)))))
    _check_stabilizable(lin, A, B, Q, "lqr", lambda lam: lam.real >= -tol,
                        lambda lam: abs(lam.real) <= tol)
    P = _riccati(solve_continuous_are, "lqr", A, B, Q, R)
    K = np.linalg.solve(R, B.T @ P)
    return _gain(lin, K, np.linalg.eigvals(A - B @ K))


def dlqr(lin, Q, R, period: float) -> StateFeedbackGain:
    """Discrete-time LQR of the zero-order-hold discretization at ``period`` (> 0 s); the
    weights and the plant as for :func:`lqr`, with the unit circle as the stability boundary."""
    from scipy.signal import cont2discrete

    lin, A, B = _model(lin, "dlqr")
    period = arguments.positive(period, "dlqr: period")
    Q, R = _weights(lin, Q, R, "dlqr")
    with np.errstate(all="ignore"):
        Ad, Bd, *_ = cont2discrete((A, B, np.eye(len(A)), np.zeros((len(A), B.shape[1]))), period)
    if not (np.all(np.isfinite(Ad)) and np.all(np.isfinite(Bd))):
        raise ParameterError(f"dlqr: period {period!r} s is too long: the discretized plant "
                             "exp(A period) overflows")
    _check_stabilizable(lin, Ad, Bd, Q, "dlqr", lambda lam: abs(lam) >= 1 - RANK_RTOL,
                        lambda lam: abs(abs(lam) - 1) <= RANK_RTOL)
    P = _riccati(solve_discrete_are, "dlqr", Ad, Bd, Q, R)
    K = np.linalg.solve(R + Bd.T @ P @ Bd, Bd.T @ P @ Ad)
    return _gain(lin, K, np.linalg.eigvals(Ad - Bd @ K), period)


def _poles(poles, lin, B) -> np.ndarray:
    """The requested poles, checked: finite numbers (complex ones with their conjugates), one per
    state, none repeated more often than rank(B) (what one state feedback can place)."""
    n = len(lin.states)
    p = real_array(poles, "place: poles", error=ParameterError, allow_complex=True)
    if p.ndim != 1:
        raise ParameterError(f"place: poles must be a list of numbers (complex ones in conjugate "
                             f"pairs), got {poles!r}")
    if p.size != n:
        raise ParameterError(f"place: {p.size} pole(s) for {n} states ({', '.join(lin.states)}); "
                             f"give {n}")
    scale = max(1.0, float(np.max(np.abs(p))))

    def count(z):
        return int(np.sum(np.abs(p - z) <= 1e-12 * scale))

    for z in p:
        if abs(z.imag) > 1e-12 * scale and count(z) != count(z.conjugate()):
            raise ParameterError(f"place: the complex pole {_number(z)} needs its conjugate "
                                 f"{_number(z.conjugate())} as often as itself (the gain is real)")
    rank = int(np.linalg.matrix_rank(B))
    for z in p:
        if count(z) > rank:
            raise ParameterError(f"place: the pole {_number(z)} is given {count(z)} times, but with "
                                 f"rank(B) = {rank} (inputs {list(lin.inputs)}) a pole can be placed "
                                 f"at most {rank} time(s); move the repeated ones apart")
    return p


def place(lin, poles) -> StateFeedbackGain:
    """State feedback with the closed-loop poles ``poles`` (continuous time): one per state,
    complex ones in conjugate pairs, none repeated more often than rank(B), every mode of the
    plant reachable from the inputs; else a ParameterError naming the pole or the mode."""
    from scipy.signal import place_poles

    lin, A, B = _model(lin, "place")
    p = _poles(poles, lin, B)
    for lam, w in _unreachable_modes(A, B, lambda lam: True):
        raise ParameterError(f"place: the inputs {list(lin.inputs)} cannot move "
                             f"{_mode_text(lam, w, lin)}: its pole stays where it is")
    try:
        res = place_poles(A, B, p)
    except (ValueError, np.linalg.LinAlgError) as exc:
        raise ParameterError(f"place: the poles cannot be placed ({exc})") from None
    return _gain(lin, res.gain_matrix, np.linalg.eigvals(A - B @ res.gain_matrix))
