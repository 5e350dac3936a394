"""Diagram: wiring checks, validation, execution order, multi-rate, recording, errors in a run."""

import csv
import math

import numpy as np
import pytest
from runner_support import Clock, Const, Gain, Sum

from mbsfmu.core.errors import SimulationError
from mbsfmu.runner import (
    SISO,
    AlgebraicLoopError,
    Block,
    BlockError,
    BlockRunError,
    Diagram,
    DiagramError,
    Result,
)

# ---------------------------------------------------------------- tiny blocks for the tests


class Integrator(SISO):
    """Forward-Euler discrete integrator x+ = x + dt u, y = x (no feed-through)."""

    def __init__(self, x0=0.0, sample_time=None):
        self.x0 = x0
        self.x = x0
        self.sample_time = sample_time

    def start(self, t0, dt):
        self.x = self.x0
        self.dt = dt

    def output(self, t, u):
        return (self.x,)

    def update(self, t, u):
        self.x += self.dt * u[0]


class Counter(Block):
    """Counts its updates: y = number of update calls so far; logs the times it is called."""

    outputs = ("y",)

    def __init__(self, sample_time=None):
        self.sample_time = sample_time
        self.count = 0
        self.calls = []

    def start(self, t0, dt):
        self.count = 0
        self.calls = []
        self.dt = dt

    def output(self, t, u):
        return (float(self.count),)

    def update(self, t, u):
        self.calls.append(t)
        self.count += 1


class Sampler(SISO):
    """Zero-order hold at its own rate: y = u sampled at its instants (feed-through)."""

    def __init__(self, sample_time=None):
        self.sample_time = sample_time

    def feedthrough(self):
        return {"y": ("u",)}

    def output(self, t, u):
        return (u[0],)


class Typed(Block):
    inputs = ("i",)
    outputs = ("n",)

    def port_type(self, port):
        return "Integer"

    def output(self, t, u):
        return (0,)


class Lifecycle(SISO):
    """Logs start/stop; fails in output or update at a chosen time when asked."""

    def __init__(self, fail_output_at=None, fail_update_at=None, value=1.0):
        self.fail_output_at = fail_output_at
        self.fail_update_at = fail_update_at
        self.value = value
        self.log = []
        self.x = 0.0

    def start(self, t0, dt):
        self.log.append(("start", t0, dt))
        self.x = 0.0

    def stop(self):
        self.log.append(("stop",))

    def output(self, t, u):
        if self.fail_output_at is not None and t >= self.fail_output_at - 1e-12:
            raise ValueError("boom in output")
        return (self.value if self.value is not None else self.x,)

    def update(self, t, u):
        if self.fail_update_at is not None and t >= self.fail_update_at - 1e-12:
            self.x = -999.0  # a half-done update: must be rolled back
            raise ValueError("boom in update")
        self.x += u[0]


def chain(step=0.1):
    d = Diagram(step)
    d.add("src", Clock())
    d.add("g", Gain(2.0))
    d.connect("src.y", "g.u")
    return d


# ---------------------------------------------------------------- construction and wiring


def test_step_and_t0_are_checked():
    for bad in (0.0, -1e-3, math.inf, math.nan, "1e-3", True):
        with pytest.raises(DiagramError, match="step must be a positive finite number"):
            Diagram(bad)
    with pytest.raises(DiagramError, match="t0 must be a finite number"):
        Diagram(1e-3, t0=math.nan)


def test_add_checks_name_uniqueness_and_type():
    d = Diagram(1e-3)
    g = Gain()
    assert d.add("g", g) is g
    with pytest.raises(DiagramError, match="'g' is already used"):
        d.add("g", Gain())
    for bad in ("a.b", "1a", "", "has space", 3):
        with pytest.raises(DiagramError, match="must be an identifier"):
            d.add(bad, Gain())
    with pytest.raises(DiagramError, match="'h': int is not a Block"):
        d.add("h", 3)

    class BadType(SISO):
        def port_type(self, port):
            return "Float"

    with pytest.raises(DiagramError, match="port 'u' has type 'Float'"):
        d.add("bt", BadType())

    class DupPorts(Block):
        inputs = ("u", "u")

    with pytest.raises(DiagramError, match="duplicate names in inputs"):
        d.add("dp", DupPorts())
    assert list(d.blocks) == ["g"]


