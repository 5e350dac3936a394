"""Reading a result CSV back (:meth:`mbsfmu.simulation.Result.read_csv`, ``mbsfmu animate``),
checked value by value.

The file is UTF-8 text (a byte-order mark is allowed), comma-separated, with one header row.  Only
the columns asked for are read (a result's ``time``, coordinates and ``der(<coordinate>)``; the
others may hold anything).  Each of their values must be a finite number, and ``time`` must
increase strictly from row to row (one animation frame per row).  A refused file raises a
ParameterError that names the file, the line (1 is the header, as in an editor) and the column
of the first bad value: undecodable bytes, a value that is not a number, NaN or infinity, a time
that does not increase, a row with too few values, a column named twice.
"""

from __future__ import annotations

import csv
import io
import math
import os
import pathlib

import numpy as np

from ..core.errors import ParameterError


def read_columns(path, needed: list[str], owner: str) -> dict[str, np.ndarray]:
    """The columns ``needed`` of the CSV file ``path`` as float arrays, checked (see the module
    docstring); the first of them is the time, which must increase strictly.  ``owner`` (e.g.
    "model 'cart'") is what the columns belong to, named when some are missing."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise ParameterError(f"result CSV: a file name is needed, got {path!r}")
    name = f"result CSV {str(path)!r}"
    try:
        raw = pathlib.Path(path).read_bytes()
    except OSError as exc:
        raise ParameterError(f"cannot read {name} ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParameterError(f"{name}: {_undecodable(raw, exc.start)}") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    rows = []  # (line number, fields)
    try:
        for fields in reader:
            rows.append((reader.line_num, fields))
    except csv.Error as exc:
        raise ParameterError(f"{name}, line {reader.line_num + 1}: not CSV ({exc})") from None
    if not rows:
        raise ParameterError(f"{name} is empty")
    header = [h.strip() for h in rows[0][1]]
    missing = [c for c in needed if c not in header]
    if missing:
        raise ParameterError(f"{name} does not match {owner}: missing column(s) {', '.join(missing)} (it "
                             f"has {', '.join(header)})")
    for c in needed:
        where = [i + 1 for i, h in enumerate(header) if h == c]
        if len(where) > 1:
            raise ParameterError(f"{name}: column {c!r} appears {len(where)} times in the header (columns "
                                 f"{', '.join(map(str, where))}); which one is meant?")
    index = [header.index(c) for c in needed]
    body = [(line, fields) for line, fields in rows[1:] if fields]
    if not body:
        raise ParameterError(f"{name} has no rows")
    data = np.empty((len(body), len(needed)))
    for r, (line, fields) in enumerate(body):
        if len(fields) < len(header):
            raise ParameterError(f"{name}, line {line}: {len(fields)} values for the {len(header)} columns "
                                 "of the header")
        for k, (c, i) in enumerate(zip(needed, index)):
            data[r, k] = _number(name, line, c, fields[i])
    t = data[:, 0]
    bad = np.flatnonzero(np.diff(t) <= 0)
    if bad.size:
        r = int(bad[0]) + 1
        now, before = float(t[r]), float(t[r - 1])
        raise ParameterError(f"{name}, line {body[r][0]}, column {needed[0]!r}: {now!r} does not come after "
                             f"{before!r} on line {body[r - 1][0]} (time must increase from row to row)")
    return {c: data[:, k] for k, c in enumerate(needed)}


def _number(name: str, line: int, column: str, text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ParameterError(f"{name}, line {line}, column {column!r}: {text.strip()[:40]!r} is not a "
                             "number") from None
    if not math.isfinite(v):
        raise ParameterError(f"{name}, line {line}, column {column!r}: {text.strip()} is not a finite "
                             "number")
    return v


def _undecodable(raw: bytes, offset: int) -> str:
    """Where the byte at ``offset`` is: its line and, by the commas before it, its column."""
    line = raw.count(b"\n", 0, offset) + 1
    start = raw.rfind(b"\n", 0, offset) + 1
    field = raw.count(b",", start, offset)
    header = raw.split(b"\n", 1)[0].decode("utf-8-sig", errors="replace").strip().split(",")
    column = f", column {header[field].strip()!r}" if line > 1 and field < len(header) else ""
    return (f"line {line}{column}: byte 0x{raw[offset]:02x} at offset {offset} is not UTF-8 text "
            "(a result CSV is UTF-8)")
