"""Rates in the consistent initialization (issue 12, item 6.5): a rate the user did not give is a
guess, given rates that fit the constraints keep their values, and the warning about changed
initial values comes only when given values really contradict the constraints and conditions.
The same in Python (consistent_initialization.py), on the C engine and in a native FMU
(mbs_form_consistent)."""

import math
import warnings

import numpy as np
import pytest
from fmu_support import MODELS, Slave

import mbsfmu
from mbsfmu import System, rot_z
from mbsfmu.core.errors import InconsistentInitialValuesWarning

BACKENDS = ["numpy", "c"]


def quiet_run(model, backend, **kw):
    """simulate with every warning an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return mbsfmu.simulate(model, t_end=0.1, dt=0.01, rtol=1e-10, atol=1e-12, backend=backend, **kw)


def slider_without_rates():
    """models/slider_crank.py as a new user writes it: positions as guesses, only the crank
    rate given (by the initial condition), no other rate mentioned."""
    s = System("slider_no_rates")
    r, l = s.constants(r=0.15, l=0.5)
    x, alpha, beta = s.coordinates("x", "alpha", "beta")
    s.body("slider", rel_pos=[x, 0, 0], mass=1.0, inertia=[0, 0, 0])
    s.body("rod", ref="slider", rel_rot=rot_z(alpha), cg_pos=[l / 2, 0, 0], mass=0.5,
           inertia=[0, 0.5 * 0.25 / 12, 0.5 * 0.25 / 12])
    s.frame("rod_end", ref="rod", rel_pos=[l, 0, 0])
    s.body("crank", ref="rod_end", rel_rot=rot_z(beta), cg_pos=[r / 2, 0, 0], mass=0.3,
           inertia=[0, 0.3 * 0.0225 / 12, 0.3 * 0.0225 / 12])
    s.frame("crank_end", ref="crank", rel_pos=[r, 0, 0])
    s.loop("pivot", "ISYS", "crank_end", translations="xy")
    s.initial_condition("crank_angle", alpha + beta - math.pi, math.pi / 4, rate=2 * math.pi)
    s.initial_guess(x=0.6, alpha=2.9, beta=1.0)
    return s


def cylinder(**given):
    """A point on the cylinder x^2 + y^2 = 1 (2 DOF) at 45 degrees, its height's rate given by an
    initial condition; the rate of y is given (1.0) and fits, x' must follow (-1.0)."""
    s = System("cylinder")
    x, y, z = s.coordinates("x", "y", "z")
    s.body("P", rel_pos=[x, y, z], mass=1.0, inertia=[0, 0, 0])
    s.constraint("cylinder", x**2 + y**2 - 1)
    s.initial_condition("height", z, 0.5, rate=1.0)
    s.initial(x=math.sqrt(0.5), y=math.sqrt(0.5), z=0.5, Dy=1.0, **given)
    return s


def test_rates_not_given_are_guesses():
    s = System("flags")
    a = s.coordinate("a")
    s.coordinate("b", velocity=0.0)
    s.coordinate("c", velocity=2.0)
    flags = {c.name: c.guess_velocity for c in s.coordinates_.values()}
    assert flags == {"a": True, "b": False, "c": False}
    s.initial(Da=0.0)
    assert not s.coordinates_["a"].guess_velocity and s.coordinates_["a"].initial_velocity == 0.0
    s.initial_guess(Db=1.0, c=0.3)
    assert s.coordinates_["b"].guess_velocity and s.coordinates_["c"].guess
    s.initial(c=0.4)  # given now, no longer a guess
    assert not s.coordinates_["c"].guess
    assert str(a) == "a"


@pytest.mark.parametrize("backend", BACKENDS)
def test_slider_crank_model_runs_without_warning(backend):
    res = quiet_run(mbsfmu.load_model(MODELS / "slider_crank.py"), backend)
    assert res.constraint_residual.max() < 1e-10


