"""mbsfmu.linearize against independent results (issue 13).

References, each derived here and not by the library: the mathematical pendulum's sqrt(g/L);
seed 002's double pendulum against the generalized eigenvalue problem of its hand-written mass
and stiffness matrices; the upright cart-pendulum's one unstable pole in closed form; a loaded
slider-crank against V''(theta)/m_r(theta) of its own closed-form kinematics; every A against
central differences of the C engine's nonlinear right-hand side.  Bad input: clear errors.
"""

from __future__ import annotations

import math
import pathlib

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize
import sympy as sp

import mbsfmu
from mbsfmu import ConstraintError, ParameterError, SingularMassMatrixError, derive, rot_x
from mbsfmu.engine.extension import Engine

ROOT = pathlib.Path(__file__).resolve().parents[1]


def model(name):
    return mbsfmu.load_model(ROOT / "models" / f"{name}.py")


def pendulum():
    s = mbsfmu.System("pendulum")
    m, L, g = s.constants(m=0.8, L=0.7, g=9.81)
    phi = s.coordinate("phi")
    s.gravity([0, 0, -g])
    s.body("bob", rel_rot=rot_x(phi), cg_pos=[0, 0, -L], mass=m, inertia=[0, 0, 0])
    return s


def loaded_slider_crank():
    """models/slider_crank.py with gravity in its plane (-y) and a spring k (rest length x_free)
    from the origin to the slider, so that it has equilibria with loaded joints."""
    s = model("slider_crank")
    g = s.constants_["g"].symbol
    s.gravity([0, -g, 0])
    k, x_free = s.constants(k=40.0, x_free=0.45)
    s.spring_damper("spring", "ISYS", "slider", stiffness=k, rest_length=x_free)
    return s


# ------------------------------------------------------------------------ closed forms
def test_single_pendulum_frequency_is_sqrt_g_over_L():
    lin = mbsfmu.linearize(pendulum())
    L, g = sp.symbols("L g", real=True)
    assert sp.simplify(lin.K[0, 0] / lin.M0[0, 0] - g / L) == 0        # symbolic, small
    num = lin.to_numeric()
    omega = math.sqrt(9.81 / 0.7)
    ev = np.linalg.eigvals(num.A)
    assert np.max(np.abs(np.sort(ev.imag) - [-omega, omega])) < 1e-12 * omega
    (mode,) = num.modes()
    assert abs(mode.frequency_hz - omega / (2 * math.pi)) < 1e-12
    assert abs(mode.damping_ratio) < 1e-12 and mode.shape == {"phi": 1}


def test_double_pendulum_against_hand_written_M_and_K():
    """Seed 002 §4.1: m = 2, L1 = L2 = 1, Ix = 0.01, g = 9.81; alpha absolute, phi relative.
    Hanging at rest: T = 1/2 (m L1^2 + Ix) a'^2 + 1/2 m (L1 a' + L2 (a' + p'))^2 + 1/2 Ix (a' + p')^2,
    V = -m g L1 cos a - m g (L1 cos a + L2 cos(a + p)) to second order."""
    m, L1, L2, Ix, g = 2.0, 1.0, 1.0, 0.01, 9.81
    M = np.array([[m * L1**2 + Ix + m * (L1 + L2)**2 + Ix, m * L2 * (L1 + L2) + Ix],
                  [m * L2 * (L1 + L2) + Ix, m * L2**2 + Ix]])
    K = np.array([[m * g * L1 + m * g * (L1 + L2), m * g * L2], [m * g * L2, m * g * L2]])
    omega2 = scipy.linalg.eigh(K, M, eigvals_only=True)
    lin = mbsfmu.linearize(model("double_pendulum"), at={"alpha": 0, "phi": 0}, equilibrium=True)
    num = lin.to_numeric()
    np.testing.assert_allclose(num.M0, M, rtol=1e-14)
    np.testing.assert_allclose(num.K, K, rtol=1e-14)
    ev = np.linalg.eigvals(num.A)
    got = np.sort(-(ev**2).real)[::2]   # each omega^2 twice (the pair +-i omega)
    assert np.max(np.abs(got - omega2) / omega2) < 1e-10
    assert np.max(np.abs(ev.real)) < 1e-12
    freqs = [md.frequency_hz for md in num.modes()]
    np.testing.assert_allclose(freqs, np.sqrt(omega2) / (2 * math.pi), rtol=1e-10)


