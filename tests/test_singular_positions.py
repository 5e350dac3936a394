"""Singular positions (issue 12, item 3): mechanisms whose constraint Jacobian C loses rank
along the motion, against independent references.

* The parallelogram N four-bar of seed 003 sec. 5.1 (models/four_bar_natural.py; rods 1 m /
  1 kg): all cranks keep one angle phi, A_j = (j + cos phi, sin phi), so it reduces to
  J phi'' = -K cos phi.  Per crank (a rod pinned at one end) T = m l^2 phi'^2 / 6 and
  V = m g l sin phi / 2; per coupler (translating) T = m l^2 phi'^2 / 2, V = m g l sin phi; so
  with N + 1 cranks and N couplers J = (N + 1) m l^2 / 3 + N m l^2 and
  K = ((N + 1) / 2 + N) m g l = (3N + 1) m g l / 2.  At phi = 0 and pi (all rods on one line)
  the rank of C drops from 2N + 1 to N + 1: the flat positions, 10 of them in 10 s.
* The singular slider-crank of seed 004 sec. 4.5 (digest P10): unit point masses at the crank
  tip and at the slider, equal crank and rod (1 m), absolute angles th1, th2 from the upward
  vertical, g = 9.8, constraint g = -cos th1 - cos th2 with G = (sin th1, sin th2), which
  vanishes at (0, pi) and (pi, 0).  The seed's initial values are not given ([74]); ours:
  th1 = th2 = pi/2 (crank horizontal) with th1' = -5, th2' = 5, enough to turn the crank over.
  Reference: the seed's reformulation (Remark 4.4) with the linear constraint
  th1 + th2 = pi, integrated here with scipy on the 2 x 2 saddle-point system (no
  singularity there).

State (rtol 1e-10, RKSTAB, formulation 'qr'; issue 12 item 3).  Near a rank drop c is known
only to its rounding eps along the weak constraint directions (pivot p of the column-pivoted QR of
C^T), so the projection fixes positions there only to eps / p and velocities to eps / p^2, and the
vector field of the index-1 formulation off the branch is off by the same amounts; counted in
RKSTAB's error this made the steps shrink towards the singular time (underflow) or a pass land on
another branch.  Now (OptimalPartitioning.weak_directions, mbs_form_weak, the step placement of
RKSTAB): the share of the projection's correction along weak directions (pivot < 0.03 of the
scale) is not counted, the projection takes one more Gauss-Newton step there, and the steps are
placed so that the singular time predicted from the pivots falls 0.55 into a step, away from
every stage.  The constraints of natural-coordinate elements are kept as written, not expanded
into polynomials (LagrangianSystem._rigidity): expanded, the N = 10 four-bar's rod lengths carried
rounding of ~3e-14 (coordinates up to 11), which put the noise above the tolerance over a wider
band than a step spans there.  Now the slider-crank passes on both backends and the N = 2 and
N = 10 four-bars with the default formulation and method, 1 370 to 1 392 steps without a rejected
one, errors 6.6e-8 to 6.7e-8 (the method's global error over 10 s).
"""

import math

import numpy as np
import pytest
import sympy as sp
from fmu_support import MODELS
from scipy.integrate import solve_ivp

import mbsfmu
from mbsfmu import System, derive, rot_z

FOUR_BAR = MODELS / "four_bar_natural.py"
RTOL = 1e-10


def parallelogram_angle(t, N, m=1.0, l=1.0, g=9.81, v0=1.0):
    """phi(t) of J phi'' = -K cos phi (module docstring), phi(0) = pi/2, phi'(0) = -v0 / l."""
    J = (N + 1) * m * l**2 / 3 + N * m * l**2
    K = (3 * N + 1) * m * g * l / 2
    sol = solve_ivp(lambda _, x: [x[1], -K / J * math.cos(x[0])], (0.0, float(t[-1])),
                    [math.pi / 2, -v0 / l], method="DOP853", rtol=1e-13, atol=1e-13, t_eval=t)
    return sol.y[0]


def four_bar_error(res, N):
    """Largest deviation of any A_j from the parallelogram solution, and the flat passes."""
    phi = parallelogram_angle(res.t, N)
    err = max(max(float(np.max(np.abs(res[f"A{j}_x"] - (j + np.cos(phi))))),
                  float(np.max(np.abs(res[f"A{j}_y"] - np.sin(phi))))) for j in range(N + 1))
    return err, int(np.sum(np.diff(np.sign(np.sin(phi))) != 0))


