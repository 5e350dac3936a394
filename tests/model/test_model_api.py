"""The modeling API's namespaces, frame keywords and rotation checks (issue 12, item 6).

* Symbols (constants, coordinates and their rates, time parameters, inputs) are unique among
  themselves; frames and bodies, force elements, constraints and outputs each have a namespace
  of their own, so a spring ``k1`` and a constant ``k1`` coexist.  Names that become FMU
  variables (constants, coordinates, inputs, outputs without a dot) must still differ.
* E, I and pi are reserved as symbols only (sympy reads them as its constants).
* ``frame`` takes ``rel_pos``/``rel_rot`` like ``body``; ``pos``/``rot`` remain as aliases.
* Every user-given rotation matrix is checked for R^T R = E and det R = +1.
"""

import math
import warnings

import numpy as np
import pytest
import sympy as sp

import mbsfmu
from mbsfmu import ModelError, System
from mbsfmu.model import Rotation, cardan, euler, rot_x, rot_y, rot_z, sequence
from mbsfmu.model.expression_checks import check_rotation_matrix


def base():
    s = System("names")
    s.constants(k1=40.0, m=2.0)
    q, = s.coordinates("q")
    s.body("B", rel_pos=[q, 0, 0], mass=1.0, inertia=[1, 1, 1])
    return s


# ---------------------------------------------------------------- namespaces
def test_elements_may_share_a_name_with_a_constant():
    s = base()
    s.frame("k1", ref="B")
    s.spring_damper("k1", "ISYS", "k1", stiffness="k1", rest_length=1)  # "k1" is the constant here
    s.loop("k1", "k1", "ISYS", translations="y")
    s.frame("m", ref="B")
    s.force("m", "m", [0, 0, "m"])
    assert s.spring_dampers[0].stiffness == s.constants_["k1"].symbol
    assert s.constraint_names == ["k1.y"]
    assert "k1" in s.frames and "k1" in s.constants_


@pytest.mark.parametrize("add, pattern", [
    (lambda s: s.coordinate("k1"), r"duplicate name 'k1': already used by constant 'k1'"),
    (lambda s: s.input("m"), r"duplicate name 'm': already used by constant 'm'"),
    (lambda s: s.time_parameter("k1", "t"), r"duplicate name 'k1': already used by constant 'k1'"),
    (lambda s: s.constant("Dq", 1.0), r"duplicate name 'Dq': already used by rates of coordinate 'q'"),
    (lambda s: s.frame("B"), r"duplicate name 'B': already used by body 'B'"),
    (lambda s: s.body("B_cg", mass=1), r"duplicate name 'B_cg': already used by cg frame of body 'B'"),
])
def test_symbols_and_frames_stay_unique_in_their_namespace(add, pattern):
    with pytest.raises(ModelError, match=pattern):
        add(base())


def test_force_elements_and_constraints_are_unique_per_kind():
    s = base()
    s.spring_damper("sd", "ISYS", "B", stiffness=1)
    with pytest.raises(ModelError, match=r"duplicate name 'sd': already used by spring-damper 'sd'"):
        s.force("sd", "B", [1, 0, 0])
    with pytest.raises(ModelError, match=r"duplicate name 'sd': already used by spring-damper 'sd'"):
        s.generalized_force("sd", "q", 1)
    s.constraint("c", "q - 1")
    with pytest.raises(ModelError, match=r"duplicate name 'c': already used by constraint 'c'"):
        s.initial_condition("c", "q", 1.0)
    with pytest.raises(ModelError, match=r"duplicate name 'c': already used by constraint 'c'"):
        s.loop("c", "B", "ISYS", translations="y")


