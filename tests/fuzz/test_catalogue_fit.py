"""Catalogue of bad inputs of parameter identification (issue 25 item 3): ``mbsfmu.fit``,
``simulate(times=...)`` and the CLI's ``fit``.

Each case is one bad input; the test asserts the exception type (or the CLI's exit status 2)
and that the message names the culprit, by a regular expression.  Every case is refused before
any engine run (the run counter stays at 0) but the parameters that the signals cannot tell
apart, which the Jacobian of the first run shows (IdentifiabilityError), and no plot is written.
"""

import math
import pathlib
import re

import numpy as np
import pandas as pd
import pytest

import mbsfmu
from mbsfmu import ParameterError
from mbsfmu.cli import main
from mbsfmu.core.errors import IdentifiabilityError
from mbsfmu.identification import least_squares_fit

ROOT = pathlib.Path(__file__).resolve().parents[2]
SLIDER_CRANK = str(ROOT / "models" / "slider_crank.py")
T = np.linspace(0.1, 1.0, 10)
GOOD = pd.DataFrame({"time": T, "x": 0.5 + 0.1 * np.cos(T), "pin.y": 0.1 * np.sin(T)})
RANGES = {"l": (0.4, 0.7), "m_slider": (0.5, 2.0)}


def fit(data=None, params=None, signals=("x",), **kw):
    return mbsfmu.fit(
        SLIDER_CRANK,
        GOOD if data is None else data,
        RANGES if params is None else params,
        list(signals),
        **kw,
    )


def frame(**columns):
    return pd.DataFrame({"time": T, "x": GOOD["x"], **columns})


def csv(tmp, text, name="d.csv"):
    path = tmp / name
    path.write_text(text)
    return path


def binary(tmp):
    path = tmp / "b.csv"
    path.write_bytes(bytes(range(128, 256)) * 4)
    return path