def singular_slider_crank(omega: float = -5.0) -> System:
    """Seed 004 P10 (module docstring): M = [[2, cos(th2 - th1)], [cos(th2 - th1), 1]]."""
    s = System("singular_slider_crank", "Slider-crank with equal crank and rod (seed 004 sec. 4.5)")
    (g,) = s.constants(g=9.8)
    th1, th2 = s.coordinates("th1", "th2")
    s.gravity([0, -g, 0])
    s.body("crank", rel_rot=rot_z(th1), cg_pos=[0, 1, 0], mass=1.0, inertia=[0, 0, 0])
    s.frame("tip", ref="crank", pos=[0, 1, 0])
    s.body("rod", ref="tip", rel_rot=rot_z(th2 - th1), cg_pos=[0, 1, 0], mass=1.0, inertia=[0, 0, 0])
    s.constraint("guide", -sp.cos(th1) - sp.cos(th2))  # seed eq. 4.27
    s.initial(th1=math.pi / 2, th2=math.pi / 2)
    s.coordinates_["th1"].initial_velocity = omega
    s.coordinates_["th2"].initial_velocity = -omega
    return s


def slider_crank_reference(t, omega=-5.0, g=9.8):
    """(th1, th2) at t from the reformulation th1 + th2 = pi (seed Remark 4.4): the saddle-point
    system [[M, G^T], [G, 0]] [th''; lambda] = [f; 0] with G = (1, 1), f the seed's right-hand
    side of P10 (velocity terms from the Lagrangian of the unit double pendulum)."""
    def rhs(_, x):
        a, b, da, db = x
        d = b - a
        M = np.array([[2.0, math.cos(d)], [math.cos(d), 1.0]])
        f = np.array([math.sin(d) * db**2 + 2 * g * math.sin(a), -math.sin(d) * da**2 + g * math.sin(b)])
        K = np.block([[M, np.ones((2, 1))], [np.ones((1, 2)), np.zeros((1, 1))]])
        acc = np.linalg.solve(K, np.concatenate((f, [0.0])))[:2]
        return [da, db, acc[0], acc[1]]
    sol = solve_ivp(rhs, (0.0, float(t[-1])), [math.pi / 2, math.pi / 2, omega, -omega], method="DOP853",
                    rtol=1e-13, atol=1e-13, t_eval=t)
    return sol.y[0], sol.y[1]


def test_slider_crank_reference_is_on_the_seed_constraint():
    """The reference keeps the seed's nonlinear constraint to 1e-12 and turns the crank over
    through at least 4 singular positions (sin th1 = 0) in 10 s."""
    t = np.linspace(0.0, 10.0, 2001)
    a, b = slider_crank_reference(t)
    assert np.max(np.abs(np.cos(a) + np.cos(b))) < 1e-12
    assert int(np.sum(np.diff(np.floor(a / math.pi)) != 0)) >= 4


def test_slider_crank_model_matches_the_seed_equations():
    """The System's M and the generalized forces are the seed's P10 (velocity terms as derived
    from the Lagrangian), checked at a random state."""
    s = singular_slider_crank()
    num = derive(s).numeric()
    rng = np.random.default_rng(3)
    y, yd = rng.uniform(-3, 3, 2), rng.uniform(-3, 3, 2)
    M, h, _, C, _, _ = num.constrained_parts(0.0, y, yd, num.u)
    d = y[1] - y[0]
    assert np.allclose(M, [[2.0, math.cos(d)], [math.cos(d), 1.0]], atol=1e-12)
    f = [math.sin(d) * yd[1]**2 + 19.6 * math.sin(y[0]), -math.sin(d) * yd[0]**2 + 9.8 * math.sin(y[1])]
    assert np.allclose(h, f, atol=1e-12)
    assert np.allclose(C, [[math.sin(y[0]), math.sin(y[1])]], atol=1e-12)


