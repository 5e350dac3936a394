"""Delays: an integer number of samples (``z^-N``) and a transport (dead-time) delay ``e^(-τs)``.

Neither has direct feed-through (their output at ``t_k`` depends only on inputs before ``t_k``),
so either breaks an algebraic loop, as :class:`~blocks.math_blocks.UnitDelay` does.  Both keep
their past inputs in a ring buffer that is their state: :meth:`get_state` / :meth:`set_state`
carry it, so the runner's rollback checkpoints and the FMU states of a block exported with
:func:`mbsfmu.runner.block_fmu.export_block_fmu` restore it.
"""

from __future__ import annotations

import copy
import math

from mbsfmu.runner import linear_form as lf
from mbsfmu.runner.block import SISO, BlockError

from .math_blocks import count, period, real

#: a delay within this fraction of a whole number of periods counts as that whole number
WHOLE_PERIODS_RTOL = 1e-9


class _Ring:
    """The last ``n`` inputs, newest first by :meth:`back` (``back(1)`` is the previous input).

    A fixed list and a write position: one store per sample, no allocation."""

    __slots__ = ("buf", "pos")

    def __init__(self, n: int, fill: float):
        self.buf = [fill] * n
        self.pos = 0  # where the next input goes (= the oldest entry)

    def push(self, value: float) -> None:
        self.buf[self.pos] = value
        self.pos = (self.pos + 1) % len(self.buf)

    def back(self, j: int) -> float:
        """The input ``j`` samples ago, ``1 <= j <= n``."""
        return self.buf[(self.pos - j) % len(self.buf)]

    def snapshot(self):
        return (tuple(self.buf), self.pos)

    def restore(self, state) -> None:
        buf, self.pos = state
        self.buf = list(buf)


class Delay(SISO):
    """Integer delay ``z^-N`` (Simulink's *Delay*): ``y[k] = u[k-N]``, and ``y[k] = initial`` for
    ``k < N``.  ``steps = N >= 1`` samples of the block's period.  No direct feed-through.

    A step in ``u`` at sample ``k0`` appears in ``y`` at sample ``k0 + N`` exactly (the values
    are copied, not interpolated).  ``Delay(1)`` is :class:`~blocks.math_blocks.UnitDelay`.
    """

    discrete_only = True  # a difference equation: no continuous linear form

    def __init__(self, steps: int, initial: float = 0.0, *, sample_time: float | None = None):
        self.steps = count("Delay steps", steps, 1, " (a delay of 0 samples is a direct connection)")
        self.initial = real("Delay initial", initial)
        self.sample_time = period(sample_time)
        self._ring = _Ring(self.steps, self.initial)

    def start(self, t0, dt):
        self._ring = _Ring(self.steps, self.initial)

    def output(self, t, u):
        return (self._ring.back(self.steps),)

    def update(self, t, u):
        self._ring.push(u[0])

    def get_state(self):
        return self._ring.snapshot()

    def set_state(self, state):
        self._ring.restore(state)

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """z⁻ᴺ: a shift register of N states."""
        return lf.shift(self.steps, [0.0] * (self.steps - 1) + [1.0])


class TransportDelay(SISO):
    """Transport delay ``y(t) = u(t - τ)`` (Simulink's *Transport Delay*), ``τ = delay`` seconds.

    The input is known at the sample instants ``t_j = t0 + j·T`` (``T``: the block's period) and
    taken as linear between them.  With ``τ / T = n + f`` (``n`` whole, ``0 <= f < 1``) the
    delayed instant ``t_k - τ`` lies between ``t_{k-n-1}`` and ``t_{k-n}``, so::

        y[k] = (1 - f) · u[k-n] + f · u[k-n-1]        for t_k - τ >= t0
        y[k] = initial                                for t_k - τ <  t0

    For a whole number of periods (``f = 0``, within 1e-9) this is ``Delay(n)`` exactly; for an
    input that is linear in time it is exact; otherwise its error is that of linear
    interpolation, at most ``T² · max|ü| / 8``.

    ``τ`` must be at least one period (checked at ``start``, when the period is known): then the
    output reads only past inputs and the block has no direct feed-through, so it breaks
    algebraic loops.  A shorter dead time is below the diagram's time resolution: run the diagram
    (or this block) with a smaller step.  The state is a ring buffer of the last ``n + 1`` inputs
    and the number of samples taken (capped), carried in snapshots.
    """

    def __init__(self, delay: float, initial: float = 0.0, *, sample_time: float | None = None):
        self.delay = real("TransportDelay delay", delay)
        if self.delay <= 0.0:
            raise BlockError(f"TransportDelay delay must be > 0 s, got {delay!r}")
        self.initial = real("TransportDelay initial", initial)
        self.sample_time = period(sample_time)
        self._n, self._f, self._ratio = 1, 0.0, 1.0
        self._ring = _Ring(2, self.initial)
        self._k = 0

    def start(self, t0, dt):
        ratio = self.delay / dt
        if ratio < 1.0 - WHOLE_PERIODS_RTOL:
            raise BlockError(f"TransportDelay: delay {self.delay:g} s is shorter than the block's "
                             f"period {dt:g} s; a dead time below one period needs a smaller step "
                             f"(the diagram's step or this block's sample_time)")
        n = math.floor(ratio)
        if ratio - n > 1.0 - WHOLE_PERIODS_RTOL * ratio:
            n += 1
        f = ratio - n
        if abs(f) <= WHOLE_PERIODS_RTOL * ratio:
            f = 0.0
        self._n, self._f, self._ratio = n, f, ratio
        self._ring = _Ring(n + 1, self.initial)
        self._k = 0

    def output(self, t, u):
        if self._k < self._ratio - WHOLE_PERIODS_RTOL * self._ratio:
            return (self.initial,)
        ring, f = self._ring, self._f
        newer = ring.back(self._n)
        return (newer if f == 0.0 else newer + f * (ring.back(self._n + 1) - newer),)

    def update(self, t, u):
        self._ring.push(u[0])
        if self._k <= self._n:
            self._k += 1

    def get_state(self):
        return (self._ring.snapshot(), self._k)

    def set_state(self, state):
        ring, self._k = state
        self._ring.restore(ring)

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """Continuous: the Padé approximant of e^(-τs) of ``pade_order``; discrete: its own
        interpolation between shifts, y = (1-f) u[k-n] + f u[k-n-1] (τ/T = n + f), n + 1 states."""
        if domain == "discrete":
            probe = copy.deepcopy(self)
            probe.start(0.0, step)
            n, f = probe._n, probe._f
            taps = [0.0] * (n + 1)
            taps[n - 1], taps[n] = 1.0 - f, f
            return lf.shift(n + 1, taps)
        from scipy.signal import tf2ss

        A, B, C, D = tf2ss(*lf.pade(self.delay, pade_order))
        return lf.LinearForm(A, B, C, D, [f"pade{i + 1}" for i in range(pade_order)])