def test_upright_cart_pendulum_has_one_unstable_pole_in_closed_form():
    """Rod cg at (x + l sin th, l cos th), J = m (2l)^2 / 12 = m l^2 / 3:
    M = [[mc + m, m l], [m l, 4/3 m l^2]], K = [[0, 0], [0, -m g l]], so
    det(K + s^2 M) = 0 gives s^2 = g (mc + m) / (l (4/3 (mc + m) - m)) besides s = 0 (twice)."""
    mc, m, l, g = 1.0, 0.1, 0.5, 9.81
    s_ref = math.sqrt(g * (mc + m) / (l * (4 / 3 * (mc + m) - m)))
    lin = mbsfmu.linearize(model("cart_pendulum"), at={"x": 0, "theta": 0}, inputs=["F"],
                           equilibrium=True)
    ev = np.linalg.eigvals(lin.to_numeric().A)
    unstable = ev[ev.real > 1e-9]
    assert len(unstable) == 1
    assert abs(unstable[0] - s_ref) < 1e-12 * s_ref
    assert np.sum(np.abs(ev) < 1e-9) == 2 and np.min(np.abs(ev + s_ref)) < 1e-12 * s_ref
    assert lin.states == ["x", "theta", "der(x)", "der(theta)"] and lin.inputs == ["F"]
    # symbolic in the constants, as in seed 002
    assert {str(v) for v in lin.K.free_symbols} == {"g", "l", "m"}


def _slider_crank_reference(p):
    """V''/m_r at a stable equilibrium, with the crank's absolute angle th as the coordinate:
    pin = r (cos th, sin th) = (x + l cos a, l sin a), a = pi - asin(r sin th / l)."""
    th = sp.Symbol("th")
    r, l = p["r"], p["l"]
    a = sp.pi - sp.asin(r * sp.sin(th) / l)
    x = r * sp.cos(th) - l * sp.cos(a)
    rod_cg = sp.Matrix([x + l / 2 * sp.cos(a), l / 2 * sp.sin(a)])
    crank_cg = sp.Matrix([r / 2 * sp.cos(th), r / 2 * sp.sin(th)])
    V = p["g"] * (p["m_rod"] * rod_cg[1] + p["m_crank"] * crank_cg[1]) + p["k"] / 2 * (x - p["x_free"])**2
    mr = (p["m_slider"] * sp.diff(x, th)**2 + p["m_rod"] * sp.diff(rod_cg, th).norm()**2
          + p["m_rod"] * l**2 / 12 * sp.diff(a, th)**2 + p["m_crank"] * sp.diff(crank_cg, th).norm()**2
          + p["m_crank"] * r**2 / 12)
    dV, d2V = sp.lambdify(th, sp.diff(V, th)), sp.lambdify(th, sp.diff(V, th, 2))
    grid = np.linspace(0, 2 * np.pi, 721)
    vals = np.array([dV(t) for t in grid])
    roots = [scipy.optimize.brentq(dV, grid[i], grid[i + 1], xtol=1e-15)
             for i in range(len(grid) - 1) if vals[i] * vals[i + 1] < 0]
    th0 = next(t for t in roots if d2V(t) > 0)
    subs = {th: th0}
    return (float(x.subs(subs)), float(a.subs(subs)), th0,
            d2V(th0) / float(mr.subs(subs)))


def test_slider_crank_in_its_independent_coordinate_against_its_potential():
    s = loaded_slider_crank()
    p = s.default_parameters()
    x0, a0, th0, omega2 = _slider_crank_reference(p)
    beta0 = th0 + math.pi - a0
    lin = mbsfmu.linearize(s, at={"x": x0, "alpha": a0, "beta": beta0}, equilibrium=True,
                           symbolic=False)
    assert lin.n == 1 and len(lin.independent) == 1 and lin.states[1] == f"der({lin.independent[0]})"
    ev = np.linalg.eigvals(lin.A)
    got = -(ev**2).real
    assert np.max(np.abs(got - omega2)) < 1e-8 * omega2
    # the geometric stiffness of the loaded joints matters: without it the answer is wrong
    assert omega2 > 0 and lin.equilibrium
    # the same linear model with the independent coordinate named by the user
    lin_x = mbsfmu.linearize(s, at={"x": x0, "alpha": a0, "beta": beta0}, symbolic=False,
                             independent=["x"])
    assert lin_x.independent == ["x"]
    assert abs(-(np.linalg.eigvals(lin_x.A)**2).real[0] - omega2) < 1e-8 * omega2


