"""The built-in beam finite elements, their modes and the modal data, against independent references:
closed-form Euler-Bernoulli, rod and shaft frequencies; the Timoshenko cantilever's frequency
equation solved here by a transfer matrix; Gauss integration of the element interpolation; the
continuum's effective modal masses; the Southwell coefficient of a rotating cantilever."""

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize

from mbsfmu.core.errors import ModelError
from mbsfmu.model.elastic import LOAD_CASES, beam, beam_geometric_stiffness, beam_modal_data, fe_modal_data
from mbsfmu.model.elastic import load as load_sid
from mbsfmu.model.elastic import save as save_sid
from mbsfmu.model.elastic.fe_beam import bending_mass, bending_stiffness, rectangular_section
from mbsfmu.model.elastic.geometric_stiffness import static_deflections

# a steel strip, different stiffness in the two bending planes
E, RHO, NU = 2.1e11, 7850.0, 0.3
G = E / (2 * (1 + NU))
SEC = dict(A=1e-4, Iy=2e-9, Iz=8e-10, J=1.5e-9)
L = 1.0
BETA_L = (1.8751040687, 4.6940911330, 7.8547574382)   # clamped-free: cos(bL) cosh(bL) = -1
BETA_L_FREE = 4.7300407449                              # free-free:   cos(bL) cosh(bL) = 1


def eb_cantilever(I, k):
    """omega_k = (beta_k L)^2 sqrt(E I / (rho A L^4)), rad/s."""
    return BETA_L[k] ** 2 * np.sqrt(E * I / (RHO * SEC["A"] * L ** 4))


def hz(data):
    return 2 * np.pi * np.asarray(data.frequencies_hz)


def share(b, data, comp):
    """Per mode, the share of its modal mass phi^T M phi in DOF component comp (0..5) of the nodes
    (every node exported)."""
    full = np.vstack([np.vstack([nd.phi, nd.psi]) for nd in data.nodes])
    part = full * (b.M @ full)
    return part[comp::6].sum(axis=0) / part.sum(axis=0)


def cantilever(n, theory="euler-bernoulli", modes=12, **kw):
    b = beam(L, n, E=E, G=G, rho=RHO, theory=theory, **{**SEC, **kw})
    return b, fe_modal_data(b.M, b.K, b.nodes, modes=modes)


def test_cantilever_bending_converges_at_h4_in_both_planes():
    errors = {}
    for n in (2, 4, 8, 16):
        b, d = cantilever(n)
        w = hz(d)
        v_modes = w[share(b, d, 1) > 0.5]   # deflection along y: bending about z, Iz
        w_modes = w[share(b, d, 2) > 0.5]   # deflection along z: bending about y, Iy
        k_max = min(3, n)   # N = 2 has two bending modes per plane
        errors[n] = np.array([[v_modes[k] / eb_cantilever(SEC["Iz"], k) - 1 for k in range(k_max)],
                              [w_modes[k] / eb_cantilever(SEC["Iy"], k) - 1 for k in range(k_max)]])
    # the consistent Hermite element converges from above, the error falls with every refinement
    for a, b in ((2, 4), (4, 8), (8, 16)):
        k = min(a, 3)
        assert np.all(errors[a][:, :k] > errors[b][:, :k]) and np.all(errors[b] > 0)
    # observed order for mode 1: log2(e_N / e_2N) about 4 (h^4)
    rate = np.log2(errors[8][:, 0] / errors[16][:, 0])
    assert np.all(np.abs(rate - 4) < 0.1), rate
    assert np.abs(errors[16]).max() < 5e-5      # measured 4.0e-5 (mode 3)
    assert np.abs(errors[16][:, 0]).max() < 2e-7   # measured 1.3e-7


def test_axial_and_torsional_frequencies():
    b, d = cantilever(16, modes=30)
    w = hz(d)
    k = np.arange(1, 3)
    axial = w[share(b, d, 0) > 0.5][:2]
    tors = w[share(b, d, 3) > 0.5][:2]
    ref_axial = (2 * k - 1) * np.pi / (2 * L) * np.sqrt(E / RHO)
    ref_tors = (2 * k - 1) * np.pi / (2 * L) * np.sqrt(G * SEC["J"] / (RHO * (SEC["Iy"] + SEC["Iz"])))
    # linear elements with a consistent mass: error ~ (k h)^2 / 24 from above
    assert np.all(axial / ref_axial - 1 > 0) and np.all(axial / ref_axial - 1 < [5e-4, 5e-3])
    assert np.all(tors / ref_tors - 1 > 0) and np.all(tors / ref_tors - 1 < [5e-4, 5e-3])


