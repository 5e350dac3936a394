"""CompiledRHS (generated C + mbs_linalg Cholesky in one library) agrees with the numpy backend."""

import os

import numpy as np
import pytest
from c_support import shaker

from mbsfmu import ModelError, SingularMassMatrixError, System, rot_x
from mbsfmu.codegen.c_rhs import RHS_SOURCE, CompiledRHS
from mbsfmu.model.loader import load_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["double_pendulum", "cart_pendulum", "spinning_top"]


def _check(num, rhs, t, x):
    f = num.f
    xd = rhs(t, x)
    assert isinstance(xd, np.ndarray) and xd.shape == (2 * f,)
    np.testing.assert_array_equal(xd[:f], x[f:])
    ref = num.accelerations(t, x[:f], x[f:])
    assert np.max(np.abs(xd[f:] - ref)) <= 1e-12 * np.max(np.abs(ref)), (xd[f:], ref)
    return xd


@pytest.mark.parametrize("name", [*MODELS, "shaker"])
def test_rhs_matches_numpy_backend(cache, name):
    s = shaker() if name == "shaker" else load_model(os.path.join(ROOT, "models", f"{name}.py"))
    num = s.equations().numeric()
    if num.input_names:
        num.set_inputs({n: 2.5 for n in num.input_names})
        assert np.all(num.u != 0)
    rhs = CompiledRHS(num)
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


def test_time_parameter_changes_the_result(cache):
    num = shaker().equations().numeric()
    rhs = CompiledRHS(num)
    x = np.array([0.3, -0.4])
    a, b = _check(num, rhs, 0.0, x), _check(num, rhs, 1.3, x)
    assert a[1] != b[1]


def test_parameter_and_input_changes_are_seen(cache):
    num = load_model(os.path.join(ROOT, "models", "cart_pendulum.py")).equations().numeric()
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


def test_singular_mass_matrix_names_the_state(cache):
    # point masses on the hinge axis x of coordinate q (one of them sliding along it by r):
    # q moves no mass, so the first Cholesky pivot (that of q) fails in every configuration
    s = System("axis")
    q, r = s.coordinates("q", "r")
    s.body("B", rel_rot=rot_x(q), cg_pos=[1, 0, 0], mass=1, inertia=[0, 0, 0])
    s.body("C", ref="B", rel_pos=[r, 0, 0], mass=1, inertia=[0, 0, 0])
    rhs = CompiledRHS(s.equations().numeric())
    with pytest.raises(SingularMassMatrixError,
                       match=r"axis: mass matrix is not positive definite \(Cholesky pivot of 'q' "
                             r"failed.* at t=0.25 \(q=0, r=1.5\)"):
        rhs(0.25, [0.0, 1.5, 0.0, 0.0])
