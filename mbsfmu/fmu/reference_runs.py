"""Making the reference results of model files (:mod:`mbsfmu.fmu.reference_results` reads,
compares and ships them): a tight run of :func:`mbsfmu.simulate` on the C engine with the
model's defaults, its outputs written as ``reference_results/<model>.csv`` beside the model file
and the run's settings as ``<model>.json``.

The settings file is also the input: a run repeats the experiment its settings file names
(start at 0, ``stop_time``, ``output_interval``, ``method``, ``rtol``, ``atol``, ``formulation``,
``note``: why these) and rewrites both files with today's date, the mbsfmu version and the model
file's hash.  A model without one needs its experiment on the command line (options override the
file's)::

    ci/make_reference_results                         # every model in models/
    ci/make_reference_results models/four_bar.py      # one (python -m mbsfmu.fmu.reference_runs ...)
    ci/make_reference_results models/new.py --stop-time 2 --output-interval 0.01 \\
        --method dop853 --rtol 1e-12 --note "why these settings"

The defaults are DOP853 (the eighth-order pair takes the fewest steps at tight tolerances) at
rtol 1e-12, atol by ``simulate``'s rule, and the formulation ``qr`` for models with constraints.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import importlib.metadata
import io
import json
import pathlib
import sys
import time

from ..core.errors import MbsError, ParameterError
from ..core.solver_settings import effective_atol
from ..model.loader import load_model
from ..simulation.result import signal_values
from ..simulation.simulate import simulate
from .reference_results import DEVIATION_RULE, model_hash, reference_columns, reference_path

#: the repository's model zoo, whose every file has a reference result
MODELS = pathlib.Path(__file__).resolve().parents[2] / "models"
#: the experiment of a model without a settings file, but for the span and the interval
DEFAULTS = {"method": "dop853", "rtol": 1e-12, "atol": None, "formulation": None, "note": ""}
#: significant digits in the CSV
DIGITS = 12


def model_files(folder=MODELS) -> list[pathlib.Path]:
    """The model files of ``folder``: every ``*.py`` but ``__init__.py``."""
    return sorted(p for p in pathlib.Path(folder).glob("*.py") if p.name != "__init__.py")


def experiment_of(model_file, **given) -> dict:
    """The experiment of ``model_file``: its settings file's, then :data:`DEFAULTS`, with the
    values ``given`` (not None) over both; ``stop_time`` and ``output_interval`` are needed."""
    settings = reference_path(model_file).with_suffix(".json")
    old = json.loads(settings.read_text(encoding="utf-8")) if settings.is_file() else {}
    keys = ("stop_time", "output_interval", *DEFAULTS)
    exp = {k: old.get(k, DEFAULTS.get(k)) for k in keys}
    exp.update({k: v for k, v in given.items() if v is not None})
    if exp["stop_time"] is None or exp["output_interval"] is None:
        raise ParameterError(f"{model_file}: no settings file {settings}; give --stop-time and "
                             "--output-interval")
    return exp


def _version() -> str:
    try:
        return importlib.metadata.version("mbsfmu")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover (a checkout not installed)
        return "unknown"


def make_reference(model_file, **given) -> pathlib.Path:
    """Run ``model_file`` by its experiment (:func:`experiment_of`) and write its reference
    result and settings; returns the CSV's path."""
    model_file = pathlib.Path(model_file)
    exp = experiment_of(model_file, **given)
    system = load_model(model_file)
    res = simulate(system, exp["stop_time"], exp["output_interval"], method=exp["method"], rtol=exp["rtol"],
                   atol=exp["atol"], formulation=exp["formulation"], backend="c")
    columns = reference_columns(system)
    data = [res.t] + [signal_values(res, n) for n in columns[1:]]
    text = io.StringIO()
    w = csv.writer(text, lineterminator="\n")
    w.writerow(columns)
    for row in zip(*data):
        w.writerow([f"{v:.{DIGITS}g}" for v in row])
    settings = {
        "model": system.name, "model_file": model_file.name, "model_sha256": model_hash(model_file),
        "columns": columns, "start_time": 0.0, "stop_time": float(exp["stop_time"]),
        "output_interval": float(exp["output_interval"]), "rows": len(res.t),
        "method": res.stats["method"], "rtol": float(exp["rtol"]),
        "atol": effective_atol(exp["atol"], exp["rtol"], system.constrained),
        "formulation": res.stats["formulation"] if system.constrained else "minimal",
        "inputs": {u.name: u.default for u in system.inputs.values()},
        "parameters": "the model file's defaults", "backend": "c",
        "deviation": DEVIATION_RULE, "mbsfmu_version": _version(),
        "date": datetime.date.today().isoformat(), "note": exp["note"],
    }
    out = reference_path(model_file)
    out.parent.mkdir(exist_ok=True)
    out.write_text(text.getvalue(), encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mbsfmu.fmu.reference_runs",
                                 description="(Re)make the reference results of model files.")
    ap.add_argument("models", nargs="*", help="model files (default: every file of models/)")
    ap.add_argument("--stop-time", type=float)
    ap.add_argument("--output-interval", type=float)
    ap.add_argument("--method")
    ap.add_argument("--rtol", type=float)
    ap.add_argument("--atol", type=float)
    ap.add_argument("--formulation")
    ap.add_argument("--note")
    a = ap.parse_args(argv)
    given = {k: getattr(a, k) for k in ("stop_time", "output_interval", "method", "rtol", "atol",
                                        "formulation", "note")}
    total = time.perf_counter()
    for f in a.models or model_files():
        t0 = time.perf_counter()
        try:
            out = make_reference(f, **given)
        except MbsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"{out}: {out.stat().st_size / 1024:.1f} KiB in {time.perf_counter() - t0:.1f} s", flush=True)
    print(f"{time.perf_counter() - total:.1f} s in all", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
