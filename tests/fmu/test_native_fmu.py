"""The native (Python-free) FMUs: generated C + the C runtime, run with fmpy, compared with
``mbsfmu.simulate`` (the Python implementation of the same formulations and integrator)."""

import math
import subprocess
import zipfile
from functools import partial

import numpy as np
import pytest
import sympy as sp
from fmu_support import CASES, MODELS, TOL, Lazy, Slave, assert_matches, reference
from slow_cases import cases

import mbsfmu
from mbsfmu.core.errors import InconsistentInitialValuesWarning, ModelError

fmpy = pytest.importorskip("fmpy")

from fmpy.fmi1 import FMICallException  # noqa: E402

from mbsfmu.fmu.native import build_native_fmu  # noqa: E402

NAMES = tuple(CASES)


@pytest.fixture(scope="module")
def fmus(built_fmu):
    return Lazy({**{name: partial(built_fmu, MODELS / f"{name}.py") for name in NAMES},
                 "slider_crank_baumgarte": partial(built_fmu, MODELS / "slider_crank.py",
                                                   formulation="baumgarte")})


def run(name, path, **kw):
    T, dt, _ = CASES[name]
    return fmpy.simulate_fmu(str(path), stop_time=T, output_interval=dt,
                             start_values={**TOL, **kw.pop("start_values", {})}, **kw)


FAST = {"cart_pendulum", "slider_crank"}  # the FMUs of the fast subset (ci/test --fast), built once


@pytest.mark.parametrize("name", cases(NAMES, fast=FAST))
def test_contents_and_no_libpython(fmus, name):
    path = fmus[name]
    assert path.name == f"{name}.fmu"
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        assert f"binaries/linux64/{name}.so" in names
        for src in ("fmi2_glue.c", "mbs_formulation.c", "mbs_linalg.c", "mbs_rkstab.c", "model.c",
                    "model_aba.c", "model_tree.c", "model_config.h"):
            assert f"sources/{src}" in names
        xml = z.read("modelDescription.xml").decode()
        assert 'canGetAndSetFMUstate="true"' in xml and 'needsExecutionTool="false"' in xml
        so = path.parent / f"{name}_check.so"
        so.write_bytes(z.read(f"binaries/linux64/{name}.so"))
    ldd = subprocess.run(["ldd", str(so)], capture_output=True, text=True).stdout
    assert "libpython" not in ldd
    syms = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True,
                          text=True).stdout.split()
    assert "fmi2DoStep" in syms and "fmi2SerializeFMUstate" in syms
    assert "mbs_dynamics" not in syms


@pytest.mark.parametrize("name", cases([*NAMES, "slider_crank_baumgarte"], fast=FAST))
def test_validate(fmus, name):
    from fmpy.validation import validate_fmu

    assert validate_fmu(str(fmus[name])) == []


@pytest.mark.parametrize("name", cases(NAMES, fast=FAST))
def test_matches_simulate(fmus, name):
    r = run(name, fmus[name])
    assert_matches(r, reference(name))
    if "constraint_residual" in r.dtype.names:
        assert np.max(r["constraint_residual"]) < 1e-12


@pytest.mark.slow
def test_baumgarte_matches_simulate(fmus):
    r = run("slider_crank", fmus["slider_crank_baumgarte"])
    assert_matches(r, reference("slider_crank", formulation="baumgarte"))
    assert 0 < np.max(r["constraint_residual"]) < 1e-8  # Baumgarte lets c drift, but only a little


@pytest.mark.slow
def test_andrews_reference_solution(fmus):
    """The native FMU against the published IVP test set solution at t = 0.03 (not ourselves)."""
    from models.andrews import REFERENCE_T003

    r = fmpy.simulate_fmu(str(fmus["andrews"]), stop_time=0.03, output_interval=0.03,
                          start_values={"solver_rtol": 1e-11, "solver_atol": 1e-13})
    for name, want in REFERENCE_T003.items():
        assert abs(r[name][-1] - want) < 1e-8 * max(1.0, abs(want)), name


def test_cart_constant_input(fmus):
    u = np.array([(0.0, 2.0), (2.0, 2.0)], dtype=[("time", float), ("F", float)])
    r = run("cart_pendulum", fmus["cart_pendulum"], input=u)
    assert_matches(r, reference("cart_pendulum", inputs={"F": 2.0}))
    assert np.max(np.abs(r["x"] - reference("cart_pendulum").y[0])) > 0.1


