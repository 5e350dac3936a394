"""What a control engineer does with a linearization (issue 13): python-control, the runner's
StateSpace block, modal table and plots, LQR / pole placement, and the closed loop of the LQR
with the nonlinear native FMU from a 10 degree tilt; the linear and nonlinear closed loops agree
to first order for a small reference step."""

from __future__ import annotations

import math
import pathlib

import numpy as np
import pytest

import mbsfmu
from mbsfmu.analysis import dlqr, lqr, place

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cart():
    return mbsfmu.load_model(ROOT / "models" / "cart_pendulum.py")


@pytest.fixture(scope="module")
def lin(cart):
    return mbsfmu.linearize(cart, at={"x": 0, "theta": 0}, inputs=["F"],
                            outputs=["x", "theta", "der(x)", "der(theta)", "rod_centre.x"],
                            equilibrium=True)


def test_to_control_keeps_names_and_poles(lin):
    control = pytest.importorskip("control")
    sys = lin.to_control()
    assert isinstance(sys, control.StateSpace)
    assert list(sys.state_labels) == ["x", "theta", "der(x)", "der(theta)"]
    assert list(sys.input_labels) == ["F"] and sys.output_labels[-1] == "rod_centre_x"
    np.testing.assert_allclose(np.sort_complex(sys.poles()),
                               np.sort_complex(np.linalg.eigvals(lin.numeric().A)), atol=1e-12)


def test_transfer_function_and_frequency_response_agree(lin):
    num, den = lin.transfer_function("F", "x")
    f = np.array([0.05, 0.3, 2.0])
    s = 2j * np.pi * f
    G = lin.frequency_response("F", "x", f)
    np.testing.assert_allclose(np.polyval(num, s) / np.polyval(den, s), G, rtol=1e-9)
    with pytest.raises(mbsfmu.ParameterError, match="unknown output"):
        lin.transfer_function("F", "y")


def test_modal_table_bode_and_mode_plot(lin, tmp_path):
    table = lin.modal_table()
    # the cart's free drift (λ = 0 twice) is one rigid-body row, then the pendulum's ±3.97
    assert "f_n [Hz]" in table and len(table.splitlines()) == 1 + 3
    assert "0 (double)" in table.splitlines()[1] and "rigid body" in table.splitlines()[1]
    d = lin.to_dict()
    assert {"A", "B", "C", "D", "states", "inputs", "outputs", "modes"} <= set(d)
    assert sum(m["eigenvalue"][0] > 1e-9 for m in d["modes"]) == 1
    for fn, name in ((lin.bode, "bode.png"), (lin.plot_modes, "modes.png")):
        path = fn(tmp_path / name)
        assert pathlib.Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_state_space_block_takes_the_linearization(lin):
    from blocks import StateSpace

    num = lin.numeric()
    block = StateSpace(lin)
    assert block.inputs == ("F",) and block.outputs[-1] == "rod_centre_x"
    np.testing.assert_array_equal(block.A, num.A)
    np.testing.assert_array_equal(block.D, num.Du)


def test_lqr_dlqr_and_place_stabilize(lin):
    Q, R = [10.0, 100.0, 1.0, 1.0], [0.1]
    k = lqr(lin, Q, R)
    assert k.K.shape == (1, 4) and np.all(k.poles.real < 0)
    kd = dlqr(lin, Q, R, 0.01)
    assert np.all(np.abs(kd.poles) < 1)
    poles = [-2.0, -3.0, -4.0, -5.0]
    kp = place(lin, poles)
    np.testing.assert_allclose(np.sort(kp.poles.real), np.sort(poles), rtol=1e-8)
    control = pytest.importorskip("control")
    Kc, _, _ = control.lqr(lin.to_control(), np.diag(Q), np.diag(R))
    np.testing.assert_allclose(k.K, Kc, rtol=1e-8)


def test_lqr_checks_do_not_refuse_a_weakly_actuated_plant(lin):
    """The Hautus tests before the Riccati equation scale B's columns and Q: a force 1e-8 as
    effective (F scaled) and a tiny Q still give scipy's gain, K scaled back by 1e8 (K = R⁻¹BᵀP
    with B -> 1e-8 B and R -> 1e-16 R gives the same closed loop)."""
    import dataclasses

    from scipy.linalg import solve_continuous_are

    num = lin.numeric()
    weak = dataclasses.replace(num, F=num.F * 1e-8)
    Q, R = np.diag([1e-6, 1e-4, 1e-6, 1e-6]), np.array([[1e-17]])
    k = lqr(weak, Q, R)
    P = solve_continuous_are(weak.A, weak.B, Q, R)
    np.testing.assert_allclose(k.K, np.linalg.solve(R, weak.B.T @ P), rtol=1e-9)
    strong = lqr(num, Q, R * 1e16)
    np.testing.assert_allclose(k.K * 1e-8, strong.K, rtol=1e-6)


@pytest.fixture(scope="module")
def fmu(built_fmu):
    return built_fmu(ROOT / "models" / "cart_pendulum.py")


def _loop(plant, gain, period, t_end, step=1e-3, ref=None):
    from blocks import Step
    from mbsfmu.runner import Diagram

    d = Diagram(step=step)
    d.add("plant", plant)
    d.add("ctrl", gain.block(references=("x",), sample_time=period))
    d.add("ref", Step(time=0.0, before=0.0, after=ref or 0.0))
    d.connect("ref.y", "ctrl.x_ref")
    for n in gain.states:
        d.connect(f"plant.{n}", f"ctrl.{n}")
    d.connect("ctrl.F", "plant.F")
    return d.run(t_end)


