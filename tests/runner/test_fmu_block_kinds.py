"""The FMU block on every kind of native FMU: FMI 2.0 and 3.0, Co-Simulation and Model Exchange.

References, none of them the block under test:

* FMI 3.0 Co-Simulation against FMI 2.0 Co-Simulation of the same model: the same engine behind
  another glue, so a closed loop must give the same numbers to the last bit;
* Model Exchange (the block integrates the states with scipy) against the FMU's own
  Co-Simulation integrator run at a far tighter tolerance (DOP853 at rtol 1e-13): the deviation
  must be within the stated tolerance of the ME integrator;
* a constrained model (the four-bar) under a loose ME tolerance: the FMU's projection events
  (completed integrator steps whose drift passed ``constraint_tolerance``) must keep the
  constraint residual below that tolerance (1e-6), and there must have been such events.
"""

import math

import numpy as np
import pytest
from fmu_support import MODELS, stepped_rows

fmpy = pytest.importorskip("fmpy")

from blocks import FMU, PID, Step, Sum  # noqa: E402
from mbsfmu.core.fmu_layout import CONSTRAINT_TOLERANCE_START  # noqa: E402
from mbsfmu.runner import Diagram  # noqa: E402
from mbsfmu.runner.block import BlockError  # noqa: E402
from mbsfmu.runner.me_integration import METHODS, IntegratorSettings  # noqa: E402

H, N = 0.01, 100
#: the Co-Simulation reference: the FMU's DOP853 at rtol 1e-13
REFERENCE = {"solver_rtol": 1e-13, "method": 2}


@pytest.fixture(scope="module")
def cart(built_fmu):
    """The cart with pendulum with both interfaces, per FMI version."""
    return {v: built_fmu(MODELS / "cart_pendulum.py", fmi_version=v, interface="both") for v in (2, 3)}


@pytest.fixture(scope="module")
def four_bar(built_fmu):
    return built_fmu(MODELS / "four_bar.py", fmi_version=3, interface="both")


def force(t):
    return 2.0 * math.sin(3.0 * t) + 0.5


def drive(block, n=N, h=H, F=force):
    """n communication steps by hand; the rows of outputs at 0, h, ..., n h."""
    block.start(0.0, h)
    rows = []
    for k in range(n + 1):
        t = k * h
        u = [F(t)] if block.inputs else []
        rows.append(list(block.output(t, u)))
        if k < n:
            block.update(t, u)
    block.stop()
    return np.array(rows)


def relative_error(rows, ref):
    """max over the outputs of max |rows - ref| / max(max |ref|, 1)."""
    return float(np.max(np.abs(rows - ref).max(axis=0) / np.maximum(np.abs(ref).max(axis=0), 1.0)))


def closed_loop(path, h=0.01, t_end=3.0, **options):
    """The runner's PID position loop around the cart with the rod hanging (g reversed), as in
    test_runner_closed_loop."""
    d = Diagram(step=h)
    d.add("ref", Step(time=0.1, before=0.0, after=0.5))
    d.add("err", Sum(signs="+-"))
    d.add("pid", PID(20.0, 5.0, 6.0, tf=0.02, anti_windup=None))
    d.add("plant", FMU(path, **options))
    d.connect("ref.y", "err.u1")
    d.connect("plant.x", "err.u2")
    d.connect("err.y", "pid.u")
    d.connect("pid.y", "plant.F")
    return d.run(t_end)


def test_fmi3_ports_are_fmi2_ports(cart):
    b2, b3 = FMU(cart[2]), FMU(cart[3])
    assert (b2.fmi_version, b3.fmi_version) == (2, 3)
    assert b2.interface == b3.interface == "cs"  # both interfaces declared: Co-Simulation by default
    assert (b3.inputs, b3.outputs, b3.feedthrough()) == (b2.inputs, b2.outputs, b2.feedthrough())
    assert all(b3.port_type(p) == "Real" for p in b3.inputs + b3.outputs)
    assert b3.model_description.modelVariables[16].type == "Enumeration"
    assert b3.value_type("method") == b2.value_type("method") == "Integer"  # Enumeration as Int64


def test_fmi3_closed_loop_is_fmi2_bit_for_bit(cart):
    params = {"g": -9.81, "solver_rtol": 1e-10, "method": 2}  # method: an Enumeration set as Int64
    r2 = closed_loop(cart[2], parameters=params)
    r3 = closed_loop(cart[3], parameters=params)
    assert r3.columns == r2.columns
    assert np.array_equal(r3.values, r2.values)
    assert abs(r3["plant.x"][-1] - 0.5) < 0.05 * 0.5  # the loop did its job


@pytest.mark.parametrize("version", [2, 3])
def test_me_block_defaults_match_the_cs_reference(cart, version):
    """Model Exchange with the block's defaults (DOP853, rtol 1e-8, atol 1e-10) against the FMU's
    Co-Simulation at rtol 1e-13: 1e-8 of scale."""
    b = FMU(cart[version], interface="me")
    assert b.interface == "me" and b.integrator == IntegratorSettings("DOP853", 1e-8, 1e-10, math.inf)
    ref = drive(FMU(cart[version], parameters=REFERENCE))
    rows = drive(b)
    assert relative_error(rows, ref) <= 1e-8
    assert np.ptp(ref[:, 0]) > 0.05  # the force moved the cart


