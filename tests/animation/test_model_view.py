"""The view a model carries into its FMU (mbsfmu.animation.model_view) and the expression program
it holds (mbsfmu.codegen.expression_program): the poses it computes from coordinates alone equal
those of the model's own pose function (NumericModel.pose_series, the generated numpy code of the
same symbolic kinematics), for trees, loops, flexible bodies, time parameters and
natural-coordinate models; a malformed file is refused with the place it breaks."""

import json
import pathlib

import numpy as np
import pytest
import sympy as sp

import mbsfmu
from mbsfmu.animation.animate import frame_samples
from mbsfmu.animation.model_view import ModelView
from mbsfmu.animation.scene import build_scene
from mbsfmu.codegen.expression_program import ProgramError, check_program, evaluate, program
from mbsfmu.core.errors import ModelError, ParameterError
from mbsfmu.equations.intermediates import Intermediates
from mbsfmu.model.loader import load_model

MODELS = pathlib.Path(__file__).resolve().parents[2] / "models"
#: the program and the generated numpy code evaluate the same expressions in another order
TOL = 1e-12


def carried(system) -> ModelView:
    """The view as an FMU carries it: written to JSON and read back."""
    return ModelView.from_json(ModelView.from_model(system).to_json())


@pytest.mark.parametrize("name", ["cart_pendulum", "double_pendulum", "slider_crank", "rotating_beam",
                                  "flexible_double_pendulum", "four_bar_natural"])
def test_carried_poses_equal_the_models_pose_function(name):
    """The frames' origins and rotations from the carried program equal the scene's poses (for a
    System NumericModel.pose_series) at simulated coordinates, with every constant changed by 10 %."""
    system = load_model(MODELS / f"{name}.py")
    res = mbsfmu.simulate(system, t_end=0.5, dt=0.05)
    view = carried(system)
    changed = {c.name: 1.1 * c.value for c in system.constants_.values()}
    num = res.numeric
    num.set_params(changed, check=False)
    want = build_scene(system, num, res.t, res.y, res.u)
    points, rotations = view.poses(res.t, res.y, changed)
    assert points.shape == want.points.shape and rotations.shape == want.rotations.shape
    scale = max(1.0, float(np.max(np.abs(want.points))))
    assert np.max(np.abs(points - want.points)) <= TOL * scale
    assert np.max(np.abs(rotations - want.rotations)) <= TOL
    got = view.scene(res.t, res.y, changed)
    assert got.frame_names == want.frame_names and got.lines == want.lines and got.up == want.up
    assert [(w.name, w.shape, w.frame, w.size, w.color) for w in got.wires] == \
        [(w.name, w.shape, w.frame, w.size, w.color) for w in want.wires]


def test_cart_pendulum_rod_centre_in_closed_form():
    """Independent of the model's code: the rod's centre of gravity sits at
    (x + l sin(theta), 0, l cos(theta)) (the rod turns by rot_y(theta) about the cart)."""
    view = carried(load_model(MODELS / "cart_pendulum.py"))
    t = np.linspace(0, 1, 7)
    x, theta = np.sin(3 * t), 0.4 * np.cos(5 * t)
    points, rotations = view.poses(t, [x, theta], {"l": 0.7})
    k = view.layout.frame_names.index("rod_cg")
    want = np.stack([x + 0.7 * np.sin(theta), 0 * t, 0.7 * np.cos(theta)], axis=-1)
    assert np.max(np.abs(points[:, k] - want)) < 1e-14
    assert np.allclose(rotations[:, k, 0, 2], np.sin(theta), atol=1e-15)


def _rheonomic():
    """A pendulum whose pivot is driven by a Piecewise time parameter and lifted by a constant."""
    s = mbsfmu.System("driven", "driven pivot")
    L, a = s.constants(L=0.8, a=0.2)
    (phi,) = s.coordinates("phi")
    h = s.constants(h=0.1)[0]
    t = s.t
    p = s.time_parameter("p", sp.Piecewise((a * sp.sin(2 * t), t < 1), (a * sp.sin(2) * sp.exp(1 - t), True)))
    s.frame("pivot", "ISYS", rel_pos=[p, 0, h])
    s.body("bob", ref="pivot", rel_rot=mbsfmu.rot_y(phi), cg_pos=[0, 0, -L], mass=1.0, inertia=[0, 0, 0])
    s.gravity([0, 0, -9.81])
    return s