def test_an_output_and_a_symbol_would_be_the_same_fmu_variable():
    s = base()
    with pytest.raises(ModelError, match=r"output 'k1' and constant 'k1' would both be the FMU variable "
                                         r"'k1'; rename one of them \(e\.g\. the output to 'k1_out'\)"):
        s.output("k1", "q")
    s.output("z", "2*q")
    with pytest.raises(ModelError, match=r"constant 'z' and output 'z' would both be the FMU variable "
                                         r"'z'; rename one of them \(e\.g\. the output to 'z_out'\)"):
        s.constant("z", 1.0)
    with pytest.raises(ModelError, match=r"input 'z' and output 'z'"):
        s.input("z")
    s.time_parameter("p", "t")  # not an FMU variable: an output may take its name
    s.output("p", "q")
    s.frame("k1", ref="B")
    s.frame_output("k1")  # k1.x, k1.y, k1.z do not collide (dotted names)
    with pytest.raises(ModelError, match=r"output 'solver_rtol': the name 'solver_rtol' is taken by an "
                                         r"FMU variable that the export adds itself \(the solver setting"):
        s.output("solver_rtol", "q")
    with pytest.raises(ModelError, match=r"constant 'constraint_residual': the name .* \(the "
                                         r"constraint residual of models with loops\)"):
        s.constant("constraint_residual", 1.0)


# ---------------------------------------------------------------- E, I, pi as element names
def test_e_i_pi_name_frames_bodies_and_elements():
    s = base()
    s.frame("E", ref="B", rel_pos=[1, 0, 0])
    s.body("I", ref="E", mass=1.0, inertia=[1, 1, 1])
    s.spring_damper("pi", "ISYS", "E", stiffness=1)
    s.loop("E", "E", "ISYS", translations="z")
    s.frame_output("E")
    assert {"E", "I", "I_cg"} <= set(s.frames) and "E.x" in s.outputs
    # a string expression still reads E and I as sympy's constants, not as the frames
    assert s.expr("E") == sp.E and s.expr("2*pi") == 2 * sp.pi


@pytest.mark.parametrize("add, pattern", [
    (lambda s: s.constant("E", 1.0),
     r"constant 'E' name 'E' is reserved: sympy reads E in a string expression as its constant E "
     r"\(Euler's number\), so E, I and pi cannot name a symbol \(they may name frames"),
    (lambda s: s.coordinate("I"), r"coordinate 'I' name 'I' is reserved: .*the imaginary unit"),
    (lambda s: s.input("pi"), r"input 'pi' name 'pi' is reserved: sympy reads pi"),
    (lambda s: s.time_parameter("E", "t"), r"time parameter 'E' name 'E' is reserved"),
    (lambda s: s.constant("t", 1.0), r"constant 't' name 't' is reserved: t is the time symbol"),
    (lambda s: s.frame("ISYS"), r"frame 'ISYS' name 'ISYS' is reserved: ISYS is the inertial frame"),
    (lambda s: s.body("ISYS", mass=1), r"body 'ISYS' name 'ISYS' is reserved"),
    (lambda s: s.frame("lambda"), r"frame 'lambda' name 'lambda' is reserved: it is a Python keyword"),
    (lambda s: s.body("2B", mass=1), r"body '2B' name '2B' is not a valid identifier"),
])
def test_reserved_names_are_explained(add, pattern):
    s = base()
    with pytest.raises(ModelError, match=pattern):
        add(s)


# ---------------------------------------------------------------- frame keywords
def test_frame_takes_rel_pos_and_rel_rot_with_the_old_aliases():
    s = base()
    q = s.coordinates_["q"].symbol
    s.frame("F", ref="B", rel_pos=[1, 2, 3], rel_rot=rot_z(q))
    s.frame("G", ref="B", pos=[1, 2, 3], rot=rot_z(q))
    s.frame("H", "B", [1, 2, 3], rot_z(q))  # positional order unchanged
    for name in "GH":
        assert s.frames[name].position == s.frames["F"].position
        assert s.frames[name].rotation == s.frames["F"].rotation
    with pytest.raises(ModelError, match=r"frame 'X': 'pos' is an alias of 'rel_pos'; give only one"):
        s.frame("X", rel_pos=[1, 0, 0], pos=[1, 0, 0])
    with pytest.raises(ModelError, match=r"frame 'X': 'rot' is an alias of 'rel_rot'; give only one"):
        s.frame("X", rel_rot=rot_x(q), rot=rot_x(q))
    assert "X" not in s.frames


