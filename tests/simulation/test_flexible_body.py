"""Flexible bodies (issue 15 items 1 and 3): System.flexible_body with modal data
(mbsfmu.model.elastic) and their equations (mbsfmu.equations.flexible), checked against
independent references: the same particles written with the rigid-body API, energy
conservation, the loop formulations, the native FMU and the numpy backend."""

import numpy as np
import pytest

import mbsfmu
from mbsfmu import derive
from mbsfmu.core.errors import ModelError
from mbsfmu.model import System, cardan, rot_x, rot_y, rot_z
from mbsfmu.model.elastic import ModalData, from_fe, save

G = 9.81


def lumped(seed=0, N=4, n=2, rot_inertia=0.0, planar=False):
    """(node positions X, masses m, mode shapes Phi (6N x n), modal data) of point masses at
    random nodes with random mode shapes (``rot_inertia``: a rotational mass at every node and
    random rotational mode shapes; ``planar``: nodes and shapes in the x-y plane, rotations
    about z)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (N, 3))
    m = rng.uniform(0.5, 2.0, N)
    M_fe = np.zeros((6 * N, 6 * N))
    Phi = np.zeros((6 * N, n))
    for i in range(N):
        M_fe[6 * i:6 * i + 3, 6 * i:6 * i + 3] = m[i] * np.eye(3)
        M_fe[6 * i + 3:6 * i + 6, 6 * i + 3:6 * i + 6] = rot_inertia * np.diag(rng.uniform(0.5, 1.5, 3))
        Phi[6 * i:6 * i + 3] = 0.3 * rng.normal(size=(3, n))
        if rot_inertia:
            Phi[6 * i + 3:6 * i + 6] = 0.3 * rng.normal(size=(3, n))
    if planar:
        X[:, 2] = 0.0
        Phi[2::6] = Phi[3::6] = Phi[4::6] = 0.0
    A = rng.normal(size=(6 * N, 6 * N))
    K_fe = 20.0 * (A @ A.T) / (6 * N)
    return X, m, Phi, from_fe(M_fe, K_fe, X, Phi)


def spatial_flexible(data, stiffening=False):
    s = System("flex_spatial")
    x, z, a, b, c = s.coordinates("x", "z", "a", "b", "c")
    s.gravity([0, 0, -G])
    s.flexible_body("P1", rel_pos=[x, 0, z], rel_rot=cardan(a, b, c), data=data,
                    geometric_stiffening=stiffening)
    return s


def spatial_particles(X, m, Phi, data):
    """The same system with the rigid-body API: point masses in R at X_i + Phi_i q, and the
    elastic forces -Ke q as generalized forces."""
    s = System("particles_spatial")
    x, z, a, b, c = s.coordinates("x", "z", "a", "b", "c")
    q = s.coordinates("P1_q01", "P1_q02")
    s.gravity([0, 0, -G])
    s.frame("R", rel_pos=[x, 0, z], rel_rot=cardan(a, b, c))
    for i in range(len(m)):
        pos = [float(X[i, d]) + sum(float(Phi[6 * i + d, j]) * q[j] for j in range(2)) for d in range(3)]
        s.body(f"p{i}", ref="R", rel_pos=pos, mass=float(m[i]), inertia=[0, 0, 0])
    for j in range(2):
        s.generalized_force(f"elastic{j}", f"P1_q0{j + 1}",
                            -sum(float(data.Ke[j, k]) * q[k] for k in range(2)))
    return s


def test_particle_equivalence_M_k_q():
    """Exact for point masses: Mbar(q) of from_fe is their mass matrix (J to second order is
    exact), so M and q - k equal the rigid-body API's to rounding at random states."""
    X, m, Phi, data = lumped()
    flex = derive(spatial_flexible(data)).numeric()
    ref = derive(spatial_particles(X, m, Phi, data)).numeric()
    rng = np.random.default_rng(5)
    for _ in range(5):
        y, yd, t = rng.normal(size=7), rng.normal(size=7), float(rng.uniform())
        Mf, hf = flex.mass_and_force(t, y, yd)
        Mr, hr = ref.mass_and_force(t, y, yd)
        assert np.abs(Mf - Mr).max() <= 1e-10 * np.abs(Mr).max()
        assert np.abs(hf - hr).max() <= 1e-10 * np.abs(hr).max()


