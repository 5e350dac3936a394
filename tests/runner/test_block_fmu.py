"""Python blocks exported as FMI 2.0 CS FMUs (mbsfmu.runner.block_fmu): validated by fmpy, run by
``fmpy.simulate_fmu`` and by the FMU block, and compared with the same block stepped in Python."""

import math

import numpy as np
import pytest

from mbsfmu.runner.block import Block, BlockError

fmpy = pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")

from fmpy.validation import validate_fmu  # noqa: E402

from blocks.control import PID  # noqa: E402
from blocks.fmu import FMU  # noqa: E402
from blocks.math_blocks import Function, Gain  # noqa: E402
from mbsfmu.runner.block_fmu import export_block_fmu  # noqa: E402

H, N = 0.01, 100
T = np.arange(N + 1) * H


def signal(t):
    return math.sin(3.0 * t) + 0.2


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    out = tmp_path_factory.mktemp("block_fmus")
    return {
        "pid": export_block_fmu(PID(kp=2.0, ki=1.0, kd=0.1, u_max=1.5), out / "pid.fmu", step_size=H),
        "pi_lag": export_block_fmu(PID(kp=0.0, ki=4.0), out, name="integrator", step_size=H),
        "gain": export_block_fmu(Gain(2.5), out, step_size=H),
    }


def fmpy_semantics(block, u=signal):
    """The block stepped in Python and sampled like fmpy.simulate_fmu records a CS FMU: the
    outputs after each step, with the inputs of that step still set."""
    block.start(0.0, H)
    ys = [list(block.output(0.0, [u(0.0)]))]
    for k in range(N):
        block.update(T[k], [u(T[k])])
        ys.append(list(block.output(T[k + 1], [u(T[k])])))
    return np.array(ys)


def simulate(path, **kw):
    table = np.array([(t, signal(t)) for t in T], dtype=[("time", np.float64), ("u", np.float64)])
    return fmpy.simulate_fmu(str(path), stop_time=T[-1], output_interval=H, input=table, **kw)


@pytest.mark.parametrize("key", ["pid", "pi_lag", "gain"])
def test_valid_fmus(fmus, key):
    assert validate_fmu(str(fmus[key])) == []


def test_model_description(fmus):
    md = fmpy.read_model_description(str(fmus["pid"]))
    v = {x.name: x for x in md.modelVariables}
    assert [n for n, x in v.items() if x.causality == "input"] == ["u"]
    assert [n for n, x in v.items() if x.causality == "output"] == ["y"]
    assert {n: float(x.start) for n, x in v.items() if x.causality == "parameter"} == {
        "kp": 2.0, "ki": 1.0, "kd": 0.1, "u_max": 1.5}  # u_min (-inf), tf/kb (None), anti_windup
    # (a string) and sample_time are kept as exported
    assert [d.name for d in md.outputs[0].dependencies] == ["u"]
    assert float(md.defaultExperiment.stepSize) == H
    assert not md.coSimulation.canHandleVariableCommunicationStepSize
    assert md.coSimulation.canGetAndSetFMUstate
    lag = fmpy.read_model_description(str(fmus["pi_lag"]))
    assert lag.coSimulation.modelIdentifier == "integrator"
    assert lag.outputs[0].dependencies == []  # kp = kd = 0: no feed-through


@pytest.mark.parametrize("key, block", [
    ("pid", lambda: PID(kp=2.0, ki=1.0, kd=0.1, u_max=1.5)),
    ("pi_lag", lambda: PID(kp=0.0, ki=4.0)),
    ("gain", lambda: Gain(2.5)),
])
def test_simulate_fmu_matches_python(fmus, key, block):
    r = simulate(fmus[key])
    want = fmpy_semantics(block())
    assert len(r) == N + 1
    assert np.max(np.abs(r["y"] - want[:, 0])) <= 1e-12
    assert np.ptp(r["y"]) > 0.1


def test_parameters_recreate_the_block(fmus):
    r = simulate(fmus["pid"], start_values={"kp": 0.5, "kd": 0.0})
    want = fmpy_semantics(PID(kp=0.5, ki=1.0, kd=0.0, u_max=1.5))
    assert np.max(np.abs(r["y"] - want[:, 0])) <= 1e-12
    assert np.max(np.abs(r["y"] - simulate(fmus["pid"])["y"])) > 0.1


def test_fmu_block_of_the_exported_block_is_the_block(fmus):
    """With the runner's semantics (inputs set before the outputs are read) the FMU block of the
    exported FMU gives bit-identical outputs: direct feed-through between steps works."""
    for key, block in (("pid", PID(kp=2.0, ki=1.0, kd=0.1, u_max=1.5)), ("gain", Gain(2.5))):
        wrapped = FMU(fmus[key])
        assert wrapped.feedthrough() == {"y": ("u",)}
        got, want = [], []
        for b, rows in ((wrapped, got), (block, want)):
            b.start(0.0, H)
            for t in T:
                u = [signal(t)]
                rows.append(list(b.output(t, u)))
                b.update(t, u)
            b.stop()
        assert got == want, key


def test_state_snapshot_through_fmi(fmus):
    b = FMU(fmus["pid"])
    b.start(0.0, H)
    for k in range(20):
        b.update(T[k], [signal(T[k])])
    snap = b.get_state()

    def run_on():
        rows = []
        for k in range(20, 40):
            rows.append(b.output(T[k], [1.0])[0])
            b.update(T[k], [1.0])
        return rows

    first = run_on()
    b.set_state(snap)
    assert run_on() == first
    b.stop()


def test_step_size(fmus):
    # a first step of another size restarts the block with it ...
    r = fmpy.simulate_fmu(str(fmus["pi_lag"]), stop_time=1.0, output_interval=0.05,
                          start_values={"u": 1.0})
    assert np.allclose(r["y"], 4.0 * r["time"], rtol=0, atol=1e-12)
    # ... a later change is refused
    b = FMU(fmus["pi_lag"], log=True)
    b.start(0.0, H)
    b.update(0.0, [1.0])
    b.dt = 2 * H
    with pytest.raises(BlockError, match=r"(?s)fmi2Discard.*period 0.01 it was started with"):
        b.update(H, [1.0])
    b.stop()


def test_unpicklable_block(tmp_path):
    with pytest.raises(BlockError, match=r"cannot export .*Function as an FMU: the block cannot be pickled"):
        export_block_fmu(Function(lambda t, u: 2 * u), tmp_path)
    assert not list(tmp_path.iterdir())
    with pytest.raises(BlockError, match="takes a Block"):
        export_block_fmu(object(), tmp_path)


class Bad(Block):
    inputs = ("u",)
    outputs = ("y",)

    def feedthrough(self):
        return {"y": ("v",)}


def test_bad_feedthrough(tmp_path):
    with pytest.raises(BlockError, match=r"feedthrough\(\) names unknown ports \['v'\]"):
        export_block_fmu(Bad(), tmp_path)
