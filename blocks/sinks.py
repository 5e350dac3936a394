"""Sinks: blocks with inputs only."""

from __future__ import annotations

import numpy as np

from mbsfmu.runner.block import Block

from .math_blocks import period, port_names


class Recorder(Block):
    """Logs its inputs at its own sample instants: ``update(t_k, u[k])`` appends ``t_k`` to
    :attr:`time` and ``u[k]`` (a tuple) to :attr:`data`.

    The diagram records every signal at every step anyway; a Recorder with ``sample_time`` a
    multiple of the step keeps a decimated log.  ``start`` clears the log; a snapshot is its length
    (so a rollback drops what was logged after it).
    """

    def __init__(self, inputs=("u",), *, sample_time: float | None = None):
        self.inputs = port_names("Recorder inputs", inputs)
        self.sample_time = period(sample_time)
        self.time: list[float] = []
        self.data: list[tuple[float, ...]] = []

    def start(self, t0, dt):
        self.time = []
        self.data = []

    def update(self, t, u):
        self.time.append(t)
        self.data.append(tuple(u))

    def to_array(self) -> np.ndarray:
        """``(N, 1 + len(inputs))`` array: the time in column 0, then the inputs in order."""
        out = np.empty((len(self.time), 1 + len(self.inputs)))
        if self.time:
            out[:, 0] = self.time
            out[:, 1:] = self.data
        return out

    def get_state(self):
        return len(self.time)

    def set_state(self, state):
        del self.time[state:]
        del self.data[state:]