def pendulum(data, particles=None, name="flex_pendulum", stiffening=False):
    """R on a revolute joint about y at ISYS's origin under gravity; with ``particles`` (X, m,
    Phi) the rigid-body API's version (see :func:`spatial_particles`)."""
    s = System(name)
    alpha, = s.coordinates("alpha")
    s.gravity([0, 0, -G])
    if particles is None:
        s.flexible_body("P1", rel_rot=rot_y(alpha), data=data, geometric_stiffening=stiffening)
    else:
        X, m, Phi = particles
        q = s.coordinates(*[f"P1_{mode}" for mode in data.modes])
        s.frame("R", rel_rot=rot_y(alpha))
        for i in range(len(m)):
            pos = [float(X[i, d]) + sum(float(Phi[6 * i + d, j]) * q[j] for j in range(data.n))
                   for d in range(3)]
            s.body(f"p{i}", ref="R", rel_pos=pos, mass=float(m[i]), inertia=[0, 0, 0])
        for j, mode in enumerate(data.modes):
            s.generalized_force(f"elastic{j}", f"P1_{mode}",
                                -sum(float(data.Ke[j, k]) * q[k] for k in range(data.n)))
    s.initial(alpha=0.8, Dalpha=-1.0)
    s.initial(**{f"P1_{data.modes[0]}": 0.05, f"DP1_{data.modes[-1]}": 0.3})
    return s


def test_particle_equivalence_energy_and_trajectory():
    X, m, Phi, data = lumped()
    flex, ref = pendulum(data), pendulum(data, (X, m, Phi), name="particle_pendulum")
    ef, er = derive(flex).numeric(), derive(ref).numeric()
    rng = np.random.default_rng(6)
    Y, YD = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    (Tf, Vf), (Tr, Vr) = ef.energy_series(np.zeros(4), Y, YD), er.energy_series(np.zeros(4), Y, YD)
    assert np.abs(Tf - Tr).max() <= 1e-10 * np.abs(Tr).max()
    # the reference's generalized forces -Ke q have no potential: V differs by 1/2 q^T Ke q
    strain = 0.5 * np.einsum("in,ij,jn->n", Y[1:], data.Ke, Y[1:])
    assert np.abs(Vf - strain - Vr).max() <= 1e-10 * np.abs(Vr).max()
    rf = mbsfmu.simulate(flex, 1.0, 0.01, rtol=1e-10, atol=1e-12)
    rr = mbsfmu.simulate(ref, 1.0, 0.01, rtol=1e-10, atol=1e-12)
    assert rf.coordinate_names == rr.coordinate_names
    assert np.abs(rf.y - rr.y).max() <= 1e-9 * max(1.0, np.abs(rr.y).max())
    assert np.abs(rf.yd - rr.yd).max() <= 1e-9 * max(1.0, np.abs(rr.yd).max())


def with_attachments(s, node_frame):
    """A spring-damper from ISYS to ``node_frame`` and a rigid body on it."""
    s.spring_damper("spring", "ISYS", node_frame, stiffness=30.0, damping=0.4, rest_length=0.5)
    s.body("tip", ref=node_frame, rel_pos=[0.1, 0.0, -0.2], cg_pos=[0.05, 0.02, 0.0], mass=0.7,
           inertia=[0.01, 0.02, 0.015])
    return s


