"""The measurement a fit is made to: a CSV file (or a pandas DataFrame) with a ``time`` column
and one column per fitted signal, checked before any run.

Every value must be a finite number (a missing value is not guessed), the times strictly
increasing (no repeated time, no unsorted row), none negative (the run starts at t = 0) and none
after the run's end ``t_end`` when that is given.  The run's output grid is then exactly these
times, with t = 0 put in front where the data start later (``simulate(times=...)`` starts at 0)
and ``t_end`` appended where it lies after the last one (:meth:`MeasuredData.grid`).
"""

from __future__ import annotations

import math
import os
import pathlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.errors import ParameterError


@dataclass
class MeasuredData:
    """``times`` (n,), ``values`` (n, len(signals)): the columns ``signals`` of the data at
    ``times``; ``source``: the file's path or 'DataFrame'."""

    times: np.ndarray
    signals: list[str]
    values: np.ndarray
    source: str

    def grid(self, t_end: float | None) -> tuple[np.ndarray, np.ndarray]:
        """(the run's output grid, the rows of the grid that are the data times)."""
        grid, rows = self.times, np.arange(len(self.times))
        if grid[0] > 0.0:
            grid, rows = np.concatenate(([0.0], grid)), rows + 1
        if t_end is not None and t_end > grid[-1]:
            grid = np.append(grid, float(t_end))
        return grid, rows


def read_data(data, signals, t_end=None) -> MeasuredData:
    """The measured ``signals`` of ``data`` (a CSV path or a DataFrame), checked (module
    docstring); a bad file or value is a ParameterError that names it (and the row)."""
    frame, source = _frame(data)
    where = source if source == "DataFrame" else repr(source)
    columns = [str(c).strip() for c in frame.columns]
    frame.columns = columns
    if "time" not in columns:
        raise ParameterError(f"data {where}: no 'time' column (its columns: {', '.join(columns) or 'none'})")
    missing = [s for s in signals if s not in columns]
    if missing:
        raise ParameterError(
            f"data {where}: no column {', '.join(map(repr, missing))} for the fitted "
            f"signal(s) (its columns: {', '.join(columns)})"
        )
    if len(set(columns)) != len(columns):
        dup = sorted({c for c in columns if columns.count(c) > 1})
        raise ParameterError(f"data {where}: column(s) {', '.join(map(repr, dup))} appear more than once")
    used = ["time", *signals]
    table = np.empty((len(frame), len(used)))
    for j, name in enumerate(used):
        table[:, j] = _numbers(frame[name], name, where)
    if len(table) == 0:
        raise ParameterError(f"data {where}: no rows")
    t = table[:, 0]
    if t[0] < 0:
        raise ParameterError(f"data {where}: time {t[0]:g} in row 1 is before the run's start t = 0")
    steps = np.flatnonzero(np.diff(t) <= 0)
    if steps.size:
        k = int(steps[0])
        what = "repeats" if t[k + 1] == t[k] else "comes before"
        raise ParameterError(
            f"data {where}: time {float(t[k + 1])!r} in row {k + 2} {what} the time "
            f"{float(t[k])!r} of row {k + 1}; the times must increase strictly (sort the rows, "
            "merge repeated times)"
        )
    if t_end is not None:
        _positive_end(t_end)
        late = np.flatnonzero(t > t_end * (1 + 1e-12))
        if late.size:
            raise ParameterError(
                f"data {where}: {late.size} time(s) after the run's end t_end = {t_end:g} "
                f"(the first {t[late[0]]:g} in row {late[0] + 1}); give t_end >= {t[-1]:g} "
                "or leave it out (the run then ends at the last data time)"
            )
    return MeasuredData(t, list(signals), table[:, 1:], source)


def _positive_end(t_end) -> None:
    if (
        isinstance(t_end, bool)
        or not isinstance(t_end, (int, float, np.integer, np.floating))
        or not (math.isfinite(t_end) and t_end > 0)
    ):
        raise ParameterError(f"t_end must be a positive number, got {t_end!r}")


def _frame(data) -> tuple[pd.DataFrame, str]:
    if isinstance(data, pd.DataFrame):
        return data.copy(), "DataFrame"
    if isinstance(data, bytes) or not isinstance(data, (str, os.PathLike)):
        raise ParameterError(f"data must be a CSV file name or a pandas DataFrame, got {type(data).__name__}")
    path = pathlib.Path(data)
    if not path.is_file():
        raise ParameterError(
            f"data file {str(data)!r} " + ("is a directory" if path.is_dir() else "does not exist")
        )
    try:
        return pd.read_csv(path, comment="#"), str(data)
    except UnicodeDecodeError:
        raise ParameterError(f"data file {str(data)!r} is not a text (CSV) file") from None
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ParameterError(
            f"data file {str(data)!r} cannot be read as CSV: "
            f"{getattr(exc, 'strerror', None) or str(exc).strip() or type(exc).__name__}"
        ) from None


def _numbers(column: pd.Series, name: str, where: str) -> np.ndarray:
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        k = int(bad[0])
        raise ParameterError(
            f"data {where}: column {name!r}, row {k + 1}: {_cell(column.iloc[k])} is not a finite "
            f"number ({bad.size} such value(s) in the column; a fit takes no missing values)"
        )
    return values


def _cell(value) -> str:
    """A data cell as the message shows it: a number as a number, text quoted."""
    return repr(value) if isinstance(value, str) else f"{float(value):g}"
