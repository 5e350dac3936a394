"""Numbers for the symbols of a LagrangianSystem at its start, for the checks made when an element
is declared (a mass, length or damping that has a value there must be possible; T positive
semi-definite; constraints independent): coordinates and rates at their initial values, t = 0,
constants at their defaults, time parameters given by expressions at t = 0.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .names import t


def number(e) -> float | None:
    """float(e) if e is a finite real number, else None."""
    try:
        v = complex(e)
    except (TypeError, ValueError):
        return None
    return v.real if v.imag == 0 and np.isfinite(v.real) else None


def shown(e: sp.Expr, value: float) -> str:
    """'-1' for a number, 'l = -1 (its value at the start)' for an expression."""
    return f"{value:g}" if e.is_number else f"{e} = {value:g} (its value at the start)"


class StartValues:
    """The values at the start (a part of :class:`~mbsfmu.model.LagrangianSystem`)."""

    def _start_values(self, rng=None) -> dict:
        """Numbers for the declared symbols: the coordinates at their initial values (with
        ``rng``: perturbed by N(0, 0.3)), the rates at their initial values, t = 0, constants
        at their defaults and time parameters at t = 0 where those exist (the others are left
        symbolic)."""
        out = {t: 0.0}
        for c in self.coordinates_.values():
            out[c.symbol] = c.initial + (float(rng.normal(0.0, 0.3)) if rng is not None else 0.0)
            out[c.velocity] = c.initial_velocity
        out.update({c.symbol: c.value for c in self.constants_.values() if c.value is not None})
        for p in self.time_parameters.values():
            if p.expressions is not None:
                for sym, e in zip((p.symbol, p.velocity, p.acceleration), p.expressions):
                    value = number(e.xreplace(out))
                    if value is not None:
                        out[sym] = value
        return out

    def _at_start(self, e: sp.Expr) -> float | None:
        """The value of a property (mass, length) at the start, or None if it depends on a
        symbol without a value (a constant without default)."""
        return number(sp.sympify(e).xreplace(self._start_values()))