def test_a_piecewise_time_parameter():
    s = _rheonomic()
    view = carried(s)
    t = np.linspace(0, 2, 21)
    Y = np.array([0.3 * np.sin(t)])
    num = mbsfmu.derive(s).numeric()
    num.set_params({"h": 0.3})
    want_r, want_S = num.pose_series(view.layout.frame_names, t, Y)
    r, S = view.poses(t, Y, {"h": 0.3})
    assert np.max(np.abs(r - want_r)) < TOL and np.max(np.abs(S - want_S)) < TOL
    k = view.layout.frame_names.index("pivot")
    p = np.where(t < 1, 0.2 * np.sin(2 * t), 0.2 * np.sin(2) * np.exp(1 - t))
    assert np.max(np.abs(r[:, k] - np.stack([p, 0 * t, 0.3 + 0 * t], axis=-1))) < 1e-15


def test_a_python_function_time_parameter_is_said_not_carried():
    s = mbsfmu.System("fn", "function drive")
    (q,) = s.coordinates("q")
    s.time_parameter("p", function=np.sin, function_d=np.cos, function_dd=lambda t: -np.sin(t))
    s.body("b", ref="ISYS", rel_pos=[q, 0, 0], mass=1.0, inertia=[0, 0, 0])
    view = carried(s)
    assert view.program is None
    with pytest.raises(ModelError, match=r"holds no pose: time parameter 'p' of model 'fn' is a Python "
                                         r"function, which the FMU cannot carry"):
        view.poses([0.0], [[0.0]])


def test_program_operations_against_sympy():
    """Every operation the program knows, against sympy's own numpy function."""
    x, y = sp.symbols("x y", real=True)
    exprs = [sp.sin(x) * sp.cos(y) + sp.tan(x / 3), sp.asin(x / 2) + sp.acos(x / 3) + sp.atan(y),
             sp.atan2(y, x), sp.sinh(x) + sp.cosh(y) + sp.tanh(x), sp.exp(x) * sp.log(2 + y),
             sp.Abs(y) + sp.sqrt(2 + x) + x ** 3 + 1 / (3 + y) + sp.Rational(1, 3) * sp.pi,
             sp.sign(y) + sp.floor(3 * x) + sp.ceiling(2 * y) + sp.Min(x, y) + sp.Max(x, y, 0.1),
             sp.Piecewise((x, (y < 0) & (x > -1)), (2 * x, sp.Or(y >= 0.5, sp.Not(x < 0))), (-x, True)),
             sp.asinh(x) + sp.acosh(2 + y ** 2) + sp.atanh(x / 2)]
    prog = json.loads(json.dumps(program(Intermediates(), exprs, {"v": [x, y]})))
    check_program(prog)
    xs, ys = np.linspace(-0.9, 0.9, 13), np.linspace(-0.8, 1.0, 13)
    got = evaluate(prog, {"v": [xs, ys]}, 13)
    for e, g in zip(exprs, got):
        want = sp.lambdify([x, y], e, "numpy")(xs, ys)
        assert np.allclose(g, want, rtol=1e-14, atol=1e-14), e


@pytest.mark.parametrize("prog, pattern", [
    ({"lines": [], "outputs": []}, r"a program is a dict with 'arguments', 'lines' and 'outputs'"),
    ({"arguments": {"y": ["q"]}, "lines": [["w0", ["+", "w1", 1]]], "outputs": []},
     r"line 0: 'w1' is used before it is defined"),
    ({"arguments": {"y": ["q"]}, "lines": [], "outputs": [["system", "y0"]]},
     r"output 0: unknown operation \['system'\]"),
    ({"arguments": {"y": ["q"]}, "lines": [], "outputs": [{"x": 1}]},
     r"output 0: \{'x': 1\} is not an expression"),
])
def test_malformed_programs(prog, pattern):
    with pytest.raises(ProgramError, match=pattern):
        check_program(prog)


def test_an_unknown_function_is_named_at_build():
    x = sp.Symbol("x")
    with pytest.raises(ProgramError, match=r"gamma \(in gamma\(x\)\) is not an operation"):
        program(Intermediates(), [sp.gamma(x)], {"y": [x]})


@pytest.mark.parametrize("edit, pattern", [
    (lambda d: "{not json", r"the view is not JSON"),
    (lambda d: {**d, "format": "other"}, r"is not an mbsfmu viewer file"),
    (lambda d: {**d, "version": 99}, r"has version 99; this mbsfmu reads version 1 \(rebuild the FMU"),
    (lambda d: {**d, "coordinates": ["x"]}, r"malformed: ValueError: the program's arguments do not match"),
    (lambda d: {**d, "layout": {**d["layout"], "lines": [["x", [0, 99], "C0"]]}},
     r"malformed: ValueError: line 'x' refers to a frame that does not exist"),
    (lambda d: {**d, "program": {**d["program"], "outputs": [["eval", "y0"]]}},
     r"malformed: ProgramError: output 0: unknown operation \['eval'\]"),
    (lambda d: {**d, "elastic": ["q1"]},
     r"malformed: ValueError: an elastic coordinate is not one of the coordinates"),
    (lambda d: {**d, "elastic": 3}, r"malformed: TypeError"),
])
def test_malformed_views_are_refused(edit, pattern):
    d = json.loads(ModelView.from_model(load_model(MODELS / "cart_pendulum.py")).to_json())
    edited = edit(d)
    with pytest.raises(ModelError, match=pattern):
        ModelView.from_json(edited if isinstance(edited, str) else json.dumps(edited))


