"""DeadZone, Quantizer and Relay on a ramp against their closed forms; Relay's hysteresis
switching points; all three feed through, so a loop through one alone is algebraic."""

import math

import numpy as np
import pytest
from runner_support import step_block

from blocks import Constant, DeadZone, Function, Gain, Quantizer, Relay, Sum, UnitDelay
from mbsfmu.runner import AlgebraicLoopError, BlockError, Diagram
from mbsfmu.runner.block import block_type

#: the ramp u = t - 2 on t = 0, 0.01, ..., 4 (from -2 to 2)
T = 0.01 * np.arange(401)
U = T - 2.0


def on_ramp(block):
    return step_block(block, lambda t: (t - 2.0,), len(T), dt=0.01)[:, 0]


def test_dead_zone_on_a_ramp():
    y = on_ramp(DeadZone(-0.5, 1.0))
    want = np.where(U > 1.0, U - 1.0, np.where(U < -0.5, U + 0.5, 0.0))
    np.testing.assert_allclose(y, want, rtol=0, atol=1e-15)
    assert DeadZone(0.0, 0.0).output(0.0, (-3.0,)) == (-3.0,)  # an empty zone is the identity
    assert DeadZone(-1, 1).feedthrough() == {"y": ("u",)} and block_type("DeadZone") is DeadZone


def test_quantizer_on_a_ramp():
    """y = q·round(u/q): a staircase with steps of q = 0.25 at u = (m + 1/2) q, |y - u| <= q/2."""
    q = 0.25
    y = on_ramp(Quantizer(q))
    off_tie = np.abs(np.abs(U / q) % 1.0 - 0.5) > 1e-6
    np.testing.assert_allclose(y[off_tie], q * np.round(U[off_tie] / q), rtol=0, atol=1e-15)
    assert np.all(np.abs(y - U) <= q / 2 + 1e-12)
    assert np.all(np.diff(y) >= 0.0) and set(np.round(y / q, 9)) == set(range(-8, 9))
    jumps = U[1:][np.diff(y) > 0]  # the first sample of each new stair
    past = jumps - (np.arange(-8, 8) + 0.5) * q  # how far past its switching point (m + 1/2) q
    assert np.all((past > 0.0) & (past < 0.01))
    # halves are rounded away from zero: the map is odd
    assert [Quantizer(1.0).output(0.0, (v,))[0] for v in (2.5, -2.5, 0.5, -0.5, 0.49)] == [
        3.0, -3.0, 1.0, -1.0, 0.0]


def triangle(t):
    """-2 -> 2 over 4 s, back to -2 over the next 4 s."""
    return (t - 2.0 if t <= 4.0 else 6.0 - t,)


def test_relay_hysteresis_switching_points():
    """on at u >= 1, off at u <= -1: on the rising ramp from t = 3 s (u = 1), off on the falling
    one from t = 7 s (u = -1); between, the zero crossings (t = 2 s, 6 s) change nothing."""
    r = Relay(on_point=1.0, off_point=-1.0, on_value=5.0, off_value=-5.0)
    y = step_block(r, triangle, 801, dt=0.01)[:, 0]
    k = np.arange(801)
    np.testing.assert_array_equal(y, np.where((k >= 300) & (k < 700), 5.0, -5.0))
    # inside the band the initial state shows until the input leaves it (here at t = 0.5 s)
    band = lambda t: (0.0 if t < 0.5 - 1e-9 else -2.0,)  # noqa: E731
    for initial, first in (("on", 1.0), ("off", 0.0)):
        y = step_block(Relay(1.0, -1.0, initial=initial), band, 10)[:, 0]
        np.testing.assert_array_equal(y, [first] * 5 + [0.0] * 5)


def test_relay_comparator_and_state():
    c = Relay(0.0, 0.0)  # a comparator: on for u >= 0
    assert [c.output(0.0, (v,))[0] for v in (-1e-9, 0.0, 3.0)] == [0.0, 1.0, 1.0]
    r = Relay(1.0, -1.0)
    r.start(0.0, 0.1)
    r.update(0.0, (2.0,))
    assert r.on and r.output(0.1, (0.0,)) == (1.0,)  # inside the band it stays on
    snap = r.get_state()
    r.update(0.1, (-3.0,))
    assert not r.on
    r.set_state(snap)
    assert r.on and r.output(0.2, (-0.5,)) == (1.0,)


def loop_through(block):
    d = Diagram(0.1)
    d.add("nl", block)
    d.add("g", Gain(-0.5))
    d.connect("nl.y", "g.u")
    d.connect("g.y", "nl.u")
    return d


@pytest.mark.parametrize("make", [lambda: DeadZone(-1, 1), lambda: Quantizer(0.1),
                                  lambda: Relay(1, -1)], ids=["DeadZone", "Quantizer", "Relay"])
def test_loops_through_them_are_algebraic(make):
    with pytest.raises(AlgebraicLoopError, match=r"algebraic loop.*\[nl, g\]"):
        loop_through(make()).run(1.0)


def test_relay_oscillator_through_a_unit_delay():
    """A relay feedback loop broken by z^-1: u[k] = -y[k-1] with y = ±1 flips every sample."""
    d = Diagram(0.1)
    d.add("r", Relay(0.0, 0.0, 1.0, -1.0))
    d.add("z", UnitDelay(0.5))
    d.add("neg", Function(lambda t, v: -v))
    d.connect("r.y", "z.u")
    d.connect("z.y", "neg.u")
    d.connect("neg.y", "r.u")
    res = d.run(1.0, record=["r.y"])
    np.testing.assert_array_equal(res["r.y"], [-1.0 if k % 2 == 0 else 1.0 for k in range(11)])


@pytest.mark.parametrize("make, match", [
    (lambda: DeadZone(1.0, -1.0), r"DeadZone: lower 1.0 > upper -1.0"),
    (lambda: DeadZone(-math.inf, 1.0), r"DeadZone lower must be finite, got -inf"),
    (lambda: Quantizer(0.0), r"Quantizer interval must be > 0, got 0.0"),
    (lambda: Quantizer("fine"), r"Quantizer interval must be a real number, got 'fine'"),
    (lambda: Relay(-1.0, 1.0), r"Relay: off_point 1.0 must be <= on_point -1.0"),
    (lambda: Relay(1.0, 0.0, on_value=math.nan), r"Relay on_value must be finite, got nan"),
    (lambda: Relay(1.0, 0.0, initial=True), r"Relay initial must be 'off' or 'on', got True"),
])
def test_bad_parameters(make, match):
    with pytest.raises(BlockError, match=match):
        make()


def test_a_loop_through_a_dead_zone_is_solved_when_iterated():
    """y = dz(u), u = 3 - y/2 with the zone [-1, 1]: y = u - 1 gives y = 4/3; the runner's loop
    solver finds it with algebraic_loops='iterate'."""
    d = Diagram(0.1)
    d.add("b", Constant(3.0))
    d.add("half", Gain(0.5))
    d.add("sum", Sum("+-"))
    d.add("nl", DeadZone(-1.0, 1.0))
    d.connect("b.y", "sum.u1")
    d.connect("half.y", "sum.u2")
    d.connect("sum.y", "nl.u")
    d.connect("nl.y", "half.u")
    assert [loop.blocks for loop in d.check(algebraic_loops="iterate")] == [("half", "sum", "nl")]
    res = d.run(0.5, algebraic_loops="iterate", record=["nl.y"])
    np.testing.assert_allclose(res["nl.y"], 4.0 / 3.0, rtol=1e-9)
