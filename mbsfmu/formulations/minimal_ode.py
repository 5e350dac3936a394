"""First-order form of the minimal equations of motion of a tree-structured system.

With the state x = [y, y'] (seed 002 eq. 11):

    x' = [ y',  M(y,t)^-1 (q(y,y',t,u) - k(y,y',t)) ].
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError, SimulationError


class MinimalODE:
    """Callable ``x' = F(t, x)`` for scipy, with inputs given as constants or functions of t."""

    def __init__(self, numeric, inputs=None):
        self.numeric = numeric
        self.f = numeric.f
        self.nfev = 0
        names = numeric.input_names
        self._input_fns = []
        for k, v in (inputs or {}).items():
            if k not in names:
                raise ParameterError(f"unknown input {k!r} (inputs: {', '.join(names) or 'none'})")
            if callable(v):
                self._input_fns.append((names.index(k), k, v))
            else:
                numeric.set_inputs({k: v})

    def inputs_at(self, t):
        u = self.numeric.u
        if self._input_fns:
            u = u.copy()
            for i, name, fn in self._input_fns:
                val = float(fn(t))
                if not math.isfinite(val):
                    raise SimulationError(f"input {name!r} is not finite at t={t:.6g}: {val}")
                u[i] = val
        return u

    def __call__(self, t, x):
        self.nfev += 1
        f = self.f
        y, yd = x[:f], x[f:]
        ydd = self.numeric.accelerations(t, y, yd, self.inputs_at(t))
        return np.concatenate((yd, ydd))
