"""Sources: blocks without inputs whose output ``y`` is a function of time only.

Each evaluates its formula at the sample instant ``t`` (the value is then held over the period).
"""

from __future__ import annotations

import bisect
import csv
import math
import os

import numpy as np

from mbsfmu.runner.block import Block, BlockError

from .math_blocks import _Stateless, real


class _Source(_Stateless, Block):
    outputs = ("y",)
    #: a linearized loop takes its output as an input of the loop
    source = True


class Constant(_Source):
    """``y(t) = value``."""

    def __init__(self, value: float):
        self.value = real("Constant value", value)
        self._y = (self.value,)

    def output(self, t, u):
        return self._y


class Step(_Source):
    """``y(t) = before`` for ``t < time``, ``after`` for ``t >= time``.

    The step appears at the first sample instant ``t >= time``; a sample instant that misses
    ``time`` only by rounding (by less than 1e-9 of the period) counts as reaching it.
    """

    def __init__(self, time: float = 0.0, before: float = 0.0, after: float = 1.0):
        self.time = real("Step time", time)
        self.before = real("Step before", before)
        self.after = real("Step after", after)
        self._t_switch = self.time

    def start(self, t0, dt):
        self._t_switch = self.time - 1e-9 * dt

    def output(self, t, u):
        return (self.after if t >= self._t_switch else self.before,)


class Ramp(_Source):
    """``y(t) = initial + slope · max(0, t - start)``."""

    def __init__(self, slope: float = 1.0, start: float = 0.0, initial: float = 0.0):
        self.slope = real("Ramp slope", slope)
        self.t_start = real("Ramp start", start)
        self.initial = real("Ramp initial", initial)

    def output(self, t, u):
        dt = t - self.t_start
        return (self.initial + self.slope * dt if dt > 0.0 else self.initial,)


class Sine(_Source):
    """``y(t) = offset + amplitude · sin(2π · frequency · t + phase)`` (frequency in Hz, phase
    in rad)."""

    def __init__(self, amplitude: float = 1.0, frequency: float = 1.0, phase: float = 0.0,
                 offset: float = 0.0):
        self.amplitude = real("Sine amplitude", amplitude)
        self.frequency = real("Sine frequency", frequency)
        if self.frequency < 0.0:
            raise BlockError(f"Sine frequency must be >= 0 Hz, got {frequency!r}")
        self.phase = real("Sine phase", phase)
        self.offset = real("Sine offset", offset)
        self._w = 2.0 * math.pi * self.frequency

    def output(self, t, u):
        return (self.offset + self.amplitude * math.sin(self._w * t + self.phase),)


def _read_csv(path) -> tuple[list[str], list[list[str]], list[int]]:
    """Header names, data rows (as strings) and their line numbers in the file."""
    try:
        with open(path, newline="") as f:
            lines = [(i + 1, row) for i, row in enumerate(csv.reader(f))
                     if row and any(c.strip() for c in row) and not row[0].lstrip().startswith("#")]
    except OSError as exc:
        raise BlockError(f"Table: cannot read {os.fspath(path)!r}: {exc.strerror or exc}") from None
    except csv.Error as exc:
        raise BlockError(f"Table: {os.fspath(path)!r} is not valid CSV: {exc}") from None
    if not lines:
        raise BlockError(f"Table: {os.fspath(path)!r} is empty (expected a header row and data rows)")
    header = [c.strip() for c in lines[0][1]]
    return header, [row for _, row in lines[1:]], [n for n, _ in lines[1:]]


