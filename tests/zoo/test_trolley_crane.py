"""models/trolley_crane.py (issue 28's crane) against references derived apart from mbsfmu:

* Kane's equations of the same trolley and point load from sympy.physics.mechanics
  (``KanesMethod``: two particles, gravity, the drive force and viscous rail friction), integrated
  by scipy at rtol 1e-12 with a drive force that varies in time, other parameters than the
  model's defaults and friction on: the coordinates and rates agree to 1e-8 over 5 s, and so
  does the load's position output with (x + L sin theta, 0, -L cos theta);
* the closed-form frequency of the small swing with the trolley free, omega^2 = g (M + m) / (M L)
  (the trolley moves against the load; the other pair of eigenvalues is the trolley's rigid-body
  drift): the linearization's eigenvalues to 1e-12 relative, and a simulated swing of 1e-4 rad
  crosses zero at intervals pi / omega to 1e-6 relative.
"""

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp
from sympy.physics import mechanics as me

import mbsfmu

MODEL = "models/trolley_crane.py"
G = 9.81


def drive(t):
    """The drive force of the comparison run [N]."""
    return 40.0 * np.sin(2.0 * t) + 15.0


def kane_reference(M, m, L, d, t, y0):
    """x, theta, x', theta' at times t by Kane's equations (sympy.physics.mechanics), scipy's DOP853
    at rtol 1e-12."""
    x, th = me.dynamicsymbols("x theta")
    u1, u2 = me.dynamicsymbols("u1 u2")
    F = me.dynamicsymbols("F")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    trolley = O.locatenew("T", x * N.x)
    trolley.set_vel(N, u1 * N.x)
    load = trolley.locatenew("P", L * sp.sin(th) * N.x - L * sp.cos(th) * N.z)
    load.set_vel(N, (u1 + L * sp.cos(th) * u2) * N.x + L * sp.sin(th) * u2 * N.z)
    bodies = [me.Particle("trolley", trolley, M), me.Particle("load", load, m)]
    loads = [(trolley, (F - d * u1) * N.x - M * G * N.z), (load, -m * G * N.z)]
    kane = me.KanesMethod(N, q_ind=[x, th], u_ind=[u1, u2], kd_eqs=[x.diff() - u1, th.diff() - u2])
    kane.kanes_equations(bodies, loads)
    mass = sp.lambdify((th, F), kane.mass_matrix_full)
    forcing = sp.lambdify((x, th, u1, u2, F), kane.forcing_full)

    def rhs(tt, y):
        f = drive(tt)
        return np.linalg.solve(np.asarray(mass(y[1], f), float), np.asarray(forcing(*y, f), float).ravel())

    sol = solve_ivp(rhs, (t[0], t[-1]), y0, t_eval=t, method="DOP853", rtol=1e-12, atol=1e-13)
    assert sol.success
    return sol.y


def test_against_kanes_equations_with_drive_and_friction():
    M, m, L, d = 25.0, 35.0, 1.5, 4.0
    y0 = [0.1, 0.3, 0.2, -0.4]
    res = mbsfmu.simulate(MODEL, 5.0, 0.01, rtol=1e-11, method="dop853",
                          params={"trolley_mass": M, "load_mass": m, "rope_length": L, "rail_friction": d},
                          initial={"x": y0[0], "theta": y0[1], "der(x)": y0[2], "der(theta)": y0[3]},
                          inputs={"F": drive})
    ref = kane_reference(M, m, L, d, res.t, y0)
    got = np.array([res["x"], res["theta"], res["der(x)"], res["der(theta)"]])
    err = np.max(np.abs(got - ref), axis=1)
    print("max deviation x, theta, x', theta':", err)
    assert np.all(err < 1e-8), err
    assert np.max(np.abs(res["theta"])) > 0.3  # a swing, not a rest
    x, th = ref[0], ref[1]
    np.testing.assert_allclose(res["load.x"], x + L * np.sin(th), rtol=0, atol=1e-8)
    np.testing.assert_allclose(res["load.z"], -L * np.cos(th), rtol=0, atol=1e-8)
    np.testing.assert_allclose(res["load.y"], 0.0, atol=1e-15)
    np.testing.assert_allclose(res["drive_power"], drive(res.t) * res["der(x)"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("M, m, L", [(20.0, 50.0, 2.0), (20.0, 10.0, 1.0), (100.0, 5.0, 0.5)])
def test_the_swing_frequency_with_the_trolley_free(M, m, L):
    omega = np.sqrt(G * (M + m) / (M * L))
    params = {"trolley_mass": M, "load_mass": m, "rope_length": L}
    lin = mbsfmu.linearize(MODEL, at={"x": 0.0, "theta": 0.0}, inputs=["F"], symbolic=False, params=params)
    ev = np.linalg.eigvals(lin.A)
    swing = ev[np.abs(ev) > 1e-9]
    np.testing.assert_allclose(np.sort(swing.imag), [-omega, omega], rtol=1e-12)
    np.testing.assert_allclose(swing.real, 0.0, atol=1e-12 * omega)
    assert np.sum(np.abs(ev) <= 1e-9) == 2  # the trolley's drift: x and der(x) free
    # a small swing of the nonlinear model: zero crossings of theta every pi / omega
    t_end = 6 * np.pi / omega
    res = mbsfmu.simulate(MODEL, t_end, t_end / 3000, rtol=1e-12, method="dop853", params=params,
                          initial={"theta": 1e-4})
    th = res["theta"]
    k = np.nonzero(np.sign(th[:-1]) != np.sign(th[1:]))[0]
    crossings = res.t[k] - th[k] * (res.t[k + 1] - res.t[k]) / (th[k + 1] - th[k])
    assert len(crossings) == 6
    np.testing.assert_allclose(np.diff(crossings), np.pi / omega, rtol=1e-6)
