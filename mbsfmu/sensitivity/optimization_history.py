"""The history file of an optimization: one record per evaluation, appended as it is made, that a
rerun resumes from.

A record holds the evaluation's number, the parameter values, the objective's and the
constraints' metric values, their gradients by every parameter, the gradient norm and the wall
time.  Two formats, chosen by the suffix:

* ``.csv``: a header, then one row per evaluation (``evaluation``, the parameters, ``objective``,
  the constraints, ``d(METRIC)/d(PARAM)`` for each pair, ``gradient_norm``, ``seconds``) ending in
  a ``checksum`` column, the CRC-32 of the row's other fields
  (:func:`mbsfmu.study.results.checksum`), so that a row changed or cut off is found;
* ``.jsonl``: one JSON object per line (JSON Lines: appending keeps the file readable).

Floats are written by ``repr``, so a value read back is the value computed, bit for bit: the
minimizer of a resumed optimization takes the same steps as it took the first time, and asks
for the same parameter vectors, which are then looked up in the file instead of run.

What defines the evaluations (the model's digest, the objective, the constraints, the bounds,
the start, ``t_end``, the settings of the runs, the minimizer and its tolerances) is kept beside
the file in ``FILE.definition.json`` (:mod:`mbsfmu.study.definition`, as a sweep's rows file).
A file of another definition is refused with the entries that changed, unless
``resume='restart'`` (which moves the file and its definition aside to ``FILE.old-N.csv``, the
first number free, and starts over).  A record that cannot be read (cut off, a wrong checksum,
not JSON, not numbers) is dropped with a warning naming its line, and the file is rewritten
without it; that evaluation is simply run again.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import pathlib
import warnings

import numpy as np

from ..core.errors import ParameterError
from ..study import definition
from ..study.results import aside, checksum, move_aside

#: the history formats by suffix
FORMATS = (".csv", ".jsonl")
#: what a rerun does with an existing history file
RESUME = ("check", "restart")
#: the columns after the metrics' gradients
TAIL = ("gradient_norm", "seconds")


def gradient_column(metric: str, parameter: str) -> str:
    return f"d({metric})/d({parameter})"


def check_resume(resume) -> str:
    if resume not in RESUME:
        raise ParameterError(f"optimize resume must be one of {', '.join(map(repr, RESUME))}, got {resume!r}")
    return resume


class HistoryFile:
    """The history file (module docstring).  Constructing it reads and checks what is there and
    writes nothing (a refused optimization changes no file); :meth:`open` then moves old files
    aside (restart), writes the definition and appends from there.

    ``records``: the sound records read, each ``{'evaluation', 'parameters' (array), 'values'
    (array, one per metric), 'gradient' (metrics x parameters), 'gradient_norm', 'seconds'}``."""

    def __init__(self, path, names: list[str], metrics: list[str], entries: dict, resume: str = "check"):
        check_resume(resume)
        if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
            raise ParameterError(f"optimize history must be a file name, got {path!r}")
        self.path = pathlib.Path(path)
        if self.path.suffix.lower() not in FORMATS:
            raise ParameterError(
                f"optimize history {str(path)!r}: end the name in .csv (a table) or .jsonl "
                "(one JSON object per evaluation)"
            )
        folder = self.path.parent if str(self.path.parent) else pathlib.Path(".")
        if self.path.is_dir():
            raise ParameterError(f"optimize history {str(path)!r} is a folder; give a file name")
        if not folder.is_dir():
            raise ParameterError(f"optimize history {str(path)!r}: the folder {str(folder)!r} does not exist")
        self.names, self.metrics, self.entries, self.resume = names, metrics, entries, resume
        self.definition_path = definition.path_of(self.path)
        self.csv = self.path.suffix.lower() == ".csv"
        self.header = [
            "evaluation",
            *names,
            *metrics,
            *(gradient_column(m, p) for m in metrics for p in names),
            *TAIL,
        ]
        self.records: list[dict] = []
        self.problems: list[str] = []
        self.moved: list = []
        self._rewrite = False
        self._file = None
        if resume == "restart" or not self._has_records():
            return
        self._check_definition()
        self.records = self._read()
        if self.problems:
            warnings.warn(
                f"optimize history {str(self.path)!r}: {len(self.problems)} record(s) dropped and "
                f"evaluated again: {'; '.join(self.problems)}",
                stacklevel=3,
            )

    # ---------------------------------------------------------------- reading
    def _has_records(self) -> bool:
        if not self.path.exists():
            return False
        lines = [ln for ln in self.path.read_bytes().splitlines() if ln.strip()]
        return len(lines) > (1 if self.csv else 0)

    def _check_definition(self) -> None:
        stored = definition.read(self.definition_path)
        if stored is None:
            raise ParameterError(
                f"optimize history {str(self.path)!r} holds evaluations but no definition file "
                f"{self.definition_path.name!r}, so nothing says which optimization made them; "
                "resume='restart' (--resume restart) moves it aside and starts over, or give another file"
            )
        changed = definition.differences(stored["definition"], self.entries, self.path.name)
        if changed:
            lines = "\n  ".join(changed)
            raise ParameterError(
                f"optimize history {str(self.path)!r} holds the evaluations of another optimization:\n  "
                f"{lines}\nresume='restart' (--resume restart) moves it aside (to "
                f"{aside(self.path, 1).name} or the next free number) and starts over; or give another file"
            )

    def _read(self) -> list[dict]:
        text = self.path.read_bytes().decode("utf-8", errors="replace")
        cut = not text.endswith("\n")
        lines = text.splitlines()
        records = []
        first = 1
        if self.csv:
            head = next(csv.reader([lines[0]]), [])
            if head != [*self.header, "checksum"]:
                raise ParameterError(
                    f"optimize history {str(self.path)!r} line 1: the columns are {', '.join(head)}, not "
                    f"those of this optimization ({', '.join(self.header)}, checksum); resume='restart' "
                    "moves it aside"
                )
            first = 2
        for k, line in enumerate(lines[first - 1 :], start=first):
            if not line.strip():
                continue
            if cut and k == len(lines):
                why = "cut off (the file ends inside it)"
            else:
                record, why = (self._csv_record if self.csv else self._json_record)(line)
            if why:
                self.problems.append(f"line {k}: {why}")
            else:
                records.append(record)
        self._rewrite = bool(self.problems)
        return records

    def _csv_record(self, line: str) -> tuple[dict | None, str]:
        try:
            fields = next(csv.reader([line], strict=True))
        except csv.Error as exc:
            return None, f"not a CSV row ({exc})"
        if len(fields) != len(self.header) + 1:
            return None, f"{len(fields)} fields, not {len(self.header) + 1}"
        if checksum(fields[:-1]) != fields[-1]:
            return None, "the checksum does not match the fields (changed after it was written)"
        try:
            numbers = [float(v) for v in fields[:-1]]
        except ValueError:
            return None, "a field that is not a number"
        return self._record(numbers)

    def _json_record(self, line: str) -> tuple[dict | None, str]:
        try:
            obj = json.loads(line)
            numbers = [
                obj["evaluation"],
                *(obj["parameters"][p] for p in self.names),
                *(obj["values"][m] for m in self.metrics),
                *(obj["gradient"][m][p] for m in self.metrics for p in self.names),
                *(obj[c] for c in TAIL),
            ]
            numbers = [float(v) for v in numbers]
        except (ValueError, KeyError, TypeError) as exc:
            return None, f"not a record of this optimization ({type(exc).__name__}: {exc})"
        return self._record(numbers)

    def _record(self, numbers: list[float]) -> tuple[dict | None, str]:
        p, m = len(self.names), len(self.metrics)
        if not all(math.isfinite(v) for v in numbers[: 1 + p]):
            return None, "a parameter value that is not a finite number"
        return {
            "evaluation": int(numbers[0]),
            "parameters": np.array(numbers[1 : 1 + p]),
            "values": np.array(numbers[1 + p : 1 + p + m]),
            "gradient": np.array(numbers[1 + p + m : 1 + p + m + m * p]).reshape(m, p),
            "gradient_norm": numbers[-2],
            "seconds": numbers[-1],
        }, ""

    # ---------------------------------------------------------------- writing
    def open(self) -> None:
        """Start writing: move old files aside (restart), write the definition, rewrite the file
        without its dropped records, then append."""
        if self.resume == "restart":
            self.moved = move_aside(
                [
                    (self.path, lambda n: aside(self.path, n)),
                    (self.definition_path, lambda n: definition.path_of(aside(self.path, n))),
                ]
            )
        definition.write(self.definition_path, {"format": definition.FORMAT, "definition": self.entries})
        if self._rewrite or not self.records:
            tmp = self.path.with_name(self.path.name + ".tmp")
            with open(tmp, "w", newline="", encoding="utf-8") as fh:
                fh.write(self._text_of_header() + "".join(self._line(r) for r in self.records))
            tmp.replace(self.path)
        self._file = open(self.path, "a", newline="", encoding="utf-8")

    def append(self, record: dict) -> None:
        """Write one record and flush it to the disk (an interruption keeps it); the first one
        opens the file (so a call refused by its first run writes nothing)."""
        if self._file is None:
            self.open()
        self._file.write(self._line(record))
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _text_of_header(self) -> str:
        return self._csv_line([*self.header, "checksum"]) if self.csv else ""

    def _line(self, r: dict) -> str:
        if self.csv:
            fields = [
                str(int(r["evaluation"])),
                *map(repr, map(float, r["parameters"])),
                *map(repr, map(float, r["values"])),
                *map(repr, map(float, np.ravel(r["gradient"]))),
                repr(float(r["gradient_norm"])),
                repr(float(r["seconds"])),
            ]
            return self._csv_line([*fields, checksum(fields)])
        g = np.asarray(r["gradient"])
        obj = {
            "evaluation": int(r["evaluation"]),
            "parameters": dict(zip(self.names, map(float, r["parameters"]))),
            "values": dict(zip(self.metrics, map(float, r["values"]))),
            "gradient": {m: dict(zip(self.names, map(float, g[i]))) for i, m in enumerate(self.metrics)},
            "gradient_norm": float(r["gradient_norm"]),
            "seconds": float(r["seconds"]),
        }
        return json.dumps(obj) + "\n"

    @staticmethod
    def _csv_line(fields: list[str]) -> str:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(fields)
        return buf.getvalue()
