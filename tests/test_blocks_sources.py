"""Sources (Constant, Step, Ramp, Sine, Table) and the Recorder sink, driven through the block
interface directly (start / output / update at the sample instants)."""

import math

import numpy as np
import pytest
from runner_support import step_block

import mbsfmu.runner
from blocks import Constant, Ramp, Recorder, Sine, Step, Table
from mbsfmu.runner import BlockError


def times(n, dt=0.1, t0=0.0):
    return t0 + dt * np.arange(n)


def test_constant():
    b = Constant(2.5)
    assert b.inputs == () and b.outputs == ("y",) and b.feedthrough() == {}
    assert np.all(step_block(b, None, 5)[:, 0] == 2.5)


def test_step_switches_at_first_instant_at_or_after_time():
    y = step_block(Step(time=0.3, before=-1.0, after=4.0), None, 6)[:, 0]
    assert y.tolist() == [-1.0, -1.0, -1.0, 4.0, 4.0, 4.0]
    b = Step(time=0.3)
    b.start(0.0, 0.1)
    assert b.output(0.3 - 1e-13, ())[0] == 1.0  # rounding of t (< 1e-9 period): the step is there
    assert b.output(0.3 - 1e-6, ())[0] == 0.0


def test_ramp_closed_form():
    t = times(20)
    y = step_block(Ramp(slope=-2.0, start=0.5, initial=3.0), None, 20)[:, 0]
    np.testing.assert_allclose(y, 3.0 - 2.0 * np.maximum(t - 0.5, 0.0), rtol=0, atol=1e-12)


def test_sine_closed_form():
    t = times(50, dt=0.01)
    y = step_block(Sine(amplitude=2.0, frequency=3.0, phase=0.4, offset=-1.0), None, 50, dt=0.01)[:, 0]
    np.testing.assert_allclose(y, -1.0 + 2.0 * np.sin(2 * np.pi * 3.0 * t + 0.4), rtol=0, atol=1e-12)
    b = Sine(frequency=1.0)
    assert abs(b.output(0.25, ())[0] - 1.0) < 1e-15


@pytest.mark.parametrize("make", [
    lambda: Constant(math.nan), lambda: Constant("x"), lambda: Step(time=math.inf),
    lambda: Ramp(slope=math.nan), lambda: Sine(frequency=-1.0), lambda: Sine(amplitude=math.inf),
])
def test_source_bad_parameters(make):
    with pytest.raises(BlockError, match="Constant|Step|Ramp|Sine"):
        make()


@pytest.fixture
def csv_file(tmp_path):
    p = tmp_path / "profile.csv"
    p.write_text("time,a,b\n# a comment line\n0.0,0.0,10\n1.0,2.0,10\n2.0,2.0,0\n\n3.0,-1.0,0\n")
    return p


