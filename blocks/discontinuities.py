"""Discontinuities: dead zone, quantizer and a relay with hysteresis (saturation and the rate
limiter are in :mod:`blocks.math_blocks`).  All have direct feed-through ``u -> y``."""

from __future__ import annotations

import math

from mbsfmu.runner import linear_form as lf
from mbsfmu.runner.block import SISO, BlockError
from mbsfmu.runner.scheduling import DiagramError

from .math_blocks import _Stateless, period, real


class DeadZone(_Stateless, SISO):
    """Dead zone (Simulink's *Dead Zone*): zero output inside ``[lower, upper]``, shifted input
    outside it::

        y = u - upper   for u > upper
        y = 0           for lower <= u <= upper
        y = u - lower   for u < lower

    ``lower <= upper``; the map is continuous with slope 1 outside the zone.
    """

    def __init__(self, lower: float, upper: float):
        self.lower = real("DeadZone lower", lower)
        self.upper = real("DeadZone upper", upper)
        if self.lower > self.upper:
            raise BlockError(f"DeadZone: lower {lower!r} > upper {upper!r}")

    def feedthrough(self):
        return {"y": ("u",)}

    def output(self, t, u):
        v = u[0]
        return (v - self.upper if v > self.upper else (v - self.lower if v < self.lower else 0.0),)

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """Slope 0 inside the zone, 1 outside; refused at its edges."""
        return lf.differentiated(name, self, u0, step)


class Quantizer(_Stateless, SISO):
    """Quantizer (Simulink's *Quantizer*): ``y = q · round(u / q)`` with ``q = interval > 0``,
    halves rounded away from zero (``round(2.5) = 3``, ``round(-2.5) = -3``), so the map is odd.
    """

    def __init__(self, interval: float):
        self.interval = real("Quantizer interval", interval)
        if self.interval <= 0.0:
            raise BlockError(f"Quantizer interval must be > 0, got {interval!r}")

    def feedthrough(self):
        return {"y": ("u",)}

    def output(self, t, u):
        q = self.interval
        return (q * math.copysign(math.floor(abs(u[0]) / q + 0.5), u[0]),)

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """Slope 0 between its steps; refused at a step (a jump)."""
        return lf.differentiated(name, self, u0, step)


class Relay(SISO):
    """Relay with hysteresis (Simulink's *Relay*).  It switches on when ``u >= on_point``, off
    when ``u <= off_point`` and otherwise keeps its previous state; ``y = on_value`` when on,
    ``off_value`` when off.  ``off_point <= on_point`` (equal: a plain comparator); ``initial``
    (``"off"`` by default, or ``"on"``) is the state before the first sample.

    Direct feed-through: the state after the switching rule at ``t_k`` is decided by ``u[k]`` and
    shown at once; ``update`` keeps it for the next sample.
    """

    def __init__(self, on_point: float, off_point: float, on_value: float = 1.0,
                 off_value: float = 0.0, *, initial: str = "off", sample_time: float | None = None):
        self.on_point = real("Relay on_point", on_point)
        self.off_point = real("Relay off_point", off_point)
        if self.off_point > self.on_point:
            raise BlockError(f"Relay: off_point {off_point!r} must be <= on_point {on_point!r} "
                             "(the hysteresis band is [off_point, on_point])")
        self.on_value = real("Relay on_value", on_value)
        self.off_value = real("Relay off_value", off_value)
        if initial not in ("off", "on"):
            raise BlockError(f"Relay initial must be 'off' or 'on', got {initial!r}")
        self.initial = initial
        self.sample_time = period(sample_time)
        self._on = initial == "on"

    def feedthrough(self):
        return {"y": ("u",)}

    def start(self, t0, dt):
        self._on = self.initial == "on"

    def _state(self, v: float) -> bool:
        if v >= self.on_point:
            return True
        if v <= self.off_point:
            return False
        return self._on

    def output(self, t, u):
        return (self.on_value if self._state(u[0]) else self.off_value,)

    def update(self, t, u):
        self._on = self._state(u[0])

    @property
    def on(self) -> bool:
        """The relay's state for the next sample."""
        return self._on

    def get_state(self):
        return self._on

    def set_state(self, state):
        self._on = state

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """Locally constant (a gain 0) away from its switching points, refused at one."""
        if u0[0] in (self.on_point, self.off_point) and self.on_value != self.off_value:
            raise DiagramError(f"block {name!r} (Relay) is at its switching point u = {u0[0]:.6g} "
                               "at the operating point: its output jumps there (no derivative)")
        return lf.static([[0.0]])