# ---------------------------------------------------------------- rotation matrices
def _angles(s):
    a, b, c = s.coordinates("a", "b", "c")
    return a, b, c


def test_the_rotation_helpers_and_their_matrices_pass():
    s = base()
    a, b, c = _angles(s)
    rotations = [rot_x(a), rot_y(b), rot_z(c), cardan(a, b, c), euler(a, b, c),
                 sequence("zyx", (a, b, c)), rot_x(a) * rot_z(c) * rot_y(b)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i, rot in enumerate(rotations):
            s.frame(f"R{i}", rel_rot=rot)
            s.frame(f"M{i}", rel_rot=rot.matrix())  # the same rotation as a general matrix
            s.body(f"B{i}", rel_rot=Rotation(matrix_=rot.matrix()), cg_rot=rot.matrix().T,
                   mass=1, inertia=[1, 1, 1])
        # normalized natural coordinates are a rotation wherever they are defined
        n = sp.sqrt(a**2 + b**2)
        s.frame("N", rel_rot=[[a / n, -b / n, 0], [b / n, a / n, 0], [0, 0, 1]])
        # undefined (complex) for half of the draws: those are replaced, without a warning
        co = sp.sqrt(1 - a**2)
        s.frame("S", rel_rot=[[co, -a, 0], [a, co, 0], [0, 0, 1]])


def test_natural_coordinates_with_cg_pos_are_refused_with_a_hint():
    """The case of the issue: a rotation matrix orthonormal only on x1^2 + y1^2 = 1 places the
    centre of gravity; omega from R' R^T is wrong off that manifold and M is singular."""
    s = System("natural")
    x1, y1 = s.coordinates("x1", "y1")
    L, = s.constants(L=1.0)
    with pytest.raises(ModelError) as err:
        s.body("rod", rel_rot=[[x1, -y1, 0], [y1, x1, 0], [0, 0, 1]], cg_pos=[L / 2, 0, 0], mass=1,
               inertia=[0, 1, 1])
    msg = str(err.value)
    assert msg.startswith("body 'rod' rel_rot: the matrix is not a rotation: R^T R differs from the "
                          "identity by ")
    deviation = float(msg.split("identity by ")[1].split(" ")[0])
    assert deviation > 1e-3
    assert "at x1=" in msg and "for every value of x1, y1" in msg
    assert "LagrangianSystem" in msg and "rel_pos" in msg and "natural coordinates" in msg
    assert "rod" not in s.bodies and "rod" not in s.frames
    # the suggested alternative: the centre of gravity placed by rel_pos, no rotation
    s.body("rod", rel_pos=[x1 * L / 2, y1 * L / 2, 0], mass=1, inertia=[0, 1, 1])


@pytest.mark.parametrize("kw, pattern", [
    ({"cg_rot": [[1, 0, 0], [0, 1, 0], [0, 0, 1.001]]},
     r"body 'C' cg_rot: the matrix is not a rotation: R\^T R differs from the identity by 0\.002"),
    ({"cg_rot": [[0, 1, 0], [1, 0, 0], [0, 0, 1]]},
     r"body 'C' cg_rot: the matrix is a reflection \(det R = -1\), not a rotation"),
    ({"rel_rot": "bad"}, r"body 'C' rel_rot"),
])
def test_body_rotations_name_the_keyword(kw, pattern):
    s = base()
    with pytest.raises(ModelError, match=pattern):
        s.body("C", mass=1, inertia=[1, 1, 1], **kw)


def test_rotation_check_uses_constants_and_tolerance():
    c, q = sp.symbols("c q", real=True)
    R = sp.Matrix([[c, -sp.sin(q), 0], [sp.sin(q), sp.cos(q), 0], [0, 0, 1]])
    with pytest.raises(ModelError, match=r"R: the matrix is not a rotation"):
        check_rotation_matrix(R, "R", {c: 0.5})
    check_rotation_matrix(R.subs(c, sp.cos(q)), "R", {c: 0.5})
    # 1e-12 off is round-off, 1e-6 is not
    check_rotation_matrix(sp.diag(1 + 1e-12, 1, 1), "R", {})
    with pytest.raises(ModelError, match=r"differs from the identity by 2e-06"):
        check_rotation_matrix(sp.diag(1 + 1e-6, 1, 1), "R", {})


# ---------------------------------------------------------------- a shared name end to end
def shared_names():
    """A damped oscillator along x whose constant, spring, end frame and loop are all 'k1';
    the loop holds y = 0 against gravity along -y, so its reaction is m g."""
    s = System("shared_names")
    k1, m, d, g = s.constants(k1=40.0, m=2.0, d=0.5, g=9.81)
    x, y = s.coordinates("x", "y")
    s.gravity([0, -g, 0])
    s.frame("E", rel_pos=[-1, 0, 0])
    s.body("mass", rel_pos=[x, y, 0], mass=m, inertia=[0, 0, 0])
    s.frame("k1", ref="mass")
    s.spring_damper("k1", "E", "k1", stiffness=k1, damping=d, rest_length=1)
    s.loop("k1", "E", "k1", translations="y")
    s.initial(x=0.3)
    s.frame_output("k1")
    s.reaction_outputs()
    return s


def damped(t, k=40.0, m=2.0, d=0.5, x0=0.3):
    """x(t) of m x'' + d x' + k x = 0, x(0) = x0, x'(0) = 0."""
    delta, w0 = d / (2 * m), math.sqrt(k / m)
    wd = math.sqrt(w0**2 - delta**2)
    return x0 * np.exp(-delta * t) * (np.cos(wd * t) + delta / wd * np.sin(wd * t))


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_shared_name_simulates(backend):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = mbsfmu.simulate(shared_names(), t_end=2.0, dt=0.05, rtol=1e-10, atol=1e-12,
                              backend=backend)
        soft = mbsfmu.simulate(shared_names(), t_end=2.0, dt=0.05, rtol=1e-10, atol=1e-12,
                               backend=backend, params={"k1": 10.0})
    np.testing.assert_allclose(res["x"], damped(res.t), atol=1e-8)
    np.testing.assert_allclose(soft["x"], damped(soft.t, k=10.0), atol=1e-8)
    np.testing.assert_allclose(res.multipliers()["k1.y"], 2.0 * 9.81, rtol=1e-8)


@pytest.mark.slow
def test_shared_name_in_a_native_fmu(tmp_path):
    fmpy = pytest.importorskip("fmpy")
    from fmpy import read_model_description

    from mbsfmu.fmu.native import build_native_fmu

    path = build_native_fmu(shared_names(), tmp_path)
    md = read_model_description(str(path))
    names = [v.name for v in md.modelVariables]
    assert len(names) == len(set(names))
    by_name = {v.name: v for v in md.modelVariables}
    assert by_name["k1"].causality == "parameter" and by_name["k1"].start == "40.0"
    assert {"k1.x", "k1.y", "k1.z", "reaction.k1.y"} <= set(names)
    assert [v.valueReference for v in md.modelVariables] == list(range(len(names)))
    for k in (40.0, 10.0):
        r = fmpy.simulate_fmu(str(path), stop_time=2.0, output_interval=0.05,
                              start_values={"k1": k, "solver_rtol": 1e-10, "solver_atol": 1e-12},
                              output=["x", "k1.x", "reaction.k1.y"])
        np.testing.assert_allclose(r["x"], damped(r["time"], k=k), atol=1e-8)
        np.testing.assert_allclose(r["k1.x"], r["x"], atol=1e-12)
        np.testing.assert_allclose(r["reaction.k1.y"], 2.0 * 9.81, rtol=1e-8)
