"""CompiledRHS (the right-hand side of the model's C engine, called through the engine
extension's RHS type) agrees with the numpy backend."""

import os

import numpy as np
import pytest
from c_support import shaker

from mbsfmu import ModelError, SingularMassMatrixError, System, derive, rot_x
from mbsfmu.engine.c_kernel import use_c_kernel
from mbsfmu.engine.compiled_rhs import CompiledRHS
from mbsfmu.model.loader import load_model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = ["double_pendulum", "cart_pendulum", "spinning_top"]


def _check(num, rhs, t, x):
    f = num.f
    xd = rhs(t, x)
    assert isinstance(xd, np.ndarray) and xd.shape == (2 * f,)
    np.testing.assert_array_equal(xd[:f], x[f:])
    ref = num.accelerations(t, x[:f], x[f:])
    assert np.max(np.abs(xd[f:] - ref)) <= 1e-12 * np.max(np.abs(ref)), (xd[f:], ref)
    return xd


@pytest.mark.parametrize("algorithm", ["auto", "mass_matrix"])
@pytest.mark.parametrize("name", [*MODELS, "shaker"])
def test_rhs_matches_numpy_backend(cache, name, algorithm):
    s = shaker() if name == "shaker" else load_model(os.path.join(ROOT, "models", f"{name}.py"))
    num = derive(s).numeric()
    if num.input_names:
        num.set_inputs({n: 2.5 for n in num.input_names})
        assert np.all(num.u != 0)
    rhs = CompiledRHS(num, algorithm=algorithm)
    assert rhs.binding == "extension" and isinstance(rhs, CompiledRHS)
    # the model's engine module (built in this module's cache, or reused from an earlier test's:
    # the process keeps one module per generated source)
    assert rhs.path.is_file() and rhs.path.name.startswith("mbs_engine_")
    rng = np.random.default_rng(3)
    for _ in range(5):
        t = rng.uniform(0, 3)
        _check(num, rhs, t, rng.uniform(-2, 2, 2 * num.f))
    # a list is accepted as the state, and the output is a fresh array each call
    x = list(rng.uniform(-1, 1, 2 * num.f))
    a = rhs(0.5, x)
    b = rhs(0.5, np.array(x))
    assert a is not b
    np.testing.assert_array_equal(a, b)


def test_time_parameter_changes_the_result(cache):
    num = derive(shaker()).numeric()
    rhs = CompiledRHS(num)
    x = np.array([0.3, -0.4])
    a, b = _check(num, rhs, 0.0, x), _check(num, rhs, 1.3, x)
    assert a[1] != b[1]


def test_parameter_and_input_changes_are_seen(cache):
    num = derive(load_model(os.path.join(ROOT, "models", "cart_pendulum.py"))).numeric()
    rhs = CompiledRHS(num)
    x = np.array([0.3, -0.7, 1.1, 0.4])
    before = _check(num, rhs, 0.0, x)
    num.set_inputs({"F": 3.0})             # changes u in place
    after_u = _check(num, rhs, 0.0, x)
    num.set_params({"m": 0.4})             # replaces prm
    after_p = _check(num, rhs, 0.0, x)
    assert before[2] != after_u[2] != after_p[2]
    num.u = [1.0]                          # not an ndarray: copied at every call
    _check(num, rhs, 0.0, x)
    num.u = np.array([-2.0])
    _check(num, rhs, 0.0, x)


def test_rhs_is_the_engines_right_hand_side(cache):
    """No copy of its own: the object is the engine extension's RHS on an engine instance, and
    gives what the instance's own rhs gives with the same (start) values."""
    from mbsfmu.engine.extension import engine_module

    s = load_model(os.path.join(ROOT, "models", "cart_pendulum.py"))
    num = derive(s).numeric()
    rhs = CompiledRHS(num)
    mod = engine_module(s)
    assert type(rhs) is mod.RHS and isinstance(rhs.instance, mod.Instance)
    assert str(rhs.path) == mod.__file__ and rhs.source == mod.model_source
    assert "void mbs_dynamics(" in rhs.source and rhs.f == num.f and rhs.numeric is num
    x = np.array([0.3, -0.7, 1.1, 0.4])
    np.testing.assert_array_equal(rhs(0.2, x), rhs.instance.rhs(0.2, x))
    num.set_inputs({"F": 3.0})             # seen by rhs, not by the instance's own values
    assert rhs(0.2, x)[2] != rhs.instance.rhs(0.2, x)[2]
    _check(num, rhs, 0.2, x)


def test_loop_model_is_rejected():
    num = derive(load_model(os.path.join(ROOT, "models", "four_bar.py"))).numeric()
    with pytest.raises(ModelError, match=r"four_bar: CompiledRHS handles tree models only.*constraint"):
        CompiledRHS(num)


