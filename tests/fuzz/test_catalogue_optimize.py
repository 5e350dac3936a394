"""Catalogue of bad inputs of optimization and gradients (issue 25 items 3 and 5):
``mbsfmu.optimize`` and the CLI's ``gradient`` and ``optimize``.

Each case is one bad input; the test asserts the exception type (or the CLI's exit status 2)
and that the message names the culprit, by a regular expression.  Every case is refused before
any engine run finishes (the counter of completed gradient runs stays at 0), and no history
file or plot is written."""

import pathlib
import re

import pytest

import mbsfmu
from mbsfmu import ParameterError
from mbsfmu.cli import main
from mbsfmu.sensitivity import optimization

ROOT = pathlib.Path(__file__).resolve().parents[2]
SLIDER_CRANK = str(ROOT / "models" / "slider_crank.py")
RANGES = {"r": (0.1, 0.2), "crank_angle": (0.0, 3.0)}


def optimize(**kw):
    args = dict(minimize="final(x)", params=RANGES, t_end=0.3)
    args.update(kw)
    return mbsfmu.optimize(SLIDER_CRANK, **args)


def history(tmp, text, name="h.csv"):
    path = tmp / name
    path.write_text(text)
    return path


# (label, call(tmp), exception, regex naming the culprit)
API_CASES = [
    (
        "neither minimize nor maximize",
        lambda t: optimize(minimize=None),
        ParameterError,
        r"optimize: give exactly one of minimize= and maximize=",
    ),
    (
        "both minimize and maximize",
        lambda t: optimize(maximize="final(x)"),
        ParameterError,
        r"give exactly one of minimize= and maximize= .*, not both",
    ),
    (
        "objective a dict",
        lambda t: optimize(minimize={"a": "final(x)"}),
        ParameterError,
        r"optimize minimize: one metric, not a dict",
    ),
    (
        "objective not differentiable",
        lambda t: optimize(minimize="max(x)"),
        ParameterError,
        r"metric 'objective': max\(x\) is not differentiable \(the time of the maximum jumps",
    ),
    (
        "objective unknown signal",
        lambda t: optimize(minimize="final(z)"),
        ParameterError,
        r"'z' is not a signal of 'slider_crank'",
    ),
    (
        "objective not a metric",
        lambda t: optimize(minimize="x"),
        ParameterError,
        r"metric 'objective': 'x' is not of the form KIND\(SIGNAL\); write final\(x\)",
    ),
    (
        "objective a function",
        lambda t: optimize(minimize=lambda r: 0.0),
        ParameterError,
        r"metric 'objective': a Python function cannot be differentiated",
    ),
    (
        "no parameter",
        lambda t: optimize(params={}),
        ParameterError,
        r"optimize: give at least one parameter to optimize with its range",
    ),
    (
        "params not a dict",
        lambda t: optimize(params=["r"]),
        ParameterError,
        r"parameter bounds are \{name: \(lo, hi\)\}, got list",
    ),
    (
        "unknown parameter",
        lambda t: optimize(params={"mass": (1, 2)}),
        ParameterError,
        r"optimize params: 'mass' is not a parameter of 'slider_crank'; give a constant \(r, l, .*",
    ),
    (
        "parameter the equations do not read",
        lambda t: optimize(params={"g": (1, 20)}),
        ParameterError,
        r"optimize params: the equations of 'slider_crank' do not depend on constant 'g'",
    ),
    (
        "bounds reversed",
        lambda t: optimize(params={"r": (0.2, 0.1)}),
        ParameterError,
        r"parameter 'r': bounds need lo < hi \(finite\), got \(0.2, 0.1\)",
    ),
    (
        "bounds infinite",
        lambda t: optimize(params={"r": (0.1, float("inf"))}),
        ParameterError,
        r"parameter 'r': bounds need lo < hi \(finite\), got \(0.1, inf\)",
    ),
    (
        "bounds text",
        lambda t: optimize(params={"r": "0.1-0.2"}),
        ParameterError,
        r"parameter 'r': bounds '0.1-0.2' are not LO:HI",
    ),
    (
        "t_end missing",
        lambda t: optimize(t_end=None),
        ParameterError,
        r"optimize t_end must be a positive number, got None",
    ),
    (
        "t_end negative",
        lambda t: optimize(t_end=-1),
        ParameterError,
        r"optimize t_end must be a positive number, got -1",
    ),
    (
        "start outside the bounds",
        lambda t: optimize(start={"r": 0.3}),
        ParameterError,
        r"optimize start of 'r': 0.3 is outside its range \[0.1, 0.2\]",
    ),
    (
        "start of a parameter not optimized",
        lambda t: optimize(start={"l": 0.5}),
        ParameterError,
        r"optimize start: 'l' is not an optimized parameter \(the optimized parameters: r, crank_angle\)",
    ),
    (
        "start not a number",
        lambda t: optimize(start={"r": "big"}),
        ParameterError,
        r"optimize start of 'r': 'big' is not a number",
    ),
    (
        "value optimized and fixed",
        lambda t: optimize(constants={"r": 0.15}),
        ParameterError,
        r"optimize: 'r' given both as an optimized parameter and in constants=",
    ),
    (
        "initial value optimized and fixed",
        lambda t: optimize(initial={"crank_angle": 1.0}),
        ParameterError,
        r"optimize: 'crank_angle' given both as an optimized parameter and in initial=",
    ),
    (
        "constraints not a dict",
        lambda t: optimize(constraints=["final(x) <= 1"]),
        ParameterError,
        r"optimize constraints must be a dict",
    ),
    (
        "constraint malformed text",
        lambda t: optimize(constraints={"c": "final(x) < 1"}),
        ParameterError,
        r"optimize constraint 'c': 'final\(x\) < 1' is not 'METRIC <= VALUE'",
    ),
    (
        "constraint wrong relation",
        lambda t: optimize(constraints={"c": ("final(x)", "<", 1)}),
        ParameterError,
        r"optimize constraint 'c': relation '<' is not one of <=, >=, ==",
    ),
    (
        "constraint two items",
        lambda t: optimize(constraints={"c": ("final(x)", 1)}),
        ParameterError,
        r"optimize constraint 'c': \('final\(x\)', 1\) is not \(metric, relation, value\)",
    ),
    (
        "constraint value not a number",
        lambda t: optimize(constraints={"c": ("final(x)", "<=", "a")}),
        ParameterError,
        r"optimize constraint 'c': the value: 'a' is not a number",
    ),
    (
        "constraint value nan",
        lambda t: optimize(constraints={"c": "final(x) <= nan"}),
        ParameterError,
        r"optimize constraint 'c': the value: 'nan' is not finite",
    ),
    (
        "constraint named objective",
        lambda t: optimize(constraints={"objective": "final(x) <= 1"}),
        ParameterError,
        r"optimize constraint 'objective': 'objective' names the objective",
    ),
    (
        "constraint not differentiable",
        lambda t: optimize(constraints={"c": "settling(x) <= 1"}),
        ParameterError,
        r"metric 'c': settling\(x\) is not differentiable",
    ),
    (
        "constraint unknown signal",
        lambda t: optimize(constraints={"c": "integral(q) <= 1"}),
        ParameterError,
        r"'q' is not a signal of 'slider_crank'",
    ),
    (
        "unknown keyword",
        lambda t: optimize(stop=2.0),
        ParameterError,
        r"optimize: unknown keyword 'stop' \(the keywords that pass through to the runs: atol, inputs, .*\)",
    ),
    (
        "keyword of gradient",
        lambda t: optimize(wrt=["r"]),
        ParameterError,
        r"optimize: unknown keyword 'wrt' \(the optimized parameters are params=\)",
    ),
    (
        "max_evaluations zero",
        lambda t: optimize(max_evaluations=0),
        ParameterError,
        r"optimize max_evaluations must be a whole number >= 1, got 0",
    ),
    (
        "ftol negative",
        lambda t: optimize(ftol=-1.0),
        ParameterError,
        r"optimize ftol must be a positive number, got -1.0",
    ),
    (
        "mode unknown",
        lambda t: optimize(mode="reverse"),
        ParameterError,
        r"mode must be one of auto, forward, adjoint, got 'reverse'",
    ),
    (
        "resume unknown",
        lambda t: optimize(resume="keep"),
        ParameterError,
        r"optimize resume must be one of 'check', 'restart', got 'keep'",
    ),
    (
        "progress not a flag",
        lambda t: optimize(progress="yes"),
        ParameterError,
        r"optimize progress must be True, False or a function, got 'yes'",
    ),
    (
        "history suffix",
        lambda t: optimize(history=t / "h.txt"),
        ParameterError,
        r"optimize history '.*h.txt': end the name in .csv \(a table\) or .jsonl",
    ),
    (
        "history folder missing",
        lambda t: optimize(history=t / "no" / "h.csv"),
        ParameterError,
        r"optimize history '.*h.csv': the folder '.*no' does not exist",
    ),
    (
        "history a folder",
        lambda t: (t / "d.csv").mkdir() or optimize(history=t / "d.csv"),
        ParameterError,
        r"optimize history '.*d.csv' is a folder",
    ),
    (
        "history of other columns",
        lambda t: optimize(history=history(t, "a,b\n1,2\n")),
        ParameterError,
        r"optimize history '.*h.csv' holds evaluations but no definition file 'h.csv.definition.json'",
    ),
    (
        "history definition damaged",
        lambda t: (history(t, "{", "h.csv.definition.json"), optimize(history=history(t, "a,b\n1,2\n"))),
        ParameterError,
        r"cannot read the definition file '.*h.csv.definition.json'",
    ),
    ("method unknown", lambda t: optimize(method="euler"), ParameterError, r"unknown method 'euler'"),
    (
        "backend numpy",
        lambda t: optimize(backend="numpy"),
        ParameterError,
        r"optimize: unknown keyword 'backend'",
    ),
]


