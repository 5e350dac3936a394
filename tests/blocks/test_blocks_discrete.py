"""ZeroOrderHold, Memory and DiscreteIntegrator against their analytic responses: the hold keeps
the value of its last sample instant, the memory is one diagram step late, the integrator follows
forward Euler, stops at its limits and leaves them without windup."""

import math

import numpy as np
import pytest
from runner_support import step_block

from blocks import (
    PID,
    Constant,
    DiscreteIntegrator,
    Function,
    Gain,
    Memory,
    Saturation,
    Sine,
    Step,
    UnitDelay,
    ZeroOrderHold,
)
from mbsfmu.runner import AlgebraicLoopError, BlockError, Diagram
from mbsfmu.runner.block import block_type


def test_zero_order_hold_holds_between_its_samples():
    """A 2 Hz sine held every 5 steps of 10 ms: y(t) = sin(ω t_j) with t_j = 50 ms · floor(t / 50 ms)."""
    d = Diagram(0.01)
    d.add("s", Sine(frequency=2.0))
    d.add("zoh", ZeroOrderHold(0.05))
    d.connect("s.y", "zoh.u")
    res = d.run(1.0, record=["zoh.y"])
    tj = 0.05 * np.floor(res.t / 0.05 + 1e-9)
    np.testing.assert_allclose(res["zoh.y"], np.sin(4.0 * math.pi * tj), rtol=0, atol=1e-15)
    periods = res["zoh.y"][:100].reshape(20, 5)
    assert np.array_equal(periods, periods[:, :1].repeat(5, axis=1))  # held, bit for bit
    assert ZeroOrderHold(0.05).feedthrough() == {"y": ("u",)}


def test_memory_is_one_diagram_step_late_and_breaks_a_loop():
    u = lambda t: (math.exp(t),)  # noqa: E731
    assert np.array_equal(step_block(Memory(3.0), u, 20), step_block(UnitDelay(3.0), u, 20))
    assert Memory().sample_time is None and block_type("Memory") is Memory
    d = Diagram(0.1)  # x[k+1] = -0.5 x[k] through the memory
    d.add("g", Gain(-0.5))
    d.add("m", Memory(1.0))
    d.connect("m.y", "g.u")
    d.connect("g.y", "m.u")
    res = d.run(1.0, record=["m.y"])
    np.testing.assert_allclose(res["m.y"], (-0.5) ** np.arange(11), rtol=0, atol=1e-15)


def test_integrator_is_forward_euler():
    """u = cos t, gain 2, T = 0.01: x[k] = x0 + 2 T Σ_{j<k} cos(t_j), no feed-through."""
    b = DiscreteIntegrator(gain=2.0, initial=0.5)
    assert b.feedthrough() == {}
    y = step_block(b, lambda t: (math.cos(t),), 200, dt=0.01)[:, 0]
    tj = 0.01 * np.arange(200)
    want = 0.5 + 2 * 0.01 * np.concatenate([[0.0], np.cumsum(np.cos(tj))[:-1]])
    np.testing.assert_allclose(y, want, rtol=0, atol=1e-13)


def test_integrator_limits_and_anti_windup():
    """u = +1 until t = 1 s, then -1; T = 0.1, upper 0.5, lower -0.2.  The state rises 0.1 per
    sample, stays at 0.5 while u pushes up, leaves at the first sample after the sign change
    (k = 11: 0.4), reaches -0.2 at k = 17 and stays.  An unlimited integrator followed by a
    Saturation winds up: it leaves 0.5 only at k = 16, when the integral comes back from 1.0."""
    u = lambda t: (1.0 if t < 1.0 - 1e-9 else -1.0,)  # noqa: E731
    y = step_block(DiscreteIntegrator(lower=-0.2, upper=0.5), u, 25)[:, 0]
    k = np.arange(25)
    want = np.where(k <= 10, np.minimum(0.1 * k, 0.5), np.maximum(0.5 - 0.1 * (k - 10), -0.2))
    np.testing.assert_allclose(y, want, rtol=0, atol=1e-12)
    assert y[11] == pytest.approx(0.4) and y[17] == pytest.approx(-0.2)
    wound = step_block(DiscreteIntegrator(), u, 25)[:, 0]
    sat = np.clip(wound, -0.2, 0.5)
    assert np.flatnonzero(sat < 0.5 - 1e-12)[5] == 16  # first sample below the limit after k = 5


