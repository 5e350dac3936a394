"""StateSpace / TransferFunction: ZOH step responses against closed forms at the sample instants."""

import math

import numpy as np
import pytest
from runner_support import step_block
from scipy.signal import cont2discrete, tf2ss

from blocks import StateSpace, TransferFunction
from mbsfmu.runner import BlockError


def test_first_order_step_is_exact_with_zoh():
    # K/(tau·s + 1), step of height U at t0: y(t) = K·U·(1 - exp(-(t - t0)/tau))
    K, tau, U, T = 2.0, 0.7, 1.5, 0.05
    tf = TransferFunction([K], [tau, 1.0])
    assert (tf.inputs, tf.outputs, tf.feedthrough()) == (("u",), ("y",), {})
    y = step_block(tf, lambda t: (U,), 200, dt=T, t0=3.0)[:, 0]
    t = T * np.arange(200)
    np.testing.assert_allclose(y, K * U * (1 - np.exp(-t / tau)), rtol=0, atol=1e-12)


def test_second_order_step_is_exact_with_zoh():
    # mass-spring-damper m x'' + c x' + k x = F, y = x, as StateSpace and as TransferFunction
    m, c, k, T = 1.0, 1.2, 4.0, 0.02
    wn, zeta = math.sqrt(k / m), c / (2 * math.sqrt(k * m))
    wd = wn * math.sqrt(1 - zeta**2)
    t = T * np.arange(500)
    exact = (1 - np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta / math.sqrt(1 - zeta**2)
                                           * np.sin(wd * t))) / k
    ss = StateSpace([[0, 1], [-k / m, -c / m]], [[0], [1 / m]], [[1, 0]], [[0]])
    tf = TransferFunction([1 / m], [1, c / m, k / m])
    for block in (ss, tf):
        y = step_block(block, lambda t: (1.0,), 500, dt=T)[:, 0]
        np.testing.assert_allclose(y, exact, rtol=0, atol=1e-12)


def test_initial_state_free_response_and_rerun():
    ss = StateSpace(-2.0, 1.0, 3.0, 0.0, x0=[0.5])
    y = step_block(ss, lambda t: (0.0,), 50)[:, 0]
    np.testing.assert_allclose(y, 1.5 * np.exp(-2.0 * 0.1 * np.arange(50)), rtol=0, atol=1e-12)
    assert np.array_equal(step_block(ss, lambda t: (0.0,), 50)[:, 0], y)  # start resets to x0


def test_transfer_function_equals_state_space_of_tf2ss():
    num, den = [2.0, 3.0, 1.0, 0.5], [1.0, 4.0, 5.0, 2.0]  # biproper: feed-through
    tf = TransferFunction(num, den)
    ss = StateSpace(*tf2ss(num, den))
    assert tf.feedthrough() == ss.feedthrough() == {"y": ("u",)}
    u = lambda t: (math.sin(3 * t) + (t > 0.35),)  # noqa: E731
    np.testing.assert_array_equal(step_block(tf, u, 100), step_block(ss, u, 100))
    assert TransferFunction([0.0, 0.0, 1.0], [1.0, 3.0, 2.0]).num == [1.0]  # leading zeros dropped


def test_static_gain_transfer_function():
    tf = TransferFunction([6.0], [2.0])
    assert tf.feedthrough() == {"y": ("u",)}
    np.testing.assert_allclose(step_block(tf, lambda t: (t,), 5)[:, 0], 3.0 * 0.1 * np.arange(5), atol=1e-15)


def reference(A, B, C, D, x0, u, n, T):
    """Direct iteration of cont2discrete's matrices (the block's equations written out)."""
    Ad, Bd, Cd, Dd, _ = cont2discrete((A, B, C, D), T)
    x, ys = np.array(x0, float), []
    for k in range(n):
        uk = np.array(u(k * T))
        ys.append(Cd @ x + Dd @ uk)
        x = Ad @ x + Bd @ uk
    return np.array(ys)


@pytest.mark.parametrize("n", [3, 7])  # plain-Python path and numpy path
def test_mimo_ports_feedthrough_and_response(n):
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, n)) - 3 * np.eye(n)
    B, C = rng.normal(size=(n, 2)), rng.normal(size=(3, n))
    D = np.array([[0.0, 1.5], [0.0, 0.0], [-2.0, 0.0]])
    x0 = rng.normal(size=n)
    ss = StateSpace(A, B, C, D, x0=x0)
    assert ss.inputs == ("u1", "u2") and ss.outputs == ("y1", "y2", "y3")
    assert ss.feedthrough() == {"y1": ("u2",), "y3": ("u1",)}
    u = lambda t: (math.cos(t), 1.0 - t)  # noqa: E731
    np.testing.assert_allclose(step_block(ss, u, 40), reference(A, B, C, D, x0, u, 40, 0.1),
                               rtol=0, atol=1e-12)
    snap = ss.get_state()
    y = ss.output(4.0, (1.0, 2.0))
    ss.update(4.0, (1.0, 2.0))
    ss.set_state(snap)
    assert np.array_equal(ss.output(4.0, (1.0, 2.0)), y) and ss.state.shape == (n,)


def test_bilinear_has_feedthrough_where_zoh_has_none():
    zoh, tustin = TransferFunction([1.0], [1.0, 1.0]), TransferFunction([1.0], [1.0, 1.0], method="bilinear")
    assert zoh.feedthrough() == {} and tustin.feedthrough() == {"y": ("u",)}
    tustin.start(0.0, 0.1)
    assert tustin.discrete[3][0, 0] == pytest.approx(0.1 / 2.1, abs=1e-15)  # Dd = T/(2 + T) for 1/(s+1)
    # Tustin's DC gain is exact: the step response tends to 1
    assert step_block(tustin, lambda t: (1.0,), 300)[-1, 0] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("make, match", [
    (lambda: TransferFunction([1.0, 0.0, 0.0], [1.0, 1.0]),
     r"improper \(numerator degree 2 > denominator degree 1\)"),
    (lambda: TransferFunction([1.0], [0.0, 0.0]), "denominator is zero"),
    (lambda: TransferFunction([1.0, math.nan], [1.0, 1.0]), "num has non-finite"),
    (lambda: TransferFunction(["a"], [1.0]), "num must be a sequence of numbers"),
    (lambda: StateSpace([[1, 2]], [[1]], [[1]], [[0]]), r"A must be square .* shape \(1, 2\)"),
    (lambda: StateSpace(-1.0, [[1], [2]], [[1]], [[0]]), r"B has shape \(2, 1\), expected 1 x \?"),
    (lambda: StateSpace(-1.0, 1.0, [[1, 2]], [[0]]), r"C has shape \(1, 2\), expected \? x 1"),
    (lambda: StateSpace(-1.0, 1.0, 1.0, [[0, 0]]), r"D has shape \(1, 2\), expected 1 x 1"),
    (lambda: StateSpace(math.inf, 1.0, 1.0, 0.0), "A has non-finite entries"),
    (lambda: StateSpace(-1.0, 1.0, 1.0, 0.0, x0=[1.0, 2.0]), "x0 must hold 1 finite numbers"),
    (lambda: StateSpace(-1.0, 1.0, 1.0, 0.0, method="tustin"), "method must be one of"),
    (lambda: StateSpace(-1.0, 1.0, 1.0, 0.0, sample_time=-0.1), "sample_time must be positive"),
])
def test_bad_parameters(make, match):
    with pytest.raises(BlockError, match=match):
        make()