@pytest.fixture
def completed(monkeypatch):
    count = {"n": 0}
    real = optimization.gradient

    def counting(*args, **kw):
        out = real(*args, **kw)
        count["n"] += 1
        return out

    monkeypatch.setattr(optimization, "gradient", counting)
    return count


@pytest.mark.parametrize("label,call,exc,pattern", API_CASES, ids=[c[0] for c in API_CASES])
def test_optimize_refuses(tmp_path, label, call, exc, pattern, completed):
    with pytest.raises(exc, match=pattern):
        call(tmp_path)
    assert completed["n"] == 0
    # only the files the case made itself, as it made them
    assert {p.name for p in tmp_path.iterdir()} <= {"d.csv", "h.csv", "h.csv.definition.json"}
    for name, text in (("h.csv", "a,b\n1,2\n"), ("h.csv.definition.json", "{")):
        assert not (tmp_path / name).exists() or (tmp_path / name).read_text() == text


# (label, argv after the command, regex of stderr)
CLI_CASES = [
    (
        "gradient",
        "gradient without --metric",
        ["--wrt", "r", "--t-end", "1"],
        r"gradient: give at least one --metric NAME=KIND\(SIGNAL\)",
    ),
    (
        "gradient",
        "gradient without --wrt",
        ["--metric", "a=final(x)", "--t-end", "1"],
        r"gradient: give at least one --wrt NAME",
    ),
    (
        "gradient",
        "gradient unknown parameter",
        ["--wrt", "mass", "--metric", "a=final(x)", "--t-end", "1"],
        r"sensitivities: 'mass' is not a parameter of 'slider_crank'",
    ),
    (
        "gradient",
        "gradient parameter not read",
        ["--wrt", "g", "--metric", "a=final(x)", "--t-end", "1"],
        r"the equations of 'slider_crank' do not depend on constant 'g'",
    ),
    (
        "gradient",
        "gradient max metric",
        ["--wrt", "r", "--metric", "a=max(x)", "--t-end", "1"],
        r"metric 'a': max\(x\) is not differentiable",
    ),
    (
        "gradient",
        "gradient metric without name",
        ["--wrt", "r", "--metric", "final(x)", "--t-end", "1"],
        r"--metric 'final\(x\)': expected NAME=KIND\(SIGNAL\)",
    ),
    (
        "gradient",
        "gradient --set unknown",
        ["--wrt", "r", "--metric", "a=final(x)", "--t-end", "1", "--set", "q=1"],
        r"--set q: no constant, coordinate",
    ),
    (
        "optimize",
        "optimize without --param",
        ["--minimize", "final(x)", "--t-end", "1"],
        r"optimize: give at least one --param",
    ),
    (
        "optimize",
        "optimize bounds reversed",
        ["--param", "r=0.2:0.1", "--minimize", "final(x)", "--t-end", "1"],
        r"parameter 'r': bounds need lo < hi",
    ),
    (
        "optimize",
        "optimize start outside",
        ["--param", "r=0.1:0.2", "--minimize", "final(x)", "--t-end", "1", "--start", "r=1"],
        r"optimize start of 'r': 1 is outside its range",
    ),
    (
        "optimize",
        "optimize constraint without name",
        ["--param", "r=0.1:0.2", "--minimize", "final(x)", "--t-end", "1", "--constraint", "final(x)<=1"],
        r"--constraint 'final\(x\)<=1': expected NAME=EXPR<=VALUE",
    ),
    (
        "optimize",
        "optimize constraint relation",
        ["--param", "r=0.1:0.2", "--minimize", "final(x)", "--t-end", "1", "--constraint", "c=final(x)<1"],
        r"optimize constraint 'c': 'final\(x\)<1' is not 'METRIC <= VALUE'",
    ),
    (
        "optimize",
        "optimize constraint twice",
        [
            "--param",
            "r=0.1:0.2",
            "--minimize",
            "final(x)",
            "--t-end",
            "1",
            "--constraint",
            "c=final(x)<=1",
            "--constraint",
            "c=final(x)>=0",
        ],
        r"--constraint c is given twice",
    ),
    (
        "optimize",
        "optimize not differentiable",
        ["--param", "r=0.1:0.2", "--maximize", "min(x)", "--t-end", "1"],
        r"metric 'objective': min\(x\) is not differentiable",
    ),
    (
        "optimize",
        "optimize plot suffix",
        ["--param", "r=0.1:0.2", "--minimize", "final(x)", "--t-end", "1", "--plot", "TMP/p.txt"],
        r"--plot '.*p.txt': '.txt' is not an image format",
    ),
    (
        "optimize",
        "optimize plot page misspelt",
        ["--param", "r=0.1:0.2", "--minimize", "final(x)", "--t-end", "1", "--plot", "TMP/p.htm"],
        r"--plot '.*p\.htm': '\.htm' is not an image format; end the name in one of .*\.png.*, "
        r"or \.html for an interactive page",
    ),
    (
        "optimize",
        "optimize plot page in a folder not writable",
        ["--param", "r=0.1:0.2", "--minimize", "final(x)", "--t-end", "1", "--plot", "/proc/p.html"],
        r"--plot '/proc/p\.html': cannot write in '/proc'",
    ),
    (
        "optimize",
        "optimize plot page a folder",
        ["--param", "r=0.1:0.2", "--minimize", "final(x)", "--t-end", "1", "--plot", "/tmp"],
        r"--plot '/tmp' is a directory; give a file name",
    ),
    (
        "optimize",
        "optimize history suffix",
        ["--param", "r=0.1:0.2", "--minimize", "final(x)", "--t-end", "1", "--history", "TMP/h.txt"],
        r"optimize history '.*h.txt': end the name",
    ),
    (
        "optimize",
        "optimize history is the model",
        ["--param", "r=0.1:0.2", "--minimize", "final(x)", "--t-end", "1", "--history", SLIDER_CRANK],
        r"--history '.*slider_crank.py' is the model file",
    ),
]


