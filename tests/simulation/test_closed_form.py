"""Models with closed-form solutions or equations written by hand, compared with mbsfmu."""

import math

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp
from scipy.special import ellipk

import mbsfmu
from mbsfmu import System, derive, rot_x


def test_pendulum_period_matches_elliptic_integral():
    """Physical pendulum: period T = 4 K(sin^2(theta0/2)) sqrt(J / (m g l)) exactly."""
    s = System("pendulum")
    m, l, J0, g = s.constants(m=1.3, l=0.7, J0=0.05, g=9.81)
    th, = s.coordinates("th")
    s.gravity([0, 0, -g])
    s.body("B", rel_rot=rot_x(th), cg_pos=[0, 0, -l], mass=m, inertia=[J0, J0, J0])
    theta0 = 2.0
    s.initial(th=theta0)
    J = 0.05 + 1.3 * 0.7**2
    T = 4 * ellipk(math.sin(theta0 / 2) ** 2) * math.sqrt(J / (1.3 * 9.81 * 0.7))
    res = mbsfmu.simulate(s, t_end=T, dt=T / 4, rtol=1e-11, atol=1e-13)
    # after a quarter period the pendulum passes the bottom, after a full period it is back
    assert abs(res["th"][1]) < 1e-8
    assert abs(res["th"][-1] - theta0) < 1e-8
    assert abs(res["der(th)"][-1]) < 1e-7


def test_damped_spring_mass_closed_form():
    """Mass on a translational coordinate between a spring-damper and the wall:
    x(t) = x0 e^{-zeta w t} (cos wd t + zeta w / wd sin wd t)."""
    s = System("oscillator")
    m, c, d, L0 = s.constants(m=2.0, c=50.0, d=1.5, L0=0.3)
    x, = s.coordinates("x")
    s.frame("wall", pos=[0, 0, 0])
    s.body("B", rel_pos=[L0 + x, 0, 0], mass=m, inertia=[1, 1, 1])
    s.spring_damper("sd", "wall", "B", stiffness=c, damping=d, rest_length=L0)
    s.initial(x=0.05)
    res = mbsfmu.simulate(s, t_end=3.0, dt=0.01, rtol=1e-11, atol=1e-13)
    w = math.sqrt(50.0 / 2.0)
    zeta = 1.5 / (2 * math.sqrt(50.0 * 2.0))
    wd = w * math.sqrt(1 - zeta**2)
    tt = res.t
    exact = 0.05 * np.exp(-zeta * w * tt) * (np.cos(wd * tt) + zeta * w / wd * np.sin(wd * tt))
    assert np.max(np.abs(res["x"] - exact)) < 1e-9


@pytest.mark.parametrize("how", ["expression", "functions"])
def test_time_parameter_moving_support(how):
    """Pendulum on a support moving as s(t) = A sin(w t) along y, hinge about x.

    Hand-derived: (J + m l^2) th'' + m l s'' cos th + m g l sin th = 0."""
    A_, w_ = 0.2, 3.0
    s = System("moving_support")
    m, l, J, g, A, w = s.constants(m=0.8, l=0.5, J=0.01, g=9.81, A=A_, w=w_)
    if how == "expression":
        sp_ = s.time_parameter("s", A * sp.sin(w * s.t))
    else:
        sp_ = s.time_parameter(
            "s", function=lambda t: A_ * np.sin(w_ * t),
            function_d=lambda t: A_ * w_ * np.cos(w_ * t),
            function_dd=lambda t: -A_ * w_**2 * np.sin(w_ * t))
    th, = s.coordinates("th")
    s.gravity([0, 0, -g])
    s.frame("support", pos=[0, sp_, 0])
    s.body("B", ref="support", rel_rot=rot_x(th), cg_pos=[0, 0, -l], mass=m,
           inertia=[J, J, J])
    s.initial(th=0.3)
    res = mbsfmu.simulate(s, t_end=4.0, dt=0.05, rtol=1e-11, atol=1e-13)

    def rhs(t, x):
        sdd = -A_ * w_**2 * math.sin(w_ * t)
        thdd = -(0.8 * 0.5 * sdd * math.cos(x[0]) + 0.8 * 9.81 * 0.5 * math.sin(x[0])) / (
            0.01 + 0.8 * 0.25)
        return [x[1], thdd]

    ref = solve_ivp(rhs, (0, 4.0), [0.3, 0.0], t_eval=res.t, rtol=1e-11, atol=1e-13,
                    method="DOP853")
    assert np.max(np.abs(res["th"] - ref.y[0])) < 1e-8
    # kinematics of the support frame follow the prescribed motion exactly
    fr = res.frame("support")
    np.testing.assert_allclose(fr["velocity"][:, 1], A_ * w_ * np.cos(w_ * res.t), atol=1e-12)
    np.testing.assert_allclose(fr["acceleration"][:, 1], -A_ * w_**2 * np.sin(w_ * res.t),
                               atol=1e-12)


