"""Catalogue of bad inputs of global sensitivity (issue 25 item 4): ``sobol_indices``,
``morris_screening`` and the CLI's ``sobol`` and ``morris``.

Each case is one bad input; the test asserts the exception type (or the CLI's exit status 2)
and that the message names the culprit, by a regular expression.  Inputs refused before the runs
change no file (no rows file, no definition file, no plot; a rows file that was there stays as
it was).  Rows that cannot give indices (a failed run, a metric that is not a finite number, a
metric that is not a scalar) are refused after the runs with StudyError, whose ``rows`` are
every row.
"""

import math
import pathlib
import re

import numpy as np
import pytest

from mbsfmu import ParameterError
from mbsfmu.cli import main
from mbsfmu.core.errors import StudyError
from mbsfmu.study import morris_screening, sobol_indices

ROOT = pathlib.Path(__file__).resolve().parents[2]
CART = str(ROOT / "models" / "cart_pendulum.py")
RANGES = {"m": (0.1, 0.3), "theta": (0.05, 0.2)}
BASE = dict(t_end=0.3, metrics={"th": "max(theta)"}, scheduler="synchronous")


def sobol(tmp, ranges=None, **options):
    """Sobol' indices with a rows file and a plot in ``tmp`` (neither may appear when refused)."""
    kw = {**BASE, "n": 8, "out": tmp / "o.csv", "plot": tmp / "o.png", **options}
    return sobol_indices(CART, RANGES if ranges is None else ranges, **kw)


def morris(tmp, ranges=None, **options):
    kw = {**BASE, "n": 2, "out": tmp / "o.csv", "plot": tmp / "o.png", **options}
    return morris_screening(CART, RANGES if ranges is None else ranges, **kw)


