"""The Lagrangian front end (mbsfmu.LagrangianSystem, mbsfmu.equations.lagrange): the equations
it derives, runs against closed forms, and its bad inputs.

References are written here, independently of the derivation: the symbolic M, k, q of a particle
in polar coordinates; the damped, forced oscillator x(t) in closed form; the large-amplitude
pendulum by Jacobi's elliptic functions, sin(theta/2) = k sn(K(k^2) - w t | k^2) with
k = sin(theta0/2), w = sqrt(g/l) (released from rest at theta0); the kinetic energy
m |v_cg|^2 / 2 + w^T I w / 2 of a rigid body in a random motion, against the constant-mass-matrix
T of natural coordinates (mbsfmu.model.natural_coordinates, eq. 2).
"""

import math

import numpy as np
import pytest
import sympy as sp
from scipy.special import ellipj, ellipk

import mbsfmu
from mbsfmu import LagrangianSystem, ModelError, SingularMassMatrixError, derive

G = 9.81


# ---------------------------------------------------------------- the derived equations
def test_polar_particle_equations():
    """L = m/2 (r'^2 + r^2 th'^2) - V(r): M = diag(m, m r^2), k = (-m r th'^2, 2 m r r' th'),
    q = (-V'(r), Q_th) (M y'' = q - k as in Equations)."""
    s = LagrangianSystem("polar", dim=2)
    m, c = s.constants(m=2.0, c=3.0)
    r, th = s.coordinates("r", "th")
    rd, thd = (s.coordinates_[n].velocity for n in ("r", "th"))
    tau = s.input("tau")
    s.lagrangian(m / 2 * (rd**2 + r**2 * thd**2) - c * r**4)
    s.generalized_force("drive", "th", tau)
    eqs = derive(s)
    assert eqs.M == sp.Matrix([[m, 0], [0, m * r**2]])
    assert sp.expand(eqs.k - sp.Matrix([-m * r * thd**2, 2 * m * r * rd * thd])) == sp.zeros(2, 1)
    assert sp.expand(eqs.q - sp.Matrix([-4 * c * r**3, tau])) == sp.zeros(2, 1)
    # the Lagrangian's split: T = velocity terms, V = minus the rest
    assert sp.expand(eqs.kinetic_energy - m / 2 * (rd**2 + r**2 * thd**2)) == 0
    assert sp.expand(eqs.potential_energy - c * r**4) == 0
    assert eqs.m == 0


def test_rheonomic_kinetic_energy_and_constraint_conventions():
    """T = m/2 (x' - p')^2 with a time parameter p(t): k = -m p''; the constraint
    c = x - y - sin t has C = [1, -1], b' = -cos t and b'' = sin t (C y'' + b'' = c'')."""
    s = LagrangianSystem("belt", dim=2)
    m, = s.constants(m=1.5)
    x, y = s.coordinates("x", "y")
    xd, yd = (s.coordinates_[n].velocity for n in ("x", "y"))
    p = s.time_parameter("p", "t**2")
    pd = s.time_parameters["p"].velocity
    s.kinetic_energy(m / 2 * (xd - pd) ** 2 + m / 2 * yd**2)
    s.constraint("sync", x - y - sp.sin(s.t))
    eqs = derive(s)
    assert eqs.M == sp.diag(m, m)
    pdd = s.time_parameters["p"].acceleration
    assert sp.expand(eqs.k - sp.Matrix([-m * pdd, 0])) == sp.zeros(2, 1)
    ex = eqs.expanded
    assert ex(eqs.C) == sp.Matrix([[1, -1]])
    assert sp.simplify(ex(eqs.b1)[0] + sp.cos(s.t)) == 0
    assert sp.simplify(ex(eqs.b2)[0] - sp.sin(s.t)) == 0
    assert p in s._namespace.values()


