"""RKSTAB (seed 004 §4.2–4.3): DOPRI5(4) with the projection inside the step.

Closed-form ODEs, Kepler's periodic orbit, the cost against scipy's RK45 (the same method), dense
output, a Cartesian pendulum with post-stabilization (drift, energy), and the failure modes.
"""

import math
import re
import time

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from mbsfmu.core.errors import ParameterError, SimulationError, SingularMassMatrixError
from mbsfmu.reference.integrators import StepperResult, integrate

# ---------------------------------------------------------------------------------------- problems


def oscillator(w):
    def rhs(t, x):
        return np.array([x[1], -w * w * x[0]])

    def exact(t):
        t = np.asarray(t)
        return np.array([np.cos(w * t), -w * np.sin(w * t)])

    return rhs, exact


KEPLER_E = 0.5
KEPLER_X0 = np.array([1 - KEPLER_E, 0.0, 0.0, math.sqrt((1 + KEPLER_E) / (1 - KEPLER_E))])


def kepler(t, x):
    """Two-body problem, mu = 1, semi-major axis 1: period 2 pi."""
    r3 = (x[0] * x[0] + x[1] * x[1]) ** 1.5
    return np.array([x[2], x[3], -x[0] / r3, -x[1] / r3])


PEND_L, PEND_G = 1.0, 9.81


def pendulum(t, s):
    """Cartesian pendulum, unit mass, index-1 form: lambda from x ax + y ay + |v|^2 = 0."""
    x, y, vx, vy = s
    lam = (vx * vx + vy * vy - PEND_G * y) / (x * x + y * y)
    return np.array([vx, vy, -lam * x, -PEND_G - lam * y])


def pendulum_pstab(t, s):
    """Seed 004 PStab (3.68) with M = I: position Newton correction twice, then velocity.

    g(q) = (|q|^2 - L^2)/2, G = q^T:  q <- q - G^T (G G^T)^-1 g(q) (twice),  v <- v - G^T (G G^T)^-1 G v.
    """
    q = s[:2]
    for _ in range(2):
        qq = q @ q
        q = q - q * (0.5 * (qq - PEND_L**2) / qq)
    v = s[2:] - q * ((q @ s[2:]) / (q @ q))
    return np.concatenate((q, v))


def pendulum_residual(X):
    """max(|x^2 + y^2 - L^2|, |x vx + y vy|) per output column."""
    pos = np.abs(X[0] ** 2 + X[1] ** 2 - PEND_L**2)
    vel = np.abs(X[0] * X[2] + X[1] * X[3])
    return np.maximum(pos, vel)


def pendulum_energy(X):
    return 0.5 * (X[2] ** 2 + X[3] ** 2) + PEND_G * X[1]


# ------------------------------------------------------------------------------ 1. plain ODEs


def test_exponential_decay_closed_form():
    lam = np.array([1.0, 3.0, 0.1])
    x0 = np.array([1.0, 2.0, 3.0])
    res = integrate(lambda t, x: -lam * x, x0, (0.0, 5.0), rtol=1e-10)
    assert isinstance(res, StepperResult) and res.status == 0
    exact = x0[:, None] * np.exp(-lam[:, None] * res.t[None, :])
    assert res.t[0] == 0.0 and res.t[-1] == 5.0
    assert res.x.shape == (3, res.t.size)
    # global error at rtol 1e-10, atol 1e-11: a few tolerances
    assert np.abs(res.x - exact).max() < 1e-9
    assert np.abs(res.x[2, -1] / exact[2, -1] - 1) < 1e-9  # slow mode: relative accuracy too


def test_harmonic_oscillator_closed_form():
    rhs, exact = oscillator(2.0)
    res = integrate(rhs, [1.0, 0.0], (0.0, 10.0), rtol=1e-10)
    err = np.abs(res.x - exact(res.t)).max()
    assert err < 1e-8  # measured ~4e-10
    assert res.nfev == 2 + 6 * (res.naccept + res.nreject)  # f0 + starting-step probe + 6 per step (FSAL)


def test_kepler_one_period():
    res = integrate(kepler, KEPLER_X0, (0.0, 2 * np.pi), rtol=1e-10)
    assert np.abs(res.x[:, -1] - KEPLER_X0).max() < 1e-7  # measured ~6e-9


