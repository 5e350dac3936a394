"""Solving algebraic loops of a diagram at each step (``Diagram.run(algebraic_loops="iterate")``).

A loop is a strongly connected component of the direct-feed-through graph
(:mod:`mbsfmu.runner.scheduling`).  Its blocks are put in a *tearing order*; the signals that a
block reads before their producer has run in that order are the *torn signals* ``x``.  One sweep
(every loop block's ``output`` once, in order, with the torn signals set to ``x``) yields their new
values ``g(x)``; the loop is solved when ``x`` is a fixed point, ``g(x) = x``.

The solver (:func:`solve_fixed_point`):

1. Anderson acceleration (type II, Walker & Ni 2011) of the plain iteration ``x <- g(x)``, with
   the last ``memory`` differences: with residuals ``r_k = g(x_k) - x_k``,
   ``ΔX = [x_{k-i+1} - x_{k-i}]``, ``ΔR = [r_{k-i+1} - r_{k-i}]``,
   ``γ = argmin ||r_k - ΔR γ||``, ``x_{k+1} = x_k + r_k - (ΔX + ΔR) γ``.  For a linear loop this
   is equivalent to GMRES and converges even where the plain iteration diverges.
2. If the residual has not decreased for 3 iterations (or is not finite), Newton's method on
   ``F(x) = g(x) - x`` from the best point so far, with a forward-difference Jacobian
   (one extra sweep per torn signal) and a backtracking line search on ``||F||`` (halving the
   step down to :data:`MIN_STEP`; no decrease even then counts as failure).

Convergence: ``max_i |g_i(x) - x_i| / (1 + |g_i(x)|) <= tol``.  Each Anderson step and each Newton
step counts as one iteration against ``max_iter``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: number of non-decreasing Anderson steps after which the solver switches to Newton
STALL = 3
#: smallest fraction of the Newton step the backtracking line search tries
MIN_STEP = 1e-12


def _error(x: np.ndarray, gx: np.ndarray) -> float:
    return float(np.max(np.abs(gx - x) / (1.0 + np.abs(gx)))) if x.size else 0.0


def solve_fixed_point(g: Callable[[np.ndarray], np.ndarray], x0, tol: float = 1e-10,
                      max_iter: int = 100, memory: int = 5,
                      method: str = "anderson") -> tuple[np.ndarray, int, float, bool]:
    """Solve ``x = g(x)``; returns ``(x, iterations, error, converged)``.

    ``method``: ``"anderson"`` (Anderson acceleration, switching to Newton when it stalls) or
    ``"newton"`` (Newton from the start).  On convergence the returned ``x`` is ``g(x_k)`` of the
    last call of ``g``, whose argument ``x_k`` is within ``tol`` of it (the loop solver relies on
    this: the diagram's signals then hold that last sweep, consistent to ``tol``).
    """
    if method not in ("anderson", "newton"):
        raise ValueError(f"method must be 'anderson' or 'newton', not {method!r}")
    x = np.array(x0, dtype=float)
    if method == "newton":
        return _newton(g, x, None, tol, max_iter, 0)
    it = 0
    dX: list[np.ndarray] = []
    dR: list[np.ndarray] = []
    best_x, best_err, stall = x, np.inf, 0
    x_prev = r_prev = None
    while it < max_iter:
        gx = np.asarray(g(x), dtype=float)
        r = gx - x
        err = _error(x, gx)
        if err <= tol:
            return gx, it, err, True
        if not np.isfinite(err):
            break
        if err < best_err:
            best_x, best_err, stall = x, err, 0
        else:
            stall += 1
            if stall >= STALL:
                break
        it += 1
        if x_prev is not None:
            dX.append(x - x_prev)
            dR.append(r - r_prev)
            if len(dX) > memory:
                dX.pop(0)
                dR.pop(0)
        x_prev, r_prev = x, r
        if dX:
            DR = np.column_stack(dR)
            gamma = np.linalg.lstsq(DR, r, rcond=None)[0]
            x = x + r - (np.column_stack(dX) + DR) @ gamma
        else:
            x = x + r
    if it >= max_iter:
        return x, it, best_err, False
    return _newton(g, best_x, None, tol, max_iter, it)


def _newton(g, x, gx, tol, max_iter, it):
    """Newton on F(x) = g(x) - x with a forward-difference Jacobian and backtracking."""
    eps = np.sqrt(np.finfo(float).eps)
    if gx is None:
        gx = np.asarray(g(x), dtype=float)
    err = _error(x, gx)
    while True:
        if err <= tol:
            return gx, it, err, True
        if it >= max_iter or not np.isfinite(err):
            return x, it, err, False
        it += 1
        F = gx - x
        m = x.size
        J = np.empty((m, m))
        for j in range(m):
            h = eps * max(1.0, abs(x[j]))
            xh = x.copy()
            xh[j] += h
            J[:, j] = (np.asarray(g(xh), dtype=float) - gx) / h
        J -= np.eye(m)
        dx = np.linalg.lstsq(J, -F, rcond=None)[0]
        norm = np.linalg.norm(F)
        lam = 1.0
        while True:
            xn = x + lam * dx
            gn = np.asarray(g(xn), dtype=float)
            if np.linalg.norm(gn - xn) < (1.0 - 1e-4 * lam) * norm:
                break
            lam *= 0.5
            if lam < MIN_STEP:  # no descent along the Newton direction: give up
                return x, it, err, False
        x, gx = xn, gn
        err = _error(x, gx)


class LoopSolver:
    """Solves one algebraic loop of a diagram in place on the diagram's signal list.

    ``members``: the loop's blocks in tearing order, each ``(output, gather, lo, hi)``: the bound
    ``output`` method, the function that picks its inputs from the signal list and its output
    slots ``lo:hi``.  ``torn``: the signal slots iterated on.  ``names``: block names for messages.
    """

    def __init__(self, names, members, torn, tol: float, max_iter: int):
        self.names = tuple(names)
        self.members = tuple(members)
        self.torn = tuple(torn)
        self.tol = tol
        self.max_iter = max_iter
        self.iterations = 0
        #: position in ``members`` of the block being evaluated (for error messages)
        self.current = 0
        #: after a failure: (error, iterations)
        self.failure: tuple[float, int] | None = None

    def sweep(self, t: float, sig: list) -> None:
        """Every loop block's ``output`` once, in tearing order."""
        for i, (out, get, lo, hi) in enumerate(self.members):
            self.current = i
            y = out(t, get(sig))
            if len(y) != hi - lo:
                raise ValueError(f"output returned {len(y)} values for {hi - lo} outputs")
            sig[lo:hi] = y

    def solve(self, t: float, sig: list) -> bool:
        """Solve the loop at ``t`` (start: the torn signals' current values); False if it fails."""
        torn = self.torn
        if not torn:
            self.sweep(t, sig)
            return True

        def g(x):
            for s, v in zip(torn, x):
                sig[s] = float(v)
            self.sweep(t, sig)
            return [sig[s] for s in torn]

        x, it, err, ok = solve_fixed_point(g, [sig[s] for s in torn], self.tol, self.max_iter)
        self.iterations += it
        if not ok:
            self.failure = (err, it)
        return ok
