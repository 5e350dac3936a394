"""Reference results of model files: a model's outputs on a grid from a tight run, kept beside
the model as the Modelica Reference-FMUs keep theirs, compared with any result table, and shipped
in the FMU's ``documentation/`` folder so that the user of an importing tool can check an import.

**Layout.**  The reference result of the model file ``<folder>/<model>.py`` is
``<folder>/reference_results/<model>.csv`` with its settings ``<model>.json`` beside it
(:func:`reference_path`).  The CSV is UTF-8, comma-separated, with one header row of FMU
variable names (:func:`reference_columns`): ``time``, the coordinates, their rates
``der(<name>)`` and the user outputs (reactions included) in value-reference order, but not
``constraint_residual`` (a measure of the run's numerical error, not of the motion); one row per
output time, the values written with 12 significant digits.  The settings (JSON) name the run:
``start_time``, ``stop_time``, ``output_interval``, ``method``, ``rtol``, ``atol``,
``formulation``, the inputs (held at their start values), ``mbsfmu_version``, ``date``, the
``columns`` and ``model_sha256``, the SHA-256 of the model file's text (line ends made ``\\n``)
the run was made from: a reference whose model file has changed since is not *current*
(:attr:`ReferenceResult.current`) and is not shipped (:func:`documentation_files`).  The
model runs with the default values of its constants and start values.
:mod:`mbsfmu.fmu.reference_runs` makes them (``ci/make_reference_results``).

**Comparison** (:func:`compare`).  For each signal s of the reference, on its times t_i,

    d_s = max_i |r_s(t_i) - ref_s(t_i)| / max(max_i |ref_s(t_i)|, 1),

the largest deviation relative to the signal's scale (an absolute deviation for signals that
stay below 1, as in ``tests/support/zoo_cases.py``); the result is the worst signal, its d_s and
the time where it is reached.  The result r is taken at the reference's times directly when it
has a row at each of them (to 1e-9 of the span; other rows between them are left out, and of
rows repeated at one time, as an importer records an event, the last counts); otherwise each of
its signals is interpolated onto them by a cubic spline (not-a-knot) whose interpolation error
then counts in d_s (run with output points on the reference's grid for a tight check).  A
result without one of the reference's columns, or whose times do not cover the reference's
span, is refused with a ParameterError that says which.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import os
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline

from ..codegen.fmu_variables import fmu_variables
from ..core.errors import ParameterError
from ..model import Model
from ..simulation.result_csv import read_columns

#: the folder beside a model file that holds its reference result
FOLDER = "reference_results"
#: where the FMU carries them (zip paths), as :func:`documentation_files` names them
DOCUMENTATION = {"csv": "documentation/reference_result.csv",
                 "settings": "documentation/reference_result.json",
                 "index": "documentation/index.html"}
#: the output kinds of :func:`~mbsfmu.codegen.fmu_variables.fmu_variables` a reference holds
KINDS = ("coordinate", "velocity", "output", "reaction")
#: times closer than this (relative to the span) are the same time
SAME_TIME = 1e-9
#: the rule of :func:`compare`, as the settings files and the FMU's index.html state it
DEVIATION_RULE = "max over the rows of |result - reference| / max(max |reference|, 1), per signal"


def reference_columns(system) -> list[str]:
    """The columns of a reference result of ``system``: ``time``, then the FMU variables of
    :data:`KINDS` (coordinates, rates, user outputs, reactions) in value-reference order."""
    return ["time"] + [v.name for v in fmu_variables(system) if v.kind in KINDS]


def model_hash(model_file) -> str:
    """SHA-256 (hex) of a model file's text with its line ends made ``\\n``."""
    text = pathlib.Path(model_file).read_bytes().replace(b"\r\n", b"\n")
    return hashlib.sha256(text).hexdigest()


def reference_path(model_file) -> pathlib.Path:
    """Where the reference result of the model file ``model_file`` is (whether or not it exists):
    ``<folder>/reference_results/<model>.csv``."""
    p = pathlib.Path(model_file)
    return p.parent / FOLDER / f"{p.stem}.csv"


