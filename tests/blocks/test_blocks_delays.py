"""Delay (z^-N) and TransportDelay (e^-τs) against their analytic responses: a step shifted by N
samples exactly, a ramp delayed exactly, a sine equal to the linear interpolation of the delayed
samples; both break algebraic loops; their ring buffers are carried in snapshots (the runner's
and an exported FMU's)."""

import math

import numpy as np
import pytest
from runner_support import step_block

from blocks import Constant, Delay, Function, Gain, Ramp, Sine, Step, Sum, TransportDelay, UnitDelay
from mbsfmu.runner import BlockError, BlockRunError, Diagram
from mbsfmu.runner.block import block_type


def chain(step, source, block, t_end):
    d = Diagram(step)
    d.add("src", source)
    d.add("delay", block)
    d.connect("src.y", "delay.u")
    return d.run(t_end, record=["src.y", "delay.y"])


@pytest.mark.parametrize("n", [1, 3, 7])
def test_delay_shifts_a_step_by_exactly_n_samples(n):
    res = chain(0.1, Step(time=0.4, after=2.5), Delay(n, initial=-1.0), 2.0)
    k = np.arange(len(res.t))
    want = np.where(k < n, -1.0, np.where(k < 4 + n, 0.0, 2.5))
    assert np.array_equal(res["delay.y"], want)  # values are copied: bit-exact


def test_delay_at_its_own_period_and_as_unit_delay():
    """sample_time 0.3 s on a 0.1 s diagram: 2 samples = 0.6 s, held in between."""
    res = chain(0.1, Ramp(slope=1.0), Delay(2, sample_time=0.3), 2.0)
    t = res.t
    held = 0.3 * np.floor(t / 0.3 + 1e-9)  # the delay's last sample instant
    np.testing.assert_allclose(res["delay.y"], np.maximum(held - 0.6, 0.0), rtol=0, atol=1e-12)
    u = lambda t: (math.sin(7.0 * t),)  # noqa: E731
    assert np.array_equal(step_block(Delay(1, initial=0.5), u, 30), step_block(UnitDelay(0.5), u, 30))
    assert Delay(3.0).steps == 3 and Delay(3).feedthrough() == {} and block_type("Delay") is Delay


def test_transport_delay_of_a_ramp_is_exact():
    """τ = 2.5 ms at 1 ms steps: y(t) = u(t - τ) = 2 (t - τ) for t >= τ, 0 before (the ramp is
    linear, so linear interpolation between samples is exact)."""
    res = chain(1e-3, Ramp(slope=2.0), TransportDelay(2.5e-3), 0.2)
    t = res.t
    assert len(t) == 201
    want = np.where(t >= 2.5e-3, 2.0 * (t - 2.5e-3), 0.0)
    assert np.max(np.abs(res["delay.y"] - want)) <= 1e-12


def test_transport_delay_of_a_sine_is_the_interpolated_delayed_samples():
    """For a sine the output is the linear interpolation of the samples at t - 2 ms and t - 3 ms
    (weights 1/2: τ/T = 2.5); against the true delayed sine its error is that of linear
    interpolation, at most T² ω² A / 8 (here 1.234e-4)."""
    T, tau, f, A = 1e-3, 2.5e-3, 5.0, 1.0
    w = 2.0 * math.pi * f
    res = chain(T, Sine(amplitude=A, frequency=f), TransportDelay(tau, initial=0.0), 0.5)
    t, y = res.t, res["delay.y"]
    late = t >= tau
    interp = 0.5 * np.sin(w * (t - 2e-3)) + 0.5 * np.sin(w * (t - 3e-3))
    assert np.max(np.abs(y[late] - interp[late])) <= 1e-14
    assert np.all(y[~late] == 0.0) and late.sum() == len(t) - 3
    err = np.max(np.abs(y[late] - A * np.sin(w * (t[late] - tau))))
    bound = T ** 2 * w ** 2 * A / 8.0
    assert 0.5 * bound < err <= bound  # measured 1.2335e-4, bound 1.2337e-4


def test_transport_delay_of_whole_periods_is_the_integer_delay():
    u = lambda t: (math.cos(3.0 * t) + t,)  # noqa: E731
    td = step_block(TransportDelay(0.3, initial=0.25), u, 40)  # 0.3 / 0.1 = 2.9999999999999996
    assert np.array_equal(td, step_block(Delay(3, initial=0.25), u, 40))


def test_transport_delay_at_its_own_period():
    """sample_time 5 ms on a 1 ms diagram: τ = 12.5 ms = 2.5 periods of the block."""
    d = Diagram(1e-3)
    d.add("src", Ramp(slope=1.0))
    d.add("delay", TransportDelay(12.5e-3, sample_time=5e-3))
    d.connect("src.y", "delay.u")
    res = d.run(0.1, record=["delay.y"])
    held = 5e-3 * np.floor(res.t / 5e-3 + 1e-9)
    np.testing.assert_allclose(res["delay.y"], np.maximum(held - 12.5e-3, 0.0), rtol=0, atol=1e-14)


def feedback_through(block, a=0.5, b=1.0):
    """x = b + a · block(x): the sum's output goes back through ``block``."""
    d = Diagram(0.1)
    d.add("b", Constant(b))
    d.add("sum", Sum("++"))
    d.add("gain", Gain(a))
    d.add("delay", block)
    d.connect("b.y", "sum.u1")
    d.connect("gain.y", "sum.u2")
    d.connect("sum.y", "delay.u")
    d.connect("delay.y", "gain.u")
    return d