def test_cart_input_changes_every_step(fmus, tmp_path):
    """The input is held over each communication step: the same as simulate with a staircase."""
    s = Slave(fmus["cart_pendulum"], tmp_path)
    s.start()
    h, n = 0.01, 100
    rows = s.run(0.0, n, h, inputs=lambda t: {"F": math.sin(5 * t)})
    s.free()
    ref = reference("cart_pendulum", t_end=1.0, dt=h,
                    inputs={"F": lambda t: math.sin(5 * h * min(math.floor(t / h + 1e-9), n - 1))},
                    method="rkstab")
    assert np.max(np.abs(rows[:, 0] - ref.y[0][1:])) < 1e-6  # a staircase input limits the agreement
    assert np.max(np.abs(rows[:, 0] - reference("cart_pendulum", t_end=1.0, dt=h).y[0][1:])) > 1e-3


def test_parameter_via_start_values(fmus):
    r = run("cart_pendulum", fmus["cart_pendulum"], start_values={"m": 3.0})
    assert_matches(r, reference("cart_pendulum", params={"m": 3.0}))
    r = run("double_pendulum", fmus["double_pendulum"], start_values={"m": 3.0})
    assert_matches(r, reference("double_pendulum", params={"m": 3.0}))


def test_given_start_value_is_held_or_reported(fmus, tmp_path):
    """A given slider position contradicts the crank-angle condition: the native FMU moves it, warns
    (fmi2Warning, message naming x) and ends where mbsfmu.simulate's consistent initialization does."""
    s = Slave(fmus["slider_crank"], tmp_path)
    status = s.start({"x": 0.55})
    y0 = s.get(["x", "alpha", "beta", "der(x)", "der(alpha)", "der(beta)"])
    rows = s.run(0.0, 20, 0.01)
    s.free()
    assert status == 1  # fmi2Warning
    assert any("x: 0.55 ->" in m for st, c, m in s.messages if c == "logStatusWarning")
    with pytest.warns(InconsistentInitialValuesWarning):
        ref = mbsfmu.simulate(MODELS / "slider_crank.py", 0.2, 0.01, rtol=1e-10, atol=1e-12,
                              method="rkstab", initial={"x": 0.55})
    assert np.max(np.abs(y0 - np.concatenate((ref.y[:, 0], ref.yd[:, 0])))) < 1e-10
    assert np.max(np.abs(rows[-1, :3] - ref.y[:, -1])) < 1e-8


@pytest.mark.slow
def test_time_parameter_model(tmp_path):
    """A pendulum on a support moved by s(t) = A sin(w t): p, p', p'' are generated C."""
    s = mbsfmu.System("moving_support")
    A, w, L, m, g = s.constants(A=0.1, w=3.0, L=1.0, m=1.0, g=9.81)
    z = s.time_parameter("z", A * sp.sin(w * s.t))
    phi = s.coordinate("phi", initial=0.3)
    s.gravity([0, -g, 0])
    s.frame("support", pos=[z, 0, 0])
    s.body("bob", ref="support", rel_rot=mbsfmu.rot_z(phi), cg_pos=[0, -L, 0], mass=m,
           inertia=[0, 0, 0])
    path = build_native_fmu(s, tmp_path)
    r = fmpy.simulate_fmu(str(path), stop_time=2.0, output_interval=0.01, start_values=TOL)
    ref = mbsfmu.simulate(s, 2.0, 0.01, rtol=1e-10, atol=1e-12)
    assert_matches(r, ref)


def test_time_parameter_callables_rejected(tmp_path):
    s = mbsfmu.System("callable_tp")
    z = s.time_parameter("z", function=math.sin, function_d=math.cos, function_dd=lambda t: -math.sin(t))
    x = s.coordinate("x")
    s.body("b", rel_pos=[x + z, 0, 0], mass=1.0, inertia=[1, 1, 1])
    with pytest.raises(ModelError, match="Python functions"):
        build_native_fmu(s, tmp_path)


