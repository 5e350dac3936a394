"""The native (Python-free) FMUs: generated C + fmi2_glue.c, run with fmpy, compared with
``mbsfmu.simulate``."""

import math
import pathlib
import subprocess
import zipfile

import numpy as np
import pytest

import mbsfmu
from mbsfmu.errors import ModelError

fmpy = pytest.importorskip("fmpy")

from fmpy.fmi1 import FMICallException  # noqa: E402
from fmpy.fmi2 import FMU2Slave  # noqa: E402

from mbsfmu.fmu.native import build_native_fmu  # noqa: E402

MODELS = pathlib.Path(__file__).resolve().parent.parent / "models"
TOL = {"solver_rtol": 1e-10, "solver_atol": 1e-12}
NAMES = ("double_pendulum", "cart_pendulum")


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    out = tmp_path_factory.mktemp("native")
    return {name: build_native_fmu(MODELS / f"{name}.py", out) for name in NAMES}


@pytest.fixture(scope="module")
def references():
    cache = {}

    def get(name, **kw):
        key = (name, repr(sorted(kw.items())))
        if key not in cache:
            cache[key] = mbsfmu.simulate(MODELS / f"{name}.py", 2.0, 0.01, rtol=1e-10, atol=1e-12, **kw)
        return cache[key]

    return get


def run(path, **kw):
    return fmpy.simulate_fmu(str(path), stop_time=2.0, output_interval=0.01,
                             start_values={**TOL, **kw.pop("start_values", {})}, **kw)


def assert_matches(r, ref, tol=1e-8):
    assert np.allclose(r["time"], ref.t, atol=1e-12, rtol=0)
    for i, n in enumerate(ref.coordinate_names):
        assert np.max(np.abs(r[n] - ref.y[i])) < tol, n
        assert np.max(np.abs(r[f"der({n})"] - ref.yd[i])) < tol, n


def slave(path, tmp_path, name="inst", folder="unzipped"):
    from fmpy import extract, read_model_description

    md = read_model_description(str(path))
    d = tmp_path / folder
    if not d.exists():
        extract(str(path), str(d))
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=str(d),
                    modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
    vrs = {v.name: v.valueReference for v in md.modelVariables}
    return fmu, vrs


def test_contents_and_no_libpython(fmus):
    for name, path in fmus.items():
        assert path.name == f"{name}.fmu"
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            assert f"binaries/linux64/{name}.so" in names
            for src in ("fmi2_glue.c", "mbs_linalg.c", "mbs_rkstab.c", "model.c", "model_config.h"):
                assert f"sources/{src}" in names
            xml = z.read("modelDescription.xml").decode()
            assert 'canGetAndSetFMUstate="false"' in xml
            so = path.parent / f"{name}_check.so"
            so.write_bytes(z.read(f"binaries/linux64/{name}.so"))
        ldd = subprocess.run(["ldd", str(so)], capture_output=True, text=True).stdout
        assert "libpython" not in ldd
        syms = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True,
                              text=True).stdout.split()
        assert "fmi2DoStep" in syms and "mbs_dynamics" not in syms


def test_validate(fmus):
    from fmpy.validation import validate_fmu

    for path in fmus.values():
        assert validate_fmu(str(path)) == []


@pytest.mark.parametrize("name", NAMES)
def test_matches_simulate(fmus, references, name):
    assert_matches(run(fmus[name]), references(name))


def test_cart_constant_input(fmus, references):
    u = np.array([(0.0, 2.0), (2.0, 2.0)], dtype=[("time", float), ("F", float)])
    r = run(fmus["cart_pendulum"], input=u)
    assert_matches(r, references("cart_pendulum", inputs={"F": 2.0}))
    assert np.max(np.abs(r["x"] - references("cart_pendulum").y[0])) > 0.1


