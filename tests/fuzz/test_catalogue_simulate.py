"""Catalogue of bad inputs of the model, simulate and CLI surfaces.

Each case is one bad input; the test asserts the exception type (or the CLI's exit code) and that
the message names the culprit (the element, parameter, keyword, value or file), by a regular
expression.  Together with tests/fuzz/test_bad_input.py, test_parameter_requirements.py and
test_long_runs.py this is what the README's "What mbsfmu guarantees" promises for these surfaces.
"""

import math
import pathlib
import subprocess
import sys

import pytest
import sympy as sp
from slow_cases import cases

import mbsfmu
from mbsfmu import ConstraintError, ModelError, ParameterError, System, derive, rot_x

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
CART = MODELS / "cart_pendulum.py"
SLIDER = MODELS / "slider_crank.py"


def pendulum():
    s = System("p")
    m, l = s.constants(m=1.0, l=0.5)
    q, = s.coordinates("q")
    s.gravity([0, 0, -9.81])
    s.body("B", rel_rot=rot_x(q), cg_pos=[0, 0, -l], mass=m, inertia=[1, 1, 1])
    return s


def slider_with(**extra):
    s = mbsfmu.load_model(SLIDER)
    for name, (expr, value) in extra.items():
        s.initial_condition(name, expr(s), value)
    return s


