"""Catalogue of bad inputs of the sensitivity surfaces (issue 25): simulate(sensitivities=...),
Result.sensitivity, mbsfmu.sensitivity.gradient and its metrics, least_squares.  Each case:
(label, call, exception type, regular expression that the message must match, naming the
culprit).  Every refusal happens before any engine run (counted)."""

import math

import pandas as pd
import pytest
from condition_models import ring

import mbsfmu
from mbsfmu import ParameterError, SimulationError, System
from mbsfmu.sensitivity import gradient, least_squares
from mbsfmu.simulation import engine_run
from models.slider_crank import model as slider_crank


def timed():
    """A pendulum driven by a prescribed angle whose amplitude is a constant."""
    s = System("driven_sens")
    amp, m = s.constants(amp=0.2, m=1.0)
    (x,) = s.coordinates("x")
    p = s.time_parameter("drive", amp * mbsfmu.t ** 2)
    s.body("B", rel_pos=[x + p, 0, 0], mass=m, inertia=[0, 0, 0])
    s.generalized_force("spring", "x", -x)
    return s


def sim(system=slider_crank, **kw):
    return lambda: mbsfmu.simulate(system(), 0.1, **kw)


def grad(metrics=None, wrt=("r",), t_end=0.1, **kw):
    return lambda: gradient(slider_crank(), {"x": "final(x)"} if metrics is None else metrics, list(wrt),
                            t_end, **kw)


DATA = pd.DataFrame({"time": [0.05, 0.1], "x": [0.5, 0.5]})