@dataclass(frozen=True)
class ReferenceResult:
    """A reference result read back: its CSV file, the settings, the column names and the values
    (``values[:, k]`` is column ``names[k]``; column 0 is the time)."""

    csv: pathlib.Path
    settings: dict
    names: tuple
    values: np.ndarray

    @property
    def model(self) -> str:
        return self.settings["model"]

    @property
    def time(self) -> np.ndarray:
        return self.values[:, 0]

    @property
    def signals(self) -> tuple:
        """The compared columns: all but ``time``."""
        return self.names[1:]

    @property
    def settings_path(self) -> pathlib.Path:
        return self.csv.with_suffix(".json")

    @property
    def model_file(self) -> pathlib.Path:
        return self.csv.parent.parent / self.settings["model_file"]

    @property
    def current(self) -> bool:
        """True if the model file is the one the reference was made from (same SHA-256)."""
        f = self.model_file
        return f.is_file() and model_hash(f) == self.settings["model_sha256"]

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.names:
            raise KeyError(f"the reference result of {self.model} has no column {name!r} (columns: "
                           f"{', '.join(self.names)})")
        return self.values[:, self.names.index(name)]


_SETTINGS_KEYS = ("model", "model_file", "model_sha256", "columns", "start_time", "stop_time",
                  "output_interval", "method", "rtol", "atol", "formulation")


