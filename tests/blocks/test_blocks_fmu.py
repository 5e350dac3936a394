"""The FMU block (blocks/fmu.py): the cart-pendulum native FMU driven through the block interface by
hand (start / output / update) against fmpy's own ``simulate_fmu`` of the same FMU."""

import math

import numpy as np
import pytest
from fmu_support import MODELS, TOL, stepped_rows

from mbsfmu.runner.block import BlockError

fmpy = pytest.importorskip("fmpy")

from blocks.fmu import FMU  # noqa: E402

T_END, H = 1.0, 0.01
N = round(T_END / H)
STATES = ("x", "theta", "der(x)", "der(theta)", "rod_centre.x", "rod_centre.y", "rod_centre.z")


@pytest.fixture(scope="module")
def cart(built_fmu):
    return built_fmu(MODELS / "cart_pendulum.py")


def force(t):
    return 2.0 * math.sin(3.0 * t) + 0.5


def drive(block, n=N, h=H, F=force, t0=0.0):
    """n steps by hand; rows of outputs at t0, t0 + h, ..., t0 + n h (inputs F(t_k))."""
    block.start(t0, h)
    rows = []
    for k in range(n + 1):
        t = t0 + k * h
        u = [F(t)]
        rows.append(list(block.output(t, u)))
        if k < n:
            block.update(t, u)
    block.stop()
    return np.array(rows)


def fmpy_run(path, start_values=None, F=force):
    t = np.arange(N + 1) * H
    table = np.array([(ti, F(ti)) for ti in t], dtype=[("time", np.float64), ("F", np.float64)])
    return fmpy.simulate_fmu(str(path), stop_time=T_END, output_interval=H, input=table,
                             start_values={**TOL, **(start_values or {})})


def test_ports_types_and_feedthrough(cart):
    b = FMU(cart)
    assert b.inputs == ("F",)
    assert b.outputs == STATES + ("drive_power",)
    assert all(b.port_type(p) == "Real" for p in b.inputs + b.outputs)
    assert b.feedthrough() == {"drive_power": ("F",)}  # x, theta, ... do not depend on F
    with pytest.raises(BlockError, match="no port 'thetta'.*theta"):
        b.port_type("thetta")


def test_matches_fmpy_simulate_fmu(cart):
    ours = drive(FMU(cart, parameters=TOL))
    ref = fmpy_run(cart)
    assert len(ref) == len(ours)
    b = FMU(cart)
    for j, name in enumerate(b.outputs[:len(STATES)]):
        assert np.max(np.abs(ours[:, j] - ref[name])) <= 1e-10, name
    # fmpy records drive_power after the step with the input of the step before; ours is the
    # direct feed-through output at t_k with F(t_k) set by output()
    t = np.arange(N + 1) * H
    F = np.array([force(ti) for ti in t])
    assert np.allclose(ours[:, -1], F * ours[:, 2], rtol=1e-14, atol=1e-14)
    assert np.max(np.abs(ours[:, 0])) > 0.05  # the force really moved the cart


def test_constant_input_and_parameters(cart):
    const = lambda t: 0.3  # noqa: E731
    base = drive(FMU(cart, parameters=TOL), F=const)
    heavy = drive(FMU(cart, parameters={**TOL, "mc": 3.0}), F=const)
    ref = fmpy_run(cart, {"mc": 3.0}, F=const)
    assert np.max(np.abs(heavy[:, 0] - ref["x"])) <= 1e-10
    assert np.max(np.abs(heavy[:, 1] - ref["theta"])) <= 1e-10
    assert np.max(np.abs(heavy[:, 0] - base[:, 0])) > 1e-2  # a heavier cart moves less


def test_start_values_and_extra_outputs(cart):
    b = FMU(cart, start_values={"theta": 0.0}, outputs=("theta", "mc", "drive_power"))
    assert b.outputs == ("theta", "mc", "drive_power")
    assert b.feedthrough() == {"drive_power": ("F",)}  # a parameter output depends on nothing
    rows = drive(b, n=10, F=lambda t: 0.0)
    assert np.all(rows[:, 0] == 0.0) and np.all(rows[:, 1] == 1.0)  # upright and unforced: at rest


def test_parameter_errors(cart):
    with pytest.raises(BlockError, match=r"no variable 'mcc'.*close names: mc"):
        FMU(cart, parameters={"mcc": 2.0})
    with pytest.raises(BlockError, match=r"'x' .* is not a parameter"):
        FMU(cart, parameters={"x": 1.0})
    with pytest.raises(BlockError, match=r"'mc' is a Real variable; got '2'"):
        FMU(cart, parameters={"mc": "2"})
    with pytest.raises(BlockError, match=r"'drive_power' .* cannot be set"):
        FMU(cart, start_values={"drive_power": 1.0})
    with pytest.raises(BlockError, match=r"no variable 'thet' \(for output\)"):
        FMU(cart, outputs=("thet",))
    with pytest.raises(BlockError, match="does not exist"):
        FMU(cart.parent / "missing.fmu")


def test_value_rejected_by_the_fmu_at_start(cart):
    b = FMU(cart, parameters={"mc": math.nan})  # the type is right; the FMU refuses it
    with pytest.raises(BlockError, match=r"(?s)fmi2SetReal of 'mc' = nan .*fmi2Error.*not finite"):
        b.start(0.0, H)
    b.stop()


def test_state_round_trip_is_bit_identical(cart):
    b = FMU(cart, parameters=TOL)
    assert b.can_get_state
    b.start(0.0, H)
    for k in range(30):
        b.update(k * H, [force(k * H)])

    snap = b.get_state()
    first = stepped_rows(b, 30, 60, H, force)
    other = b.get_state()  # a second snapshot does not disturb the first
    b.set_state(snap)
    assert stepped_rows(b, 30, 60, H, force) == first
    b.set_state(other)
    b.stop()
    with pytest.raises(BlockError, match="not taken from this running instance"):
        b.set_state(snap)  # freed when the instance stopped


def test_nan_input_is_the_fmus_error(cart):
    b = FMU(cart)
    b.start(0.0, H)
    b.update(0.0, [0.0])
    with pytest.raises(BlockError, match=r"(?s)input F = nan .*fmi2Error.*'F' is not finite"):
        b.output(H, [math.nan])  # F has feed-through: output() sets it
    b.stop()
    b.start(0.0, H)  # a restart after an error runs again
    with pytest.raises(BlockError, match=r"input F = inf"):
        b.update(0.0, [math.inf])
    b.stop()


def test_failed_step_reports_the_fmus_messages(cart):
    b = FMU(cart)
    b.start(0.0, -H)
    with pytest.raises(BlockError, match=r"(?s)fmi2DoStep\(t=0.0, h=-0.01\) .*fmi2Error; the FMU logged"):
        b.update(0.0, [0.0])
    b.stop()


def test_stop_is_idempotent_and_restart_repeats(cart):
    b = FMU(cart)
    b.stop()  # before start
    first = drive(b, n=20)
    b.stop()
    b.stop()
    assert np.array_equal(drive(b, n=20), first)
    with pytest.raises(BlockError, match="before start"):
        b.update(0.0, [0.0])
