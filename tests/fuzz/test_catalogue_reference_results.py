"""Catalogue of bad inputs of the reference results (issue 26 item 5): a result compared with a
reference (:func:`mbsfmu.fmu.reference_results.compare`), a reference result read back
(:func:`read_reference`: its CSV and settings), and the generator
(:mod:`mbsfmu.fmu.reference_runs`, also from its command line).

Each case is one bad input; the test asserts a ParameterError whose message names the culprit,
by a regular expression, and that the refused call wrote nothing.
"""

import json
import pathlib
import re
import shutil

import numpy as np
import pytest

from mbsfmu.core.errors import ParameterError
from mbsfmu.fmu.reference_results import compare, read_reference, reference_of
from mbsfmu.fmu.reference_runs import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
REF = reference_of(MODELS / "slider_crank.py")


def table(drop=(), rows=slice(None), **change):
    """The reference itself as a result table, without the columns ``drop``, only the ``rows``,
    with the columns ``change`` replaced."""
    out = {n: REF[n][rows] for n in REF.names if n not in drop}
    out.update(change)
    return out


# (label, call(), regex naming the culprit)
COMPARE_CASES = [
    ("a list", lambda: compare([1.0, 2.0], REF),
     r"a result to compare must be a table of named columns .* got list"),
    ("not a reference", lambda: compare(table(), "models/slider_crank.py"),
     r"compare needs a ReferenceResult \(read_reference, reference_of\), got str"),
    ("a column missing", lambda: compare(table(drop=("pin.x", "der(beta)")), REF),
     r"the result has no column\(s\) 'der\(beta\)', 'pin.x' of the reference result of slider_crank"),
    ("no time", lambda: compare(table(drop=("time",)), REF),
     r"the result has no column\(s\) 'time' of the reference result of slider_crank"),
    ("an unknown signal", lambda: compare(table(), REF, signals=["x", "constraint_residual"]),
     r"the reference result of slider_crank has no signal\(s\) 'constraint_residual' \(it has x, alpha"),
    ("too short a span", lambda: compare(table(rows=slice(0, 101)), REF),
     r"the result spans t = 0 \.\.\. 1; the reference result of slider_crank spans 0 \.\.\. 2 "
     r"\(output interval 0\.01\): run over that span"),
    ("starting late", lambda: compare(table(rows=slice(5, None)), REF),
     r"the result spans t = 0\.05 \.\.\. 2; the reference result of slider_crank spans 0 \.\.\. 2"),
    ("time running back", lambda: compare(table(time=REF.time[::-1].copy()), REF),
     r"the result's time must be a finite, non-decreasing column of at least two rows"),
    ("one row", lambda: compare(table(rows=slice(0, 1)), REF),
     r"the result's time must be a finite, non-decreasing column of at least two rows"),
    ("a column too short", lambda: compare(table(x=REF["x"][:-3]), REF),
     r"the result's column\(s\) 'x' do not have one value per time \(201 rows\)"),
    ("time not finite", lambda: compare(table(time=np.where(REF.time > 1, np.nan, REF.time)), REF),
     r"the result's time must be a finite"),
]


@pytest.mark.parametrize("label,call,pattern", COMPARE_CASES, ids=[c[0] for c in COMPARE_CASES])
def test_compare_refuses(label, call, pattern):
    with pytest.raises(ParameterError, match=pattern):
        call()


def _copy(tmp, csv=None, settings=None):
    """A copy of slider_crank's reference in ``tmp``: its CSV text and settings changed by the
    functions ``csv`` (text -> text) and ``settings`` (dict -> dict, None to leave the file out)."""
    text = REF.csv.read_text()
    s = json.loads(REF.settings_path.read_text())
    (tmp / "r.csv").write_text(csv(text) if csv else text)
    if settings is not None:
        s = settings(s)
        if s is not None:
            (tmp / "r.json").write_text(s if isinstance(s, str) else json.dumps(s))
    else:
        (tmp / "r.json").write_text(json.dumps(s))
    return tmp / "r.csv"


def _without(key):
    return lambda s: {k: v for k, v in s.items() if k != key}


READ_CASES = [
    ("no settings file", dict(settings=lambda s: None),
     r"the reference result '.*r.csv' has no readable settings file '.*r.json' \(No such file"),
    ("settings not JSON", dict(settings=lambda s: "{'model': 1"),
     r"settings file '.*r.json', line 1: not JSON"),
    ("settings without the span", dict(settings=_without("stop_time")),
     r"settings file '.*r.json' lacks stop_time"),
    ("columns without time", dict(settings=lambda s: {**s, "columns": s["columns"][1:]}),
     r"settings file '.*r.json': the columns must start with 'time'"),
    ("a column missing in the CSV", dict(csv=lambda t: t.replace("pin.z", "pin_z", 1)),
     r"result CSV '.*r.csv' does not match the settings '.*r.json': missing column\(s\) pin.z"),
    ("a value not a number", dict(csv=lambda t: t.replace("\n0.01,", "\n0.01x,", 1)),
     r"result CSV '.*r.csv', line 3, column 'time': '0.01x' is not a number"),
    ("a NaN", dict(csv=lambda t: t.replace("\n0.02,", "\n0.02,nan", 1).replace("nan0.", "nan,0.", 1)),
     r"result CSV '.*r.csv', line 4, column 'x': nan is not a finite number"),
    ("ending early", dict(csv=lambda t: "\n".join(t.splitlines()[:-1]) + "\n"),
     r"reference result '.*r.csv' ends at t = 1.99, its settings say 2"),
]


@pytest.mark.parametrize("label,kw,pattern", READ_CASES, ids=[c[0] for c in READ_CASES])
def test_read_reference_refuses(label, kw, pattern, tmp_path):
    path = _copy(tmp_path, **kw)
    with pytest.raises(ParameterError, match=pattern):
        read_reference(path)


def test_read_reference_of_no_file(tmp_path):
    with pytest.raises(ParameterError, match=r"reference result '.*none.csv' does not exist"):
        read_reference(tmp_path / "none.csv")


CLI_CASES = [
    ("a model without settings", lambda t: [str(t / "mine.py")],
     r"mine.py: no settings file .*mine.json; give --stop-time and --output-interval"),
    ("an unknown method", lambda t: [str(t / "mine.py"), "--stop-time", "1", "--output-interval", "0.1",
                                     "--method", "rk4"],
     r"unknown method 'rk4'; use one of 'explicit', 'rkstab', 'dop853'"),
    ("a model file that is not there", lambda t: [str(t / "none.py"), "--stop-time", "1",
                                                  "--output-interval", "0.1"],
     r"model file '.*none.py' does not exist"),
]


@pytest.mark.parametrize("label,args,pattern", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_generator_refuses(label, args, pattern, tmp_path, capsys):
    shutil.copy(MODELS / "double_pendulum.py", tmp_path / "mine.py")
    assert main(args(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and re.search(pattern, err), err
    assert not (tmp_path / "reference_results").exists()
