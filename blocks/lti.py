"""Linear time-invariant blocks: continuous state space / transfer function, discretized at start.

``start(t0, dt)`` discretizes the continuous system with :func:`scipy.signal.cont2discrete`
at the block's period; then::

    x[k+1] = Ad · x[k] + Bd · u[k]
    y[k]   = Cd · x[k] + Dd · u[k]

With ``method="zoh"`` (default) the result is exact at the sample instants for inputs held over
each period, which is how the runner holds them.  Other methods: ``"foh"``, ``"bilinear"``
(Tustin), ``"euler"`` (forward difference), ``"backward_diff"``; for ``"foh"``, ``"bilinear"`` and
``"backward_diff"`` the discrete state is a transformed one (``x0`` is its initial value) and
``Dd`` can be nonzero where ``D`` is zero.
"""

from __future__ import annotations

from operator import mul

import numpy as np

from mbsfmu.runner import linear_form as lf
from mbsfmu.runner.block import Block, BlockError

from .math_blocks import period

METHODS = ("zoh", "foh", "bilinear", "euler", "backward_diff")
#: methods whose Dd equals D (and whose state is the continuous one)
_SAME_D = ("zoh", "euler")
#: at most this many states: plain Python arithmetic (faster than numpy for tiny matrices)
_SMALL = 4


def _matrix(name: str, value, shape: tuple[int | None, int | None]) -> np.ndarray:
    try:
        M = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise BlockError(f"StateSpace: {name} must be a matrix of numbers, got {value!r}") from None
    if M.ndim < 2:
        M = M.reshape(1, -1) if M.ndim == 1 else M.reshape(1, 1)
    if M.ndim != 2 or any(s is not None and s != M.shape[i] for i, s in enumerate(shape)):
        want = " x ".join("?" if s is None else str(s) for s in shape)
        raise BlockError(f"StateSpace: {name} has shape {M.shape}, expected {want}")
    if not np.all(np.isfinite(M)):
        raise BlockError(f"StateSpace: {name} has non-finite entries")
    return M


class StateSpace(Block):
    """``ẋ = A x + B u``, ``y = C x + D u`` (continuous), run discretized (see the module doc).

    Shapes: ``A`` n×n (n >= 1), ``B`` n×m, ``C`` p×n, ``D`` p×m.  Ports ``u`` / ``y`` when
    m = p = 1, else ``u1 … um`` and ``y1 … yp``.  ``x0``: initial state (default zero).
    Output ``y_i`` has direct feed-through from ``u_j`` only where ``Dd[i, j]`` can be nonzero
    (``D[i, j] != 0`` for ``zoh`` and ``euler``).

    ``StateSpace(lin)`` takes the result of :func:`mbsfmu.linearize` (or its ``ss``) directly: its
    A, B, C, D (numbers; a symbolic result with the constants' defaults), ports named after its
    inputs and outputs (a ``.`` in a name becomes ``_``).  Its signals are the deviations from
    the operating point.  ``state_names``: the states' names (a linearization's own, else
    ``x1 … xn``; :func:`mbsfmu.linearize` of a diagram names the loop's states by them).
    """

    def __init__(self, A, B=None, C=None, D=None, x0=None, method: str = "zoh", *,
                 sample_time: float | None = None):
        names = states = None
        if B is None and C is None and D is None and hasattr(A, "A"):
            states = [str(n) for n in getattr(A, "states", [])]
            A, B, C, D, names = _linear_model(A)
        if B is None or C is None or D is None:
            raise BlockError("StateSpace: give A, B, C and D (or one result of mbsfmu.linearize)")
        A = _matrix("A", A, (None, None))
        n = A.shape[0]
        if n < 1 or A.shape[1] != n:
            raise BlockError(f"StateSpace: A must be square with at least one state, got shape {A.shape}")
        B = _matrix("B", B, (n, None))
        C = _matrix("C", C, (None, n))
        m, p = B.shape[1], C.shape[0]
        if m < 1 or p < 1:
            raise BlockError(f"StateSpace: needs at least one input and one output (m = {m}, p = {p})")
        D = _matrix("D", D, (p, m))
        if method not in METHODS:
            raise BlockError(f"StateSpace: method must be one of {', '.join(METHODS)}, got {method!r}")
        if x0 is None:
            x0 = np.zeros(n)
        else:
            x0 = np.array(x0, dtype=float).ravel() if np.ndim(x0) else np.array([x0], dtype=float)
            if x0.shape != (n,) or not np.all(np.isfinite(x0)):
                raise BlockError(f"StateSpace: x0 must hold {n} finite numbers, got {x0.tolist()}")
        self.A, self.B, self.C, self.D, self.x0, self.method = A, B, C, D, x0, method
        self.state_names = states if states and len(states) == n else [f"x{i + 1}" for i in range(n)]
        self.sample_time = period(sample_time)
        self.inputs = ("u",) if m == 1 and p == 1 else tuple(f"u{j + 1}" for j in range(m))
        self.outputs = ("y",) if m == 1 and p == 1 else tuple(f"y{i + 1}" for i in range(p))
        if names is not None:
            self.inputs, self.outputs = names
        through = D != 0.0
        if method not in _SAME_D:  # Dd = D + C·(…)·B: nonzero at most where some C A^k B is
            M, AkB = np.zeros((p, m)), B
            for _ in range(n):
                M += np.abs(C @ AkB)
                AkB = A @ AkB
            through |= M != 0.0
        self._through = {y: tuple(u for j, u in enumerate(self.inputs) if through[i, j])
                         for i, y in enumerate(self.outputs)}
        self.discrete = None
        self._small = n <= _SMALL
        self._x = x0.tolist() if self._small else x0.copy()

    def feedthrough(self):
        return {y: us for y, us in self._through.items() if us}

    def start(self, t0, dt):
        from scipy.signal import cont2discrete  # heavy (about 1 s): imported where it is used

        Ad, Bd, Cd, Dd, _ = cont2discrete((self.A, self.B, self.C, self.D), float(dt), method=self.method)
        self.discrete = (Ad, Bd, Cd, Dd)
        self._has_d = bool(np.any(Dd != 0.0))
        if self._small:
            rows = lambda M: tuple(tuple(r) for r in M.tolist())  # noqa: E731
            self._Ad, self._Bd, self._Cd, self._Dd = rows(Ad), rows(Bd), rows(Cd), rows(Dd)
            self._x = self.x0.tolist()
        else:
            self._Ad, self._Bd, self._Cd, self._Dd = Ad, Bd, Cd, Dd
            self._x = self.x0.copy()

    def output(self, t, u):
        x = self._x
        if self._small:
            if self._has_d:
                return [sum(map(mul, c, x)) + sum(map(mul, d, u)) for c, d in zip(self._Cd, self._Dd)]
            return [sum(map(mul, c, x)) for c in self._Cd]
        y = self._Cd @ x
        if self._has_d:
            y += self._Dd @ np.asarray(u, dtype=float)
        return y.tolist()

    def update(self, t, u):
        x = self._x
        if self._small:
            self._x = [sum(map(mul, a, x)) + sum(map(mul, b, u)) for a, b in zip(self._Ad, self._Bd)]
        else:
            self._x = self._Ad @ x + self._Bd @ np.asarray(u, dtype=float)

    @property
    def state(self) -> np.ndarray:
        """The discrete state ``x[k]``."""
        return np.array(self._x, dtype=float)

    def get_state(self):
        return tuple(self._x) if self._small else self._x.copy()

    def set_state(self, state):
        self._x = list(state) if self._small else np.array(state, dtype=float)

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """Its A, B, C, D; discrete: discretized at the step by its own ``method``."""
        return lf.lti_form(self.A, self.B, self.C, self.D, self.state_names, domain, step, self.method)