# ---------------------------------------------------------------- System construction
MODEL_CASES = [
    ("system name", lambda: System("2bad"), ModelError, r"system name '2bad'"),
    ("constant reserved", lambda: pendulum().constant("pi", 3.0), ModelError, r"'pi' is reserved"),
    ("constant not a number", lambda: pendulum().constant("k", "soft"), ParameterError,
     r"constant 'k'.*'soft' is not a number"),
    ("constant inf", lambda: pendulum().constant("k", math.inf), ParameterError, r"constant 'k'.*not finite"),
    ("constant min > max", lambda: pendulum().constant("k", None, min=2, max=1), ModelError,
     r"constant 'k': min 2.0 is greater than max 1.0"),
    ("constant default outside bounds", lambda: pendulum().constant("k", 5.0, max=1.0), ModelError,
     r"constant 'k': default value 5.0 is outside"),
    ("input default outside bounds", lambda: pendulum().input("F", 3.0, min=-1, max=1), ModelError,
     r"input 'F': default value 3.0 is outside"),
    ("input bound not a number", lambda: pendulum().input("F", 0.0, min="low"), ParameterError,
     r"input 'F' min.*'low' is not a number"),
    ("duplicate coordinate", lambda: pendulum().coordinate("m"), ModelError, r"duplicate name 'm'"),
    ("coordinate initial nan", lambda: pendulum().coordinate("z", initial=math.nan), ParameterError,
     r"initial value of 'z'"),
    ("initial of unknown", lambda: pendulum().initial(zz=1.0), ModelError, r"'zz' is not a coordinate"),
    ("frame unknown ref", lambda: pendulum().frame("F", ref="nowhere"), ModelError,
     r"frame 'F'.*unknown reference frame 'nowhere'"),
    ("frame 2-vector", lambda: pendulum().frame("F", rel_pos=[1, 2]), ModelError,
     r"frame 'F' rel_pos: a 3-vector is needed, got 2"),
    ("frame 2-vector (alias)", lambda: pendulum().frame("F", pos=[1, 2]), ModelError,
     r"frame 'F' pos: a 3-vector is needed, got 2"),
    ("frame alias and keyword", lambda: pendulum().frame("F", pos=[1, 0, 0], rel_pos=[1, 0, 0]),
     ModelError, r"frame 'F': 'pos' is an alias of 'rel_pos'; give only one of them"),
    ("frame unknown symbol", lambda: pendulum().frame("F", rel_pos="[0, 0, L9]"), ModelError,
     r"frame 'F' rel_pos: unknown symbol\(s\) L9"),
    ("rotation not orthonormal", lambda: pendulum().frame("F", rel_rot=[[2, 0, 0], [0, 1, 0], [0, 0, 1]]),
     ModelError, r"frame 'F' rel_rot: the matrix is not a rotation: R\^T R differs from the identity by 3"),
    ("rotation reflection", lambda: pendulum().frame("F", rot=[[1, 0, 0], [0, 1, 0], [0, 0, -1]]),
     ModelError, r"frame 'F' rot: the matrix is a reflection \(det R = -1\)"),
    ("symbolic rotation not orthonormal", lambda: _symbolic_bad_rotation(), ModelError,
     r"body 'C' rel_rot: the matrix is not a rotation.* at q=.*for every value of q"),
    ("rotation wrong shape", lambda: pendulum().frame("F", rel_rot=[[1, 0], [0, 1]]), ModelError,
     r"frame 'F' rel_rot"),
    ("body without mass", lambda: pendulum().body("C", inertia=[1, 1, 1]), ModelError,
     r"body 'C': a mass is needed"),
    ("body negative mass", lambda: pendulum().body("C", mass=-1, inertia=[1, 1, 1]), ModelError,
     r"body 'C': mass must be positive, got -1"),
    ("body inertia asymmetric",
     lambda: pendulum().body("C", mass=1, inertia=[[1, 0.1, 0], [0, 1, 0], [0, 0, 1]]),
     ModelError, r"body 'C': inertia tensor is not symmetric"),
    ("body inertia triangle", lambda: pendulum().body("C", mass=1, inertia=[1, 1, 3]), ModelError,
     r"body 'C': principal moments .* violate the triangle inequality"),
    ("body inertia 2x2", lambda: pendulum().body("C", mass=1, inertia=[[1, 0], [0, 1]]), ModelError,
     r"body 'C' inertia: a 3x3 matrix"),
    ("spring same frame", lambda: pendulum().spring_damper("sd", "B", "B", stiffness=1), ModelError,
     r"spring-damper 'sd': both ends are on frame 'B'"),
    ("force unknown in_frame", lambda: pendulum().force("f", "B", [1, 0, 0], in_frame="X"), ModelError,
     r"force 'f'.*unknown reference frame 'X'"),
    ("generalized force unknown coordinate", lambda: pendulum().generalized_force("g", "zz", 1), ModelError,
     r"generalized force 'g': 'zz' is not a coordinate"),
    ("loop bad axes", lambda: pendulum().loop("L", "B", "ISYS", translations="xq"), ModelError,
     r"loop 'L': translations must be distinct axes"),
    ("loop nothing constrained", lambda: pendulum().loop("L", "B", "ISYS", translations=""), ModelError,
     r"loop 'L': no translational or rotational direction"),
    ("constraint with a rate", lambda: _constraint_with_rate(), ModelError,
     r"constraint 'c1': a holonomic constraint may depend on .* not on \['Dq'\]"),
    ("constraint without coordinate", lambda: pendulum().constraint("c1", "m - 1"), ModelError,
     r"constraint 'c1': .* does not depend on any coordinate"),
    ("initial condition without coordinate", lambda: pendulum().initial_condition("ic", "m", 1.0),
     ModelError, r"initial condition 'ic': .* does not depend on any coordinate"),
    ("time parameter both", lambda: pendulum().time_parameter("p", "t", function=lambda t: t), ModelError,
     r"time parameter 'p': give either an expression or a function"),
    ("time parameter of a coordinate", lambda: pendulum().time_parameter("p", "q * t"), ModelError,
     r"time parameter 'p': may depend on t and constants only"),
    ("output of unknown", lambda: pendulum().output("o", "q + zz"), ModelError,
     r"output 'o'.*unknown symbol\(s\) zz"),
    ("output bad name", lambda: pendulum().output("1o", "q"), ModelError, r"output name '1o'"),
    ("frame output quantity", lambda: pendulum().frame_output("B", "jerk"), ModelError,
     r"frame output of 'B': quantity must be one of"),
    ("reactions without loops", lambda: pendulum().reaction_outputs(), ModelError,
     r"reaction outputs need loops or constraints"),
    ("coordinate moves nothing", lambda: derive(_dangling_coordinate()), mbsfmu.SingularMassMatrixError,
     r"coordinate\(s\) 'z' move no body"),
]