# (label, setup(tmp) or None, call(tmp), exception, regex naming the culprit)
API_CASES = [
    ("ranges empty", None, lambda t: sobol(t, {}), ParameterError,
     r"a design needs at least one parameter with bounds \(lo, hi\)"),
    ("ranges a list", None, lambda t: sobol(t, [("m", 0.1, 0.3)]), ParameterError,
     r"parameter bounds are \{name: \(lo, hi\)\}, got list"),
    ("range degenerate", None, lambda t: sobol(t, {"m": (0.2, 0.2)}), ParameterError,
     r"parameter 'm': bounds need lo < hi \(finite\), got \(0.2, 0.2\)"),
    ("range reversed", None, lambda t: morris(t, {"m": (0.3, 0.1)}), ParameterError,
     r"parameter 'm': bounds need lo < hi \(finite\), got \(0.3, 0.1\)"),
    ("range not finite", None, lambda t: sobol(t, {"m": (0.1, math.inf)}), ParameterError,
     r"parameter 'm': bounds need lo < hi \(finite\), got \(0.1, inf\)"),
    ("range one number", None, lambda t: sobol(t, {"m": 0.1}), ParameterError,
     r"parameter 'm': bounds must be \(lo, hi\), got 0.1"),
    ("range text not LO:HI", None, lambda t: sobol(t, {"m": "0.1"}), ParameterError,
     r"parameter 'm': bounds '0.1' are not LO:HI"),
    ("range text not a number", None, lambda t: morris(t, {"m": "0.1:heavy"}), ParameterError,
     r"parameter 'm': 'heavy' is not a number"),
    ("parameter unknown", None, lambda t: sobol(t, {"mass": (0.1, 0.3)}), ParameterError,
     r"unknown parameter\(s\) 'mass' of the sweep target \(it has: .*\)"),
    ("parameter also fixed", None, lambda t: sobol(t, params={"m": 0.2}), ParameterError,
     r"'m' given both in params= and as a design column"),
    ("n not a power of 2", None, lambda t: sobol(t, n=100), ParameterError,
     r"n = 100 is not a power of 2 \(Sobol' points are balanced only then\); use n = 64 or n = 128 "
     r"\(n \(p \+ 2\) = 256 or 512 runs for 2 parameters\)"),
    ("n not a power of 2, second order", None, lambda t: sobol(t, n=12, second_order=True), ParameterError,
     r"n = 12 is not a power of 2 .*use n = 8 or n = 16 \(n \(2p \+ 2\) = 48 or 96 runs"),
    ("n too small", None, lambda t: sobol(t, n=4), ParameterError,
     r"n = 4 base samples are too few for the estimators and their bootstrap; use a power of 2 >= 8"),
    ("n a float", None, lambda t: sobol(t, n=64.0), ParameterError,
     r"n must be a whole number \(base samples, a power of 2\), got 64.0"),
    ("n a bool", None, lambda t: sobol(t, n=True), ParameterError, r"n must be a whole number .*got True"),
    ("n too many runs", None, lambda t: sobol(t, n=2 ** 19), ParameterError,
     r"n = 524288 asks for n \(p \+ 2\) = 2,097,152 runs, more than a design may have "
     r"\(MAX_RUNS = 1,000,000\)"),
    ("second_order not a bool", None, lambda t: sobol(t, second_order="yes"), ParameterError,
     r"second_order must be True or False, got 'yes'"),
    ("morris one trajectory", None, lambda t: morris(t, n=1), ParameterError,
     r"n = 1: too few trajectories; sigma and the confidence interval need two.*use n >= 2"),
    ("morris levels odd", None, lambda t: morris(t, levels=3), ParameterError,
     r"levels = 3 is odd: .* use 2 or 4"),
    ("morris levels 0", None, lambda t: morris(t, levels=0), ParameterError,
     r"levels = 0: too few grid levels; use levels >= 2"),
    ("morris too many runs", None, lambda t: morris(t, n=400_000), ParameterError,
     r"n = 400000 asks for n \(p \+ 1\) = 1,200,000 runs, more than a design may have"),
    ("conf_level 1", None, lambda t: sobol(t, conf_level=1.0), ParameterError,
     r"conf_level must be a number between 0 and 1 \(0.95: a 95 % interval\), got 1.0"),
    ("conf_level percent", None, lambda t: morris(t, conf_level=95), ParameterError,
     r"conf_level must be a number between 0 and 1 .*got 95"),
    ("resamples 1", None, lambda t: sobol(t, resamples=1), ParameterError,
     r"resamples = 1: too few bootstrap draws for a confidence interval .*use resamples >= 2"),
    ("seed negative", None, lambda t: sobol(t, seed=-1), ParameterError,
     r"seed must be a whole number >= 0 or None, got -1"),
    ("seed text", None, lambda t: morris(t, seed="a"), ParameterError,
     r"seed must be a whole number >= 0 or None, got 'a'"),
    ("design given", None, lambda t: sobol(t, design={"m": [0.1]}), ParameterError,
     r"keyword 'design': the design comes from the ranges and n"),
    ("plot format unknown", None, lambda t: sobol(t, plot=t / "p.docx"), ParameterError,
     r"plot '.*p.docx': '.docx' is not an image format"),
    ("plot over the rows file", None, lambda t: sobol(t, plot=t / "o.csv"), ParameterError,
     r"plot '.*o.csv'"),
    ("plot page misspelt", None, lambda t: morris(t, plot=t / "p.htm"), ParameterError,
     r"plot '.*p\.htm': '\.htm' is not an image format; end the name in one of .*\.png.*, "
     r"or \.html for an interactive page"),
    ("plot page a folder", None, lambda t: sobol(t, plot=t), ParameterError,
     r"plot '.*' is a directory; give a file name"),
    ("plot page in a folder not writable", None, lambda t: sobol(t, plot="/proc/p.html"), ParameterError,
     r"plot '/proc/p\.html': cannot write in '/proc'"),
    ("metric kind unknown", None, lambda t: sobol(t, metrics={"q": "median(x)"}), ParameterError,
     r"metric 'q': unknown kind 'median'"),
    ("metric signal missing", None, lambda t: morris(t, metrics={"q": "final(zz)"}), ParameterError,
     r"metric 'q' = final\(zz\): no signal 'zz' in 'cart_pendulum'"),
    ("metric named like a parameter", None, lambda t: sobol(t, metrics={"m": "final(x)"}), ParameterError,
     r"metric names must differ from each other, the parameters .*\(clash: m\)"),
    ("t_end negative", None, lambda t: sobol(t, t_end=-1), ParameterError,
     r"t_end must be a positive number, got -1"),
    ("keyword unknown", None, lambda t: morris(t, bogus=1), ParameterError,
     r"simulate\(\) has no keyword 'bogus'"),
    ("resume unknown", None, lambda t: sobol(t, resume="append"), ParameterError,
     r"resume must be one of 'check', 'restart', 'keep', got 'append'"),
    ("rows of another n", lambda t: sobol(t, plot=None), lambda t: sobol(t, n=16), ParameterError,
     r"holds rows of another sweep definition:\n  design: 32 runs, sha256 \w+ in o.csv, 64 runs, "
     r"sha256 \w+ now"),
    ("rows of another seed", lambda t: morris(t, plot=None), lambda t: morris(t, seed=3), ParameterError,
     r"holds rows of another sweep definition:\n  design: 6 runs, sha256 \w+ in o.csv, 6 runs, "
     r"sha256 \w+ now"),
    ("rows of another method", lambda t: sobol(t, plot=None), lambda t: morris(t), ParameterError,
     r"holds rows of another sweep definition:\n  design: 32 runs, sha256 \w+ in o.csv, 6 runs"),
]


