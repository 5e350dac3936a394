"""User outputs of FMUs (frame kinematics, expressions, reaction multipliers) in both kinds,
direct feed-through, and the native FMU's directional derivatives."""

from functools import partial

import numpy as np
import pytest
from fmu_support import MODELS, TOL, Lazy, Slave, reference

import mbsfmu
from mbsfmu.core.errors import ModelError
from mbsfmu.model.loader import load_model

fmpy = pytest.importorskip("fmpy")

from fmpy.fmi1 import FMICallException  # noqa: E402

from mbsfmu.fmu.build import build_fmu  # noqa: E402

KINDS = ["native", "pythonfmu"]


@pytest.fixture(scope="module")
def fmus(built_fmu):
    return Lazy({(k, m): partial(built_fmu, MODELS / f"{m}.py", kind=k)
                 for k in KINDS for m in ("cart_pendulum", "slider_crank")})


@pytest.mark.parametrize("kind", KINDS)
def test_slider_crank_pin_and_pivot_reaction(fmus, kind):
    r = fmpy.simulate_fmu(str(fmus[kind, "slider_crank"]), stop_time=1.0, output_interval=0.01,
                          start_values=TOL)
    l = 0.5
    # the pin (rod end) by hand from the coordinates
    assert np.max(np.abs(r["pin.x"] - (r["x"] + l * np.cos(r["alpha"])))) < 1e-12
    assert np.max(np.abs(r["pin.y"] - l * np.sin(r["alpha"]))) < 1e-12
    assert np.max(np.abs(r["pin.z"])) == 0.0
    # the multipliers against mbsfmu's KKT solution (seed 000 eq. 8) of the reference run
    lam = reference("slider_crank").multipliers()
    for row in ("pivot.x", "pivot.y"):
        scale = max(1.0, np.max(np.abs(lam[row])))
        assert np.max(np.abs(r[f"reaction.{row}"] - lam[row])) < 1e-7 * scale, row


@pytest.mark.parametrize("kind", KINDS)
def test_cart_outputs_and_feedthrough_declared(fmus, kind):
    path = fmus[kind, "cart_pendulum"]
    u = np.array([(0.0, 2.0), (2.0, 2.0)], dtype=[("time", float), ("F", float)])
    r = fmpy.simulate_fmu(str(path), stop_time=1.0, output_interval=0.01, start_values=TOL, input=u)
    l = 0.5
    assert np.max(np.abs(r["rod_centre.x"] - (r["x"] + l * np.sin(r["theta"])))) < 1e-12
    assert np.max(np.abs(r["rod_centre.z"] - l * np.cos(r["theta"]))) < 1e-12
    assert np.max(np.abs(r["drive_power"] - 2.0 * r["der(x)"])) < 1e-12
    md = fmpy.read_model_description(str(path))
    by_vr = {v.valueReference: v for v in md.modelVariables}
    deps = {by_vr[o.variable.valueReference].name: [d.name for d in o.dependencies]
            for o in md.outputs}
    assert deps["drive_power"] == ["F"] and deps["x"] == [] and deps["rod_centre.x"] == []


def test_native_directional_derivative_of_feedthrough_output(fmus, tmp_path):
    s = Slave(fmus["native", "cart_pendulum"], tmp_path)
    s.start()
    s.run(0.0, 30, 0.01, inputs=lambda t: {"F": 1.0})
    vdx = s.get(["der(x)"])[0]
    out = [s.vr[n] for n in ("drive_power", "x", "der(theta)", "rod_centre.x")]
    d = s.fmu.getDirectionalDerivative(out, [s.vr["F"]], [1.0])
    assert d == [pytest.approx(vdx, rel=1e-14), 0.0, 0.0, 0.0]
    # direct feed-through: setting the input changes the output at the same communication point
    s.set({"F": 3.0})
    assert s.get(["drive_power"])[0] == pytest.approx(3.0 * vdx, rel=1e-14)
    with pytest.raises(FMICallException):
        s.fmu.getDirectionalDerivative(out, [s.vr["m"]], [1.0])  # a parameter is no known here
    assert "is not an input" in s.errors()[-1]
    s.free()


@pytest.mark.slow
def test_native_directional_derivative_of_reactions_matches_finite_difference(tmp_path):
    """A motor torque T on the slider-crank's crank: the pivot reaction depends directly on T
    (through the KKT system); its derivative must match a difference quotient of the outputs."""
    s_ = load_model(MODELS / "slider_crank.py")
    T = s_.input("T", 0.0)
    s_.torque("motor", "crank", [0, 0, T])
    path = build_fmu(s_, tmp_path / "driven.fmu")
    s = Slave(path, tmp_path)
    s.start()
    s.run(0.0, 25, 0.01)
    names = ["reaction.pivot.x", "reaction.pivot.y"]
    vrs = [s.vr[n] for n in names]
    d = np.array(s.fmu.getDirectionalDerivative(vrs, [s.vr["T"]], [1.0]))
    s.set({"T": 0.0})
    base = s.get(names)
    s.set({"T": 1e-3})
    fd = (s.get(names) - base) / 1e-3
    assert np.max(np.abs(d)) > 1.0  # not trivially zero
    assert np.max(np.abs(d - fd)) < 1e-8 * np.max(np.abs(d))  # the multipliers are affine in T
    # and the reactions agree with mbsfmu's KKT multipliers for the new input value
    ref = mbsfmu.simulate(s_, 0.25, 0.25, method="rkstab", rtol=1e-10, atol=1e-12,
                          backend="numpy")  # the reference formulation is the oracle here
    num, form = ref.numeric, ref.formulation
    num.set_inputs({"T": 1e-3})
    lam = form.multipliers(0.25, np.concatenate((ref.y[:, -1], ref.yd[:, -1])))
    assert np.max(np.abs(s.get(names) - lam)) < 1e-6 * max(1.0, np.max(np.abs(lam)))
    s.free()


def test_output_declaration_errors():
    s = load_model(MODELS / "double_pendulum.py")
    with pytest.raises(ModelError, match="unknown reference frame 'nowhere'"):
        s.frame_output("nowhere")
    with pytest.raises(ModelError, match="quantity must be one of"):
        s.frame_output(list(s.frames)[-1], "jerk")
    with pytest.raises(ModelError, match="reaction outputs need loops"):
        s.reaction_outputs()
    with pytest.raises(ModelError, match="identifiers joined by dots"):
        s.output("a..b", 1)
    with pytest.raises(ModelError, match="unknown symbol"):
        s.output("bad", "nosuchsymbol * 2")
    with pytest.raises(ModelError, match="unknown symbol.*D2alpha"):
        s.output("acc", s.ydd[0])  # accelerations are not part of the state
    s.output("height", "-L1*cos(alpha)")
    with pytest.raises(ModelError, match="duplicate output"):
        s.output("height", "L1")
    assert list(s.outputs) == ["height"]