@pytest.mark.parametrize("rtol", [1e-6, 1e-8, 1e-10])
def test_cost_matches_scipy_rk45(rtol):
    """Same method and norm: the number of rhs evaluations is close to scipy's RK45 (measured within 8 %)."""
    res = integrate(kepler, KEPLER_X0, (0.0, 2 * np.pi), rtol=rtol, atol=rtol / 10)
    ref = solve_ivp(kepler, (0.0, 2 * np.pi), KEPLER_X0, method="RK45", rtol=rtol, atol=rtol / 10)
    assert 1 / 1.5 < res.nfev / ref.nfev < 1.5
    # and the accuracy is at least comparable
    assert np.abs(res.x[:, -1] - KEPLER_X0).max() < 2 * np.abs(ref.y[:, -1] - KEPLER_X0).max()


def test_array_atol_and_max_step():
    rhs, exact = oscillator(1.0)
    res = integrate(rhs, [1.0, 0.0], (0.0, 3.0), rtol=1e-8, atol=np.array([1e-9, 1e-9]), max_step=0.05)
    assert np.all(np.diff(res.t) <= 0.05 * (1 + 1e-12))
    assert np.abs(res.x - exact(res.t)).max() < 1e-8


# ----------------------------------------------------------------------------- 2. dense output


@pytest.mark.parametrize("rtol", [1e-6, 1e-8])
def test_dense_output_accuracy(rtol):
    rhs, exact = oscillator(2.0)
    t_eval = np.linspace(0.0, 10.0, 997)  # many points inside each step
    res = integrate(rhs, [1.0, 0.0], (0.0, 10.0), rtol=rtol, t_eval=t_eval)
    steps = integrate(rhs, [1.0, 0.0], (0.0, 10.0), rtol=rtol)
    assert steps.naccept < t_eval.size / 3
    np.testing.assert_array_equal(res.t, t_eval)
    dense_err = np.abs(res.x - exact(t_eval)).max()
    step_err = np.abs(steps.x - exact(steps.t)).max()
    assert dense_err < 10 * rtol  # measured ~4 rtol
    assert dense_err < 1.5 * step_err  # the interpolant adds (almost) nothing to the global error
    # the last output is the final step's end state, bit for bit; t0 gives x0
    np.testing.assert_array_equal(res.x[:, -1], steps.x[:, -1])
    np.testing.assert_array_equal(res.x[:, 0], [1.0, 0.0])


def test_dense_output_kepler_vs_reference():
    t_eval = np.linspace(0.0, 2 * np.pi, 400)
    res = integrate(kepler, KEPLER_X0, (0.0, 2 * np.pi), rtol=1e-9, t_eval=t_eval)
    ref = solve_ivp(kepler, (0.0, 2 * np.pi), KEPLER_X0, method="DOP853", rtol=1e-13, atol=1e-14,
                    t_eval=t_eval)
    steps = integrate(kepler, KEPLER_X0, (0.0, 2 * np.pi), rtol=1e-9)
    step_ref = solve_ivp(kepler, (0.0, 2 * np.pi), KEPLER_X0, method="DOP853", rtol=1e-13, atol=1e-14,
                         t_eval=steps.t)
    assert np.abs(res.x - ref.y).max() < 1.5 * np.abs(steps.x - step_ref.y).max() + 1e-12


# ------------------------------------------------------------------------------ 3. projection


def test_pendulum_projection_removes_drift():
    s0 = np.array([PEND_L, 0.0, 0.0, 0.0])  # horizontal, at rest: a large swing
    t_eval = np.linspace(0.0, 100.0, 2001)
    free = integrate(pendulum, s0, (0.0, 100.0), rtol=1e-6, t_eval=t_eval)
    stab = integrate(pendulum, s0, (0.0, 100.0), rtol=1e-6, t_eval=t_eval, project=pendulum_pstab)

    drift_free = pendulum_residual(free.x)
    drift_stab = pendulum_residual(stab.x)
    assert drift_free[-1] > 1e-8  # measured ~3e-3: the index-1 form drifts
    assert drift_stab.max() <= 1e-12  # measured ~4e-16, at every output (interpolated points projected)

    e0 = pendulum_energy(s0[:, None])
    e_free = np.abs(pendulum_energy(free.x) - e0).max()
    e_stab = np.abs(pendulum_energy(stab.x) - e0).max()
    assert e_stab < 0.2 * e_free  # measured ~1e-3 vs ~2e-2

    assert free.nproj == 0
    assert stab.nproj >= stab.naccept
    # projected on every attempted step (before the error test) and at output points inside steps
    assert stab.naccept + stab.nreject <= stab.nproj <= stab.naccept + stab.nreject + t_eval.size - 1


