"""Seed 003's case studies (models/copy_machine.py, bricard.py, flyball_governor.py) against
references written apart from the models (tests/support/mechanism_references.py):

* the copy machine in its minimal coordinates (rod angle theta, box height C_y): Lagrange's
  equations of the second kind of T = 1/2 I_O theta'^2 + 1/2 m2 C_y'^2 ... (tests/support/zoo_reference.py);
* the Bricard mechanism and the flyball governor by Lagrange's equations of the first kind in
  the seed's own formulation (its rigid-body frames and the angular velocity
  w = (z . y', x . z', y . x') of sec. 1.2, where the models use a shorter equivalent form),
  integrated with scipy (tests/support/zoo_reference.py).

The five-link suspension (models/five_link_natural.py: the wheel carrier and the tire as
three-point elements, the rods on carrier points) has no published trajectory to compare with
(the seed's are figures); it is checked by its structure (12 coordinates, 10 independent
constraints, DoF 2 as the seed's Table 6.28) and by two invariants the seed states: the tire's
spin about its axis (no torque acts about it on the frictionless revolute joint and the tire is
symmetric about it, Euler's equation for the axial component) and, without damper and road
motion, the energy.  The seed's McPherson strut is not modeled: its geometry is only in its
Fig. 5.12 (see the report of issue 12).
"""

import math

import numpy as np
import pytest
from fmu_support import MODELS
from mechanism_references import bricard_reference, copy_machine_reference, flyball_reference
from scipy.integrate import solve_ivp

import mbsfmu
from mbsfmu import derive


# ---------------------------------------------------------------- copy machine
@pytest.mark.slow
def test_copy_machine_against_minimal_coordinates():
    """Seed 003 sec. 5.3 over its 10 s: B and C_y within 1e-8 of the 2-DOF solution (engine,
    default formulation 'qr', rtol 1e-10); the rod keeps its length to 1e-10; the energy only
    decreases (the damper)."""
    res = mbsfmu.simulate(MODELS / "copy_machine.py", 10.0, 0.01, rtol=1e-10)
    bx, by, cy = copy_machine_reference(res.t)
    err = max(float(np.max(np.abs(res["B_x"] - bx))), float(np.max(np.abs(res["B_y"] - by))),
              float(np.max(np.abs(res["C_y"] - cy))))
    residual = float(np.max(res.constraint_residual))
    E = res.energy()["total"]
    print(f"copy machine 10 s: max error {err:.1e}, residual {residual:.1e}, {res.stats['steps']} steps")
    assert res.stats["formulation"] == "qr"
    assert err < 1e-8
    assert residual < 1e-10
    assert np.all(np.diff(E) <= 1e-10 * abs(E[0]))


# ---------------------------------------------------------------- Bricard
T_BRICARD = 5.0  # the seed runs 10 s; half of it here keeps the file's run time down


@pytest.mark.slow
def test_bricard_one_degree_of_freedom_against_first_kind():
    """Seed 003 sec. 6.1: the 11 x 12 Jacobian has rank 11 all along the motion (one degree of
    freedom, although Grübler's count gives none); P1 ... P4 within 1e-8 of the reference over
    5 s (engine, 'qr', rtol 1e-10); energy drift <= 1e-8, residual <= 1e-10."""
    res = mbsfmu.simulate(MODELS / "bricard.py", T_BRICARD, 0.05, rtol=1e-10)
    ref = bricard_reference()
    x0 = np.concatenate([res.y[:, 0], res.yd[:, 0]])
    X = ref.solve(x0, res.t, rtol=1e-12, atol=1e-12)
    err = float(np.max(np.abs(res.y - X[:12])))
    ranks = [np.linalg.matrix_rank(res.numeric.constraint_parts(ti, res.y[:, i])[1], tol=1e-8)
             for i, ti in enumerate(res.t)]
    residual, drift = float(np.max(res.constraint_residual)), res.relative_energy_drift()
    moved = float(np.max(np.abs(res.y - res.y[:, :1])))
    print(f"Bricard {T_BRICARD:g} s: max error {err:.1e} (motion {moved:.2f} m), residual {residual:.1e}, "
          f"drift {drift:.1e}, {res.stats['steps']} steps, rank {min(ranks)}..{max(ranks)}")
    assert set(ranks) == {11}
    assert moved > 0.5
    assert err < 1e-8
    assert residual < 1e-10
    assert drift < 1e-8


# ---------------------------------------------------------------- flyball governor
T_FLYBALL = 1.0