def test_node_frames_carry_force_elements_bodies_and_outputs():
    """Node 2 (no rotational shapes) is particle p1 of the rigid-body version: a spring to it and
    a body on it give the same M and q - k; its frame output is r_R + S (X_2 + Phi_2 q)."""
    X, m, Phi, data = lumped()
    flex = with_attachments(pendulum(data), "P1_2")
    ref = with_attachments(pendulum(data, (X, m, Phi), name="particle_pendulum"), "p1")
    assert flex.flexible_bodies["P1"].node_frames == ["P1_1", "P1_2", "P1_3", "P1_4"]
    flex.frame_output("P1_2", prefix="node2")
    ef, er = derive(flex).numeric(), derive(ref).numeric()
    rng = np.random.default_rng(7)
    for _ in range(3):
        y, yd = rng.normal(size=3), rng.normal(size=3)
        (Mf, hf), (Mr, hr) = ef.mass_and_force(0.0, y, yd), er.mass_and_force(0.0, y, yd)
        assert np.abs(Mf - Mr).max() <= 1e-10 * np.abs(Mr).max()
        assert np.abs(hf - hr).max() <= 1e-10 * np.abs(hr).max()
        c, s_ = np.cos(y[0]), np.sin(y[0])
        S = np.array([[c, 0, s_], [0, 1, 0], [-s_, 0, c]])
        want = S @ (X[1] + Phi[6:9] @ y[1:])
        assert np.allclose(ef.expression_outputs(0.0, y, yd), want, rtol=0, atol=1e-13)


def frame_node_data():
    """Lumped data whose node 1 is R's origin and has no mode shapes."""
    X, m, Phi, _ = lumped(seed=3)
    X[0] = 0.0
    Phi[0:6] = 0.0
    M_fe = np.zeros((24, 24))
    for i in range(4):
        M_fe[6 * i:6 * i + 3, 6 * i:6 * i + 3] = m[i] * np.eye(3)
    return from_fe(M_fe, np.eye(24), X, Phi, frame_node=1)


def test_frame_node_is_R():
    s = pendulum(frame_node_data())
    s.frame_output("P1", prefix="R")
    s.frame_output("P1_1", prefix="n1")
    s.frame_output("P1", "angular_velocity", prefix="wR")
    s.frame_output("P1_1", "angular_velocity", prefix="w1")
    r = mbsfmu.simulate(s, 0.2, 0.05, rtol=1e-8)
    num = derive(s).numeric()
    for i in range(len(r.t)):
        out = num.expression_outputs(r.t[i], r.y[:, i], r.yd[:, i])
        assert np.array_equal(out[0:3], out[3:6]) and np.array_equal(out[6:9], out[9:12])


def test_bad_input(tmp_path):
    X, m, Phi, data = lumped()
    s = System("bad")
    with pytest.raises(ModelError, match="data must be modal data"):
        s.flexible_body("B", data=42)
    with pytest.raises(ModelError, match="does not exist"):
        s.flexible_body("B", data=tmp_path / "missing.json")
    (tmp_path / "other.json").write_text('{"format": "something else"}')
    with pytest.raises(ModelError, match="is not an mbsfmu-sid file"):
        s.flexible_body("B", data=tmp_path / "other.json")
    bad = from_fe(*_lumped_fe(X, m), X, Phi)
    bad.Me = -bad.Me
    with pytest.raises(ModelError, match="flexible body 'B': modal data: Me is not positive definite"):
        s.flexible_body("B", data=bad)
    with pytest.raises(ModelError, match="frame_node 2 is the frame of reference"):
        s.flexible_body("B", data=from_fe(*_lumped_fe(X, m), X, Phi, frame_node=2))
    # name clashes, each leaving the system as it was
    s.body("B", mass=1.0)
    s.coordinate("C_q02")
    s.frame("D_3")
    before = (dict(s.frames), list(s.coordinates_))
    with pytest.raises(ModelError, match="duplicate name 'B'"):
        s.flexible_body("B", data=data)
    with pytest.raises(ModelError, match="duplicate name 'C_q02'"):
        s.flexible_body("C", data=data)
    with pytest.raises(ModelError, match="duplicate name 'D_3'"):
        s.flexible_body("D", data=data)
    assert (dict(s.frames), list(s.coordinates_)) == before and not s.flexible_bodies
    s.flexible_body("E", data=data)
    with pytest.raises(ModelError, match=r"no node frame 'E_9' \(its nodes: 1, 2, 3, 4"):
        s.spring_damper("sd", "ISYS", "E_9", stiffness=1.0)
    with pytest.raises(ModelError, match="no node frame 'E_9'"):
        s.frame_output("E_9")