def test_pendulum_projection_keeps_accuracy():
    """Stabilized Cartesian solution vs the minimal-coordinate ODE theta'' = -(g/L) sin(theta)."""
    th0 = 1.2
    s0 = np.array([PEND_L * math.sin(th0), -PEND_L * math.cos(th0), 0.0, 0.0])
    t_eval = np.linspace(0.0, 10.0, 201)
    stab = integrate(pendulum, s0, (0.0, 10.0), rtol=1e-8, t_eval=t_eval, project=pendulum_pstab)
    ref = solve_ivp(lambda t, z: [z[1], -PEND_G / PEND_L * math.sin(z[0])], (0.0, 10.0), [th0, 0.0],
                    method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t_eval)
    theta = np.arctan2(stab.x[0], -stab.x[1])
    assert np.abs(theta - ref.y[0]).max() < 1e-5
    assert pendulum_residual(stab.x).max() <= 1e-12


def test_project_output_false_projects_steps_only():
    calls = []

    def proj(t, x):
        calls.append(t)
        return x

    t_eval = np.linspace(0.0, 1.0, 50)
    res = integrate(pendulum, [PEND_L, 0.0, 0.0, 0.0], (0.0, 1.0), t_eval=t_eval, project=proj,
                    project_output=False)
    assert res.nproj == len(calls) == res.naccept + res.nreject


def test_projection_error_propagates():
    def proj(t, x):
        if t > 0.5:
            raise SingularMassMatrixError(f"test: singular at t={t}")
        return x

    with pytest.raises(SingularMassMatrixError, match="singular"):
        integrate(pendulum, [PEND_L, 0.0, 0.0, 0.0], (0.0, 1.0), project=proj)


# -------------------------------------------------------------------------------- 4. failures


def _t_in_message(msg):
    return float(re.search(r"t=([-+0-9.eE]+)", msg).group(1))


def test_nan_rhs_after_t1_raises():
    calls = []

    def rhs(t, x):
        calls.append(np.all(np.isfinite(x)))
        return -x if t <= 1.0 else np.full_like(x, np.nan)

    start = time.perf_counter()
    with pytest.raises(SimulationError, match="non-finite") as info:
        integrate(rhs, [1.0, 2.0], (0.0, 3.0), rtol=1e-6)
    assert time.perf_counter() - start < 3.0
    assert abs(_t_in_message(str(info.value)) - 1.0) < 1e-6
    assert all(calls)  # rhs was never called with a non-finite state


def test_transient_nonfinite_is_a_rejected_step():
    # rhs undefined (NaN) for |x| > 2; a much too large first step overshoots there and is rejected
    def rhs(t, x):
        return np.where(np.abs(x) > 2.0, np.nan, -10.0 * x)

    res = integrate(rhs, [1.0], (0.0, 2.0), rtol=1e-8, first_step=1.0)
    assert res.nreject >= 1
    assert abs(res.x[0, -1] - math.exp(-20.0)) < 1e-9


def test_blow_up_underflow():
    start = time.perf_counter()
    with pytest.raises(SimulationError, match="underflow") as info:
        integrate(lambda t, x: x * x, [1.0], (0.0, 2.0), rtol=1e-6)
    assert time.perf_counter() - start < 3.0
    assert abs(_t_in_message(str(info.value)) - 1.0) < 1e-4  # x = 1/(1 - t) blows up at t = 1 (+ global err)


def test_max_steps_exceeded():
    rhs, _ = oscillator(1.0)
    with pytest.raises(SimulationError, match="maximum number of steps") as info:
        integrate(rhs, [1.0, 0.0], (0.0, 100.0), max_steps=20)
    assert 0.0 < _t_in_message(str(info.value)) < 100.0


def test_nonfinite_initial_rhs():
    with pytest.raises(SimulationError, match="initial"):
        integrate(lambda t, x: np.full_like(x, np.inf), [0.0], (0.0, 1.0))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"t_span": (1.0, 0.0)},
        {"t_span": (1.0, 1.0)},
        {"t_span": (0.0, np.inf)},
        {"x0": [np.nan, 0.0]},
        {"rtol": 0.0},
        {"atol": [1e-6, 1e-6, 1e-6]},
        {"t_eval": [0.5, 0.2]},
        {"t_eval": [0.0, 2.0]},
        {"first_step": -0.1},
    ],
)
def test_bad_arguments(kwargs):
    rhs, _ = oscillator(1.0)
    args = {"x0": [1.0, 0.0], "t_span": (0.0, 1.0), **kwargs}
    with pytest.raises(ParameterError):
        integrate(rhs, args.pop("x0"), args.pop("t_span"), **args)
    assert issubclass(ParameterError, ValueError)


def test_rhs_shape_checked():
    with pytest.raises(ParameterError, match="shape"):
        integrate(lambda t, x: np.zeros(3), [1.0, 0.0], (0.0, 1.0))