def test_parameter_via_start_values(fmus, references):
    r = run(fmus["cart_pendulum"], start_values={"m": 3.0})
    assert_matches(r, references("cart_pendulum", params={"m": 3.0}))
    r = run(fmus["double_pendulum"], start_values={"m": 3.0})
    assert_matches(r, references("double_pendulum", params={"m": 3.0}))


def test_negative_step_and_step_before_init(fmus, tmp_path):
    fmu, vrs = slave(fmus["cart_pendulum"], tmp_path)
    fmu.instantiate()
    try:
        fmu.setupExperiment(startTime=0.0)
        with pytest.raises(FMICallException):
            fmu.doStep(0.0, 0.1)  # before initialization
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        with pytest.raises(FMICallException):
            fmu.doStep(0.0, -1.0)
        with pytest.raises(FMICallException):
            fmu.doStep(0.0, 0.0)
        fmu.doStep(0.0, 0.1)  # still usable after the rejected calls
        assert math.isfinite(fmu.getReal([vrs["theta"]])[0])
    finally:
        fmu.freeInstance()


def test_nan_and_unknown_vr_rejected(fmus, tmp_path):
    fmu, vrs = slave(fmus["cart_pendulum"], tmp_path)
    fmu.instantiate(loggingOn=True)
    try:
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        with pytest.raises(FMICallException):
            fmu.setReal([vrs["m"]], [float("nan")])
        with pytest.raises(FMICallException):
            fmu.setReal([1000], [1.0])
        with pytest.raises(FMICallException):
            fmu.getReal([1000])
        with pytest.raises(FMICallException):
            fmu.getInteger([0])
        assert fmu.getInteger([]) == []
        fmu.exitInitializationMode()
        with pytest.raises(FMICallException):
            fmu.setReal([vrs["F"]], [float("inf")])
        with pytest.raises(FMICallException):
            fmu.getFMUstate()
        assert fmu.getReal([vrs["m"]]) == [0.1]  # rejected calls change nothing
        fmu.doStep(0.0, 0.1)
    finally:
        fmu.freeInstance()


def test_two_instances_in_one_process(fmus, references, tmp_path):
    path = fmus["double_pendulum"]
    a, vrs = slave(path, tmp_path, "a")
    b, _ = slave(path, tmp_path, "b")  # same unzipped folder: the same loaded library
    refs = {a: references("double_pendulum"), b: references("double_pendulum", params={"m": 3.0})}
    names = refs[a].coordinate_names
    for fmu, m in ((a, None), (b, 3.0)):
        fmu.instantiate()
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.setReal([vrs["solver_rtol"], vrs["solver_atol"]], [1e-10, 1e-12])
        if m is not None:
            fmu.setReal([vrs["m"]], [m])
        fmu.exitInitializationMode()
    try:
        for k in range(200):  # interleaved steps
            for fmu in (a, b):
                fmu.doStep(k * 0.01, 0.01)
                y = fmu.getReal([vrs[n] for n in names])
                assert np.max(np.abs(np.array(y) - refs[fmu].y[:, k + 1])) < 1e-8
        assert abs(a.getReal([vrs[names[1]]])[0] - b.getReal([vrs[names[1]]])[0]) > 1e-3
    finally:
        a.freeInstance()
        b.freeInstance()


def test_rejects_loop_models(tmp_path):
    with pytest.raises(ModelError, match="tree models only"):
        build_native_fmu(MODELS / "four_bar.py", tmp_path)


def test_sources_compile_without_warnings(fmus, tmp_path):
    from mbsfmu.fmu.native import CFLAGS, fmi_include_dir

    with zipfile.ZipFile(fmus["double_pendulum"]) as z:
        z.extractall(tmp_path)
    src = tmp_path / "sources"
    cmd = ["gcc", *CFLAGS, "-Werror", f"-I{fmi_include_dir()}", f"-I{src}", "-o", str(tmp_path / "t.so"),
           *(str(src / f) for f in ("fmi2_glue.c", "mbs_linalg.c", "mbs_rkstab.c")), "-lm"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0 and not res.stderr, res.stderr
