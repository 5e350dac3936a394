"""Shared helpers of the runner and block tests: stepping one block by hand, tiny test blocks.

The tiny blocks are not block types of the registry (mbsfmu.runner.block.BLOCK_TYPES): their
``type_name`` is private, since the first class of a name keeps it and ``Gain`` or ``Sum``
imported from here before ``blocks`` would take the standard blocks' names in every later test."""

import numpy as np

from mbsfmu.runner import SISO, Block


def step_block(block, u, n, dt=0.1, t0=0.0):
    """Outputs of ``block`` at ``t_k = t0 + k·dt``, k < n, with inputs ``u(t_k)`` (``None``: no
    inputs), stepped by the block interface's rules (output, then update), as an (n, p) array."""
    inputs = (lambda t: ()) if u is None else u
    block.start(t0, dt)
    ys = []
    for k in range(n):
        t = t0 + k * dt
        ys.append(list(block.output(t, inputs(t))))
        block.update(t, inputs(t))
    block.stop()
    return np.array(ys)


class Const(Block):
    """y = value."""

    type_name = "_test_const"

    outputs = ("y",)

    def __init__(self, value=1.0):
        self.value = value

    def output(self, t, u):
        return (self.value,)


class Clock(Block):
    """y = t (no inputs)."""

    type_name = "_test_clock"

    outputs = ("y",)

    def output(self, t, u):
        return (t,)


class Gain(SISO):
    """y = k u with direct feed-through; counts its output calls."""

    type_name = "_test_gain"

    def __init__(self, k=1.0):
        self.k = k
        self.calls = 0

    def feedthrough(self):
        return {"y": ("u",)}

    def output(self, t, u):
        self.calls += 1
        return (self.k * u[0],)


class Sum(Block):
    """y = s1 u1 + s2 u2 with signs from a string like "+-"."""

    type_name = "_test_sum"

    inputs = ("u1", "u2")
    outputs = ("y",)

    def __init__(self, signs="++"):
        self.s = [1.0 if c == "+" else -1.0 for c in signs]

    def feedthrough(self):
        return {"y": ("u1", "u2")}

    def output(self, t, u):
        return (self.s[0] * u[0] + self.s[1] * u[1],)