# ---------------------------------------------------------------- closed forms
def _oscillator(m=2.0, k=50.0, c=0.8, F=3.0, x0=0.1, v0=-0.4, rest=0.5):
    """A point mass on a spring-damper to the origin, pushed along x by the input F: x(t) of the
    point minus (rest + F/k) is a damped oscillation."""
    s = LagrangianSystem("oscillator", dim=2)
    mm, kk, cc, L0 = s.constants(m=m, k=k, c=c, L0=rest)
    Fu = s.input("F", F)
    A = s.point("A", initial=(rest + x0, 0.0), velocity=(v0, 0.0))
    s.point_mass("mass", A, mm)
    s.spring_damper("spring", A, [0, 0], kk, cc, L0)
    s.point_force("push", A, [Fu, 0])
    s.point_output("A", A, velocity=True)

    def exact(t):
        w0, zeta = math.sqrt(k / m), c / (2 * math.sqrt(k * m))
        wd = w0 * math.sqrt(1 - zeta**2)
        u0 = x0 - F / k
        u = np.exp(-zeta * w0 * t) * (u0 * np.cos(wd * t) + (v0 + zeta * w0 * u0) / wd * np.sin(wd * t))
        return rest + F / k + u

    return s, exact


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_spring_damper_and_force_against_closed_form(backend):
    """Spring, damper and a force at a point with an input: |x - x_exact| <= 1e-9 over 3 s."""
    s, exact = _oscillator()
    res = mbsfmu.simulate(s, 3.0, 0.01, rtol=1e-11, atol=1e-13, backend=backend)
    err = float(np.max(np.abs(res["A_x"] - exact(res.t))))
    print(f"oscillator ({backend}): max |x - x_exact| = {err:.2e}")
    assert err < 1e-9
    assert np.max(np.abs(res["A_y"])) == 0.0
    # energy: T + V decreases exactly by the damper's work (here only its sign is checked)
    E = res.energy()["total"] - 3.0 * res["A_x"]  # the constant force's potential -F x
    assert np.all(np.diff(E) <= 1e-12)


def _pendulum_exact(t, theta0, length):
    k = math.sin(theta0 / 2)
    sn, _, _, _ = ellipj(ellipk(k**2) - math.sqrt(G / length) * t, k**2)
    return 2 * np.arcsin(k * sn)


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_pendulum_in_natural_coordinates_against_elliptic_solution(backend):
    """A point mass on a massless string of length l, natural coordinates (x, y) with
    |A|^2 - l^2 = 0: the position agrees with the elliptic solution to 1e-8 over 3 s."""
    theta0, length = 1.2, 0.8
    s = LagrangianSystem("pendulum", dim=2)
    m, l, g = s.constants(m=0.7, l=length, g=G)
    A = s.point("A", initial=(length * math.sin(theta0), -length * math.cos(theta0)))
    s.gravity([0, -g])
    s.point_mass("bob", A, m)
    s.distance("string", A, [0, 0], l)
    res = mbsfmu.simulate(s, 3.0, 0.01, rtol=1e-11, backend=backend)
    th = _pendulum_exact(res.t, theta0, length)
    err = max(float(np.max(np.abs(res["A_x"] - length * np.sin(th)))),
              float(np.max(np.abs(res["A_y"] + length * np.cos(th)))))
    print(f"natural pendulum ({backend}): max position error {err:.2e}, residual "
          f"{np.max(res.constraint_residual):.1e}, drift {res.relative_energy_drift():.1e}")
    assert err < 1e-8
    assert np.max(res.constraint_residual) < 1e-12
    assert res.relative_energy_drift() < 1e-9


def test_pendulum_from_a_lagrangian_against_elliptic_solution():
    """The same pendulum from L = m l^2 th'^2 / 2 + m g l cos th in its angle (no constraint)."""
    theta0, length = 1.2, 0.8
    s = LagrangianSystem("pendulum_angle")
    m, l, g = s.constants(m=0.7, l=length, g=G)
    th = s.coordinate("th", theta0)
    thd = s.coordinates_["th"].velocity
    s.lagrangian(m * l**2 * thd**2 / 2 + m * g * l * sp.cos(th))
    res = mbsfmu.simulate(s, 3.0, 0.01, rtol=1e-11, atol=1e-13, backend="numpy")
    err = float(np.max(np.abs(res["th"] - _pendulum_exact(res.t, theta0, length))))
    print(f"pendulum from L: max angle error {err:.2e}")
    assert err < 1e-8