@pytest.mark.slow
def test_lqr_from_the_symbolic_linearization_balances_the_native_fmu_from_10_degrees(lin, fmu):
    from blocks import FMU

    gain = dlqr(lin, [10.0, 100.0, 1.0, 1.0], [0.1], 0.01)
    res = _loop(FMU(fmu, start_values={"theta": math.radians(10)}), gain, 0.01, 6.0)
    theta, x = res["plant.theta"], res["plant.x"]
    assert abs(theta[0] - math.radians(10)) < 1e-12
    assert np.max(np.abs(theta[res.t > 4.0])) < 1e-3 and abs(x[-1]) < 1e-2
    assert np.max(np.abs(theta)) < math.radians(10) + 1e-9


@pytest.mark.slow
def test_linear_and_nonlinear_closed_loops_agree_to_first_order(lin, fmu):
    """The same LQR around the FMU and around StateSpace(lin), after a small reference step a:
    the difference relative to a shrinks at least like a (the linear model is right to first
    order; for this odd-symmetric plant the quadratic terms vanish and it shrinks like a^2,
    measured ratio about 3.4 from a = 0.02 to 0.01)."""
    from blocks import FMU, StateSpace

    gain = dlqr(lin, [10.0, 100.0, 1.0, 1.0], [0.1], 0.01)
    errors = []
    for a in (0.02, 0.01):
        nl = _loop(FMU(fmu, start_values={"theta": 0.0}), gain, 0.01, 3.0, ref=a)
        lm = lin.numeric()
        block = StateSpace(lm.A, lm.B, np.eye(4), np.zeros((4, 1)))
        block.inputs, block.outputs = ("F",), tuple(lin.states)
        li = _loop(block, gain, 0.01, 3.0, ref=a)
        err = max(np.max(np.abs(nl[f"plant.{n}"] - li[f"plant.{n}"])) for n in ("x", "theta"))
        errors.append(err / a)
    assert errors[0] < 1e-4 and errors[0] / errors[1] > 1.8


def test_cli_prints_matrices_and_modes_and_json(capsys, tmp_path):
    import json

    from mbsfmu.cli import main

    model = str(ROOT / "models" / "cart_pendulum.py")
    assert main(["linearize", model, "--at", "x=0", "theta=0", "--inputs", "F", "--equilibrium",
                 "--bode", str(tmp_path / "b.png")]) == 0
    out = capsys.readouterr().out
    assert "A (4x4)" in out and "B (4x1)" in out and "f_n [Hz]" in out and "15.7917" in out
    assert (tmp_path / "b.png").is_file()
    assert main(["linearize", model, "--at", "theta=0", "--outputs", "x", "rod_centre.x", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["states"] == ["x", "theta", "der(x)", "der(theta)"] and d["outputs"] == ["x", "rod_centre.x"]
    assert np.array(d["A"]).shape == (4, 4) and np.array(d["C"]).shape == (2, 4)
    assert len(d["modes"]) == 3  # the free cart's drift (λ = 0 twice) is one rigid-body entry
    assert (d["modes"][0]["kind"], d["modes"][0]["multiplicity"]) == ("rigid body", 2)
    assert main(["linearize", model, "--at", "theta=0.2", "--equilibrium"]) == 2
    assert "not an equilibrium" in capsys.readouterr().err
    assert main(["linearize", str(ROOT / "models" / "slider_crank.py"), "--at", "x=0.6", "alpha=2.9",
                 "beta=0.3"]) == 2
    assert "violates constraint 'pivot." in capsys.readouterr().err


def test_mode_shapes_are_drawn_as_the_mechanism(tmp_path):
    """For a model with frames the mode plot draws the mechanism: the frame origins of seed
    002's hanging double pendulum (points at 0, -L1, -L1 - L2 on z) and, along the lower mode,
    elbow and tip swinging to the same side, along the upper one to opposite sides (the
    eigenvectors of the hand-written M, K of test_linearize)."""
    from mbsfmu.analysis.modal import frame_positions, modes

    s = mbsfmu.load_model(str(pathlib.Path(__file__).parents[2] / "models" / "double_pendulum.py"))
    lin = mbsfmu.linearize(s, at={}, symbolic=False, equilibrium=True)
    positions, names, refs = frame_positions(lin)
    p0 = positions(np.zeros(2))
    assert names == ["ISYS", "P1", "P1_cg", "P2", "P2_cg"] and refs[3] == "P1_cg"
    np.testing.assert_allclose(p0[:, 2], [0, 0, -1, -1, -2], atol=1e-15)
    lower, upper = modes(lin)
    for mode, same_side in ((lower, True), (upper, False)):
        shape = np.array([mode.shape[c].real for c in lin.coordinates])
        d = (positions(1e-6 * shape) - p0) / 1e-6
        elbow, tip = d[names.index("P1_cg"), 1], d[names.index("P2_cg"), 1]
        assert (elbow * tip > 0) == same_side, (elbow, tip)
    path = lin.plot_modes(tmp_path / "modes.png")
    assert path.stat().st_size > 5000
