"""Math blocks (Gain, Sum, Saturation, RateLimiter, Function) through the block interface."""

import math

import numpy as np
import pytest
from runner_support import step_block

from blocks import Function, Gain, RateLimiter, Saturation, Sum
from mbsfmu.runner import BlockError


def test_gain():
    g = Gain(-2.5)
    assert (g.inputs, g.outputs, g.feedthrough()) == (("u",), ("y",), {"y": ("u",)})
    assert g.output(0.0, (4.0,)) == (-10.0,)


def test_sum_signs_ports_and_value():
    s = Sum("+-+")
    assert s.inputs == ("u1", "u2", "u3") and s.outputs == ("y",)
    assert s.feedthrough() == {"y": ("u1", "u2", "u3")}
    assert s.output(0.0, (1.0, 2.0, 4.0)) == (3.0,)
    assert Sum().output(0.0, (5.0, 7.0)) == (-2.0,)


def test_saturation():
    s = Saturation(-1.0, 2.0)
    assert [s.output(0.0, (u,))[0] for u in (-3.0, -1.0, 0.5, 2.0, 9.0)] == [-1.0, -1.0, 0.5, 2.0, 2.0]
    assert Saturation(0.0, math.inf).output(0.0, (1e300,)) == (1e300,)
    assert Saturation(1.0, 1.0).output(0.0, (5.0,)) == (1.0,)


def test_rate_limiter_closed_form():
    # rising 2/s, falling -1/s, T = 0.1: steps of at most +0.2 / -0.1 per sample from y[-1] = 0
    r = RateLimiter(2.0, -1.0, initial=0.0)
    assert r.feedthrough() == {"y": ("u",)}
    y = step_block(r, lambda t: (1.0 if t < 1.45 else 0.0,), 30)[:, 0]
    k = np.arange(30)
    up = np.minimum(0.2 * (k + 1), 1.0)
    expected = np.where(k <= 14, up, np.maximum(1.0 - 0.1 * (k - 14), 0.0))
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-12)
    free = RateLimiter(2.0)  # without `initial` the first output is the input
    assert step_block(free, lambda t: (7.0 + t,), 2)[:, 0].tolist() == pytest.approx([7.0, 7.1], abs=1e-12)


def test_rate_limiter_default_falling_initial_and_state():
    r = RateLimiter(1.0, initial=5.0, sample_time=0.5)
    assert r.falling == -1.0 and r.sample_time == 0.5
    y = step_block(r, lambda t: (0.0,), 4, dt=0.5)[:, 0]
    np.testing.assert_allclose(y, [4.5, 4.0, 3.5, 3.0], rtol=0, atol=1e-15)
    snap = r.get_state()
    assert r.output(2.0, (0.0,)) == r.output(2.0, (0.0,)) == (2.5,)  # output does not move the state
    r.update(2.0, (0.0,))
    r.set_state(snap)
    assert r.output(2.0, (0.0,)) == (2.5,)
    assert step_block(r, lambda t: (0.0,), 1, dt=0.5)[0, 0] == 4.5  # start resets to `initial`


def test_function_feedthrough_scalar_and_sequence():
    f = Function(lambda t, a, b: (a + b, a * b, t), inputs=("a", "b"), outputs=("s", "p", "t"))
    assert f.feedthrough() == {"s": ("a", "b"), "p": ("a", "b"), "t": ("a", "b")}
    f.start(0.0, 0.1)
    assert f.output(0.3, (2.0, 5.0)) == (7.0, 10.0, 0.3)
    g = Function(lambda t, u: np.float64(3.0) * u)
    assert g.output(0.0, (2.0,)) == (6.0,) and Function(lambda t: [t], inputs=()).output(1.5, ()) == (1.5,)


def test_function_without_feedthrough_lags_one_sample():
    f = Function(lambda t, u: 10 * u, feedthrough=False, sample_time=0.2, initial=-1.0)
    assert f.feedthrough() == {} and f.sample_time == 0.2
    y = step_block(f, lambda t: (t,), 4, dt=0.2)[:, 0]
    np.testing.assert_allclose(y, [-1.0, 0.0, 2.0, 4.0], rtol=0, atol=1e-12)


def named_fn(t, u):
    return (u, u)


def failing_fn(t, u):
    raise ZeroDivisionError("boom")


def test_function_errors_name_the_function():
    with pytest.raises(BlockError, match=r"named_fn returned 2 value\(s\) for 1 output\(s\) y"):
        Function(named_fn).output(0.0, (1.0,))
    with pytest.raises(BlockError, match=r"named_fn returned 2 value\(s\) for 3 output"):
        Function(named_fn, outputs=("a", "b", "c")).output(0.0, (1.0,))
    with pytest.raises(BlockError, match="failing_fn raised ZeroDivisionError: boom"):
        Function(failing_fn).output(0.0, (1.0,))
    with pytest.raises(BlockError, match=r"returned 'x', not 1 number"):
        Function(lambda t, u: "x").output(0.0, (1.0,))


@pytest.mark.parametrize("make, match", [
    (lambda: Gain(math.inf), "gain k must be finite"),
    (lambda: Gain(None), "gain k must be a real number"),
    (lambda: Sum("+x"), "signs must be a non-empty string of '\\+' and '-'"),
    (lambda: Sum(""), "signs must be"),
    (lambda: Sum(2), "signs must be"),
    (lambda: Saturation(1.0, 0.0), "lower 1.0 > upper 0.0"),
    (lambda: Saturation(math.nan, 1.0), "lower must be a number"),
    (lambda: RateLimiter(-1.0), "rising slew rate must be >= 0"),
    (lambda: RateLimiter(1.0, 0.5), "falling slew rate must be <= 0"),
    (lambda: RateLimiter(1.0, sample_time=-1.0), "sample_time must be positive"),
    (lambda: Function(3.0), "fn must be callable"),
    (lambda: Function(named_fn, outputs=()), "named_fn: needs at least one output"),
    (lambda: Function(named_fn, inputs=("a", "a")), "duplicate port name"),
    (lambda: Function(named_fn, outputs=("y.z",)), "without '.'"),
    (lambda: Function(named_fn, outputs=("a", "b"), initial=(1.0,)), "initial has 1 values for 2"),
])
def test_bad_parameters(make, match):
    with pytest.raises(BlockError, match=match):
        make()
