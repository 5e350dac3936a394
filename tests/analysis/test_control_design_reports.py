"""Control design that speaks up (issue 28 item 5): a mode the input cannot reach or the outputs
cannot see is named by its coordinate (two uncoupled carts, one actuated: the other cart's
damped oscillation in closed form); a discrete design's poles are labelled z-plane values with
their s-plane equivalents (the cart-pendulum's dlqr against python-control's); a free cart's
zero eigenvalues are one rigid-body entry of the modal table."""

from __future__ import annotations

import cmath
import math
import pathlib
import warnings

import numpy as np
import pytest

import mbsfmu
from mbsfmu.analysis import ControlDesignWarning, ModeReport, dlqr, lqr, place

ROOT = pathlib.Path(__file__).resolve().parents[2]
M1, M2, K2, C2 = 2.0, 1.0, 4.0, 0.5
#: the unactuated cart's eigenvalue: m2 s² + c2 s + k2 = 0
LAM2 = complex(-C2 / (2 * M2), math.sqrt(K2 / M2 - (C2 / (2 * M2)) ** 2))


def carts(free_second=False) -> mbsfmu.System:
    """Cart 1 (x1, mass M1) driven by F; cart 2 (x2, mass M2) on a spring K2 and damper C2 (or
    free), moving across: nothing couples them."""
    s = mbsfmu.System("carts")
    m1, m2, k, c = s.constants(m1=M1, m2=M2, k=0.0 if free_second else K2, c=0.0 if free_second else C2)
    x1, x2 = s.coordinates("x1", "x2")
    F = s.input("F", 0.0)
    s.body("c1", ref="ISYS", rel_pos=[x1, 0, 0], mass=m1, inertia=[0, 0, 0])
    s.body("c2", ref="ISYS", rel_pos=[0, x2, 0], mass=m2, inertia=[0, 0, 0])
    s.force("drive", "c1", [F, 0, 0])
    s.generalized_force("mount", "x2", -k * x2 - c * s.coordinates_["x2"].velocity)
    return s


@pytest.fixture(scope="module")
def two_carts():
    return mbsfmu.linearize(carts(), at={"x1": 0, "x2": 0}, inputs=["F"])


def test_lqr_names_the_mode_the_input_cannot_reach(two_carts):
    with pytest.warns(ControlDesignWarning) as caught:
        gain = lqr(two_carts, [1, 1, 1, 1], [1])
    (report,) = gain.uncontrollable
    assert (report.what, report.coordinate) == ("uncontrollable", "x2")
    assert abs(report.eigenvalue - LAM2) < 1e-12 and report.period is None
    assert str(caught[0].message) == (
        "lqr: the inputs ['F'] cannot move the mode of coordinate 'x2' (eigenvalue -0.25 ± "
        "1.98431j): it keeps its eigenvalue in the closed loop")
    assert gain.unobservable == []  # the outputs are the states
    # it keeps its eigenvalue: the pair is among the closed-loop poles
    assert min(abs(p - LAM2) for p in gain.poles) < 1e-12
    assert min(abs(p - LAM2.conjugate()) for p in gain.poles) < 1e-12
    assert "uncontrollable: the mode of coordinate 'x2'" in str(gain)


def test_dlqr_names_it_in_the_z_plane_with_its_s_equivalent(two_carts):
    T = 0.05
    with pytest.warns(ControlDesignWarning, match=r"dlqr: the inputs \['F'\] cannot move the mode "
                      r"of coordinate 'x2' \(z = 0.982721 ± 0.0978225j, s = -0.25 ± 1.98431j\)"):
        gain = dlqr(two_carts, [1, 1, 1, 1], [1], T)
    (report,) = gain.uncontrollable
    assert report.coordinate == "x2" and report.period == T
    assert abs(report.eigenvalue - cmath.exp(LAM2 * T)) < 1e-12 and abs(report.s - LAM2) < 1e-10


def test_unobservable_mode_from_the_outputs():
    lin = mbsfmu.linearize(carts(), at={"x1": 0, "x2": 0}, inputs=["F"], outputs=["x1", "der(x1)"])
    with pytest.warns(ControlDesignWarning, match=r"the outputs \['x1', 'der\(x1\)'\] do not show "
                      r"the mode of coordinate 'x2' \(eigenvalue -0.25 ± 1.98431j\): an observer"):
        gain = lqr(lin, [1, 1, 1, 1], [1])
    (seen,) = gain.unobservable
    assert (seen.what, seen.coordinate) == ("unobservable", "x2") and abs(seen.eigenvalue - LAM2) < 1e-12
    assert ModeReport("unobservable", "x2", LAM2).s == LAM2


def test_place_refuses_the_unreachable_mode(two_carts):
    with pytest.raises(mbsfmu.ParameterError, match=r"place: the inputs \['F'\] cannot move the mode "
                       r"of coordinate 'x2' \(eigenvalue -0.25 ± 1.98431j; in the states: a combined "
                       r"motion of 'x2', 'der\(x2\)'\): its pole stays where it is"):
        place(two_carts, [-1, -2, -3, -4])