def _symbolic_bad_rotation():
    s = pendulum()
    q = s.coordinates_["q"].symbol
    s.body("C", rel_rot=[[sp.cos(q), sp.sin(q), 0], [sp.sin(q), sp.cos(q), 0], [0, 0, 1]], mass=1,
           inertia=[1, 1, 1])


def _constraint_with_rate():
    s = pendulum()
    s.constraint("c1", "q + Dq")


def _dangling_coordinate():
    s = pendulum()
    s.coordinate("z")
    return s


# ---------------------------------------------------------------- simulate
SIMULATE_CASES = [
    ("t_end text", dict(t_end="ten"), ParameterError, r"t_end must be a positive number, got 'ten'"),
    ("t_end negative", dict(t_end=-1.0), ParameterError, r"t_end must be a positive number, got -1.0"),
    ("t_end inf", dict(t_end=math.inf), ParameterError, r"t_end must be a positive number, got inf"),
    ("dt zero", dict(t_end=1.0, dt=0.0), ParameterError, r"dt must be a positive number, got 0.0"),
    ("dt nan", dict(t_end=1.0, dt=math.nan), ParameterError, r"dt must be a positive number, got nan"),
    ("grid too large", dict(t_end=1e9, dt=1e-3), ParameterError,
     r"t_end = 1e\+09 with dt = 0.001 asks for 1,000,000,000,002 output rows .*choose dt >="),
    ("rtol huge", dict(t_end=1.0, rtol=1e300), ParameterError,
     r"rtol = 1e\+300 is outside its range \[1e-14, 0.1\]"),
    ("rtol tiny", dict(t_end=1.0, rtol=1e-300), ParameterError, r"rtol = 1e-300 is outside its range"),
    ("rtol text", dict(t_end=1.0, rtol="tight"), ParameterError, r"rtol must be a number, got 'tight'"),
    ("atol negative", dict(t_end=1.0, atol=-1e-9), ParameterError,
     r"atol = -1e-09 is outside its range 0 \(derived from rtol\) or \(0, 1\]"),
    ("atol huge", dict(t_end=1.0, atol=1e300), ParameterError, r"atol = 1e\+300 is outside its range"),
    ("max_step negative", dict(t_end=1.0, max_step=-1), ParameterError,
     r"max_step = -1 is outside its range \[1e-10, inf\]"),
    ("max_step tiny", dict(t_end=1.0, max_step=1e-300), ParameterError, r"max_step = 1e-300 is outside"),
    ("method unknown", dict(t_end=1.0, method="rk4"), ParameterError, r"unknown method 'rk4'"),
    ("backend unknown", dict(t_end=1.0, backend="gpu"), ParameterError, r"unknown backend 'gpu'"),
    ("formulation unknown", dict(t_end=1.0, formulation="magic"), ParameterError, r"magic"),
    ("param unknown", dict(t_end=1.0, params={"mass": 2.0}), ParameterError,
     r"unknown parameter\(s\) \['mass'\]"),
    ("param text", dict(t_end=1.0, params={"m": "abc"}), ParameterError,
     r"parameter 'm': 'abc' is not a number"),
    ("param nan", dict(t_end=1.0, params={"l": math.nan}), ParameterError, r"parameter 'l'.*not finite"),
    ("param zero mass", dict(t_end=1.0, params={"m": 0.0}), ParameterError,
     r"body 'rod': mass must be positive, got 0.0 \(m = 0.0"),
    ("param negative mass", dict(t_end=1.0, params={"mc": -1.0}), ParameterError,
     r"body 'cart': mass must be positive, got -1.0 \(mc = -1.0\)"),
    ("param zero length", dict(t_end=1.0, params={"l": 0.0}), ParameterError,
     r"parameter 'l' = 0 is not allowed: with l = 0 the mass matrix is singular \(coordinate 'theta'"),
    ("initial unknown", dict(t_end=1.0, initial={"qq": 1.0}), ParameterError, r"initial value 'qq'"),
    ("initial inf", dict(t_end=1.0, initial={"theta": math.inf}), ParameterError,
     r"initial value 'theta'.*not finite"),
    ("input unknown", dict(t_end=1.0, inputs={"G": 1.0}), ParameterError, r"unknown input 'G'"),
    ("input nan", dict(t_end=1.0, inputs={"F": math.nan}), ParameterError, r"input 'F'"),
    ("input function nan", dict(t_end=1.0, inputs={"F": lambda t: math.nan if t > 0.5 else 0.0}),
     mbsfmu.SimulationError, r"input 'F' is not finite at t="),
    ("progress not callable", dict(t_end=1.0, progress="yes"), ParameterError,
     r"progress must be a function"),
]