def _lumped_fe(X, m):
    N = len(m)
    M_fe = np.zeros((6 * N, 6 * N))
    for i in range(N):
        M_fe[6 * i:6 * i + 3, 6 * i:6 * i + 3] = m[i] * np.eye(3)
    return M_fe, np.eye(6 * N)


def test_energy_conserved():
    """Rotational masses and rotational mode shapes at the nodes (Cr(q), J(q) to second order,
    node frames rotating by psi q), a rigid body on a node, a spring to another, gravity, no
    damping, no stiffening: E = T + V is conserved to the integration error."""
    _, _, _, data = lumped(seed=1, N=5, n=3, rot_inertia=0.05)
    s = pendulum(data)
    s.body("tip", ref="P1_3", rel_pos=[0.1, 0.0, -0.2], mass=0.7, inertia=[0.01, 0.02, 0.015])
    s.spring_damper("spring", "ISYS", "P1_5", stiffness=30.0, rest_length=0.5)
    r = mbsfmu.simulate(s, 3.0, 0.01, rtol=1e-10, atol=1e-12)
    assert np.ptp(r.y[1:], axis=1).min() > 1e-3  # the elastic coordinates do move
    assert r.relative_energy_drift() <= 1e-8


def crank_data(r=0.15):
    """A flexible crank along x: 3 nodes at 0, r/2, r with lumped and rotational masses, two
    planar modes (u_y, theta_z), node 1 the frame of reference."""
    N, n = 3, 2
    xs = np.array([0.0, r / 2, r])
    X = np.column_stack([xs, np.zeros(N), np.zeros(N)])
    M_fe = np.zeros((6 * N, 6 * N))
    Phi = np.zeros((6 * N, n))
    for i, (mi, ji) in enumerate(zip((0.05, 0.1, 0.15), (1e-4, 2e-4, 1e-4))):
        M_fe[6 * i:6 * i + 3, 6 * i:6 * i + 3] = mi * np.eye(3)
        M_fe[6 * i + 3:6 * i + 6, 6 * i + 3:6 * i + 6] = ji * np.eye(3)
        s = xs[i] / r
        Phi[6 * i + 1] = [s ** 2, s ** 3 - s ** 2]
        Phi[6 * i + 5] = [2 * s / r, (3 * s ** 2 - 2 * s) / r]
    K_fe = np.diag(np.tile([2000.0, 2000.0, 2000.0, 0.0, 0.0, 0.0], N))
    return from_fe(M_fe, K_fe, X, Phi, frame_node=1)


def flexible_slider_crank(data, name="flexible_slider_crank"):
    """models/slider_crank.py's slider and rod, the crank flexible (R on a revolute joint at the
    origin, gravity in the plane) and the loop closed at its tip node C_3."""
    s = System(name)
    x, alpha, phi = s.coordinates("x", "alpha", "phi")
    s.gravity([0, -G, 0])
    s.body("slider", rel_pos=[x, 0, 0], mass=1.0, inertia=[0, 0, 0])
    J_rod = 0.5 * 0.5 ** 2 / 12
    s.body("rod", ref="slider", rel_rot=rot_z(alpha), cg_pos=[0.25, 0, 0], mass=0.5,
           inertia=[0, J_rod, J_rod])
    s.frame("rod_end", ref="rod", rel_pos=[0.5, 0, 0])
    s.flexible_body("C", rel_rot=rot_z(phi), data=data, geometric_stiffening=False)
    s.loop("pin", "rod_end", "C_3", translations="xy")
    s.initial(phi=np.pi / 4, Dphi=2 * np.pi)
    s.initial(C_q01=0.002)
    s.initial_guess(x=0.6, alpha=2.9, Dx=0.0, Dalpha=0.0)
    s.frame_output("C_3", prefix="tip")
    return s


_RUNS: dict = {}


