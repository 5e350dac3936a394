"""The C engine (mbsfmu/runtime) as every path runs it: simulate(backend='c'), the native FMU.

References: the numpy formulations and the Python RKSTAB (same method, same tolerances), and the
native FMU driven by fmpy, which runs the same C instance layer through the FMI glue and must
give bit-identical states on the same communication grid.
"""

import math

import numpy as np
import pytest
import sympy as sp
from fmu_support import Slave

import mbsfmu
from mbsfmu import derive
from mbsfmu.core.errors import ParameterError, SimulationError
from mbsfmu.engine.extension import Engine, EngineError
from mbsfmu.fmu.native import build_native_fmu
from mbsfmu.model.loader import load_model

CASES = [("slider_crank", 2.0), ("four_bar", 2.0), ("andrews", 0.03)]


def _pair(name, t_end, form, **kw):
    model = f"models/{name}.py"
    a = mbsfmu.simulate(model, t_end=t_end, dt=t_end / 100, rtol=1e-10, backend="c", formulation=form, **kw)
    b = mbsfmu.simulate(model, t_end=t_end, dt=t_end / 100, rtol=1e-10, backend="numpy", formulation=form,
                        method="rkstab", **kw)
    return a, b


def _rel(a, b):
    """max |a - b| over the run, relative to each signal's largest magnitude (at least 1)."""
    scale = np.maximum(1.0, np.abs(b).max(axis=1, keepdims=True))
    return float(np.max(np.abs(a - b) / scale))


@pytest.mark.parametrize("name,t_end", CASES)
@pytest.mark.parametrize("form", ["qr", "svd", "baumgarte", "dae", "projection", "partition"])
def test_engine_matches_numpy_reference(name, t_end, form):
    a, b = _pair(name, t_end, form)
    assert a.stats["backend"] == "c" and a.stats["formulation"] == form
    # same method, same tolerance: the same steps up to the last few (rounding of C vs numpy)
    assert abs(a.stats["nfev"] - b.stats["nfev"]) <= 0.02 * b.stats["nfev"]
    tol = 1e-9 if form != "dae" else 1e-7  # unstabilized drift amplifies rounding differences
    assert _rel(a.y, b.y) < tol
    assert _rel(a.yd, b.yd) < 10 * tol
    if form in ("qr", "svd", "partition"):
        assert a.constraint_residual.max() < 1e-12


def test_tree_runs_on_articulated_body_engine():
    a = mbsfmu.simulate("models/double_pendulum.py", t_end=5.0, dt=0.05, rtol=1e-10, backend="c")
    b = mbsfmu.simulate("models/double_pendulum.py", t_end=5.0, dt=0.05, rtol=1e-10, backend="numpy",
                        method="rkstab")
    assert a.stats["formulation"] == "minimal" and a.stats["backend"] == "c"
    assert _rel(a.y, b.y) < 1e-9 and _rel(a.yd, b.yd) < 1e-8
    e = a.energy()["total"]
    assert np.ptp(e) < 1e-8 * max(1.0, np.abs(e).max())


def test_engine_forty_seconds_in_one_call():
    # seed 000 Table 1 setting: slider-crank 40 s, rtol 1e-8 (the CPU time is in bench/engine.py)
    r = mbsfmu.simulate("models/slider_crank.py", t_end=40.0, rtol=1e-8, backend="c")
    assert r.t[-1] == 40.0 and r.stats["nfev"] > 1000
    assert r.constraint_residual.max() < 1e-12


def _engine_multipliers(system, form, grid):
    """(states, multipliers) the engine records over grid."""
    e = Engine(system, form)
    e.start(0.0, grid[-1])
    rec, reached, status, _, _ = e.run(grid, with_lambda=True)
    assert status == 0 and reached == len(grid)
    nx, nc = 2 * e.sizes["f"], e.sizes["m"]
    return rec[:, :nx], rec[:, -nc:]


@pytest.mark.parametrize("form", ["qr", "baumgarte", "partition"])
def test_engine_multipliers_are_the_reference_algorithm(form):
    """One algorithm (eq. 31 then the minimum-norm C^T lambda = M y'' - (q - k)) in C and Python:
    the engine's multipliers at its recorded states equal the reference's at the same states."""
    from mbsfmu.reference.formulations import make_formulation

    system = load_model("models/slider_crank.py")
    X, lam = _engine_multipliers(system, form, np.linspace(0.0, 1.0, 21))
    ref = make_formulation(form, derive(system).numeric())
    expect = np.array([ref.multipliers(0.05 * k, x) for k, x in enumerate(X)])
    assert np.max(np.abs(lam - expect)) < 1e-9 * max(1.0, np.abs(expect).max())