# (label, call(tmp), exception, regex naming the culprit)
API_CASES = [
    ("no parameter", lambda t: fit(params={}), ParameterError, r"fit: give at least one parameter to fit"),
    (
        "unknown parameter",
        lambda t: fit(params={"mass": (1, 2)}),
        ParameterError,
        r"fit params: 'mass' is not a parameter of 'slider_crank'; give a constant \(r, l, .*",
    ),
    (
        "parameter the equations do not read",
        lambda t: fit(params={"g": (1, 20)}),
        ParameterError,
        r"fit params: the equations of 'slider_crank' do not depend on constant 'g'",
    ),
    (
        "bounds reversed",
        lambda t: fit(params={"l": (0.7, 0.4)}),
        ParameterError,
        r"parameter 'l': bounds need lo < hi \(finite\), got \(0.7, 0.4\)",
    ),
    (
        "bounds equal",
        lambda t: fit(params={"l": (0.5, 0.5)}),
        ParameterError,
        r"parameter 'l': bounds need lo < hi \(finite\), got \(0.5, 0.5\)",
    ),
    (
        "bounds not finite",
        lambda t: fit(params={"l": (0.4, math.inf)}),
        ParameterError,
        r"parameter 'l': bounds need lo < hi \(finite\), got \(0.4, inf\)",
    ),
    (
        "bounds one number",
        lambda t: fit(params={"l": 0.5}),
        ParameterError,
        r"parameter 'l': bounds must be \(lo, hi\), got 0.5",
    ),
    (
        "start outside its range",
        lambda t: fit(start={"l": 0.9}),
        ParameterError,
        r"fit start of 'l': 0.9 is outside its range \[0.4, 0.7\]",
    ),
    (
        "start of a parameter not fitted",
        lambda t: fit(start={"r": 0.2}),
        ParameterError,
        r"fit start: 'r' is not a fitted parameter \(the fitted parameters: l, m_slider\)",
    ),
    (
        "start not a number",
        lambda t: fit(start={"l": "big"}),
        ParameterError,
        r"fit start of 'l': 'big' is not a number",
    ),
    (
        "fitted and fixed",
        lambda t: fit(constants={"l": 0.5}),
        ParameterError,
        r"fit: 'l' given both as a fitted parameter and in constants=",
    ),
    (
        "fitted and fixed initial value",
        lambda t: fit(params={"crank_angle": (0, 1)}, initial={"crank_angle": 0.5}),
        ParameterError,
        r"fit: 'crank_angle' given both as a fitted parameter and in initial=",
    ),
    ("no signal", lambda t: fit(signals=()), ParameterError, r"fit: give at least one signal to fit"),
    (
        "unknown signal",
        lambda t: fit(signals=("y",)),
        ParameterError,
        r"fit signal 'y': not a signal of 'slider_crank' \(coordinates, der\(coordinate\), outputs and "
        r"constraints: x, alpha, .*\)",
    ),
    (
        "signal twice",
        lambda t: fit(signals=("x", "x")),
        ParameterError,
        r"fit signals: 'x' given more than once",
    ),
    (
        "signal without a data column",
        lambda t: fit(signals=("x", "alpha")),
        ParameterError,
        r"data DataFrame: no column 'alpha' for the fitted signal\(s\) \(its columns: time, x, pin.y\)",
    ),
    (
        "weight of a signal not fitted",
        lambda t: fit(weights={"pin.y": 2.0}),
        ParameterError,
        r"fit weights: 'pin.y' is not a fitted signal \(the fitted signals: x\)",
    ),
    (
        "weight zero",
        lambda t: fit(weights={"x": 0.0}),
        ParameterError,
        r"fit weight of 'x' must be a positive number, got 0.0",
    ),
    (
        "weight nan",
        lambda t: fit(weights={"x": math.nan}),
        ParameterError,
        r"fit weight of 'x': nan is not finite",
    ),
    (
        "data file missing",
        lambda t: fit(data=t / "none.csv"),
        ParameterError,
        r"data file '.*none.csv' does not exist",
    ),
    ("data a directory", lambda t: fit(data=t), ParameterError, r"data file '.*' is a directory"),
    (
        "data not text",
        lambda t: fit(data=binary(t)),
        ParameterError,
        r"data file '.*b.csv' is not a text \(CSV\) file",
    ),
    (
        "data empty",
        lambda t: fit(data=csv(t, "")),
        ParameterError,
        r"data file '.*d.csv' cannot be read as CSV",
    ),
    (
        "data a list",
        lambda t: fit(data=[1, 2]),
        ParameterError,
        r"data must be a CSV file name or a pandas DataFrame, got list",
    ),
    (
        "no time column",
        lambda t: fit(data=csv(t, "t,x\n0.1,0.5\n0.2,0.5\n0.3,0.5\n")),
        ParameterError,
        r"data '.*d.csv': no 'time' column \(its columns: t, x\)",
    ),
    ("no rows", lambda t: fit(data=csv(t, "time,x\n")), ParameterError, r"data '.*d.csv': no rows"),
    (
        "value not a number",
        lambda t: fit(data=csv(t, "time,x\n0.1,0.5\n0.2,abc\n0.3,0.5\n")),
        ParameterError,
        r"data '.*d.csv': column 'x', row 2: 'abc' is not a finite number \(1 such value\(s\)",
    ),
    (
        "value missing",
        lambda t: fit(data=frame(x=[*GOOD["x"][:-1], np.nan])),
        ParameterError,
        r"data DataFrame: column 'x', row 10: nan is not a finite number",
    ),
    (
        "value infinite",
        lambda t: fit(data=frame(x=[math.inf, *GOOD["x"][1:]])),
        ParameterError,
        r"data DataFrame: column 'x', row 1: inf is not a finite number",
    ),
    (
        "time not finite",
        lambda t: fit(data=pd.DataFrame({"time": [*T[:-1], math.nan], "x": GOOD["x"]})),
        ParameterError,
        r"data DataFrame: column 'time', row 10: nan is not a finite number",
    ),
    (
        "time negative",
        lambda t: fit(data=pd.DataFrame({"time": T - 0.2, "x": GOOD["x"]})),
        ParameterError,
        r"data DataFrame: time -0.1 in row 1 is before the run's start t = 0",
    ),
    (
        "times repeated",
        lambda t: fit(data=pd.DataFrame({"time": [0.1, 0.2, 0.2, 0.3], "x": [1, 2, 3, 4]})),
        ParameterError,
        r"data DataFrame: time 0.2\d* in row 3 repeats the time 0.2\d* of row 2; the times must "
        r"increase strictly",
    ),
    (
        "times unsorted",
        lambda t: fit(data=pd.DataFrame({"time": [0.1, 0.3, 0.2, 0.4], "x": [1, 2, 3, 4]})),
        ParameterError,
        r"data DataFrame: time 0.2\d* in row 3 comes before the time 0.2\d*|0.3\d* of row 2",
    ),
    (
        "times after t_end",
        lambda t: fit(t_end=0.5),
        ParameterError,
        r"data DataFrame: 5 time\(s\) after the run's end t_end = 0.5 \(the first 0.6 in row 6\); "
        r"give t_end >= 1",
    ),
    (
        "t_end not positive",
        lambda t: fit(t_end=-1.0),
        ParameterError,
        r"t_end must be a positive number, got -1.0",
    ),
    (
        "fewer data than parameters",
        lambda t: fit(data=pd.DataFrame({"time": [0.1, 0.2], "x": [0.5, 0.5]})),
        ParameterError,
        r"fit: 2 data value\(s\) for 2 parameter\(s\); a fit needs more data values than parameters",
    ),
    (
        "keyword fit sets itself",
        lambda t: fit(dt=0.1),
        ParameterError,
        r"fit: simulate's keyword 'dt' is set by the fit itself",
    ),
    (
        "unknown keyword",
        lambda t: fit(stop=2.0),
        ParameterError,
        r"fit: unknown keyword 'stop' \(simulate's that pass through: atol, .*\)",
    ),
    (
        "max_evaluations zero",
        lambda t: fit(max_evaluations=0),
        ParameterError,
        r"fit max_evaluations must be a whole number >= 1, got 0",
    ),
    (
        "backend without sensitivities",
        lambda t: fit(backend="numpy"),
        ParameterError,
        r"sensitivities are integrated by the C engine: backend 'numpy'",
    ),
    ("method unknown", lambda t: fit(method="euler"), ParameterError, r"unknown method 'euler'"),
]

