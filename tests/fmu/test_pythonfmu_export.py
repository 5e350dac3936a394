"""The pythonfmu kind of the FMUs: built with pythonfmu, run with fmpy, compared with
``mbsfmu.simulate``."""

import pathlib
import xml.etree.ElementTree as ET
import zipfile
from functools import partial

import numpy as np
import pytest
from fmu_support import Lazy

import mbsfmu
from mbsfmu.codegen.fmu_variables import fmu_variables
from mbsfmu.model.loader import load_model

fmpy = pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")

from mbsfmu.fmu.fmpy_callbacks import recorded_messages  # noqa: E402
from mbsfmu.fmu.pythonfmu_export import build_pythonfmu  # noqa: E402

MODELS = pathlib.Path(__file__).resolve().parents[2] / "models"
TOL = {"solver_rtol": 1e-10, "solver_atol": 1e-12}


@pytest.fixture(scope="module")
def fmus(built_fmu):
    return Lazy({name: partial(built_fmu, MODELS / f"{name}.py", "pythonfmu")
                 for name in ("double_pendulum", "cart_pendulum")})


def run(path, **kw):
    return fmpy.simulate_fmu(str(path), stop_time=1.0, output_interval=0.01,
                             start_values={**TOL, **kw.pop("start_values", {})}, **kw)


def reference(name, **kw):
    return mbsfmu.simulate(MODELS / f"{name}.py", 1.0, 0.01, rtol=1e-10, atol=1e-12, **kw)


def assert_matches(r, ref):
    assert np.allclose(r["time"], ref.t, atol=1e-12, rtol=0)
    for i, n in enumerate(ref.coordinate_names):
        assert np.max(np.abs(r[n] - ref.y[i])) < 1e-8, n
        assert np.max(np.abs(r[f"der({n})"] - ref.yd[i])) < 1e-8, n


def test_variables_match_fmu_variables(fmus):
    from fmpy import read_model_description

    for name, path in fmus.items():
        assert path.name == f"{name}.fmu"
        with zipfile.ZipFile(path) as z:
            assert f"resources/model/{name}.py" in z.namelist()
        md = read_model_description(str(path))
        with zipfile.ZipFile(path) as z:
            xml = ET.fromstring(z.read("modelDescription.xml"))
        raw = {e.get("name"): e.attrib for e in xml.iter("ScalarVariable")}
        expected = fmu_variables(load_model(MODELS / f"{name}.py"))
        assert [v.name for v in md.modelVariables] == [v.name for v in expected]
        for got, want in zip(md.modelVariables, expected):
            assert got.valueReference == want.value_reference
            assert got.causality == want.causality
            assert got.variability == want.variability
            assert raw[want.name].get("initial") == want.initial
            if want.start is None:
                assert got.start is None
            else:
                assert float(got.start) == want.start


def test_validate_fmu_trees(fmus):
    from fmpy.validation import validate_fmu

    for path in fmus.values():
        assert validate_fmu(str(path)) == []


def test_double_pendulum_matches_simulate(fmus):
    assert_matches(run(fmus["double_pendulum"]), reference("double_pendulum"))


def test_parameter_via_start_values(fmus):
    r = run(fmus["double_pendulum"], start_values={"m": 3.0, "L2": 0.7})
    assert_matches(r, reference("double_pendulum", params={"m": 3.0, "L2": 0.7}))
    assert np.max(np.abs(r["phi"] - reference("double_pendulum").y[1])) > 1e-3


def test_initial_state_via_start_values(fmus):
    r = run(fmus["double_pendulum"], start_values={"alpha": 0.2, "der(phi)": 0.5})
    assert_matches(r, reference("double_pendulum", initial={"alpha": 0.2, "der(phi)": 0.5}))