# ---------------------------------------------------------------- rigid elements
def _energy_function(s):
    eqs = derive(s)
    f = sp.lambdify([s.y, s.yd, [c.symbol for c in s.constants_.values()]],
                    [eqs.expanded(eqs.kinetic_energy), eqs.expanded(eqs.potential_energy)])
    prm = [c.value for c in s.constants_.values()]
    return lambda y, yd: f(y, yd, prm)


def _rotation(rng):
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return Q * np.sign(np.linalg.det(Q))


def test_planar_rigid_body_energy():
    """2D element from a point and a second point (and from a point and a unit vector), with its
    centre of gravity off the line between them: T = m |v_cg|^2 / 2 + J w^2 / 2 and
    V = m g y_cg at random rigid motions (to 1e-13)."""
    X0, X1, Xc, J, m = np.array([0.3, -0.2]), np.array([1.1, 0.4]), np.array([0.5, 0.35]), 0.37, 2.5
    rng = np.random.default_rng(3)
    for second in ("point", "vector"):
        s = LagrangianSystem(f"plate_{second}", dim=2)
        g, = s.constants(g=G)
        s.gravity([0, -g])
        P = s.point("P", initial=(0, 0))
        if second == "point":
            B = s.point("B", initial=(1, 0))
            s.rigid_body("plate", m, points=[(P, X0), (B, X1)], cg=Xc, inertia=J)
        else:
            u = s.unit_vector("u", initial=(1, 0))
            U = (X1 - X0) / np.linalg.norm(X1 - X0)
            s.rigid_body("plate", m, points=[(P, X0)], vectors=[(u, U)], cg=Xc, inertia=J)
        energy = _energy_function(s)
        for _ in range(4):
            phi, w = rng.uniform(-3, 3), rng.normal()
            o, vo = rng.normal(size=2), rng.normal(size=2)
            R = np.array([[math.cos(phi), -math.sin(phi)], [math.sin(phi), math.cos(phi)]])
            Rd = w * np.array([[0, -1], [1, 0]]) @ R

            def at(X, R=R, Rd=Rd, o=o, vo=vo):  # position and velocity of the body point X
                return o + R @ (X - X0), vo + Rd @ (X - X0)

            second_pv = at(X1) if second == "point" else (R @ U, Rd @ U)
            y = np.concatenate((at(X0)[0], second_pv[0]))
            yd = np.concatenate((at(X0)[1], second_pv[1]))
            rc, vc = at(Xc)
            T, V = energy(y, yd)
            assert T == pytest.approx(m * vc @ vc / 2 + J * w**2 / 2, rel=1e-13)
            assert V == pytest.approx(m * G * rc[1], rel=1e-13, abs=1e-13)
        assert len(s.holonomic) == 1  # one distance (or the unit length), no duplicate


