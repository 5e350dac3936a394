"""y'' by the articulated-body algorithm (symbolic, and compiled into the engine that CompiledRHS
runs) equals the numpy backend's M^-1 (q - k); models that do not qualify fall back to the
mass-matrix path; a singular configuration names the coordinate whose pivot failed."""

import os
import sys

import numpy as np
import pytest
import sympy as sp
from c_support import shaker
from slow_cases import cases

from mbsfmu import ModelError, SingularMassMatrixError, System, derive, rot_x, rot_y, rot_z
from mbsfmu.codegen.c_aba import aba_source
from mbsfmu.engine.compiled_rhs import CompiledRHS
from mbsfmu.equations.articulated_body import aba_applicable, articulated_accelerations, articulated_body
from mbsfmu.equations.python_source import make_function
from mbsfmu.model.loader import load_model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from chain_rhs import mbsfmu_chain  # noqa: E402


def chain3d() -> System:
    """A spatial chain: revolute z, prismatic, a 2-angle universal joint, revolute y; offset and
    rotated cg frames with full inertia tensors, a spring-damper, inputs, a torque and a
    generalized force."""
    s = System("chain3d")
    m1, m2, m3, c, d, g = s.constants(m1=1.3, m2=0.7, m3=0.9, c=40.0, d=0.8, g=9.81)
    q1, x2, a3, b3, q4 = s.coordinates("q1", "x2", "a3", "b3", "q4")
    F, T = s.input("F", 0.0), s.input("T", 0.0)
    s.gravity([0.4, -0.3, -g])
    inertia = [[0.031, 0.004, -0.002], [0.004, 0.027, 0.003], [-0.002, 0.003, 0.022]]
    s.body("B1", ref="ISYS", rel_pos=[0.1, 0, 0.2], rel_rot=rot_z(q1), cg_pos=[0.2, 0.05, -0.03],
           cg_rot=rot_x(0.3), mass=m1, inertia=inertia)
    s.frame("B1_end", ref="B1", pos=[0.4, 0, 0], rot=rot_y(0.2))
    s.body("B2", ref="B1_end", rel_pos=[x2, 0, 0], cg_pos=[0, 0.1, 0.02], mass=m2,
           inertia=[0.01, 0.012, 0.009])
    s.body("B3", ref="B2", rel_pos=[0, 0, 0.1], rel_rot=rot_x(a3) * rot_y(b3),
           cg_pos=[0.05, -0.02, 0.25], cg_rot=rot_z(-0.4), mass=m3, inertia=inertia)
    s.frame("B3_tip", ref="B3", pos=[0, 0, 0.5])
    s.body("B4", ref="B3_tip", rel_rot=rot_y(q4), cg_pos=[0.15, 0, 0], mass=m1,
           inertia=inertia)
    s.frame("anchor", ref="ISYS", pos=[0.5, 0.3, -0.4])
    s.spring_damper("spring", "anchor", "B4_cg", stiffness=c, damping=d, rest_length=0.3)
    s.force("push", "B2", [F, 0, 0.5 * F], in_frame="B1")
    s.torque("twist", "B4", [0, T, 0], in_frame="B4")
    s.generalized_force("friction", "x2", -d * s.coordinates_["x2"].velocity)
    return s


def two_frames() -> System:
    """Coordinate q places two frames: no joint coordinates."""
    s = System("shared")
    (q,) = s.coordinates("q")
    s.body("A", rel_rot=rot_z(q), cg_pos=[1, 0, 0], mass=1, inertia=[0.1, 0.1, 0.1])
    s.body("B", ref="A", rel_pos=[q, 0, 0], mass=1, inertia=[0.1, 0.1, 0.1])
    return s


def slider_on_axis() -> System:
    """A point mass sliding (r) on an arm turning about z (q): at r = 0 q moves no mass."""
    s = System("slider")
    q, r = s.coordinates("q", "r")
    s.frame("arm", rot=rot_z(q))
    s.body("P", ref="arm", rel_pos=[r, 0, 0], mass=1, inertia=[0, 0, 0])
    return s


MODELS = {
    "double_pendulum": lambda: load_model(os.path.join(ROOT, "models", "double_pendulum.py")),
    "cart_pendulum": lambda: load_model(os.path.join(ROOT, "models", "cart_pendulum.py")),
    "spinning_top": lambda: load_model(os.path.join(ROOT, "models", "spinning_top.py")),
    "shaker": shaker,
    "chain10": lambda: mbsfmu_chain(10),
    "chain3d": chain3d,
}


def _numeric(name):
    num = derive(MODELS[name]()).numeric()
    if num.input_names:
        num.set_inputs({n: 1.5 + i for i, n in enumerate(num.input_names)})
    return num


def _states(num, k=4, seed=5):
    rng = np.random.default_rng(seed)
    for _ in range(k):
        yield rng.uniform(0, 3), rng.uniform(-1, 1, num.f), rng.uniform(-2, 2, num.f)


def _close(a, ref):
    # 2e-12: two algorithms at rounding level; the numpy reference's sums are ordered by the
    # names of their intermediates, which moved when M and q became lazy (chain10: up to 8e-13
    # between the two orders, the compiled ABA unchanged bit for bit)
    assert np.max(np.abs(a - ref)) <= 2e-12 * np.max(np.abs(ref)), (a, ref)


@pytest.mark.parametrize("name", list(MODELS))
def test_symbolic_accelerations_match_numpy_backend(name):
    num = _numeric(name)
    eqs = num.eqs
    assert aba_applicable(eqs.system) is None
    ydd = articulated_accelerations(eqs)
    assert ydd.shape == (num.f, 1)
    assert articulated_accelerations(eqs) is ydd  # derived once
    fn = make_function(eqs.system, eqs.intermediates, list(ydd))
    for t, y, yd in _states(num):
        _close(np.array(fn(t, y, yd, num.prm, num.u, num._tp_at(t))), num.accelerations(t, y, yd))