def test_connect_errors_name_blocks_and_ports():
    d = Diagram(1e-3)
    d.add("src", Const())
    d.add("g", Gain())
    d.add("typed", Typed())
    with pytest.raises(DiagramError, match="expected 'block.port'"):
        d.connect("src", "g.u")
    with pytest.raises(DiagramError, match=r"unknown block 'srcc' in 'srcc.y' \(did you mean src\?\)"):
        d.connect("srcc.y", "g.u")
    with pytest.raises(DiagramError, match=r"unknown block 'zz' in 'zz.u' \(blocks: src, g, typed\)"):
        d.connect("src.y", "zz.u")
    with pytest.raises(DiagramError, match=r"block 'src' has no output 'z' \(outputs: y\)"):
        d.connect("src.z", "g.u")
    with pytest.raises(DiagramError, match=r"block 'g' has no input 'v' \(inputs: u\)"):
        d.connect("src.y", "g.v")
    with pytest.raises(DiagramError, match=r"destination 'src.y' is an output of 'src'"):
        d.connect("g.y", "src.y")
    with pytest.raises(DiagramError, match=r"source 'g.u' is an input of 'g'"):
        d.connect("g.u", "g.u")
    with pytest.raises(DiagramError, match=r"port type mismatch: 'src.y' is Real, 'typed.i' is Integer"):
        d.connect("src.y", "typed.i")
    d.connect("src.y", "g.u")
    with pytest.raises(DiagramError, match=r"input 'g.u' is already driven by 'src.y' \(cannot also "
                                           r"connect 'g.y'\)"):
        d.connect("g.y", "g.u")
    assert d.connections == [("src.y", "g.u")]


def test_port_names_with_dots_split_at_the_first_dot():
    class Fmu(Block):
        inputs = ("der(x)",)
        outputs = ("rod_centre.x",)

        def output(self, t, u):
            return (3.0,)

    d = Diagram(0.5)
    d.add("m", Fmu())
    d.add("k", Const(4.0))
    d.connect("k.y", "m.der(x)")
    res = d.run(1.0)
    assert res.columns == ["time", "m.rod_centre.x", "k.y"]
    np.testing.assert_array_equal(res["m.rod_centre.x"], [3.0, 3.0, 3.0])


# ---------------------------------------------------------------- validation before a run


def test_unconnected_inputs_are_all_listed():
    d = Diagram(1e-3)
    d.add("a", Sum())
    d.add("g", Gain())
    d.add("c", Const())
    d.connect("c.y", "a.u1")
    with pytest.raises(DiagramError, match=r"2 unconnected input\(s\): a\.u2, g\.u"):
        d.check()
    with pytest.raises(DiagramError, match=r"a\.u2, g\.u"):
        d.run(1.0)


def test_sample_time_must_be_an_integer_multiple_of_the_step():
    for st in (0.0025, 0.0, -0.002, math.inf, math.nan, 0.0005):
        d = Diagram(1e-3)
        d.add("c", Counter(sample_time=st))
        with pytest.raises(DiagramError, match=rf"block 'c': sample_time {st!r} is not a positive "
                                               r"integer multiple of the diagram step 0.001"):
            d.check()
    d = Diagram(1e-3)
    d.add("c", Counter(sample_time=0.003 * (1 + 5e-10)))  # within the relative tolerance 1e-9
    assert d.check() == []


def test_t_end_must_be_finite_and_after_t0():
    d = chain()
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(DiagramError, match="t_end must be finite and greater than t0"):
            d.run(bad)
    with pytest.raises(DiagramError, match="less than half a step"):
        d.run(0.04)
    with pytest.raises(DiagramError, match="algebraic_loops must be 'error' or 'iterate'"):
        d.run(1.0, algebraic_loops="ignore")
    with pytest.raises(DiagramError, match="overrun must be one of"):
        d.run(1.0, realtime=True, overrun="panic")
    with pytest.raises(DiagramError, match="the diagram has no blocks"):
        Diagram(1.0).run(2.0)


