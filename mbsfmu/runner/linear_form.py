"""A block's linear form at an operating point: what :func:`mbsfmu.linearize` of a diagram asks
each block for (:meth:`mbsfmu.runner.block.Block.linear_form`).

A block with m inputs u and p outputs y becomes, in deviations from the operating point,

    continuous:  ẋ = A x + B u,                 y = C x + D u
    discrete:    x[k+1] = A x[k] + B u[k],      y[k] = C x[k] + D u[k]   (period T, the diagram's step)

``domain`` is the loop's: "continuous" (the ideal loop the sampled one tends to as T -> 0) or
"discrete" (what the runner computes at its step T).  The pieces the blocks build theirs from:

* :func:`static`: a matrix D (gains, sums, a hold at the diagram's step);
* :func:`lti_form`: a continuous system as it is, or discretized at T (ZOH by default);
* :func:`shift`: a shift register, x_j = u[k-j], y = Σ taps_j x_j (delays);
* :func:`pade`: the Padé approximant of order n of e^(-τs),

      e^(-τs) ≈ Σ_k c_k (-τs)^k / Σ_k c_k (τs)^k,   c_k = (2n-k)! n! / ((2n)! k! (n-k)!);

* :func:`differentiated`: a static map's Jacobian at the point by central differences with step
  h = 1e-6 (1 + |u|), after checking that the one-sided differences agree
  (|d₊ - d₋| <= 1e-4 max(1, |d₊|, |d₋|)): else the map is not differentiable there (a kink, a
  jump) and the block is refused by name.  For piecewise linear maps the differences are exact
  away from a kink.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np

from .scheduling import DiagramError

DOMAINS = ("continuous", "discrete")
#: relative step and agreement tolerance of the one-sided differences
DIFF_STEP = 1e-6
DIFF_AGREE = 1e-4


@dataclass
class LinearForm:
    """A block's linear form: matrices on its ports (in the order of block.inputs/outputs) and
    the names of its states."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    states: list


def static(D) -> LinearForm:
    """The form y = D u (no state)."""
    D = np.atleast_2d(np.asarray(D, dtype=float))
    p, m = D.shape
    return LinearForm(np.zeros((0, 0)), np.zeros((0, m)), np.zeros((p, 0)), D, [])


def lti_form(A, B, C, D, states, domain, T, method="zoh") -> LinearForm:
    """A continuous system's form: as it is, or discretized at T by ``method`` (default ZOH)."""
    A, B, C, D = (np.atleast_2d(np.asarray(M, dtype=float)) for M in (A, B, C, D))
    if domain == "discrete" and A.shape[0]:
        from scipy.signal import cont2discrete

        A, B, C, D, _ = cont2discrete((A, B, C, D), T, method=method)
    return LinearForm(A, B, C, D, list(states))


def shift(n: int, taps) -> LinearForm:
    """x1[k+1] = u[k], x_j[k+1] = x_{j-1}[k]; y = Σ taps_j x_j (x_j = u[k-j])."""
    A = np.eye(n, k=-1)
    B = np.zeros((n, 1))
    B[0, 0] = 1.0
    C = np.asarray(taps, dtype=float).reshape(1, n)
    return LinearForm(A, B, C, np.zeros((1, 1)), [f"u[k-{j + 1}]" for j in range(n)])


def pade(delay: float, order: int):
    """(num, den) of the Padé approximant of e^(-delay·s) of ``order``, descending powers of s."""
    c = [math.factorial(2 * order - k) * math.factorial(order)
         / (math.factorial(2 * order) * math.factorial(k) * math.factorial(order - k))
         for k in range(order + 1)]
    num = [c[k] * (-delay) ** k for k in range(order, -1, -1)]
    den = [c[k] * delay ** k for k in range(order, -1, -1)]
    return num, den


def inside(name, block, value, lower, upper, what) -> None:
    """Refuse a block whose ``what`` (= ``value``) is clamped at [lower, upper] at the point."""
    if not lower < value < upper:
        raise DiagramError(f"block {name!r} ({type(block).__name__}): {what} = {value:.6g} is at "
                           f"its limit [{lower:g}, {upper:g}] at the operating point: a clamped "
                           "signal has no linear form there (choose a point inside the limits)")


def differentiated(name: str, block, u0, T: float, skip=()) -> LinearForm:
    """The static form ∂y/∂u of ``block``'s output map at the inputs ``u0`` (inputs named in
    ``skip`` select and are not differentiated: their column is 0); refused where the one-sided
    differences disagree (module docstring).  A copy of the block is evaluated."""
    probe = copy.deepcopy(block)
    probe.start(0.0, T)
    u0 = [float(v) for v in u0]

    def y(u):
        return np.asarray(probe.output(0.0, u), dtype=float)

    y0 = y(u0)
    J = np.zeros((len(y0), len(u0)))
    for j, port in enumerate(block.inputs):
        if port in skip:
            continue
        h = DIFF_STEP * (1.0 + abs(u0[j]))
        up, dn = list(u0), list(u0)
        up[j] += h
        dn[j] -= h
        dr, dl = (y(up) - y0) / h, (y0 - y(dn)) / h
        bad = np.abs(dr - dl) > DIFF_AGREE * np.maximum(1.0, np.maximum(np.abs(dr), np.abs(dl)))
        if np.any(bad):
            raise DiagramError(f"block {name!r} ({type(block).__name__}) is not differentiable at the "
                               f"operating point ({port} = {u0[j]:.6g}: slope {dl[bad][0]:.6g} on the "
                               f"left, {dr[bad][0]:.6g} on the right); choose another point")
        J[:, j] = 0.5 * (dr + dl)
    return static(J)


def no_linear_form(name: str, block) -> DiagramError:
    """The error of a block that has no linear form."""
    return DiagramError(f"block {name!r} ({type(block).__name__}) has no linear form (give one in "
                        f"plants={{{name!r}: ...}}: a linear model with the block's port names)")