LOOP_CASES = [
    ("conflicting initial condition", lambda: mbsfmu.simulate(
        slider_with(slider_pos=(lambda s: s.coordinates_["x"].symbol, 2.0)), t_end=0.1),
     ConstraintError, r"'(pivot.x|slider_pos)' stays violated by .* cannot hold together with: initial "
                      r"condition 'slider_pos' \(x = 2\)"),
    ("held coordinate conflicts", lambda: mbsfmu.simulate(SLIDER, t_end=0.1, initial={"x": 2.0}, fixed=["x"]),
     ConstraintError, r"cannot hold together with: held coordinate x = 2"),
    ("fixed unknown coordinate", lambda: mbsfmu.simulate(SLIDER, t_end=0.1, fixed=["zz"]), ParameterError,
     r"unknown fixed coordinate\(s\) \['zz'\]"),
    ("zero crank", lambda: mbsfmu.simulate(SLIDER, t_end=0.1, params={"r": 0.0}), ParameterError,
     r"parameter 'r' = 0 is not allowed: .*coordinate 'beta'"),
    ("redundant with projection", lambda: mbsfmu.simulate(_redundant_four_bar(), t_end=0.1,
                                                           formulation="projection", fixed=["phi1"]),
     ConstraintError, r"3 constraints are redundant .* formulation 'projection' cannot take redundant"),
    ("method with constraints", lambda: mbsfmu.simulate(SLIDER, t_end=0.1, method="BDF"), ParameterError,
     r"method 'BDF' cannot be combined with constraints"),
]


def _redundant_four_bar():
    from models import four_bar

    return four_bar.model("3d")


@pytest.mark.parametrize("make, exc, pattern", [c[1:] for c in MODEL_CASES], ids=[c[0] for c in MODEL_CASES])
def test_model_construction(make, exc, pattern):
    with pytest.raises(exc, match=pattern):
        make()


@pytest.mark.parametrize("kwargs, exc, pattern", [c[1:] for c in SIMULATE_CASES],
                         ids=[c[0] for c in SIMULATE_CASES])