class Table(_Source):
    """Time series from a CSV file (or an array), interpolated at the sample instants.

    The CSV has a header row; the time column is the one named ``time`` (any case), else the first
    column.  ``#`` comment lines and blank lines are skipped.  An array has the time in column 0;
    its other columns are named ``y1, y2, …``.

    ``column``: None (every other column), a name, or a sequence of names.  A single selected column
    is the output ``y``; several become outputs named after them.

    With the time points ``t_0 <= … <= t_N`` and ``i`` the last index with ``t_i <= t``:

    - ``interpolation="linear"``: ``y = v_i + (v_{i+1} - v_i)(t - t_i)/(t_{i+1} - t_i)``;
    - ``interpolation="previous"``: ``y = v_i`` (sample and hold).

    A repeated time point is a jump: the later row holds from that instant on.  Outside
    ``[t_0, t_N]``, ``extrapolation="hold"`` keeps the first/last value and ``"error"`` raises
    BlockError.
    """

    def __init__(self, path_or_array, column=None, interpolation: str = "linear",
                 extrapolation: str = "hold"):
        if interpolation not in ("linear", "previous"):
            raise BlockError(f"Table: interpolation must be 'linear' or 'previous', got {interpolation!r}")
        if extrapolation not in ("hold", "error"):
            raise BlockError(f"Table: extrapolation must be 'hold' or 'error', got {extrapolation!r}")
        self.interpolation = interpolation
        self.extrapolation = extrapolation
        if isinstance(path_or_array, (str, os.PathLike)):
            self.source = os.fspath(path_or_array)
            header, rows, where = _read_csv(path_or_array)
            where = [f"line {n}" for n in where]
        else:
            self.source = "array"
            try:
                arr = np.asarray(path_or_array, dtype=float)
            except (TypeError, ValueError):
                raise BlockError("Table: the array must hold numbers only") from None
            if arr.ndim != 2 or arr.shape[1] < 2:
                raise BlockError(f"Table: the array must be 2-D with a time column and at least one "
                                 f"data column, got shape {arr.shape}")
            m = arr.shape[1] - 1
            header = ["time"] + (["y"] if m == 1 else [f"y{j + 1}" for j in range(m)])
            rows = arr.tolist()
            where = [f"row {i}" for i in range(len(rows))]
        dup = sorted({h for h in header if header.count(h) > 1})
        if dup:
            raise BlockError(f"Table {self.source}: duplicate column name(s) {', '.join(map(repr, dup))}")
        lower = [h.lower() for h in header]
        it = lower.index("time") if "time" in lower else 0
        data_cols = [h for j, h in enumerate(header) if j != it]
        if column is None:
            names = data_cols
        else:
            names = [column] if isinstance(column, str) else list(column)
            for c in names:
                if c not in data_cols:
                    raise BlockError(f"Table {self.source}: unknown column {c!r} (columns: "
                                     f"{', '.join(data_cols)})")
        if not names:
            raise BlockError(f"Table {self.source}: no data column besides the time column")
        if not rows:
            raise BlockError(f"Table {self.source}: no data rows")
        idx = [header.index(c) for c in names]

        def value(row, j, pos):
            try:
                x = float(row[j])
            except (IndexError, ValueError, TypeError):
                cell = row[j] if j < len(row) else "(missing)"
                raise BlockError(f"Table {self.source} {pos}: column {header[j]!r} is not a number: "
                                 f"{cell!r}") from None
            if not math.isfinite(x):
                raise BlockError(f"Table {self.source} {pos}: column {header[j]!r} is not finite: {x}")
            return x

        self.times = [value(r, it, p) for r, p in zip(rows, where)]
        for i in range(1, len(self.times)):
            if self.times[i] < self.times[i - 1]:
                raise BlockError(f"Table {self.source} {where[i]}: time {self.times[i]} decreases "
                                 f"(previous {self.times[i - 1]}); times must be non-decreasing")
        self.values = [tuple(value(r, j, p) for j in idx) for r, p in zip(rows, where)]
        self.columns = tuple(names)
        self.outputs = ("y",) if len(names) == 1 else self.columns
        self._tol = 0.0

    def start(self, t0, dt):
        self._tol = 1e-9 * dt

    def output(self, t, u):
        ts = self.times
        if t < ts[0] or t > ts[-1]:
            if self.extrapolation == "error" and not (ts[0] - self._tol <= t <= ts[-1] + self._tol):
                raise BlockError(f"Table {self.source}: t = {t} is outside the table's time range "
                                 f"[{ts[0]}, {ts[-1]}] (extrapolation='error')")
            return self.values[0] if t < ts[0] else self.values[-1]
        i = bisect.bisect_right(ts, t) - 1
        if self.interpolation == "previous" or i == len(ts) - 1:
            return self.values[i]
        t1 = ts[i]
        w = (t - t1) / (ts[i + 1] - t1)
        return [a + w * (b - a) for a, b in zip(self.values[i], self.values[i + 1])]