CASES = [
    # simulate(sensitivities=...)
    ("unknown name", sim(sensitivities=["nope"]), ParameterError,
     r"sensitivities: 'nope' is not a parameter of 'slider_crank'; give a constant \(r, l, m_crank"),
    ("name twice", sim(sensitivities=["r", "l", "r"]), ParameterError, r"'r' given more than once"),
    ("empty list", sim(sensitivities=[]), ParameterError, r"give at least one name"),
    ("a number", sim(sensitivities=[1.5]), ParameterError, r"1.5 is not a name"),
    ("not a list", sim(sensitivities=3), ParameterError, r"must be a list of names, got 3"),
    ("a dict of values", sim(sensitivities={"r": 0.2}), ParameterError,
     r"must be a list of names, got a dict .* set by params= and initial="),
    ("constant the equations do not read", sim(sensitivities=["g"]), ParameterError,
     r"the equations of 'slider_crank' do not depend on constant 'g' \(its sensitivities would be zero\)"),
    ("constant of a time parameter", sim(timed, sensitivities=["amp"]), ParameterError,
     r"constant 'amp' enters the time parameter\(s\) drive, whose derivatives are not generated"),
    ("rate of a condition without one", sim(ring, sensitivities=["der(height)"]), ParameterError,
     r"sensitivities: initial value 'der\(height\)': the initial condition 'height' of 'ring' "
     r"declares no rate"),
    ("numpy backend", sim(sensitivities=["r"], backend="numpy"), ParameterError,
     r"sensitivities are integrated by the C engine: backend 'numpy'"),
    ("scipy method", sim(sensitivities=["r"], method="RK45"), ParameterError,
     r"backend 'c' with method 'RK45' has none \(use backend='c' and method 'explicit', 'dop853' or "
     r"'stiff'\)"),
    ("error control unknown", sim(sensitivities=["r"], sensitivity_error_control="none"), ParameterError,
     r"sensitivity_error_control must be one of 'all', 'state', got 'none'"),
    # gradient
    ("max is not differentiable", grad({"a": "max(x)"}), ParameterError,
     r"metric 'a': max\(x\) is not differentiable \(the time of the maximum jumps"),
    ("min is not differentiable", grad({"a": "min(der(x))"}), ParameterError,
     r"min\(der\(x\)\) is not differentiable"),
    ("settling time", grad({"a": "settling_time(x)"}), ParameterError, r"a settling time moves in jumps"),
    ("rms", grad({"a": "rms(x)"}), ParameterError, r"use mean\(\) of an output that is the square"),
    ("iae", grad({"a": "iae(x, reference=1)"}), ParameterError,
     r"iae\(x\) is not differentiable \(\|reference - x\| has a kink"),
    ("overshoot", grad({"a": "overshoot(x)"}), ParameterError, r"overshoot\(x\) is not differentiable"),
    ("a sweep's argument", grad({"a": "final(x, bound=2)"}), ParameterError,
     r"metric 'a': 'final\(x, bound=2\)': final\(\) takes one signal and no arguments"),
    ("python function", grad({"a": lambda r: 1.0}), ParameterError,
     r"metric 'a': a Python function cannot be differentiated by the engine"),
    ("bare signal", grad({"a": "x"}), ParameterError,
     r"'x' is not of the form KIND\(SIGNAL\); write final\(x\)"),
    ("unknown kind", grad({"a": "median(x)"}), ParameterError,
     r"unknown kind 'median' in 'median\(x\)'; the differentiable kinds are final, integral, mean"),
    ("unknown signal", grad({"a": "final(nope)"}), ParameterError,
     r"'nope' is not a signal of 'slider_crank': a coordinate, der\(coordinate\), an output or a constraint"),
    ("no metrics", grad({}), ParameterError, r"metrics: give \{name: 'final\(x\)'\}"),
    ("expression with an unknown symbol", grad({"a": "integral(x**2 + foo)"}), ParameterError,
     r"metric 'a': 'x\*\*2 \+ foo': unknown symbol\(s\) foo; declare them .* or an expression of them"),
    ("expression that does not parse", grad({"a": "final(x +* 2)"}), ParameterError,
     r"metric 'a': 'x \+\* 2': cannot read"),
    ("metric a number", grad({"a": 3}), ParameterError, r"metric 'a': 3 is not a metric"),
    ("mode unknown", grad(mode="reverse"), ParameterError, r"mode must be one of auto, forward, adjoint"),
    ("t_end negative", grad(t_end=-1.0), ParameterError, r"t_end must be a positive number, got -1.0"),
    ("t_end nan", grad(t_end=math.nan), ParameterError, r"t_end must be a positive number, got nan"),
    ("t_end True", grad(t_end=True), ParameterError, r"t_end must be a positive number, got True"),
    ("no parameters", grad(wrt=()), ParameterError, r"give at least one name"),
    ("unused constant", grad(wrt=("g",)), ParameterError, r"do not depend on constant 'g'"),
    ("integration method for the mode", grad(method="adjoint"), ParameterError, r"unknown method 'adjoint'"),
    # least_squares
    ("least squares no signal", lambda: least_squares(DATA, []), ParameterError, r"at least one signal"),
    ("least squares weight of another signal", lambda: least_squares(DATA, ["x"], {"y": 2.0}), ParameterError,
     r"weights of 'y', which are not among the signals x"),
    ("least squares weights count", lambda: least_squares(DATA, ["x"], [1.0, 1.0]), ParameterError,
     r"2 weights for 1 signals"),
    ("least squares weight zero", lambda: least_squares(DATA, ["x"], [0.0]), ParameterError,
     r"weights must be positive numbers, got \(0.0,\)"),
    ("least squares data after the run", grad({"f": least_squares(DATA, "x")}, t_end=0.07), ParameterError,
     r"data DataFrame: 1 time\(s\) after the run's end t_end = 0.07"),
    ("least squares missing column", grad({"f": least_squares(DATA, "alpha")}), ParameterError,
     r"no column 'alpha'"),
    ("least squares missing file", grad({"f": least_squares("/nonexistent/d.csv", "x")}), ParameterError,
     r"data file '/nonexistent/d.csv' does not exist"),
]


@pytest.fixture
def runs(monkeypatch):
    """Counts the engine runs (a refused call makes none)."""
    count = []
    real = engine_run.Engine

    def counting(*a, **k):
        count.append(1)
        return real(*a, **k)

    monkeypatch.setattr(engine_run, "Engine", counting)
    return count


@pytest.mark.parametrize("label,call,exc,pattern", CASES, ids=[c[0] for c in CASES])
def test_refused_before_any_run(label, call, exc, pattern, runs):
    with pytest.raises(exc, match=pattern):
        call()
    assert runs == [], f"{label}: an engine run happened before the refusal"


def test_reading_a_result_refuses_what_it_does_not_hold():
    s = slider_crank()
    res = mbsfmu.simulate(s, 0.1, sensitivities=["r"])
    with pytest.raises(SimulationError, match=r"sensitivity by 'l': the run computed them by r only"):
        res.sensitivity("x", "l")
    with pytest.raises(ParameterError, match=r"'nope' is not a signal of 'slider_crank'"):
        res.sensitivity("nope", "r")
    plain = mbsfmu.simulate(s, 0.1)
    with pytest.raises(SimulationError, match=r"this result has no sensitivities; run simulate\(\.\.\., "
                                              r"sensitivities=\[names\]\)"):
        plain.sensitivity("x", "r")
    assert plain.sensitivity_names == []