def test_spatial_rigid_body_energy():
    """3D element from two points and two unit vectors (a non-orthogonal basis) with a full
    inertia tensor: T = m |v_cg|^2 / 2 + w^T (Q I Q^T) w / 2 at random rigid motions."""
    X0, X1 = np.array([0.1, 0.2, -0.3]), np.array([0.9, 0.1, 0.2])
    U1, U2 = np.array([0.0, 1.0, 0.0]), np.array([0.6, 0.0, 0.8])
    Xc = np.array([0.4, 0.3, 0.1])
    I = np.array([[0.3, 0.01, 0.015], [0.01, 0.2, 0.05], [0.015, 0.05, 0.2]])  # seed 003 Table 6.29
    m = 15.0
    s = LagrangianSystem("carrier", dim=3)
    O = s.point("O", initial=(0, 0, 0))
    A = s.point("A", initial=(1, 0, 0))
    u = s.unit_vector("u", initial=(0, 1, 0))
    v = s.unit_vector("v", initial=(0, 0, 1))
    s.rigid_body("carrier", m, points=[(O, X0), (A, X1)], vectors=[(u, U1), (v, U2)], cg=Xc, inertia=I)
    # rigidity: |A - O|, u.u, v.v (the unit vectors' own constraints, not repeated), (A-O).u,
    # (A-O).v, u.v: six in all
    assert len(s.holonomic) == 6
    energy = _energy_function(s)
    rng = np.random.default_rng(5)
    for _ in range(4):
        Q, w, o, vo = _rotation(rng), rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
        W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        pos = [o, o + Q @ (X1 - X0), Q @ U1, Q @ U2]
        vel = [vo, vo + W @ Q @ (X1 - X0), W @ Q @ U1, W @ Q @ U2]
        vc = vo + W @ Q @ (Xc - X0)
        T, _ = energy(np.concatenate(pos), np.concatenate(vel))
        assert T == pytest.approx(m * vc @ vc / 2 + w @ (Q @ I @ Q.T) @ w / 2, rel=1e-12)


def test_spatial_body_on_a_spherical_joint_keeps_energy_and_constraints():
    """A 3D rigid body pinned at the fixed origin (its reference point; three unit vectors as
    coordinates, six rigidity constraints, 3 DOF) under gravity, started spinning: over 1 s
    the residual stays <= 1e-10 and the relative energy drift <= 1e-8 (engine, default 'qr')."""
    s = LagrangianSystem("gyro", dim=3)
    g, = s.constants(g=G)
    s.gravity([0, 0, -g])
    w0 = np.array([0.3, -1.0, 6.0])
    e = np.eye(3)
    vecs = [s.unit_vector(n, initial=e[i], velocity=np.cross(w0, e[i])) for i, n in enumerate("uvw")]
    s.rigid_body("top", 2.0, points=[([0, 0, 0], [0, 0, 0])], vectors=list(zip(vecs, e.tolist())),
                 cg=[0.05, 0.0, 0.3], inertia=[0.02, 0.03, 0.04])
    res = mbsfmu.simulate(s, 1.0, 0.01, rtol=1e-10, backend="c")
    print(f"spatial top: residual {np.max(res.constraint_residual):.1e}, drift "
          f"{res.relative_energy_drift():.1e}")
    assert np.max(res.constraint_residual) < 1e-10
    assert res.relative_energy_drift() < 1e-8
    assert res.stats["formulation"] == "qr"


def test_block_on_an_inclined_guide_in_3d():
    """A point mass Q on a 3D prismatic guide through the fixed point P along the unit vector u
    (normals n1, n2 perpendicular to u), under gravity: Q(t) = Q0 + (v0 t + (g.u) t^2 / 2) u,
    and the point output's position and velocity are those of Q (to 1e-9 over 1 s)."""
    u = np.array([2.0, 1.0, 2.0]) / 3.0
    n1 = np.array([1.0, -2.0, 0.0]) / math.sqrt(5.0)
    n2 = np.cross(u, n1)
    P, v0 = np.array([0.2, -0.1, 0.5]), 0.7
    s = LagrangianSystem("incline", dim=3)
    g, = s.constants(g=G)
    s.gravity([0, 0, -g])
    Q = s.point("Q", initial=P + 0.3 * u, velocity=v0 * u)
    s.point_mass("block", Q, 1.3)
    names = s.prismatic("guide", P, u, Q, normals=(n1, n2))
    assert names == ["guide_n1", "guide_n2"]
    s.point_output("Q", Q, velocity=True)
    res = mbsfmu.simulate(s, 1.0, 0.05, rtol=1e-11, backend="numpy")
    a = -G * u[2]
    dist = 0.3 + v0 * res.t + a * res.t**2 / 2
    exact = P[:, None] + u[:, None] * dist
    assert np.max(np.abs(res.y - exact)) < 1e-9
    outputs = res.numeric.expression_outputs
    out = np.array([outputs(t, res.y[:, i], res.yd[:, i]) for i, t in enumerate(res.t)])
    assert np.array_equal(out[:, :3], res.y.T) and np.array_equal(out[:, 3:], res.yd.T)
    assert np.max(np.abs(out[:, 3:] - (u[None, :] * (v0 + a * res.t)[:, None]))) < 1e-9


