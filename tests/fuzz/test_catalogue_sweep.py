"""Catalogue of bad inputs of parameter sweeps (issue 23): the Python API (model file, System and
FMU targets, designs, resumed rows files) and the CLI.

Each case is one bad input; the test asserts the exception type (or the CLI's exit status 2) and
that the message names the culprit (the keyword, signal, parameter, value, entry of the sweep's
definition, or file), by a regular expression, and that a refused sweep changed no file: no rows
file, no definition file, no plot is written, and a rows file that was there before is left as
it was.  Cluster-side inputs (workers, scheduler addresses, the target's kind) are catalogued
with the runner's failure handling.
"""

import json
import math
import pathlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import mbsfmu
from mbsfmu import ParameterError, System, rot_x
from mbsfmu.cli import main
from mbsfmu.study import designs, plot_study

ROOT = pathlib.Path(__file__).resolve().parents[2]
CART = str(ROOT / "models" / "cart_pendulum.py")
SLIDER = str(ROOT / "models" / "slider_crank.py")
DISC = str(ROOT / "models" / "rolling_disc.py")
DESIGN = {"m": [0.1, 0.2]}
BASE = dict(t_end=0.3, metrics={"th": "max(theta)"}, scheduler="synchronous")


def pendulum(m=1.0):
    s = System("p")
    mass, l = s.constants(m=m, l=0.5)
    q, = s.coordinates("q")
    s.gravity([0, 0, -9.81])
    s.body("B", rel_rot=rot_x(q), cg_pos=[0, 0, -l], mass=mass, inertia=[1, 1, 1])
    return s


def sweep(tmp, target=CART, design=None, **options):
    """A sweep with a rows file and a plot in ``tmp`` (neither may appear when it is refused)."""
    kw = {**BASE, "out": tmp / "o.csv", "plot": tmp / "o.png", **options}
    return mbsfmu.sweep(target, DESIGN if design is None else design, **kw)


def first(target=CART, design=None, **options):
    """Setup of a resume case: a finished sweep in tmp/o.csv (BASE with ``options``)."""
    return lambda tmp: sweep(tmp, target, design, plot=None, **options)


def edit(path_name, change):
    """Setup step: change a file written by the first sweep."""
    def step(tmp):
        p = tmp / path_name
        p.write_text(change(p.read_text()))
    return step


def then(*steps):
    def setup(tmp):
        for s in steps:
            s(tmp)
    return setup


def metric_max(result):
    return float(np.max(result["theta"]))


def metric_min(result):  # the same name below, another definition
    return float(np.min(result["theta"]))


def model_copy(tmp, g):
    """A copy of the cart model file with another default gravity (written once)."""
    p = tmp / f"cart_g{g}.py"
    if not p.exists():
        p.write_text(pathlib.Path(CART).read_text().replace("g=9.81", f"g={g}"))
    return p


def _legacy(text):
    """The rows file as mbsfmu wrote it before definitions and checksums: no checksum column."""
    lines = text.splitlines()
    return "\r\n".join(line.rsplit(",", 1)[0] for line in lines) + "\r\n"


#: the rows of a study of m, as sweep writes them (for plot_study's own checks: no run needed)
ROWS = pd.DataFrame({"run": [0, 1], "m": [0.1, 0.2], "th": [0.3, 0.4], "status": ["ok", "ok"],
                     "error": ["", ""]})
ROWS.attrs["parameters"] = ["m"]