def test_free_free_drops_six_rigid_modes():
    b = beam(L, 16, E=E, G=G, rho=RHO, **SEC)
    d = fe_modal_data(b.M, b.K, b.nodes, bc="free", modes=4)
    assert d.frame_node is None
    w = hz(d)
    assert w.min() > 1.0
    ref = BETA_L_FREE ** 2 * np.sqrt(E * SEC["Iz"] / (RHO * SEC["A"] * L ** 4))
    assert abs(w[0] / ref - 1) < 1e-5
    assert abs(w[1] / (ref * np.sqrt(SEC["Iy"] / SEC["Iz"])) - 1) < 1e-5
    # free-free modes carry no net momentum: Ct = int Phi^T dm = 0
    assert np.abs(d.Ct.M0).max() < 1e-10 * np.sqrt(d.mass)


def timoshenko_cantilever(A, I, As, n_roots=1):
    """The Timoshenko cantilever's frequencies from its frequency equation, by a transfer matrix:
    G As (v'' - t') + rho A w^2 v = 0, E I t'' + G As (v' - t) + rho I w^2 t = 0, y = [v, v', t, t'],
    y(L) = expm(A(w) L) y(0); clamped y(0) = [0, a, 0, b]; free end: v' - t = 0, t' = 0."""
    def det(w):
        Amat = np.array([[0, 1, 0, 0],
                         [-RHO * A * w ** 2 / (G * As), 0, 0, 1],
                         [0, 0, 0, 1],
                         [0, -G * As / (E * I), (G * As - RHO * I * w ** 2) / (E * I), 0]])
        P = scipy.linalg.expm(Amat * L)
        return np.linalg.det(np.array([[P[1, 1] - P[2, 1], P[1, 3] - P[2, 3]], [P[3, 1], P[3, 3]]]))
    w_eb = BETA_L[0] ** 2 * np.sqrt(E * I / (RHO * A * L ** 4))
    grid = np.linspace(0.2 * w_eb, 1.1 * w_eb, 400)
    vals = [det(w) for w in grid]
    roots = [scipy.optimize.brentq(det, grid[i], grid[i + 1], xtol=1e-12, rtol=1e-14)
             for i in range(len(grid) - 1) if np.sign(vals[i]) != np.sign(vals[i + 1])]
    return np.array(roots[:n_roots])


def test_timoshenko_below_euler_bernoulli_and_equal_to_its_frequency_equation():
    for side, bound in ((0.2, (0.03, 0.2)), (0.01, (0.0, 1e-4))):   # L/h = 5 (stubby), 100 (slender)
        sec = rectangular_section(side, side)
        kw = dict(E=E, G=G, rho=RHO, A=sec["A"], Iy=sec["Iy"], Iz=sec["Iz"], J=sec["J"])
        eb = fe_modal_data(*_mk(beam(L, 16, **kw)), modes=2)
        tb = beam(L, 16, theory="timoshenko", shear_area_y=sec["shear_area_y"],
                  shear_area_z=sec["shear_area_z"], **kw)
        ti = fe_modal_data(*_mk(tb), modes=2)
        drop = 1 - ti.frequencies_hz[0] / eb.frequencies_hz[0]
        assert bound[0] < drop < bound[1], (side, drop)   # measured 0.067 (L/h 5), 4.1e-5 (L/h 100)
        ref = timoshenko_cantilever(sec["A"], sec["Iz"], sec["shear_area_y"])[0]
        # the element's shear strain is constant per element: the error falls as h^2 (measured
        # 2.0e-5 at N = 16, 8.0e-5 at N = 8 for L/h = 5; 1.3e-7 for L/h = 100)
        assert abs(hz(ti)[0] / ref - 1) < 3e-5, (side, hz(ti)[0], ref)
        if side == 0.2:
            coarse = fe_modal_data(*_mk(beam(L, 8, theory="timoshenko", **kw)), modes=2)
            rate = np.log2((hz(coarse)[0] / ref - 1) / (hz(ti)[0] / ref - 1))
            assert abs(rate - 2) < 0.1, rate


