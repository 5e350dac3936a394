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

What a design leaves alone it says (a :class:`~mbsfmu.core.errors.ControlDesignWarning`, and the
lists ``gain.uncontrollable`` / ``gain.unobservable`` of :class:`ModeReport`): a stable mode the
inputs cannot move (PBH test: wᴴ[A - λI, B] = 0 for a left eigenvector w; it keeps its eigenvalue
in the closed loop) and a mode the linear model's outputs do not show (Cv = 0 for its eigenvector
v: an observer on those outputs cannot estimate it).  Each is named by the coordinate with the
largest share of the mode's (right) eigenvector v, the shares of a coordinate ``q`` being
|v_q|² + |v_der(q)|².

A discrete design's poles are z-plane values (``gain.plane == "z"``): ``gain.s_poles`` are their
equivalents s = ln(z) / T, from which ``gain.pole_table()`` gives the natural frequency
|s| / 2π and the damping ratio -Re s / |s| beside each z.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import solve_continuous_are, solve_discrete_are

from ..core.errors import ControlDesignWarning, ParameterError
from ..equations.parameter_requirements import moving_coordinates
from ..model.matrices import check_symmetric, real_array
from . import arguments
from .linear_model import Linearization


@dataclass(frozen=True)
class ModeReport:
    """A mode of the plant that a design cannot move (``"uncontrollable"``) or that the linear
    model's outputs do not show (``"unobservable"``), named by the coordinate with the largest
    share of its eigenvector.  ``eigenvalue``: of A, or for a discrete design of Ad, a z-plane
    value (``period`` set), whose s-plane equivalent is ``s = ln(z) / period``."""

    what: str
    coordinate: str
    eigenvalue: complex
    period: float | None = None

    @property
    def s(self) -> complex:
        """The eigenvalue in the s-plane (ln(z) / T for a z-plane one)."""
        return _s_plane(self.eigenvalue, self.period)

    def __str__(self) -> str:
        where = (f"z = {_pair_text(self.eigenvalue)}, s = {_pair_text(self.s)}" if self.period
                 else f"eigenvalue {_pair_text(self.eigenvalue)}")
        return f"the mode of coordinate {self.coordinate!r} ({where})"


@dataclass
class StateFeedbackGain:
    """δu = -K (x - x_ref): K (inputs x states), the names, the closed-loop poles.

    ``poles`` are s-plane values for ``lqr`` / ``place`` and z-plane values for ``dlqr``
    (``plane``: ``"s"`` or ``"z"``; ``s_poles``: the s-plane equivalents either way).
    ``uncontrollable`` / ``unobservable``: the plant's modes the design leaves alone
    (:class:`ModeReport`, see the module docstring)."""

    K: np.ndarray
    states: list
    inputs: list
    poles: np.ndarray          # eig(A - BK), or of Ad - Bd K for a discrete design
    period: float | None = None
    operating_point: dict | None = None
    uncontrollable: list = field(default_factory=list)
    unobservable: list = field(default_factory=list)
    plane: str = field(init=False)

    def __post_init__(self):
        self.plane = "z" if self.period else "s"

    @property
    def s_poles(self) -> np.ndarray:
        """The closed-loop poles in the s-plane: ``poles``, or ln(z) / period for a discrete design
        (a pole at z = 0, a dead-beat one, has s = -inf)."""
        return np.array([_s_plane(z, self.period) for z in self.poles])

    def pole_table(self) -> str:
        """The closed-loop poles as text, one row each: the pole (labelled z or s), for a z-plane
        pole its s-plane equivalent, the natural frequency |s| / 2π and the damping ratio."""
        if self.plane == "z":
            lines = [f"closed-loop poles (z-plane, period {self.period:g} s; s = ln(z) / T):",
                     f"{'z':>28}  {'s [1/s]':>28}  {'f_n [Hz]':>10}  {'zeta':>8}"]
        else:
            lines = ["closed-loop poles (s-plane):", f"{'s [1/s]':>28}  {'f_n [Hz]':>10}  {'zeta':>8}"]
        for z in sorted(self.poles, key=lambda p: (abs(_s_plane(p, self.period)), p.imag)):
            sv = _s_plane(z, self.period)
            r = abs(sv)
            fn = r / (2 * math.pi)
            zeta = -sv.real / r if 0 < r < math.inf else (1.0 if r == math.inf else math.nan)
            row = f"{_number(sv):>28}  {fn:>10.5g}  {zeta:>8.4f}"
            lines.append(f"{_number(z):>28}  {row}" if self.plane == "z" else row)
        return "\n".join(lines)

    def __str__(self) -> str:
        design = f"discrete, period {self.period:g} s" if self.period else "continuous"
        lines = [f"state feedback u = -K x ({design}), inputs {self.inputs}, states {self.states}",
                 f"K = {np.array2string(self.K, precision=6)}", self.pole_table()]
        lines += [f"uncontrollable: {m}" for m in self.uncontrollable]
        lines += [f"unobservable: {m}" for m in self.unobservable]
        return "\n".join(lines)

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