def test_engine_takes_redundant_constraints_with_qr_and_svd():
    """Four-bar closed in 3D (rank 2 of 3): the engine gives the planar motion and the
    minimum-norm multipliers (no z reaction); partition reports the lost rank."""
    from models import four_bar

    kw = dict(t_end=2.0, dt=0.5, rtol=1e-10, fixed=["phi1"], backend="c")
    planar = mbsfmu.simulate(four_bar.model(), formulation="qr", **kw)
    grid = np.linspace(0.0, 1.0, 5)
    _, lam_planar = _engine_multipliers(four_bar.model(), "qr", grid)
    for form in ("qr", "svd"):
        res = mbsfmu.simulate(four_bar.model("3d"), formulation=form, **kw)
        assert res.stats["rank"] == 2
        assert np.max(np.abs(res.y - planar.y)) < 1e-8
        assert res.constraint_residual.max() < 1e-12
        _, lam = _engine_multipliers(four_bar.model("3d"), form, grid)
        assert np.max(np.abs(lam[:, 2])) < 1e-9  # joint_C.z
        np.testing.assert_allclose(lam[:, :2], lam_planar, atol=1e-6)
    with pytest.raises(mbsfmu.core.errors.ConstraintError, match=r"3 constraints are redundant"):
        mbsfmu.simulate(four_bar.model("3d"), formulation="partition", **kw)


def test_partition_switches_like_the_reference():
    """With x independent the slider-crank's C_d is singular at dead centre: the engine switches
    the dependent coordinates where the reference does (same count) and gives the same motion."""
    kw = dict(t_end=4.0, dt=0.05, rtol=1e-10, formulation="partition",
              formulation_options={"independent": ["x"]})
    a = mbsfmu.simulate("models/slider_crank.py", backend="c", **kw)
    b = mbsfmu.simulate("models/slider_crank.py", backend="numpy", method="rkstab", **kw)
    assert len(b.stats["partition_switches"]) >= 1
    assert a.stats["switches"] == len(b.stats["partition_switches"])
    assert _rel(a.y, b.y) < 1e-8


@pytest.fixture(scope="module")
def slider_fmu(tmp_path_factory):
    return build_native_fmu("models/slider_crank.py", tmp_path_factory.mktemp("eng") / "sc.fmu",
                            formulation="qr")


@pytest.mark.parametrize("form", ["qr", "svd", "projection", "partition"])
def test_simulate_and_native_fmu_are_bit_identical(slider_fmu, tmp_path, form):
    fmu = slider_fmu if form == "qr" else build_native_fmu("models/slider_crank.py", tmp_path / "sc.fmu",
                                                           formulation=form)
    r = mbsfmu.simulate("models/slider_crank.py", t_end=2.0, dt=0.01, rtol=1e-8, backend="c",
                        formulation=form)
    s = Slave(fmu, tmp_path)
    s.instantiate()
    s.fmu.setupExperiment(startTime=0.0, stopTime=2.0)
    s.fmu.enterInitializationMode()
    s.set({"solver_rtol": 1e-8, "solver_atol": 1e-9})
    s.fmu.exitInitializationMode()
    names = r.coordinate_names + [f"der({n})" for n in r.coordinate_names]
    rows = [s.get(names)]
    t = 0.0
    for tk in r.t[1:]:
        s.fmu.doStep(t, tk - t)  # the engine's run makes the same call: do_step(t, grid[k] - t)
        t = t + (tk - t)
        rows.append(s.get(names))
    X = np.array(rows).T
    assert np.array_equal(X, np.vstack((r.y, r.yd)))  # bitwise


def test_engine_state_snapshot_continues_bit_identically():
    s = load_model("models/slider_crank.py")
    grid = np.linspace(0.0, 1.0, 11)
    a = Engine(s)
    a.start(0.0, 1.0)
    rec, reached, status, _, _ = a.run(grid)
    assert status == 0 and reached == 11
    b = Engine(s)
    b.start(0.0, 1.0)
    b.run(grid[:6])
    snap = b.save()
    c = Engine(s)
    c.restore(snap)
    rec2, reached2, status2, _, _ = c.run(grid[5:])
    assert status2 == 0 and np.array_equal(rec2, rec[5:])
    with pytest.raises(EngineError, match="not a saved state"):
        c.restore(snap[:-8])


def test_time_varying_inputs_from_python_match_reference():
    f = {"F": lambda t: 2.0 * np.sin(3.0 * t)}
    a = mbsfmu.simulate("models/cart_pendulum.py", t_end=2.0, dt=0.02, rtol=1e-10, backend="c", inputs=f)
    b = mbsfmu.simulate("models/cart_pendulum.py", t_end=2.0, dt=0.02, rtol=1e-10, backend="numpy",
                        method="rkstab", inputs=f)
    assert _rel(a.y, b.y) < 1e-9


def test_progress_is_reported_and_its_exception_stops_the_run():
    seen = []
    mbsfmu.simulate("models/slider_crank.py", t_end=5.0, backend="c", progress=lambda t, te: seen.append(t),
                    progress_every=0.0)
    assert seen[0] == 0.0 and seen[-1] == 5.0 and len(seen) > 3

    def boom(t, t_end):
        if t > 1.0:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        mbsfmu.simulate("models/slider_crank.py", t_end=5.0, backend="c", progress=boom,
                        progress_every=0.0)