# ------------------------------------------------------------------------ A against the engine
def _engine_rhs(system, values=None):
    eng = Engine(system)
    if values:
        eng.set(values)
    return eng.instance.rhs


def _fd_unconstrained(system, lin, inputs, eps=1e-6):
    """Central differences of x' = F(t, x) of the engine at the operating point, and of B."""
    y0 = np.array([float(lin.point[n]) for n in lin.coordinates])
    yd0 = np.array([float(lin.point[f"der({n})"]) for n in lin.coordinates])
    x0 = np.concatenate([y0, yd0])
    rhs = _engine_rhs(system, {n: float(lin.point[n]) for n in inputs})
    N = len(x0)
    A = np.zeros((N, N))
    for j in range(N):
        dx = np.zeros(N)
        dx[j] = eps
        A[:, j] = (rhs(0.0, x0 + dx) - rhs(0.0, x0 - dx)) / (2 * eps)
    B = np.zeros((N, len(inputs)))
    for j, name in enumerate(inputs):
        plus = _engine_rhs(system, {**{n: float(lin.point[n]) for n in inputs},
                                    name: float(lin.point[name]) + eps})(0.0, x0)
        minus = _engine_rhs(system, {**{n: float(lin.point[n]) for n in inputs},
                                     name: float(lin.point[name]) - eps})(0.0, x0)
        B[:, j] = (plus - minus) / (2 * eps)
    return A, B


def test_A_and_B_against_central_differences_of_the_engine_cart_pendulum():
    s = model("cart_pendulum")
    s.constants_["d"].value = 0.3        # damping enters D
    lin = mbsfmu.linearize(s, at={"x": 0.2, "theta": 0.3, "der(x)": 0.5, "der(theta)": -1.0,
                                  "F": 2.0}, symbolic=False)
    assert not lin.equilibrium
    A, B = _fd_unconstrained(s, lin, ["F"])
    assert np.max(np.abs(lin.A - A)) < 1e-6 * max(1.0, np.max(np.abs(A)))
    assert np.max(np.abs(lin.B - B)) < 1e-6
    np.testing.assert_allclose(lin.drift, _engine_rhs(s, {"F": 2.0})(0.0, [0.2, 0.3, 0.5, -1.0]),
                               rtol=1e-12, atol=1e-12)


def test_A_against_central_differences_of_the_engine_double_pendulum_moving():
    s = model("double_pendulum")
    lin = mbsfmu.linearize(s, at={"alpha": 0.4, "phi": 1.5, "der(alpha)": 0.7, "der(phi)": -0.2})
    num = lin.to_numeric()
    A, _ = _fd_unconstrained(s, num, [])
    assert np.max(np.abs(num.A - A)) < 1e-6 * max(1.0, np.max(np.abs(A)))


def _reduced_fd(system, lin, eps=1e-6):
    """Central differences of the engine's y_i'' on the constraint manifold, in the independent
    coordinates: the dependent ones solved from c(y) = 0 by Newton, velocities y' = J y_i'."""
    num = derive(system).numeric()
    names = lin.coordinates
    ind = [names.index(n) for n in lin.independent]
    dep = [k for k in range(len(names)) if k not in ind]
    y0 = np.array([float(lin.point[n]) for n in names])
    rhs = _engine_rhs(system)
    f, n = len(names), len(ind)

    def on_manifold(z):
        y = y0.copy()
        y[ind] = z
        for _ in range(30):
            c, C, _ = num.constraint_parts(0.0, y)
            if np.max(np.abs(c)) < 1e-15:
                break
            y[dep] -= np.linalg.solve(C[:, dep], c)
        _, C, _ = num.constraint_parts(0.0, y)
        J = np.zeros((f, n))
        J[ind] = np.eye(n)
        J[dep] = -np.linalg.solve(C[:, dep], C[:, ind])
        return y, J

    def reduced(z, zd):
        y, J = on_manifold(z)
        xd = rhs(0.0, np.concatenate([y, J @ zd]))
        return np.concatenate([zd, xd[f:][ind]])

    z0 = y0[ind]
    zd0 = np.array([float(lin.point[f"der({c})"]) for c in lin.independent])
    A = np.zeros((2 * n, 2 * n))
    for j in range(2 * n):
        d = np.zeros(2 * n)
        d[j] = eps
        A[:, j] = (reduced(z0 + d[:n], zd0 + d[n:]) - reduced(z0 - d[:n], zd0 - d[n:])) / (2 * eps)
    return A, reduced(z0, zd0)