@pytest.mark.parametrize("method, tolerance", [("RK45", 1e-9), ("dop853", 1e-9), ("Radau", 1e-9),
                                               ("BDF", 1e-7)])
def test_me_methods_at_rtol_1e_10(cart, method, tolerance):
    ref = drive(FMU(cart[3], parameters=REFERENCE))
    b = FMU(cart[3], interface="me", method=method, rtol=1e-10, atol=1e-12)
    assert b.integrator.method in METHODS
    rows = drive(b)
    assert relative_error(rows, ref) <= tolerance


def test_me_closed_loop_behaves_as_cs(cart):
    """The PID loop around the ME FMU (FMI 2.0 and 3.0) follows the loop around the CS FMU at a
    tight tolerance to 1e-8 of the 0.5 m reference step; the plant's direct feed-through output
    saw the force of the same step."""
    cs = closed_loop(cart[2], parameters={"g": -9.81, **REFERENCE})
    for version in (2, 3):
        me = closed_loop(cart[version], parameters={"g": -9.81}, interface="me", rtol=1e-10, atol=1e-12)
        assert me.columns == cs.columns
        for name in ("plant.x", "plant.theta", "pid.y"):
            assert np.max(np.abs(me[name] - cs[name])) <= 1e-8 * max(1.0, np.abs(cs[name]).max()), name
        power, speed = me["plant.drive_power"], me["plant.der(x)"]
        moving = np.abs(speed) > 1e-3
        np.testing.assert_allclose(power[moving] / speed[moving], me["pid.y"][moving], rtol=1e-9)


def test_me_state_round_trip_is_bit_identical(cart):
    b = FMU(cart[3], interface="me", method="RK45")
    assert b.can_get_state
    b.start(0.0, H)
    stepped_rows(b, 0, 30, H, force)
    snap = b.get_state()
    first = stepped_rows(b, 30, 60, H, force)
    b.set_state(snap)
    assert stepped_rows(b, 30, 60, H, force) == first
    b.stop()


def test_me_projection_events_keep_the_constraints(four_bar):
    """The four-bar under RK45 at rtol 1e-6: the FMU asks for projections after completed steps,
    the block's event iterations carry them out and the residual stays below
    constraint_tolerance; with constraint_tolerance 1 there is no event and the residual is
    larger (measured: 9.6e-9 with the projections, 5.6e-8 without).  DOP853 at rtol 1e-10
    follows the CS reference to 1e-7 of scale."""
    def residual(**parameters):
        b = FMU(four_bar, interface="me", method="RK45", rtol=1e-6, atol=1e-8, parameters=parameters)
        assert b.inputs == ()
        rows = drive(b, n=200)
        return rows[:, b.outputs.index("constraint_residual")].max(), b.statistics()["events"]

    projected, events = residual()
    assert events >= 1
    assert projected <= CONSTRAINT_TOLERANCE_START
    drifted, none = residual(constraint_tolerance=1.0)
    assert none == 0 and drifted > 2 * projected
    ref = drive(FMU(four_bar, parameters=REFERENCE), n=200)
    tight = drive(FMU(four_bar, interface="me", rtol=1e-10, atol=1e-12), n=200)
    assert relative_error(tight, ref) <= 1e-7


def test_statistics_count_the_work(cart):
    b = FMU(cart[2], interface="me", method="RK45", rtol=1e-8, atol=1e-10)
    assert b.statistics() == {}  # not started
    b.start(0.0, H)
    for k in range(10):
        b.update(k * H, [0.0])
    s = b.statistics()
    assert s["steps"] >= 10 and s["rhs_calls"] >= 6 * s["steps"] and s["events"] == 0  # RK45: 6 per step
    b.stop()
    assert FMU(cart[2]).statistics() == {}  # Co-Simulation


def test_interface_errors(cart, built_fmu):
    cs_only = built_fmu(MODELS / "cart_pendulum.py")
    with pytest.raises(BlockError, match=r"does not declare Model Exchange \(only Co-Simulation\)"):
        FMU(cs_only, interface="me")
    with pytest.raises(BlockError, match=r"method sets the integrator of Model Exchange"):
        FMU(cart[3], method="RK45")
    with pytest.raises(BlockError, match=r"method 'euler' is not an integration method"):
        FMU(cart[3], interface="me", method="euler")


@pytest.mark.parametrize("interface", ["cs", "me"])
def test_fmi3_refusals_reach_the_user(cart, interface):
    """The FMI 3.0 FMU's own refusals (a NaN input, a NaN parameter) come back as BlockErrors
    with FMI 3.0's status and the FMU's message; a restart after the error runs again."""
    b = FMU(cart[3], interface=interface)
    b.start(0.0, H)
    b.update(0.0, [0.0])
    with pytest.raises(BlockError, match=r"(?s)input F = nan .*fmi3Error.*'F' is not finite"):
        b.update(H, [math.nan])
    b.stop()
    b.start(0.0, H)
    b.update(0.0, [1.0])
    assert b.output(H, [1.0])[2] > 0.0  # der(x): the force pushed the cart
    b.stop()
    bad = FMU(cart[3], interface=interface, parameters={"mc": math.nan})
    with pytest.raises(BlockError, match=r"(?s)fmi3SetFloat64 of 'mc' = nan .*fmi3Error.*not finite"):
        bad.start(0.0, H)
    bad.stop()
