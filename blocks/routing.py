"""Signal routing: a two-way switch and a multiport selector.  Both are static maps with direct
feed-through from every input."""

from __future__ import annotations

import math

from mbsfmu.runner import linear_form as lf
from mbsfmu.runner.block import Block, BlockError

from .math_blocks import _Stateless, count, real

CRITERIA = (">=", ">", "!=0")
#: a selector index within this distance of a whole number counts as that number
INDEX_TOL = 1e-9


class Switch(_Stateless, Block):
    """Two-way switch (Simulink's *Switch*): ``y = u1`` if ``control`` passes the criterion, else
    ``u2``.  ``criterion``: ``">="`` (``control >= threshold``, default), ``">"`` (``control >
    threshold``) or ``"!=0"`` (``control != 0``; ``threshold`` unused).  Inputs ``u1``,
    ``control``, ``u2``; ``y`` depends directly on all three."""

    inputs = ("u1", "control", "u2")
    outputs = ("y",)

    def __init__(self, threshold: float = 0.0, criterion: str = ">="):
        self.threshold = real("Switch threshold", threshold)
        if criterion not in CRITERIA:
            raise BlockError(f"Switch criterion must be one of {', '.join(map(repr, CRITERIA))}, "
                             f"got {criterion!r}")
        self.criterion = criterion

    def feedthrough(self):
        return {"y": self.inputs}

    def output(self, t, u):
        c = u[1]
        if self.criterion == ">=":
            first = c >= self.threshold
        elif self.criterion == ">":
            first = c > self.threshold
        else:
            first = c != 0.0
        return (u[0] if first else u[2],)

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """The input it passes at the point (gain 1); refused at its threshold."""
        return lf.differentiated(name, self, u0, step)


class MultiportSwitch(_Stateless, Block):
    """Multiport selector (Simulink's *Multiport Switch*): ``y = u_i`` with ``i = index``, one of
    ``1 .. n`` (``n = ports``).  Inputs ``index``, ``u1 … un``; ``y`` depends directly on all.

    ``index`` must be a whole number (within 1e-9: a computed 2.0000000001 selects ``u2``).  An
    index outside ``1 .. n`` or not whole raises BlockError (``out_of_range="error"``, default), or
    with ``"clip"`` is rounded and clipped into ``1 .. n``.
    """

    outputs = ("y",)

    def __init__(self, ports: int, out_of_range: str = "error"):
        self.ports = count("MultiportSwitch ports", ports, 2)
        if out_of_range not in ("error", "clip"):
            raise BlockError(f"MultiportSwitch out_of_range must be 'error' or 'clip', got "
                             f"{out_of_range!r}")
        self.out_of_range = out_of_range
        self.inputs = ("index",) + tuple(f"u{i + 1}" for i in range(self.ports))

    def feedthrough(self):
        return {"y": self.inputs}

    def output(self, t, u):
        c = u[0]
        i = round(c) if math.isfinite(c) else None
        if i is None or abs(c - i) > INDEX_TOL or not 1 <= i <= self.ports:
            if self.out_of_range == "error" or i is None:
                raise BlockError(f"MultiportSwitch: index {c!r} is not one of 1..{self.ports}"
                                 + ("" if i is None else " (out_of_range='error')"))
            i = min(max(i, 1), self.ports)
        return (u[i],)

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """The port its index selects at the point (the index selects: not differentiated)."""
        return lf.differentiated(name, self, u0, step, skip=("index",))
