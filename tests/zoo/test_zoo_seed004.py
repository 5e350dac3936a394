"""Seed 004's test mechanisms (models/two_link_arm.py, models/slider_crank_tsda.py) against
references written apart from the models (tests/support/mechanism_references.py):

* the two-link arm by Lagrange's equations of the first kind with the seed's printed mass
  matrix and forces (sec. 4.4.3) and the path constraint (tests/support/zoo_reference.py); its
  constraint torques tau = C^T lambda against the inverse dynamics M(theta) theta'' - f of the
  seed's formulas along the model's motion;
* the TSDA slider-crank by its one-degree-of-freedom reduction in the crank angle phi (the
  positions of the other bodies in closed form).

The singular slider-crank (models/singular_slider_crank.py) is tested at tight tolerance
elsewhere (work on singular positions); here only that it runs on its non-singular
reformulation (eq. 4.28) and conserves its energy.
"""

import math

import numpy as np
import pytest
from fmu_support import MODELS
from mechanism_references import arm_mass_force, arm_reference, tsda_reference

import mbsfmu

ARM = MODELS / "two_link_arm.py"
SPANS = {"I": 10.0, "II": 2.0}


@pytest.mark.parametrize("case", [pytest.param("I", marks=pytest.mark.slow), "II"])
def test_two_link_arm_against_first_kind_and_inverse_dynamics(case):
    """Seed 004 sec. 4.4.3, case I over 10 s, case II over 2 s (omega = 0.5): the joint angles
    within 1e-8 of the reference (engine, 'qr', rtol 1e-10); the constraint torques
    C^T lambda (from the reaction, Result.multipliers) equal the reference's to 1e-6 (relative)
    and the inverse dynamics M theta'' - f of the seed's formulas along the model's motion to
    1e-8; the tip stays on the path to 1e-10; case I (a fixed path) keeps its energy to 1e-8."""
    s = mbsfmu.load_model(ARM, case=case)
    res = mbsfmu.simulate(s, SPANS[case], 0.01, rtol=1e-10)
    ref = arm_reference(case)
    x0 = np.concatenate([res.y[:, 0], res.yd[:, 0]])
    X = ref.solve(x0, res.t)
    err = float(np.max(np.abs(res.y - X[:2])))
    lam = res.multipliers()["path"]
    tau, tau_ref, tau_id = [], [], []
    for i, ti in enumerate(res.t):
        C = res.numeric.constraint_parts(ti, res.y[:, i])[1][0]
        tau.append(C * lam[i])
        _, lam_ref = ref.accelerations(ti, X[:, i])
        C_ref = ref.constraint_parts(ti, X[:2, i], X[2:, i])[2][0]
        tau_ref.append(-C_ref * lam_ref[0])  # the seed's M q'' = f - G^T lambda
        M, f = arm_mass_force(res.y[:, i], res.yd[:, i], ti)
        tau_id.append(M @ res.ydd[:, i] - f)
    tau, tau_ref, tau_id = map(np.array, (tau, tau_ref, tau_id))
    scale = float(np.max(np.abs(tau_ref)))
    err_tau = float(np.max(np.abs(tau - tau_ref))) / scale
    err_id = float(np.max(np.abs(tau - tau_id))) / scale
    residual = float(np.max(res.constraint_residual))
    drift = res.relative_energy_drift()
    print(f"two-link arm case {case}, {SPANS[case]:g} s: angle error {err:.1e}, torques {err_tau:.1e} "
          f"(max |tau| {scale:.0f} N m), inverse dynamics {err_id:.1e}, residual {residual:.1e}, "
          f"energy drift {drift:.1e}, {res.stats['steps']} steps")
    assert res.stats["formulation"] == "qr"
    assert err < 1e-8
    assert err_tau < 1e-6
    assert err_id < 1e-8
    assert residual < 1e-10
    if case == "I":
        assert drift < 1e-8


def test_two_link_arm_reaction_is_an_fmu_output():
    """The multiplier is the model's reaction output (what the FMU exposes)."""
    s = mbsfmu.load_model(ARM, case="II")
    assert "reaction.path" in s.outputs and "tip.y" in s.outputs


# ---------------------------------------------------------------- TSDA slider-crank
TSDA = MODELS / "slider_crank_tsda.py"


@pytest.mark.parametrize("k", [1000.0, 10000.0])
def test_tsda_slider_crank_against_one_dof_reduction(k):
    """Seed 004 sec. 4.4.4, t = 0 ... 0.5 s: the crank angle and the slider within 1e-8 of the
    1-DOF solution (engine, 'qr', rtol 1e-10), residual <= 1e-10; the step counts at rtol 1e-6
    printed beside the seed's Table 4.8 (PStab: 33 steps at TOL 1e-6 for its data)."""
    res = mbsfmu.simulate(TSDA, 0.5, 0.01, rtol=1e-10, params={"k": k})
    coarse = mbsfmu.simulate(TSDA, 0.5, 0.01, rtol=1e-6, params={"k": k})
    ref, geometry = tsda_reference(k)
    X = ref.solve([math.pi / 2, 0.0], res.t)
    err = max(float(np.max(np.abs(res["theta2"] - X[0]))),
              float(np.max(np.abs(res["x4"] - geometry(X[0])[1]))))
    residual = float(np.max(res.constraint_residual))
    print(f"TSDA slider-crank k = {k:g}: error {err:.1e}, residual {residual:.1e}, "
          f"steps {res.stats['steps']} (rtol 1e-10), {coarse.stats['steps']} (rtol 1e-6, "
          f"{coarse.stats['nfev']} right-hand sides)")
    assert err < 1e-8
    assert residual < 1e-10
    assert res["theta2"][-1] > math.pi / 2 + 0.1  # the torque turns the crank


def test_singular_slider_crank_linear_reformulation_keeps_energy():
    """The non-singular reformulation theta1 + theta2 = pi (eq. 4.28) over the seed's 3 s,
    through the positions where the original constraint is singular: energy drift <= 1e-8 at
    rtol 1e-10 and theta2 = pi - theta1."""
    s = mbsfmu.load_model(MODELS / "singular_slider_crank.py", constraint="linear")
    res = mbsfmu.simulate(s, 3.0, 0.01, rtol=1e-10)
    assert res.relative_energy_drift() < 1e-8
    assert np.max(np.abs(res["theta1"] + res["theta2"] - math.pi)) < 1e-10
    assert np.max(res["theta1"]) > 2 * math.pi  # passed theta1 = pi and 2 pi