def _mk(b):
    return b.M, b.K, b.nodes


def test_timoshenko_element_matrices_equal_integrals_of_their_interpolation():
    """The closed forms against Gauss integration of the element's exact static interpolation."""
    Le, phi, I, A = 0.3, 0.45, 2e-6, 1e-3
    GAs = 12 * E * I / (phi * Le ** 2)
    xi, wq = np.polynomial.legendre.leggauss(8)
    s_all, w_all = (xi + 1) / 2, wq / 2 * Le
    M = np.zeros((4, 4))
    K = np.zeros((4, 4))
    for s, wgt in zip(s_all, w_all):
        c = 1 / (1 + phi)
        Nv = c * np.array([1 - 3 * s ** 2 + 2 * s ** 3 + phi * (1 - s),
                           Le * (s - 2 * s ** 2 + s ** 3 + phi / 2 * (s - s ** 2)),
                           3 * s ** 2 - 2 * s ** 3 + phi * s,
                           Le * (-s ** 2 + s ** 3 + phi / 2 * (s ** 2 - s))])
        dNv = c / Le * np.array([-6 * s + 6 * s ** 2 - phi,
                                 Le * (1 - 4 * s + 3 * s ** 2 + phi / 2 * (1 - 2 * s)),
                                 6 * s - 6 * s ** 2 + phi,
                                 Le * (-2 * s + 3 * s ** 2 + phi / 2 * (2 * s - 1))])
        Nt = c * np.array([6 * (s ** 2 - s) / Le, 1 - 4 * s + 3 * s ** 2 + phi * (1 - s),
                           -6 * (s ** 2 - s) / Le, -2 * s + 3 * s ** 2 + phi * s])
        dNt = c / Le * np.array([6 * (2 * s - 1) / Le, -4 + 6 * s - phi,
                                 -6 * (2 * s - 1) / Le, -2 + 6 * s + phi])
        M += wgt * (RHO * A * np.outer(Nv, Nv) + RHO * I * np.outer(Nt, Nt))
        K += wgt * (E * I * np.outer(dNt, dNt) + GAs * np.outer(dNv - Nt, dNv - Nt))
    assert np.allclose(bending_mass(RHO, A, I, Le, phi, rotary=True), M, rtol=1e-12,
                       atol=1e-14 * np.abs(M).max())
    assert np.allclose(bending_stiffness(E, I, Le, phi), K, rtol=1e-12, atol=1e-12 * np.abs(K).max())


def hermite_integral(b, mode):
    """int Phi dm over the beam along x by Gauss quadrature of the Hermite interpolation of the
    nodal values (v, theta_z), (w, -theta_y) and the linear interpolation of u."""
    xi, wq = np.polynomial.legendre.leggauss(6)
    Le = b.element_length
    out = np.zeros(3)
    for e in range(len(b.elements)):
        d = mode[6 * e:6 * e + 12]
        for s, wgt in zip((xi + 1) / 2, wq / 2 * Le):
            H = np.array([1 - 3 * s ** 2 + 2 * s ** 3, Le * (s - 2 * s ** 2 + s ** 3),
                          3 * s ** 2 - 2 * s ** 3, Le * (-s ** 2 + s ** 3)])
            u = (1 - s) * d[0] + s * d[6]
            v = H @ d[[1, 5, 7, 11]]
            w = H @ (d[[2, 4, 8, 10]] * [1, -1, 1, -1])
            out += wgt * RHO * b.A * np.array([u, v, w])
    return out


