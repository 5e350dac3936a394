"""Natural coordinates as seed 003 writes them (issue 23 item 9), each against an independent
reference:

* the rigid element from three basic points (seed 003 sec. 2.2: O, A on the local x axis, B in
  the local x-y plane; the wheel carrier of sec. 6.3): its kinetic energy equals the seed's
  T = 1/2 m |C'|^2 + 1/2 w^T I w (sec. 2.4, w from the frame Q = [x y x*y] of eqs. 2.2.3-2.2.4,
  written out here with numpy) at random rigid motions; its equations from the quadratic form
  equal those of the same T differentiated as an expression, at random states off the
  constraint manifold too; a heavy top built from it (with a body point in a spring and an
  output) follows the same top in the System front end (Cardan angles) to 1e-8;
* a coordinate without mass: a crank given only by its moment of inertia about its pivot
  (T = J w^2 / 2 with w = (x y' - y x') / r^2, seed 003 sec. 2.4's rotational term on its own,
  whose mass matrix is singular in the radial direction), driving a slider through a massless
  rod: against the one-degree-of-freedom equation integrated with scipy, with every
  formulation that needs only the reduced mass matrix, on both backends; the formulations that
  factor M refuse it by name; without the slider's mass the crank turns uniformly (closed form);
* redundant element constraints warn when they are added, identical ones are left out;
* force elements and elements (bodies) have separate namespaces; the helpers are public.
"""

import math
import warnings

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

import mbsfmu
from mbsfmu import (
    LagrangianSystem,
    ModelError,
    ParameterError,
    RedundantConstraintWarning,
    System,
    cardan,
    derive,
)
from mbsfmu.core.errors import SingularMassMatrixError
from mbsfmu.natural import cross, cross2, dot, perp