def test_simulate_arguments(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        mbsfmu.simulate(CART, **kwargs)


@pytest.mark.parametrize("call, exc, pattern", [c[1:] for c in LOOP_CASES], ids=[c[0] for c in LOOP_CASES])
def test_constrained_models(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


# ---------------------------------------------------------------- model files and the CLI
def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


FILE_CASES = [
    ("missing file", None, r"does not exist"),
    ("no model()", "x = 1\n", r"no model\(\) function"),
    ("model() returns int", "def model():\n    return 42\n", r"model\(\) returned int"),
    ("syntax error", "def model(:\n", r"importing the model file failed: SyntaxError"),
    ("import error", "import no_such_module\n", r"importing the model file failed: ModuleNotFoundError"),
    ("exception in model()", "def model():\n    raise RuntimeError('no data')\n",
     r", line 2: model\(\) failed: RuntimeError: no data"),
    ("model error in model()", "from mbsfmu import System\ndef model():\n    s = System('m')\n"
     "    s.frame('F', ref='nowhere')\n    return s\n", r", line 4: model\(\) failed: ModelError: frame 'F'"),
]


@pytest.mark.parametrize("text, pattern", [c[1:] for c in FILE_CASES], ids=[c[0] for c in FILE_CASES])
def test_model_files(tmp_path, text, pattern):
    path = tmp_path / "nope.py" if text is None else _write(tmp_path, "m.py", text)
    with pytest.raises(ModelError, match=pattern):
        mbsfmu.load_model(path)


def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "mbsfmu", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


CLI_CASES = [
    ("set without value", ["simulate", CART, "--t-end", "1", "--set", "m", "--out", "{tmp}/o.csv"],
     r"--set 'm': expected NAME=VALUE"),
    ("set not a number", ["simulate", CART, "--t-end", "1", "--set", "m=heavy", "--out", "{tmp}/o.csv"],
     r"--set m: 'heavy' is not a number"),
    ("set unknown name", ["simulate", CART, "--t-end", "1", "--set", "mass=2", "--out", "{tmp}/o.csv"],
     r"--set mass: no constant, coordinate, named initial condition or input of that name"),
    ("set bad mass", ["simulate", CART, "--t-end", "1", "--set", "m=-1", "--out", "{tmp}/o.csv"],
     r"body 'rod': mass must be positive"),
    ("rtol out of range", ["simulate", CART, "--t-end", "1", "--rtol", "5", "--out", "{tmp}/o.csv"],
     r"rtol = 5.0 is outside its range"),
    ("t-end zero", ["simulate", CART, "--t-end", "0", "--out", "{tmp}/o.csv"],
     r"t_end must be a positive number"),
    ("out missing folder", ["simulate", CART, "--t-end", "1", "--out", "{tmp}/no/o.csv"],
     r"--out '.*/no/o.csv': the directory .* does not exist"),
    ("out is a folder", ["simulate", CART, "--t-end", "1", "--out", "{tmp}"], r"--out '.*' is a directory"),
    ("plot missing folder", ["simulate", CART, "--t-end", "1",
      "--out", "{tmp}/o.csv", "--plot", "{tmp}/no/p.png"],
     r"--plot '.*/no/p.png'"),
    ("missing model file", ["simulate", "{tmp}/none.py", "--t-end", "1", "--out", "{tmp}/o.csv"],
     r"model file '.*none.py' does not exist"),
    ("info missing model", ["info", "{tmp}/none.py"], r"does not exist"),
    ("build bad formulation", ["build", SLIDER, "-o", "{tmp}/x.fmu", "--formulation", "minimal"],
     r"formulation 'minimal' needs a system without constraints"),
]


@pytest.mark.parametrize("args, pattern", cases(CLI_CASES, fast={"out missing folder",
                                                              "build bad formulation"}))
def test_cli(tmp_path, args, pattern):
    r = cli(*[str(a).replace("{tmp}", str(tmp_path)) for a in args])
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("mbsfmu: error: ") and "Traceback" not in r.stderr
    assert __import__("re").search(pattern, r.stderr), r.stderr
    assert not (tmp_path / "o.csv").exists()


def test_catalogue_size():
    """The number of bad inputs catalogued here (reported in the issue note)."""
    n = len(MODEL_CASES) + len(SIMULATE_CASES) + len(LOOP_CASES) + len(FILE_CASES) + len(CLI_CASES)
    assert n >= 90