# ---------------------------------------------------------------- before the runs (API)
# (label, setup(tmp) or None, call(tmp), exception, regex naming the culprit)
API_CASES = [
    ("metric signal missing", None, lambda t: sweep(t, metrics={"q": "max(nope)"}), ParameterError,
     r"metric 'q' = max\(nope\): no signal 'nope' in 'cart_pendulum' \(signals: time, x, theta"),
    ("settling of missing signal", None, lambda t: sweep(t, metrics={"q": "settling(thet, 5%)"}),
     ParameterError,
     r"metric 'q' = settling\(thet, 0.05\): no signal 'thet'"),
    # the step metrics' arguments (issue 28 item 2)
    ("metric argument unknown", None, lambda t: sweep(t, metrics={"q": "settling(theta, start=0.1)"}),
     ParameterError, r"metric 'q': settling\(\) has no argument 'start' \(it takes: from, reference, band, "
     r"hold, bound\)"),
    ("metric argument of another kind", None, lambda t: sweep(t, metrics={"q": "max(theta, from=0.1)"}),
     ParameterError, r"metric 'q': max\(\) has no argument 'from' \(it takes: bound\)"),
    ("settling band negative", None, lambda t: sweep(t, metrics={"q": "settling(theta, band=-2%)"}),
     ParameterError, r"metric 'q': the settling band -2% must lie between 0 and 1"),
    ("settling from beyond t_end", None, lambda t: sweep(t, metrics={"q": "settling(theta, from=0.5)"}),
     ParameterError, r"metric 'q' = settling\(theta, 0.02, from=0.5\): from=0.5 lies beyond the end of "
     r"the run \(t_end=0.3\)"),
    ("from negative", None, lambda t: sweep(t, metrics={"q": "overshoot(theta, from=-1)"}), ParameterError,
     r"metric 'q': from=-1 must be a time >= 0 s"),
    ("from not a number", None, lambda t: sweep(t, metrics={"q": "rise(theta, from=step)"}), ParameterError,
     r"metric 'q': rise\(\.\.\., from=step\): from must be a number"),
    ("bound zero", None, lambda t: sweep(t, metrics={"q": "max(theta, bound=0)"}), ParameterError,
     r"metric 'q': bound=0 must be positive"),
    ("rise levels crossed", None, lambda t: sweep(t, metrics={"q": "rise(theta, low=90%, high=10%)"}),
     ParameterError, r"metric 'q': rise from low=0.9 to high=0.1: low must be below high"),
    ("argument twice", None, lambda t: sweep(t, metrics={"q": "peak(theta, from=0, from=0.1)"}),
     ParameterError, r"metric 'q': argument 'from' given twice"),
    ("iae without reference", None, lambda t: sweep(t, metrics={"q": "iae(theta)"}), ParameterError,
     r"metric 'q': iae\(theta\) needs reference=NAME \(a signal\) or reference=NUMBER"),
    ("reference signal missing", None, lambda t: sweep(t, metrics={"q": "ise(theta, reference=th_ref)"}),
     ParameterError, r"metric 'q' = ise\(theta, reference=th_ref\): no signal 'th_ref' in 'cart_pendulum'"),
    ("second positional argument", None, lambda t: sweep(t, metrics={"q": "settling(theta, 5%, 0.1)"}),
     ParameterError, r"metric 'q': '0.1' in 'settling\(theta, 5%, 0.1\)' is not NAME=VALUE"),
    ("keep signal missing", None, lambda t: sweep(t, keep=["zz"]), ParameterError,
     r"metric 'zz' = final\(zz\): no signal 'zz'"),
    ("keep a string", None, lambda t: sweep(t, keep="theta"), ParameterError,
     r"keep must be a list of signal names"),
    ("metric named like a parameter", None, lambda t: sweep(t, metrics={"m": "max(x)"}), ParameterError,
     r"metric names must differ from each other, the parameters .*\(clash: m\)"),
    ("metric named status", None, lambda t: sweep(t, metrics={"status": "max(x)"}), ParameterError,
     r"\(clash: status\)"),
    ("metric called checksum", None, lambda t: sweep(t, metrics={"checksum": "max(x)"}), ParameterError,
     r"'checksum' is the rows file's own column"),
    ("t_end negative", None, lambda t: sweep(t, t_end=-1), ParameterError,
     r"t_end must be a positive number, got -1"),
    ("t_end zero", None, lambda t: sweep(t, t_end=0), ParameterError,
     r"t_end must be a positive number, got 0"),
    ("t_end nan", None, lambda t: sweep(t, t_end=math.nan), ParameterError,
     r"t_end must be a positive number, got nan"),
    ("t_end text", None, lambda t: sweep(t, t_end="1"), ParameterError,
     r"t_end must be a positive number, got '1'"),
    ("dt zero", None, lambda t: sweep(t, dt=0), ParameterError, r"dt must be a positive number, got 0"),
    ("dt inf", None, lambda t: sweep(t, dt=math.inf), ParameterError,
     r"dt must be a positive number, got inf"),
    ("dt too fine", None, lambda t: sweep(t, t_end=1e3, dt=1e-9), ParameterError,
     r"t_end = 1000 with dt = 1e-09 asks for .* output rows"),
    ("rtol 1", None, lambda t: sweep(t, rtol=1.0), ParameterError,
     r"rtol = 1.0 is outside its range \[1e-14, 0.1\]"),
    ("rtol 0", None, lambda t: sweep(t, rtol=0), ParameterError, r"rtol = 0 is outside its range"),
    ("atol negative", None, lambda t: sweep(t, atol=-1e-3), ParameterError,
     r"atol = -0.001 is outside its range"),
    ("max_step 0", None, lambda t: sweep(t, max_step=0), ParameterError,
     r"max_step = 0 is outside its range"),
    ("method unknown", None, lambda t: sweep(t, method="euler"), ParameterError, r"unknown method 'euler'"),
    ("backend unknown", None, lambda t: sweep(t, backend="gpu"), ParameterError, r"unknown backend 'gpu'"),
    ("formulation unknown", None, lambda t: sweep(t, formulation="lu"), ParameterError,
     r"unknown formulation 'lu'"),
    ("formulation option unknown", None,
     lambda t: sweep(t, SLIDER, {"l": [0.5]}, metrics=None, formulation="baumgarte",
                     formulation_options={"gamma": 3.0}), ParameterError,
     r"formulation 'baumgarte' has no option 'gamma'"),
    ("formulation options not a dict", None, lambda t: sweep(t, formulation_options=[1]), ParameterError,
     r"formulation_options= must be a dict"),
    ("formulation without nonholonomic rows", None,
     lambda t: sweep(t, DISC, {"m": [1.0]}, metrics=None, formulation="partition"), ParameterError,
     r"formulation 'partition' cannot take the nonholonomic constraint"),
    ("fixed unknown coordinate", None, lambda t: sweep(t, SLIDER, {"l": [0.5]}, metrics=None, fixed=["zz"]),
     ParameterError, r"unknown fixed coordinate\(s\) \['zz'\]"),
    ("keyword unknown", None, lambda t: sweep(t, bogus=1), ParameterError,
     r"simulate\(\) has no keyword 'bogus' \(it takes: t_end, dt, method"),
    ("keyword of the sweep's own", None, lambda t: sweep(t, progress_every=1.0), ParameterError,
     r"keyword 'progress_every' of simulate\(\) is set by the sweep itself"),
    ("keyword model", None, lambda t: sweep(t, model=CART), ParameterError,
     r"keyword 'model' of simulate\(\) is set by the sweep itself; use the target"),
    ("initial unknown", None, lambda t: sweep(t, initial={"phi": 0.1}), ParameterError,
     r"initial value 'phi': not a coordinate, velocity or named initial condition of 'cart_pendulum'"),
    ("initial not finite", None, lambda t: sweep(t, initial={"theta": math.nan}), ParameterError,
     r"initial value 'theta'.* is not finite"),
    ("initial also a design column", None,
     lambda t: sweep(t, design={"theta": [0.1, 0.2]}, initial={"theta": 0.3}), ParameterError,
     r"'theta' given both in initial= and as a design column"),
    ("initial rate also a design column", None,
     lambda t: sweep(t, design={"der(theta)": [0.1]}, initial={"Dtheta": 0.3}), ParameterError,
     r"'Dtheta' given both in initial= and as a design column"),
    ("initial not a dict", None, lambda t: sweep(t, initial=[0.1]), ParameterError,
     r"initial= must be a dict"),
    ("params unknown", None, lambda t: sweep(t, params={"theta": 1.0}), ParameterError,
     r"params= names 'theta', not a constant of 'cart_pendulum'"),
    ("params not a number", None, lambda t: sweep(t, params={"g": "heavy"}), ParameterError,
     r"params 'g'.*'heavy' is not a number"),
    ("params also a design column", None, lambda t: sweep(t, params={"m": 0.3}), ParameterError,
     r"'m' given both in params= and as a design column"),
    ("inputs unknown", None, lambda t: sweep(t, inputs={"Q": 1.0}), ParameterError,
     r"inputs= names 'Q', not an input of 'cart_pendulum'"),
    ("inputs not a number", None, lambda t: sweep(t, inputs={"F": "push"}), ParameterError,
     r"input 'F'.*'push' is not a number"),
    ("constant without a value", None, lambda t: sweep(t, _without_value(), {"m": [1.0]}, metrics=None),
     ParameterError,
     r"constant\(s\) 'k' of 'p' have no value: give them as a design column or in params="),
    ("design column unknown", None, lambda t: sweep(t, design={"mass": [1.0]}), ParameterError,
     r"unknown parameter\(s\) 'mass' of the sweep target"),
    ("design N huge", None, lambda t: sweep(t, design={"m": "0.1:0.2:1000000000000"}), ParameterError,
     r"parameter 'm': N = 1000000000000 values is more than a design may have \(MAX_RUNS = 1,000,000"),
    ("design product huge", None, lambda t: sweep(t, design={"m": "0.1:0.2:100000", "l": "0.4:0.6:100000"}),
     ParameterError, r"100000 \(m\) x 100000 \(l\) = 10,000,000,000 runs is more than a design may have"),
    ("lhs samples huge", None, lambda t: sweep(t, design=designs.latin_hypercube({"m": (0.1, 0.2)}, 10**9)),
     ParameterError, r"the number of samples 1000000000 is more than a design may have"),
    ("monte carlo negative scale", None,
     lambda t: sweep(t, design=designs.monte_carlo({"m": stats.norm(0.1, -0.01)}, 5)), ParameterError,
     r"parameter 'm': distribution norm\(0.1, -0.01\): Domain error"),
    ("monte carlo nan parameter", None,
     lambda t: sweep(t, design=designs.monte_carlo({"m": stats.norm(math.nan, 0.01)}, 5)), ParameterError,
     r"parameter 'm': distribution norm\(nan, 0.01\) gives values that are not finite"),
    ("monte carlo bad shape", None,
     lambda t: sweep(t, design=designs.monte_carlo({"m": stats.gamma(-2.0)}, 5)), ParameterError,
     r"parameter 'm': distribution gamma\(-2.0\)"),
    ("monte carlo zero samples", None, lambda t: sweep(t, design=designs.monte_carlo({"m": (0.1, 0.2)}, 0)),
     ParameterError, r"the number of samples must be a whole number >= 1, got 0"),
    ("table with nan", None, lambda t: sweep(t, design=pd.DataFrame({"m": [0.1, math.nan]})), ParameterError,
     r"design table: column 'm' row 1 is nan, not a finite number"),
    ("table column twice", None,
     lambda t: sweep(t, design=pd.DataFrame([[0.1, 0.2]], columns=["m", "m"])), ParameterError,
     r"design table: column 'm' appears twice"),
    ("table file missing", None, lambda t: sweep(t, design=str(t / "nope.csv")), ParameterError,
     r"design table '.*nope.csv': cannot read it as CSV"),
    ("design of another type", None, lambda t: sweep(t, design=[0.1, 0.2]), ParameterError,
     r"a design is a DataFrame, a CSV file or \{name: values\}, got list"),
    ("batch zero", None, lambda t: sweep(t, batch=0), ParameterError,
     r"batch must be a whole number >= 1, got 0"),
    ("plot folder missing", None, lambda t: sweep(t, plot=t / "no" / "p.png"), ParameterError,
     r"plot '.*p.png': the directory '.*no' does not exist"),
    ("plot format unknown", None, lambda t: sweep(t, plot=t / "p.docx"), ParameterError,
     r"plot '.*p.docx': '.docx' is not an image format; end the name in one of .*\.png"),
    ("plot page misspelt", None, lambda t: sweep(t, plot=t / "p.htm"), ParameterError,
     r"plot '.*p\.htm': '\.htm' is not an image format; end the name in one of .*\.png.*, "
     r"or \.html for an interactive page"),
    ("plot page a folder", None, lambda t: sweep(t, plot=t), ParameterError,
     r"plot '.*' is a directory; give a file name"),
    ("plot page in a folder not writable", None, lambda t: sweep(t, plot="/proc/p.html"), ParameterError,
     r"plot '/proc/p\.html': cannot write in '/proc'"),
    ("plot_study page misspelt", None, lambda t: plot_study(ROWS, t / "p.htm"), ParameterError,
     r"plot_study: path '.*p\.htm': '\.htm' is not an image format; end the name in one of .*\.png.*, "
     r"or \.html for an interactive page"),
    ("plot_study page a folder", None, lambda t: plot_study(ROWS, t), ParameterError,
     r"plot_study: path '.*' is a directory; give a file name"),
    ("plot_study page in a folder not writable", None, lambda t: plot_study(ROWS, "/proc/p.html"),
     ParameterError, r"plot_study: path '/proc/p\.html': cannot write in '/proc'"),
    ("plot_study page of an unknown metric", None, lambda t: plot_study(ROWS, t / "p.html", metric="q"),
     ParameterError, r"plot_study: no column 'q' in the study \(columns: run, m, th, status, error\)"),
    ("out folder missing", None, lambda t: sweep(t, out=t / "no" / "o.csv"), ParameterError,
     r"out '.*o.csv': the folder '.*no' does not exist"),
    ("out a folder", lambda t: (t / "d.csv").mkdir(), lambda t: sweep(t, out=t / "d.csv"), ParameterError,
     r"out '.*d.csv' is a folder"),
    ("resume unknown", None, lambda t: sweep(t, resume="append"), ParameterError,
     r"resume must be one of 'check', 'restart', 'keep', got 'append'"),
]


