"""Input values over time for a run of a NumericModel: the model's defaults, constants given by
name (set into the model's ``u``), or functions of t (called at every evaluation).

Both backends take the inputs from here: the reference formulations call the schedule at every
right-hand side, the engine receives it as its input function (or the constants as values).
"""

from __future__ import annotations

import math

from ..core.errors import ParameterError, SimulationError


class InputSchedule:
    """Input values over time: model defaults, constants or functions of t."""

    def __init__(self, numeric, inputs=None):
        self.numeric = numeric
        names = numeric.input_names
        self._fns = []
        for k, v in (inputs or {}).items():
            if k not in names:
                raise ParameterError(f"unknown input {k!r} (inputs: {', '.join(names) or 'none'})")
            if callable(v):
                self._fns.append((names.index(k), k, v))
            else:
                numeric.set_inputs({k: v})

    @property
    def time_varying(self) -> bool:
        """True if some input is a function of time (else the model's ``u`` holds them all)."""
        return bool(self._fns)

    def __call__(self, t):
        u = self.numeric.u
        if self._fns:
            u = u.copy()
            for i, name, fn in self._fns:
                val = float(fn(t))
                if not math.isfinite(val):
                    raise SimulationError(f"input {name!r} is not finite at t={t:.6g}: {val}")
                u[i] = val
        return u