def test_double_pendulum_frame_kinematics_by_hand():
    """Position, velocity and acceleration of P2_cg against formulas written by hand."""
    from models import double_pendulum

    res = mbsfmu.simulate(double_pendulum.model(), t_end=2.0, dt=0.1, rtol=1e-10)
    a, p = res["alpha"], res["phi"]
    ad, pd = res["der(alpha)"], res["der(phi)"]
    add, pdd = res.ydd
    fr = res.frame("P2_cg")
    y = np.sin(a) + np.sin(a + p)
    z = -np.cos(a) - np.cos(a + p)
    np.testing.assert_allclose(fr["position"][:, 1], y, atol=1e-13)
    np.testing.assert_allclose(fr["position"][:, 2], z, atol=1e-13)
    vy = np.cos(a) * ad + np.cos(a + p) * (ad + pd)
    vz = np.sin(a) * ad + np.sin(a + p) * (ad + pd)
    np.testing.assert_allclose(fr["velocity"][:, 1], vy, atol=1e-12)
    np.testing.assert_allclose(fr["velocity"][:, 2], vz, atol=1e-12)
    s2 = ad + pd
    ay = np.cos(a) * add - np.sin(a) * ad**2 + np.cos(a + p) * (add + pdd) - np.sin(a + p) * s2**2
    az = np.sin(a) * add + np.cos(a) * ad**2 + np.sin(a + p) * (add + pdd) + np.cos(a + p) * s2**2
    np.testing.assert_allclose(fr["acceleration"][:, 1], ay, atol=1e-10)
    np.testing.assert_allclose(fr["acceleration"][:, 2], az, atol=1e-10)
    np.testing.assert_allclose(fr["angular_velocity"][:, 0], s2, atol=1e-13)
    np.testing.assert_allclose(fr["angular_acceleration"][:, 0], add + pdd, atol=1e-10)


def test_cart_input_force_drives_cart():
    """The input force enters the horizontal momentum balance of cart and rod, written by hand:
    (mc + m) x'' + m l (th'' cos th - th'^2 sin th) = F."""
    from models import cart_pendulum

    res = mbsfmu.simulate(cart_pendulum.model(), t_end=1.0, dt=0.05, rtol=1e-10,
                          inputs={"F": lambda t: 2.0 * math.sin(3 * t)})
    xdd, thdd = res.ydd
    th, thd = res["theta"], res["der(theta)"]
    lhs = 1.1 * xdd + 0.1 * 0.5 * (thdd * np.cos(th) - thd**2 * np.sin(th))
    np.testing.assert_allclose(lhs, 2.0 * np.sin(3 * res.t), atol=1e-10)


