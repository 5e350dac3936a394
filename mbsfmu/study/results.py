"""The rows of a study: one per run (``run``, the parameters, the metrics, ``status``,
``message``, ``wall_s``), kept in a CSV file that grows as runs finish.

A study started again with the same file reads the rows already there and runs only the others
(resume); the file must come from the same design (same columns, same parameter values for the
same run numbers).  Floats are written with ``repr`` (17 significant digits where needed), so
the values read back are the values computed, bit for bit.

An ``out`` ending in ``.parquet`` is written with pandas (pyarrow) when the study ends; until
then the rows grow in ``OUT.parquet.partial.csv`` as above, so an interrupted study keeps them
and its restart reads both files.
"""

from __future__ import annotations

import csv
import pathlib

import numpy as np
import pandas as pd

from ..errors import ParameterError

STATUS_COLUMNS = ("status", "message", "wall_s")


def columns(parameters, metrics) -> list[str]:
    """The CSV's columns in order."""
    return ["run", *parameters, *metrics, *STATUS_COLUMNS]


class RowFile:
    """The study's CSV file, appended to one row at a time (flushed after each batch)."""

    def __init__(self, path, header: list[str], design: pd.DataFrame):
        self.target = pathlib.Path(path)
        self.parquet = self.target.suffix.lower() == ".parquet"
        self.path = self.target.with_name(self.target.name + ".partial.csv") if self.parquet else self.target
        self.header = header
        self.done = self._read_existing(design)
        new = not self.path.exists() or self.path.stat().st_size == 0
        self._file = open(self.path, "a", newline="")
        self._writer = csv.writer(self._file)
        if new:
            self._writer.writerow(header)
            self._file.flush()

    def _read_existing(self, design: pd.DataFrame) -> pd.DataFrame:
        parts = []
        for f in ([self.target] if self.parquet else []) + [self.path]:
            if not f.exists() or f.stat().st_size == 0:
                continue
            try:
                parts.append(read_rows(f))
            except Exception as exc:
                raise ParameterError(f"out {str(f)!r}: cannot read it to resume ({exc})") from None
        if not parts:
            return pd.DataFrame(columns=self.header)
        df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        if list(df.columns) != self.header:
            raise ParameterError(f"out {str(self.path)!r} has the columns {', '.join(df.columns)}, not "
                                 f"those of this study ({', '.join(self.header)}); give another file")
        df = df.drop_duplicates("run", keep="last")
        for name in design.columns:  # the same design: the same values for the same runs
            mine = design[name].to_numpy()[df["run"].to_numpy(dtype=int)]
            if not np.array_equal(mine, df[name].to_numpy(dtype=float)):
                raise ParameterError(f"out {str(self.path)!r} holds runs of another design (parameter "
                                     f"{name!r} differs); give another file")
        return df

    def write(self, rows: list[dict]) -> None:
        for row in rows:
            self._writer.writerow([_text(row.get(c)) for c in self.header])
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def finish(self, df: pd.DataFrame) -> None:
        """At the end of a study: a Parquet ``out`` gets every row, and its partial CSV goes."""
        self.close()
        if self.parquet:
            tmp = self.target.with_name(self.target.name + ".tmp")
            df.to_parquet(tmp, index=False)
            tmp.replace(self.target)
            self.path.unlink(missing_ok=True)


def read_rows(path) -> pd.DataFrame:
    """A study's CSV or Parquet file as a DataFrame, the floats read back exactly (pandas 3 reads
    CSV so by default; older pandas needs float_precision='round_trip')."""
    if pathlib.Path(path).suffix.lower() == ".parquet":
        return pd.read_parquet(path)
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    return pd.read_csv(path, keep_default_na=False, na_values=[""], **exact)


def _text(v) -> str:
    if v is None:
        return ""
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return str(v)


def frame(rows: list[dict], header: list[str]) -> pd.DataFrame:
    """The rows as a DataFrame in run order."""
    df = pd.DataFrame(rows, columns=header)
    if df.empty:
        return df
    df["run"] = df["run"].astype(int)
    df = df.sort_values("run").reset_index(drop=True)
    df["message"] = df["message"].fillna("").astype(str)
    return df