def _outputs(lin) -> np.ndarray:
    """The numeric C of the linear model (outputs x states; no rows without outputs)."""
    C = np.asarray(lin.C, dtype=float)
    return C.reshape(0, len(lin.states)) if C.size == 0 else C


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


def _pair_text(z) -> str:
    """A number as text, a complex one as ``a ± bj`` (it stands for its conjugate pair too)."""
    z = complex(z)
    return f"{z.real:.6g}" if z.imag == 0 else f"{z.real:.6g} ± {abs(z.imag):.6g}j"


def _s_plane(z, period) -> complex:
    """``z`` itself (period None), or the s-plane equivalent ln(z) / period of a z-plane value."""
    z = complex(z)
    if not period:
        return z
    return complex(-math.inf, 0.0) if z == 0 else complex(np.log(z)) / period


def _coordinate(states, v) -> str:
    """The coordinate with the largest share of the state vector ``v``: the share of ``q`` is
    |v_q|² + |v_der(q)|² (a state named ``der(q)`` belongs to ``q``)."""
    share: dict[str, float] = {}
    for name, x in zip(states, np.abs(np.asarray(v)) ** 2):
        q = name[4:-1] if name.startswith("der(") and name.endswith(")") else name
        share[q] = share.get(q, 0.0) + float(x)
    return max(share, key=share.get)


def _eigenvector(A, lam, w) -> np.ndarray:
    """The right eigenvector of A for ``lam`` nearest to ``w`` (the projection of w onto the
    eigenspace; the eigenspace's first basis vector if w is orthogonal to it)."""
    n = A.shape[0]
    _, sv, Vh = np.linalg.svd(A - lam * np.eye(n))
    k = max(1, int(np.sum(sv <= RANK_RTOL * max(float(sv[0]), 1e-300))))
    N = Vh[-k:].conj().T
    v = N @ (N.conj().T @ w)
    return v if np.linalg.norm(v) > 1e-6 * np.linalg.norm(w) else N[:, 0]


def _unobservable_modes(A, C) -> list[tuple[complex, np.ndarray]]:
    """(eigenvalue, v) of the modes of A the outputs C do not show: A v = λ v, C v = 0 (the dual
    Hautus test, rank [A - λI; C] < n).  None without outputs."""
    if C.shape[0] == 0:
        return []
    n = A.shape[0]
    C = _unit_columns(C.T).T
    out = []
    for lam in np.unique(np.round(np.linalg.eigvals(A), 12)):
        # w^H M^H = 0 with M = [A - λI; C] is M w = 0
        w = _rank_deficient(np.vstack([A - lam * np.eye(n), C]).conj().T)
        if w is not None:
            out.append((complex(lam), w))
    return out


def _report(lin, A, B, C, where: str, period=None) -> tuple[list, list]:
    """The modes of (A, B, C) the design leaves alone, as ModeReports, with a
    ControlDesignWarning naming them (A, B: the plant as designed, Ad, Bd for a discrete one)."""
    states = list(lin.states)
    unreachable = [ModeReport("uncontrollable", _coordinate(states, _eigenvector(A, lam, w)), lam,
                              period) for lam, w in _unreachable_modes(A, B, lambda lam: True)]
    unseen = [ModeReport("unobservable", _coordinate(states, v), lam, period)
              for lam, v in _unobservable_modes(A, C)]
    # one report per conjugate pair
    unreachable = [m for m in unreachable if m.eigenvalue.imag >= 0]
    unseen = [m for m in unseen if m.eigenvalue.imag >= 0]
    said = [f"the inputs {list(lin.inputs)} cannot move {m}: it keeps its eigenvalue in the "
            "closed loop" for m in unreachable]
    said += [f"the outputs {list(lin.outputs)} do not show {m}: an observer on them cannot "
             "estimate it" for m in unseen]
    if said:
        warnings.warn(f"{where}: " + "; ".join(said), ControlDesignWarning, stacklevel=3)
    return unreachable, unseen