def test_failed_run_keeps_partial_result():
    with pytest.raises(SimulationError) as info:
        mbsfmu.simulate("models/cart_pendulum.py", t_end=1.0, dt=0.01, backend="c", inputs={"F": 1e300})
    exc = info.value
    assert "failed" in str(exc) and "cart_pendulum" in str(exc)
    if exc.result is not None:
        assert exc.result.partial and exc.result.t[-1] < 1.0


def test_engine_refuses_bad_values_by_name():
    e = Engine(load_model("models/slider_crank.py"))
    with pytest.raises(EngineError, match="solver_rtol = 2 is outside its range"):
        e.set({"solver_rtol": 2.0})
    with pytest.raises(ParameterError, match="no variable 'nope'"):
        e.set({"nope": 1.0})
    with pytest.raises(ParameterError, match="unknown formulation 'nope'"):
        Engine(load_model("models/slider_crank.py"), formulation="nope")
    with pytest.raises(ParameterError, match="option weighting must be 'mass'"):
        Engine(load_model("models/slider_crank.py"), formulation="projection",
               options={"weighting": "heavy"})
    with pytest.raises(ParameterError, match="unknown independent coordinate"):
        Engine(load_model("models/slider_crank.py"), formulation="partition",
               options={"independent": ["nope"]})
    with pytest.raises(EngineError, match="leave 1 independent coordinates, got 2"):
        Engine(load_model("models/slider_crank.py"), formulation="partition",
               options={"independent": ["x", "alpha"]})


def _stiff_slider_crank(k=1e8):
    """The slider-crank with its slider held by a critically damped spring-damper of stiffness k
    (fast mode |lambda| ~ 2 sqrt(k / m) ~ 2e4 1/s): stiff, and the fast motion decays."""
    from models import slider_crank

    s = slider_crank.model()
    x = s.coordinates_["x"]
    kk, dd = s.constants(k_spring=k, d_spring=2.0 * math.sqrt(k * 1.0))
    s.generalized_force("holder", "x", -kk * (x.symbol - 0.6) - dd * x.velocity)
    return s


def test_stiff_method_takes_a_bounded_number_of_steps():
    """Radau IIA in the engine on a stiff spring-damper (1e8 N/m) in the slider-crank loop: a
    bounded number of steps for 1 s (187 here; the explicit method takes 2507, limited by
    stability), and the same motion as the explicit method where that one is affordable."""
    s = _stiff_slider_crank()
    stiff = mbsfmu.simulate(s, t_end=1.0, dt=0.1, rtol=1e-8, method="stiff", backend="c")
    assert stiff.stats["method"] == "stiff" and stiff.stats["backend"] == "c"
    assert stiff.stats["naccept"] < 300 and stiff.stats["njev"] < 100
    assert stiff.constraint_residual.max() < 1e-12
    short = dict(t_end=0.02, dt=0.01, rtol=1e-10, backend="c")
    ref = mbsfmu.simulate(_stiff_slider_crank(), method="explicit", **short)
    assert ref.stats["naccept"] > 100  # stability-limited even over 0.02 s
    imp = mbsfmu.simulate(_stiff_slider_crank(), method="stiff", **short)
    assert np.max(np.abs(imp.y - ref.y)) < 1e-8


def _constant_in_constraint():
    """A pendulum and a slider on x held by a constraint through a constant a: x = a l sin(phi),
    so a changes c, C and b' (and may be set until the start)."""
    s = mbsfmu.System("constant_loop")
    m, l, g, a = s.constants(m=0.7, l=0.4, g=9.81, a=0.2)
    phi, x = s.coordinates("phi", "x")
    s.gravity([0, -g, 0])
    s.body("bob", rel_rot=mbsfmu.rot_z(phi), cg_pos=[l, 0, 0], mass=m, inertia=[0, 1e-3, 1e-3])
    s.body("slide", rel_pos=[x, 0, 0], mass=0.3, inertia=[0, 0, 0])
    s.constraint("follow", x - a * l * sp.sin(phi))
    return s


@pytest.mark.parametrize("form", ["qr", "projection", "partition"])
def test_kept_position_terms_follow_changed_values(form):
    """The engine keeps c, C, b' of the point it evaluated last (an integrator evaluates the
    right-hand side where it has just projected); a changed value at the same (t, x) must not
    reuse them: the right-hand side after the change equals a fresh engine's with that value."""
    x = np.array([0.3, 0.05, 1.2, -0.4])
    e = Engine(_constant_in_constraint(), form)
    before = e.instance.rhs(0.5, x)
    np.testing.assert_array_equal(before, e.instance.rhs(0.5, x))  # the kept terms, same result
    e.set({"a": 0.5})
    after = e.instance.rhs(0.5, x)
    fresh = Engine(_constant_in_constraint(), form)
    fresh.set({"a": 0.5})
    np.testing.assert_array_equal(after, fresh.instance.rhs(0.5, x))
    assert np.max(np.abs(after - before)) > 1e-3
