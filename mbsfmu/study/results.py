"""The rows of a study: one per run (``run``, the parameters, the metrics, ``status``,
``message``, ``wall_s``), kept in a CSV file that grows as runs finish.

Each CSV row ends with a ``checksum`` column, the CRC-32 of the row's other fields as written,
so that a row changed or cut off after it was written is found.  Floats are written with
``repr`` (17 significant digits where needed), so the values read back are the values
computed, bit for bit.  An ``out`` ending in ``.parquet`` is written with pandas (pyarrow) when
the study ends; until then the rows grow in ``OUT.parquet.partial.csv`` as above, so an
interrupted study keeps them and its restart reads both files.

**Resume.**  A study started again with the same file takes the sound rows of the file and runs
only the others.  What defines the runs is kept in ``OUT.definition.json`` (see
:mod:`.definition`); with ``resume='check'`` (the default) rows of another definition are
refused, the message naming each entry that changed; ``resume='restart'`` moves the old files
aside (``study.csv`` to ``study.old-1.csv``, the first number free, with their definition) and
starts over; ``resume='keep'`` keeps the old rows on purpose under the new definition (the
definition file then lists the earlier one).  A rows file without a definition file (written
by mbsfmu before definitions were kept) is refused the same way unless ``resume='keep'`` or
``'restart'`` is given.

A row counts as done only if it is sound: complete (a last line without its newline was cut off
while being written), its checksum right, ``run`` a whole number of the design, appearing once,
its parameter values bit for bit the design's for that run, status ``ok`` (every metric a
number, no message), ``unstable``, ``not settled`` or ``diverged`` (every metric a number or
nan, a message: the verdicts of :mod:`.metrics`) or ``failed`` (no metric, a message),
``wall_s`` a time (empty in a failed row whose run took its worker process down).  Any other row
is run again, with a warning naming the file, the line and what is wrong.  Rows ``unstable``,
``not settled`` and ``diverged`` are finished runs, taken as they are (running them again gives
the same verdict); ``retry_failed=True`` runs the ``failed`` rows again too.  When rows are
dropped the file is rewritten at once (atomically: a temporary file, then a rename), and a
finished study rewrites it in run order.
"""

from __future__ import annotations

import csv
import io
import os
import pathlib
import re
import zlib

import numpy as np
import pandas as pd

from ..core.errors import ParameterError
from . import definition
from .metrics import VERDICTS

STATUS_COLUMNS = ("status", "message", "wall_s")
#: the last column of a rows CSV: the CRC-32 of the other fields
CHECKSUM = "checksum"
#: a row's status: the verdicts of its metrics (:data:`.metrics.VERDICTS`), or failed (no result)
STATUSES = (*VERDICTS, "failed")
RESUME = ("check", "restart", "keep")

_WHOLE = re.compile(r"[0-9]+")


def columns(parameters, metrics) -> list[str]:
    """The columns of a study's rows in order (the CSV adds :data:`CHECKSUM`); names that clash
    are a ParameterError."""
    header = ["run", *parameters, *metrics, *STATUS_COLUMNS]
    if len(set(header)) != len(header):
        clash = sorted({c for c in header if header.count(c) > 1})
        raise ParameterError(f"metric names must differ from each other, the parameters and run, status, "
                             f"message, wall_s (clash: {', '.join(clash)})")
    if CHECKSUM in header:
        raise ParameterError(f"{CHECKSUM!r} is the rows file's own column; name the metric otherwise")
    return header


def check_resume(resume) -> str:
    if resume not in RESUME:
        raise ParameterError(f"resume must be one of {', '.join(map(repr, RESUME))}, got {resume!r}")
    return resume


def checksum(fields: list[str]) -> str:
    """The CRC-32 (8 hex digits) of a row's fields as written."""
    return f"{zlib.crc32(chr(31).join(fields).encode('utf-8', 'surrogatepass')):08x}"


def aside(path: pathlib.Path, n: int) -> pathlib.Path:
    """Where ``restart`` moves a file: ``study.csv`` -> ``study.old-N.csv``."""
    return path.with_name(f"{path.stem}.old-{n}{path.suffix}")


def move_aside(moves: list) -> list[tuple[pathlib.Path, pathlib.Path]]:
    """Rename each existing ``path`` of ``moves`` (pairs ``(path, name(n))``) to ``name(n)``,
    with the first n at which no new name exists yet."""
    present = [(p, name) for p, name in moves if p.exists()]
    n = 1
    while any(name(n).exists() for _, name in present):
        n += 1
    moved = [(p, name(n)) for p, name in present]
    for old, new in moved:
        old.replace(new)
    return moved


