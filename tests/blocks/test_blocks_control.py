"""Discrete PID against closed forms, and its anti-windup in a saturated loop."""

import math

import numpy as np
import pytest
from runner_support import step_block

import mbsfmu.runner
from blocks import PID, Step, Sum, TransferFunction
from mbsfmu.runner import BlockError


def run(block, u, n, dt=0.1, t0=0.0):
    """The single output of ``block`` stepped by hand (see step_block), as a 1-D array."""
    return step_block(block, u, n, dt, t0)[:, 0]


def test_p_only():
    pid = PID(3.0)
    assert pid.feedthrough() == {"y": ("u",)}
    y = run(pid, lambda t: (math.sin(t),), 20)
    np.testing.assert_allclose(y, 3.0 * np.sin(0.1 * np.arange(20)), rtol=0, atol=1e-15)


def test_i_only_ramp_response_forward_euler():
    # constant error e: I[k] = ki·e·k·T exactly (forward Euler, I[0] = 0), no feed-through
    pid = PID(0.0, ki=2.0)
    assert pid.feedthrough() == {}
    y = run(pid, lambda t: (0.5,), 30, dt=0.05, t0=1.0)
    np.testing.assert_allclose(y, 2.0 * 0.5 * 0.05 * np.arange(30), rtol=0, atol=1e-12)


@pytest.mark.parametrize("tf", [None, 0.0, 0.3])
def test_filtered_derivative_of_ramp(tf):
    # e = s·t from e[-1] = e[0] = 0: D[k] = kd·s·(1 - a^k), a = tf/(tf + T)  ->  kd·s
    kd, s, T = 0.7, 2.0, 0.1
    y = run(PID(0.0, kd=kd, tf=tf), lambda t: (s * t,), 120, dt=T)
    a = (2 * T if tf is None else tf) / ((2 * T if tf is None else tf) + T)
    np.testing.assert_allclose(y, kd * s * (1 - a ** np.arange(120)), rtol=0, atol=1e-12)
    assert abs(y[-1] - kd * s) < 1e-9


def test_derivative_kick_and_output_does_not_change_state():
    pid = PID(1.0, ki=1.0, kd=0.4, tf=0.1)
    pid.start(0.0, 0.1)
    y0 = pid.output(0.0, (1.0,))[0]
    assert y0 == pytest.approx(1.0 + 0.4 / 0.2, abs=1e-15)  # kp·e + kd·e[0]/(tf + T)
    assert pid.output(0.0, (1.0,))[0] == y0 and pid.get_state() == (0.0, 0.0, 0.0)


def test_clamping_stops_the_integrator_in_saturation():
    # open loop, ki = 1, T = 0.01 (I grows by 0.01 per sample), y <= 0.505: e = +1 for 2 s, then -1
    T = 0.01
    e = lambda t: (1.0 if t < 2.0 - T / 2 else -1.0,)  # noqa: E731
    wound = run(PID(0.0, ki=1.0, u_max=0.505, anti_windup=None), e, 400, dt=T)
    clamped = run(PID(0.0, ki=1.0, u_max=0.505), e, 400, dt=T)
    # without anti-windup I reaches 2 and y stays at the limit until I = 2 - 0.01·j < 0.505: j = 150
    assert np.all(wound[51:350] == 0.505) and abs(wound[350] - 0.5) < 1e-9
    # with clamping I freezes at its first value above the limit, 0.51, and y leaves the limit one
    # sample after the reversal, then falls by ki·T per sample
    assert np.all(clamped[51:201] == 0.505)
    np.testing.assert_allclose(clamped[201:210], 0.51 - 0.01 * np.arange(1, 10), rtol=0, atol=1e-9)


def test_back_calculation_steady_state():
    # kp = 0, constant e, y <= u_max: I[k+1] = I + T(ki·e + kb(u_max - I))  ->  u_max + ki·e/kb
    pid = PID(0.0, ki=1.0, u_max=0.5, anti_windup="back_calculation", kb=2.0)
    y = run(pid, lambda t: (1.0,), 1500, dt=0.01)
    assert np.all(y[51:] == 0.5)
    assert pid.integral == pytest.approx(0.5 + 1.0 / 2.0, abs=1e-9)
    # the error reverses: dI/dt = -ki - kb(I - u_max) brings I down to u_max after ln(2)/2 s
    # (without anti-windup I would have reached 8 and y would stay at the limit 7.5 s)
    n = 0
    while pid.output(0.0, (-1.0,))[0] >= 0.5:
        pid.update(0.0, (-1.0,))
        n += 1
    assert abs(n * 0.01 - math.log(2) / 2) < 0.01


