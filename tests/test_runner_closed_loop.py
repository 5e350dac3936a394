"""Closed loop in the runner: a native FMU plant and a discrete PID, against monolithic references.

The plant is the zoo's cart with pendulum, with gravity reversed (``g = -9.81``) so that the rod
hangs and the loop can be closed with a PID on the cart position alone.  A position reference
steps from 0 to 0.5 m at t = 0.1 s; ``ref -> Sum(+-) <- plant.x``, ``Sum -> PID -> plant.F``.

Two references, neither run through the runner or the FMU:

1. **Same discrete loop, one ODE solver.**  The plant's equations of motion (mbsfmu's numpy
   backend of the same model) integrated by scipy's DOP853 at rtol 1e-11 from sample to sample
   with the force held, the controller written out here from the PID's documented difference
   equations.  The runner must agree to the FMU integrator's accuracy (rtol 1e-10): 1e-7.
2. **Continuous loop in one ODE** (plant + PID with its derivative filter as two more states).
   The runner's discrete loop differs from it by the coupling error of sampling and holding,
   first order in the step: the difference must shrink by 2 (within 25 %) when the step halves,
   and be below 2 % of the reference step at h = 1 ms.
"""

import math
import os

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from blocks import FMU, PID, Step, Sum
from mbsfmu import derive
from mbsfmu.fmu.native import build_native_fmu
from mbsfmu.model.loader import load_model
from mbsfmu.runner import Diagram

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KP, KI, KD, TF = 20.0, 5.0, 6.0, 0.02
REF_TIME, REF = 0.1, 0.5
PARAMS = {"g": -9.81}
T_END = 3.0


@pytest.fixture(scope="module")
def plant(cache, tmp_path_factory):
    system = load_model(os.path.join(ROOT, "models", "cart_pendulum.py"))
    path = build_native_fmu(system, tmp_path_factory.mktemp("loop") / "cart.fmu")
    num = derive(system).numeric()
    num.set_params(PARAMS)
    return path, num


def run_diagram(path, h):
    d = Diagram(step=h)
    d.add("ref", Step(time=REF_TIME, before=0.0, after=REF))
    d.add("err", Sum(signs="+-"))
    d.add("pid", PID(KP, KI, KD, tf=TF, anti_windup=None))
    d.add("plant", FMU(path, parameters={**PARAMS, "solver_rtol": 1e-10, "solver_atol": 1e-12}))
    d.connect("ref.y", "err.u1")
    d.connect("plant.x", "err.u2")
    d.connect("err.y", "pid.u")
    d.connect("pid.y", "plant.F")
    return d.run(T_END)


def plant_rhs(num, force):
    f = num.f

    def rhs(t, z):
        num.u[0] = force
        return np.concatenate([z[f:], num.accelerations(t, z[:f], z[f:])])
    return rhs


def discrete_reference(num, h):
    """x(t_k) of the sampled loop: plant by DOP853 between samples, the PID's difference
    equations (forward-Euler I, backward-Euler filtered D) written out here."""
    n = round(T_END / h)
    z = np.array([0.0, 0.1, 0.0, 0.0])        # x, theta, x', theta' (the model's initial state)
    integral, deriv, e_prev = 0.0, 0.0, 0.0
    xs = np.empty(n + 1)
    for k in range(n + 1):
        t = k * h
        xs[k] = z[0]
        if k == n:
            break
        ref = REF if t >= REF_TIME - 1e-9 * h else 0.0
        e = ref - z[0]
        deriv = (TF * deriv + KD * (e - e_prev)) / (TF + h)
        force = KP * e + integral + deriv
        integral += h * KI * e
        e_prev = e
        sol = solve_ivp(plant_rhs(num, force), (t, t + h), z, method="DOP853", rtol=1e-11,
                        atol=1e-13)
        z = sol.y[:, -1]
    return xs


def continuous_reference(num, times):
    """x(t) of the continuous loop u = kp e + ki ∫e + kd (e - w)/tf, w' = (e - w)/tf."""
    f = num.f

    def rhs(t, s, ref):
        z, integral, w = s[: 2 * f], s[2 * f], s[2 * f + 1]
        e = ref - z[0]
        num.u[0] = KP * e + KI * integral + KD * (e - w) / TF
        return np.concatenate([z[f:], num.accelerations(t, z[:f], z[f:]), [e, (e - w) / TF]])

    s0 = np.array([0.0, 0.1, 0.0, 0.0, 0.0, 0.0])
    first = times[times < REF_TIME]
    a = solve_ivp(rhs, (0.0, REF_TIME), s0, args=(0.0,), method="DOP853", rtol=1e-11, atol=1e-13,
                  dense_output=True)
    b = solve_ivp(rhs, (REF_TIME, T_END), a.y[:, -1], args=(REF,), method="DOP853", rtol=1e-11,
                  atol=1e-13, dense_output=True)
    rest = times[times >= REF_TIME]
    return np.concatenate([a.sol(first)[0], b.sol(rest)[0]])


def test_runner_matches_the_same_discrete_loop_in_one_solver(plant):
    path, num = plant
    h = 2e-3
    res = run_diagram(path, h)
    ref = discrete_reference(num, h)
    assert res.t.shape == ref.shape
    np.testing.assert_allclose(res.t, np.arange(len(ref)) * h, rtol=0, atol=1e-12)
    err = np.max(np.abs(res["plant.x"] - ref))
    assert err <= 1e-7, err
    # the loop did its job: the cart is within 5 % of the reference (the undamped rod swings on)
    assert abs(res["plant.x"][-1] - REF) < 0.05 * REF
    # and the plant's feed-through output saw the force of the same step: F = drive_power / x'
    power, speed = res["plant.drive_power"], res["plant.der(x)"]
    moving = np.abs(speed) > 1e-3
    np.testing.assert_allclose(power[moving] / speed[moving], res["pid.y"][moving], rtol=1e-9)


def test_coupling_error_against_the_continuous_loop_is_first_order(plant):
    path, num = plant
    errs = []
    for h in (2e-3, 1e-3):
        res = run_diagram(path, h)
        cont = continuous_reference(num, res.t)
        errs.append(np.max(np.abs(res["plant.x"] - cont)))
    ratio = errs[0] / errs[1]
    assert errs[1] <= 0.02 * REF, errs
    assert math.isclose(ratio, 2.0, rel_tol=0.25), (errs, ratio)
