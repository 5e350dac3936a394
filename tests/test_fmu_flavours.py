"""Both FMU kinds step with the same C engine (issue 11): the pythonfmu FMU and the native FMU,
driven through fmpy on the same communication grid with the same tolerances, agree to 1e-12 at
every communication point, and in fact bit for bit (the pythonfmu slave runs the engine's
instance layer through its Python binding, the native FMU through fmi2_glue.c: the same C code,
the same calls).  Without a C compiler the pythonfmu kind falls back to the numpy path.
"""

import numpy as np
import pytest
from fmu_support import MODELS, TOL, Slave, assert_matches, reference, slider_crank_variant

fmpy = pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")

from fmpy.fmi1 import FMICallException  # noqa: E402

from mbsfmu.fmu.native import build_native_fmu  # noqa: E402
from mbsfmu.fmu.pythonfmu_export import build_pythonfmu  # noqa: E402

KINDS = ("native", "pythonfmu")
T_END, H = 2.0, 0.01

#: models/slider_crank.py with a motor torque T on the crank (an input that changes the motion)
DRIVEN = ("The slider-crank of models/slider_crank.py driven by a motor torque T on the crank.",
          'T = s.input("T", 0.0)', 's.torque("motor", "crank", [0, 0, T])')


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    out = tmp_path_factory.mktemp("kinds")
    driven = slider_crank_variant(out / "driven_crank.py", *DRIVEN)
    built = {}
    for name, path, form in (("slider_crank", MODELS / "slider_crank.py", None), ("driven", driven, None),
                             ("baumgarte", MODELS / "slider_crank.py", "baumgarte"),
                             ("cart_pendulum", MODELS / "cart_pendulum.py", None)):
        built["native", name] = build_native_fmu(path, out / "native" / f"{name}.fmu", formulation=form)
        built["pythonfmu", name] = build_pythonfmu(path, out / "pythonfmu" / f"{name}.fmu", formulation=form)
    return built


def _simulate(path, **kw):
    return fmpy.simulate_fmu(str(path), stop_time=T_END, output_interval=H, start_values=dict(TOL), **kw)


def _compare(a, b):
    """max |a - b| over every output at every communication point; the grids must be equal."""
    assert a.dtype.names == b.dtype.names and len(a) == len(b) == round(T_END / H) + 1
    assert np.array_equal(a["time"], b["time"])
    return max(float(np.max(np.abs(a[n] - b[n]))) for n in a.dtype.names)


def _bitwise(a, b):
    return all(np.array_equal(a[n], b[n]) for n in a.dtype.names)


def test_free_motion_agrees_at_every_communication_point(fmus):
    r = {f: _simulate(fmus[f, "slider_crank"]) for f in KINDS}
    diff = _compare(r["native"], r["pythonfmu"])
    print(f"slider-crank, 2 s at 0.01 s: max difference between the kinds {diff:.3g}, "
          f"bitwise identical: {_bitwise(r['native'], r['pythonfmu'])}")
    assert diff <= 1e-12
    assert _bitwise(r["native"], r["pythonfmu"])  # the same steps: not one bit differs
    assert np.max(r["pythonfmu"]["constraint_residual"]) < 1e-12
    assert np.ptp(r["pythonfmu"]["x"]) > 0.1  # it moves


def test_input_changing_every_step_agrees(fmus):
    t = np.arange(0.0, T_END + H / 2, H)
    u = np.array(list(zip(t, 0.3 * np.sin(5.0 * t))), dtype=[("time", float), ("T", float)])
    r = {f: _simulate(fmus[f, "driven"], input=u) for f in KINDS}
    diff = _compare(r["native"], r["pythonfmu"])
    print(f"driven slider-crank, T = 0.3 sin(5 t): max difference {diff:.3g}, "
          f"bitwise identical: {_bitwise(r['native'], r['pythonfmu'])}")
    assert diff <= 1e-12 and _bitwise(r["native"], r["pythonfmu"])
    free = _simulate(fmus["native", "driven"])
    assert np.max(np.abs(r["native"]["x"] - free["x"])) > 1e-3  # the input acts