def _mode_text(lam, w, lin, A, period=None) -> str:
    """The mode with eigenvalue ``lam`` of A (a z-plane one, labelled with its s, if ``period``):
    the coordinate with the largest share of its eigenvector and the states that ``w`` (a left
    eigenvector or an eigenvector, found by a Hautus test) involves."""
    value = (f"z = {_pair_text(lam)}, s = {_pair_text(_s_plane(lam, period))} 1/s" if period
             else f"eigenvalue {_pair_text(lam)}")
    coordinate = _coordinate(lin.states, _eigenvector(A, lam, w))
    return (f"the mode of coordinate {coordinate!r} ({value}; in the states: "
            f"{moving_coordinates(lin.states, w, 'state')})")


def _check_stabilizable(lin, A, B, Q, where, unstable, on_boundary, period=None):
    """Before the Riccati equation: every mode that is not stable (``unstable(lambda)``) must be
    reachable from the inputs, and Q must see every mode on the stability boundary; otherwise
    no stabilizing solution exists, and the ParameterError names the mode (``period``: A is a
    discrete plant, its eigenvalues z-plane values)."""
    for lam, w in _unreachable_modes(A, B, unstable):
        raise ParameterError(f"{where}: {_mode_text(lam, w, lin, A, period)} is not stable and the inputs "
                             f"{list(lin.inputs)} cannot move it: no state feedback stabilizes it")
    n = A.shape[0]
    Q = _unit_columns(Q)
    for lam in np.unique(np.round(np.linalg.eigvals(A), 12)):
        if on_boundary(lam):
            # rank [A - lambda I; Q] < n: a v with (A - lambda I) v = 0 and Q v = 0
            w = _rank_deficient(np.vstack([A - lam * np.eye(n), Q]).T)
            if w is not None:
                mode = _mode_text(lam, w.conj(), lin, A, period)
                raise ParameterError(f"{where}: Q gives no weight to {mode}, which is on the "
                                     "stability boundary: weight those states in Q")


def _riccati(solve, where, *args):
    """solve(*args), with scipy's failures as a ParameterError naming the function."""
    try:
        P = solve(*args)
    except (np.linalg.LinAlgError, ValueError) as exc:
        raise ParameterError(f"{where}: the Riccati equation has no stabilizing solution ({exc})") \
            from None
    return P


def _gain(lin, K, poles, report, period=None):
    point = {k: v for k, v in lin.point.items() if isinstance(v, (int, float))}
    return StateFeedbackGain(np.atleast_2d(K), list(lin.states), list(lin.inputs), poles, period,
                             point, *report)


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
    return _gain(lin, K, np.linalg.eigvals(A - B @ K), _report(lin, A, B, _outputs(lin), "lqr"))


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
                        lambda lam: abs(abs(lam) - 1) <= RANK_RTOL, period)
    P = _riccati(solve_discrete_are, "dlqr", Ad, Bd, Q, R)
    K = np.linalg.solve(R + Bd.T @ P @ Bd, Bd.T @ P @ Ad)
    return _gain(lin, K, np.linalg.eigvals(Ad - Bd @ K),
                 _report(lin, Ad, Bd, _outputs(lin), "dlqr", period), period)


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
                             f"{_mode_text(lam, w, lin, A)}: its pole stays where it is")
    try:
        res = place_poles(A, B, p)
    except (ValueError, np.linalg.LinAlgError) as exc:
        raise ParameterError(f"place: the poles cannot be placed ({exc})") from None
    return _gain(lin, res.gain_matrix, np.linalg.eigvals(A - B @ res.gain_matrix),
                 _report(lin, A, B, _outputs(lin), "place"))
