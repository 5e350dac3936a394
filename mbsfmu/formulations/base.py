"""The interface every formulation offers to the integrator.

A formulation turns the equations of motion (and constraints) into a first-order system
x' = F(t, x) with x = [y, y'], plus an optional projection ``project(t, x) -> x`` applied after
every accepted step (ARCHITECTURE.md: "a function f(t, x, u, p) -> x' plus an optional
project(t, x, p) -> x").  Inputs are held by an :class:`InputSchedule`.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError, SimulationError


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


class Formulation:
    """Base class: x' = F(t, x) with x = [y, y'] and an optional projection."""

    name = "base"
    #: True if ``project`` does something (the integrator then calls it after each step)
    projects = False
    #: True if the formulation copes with redundant (rank-deficient) constraints
    handles_redundant = False

    def __init__(self, numeric, inputs=None):
        self.numeric = numeric
        self.f = numeric.f
        self.m = numeric.m
        self.inputs = inputs if isinstance(inputs, InputSchedule) else InputSchedule(numeric, inputs)
        self.nfev = 0

    def __call__(self, t, x):
        self.nfev += 1
        return self.rhs(t, x)

    def rhs(self, t, x):  # pragma: no cover - abstract
        raise NotImplementedError

    def project(self, t, x):
        return x

    def where(self, t, y) -> str:
        """'at t=... (x=..., alpha=...)' for error messages."""
        state = ", ".join(f"{n}={v:.6g}" for n, v in zip(self.numeric.coordinate_names, y))
        return f"at t={t:.6g} ({state})"

    def multipliers(self, t, x):
        """Lagrange multipliers lambda of M y'' + k = q + C^T lambda (seed 000 eq. 3) with
        y'' consistent with C y'' + b'' = 0 (eq. 8)."""
        f = self.f
        y, yd = x[:f], x[f:]
        M, h, c, C, b1, b2 = self.numeric.constrained_parts(t, y, yd, self.inputs(t))
        try:
            return kkt_solve(M, h, C, b2)[1]
        except np.linalg.LinAlgError:
            # redundant constraints: the multipliers are not unique; give the minimum-norm ones
            f, m = self.f, self.m
            K = np.block([[M, C.T], [C, np.zeros((m, m))]])
            sol = np.linalg.lstsq(K, np.concatenate((h, -b2)), rcond=None)[0]
            return -sol[f:]


def kkt_solve(M, h, C, b2):
    """Solve eq. (8) of seed 000:  [[M, C^T], [C, 0]] [y''; -lambda] = [q - k; -b''].

    Returns (y'', lambda); raises numpy.linalg.LinAlgError if the matrix is singular."""
    f, m = M.shape[0], C.shape[0]
    K = np.zeros((f + m, f + m))
    K[:f, :f] = M
    K[:f, f:] = C.T
    K[f:, :f] = C
    rhs = np.concatenate((h, -b2))
    sol = np.linalg.solve(K, rhs)
    return sol[:f], -sol[f:]