@pytest.mark.slow
def test_flyball_governor_stiff_against_first_kind():
    """Seed 003 sec. 6.2 with method='stiff' (the engine's Radau IIA), 1 s: at rtol 1e-6 in at
    most 200 steps (RKSTAB would be limited by the stiffness), at rtol 1e-10 within 1e-7 of the
    reference (scipy's Radau at rtol 1e-12 on the first-kind equations); angular momentum about
    the shaft conserved to 1e-8 (relative), residual <= 1e-10."""
    path = MODELS / "flyball_governor.py"
    coarse = mbsfmu.simulate(path, T_FLYBALL, 0.01, method="stiff", rtol=1e-6)
    res = mbsfmu.simulate(path, T_FLYBALL, 0.01, method="stiff", rtol=1e-10)
    ref, spin_momentum = flyball_reference()
    x0 = np.concatenate([res.y[:, 0], res.yd[:, 0]])
    sol = solve_ivp(ref.rhs, (0.0, T_FLYBALL), x0, method="Radau", rtol=1e-12, atol=1e-12, t_eval=res.t)
    assert sol.success, sol.message
    err = float(np.max(np.abs(res.y - sol.y[:6])))
    err_coarse = float(np.max(np.abs(coarse.y - sol.y[:6])))
    Lz = spin_momentum(np.vstack([res.y, res.yd]))
    Lz_ref = spin_momentum(sol.y)
    drift_L = float(np.max(np.abs(Lz - Lz[0])) / abs(Lz[0]))
    residual = float(np.max(res.constraint_residual))
    print(f"flyball {T_FLYBALL:g} s, Radau IIA: rtol 1e-6 {coarse.stats['steps']} steps "
          f"({coarse.stats['nreject']} rejected, error {err_coarse:.1e}); rtol 1e-10 {res.stats['steps']} "
          f"steps, error {err:.1e}, L_z drift {drift_L:.1e} "
          f"(reference {np.ptp(Lz_ref) / abs(Lz_ref[0]):.1e}), "
          f"residual {residual:.1e}, E_z {res['E_z'][-1]:.4f} m")
    assert coarse.stats["method"] == "stiff"
    assert coarse.stats["steps"] <= 200
    assert res.stats["steps"] <= 1000
    assert err_coarse < 1e-3
    assert err < 1e-7
    assert drift_L < 1e-8
    assert residual < 1e-10
    # the model's own output of L_z is the same quantity
    out = np.array([res.numeric.expression_outputs(ti, res.y[:, i], res.yd[:, i])[0]
                    for i, ti in enumerate(res.t)])
    assert np.max(np.abs(out - Lz)) < 1e-10 * abs(Lz[0])
    assert math.isfinite(res["E_z"][-1])


@pytest.fixture(scope="module")
def five_link():
    return mbsfmu.load_model(MODELS / "five_link_natural.py")


@pytest.mark.slow
def test_five_link_structure(five_link):
    """12 coordinates (G, H, B_T, W), the seed's 10 constraints, independent at the start (rank 10
    of the constraint Jacobian): DoF 2."""
    s = five_link
    num = derive(s).numeric()
    y0 = np.array([c.initial for c in s.coordinates_.values()])
    c, C, _ = num.constraint_parts(0.0, y0)
    assert len(s.y) == 12 and C.shape == (10, 12)
    assert np.linalg.matrix_rank(C) == 10
    assert np.max(np.abs(c)) < 1e-12  # the chosen start satisfies every constraint


@pytest.mark.slow
def test_five_link_tire_spin_and_energy(five_link):
    """Over 0.2 s at rtol 1e-10 (engine, qr) the tire keeps its spin of 100 rad/s to 1e-7 while
    the carrier moves under the road, the springs and gravity; without damper and road motion
    (c_p = 0, R_amp = 0) the energy is conserved to 1e-8 (relative)."""
    res = mbsfmu.simulate(five_link, 0.2, 0.005, rtol=1e-10, backend="c")
    quiet = mbsfmu.simulate(five_link, 0.2, 0.005, rtol=1e-10, backend="c", params={"c_p": 0.0, "R_amp": 0.0})
    spin = float(np.max(np.abs(res["tire_spin"] - 100.0)))
    travel = float(np.ptp(res["B_T.z"]))
    print(f"five-link: spin error {spin:.1e}, carrier travel {travel * 1e3:.2f} mm, camber "
          f"{res['camber'].min():.3f}..{res['camber'].max():.3f} deg, drift without damper "
          f"{quiet.relative_energy_drift():.1e}, residual {np.max(res.constraint_residual):.1e}")
    assert travel > 1e-4
    assert spin < 1e-7
    assert quiet.relative_energy_drift() < 1e-8
    assert np.max(res.constraint_residual) < 1e-10


@pytest.mark.parametrize("name", ["copy_machine", "bricard", "flyball_governor", "five_link_natural"])
def test_seed003_models_state_their_choices(name):
    """Every zoo model's docstring cites the seed section and lists its choices."""
    text = (MODELS / f"{name}.py").read_text()
    assert "seed 003 sec." in text and "Choices" in text
