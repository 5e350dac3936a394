"""A flexible body's stiffness and damping factors given by constants are checked wherever
parameter values enter (issue 23): ``simulate`` on both backends, the native FMU at
fmi2ExitInitializationMode and between steps, the pythonfmu FMU; each refusal names the body,
the factor, its value and the constants it depends on."""

import textwrap

import pytest
from fmu_support import Slave

import mbsfmu
from mbsfmu import ParameterError, derive
from mbsfmu.equations.parameter_requirements import parameter_requirements

MODEL = textwrap.dedent('''
    """A pendulum of one flexible beam whose stiffness and damping factors are constants."""
    from mbsfmu import System, rot_x
    from mbsfmu.model.elastic import beam_modal_data


    def model():
        s = System("flex_factors")
        k_s, d_s = s.constants(k_s=1.0, d_s=1.0)
        a, = s.coordinates("a")
        s.gravity([0, 0, -9.81])
        data = beam_modal_data(0.5, E=2.1e11, rho=7850, A=1e-4, Iy=8e-10, Iz=8e-10, n_elements=4,
                               export=2, modes=2, axis=(0, 0, -1), plane="yz", damping=0.01)
        s.flexible_body("B", rel_rot=rot_x(a), data=data, stiffness_factor=k_s,
                        damping_factor=2 * d_s - 1)
        s.initial(a=0.3)
        return s
''')

STIFF = "flexible body 'B': stiffness_factor must be >= 0 (it scales the modal stiffness Ke)"
DAMP = "flexible body 'B': damping_factor must be >= 0 (it scales the modal damping De)"


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("flex_factors") / "flex_factors.py"
    p.write_text(MODEL)
    return p


def test_requirements_list_both_factors(model_file):
    req = parameter_requirements(derive(mbsfmu.load_model(model_file)))
    assert [(f.body, f.label, f.parameters) for f in req.factors] == [
        ("B", "stiffness_factor", ["k_s"]), ("B", "damping_factor", ["d_s"])]
    assert "k_s" not in req.nonzero and "d_s" not in req.nonzero  # 0 is a valid factor


@pytest.mark.parametrize("backend", ["numpy", "c"])
@pytest.mark.parametrize("params, message", [
    ({"k_s": -1.0}, STIFF + ", got -1.0 (k_s = -1.0)"),
    ({"k_s": -1e-300}, STIFF + ", got -1e-300 (k_s = -1e-300)"),
    ({"d_s": 0.25}, DAMP + ", got -0.5 (d_s = 0.25)"),
])
def test_simulate_names_the_factor_and_its_constant(model_file, backend, params, message):
    with pytest.raises(ParameterError) as exc:
        mbsfmu.simulate(model_file, t_end=0.01, params=params, backend=backend)
    assert str(exc.value) == message


def test_zero_factors_run(model_file):
    """k_s = 0 (no elastic stiffness) and a factor 0 of the damping are allowed: the mass matrix
    stays regular, and with neither stiffness nor damping the elastic coordinates only feel
    the motion of the pendulum."""
    r = mbsfmu.simulate(model_file, t_end=0.05, dt=0.01, params={"k_s": 0.0, "d_s": 0.5})
    assert r.t[-1] == pytest.approx(0.05)


@pytest.fixture(scope="module")
def native_fmu(model_file, tmp_path_factory):
    pytest.importorskip("fmpy")
    from mbsfmu.fmu.native import build_native_fmu

    return build_native_fmu(model_file, tmp_path_factory.mktemp("native"))


@pytest.mark.slow
@pytest.mark.parametrize("values, message", [
    ({"k_s": -1.0}, STIFF + ", got -1 (k_s = -1)"),
    ({"d_s": 0.25}, DAMP + ", got -0.5 (d_s = 0.25)"),
])
def test_native_fmu_refuses_at_exit_initialization(native_fmu, tmp_path, values, message):
    from fmpy.fmi1 import FMICallException

    s = Slave(native_fmu, tmp_path, "a")
    s.instantiate()
    s.fmu.setupExperiment(startTime=0.0)
    s.fmu.enterInitializationMode()
    s.set(values)
    with pytest.raises(FMICallException):
        s.fmu.exitInitializationMode()
    assert s.errors()[-1] == f"fmi2ExitInitializationMode: {message}"


def test_native_fmu_refuses_between_steps_and_keeps_the_value(native_fmu, tmp_path):
    from fmpy.fmi1 import FMICallException

    s = Slave(native_fmu, tmp_path, "b")
    s.start()
    s.fmu.doStep(0.0, 0.01)
    with pytest.raises(FMICallException):
        s.set({"k_s": -2.0})
    assert s.errors()[-1] == f"fmi2SetReal: {STIFF}, got -2 (k_s = -2)"
    assert s.get(["k_s"])[0] == 1.0
    s.set({"k_s": 0.5})  # a valid value still goes in
    s.fmu.doStep(0.01, 0.01)
    assert s.get(["k_s"])[0] == 0.5


def test_pythonfmu_refuses_at_exit_initialization(model_file, tmp_path):
    pytest.importorskip("pythonfmu")
    pytest.importorskip("fmpy")
    from fmpy.fmi1 import FMICallException

    from mbsfmu.fmu.pythonfmu_export import build_pythonfmu

    fmu = build_pythonfmu(model_file, tmp_path)
    s = Slave(fmu, tmp_path, "c")
    s.instantiate()
    s.fmu.setupExperiment(startTime=0.0)
    s.fmu.enterInitializationMode()
    s.set({"k_s": -1.0})
    with pytest.raises(FMICallException):
        s.fmu.exitInitializationMode()
    assert f"{STIFF}, got -1 (k_s = -1)" in s.errors()[-1]