def test_slider_crank_passes_with_pstab():
    """The seed's statement (sec. 4.5, Fig. 4.32): PStab (formulation 'projection') runs
    through the singular positions at tol 1e-10 over 10 s; here within 1e-7 of the
    reformulated reference, residual <= 1e-10."""
    res = mbsfmu.simulate(singular_slider_crank(), 10.0, 0.01, rtol=RTOL, formulation="projection",
                          backend="c")
    a, b = slider_crank_reference(res.t)
    err = max(float(np.max(np.abs(res["th1"] - a))), float(np.max(np.abs(res["th2"] - b))))
    print(f"slider-crank projection: err {err:.2e}, residual {np.max(res.constraint_residual):.1e}, "
          f"{res.stats['naccept']} steps, {res.stats['nreject']} rejected")
    assert err < 1e-7
    assert np.max(res.constraint_residual) <= 1e-10


@pytest.mark.parametrize("N, backend", [(2, "numpy"), (2, "c"), (10, "c")])
def test_four_bar_qr_through_flat_positions(N, backend):
    """The default formulation and method at rtol 1e-10 through the flat positions: within 1e-7
    of the 1-DOF solution, residual <= 1e-10, energy drift <= 1e-8."""
    res = mbsfmu.simulate(mbsfmu.load_model(FOUR_BAR, N=N), 10.0, 0.01, rtol=RTOL, backend=backend)
    err, passes = four_bar_error(res, N)
    print(f"four-bar N={N} {backend}: err {err:.2e}, residual {np.max(res.constraint_residual):.1e}, "
          f"{res.stats.get('naccept')} steps, {res.stats.get('nreject')} rejected")
    assert passes >= 10
    assert err < 1e-7
    assert np.max(res.constraint_residual) <= 1e-10
    assert res.relative_energy_drift() <= 1e-8


@pytest.mark.parametrize("backend", ["c", "numpy"])
def test_slider_crank_qr_through_singular_positions(backend):
    """The default formulation and method at rtol 1e-10 within 1e-7 of the reference (4
    singular positions in 10 s), residual <= 1e-10."""
    res = mbsfmu.simulate(singular_slider_crank(), 10.0, 0.01, rtol=RTOL, backend=backend)
    a, b = slider_crank_reference(res.t)
    err = max(float(np.max(np.abs(res["th1"] - a))), float(np.max(np.abs(res["th2"] - b))))
    print(f"slider-crank qr {backend}: err {err:.2e}, residual {np.max(res.constraint_residual):.1e}, "
          f"{res.stats.get('naccept')} steps, {res.stats.get('nreject')} rejected")
    assert err < 1e-7
    assert np.max(res.constraint_residual) <= 1e-10


@pytest.mark.parametrize("backend", ["c", "numpy"])
def test_a_formulation_that_cannot_pass_says_so_quickly(backend):
    """Coordinate partitioning cannot pass the singular slider-crank: at th1 = 0 its one
    constraint row G = (sin th1, sin th2) vanishes, so no coordinate can be dependent.  The run
    stops at the first singular time of the reference, within a bounded number of evaluations,
    and the message names the singular position, the time and the constraint row."""
    t = np.linspace(0.0, 3.0, 30001)
    th1 = np.unwrap(slider_crank_reference(t)[0])
    t_sing = float(t[np.argmax(np.diff(np.sign(np.sin(th1))) != 0)])  # first th1 = 0 (mod pi)
    with pytest.raises(mbsfmu.SimulationError) as info:
        mbsfmu.simulate(singular_slider_crank(), t_end=3.0, dt=0.01, rtol=RTOL, formulation="partition",
                        backend=backend)
    msg = str(info.value)
    assert "nearly singular" in msg and "row 'guide'" in msg and "singular position" in msg, msg
    t_fail = float(msg.split("the constraint Jacobian")[0].rsplit("at t=", 1)[1].strip())
    assert abs(t_fail - t_sing) < 2e-4, (t_fail, t_sing)
    partial = info.value.result
    assert partial is not None and partial.t[-1] <= t_sing
    if backend == "c":  # the engine counts its evaluations up to the failure
        assert partial.stats["nfev"] < 20_000, partial.stats


def test_native_fmu_reports_the_singular_position(tmp_path):
    """The same failure in a native FMU is fmi2Error with the message logged."""
    from fmpy.fmi1 import FMICallException
    from fmu_support import Slave

    from mbsfmu.fmu.native import build_native_fmu

    fmu = build_native_fmu(singular_slider_crank(), tmp_path / "sc.fmu", formulation="partition")
    s = Slave(fmu, tmp_path)
    s.instantiate(logging_on=True)
    s.start({"solver_rtol": RTOL, "solver_atol": RTOL / 10})
    with pytest.raises(FMICallException):
        for k in range(300):
            s.fmu.doStep(k * 0.01, 0.01)
    assert any("nearly singular" in m and "row 'guide'" in m for m in s.errors()), s.errors()
    s.free()


