"""Bad input gets a clear error that names the culprit (and nothing is half-built)."""

import math

import numpy as np
import pytest
import sympy as sp

import mbsfmu
from mbsfmu import ModelError, ParameterError, SingularMassMatrixError, System, derive, rot_x
from mbsfmu.cli import main as cli_main


def pendulum(**kw):
    s = System("p")
    m, l = s.constants(m=1.0, l=0.5)
    q, = s.coordinates("q")
    s.gravity([0, 0, -9.81])
    s.body("B", rel_rot=rot_x(q), cg_pos=[0, 0, -l], mass=m, inertia=kw.get("inertia", [1, 1, 1]))
    return s


def test_unknown_reference_frame():
    s = pendulum()
    with pytest.raises(ModelError, match=r"body 'C'.*unknown reference frame 'P9'.*ISYS, B, B_cg"):
        s.body("C", ref="P9", mass=1, inertia=[1, 1, 1])
    assert "C" not in s.frames and "C" not in s.bodies
    with pytest.raises(ModelError, match=r"spring-damper 'sd'.*unknown reference frame 'nowhere'"):
        s.spring_damper("sd", "ISYS", "nowhere", stiffness=1)
    with pytest.raises(ModelError, match=r"force 'f'.*unknown reference frame 'X'"):
        s.force("f", "B", [1, 0, 0], in_frame="X")


def test_duplicate_names():
    s = pendulum()
    with pytest.raises(ModelError, match=r"duplicate name 'm': already used by constant 'm'"):
        s.coordinate("m")
    with pytest.raises(ModelError, match=r"duplicate name 'B'"):
        s.body("B", mass=1, inertia=[1, 1, 1])
    with pytest.raises(ModelError, match=r"duplicate name 'B_cg'"):
        s.frame("B_cg")
    with pytest.raises(ModelError, match=r"duplicate name 'Dq'"):
        s.constant("Dq", 1.0)
    with pytest.raises(ModelError, match=r"reserved"):
        s.constant("t", 1.0)


def test_coordinate_moving_no_body_is_reported():
    s = pendulum()
    s.coordinate("z")
    with pytest.raises(SingularMassMatrixError, match=r"coordinate\(s\) 'z' move no body"):
        derive(s)


def test_singular_configuration_is_reported_with_state():
    # a rod with zero inertia whose cg lies on its hinge axis: M = 0 for every q
    s = System("axis")
    q, = s.coordinates("q")
    s.body("B", rel_rot=rot_x(q), cg_pos=[1, 0, 0], mass=1, inertia=[0, 0, 0])
    with pytest.raises(SingularMassMatrixError, match=r"not positive definite .* at t=0 \(q=0\)"):
        mbsfmu.simulate(s, t_end=1.0)


def test_non_numeric_and_missing_parameter_values():
    s = System("x")
    with pytest.raises(ParameterError, match=r"constant 'm'.*'heavy' is not a number"):
        s.constant("m", "heavy")
    with pytest.raises(ParameterError, match=r"constant 'k'.*not finite"):
        s.constant("k", math.nan)
    s = pendulum()
    k = s.constant("k")  # declared without a value
    s.generalized_force("spring", "q", -k * s.y[0])
    with pytest.raises(ParameterError, match=r"constant 'k' has no value"):
        mbsfmu.simulate(s, t_end=1.0)
    with pytest.raises(ParameterError, match=r"parameter 'm': 'abc' is not a number"):
        mbsfmu.simulate(s, t_end=1.0, params={"k": 1.0, "m": "abc"})
    with pytest.raises(ParameterError, match=r"unknown parameter\(s\) \['mass'\]"):
        mbsfmu.simulate(s, t_end=1.0, params={"k": 1.0, "mass": 2.0})
    res = mbsfmu.simulate(s, t_end=0.1, params={"k": 1.0})
    assert np.all(np.isfinite(res.y))


