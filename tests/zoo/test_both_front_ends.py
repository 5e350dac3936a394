"""Mechanisms that exist in both front ends agree on shared outputs (issue 12): a point's
trajectory from the relative-coordinate model (a frame's origin) and from the natural-coordinate
model (a point's coordinates) to 1e-8, with the default formulation ('qr') and method (RKSTAB)
on the engine, constraint residual <= 1e-10.  The slider-crank pair is tested in
tests/zoo/test_natural_coordinates.py; here the four-bar near a change point and Andrews'
squeezing mechanism.

* models/four_bar.py and models/four_bar_change_point_natural.py: the coupler's pins B and C
  over 3 s; the crank swings from 60 degrees through more than a turn and back, the mechanism
  passing close to its change point.  The natural model runs at rtol 1e-11 against the
  relative one at 1e-12 (at 1e-11 the relative model's own error, ~8e-9 against rtol 1e-13,
  would dominate the difference).
* models/andrews.py and models/andrews_natural.py: the joints P, E, Q, R and the spring end D
  over [0, 0.03] (the IVP test set's span), both at rtol 1e-11; plus the natural model's start
  against the test set's beta'' and its end against the test set's beta(0.03).
"""

import math

import numpy as np
import pytest
from fmu_support import MODELS

import mbsfmu
from models.andrews import ACCELERATIONS_T0, REFERENCE_T003

TOL = 1e-8


def _max_diff(res, point, ref_frame):
    """max |natural point - relative frame origin| over the output grid, x and y."""
    X = ref_frame["position"]
    return max(float(np.max(np.abs(res[f"{point}_x"] - X[:, 0]))),
               float(np.max(np.abs(res[f"{point}_y"] - X[:, 1]))))


def _run(model, t_end, dt, rtol):
    res = mbsfmu.simulate(MODELS / model, t_end, dt, rtol=rtol, backend="c")
    assert res.stats["formulation"] == "qr" and res.stats["method"] == "rkstab"
    return res


def test_four_bar_pins_agree():
    ref = _run("four_bar.py", 3.0, 0.01, 1e-12)
    nat = _run("four_bar_change_point_natural.py", 3.0, 0.01, 1e-11)
    assert np.array_equal(nat.t, ref.t)
    errs = {"B": _max_diff(nat, "B", ref.frame("B")), "C": _max_diff(nat, "C", ref.frame("C_coupler"))}
    # closeness to the change point: the crank and rocker directions nearly parallel
    cross = np.abs(nat["B_x"] * nat["C_y"] - nat["B_y"] * (nat["C_x"] - 0.26))
    residual = float(np.max(nat.constraint_residual))
    print(f"four-bar: B {errs['B']:.1e}, C {errs['C']:.1e}, residual {residual:.1e}, "
          f"min |crank x rocker| {cross.min():.1e} m^2, crank travel {np.ptp(ref['phi1']):.2f} rad")
    assert np.ptp(ref["phi1"]) > 2 * math.pi - 1  # the motion is no small oscillation
    assert max(errs.values()) < TOL
    assert residual <= 1e-10 and float(np.max(ref.constraint_residual)) <= 1e-10


@pytest.fixture(scope="module")
def andrews_pair():
    return _run("andrews.py", 0.03, 0.0005, 1e-11), _run("andrews_natural.py", 0.03, 0.0005, 1e-11)


def test_andrews_joints_agree(andrews_pair):
    ref, nat = andrews_pair
    assert np.array_equal(nat.t, ref.t)
    errs = {p: _max_diff(nat, p, ref.frame(f)) for p, f in
            (("P", "P"), ("Ej", "K2_E"), ("Q", "K5_pin"), ("R", "K7_pin"))}
    # the spring end D from the joint E (eq. (1) on K3, as in the model) against the frame D
    xb, yb, ss, sc, sd = -.03635, .03273, 35e-3, 18e-3, 2e-2
    ex, ey = nat["Ej_x"] - xb, nat["Ej_y"] - yb
    D = np.c_[xb + (sc * ex - sd * ey) / ss, yb + (sc * ey + sd * ex) / ss]
    errs["D"] = float(np.max(np.abs(D - ref.frame("D")["position"][:, :2])))
    residual = float(np.max(nat.constraint_residual))
    print("Andrews: " + ", ".join(f"{k} {v:.1e}" for k, v in errs.items()) + f", residual {residual:.1e}")
    assert max(errs.values()) < TOL
    assert residual <= 1e-10 and float(np.max(ref.constraint_residual)) <= 1e-10


def test_andrews_natural_against_the_test_set(andrews_pair):
    """At t = 0 the pin P accelerates as rr beta'' (-sin beta, cos beta) with the test set's
    beta'' (relative 1e-9); at t = 0.03 the crank angle atan2(P_y, P_x), unwrapped, is the test
    set's beta to 1e-7 (the relative model's own agreement, tests/zoo/test_andrews.py)."""
    _, nat = andrews_pair
    rr, beta0 = 7e-3, math.atan2(nat["P_y"][0], nat["P_x"][0])
    want = rr * ACCELERATIONS_T0["beta"] * np.array([-math.sin(beta0), math.cos(beta0)])
    got = nat.ydd[:2, 0]
    assert np.max(np.abs(got - want)) < 1e-9 * np.max(np.abs(want))
    beta = np.unwrap(np.arctan2(nat["P_y"], nat["P_x"]))
    print(f"Andrews natural: beta(0.03) - reference {beta[-1] - REFERENCE_T003['beta']:.1e}")
    assert abs(beta[-1] - REFERENCE_T003["beta"]) < 1e-7