def test_integrator_in_a_loop_decays_geometrically():
    """x[k+1] = x[k] + T·(-x[k]): x[k] = x0 (1 - T)^k; the loop is not algebraic."""
    d = Diagram(0.1)
    d.add("i", DiscreteIntegrator(initial=2.0))
    d.add("g", Gain(-1.0))
    d.connect("i.y", "g.u")
    d.connect("g.y", "i.u")
    assert d.check() == []
    res = d.run(2.0, record=["i.y"])
    np.testing.assert_allclose(res["i.y"], 2.0 * 0.9 ** np.arange(21), rtol=0, atol=1e-14)


def test_a_loop_through_a_zero_order_hold_is_still_algebraic():
    d = Diagram(0.1)
    d.add("h", ZeroOrderHold(0.2))
    d.add("g", Gain(-1.0))
    d.connect("h.y", "g.u")
    d.connect("g.y", "h.u")
    with pytest.raises(AlgebraicLoopError, match=r"\[h, g\]|\[g, h\]"):
        d.run(1.0)


def test_integrator_snapshot_and_pid_agree_on_a_pure_integral():
    """An integrating PID (kp = kd = 0) has the same forward-Euler integral."""
    u = lambda t: (math.sin(3 * t) + 0.1,)  # noqa: E731
    a = step_block(DiscreteIntegrator(gain=4.0), u, 50, dt=0.02)
    b = step_block(PID(kp=0.0, ki=4.0), u, 50, dt=0.02)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-14)
    i = DiscreteIntegrator()
    i.start(0.0, 0.1)
    i.update(0.0, (3.0,))
    snap = i.get_state()
    i.update(0.1, (3.0,))
    i.set_state(snap)
    assert i.output(0.2, (0.0,)) == pytest.approx((0.3,))


def test_run_of_a_discrete_pi_loop_with_hold():
    """A saturated plant input through a hold, integrated: the diagram runs with all blocks
    multi-rate (hold 0.2 s on a 0.1 s step) and the integral matches the held staircase."""
    d = Diagram(0.1)
    d.add("s", Step(time=0.3, after=5.0))
    d.add("sat", Saturation(-1.0, 1.0))
    d.add("zoh", ZeroOrderHold(0.2))
    d.add("i", DiscreteIntegrator())
    d.add("c", Constant(0.0))
    d.add("f", Function(lambda t, a, b: a + b, inputs=("a", "b")))
    d.connect("s.y", "sat.u")
    d.connect("sat.y", "zoh.u")
    d.connect("zoh.y", "f.a")
    d.connect("c.y", "f.b")
    d.connect("f.y", "i.u")
    res = d.run(1.0, record=["zoh.y", "i.y"])
    held = np.where(np.floor(res.t / 0.2 + 1e-9) * 0.2 >= 0.3, 1.0, 0.0)
    np.testing.assert_allclose(res["zoh.y"], held, atol=0)
    np.testing.assert_allclose(res["i.y"], 0.1 * np.concatenate([[0.0], np.cumsum(held)[:-1]]),
                               rtol=0, atol=1e-14)


@pytest.mark.parametrize("make, match", [
    (lambda: ZeroOrderHold(None), r"ZeroOrderHold needs a sample_time"),
    (lambda: ZeroOrderHold(-0.1), r"sample_time must be positive"),
    (lambda: Memory(math.nan), r"Memory initial must be finite, got nan"),
    (lambda: DiscreteIntegrator(lower=1.0, upper=1.0),
     r"DiscreteIntegrator: lower 1.0 must be less than upper 1.0"),
    (lambda: DiscreteIntegrator(initial=2.0, upper=1.0),
     r"DiscreteIntegrator: initial 2.0 is outside the limits \[-inf, 1.0\]"),
    (lambda: DiscreteIntegrator(gain="fast"), r"DiscreteIntegrator gain must be a real number, got 'fast'"),
])
def test_bad_parameters(make, match):
    with pytest.raises(BlockError, match=match):
        make()
