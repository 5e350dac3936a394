"""The slider-crank of seed 000 §5 against an independent one-degree-of-freedom formulation.

Reference: with the crank angle theta as the only coordinate, the pin is P = r (cos, sin)(theta),
the slider x = r cos theta + sqrt(l^2 - r^2 sin^2 theta), the rod's cg lies midway between P and
the slider, the rod angle is atan2(P_y, P_x - x).  The kinetic energy is T = m(theta) theta'^2 / 2
and is conserved (no gravity in the plane, no friction), so theta' = sqrt(2 T0 / m(theta)).
m(theta) is built here with sympy from these formulas, independently of mbsfmu.
"""

import math

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

import mbsfmu
from models import slider_crank

R, L, MC, MR, MS = 0.15, 0.5, 0.3, 0.5, 1.0
THETA0, OMEGA0 = math.pi / 4, 2 * math.pi


def one_dof_reference(t_eval):
    th = sp.Symbol("th")
    px, py = R * sp.cos(th), R * sp.sin(th)
    x = px + sp.sqrt(L**2 - py**2)
    rod = sp.atan2(py, px - x)
    gx, gy = (px + x) / 2, py / 2
    dx, dgx, dgy, drod = (sp.diff(e, th) for e in (x, gx, gy, rod))
    # T = m(th) th'^2 / 2
    m = (MS * dx**2 + MR * (dgx**2 + dgy**2) + MR * L**2 / 12 * drod**2
         + (MC * R**2 / 12 + MC * (R / 2) ** 2))
    m_f = sp.lambdify(th, m, "math")
    x_f = sp.lambdify(th, x, "math")
    T0 = 0.5 * m_f(THETA0) * OMEGA0**2
    sol = solve_ivp(lambda t, z: [math.sqrt(2 * T0 / m_f(z[0]))], (0, t_eval[-1]), [THETA0],
                    t_eval=t_eval, rtol=1e-13, atol=1e-14, method="DOP853")
    return sol.y[0], np.array([x_f(v) for v in sol.y[0]])


@pytest.fixture(scope="module")
def reference():
    t = np.linspace(0, 10, 11)
    return t, *one_dof_reference(t)


def test_consistent_initial_state():
    res = mbsfmu.simulate(slider_crank.model(), t_end=0.01, dt=0.01, rtol=1e-10)
    pin = res.frame("rod_end")
    np.testing.assert_allclose(pin["position"][0, :2], [R * math.cos(THETA0), R * math.sin(THETA0)],
                               atol=1e-13)
    # the crank turns about the fixed pivot at 2 pi rad/s
    assert abs(res.frame("crank")["angular_velocity"][0, 2] - OMEGA0) < 1e-12
    np.testing.assert_allclose(res.frame("crank_end")["velocity"][0], 0, atol=1e-13)


@pytest.mark.parametrize("formulation", ["qr", "svd", "projection", "partition"])
def test_slider_position_matches_one_dof_reference(formulation, reference):
    t, theta, x_ref = reference
    res = mbsfmu.simulate(slider_crank.model(), t_end=10.0, dt=1.0, rtol=1e-10,
                          formulation=formulation)
    assert np.max(np.abs(res["x"] - x_ref)) < 1e-7
    assert np.max(res.constraint_residual) <= 1e-10
    assert res.relative_energy_drift() <= 1e-8


@pytest.mark.parametrize("backend", ["c", "numpy"])
def test_stiff_method_with_projection(reference, backend):
    """The stiff method (the engine's Radau IIA, or scipy's Radau on the reference) with the
    PStab projection against the one-degree-of-freedom reference."""
    t, theta, x_ref = reference
    res = mbsfmu.simulate(slider_crank.model(), t_end=2.0, dt=1.0, rtol=1e-10, method="stiff",
                          formulation="projection", backend=backend)
    assert res.stats["method"] == "stiff" and res.stats["backend"] == backend
    assert np.max(np.abs(res["x"] - x_ref[:3])) < 1e-7
    assert np.max(res.constraint_residual) <= 1e-10


def test_dae_drifts_and_stabilizations_do_not():
    """Seed 000 Fig. 3: the unstabilized DAE's position residual grows; Baumgarte bounds it;
    projection-based formulations keep it at round-off."""
    kw = dict(t_end=40.0, dt=0.5, rtol=1e-6)
    dae = mbsfmu.simulate(slider_crank.model(), formulation="dae", **kw).constraint_residual
    bg = mbsfmu.simulate(slider_crank.model(), formulation="baumgarte", **kw).constraint_residual
    qr = mbsfmu.simulate(slider_crank.model(), formulation="qr", **kw).constraint_residual
    assert dae[-1] > 1e-5 and dae[-1] > 20 * dae[len(dae) // 8]  # grows over time
    assert bg.max() < dae[-1] / 10
    assert qr.max() < 1e-12


def test_partition_switches_at_dead_centre(reference):
    """With x independent, C_d is singular whenever crank and rod are aligned (dead centre):
    the partition switches before the first one and the result stays right."""
    t, theta, x_ref = reference
    res = mbsfmu.simulate(slider_crank.model(), t_end=10.0, dt=0.01, rtol=1e-10,
                          formulation="partition", formulation_options={"independent": ["x"]})
    switches = res.stats["partition_switches"]
    assert switches and switches[0][1] != ["x"]
    t_switch = switches[0][0]
    i = int(round(t_switch / 0.01))
    crank = (res["alpha"][i] + res["beta"][i] - math.pi) % (2 * math.pi)
    assert abs(crank - math.pi) < 0.3  # the first dead centre (crank pointing along -x)
    assert np.max(np.abs(res["x"][::100] - x_ref)) < 1e-7


def test_pivot_reaction_is_total_momentum_change():
    """The x reaction at the pivot equals sum m_i a_cg,i,x (the rail carries no x force)."""
    res = mbsfmu.simulate(slider_crank.model(), t_end=1.0, dt=0.05, rtol=1e-10)
    lam = res.multipliers()
    total = sum(m * res.frame(b)["acceleration"][:, 0]
                for b, m in (("slider_cg", MS), ("rod_cg", MR), ("crank_cg", MC)))
    np.testing.assert_allclose(lam["pivot.x"], total, rtol=1e-9, atol=1e-9)
    assert np.ptp(lam["pivot.x"]) > 1.0
    F = res.reactions()["pivot"]["force"]
    np.testing.assert_allclose(F[:, 0], lam["pivot.x"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(F[:, 1], lam["pivot.y"], rtol=0, atol=1e-12)
    assert np.all(F[:, 2] == 0) and np.all(res.reactions()["pivot"]["torque"] == 0)