def _rotation(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q @ np.diag(np.sign(np.diag(r)))
    return q if np.linalg.det(q) > 0 else -q


# ---------------------------------------------------------------- the three-point element
LOCAL = {"O": np.array([0.1, -0.2, 0.05]), "A": np.array([0.6, -0.1, 0.05]),
         "B": np.array([0.2, 0.4, 0.05])}       # O, A, B not on one line, not axis-aligned
MASS, CG = 2.5, np.array([0.3, 0.1, -0.2])
INERTIA = np.array([[0.05, 0.004, -0.003], [0.004, 0.04, 0.002], [-0.003, 0.002, 0.02]])


def _three_point_body(points=None):
    s = LagrangianSystem("three_points", dim=3)
    pts = points or {n: s.point(n, initial=LOCAL[n]) for n in "OAB"}
    s.rigid_body("body", MASS, points=[(pts[n], list(LOCAL[n])) for n in "OAB"], cg=list(CG),
                 inertia=INERTIA.tolist())
    return s, pts


def _seed_kinetic_energy(R, r0, w, v0):
    """Seed 003 sec. 2.4 for the rigid motion X -> r0 + R (X - X_O) with angular velocity w
    (world components) and velocity v0 of O: the frame Q = [x y z] of the element's own local
    axes (x along A - O, y in the plane of O A B, z = x * y: eqs. 2.2.3-2.2.4), the body
    angular velocity Q^T w and T = 1/2 m |C'|^2 + 1/2 w_b^T I_b w_b with I_b the inertia in
    those axes."""
    ex = LOCAL["A"] - LOCAL["O"]
    ex = ex / np.linalg.norm(ex)
    ey = LOCAL["B"] - LOCAL["O"] - np.dot(LOCAL["B"] - LOCAL["O"], ex) * ex
    ey = ey / np.linalg.norm(ey)
    Q0 = np.column_stack([ex, ey, np.cross(ex, ey)])     # local axes in the element's frame
    c_dot = v0 + np.cross(w, R @ (CG - LOCAL["O"]))
    Q = R @ Q0                                            # the seed's frame, world components
    w_b = Q.T @ w
    I_b = Q0.T @ INERTIA @ Q0
    return 0.5 * MASS * c_dot @ c_dot + 0.5 * w_b @ I_b @ w_b


def test_three_point_element_kinetic_energy_is_the_seeds():
    """At five random rigid motions the element's T (eq. 2 with w3 = e1 x e2) equals seed 003's
    1/2 m |C'|^2 + 1/2 w^T I w to 1e-12 relative; the element adds the three rigidity
    constraints of the seed's wheel carrier (C1-C3) and its mass matrix depends on the
    coordinates (three PVs, as the seed says)."""
    s, pts = _three_point_body()
    T = next(t.expression for t in s.energy_terms if t.name == "body")
    assert [h.name for h in s.holonomic] == ["body_e1e1", "body_e1e2", "body_e2e2"]
    rng = np.random.default_rng(5)
    for _ in range(5):
        R, r0 = _rotation(rng), rng.normal(size=3)
        w, v0 = rng.normal(size=3) * 3, rng.normal(size=3)
        values = {}
        for n in "OAB":
            r = r0 + R @ (LOCAL[n] - LOCAL["O"])
            v = v0 + np.cross(w, r - r0)
            for k, ax in enumerate("xyz"):
                values[sp.Symbol(f"{n}_{ax}", real=True)] = r[k]
                values[sp.Symbol(f"D{n}_{ax}", real=True)] = v[k]
        want = _seed_kinetic_energy(R, r0, w, v0)
        assert abs(float(T.xreplace(values)) - want) < 1e-12 * want
    M = derive(s).expanded(derive(s).M)
    assert M.free_symbols & set(s.y)


@pytest.mark.slow
def test_quadratic_form_equations_equal_the_differentiated_energy():
    """M and q - k of the element (from its quadratic form, over intermediate variables) equal
    those of the same T given as an expression and differentiated (kinetic_energy), at random
    states away from the constraint manifold (1e-10 relative)."""
    s, _ = _three_point_body()
    ref = LagrangianSystem("three_points_ref", dim=3)
    for n in "OAB":
        ref.point(n, initial=LOCAL[n])
    ref.kinetic_energy(next(t.expression for t in s.energy_terms if t.name == "body"))
    a, b = derive(s).numeric(), derive(ref).numeric()
    rng = np.random.default_rng(11)
    for _ in range(3):
        y, yd = rng.normal(size=9), rng.normal(size=9)
        (Ma, ha), (Mb, hb) = a.mass_and_force(0.0, y, yd), b.mass_and_force(0.0, y, yd)
        assert np.max(np.abs(Ma - Mb)) < 1e-10 * np.max(np.abs(Mb))
        assert np.max(np.abs(ha - hb)) < 1e-10 * np.max(np.abs(hb))


def test_collinear_basic_points_are_refused_by_name():
    s = LagrangianSystem("line", dim=3)
    O, A, B = (s.point(n, initial=(k, 0, 0)) for k, n in enumerate("OAB"))
    with pytest.raises(ModelError, match=r"rigid body 'bar': its basic points and vectors 'O' \(local "
                                         r"\(0, 0, 0\)\), 'A' \(local \(1, 0, 0\)\), 'B' \(local \(2, 0, "
                                         r"0\)\) are collinear"):
        s.rigid_body("bar", 1.0, points=[(O, [0, 0, 0]), (A, [1, 0, 0]), (B, [2, 0, 0])])
    assert not s.holonomic and not s.energy_terms and "bar" not in s.elements


# ---------------------------------------------------------------- heavy top: both front ends
TOP_CG, TOP_X, ANCHOR = [0.1, 0.05, 0.3], [0.2, -0.1, 0.4], [0.3, 0.2, 0.5]


def _top_relative():
    s = System("top_relative")
    a, b, c = s.coordinates("a", "b", "c")
    s.initial(a=0.3, b=-0.2, c=0.5, Da=1.0, Db=-2.0, Dc=8.0)
    s.gravity([0, 0, -9.81])
    s.body("top", rel_rot=cardan(a, b, c), cg_pos=TOP_CG, mass=MASS, inertia=INERTIA.tolist())
    s.frame("X", ref="top", rel_pos=TOP_X)
    s.frame("anchor", rel_pos=ANCHOR)
    s.spring_damper("spring", "X", "anchor", stiffness=20.0, rest_length=0.1)
    s.frame_output("X")
    return s


def _top_natural(R0, w0):
    """The top from three basic points: the fixed point (the origin, not a coordinate) and two
    points A, B of the body; the point X is a body point, the end of the spring and an output."""
    s = LagrangianSystem("top_natural", dim=3)
    s.gravity([0, 0, -9.81])
    la, lb = [0.5, 0.0, 0.0], [0.3, 0.4, 0.0]
    A = s.point("A", initial=R0 @ la, velocity=np.cross(w0, R0 @ la))
    B = s.point("B", initial=R0 @ lb, velocity=np.cross(w0, R0 @ lb))
    s.rigid_body("top", MASS, points=[([0, 0, 0], [0, 0, 0]), (A, la), (B, lb)], cg=TOP_CG,
                 inertia=INERTIA.tolist())
    X = s.body_point("top", TOP_X)
    s.spring_damper("spring", X, ANCHOR, stiffness=20.0, rest_length=0.1)
    s.point_output("X", X)
    s.output("axis_z", s.body_vector("top", [0, 0, 1])[2], "z component of the body's z axis")
    return s


def test_heavy_top_from_three_points_follows_the_relative_model():
    """Over 1 s at rtol 1e-11 the body point X of the natural model (three-point element, qr,
    engine) stays within 1e-8 of the frame X of the relative model; the body's z axis
    (body_vector) is the third column of the relative model's rotation; energy drift < 1e-9."""
    ref = mbsfmu.simulate(_top_relative(), 1.0, 0.01, rtol=1e-11, backend="c")
    top = ref.frame("top")
    nat = mbsfmu.simulate(_top_natural(top["rotation"][0], top["angular_velocity"][0]), 1.0, 0.01,
                          rtol=1e-11, backend="c")
    err = max(float(np.max(np.abs(nat[f"X.{ax}"] - ref[f"X.{ax}"]))) for ax in "xyz")
    err_axis = float(np.max(np.abs(nat["axis_z"] - top["rotation"][:, 2, 2])))
    print(f"heavy top: body point {err:.1e}, axis {err_axis:.1e}, drift {nat.relative_energy_drift():.1e}, "
          f"residual {np.max(nat.constraint_residual):.1e}")
    assert np.ptp(ref["c"]) > 3.0                 # it spins, and precesses
    assert err < 1e-8 and err_axis < 1e-8
    assert nat.relative_energy_drift() < 1e-9


# ---------------------------------------------------------------- redundant element constraints
def _rod_pair(length):
    s = LagrangianSystem("pair", dim=2)
    ell, = s.constants(ell=1.0)
    A = s.point("A", initial=(0, 0))
    B = s.point("B", initial=(1, 0))
    s.distance("AB", A, B, ell if length == "symbol" else 1.0)
    return s, A, B


def test_identical_element_constraint_is_left_out_silently():
    s, A, B = _rod_pair("number")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.rigid_body("bar", 1.0, points=[(A, [0, 0]), (B, [1, 0])], cg=[0.5, 0], inertia=0.1)
    assert [h.name for h in s.holonomic] == ["AB"]


def test_redundant_element_constraint_warns_when_added():
    """|B - A|^2 = 1 of the element and |A - B|^2 = ell^2 of the distance (ell = 1) are not the
    same expression, but the same condition at the start: the element's is added with a
    warning naming both; projection then refuses the model (as it did without a word before),
    qr runs it."""
    s, A, B = _rod_pair("symbol")
    with pytest.warns(RedundantConstraintWarning, match=r"pair: the constraint 'bar_e1e1' that rigid "
                      r"body 'bar' adds is redundant at the initial configuration: its gradient is a "
                      r"combination of those of 'AB'; only the formulations 'qr' and 'svd'"):
        s.rigid_body("bar", 1.0, points=[(A, [0, 0]), (B, [1, 0])], cg=[0.5, 0], inertia=0.1)
    assert [h.name for h in s.holonomic] == ["AB", "bar_e1e1"]
    s.initial(DB_y=1.0)
    with pytest.raises(mbsfmu.ConstraintError, match=r"redundant"):
        mbsfmu.simulate(s, 0.1, backend="numpy", formulation="projection")
    assert mbsfmu.simulate(s, 0.1, backend="numpy", formulation="qr").constraint_residual.max() < 1e-10


# ---------------------------------------------------------------- coordinates without mass
R_CRANK, L_ROD, J_CRANK, M_SLIDER = 0.15, 0.5, 0.3 * 0.15**2 / 3, 1.0
W0 = 2 * math.pi


def _crank_slider(m_slider=M_SLIDER):
    """A crank O P given only by its moment of inertia J about O, a massless rod P B and a
    slider B (point mass, or none) on the x axis: P_r and B_y move no mass."""
    s = LagrangianSystem("crank_slider", dim=2)
    r, l, J = s.constants(r=R_CRANK, l=L_ROD, J=J_CRANK)
    c = math.cos(math.pi / 4)
    px = py = R_CRANK * c
    P = s.point("P", (px, py), (-W0 * py, W0 * px))
    B = s.point("B", (px + math.sqrt(L_ROD**2 - py**2), 0.0), guess=True)
    w = cross2(P, s.rates(P)) / r**2
    s.kinetic_energy(J * w**2 / 2, "crank")
    s.distance("crank_length", [0, 0], P, r)
    s.distance("rod_length", P, B, l)
    s.prismatic("guide", [0, 0], [1, 0], B)
    if m_slider:
        s.point_mass("slider", B, m_slider)
    return s


def _crank_angle_reference(t):
    """The crank angle th of J th'' + m x'(th) (x'(th) th'' + x''(th) th'^2) = 0, x(th) =
    r cos th + sqrt(l^2 - r^2 sin^2 th), with th(0) = pi/4 and the rate that the initial
    crank speed W0 gives (scipy, rtol 1e-13)."""
    r, l, J, m = R_CRANK, L_ROD, J_CRANK, M_SLIDER

    def x1(th):
        s_, c_ = math.sin(th), math.cos(th)
        return -r * s_ - r**2 * s_ * c_ / math.sqrt(l**2 - r**2 * s_**2)

    def x2(th, h=1e-6):
        return (x1(th + h) - x1(th - h)) / (2 * h)

    def rhs(_, z):
        th, om = z
        return [om, -m * x1(th) * x2(th) * om**2 / (J + m * x1(th) ** 2)]

    return solve_ivp(rhs, (0.0, float(t[-1])), [math.pi / 4, W0], method="DOP853", rtol=1e-13,
                     atol=1e-13, t_eval=t).y[0]


@pytest.mark.parametrize("backend,formulation", [("numpy", "qr"), ("c", "qr"), ("c", "svd"),
                                                 ("c", "partition"), ("numpy", "partition")])
def test_crank_given_only_by_its_inertia_against_one_dof_reference(backend, formulation):
    """M is singular (the crank's radial direction and B_y move no mass), the augmented system
    regular: the formulations that work with the reduced mass matrix follow the 1-DOF crank
    angle to 1e-7 over 1 s (rtol 1e-10) and keep the energy to 1e-8."""
    s = _crank_slider()
    res = mbsfmu.simulate(s, 1.0, 0.01, rtol=1e-10, backend=backend, formulation=formulation)
    th = np.unwrap(np.arctan2(res["P_y"], res["P_x"]))
    err = float(np.max(np.abs(th - _crank_angle_reference(res.t))))
    print(f"crank ({backend}, {formulation}): angle error {err:.1e}, drift {res.relative_energy_drift():.1e}")
    assert err < 1e-7
    assert res.relative_energy_drift() < 1e-8


@pytest.mark.parametrize("formulation", ["dae", "baumgarte", "projection"])
def test_formulations_that_factor_the_mass_matrix_refuse_it_by_name(formulation, tmp_path):
    pattern = (rf"crank_slider: formulation '{formulation}' needs a regular mass matrix \(it factors "
               r"M itself\), but the mass matrix is singular \(.* would move no mass\); choose one of "
               r"qr, svd, partition")
    for backend in ("numpy", "c"):
        with pytest.raises(ParameterError, match=pattern):
            mbsfmu.simulate(_crank_slider(), 0.1, backend=backend, formulation=formulation)
    from mbsfmu.fmu.native import build_native_fmu

    with pytest.raises(ParameterError, match=pattern):
        build_native_fmu(_crank_slider(), tmp_path / "crank.fmu", formulation=formulation)
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_native_fmu_runs_the_crank_given_only_by_its_inertia(tmp_path):
    """The native FMU ('qr', its C instance works with J^T M J too) runs the crank with its
    singular mass matrix and takes the same steps as simulate's engine (1e-10)."""
    fmpy = pytest.importorskip("fmpy")
    from mbsfmu.fmu.native import build_native_fmu

    path = build_native_fmu(_crank_slider(), tmp_path / "crank.fmu")
    r = fmpy.simulate_fmu(str(path), stop_time=0.5, output_interval=0.01,
                          start_values={"solver_rtol": 1e-10, "solver_atol": 1e-12})
    ref = mbsfmu.simulate(_crank_slider(), 0.5, 0.01, rtol=1e-10, atol=1e-12, backend="c")
    for name in ("P_x", "P_y", "B_x"):
        assert np.max(np.abs(r[name] - ref[name])) < 1e-10, name


def test_massless_linkage_turns_uniformly():
    """Without the slider's mass nothing but the crank's inertia moves: B_x, B_y have no mass at
    all (in no term of T), and the crank turns at W0 (closed form, 1e-8 over 1 s)."""
    res = mbsfmu.simulate(_crank_slider(m_slider=0), 1.0, 0.05, rtol=1e-10, backend="c")
    th = np.unwrap(np.arctan2(res["P_y"], res["P_x"]))
    assert np.max(np.abs(th - (math.pi / 4 + W0 * res.t))) < 1e-8


def test_a_massless_coordinate_nothing_fixes_is_named():
    s = _crank_slider()
    s.point("Z", initial=(0.0, 1.0))                 # no mass, no constraint
    with pytest.raises(SingularMassMatrixError, match=r"'Z_x', 'Z_y' appears in no term of the kinetic "
                                                      r"energy T and in no constraint"):
        derive(s)
    s = _crank_slider()
    Z = s.point("Z", initial=(0.0, 1.0))
    s.distance("Z_radius", [0, 0], Z, 1.0)            # constrained, but its angle moves no mass
    with pytest.raises(SingularMassMatrixError, match=r"mass matrix reduced by the constraints is "
                                                      r"singular \(coordinate 'Z_x' would move no mass "
                                                      r"and no constraint fixes it\) at t=0"):
        mbsfmu.simulate(s, 0.1, backend="numpy")


# ---------------------------------------------------------------- names and public helpers
def test_force_elements_and_bodies_have_their_own_namespaces():
    """A spring and a rod, a force and a point, a spring and a constant may share a name (as a
    System's spring and body may); within one namespace a name is still unique."""
    s = LagrangianSystem("names", dim=2)
    k, = s.constants(k=10.0)
    A = s.point("A", initial=(1.0, 0.0))
    s.rod("link", [0, 0], A, 1.0, length=1.0)
    s.spring_damper("link", A, [2, 0], stiffness=k)
    s.spring_damper("k", A, [0, 2], stiffness=k)
    s.point_force("A", A, [0, -1])
    with pytest.raises(ModelError, match=r"duplicate name 'link': already used by spring-damper 'link'"):
        s.point_force("link", A, [1, 0])
    with pytest.raises(ModelError, match=r"duplicate name 'A': already used by point 'A'"):
        s.point_mass("A", A, 1.0)
    assert [e.name for e in s.point_springs] == ["link", "k"]


def test_helpers_and_rates_are_public():
    assert mbsfmu.natural.dot is dot
    s = LagrangianSystem("helpers", dim=2)
    A = s.point("A", initial=(1.0, 2.0))
    assert s.rates(A) == sp.Matrix(sp.symbols("DA_x DA_y", real=True))
    assert s.rates("A") == s.rates(A) and s.rates(A[0]) == sp.Symbol("DA_x", real=True)
    assert perp([1, 2]) == sp.Matrix([-2, 1]) and cross2([1, 0], [0, 1]) == 1
    assert cross([1, 0, 0], [0, 1, 0]) == sp.Matrix([0, 0, 1])