def test_table_linear_several_columns(csv_file):
    b = Table(csv_file)
    assert b.outputs == ("a", "b") and b.inputs == ()
    y = step_block(b, None, 41)
    t = times(41)
    np.testing.assert_allclose(y[:, 0], np.interp(t, [0, 1, 2, 3], [0, 2, 2, -1]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(y[:, 1], np.interp(t, [0, 1, 2, 3], [10, 10, 0, 0]), rtol=0, atol=1e-12)
    assert y[-1].tolist() == [-1.0, 0.0]  # t = 4 > 3: hold


def test_table_previous_and_single_column_is_y(csv_file):
    b = Table(csv_file, column="b", interpolation="previous")
    assert b.outputs == ("y",)
    b.start(0.0, 0.1)
    assert [b.output(t, ())[0] for t in (0.0, 0.99, 1.0, 1.5, 2.0, 2.7, 9.0)] == [10, 10, 10, 10, 0, 0, 0]
    assert Table(csv_file, column=["b", "a"]).outputs == ("b", "a")


def test_table_repeated_time_is_a_jump_and_time_column_by_name(tmp_path):
    p = tmp_path / "jump.csv"
    p.write_text("x, Time\n0,0\n0,1\n5,1\n5,2\n")
    b = Table(p)
    b.start(0.0, 0.1)
    assert [b.output(t, ())[0] for t in (0.5, 1.0 - 1e-9, 1.0, 1.5)] == pytest.approx(
        [0.0, 0.0, 5.0, 5.0], abs=1e-12)


def test_table_from_array_and_extrapolation():
    b = Table(np.array([[0.0, 1.0, 2.0], [1.0, 3.0, 6.0]]), extrapolation="error")
    assert b.outputs == ("y1", "y2")
    b.start(0.0, 0.5)
    assert b.output(0.5, ()) == pytest.approx([2.0, 4.0], abs=1e-15)
    assert b.output(1.0 + 1e-12, ()) == pytest.approx([3.0, 6.0])  # rounding at the end is accepted
    with pytest.raises(BlockError, match=r"t = 1.5 is outside .*\[0.0, 1.0\]"):
        b.output(1.5, ())
    hold = Table([[0.0, 7.0], [1.0, 8.0]])
    hold.start(0.0, 0.1)
    assert hold.outputs == ("y",) and hold.output(-1.0, ()) == (7.0,) and hold.output(5.0, ()) == (8.0,)


@pytest.mark.parametrize("text, kwargs, match", [
    ("time,a\n0,1\n1,2\n", {"column": "c"}, r"unknown column 'c' \(columns: a\)"),
    ("time,a\n0,1\n2,2\n1,3\n", {}, r"line 4: time 1.0 decreases"),
    ("time,a\n0,1\n1,nan\n", {}, r"line 3: column 'a' is not finite"),
    ("time,a\n0,1\n1,oops\n", {}, r"line 3: column 'a' is not a number: 'oops'"),
    ("time,a\n0,1\n1\n", {}, r"line 3: column 'a' is not a number: '\(missing\)'"),
    ("time,a,a\n0,1,2\n", {}, r"duplicate column name\(s\) 'a'"),
    ("time\n0\n", {}, r"no data column"),
    ("time,a\n", {}, r"no data rows"),
    ("time,a\n0,1\n", {"interpolation": "cubic"}, r"interpolation must be"),
    ("time,a\n0,1\n", {"extrapolation": "linear"}, r"extrapolation must be"),
])
def test_table_bad_input(tmp_path, text, kwargs, match):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(BlockError, match=match):
        Table(p, **kwargs)


def test_table_missing_file_and_bad_array(tmp_path):
    with pytest.raises(BlockError, match="cannot read .*nope.csv"):
        Table(tmp_path / "nope.csv")
    with pytest.raises(BlockError, match=r"shape \(3,\)"):
        Table([1.0, 2.0, 3.0])
    with pytest.raises(BlockError, match="row 1: column 'time' is not finite"):
        Table([[0.0, 1.0], [math.inf, 2.0]])


def test_recorder_decimated_log_and_rollback():
    r = Recorder(inputs=("a", "b"), sample_time=0.5)
    assert r.inputs == ("a", "b") and r.outputs == () and r.sample_time == 0.5
    step_block(r, lambda t: (t, 2 * t), 4, dt=0.5, t0=1.0)
    assert r.time == [1.0, 1.5, 2.0, 2.5] and r.data[1] == (1.5, 3.0)
    np.testing.assert_array_equal(r.to_array()[:, 2], [2.0, 3.0, 4.0, 5.0])
    snap = r.get_state()
    r.update(3.0, (0.0, 0.0))
    r.set_state(snap)
    assert r.to_array().shape == (4, 3)
    r.start(0.0, 0.5)  # a re-run starts an empty log
    assert r.to_array().shape == (0, 3)


@pytest.mark.skipif(not hasattr(mbsfmu.runner, "Diagram"), reason="needs mbsfmu.runner.Diagram")
def test_table_and_decimated_recorder_in_a_diagram(csv_file):
    # a Recorder with sample_time 5 steps logs every 5th instant (no update at the last point)
    d = mbsfmu.runner.Diagram(step=0.01)
    d.add("tab", Table(csv_file))
    d.add("sine", Sine(frequency=0.5))
    rec = d.add("rec", Recorder(inputs=("a", "s"), sample_time=0.05))
    d.connect("tab.a", "rec.a")
    d.connect("sine.y", "rec.s")
    res = d.run(1.0)
    np.testing.assert_allclose(res["tab.a"], 2.0 * res.t, rtol=0, atol=1e-12)
    log = rec.to_array()
    np.testing.assert_allclose(log[:, 0], 0.05 * np.arange(20), rtol=0, atol=1e-12)
    np.testing.assert_allclose(log[:, 1], 2.0 * log[:, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(log[:, 2], np.sin(np.pi * log[:, 0]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    ({"inputs": ("a.b",)}, "without '.'"), ({"inputs": ("a", "a")}, "duplicate port name"),
    ({"sample_time": 0.0}, "sample_time must be positive"), ({"sample_time": math.nan}, "sample_time"),
])
def test_recorder_bad_parameters(kwargs, match):
    with pytest.raises(BlockError, match=match):
        Recorder(**kwargs)
