"""What an engine run's Result offers comes from the engine (issue 24 item 2): at every output
point the C engine records the Lagrange multipliers (seed 000 eq. 3), the accelerations y'' and the
constraint residuals on the position and velocity level (mbs_inst_run's MBS_RECORD_* flags), and
``Result.multipliers()``, ``.ydd``, ``.constraint_residual`` and ``.constraint_residuals()`` of a run
on backend 'c' read those.

Checked against the Python reference at the engine's own states (the reference's
``Formulation.multipliers``, its ``rhs`` and ``NumericModel.constraint_parts``, which a run on the
engine no longer calls): on the zoo's slider-crank (every formulation), four-bar, Andrews' squeezer,
copy machine, natural slider-crank, rolling disc (nonholonomic) and double pendulum (a tree), over
0.5 s at rtol 1e-10, the multipliers and accelerations agree within 1e-12 relative to their largest
value (measured: at most 4e-15), the residuals within 1e-14 (measured: at most 3e-15).  And
independently of both: a point mass on a rod (the circle x^2 + y^2 = l^2) carries the closed-form
rod force m (g cos(theta) + l theta'^2) and accelerates as theta'' = -(g / l) sin(theta).
"""

import math
import warnings

import numpy as np
import pytest
from zoo_cases import CASES

import mbsfmu
from mbsfmu import System
from mbsfmu.engine.extension import Engine
from mbsfmu.reference.formulations import make_formulation
from mbsfmu.simulation.result import Result

RTOL = 1e-10
T_END = 0.5
ZOO = {c.label: c for c in CASES}
RUNS = [("slider_crank", form) for form in ("qr", "svd", "baumgarte", "dae", "projection", "partition")] + [
    (label, None) for label in ("four_bar", "andrews", "copy_machine", "slider_crank_natural", "rolling_disc",
                                "double_pendulum")]


def _engine_run(system, case, formulation):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mbsfmu.simulate(system, min(case.t_ci, T_END), case.dt, rtol=RTOL, backend="c",
                               formulation=formulation)


def _relative(got, want) -> float:
    return float(np.max(np.abs(got - want))) / max(1.0, float(np.max(np.abs(want))))


@pytest.mark.parametrize("label, formulation", RUNS, ids=[f"{lb}-{f or 'default'}" for lb, f in RUNS])
def test_the_engine_records_what_the_reference_computes(label, formulation):
    case = ZOO[label]
    res = _engine_run(case.load(), case, formulation)
    assert res.formulation is None and set(res.recorded) >= {"multipliers", "accelerations", "residuals"}
    num, f = res.numeric, res.numeric.f
    X = np.vstack((res.y, res.yd))
    if num.m:
        ref = make_formulation(formulation, num)
        lam = np.array([ref.multipliers(t, X[:, i]) for i, t in enumerate(res.t)]).T
        ydd = np.array([ref.rhs(t, X[:, i])[f:] for i, t in enumerate(res.t)]).T
        engine_lam = np.array([res.multipliers()[n] for n in res.system.constraint_names])
        assert np.max(np.abs(lam)) > 1e-3  # the mechanism carries loads
        assert _relative(engine_lam, lam) < 1e-12
    else:
        ydd = num.accelerations_series(res.t, res.y, res.yd)
        assert res.multipliers() == {}
    assert _relative(res.ydd, ydd) < 1e-12
    plain = Result(num, res.t, res.y, res.yd)  # the same states, everything computed in Python
    for level, values in res.constraint_residuals().items():
        assert np.max(np.abs(values - plain.constraint_residuals()[level])) < 1e-14, level
    assert np.max(np.abs(res.constraint_residual - plain.constraint_residual)) < 1e-14
    if num.m and formulation in (None, "qr", "svd", "projection", "partition"):  # projected every step
        assert np.max(res.constraint_residuals()["position"]) < 1e-12