def read_reference(csv_path) -> ReferenceResult:
    """The reference result in the CSV file ``csv_path`` with its settings (the ``.json`` of the
    same name), both checked: the settings name every key a comparison needs, the CSV has the
    settings' columns with finite values, its times increase from ``start_time`` to ``stop_time``."""
    csv_path = pathlib.Path(csv_path)
    if not csv_path.is_file():
        raise ParameterError(f"reference result {str(csv_path)!r} does not exist")
    settings_path = csv_path.with_suffix(".json")
    try:
        settings = json.loads(settings_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ParameterError(f"the reference result {str(csv_path)!r} has no readable settings file "
                             f"{str(settings_path)!r} ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise ParameterError(f"settings file {str(settings_path)!r}, line {exc.lineno}: not JSON "
                             f"({exc.msg})") from None
    missing = [k for k in _SETTINGS_KEYS if not isinstance(settings, dict) or k not in settings]
    if missing:
        raise ParameterError(f"settings file {str(settings_path)!r} lacks {', '.join(missing)}")
    names = list(settings["columns"])
    if not names or names[0] != "time":
        raise ParameterError(f"settings file {str(settings_path)!r}: the columns must start with 'time'")
    columns = read_columns(csv_path, names, f"the settings {str(settings_path)!r}")
    values = np.column_stack([columns[n] for n in names])
    t = values[:, 0]
    span = float(settings["stop_time"]) - float(settings["start_time"])
    ends = (("starts", t[0], settings["start_time"]), ("ends", t[-1], settings["stop_time"]))
    for what, have, want in ends:
        if abs(have - float(want)) > SAME_TIME * max(1.0, abs(span)):
            raise ParameterError(f"reference result {str(csv_path)!r} {what} at t = {have:g}, its settings "
                                 f"say {float(want):g}")
    return ReferenceResult(csv_path, settings, tuple(names), values)


def reference_of(model) -> ReferenceResult | None:
    """The reference result of ``model``, a model file (str or path), found by
    :func:`reference_path`; None if it has none, and for a System (which has no file)."""
    if isinstance(model, Model) or not isinstance(model, (str, os.PathLike)):
        return None
    path = reference_path(model)
    return read_reference(path) if path.is_file() else None


# ---------------------------------------------------------------- comparison

@dataclass(frozen=True)
class SignalDeviation:
    """One signal's largest deviation from the reference: ``error`` = max |r - ref| (inf where
    the result is not finite), reached at ``time``, and ``deviation`` = error / ``scale`` with
    scale = max(max |ref|, 1)."""

    name: str
    deviation: float
    error: float
    time: float
    scale: float

    def __str__(self) -> str:
        return (f"{self.name}: {self.deviation:.3g} of its scale {self.scale:.3g} (|difference| "
                f"{self.error:.3g} at t = {self.time:.6g})")


@dataclass(frozen=True)
class Comparison:
    """Every compared signal's :class:`SignalDeviation` (in the reference's column order) and
    whether the result had to be interpolated onto the reference's times."""

    model: str
    signals: tuple
    interpolated: bool

    @property
    def worst(self) -> SignalDeviation:
        """The signal of the largest deviation (the first of equal ones)."""
        return max(self.signals, key=lambda s: s.deviation)

    @property
    def deviation(self) -> float:
        return self.worst.deviation

    def __str__(self) -> str:
        how = " (interpolated onto its times)" if self.interpolated else ""
        return f"against the reference result of {self.model}{how}: worst {self.worst}"


def _table(result) -> dict[str, np.ndarray]:
    """The columns of a result table: a numpy structured array (fmpy.simulate_fmu's result) or a
    mapping of names to sequences."""
    names = getattr(getattr(result, "dtype", None), "names", None)
    if names:
        return {n: np.asarray(result[n], dtype=float) for n in names}
    if isinstance(result, Mapping):
        return {str(n): np.asarray(v, dtype=float) for n, v in result.items()}
    raise ParameterError("a result to compare must be a table of named columns (a numpy structured "
                         f"array such as fmpy.simulate_fmu returns, or a dict of arrays), got "
                         f"{type(result).__name__}")


def _on_reference_times(t, t_ref, span: float) -> tuple[np.ndarray, bool]:
    """The result's rows to use and whether they must be interpolated: the rows at the
    reference's times (False) where the result has a row at each of them (the last of a run of
    equal times), else the last row of each time, to interpolate through (True)."""
    keep = np.ones(len(t), dtype=bool)
    keep[:-1] = np.diff(t) > SAME_TIME * span  # the last row of each time counts
    rows = np.flatnonzero(keep)
    tk = t[rows]
    right = np.clip(np.searchsorted(tk, t_ref), 1, len(tk) - 1)
    nearest = np.where(np.abs(tk[right] - t_ref) < np.abs(tk[right - 1] - t_ref), right, right - 1)
    if np.all(np.abs(tk[nearest] - t_ref) <= SAME_TIME * span):
        return rows[nearest], False
    return rows, True


def compare(result, reference: ReferenceResult, signals=None) -> Comparison:
    """How far ``result`` (a table with a ``time`` column and the reference's columns, e.g. what
    ``fmpy.simulate_fmu`` returns) is from ``reference``, signal by signal (the module's rule;
    ``signals`` chooses a subset of the reference's columns, all by default)."""
    if not isinstance(reference, ReferenceResult):
        raise ParameterError(f"compare needs a ReferenceResult (read_reference, reference_of), got "
                             f"{type(reference).__name__}")
    table = _table(result)
    names = list(reference.signals if signals is None else signals)
    unknown = [n for n in names if n not in reference.signals]
    if unknown:
        raise ParameterError(f"the reference result of {reference.model} has no signal(s) "
                             f"{', '.join(map(repr, unknown))} (it has {', '.join(reference.signals)})")
    missing = [n for n in ["time", *names] if n not in table]
    if missing:
        raise ParameterError(f"the result has no column(s) {', '.join(map(repr, missing))} of the reference "
                             f"result of {reference.model} (the result's columns: "
                             f"{', '.join(table) or 'none'})")
    t = table["time"]
    t_ref = reference.time
    span = max(float(t_ref[-1] - t_ref[0]), 1e-300)
    if t.ndim != 1 or len(t) < 2 or not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0):
        raise ParameterError("the result's time must be a finite, non-decreasing column of at least two rows")
    uneven = [n for n in names if table[n].shape != t.shape]
    if uneven:
        raise ParameterError(f"the result's column(s) {', '.join(map(repr, uneven))} do not have one "
                             f"value per time ({len(t)} rows)")
    if t[0] > t_ref[0] + SAME_TIME * span or t[-1] < t_ref[-1] - SAME_TIME * span:
        raise ParameterError(f"the result spans t = {t[0]:g} ... {t[-1]:g}; the reference result of "
                             f"{reference.model} spans {t_ref[0]:g} ... {t_ref[-1]:g} (output interval "
                             f"{reference.settings['output_interval']:g}): run over that span")
    rows, interpolated = _on_reference_times(t, t_ref, span)
    out = []
    for n in names:
        want = reference[n]
        got = table[n][rows]
        if interpolated:
            finite = np.all(np.isfinite(got))
            got = CubicSpline(t[rows], got)(t_ref) if finite else np.full_like(t_ref, np.nan)
        diff = np.abs(got - want)
        bad = ~np.isfinite(diff)
        k = int(np.argmax(bad)) if bad.any() else int(np.argmax(diff))
        error = math.inf if bad.any() else float(diff[k])
        scale = max(float(np.max(np.abs(want))), 1.0)
        out.append(SignalDeviation(n, error / scale, error, float(t_ref[k]), scale))
    return Comparison(reference.model, tuple(out), interpolated)