@pytest.mark.parametrize("crank", [0.3, 2.2])
def test_A_against_central_differences_of_the_engine_slider_crank_off_equilibrium(crank):
    """A loaded slider-crank at rest away from an equilibrium: the geometric stiffness (lambda0)
    and the curvature term (ydd0) both enter K_r."""
    s = loaded_slider_crank()
    p = s.default_parameters()
    a = math.pi - math.asin(p["r"] * math.sin(crank) / p["l"])
    x = p["r"] * math.cos(crank) - p["l"] * math.cos(a)
    lin = mbsfmu.linearize(s, at={"x": x, "alpha": a, "beta": crank + math.pi - a}, symbolic=False)
    assert lin.n == 1 and not lin.equilibrium
    A, f0 = _reduced_fd(s, lin)
    assert np.max(np.abs(lin.A - A)) < 1e-6 * max(1.0, np.max(np.abs(A)))
    np.testing.assert_allclose(lin.drift, f0, rtol=1e-10, atol=1e-12)


def test_dependent_coordinates_are_solved_and_outputs_follow_the_constraints():
    s = loaded_slider_crank()
    lin = mbsfmu.linearize(s, at={"x": 0.55}, symbolic=False,
                           outputs=["alpha", "beta", "pin.x", "pin.y", "der(x)"])
    c, _, _ = derive(s).numeric().constraint_parts(0.0, [float(lin.point[n]) for n in lin.coordinates])
    assert np.max(np.abs(c)) < 1e-12
    # the coordinate outputs are the rows of J
    ind = lin.independent
    for row, name in enumerate(["alpha", "beta"]):
        np.testing.assert_allclose(lin.C[row, :lin.n], lin.J[lin.coordinates.index(name)], atol=1e-14)
    assert ind  # a named independent coordinate
    assert lin.C.shape == (5, 2) and lin.ss.D.shape == (5, 0)


def test_symbolic_set_value_stays_symbolic():
    a0 = sp.Symbol("a0", real=True)
    lin = mbsfmu.linearize(model("double_pendulum"), at={"alpha": a0, "phi": 0})
    assert a0 in lin.K.free_symbols
    num = lin.to_numeric(a0=0.0)
    ref = mbsfmu.linearize(model("double_pendulum"), symbolic=False)
    np.testing.assert_allclose(num.A, ref.A, atol=1e-12)
    with pytest.raises(ParameterError, match="a0"):
        lin.to_numeric()


# ------------------------------------------------------------------------ bad input
def test_operating_point_violating_the_constraints_names_the_constraint():
    with pytest.raises(ConstraintError, match=r"violates constraint 'pivot\.[xy]': residual"):
        mbsfmu.linearize(model("slider_crank"), at={"x": 0.6, "alpha": 2.9, "beta": 0.3})


@pytest.mark.parametrize("kw, match", [
    ({"inputs": ["G"]}, "unknown input"),
    ({"outputs": ["nope"]}, "unknown output 'nope'"),
    ({"at": {"psi": 0.1}}, "'psi' is no coordinate"),
    ({"outputs": ["theta", "der(psi)"]}, "unknown output 'der\\(psi\\)'"),
])
def test_unknown_names(kw, match):
    with pytest.raises(ParameterError, match=match):
        mbsfmu.linearize(model("cart_pendulum"), **kw)


def test_singular_mass_matrix_at_the_operating_point():
    s = mbsfmu.System("crank_slider_point")
    m = s.constant("m", 1.0)
    a = s.coordinate("a")
    s.body("slide", rel_pos=[sp.sin(a), 0, 0], mass=m, inertia=[0, 0, 0])
    mbsfmu.linearize(s, at={"a": 0.3})
    with pytest.raises(SingularMassMatrixError, match="singular at the operating point"):
        mbsfmu.linearize(s, at={"a": sp.pi / 2})


