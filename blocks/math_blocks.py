"""Math blocks: gain, sum, saturation, rate limiter, unit delay and a wrapped Python function.

All ports are ``Real``.  The hot paths (``output`` / ``update``) use plain floats.  The parameter
checks that the other block families share (:func:`real`, :func:`count`, :func:`period`,
:func:`port_names`) live here too.
"""

from __future__ import annotations

import math
import numbers

from mbsfmu.runner import linear_form as lf
from mbsfmu.runner.block import SISO, Block, BlockError
from mbsfmu.runner.scheduling import DiagramError

# -- parameter checks shared by the block families ------------------------------------------------


def real(name: str, value, *, finite: bool = True) -> float:
    """``value`` as a float; BlockError naming ``name`` if it is not a number (or not finite)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise BlockError(f"{name} must be a real number, got {value!r}") from None
    if math.isnan(x) or (finite and math.isinf(x)):
        raise BlockError(f"{name} must be {'finite' if finite else 'a number'}, got {value!r}")
    return x


def count(name: str, value, minimum: int, why: str = "") -> int:
    """``value`` as an int ``>= minimum`` (an integral float such as ``3.0`` is accepted);
    BlockError naming ``name`` otherwise, with ``why`` appended to the range message."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, float)) or (
            isinstance(value, float) and not value.is_integer()):
        raise BlockError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    if value < minimum:
        raise BlockError(f"{name} must be >= {minimum}{why}, got {value!r}")
    return int(value)


def period(value) -> float | None:
    """A block's ``sample_time``: None (the diagram's step) or a positive finite number."""
    if value is None:
        return None
    ts = real("sample_time", value)
    if ts <= 0.0:
        raise BlockError(f"sample_time must be positive (or None for the diagram's step), got {value!r}")
    return ts


def port_names(kind: str, names) -> tuple[str, ...]:
    """A tuple of distinct port names (non-empty strings without ``.``)."""
    if isinstance(names, str):
        names = (names,)
    try:
        names = tuple(names)
    except TypeError:
        raise BlockError(f"{kind} must be a sequence of port names, got {names!r}") from None
    for n in names:
        if not isinstance(n, str) or not n or "." in n:
            raise BlockError(f"{kind}: port name {n!r} must be a non-empty string without '.'")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise BlockError(f"{kind}: duplicate port name(s) {', '.join(dup)}")
    return names


class _Stateless(Block):
    """A block without state: snapshots are empty."""

    def get_state(self):
        return ()

    def set_state(self, state) -> None:
        pass


# -- blocks ---------------------------------------------------------------------------------------


class Gain(_Stateless, SISO):
    """``y[k] = k · u[k]`` (direct feed-through)."""

    def __init__(self, k: float):
        self.k = real("gain k", k)

    def feedthrough(self):
        return {"y": ("u",)}

    def output(self, t, u):
        return (self.k * u[0],)

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """y = k u."""
        return lf.static([[self.k]])


class Sum(_Stateless, Block):
    """``y[k] = Σ_i s_i · u_i[k]`` with ``s_i = ±1`` from ``signs`` (direct feed-through).

    ``signs`` is a string of ``+`` and ``-``, one per input; the inputs are ``u1, u2, …``.
    """

    outputs = ("y",)

    def __init__(self, signs: str = "+-"):
        if not isinstance(signs, str) or not signs or set(signs) - {"+", "-"}:
            raise BlockError(f"Sum: signs must be a non-empty string of '+' and '-', got {signs!r}")
        self.signs = signs
        self._s = tuple(1.0 if c == "+" else -1.0 for c in signs)
        self.inputs = tuple(f"u{i + 1}" for i in range(len(signs)))

    def feedthrough(self):
        return {"y": self.inputs}

    def output(self, t, u):
        y = 0.0
        for s, v in zip(self._s, u):
            y += s * v
        return (y,)

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """y = Σ ±u_i."""
        return lf.static([list(self._s)])


class Saturation(_Stateless, SISO):
    """``y[k] = min(max(u[k], lower), upper)`` (direct feed-through; limits may be ±inf)."""

    def __init__(self, lower: float, upper: float):
        self.lower = real("Saturation lower", lower, finite=False)
        self.upper = real("Saturation upper", upper, finite=False)
        if self.lower > self.upper:
            raise BlockError(f"Saturation: lower {lower!r} > upper {upper!r}")

    def feedthrough(self):
        return {"y": ("u",)}

    def output(self, t, u):
        return (min(max(u[0], self.lower), self.upper),)

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """Slope 1 inside the limits, 0 outside; refused at a limit (a kink)."""
        return lf.differentiated(name, self, u0, step)


