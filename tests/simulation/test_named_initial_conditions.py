"""Named initial conditions set per run (issue 25): ``simulate(initial={'crank_angle': 0.5,
'der(crank_angle)': 1.0})`` starts the slider-crank at that crank angle and rate, on both
backends and with every formulation, as a model that declares those values does; checked
against the closed-form position and velocity of the slider for that crank angle."""

import dataclasses
import math
import warnings

import numpy as np
import pytest
from condition_models import ring
from fmu_support import MODELS

import mbsfmu
from mbsfmu import ConstraintError, ParameterError
from mbsfmu.core.constants import FORMULATION_KINDS
from mbsfmu.core.errors import InconsistentInitialValuesWarning
from mbsfmu.engine.extension import Engine, EngineError

SLIDER = MODELS / "slider_crank.py"
R, L = 0.15, 0.5  # crank and rod of models/slider_crank.py
BACKENDS = ["numpy", "c"]
CONSTRAINED = [f for f in FORMULATION_KINDS if f != "minimal"]


def slider_x(theta: float, rate: float) -> tuple[float, float]:
    """The slider's x and x' for the crank at the absolute angle ``theta`` turning at ``rate``:
    the pin is at r (cos theta, sin theta), the slider on the x axis at the rod's length from it,
    x = r cos theta + sqrt(l^2 - r^2 sin^2 theta)."""
    root = math.sqrt(L**2 - (R * math.sin(theta)) ** 2)
    x = R * math.cos(theta) + root
    xd = -R * math.sin(theta) * rate - R**2 * math.sin(theta) * math.cos(theta) * rate / root
    return x, xd


def crank(res, k=0):
    """The crank angle alpha + beta - pi and its rate at output point k."""
    return res["alpha"][k] + res["beta"][k] - math.pi, res["der(alpha)"][k] + res["der(beta)"][k]


def declared(value, rate):
    """models/slider_crank.py with the crank angle's value and rate declared as given."""
    s = mbsfmu.load_model(SLIDER)
    s.initial_conditions[0] = dataclasses.replace(s.initial_conditions[0], value=value, rate=rate)
    s.name = "slider_crank_declared"  # its own engine, whose compiled start values are these
    return s


def run(model, backend, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a named condition that is set moves nothing given
        return mbsfmu.simulate(model, t_end=0.5, dt=0.05, rtol=1e-10, backend=backend, **kw)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_start_is_the_closed_form_of_the_set_crank_angle(backend):
    for theta, rate in ((0.5, 1.0), (2.5, -3.0), (-1.2, 2 * math.pi)):
        res = run(SLIDER, backend, initial={"crank_angle": theta, "der(crank_angle)": rate})
        assert crank(res) == pytest.approx((theta, rate), abs=1e-12)
        assert (res["x"][0], res["der(x)"][0]) == pytest.approx(slider_x(theta, rate), abs=1e-12)
        assert res.constraint_residual.max() < 1e-9


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_run_that_sets_it_is_the_run_of_the_model_that_declares_it(backend):
    res = run(SLIDER, backend, initial={"crank_angle": 0.5, "Dcrank_angle": 1.0})
    ref = run(declared(0.5, 1.0), backend)
    np.testing.assert_allclose(res.y, ref.y, rtol=0, atol=1e-13)
    np.testing.assert_allclose(res.yd, ref.yd, rtol=0, atol=1e-12)
    # only the value set: the declared rate 2 pi stays
    res = run(SLIDER, backend, initial={"crank_angle": 0.5})
    assert crank(res) == pytest.approx((0.5, 2 * math.pi), abs=1e-12)


def test_both_backends_agree_over_the_run():
    kw = dict(initial={"crank_angle": 1.1, "der(crank_angle)": -2.0})
    c, ref = run(SLIDER, "c", **kw), run(SLIDER, "numpy", **kw)
    np.testing.assert_allclose(c.y, ref.y, rtol=0, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("formulation", CONSTRAINED)
def test_every_formulation_starts_at_the_set_value(formulation, backend):
    res = mbsfmu.simulate(SLIDER, t_end=0.02, dt=0.01, rtol=1e-10, backend=backend, formulation=formulation,
                          initial={"crank_angle": 0.7, "der(crank_angle)": 0.5})
    assert crank(res) == pytest.approx((0.7, 0.5), abs=1e-12)
    assert res["x"][0] == pytest.approx(slider_x(0.7, 0.5)[0], abs=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_coordinate_that_contradicts_the_condition_moves(backend):
    """The condition is an equation of the consistent start, a coordinate a start value: given
    both, the condition holds and the warning names the coordinate that moved; holding the
    coordinate (fixed=) leaves no consistent start, and the error names both."""
    moved = r"slider_crank: initial values changed to satisfy the constraints: alpha: 2\.9 -> 2\.997"
    with pytest.warns(InconsistentInitialValuesWarning, match=moved):
        res = mbsfmu.simulate(SLIDER, t_end=0.01, dt=0.01, backend=backend,
                              initial={"crank_angle": 0.5, "alpha": 2.9})
    assert crank(res)[0] == pytest.approx(0.5, abs=1e-12)
    with pytest.raises(ConstraintError, match=r"cannot hold together with: held coordinate alpha = 2\.9; "
                                              r"initial condition 'crank_angle' \(.* = 0\.5\)"):
        mbsfmu.simulate(SLIDER, t_end=0.01, backend=backend, initial={"crank_angle": 0.5, "alpha": 2.9},
                        fixed=["alpha"])
    # a coordinate given where it fits the condition stays
    theta = 0.5
    alpha = math.pi - math.asin(R * math.sin(theta) / L)  # the rod's absolute angle at that crank angle
    res = run(SLIDER, backend, initial={"crank_angle": theta, "alpha": alpha})
    assert res["alpha"][0] == pytest.approx(alpha, abs=1e-12)
    assert crank(res)[0] == pytest.approx(theta, abs=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_condition_without_rate_takes_its_value_and_refuses_a_rate(backend):
    res = run(ring(), backend, initial={"height": -0.6})
    assert (res["x"][0], res["y"][0]) == pytest.approx((0.8, -0.6), abs=1e-12)
    for key in ("der(height)", "Dheight"):
        with pytest.raises(ParameterError, match=rf"initial value '{re_escape(key)}': the initial condition "
                                                 r"'height' of 'ring' declares no rate \(only its value "
                                                 r"'height' can be set; to set a rate, declare one"):
            mbsfmu.simulate(ring(), t_end=0.1, backend=backend, initial={key: 1.0})


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_value_out_of_reach_names_the_condition(backend):
    with pytest.raises(ConstraintError, match=r"ring: no consistent initial state: '(circle|height)' stays "
                                              r"violated by .*cannot hold together with: initial condition "
                                              r"'height' \(y = 2\)"):
        mbsfmu.simulate(ring(), t_end=0.1, backend=backend, initial={"height": 2.0})


def re_escape(text):
    import re

    return re.escape(text)


def test_the_engine_takes_a_condition_before_the_start_only():
    eng = Engine(mbsfmu.load_model(SLIDER))
    eng.set({"crank_angle": 0.3})
    eng.start(0.0, 1.0)
    y = eng.x
    assert y[1] + y[2] - math.pi == pytest.approx(0.3, abs=1e-12)
    with pytest.raises(EngineError, match=r"parameter 'crank_angle' is a named initial condition \(it "
                                          r"sets the start\) and cannot be changed after initialization"):
        eng.set({"crank_angle": 0.4})
    assert eng.get(["crank_angle"])[0] == 0.3