def test_native_fmu_passes_the_flat_positions(tmp_path):
    """The N = 2 four-bar as a native FMU (default formulation and method, rtol 1e-10), driven by
    fmpy over 10 s at 0.01 s communication steps: within 1e-7 of the 1-DOF solution through the
    ten flat positions (the issue's run stopped at t = 7.05 s with too many steps)."""
    import fmpy

    from mbsfmu.fmu.native import build_native_fmu

    fmu = build_native_fmu(mbsfmu.load_model(FOUR_BAR, N=2), tmp_path / "four_bar.fmu")
    r = fmpy.simulate_fmu(str(fmu), stop_time=10.0, output_interval=0.01,
                          start_values={"solver_rtol": RTOL, "solver_atol": RTOL / 10})
    phi = parallelogram_angle(r["time"], 2)
    err = max(float(np.max(np.abs(r[f"A{j}_x"] - (j + np.cos(phi))))) for j in range(3))
    err = max(err, *(float(np.max(np.abs(r[f"A{j}_y"] - np.sin(phi)))) for j in range(3)))
    assert int(np.sum(np.diff(np.sign(np.sin(phi))) != 0)) >= 10
    assert err < 1e-7, err
    assert float(np.max(r["constraint_residual"])) <= 1e-10


@pytest.mark.parametrize("case", ["four_bar N=2", "four_bar N=10", "slider_crank"])
def test_dop853_passes_where_rkstab_passes(case):
    """method='DOP853' at rtol 1e-10 through the singular positions at output steps 0.001, 0.01
    and 0.1 (the engine's DOP853 crosses each predicted singular time with RKSTAB steps,
    mbs_dop853.h): within 1e-7 of the reference, as RKSTAB.  Before, DOP853 stopped with a step
    size underflow in 6 of these 9 runs and the models' others (issue 23: the N = 10 four-bar
    at t = 1.24, the singular slider-crank of models/ at t = 1.72)."""
    if case == "slider_crank":
        system, T = mbsfmu.load_model(MODELS / "singular_slider_crank.py"), 3.0
    else:
        N = int(case.split("=")[1])
        system, T = mbsfmu.load_model(FOUR_BAR, N=N), 10.0
    for dt in (0.001, 0.01, 0.1):
        res = mbsfmu.simulate(system, T, dt, rtol=RTOL, method="dop853", backend="c")
        if case == "slider_crank":
            a, b = slider_crank_reference(res.t, omega=5.0)
            err = max(float(np.max(np.abs(res["theta1"] - a))), float(np.max(np.abs(res["theta2"] - b))))
        else:
            err, passes = four_bar_error(res, N)
            assert passes >= 10
        print(f"{case} DOP853 dt {dt:g}: err {err:.2e}, {res.stats['naccept']} steps")
        assert err < 1e-7, (dt, err)
        assert np.max(res.constraint_residual) <= 1e-10


def test_dop853_state_saved_during_a_crossing_continues_bit_for_bit(tmp_path):
    """A native FMU with method = dop853 (the N = 2 four-bar, rtol 1e-10): its state serialized
    at t = 1.22, while RKSTAB crosses the flat position at t = 1.228, and restored in a second
    instance continues as the first one, bit for bit (the crossing's work array and hook are
    re-pointed on restore)."""
    from fmu_support import Slave

    from mbsfmu.fmu.native import build_native_fmu

    fmu = build_native_fmu(mbsfmu.load_model(FOUR_BAR, N=2), tmp_path / "fb.fmu", method="dop853")
    a = Slave(fmu, tmp_path, "a")
    a.start({"solver_rtol": RTOL, "solver_atol": 0.0})
    a.run(0.0, 122, 0.01)
    blob = a.fmu.serializeFMUstate(a.fmu.getFMUstate())
    first = a.run(1.22, 30, 0.01)
    b = Slave(fmu, tmp_path, "b")
    b.start({"solver_rtol": RTOL, "solver_atol": 0.0})
    restored = b.fmu.deSerializeFMUstate(blob)
    b.fmu.setFMUstate(restored)
    b.fmu.freeFMUstate(restored)
    assert np.array_equal(b.run(1.22, 30, 0.01), first)
    a.free()
    b.free()