def test_cart_free_and_with_constant_input(fmus):
    path = fmus["cart_pendulum"]
    assert_matches(run(path), reference("cart_pendulum"))
    u = np.array([(0.0, 2.0), (1.0, 2.0)], dtype=[("time", float), ("F", float)])
    r = run(path, input=u)
    ref = reference("cart_pendulum", inputs={"F": 2.0})
    assert_matches(r, ref)
    assert np.max(np.abs(r["x"] - reference("cart_pendulum").y[0])) > 0.1


def test_cart_parameter(fmus):
    r = run(fmus["cart_pendulum"], start_values={"m": 3.0})
    assert_matches(r, reference("cart_pendulum", params={"m": 3.0}))


def test_nan_input_is_refused_at_set_real(fmus):
    from fmpy.fmi1 import FMICallException

    # refused by fmi2SetReal (fmi2Error naming the input), not discovered later by fmi2DoStep
    for u in (np.array([(0.0, np.nan), (1.0, np.nan)], dtype=[("time", float), ("F", float)]),
              np.array([(0.0, 0.0), (0.5, np.nan), (1.0, np.nan)], dtype=[("time", float), ("F", float)])):
        messages = []
        # recorded_messages, not fmpy's logger= (whose C proxy would dangle after the call)
        with pytest.raises(FMICallException) as err, recorded_messages(messages):
            run(fmus["cart_pendulum"], input=u)
        assert err.value.function == "fmi2SetReal" and err.value.status == 3
        text = " ".join(m[-1] for m in messages)
        assert "'F'" in text and "nan" in text, text


def test_loop_model_keeps_constraints(tmp_path):
    from fmpy.validation import validate_fmu

    path = build_pythonfmu(MODELS / "four_bar.py", tmp_path / "fb.fmu")
    assert path == tmp_path / "fb.fmu"
    assert validate_fmu(str(path)) == []  # InitialUnknowns completed after pythonfmu's build
    r = run(path, start_values={"solver_atol": 1e-11})
    ref = mbsfmu.simulate(MODELS / "four_bar.py", 1.0, 0.01, rtol=1e-10, atol=1e-11)
    for i, n in enumerate(ref.coordinate_names):
        assert np.max(np.abs(r[n] - ref.y[i])) < 1e-7, n
    assert np.max(r["constraint_residual"]) < 1e-10


@pytest.fixture(scope="module")
def loop_fmus(built_fmu):
    return Lazy({name: partial(built_fmu, MODELS / f"{name}.py", "pythonfmu")
                 for name in ("slider_crank", "andrews")})


@pytest.mark.parametrize("name", ["slider_crank", "andrews"])
def test_loop_models_match_simulate(loop_fmus, name):
    from fmpy.validation import validate_fmu
    from fmu_support import CASES
    from fmu_support import assert_matches as assert_close
    from fmu_support import reference as ref_run

    T, dt, _ = CASES[name]
    assert validate_fmu(str(loop_fmus[name])) == []
    r = fmpy.simulate_fmu(str(loop_fmus[name]), stop_time=T, output_interval=dt, start_values=TOL)
    assert_close(r, ref_run(name))
    assert np.max(r["constraint_residual"]) < 1e-12


@pytest.mark.parametrize("name", ["cart_pendulum", "slider_crank"])
def test_state_round_trip_is_bit_identical(fmus, loop_fmus, tmp_path, name):
    import math

    from fmu_support import Slave

    path = fmus.get(name) or loop_fmus.get(name)
    inputs = (lambda t: {"F": math.sin(3 * t)}) if name == "cart_pendulum" else None
    a = Slave(path, tmp_path, "a")
    a.start()
    a.run(0.0, 5, 0.01, inputs)
    state = a.fmu.getFMUstate()
    blob = a.fmu.serializeFMUstate(state)
    first = a.run(0.05, 10, 0.01, inputs)
    a.fmu.setFMUstate(state)
    assert np.array_equal(a.run(0.05, 10, 0.01, inputs), first)
    a.fmu.setFMUstate(a.fmu.deSerializeFMUstate(blob))
    assert np.array_equal(a.run(0.05, 10, 0.01, inputs), first)
    a.free()