def crank_run(formulation, backend=None, t_end=1.0):
    key = (formulation, backend, t_end)
    if key not in _RUNS:
        _RUNS[key] = mbsfmu.simulate(flexible_slider_crank(crank_data()), t_end, 0.01, rtol=1e-10,
                                     atol=1e-12, method="rkstab", formulation=formulation, backend=backend)
    return _RUNS[key]


@pytest.mark.parametrize("formulation", ["qr", "projection"])
def test_loop_through_a_node(formulation):
    """The loop closes at a node frame: kept to rounding, energy conserved (no damping), and
    both formulations give the same motion."""
    r = crank_run(formulation)
    assert np.max(r.constraint_residual) <= 1e-12
    assert np.ptp(r.y[3]) > 1e-3 and np.ptp(r.y[2]) > 2.0  # the crank turns and bends
    assert r.relative_energy_drift() <= 1e-9
    if formulation != "qr":
        assert np.abs(r.y - crank_run("qr").y).max() <= 1e-8


@pytest.mark.slow
def test_numpy_backend_equals_engine():
    """The numpy reference (Python formulation and integrator over the numpy functions) and the
    C engine run the same equations."""
    r, ref = crank_run("qr", "numpy", t_end=0.2), crank_run("qr", t_end=0.2)
    assert r.stats["backend"] == "numpy" and ref.stats["backend"] == "c"
    assert np.abs(r.y - ref.y).max() <= 1e-9 * max(1.0, np.abs(ref.y).max())
    assert np.abs(r.yd - ref.yd).max() <= 1e-9 * max(1.0, np.abs(ref.yd).max())


@pytest.mark.slow
def test_native_fmu_matches_simulate(tmp_path):
    """The crank's data from an mbsfmu-sid file; the native FMU (generated C, C engine, fmpy)
    against simulate() on the same grid."""
    fmpy = pytest.importorskip("fmpy")
    from fmu_support import TOL, assert_matches

    from mbsfmu.fmu.native import build_native_fmu

    path = save(crank_data(), tmp_path / "crank.json")
    s = flexible_slider_crank(path)
    assert isinstance(s.flexible_bodies["C"].data, ModalData)
    fmu = build_native_fmu(s, tmp_path, formulation="qr")
    r = fmpy.simulate_fmu(str(fmu), stop_time=1.0, output_interval=0.01, start_values=dict(TOL),
                          output=["x", "alpha", "phi", "C_q01", "C_q02", "der(x)", "der(alpha)", "der(phi)",
                                  "der(C_q01)", "der(C_q02)", "tip.x", "tip.y", "constraint_residual"])
    ref = crank_run("qr")
    assert_matches(r, ref, tol=1e-8)
    assert np.max(r["constraint_residual"]) < 1e-12


def _R(axis, a):
    c, s_ = np.cos(a), np.sin(a)
    return {"x": np.array([[1, 0, 0], [0, c, -s_], [0, s_, c]]),
            "y": np.array([[c, 0, s_], [0, 1, 0], [-s_, 0, c]]),
            "z": np.array([[c, -s_, 0], [s_, c, 0], [0, 0, 1]])}[axis]