@pytest.fixture(scope="module")
def cart_pendulum():
    return mbsfmu.linearize(mbsfmu.load_model(ROOT / "models" / "cart_pendulum.py"),
                            at={"x": 0, "theta": 0}, inputs=["F"], equilibrium=True)


def test_a_reachable_plant_gives_no_warning(cart_pendulum):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ControlDesignWarning)
        gain = lqr(cart_pendulum, [10, 100, 1, 1], [0.1])
    assert gain.uncontrollable == gain.unobservable == [] and gain.plane == "s"
    np.testing.assert_array_equal(gain.s_poles, gain.poles)
    assert gain.pole_table().startswith("closed-loop poles (s-plane):")


def test_dlqr_of_the_pendulum_against_python_control(cart_pendulum):
    """python-control's dlqr of its own zero-order-hold discretization: the same gain and the
    same z-plane poles; ours are labelled and carry s = ln(z) / T."""
    control = pytest.importorskip("control")
    T, Q, R = 0.01, np.diag([10.0, 100.0, 1.0, 1.0]), np.array([[0.1]])
    gain = dlqr(cart_pendulum, Q, R, T)
    Kc, _, E = control.dlqr(control.c2d(cart_pendulum.to_control(), T, "zoh"), Q, R)
    np.testing.assert_allclose(gain.K, Kc, rtol=1e-8)
    np.testing.assert_allclose(np.sort_complex(gain.poles), np.sort_complex(E), rtol=0, atol=1e-10)
    assert gain.plane == "z" and "plane='z'" in repr(gain)
    np.testing.assert_allclose(np.exp(gain.s_poles * T), gain.poles, rtol=0, atol=1e-13)
    assert np.all(gain.s_poles.real < 0)
    table = gain.pole_table().splitlines()
    assert table[0] == "closed-loop poles (z-plane, period 0.01 s; s = ln(z) / T):"
    assert table[1].split() == ["z", "s", "[1/s]", "f_n", "[Hz]", "zeta"] and len(table) == 2 + 4
    for row in table[2:]:  # z, s, f_n = |s| / 2π, ζ = -Re s / |s|
        z, s, fn, zeta = complex(row.split()[0]), complex(row.split()[1]), *map(float, row.split()[2:])
        assert abs(cmath.exp(s * T) - z) < 1e-5 and fn == pytest.approx(abs(s) / (2 * math.pi), rel=1e-4)
        assert zeta == pytest.approx(-s.real / abs(s), abs=1e-4)


def test_the_dlqr_error_labels_its_z_plane_eigenvalue(cart_pendulum):
    with pytest.raises(mbsfmu.ParameterError, match=r"dlqr: Q gives no weight to the mode "
                       r"of coordinate 'x' \(z = 1, s = 0 1/s; in the states: state 'x'\)"):
        dlqr(cart_pendulum, [0, 1, 1, 1], [1], 0.01)


def free_cart(d=0.0):
    s = mbsfmu.System("free_cart")
    m, c = s.constants(m=2.0, d=d)
    x = s.coordinate("x")
    s.body("cart", ref="ISYS", rel_pos=[x, 0, 0], mass=m, inertia=[0, 0, 0])
    s.generalized_force("friction", "x", -c * s.coordinates_["x"].velocity)
    return mbsfmu.linearize(s, at={"x": 0})


def test_a_free_cart_is_one_rigid_body_entry():
    lin = free_cart()
    (mode,) = lin.modes()
    assert (mode.kind, mode.multiplicity, mode.eigenvalue, mode.frequency_hz) == ("rigid body", 2, 0j, 0.0)
    assert mode.shape == {"x": 1} and math.isnan(mode.damping_ratio)
    head, row = lin.modal_table().splitlines()
    assert row.split() == ["1", "0", "(double)", "0", "rigid", "body", "[+1.0000]"]
    assert lin.to_dict()["modes"][0]["kind"] == "rigid body"


def test_a_damped_free_cart_has_one_zero_eigenvalue_and_a_real_mode():
    """m ẍ + d ẋ = 0: eigenvalues 0 (the position drifts freely) and -d/m."""
    rigid, decay = free_cart(d=0.5).modes()
    assert (rigid.kind, rigid.multiplicity, rigid.shape) == ("rigid body", 1, {"x": 1})
    assert decay.kind == "real" and decay.eigenvalue == pytest.approx(-0.25, abs=1e-14)


def test_two_free_carts_are_two_rigid_body_entries_one_per_cart():
    lin = mbsfmu.linearize(carts(free_second=True), at={"x1": 0, "x2": 0}, inputs=["F"])
    first, second = lin.modes()
    assert first.kind == second.kind == "rigid body" and first.multiplicity == second.multiplicity == 2
    assert first.shape == {"x1": 1, "x2": 0} and second.shape == {"x1": 0, "x2": 1}
    table = lin.modal_table().splitlines()
    assert len(table) == 3 and all("rigid body" in r for r in table[1:])
