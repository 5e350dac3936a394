"""Discrete blocks: zero-order hold, memory, and a discrete-time integrator with limits.

(The unit delay is :class:`~blocks.math_blocks.UnitDelay`, the N-sample delay
:class:`~blocks.delays.Delay`.)
"""

from __future__ import annotations

import math

import numpy as np

from mbsfmu.runner import linear_form as lf
from mbsfmu.runner.block import SISO, BlockError

from .math_blocks import UnitDelay, _Stateless, period, real


class ZeroOrderHold(_Stateless, SISO):
    """Zero-order hold (Simulink's *Zero-Order Hold*): samples ``u`` every ``sample_time`` seconds
    and holds it, ``y(t) = u(t_j)`` for ``t_j <= t < t_j + sample_time``.

    The runner calls a block only at its own sample instants and holds its outputs in between,
    so the block passes ``u`` through at its instants (direct feed-through).  ``sample_time`` is
    required (a positive integer multiple of the diagram's step): without it the block would
    hold for one step, which is no hold at all.
    """

    def __init__(self, sample_time: float):
        if sample_time is None:
            raise BlockError("ZeroOrderHold needs a sample_time (the hold period, a multiple of "
                             "the diagram's step)")
        self.sample_time = period(sample_time)

    def feedthrough(self):
        return {"y": ("u",)}

    def output(self, t, u):
        return (u[0],)

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """A gain 1 (the loop is linearized at the diagram's step)."""
        return lf.static([[1.0]])


class Memory(UnitDelay):
    """Memory (Simulink's *Memory*): the input of the previous diagram step, ``y[k] = u[k-1]``,
    ``y[0] = initial``.  A :class:`~blocks.math_blocks.UnitDelay` that always runs at the diagram's
    step (it has no ``sample_time`` of its own).  No direct feed-through: it breaks algebraic loops.
    """

    def __init__(self, initial: float = 0.0):
        super().__init__(initial)


class DiscreteIntegrator(SISO):
    """Discrete-time integrator, forward Euler, with limits (Simulink's *Discrete-Time Integrator*
    with "limit output").  With the block's period ``T``::

        y[k]   = x[k]
        x[k+1] = min(max(x[k] + gain · T · u[k], lower), upper)        x[0] = initial

    The state itself is clamped to ``[lower, upper]`` (anti-windup by clamping): while the input
    pushes into a limit the integral stays at it instead of winding up, and it leaves the limit
    at the first sample the input changes sign.  No direct feed-through (forward Euler: ``y[k]``
    does not depend on ``u[k]``), so it breaks algebraic loops.  Limits may be ±inf;
    ``lower <= initial <= upper``.
    """

    discrete_only = True  # a difference equation: no continuous linear form

    def __init__(self, gain: float = 1.0, initial: float = 0.0, *, lower: float = -math.inf,
                 upper: float = math.inf, sample_time: float | None = None):
        self.gain = real("DiscreteIntegrator gain", gain)
        self.initial = real("DiscreteIntegrator initial", initial)
        self.lower = real("DiscreteIntegrator lower", lower, finite=False)
        self.upper = real("DiscreteIntegrator upper", upper, finite=False)
        if not self.lower < self.upper:
            raise BlockError(f"DiscreteIntegrator: lower {lower!r} must be less than upper {upper!r}")
        if not self.lower <= self.initial <= self.upper:
            raise BlockError(f"DiscreteIntegrator: initial {initial!r} is outside the limits "
                             f"[{lower!r}, {upper!r}]")
        self.sample_time = period(sample_time)
        self._x = self.initial
        self._kT = 0.0

    def start(self, t0, dt):
        self._x = self.initial
        self._kT = self.gain * dt

    def output(self, t, u):
        return (self._x,)

    def update(self, t, u):
        x = self._x + self._kT * u[0]
        self._x = self.lower if x < self.lower else (self.upper if x > self.upper else x)

    def get_state(self):
        return self._x

    def set_state(self, state):
        self._x = state

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """x[k+1] = x[k] + gain T u[k], its output strictly inside its limits at the point."""
        lf.inside(name, self, y0[0], self.lower, self.upper, "its output")
        return lf.LinearForm(np.eye(1), np.array([[self.gain * step]]), np.eye(1), np.zeros((1, 1)), ["x"])