# parameters the fitted signals cannot tell apart: refused after the first run, before a step
SINGULAR_CASES = [
    (
        "masses scaled together",
        dict(params={"m_slider": (0.5, 2), "m_rod": (0.2, 1), "m_crank": (0.1, 1)}),
        # scaling every mass by one factor changes no motion: the direction is the masses 1 : 0.5 : 0.3
        r"the parameters 'm_slider', 'm_rod', 'm_crank' cannot be told apart from these signals: "
        r"changing them together along dm_slider : dm_rod : dm_crank = \+1 : \+0.5 : \+0.3 leaves",
    ),
]

TIMES_CASES = [
    (
        "times not starting at 0",
        dict(times=[0.1, 1.0]),
        r"times must start at 0 \(the run starts there\), got "
        r"times\[0\] = 0.1",
    ),
    (
        "times repeated",
        dict(times=[0, 0.5, 0.5, 1]),
        r"times must increase strictly: times\[1\] = 0.5, times\[2\] = 0.5",
    ),
    ("times not finite", dict(times=[0, math.nan]), r"times\[1\] is nan: the output times must be finite"),
    (
        "times one point",
        dict(times=[0.0]),
        r"times must be a 1-D sequence of at least two times, got shape \(1,\)",
    ),
    ("times text", dict(times="0,1"), r"times must be a sequence of numbers"),
    (
        "times and t_end disagree",
        dict(t_end=2.0, times=[0, 1]),
        r"times end at 1.0 but t_end = 2.0; the run ends at the last output time",
    ),
    (
        "times with dt",
        dict(times=[0, 1], dt=0.1),
        r"give either dt \(a regular grid\) or times \(an explicit one\), "
        r"not both",
    ),
    (
        "neither t_end nor times",
        dict(),
        r"give t_end \(the end time of the run\) or times \(its output times\)",
    ),
]


@pytest.fixture
def no_run(monkeypatch):
    """Counts the fit's engine runs (none may happen for a refused input)."""
    runs = []
    real = least_squares_fit.simulate
    monkeypatch.setattr(least_squares_fit, "simulate", lambda *a, **k: runs.append(1) or real(*a, **k))
    return runs