def test_singular_mass_matrix_names_the_state(cache):
    # point masses on the hinge axis x of coordinate q (one of them sliding along it by r):
    # q moves no mass, so the first Cholesky pivot (that of q) fails in every configuration
    s = System("axis")
    q, r = s.coordinates("q", "r")
    s.body("B", rel_rot=rot_x(q), cg_pos=[1, 0, 0], mass=1, inertia=[0, 0, 0])
    s.body("C", ref="B", rel_pos=[r, 0, 0], mass=1, inertia=[0, 0, 0])
    rhs = CompiledRHS(derive(s).numeric())
    assert rhs.algorithm == "mass_matrix"
    with pytest.raises(SingularMassMatrixError,
                       match=r"axis: mass matrix is not positive definite \(Cholesky pivot of 'q' "
                             r"failed.* at t=0.25 \(q=0, r=1.5\)"):
        rhs(0.25, [0.0, 1.5, 0.0, 0.0])


def test_extension_rejects_bad_calls(cache):
    num = derive(load_model(os.path.join(ROOT, "models", "double_pendulum.py"))).numeric()
    rhs = CompiledRHS(num, binding="extension")
    x = np.zeros(4)
    with pytest.raises(TypeError, match=r"rhs\(t, x\) takes exactly two positional arguments"):
        rhs(0.0)
    with pytest.raises(TypeError, match="two positional"):
        rhs(0.0, x, 1)
    with pytest.raises(TypeError, match="keyword"):
        rhs(0.0, x=x)
    with pytest.raises(TypeError):
        rhs("later", x)
    with pytest.raises(ValueError, match=r"the state x = \[y, y'\] must be a vector of 4 numbers"):
        rhs(0.0, np.zeros(3))
    with pytest.raises(ValueError, match="vector of 4"):
        rhs(0.0, np.zeros((2, 2)))
    num.prm = np.zeros(2)                   # a parameter array of the wrong size
    with pytest.raises(ValueError, match=r"parameter values \(numeric.prm\) must be a vector"):
        rhs(0.0, x)
    # non-contiguous and integer states are converted, not misread
    num.set_params({})
    big = np.zeros(8)
    big[::2] = [0.3, -0.2, 0.1, 0.4]
    np.testing.assert_array_equal(rhs(0.0, big[::2]), rhs(0.0, big[::2].copy()))
    np.testing.assert_array_equal(rhs(0.0, np.array([1, 0, 0, 0])), rhs(0.0, [1.0, 0.0, 0.0, 0.0]))


def test_without_python_headers_minimal_ode_keeps_the_per_state_kernel(cache, monkeypatch):
    """CompiledRHS needs the engine extension (no ctypes binding any more); without Python.h
    MinimalODE on the C backend falls back to the per-state kernel and still agrees."""
    from mbsfmu.codegen import compile as compile_module
    from mbsfmu.codegen.compile import MissingPythonHeaders
    from mbsfmu.reference.formulations.minimal_ode import MinimalODE

    def no_headers(*_):
        raise MissingPythonHeaders("Python.h not found in /nowhere")

    monkeypatch.setattr(compile_module, "python_include_dirs", no_headers)
    num = derive(load_model(os.path.join(ROOT, "models", "cart_pendulum.py"))).numeric()
    with pytest.raises(MissingPythonHeaders, match="Python.h"):
        CompiledRHS(num)
    with pytest.raises(ValueError, match="unknown binding 'ctypes'.*removed"):
        CompiledRHS(num, binding="ctypes")
    use_c_kernel(num)
    num.set_inputs({"F": 0.5})
    form = MinimalODE(num, {"F": 0.5})
    assert not isinstance(form.rhs, CompiledRHS)
    x = np.array([0.3, -0.7, 1.1, 0.4])
    _check(num, form.rhs, 0.0, x)


def test_constant_without_value(cache):
    """The engine module of CompiledRHS is built although a constant has no value (numeric.prm
    is handed in at every call); an Engine of the same model still refuses to start without it."""
    from mbsfmu import ParameterError, rot_z
    from mbsfmu.engine.extension import Engine

    s = System("unset")
    m = s.constant("m")
    (q,) = s.coordinates("q")
    s.gravity([0, -9.81, 0])
    s.body("B", rel_rot=rot_z(q), cg_pos=[1, 0, 0], mass=m, inertia=[0.1, 0.1, 0.1])
    num = derive(s).numeric({"m": 2.0})
    rhs = CompiledRHS(num)
    _check(num, rhs, 0.0, np.array([0.3, 0.1]))
    with pytest.raises(ParameterError, match="constant 'm' has no value"):
        Engine(s)