def rod_pendulum(m=2.0, l=0.7, g=9.81):
    """A point mass at (x, y) in the vertical plane, held on the circle x^2 + y^2 = l^2."""
    s = System("rod_pendulum")
    mm, ll, gg = s.constants(m=m, l=l, g=g)
    x, y = s.coordinates("x", "y")
    s.gravity([0, -gg, 0])
    s.body("P", rel_pos=[x, y, 0], mass=mm, inertia=[1e-3, 1e-3, 1e-3])
    s.constraint("rod", x**2 + y**2 - ll**2)
    s.initial(x=l * math.sin(1.2), y=-l * math.cos(1.2))
    s.coordinates_["x"].initial_velocity = 0.5
    return s


@pytest.mark.parametrize("formulation", ["qr", "baumgarte", "partition"])
def test_rod_force_and_accelerations_of_a_pendulum_in_closed_form(formulation):
    """The reaction C^T lambda on the mass, along the rod: -m (g cos(theta) + l theta'^2) (tension,
    theta from the downward vertical); its acceleration l theta'' t - l theta'^2 r with
    theta'' = -(g / l) sin(theta) (r the unit vector from the pivot, t its tangent)."""
    m, l, g = 2.0, 0.7, 9.81
    res = mbsfmu.simulate(rod_pendulum(m, l, g), 2.0, 0.05, rtol=1e-10, backend="c", formulation=formulation)
    x, y = res.y
    xd, yd = res.yd
    theta = np.arctan2(x, -y)
    omega = (x * yd - y * xd) / l**2
    r = np.array([x, y]) / l
    t = np.array([-r[1], r[0]])
    lam = res.multipliers()["rod"]
    radial_force = 2 * lam * (x * r[0] + y * r[1])  # C^T lambda . r with C = [2x, 2y]
    tension = m * (g * np.cos(theta) + l * omega**2)
    assert np.ptp(theta) > 1.5 and np.min(tension) > 1.0  # swings through, the rod pulls
    np.testing.assert_allclose(radial_force, -tension, rtol=1e-7, atol=1e-7 * m * g)
    acc = -l * omega**2 * r + l * (-(g / l) * np.sin(theta)) * t
    np.testing.assert_allclose(res.ydd, acc, rtol=0, atol=1e-7 * g)


def test_the_engine_records_at_the_state_without_changing_the_run():
    """Recording (an evaluation of x' at each output point, which may choose a partition) leaves
    the run as it is: the states of a run that records equal those of one that does not, bit for
    bit, on the formulation whose evaluations have state."""
    system = ZOO["slider_crank"].load()
    grid = np.linspace(0.0, 2.0, 41)
    rows = []
    for record in ((), ("multipliers", "accelerations", "residuals")):
        eng = Engine(system, "partition")
        eng.set({"solver_rtol": 1e-8})
        eng.start()
        rec, reached, status, _, _ = eng.run(grid, record=record)
        assert status == 0 and reached == len(grid)
        rows.append((rec, eng.statistics()))
    (plain, stats), (recorded, stats_rec) = rows
    assert np.array_equal(plain, recorded[:, :plain.shape[1]])
    assert stats["naccept"] == stats_rec["naccept"] and stats["switches"] == stats_rec["switches"]
    parts = Engine(system, "partition").recorded(recorded, ("multipliers", "accelerations", "residuals"))
    assert [v.shape for v in parts.values()] == [(41, 2), (41, 3), (41, 2)]


def test_a_result_without_multipliers_says_so(tmp_path):
    """A Result read from a file holds the states only: asking it for multipliers is a clear error."""
    system = ZOO["slider_crank"].load()
    res = mbsfmu.simulate(system, 0.1, 0.05, backend="c")
    res.to_csv(tmp_path / "sc.csv")
    back = Result.read_csv(tmp_path / "sc.csv", system)
    np.testing.assert_allclose(back.constraint_residual, res.constraint_residual, atol=1e-15)
    with pytest.raises(mbsfmu.SimulationError, match=r"slider_crank: this result has no multipliers \(it "
                                                     r"holds only the states read from .*sc.csv\)"):
        back.multipliers()