def test_inertia_data_of_a_cantilever_against_closed_form():
    b = beam(L, 10, E=E, G=G, rho=RHO, **SEC)
    d = fe_modal_data(b.M, b.K, b.nodes, modes=3, export=None)
    m = RHO * SEC["A"] * L
    Ip = SEC["Iy"] + SEC["Iz"]
    assert abs(d.mass / m - 1) < 1e-12
    assert np.allclose(d.mdCM.M0, [m * L / 2, 0, 0], rtol=1e-12, atol=1e-15)
    J_ref = np.diag([RHO * Ip * L, m * L ** 2 / 3, m * L ** 2 / 3])
    assert np.allclose(d.J.M0, J_ref, rtol=1e-12, atol=1e-12 * m * L ** 2)
    # Ct = int Phi^T dm: Gauss integration of the interpolated mode shapes
    for j in range(3):
        mode = np.concatenate([np.r_[nd.phi[:, j], nd.psi[:, j]] for nd in d.nodes])
        assert np.allclose(d.Ct.M0[j], hermite_integral(b, mode), rtol=1e-12, atol=1e-12 * np.sqrt(m))
    # the continuum's effective modal mass of the first bending mode: Ct_1^2 / m = 0.6131
    assert abs(d.Ct.M0[0] @ d.Ct.M0[0] / m - 0.61306) < 2e-4
    assert np.allclose(d.mdCM.M1, d.Ct.M0.T)
    assert np.allclose(d.Me, np.eye(3), atol=1e-10)
    # Timoshenko adds the sections' rotary inertia rho I L about the bending axes (a rigid rotation
    # has no strain, so its interpolation is exact)
    t = beam(L, 10, E=E, G=G, rho=RHO, theory="timoshenko", **SEC)
    dt = fe_modal_data(t.M, t.K, t.nodes, modes=3)
    J_timo = J_ref + RHO * L * np.diag([0.0, SEC["Iy"], SEC["Iz"]])
    assert np.allclose(dt.J.M0, J_timo, rtol=1e-12, atol=1e-12 * m * L ** 2)


def test_exported_nodes_and_mode_selection():
    b = beam(L, 10, E=E, G=G, rho=RHO, **SEC)
    d = fe_modal_data(b.M, b.K, b.nodes, export=4, modes=[1, 3])
    assert [nd.id for nd in d.nodes] == [1, 4, 8, 11]
    assert d.n == 2
    full = fe_modal_data(b.M, b.K, b.nodes, modes=3)
    assert np.allclose(d.frequencies_hz, np.array(full.frequencies_hz)[[0, 2]])
    assert np.allclose(d.node(1).phi, 0) and np.allclose(d.node(1).psi, 0)
    assert fe_modal_data(b.M, b.K, b.nodes, export=[1, 11]).frame_node == 1


@pytest.mark.parametrize("kw, words", [
    (dict(n_elements=0), "n_elements"),
    (dict(E=-1.0), "E"),
    (dict(rho=0.0), "rho"),
    (dict(A=float("nan")), "A"),
    (dict(Iy=0.0), "Iy"),
    (dict(Iz=-2.0), "Iz"),
    (dict(theory="bernoulli"), "theory"),
    (dict(axis=(0, 0, 0)), "axis"),
    (dict(G=None, nu=-1.0), "nu"),
    (dict(theory="timoshenko", shear_area_y=0.0), "shear_area_y"),
    (dict(y_axis=(2.0, 0, 0)), "parallel"),
])
def test_bad_beam_input_is_named(kw, words):
    args = dict(n_elements=4, E=E, G=G, rho=RHO, **SEC)
    args.update(kw)
    with pytest.raises(ModelError, match=words):
        beam(L, **args)


def test_bad_selection_is_named():
    b = beam(L, 2, E=E, G=G, rho=RHO, **SEC)   # 12 free DOFs
    with pytest.raises(ModelError, match=r"modes=13 .* 12 are available"):
        fe_modal_data(b.M, b.K, b.nodes, modes=13)
    with pytest.raises(ModelError, match=r"mode 20, but 12 modes are available"):
        fe_modal_data(b.M, b.K, b.nodes, modes=[1, 20])
    with pytest.raises(ModelError, match="export names node 7"):
        fe_modal_data(b.M, b.K, b.nodes, export=[1, 7])
    with pytest.raises(ModelError, match="node 9"):
        fe_modal_data(b.M, b.K, b.nodes, bc="clamped", frame_node=9)
    with pytest.raises(ModelError, match=r"the mass matrix has the shape \(12, 12\), expected \(18, 18\)"):
        fe_modal_data(b.M[:12, :12], b.K, b.nodes)
    K = b.K.copy()
    K[3, 9] *= 1.01
    with pytest.raises(ModelError, match=r"the stiffness matrix is not symmetric: entry \((3, 9|9, 3)\)"):
        fe_modal_data(b.M, K, b.nodes)
    with pytest.raises(ModelError, match="node_ids must be 3 different numbers"):
        fe_modal_data(b.M, b.K, b.nodes, node_ids=[1, 2, 2])