def test_a_loop_through_a_delay_is_not_algebraic_and_follows_the_recursion():
    """x[k] = b + a x[k-N] for k >= N, x[k] = x0 before: with m = floor(k / N),
    x[k] = a^m x0 + b (1 - a^m) / (1 - a)."""
    a, b, x0, n = 0.5, 1.0, 2.0, 3
    for block in (Delay(n, initial=x0), TransportDelay(n * 0.1, initial=x0)):
        d = feedback_through(block, a, b)
        assert d.check() == []
        res = d.run(3.0, record=["delay.y"])
        m = np.arange(len(res.t)) // n
        np.testing.assert_allclose(res["delay.y"], a ** m * x0 + b * (1 - a ** m) / (1 - a),
                                   rtol=0, atol=1e-14)


def test_a_transport_delay_shorter_than_the_period_is_refused_at_start():
    d = feedback_through(TransportDelay(0.05))
    with pytest.raises(BlockRunError, match=r"delay at t=0: start\(\) failed: BlockError: "
                       r"TransportDelay: delay 0.05 s is shorter than the block's period 0.1 s"):
        d.run(1.0)
    assert step_block(TransportDelay(0.1), lambda t: (t,), 3)[:, 0].tolist() == pytest.approx(
        [0.0, 0.0, 0.1], abs=1e-15)  # exactly one period is allowed


def test_snapshots_carry_the_ring_buffers():
    u = lambda t: (math.sin(5.0 * t),)  # noqa: E731
    for block in (Delay(4), TransportDelay(0.25)):
        block.start(0.0, 0.1)
        for k in range(6):
            block.update(0.1 * k, u(0.1 * k))
        snap = block.get_state()
        first = []
        for k in range(6, 12):
            first.append(block.output(0.1 * k, (0.0,))[0])
            block.update(0.1 * k, (10.0 * k,))
        block.set_state(snap)
        again = []
        for k in range(6, 12):
            again.append(block.output(0.1 * k, (0.0,))[0])
            block.update(0.1 * k, (10.0 * k,))
        assert again == first and first[0] != 0.0


def test_the_ring_buffer_is_carried_in_fmu_states(tmp_path):
    """A TransportDelay exported as an FMU: fmi2GetFMUstate / fmi2SetFMUstate (through the FMU
    block's snapshot) restore its buffer, so a replay from the snapshot repeats the outputs."""
    pytest.importorskip("fmpy")
    pytest.importorskip("pythonfmu")
    from blocks import FMU
    from mbsfmu.runner.block_fmu import export_block_fmu

    h = 1e-3
    path = export_block_fmu(TransportDelay(2.5e-3), tmp_path, step_size=h)
    b = FMU(path)
    assert b.feedthrough() == {}
    b.start(0.0, h)
    ref = TransportDelay(2.5e-3)
    ref.start(0.0, h)
    for k in range(10):
        b.update(k * h, [float(k)])
        ref.update(k * h, [float(k)])
    snap = b.get_state()

    def run_on():
        rows = []
        for k in range(10, 16):
            rows.append(b.output(k * h, [0.0])[0])
            b.update(k * h, [-5.0 * k])
        return rows

    first = run_on()
    b.set_state(snap)
    assert run_on() == first
    # y[k] = (u[k-2] + u[k-3]) / 2 with u[j] = j before the snapshot, -5 j after it
    assert first[:3] == [ref.output(10 * h, [0.0])[0], 8.5, (9.0 - 50.0) / 2] == [7.5, 8.5, -20.5]
    b.stop()


@pytest.mark.parametrize("make, match", [
    (lambda: Delay(0), r"Delay steps must be >= 1 \(a delay of 0 samples is a direct connection\), got 0"),
    (lambda: Delay(2.5), r"Delay steps must be a whole number >= 1, got 2.5"),
    (lambda: Delay("3"), r"Delay steps must be a whole number >= 1, got '3'"),
    (lambda: Delay(2, initial=math.inf), r"Delay initial must be finite, got inf"),
    (lambda: TransportDelay(0.0), r"TransportDelay delay must be > 0 s, got 0.0"),
    (lambda: TransportDelay(math.nan), r"TransportDelay delay must be finite, got nan"),
    (lambda: TransportDelay(1e-3, sample_time=-1), r"sample_time must be positive"),
])
def test_bad_parameters(make, match):
    with pytest.raises(BlockError, match=match):
        make()


def _fails_late(t, u):
    if t >= 0.15 - 1e-9:
        raise ValueError("sensor lost")
    return u


@pytest.mark.parametrize("rollback, held", [(True, 0.1475), (False, 0.1485)])
def test_the_runner_rolls_the_buffer_back_after_a_failed_update(rollback, held):
    """A block after the delay fails in its update at t = 0.15 s (step 150, 50 steps past the
    last checkpoint): with rollback the delay's buffer is restored to the start of that step, so
    it outputs u(0.15 - 2.5 ms) = 0.1475 again; without rollback it has advanced one step."""
    d = Diagram(1e-3)
    d.add("src", Ramp(slope=1.0))
    d.add("delay", TransportDelay(2.5e-3))
    d.add("late", Function(_fails_late, feedthrough=False))
    d.connect("src.y", "delay.u")
    d.connect("delay.y", "late.u")
    with pytest.raises(BlockRunError, match=r"late at t=0.15: update\(\) failed") as info:
        d.run(1.0, rollback=rollback)
    assert info.value.rolled_back is rollback
    delay = d.blocks["delay"]
    assert delay.output(0.15, (0.0,))[0] == pytest.approx(held, abs=1e-12)