def test_cardan_matches_sequence_and_symbolic_kinematics():
    """The expanded symbolic rotation is orthonormal and equals Rx Ry Rz."""
    s = System("r")
    a, b, c = s.coordinates("a", "b", "c")
    s.body("B", rel_rot=mbsfmu.cardan(a, b, c), mass=1, inertia=[1, 2, 2])
    eqs = derive(s)
    S = eqs.frame_expanded("B")["rotation"]
    ref = (sp.Matrix(sp.rot_axis1(-a)) * sp.Matrix(sp.rot_axis2(-b)) * sp.Matrix(sp.rot_axis3(-c)))
    assert sp.simplify(S - ref) == sp.zeros(3, 3)
    vals = {a: 0.3, b: -0.7, c: 1.1}
    Sn = np.array(S.subs(vals).evalf(), dtype=float)
    np.testing.assert_allclose(Sn @ Sn.T, np.eye(3), atol=1e-14)


def test_scalar_only_time_function_is_accepted():
    """A time parameter given by math-only callables (no arrays) still evaluates over series."""
    s = System("scalar_tp")
    z = s.time_parameter("z", function=lambda t: math.sin(t), function_d=lambda t: math.cos(t),
                         function_dd=lambda t: -math.sin(t))
    q, = s.coordinates("q")
    s.frame("F", pos=[0, 0, z])
    s.body("B", ref="F", rel_pos=[q, 0, 0], mass=1.0, inertia=[1, 1, 1])
    res = mbsfmu.simulate(s, t_end=1.0, dt=0.25, initial={"der(q)": 1.0})
    np.testing.assert_allclose(res["q"], res.t, atol=1e-12)
    np.testing.assert_allclose(res.frame("B")["position"][:, 2], np.sin(res.t), atol=1e-15)


def test_symbolic_frame_kinematics_by_differentiation():
    """Symbolic velocity/acceleration of a 3D frame equal d/dt of the symbolic position, and the
    angular velocity equals the axial vector of S' S^T (differentiated here with sympy)."""
    s = System("spatial")
    l1, l2 = s.constants(l1=0.7, l2=0.4)
    a, b, c = s.coordinates("a", "b", "c")
    s.body("B1", rel_rot=mbsfmu.sequence("zy", [a, b]), cg_pos=[l1, 0, 0], mass=1, inertia=[1, 1, 1])
    s.body("B2", ref="B1_cg", rel_pos=[0, l2, 0], rel_rot=mbsfmu.rot_x(c), cg_pos=[0, 0, l2],
           mass=1, inertia=[1, 1, 1])
    eqs = derive(s)
    k = eqs.frame_expanded("B2_cg")
    tt = sp.Symbol("tt")
    funcs = {q: sp.Function(q.name)(tt) for q in s.y}
    back = {}
    for q, dq, ddq in zip(s.y, s.yd, s.ydd):
        back[sp.Derivative(funcs[q], (tt, 2))] = ddq
        back[sp.Derivative(funcs[q], tt)] = dq
        back[funcs[q]] = q

    to_time = {**funcs, **{dq: sp.diff(funcs[q], tt) for q, dq in zip(s.y, s.yd)}}

    def ddt(expr):
        return sp.diff(expr.xreplace(to_time), tt).subs(back)

    vals = {a: 0.3, b: -1.1, c: 0.8, **{d: v for d, v in zip(s.yd, (0.5, -0.2, 1.3))},
            **{d: v for d, v in zip(s.ydd, (0.7, 0.1, -0.4))}, l1: 0.7, l2: 0.4}

    def num(M):
        return np.array(sp.Matrix(M).evalf(subs=vals), dtype=float)

    np.testing.assert_allclose(num(k["velocity"]), num(ddt(k["position"])), atol=1e-13)
    np.testing.assert_allclose(num(k["acceleration"]), num(ddt(k["velocity"])), atol=1e-12)
    S = k["rotation"]
    W = num(ddt(S)) @ num(S).T
    np.testing.assert_allclose(num(k["angular_velocity"]).ravel(), [W[2, 1], W[0, 2], W[1, 0]],
                               atol=1e-13)
    np.testing.assert_allclose(num(k["angular_acceleration"]), num(ddt(k["angular_velocity"])),
                               atol=1e-12)
