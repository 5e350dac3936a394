"""Kinematic loops: four-bar energy and residuals, redundant constraints, bad input."""

import warnings

import numpy as np
import pytest

import mbsfmu
from mbsfmu import ConstraintError, ModelError, ParameterError, System, rot_z
from mbsfmu.core.errors import InconsistentInitialValuesWarning
from models import four_bar


@pytest.mark.parametrize("formulation", ["qr", "projection", "partition"])
def test_four_bar_energy_and_residual(formulation):
    res = mbsfmu.simulate(four_bar.model(), t_end=10.0, dt=0.05, rtol=1e-10,
                          formulation=formulation, fixed=["phi1"])
    assert np.ptp(res["phi1"]) > 3.0  # large motion through the near-singular range
    assert res.relative_energy_drift() <= 1e-8
    assert res.constraint_residual.max() <= 1e-10


def test_four_bar_formulations_agree():
    kw = dict(t_end=3.0, dt=0.5, rtol=1e-11, fixed=["phi1"])
    ref = mbsfmu.simulate(four_bar.model(), formulation="projection", **kw)
    for form in ("qr", "svd", "partition"):
        res = mbsfmu.simulate(four_bar.model(), formulation=form, **kw)
        assert np.max(np.abs(res.y - ref.y)) < 1e-7, form


def test_redundant_closure_in_3d():
    """A planar four-bar closed in x, y and z: rank(C) = 2 < 3 constraints.  QR and SVD take it
    (and give the planar result); the other formulations say the constraints are redundant."""
    kw = dict(t_end=2.0, dt=0.5, rtol=1e-10, fixed=["phi1"])
    planar = mbsfmu.simulate(four_bar.model(), formulation="qr", **kw)
    for form in ("qr", "svd"):
        res = mbsfmu.simulate(four_bar.model("3d"), formulation=form, **kw)
        assert res.stats["rank"] == 2  # the engine's statistic
        assert np.max(np.abs(res.y - planar.y)) < 1e-8
        assert res.constraint_residual.max() < 1e-12
        # the reactions are not unique; the minimum-norm multipliers carry no z force and
        # the planar ones are those of the planar closure
        lam = res.multipliers()
        np.testing.assert_allclose(lam["joint_C.z"], 0, atol=1e-9)
        np.testing.assert_allclose(lam["joint_C.x"], planar.multipliers()["joint_C.x"], atol=1e-6)
    for form in ("dae", "baumgarte", "projection", "partition"):
        with pytest.raises(ConstraintError, match=r"3 constraints are redundant \(rank of C is 2"):
            mbsfmu.simulate(four_bar.model("3d"), formulation=form, **kw)


def test_given_values_that_move_are_warned_about():
    with pytest.warns(InconsistentInitialValuesWarning, match=r"phi1: 1\.1 -> "):
        res = mbsfmu.simulate(four_bar.model(), t_end=0.1, initial={"phi1": 1.1, "phi2": 0.8,
                                                                      "phi3": 1.9})
    assert res.constraint_residual.max() < 1e-12
    # the same values with phi1 held fixed: only phi2, phi3 move
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = mbsfmu.simulate(four_bar.model(), t_end=0.1, initial={"phi1": 1.1}, fixed=["phi1"])
    assert res["phi1"][0] == 1.1
    assert not [w for w in rec if issubclass(w.category, InconsistentInitialValuesWarning)]


def test_unsatisfiable_constraints_are_named():
    """Coupler plus rocker too short to reach across the ground link: no assembly exists."""
    with pytest.raises(ConstraintError, match=r"no consistent initial state: 'joint_C\.[xy]' stays"):
        mbsfmu.simulate(four_bar.model(), t_end=1.0, params={"b": 0.01, "c": 0.01})


def test_unrepairable_initial_values_with_fixed_coordinates():
    """Crank angle held at a value the loop cannot reach (for a crank longer than the rest)."""
    with pytest.raises(ConstraintError, match=r"fixed: \['phi1'\]"):
        mbsfmu.simulate(four_bar.model(), t_end=1.0, params={"a": 1.5}, fixed=["phi1"])