@pytest.mark.parametrize("name,signal", [("baumgarte", None), ("cart_pendulum", "F")])
def test_other_formulation_and_tree_agree(fmus, name, signal):
    """The formulation chosen at build time (Baumgarte's), and a tree (the articulated-body ODE)
    with its input force changing at every step."""
    kw = {}
    if signal:
        t = np.arange(0.0, T_END + H / 2, H)
        kw["input"] = np.array(list(zip(t, 2.0 * np.cos(3.0 * t))), dtype=[("time", float), (signal, float)])
    r = {f: _simulate(fmus[f, name], **kw) for f in KINDS}
    assert _compare(r["native"], r["pythonfmu"]) <= 1e-12 and _bitwise(r["native"], r["pythonfmu"])


def _torque(k):
    """Piecewise constant: 0, 0.4, -0.2, ... held for 25 steps each (the engine continues past
    communication points while it is held and restarts where it changes)."""
    return (0.0, 0.4, -0.2)[k // 25 % 3]


def _steps(s, k0, n):
    rows = []
    for k in range(k0, k0 + n):
        s.set({"T": _torque(k)})
        s.fmu.doStep(k * H, H)
        rows.append(s.get())
    return rows


def _run_with_states(path, tmp_path, folder):
    """100 steps, an FMU state (also serialized), 60 steps; both restored and run again: the
    rows of the run and the two re-runs."""
    s = Slave(path, tmp_path, folder=folder)
    s.start()
    rows = _steps(s, 0, 100)
    state = s.fmu.getFMUstate()
    blob = s.fmu.serializeFMUstate(state)
    rest = _steps(s, 100, 60)
    s.fmu.setFMUstate(state)
    again = _steps(s, 100, 60)
    s.fmu.setFMUstate(s.fmu.deSerializeFMUstate(blob))
    third = _steps(s, 100, 60)
    assert s.errors() == []
    s.free()
    return np.array(rows + rest), np.array(again), np.array(third)


def test_fmu_states_in_the_middle_agree(fmus, tmp_path):
    runs = {f: _run_with_states(fmus[f, "driven"], tmp_path, f) for f in KINDS}
    for f, (rows, again, third) in runs.items():
        assert np.array_equal(again, rows[100:]) and np.array_equal(third, rows[100:]), f
    a, b = runs["native"][0], runs["pythonfmu"][0]
    print(f"driven slider-crank with FMU states: max difference {np.max(np.abs(a - b)):.3g}, "
          f"bitwise identical: {np.array_equal(a, b)}")
    assert np.max(np.abs(a - b)) <= 1e-12 and np.array_equal(a, b)


def test_without_a_c_compiler_the_numpy_path_runs(fmus, tmp_path, monkeypatch):
    """No compiler where the FMU is instantiated: a warning says so and the instance integrates
    with the numpy formulations (the reference's accuracy, not the native FMU's steps); the FMU
    states of the two paths are not interchangeable, and say so."""
    path = fmus["pythonfmu", "slider_crank"]
    ref = reference("slider_crank")  # before the compiler goes
    engine = Slave(path, tmp_path, "engine", folder="fallback")
    engine.start()
    blob = engine.fmu.serializeFMUstate(engine.fmu.getFMUstate())
    engine.free()
    monkeypatch.setenv("CC", "no-such-c-compiler")
    s = Slave(path, tmp_path, "numpy", folder="fallback")
    s.instantiate()
    warnings = [m for st, c, m in s.messages if st == 1]
    assert len(warnings) == 1 and "fmi2Instantiate" in warnings[0] and "no-such-c-compiler" in warnings[0]
    assert "numpy formulations" in warnings[0]
    s.start()
    rows = [s.get()]
    for k in range(100):  # the 1 s of the reference run
        s.fmu.doStep(k * H, H)
        rows.append(s.get())
    X = np.array(rows)
    r = {"time": np.arange(len(rows)) * H, **{n: X[:, i] for i, n in enumerate(s.outputs)}}
    assert_matches(r, ref)
    state = s.fmu.getFMUstate()
    with pytest.raises(FMICallException):
        s.fmu.setFMUstate(s.fmu.deSerializeFMUstate(blob))
    assert "saved by an instance running on engine" in s.errors()[-1]
    assert "this instance runs on numpy" in s.errors()[-1]
    s.fmu.setFMUstate(state)  # its own states work
    s.free()