def test_symbolic_closed_form_of_a_small_model():
    num = _numeric("double_pendulum")
    eqs = num.eqs
    s = eqs.system
    closed = eqs.expanded(articulated_accelerations(eqs))
    assert not (closed.free_symbols & set(eqs.intermediates.symbols))
    consts = [c.symbol for c in s.constants_.values()]
    fn = sp.lambdify([s.y, s.yd, consts], list(closed), modules="math")
    for t, y, yd in _states(num):
        _close(np.array(fn(y, yd, num.prm)), num.accelerations(t, y, yd))


@pytest.mark.parametrize("name", cases(list(MODELS), slow={"chain10"}))
def test_compiled_aba_matches_numpy_backend(cache, name):
    num = _numeric(name)
    rhs = CompiledRHS(num)
    assert rhs.algorithm == "aba" and rhs.binding == "extension"
    # the generated ABA compiled into the model's engine extension, which rhs runs
    assert aba_source(num.eqs) in rhs.source
    assert rhs.path.name.startswith(f"mbs_engine_{num.eqs.system.name}_")
    for t, y, yd in _states(num, seed=7):
        xd = rhs(t, np.concatenate([y, yd]))
        np.testing.assert_array_equal(xd[: num.f], yd)
        _close(xd[num.f:], num.accelerations(t, y, yd))


@pytest.mark.parametrize("name", ["shaker", "chain3d"])
def test_both_algorithms_agree(cache, name):
    num = _numeric(name)
    kernels = [CompiledRHS(num, algorithm=a) for a in ("aba", "mass_matrix")]
    assert [(k.binding, k.algorithm) for k in kernels] == [("extension", "aba"),
                                                            ("extension", "mass_matrix")]
    for t, y, yd in _states(num, k=3, seed=11):
        x = np.concatenate([y, yd])
        ref = num.accelerations(t, y, yd)
        for k in kernels:
            _close(k(t, x)[num.f:], ref)
    # inputs and parameters are seen by the ABA kernel too
    if num.input_names:
        num.set_inputs({num.input_names[0]: -4.0})
    num.set_params({"g": 3.0})
    t, y, yd = next(_states(num, k=1, seed=2))
    for k in kernels:
        _close(k(t, np.concatenate([y, yd]))[num.f:], num.accelerations(t, y, yd))


def test_model_without_joint_coordinates_falls_back(cache):
    s = two_frames()
    reason = aba_applicable(s)
    assert "coordinate 'q' places both frame 'A' and frame 'B'" in reason
    num = derive(s).numeric()
    assert articulated_accelerations(num.eqs) is None
    assert articulated_body(num.eqs).reason == reason
    rhs = CompiledRHS(num)
    assert rhs.algorithm == "mass_matrix"
    t, y, yd = next(_states(num, k=1))
    _close(rhs(t, np.concatenate([y, yd]))[1:], num.accelerations(t, y, yd))
    with pytest.raises(ModelError, match=r"shared: the articulated-body algorithm does not apply: "
                                         r"coordinate 'q' places both"):
        CompiledRHS(num, algorithm="aba")
    with pytest.raises(ModelError, match="does not apply"):
        aba_source(num.eqs)
    with pytest.raises(ValueError, match="unknown algorithm 'crba'"):
        CompiledRHS(num, algorithm="crba")


def test_identically_zero_pivot_falls_back():
    # the mass lies on q's hinge axis in every configuration: the ABA pivot of q is exactly 0
    s = System("axis")
    q, r = s.coordinates("q", "r")
    s.body("B", rel_rot=rot_x(q), cg_pos=[1, 0, 0], mass=1, inertia=[0, 0, 0])
    s.body("C", ref="B", rel_pos=[r, 0, 0], mass=1, inertia=[0, 0, 0])
    eqs = derive(s)
    assert aba_applicable(s) is None
    assert articulated_accelerations(eqs) is None
    assert "coordinate 'q' is identically zero" in articulated_body(eqs).reason


def test_singular_configuration_names_the_coordinate(cache):
    num = derive(slider_on_axis()).numeric()
    rhs = CompiledRHS(num)
    assert rhs.algorithm == "aba"
    t, y, yd = next(_states(num, k=1))
    y[1] = 0.7
    _close(rhs(t, np.concatenate([y, yd]))[2:], num.accelerations(t, y, yd))
    with pytest.raises(SingularMassMatrixError,
                       match=r"slider: mass matrix is not positive definite \(articulated-body "
                             r"pivot of 'q' failed.* at t=0.5 \(q=0.3, r=0\)"):
        rhs(0.5, [0.3, 0.0, 1.0, -1.0])
    with pytest.raises(SingularMassMatrixError, match="pivot of 'q'"):
        rhs(0.5, [0.3, np.nan, 1.0, -1.0])


def test_multi_coordinate_joint_pivot(cache):
    # the top's Cardan angles form one 3 x 3 joint; at beta = pi/2 its D is singular
    num = _numeric("spinning_top")
    rhs = CompiledRHS(num)
    assert rhs.algorithm == "aba"
    assert [j for j, _, diag in articulated_body(num.eqs).pivots if len(diag) == 3] == [0, 1, 2]
    with pytest.raises(SingularMassMatrixError, match="articulated-body pivot of 'gamma'"):
        rhs(0.0, [0.2, np.pi / 2, 0.1, 0.0, 0.0, 0.0])