def test_unsupported_formulation_rejected(tmp_path):
    with pytest.raises(ModelError, match="'minimal' needs a system without constraints"):
        build_native_fmu(MODELS / "slider_crank.py", tmp_path, formulation="minimal")


# ---------------------------------------------------------------- FMU state, reset, instances

@pytest.mark.parametrize("name", cases(["cart_pendulum", "slider_crank", "andrews"], fast=FAST))
def test_state_round_trip_is_bit_identical(fmus, tmp_path, name):
    T, dt, _ = CASES[name]
    inputs = (lambda t: {"F": math.sin(3 * t)}) if name == "cart_pendulum" else None
    a = Slave(fmus[name], tmp_path, "a")
    a.start()
    a.run(0.0, 5, dt, inputs)
    state = a.fmu.getFMUstate()
    blob = a.fmu.serializeFMUstate(state)
    first = a.run(5 * dt, 10, dt, inputs)
    a.fmu.setFMUstate(state)
    again = a.run(5 * dt, 10, dt, inputs)
    assert np.array_equal(first, again)  # bit for bit
    a.fmu.freeFMUstate(state)
    # the serialized state restored in a second instance continues identically too
    b = Slave(fmus[name], tmp_path, "b")
    b.start()
    restored = b.fmu.deSerializeFMUstate(blob)
    b.fmu.setFMUstate(restored)
    b.fmu.freeFMUstate(restored)
    assert np.array_equal(b.run(5 * dt, 10, dt, inputs), first)
    with pytest.raises(FMICallException):
        b.fmu.deSerializeFMUstate(blob[:-8])
    assert any("truncated" in m for m in b.errors())
    a.free()
    b.free()


def test_reset_runs_like_a_fresh_instance(fmus, tmp_path):
    s = Slave(fmus["slider_crank"], tmp_path)
    s.start()
    fresh = s.run(0.0, 20, 0.01)
    s.fmu.reset()
    s.start()
    assert np.array_equal(s.run(0.0, 20, 0.01), fresh)
    s.free()


def test_two_instances_in_one_process(fmus, tmp_path):
    path = fmus["double_pendulum"]
    a = Slave(path, tmp_path, "a")
    b = Slave(path, tmp_path, "b")  # same unzipped folder: the same loaded library
    refs = {a: reference("double_pendulum"), b: reference("double_pendulum", params={"m": 3.0})}
    names = refs[a].coordinate_names
    a.start()
    b.start({"m": 3.0})
    try:
        for k in range(200):  # interleaved steps
            for s in (a, b):
                s.fmu.doStep(k * 0.01, 0.01)
                assert np.max(np.abs(s.get(names) - refs[s].y[:, k + 1])) < 1e-8
        assert abs(a.get(names)[1] - b.get(names)[1]) > 1e-3
    finally:
        a.free()
        b.free()


def test_variable_communication_step(fmus):
    """Irregular communication points give the same solution at the common points."""
    from fmu_support import reference as ref_fn

    ref = ref_fn("slider_crank")
    s = Slave(fmus["slider_crank"], fmus["slider_crank"].parent / "vstep")
    s.start()
    t = 0.0
    for h in (0.003, 0.007, 0.02, 0.05, 0.12, 0.3):
        s.fmu.doStep(t, h)
        t += h
    assert math.isclose(t, 0.5)
    assert np.max(np.abs(s.get(["x", "alpha", "beta"]) - ref.y[:, 50])) < 1e-8
    s.free()


# ---------------------------------------------------------------- bad input

def test_negative_step_and_step_before_init(fmus, tmp_path):
    s = Slave(fmus["cart_pendulum"], tmp_path)
    s.instantiate()
    try:
        s.fmu.setupExperiment(startTime=0.0)
        with pytest.raises(FMICallException):
            s.fmu.doStep(0.0, 0.1)  # before initialization
        assert any("not allowed in state 'instantiated'" in m for m in s.errors())
        s.fmu.enterInitializationMode()
        s.fmu.exitInitializationMode()
        with pytest.raises(FMICallException):
            s.fmu.doStep(0.0, -1.0)
        with pytest.raises(FMICallException):
            s.fmu.doStep(0.0, 0.0)
        assert any("step size must be > 0" in m for m in s.errors())
        with pytest.raises(FMICallException):
            s.fmu.doStep(0.5, 0.1)  # not the FMU's time
        s.fmu.doStep(0.0, 0.1)  # still usable after the rejected calls
        assert math.isfinite(s.get(["theta"])[0])
    finally:
        s.free()


