"""How a run on the reference steppers (backend 'numpy': RKSTAB and scipy's methods) ends when
something fails during the steps (issue 23 item 8): always a SimulationError with the output
points reached in ``.result`` and a message that says what happened, never a library's
exception; and where only a stage or a Newton iterate leaves the domain of the model's functions,
not the motion, the run goes on as on the engine (whose C functions return NaN there).

References: the engine's run of the same model and settings (tests/engine/test_engine.py ties it to the
reference elsewhere) and, for the oscillator, its closed form x = cos t (the square-root term is
scaled by 1e-9, so its effect is below the tolerance)."""

import math

import numpy as np
import pytest
import sympy as sp
from fmu_support import MODELS

import mbsfmu
from mbsfmu import System


def oscillator(eps: float = 1e-6, coefficient: float = 1e-9) -> System:
    """x'' = -x + c sqrt(1 + eps - x^2), x(0) = 1: the motion x = cos t stays within |x| <= 1,
    where the root is defined, but the stages of a long step near x = +-1 may leave it."""
    s = System("domain", "harmonic oscillator with a square root defined for |x| <= sqrt(1 + eps)")
    (x,) = s.coordinates("x")
    s.body("b", rel_pos=[x, 0, 0], mass=1.0, inertia=[0, 0, 0])
    s.generalized_force("f", "x", -x + coefficient * sp.sqrt(1 + eps - x**2))
    s.initial(x=1.0)
    return s


@pytest.mark.parametrize("method", ["dop853", "stiff"])
def test_a_stage_outside_the_domain_is_retried_as_on_the_engine(method):
    """scipy's DOP853 at rtol 1e-6 evaluates x = 1.00135 at a stage near t = 2 pi (the issue's
    ValueError: math domain error, raised from the generated code); now that evaluation is NaN,
    the step is retried shorter, and the run ends within 1e-5 of cos t, as the engine's."""
    s = oscillator()
    calls = []
    res = mbsfmu.simulate(s, 10.0, 0.5, method=method, rtol=1e-6, backend="numpy",
                          progress=lambda t, te: calls.append(t))
    eng = mbsfmu.simulate(s, 10.0, 0.5, method=method, rtol=1e-6, backend="c")
    assert np.max(np.abs(res["x"] - np.cos(res.t))) < 1e-5
    assert np.max(np.abs(eng["x"] - np.cos(eng.t))) < 1e-5
    if method == "dop853":  # the stage outside the domain was met (and recorded)
        assert res.formulation.undefined is not None and "math domain error" in res.formulation.undefined[1]


def test_a_motion_that_leaves_the_domain_fails_clearly_with_its_result():
    """With a root that is defined only for |x| <= 1/2, the motion x = -sin t leaves its domain at
    t = pi/6: both backends fail there; the numpy backend's SimulationError names the model's
    statement with the coordinate's name, the time, and keeps the output points reached."""
    s = oscillator(eps=-0.75)
    s.initial(x=0.0)
    s.coordinates_["x"].initial_velocity = -1.0
    for backend in ("numpy", "c"):
        with pytest.raises(mbsfmu.SimulationError) as info:
            mbsfmu.simulate(s, 10.0, 0.1, rtol=1e-8, backend=backend)
        part = info.value.result
        assert part is not None and part.partial and 0.4 < part.t[-1] < math.pi / 6
        assert np.max(np.abs(part["x"] + np.sin(part.t))) < 1e-6
        msg = str(info.value)
        assert msg.startswith("domain: ")
        if backend == "numpy":
            assert "math domain error in" in msg and "math.sqrt(0.25 - ((x)*(x)))" in msg, msg


def test_a_projection_that_fails_mid_run_is_a_simulation_error_with_the_result():
    """The N = 2 four-bar with formulation 'projection' (PStab needs a full-rank C) at rtol 1e-10
    on the numpy backend stops at a flat position with ConstraintError inside the steps; simulate
    raises a SimulationError naming the method, the time and the cause, with the partial result
    (before: the ConstraintError, without the result)."""
    with pytest.raises(mbsfmu.SimulationError) as info:
        mbsfmu.simulate(mbsfmu.load_model(MODELS / "four_bar_natural.py", N=2), 10.0, 0.01, rtol=1e-10,
                        formulation="projection", backend="numpy")
    msg = str(info.value)
    assert msg.startswith("four_bar_natural: rkstab failed after t=") and "C M^-1 C^T is singular" in msg
    assert isinstance(info.value.__cause__, mbsfmu.ConstraintError)
    assert info.value.result is not None and info.value.result.t[-1] > 1.0


def test_an_input_function_that_raises_keeps_its_result():
    """A function of the user's (an input) that raises in the middle of a reference run: a
    SimulationError naming its exception, with the rows computed."""
    def force(t):
        if t > 0.5:
            raise KeyError("table ends at 0.5 s")
        return 0.0

    with pytest.raises(mbsfmu.SimulationError, match=r"cart_pendulum: rkstab failed after t=.*KeyError") as i:
        mbsfmu.simulate(MODELS / "cart_pendulum.py", 1.0, 0.01, inputs={"F": force}, backend="numpy")
    assert i.value.result.t[-1] >= 0.45


@pytest.mark.slow
def test_a_collapsed_step_size_ends_the_run_with_the_place():
    """The N = 10 four-bar with the unstabilized 'dae' and DOP853 at rtol 1e-10 creeps towards the
    flat position at t = 1.2412 with accepted steps of 5e-13 s, never arriving (before: the
    engine's run did not return for an hour, 1e7 steps per output step); now 10 000 accepted
    steps in a row shorter than 1e-12 of the interval end it, naming the singular position, within
    seconds, with the result so far."""
    s = mbsfmu.load_model(MODELS / "four_bar_natural.py", N=10)
    with pytest.raises(mbsfmu.SimulationError, match=r"the step size collapsed \(10000 accepted steps in a "
                       r"row shorter than 1e-12 of the interval\).*at t=1.2412.*nearly singular") as info:
        mbsfmu.simulate(s, 10.0, 0.01, rtol=1e-10, method="dop853", formulation="dae")
    assert 1.2 <= info.value.result.t[-1] <= 1.25


def test_the_collapse_rule_is_the_same_in_both_implementations():
    import re

    from mbsfmu.core.constants import COLLAPSE, STEP_HEADER
    from mbsfmu.runtime import source

    # the engine's, generated from COLLAPSE (tests/engine/test_c_stepper.py: as compiled)
    text = source(STEP_HEADER)
    assert float(re.search(r"#define MBS_STEP_COLLAPSE_RATIO (\S+)", text).group(1)) == COLLAPSE["ratio"]
    assert int(re.search(r"#define MBS_STEP_COLLAPSE_STEPS (\d+)", text).group(1)) == COLLAPSE["steps"]
    from mbsfmu.reference.integrators.stepper import Stepper, sample

    class Creeping(Stepper):  # approaches t = 1 by halving the distance: never arrives
        t0, t1, t, h, x0, x = 0.0, 1.0, 0.0, 0.0, np.zeros(1), np.zeros(1)

        def step(self):
            self.h = (1.0 - self.t) / 2 if self.t < 0.99 else 1e-13
            self.t += self.h

    with pytest.raises(mbsfmu.SimulationError, match=r"Creeping: the step size collapsed \(10000"):
        sample(Creeping())