def test_singular_configuration_fails_clearly_for_partition():
    """A point on a circle of radius 0 at the centre: C = 0, no partition exists."""
    s = System("degenerate")
    x, y = s.coordinates("x", "y")
    s.body("P", rel_pos=[x, y, 0], mass=1, inertia=[1, 1, 1])
    s.constraint("circle", x**2 + y**2)
    with pytest.raises(ConstraintError, match=r"rank"):
        mbsfmu.simulate(s, t_end=1.0, formulation="partition")


def test_bad_formulation_arguments():
    with pytest.raises(ParameterError, match=r"unknown formulation 'magic'"):
        mbsfmu.simulate(four_bar.model(), t_end=1.0, formulation="magic")
    with pytest.raises(ParameterError, match=r"unknown independent coordinate\(s\) \['q'\]"):
        mbsfmu.simulate(four_bar.model(), t_end=1.0, formulation="partition",
                        formulation_options={"independent": ["q"]})
    with pytest.raises(ParameterError, match=r"leave 1 independent coordinates, got 2"):
        mbsfmu.simulate(four_bar.model(), t_end=1.0, formulation="partition",
                        formulation_options={"independent": ["phi1", "phi2"]})
    with pytest.raises(ParameterError, match=r"'qr' has no option 'alpha' \(its options: rank_tol"):
        mbsfmu.simulate(four_bar.model(), t_end=1.0, formulation="qr",
                        formulation_options={"alpha": 1})
    with pytest.raises(ParameterError, match=r"cannot be combined with constraints"):
        mbsfmu.simulate(four_bar.model(), t_end=1.0, method="BDF")


def test_bad_loop_definitions():
    s = System("bad")
    q, = s.coordinates("q")
    s.body("A", rel_rot=rot_z(q), mass=1, inertia=[1, 1, 1])
    with pytest.raises(ModelError, match=r"loop 'L': translations must be distinct axes"):
        s.loop("L", "A", "ISYS", translations="xw")
    with pytest.raises(ModelError, match=r"loop 'L': unknown reference frame 'B'"):
        s.loop("L", "A", "B")
    with pytest.raises(ModelError, match=r"loop 'L': no translational or rotational direction"):
        s.loop("L", "A", "ISYS", translations="")
    with pytest.raises(ModelError, match=r"constraint 'c': .* does not depend on any coordinate"):
        s.constraint("c", "1 + 0*t")
    with pytest.raises(ModelError, match=r"constraint 'c'.*not on \['Dq'\]"):
        s.constraint("c", "q*Dq")
    assert s.loops == [] and s.holonomic == []


def test_rotational_loop_reaction_torque_balances_the_applied_torque():
    """Two bars on the z axis locked together by a rotational loop condition; a torque T on
    bar B only.  Both accelerate together with (J_A + J_B) w' = T, and the loop carries the
    torque J_A w' from B to A, i.e. the reaction on B is -J_A w' about z."""
    s = System("locked")
    a, b = s.coordinates("a", "b")
    JA, JB, T = 0.3, 0.7, 2.0
    s.body("A", rel_rot=rot_z(a), mass=1, inertia=[JA, JA, JA])
    s.body("B", rel_rot=rot_z(b), mass=1, inertia=[JB, JB, JB])
    s.torque("drive", "B", [0, 0, T])
    s.loop("lock", "A", "B", translations="", rotations="z")
    s.initial(a=0.2, b=0.2)
    res = mbsfmu.simulate(s, t_end=1.0, dt=0.25, rtol=1e-10)
    wd = T / (JA + JB)
    np.testing.assert_allclose(res.ydd, wd, atol=1e-9)
    tq = res.reactions()["lock"]["torque"]
    np.testing.assert_allclose(tq[:, 2], -JA * wd, atol=1e-9)
    np.testing.assert_allclose(tq[:, :2], 0, atol=1e-12)
