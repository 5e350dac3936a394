"""CompiledRHS (generated C + straight-line Cholesky in one module) agrees with the numpy backend,
through both bindings: the CPython extension type and the ctypes fallback."""

import os

import numpy as np
import pytest
from c_support import shaker

from mbsfmu import ModelError, SingularMassMatrixError, System, rot_x
from mbsfmu.codegen.c_rhs import RHS_SOURCE, CompiledRHS, CtypesRHS
from mbsfmu.model.loader import load_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["double_pendulum", "cart_pendulum", "spinning_top"]
BINDINGS = ["extension", "ctypes"]


def _check(num, rhs, t, x):
    f = num.f
    xd = rhs(t, x)
    assert isinstance(xd, np.ndarray) and xd.shape == (2 * f,)
    np.testing.assert_array_equal(xd[:f], x[f:])
    ref = num.accelerations(t, x[:f], x[f:])
    assert np.max(np.abs(xd[f:] - ref)) <= 1e-12 * np.max(np.abs(ref)), (xd[f:], ref)
    return xd


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("name", [*MODELS, "shaker"])
def test_rhs_matches_numpy_backend(cache, name, binding):
    s = shaker() if name == "shaker" else load_model(os.path.join(ROOT, "models", f"{name}.py"))
    num = s.equations().numeric()
    if num.input_names:
        num.set_inputs({n: 2.5 for n in num.input_names})
        assert np.all(num.u != 0)
    rhs = CompiledRHS(num, binding=binding)
    assert rhs.binding == binding and isinstance(rhs, CompiledRHS)
    assert rhs.path.parent == cache
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


@pytest.mark.parametrize("binding", BINDINGS)
def test_time_parameter_changes_the_result(cache, binding):
    num = shaker().equations().numeric()
    rhs = CompiledRHS(num, binding=binding)
    x = np.array([0.3, -0.4])
    a, b = _check(num, rhs, 0.0, x), _check(num, rhs, 1.3, x)
    assert a[1] != b[1]


@pytest.mark.parametrize("binding", BINDINGS)
def test_parameter_and_input_changes_are_seen(cache, binding):
    num = load_model(os.path.join(ROOT, "models", "cart_pendulum.py")).equations().numeric()
    rhs = CompiledRHS(num, binding=binding)
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


def test_source_is_one_library_with_linalg_and_rhs():
    num = load_model(os.path.join(ROOT, "models", "double_pendulum.py")).equations().numeric()
    from mbsfmu.codegen.c_rhs import rhs_source

    src = rhs_source(num.eqs)
    assert '#include "mbs_linalg.h"' not in src
    assert "int mbs_chol_factor(int n, double *A)\n{" in src
    assert src.endswith(RHS_SOURCE) and "void mbs_dynamics(" in src


def test_loop_model_is_rejected():
    num = load_model(os.path.join(ROOT, "models", "four_bar.py")).equations().numeric()
    with pytest.raises(ModelError, match=r"four_bar: CompiledRHS handles tree models only.*constraint"):
        CompiledRHS(num)


@pytest.mark.parametrize("binding", BINDINGS)
def test_singular_mass_matrix_names_the_state(cache, binding):
    # point masses on the hinge axis x of coordinate q (one of them sliding along it by r):
    # q moves no mass, so the first Cholesky pivot (that of q) fails in every configuration
    s = System("axis")
    q, r = s.coordinates("q", "r")
    s.body("B", rel_rot=rot_x(q), cg_pos=[1, 0, 0], mass=1, inertia=[0, 0, 0])
    s.body("C", ref="B", rel_pos=[r, 0, 0], mass=1, inertia=[0, 0, 0])
    rhs = CompiledRHS(s.equations().numeric(), binding=binding)
    with pytest.raises(SingularMassMatrixError,
                       match=r"axis: mass matrix is not positive definite \(Cholesky pivot of 'q' "
                             r"failed.* at t=0.25 \(q=0, r=1.5\)"):
        rhs(0.25, [0.0, 1.5, 0.0, 0.0])


def test_extension_rejects_bad_calls(cache):
    num = load_model(os.path.join(ROOT, "models", "double_pendulum.py")).equations().numeric()
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


def test_ctypes_binding_is_the_fallback_without_python_headers(cache, monkeypatch):
    from mbsfmu.codegen import c_rhs
    from mbsfmu.codegen.compile import MissingPythonHeaders

    def no_headers(*_):
        raise MissingPythonHeaders("Python.h not found in /nowhere")

    monkeypatch.setattr(c_rhs, "compile_extension", no_headers)
    num = load_model(os.path.join(ROOT, "models", "double_pendulum.py")).equations().numeric()
    assert isinstance(CompiledRHS(num), CtypesRHS)
    with pytest.raises(MissingPythonHeaders, match="Python.h"):
        CompiledRHS(num, binding="extension")
    with pytest.raises(ValueError, match="unknown binding 'cffi'"):
        CompiledRHS(num, binding="cffi")