def _array_metric(result):
    return result["theta"][-3:]  # three numbers, not one


def _nan_metric(result):
    return math.nan if result["theta"][0] > 0.1 else float(result["theta"][-1])


def _failing_metric(result):
    if result["theta"][0] > 0.15:
        raise ValueError("theta starts too far out")
    return float(result["theta"][-1])


# (label, call(tmp) without any file, regex): refused after the runs, StudyError
AFTER_RUN_CASES = [
    ("a failed run", lambda t: sobol(t, out=None, plot=None, metrics={"q": _failing_metric}),
     r"Sobol' indices need every run, and \d+ of 32 failed \(runs [0-9, -]+\); leaving them out would bias "
     r"every index .*The first: run \d+ \(m=.*, theta=.*\): ParameterError: metric 'q' failed on run \d+: "
     r"ValueError: theta starts too far out\. .*the same call with out= takes the rows that are done, and "
     r"retry_failed=True \(--retry-failed\) runs the failed ones again"),
    ("a metric that is not a scalar", lambda t: morris(t, out=None, plot=None, metrics={"q": _array_metric}),
     r"Morris elementary effects need every run, and 6 of 6 failed \(runs 0-5\).*metric 'q' failed on run 0: "
     r"TypeError: .*array"),
    ("a metric that is not finite", lambda t: sobol(t, out=None, plot=None, metrics={"q": _nan_metric}),
     r"Sobol' indices: metric 'q' is not a finite number in \d+ run\(s\) \([0-9, -]+; run \d+: nan\); the "
     r"indices need a number from every run"),
]


def cli(command="sobol", *extra, param=("m=0.1:0.3", "theta=0.05:0.2")):
    return [command, CART, *(a for p in param for a in ("--param", p)), "--metric", "th=max(theta)",
            "--t-end", "0.3", "--out", "{tmp}/o.csv", "--plot", "{tmp}/o.png", "--scheduler", "synchronous",
            *extra]