def test_the_carried_view_scales_the_deformation_as_the_model_does():
    """The flexible double pendulum's carried view names its elastic coordinates; its scene at
    deformation_scale 100 equals the model's (build_scene of mbsfmu.Result.animate) to 1e-12 m and
    differs from the unscaled one (a tip deflection of about 1e-4 m at scale 1); the title says
    the scale.  A view of a rigid model refuses a scale other than 1, as animate does; a view
    written before views named elastic coordinates reads as one with none."""
    system = load_model(MODELS / "flexible_double_pendulum.py")
    view = carried(system)
    assert view.elastic == ["P1_q01", "P1_q02", "P1_q03", "P2_q01", "P2_q02", "P2_q03"]
    res = mbsfmu.simulate(system, t_end=0.5, dt=0.05)
    want = build_scene(system, res.numeric, res.t, res.y, deformation_scale=100.0)
    got = view.scene(res.t, res.y, deformation_scale=100.0)
    assert got.title == want.title == f"{system.title} (elastic deformation x100)"
    assert np.max(np.abs(got.points - want.points)) < TOL
    assert np.max(np.abs(got.rotations - want.rotations)) < TOL
    assert np.max(np.abs(got.points - view.scene(res.t, res.y).points)) > 1e-3
    rigid = carried(load_model(MODELS / "cart_pendulum.py"))
    with pytest.raises(ParameterError, match=r"^animate: deformation_scale 2 scales flexible bodies' elastic "
                                             r"coordinates, and model 'cart_pendulum' has no flexible body"):
        rigid.scene([0.0], [[0.0], [0.0]], deformation_scale=2)
    with pytest.raises(ParameterError, match=r"deformation_scale must be a finite number > 0, got -1"):
        view.scene(res.t, res.y, deformation_scale=-1)
    d = json.loads(view.to_json())
    del d["elastic"]
    assert ModelView.from_json(json.dumps(d)).elastic == []


def test_unknown_or_unset_constant():
    view = carried(load_model(MODELS / "cart_pendulum.py"))
    with pytest.raises(ParameterError, match=r"cart_pendulum: unknown constant 'mass' \(constants: mc, m, l"):
        view.poses([0.0], [[0.0], [0.0]], {"mass": 1.0})
    view.constants["l"] = None
    with pytest.raises(ParameterError, match=r"constant\(s\) l have no value"):
        view.poses([0.0], [[0.0], [0.0]])


def test_frame_samples_keep_first_last_and_the_frame_times():
    t = np.round(np.arange(10001) * 1e-3, 12)      # 10 s at 1 kHz
    idx = frame_samples(t, 100.0)
    assert idx[0] == 0 and idx[-1] == 10000 and len(idx) == 1001
    assert np.allclose(np.diff(t[idx]), 0.01, atol=1e-12)
    t2 = t[:1006]                                   # 1.005 s: the last row is not on the 10 ms grid
    idx2 = frame_samples(t2, 100.0)
    assert idx2[-1] == 1005 and list(idx2[-3:]) == [990, 1000, 1005]
    assert np.allclose(np.diff(t2[idx2[:-1]]), 0.01, atol=1e-12)
    assert list(frame_samples(t[:11], 2000.0)) == list(range(11))  # coarser than fps: every row
    assert list(frame_samples(t[:1], 100.0)) == [0]
    assert list(frame_samples(t[:11], 30.0)) == [0, 10]  # k = round(33.3) = 33 > 10 rows: first and last


def test_a_mesh_shape_travels_with_the_view(tmp_path):
    """A mesh visual's vertices and triangles are carried exactly; its wire is the scene's."""
    from mesh_files import write_cone

    system = load_model(MODELS / "double_pendulum.py")
    system.visual("P2", shape="mesh", file=write_cone(tmp_path, "stl"), size=0.2)
    view = carried(system)
    (shape,) = view.layout.shapes
    mesh = system.visuals["P2"].mesh
    assert shape.shape == "mesh" and np.array_equal(shape.mesh.vertices, mesh.vertices)
    assert np.array_equal(shape.mesh.faces, mesh.faces)
    res = mbsfmu.simulate(system, t_end=0.2, dt=0.05)
    want = build_scene(system, res.numeric, res.t, res.y)
    got = view.scene(res.t, res.y)
    # NaN rows break the edges: assert_allclose takes them as equal
    np.testing.assert_allclose(got.wires[0].points, want.wires[0].points, rtol=0, atol=TOL)