def test_nan_inf_and_unknown_vr_rejected_with_names(fmus, tmp_path):
    s = Slave(fmus["cart_pendulum"], tmp_path)
    s.instantiate()
    try:
        s.fmu.setupExperiment(startTime=0.0)
        s.fmu.enterInitializationMode()
        with pytest.raises(FMICallException):
            s.set({"m": float("nan")})
        assert "variable 'm' is not finite" in s.errors()[-1]
        with pytest.raises(FMICallException):
            s.fmu.setReal([1000], [1.0])
        with pytest.raises(FMICallException):
            s.fmu.getReal([1000])
        with pytest.raises(FMICallException):
            s.fmu.getInteger([0])
        assert s.fmu.getInteger([]) == []
        s.fmu.exitInitializationMode()
        with pytest.raises(FMICallException):
            s.set({"F": float("inf")})
        assert "variable 'F' is not finite" in s.errors()[-1]
        with pytest.raises(FMICallException):
            s.set({"x": 1.0})  # an output after initialization
        assert s.get(["m", "F"]).tolist() == [0.1, 0.0]  # rejected calls change nothing
        s.fmu.doStep(0.0, 0.1)
    finally:
        s.free()


def test_fixed_geometry_parameter_rejected_while_stepping(fmus, tmp_path):
    s = Slave(fmus["slider_crank"], tmp_path)
    s.start({"m_rod": 0.6})  # tunable before and after initialization
    s.fmu.doStep(0.0, 0.01)
    s.set({"m_rod": 0.7})
    with pytest.raises(FMICallException):
        s.set({"l": 0.6})
    assert "parameter 'l' is fixed" in s.errors()[-1]
    s.fmu.doStep(0.01, 0.01)
    s.free()


def test_unsatisfiable_constraints_fail_at_initialization(fmus, tmp_path):
    """A rod shorter than the crank's height at 45 degrees cannot close the loop."""
    s = Slave(fmus["slider_crank"], tmp_path)
    with pytest.raises(FMICallException):
        s.start({"l": 0.05})
    msg = s.errors()[-1]
    assert "no consistent initial state" in msg
    assert "'pivot." in msg or "'crank_angle'" in msg
    s.free()


def test_integrator_failure_is_an_error_not_a_hang(fmus, tmp_path):
    # a finite but absurd input drives the state to overflow within the step
    s = Slave(fmus["cart_pendulum"], tmp_path)
    s.start()
    s.fmu.doStep(0.0, 0.01)
    before = s.get()
    s.set({"F": 1e300})
    with pytest.raises(FMICallException):
        s.fmu.doStep(0.01, 0.01)
    assert "failed" in s.errors()[-1] and "inputs held over the step: F = 1e+300" in s.errors()[-1]
    assert np.array_equal(s.get(), before)  # the last communication point's values are kept
    assert s.fmu.getRealStatus(2) == 0.01  # fmi2LastSuccessfulTime
    s.free()


def test_debug_logging_categories(fmus, tmp_path):
    s = Slave(fmus["double_pendulum"], tmp_path)
    s.instantiate(logging_on=False)
    s.fmu.setDebugLogging(True, ["logEvents"])
    with pytest.raises(FMICallException):
        s.fmu.setDebugLogging(True, ["noSuchCategory"])
    s.start()
    assert any(c == "logEvents" and "fmi2ExitInitializationMode" in m for st, c, m in s.messages)
    s.free()


@pytest.mark.slow
def test_sources_compile_without_warnings(fmus, tmp_path):
    from mbsfmu.fmu.native import CFLAGS, COMPILED_SOURCES, fmi_include_dir

    for name in ("double_pendulum", "andrews"):
        d = tmp_path / name
        with zipfile.ZipFile(fmus[name]) as z:
            z.extractall(d)
        src = d / "sources"
        cmd = ["gcc", *CFLAGS, "-Werror", "-pedantic", f"-I{fmi_include_dir()}", f"-I{src}",
               "-o", str(d / "t.so"), *(str(src / f) for f in COMPILED_SOURCES), "-lm"]
        res = subprocess.run(cmd, capture_output=True, text=True)
        assert res.returncode == 0 and not res.stderr, res.stderr


