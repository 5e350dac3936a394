"""UnitDelay (z^-1): the block by itself, a feedback loop it breaks against the closed form of the
difference equation, and its bad parameters."""

import math

import numpy as np
import pytest
from runner_support import step_block

from blocks import Constant, Gain, Sum, UnitDelay
from mbsfmu.runner import AlgebraicLoopError, BlockError, Diagram
from mbsfmu.runner.block import block_type


def test_output_is_the_previous_input():
    d = UnitDelay(initial=-1.5)
    assert (d.inputs, d.outputs, d.feedthrough()) == (("u",), ("y",), {})
    y = step_block(d, lambda t: (10.0 * t,), 5)[:, 0]
    np.testing.assert_allclose(y, [-1.5, 0.0, 1.0, 2.0, 3.0], rtol=0, atol=1e-12)
    assert block_type("UnitDelay") is UnitDelay


def test_state_snapshot_restores_the_held_value():
    d = UnitDelay()
    d.start(0.0, 0.1)
    d.update(0.0, (4.0,))
    snap = d.get_state()
    d.update(0.1, (9.0,))
    d.set_state(snap)
    assert d.output(0.2, (0.0,)) == (4.0,)


def loop(delay: bool, a=0.5, b=1.0, x0=2.0) -> Diagram:
    """x[k+1] = a x[k] + b: the sum's output goes back through the delay (or straight to the gain)."""
    d = Diagram(0.1)
    d.add("b", Constant(b))
    d.add("sum", Sum("++"))
    d.add("gain", Gain(a))
    d.connect("b.y", "sum.u1")
    d.connect("gain.y", "sum.u2")
    if delay:
        d.add("z", UnitDelay(initial=x0))
        d.connect("sum.y", "z.u")
        d.connect("z.y", "gain.u")
    else:
        d.connect("sum.y", "gain.u")
    return d


def test_breaks_an_algebraic_loop_with_the_closed_form():
    a, b, x0 = 0.5, 1.0, 2.0
    res = loop(True, a, b, x0).run(2.0, record=["z.y"])
    k = np.arange(len(res.t))
    want = a ** k * x0 + b * (1.0 - a ** k) / (1.0 - a)
    assert len(k) == 21
    np.testing.assert_allclose(res["z.y"], want, rtol=0, atol=1e-14)


def test_the_loop_without_it_is_refused_naming_it():
    with pytest.raises(AlgebraicLoopError, match=r"blocks\.UnitDelay"):
        loop(False).run(1.0)


@pytest.mark.parametrize("make, match", [
    (lambda: UnitDelay(math.nan), "UnitDelay initial must be finite"),
    (lambda: UnitDelay("x"), "UnitDelay initial must be a real number"),
    (lambda: UnitDelay(sample_time=0.0), "sample_time must be positive"),
])
def test_bad_parameters(make, match):
    with pytest.raises(BlockError, match=match):
        make()


def test_exported_as_an_fmu_it_delays_by_one_step(tmp_path):
    """export_block_fmu packs its state: fmpy runs the FMU and reads u one communication step
    late (the initial value first)."""
    fmpy = pytest.importorskip("fmpy")
    pytest.importorskip("pythonfmu")
    from mbsfmu.runner.block_fmu import export_block_fmu

    h, n = 0.01, 50
    t = np.arange(n + 1) * h
    path = export_block_fmu(UnitDelay(initial=0.25), tmp_path, step_size=h)
    table = np.array([(ti, np.sin(3.0 * ti)) for ti in t], dtype=[("time", float), ("u", float)])
    r = fmpy.simulate_fmu(str(path), stop_time=t[-1], output_interval=h, input=table)
    # fmpy records the outputs after each step with that step's input still set: y(t_k) = u(t_{k-1})
    np.testing.assert_allclose(r["y"][0], 0.25, atol=0)
    np.testing.assert_allclose(r["y"][1:], np.sin(3.0 * t[:-1]), rtol=0, atol=1e-15)