def _atomic_text(path: pathlib.Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


class RowFile:
    """The study's rows file (module docstring).  Constructing it reads and checks what is there
    and writes nothing (a refused study changes no file); :meth:`open` then writes the
    definition file, rewrites the rows file where rows were dropped, and appends from there."""

    def __init__(self, path, header: list[str], design: pd.DataFrame, entries: dict, resume: str = "check",
                 retry_failed: bool = False):
        check_resume(resume)
        self.target = pathlib.Path(path)
        folder = self.target.parent if str(self.target.parent) else pathlib.Path(".")
        if self.target.is_dir():
            raise ParameterError(f"out {str(path)!r} is a folder; give a file name")
        if not folder.is_dir():
            raise ParameterError(f"out {str(path)!r}: the folder {str(folder)!r} does not exist")
        self.parquet = self.target.suffix.lower() == ".parquet"
        self.path = self.target.with_name(self.target.name + ".partial.csv") if self.parquet else self.target
        self.definition_path = definition.path_of(self.target)
        self.header = header
        self.resume = resume
        self.entries = entries
        self.earlier: list = []
        #: "FILE line N: what is wrong" of every row run again because it is not sound
        self.problems: list[str] = []
        #: runs of failed rows dropped to be run again (retry_failed)
        self.retried: list[int] = []
        self._rewrite = False
        self._file = None
        self._n_params = len(design.columns)
        self.done: list[dict] = []
        if resume == "restart":
            return
        files = self._files()
        if files:
            self._check_definition(any(_has_rows(f) for f in files))
        found = self._read(files, design)
        sound = self._unique(found)
        if retry_failed:
            self.retried = sorted(r["run"] for r in sound if r["status"] == "failed")
            sound = [r for r in sound if r["status"] != "failed"]
        self._rewrite = self._rewrite or bool(self.problems or self.retried)
        self.problems.sort(key=_place)
        self.done = sorted(sound, key=lambda r: r["run"])

    # ---------------------------------------------------------------- reading
    def _files(self) -> list[pathlib.Path]:
        return [f for f in ([self.target] if self.parquet else []) + [self.path]
                if f.exists() and f.stat().st_size > 0]

    def _read(self, files, design) -> list[tuple[str, dict]]:
        """(where, row) of every sound row in the files; the others go to ``problems``."""
        rows = []
        for f in files:
            records = self._parquet_records(f) if f.suffix.lower() == ".parquet" else self._csv_records(f)
            for where, fields, why in records:
                if not why:
                    row, why = _parse(fields, self.header, design)
                if not why and CHECKSUM in fields and not _checked(fields, self.header):
                    why = "the checksum does not match the fields (changed after it was written)"
                if why:
                    self.problems.append(f"{where}: {why}")
                else:
                    rows.append((where, row))
        return rows

    def _csv_records(self, f: pathlib.Path) -> list[tuple[str, dict | None, str]]:
        """(where, {column: text}, '') of each complete row with as many fields as columns, and
        (where, None, what is wrong) of the others."""
        text = f.read_bytes().decode("utf-8", errors="replace")
        name = f.name
        cut = not text.endswith("\n")  # the last line was cut off while being written
        self._rewrite = self._rewrite or cut
        end = text.find("\n")
        if end < 0:  # a header cut off: no row was written
            return []
        head = next(csv.reader([text[:end]]), [])
        legacy = head == self.header  # written before rows had checksums
        if head != [*self.header, CHECKSUM] and not legacy:
            raise ParameterError(f"out {str(f)!r} line 1: the columns are {', '.join(head)}, not those of "
                                 f"this study ({', '.join(self.header)}); give another file, or "
                                 "resume='restart'")
        self._rewrite = self._rewrite or legacy
        width = len(self.header) + (0 if legacy else 1)
        reader = csv.reader(io.StringIO(text[end + 1:], newline=""), strict=True)
        records, line = [], 2
        while True:
            try:
                fields = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                records.append((line, None, f"not a CSV row ({exc})"))
            else:
                if fields:  # not an empty line
                    records.append((line, fields, ""))
            line = reader.line_num + 2
        out = []
        for i, (line, fields, why) in enumerate(records):
            where = f"{name} line {line}"
            if not why and cut and i == len(records) - 1:
                why = "cut off (the file ends inside it)"
            elif not why and "\ufffd" in "".join(fields):
                why = "bytes that are not UTF-8"
            elif not why and len(fields) != width:
                why = f"{len(fields)} fields, not {width}"
            out.append((where, None if why else dict(zip([*self.header, CHECKSUM], fields)), why))
        return out

    def _parquet_records(self, f: pathlib.Path) -> list[tuple[str, dict, str]]:
        df = _parquet(f)
        if list(df.columns) != self.header:
            raise ParameterError(f"out {str(f)!r} has the columns {', '.join(map(str, df.columns))}, not "
                                 f"those of this study ({', '.join(self.header)}); give another file, or "
                                 "resume='restart'")
        return [(f"{f.name} row {i}", {c: _text(v) for c, v in zip(self.header, values)}, "")
                for i, values in enumerate(df.itertuples(index=False), start=1)]

    def _check_definition(self, has_rows: bool) -> None:
        """Refuse rows of another definition (or of none) unless resume='keep'."""
        if not has_rows:
            return
        stored = definition.read(self.definition_path)
        name = self.target.name
        if stored is None:
            if self.resume == "keep":
                self.earlier = [{"definition": None, "note": "no definition file: rows of an earlier mbsfmu"}]
                self._rewrite = True
                return
            raise ParameterError(
                f"out {str(self.target)!r} holds rows but no definition file {self.definition_path.name!r} "
                "(written by an earlier mbsfmu, or removed), so nothing says which settings made them; "
                "resume='keep' (--resume keep) takes its rows for this sweep's definition, "
                "resume='restart' (--resume restart) moves them aside and starts over")
        old = stored["definition"]
        changed = definition.differences(old, self.entries, name)
        if not changed:
            self.earlier = stored.get("earlier", [])
            return
        if self.resume == "keep":
            self.earlier = [*stored.get("earlier", []), {"definition": old}]
            return
        lines = "\n  ".join(changed)
        raise ParameterError(
            f"out {str(self.target)!r} holds rows of another sweep definition:\n  {lines}\n"
            f"resume='restart' (--resume restart) moves them aside (to {aside(self.target, 1).name} or the "
            "next free number) and starts over; resume='keep' (--resume keep) keeps them on purpose; or "
            "give another out")

    def _unique(self, found: list) -> list[dict]:
        """The rows whose run appears once; every copy of a repeated run goes to ``problems``."""
        where: dict[int, list[str]] = {}
        for w, row in found:
            where.setdefault(row["run"], []).append(w)
        for run, places in where.items():
            if len(places) > 1:
                self.problems.extend(f"{w}: run {run} appears {len(places)} times ({', '.join(places)})"
                                     for w in places)
        return [row for _, row in found if len(where[row["run"]]) == 1]

    # ---------------------------------------------------------------- writing
    def open(self, sidecars=()) -> list:
        """Start writing: with resume='restart' move the old files (and ``sidecars``, e.g. the
        trajectories) aside and return the moves; write the definition file; rewrite the rows
        file if rows were dropped; then append from there."""
        moved = []
        if self.resume == "restart":
            moves = [(self.target, lambda n: aside(self.target, n)),
                     (self.definition_path, lambda n: definition.path_of(aside(self.target, n)))]
            if self.parquet:
                moves.append((self.path, lambda n: aside(self.target, n).with_name(
                    aside(self.target, n).name + ".partial.csv")))
            if any(p.exists() for p, _ in moves):
                moved = move_aside([*moves, *((p, lambda n, p=p: aside(p, n)) for p in sidecars)])
        definition.write(self.definition_path, {
            "format": definition.FORMAT, "rows": self.target.name, "definition": self.entries,
            "earlier": self.earlier})
        if self._rewrite or not self.path.exists() or self.path.stat().st_size == 0:
            rows = self.done
            if self.parquet and self.target.exists():  # the Parquet file holds the rows, the CSV none
                if self._rewrite:
                    self._write_parquet(frame(self.done, self.header))
                rows = []
            _atomic_text(self.path, self._text(rows))
        self._file = open(self.path, "a", newline="", encoding="utf-8")
        return moved

    def _text(self, rows: list[dict]) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([*self.header, CHECKSUM])
        for row in rows:
            writer.writerow(self._fields(row))
        return out.getvalue()

    def _fields(self, row: dict) -> list[str]:
        failed = row.get("status") not in VERDICTS
        metrics = set(self.header[1 + self._n_params:-len(STATUS_COLUMNS)])
        fields = ["" if failed and c in metrics else _text(row.get(c)) for c in self.header]
        return [*fields, checksum(fields)]

    def write(self, rows: list[dict]) -> None:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for row in rows:
            writer.writerow(self._fields(row))
        self._file.write(out.getvalue())
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def _write_parquet(self, df: pd.DataFrame) -> None:
        tmp = self.target.with_name(self.target.name + ".tmp")
        df.to_parquet(tmp, index=False)
        tmp.replace(self.target)

    def finish(self, df: pd.DataFrame) -> None:
        """At the end of a study: every row in run order (rewritten atomically); a Parquet ``out``
        gets them all, and its partial CSV goes."""
        self.close()
        if self.parquet:
            self._write_parquet(df)
            self.path.unlink(missing_ok=True)
        else:
            _atomic_text(self.path, self._text(df.to_dict("records")))


def _parse(fields: dict, header: list[str], design: pd.DataFrame) -> tuple[dict | None, str]:
    """A row's values from its texts, or (None, what is wrong)."""
    run_text = fields["run"]
    if not _WHOLE.fullmatch(run_text.lstrip("-")):
        return None, f"run {run_text!r} is not a whole number"
    run = int(run_text)
    if not 0 <= run < len(design):
        return None, f"run {run} is not a run of the design (0 to {len(design) - 1})"
    row = {"run": run}
    status = fields["status"]
    if status not in STATUSES:
        return None, f"status {status!r} is none of {', '.join(STATUSES)}"
    params = list(design.columns)
    for name in params:
        value = _float(fields[name])
        want = float(design[name].iat[run])
        if value is None or value != want:
            return None, f"parameter {name!r} = {fields[name]!r}, the design's run {run} has {want!r}"
        row[name] = value
    for name in header[1 + len(params):-len(STATUS_COLUMNS)]:
        text = fields[name]
        value = _float(text)
        if status != "failed" and value is None:
            return None, f"metric {name!r} = {text!r} in a row with status {status} is not a number"
        if status == "failed" and text not in ("", "nan"):
            return None, f"metric {name!r} = {text!r} in a failed row (a failed run has no metrics)"
        row[name] = value if status != "failed" else None
    message = fields["message"]
    if (status == "ok") != (message == ""):
        return None, ("a row with status ok has a message" if message else
                      f"a row with status {status} has no message")
    wall = _float(fields["wall_s"])
    if status == "failed" and fields["wall_s"] == "":
        wall = None  # a run that took its worker process down: no time was measured
    elif wall is None or not (wall >= 0 and np.isfinite(wall)):
        return None, f"wall_s = {fields['wall_s']!r} is not a time"
    row.update(status=status, message=message, wall_s=wall)
    return row, ""


def _place(problem: str) -> tuple:
    """('FILE', N) of 'FILE line N: ...' (or 'FILE row N: ...'), to list problems in file order."""
    where = problem.split(":", 1)[0].rsplit(" ", 2)
    return where[0], int(where[-1]) if len(where) == 3 and where[-1].isdigit() else 0


def _checked(fields: dict, header: list[str]) -> bool:
    """Whether a row's checksum matches its fields."""
    return checksum([fields[c] for c in header]) == fields[CHECKSUM]


def _has_rows(f: pathlib.Path) -> bool:
    """Whether a rows file holds more than its header."""
    if f.suffix.lower() == ".parquet":
        return len(_parquet(f)) > 0
    return any(line.strip() for line in f.read_bytes().split(b"\n")[1:])


def _parquet(f: pathlib.Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(f)
    except Exception as exc:
        raise ParameterError(f"out {str(f)!r}: cannot read it to resume ({exc}); resume='restart' moves it "
                             "aside and starts over") from None


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def read_rows(path) -> pd.DataFrame:
    """A study's CSV or Parquet file as a DataFrame, the floats read back exactly (pandas 3 reads
    CSV so by default; older pandas needs float_precision='round_trip'), an empty field or
    ``nan`` (a metric of a row not settled or diverged) as NaN; the checksum column is left out."""
    if pathlib.Path(path).suffix.lower() == ".parquet":
        return pd.read_parquet(path)
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    df = pd.read_csv(path, keep_default_na=False, na_values=["", "nan"], **exact)
    return df.drop(columns=CHECKSUM) if len(df.columns) and df.columns[-1] == CHECKSUM else df


def _text(v) -> str:
    if v is None:
        return ""
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, (np.integer,)):
        return str(int(v))
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