def _linear_model(lin):
    """(A, B, C, D, (input ports, output ports)) of a Linearization or its StateSpaceModel."""
    if hasattr(lin, "numeric"):
        lin = lin.numeric().ss
    ports = tuple(tuple(str(n).replace(".", "_") for n in names) for names in (lin.inputs, lin.outputs))
    return lin.A, lin.B, lin.C, lin.D, ports


class TransferFunction(StateSpace):
    """``Y(s)/U(s) = (b_0 s^q + … + b_q) / (a_0 s^n + … + a_n)`` (coefficients in descending
    powers), realized by :func:`scipy.signal.tf2ss` (controller canonical form) and run as
    :class:`StateSpace` with ports ``u`` / ``y``.  It must be proper (q <= n); direct
    feed-through only when q = n (biproper).
    """

    def __init__(self, num, den, method: str = "zoh", *, sample_time: float | None = None):
        num, den = self._poly("num", num), self._poly("den", den)
        if not den:
            raise BlockError("TransferFunction: the denominator is zero")
        if len(num) > len(den):
            raise BlockError(f"TransferFunction: improper (numerator degree {len(num) - 1} > "
                             f"denominator degree {len(den) - 1}); it needs a derivative of the input")
        self.num, self.den = num or [0.0], den
        from scipy.signal import tf2ss  # heavy (about 1 s): imported where it is used

        A, B, C, D = tf2ss(self.num, den)  # a static gain comes with one dummy state
        super().__init__(A, B, C, D, method=method, sample_time=sample_time)

    @staticmethod
    def _poly(name, coeffs) -> list[float]:
        try:
            c = np.array(coeffs, dtype=float).ravel() if np.ndim(coeffs) else np.array([coeffs], float)
        except (TypeError, ValueError):
            raise BlockError(f"TransferFunction: {name} must be a sequence of numbers, got {coeffs!r}") \
                from None
        if not np.all(np.isfinite(c)):
            raise BlockError(f"TransferFunction: {name} has non-finite coefficients: {c.tolist()}")
        nz = np.flatnonzero(c)
        return c[nz[0]:].tolist() if nz.size else []