# --- geometric stiffening --------------------------------------------------------------------------

SOUTHWELL_1 = 1.1933   # rotating uniform cantilever, hub radius 0, first bending mode


def spinning_cantilever(n):
    b = beam(L, n, E=E, G=G, rho=RHO, **SEC)
    d = fe_modal_data(b.M, b.K, b.nodes, modes=4,
                   geometric_stiffness=lambda held: beam_geometric_stiffness(b, held))
    return b, d


def test_axial_forces_of_the_inertia_loads_equal_the_rod_solution():
    """Linear rod elements with consistent loads give exact nodal displacements, so each element's
    force is the mean over the element of the exact axial force: under a_x = 1 (beam along +x,
    clamped at x = 0) N(x) = -rho A (L - x) (compression); under w_z*w_z = 1 (spin about z)
    N(x) = rho A (L^2 - x^2)/2 (tension)."""
    b = beam(L, 8, E=E, G=G, rho=RHO, **SEC)
    U = static_deflections(b.K, b.M, b.nodes, held=range(6))
    x1, x2 = b.nodes[:-1, 0], b.nodes[1:, 0]
    rA = RHO * SEC["A"]
    N_a = b.axial_forces(U[:, LOAD_CASES.index("a_x")])
    assert np.allclose(N_a, -rA * (L - (x1 + x2) / 2), rtol=1e-9)
    N_w = b.axial_forces(U[:, LOAD_CASES.index("w_z*w_z")])
    assert np.allclose(N_w, rA / 2 * (L ** 2 - (x1 ** 2 + x1 * x2 + x2 ** 2) / 3), rtol=1e-9)
    assert np.all(N_w > 0)
    # inertia relief: a free body under a uniform acceleration is not stressed
    Uf = static_deflections(b.K, b.M, b.nodes, held=[])
    assert np.abs(b.axial_forces(Uf[:, LOAD_CASES.index("a_x")])).max() < 1e-9 * rA * L
    # ... and a free beam spinning about its end is stressed as if spinning about its centre
    s1, s2 = x1 - L / 2, x2 - L / 2
    N_free = b.axial_forces(Uf[:, LOAD_CASES.index("w_z*w_z")])
    exact_free = rA / 2 * ((L / 2) ** 2 - (s1 ** 2 + s1 * s2 + s2 ** 2) / 3)
    assert np.allclose(N_free, exact_free, rtol=1e-8, atol=1e-10 * rA), N_free


def test_spinning_cantilever_is_stiffer_by_the_southwell_coefficient():
    """Spin Omega about z of a beam along x: out of plane (deflection z) omega^2 = omega0^2 +
    1.1933 Omega^2 with K_eff = Ke + Omega^2 ksigma[w_z*w_z]; in plane (deflection y) the
    centrifugal softening -Omega^2 J.M2[2, 2] takes 1 off: omega^2 = omega0^2 + 0.1933 Omega^2."""
    measured = {}
    for n in (10, 20):
        _, d = spinning_cantilever(n)
        ks = d.ksigma.M1[:, :, LOAD_CASES.index("w_z*w_z")]
        J2 = (d.J.M2[2, 2] + d.J.M2[2, 2].T) / 2
        w0sq = (2 * np.pi * np.array(d.frequencies_hz)) ** 2
        # mode 1: deflection along y (Iz < Iy), in plane; mode 2: along z, out of plane
        assert abs(d.nodes[-1].phi[1, 0]) > 10 * abs(d.nodes[-1].phi[2, 0])
        assert abs(d.nodes[-1].phi[2, 1]) > 10 * abs(d.nodes[-1].phi[1, 1])
        Om2 = 0.01 * w0sq[0]
        lam_out = scipy.linalg.eigh(d.Ke + Om2 * ks, d.Me, eigvals_only=True)
        lam_in = scipy.linalg.eigh(d.Ke + Om2 * ks - Om2 * J2, d.Me, eigvals_only=True)
        measured[n] = ((lam_out[1] - w0sq[1]) / Om2, (lam_in[0] - w0sq[0]) / Om2)
        assert ks[0, 0] > 0 and ks[1, 1] > 0    # tension stiffens
    # measured: N = 10: 1.19578, 0.19433; N = 20: 1.19395, 0.19358 (converging to 1.1933 from above)
    assert abs(measured[20][0] - SOUTHWELL_1) < 1e-3
    assert abs(measured[20][1] - (SOUTHWELL_1 - 1)) < 1e-3
    assert abs(measured[20][0] - SOUTHWELL_1) < abs(measured[10][0] - SOUTHWELL_1)