@pytest.mark.parametrize("label,call,exc,pattern", API_CASES, ids=[c[0] for c in API_CASES])
def test_fit_refuses(label, call, exc, pattern, tmp_path, no_run):
    with pytest.raises(exc) as err:
        call(tmp_path)
    assert err.type is exc and re.search(pattern, str(err.value)), str(err.value)
    if "backend" not in label and "method" not in label:  # simulate refuses those itself, before integrating
        assert no_run == []


@pytest.mark.parametrize("label,kw,pattern", SINGULAR_CASES, ids=[c[0] for c in SINGULAR_CASES])
def test_fit_refuses_parameters_it_cannot_tell_apart(label, kw, pattern, no_run):
    with pytest.raises(IdentifiabilityError, match=pattern):
        fit(**kw)
    assert no_run == [1]  # the first run's Jacobian, no step of the minimizer


@pytest.mark.parametrize("label,kw,pattern", TIMES_CASES, ids=[c[0] for c in TIMES_CASES])
def test_simulate_refuses_bad_output_times(label, kw, pattern):
    with pytest.raises(ParameterError, match=pattern):
        mbsfmu.simulate(SLIDER_CRANK, **kw)


CLI_CASES = [
    ("no --param", [], r"fit: give at least one --param"),
    ("--param twice", ["--param", "l=0.4:0.7"], r"--param l is given twice"),
    ("--param not LO:HI", ["--param", "r=0.1"], r"parameter 'r': bounds '0.1' are not LO:HI"),
    ("--start not a number", ["--start", "l=big"], r"--start l: 'big' is not a number"),
    ("--weight without =", ["--weight", "x"], r"--weight 'x': expected NAME=VALUE"),
    ("--set unknown", ["--set", "mass=2"], r"--set mass: no constant, coordinate"),
    ("data missing", "missing", r"data file '.*missing.csv' does not exist"),
    ("--plot not an image", ["--plot", "fit.txt"], r"--plot '.*fit.txt': '.txt' is not an image format"),
    ("--plot page misspelt", ["--plot", "/tmp/fit.htm"],
     r"--plot '/tmp/fit\.htm': '\.htm' is not an image format; end the name in one of .*\.png.*, "
     r"or \.html for an interactive page"),
    ("--plot page in a folder not writable", ["--plot", "/proc/fit.html"],
     r"--plot '/proc/fit\.html': cannot write in '/proc'"),
    ("--plot page a folder", ["--plot", "/tmp"], r"--plot '/tmp' is a directory; give a file name"),
]


@pytest.mark.parametrize("label,extra,pattern", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_fit_refuses(label, extra, pattern, tmp_path, capsys, no_run):
    data = tmp_path / "d.csv"
    GOOD.to_csv(data, index=False)
    params = [] if label == "no --param" else ["--param", "l=0.4:0.7"]
    if extra == "missing":
        data, extra = tmp_path / "missing.csv", []
    extra = [tmp_path / e if e.endswith(".txt") else e for e in extra]
    assert main(["fit", SLIDER_CRANK, str(data), *params, "--signal", "x", *map(str, extra)]) == 2
    err = capsys.readouterr().err
    assert re.search(pattern, err), err
    assert no_run == [] and not (tmp_path / "fit.txt").exists()


@pytest.fixture(scope="module")
def fitted():
    return fit(max_evaluations=2)


# a completed fit's plot (an image or an interactive page, issue 27 item 5): (label, path, regex)
PLOT_CASES = [
    ("page misspelt", "{tmp}/f.htm",
     r"plot '.*f\.htm': '\.htm' is not an image format; end the name in one of .*\.png.*, or \.html for an "
     r"interactive page"),
    ("page a folder", "{tmp}", r"plot '.*' is a directory; give a file name"),
    ("page in a folder not writable", "/proc/f.html", r"plot '/proc/f\.html': cannot write in '/proc'"),
    ("page in a missing folder", "{tmp}/no/f.html",
     r"plot '.*/no/f\.html': the directory '.*/no' does not exist"),
]


@pytest.mark.parametrize("label,path,pattern", PLOT_CASES, ids=[c[0] for c in PLOT_CASES])
def test_fit_plot_refuses(label, path, pattern, fitted, tmp_path):
    with pytest.raises(ParameterError, match=pattern):
        fitted.plot(path.format(tmp=tmp_path))
    assert list(tmp_path.iterdir()) == []