def _without_value():
    s = pendulum()
    s.constant("k")  # no value, and the sweep gives none
    s.generalized_force("spring", "q", -s.constants_["k"].symbol * s.coordinates_["q"].symbol)
    return s


# ---------------------------------------------------------------- resuming another sweep's rows (API)
RESUME_CASES = [
    ("t_end changed", first(), lambda t: sweep(t, t_end=3.0), ParameterError,
     r"holds rows of another sweep definition:\n  t_end: 0.3 in o.csv, 3.0 now\nresume='restart'"),
    ("metric redefined", first(), lambda t: sweep(t, metrics={"th": "min(theta)"}), ParameterError,
     r"metric th: max\(theta\) in o.csv, min\(theta\) now"),
    ("settling band changed", first(metrics={"s": "settling(theta)"}),
     lambda t: sweep(t, metrics={"s": "settling(theta, 5%)"}), ParameterError,
     r"metric s: settling\(theta, 0.02\) in o.csv, settling\(theta, 0.05\) now"),
    ("function metric redefined", first(metrics={"f": metric_max}),
     lambda t: sweep(t, metrics={"f": metric_min}), ParameterError,
     r"metric f: function test_catalogue_sweep.metric_max \(sha256 \w+\) in o.csv, "
     r"function test_catalogue_sweep.metric_min \(sha256 \w+\) now"),
    ("rtol changed", first(), lambda t: sweep(t, rtol=1e-6), ParameterError,
     r"rtol: 1e-08 in o.csv, 1e-06 now"),
    ("dt changed", first(), lambda t: sweep(t, dt=0.02), ParameterError, r"dt: 0.01 in o.csv, 0.02 now"),
    ("method changed", first(), lambda t: sweep(t, method="stiff"), ParameterError,
     r"method: explicit in o.csv, stiff now"),
    ("backend changed", first(), lambda t: sweep(t, backend="numpy"), ParameterError,
     r"backend: c in o.csv, numpy now"),
    ("fixed params given", first(), lambda t: sweep(t, params={"g": 9.0}), ParameterError,
     r'params: not given in o.csv, \{"g": 9.0\} now'),
    ("fixed initial changed", first(initial={"theta": 0.2}), lambda t: sweep(t, initial={"theta": 0.3}),
     ParameterError, r'initial: \{"theta": 0.2\} in o.csv, \{"theta": 0.3\} now'),
    ("design values changed", first(), lambda t: sweep(t, design={"m": [0.1, 0.25]}), ParameterError,
     r"design: 2 runs, sha256 \w+ in o.csv, 2 runs, sha256 \w+ now"),
    ("design grown", first(), lambda t: sweep(t, design={"m": [0.1, 0.2, 0.3]}), ParameterError,
     r"design: 2 runs, sha256 \w+ in o.csv, 3 runs, sha256 \w+ now"),
    ("design columns changed", first(), lambda t: sweep(t, design={"m": [0.1, 0.2], "l": [0.5]}),
     ParameterError, r'parameters: \["m"\] in o.csv, \["m", "l"\] now'),
    ("keep added", first(), lambda t: sweep(t, keep=["x"]), ParameterError,
     r'keep: \[\] in o.csv, \["x"\] now'),
    ("model file changed", lambda t: (model_copy(t, 9.0), first(model_copy(t, 9.81))(t)),
     lambda t: sweep(t, model_copy(t, 9.0)), ParameterError,
     r"target: model file sha256 \w+ in o.csv, model file sha256 \w+ now\n  model: System 'cart_pendulum' "
     r"sha256 \w+ in o.csv, System 'cart_pendulum' sha256 \w+ now"),
    ("System changed", first(pendulum(), {"l": [0.5]}, metrics={"q": "max(q)"}),
     lambda t: sweep(t, pendulum(m=2.0), {"l": [0.5]}, metrics={"q": "max(q)"}), ParameterError,
     r"model: System 'p' sha256 \w+ in o.csv, System 'p' sha256 \w+ now"),
    ("rows without definition", then(first(), lambda t: (t / "o.csv.definition.json").unlink()),
     lambda t: sweep(t), ParameterError,
     r"holds rows but no definition file 'o.csv.definition.json' .*resume='keep'.*resume='restart'"),
    ("rows of the earlier format", then(first(), edit("o.csv", _legacy),
                                        lambda t: (t / "o.csv.definition.json").unlink()),
     lambda t: sweep(t), ParameterError, r"no definition file 'o.csv.definition.json'"),
    ("definition file damaged", then(first(), edit("o.csv.definition.json", lambda s: s[: len(s) // 2])),
     lambda t: sweep(t), ParameterError, r"cannot read the definition file '.*o.csv.definition.json'"),
    ("definition file without definition", then(first(), edit("o.csv.definition.json", lambda s: "[1, 2]")),
     lambda t: sweep(t), ParameterError, r"the definition file '.*o.csv.definition.json' holds no "
                                         "definition"),
    ("header changed", then(first(), edit("o.csv", lambda s: s.replace("th,status", "tx,status", 1))),
     lambda t: sweep(t), ParameterError, r"out '.*o.csv' line 1: the columns are run, m, tx, status"),
]


# ---------------------------------------------------------------- FMU targets
@pytest.fixture(scope="module")
def fmu(built_fmu):
    return built_fmu(CART)


FMU_CASES = [
    ("metric signal not a variable", None, lambda t, f: sweep(t, f, metrics={"q": "max(nope)"}),
     ParameterError,
     r"metric 'q' = max\(nope\): no signal 'nope' in FMU 'cart_pendulum'"),
    ("fmpy keyword unknown", None, lambda t, f: sweep(t, f, solver_rtol=1e-6), ParameterError,
     r"fmpy.simulate_fmu\(\) has no keyword 'solver_rtol'"),
    ("stop_time instead of t_end", None, lambda t, f: sweep(t, f, stop_time=2.0), ParameterError,
     r"keyword 'stop_time' of fmpy.simulate_fmu\(\) is set by the sweep itself; use t_end"),
    ("start value unknown", None, lambda t, f: sweep(t, f, start_values={"zz": 1.0}), ParameterError,
     r"start_values= names 'zz', not a parameter, input or start value of the FMU"),
    ("start value also a design column", None, lambda t, f: sweep(t, f, start_values={"m": 0.3}),
     ParameterError, r"'m' given both in start_values= and as a design column"),
    ("start value not finite", None, lambda t, f: sweep(t, f, start_values={"l": math.inf}), ParameterError,
     r"start value 'l' = inf is not finite"),
    ("output without the metric's signal", None, lambda t, f: sweep(t, f, output=["x"]), ParameterError,
     r"the metrics need signal\(s\) 'theta' that output= does not record"),
    ("t_end negative", None, lambda t, f: sweep(t, f, t_end=-1.0), ParameterError,
     r"t_end must be a positive number, got -1.0"),
    ("dt zero", None, lambda t, f: sweep(t, f, dt=0.0), ParameterError,
     r"dt must be a positive number, got 0.0"),
    ("rtol outside", None, lambda t, f: sweep(t, f, rtol=5.0), ParameterError,
     r"rtol = 5.0 is outside its range"),
    ("another FMU's rows", lambda t, f: then(lambda t: sweep(t, f, plot=None), edit(
        "o.csv.definition.json", lambda s: s.replace('"FMU GUID {', '"FMU GUID {0000-', 1)))(t),
     lambda t, f: sweep(t, f), ParameterError, r"target: FMU GUID \{0000-.*\} in o.csv, FMU GUID \{.*\} now"),
    ("Model Exchange of a CS-only FMU", None, lambda t, f: sweep(t, f, fmi_type="ModelExchange"),
     ParameterError, r"the FMU does not declare ModelExchange \(it declares CoSimulation\): build it with "
     r"interface='me' or 'both'"),
    ("fmi_type unknown", None, lambda t, f: sweep(t, f, fmi_type="ME"), ParameterError,
     r"fmi_type 'ME' is not an interface fmpy runs; choose 'CoSimulation' or 'ModelExchange'"),
    ("solver of a CS run", None, lambda t, f: sweep(t, f, solver="Euler"), ParameterError,
     r"solver='Euler' chooses fmpy's Model Exchange integrator, but the FMU runs as Co-Simulation"),
    ("step_size", None, lambda t, f: sweep(t, f, step_size=1e-4), ParameterError,
     r"keyword 'step_size' of fmpy.simulate_fmu\(\) is set by the sweep itself; use dt \(fmpy's Euler "
     r"takes one step per output interval"),
]

#: bad Model Exchange options on an FMU with both interfaces (FMI 3.0)
ME_CASES = [
    ("solver unknown", lambda t, f: sweep(t, f, fmi_type="ModelExchange", solver="RK45"),
     r"solver 'RK45' is not an integrator of fmpy's Model Exchange; choose 'CVode' or 'Euler'"),
    ("solver with fmpy's default interface", lambda t, f: sweep(t, f, solver="CVode"),
     r"but the FMU runs as Co-Simulation \(its own integrator\): add fmi_type='ModelExchange'"),
    ("fmi_type not a string", lambda t, f: sweep(t, f, fmi_type=2), r"fmi_type 2 is not an interface"),
]


@pytest.fixture(scope="module")
def both(built_fmu):
    return built_fmu(CART, fmi_version=3, interface="both")


@pytest.mark.parametrize("call, pattern", [c[1:] for c in ME_CASES], ids=[c[0] for c in ME_CASES])
def test_model_exchange_options(tmp_path, both, call, pattern):
    _refused(tmp_path, lambda: call(tmp_path, both), ParameterError, pattern)


# ---------------------------------------------------------------- CLI
def cli_sweep(*extra, t_end="0.3", metric="th=max(theta)"):
    return ["sweep", CART, "--param", "m=0.1,0.2", "--metric", metric, "--t-end", t_end,
            "--out", "{tmp}/o.csv", "--scheduler", "synchronous", *extra]


def cli_first(tmp):
    """Setup of a resume case: a finished CLI sweep in tmp/o.csv."""
    assert main([a.replace("{tmp}", str(tmp)) for a in cli_sweep()]) == 0


CLI_FIRST = cli_first
# (label, setup(tmp) or None, argv, regex naming the culprit)
CLI_CASES = [
    ("metric signal missing", None, cli_sweep(metric="q=max(nope)"),
     r"metric 'q' = max\(nope\): no signal 'nope'"),
    ("t_end negative", None, cli_sweep(t_end="-1"), r"t_end must be a positive number, got -1.0"),
    ("dt zero", None, cli_sweep("--dt", "0"), r"dt must be a positive number, got 0.0"),
    ("rtol outside", None, cli_sweep("--rtol", "2"), r"rtol = 2.0 is outside its range"),
    ("range N huge", None, ["sweep", CART, "--param", "m=0:1:1000000000000", "--t-end", "0.3", "--out",
                            "{tmp}/o.csv"],
     r"parameter 'm': N = 1000000000000 values is more than a design may have"),
    ("monte carlo scale negative", None,
     ["sweep", CART, "--design", "montecarlo", "--param", "m=norm(0.1,-0.01)", "--samples", "5",
      "--t-end", "0.3", "--out", "{tmp}/o.csv"],
     r"parameter 'm': distribution norm\(0.1, -0.01\): Domain error"),
    ("lhs samples huge", None,
     ["sweep", CART, "--design", "lhs", "--param", "m=0.1:0.2", "--samples", "100000000", "--t-end", "0.3",
      "--out", "{tmp}/o.csv"], r"the number of samples 100000000 is more than a design may have"),
    ("parameter unknown", None, ["sweep", CART, "--param", "mass=1", "--t-end", "0.3", "--out",
                                 "{tmp}/o.csv"], r"unknown parameter\(s\) 'mass'"),
    ("batch zero", None, cli_sweep("--batch", "0"), r"batch must be a whole number >= 1, got 0"),
    ("plot format unknown", None, cli_sweep("--plot", "{tmp}/p.docx"), r"'.docx' is not an image format"),
    ("plot page in a folder not writable", None, cli_sweep("--plot", "/proc/p.html"),
     r"--plot '/proc/p\.html': cannot write in '/proc'"),
    ("t_end changed on resume", CLI_FIRST, cli_sweep(t_end="3"),
     r"t_end: 0.3 in o.csv, 3.0 now\n.*--resume restart"),
    ("metric redefined on resume", CLI_FIRST, cli_sweep(metric="th=min(theta)"),
     r"metric th: max\(theta\) in o.csv, min\(theta\) now"),
    ("rows without definition on resume",
     lambda t: (cli_first(t), (t / "o.csv.definition.json").unlink()), cli_sweep(),
     r"holds rows but no definition file"),
    ("resume choice unknown", None, cli_sweep("--resume", "append"),
     r"argument --resume: invalid choice: 'append'"),
]


def _snapshot(folder: pathlib.Path) -> dict:
    return {p.relative_to(folder): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*")) if "__pycache__" not in p.parts}


def _refused(tmp, call, exc, pattern):
    before = _snapshot(tmp)
    with pytest.raises(exc, match=pattern):
        call()
    assert _snapshot(tmp) == before  # a refused sweep changes no file (no rows, no plot, no definition)


@pytest.mark.parametrize("setup, call, exc, pattern", [c[1:] for c in API_CASES],
                         ids=[c[0] for c in API_CASES])
def test_api(tmp_path, setup, call, exc, pattern):
    if setup is not None:
        setup(tmp_path)
    _refused(tmp_path, lambda: call(tmp_path), exc, pattern)


@pytest.mark.parametrize("setup, call, exc, pattern", [c[1:] for c in RESUME_CASES],
                         ids=[c[0] for c in RESUME_CASES])
def test_resume(tmp_path, setup, call, exc, pattern):
    setup(tmp_path)
    _refused(tmp_path, lambda: call(tmp_path), exc, pattern)


@pytest.mark.parametrize("setup, call, exc, pattern", [c[1:] for c in FMU_CASES],
                         ids=[c[0] for c in FMU_CASES])
def test_fmu(tmp_path, fmu, setup, call, exc, pattern):
    if setup is not None:
        setup(tmp_path, fmu)
    _refused(tmp_path, lambda: call(tmp_path, fmu), exc, pattern)


@pytest.mark.parametrize("setup, argv, pattern", [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
def test_cli(tmp_path, capsys, setup, argv, pattern):
    fill = lambda args: [a.replace("{tmp}", str(tmp_path)) for a in args]  # noqa: E731
    if setup is not None:
        setup(tmp_path)
    capsys.readouterr()
    before = _snapshot(tmp_path)
    try:
        status = main(fill(argv))
    except SystemExit as exc:  # argparse's own refusal
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err and __import__("re").search(pattern, err), err
    assert _snapshot(tmp_path) == before


def test_catalogue_size():
    """The number of bad inputs catalogued here (reported in the issue note)."""
    n = len(API_CASES) + len(RESUME_CASES) + len(FMU_CASES) + len(ME_CASES) + len(CLI_CASES)
    assert n >= 107, n


def test_a_refused_resume_leaves_the_rows_as_they_were(tmp_path):
    """The rows of the first sweep are still the file's, byte for byte, after the refusal; the
    documented ways out then work: resume='keep' takes them, resume='restart' moves them aside."""
    rows = sweep(tmp_path, plot=None)
    text = (tmp_path / "o.csv").read_bytes()
    with pytest.raises(ParameterError, match="t_end: 0.3 in o.csv, 3.0 now"):
        sweep(tmp_path, t_end=3.0, plot=None)
    assert (tmp_path / "o.csv").read_bytes() == text
    kept = sweep(tmp_path, t_end=3.0, plot=None, resume="keep")
    assert kept.attrs["resume"]["taken"] == 2 and kept.attrs["resume"]["ran"] == 0
    pd.testing.assert_frame_equal(kept.drop(columns="wall_s"), rows.drop(columns="wall_s"))
    stored = json.loads((tmp_path / "o.csv.definition.json").read_text())
    assert stored["definition"]["t_end"] == 3.0 and stored["earlier"][0]["definition"]["t_end"] == 0.3
    text = (tmp_path / "o.csv").read_bytes()
    again = sweep(tmp_path, t_end=3.0, plot=None, resume="restart")
    assert again.attrs["resume"]["taken"] == 0 and again.attrs["resume"]["ran"] == 2
    assert (tmp_path / "o.old-1.csv").read_bytes() == text  # the old rows, moved aside with their definition
    assert json.loads((tmp_path / "o.old-1.csv.definition.json").read_text())["definition"]["t_end"] == 3.0
    assert again["th"].tolist() != rows["th"].tolist()  # run to t_end = 3 now


def test_fmu_start_values_are_merged_with_every_run(fmu):
    """The fixed values of an FMU target (start_values=) are merged with every run's."""
    from fmpy import simulate_fmu

    df = mbsfmu.sweep(fmu, {"m": [0.1, 0.25]}, t_end=0.5, dt=0.01, start_values={"l": 0.6},
                      metrics={"x_end": "final(x)", "f": lambda r: r["theta"][-1]}, scheduler="synchronous")
    assert (df["status"] == "ok").all(), df["message"].tolist()
    for _, row in df.iterrows():
        r = simulate_fmu(str(fmu), start_values={"m": row["m"], "l": 0.6}, stop_time=0.5,
                         output_interval=0.01)
        assert row["x_end"] == r["x"][-1] and row["f"] == r["theta"][-1]  # bit for bit
