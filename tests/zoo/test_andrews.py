"""Andrews' squeezing mechanism (models/andrews.py) against the published equations and solution.

The independent computation (tests/support/andrews_reference.py) codes Hairer & Wanner's M(q),
f(q, q'), g(q) and G(q) for Andrews' mechanism (HW II, ch. VII.7; IVP test set ``andrews.f``)
directly in numpy, with q'' and lambda from the KKT system

    [[M, G^T], [G, 0]] [q''; lambda] = [f; -L],      L = d/dt(G) q'  (so that g'' = G q'' + L = 0),

and integrates this index-1 ODE with scipy's DOP853 at rtol 1e-12.  It shares nothing with
mbsfmu but the parameter values.  The published reference at t = 0.03 is the IVP test set's
(``andsoln`` in andrews.f: PSIDE, rtol = atol = 1e-14).
"""

import numpy as np
import pytest
from andrews_reference import NAMES, Q0, hw_kkt, hw_parts
from scipy.integrate import solve_ivp

import mbsfmu
from mbsfmu import derive
from mbsfmu.reference.formulations import make_formulation
from mbsfmu.simulation.simulate import initial_state
from models import andrews

T_END = 0.03


@pytest.fixture(scope="module")
def independent_solution():
    def rhs(t, x):
        return np.concatenate((x[7:], hw_kkt(x[:7], x[7:])[0]))

    sol = solve_ivp(rhs, (0.0, T_END), np.concatenate((Q0, np.zeros(7))), method="DOP853",
                    rtol=1e-12, atol=1e-12)
    assert sol.status == 0
    return sol.y[:7, -1]


@pytest.fixture(scope="module")
def system():
    return andrews.model()


# ------------------------------------------------------------------ t = 0
def test_initial_state_is_consistent(system):
    num = derive(system).numeric()
    x0 = initial_state(system)
    c, C, b1 = num.constraint_parts(0.0, x0[:7])
    assert np.max(np.abs(c)) < 1e-15
    assert np.linalg.matrix_rank(C) == 6
    np.testing.assert_allclose(x0[:7], Q0, rtol=0, atol=0)


def test_accelerations_and_multipliers_at_t0(system):
    """Notes / IVP test set: beta'' = 14222.44..., Theta'' = -10666.83..., the rest 0;
    lambda_1 = 98.57..., lambda_2 = -6.12..., the rest 0 (our loop order and signs are chosen so
    that our multipliers equal the test set's; see the model docstring)."""
    form = make_formulation("dae", derive(system).numeric())
    x0 = initial_state(system)
    ydd = form.rhs(0.0, x0)[7:]
    ref = np.array([andrews.ACCELERATIONS_T0[n] for n in NAMES])
    scale = np.max(np.abs(ref))
    np.testing.assert_allclose(ydd[:2], ref[:2], rtol=1e-9)
    np.testing.assert_allclose(ydd[2:], 0.0, atol=1e-9 * scale)
    lam = form.multipliers(0.0, x0)
    lam_ref = np.array(andrews.MULTIPLIERS_T0)
    np.testing.assert_allclose(lam[:2], lam_ref[:2], rtol=1e-9)
    np.testing.assert_allclose(lam[2:], 0.0, atol=1e-9 * np.max(np.abs(lam_ref)))
    assert system.constraint_names == ["loop_K3.x", "loop_K3.y", "loop_K4.x", "loop_K4.y",
                                       "loop_K6.x", "loop_K6.y"]
    # the independent implementation reproduces the published values as well
    qdd, lam_hw = hw_kkt(Q0, np.zeros(7))
    np.testing.assert_allclose(qdd[:2], ref[:2], rtol=1e-9)
    np.testing.assert_allclose(lam_hw[:2], lam_ref[:2], rtol=1e-9)


def test_equations_match_hairer_wanner_at_a_moving_state(system):
    """M, q - k, c, C, b'' of mbsfmu against HW's M, f, -g, -G, -L at an off-manifold state with
    velocities (the loops are declared so that c = -g, see the model docstring)."""
    rng = np.random.default_rng(4)
    y = Q0 + rng.uniform(-0.3, 0.3, 7)
    yd = rng.uniform(-500, 500, 7)
    num = derive(system).numeric()
    M, h, c, C, b1, b2 = num.constrained_parts(0.0, y, yd)
    Mh, fh, gh, Gh, Lh = hw_parts(y, yd)
    np.testing.assert_allclose(M, Mh, rtol=1e-12, atol=1e-12 * np.abs(Mh).max())
    np.testing.assert_allclose(h, fh, rtol=1e-12, atol=1e-12 * np.abs(fh).max())
    np.testing.assert_allclose(c, -gh, rtol=0, atol=1e-15)
    np.testing.assert_allclose(C, -Gh, rtol=0, atol=1e-15)
    np.testing.assert_allclose(b1, 0.0, atol=1e-15)
    np.testing.assert_allclose(b2, -Lh, rtol=1e-12, atol=1e-12 * np.abs(Lh).max())


# ------------------------------------------------------------------ t = 0.03
def test_independent_solution_matches_published_reference(independent_solution):
    ref = np.array([andrews.REFERENCE_T003[n] for n in NAMES])
    np.testing.assert_allclose(independent_solution, ref, rtol=1e-9)


@pytest.mark.parametrize("formulation", ["qr", "projection"])
def test_solution_at_t003(system, formulation, independent_solution):
    res = mbsfmu.simulate(system, t_end=T_END, dt=0.01, rtol=1e-10, formulation=formulation)
    y = np.array([res[n][-1] for n in NAMES])
    # 7 significant digits on every angle, against our independent computation ...
    np.testing.assert_allclose(y, independent_solution, rtol=1e-7, atol=0)
    # ... and against the IVP test set's published reference
    ref = np.array([andrews.REFERENCE_T003[n] for n in NAMES])
    np.testing.assert_allclose(y, ref, rtol=1e-7, atol=0)
    assert np.max(res.constraint_residual) < 1e-12
    lam = res.multipliers()
    assert list(lam) == system.constraint_names
    assert all(np.all(np.isfinite(v)) for v in lam.values())


def test_qr_runs_at_tight_tolerance():
    """Regression: the qr velocity projection's rounding error once scaled with |v| and made
    RKSTAB's stabilized error estimate fail at rtol 1e-12 (step size underflow)."""
    res = mbsfmu.simulate(andrews.model(), t_end=0.03, dt=0.03, rtol=1e-12, formulation="qr")
    assert res.constraint_residual.max() < 1e-12