# ---------------------------------------------------------------- documentation in the FMU

def _index_html(ref: ReferenceResult) -> str:
    s = ref.settings
    e = html.escape
    rows = "\n".join(f"<tr><th>{e(k)}</th><td>{e(str(s[k]))}</td></tr>" for k in
                     ("start_time", "stop_time", "output_interval", "method", "rtol", "atol", "formulation",
                      "inputs", "mbsfmu_version", "date") if k in s)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{e(ref.model)}: reference result</title></head>
<body>
<h1>{e(ref.model)}: reference result</h1>
<p>This FMU was exported by mbsfmu. <code>reference_result.csv</code> holds the outputs of the
model (its start values and parameters unchanged, inputs held at their start values) from a tight
run of mbsfmu's own simulation, on the grid below; <code>reference_result.json</code> holds the
settings of that run. The columns are the FMU's variables: <code>time</code>, the coordinates,
their rates <code>der(...)</code> and the outputs ({len(ref.signals)} signals;
<code>constraint_residual</code> is left out: it measures a run's numerical error).</p>
<table>
{rows}
</table>
<h2>Checking an import</h2>
<p>Run the FMU from <code>start_time</code> to <code>stop_time</code> with communication steps
(or output points) at <code>output_interval</code> and a tight tolerance (for Co-Simulation set
the parameter <code>solver_rtol</code>, e.g. 1e-10; for Model Exchange your solver's relative
tolerance, e.g. 1e-8), then compare every column with the reference: the deviation of a signal
is {e(DEVIATION_RULE)}. A Co-Simulation run at solver_rtol 1e-10 stays within 1e-6 of each
signal's scale (measured for every model of mbsfmu's zoo; mostly below 1e-8); a Model Exchange
import integrated at a relative tolerance of 1e-8 should stay within about 1e-6 as well.
Deviations that shrink as you tighten the tolerance are integration error; a deviation of
order 1 means the import differs from the reference run (a parameter, an input or a start
value not at the FMU's default).</p>
<p>With Python: <code>mbsfmu.fmu.reference_results.compare(fmpy.simulate_fmu(...),
read_reference("reference_result.csv"))</code> names the worst signal, its deviation and where.</p>
</body></html>
"""


def documentation_files(model) -> dict[str, bytes]:
    """The files an FMU of ``model`` carries about its reference result, by their paths in the
    FMU (:data:`DOCUMENTATION`: the CSV, its settings and an ``index.html`` that says what they
    are and how to check an import against them); none for a model without a reference result
    (a System, a model file without one) or whose reference is not current."""
    ref = reference_of(model)
    if ref is None or not ref.current:
        return {}
    return {DOCUMENTATION["csv"]: ref.csv.read_bytes(),
            DOCUMENTATION["settings"]: ref.settings_path.read_bytes(),
            DOCUMENTATION["index"]: _index_html(ref).encode("utf-8")}