def test_not_an_equilibrium_when_one_is_asked_for():
    with pytest.raises(ParameterError, match=r"not an equilibrium.*theta''="):
        mbsfmu.linearize(model("cart_pendulum"), at={"theta": 0.2}, equilibrium=True)
    with pytest.raises(ParameterError, match="velocities"):
        mbsfmu.linearize(model("cart_pendulum"), at={"der(x)": 1.0}, equilibrium=True)
    lin = mbsfmu.linearize(model("cart_pendulum"), at={"theta": 0.2})
    assert not lin.equilibrium


def test_native_fmu_directional_derivatives_equal_the_feedthrough_D(tmp_path):
    """At the state a native FMU of the cart-pendulum has reached, its directional derivatives of
    the outputs by the input F (fmi2GetDirectionalDerivative, computed in C) equal the
    feed-through D of the symbolic linearization about that state: the drive power F x' has
    dD/dF = x', the rod's centre and the states none.  (B, the change of the accelerations, is
    not an output of a co-simulation FMU; the finite-difference tests above check it.)"""
    from fmu_support import Slave

    from mbsfmu.fmu.build import build_fmu

    s = model("cart_pendulum")
    path = build_fmu(s, tmp_path / "cart.fmu", kind="native")
    fmu = Slave(path, tmp_path)
    fmu.start()
    fmu.run(0.0, 40, 0.01, inputs=lambda t: {"F": 1.5})
    names = ["drive_power", "rod_centre.x", "rod_centre.z", "x", "der(theta)"]
    state = dict(zip(["x", "theta", "der(x)", "der(theta)"], fmu.get(["x", "theta", "der(x)", "der(theta)"])))
    d = np.array(fmu.fmu.getDirectionalDerivative([fmu.vr[n] for n in names], [fmu.vr["F"]], [1.0]))
    fmu.free()
    lin = mbsfmu.linearize(model("cart_pendulum"), at={**state, "F": 1.5}, inputs=["F"], outputs=names,
                           symbolic=False)
    np.testing.assert_allclose(d, np.asarray(lin.ss.D, float)[:, 0], rtol=1e-12, atol=1e-14)
    assert d[0] == pytest.approx(state["der(x)"], rel=1e-12) and state["der(x)"] > 0.1


def test_linear_and_nonlinear_fmus_in_one_diagram_agree_to_first_order(tmp_path):
    """The cart-pendulum hanging (theta = pi, an equilibrium) and its linearization, both
    exported as native FMUs through the same path (Linearization.to_system + build_fmu) and
    driven by one small sine force in one runner diagram: the linear FMU's deviations follow the
    nonlinear FMU's to first order -- their difference shrinks at least like the square of the
    input's amplitude (4x for half the amplitude; here 8x, since the hanging pendulum is odd in
    (F, x, theta - pi) and its second-order terms vanish), while the responses shrink like it."""
    from blocks import FMU, Sine
    from mbsfmu.fmu.build import build_fmu
    from mbsfmu.runner import Diagram

    s = model("cart_pendulum")
    lin = mbsfmu.linearize(s, at={"x": 0.0, "theta": math.pi, "F": 0.0}, inputs=["F"],
                           outputs=["rod_centre.x"], symbolic=False, equilibrium=True)
    nonlinear = build_fmu(s, tmp_path / "cart.fmu", kind="native")
    linear = build_fmu(lin.to_system(), tmp_path / "cart_linear.fmu", kind="native")
    tol = {"solver_rtol": 1e-10, "solver_atol": 1e-12}
    diffs, sizes = [], []
    for amplitude in (0.4, 0.2):
        d = Diagram(step=0.01)
        d.add("force", Sine(amplitude=amplitude, frequency=0.5))
        d.add("plant", FMU(nonlinear, parameters=tol, start_values={"theta": math.pi, "der(theta)": 0.0}))
        d.add("model", FMU(linear, parameters=tol))
        d.connect("force.y", "plant.F")
        d.connect("force.y", "model.F")
        res = d.run(3.0)
        nl = np.vstack([res["plant.x"], res["plant.theta"] - math.pi, res["plant.rod_centre.x"]])
        li = np.vstack([res["model.x"], res["model.theta"], res["model.rod_centre.x"]])
        sizes.append(np.max(np.abs(li)))
        diffs.append(np.max(np.abs(nl - li)))
    assert sizes[0] > 1e-2 and sizes[0] / sizes[1] == pytest.approx(2.0, rel=1e-9)  # the linear model
    assert diffs[0] < 1e-2 * sizes[0]
    assert diffs[0] / diffs[1] > 3.6, diffs


