"""Lookup tables in one and two dimensions, linear between breakpoints (Simulink's *1-D Lookup
Table* and *2-D Lookup Table* with linear interpolation).  Static maps with direct feed-through.

Breakpoints are strictly increasing finite numbers (at least two per dimension).  Outside them,
``extrapolation="clip"`` (default) evaluates the table at the nearest breakpoint (the end value
is held, as :func:`numpy.interp` does) and ``"error"`` raises BlockError naming the input, its
value and the breakpoint range.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from mbsfmu.runner import linear_form as lf
from mbsfmu.runner.block import Block, BlockError

from .math_blocks import _Stateless

EXTRAPOLATION = ("clip", "error")


def _breakpoints(kind: str, name: str, values) -> list[float]:
    try:
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise BlockError(f"{kind}: breakpoints {name} must be numbers, got {values!r}") from None
    if x.ndim != 1 or x.size < 2:
        raise BlockError(f"{kind}: breakpoints {name} must be a 1-D sequence of at least 2 numbers, "
                         f"got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise BlockError(f"{kind}: breakpoints {name} have non-finite entries")
    bad = np.flatnonzero(np.diff(x) <= 0.0)
    if bad.size:
        i = int(bad[0]) + 1
        raise BlockError(f"{kind}: breakpoints {name} must be strictly increasing; {name}[{i}] = "
                         f"{x[i]:g} follows {x[i - 1]:g}")
    return x.tolist()


def _cell(kind: str, port: str, grid: list[float], v: float, clip: bool) -> tuple[int, float]:
    """``(i, w)`` with ``grid[i] <= v <= grid[i+1]`` and the weight ``w = (v - grid[i]) /
    (grid[i+1] - grid[i])`` in ``[0, 1]``; outside the grid clipped or refused."""
    lo, hi = grid[0], grid[-1]
    if not lo <= v <= hi:
        if not clip or math.isnan(v):
            raise BlockError(f"{kind}: input {port} = {v!r} is outside the breakpoints "
                             f"[{lo:g}, {hi:g}] (extrapolation='error')")
        return (0, 0.0) if v < lo else (len(grid) - 2, 1.0)
    i = min(bisect.bisect_right(grid, v) - 1, len(grid) - 2)
    return i, (v - grid[i]) / (grid[i + 1] - grid[i])


def _extrapolation(kind: str, rule) -> bool:
    """True for ``"clip"``, False for ``"error"``."""
    if rule not in EXTRAPOLATION:
        raise BlockError(f"{kind}: extrapolation must be 'clip' or 'error', got {rule!r}")
    return rule == "clip"


class Lookup1D(_Stateless, Block):
    """``y = f(u)`` from breakpoints ``x_0 < … < x_n`` and values ``y_i``: with
    ``x_i <= u <= x_{i+1}``, ``y = y_i + (y_{i+1} - y_i)(u - x_i)/(x_{i+1} - x_i)``; outside
    ``[x_0, x_n]`` see the module doc."""

    inputs = ("u",)
    outputs = ("y",)

    def __init__(self, x, y, extrapolation: str = "clip"):
        self.x = _breakpoints("Lookup1D", "x", x)
        values = _table_values("Lookup1D", y, (len(self.x),))
        self.y = values.tolist()
        self.extrapolation = extrapolation
        self._clip = _extrapolation("Lookup1D", extrapolation)

    def feedthrough(self):
        return {"y": ("u",)}

    def output(self, t, u):
        i, w = _cell("Lookup1D", "u", self.x, u[0], self._clip)
        y0 = self.y[i]
        return (y0 + w * (self.y[i + 1] - y0),)

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """The table's slope at the point; refused at a breakpoint where the slope changes."""
        return lf.differentiated(name, self, u0, step)


class Lookup2D(_Stateless, Block):
    """``y = f(u1, u2)``, bilinear in each cell of the grid ``x1 × x2`` of breakpoints, with
    ``table[i][j] = f(x1[i], x2[j])`` (rows: ``u1``, columns: ``u2``)::

        y = (1-a)(1-b)·f[i][j] + a(1-b)·f[i+1][j] + (1-a)b·f[i][j+1] + ab·f[i+1][j+1]

    with ``a``, ``b`` the weights of ``u1``, ``u2`` in their cells; outside the grid, each input
    separately as the module doc says."""

    inputs = ("u1", "u2")
    outputs = ("y",)

    def __init__(self, x1, x2, table, extrapolation: str = "clip"):
        self.x1 = _breakpoints("Lookup2D", "x1", x1)
        self.x2 = _breakpoints("Lookup2D", "x2", x2)
        self.table = _table_values("Lookup2D", table, (len(self.x1), len(self.x2))).tolist()
        self.extrapolation = extrapolation
        self._clip = _extrapolation("Lookup2D", extrapolation)

    def feedthrough(self):
        return {"y": self.inputs}

    def output(self, t, u):
        i, a = _cell("Lookup2D", "u1", self.x1, u[0], self._clip)
        j, b = _cell("Lookup2D", "u2", self.x2, u[1], self._clip)
        r0, r1 = self.table[i], self.table[i + 1]
        lo = r0[j] + b * (r0[j + 1] - r0[j])
        hi = r1[j] + b * (r1[j + 1] - r1[j])
        return (lo + a * (hi - lo),)

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """The table's partial slopes at the point; refused on a grid line where one changes."""
        return lf.differentiated(name, self, u0, step)


def _table_values(kind: str, values, shape: tuple[int, ...]) -> np.ndarray:
    """The table values as a float array of ``shape`` (the breakpoints' lengths), finite."""
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise BlockError(f"{kind}: table values must be numbers, got {values!r}") from None
    if v.shape != shape:
        raise BlockError(f"{kind}: table values have shape {v.shape}, the breakpoints need {shape}")
    if not np.all(np.isfinite(v)):
        raise BlockError(f"{kind}: table values have non-finite entries")
    return v