def test_geometric_stiffening():
    """With ksigma, q - k changes by -K_sigma q, K_sigma = sum_l ksigma_l load_l with the loads
    [-g_R, 0, w_x^2, w_y^2, w_z^2, w_x w_y, w_y w_z, w_z w_x] (R components), computed here from
    the Cardan angles by hand."""
    X, m, Phi, _ = lumped()
    rng = np.random.default_rng(8)
    geo = []
    for _ in range(12):
        A = rng.normal(size=(24, 24))
        geo.append(A + A.T)
    data = from_fe(*_lumped_fe(X, m), X, Phi, geometric_stiffness=geo)
    stiff = derive(spatial_flexible(data, stiffening=True)).numeric()
    plain = derive(spatial_flexible(data)).numeric()
    for _ in range(3):
        y, yd = rng.normal(size=7), rng.normal(size=7)
        dh = stiff.mass_and_force(0.0, y, yd)[1] - plain.mass_and_force(0.0, y, yd)[1]
        a, b, c = y[2:5]
        S = _R("x", a) @ _R("y", b) @ _R("z", c)
        w = (_R("z", c).T @ _R("y", b).T @ [yd[2], 0, 0] + _R("z", c).T @ [0, yd[3], 0] + [0, 0, yd[4]])
        loads = [*(-S.T @ [0, 0, -G]), 0, 0, 0, w[0] ** 2, w[1] ** 2, w[2] ** 2, w[0] * w[1], w[1] * w[2],
                 w[2] * w[0]]
        Ks = np.einsum("abl,l->ab", data.ksigma.M1, loads)
        assert np.abs(dh[:5]).max() <= 1e-12 * np.abs(dh).max()
        assert np.allclose(dh[5:], -Ks @ y[5:], rtol=1e-12, atol=1e-12 * np.abs(dh).max())


def test_tree_algorithms_refused_and_elastic_coordinates_move():
    """A flexible model never takes the articulated-body / recursive Newton-Euler paths (the
    reason says why); a body held in ISYS has only elastic coordinates, which count as moved."""
    from mbsfmu.equations.articulated_body import aba_applicable, articulated_body
    from mbsfmu.equations.recursive_newton_euler import recursive_newton_euler

    _, _, _, data = lumped()
    s = pendulum(data)
    assert "flexible bodies (P1)" in aba_applicable(s)
    eqs = derive(s)
    assert articulated_body(eqs).ydd is None and "flexible" in articulated_body(eqs).reason
    assert recursive_newton_euler(eqs).mass_times is None
    held = System("held")
    held.flexible_body("P1", data=data)
    held.initial(P1_q01=0.1)
    r = mbsfmu.simulate(held, 0.5, 0.01, rtol=1e-10, atol=1e-12)
    assert r.coordinate_names == ["P1_q01", "P1_q02"] and r.relative_energy_drift() <= 1e-9


def test_modal_damping_dissipates_its_power():
    """De q' is the only non-conservative force: E(0) - E(t) = int q'^T De q' dt (trapezoidal
    rule on a fine grid, 1e-5 relative)."""
    X, m, Phi, _ = lumped()
    data = from_fe(*_lumped_fe(X, m), X, Phi, damping=0.05)
    s = pendulum(data)
    r = mbsfmu.simulate(s, 1.0, 0.0005, rtol=1e-10, atol=1e-12)
    E = r.energy()["total"]
    qd = r.yd[1:]
    power = np.einsum("it,ij,jt->t", qd, data.De, qd)
    lost = np.concatenate([[0.0], np.cumsum((power[1:] + power[:-1]) / 2 * np.diff(r.t))])
    assert lost[-1] > 1e-2 * abs(E[0])
    assert np.abs(E[0] - E - lost).max() <= 1e-5 * lost[-1]