def test_beam_modal_data_of_seed_002(tmp_path):
    d = beam_modal_data(1.0, E=E, rho=RHO, A=SEC["A"], Iy=SEC["Iy"], Iz=SEC["Iz"], plane="yz")
    back = load_sid(save_sid(d, tmp_path / "nodalfixed_yz_4n_3m.json"))
    assert np.allclose(back.ksigma.M1, d.ksigma.M1) and np.allclose(back.J.M2, d.J.M2)
    assert back.modes == ["q01", "q02", "q03"] and back.frequencies_hz == d.frequencies_hz
    assert [nd.id for nd in d.nodes] == [1, 4, 8, 11] and d.n == 3 and d.frame_node == 1
    assert np.allclose(d.node(11).position, [0, 0, -1.0])
    assert np.allclose(d.node(11).phi[[0, 2]], 0, atol=1e-12)   # in the y-z plane, bending along y
    ref = [eb_cantilever(SEC["Iz"], k) / (2 * np.pi) for k in range(3)]
    assert np.allclose(d.frequencies_hz, ref, rtol=1e-3)
    assert d.ksigma is not None and d.ksigma.M1.shape == (3, 3, 12)
    # a beam hanging in -z under gravity (a - g = (0, 0, +g)) is in tension: stiffer
    assert np.all(np.diag(d.ksigma.M1[:, :, LOAD_CASES.index("a_z")]) > 0)
    assert beam_modal_data(1.0, E=E, rho=RHO, A=SEC["A"], Iy=SEC["Iy"], Iz=SEC["Iz"],
                           geometric_stiffening=False).ksigma is None


# --- Craig-Bampton ---------------------------------------------------------------------------------

def test_craig_bampton_reproduces_the_full_model():
    b = beam(L, 10, E=E, G=G, rho=RHO, **SEC)
    full = np.array(fe_modal_data(b.M, b.K, b.nodes, modes=6).frequencies_hz)
    # every fixed-interface mode kept: the basis spans the free DOFs, the frequencies are the model's
    every = fe_modal_data(b.M, b.K, b.nodes, modes=54, reduction="craig-bampton", boundary=[11], export=2)
    assert np.allclose(every.frequencies_hz[:6], full, rtol=1e-10)
    errors = []
    for n in (2, 4, 8):
        d = fe_modal_data(b.M, b.K, b.nodes, modes=n, reduction="craig-bampton", boundary=[11], export=4)
        assert d.n == 6 + n and d.modes[:2] == ["11_ux", "11_uy"] and d.modes[6] == "q01"
        errors.append(np.array(d.frequencies_hz[:4]) / full[:4] - 1)
        # the boundary coordinates are the boundary node's displacements relative to R
        tip = d.node(11)
        assert np.allclose(tip.phi[:, :3], np.eye(3)) and np.allclose(tip.psi[:, 3:6], np.eye(3))
        assert np.allclose(d.node(11).phi[:, 6:], 0) and np.allclose(d.node(1).phi, 0)
    errors = np.array(errors)
    assert np.all(errors >= -1e-12)                  # a Ritz basis: never below the full model
    assert np.all(np.diff(errors, axis=0) <= 1e-12)  # more modes, closer
    # measured with 4 fixed-interface modes and the tip as boundary: 5.8e-5 (1st bending, both
    # planes), 1.08e-3 (2nd)
    assert np.all(errors[1] < 1.2e-3) and np.all(errors[1][:2] < 7e-5)