def test_bad_feedthrough_is_reported():
    class Bad(SISO):
        def feedthrough(self):
            return {"y": ("v",)}

    d = Diagram(1e-3)
    d.add("c", Const())
    d.add("b", Bad())
    d.connect("c.y", "b.u")
    with pytest.raises(DiagramError, match=r"block 'b': feedthrough\(\) says 'y' depends on 'v', "
                                           r"which is not an input"):
        d.check()


# ---------------------------------------------------------------- semantics


def test_time_grid_and_same_step_propagation():
    res = chain(0.1).run(1.0)
    np.testing.assert_allclose(res.t, np.linspace(0.0, 1.0, 11), rtol=0, atol=1e-15)
    np.testing.assert_allclose(res["g.y"], 2 * res.t, rtol=0, atol=1e-15)
    assert res.stats["steps"] == 10 and res.stats["points"] == 11


def test_t0_offset_and_rounding_of_the_step_count():
    d = Diagram(0.25, t0=1.0)
    d.add("c", Clock())
    res = d.run(2.1)  # (2.1 - 1) / 0.25 = 4.4 -> 4 steps
    np.testing.assert_allclose(res.t, [1.0, 1.25, 1.5, 1.75, 2.0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(res["c.y"], res.t, rtol=0, atol=1e-15)


def test_execution_order_does_not_depend_on_the_order_of_adding():
    # a feed-through chain clock -> g1 -> g2 -> g3 added in reverse: still the same-step value
    d = Diagram(0.5)
    d.add("g3", Gain(5.0))
    d.add("g2", Gain(3.0))
    d.add("g1", Gain(2.0))
    d.add("clock", Clock())
    d.connect("g2.y", "g3.u")
    d.connect("g1.y", "g2.u")
    d.connect("clock.y", "g1.u")
    assert d.execution_order() == [("clock",), ("g1",), ("g2",), ("g3",)]
    res = d.run(2.0)
    np.testing.assert_allclose(res["g3.y"], 30.0 * res.t, rtol=1e-15, atol=0)


def test_blocks_without_feedthrough_may_run_first():
    # integrator (no feed-through) feeds the gain that feeds it: no algebraic loop
    d = Diagram(0.1)
    d.add("g", Gain(-1.0))
    d.add("i", Integrator(x0=1.0))
    d.connect("i.y", "g.u")
    d.connect("g.y", "i.u")
    assert d.check() == []
    assert d.execution_order() == [("i",), ("g",)]
    res = d.run(1.0)
    # x_{n+1} = (1 - h) x_n  ->  x_n = 0.9 ** n
    np.testing.assert_allclose(res["i.y"], 0.9 ** np.arange(11), rtol=1e-14)
    np.testing.assert_allclose(res["g.y"], -(0.9 ** np.arange(11)), rtol=1e-14)


def test_multi_rate_update_and_hold():
    step = 0.01
    d = Diagram(step)
    d.add("fast", Counter())
    d.add("slow", Counter(sample_time=5 * step))
    d.add("one", Const(1.0))
    d.add("integ", Integrator(sample_time=5 * step))
    d.add("hold", Sampler(sample_time=5 * step))
    d.add("clock", Clock())
    d.connect("one.y", "integ.u")
    d.connect("clock.y", "hold.u")
    res = d.run(0.23)  # 23 steps
    n = np.arange(24)
    np.testing.assert_array_equal(res["fast.y"], n)
    # the slow counter is computed at m = 0, 5, 10, ... (the number of its updates before m,
    # m / 5) and held in between: floor(n / 5); updated after its output at those m
    np.testing.assert_array_equal(res["slow.y"], np.floor(n / 5))
    # discrete integrator of 1 at period 5*step, sampled at its instants and held
    np.testing.assert_allclose(res["integ.y"], 5 * step * np.floor(n / 5), rtol=1e-14)
    # zero-order hold of t at its own instants
    np.testing.assert_allclose(res["hold.y"], step * 5 * np.floor(n / 5), rtol=1e-14, atol=1e-15)
    slow = d.blocks["slow"]
    np.testing.assert_allclose(slow.calls, [0.0, 0.05, 0.1, 0.15, 0.2], rtol=0, atol=1e-15)
    assert slow.dt == pytest.approx(0.05, rel=1e-15)
    assert d.blocks["fast"].dt == pytest.approx(0.01, rel=1e-15)


def test_fast_block_reads_a_held_slow_output():
    step = 0.1
    d = Diagram(step)
    d.add("slow", Counter(sample_time=3 * step))
    d.add("g", Gain(10.0))
    d.connect("slow.y", "g.u")
    res = d.run(0.7)
    np.testing.assert_array_equal(res["g.y"], 10.0 * np.floor(np.arange(8) / 3))


def test_rerun_starts_and_stops_every_block_again():
    d = Diagram(0.5)
    life = d.add("life", Lifecycle(value=None))
    d.add("c", Const(1.0))
    d.connect("c.y", "life.u")
    r1 = d.run(2.0)
    r2 = d.run(2.0)
    np.testing.assert_array_equal(r1["life.y"], [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(r2["life.y"], r1["life.y"])
    assert life.log == [("start", 0.0, 0.5), ("stop",), ("start", 0.0, 0.5), ("stop",)]


# ---------------------------------------------------------------- recording and Result


def test_record_selection_inputs_and_block_names():
    d = chain()
    res = d.run(0.5, record=["g.y", "g.u"])
    assert res.columns == ["time", "g.y", "g.u"]
    np.testing.assert_allclose(res["g.u"], res.t, rtol=0, atol=1e-15)
    res = d.run(0.5, record=["g"])
    assert res.columns == ["time", "g.y"]
    with pytest.raises(DiagramError, match=r"cannot record 'g.yy': block 'g' has no port 'yy' "
                                           r"\(did you mean y\?\)"):
        d.run(0.5, record=["g.yy"])
    with pytest.raises(DiagramError, match="unknown block 'q'"):
        d.run(0.5, record=["q.y"])


def test_result_lookup_csv_and_plot(tmp_path):
    res = chain().run(1.0)
    assert res.columns == ["time", "src.y", "g.y"]
    assert "g.y" in res and len(res) == 11
    with pytest.raises(KeyError, match=r"no recorded signal 'g.z'; close names: g\.y"):
        res["g.z"]
    with pytest.raises(KeyError, match=r"recorded: src\.y, g\.y"):
        res["completely_different"]
    path = res.to_csv(tmp_path / "out.csv")
    with open(path) as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["time", "src.y", "g.y"]
    assert len(rows) == 12
    back = np.array(rows[1:], dtype=float)
    np.testing.assert_array_equal(back[:, 0], res.t)  # %.17g round-trips exactly
    np.testing.assert_array_equal(back[:, 2], res["g.y"])
    fig = res.plot(path=tmp_path / "out.png")
    assert len(fig.axes) == 2  # one axes per block
    assert (tmp_path / "out.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fig = res.plot(signals=["g.y"])
    assert len(fig.axes) == 1
    with pytest.raises(KeyError):
        res.plot(signals=["nope.y"])


def test_result_construction_shape():
    r = Result(np.arange(3.0), ["a.y"], [[1.0], [2.0], [3.0]], {"steps": 2})
    np.testing.assert_array_equal(r["a.y"], [1.0, 2.0, 3.0])
    assert r.stats == {"steps": 2}
    assert "3 points" in repr(r)


# ---------------------------------------------------------------- errors during a run


def failing_diagram(**kw):
    d = Diagram(0.1)
    d.add("c", Const(1.0))
    life = d.add("life", Lifecycle(**kw))
    d.add("other", Integrator())
    d.connect("c.y", "life.u")
    d.connect("life.y", "other.u")
    return d, life


def test_exception_in_output_is_wrapped_with_block_and_time():
    d, life = failing_diagram(fail_output_at=0.3)
    with pytest.raises(BlockRunError, match=r"^life at t=0.3: output\(\) failed: ValueError: "
                                            r"boom in output$") as info:
        d.run(1.0)
    err = info.value
    assert isinstance(err, BlockError) and isinstance(err, SimulationError)
    assert isinstance(err.__cause__, ValueError)
    assert err.block == "life" and err.t == pytest.approx(0.3)
    # rows for t = 0, 0.1, 0.2 were recorded
    np.testing.assert_allclose(err.result.t, [0.0, 0.1, 0.2], atol=1e-15)
    np.testing.assert_allclose(err.result["other.y"], [0.0, 0.1, 0.2], atol=1e-15)
    assert life.log[-1] == ("stop",)  # stopped in the finally


def test_exception_in_update_rolls_back_every_block():
    d, life = failing_diagram(value=None, fail_update_at=0.3)
    with pytest.raises(BlockRunError, match=r"^life at t=0.3: update\(\) failed: ValueError: "
                                            r"boom in update") as info:
        d.run(1.0)
    err = info.value
    assert err.rolled_back
    # outputs at t = 0.3 were complete, so that row is kept
    np.testing.assert_allclose(err.result.t, [0.0, 0.1, 0.2, 0.3], atol=1e-15)
    # life.x after 3 updates (t = 0, 0.1, 0.2) is 3; the half-done update (-999) is undone
    assert life.x == 3.0
    # other (updated before or after life: either way) is back at its state at t = 0.3
    np.testing.assert_allclose(d.blocks["other"].x, err.result["other.y"][-1], rtol=0, atol=1e-15)
    assert life.log[-1] == ("stop",)


def test_rollback_replays_from_a_checkpoint(monkeypatch):
    import mbsfmu.runner.diagram as diagram

    monkeypatch.setattr(diagram, "CHECKPOINT_EVERY", 4)
    d, life = failing_diagram(value=None, fail_update_at=1.05)  # fails at step 11
    with pytest.raises(BlockRunError) as info:
        d.run(2.0)
    assert info.value.rolled_back
    assert life.x == 11.0  # state at the start of step 11 (11 updates of +1)
    assert d.blocks["other"].x == pytest.approx(sum(range(11)) * 0.1, rel=1e-14)


def test_no_rollback_when_a_block_cannot_snapshot():
    class NoState(Integrator):
        def get_state(self):
            return None

    d = Diagram(0.1)
    d.add("c", Const(1.0))
    life = d.add("life", Lifecycle(value=None, fail_update_at=0.2))
    d.add("ns", NoState())
    d.connect("c.y", "life.u")
    d.connect("c.y", "ns.u")
    with pytest.raises(BlockRunError) as info:
        d.run(1.0)
    assert not info.value.rolled_back
    assert life.x == -999.0
    assert d.run(0.1, rollback=True).stats["rollback"] is False


def test_non_finite_output_names_block_and_port():
    class Blowup(Block):
        outputs = ("a", "b")

        def output(self, t, u):
            return (1.0, 1.0 / (1.0 - t) if t < 0.99 else math.nan)

    d = Diagram(0.25)
    d.add("blow", Blowup())
    with pytest.raises(BlockRunError, match=r"^blow at t=1: non-finite output b = nan$") as info:
        d.run(2.0)
    assert len(info.value.result) == 4
    res = d.run(2.0, check_finite=False)
    assert math.isnan(res["blow.b"][4])


def test_wrong_number_of_outputs_is_reported():
    class Short(Block):
        outputs = ("a", "b")

        def output(self, t, u):
            return (1.0,)

    d = Diagram(0.25)
    d.add("short", Short())
    with pytest.raises(BlockRunError, match=r"^short at t=0: output\(\) returned 1 values for 2 "
                                            r"outputs \('a', 'b'\)"):
        d.run(1.0)


def test_failure_in_start_stops_the_started_blocks():
    class BadStart(Const):
        def start(self, t0, dt):
            raise OSError("no device")

    d = Diagram(0.1)
    life = d.add("life", Lifecycle())
    d.add("bad", BadStart())
    d.add("c", Const())
    d.connect("c.y", "life.u")
    with pytest.raises(BlockRunError, match=r"^bad at t=0: start\(\) failed: OSError: no device"):
        d.run(1.0)
    assert life.log == [("start", 0.0, 0.1), ("stop",)]


def test_algebraic_loop_is_refused_before_any_block_starts():
    d = Diagram(0.1)
    life = d.add("life", Lifecycle())
    d.add("a", Sum())
    d.add("g", Gain(0.5))
    d.add("c", Const())
    d.connect("c.y", "a.u1")
    d.connect("g.y", "a.u2")
    d.connect("a.y", "g.u")
    d.connect("c.y", "life.u")
    with pytest.raises(AlgebraicLoopError):
        d.run(1.0)
    assert life.log == []