def beam(n_el=3, L=1.0, rhoA=2.0, rhoI=1e-3, EA=1e5, GJ=100.0, EIy=250.0, EIz=160.0, n_modes=3):
    """A cantilever along x (node 1 at the origin, clamped: R's node) of 3D Euler-Bernoulli
    stiffness with a consistent mass of linear interpolation (rho A h / 6 [[2, 1], [1, 2]] for each
    translation, rho I h / 6 [[2, 1], [1, 2]] for each rotation), reduced to its first
    ``n_modes`` clamped modes (tip deflection 1).  (The Hermite mass of the bending shapes couples
    rotations and translations, and from_fe then refuses its own result: mdCM.M1 != Ct^T.)"""
    import scipy.linalg

    N = n_el + 1
    h = L / n_el
    M_fe = np.zeros((6 * N, 6 * N))
    K_fe = np.zeros((6 * N, 6 * N))
    pair = np.array([[2, 1], [1, 2]]) / 6 * h
    bar_k = np.array([[1, -1], [-1, 1]]) / h
    for e in range(n_el):
        for dof in range(6):
            d = [6 * e + dof, 6 * e + 6 + dof]
            M_fe[np.ix_(d, d)] += (rhoA if dof < 3 else rhoI) * pair
        for dof, kk in ((0, EA), (3, GJ)):
            d = [6 * e + dof, 6 * e + 6 + dof]
            K_fe[np.ix_(d, d)] += kk * bar_k
        for sg, EI, d in ((1.0, EIz, [6 * e + 1, 6 * e + 5, 6 * e + 7, 6 * e + 11]),
                          (-1.0, EIy, [6 * e + 2, 6 * e + 4, 6 * e + 8, 6 * e + 10])):
            K_fe[np.ix_(d, d)] += EI / h ** 3 * np.array([[12, sg * 6 * h, -12, sg * 6 * h],
                                                          [sg * 6 * h, 4 * h * h, -sg * 6 * h, 2 * h * h],
                                                          [-12, -sg * 6 * h, 12, -sg * 6 * h],
                                                          [sg * 6 * h, 2 * h * h, -sg * 6 * h, 4 * h * h]])
    free = np.arange(6, 6 * N)
    _, V = scipy.linalg.eigh(K_fe[np.ix_(free, free)], M_fe[np.ix_(free, free)])
    Phi = np.zeros((6 * N, n_modes))
    Phi[free] = V[:, :n_modes]
    for j in range(n_modes):
        tip = Phi[6 * (N - 1):6 * (N - 1) + 3, j]
        Phi[:, j] /= tip[np.argmax(np.abs(tip))]
    X = np.column_stack([np.linspace(0, L, N), np.zeros(N), np.zeros(N)])
    return from_fe(M_fe, K_fe, X, Phi, frame_node=1)


def test_consistent_mass_beam_energy():
    """A consistent (non-diagonal) mass matrix coupling the nodes, rotational mode shapes, a
    pendulum on two hinges hung at the clamped end: energy conserved."""
    data = beam()
    s = System("beam_pendulum")
    alpha, beta = s.coordinates("alpha", "beta")
    s.gravity([0, 0, -G])
    s.flexible_body("B", rel_rot=rot_y(alpha) * rot_z(beta), data=data, geometric_stiffening=False)
    s.initial(alpha=-0.3, Dbeta=2.0, B_q01=0.02)
    r = mbsfmu.simulate(s, 2.0, 0.01, rtol=1e-10, atol=1e-12)
    assert np.ptp(r.y[2:], axis=1).min() > 1e-3
    assert r.relative_energy_drift() <= 1e-8


def test_unused_node_frames_cost_nothing_until_asked_for():
    """Frame kinematics are formed on first use: the equations of a beam with 21 exported nodes
    touch none of them (the body's inertia lives in its modal data), an output or a force on a
    node forms that node's kinematics (and its reference frames') when asked for."""
    from mbsfmu.model.elastic import beam_modal_data

    data = beam_modal_data(1.0, E=7e10, rho=2700.0, A=8e-5, Iy=1e-10, Iz=2e-9, n_elements=20, export=21,
                           modes=3, plane="yz", axis=(0.0, 0.0, -1.0))
    s = System("many_nodes")
    a = s.coordinate("a", 0.3)
    s.gravity([0, 0, -9.81])
    s.flexible_body("B", rel_rot=rot_x(a), data=data)
    eqs = derive(s)
    eqs.M, eqs.k, eqs.q  # noqa: B018
    assert not any(n in eqs.kinematics.frames for n in s.flexible_bodies["B"].node_frames)
    r = eqs.frame_expanded("B_21")["position"]
    assert "B_21" in eqs.kinematics.frames and "B_11" not in eqs.kinematics.frames
    # the tip of the undeformed beam, 1 m down the rotated -z axis
    at = {s.coordinates_["a"].symbol: 0.3}
    at.update({s.coordinates_[c].symbol: 0.0 for c in s.flexible_bodies["B"].coordinates})
    np.testing.assert_allclose([float(v.subs(at)) for v in r], [0.0, np.sin(0.3), -np.cos(0.3)], atol=1e-14)