def test_constraint_helpers():
    """distance, perpendicular, unit_length and the planar prismatic joint write the seed's
    expressions (sec. 2.5); an element's constraint identical to an existing one is not added."""
    s = LagrangianSystem("helpers", dim=2)
    ell, = s.constants(ell=2.0)
    A, B = s.point("A", (0, 0)), s.point("B", (1, 0))
    u, v = s.unit_vector("u", (1, 0)), s.unit_vector("v", (0, 1))
    s.distance("AB", A, B, ell)
    s.perpendicular("uv", u, v)
    s.prismatic("slide", A, u, B, v=v)
    s.rod("rod", A, B, 1.0, length=ell)  # the same distance: no second row
    (ax, ay), (bx, by), (ux, uy), (vx, vy) = A, B, u, v
    expected = {"u_unit": ux**2 + uy**2 - 1, "v_unit": vx**2 + vy**2 - 1,
                "AB": (ax - bx) ** 2 + (ay - by) ** 2 - ell**2, "uv": ux * vx + uy * vy,
                "slide_line": (bx - ax) * uy - (by - ay) * ux, "slide_parallel": ux * vy - uy * vx}
    got = {h.name: h.expression for h in s.holonomic}
    assert list(got) == list(expected)
    assert all(sp.expand(got[n] - e) == 0 for n, e in expected.items())


# ---------------------------------------------------------------- bad input
def _two_points():
    s = LagrangianSystem("bad", dim=2)
    m, = s.constants(m=1.0)
    A = s.point("A", initial=(1, 0))
    return s, m, A, s.velocity(A)


def _not_in_T():
    s, m, A, Ad = _two_points()
    s.coordinate("z")
    s.kinetic_energy(m * (Ad.T * Ad) / 2)  # a 1 x 1 matrix is taken as its entry
    derive(s)


def _nonholonomic():
    s, m, A, Ad = _two_points()
    s.constraint("rolling", Ad[0] - A[1] * Ad[1])


def _unknown(kind):
    s, m, A, Ad = _two_points()
    z = sp.Symbol("zeta", real=True)
    getattr(s, kind)(z * A[0] ** 2) if kind != "constraint" else s.constraint("c1", z * A[0])


def _rigid(local):
    """A 2D rigid body on the point A and fixed points, with the given local coordinates."""
    s, m, A, Ad = _two_points()
    pvs = [A, [0, 0], [1, 1]][: len(local)]
    s.rigid_body("b", m, points=list(zip(pvs, local)))


def _quartic():
    s, m, A, Ad = _two_points()
    s.kinetic_energy(m * Ad[0] ** 4 + m * Ad[1] ** 2)
    derive(s)