class RateLimiter(SISO):
    """Discrete rate limiter (slew rates in units per second, as Simulink's *Rate Limiter*).

    With period ``T`` and ``y[k-1]`` the previous output (the state)::

        y[k] = y[k-1] + min(max(u[k] - y[k-1], falling·T), rising·T)

    ``rising >= 0``, ``falling <= 0`` (default ``-rising``); either may be infinite.  At the first
    sample ``y[0] = u[0]`` unless ``initial`` gives ``y[-1]``.  Direct feed-through ``u → y``.
    """

    def __init__(self, rising: float, falling: float | None = None, *, initial: float | None = None,
                 sample_time: float | None = None):
        self.rising = real("RateLimiter rising", rising, finite=False)
        self.falling = -self.rising if falling is None else real("RateLimiter falling", falling,
                                                                  finite=False)
        if self.rising < 0.0:
            raise BlockError(f"RateLimiter: rising slew rate must be >= 0, got {rising!r}")
        if self.falling > 0.0:
            raise BlockError(f"RateLimiter: falling slew rate must be <= 0 (a negative rate, as in "
                             f"Simulink), got {falling!r}")
        self.initial = None if initial is None else real("RateLimiter initial", initial)
        self.sample_time = period(sample_time)
        self._up = self._down = 0.0
        self._prev = self.initial

    def feedthrough(self):
        return {"y": ("u",)}

    def start(self, t0, dt):
        self._up = self.rising * dt
        self._down = self.falling * dt
        self._prev = self.initial

    def output(self, t, u):
        prev = self._prev
        if prev is None:
            return (u[0],)
        return (prev + min(max(u[0] - prev, self._down), self._up),)

    def update(self, t, u):
        self._prev = self.output(t, u)[0]

    def get_state(self):
        return self._prev

    def set_state(self, state):
        self._prev = state

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """A gain 1 where it does not limit at the point (y = u); refused where it does."""
        if u0[0] != y0[0]:
            raise DiagramError(f"block {name!r} (RateLimiter) limits its slew at the operating point "
                               f"(u = {u0[0]:.6g}, y = {y0[0]:.6g}): no linear form there")
        return lf.static([[1.0]])


class UnitDelay(SISO):
    """Unit delay ``z^-1`` (Simulink's *Unit Delay*): ``y[k] = u[k-1]``, ``y[0] = initial``.

    The state is the input of the previous sample.  No direct feed-through, so it breaks an
    algebraic loop: a loop ``x[k+1] = a x[k] + b`` closed through it gives the discrete
    trajectory ``x[k] = a^k x[0] + b (1 - a^k) / (1 - a)`` exactly.
    """

    discrete_only = True  # a difference equation: no continuous linear form

    def __init__(self, initial: float = 0.0, *, sample_time: float | None = None):
        self.initial = real(f"{type(self).__name__} initial", initial)
        self.sample_time = period(sample_time)
        self._held = self.initial

    def start(self, t0, dt):
        self._held = self.initial

    def output(self, t, u):
        return (self._held,)

    def update(self, t, u):
        self._held = u[0]

    def get_state(self):
        return self._held

    def set_state(self, state):
        self._held = state

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """z⁻¹: one shift state."""
        return lf.shift(1, [1.0])


class Function(Block):
    """A Python callable as a block: ``y = fn(t, *u)``.

    ``fn`` returns a number when there is one output, else a sequence of ``len(outputs)`` numbers.

    ``feedthrough=True``: ``y[k] = fn(t_k, u[k])``, a static map evaluated in ``output``.
    ``feedthrough=False``: the outputs lag one sample, ``y[k] = fn(t_{k-1}, u[k-1])`` (computed
    in ``update``; ``y[0] = initial``), like a controller whose computation takes one period.
    This is what breaks an algebraic loop.  ``fn``'s own internal state (if any) is not part of
    the block's snapshots.
    """

    def __init__(self, fn, inputs=("u",), outputs=("y",), feedthrough: bool = True,
                 sample_time: float | None = None, *, initial=0.0):
        if not callable(fn):
            raise BlockError(f"Function: fn must be callable, got {fn!r}")
        self.fn = fn
        self.name = getattr(fn, "__qualname__", None) or repr(fn)
        self.inputs = port_names(f"Function {self.name} inputs", inputs)
        self.outputs = port_names(f"Function {self.name} outputs", outputs)
        if not self.outputs:
            raise BlockError(f"Function {self.name}: needs at least one output")
        self._feedthrough = bool(feedthrough)
        self.sample_time = period(sample_time)
        n = len(self.outputs)
        if isinstance(initial, (int, float)):
            initial = (initial,) * n
        initial = tuple(real(f"Function {self.name} initial", v) for v in initial)
        if len(initial) != n:
            raise BlockError(f"Function {self.name}: initial has {len(initial)} values for {n} outputs")
        self.initial = initial
        self._held = initial

    def feedthrough(self):
        return {y: self.inputs for y in self.outputs} if self._feedthrough else {}

    def _call(self, t, u):
        try:
            r = self.fn(t, *u)
        except BlockError:
            raise
        except Exception as exc:
            raise BlockError(f"Function {self.name} raised {type(exc).__name__}: {exc}") from exc
        n = len(self.outputs)
        if n == 1 and not isinstance(r, (tuple, list)):
            try:
                return (float(r),)
            except (TypeError, ValueError):
                pass
        try:
            out = tuple(float(v) for v in r)
        except (TypeError, ValueError):
            raise BlockError(f"Function {self.name} returned {r!r}, not {n} number(s)") from None
        if len(out) != n:
            raise BlockError(f"Function {self.name} returned {len(out)} value(s) for {n} output(s) "
                             f"{', '.join(self.outputs)}")
        return out

    def start(self, t0, dt):
        self._held = self.initial

    def output(self, t, u):
        return self._call(t, u) if self._feedthrough else self._held

    def update(self, t, u):
        if not self._feedthrough:
            self._held = self._call(t, u)

    def get_state(self):
        return self._held

    def set_state(self, state):
        self._held = state

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """With feed-through: its Jacobian at the point (central differences); without, refused."""
        if not self._feedthrough:
            raise DiagramError(f"block {name!r} (Function without feed-through): a Python function "
                               "delayed by one sample has no linear form here; give it feedthrough=True "
                               "and a UnitDelay after it")
        return lf.differentiated(name, self, u0, step)