# (label, setup(tmp) or None, argv, regex naming the culprit)
CLI_CASES = [
    ("no --param", None, cli(param=()), r"sobol: give at least one --param"),
    ("--param twice", None, cli(param=("m=0.1:0.3", "m=0.2:0.4")), r"--param m is given twice"),
    ("--param without =", None, cli(param=("m",)), r"--param 'm': expected NAME=SPEC"),
    ("range degenerate", None, cli(param=("m=0.3:0.3",)),
     r"parameter 'm': bounds need lo < hi \(finite\), got \(0.3, 0.3\)"),
    ("range not LO:HI", None, cli("morris", param=("m=0.3",)), r"parameter 'm': bounds '0.3' are not LO:HI"),
    ("parameter unknown", None, cli(param=("mass=1:2",)), r"unknown parameter\(s\) 'mass'"),
    ("n not a power of 2", None, cli("sobol", "-n", "100"),
     r"n = 100 is not a power of 2.*use n = 64 or n = 128"),
    ("n too small", None, cli("sobol", "-n", "2"), r"n = 2 base samples are too few"),
    ("morris n 1", None, cli("morris", "-n", "1"), r"n = 1: too few trajectories"),
    ("morris levels odd", None, cli("morris", "--levels", "5"), r"levels = 5 is odd"),
    ("conf level 0", None, cli("sobol", "--conf-level", "0"), r"conf_level must be a number between 0 and 1"),
    ("metric without =", None, [*cli(), "--metric", "max(x)"],
     r"--metric 'max\(x\)': expected NAME=KIND\(SIGNAL\)"),
    ("plot format unknown", None, cli("morris", "--plot", "{tmp}/p.docx"), r"'.docx' is not an image format"),
    ("plot page in a folder not writable", None, cli("sobol", "--plot", "/proc/p.html"),
     r"--plot '/proc/p\.html': cannot write in '/proc'"),
    ("t_end zero", None, [*cli("morris"), "--t-end", "0"], r"t_end must be a positive number, got 0.0"),
    ("rows of another n", lambda t: main([a.replace("{tmp}", str(t)) for a in cli("sobol", "-n", "8")]),
     cli("sobol", "-n", "16"),
     r"design: 32 runs, sha256 \w+ in o.csv, 64 runs, sha256 \w+ now\n.*--resume restart"),
    ("-n not a number", None, cli("sobol", "-n", "many"), r"argument -n: invalid int value: 'many'"),
]


def _snapshot(folder: pathlib.Path) -> dict:
    return {p.relative_to(folder): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*")) if "__pycache__" not in p.parts}


@pytest.mark.parametrize("setup, call, exc, pattern", [c[1:] for c in API_CASES],
                         ids=[c[0] for c in API_CASES])
def test_api(tmp_path, setup, call, exc, pattern):
    if setup is not None:
        setup(tmp_path)
    before = _snapshot(tmp_path)
    with pytest.raises(exc, match=pattern):
        call(tmp_path)
    assert _snapshot(tmp_path) == before  # refused before the runs: no file written or changed


@pytest.mark.parametrize("call, pattern", [c[1:] for c in AFTER_RUN_CASES],
                         ids=[c[0] for c in AFTER_RUN_CASES])
def test_after_the_runs(tmp_path, call, pattern):
    with pytest.raises(StudyError, match=pattern) as caught:
        call(tmp_path)
    rows = caught.value.rows
    assert len(rows) in (32, 6) and list(rows["run"]) == list(range(len(rows)))
    assert not list(tmp_path.iterdir())  # no out=, no plot=: nothing written


@pytest.mark.parametrize("setup, argv, pattern", [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
def test_cli(tmp_path, capsys, setup, argv, pattern):
    if setup is not None:
        setup(tmp_path)
    capsys.readouterr()
    before = _snapshot(tmp_path)
    try:
        status = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    except SystemExit as exc:  # argparse's own refusal
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err and re.search(pattern, err, re.S), err
    assert _snapshot(tmp_path) == before


def test_a_failed_run_in_a_rows_file_is_named_and_retry_failed_runs_it(tmp_path):
    """With out=, the refusal says where the rows are and how to run the failed ones again; the
    rows of the file are every run's."""
    with pytest.raises(StudyError, match=r"the rows are in '.*o.csv': the same call with retry_failed=True"):
        sobol(tmp_path, plot=None, metrics={"q": _failing_metric})
    text = (tmp_path / "o.csv").read_text()
    assert text.count("\n") == 1 + 32 and "theta starts too far out" in text
    assert np.isfinite(sobol(tmp_path, out=None, plot=None).indices.to_numpy()).all()


def test_catalogue_size():
    """The number of bad inputs catalogued here (reported in the issue note)."""
    assert len(API_CASES) + len(AFTER_RUN_CASES) + len(CLI_CASES) >= 55