@pytest.mark.slow
def test_source_fmu_rebuilds_with_fmpy(fmus, tmp_path):
    """fmpy's compile step (CMake, warnings as errors) rebuilds the binary from sources/ alone."""
    import shutil

    from fmpy import extract
    from fmpy.build import build_platform_binary

    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    d = tmp_path / "src_fmu"
    extract(str(fmus["slider_crank"]), str(d))
    shutil.rmtree(d / "binaries")
    (tmp_path / "build").mkdir()
    build_platform_binary(d, build_dir=tmp_path / "build",
                          cmake_options={"CMAKE_COMPILE_WARNING_AS_ERROR:BOOL": "ON"})
    assert (d / "binaries" / "linux64" / "slider_crank.so").exists()
    r = fmpy.simulate_fmu(str(d), stop_time=1.0, output_interval=0.01, start_values=TOL)
    assert_matches(r, reference("slider_crank"))


def test_dense_mode_steps_past_communication_points(fmus, tmp_path):
    """Without input changes the integrator's steps are not cut at every communication point:
    fewer internal steps than doStep calls (read from the statistics logged at terminate)."""
    import re

    s = Slave(fmus["slider_crank"], tmp_path)
    s.instantiate(logging_on=True)
    s.start({"solver_rtol": 1e-8, "solver_atol": 1e-9})
    s.run(0.0, 1000, 0.001)
    s.fmu.terminate()
    stats = [m for st, c, m in s.messages if m.startswith("statistics:")][-1]
    calls, accepted = map(int, re.search(r"(\d+) doStep calls.* (\d+) accepted", stats).groups())
    assert calls == 1000 and 0 < accepted < 400, stats
    s.free()


@pytest.mark.slow
def test_redundant_constraints_qr_runs_baumgarte_explains(tmp_path):
    """A planar four-bar closed in 3D (rank 2 of 3): the native 'qr' FMU runs it and matches the
    planar model; Baumgarte's KKT matrix is singular, which initialization reports by name."""
    from models.four_bar import model

    s = model(closure="3d")
    s.reaction_outputs()
    r = fmpy.simulate_fmu(str(build_native_fmu(s, tmp_path / "qr.fmu")), stop_time=1.0,
                          output_interval=0.1, start_values=TOL)
    ref = mbsfmu.simulate(model(closure="planar"), 1.0, 0.1, rtol=1e-10, atol=1e-12, method="rkstab")
    for n in ref.coordinate_names:
        assert np.max(np.abs(r[n] - ref[n])) < 1e-8, n
    assert np.all(np.isfinite(r["reaction.joint_C.x"]))  # minimum-norm multipliers
    b = Slave(build_native_fmu(s, tmp_path / "b.fmu", formulation="baumgarte"), tmp_path)
    with pytest.raises(FMICallException):
        b.start()
    assert "redundant constraints" in b.errors()[-1]
    b.free()


def test_more_bad_calls_name_the_culprit(fmus, tmp_path):
    s = Slave(fmus["slider_crank"], tmp_path)
    s.instantiate()
    with pytest.raises(FMICallException):
        s.fmu.setupExperiment(startTime=1.0, stopTime=0.5)
    assert "stop time 0.5 is not a finite time after the start time 1" in s.errors()[-1]
    s.start()
    with pytest.raises(FMICallException):
        s.set({"constraint_residual": 0.0})
    assert "'constraint_residual' is a calculated output" in s.errors()[-1]
    with pytest.raises(FMICallException):  # slider_crank has no inputs, so no knowns
        s.fmu.getDirectionalDerivative([s.vr["x"]], [s.vr["l"]], [1.0])
    assert "the model has no inputs" in s.errors()[-1]
    s.free()
    c = Slave(fmus["cart_pendulum"], tmp_path, folder="cart")
    c.start()
    c.fmu.doStep(0.0, 0.01)
    with pytest.raises(FMICallException):
        c.fmu.getDirectionalDerivative([c.vr["drive_power"]], [c.vr["F"]], [float("nan")])
    assert "seed for 'F' is not finite" in c.errors()[-1]
    c.free()
