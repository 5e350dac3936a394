"""Named initial conditions as FMU parameters (issue 25): both FMU kinds of the slider-crank have
the parameters ``crank_angle`` and ``der(crank_angle)`` (causality parameter, variability fixed,
initial exact); set before fmi2ExitInitializationMode, the consistent initialization starts from
them, as ``mbsfmu.simulate(initial=...)`` does, and after it they are refused."""

import math
from functools import partial

import numpy as np
import pytest
from fmu_support import MODELS, TOL, Lazy, Slave, assert_matches

import mbsfmu
from mbsfmu.codegen.fmu_variables import fmu_variables

fmpy = pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")

from fmpy.fmi1 import FMICallException  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402

KINDS = ("native", "pythonfmu")
SLIDER = MODELS / "slider_crank.py"
R, L = 0.15, 0.5  # crank and rod of models/slider_crank.py
T_END, H = 0.5, 0.01
SET = {"crank_angle": 0.5, "der(crank_angle)": 1.0}


@pytest.fixture(scope="module")
def fmus(built_fmu):
    return Lazy({kind: partial(built_fmu, SLIDER, kind) for kind in KINDS})


def test_the_parameters_follow_the_inputs_in_the_layout():
    s = mbsfmu.load_model(SLIDER)
    variables = fmu_variables(s)
    names = [v.name for v in variables]
    first = names.index("crank_angle")
    assert names[first - 1] == "method" and names[first:first + 3] == ["crank_angle", "der(crank_angle)",
                                                                       "solver"]
    for v, start in zip(variables[first:first + 2], (math.pi / 4, 2 * math.pi)):
        assert (v.causality, v.variability, v.initial, v.kind) == ("parameter", "fixed", "exact",
                                                                   "initial_condition")
        assert v.start == start and v.value_reference == names.index(v.name)


@pytest.mark.parametrize("kind", KINDS)
def test_validates_and_starts_at_the_set_crank_angle(fmus, kind):
    assert validate_fmu(str(fmus[kind])) == []
    r = fmpy.simulate_fmu(str(fmus[kind]), stop_time=T_END, output_interval=H, start_values={**TOL, **SET})
    theta, rate = SET["crank_angle"], SET["der(crank_angle)"]
    assert r["alpha"][0] + r["beta"][0] - math.pi == pytest.approx(theta, abs=1e-12)
    assert r["der(alpha)"][0] + r["der(beta)"][0] == pytest.approx(rate, abs=1e-12)
    # the slider at the rod's length from the pin r (cos theta, sin theta)
    x = R * math.cos(theta) + math.sqrt(L**2 - (R * math.sin(theta)) ** 2)
    assert r["x"][0] == pytest.approx(x, abs=1e-12)
    ref = mbsfmu.simulate(SLIDER, T_END, H, rtol=1e-10, atol=1e-12, method="rkstab", initial=SET)
    assert_matches(r, ref, tol=1e-9)
    # the declared values when nothing is set
    r = fmpy.simulate_fmu(str(fmus[kind]), stop_time=0.01, output_interval=H, start_values=dict(TOL))
    assert r["alpha"][0] + r["beta"][0] - math.pi == pytest.approx(math.pi / 4, abs=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_refused_after_initialization_and_kept(fmus, kind, tmp_path):
    s = Slave(fmus[kind], tmp_path)
    s.instantiate()
    assert s.start(SET) <= 1
    assert s.get(["crank_angle"])[0] == 0.5
    before = s.get()
    with pytest.raises(FMICallException):
        s.set({"crank_angle": 0.7})
    assert any("crank_angle" in m and "initial condition" in m and "initialization" in m.lower()
               for m in s.errors()), s.messages
    assert np.array_equal(s.get(), before) and s.get(["crank_angle"])[0] == 0.5
    s.free()


@pytest.mark.parametrize("kind", KINDS)
def test_a_value_that_is_not_finite_is_refused(fmus, kind, tmp_path):
    s = Slave(fmus[kind], tmp_path)
    s.instantiate()
    s.fmu.setupExperiment(startTime=0.0)
    s.fmu.enterInitializationMode()
    with pytest.raises(FMICallException):
        s.set({"crank_angle": math.nan})
    assert any("crank_angle" in m and ("not finite" in m or "not a finite" in m) for m in s.errors())
    assert s.get(["crank_angle"])[0] == pytest.approx(math.pi / 4)
    s.free()