def closed_loop(pid, T=0.01, n=1500, tau=1.0):
    """Unit setpoint step on the lag 1/(tau·s + 1) (ZOH-exact), PID on the error; plant output."""
    a = math.exp(-T / tau)
    x, xs = 0.0, []
    pid.start(0.0, T)
    for k in range(n):
        e = (1.0 - x,)
        v = pid.output(k * T, e)[0]
        pid.update(k * T, e)
        xs.append(x)
        x = a * x + (1 - a) * v
    return np.array(xs)


def test_anti_windup_reduces_overshoot_in_saturated_loop():
    # PI kp = ki = 5 cancels the plant pole: unsaturated, a first-order response without overshoot.
    # With the actuator limited to 1.5 the integrator winds up: 16.7 % overshoot without
    # anti-windup, none with clamping, 0.014 % with back-calculation.
    free = closed_loop(PID(5.0, 5.0))
    wound = closed_loop(PID(5.0, 5.0, u_max=1.5, anti_windup=None))
    clamped = closed_loop(PID(5.0, 5.0, u_max=1.5, anti_windup="clamping"))
    back = closed_loop(PID(5.0, 5.0, u_max=1.5, anti_windup="back_calculation"))
    assert free.max() - 1 < 2e-4
    assert 0.16 < wound.max() - 1 < 0.17
    assert clamped.max() - 1 < 1e-6
    assert back.max() - 1 < 2e-4
    for x in (wound, clamped, back):
        assert abs(x[-1] - 1.0) < 1e-5


@pytest.mark.skipif(not hasattr(mbsfmu.runner, "Diagram"), reason="needs mbsfmu.runner.Diagram")
def test_saturated_loop_in_a_diagram():
    # the clamped loop above wired as blocks: Step -> Sum -> PID -> TransferFunction -> back to Sum
    d = mbsfmu.runner.Diagram(step=0.01)
    d.add("ref", Step())
    d.add("err", Sum("+-"))
    d.add("pid", PID(5.0, 5.0, u_max=1.5))
    d.add("plant", TransferFunction([1.0], [1.0, 1.0]))
    for a, b in [("ref.y", "err.u1"), ("plant.y", "err.u2"), ("err.y", "pid.u"), ("pid.y", "plant.u")]:
        d.connect(a, b)
    res = d.run(15.0)
    np.testing.assert_allclose(res["plant.y"], closed_loop(PID(5.0, 5.0, u_max=1.5), n=1501),
                               rtol=0, atol=1e-12)
    assert res["pid.y"].max() == 1.5


def test_rerun_and_snapshot():
    pid = PID(1.0, 2.0, 0.1, u_min=-1.0, u_max=1.0, sample_time=0.2)
    assert pid.sample_time == 0.2
    u = lambda t: (math.cos(3 * t),)  # noqa: E731
    first = run(pid, u, 30, dt=0.2)
    assert np.array_equal(run(pid, u, 30, dt=0.2), first)
    snap = pid.get_state()
    y = pid.output(6.0, (0.3,))
    pid.update(6.0, (0.3,))
    pid.set_state(snap)
    assert pid.output(6.0, (0.3,)) == y


@pytest.mark.parametrize("kwargs, match", [
    ({"kp": math.nan}, "kp must be finite"),
    ({"kp": 1.0, "ki": math.inf}, "ki must be finite"),
    ({"kp": 1.0, "kd": "a"}, "kd must be a real number"),
    ({"kp": 1.0, "tf": -0.1}, "tf must be >= 0"),
    ({"kp": 1.0, "u_min": 1.0, "u_max": 1.0}, "u_min 1.0 must be less than u_max 1.0"),
    ({"kp": 1.0, "u_max": math.nan}, "u_max must be a number"),
    ({"kp": 1.0, "anti_windup": "clamp"}, "anti_windup must be"),
    ({"kp": 1.0, "kb": 1.0}, "kb is only used with anti_windup='back_calculation'"),
    ({"kp": 1.0, "kb": -1.0, "anti_windup": "back_calculation"}, "kb must be >= 0"),
    ({"kp": 1.0, "sample_time": 0}, "sample_time must be positive"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(BlockError, match=match):
        PID(**kwargs)
