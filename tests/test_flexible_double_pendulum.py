"""The flexible double pendulum of seed 002 §4.2 (``models/flexible_double_pendulum.py``, issue
15): it keeps its energy, tends to the rigid double pendulum with the same mass data as its
beams get stiffer, runs as a native FMU through fmpy like in process, and animates with one
frame per output sample drawn at the frames' positions."""

import importlib.util

import numpy as np
import pytest

import mbsfmu
from mbsfmu import System, derive, rot_x

MODEL = "models/flexible_double_pendulum.py"


def _fdp():
    spec = importlib.util.spec_from_file_location("flexible_double_pendulum_module", MODEL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rigid_twin() -> System:
    """The same double pendulum with rigid rods carrying each beam's mass, centre of gravity and
    inertia (from its modal data's M0 terms), the second hinged at the first one's tip node."""
    data = _fdp().beam_data()
    m = data.mass
    c = np.asarray(data.mdCM.M0) / m
    J_cg = np.asarray(data.J.M0) - m * (c @ c * np.eye(3) - np.outer(c, c))
    tip = data.nodes[-1].position
    s = System("rigid_twin")
    g = s.constant("g", 9.81)
    alpha, phi = s.coordinates("alpha", "phi")
    s.gravity([0, 0, -g])
    inertia = [[float(J_cg[i, j]) for j in range(3)] for i in range(3)]
    s.body("P1", rel_rot=rot_x(alpha), cg_pos=[float(x) for x in c], mass=m, inertia=inertia)
    s.frame("P1_tip", ref="P1", pos=[float(x) for x in tip])
    s.body("P2", ref="P1_tip", rel_rot=rot_x(phi), cg_pos=[float(x) for x in c], mass=m, inertia=inertia)
    s.initial(alpha=0.4, phi=1.5)
    return s


def test_conservative_flexible_double_pendulum_keeps_its_energy():
    r = mbsfmu.simulate(_fdp().model(geometric_stiffening=False), t_end=2.0, dt=0.01, rtol=1e-10)
    drift = r.relative_energy_drift()
    assert drift <= 1e-8, drift
    # the beams really deform: the second pendulum's tip moves across it by more than 0.1 mm
    tip = _fdp().beam_data().nodes[-1].phi[1] @ np.array([r[f"P2_q0{j}"] for j in (1, 2, 3)])
    assert np.abs(tip).max() > 1e-4


def test_tends_to_the_rigid_double_pendulum_as_the_stiffness_grows():
    rigid = mbsfmu.simulate(rigid_twin(), t_end=1.0, dt=0.01, rtol=1e-11)
    errors = []
    for scale in (1.0, 10.0, 100.0):
        r = mbsfmu.simulate(_fdp().model(stiffness_scale=scale), t_end=1.0, dt=0.01, rtol=1e-10)
        errors.append(max(np.abs(r["alpha"] - rigid["alpha"]).max(), np.abs(r["phi"] - rigid["phi"]).max()))
    print("max |flexible - rigid| [rad] for E x 1, 10, 100:", errors)
    assert errors[0] > 3 * errors[1] > 9 * errors[2]  # falls about as 1/stiffness
    assert errors[2] < 1e-3


@pytest.mark.parametrize("kind", ["native", "pythonfmu"])
def test_both_fmu_kinds_match_in_process(tmp_path, kind):
    from fmpy import simulate_fmu

    model = _fdp().model()
    fmu = mbsfmu.build_fmu(MODEL, tmp_path / "fdp.fmu", kind=kind)
    names = ["alpha", "phi", "P1_q01", "P2_q01"]
    r = simulate_fmu(str(fmu), stop_time=1.0, output_interval=0.01, output=names,
                     start_values={"solver_rtol": 1e-10, "solver_atol": 1e-12})
    ref = mbsfmu.simulate(model, t_end=1.0, dt=0.01, rtol=1e-10, atol=1e-12)
    for n in names:
        scale = max(1.0, np.abs(ref[n]).max()) if n in ("alpha", "phi") else np.abs(ref[n]).max()
        assert np.abs(r[n] - ref[n]).max() <= 1e-7 * scale, n


def test_animation_draws_the_nodes_of_the_result():
    r = mbsfmu.simulate(_fdp().model(), t_end=0.2, dt=0.02, rtol=1e-8)
    anim = r.animate()
    assert len(anim.times) == len(r.t)  # one frame per output sample
    for name in ("P1_4", "P1_11", "P2_8", "P2_11"):
        k = anim.frame_names.index(name)
        np.testing.assert_allclose(anim.points[:, k, :], r.frame(name)["position"], rtol=0, atol=1e-12)
    # each elastic body is a line through its nodes, in node order
    drawn = [[anim.frame_names[i] for i in ln.frames] for ln in anim.lines]
    for body in ("P1", "P2"):
        assert [f"{body}_{k}" for k in (1, 4, 8, 11)] in drawn, drawn


@pytest.mark.parametrize("bad, words", [({"modes": 20}, "mode"), ({"export": [1, 99]}, "99")])
def test_bad_beam_selections_are_named(bad, words):
    from mbsfmu.core.errors import ModelError
    from mbsfmu.model.elastic import beam_modal_data

    kw = dict(E=7e10, rho=2700.0, A=8e-5, Iy=1e-10, Iz=2e-9, n_elements=4, export=3, modes=3, plane="yz",
              axis=(0.0, 0.0, -1.0))
    kw.update(bad)
    with pytest.raises(ModelError, match=words):
        beam_modal_data(1.0, **kw)


def test_stiffness_constant_equals_a_stiffer_beam_and_sweeps():
    """The constant ``stiffness`` scales Ke of both beams: the same equations as the modal data
    rebuilt with E x 10 (the beam's modes do not depend on E, its stiffening neither), and a
    sweep over it runs like any parameter."""
    fdp = _fdp()
    by_constant = derive(fdp.model()).numeric({"stiffness": 10.0})
    by_data = derive(fdp.model(stiffness_scale=10.0)).numeric()
    rng = np.random.default_rng(3)
    for _ in range(3):
        y, yd = rng.normal(size=8) * [1, 1, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3], rng.normal(size=8)
        M1, h1 = by_constant.mass_and_force(0.0, y, yd)
        M2, h2 = by_data.mass_and_force(0.0, y, yd)
        # two eigensolves of the beam (K and 10 K) give the same modes to about 1e-10
        np.testing.assert_allclose(M1, M2, rtol=1e-8, atol=1e-8 * np.abs(M2).max())
        np.testing.assert_allclose(h1, h2, rtol=1e-8, atol=1e-8 * np.abs(h2).max())
    df = mbsfmu.sweep(MODEL, {"stiffness": [1.0, 100.0]}, t_end=0.3, metrics={"alpha_end": "final(alpha)"},
                      scheduler="synchronous")
    assert (df["status"] == "ok").all(), df["message"].tolist()
    for _, row in df.iterrows():
        single = mbsfmu.simulate(fdp.model(), t_end=0.3, params={"stiffness": row["stiffness"]})
        assert row["alpha_end"] == single["alpha"][-1]
    with pytest.raises(Exception, match="stiffness_factor must be a number >= 0"):
        System("x").flexible_body("B", data=fdp.beam_data(), stiffness_factor=-1.0)
    s = System("y")
    a = s.coordinate("a")
    with pytest.raises(Exception, match=r"flexible body 'B': damping_factor may depend on constants only, "
                                        r"not on \['a'\]"):
        s.flexible_body("B", data=fdp.beam_data(), damping_factor=a)
    assert "B" not in s.frames and not s.flexible_bodies  # nothing half-added