@pytest.mark.parametrize("inertia, msg", [
    ([[1, 0.1, 0], [0, 1, 0], [0, 0, 1]], r"body 'B': inertia tensor is not symmetric"),
    ([1, -1, 1], r"body 'B': inertia tensor is not positive"),
    ([1, 1, 3], r"body 'B'.*triangle inequality"),
])
def test_bad_inertia(inertia, msg):
    with pytest.raises(ModelError, match=msg):
        pendulum(inertia=inertia)


def test_bad_mass_and_parameter_dependent_inertia():
    s = System("b")
    q, = s.coordinates("q")
    with pytest.raises(ModelError, match=r"body 'B': mass must be positive, got -1"):
        s.body("B", rel_rot=rot_x(q), mass=-1, inertia=[1, 1, 1])
    J, = s.constants(J=1.0)
    s.body("C", rel_rot=rot_x(q), mass=1, inertia=[J, J, J])
    with pytest.raises(ParameterError, match=r"body 'C': inertia tensor is not positive semi-definite "
                                             r"\(principal moments -2, -2, -2\) \(J = -2.0\)"):
        mbsfmu.simulate(s, t_end=1.0, params={"J": -2.0})


def test_unknown_symbol_in_expression():
    s = pendulum()
    with pytest.raises(ModelError, match=r"body 'C' mass: unknown symbol\(s\) mm"):
        s.body("C", mass=sp.Symbol("mm"), inertia=[1, 1, 1])
    with pytest.raises(ModelError, match=r"unknown symbol\(s\) L9"):
        s.frame("F", pos="[0, 0, L9]")


def test_bad_simulation_arguments():
    s = pendulum()
    with pytest.raises(ParameterError, match=r"unknown method 'rk4'"):
        mbsfmu.simulate(s, t_end=1.0, method="rk4")
    with pytest.raises(ParameterError, match=r"dt must be a positive number"):
        mbsfmu.simulate(s, t_end=1.0, dt=-0.1)
    with pytest.raises(ParameterError, match=r"t_end must be a positive number"):
        mbsfmu.simulate(s, t_end=math.inf)
    with pytest.raises(ParameterError, match=r"initial value 'qq'"):
        mbsfmu.simulate(s, t_end=1.0, initial={"qq": 1.0})
    with pytest.raises(ParameterError, match=r"initial value 'q'.*not finite"):
        mbsfmu.simulate(s, t_end=1.0, initial={"q": math.nan})
    with pytest.raises(ParameterError, match=r"unknown input 'F'"):
        mbsfmu.simulate(s, t_end=1.0, inputs={"F": 1.0})


def test_non_finite_input_function_is_reported():
    from models import cart_pendulum

    with pytest.raises(mbsfmu.SimulationError, match=r"input 'F' is not finite at t="):
        mbsfmu.simulate(cart_pendulum.model(), t_end=1.0,
                        inputs={"F": lambda t: math.nan if t > 0.5 else 0.0})


def test_bad_model_files(tmp_path):
    with pytest.raises(ModelError, match=r"does not exist"):
        mbsfmu.load_model(tmp_path / "nope.py")
    f = tmp_path / "nomodel.py"
    f.write_text("x = 1\n")
    with pytest.raises(ModelError, match=r"nomodel.py: no model\(\) function"):
        mbsfmu.load_model(f)
    f = tmp_path / "wrong.py"
    f.write_text("def model():\n    return 42\n")
    with pytest.raises(ModelError, match=r"wrong.py: model\(\) returned int"):
        mbsfmu.load_model(f)
    f = tmp_path / "broken.py"
    f.write_text("def model(:\n")
    with pytest.raises(ModelError, match=r"broken.py: importing the model file failed"):
        mbsfmu.load_model(f)


def test_cli_errors_exit_2_with_message(capsys, tmp_path):
    out = str(tmp_path / "o.csv")
    rc = cli_main(["simulate", "models/double_pendulum.py", "--t-end", "1", "--set", "m=abc",
                   "--out", out])
    assert rc == 2
    assert "--set m: 'abc' is not a number" in capsys.readouterr().err
    rc = cli_main(["simulate", "models/double_pendulum.py", "--t-end", "1", "--set", "zz=1",
                   "--out", out])
    assert rc == 2
    assert "--set zz: no constant, coordinate, named initial condition or input" in capsys.readouterr().err