BAD = [
    ("Lagrangian is a vector", lambda: _two_points()[0].lagrangian(sp.Matrix([1, 2])), ModelError,
     r"Lagrangian 'L' must be a scalar, got a 2 x 1 matrix"),
    ("T is a list", lambda: _two_points()[0].kinetic_energy([1, 2], name="T_rod"), ModelError,
     r"kinetic energy 'T_rod' must be a scalar, got a list of 2"),
    ("V is a matrix", lambda: _two_points()[0].potential_energy(sp.eye(2)), ModelError,
     r"potential energy 'V' must be a scalar, got a 2 x 2 matrix"),
    ("coordinate not in T", _not_in_T, SingularMassMatrixError,
     r"mass matrix is singular: the velocity of coordinate\(s\) 'z' appears in no term of the "
     r"kinetic energy"),
    ("velocity-dependent constraint", _nonholonomic, ModelError,
     r"constraint 'rolling' is velocity-dependent \(it contains DA_x, DA_y\).*a constraint on the "
     r"velocities A\(y, t\) y' \+ a\(y, t\) = 0 is a nonholonomic_constraint\(\)"),
    ("unknown symbol in T", lambda: _unknown("kinetic_energy"), ModelError,
     r"kinetic energy 'T': unknown symbol\(s\) zeta"),
    ("unknown symbol in V", lambda: _unknown("potential_energy"), ModelError,
     r"potential energy 'V': unknown symbol\(s\) zeta"),
    ("unknown symbol in c", lambda: _unknown("constraint"), ModelError,
     r"constraint 'c1': unknown symbol\(s\) zeta"),
    ("T not quadratic", _quartic, ModelError, r"not quadratic in the velocities.*depends on DA_x"),
    ("V with velocities", lambda: _two_points()[0].potential_energy(_two_points()[3][0] ** 2),
     ModelError, r"potential energy 'V'.*velocity-dependent potentials belong in lagrangian\(\).*DA_x"),
    ("R without velocities", lambda: _two_points()[0].dissipation(_two_points()[2][0] ** 2), ModelError,
     r"dissipation function 'R'.*depends on no velocity"),
    ("input in T", lambda: (lambda s: s.kinetic_energy(s.input("u") * s.velocity(s.y[0]) ** 2))(
        _two_points()[0]), ModelError, r"kinetic energy 'T': T may depend on .* not on u"),
    ("frame output", lambda: _two_points()[0].frame_output("A"), ModelError,
     r"frame_output\(\) is not available in a LagrangianSystem.*use point_output\(\)"),
    ("body", lambda: _two_points()[0].body("B", mass=1), ModelError,
     r"body\(\) is not available.*rigid_body\(\), rod\(\) or point_mass\(\)"),
    ("flexible body", lambda: _two_points()[0].flexible_body("B", data="beam.json"), ModelError,
     r"flexible_body\(\) is not available in a LagrangianSystem.*use a System"),
    ("point with 3 components in 2D", lambda: _two_points()[0].point("B", initial=(1, 2, 3)), ModelError,
     r"point 'B': initial position needs 2 components, got 3"),
    ("rod end with 3 components", lambda: (lambda s: s.rod("r", s.y, [0, 0, 0], 1.0))(_two_points()[0]),
     ModelError, r"rod 'r' end b: a point or vector of 2 components is needed, got 3"),
    ("rigid body with 3 PVs in 2D", lambda: _rigid([(0, 0), (1, 0), (1, 1)]), ModelError,
     r"rigid body 'b': a 2D rigid element needs 2 basic points"),
    ("degenerate rigid body", lambda: _rigid([(1, 1), (1, 1)]), ModelError,
     r"rigid body 'b': the basic points and vectors 'A' \(local \(1, 1\)\), point 1 \(local "
     r"\(1, 1\)\) are degenerate"),
    ("dim", lambda: LagrangianSystem("d", dim=4), ModelError, r"dim must be 2 or 3, got 4"),
    ("3D prismatic without normals",
     lambda: (lambda s: s.prismatic("slide", [0, 0, 0], [1, 0, 0], s.point("Q", (1, 0, 0))))(
         LagrangianSystem("p3")), ModelError, r"prismatic joint 'slide': a 3D prismatic joint needs normals"),
]


@pytest.mark.parametrize("case,make,exc,pattern", BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_the_culprit(case, make, exc, pattern):
    with pytest.raises(exc, match=pattern):
        make()


def test_singular_mass_matrix_is_reported_by_simulate_too():
    """The structural check runs wherever the equations are first needed (here simulate)."""
    s, m, A, Ad = _two_points()
    s.kinetic_energy(m * Ad[0] ** 2 / 2)
    with pytest.raises(SingularMassMatrixError, match=r"'A_y'"):
        mbsfmu.simulate(s, 0.1, backend="numpy")