def test_to_system_needs_an_equilibrium():
    s = model("cart_pendulum")
    lin = mbsfmu.linearize(s, at={"x": 0.0, "theta": 0.3, "F": 0.0}, inputs=["F"], symbolic=False)
    with pytest.raises(ParameterError, match="to_system needs a linearization about an equilibrium"):
        lin.to_system()


def test_time_dependent_set_values_stay_symbolic_in_t():
    """Set values that are functions of time (a reference motion theta0(t) with its rate) give a
    time-varying linear model, symbolic in t; at any t it equals the linearization about the
    numbers theta0(t), theta0'(t) taken there."""
    s = model("cart_pendulum")
    t = s.t
    lin = mbsfmu.linearize(s, at={"x": 0, "theta": sp.sin(t) / 10, "der(theta)": sp.cos(t) / 10, "F": 0},
                           inputs=["F"])
    assert t in lin.free_symbols and not lin.equilibrium
    for tv in (0.0, 0.7, 2.0):
        ref = mbsfmu.linearize(model("cart_pendulum"), at={"x": 0, "theta": 0.1 * math.sin(tv),
                                                           "der(theta)": 0.1 * math.cos(tv), "F": 0,
                                                           "t": tv}, inputs=["F"], symbolic=False)
        got = lin.to_numeric(t=tv)
        np.testing.assert_allclose(got.A, ref.A, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got.B, ref.B, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("crank, rate", [(0.3, 4.0), (2.2, -7.5)])
def test_A_against_central_differences_of_the_engine_slider_crank_moving(crank, rate):
    """A loaded slider-crank at a moving operating point (crank turning at ``rate`` rad/s): the
    derivative of the velocity constraint (N), those of b'' by y and y' (P, Q) and the
    acceleration gamma0 = -C^+ b'' enter the reduced model; its A and drift equal central
    differences of the engine's right-hand side on the constraint manifold in the independent
    coordinate.  Rates that violate C y' = 0 are refused with the consistent values."""
    s = loaded_slider_crank()
    p = s.default_parameters()
    a = math.pi - math.asin(p["r"] * math.sin(crank) / p["l"])
    x = p["r"] * math.cos(crank) - p["l"] * math.cos(a)
    at = {"x": x, "alpha": a, "beta": crank + math.pi - a}
    with pytest.raises(ConstraintError, match=r"velocity constraint of .* they are der\(") as info:
        mbsfmu.linearize(s, at={**at, "der(beta)": rate}, symbolic=False, independent=["beta"])
    rates = dict(part.split(" = ") for part in str(info.value).split("they are ")[1].split(", "))
    given = {**at, "der(beta)": rate, **{k: float(v) for k, v in rates.items()}}
    lin = mbsfmu.linearize(s, at=given, symbolic=False, independent=["beta"])
    assert lin.n == 1 and not lin.equilibrium
    A, f0 = _reduced_fd(s, lin)
    assert np.max(np.abs(lin.A - A)) < 1e-6 * max(1.0, np.max(np.abs(A))), (lin.A, A)
    np.testing.assert_allclose(lin.drift, f0, rtol=1e-9, atol=1e-9)


def test_mass_matrix_entry_that_is_a_lone_constant():
    """A mass on a spring, M = [[m]]: the check of M at the point substituted the constant's
    number into the lone symbol m, which sympy returns as a Python float (no free_symbols; this
    used to end in an AttributeError).  f_n = sqrt(k/m)/(2 pi) = 1/pi for m = 2, k = 8."""
    s = mbsfmu.System("mass_on_a_spring")
    m, k = s.constants(m=2.0, k=8.0)
    x, = s.coordinates("x")
    s.body("B", rel_pos=[x, 0, 0], mass=m, inertia=[0, 0, 0])
    s.generalized_force("spring", "x", -k * x)
    lin = mbsfmu.linearize(s, at={"x": 0})
    assert lin.M0 == sp.Matrix([[m]]) and lin.K == sp.Matrix([[k]])
    assert lin.modes()[0].frequency_hz == pytest.approx(1 / np.pi, rel=1e-12)