@pytest.mark.parametrize("command,label,argv,pattern", CLI_CASES, ids=[c[1] for c in CLI_CASES])
def test_cli_refuses(tmp_path, capsys, command, label, argv, pattern, completed):
    argv = [str(tmp_path / a[4:]) if a.startswith("TMP/") else a for a in argv]
    assert main([command, SLIDER_CRANK, *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mbsfmu: error: ") and "Traceback" not in err
    assert re.search(pattern, err), err
    assert completed["n"] == 0 and list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def optimized():
    return optimize(params={"r": (0.1, 0.2)}, max_evaluations=2)


# a completed optimization's plot (an image or an interactive page, issue 27 item 5): (label, path, regex)
PLOT_CASES = [
    ("page misspelt", "{tmp}/o.htm",
     r"plot '.*o\.htm': '\.htm' is not an image format; end the name in one of .*\.png.*, or \.html for an "
     r"interactive page"),
    ("page a folder", "{tmp}", r"plot '.*' is a directory; give a file name"),
    ("page in a folder not writable", "/proc/o.html", r"plot '/proc/o\.html': cannot write in '/proc'"),
]


@pytest.mark.parametrize("label,path,pattern", PLOT_CASES, ids=[c[0] for c in PLOT_CASES])
def test_optimization_plot_refuses(label, path, pattern, optimized, tmp_path):
    with pytest.raises(ParameterError, match=pattern):
        optimized.plot(path.format(tmp=tmp_path))
    assert list(tmp_path.iterdir()) == []