def test_craig_bampton_bad_input_is_named():
    b = beam(L, 4, E=E, G=G, rho=RHO, **SEC)
    with pytest.raises(ModelError, match="needs held DOFs"):
        fe_modal_data(b.M, b.K, b.nodes, bc="free", reduction="craig-bampton", boundary=[5])
    with pytest.raises(ModelError, match="boundary node 1 has held DOFs"):
        fe_modal_data(b.M, b.K, b.nodes, reduction="craig-bampton", boundary=[1])
    with pytest.raises(ModelError, match="boundary names node 9"):
        fe_modal_data(b.M, b.K, b.nodes, reduction="craig-bampton", boundary=[9])
    with pytest.raises(ModelError, match="modes=20 asks for 20 fixed-interface modes, but 18 are available"):
        fe_modal_data(b.M, b.K, b.nodes, modes=20, reduction="craig-bampton", boundary=[5])
    with pytest.raises(ModelError, match="reduction must be"):
        fe_modal_data(b.M, b.K, b.nodes, reduction="guyan")


# --- held DOFs, repeated frequencies, frames ---------------------------------------------------------

def test_simply_supported_beam_from_a_list_of_held_dofs():
    """Pinned at node 1 (translations and twist), roller at the end (transverse translations):
    omega_k = (k pi)^2 sqrt(E I / (rho A L^4))."""
    b = beam(L, 16, E=E, G=G, rho=RHO, **SEC)
    held = [(1, "ux"), (1, "uy"), (1, "uz"), (1, "rx"), (17, "uy"), (17, 3)]
    d = fe_modal_data(b.M, b.K, b.nodes, bc=held, modes=4)
    assert d.frame_node is None
    w = hz(d)
    ref = sorted((k * np.pi) ** 2 * np.sqrt(E * I / (RHO * SEC["A"] * L ** 4))
                 for k in (1, 2) for I in (SEC["Iy"], SEC["Iz"]))
    assert np.allclose(w, ref, rtol=3e-5)       # measured 1.0e-6 (k = 1), 1.6e-5 (k = 2)
    with pytest.raises(ModelError, match="dof must be one of"):
        fe_modal_data(b.M, b.K, b.nodes, bc=[(1, "uw")])


def test_repeated_frequencies_give_one_mode_per_direction():
    sec = dict(A=1e-4, Iy=8e-10, Iz=8e-10, J=1.6e-9)
    with pytest.warns(UserWarning, match="modes 3, 4 have the same frequency"):
        d = beam_modal_data(1.0, E=E, rho=RHO, **sec)   # seed 002 defaults: 3 modes of a round beam
    tip = d.node(11).phi
    assert np.isclose(d.frequencies_hz[0], d.frequencies_hz[1], rtol=1e-9)
    # each of the pair bends along one of R's axes x, y (the beam runs along -z)
    assert np.count_nonzero(np.abs(tip[:, 0]) > 1e-9 * np.abs(tip).max()) == 1
    assert np.count_nonzero(np.abs(tip[:, 1]) > 1e-9 * np.abs(tip).max()) == 1
    assert np.allclose(d.Me, np.eye(3), atol=1e-10)


def test_geometric_stiffness_follows_the_beam_direction():
    """A beam along +x spinning about z and the same beam along +y spinning about z: same ksigma;
    the rigid fields of the product cases are w x (w x c)."""
    kw = dict(E=E, G=G, rho=RHO, **SEC)
    bx = beam(L, 6, axis=(1, 0, 0), **kw)
    by = beam(L, 6, axis=(0, 1, 0), y_axis=(-1, 0, 0), **kw)
    ks = []
    for b in (bx, by):
        d = fe_modal_data(b.M, b.K, b.nodes, modes=4,
                       geometric_stiffness=lambda h, b=b: beam_geometric_stiffness(b, h))
        ks.append(d.ksigma.M1[:, :, LOAD_CASES.index("w_z*w_z")])
    assert np.allclose(ks[0], ks[1], rtol=1e-10, atol=1e-10 * np.abs(ks[0]).max())
    from mbsfmu.model.elastic.geometric_stiffness import rigid_accelerations
    rng = np.random.default_rng(3)
    X = rng.normal(size=(4, 3))
    w = rng.normal(size=3)
    products = [w[0] ** 2, w[1] ** 2, w[2] ** 2, w[0] * w[1], w[1] * w[2], w[2] * w[0]]
    A = rigid_accelerations(X)[:, 6:] @ products
    assert np.allclose(A.reshape(4, 6)[:, :3], np.cross(w, np.cross(w, X)))
    assert np.allclose(A.reshape(4, 6)[:, 3:], 0)