@pytest.mark.parametrize("backend", BACKENDS)
def test_crank_rate_alone_gives_no_warning(backend):
    res = quiet_run(slider_without_rates(), backend)
    ref = quiet_run(mbsfmu.load_model(MODELS / "slider_crank.py"), backend)
    np.testing.assert_allclose(res.yd[:, 0], ref.yd[:, 0], atol=1e-10)
    # the crank turns at the given 2 pi rad/s
    assert abs(res.yd[1, 0] + res.yd[2, 0] - 2 * math.pi) < 1e-10


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_given_rate_that_fits_keeps_its_value(backend):
    res = quiet_run(cylinder(), backend)
    assert res.yd[1, 0] == 1.0  # held, not spread over the rates by a minimum-norm change
    np.testing.assert_allclose(res.yd[:, 0], [-1.0, 1.0, 1.0], atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_inconsistent_given_rates_still_warn(backend):
    # der(x) is fixed by the crank rate in this 1-DOF mechanism: a given 0 contradicts it
    s = mbsfmu.load_model(MODELS / "slider_crank.py")
    s.initial(Dx=0.0)
    with pytest.warns(InconsistentInitialValuesWarning,
                      match=r"slider_crank: initial values changed to satisfy the constraints: "
                            r"der\(x\): 0 -> -0\.81109\d*$"):
        res = mbsfmu.simulate(s, t_end=0.1, dt=0.01, backend=backend)
    assert abs(res.yd[0, 0] + 0.811096518) < 1e-8
    # the same given through simulate(initial=...)
    with pytest.warns(InconsistentInitialValuesWarning, match=r"der\(x\): 0 -> -0\.81109"):
        mbsfmu.simulate(MODELS / "slider_crank.py", t_end=0.1, dt=0.01, backend=backend,
                        initial={"der(x)": 0.0})
    # on the cylinder, a given x' that contradicts the given y' moves both (minimum change)
    with pytest.warns(InconsistentInitialValuesWarning, match=r"der\(x\): 0 -> -0\.5; der\(y\): 1 -> 0\.5"):
        res = mbsfmu.simulate(cylinder(Dx=0.0), t_end=0.1, dt=0.01, backend=backend)
    np.testing.assert_allclose(res.yd[:, 0], [-0.5, 0.5, 1.0], atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unreachable_rates_with_held_coordinates_raise_as_before(backend):
    """Holding x (position and rate, at the consistent position) leaves no rate that can turn
    the crank."""
    x0 = float(quiet_run(mbsfmu.load_model(MODELS / "slider_crank.py"), backend).y[0, 0])
    with pytest.raises(mbsfmu.ConstraintError, match=r"slider_crank: no consistent initial velocities "
                                                     r"\(velocity constraints violated by"):
        mbsfmu.simulate(MODELS / "slider_crank.py", t_end=0.1, dt=0.01, backend=backend,
                        fixed=["x"], initial={"x": x0})


@pytest.mark.slow
def test_native_fmu_warns_only_for_contradicting_rates(tmp_path, built_fmu):
    pytest.importorskip("fmpy")
    from mbsfmu.fmu.native import build_native_fmu

    ref = quiet_run(mbsfmu.load_model(MODELS / "slider_crank.py"), "numpy")
    path = built_fmu(MODELS / "slider_crank.py")
    rates = ["der(x)", "der(alpha)", "der(beta)"]
    for start, status in (({}, 0), ({"der(x)": float(ref.yd[0, 0])}, 0), ({"der(x)": 0.0}, 1)):
        s = Slave(path, tmp_path)
        assert s.start(start) == status, start
        np.testing.assert_allclose(s.get(rates), ref.yd[:, 0], atol=1e-9)
        warned = [m for st, c, m in s.messages if c == "logStatusWarning"]
        s.free()
        assert bool(warned) == bool(status), warned
        if status:
            assert any("der(x): 0 -> -0.81109" in m for m in warned)
    cyl = build_native_fmu(cylinder(), tmp_path / "cylinder.fmu")
    s = Slave(cyl, tmp_path, folder="cylinder")
    assert s.start() == 0
    np.testing.assert_allclose(s.get(["der(x)", "der(y)", "der(z)"]), [-1.0, 1.0, 1.0], atol=1e-12)
    s.free()
