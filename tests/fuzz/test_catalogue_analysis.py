"""Catalogue of bad inputs of the analysis surfaces (issue 23): ``linearize``, the methods of a
``Linearization`` (to_numeric, transfer_function, frequency_response, bode, plot_modes,
to_system), and control design (lqr, dlqr, place, StateFeedbackGain.block).

Each case is one bad input, tried as a hostile user would; the test asserts the exception type
and that the message names the culprit (the argument, name, value, parameter, mode or
coordinate) by a regular expression.  A refused call returns nothing half-made: it raises
before its result exists, and the objects it was given are unchanged (checked for the
linearization the method cases share).
"""

import functools
import math
import pathlib
import re

import numpy as np
import pytest
import sympy as sp
from slow_cases import cases

import mbsfmu
from mbsfmu import ConstraintError, ModelError, ParameterError, SingularMassMatrixError, System, rot_x, rot_y
from mbsfmu.analysis import dlqr, lqr, place
from mbsfmu.core.errors import MbsError

ROOT = pathlib.Path(__file__).resolve().parents[2]
CART = ROOT / "models" / "cart_pendulum.py"
SLIDER = ROOT / "models" / "slider_crank.py"


@functools.cache
def cart():
    return mbsfmu.load_model(CART)


@functools.cache
def slider():
    return mbsfmu.load_model(SLIDER)


@functools.cache
def lin():
    """The cart-pendulum about the upright rest position, symbolic in its constants."""
    return mbsfmu.linearize(cart(), at={"x": 0, "theta": 0}, inputs=["F"], equilibrium=True)


@functools.cache
def lin_numeric():
    return mbsfmu.linearize(cart(), at={"x": 0, "theta": 0}, inputs=["F"], symbolic=False)


@functools.cache
def lin_no_inputs():
    return mbsfmu.linearize(cart(), at={"x": 0, "theta": 0}, inputs=[], symbolic=False)


@functools.cache
def lin_no_outputs():
    return mbsfmu.linearize(cart(), at={"x": 0, "theta": 0}, inputs=["F"], outputs=[], symbolic=False)


@functools.cache
def gain():
    return lqr(lin(), Q=[1, 1, 1, 1], R=[1])


def bounded():
    s = System("bounded")
    k = s.constant("k", 2.0, min=0.0, max=10.0)
    q, = s.coordinates("q")
    s.body("B", rel_pos=[q, 0, 0], mass=1, inertia=[0, 0, 0])
    s.generalized_force("spring", "q", -k * q)
    return s


def rotor_on_a_line():
    """A body whose centre of gravity is at distance b on y from the axis of a: at b = 0 the
    rotation a moves no mass (the body has no inertia)."""
    s = System("rotor")
    a, b = s.coordinates("a", "b")
    s.body("B", rel_rot=rot_x(a), cg_pos=[0, b, 0], mass=1, inertia=[0, 0, 0])
    return s


def sum_body():
    """One body moved by a + b: only the sum has mass, a - b none."""
    s = System("sum_body")
    a, b = s.coordinates("a", "b")
    s.body("B", rel_pos=[a + b, 0, 0], mass=1, inertia=[0, 0, 0])
    return s


def crank_point():
    s = System("crank_slider_point")
    a = s.coordinate("a")
    s.body("slide", rel_pos=[sp.sin(a), 0, 0], mass=1.0, inertia=[0, 0, 0])
    return s


@functools.cache
def two_pendulums():
    """Two pendulums, a torque on the first only: the second one cannot be controlled."""
    s = System("two_pendulums")
    a, b = s.coordinates("a", "b")
    T = s.input("T", 0.0)
    s.gravity([0, 0, -9.81])
    s.body("A", rel_rot=rot_y(a), cg_pos=[0, 0, 1], mass=1, inertia=[1, 1, 1])
    s.body("B", rel_pos=[2, 0, 0], rel_rot=rot_y(b), cg_pos=[0, 0, 1], mass=1, inertia=[1, 1, 1])
    s.generalized_force("drive", "a", T)
    return mbsfmu.linearize(s, at={}, inputs=["T"], symbolic=False)


@functools.cache
def two_inputs():
    """A mass on a spring in x and y with a force in each: two inputs."""
    s = System("two_inputs")
    x, y = s.coordinates("x", "y")
    Fx, Fy = s.input("Fx", 0.0), s.input("Fy", 0.0)
    s.body("B", rel_pos=[x, y, 0], mass=1, inertia=[0, 0, 0])
    s.generalized_force("fx", "x", Fx - x)
    s.generalized_force("fy", "y", Fy - y)
    return mbsfmu.linearize(s, at={}, inputs=["Fx", "Fy"], symbolic=False)


OUT = {}


@pytest.fixture(autouse=True)
def _output_folder(tmp_path):
    OUT["folder"] = tmp_path


def out(name: str) -> str:
    """A path in the running test's folder (where the plot cases would write)."""
    return str(OUT["folder"] / name)


def L(**kw):
    return lambda: mbsfmu.linearize(cart(), **{"at": {"x": 0, "theta": 0}, **kw})


def LS(**kw):
    return lambda: mbsfmu.linearize(slider(), **{"at": {"x": 0.6}, **kw})


TH0 = sp.Symbol("th0")

LINEARIZE_CASES = [
    # the model
    ("model int", lambda: mbsfmu.linearize(42), ParameterError,
     r"linearize: the model must be a System, its equations or the path of a model file, got int 42"),
    ("model None", lambda: mbsfmu.linearize(None), ParameterError,
     r"linearize: the model must be .* got NoneType"),
    ("model missing file", lambda: mbsfmu.linearize("nope.py"), ModelError,
     r"model file 'nope.py' does not exist"),
    # at
    ("at list of pairs", L(at=[("x", 0)]), ParameterError,
     r"linearize: at must be a dict of values by name, got list"),
    ("at text", L(at="x=0"), ParameterError, r"linearize: at must be a dict .* got str 'x=0'"),
    ("at name int", L(at={1: 0}), ParameterError, r"linearize: at: the names must be strings, got 1"),
    ("at value text", L(at={"x": "0"}), ParameterError, r"linearize: at 'x': .*not the string '0'"),
    ("at value nan", L(at={"x": math.nan}), ParameterError, r"linearize: at 'x': nan is not finite"),
    ("at value inf", L(at={"theta": math.inf}), ParameterError, r"linearize: at 'theta': inf is not finite"),
    ("at value True", L(at={"x": True}), ParameterError, r"linearize: at 'x': .*not True"),
    ("at value complex", L(at={"x": 1j}), ParameterError, r"linearize: at 'x': 1j is not a number"),
    ("at value list", L(at={"x": [1, 2]}), ParameterError, r"linearize: at 'x': \[1, 2\] is not a number"),
    ("at value None", L(at={"x": None}), ParameterError, r"linearize: at 'x': None is not a number"),
    ("at value array", L(at={"x": np.array([1.0, 2.0])}), ParameterError, r"linearize: at 'x': array"),
    ("at value sympy nan", L(at={"x": sp.nan}), ParameterError,
     r"linearize: at 'x': nan is not a finite real"),
    ("at value sympy zoo", L(at={"theta": sp.zoo}), ParameterError,
     r"linearize: at 'theta': zoo is not a finite"),
    ("at value sympy oo", L(at={"theta": sp.oo}), ParameterError,
     r"linearize: at 'theta': oo is not a finite"),
    ("at value sympy I", L(at={"theta": sp.I}), ParameterError,
     r"linearize: at 'theta': I is not a finite real"),
    ("at value sympy true", L(at={"theta": sp.true}), ParameterError, r"linearize: at 'theta': .*not True"),
    ("at unknown name", L(at={"zz": 0}), ParameterError,
     r"linearize: 'zz' is no coordinate, velocity, input"),
    ("at unknown rate", L(at={"der(zz)": 0}), ParameterError, r"linearize: 'der\(zz\)' is no coordinate"),
    ("at t nan", L(at={"t": math.nan}), ParameterError, r"linearize: at 't': nan is not finite"),
    # params and the model's requirements on them
    ("params list", L(params=[1]), ParameterError, r"linearize: params must be a dict of values by name"),
    ("params unknown", L(params={"zz": 1}), ParameterError, r"linearize: params: 'zz' is not a constant"),
    ("params a coordinate", L(params={"x": 1}), ParameterError,
     r"linearize: params: 'x' is not a constant of 'cart_pendulum' .* go in at="),
    ("params and at both", L(at={"x": 0, "m": 0.2}, params={"m": 0.3}), ParameterError,
     r"linearize: 'm' given in both params and at"),
    ("params text", L(params={"m": "a"}), ParameterError, r"linearize: params 'm': .*not the string 'a'"),
    ("params nan", L(params={"m": math.nan}), ParameterError, r"linearize: params 'm': nan is not finite"),
    ("params m = 0", L(params={"m": 0}), ParameterError,
     r"linearize: body 'rod': mass must be positive, got 0.0 \(m = 0.0, l = 0.5\)"),
    ("params m = 0, numbers", L(params={"m": 0}, symbolic=False), ParameterError,
     r"linearize: body 'rod': mass must be positive, got 0.0 \(m = 0.0"),
    ("params mc < 0", L(params={"mc": -1}), ParameterError,
     r"linearize: body 'cart': mass must be positive, got -1.0 \(mc = -1.0\)"),
    ("params l = 0", L(params={"l": 0}), ParameterError,
     r"linearize: parameter 'l' = 0 is not allowed: with l = 0 the mass matrix is singular "
     r"\(coordinate 'theta' would move no mass\)"),
    ("constant l = 0 in at", L(at={"l": 0}), ParameterError, r"linearize: parameter 'l' = 0 is not allowed"),
    ("slider r = 0", LS(params={"r": 0}), ParameterError,
     r"linearize: parameter 'r' = 0 is not allowed: with r = 0 the mass matrix reduced by the "
     r"constraints is singular \(coordinate 'beta' would move no mass\)"),
    ("slider m_crank = 0", LS(params={"m_crank": 0}), ParameterError,
     r"linearize: body 'crank': mass must be positive, got 0.0 \(m_crank = 0.0, r = 0.15\)"),
    ("declared bound", lambda: mbsfmu.linearize(bounded(), params={"k": 11}), ParameterError,
     r"linearize: parameter 'k' = 11.0 is above its maximum 10.0"),
    # a mass matrix singular at the point names the motion
    ("singular at the point", lambda: mbsfmu.linearize(rotor_on_a_line(), at={"a": 0, "b": 0}),
     SingularMassMatrixError,
     r"rotor: the mass matrix is singular at the operating point \(a=0, b=0; condition number inf\): "
     r"coordinate 'a' would move no mass there"),
    ("singular at a crank's dead point", lambda: mbsfmu.linearize(crank_point(), at={"a": sp.pi / 2}),
     SingularMassMatrixError, r"singular at the operating point \(a=pi/2.*coordinate 'a' would move no mass"),
    ("singular combined motion", lambda: mbsfmu.linearize(sum_body()), SingularMassMatrixError,
     r"sum_body: the mass matrix is singular .*a combined motion of 'a', 'b' would move no mass"),
    # tol, symbolic, equilibrium
    ("tol negative", L(tol=-1), ParameterError, r"linearize: tol must be >= 0, got -1"),
    ("tol nan", L(tol=math.nan), ParameterError, r"linearize: tol must be a finite number, got nan"),
    ("tol inf", L(tol=math.inf), ParameterError, r"linearize: tol must be a finite number, got inf"),
    ("tol text", L(tol="a"), ParameterError, r"linearize: tol must be a number, got 'a'"),
    ("tol True", L(tol=True), ParameterError, r"linearize: tol must be a number, got True"),
    ("tol complex", L(tol=1e-8j), ParameterError, r"linearize: tol must be a number, got 1e-08j"),
    ("symbolic text", L(symbolic="no"), ParameterError,
     r"linearize: symbolic must be True or False, got 'no'"),
    ("symbolic 1", L(symbolic=1), ParameterError, r"linearize: symbolic must be True or False, got 1"),
    ("equilibrium text", L(equilibrium="yes"), ParameterError,
     r"linearize: equilibrium must be True or False, got 'yes'"),
    ("no equilibrium", L(at={"theta": 1}, equilibrium=True), ParameterError,
     r"linearize: the operating point \(x=0, theta=1\) is not an equilibrium: the accelerations there "
     r"are x''=-0.3103, theta''=12.63"),
    ("equilibrium moving", L(at={"der(x)": 1}, equilibrium=True), ParameterError,
     r"not an equilibrium: velocities \{'x': 1\} are not zero"),
    ("equilibrium with symbols", L(at={"theta": TH0}, equilibrium=True), ParameterError,
     r"equilibrium=True needs numbers"),
    # inputs, outputs
    ("inputs int", L(inputs=3), ParameterError,
     r"linearize: inputs must be a name or a list of names, got 3"),
    ("inputs unknown", L(inputs=["G"]), ParameterError,
     r"linearize: inputs: unknown input\(s\) \['G'\] \(known: F\)"),
    ("inputs twice", L(inputs=["F", "F"]), ParameterError, r"linearize: inputs: 'F' given more than once"),
    ("inputs not names", L(inputs=[1]), ParameterError, r"linearize: inputs: 1 is not a name"),
    ("outputs unknown", L(outputs=["zz"]), ParameterError,
     r"linearize: unknown output 'zz' of 'cart_pendulum'"),
    ("outputs int", L(outputs=3), ParameterError,
     r"linearize: outputs must be a name or a list of names, got 3"),
    ("outputs not names", L(outputs=[3]), ParameterError, r"linearize: outputs: 3 is not a name"),
    ("outputs twice", L(outputs=["x", "x"]), ParameterError, r"linearize: outputs: 'x' given more than once"),
    ("outputs twice by alias", L(outputs=["der(x)", "Dx"]), ParameterError,
     r"linearize: outputs: 'der\(x\)' given more than once"),
    ("output a reaction", LS(outputs=["reaction.pivot.x"]), ParameterError,
     r"linearize: output 'reaction.pivot.x' is a reaction"),
    # constrained systems
    ("independent without constraints", L(independent=["x"]), ParameterError,
     r"linearize: 'cart_pendulum' has no constraints"),
    ("independent unknown", LS(independent=["zz"]), ParameterError,
     r"linearize: independent: unknown coordinate\(s\) \['zz'\] \(known: x, alpha, beta\)"),
    ("independent int", LS(independent=3), ParameterError,
     r"linearize: independent must be a name or a list"),
    ("independent twice", LS(independent=["beta", "beta"]), ParameterError,
     r"linearize: independent: 'beta' given more than once"),
    ("independent count", LS(independent=["x", "alpha"]), ParameterError,
     r"independent: 3 coordinates and 2 constraints leave 1 independent coordinate\(s\), got 2"),
    ("point violates a constraint", LS(at={"x": 0.6, "alpha": 0, "beta": 0}), ConstraintError,
     r"the operating point violates constraint 'pivot.x': residual 1.25"),
    ("point out of reach", LS(at={"x": 5}), ConstraintError, r"violates constraint 'pivot.x'"),
    ("rates inconsistent", LS(at={"x": 0.6, "der(x)": 1}), ConstraintError,
     r"the operating point's velocities violate the velocity constraint of 'pivot.x'"),
    ("symbolic point of a loop", LS(at={"x": sp.Symbol("x0")}), ParameterError,
     r"coordinates \['alpha', 'beta'\] of the constrained 'slider_crank' are not set"),
]

METHOD_CASES = [
    # to_numeric
    ("to_numeric params list", lambda: lin().to_numeric([1]), ParameterError,
     r"to_numeric: params must be a dict of values by name, got list"),
    ("to_numeric unknown constant", lambda: lin().to_numeric({"zz": 1}), ParameterError,
     r"to_numeric: unknown constant 'zz' \(constants: d, g, l, m, mc\)"),
    ("to_numeric text", lambda: lin().to_numeric({"m": "a"}), ParameterError,
     r"to_numeric: params 'm' must be a number, got 'a'"),
    ("to_numeric nan", lambda: lin().to_numeric({"m": math.nan}), ParameterError,
     r"to_numeric: params 'm' must be a finite number, got nan"),
    ("to_numeric inf", lambda: lin().to_numeric({"m": math.inf}), ParameterError,
     r"to_numeric: params 'm' must be a finite number, got inf"),
    ("to_numeric True", lambda: lin().to_numeric({"m": True}), ParameterError,
     r"to_numeric: params 'm' must be a number, got True"),
    ("to_numeric m = 0", lambda: lin().to_numeric({"m": 0}), ParameterError,
     r"to_numeric: body 'rod': mass must be positive, got 0.0 \(m = 0.0, l = 0.5\)"),
    ("to_numeric m < 0", lambda: lin().to_numeric({"m": -1}), ParameterError,
     r"to_numeric: body 'rod': mass must be positive, got -1.0"),
    ("to_numeric l = 0", lambda: lin().to_numeric({"l": 0}), ParameterError,
     r"to_numeric: parameter 'l' = 0 is not allowed: with l = 0 the mass matrix is singular"),
    ("to_numeric unknown symbol", lambda: lin().to_numeric(zz=1), ParameterError,
     r"to_numeric: 'zz' is no symbol of this linearization"),
    ("to_numeric of numbers", lambda: lin_numeric().to_numeric({"m": 0.3}), ParameterError,
     r"to_numeric: the linearization of 'cart_pendulum' is numeric already .* to change m"),
    ("to_numeric substituted constant",
     lambda: mbsfmu.linearize(cart(), params={"m": 0.2}).to_numeric({"m": 0.3}), ParameterError,
     r"to_numeric: constant 'm' was substituted when linearizing"),
    ("to_numeric symbol without value", lambda: mbsfmu.linearize(cart(), at={"theta": TH0}).to_numeric(),
     ParameterError, r"to_numeric: no value for \['th0'\]"),
    ("to_numeric symbol nan", lambda: mbsfmu.linearize(cart(), at={"theta": TH0}).to_numeric(th0=math.nan),
     ParameterError, r"to_numeric: th0 must be a finite number, got nan"),
    ("to_numeric singular", lambda: mbsfmu.linearize(rotor_on_a_line(), at={"a": 0, "b": sp.Symbol("b0")})
     .to_numeric(b0=0), SingularMassMatrixError,
     r"to_numeric: rotor: the mass matrix is singular with b0 = 0.0 .*coordinate 'a' would move no mass"),
    # transfer functions and frequency responses
    ("tf without inputs", lambda: lin_no_inputs().transfer_function("F", "x"), ParameterError,
     r"transfer_function: the linear model of 'cart_pendulum' has no inputs \(linearize with inputs="),
    ("tf unknown input", lambda: lin().transfer_function("G", "x"), ParameterError,
     r"transfer_function: unknown input 'G' \(known: F\)"),
    ("tf unknown output", lambda: lin().transfer_function("F", "zz"), ParameterError,
     r"transfer_function: unknown output 'zz' \(known: x, theta, der\(x\), der\(theta\)\)"),
    ("tf input not a name", lambda: lin().transfer_function(0, "x"), ParameterError,
     r"transfer_function: the input must be a name \(a string\), got 0"),
    ("tf output None", lambda: lin().transfer_function("F", None), ParameterError,
     r"transfer_function: the output must be a name \(a string\), got None"),
    ("fr text", lambda: lin().frequency_response("F", "x", "abc"), ParameterError,
     r"frequency_response: frequencies_hz must hold numbers, not text: 'abc'"),
    ("fr nan", lambda: lin().frequency_response("F", "x", [math.nan]), ParameterError,
     r"frequency_response: frequencies_hz has entries that are not finite"),
    ("fr negative", lambda: lin().frequency_response("F", "x", [1, -1]), ParameterError,
     r"frequency_response: frequencies_hz must be >= 0 Hz, got -1.0"),
    ("fr empty", lambda: lin().frequency_response("F", "x", []), ParameterError,
     r"frequency_response: frequencies_hz must be a non-empty list"),
    ("fr table", lambda: lin().frequency_response("F", "x", [[1, 2]]), ParameterError,
     r"frequency_response: frequencies_hz must be a non-empty list"),
    ("fr at a pole", lambda: lin().frequency_response("F", "x", [0.0]), ParameterError,
     r"frequency_response: 0 Hz is a pole of the linear model"),
    ("fr without inputs", lambda: lin_no_inputs().frequency_response("F", "x", [1.0]), ParameterError,
     r"frequency_response: the linear model of 'cart_pendulum' has no inputs"),
    # Bode plots
    ("bode without inputs", lambda: lin_no_inputs().bode(out("b.png")), ParameterError,
     r"bode: the linear model of 'cart_pendulum' has no inputs \(linearize with inputs="),
    ("bode without outputs", lambda: lin_no_outputs().bode(out("b.png")), ParameterError,
     r"bode: the linear model of 'cart_pendulum' has no outputs"),
    ("bode pairs text", lambda: lin().bode(out("b.png"), pairs="F"), ParameterError,
     r"bode: pairs must be a list of \(input, output\) pairs, got 'F'"),
    ("bode pairs unknown output", lambda: lin().bode(out("b.png"), pairs=[("F", "zz")]), ParameterError,
     r"bode: unknown output 'zz'"),
    ("bode pairs unknown input", lambda: lin().bode(out("b.png"), pairs=[("G", "x")]), ParameterError,
     r"bode: unknown input 'G'"),
    ("bode pairs triple", lambda: lin().bode(out("b.png"), pairs=[("F", "x", "theta")]), ParameterError,
     r"bode: pairs must be a non-empty list of \(input, output\) pairs"),
    ("bode pairs empty", lambda: lin().bode(out("b.png"), pairs=[]), ParameterError,
     r"bode: pairs must be a non-empty list"),
    ("bode pairs int", lambda: lin().bode(out("b.png"), pairs=3), ParameterError,
     r"bode: pairs must be a list of \(input, output\) pairs, got 3"),
    ("bode frequencies negative", lambda: lin().bode(out("b.png"), frequencies_hz=[-1, 1]), ParameterError,
     r"bode: frequencies_hz must be > 0 Hz, got -1.0"),
    ("bode frequencies zero", lambda: lin().bode(out("b.png"), frequencies_hz=[0, 1]), ParameterError,
     r"bode: frequencies_hz must be > 0 Hz, got 0.0"),
    ("bode frequencies empty", lambda: lin().bode(out("b.png"), frequencies_hz=[]), ParameterError,
     r"bode: frequencies_hz must be a non-empty list"),
    ("bode frequencies True", lambda: lin().bode(out("b.png"), frequencies_hz=[True]), ParameterError,
     r"bode: frequencies_hz must hold numbers, not True/False"),
    ("bode folder missing", lambda: lin().bode(out("nowhere/b.png")), ParameterError,
     r"bode: path '.*/nowhere/b.png': the directory '.*/nowhere' does not exist"),
    ("bode format", lambda: lin().bode(out("b.xyz")), ParameterError,
     r"bode: path '.*/b.xyz': '.xyz' is not an image format"),
    ("bode no ending", lambda: lin().bode(out("bode")), ParameterError,
     r"bode: path '.*/bode': no suffix says the image format"),
    ("bode path a folder", lambda: lin().bode(out("")), ParameterError, r"bode: path '.*' is a directory"),
    ("bode path int", lambda: lin().bode(5), ParameterError, r"bode: path must be a file name, got 5"),
    # Bode plots as interactive pages (issue 27 item 5): the same checks, .html among the suffixes
    ("bode page suffix misspelt", lambda: lin().bode(out("b.htm")), ParameterError,
     r"bode: path '.*/b\.htm': '\.htm' is not an image format; end the name in one of .*\.png.*, "
     r"or \.html for an interactive page"),
    ("bode page in a folder not writable", lambda: lin().bode("/proc/b.html"), ParameterError,
     r"bode: path '/proc/b\.html': cannot write in '/proc'"),
    ("bode page folder missing", lambda: lin().bode(out("no/b.html")), ParameterError,
     r"bode: path '.*/no/b\.html': the directory '.*/no' does not exist"),
    ("bode page pairs unknown output", lambda: lin().bode(out("b.html"), pairs=[("F", "zz")]), ParameterError,
     r"bode: unknown output 'zz'"),
    # mode plots
    ("plot_modes count 0", lambda: lin().plot_modes(out("m.png"), count=0), ParameterError,
     r"plot_modes: count must be a whole number >= 1, got 0"),
    ("plot_modes count negative", lambda: lin().plot_modes(out("m.png"), count=-1), ParameterError,
     r"plot_modes: count must be a whole number >= 1, got -1"),
    ("plot_modes count text", lambda: lin().plot_modes(out("m.png"), count="a"), ParameterError,
     r"plot_modes: count must be a whole number >= 1, got 'a'"),
    ("plot_modes count float", lambda: lin().plot_modes(out("m.png"), count=2.5), ParameterError,
     r"plot_modes: count must be a whole number >= 1, got 2.5"),
    ("plot_modes count True", lambda: lin().plot_modes(out("m.png"), count=True), ParameterError,
     r"plot_modes: count must be a whole number >= 1, got True"),
    ("plot_modes format", lambda: lin().plot_modes(out("m.txt")), ParameterError,
     r"plot_modes: path '.*/m.txt': '.txt' is not an image format"),
    ("plot_modes folder missing", lambda: lin().plot_modes(out("no/m.png")), ParameterError,
     r"plot_modes: path .* does not exist"),
    ("plot_modes page a folder", lambda: lin().plot_modes(OUT["folder"]), ParameterError,
     r"plot_modes: path '.*' is a directory; give a file name"),
    ("plot_modes page in a folder not writable", lambda: lin().plot_modes("/proc/m.html"), ParameterError,
     r"plot_modes: path '/proc/m\.html': cannot write in '/proc'"),
    ("plot_modes page count 0", lambda: lin().plot_modes(out("m.html"), count=0), ParameterError,
     r"plot_modes: count must be a whole number >= 1, got 0"),
    # the linear model as a model
    ("to_system off equilibrium", lambda: mbsfmu.linearize(cart(), at={"theta": 0.5}).to_system(),
     ParameterError, r"cart_pendulum: to_system needs a linearization about an equilibrium"),
    ("to_system bad name", lambda: lin().to_system(name="1bad"), ModelError,
     r"system name '1bad' must be a valid identifier"),
    ("to_system name int", lambda: lin().to_system(name=5), ModelError,
     r"system name 5 must be a valid identifier"),
]

CONTROL_CASES = [
    # the plant
    ("lqr plant int", lambda: lqr(5, [1], [1]), ParameterError,
     r"lqr: the plant must be a linearization \(mbsfmu.linearize's result\), got int"),
    ("lqr without inputs", lambda: lqr(lin_no_inputs(), [1, 1, 1, 1], []), ParameterError,
     r"lqr: the linear model of 'cart_pendulum' has no inputs"),
    ("dlqr without inputs", lambda: dlqr(lin_no_inputs(), [1, 1, 1, 1], [], 0.01), ParameterError,
     r"dlqr: the linear model of 'cart_pendulum' has no inputs"),
    ("place without inputs", lambda: place(lin_no_inputs(), [-1, -2, -3, -4]), ParameterError,
     r"place: the linear model of 'cart_pendulum' has no inputs"),
    ("place plant dict", lambda: place({"A": 1}, [-1]), ParameterError,
     r"place: the plant must be a linearization"),
    # R
    ("lqr R indefinite", lambda: lqr(lin(), [1, 1, 1, 1], [-1]), ParameterError,
     r"lqr: R is not positive definite: its smallest eigenvalue is -1"),
    ("lqr R zero", lambda: lqr(lin(), [1, 1, 1, 1], [0]), ParameterError,
     r"lqr: R is not positive definite: its smallest eigenvalue is 0"),
    ("lqr R indefinite 2x2", lambda: lqr(two_inputs(), [1, 1, 1, 1], [[1, 2], [2, 1]]), ParameterError,
     r"lqr: R is not positive definite: its smallest eigenvalue is -1 \(largest 3\)"),
    ("lqr R not symmetric", lambda: lqr(two_inputs(), [1, 1, 1, 1], [[1, 0.5], [0, 1]]), ParameterError,
     r"lqr: R is not symmetric: entry \(0, 1\) is 0.5, \(1, 0\) is 0.0"),
    ("lqr R size", lambda: lqr(lin(), [1, 1, 1, 1], [[1, 0], [0, 1]]), ParameterError,
     r"lqr: R must be 1x1 or 1 diagonal entries \(one per F\), got the shape \(2, 2\)"),
    ("lqr R diagonal size", lambda: lqr(two_inputs(), [1, 1, 1, 1], [1, 1, 1]), ParameterError,
     r"lqr: R must be 2x2 or 2 diagonal entries \(one per Fx, Fy\), got the shape \(3, 3\)"),
    ("lqr R text", lambda: lqr(lin(), [1, 1, 1, 1], ["a"]), ParameterError,
     r"lqr: R must hold numbers, not text"),
    ("lqr R nan", lambda: lqr(lin(), [1, 1, 1, 1], [math.nan]), ParameterError,
     r"lqr: R has entries that are not finite"),
    ("lqr R True", lambda: lqr(lin(), [1, 1, 1, 1], [True]), ParameterError,
     r"lqr: R must hold numbers, not True/False"),
    ("lqr R complex", lambda: lqr(lin(), [1, 1, 1, 1], [1j]), ParameterError,
     r"lqr: R must be real, got complex entries"),
    ("lqr R ragged", lambda: lqr(two_inputs(), [1, 1, 1, 1], [[1], [1, 2]]), ParameterError,
     r"lqr: R must be a table of numbers \(rows of equal length\)"),
    ("lqr R None", lambda: lqr(lin(), [1, 1, 1, 1], None), ParameterError, r"lqr: R is missing"),
    ("dlqr R indefinite", lambda: dlqr(lin(), [1, 1, 1, 1], [-1], 0.01), ParameterError,
     r"dlqr: R is not positive definite"),
    # Q
    ("lqr Q indefinite", lambda: lqr(lin(), [-1, 1, 1, 1], [1]), ParameterError,
     r"lqr: Q is not positive semidefinite: its smallest eigenvalue is -1"),
    ("lqr Q not symmetric", lambda: lqr(lin(), np.eye(4) + np.triu(np.ones((4, 4)), 1), [1]), ParameterError,
     r"lqr: Q is not symmetric: entry \(0, 1\) is 1.0, \(1, 0\) is 0.0"),
    ("lqr Q size", lambda: lqr(lin(), [1, 1, 1], [1]), ParameterError,
     r"lqr: Q must be 4x4 or 4 diagonal entries \(one per x, theta, der\(x\), der\(theta\)\), "
     r"got the shape \(3, 3\)"),
    ("lqr Q nan", lambda: lqr(lin(), [math.nan, 1, 1, 1], [1]), ParameterError,
     r"lqr: Q has entries that are not finite \(entry 0 is nan\)"),
    ("lqr Q text", lambda: lqr(lin(), "a", [1]), ParameterError, r"lqr: Q must hold numbers, not text: 'a'"),
    ("lqr Q None", lambda: lqr(lin(), None, [1]), ParameterError, r"lqr: Q is missing"),
    ("lqr Q blind to a boundary mode", lambda: lqr(lin(), [0, 1, 1, 1], [1]), ParameterError,
     r"lqr: Q gives no weight to the mode of coordinate 'x' \(eigenvalue 0; in the states: state 'x'\), "
     r"which is on the stability boundary"),
    ("dlqr Q blind to a boundary mode", lambda: dlqr(lin(), [0, 1, 1, 1], [1], 0.01), ParameterError,
     r"dlqr: Q gives no weight to the mode of coordinate 'x' \(z = 1, s = 0 1/s; in the states: "
     r"state 'x'\)"),
    ("dlqr Q indefinite", lambda: dlqr(lin(), [1, -1, 1, 1], [1], 0.01), ParameterError,
     r"dlqr: Q is not positive semidefinite"),
    # stabilizability
    ("lqr unstable mode out of reach", lambda: lqr(two_pendulums(), [1] * 4, [1]), ParameterError,
     r"lqr: the mode of coordinate 'b' \(eigenvalue 2.21472; in the states: a combined motion of 'b', "
     r"'der\(b\)'\) is not stable and the inputs \['T'\] cannot move it"),
    ("dlqr unstable mode out of reach", lambda: dlqr(two_pendulums(), [1] * 4, [1], 0.01), ParameterError,
     r"dlqr: the mode of coordinate 'b' \(z = 1.02239, s = 2.21472 1/s; .*\) is not stable and the "
     r"inputs \['T'\] cannot move it"),
    # the period
    ("dlqr period 0", lambda: dlqr(lin(), [1, 1, 1, 1], [1], 0), ParameterError,
     r"dlqr: period must be > 0, got 0"),
    ("dlqr period negative", lambda: dlqr(lin(), [1, 1, 1, 1], [1], -1), ParameterError,
     r"dlqr: period must be > 0, got -1"),
    ("dlqr period nan", lambda: dlqr(lin(), [1, 1, 1, 1], [1], math.nan), ParameterError,
     r"dlqr: period must be a finite number, got nan"),
    ("dlqr period text", lambda: dlqr(lin(), [1, 1, 1, 1], [1], "fast"), ParameterError,
     r"dlqr: period must be a number, got 'fast'"),
    ("dlqr period True", lambda: dlqr(lin(), [1, 1, 1, 1], [1], True), ParameterError,
     r"dlqr: period must be a number, got True"),
    ("dlqr period huge", lambda: dlqr(lin(), [1, 1, 1, 1], [1], 1e6), ParameterError,
     r"dlqr: period 1000000.0 s is too long: the discretized plant exp\(A period\) overflows"),
    # poles
    ("place unpaired complex", lambda: place(lin(), [-1 + 1j, -2, -3, -4]), ParameterError,
     r"place: the complex pole -1\+1j needs its conjugate -1-1j as often as itself"),
    ("place conjugate once for two", lambda: place(two_inputs(), [-1 + 1j, -1 + 1j, -1 - 1j, -2]),
     ParameterError,
     r"place: the complex pole -1\+1j needs its conjugate -1-1j as often as itself"),
    ("place too few", lambda: place(lin(), [-1, -2, -3]), ParameterError,
     r"place: 3 pole\(s\) for 4 states \(x, theta, der\(x\), der\(theta\)\); give 4"),
    ("place too many", lambda: place(lin(), [-1, -2, -3, -4, -5]), ParameterError,
     r"place: 5 pole\(s\) for 4 states"),
    ("place repeated beyond the inputs", lambda: place(lin(), [-1, -1, -3, -4]), ParameterError,
     r"place: the pole -1 is given 2 times, but with rank\(B\) = 1 \(inputs \['F'\]\) a pole can be "
     r"placed at most 1 time\(s\)"),
    ("place repeated three times, two inputs", lambda: place(two_inputs(), [-1, -1, -1, -2]), ParameterError,
     r"place: the pole -1 is given 3 times, but with rank\(B\) = 2"),
    ("place nan", lambda: place(lin(), [math.nan, -2, -3, -4]), ParameterError,
     r"place: poles has entries that are not finite"),
    ("place text", lambda: place(lin(), "abcd"), ParameterError, r"place: poles must hold numbers, not text"),
    ("place True", lambda: place(lin(), [True, -2, -3, -4]), ParameterError,
     r"place: poles must hold numbers, not True/False"),
    ("place table", lambda: place(lin(), [[-1, -2], [-3, -4]]), ParameterError,
     r"place: poles must be a list of numbers \(complex ones in conjugate pairs\)"),
    ("place None", lambda: place(lin(), None), ParameterError, r"place: poles is missing"),
    ("place a mode out of reach", lambda: place(two_pendulums(), [-1, -2, -3, -4]), ParameterError,
     r"place: the inputs \['T'\] cannot move the mode of coordinate 'b' \(eigenvalue -2.21472; in the "
     r"states: a combined motion of 'b', 'der\(b\)'\): its pole stays where it is"),
    # the gain as a block
    ("block references unknown", lambda: gain().block(references=("zz",)), ParameterError,
     r"block: references: unknown state\(s\) \['zz'\] \(known: x, theta, der\(x\), der\(theta\)\)"),
    ("block references int", lambda: gain().block(references=3), ParameterError,
     r"block: references must be a name or a list of names, got 3"),
    ("block references twice", lambda: gain().block(references=["x", "x"]), ParameterError,
     r"block: references: 'x' given more than once"),
    ("block sample time negative", lambda: gain().block(sample_time=-1), MbsError,
     r"sample_time must be positive .* got -1"),
]



# ---------------------------------------------------------------- the closed loop of a diagram
def loop(mid=None, *, delay=False, plant_period=None):
    """ref -> err -> k [-> mid] -> plant (1/(s+1)) -> err: a small loop of the runner, with the
    block ``mid`` (a factory) between the gain and the plant."""
    from blocks import Gain, StateSpace, Step, Sum, UnitDelay
    from mbsfmu.runner import Diagram

    d = Diagram(step=0.01)
    d.add("ref", Step(0.1, 0.0, 0.5))
    d.add("err", Sum("+-"))
    d.add("k", Gain(2.0))
    d.add("plant", StateSpace(-1.0, 1.0, 1.0, 0.0, sample_time=plant_period))
    d.connect("ref.y", "err.u1")
    d.connect("plant.y", "err.u2")
    d.connect("err.y", "k.u")
    last = "k.y"
    for name, block in ((("mid", mid()),) if mid is not None else ()) + \
            ((("z", UnitDelay()),) if delay else ()):
        d.add(name, block)
        d.connect(last, f"{name}.u")
        last = f"{name}.y"
    d.connect(last, "plant.u")
    return d


def algebraic(a):
    """ref - a·v - plant.y = v: an algebraic loop through the gain a, regular unless a = -1."""
    from blocks import Gain, Step, Sum, TransferFunction
    from mbsfmu.runner import Diagram

    d = Diagram(step=0.01)
    d.add("ref", Step(0.1, 0.0, 1.0))
    d.add("err", Sum("+--"))
    d.add("g", Gain(a))
    d.add("plant", TransferFunction([1.0], [1.0, 1.0]))
    for a_, b_ in (("ref.y", "err.u1"), ("g.y", "err.u2"), ("plant.y", "err.u3"), ("err.y", "g.u"),
                   ("err.y", "plant.u")):
        d.connect(a_, b_)
    return d


def LD(*args, **kw):
    diagram = kw.pop("diagram", None) or loop()
    return lambda: mbsfmu.linearize(diagram, *args, **kw)


def _blocks():
    import blocks

    return blocks


def opaque():
    from mbsfmu.runner import SISO

    class Opaque(SISO):
        """A user's block the linearization knows nothing of."""

        type_name = "_catalogue_opaque"

        def feedthrough(self):
            return {"y": ("u",)}

        def output(self, t, u):
            return (u[0],)

    return Opaque()


@functools.cache
def cart_cs_fmu():
    import tempfile

    return mbsfmu.build_fmu(CART, tempfile.mkdtemp(prefix="catalogue_cs_"), interface="cs")


def fmu_loop(at=None):
    from blocks import FMU, Constant
    from mbsfmu.runner import Diagram

    d = Diagram(step=0.01)
    d.add("force", Constant(0.0))
    d.add("cart", FMU(cart_cs_fmu()))
    d.connect("force.y", "cart.F")
    return lambda: mbsfmu.linearize(d, at)


DIAGRAM_CASES = [
    ("diagram domain", LD(domain="z"), ParameterError,
     r"linearize: domain must be 'continuous' or 'discrete', not 'z'"),
    ("diagram pade order 0", LD(pade_order=0), ParameterError,
     r"linearize: pade_order must be a whole number 1\.\.10, not 0"),
    ("diagram pade order bool", LD(pade_order=True), ParameterError, r"pade_order .* not True"),
    ("diagram pade order float", LD(pade_order=2.5), ParameterError, r"pade_order .* not 2\.5"),
    ("diagram unknown keyword", LD(loop_a="k.u"), ParameterError,
     r"linearize: unexpected keyword\(s\) loop_a for a Diagram"),
    ("diagram model keyword", LD(inputs=["F"]), ParameterError,
     r"linearize: inputs belong to a model; a Diagram's closed loop takes at, loop_at"),
    ("model diagram keyword", L(loop_at="k.u"), ParameterError,
     r"linearize: unexpected keyword\(s\) loop_at \(loop_at, domain, plants and pade_order are "
     r"for a Diagram\)"),
    ("diagram plants not a dict", LD(plants=[1]), ParameterError,
     r"linearize: plants must be a dict of values by name, got list"),
    ("diagram plants unknown block", LD(plants={"cart": None}), ParameterError,
     r"linearize: plants names 'cart', which is no block of the diagram \(blocks: ref, err, k, plant\)"),
    ("diagram plant no model", LD(plants={"plant": 3}), MbsError,
     r"plants\['plant'\]: int is no linear model"),
    ("diagram plant ports", LD(plants={"plant": lin_numeric()}), MbsError,
     r"plants\['plant'\]: the linear model has no input 'u' for the block's port \(inputs: F\)"),
    ("diagram loop_at no dot", LD(loop_at="k"), ParameterError,
     r"linearize: loop_at must name a block input 'block\.port', not 'k'"),
    ("diagram loop_at not a string", LD(loop_at=3), ParameterError, r"loop_at must name .* not 3"),
    ("diagram loop_at an output", LD(loop_at="k.y"), ParameterError,
     r"linearize: loop_at 'k\.y' is no connected block input \(inputs: err\.u1, err\.u2, k\.u, plant\.u\)"),
    ("diagram at unknown signal", LD(at={"k.z": 1.0}), ParameterError,
     r"linearize: at names 'k\.z', which is no signal of the diagram \(signals: ref\.y, err\.y"),
    ("diagram at no dot", LD(at={"k": 1.0}), ParameterError,
     r"linearize: at key 'k' must name a signal 'block\.port'"),
    ("diagram at nan", LD(at={"k.u": float("nan")}), ParameterError, r"linearize: at 'k\.u'"),
    ("diagram at text", LD(at={"k.u": "one"}), ParameterError, r"linearize: at 'k\.u'"),
    ("diagram at list", LD(at=[1.0]), ParameterError,
     r"linearize: at must be a dict of values by name, got list"),
    ("diagram at before a step", LD(at=0.001), ParameterError,
     r"linearize: at = 0\.001 must be a time at least one step \(0\.01 s\) after t0 = 0"),
    ("diagram at inf", LD(at=float("inf")), ParameterError, r"linearize: at"),
    ("diagram delay continuous", LD(domain="continuous", diagram=loop(delay=True)), MbsError,
     r"block 'z' \(UnitDelay\) is discrete: it has no continuous form \(linearize with "
     r"domain='discrete'"),
    ("diagram multi-rate", LD(diagram=loop(plant_period=0.02)), MbsError,
     r"linearize: block 'plant' runs every 0\.02 s, the diagram every 0\.01 s: multi-rate loops "
     r"are not linearized"),
    ("diagram function with lag", LD(diagram=loop(lambda: _blocks().Function(lambda t, u: u,
                                                                             feedthrough=False))),
     MbsError, r"block 'mid' \(Function without feed-through\): a Python function delayed by one "
     r"sample has no linear form"),
    ("diagram opaque block", LD(diagram=loop(opaque)), MbsError,
     r"block 'mid' \(Opaque\) has no linear form \(give one in plants=\{'mid': \.\.\.\}"),
    ("diagram saturation at limit", LD(at={"mid.u": -1.0}, diagram=loop(
        lambda: _blocks().Saturation(-1.0, 1.0))), MbsError,
     r"block 'mid' \(Saturation\) is not differentiable at the operating point \(u = -1: slope 0 on "
     r"the left, 1 on the right\)"),
    ("diagram dead zone edge", LD(at={"mid.u": 0.2}, diagram=loop(
        lambda: _blocks().DeadZone(-0.2, 0.2))), MbsError,
     r"block 'mid' \(DeadZone\) is not differentiable at the operating point \(u = 0\.2"),
    ("diagram quantizer jump", LD(at={"mid.u": 0.25}, diagram=loop(
        lambda: _blocks().Quantizer(0.5))), MbsError,
     r"block 'mid' \(Quantizer\) is not differentiable at the operating point \(u = 0\.25"),
    ("diagram relay switching", LD(at={"mid.u": 0.5}, diagram=loop(
        lambda: _blocks().Relay(0.5, -0.5))), MbsError,
     r"block 'mid' \(Relay\) is at its switching point u = 0\.5 at the operating point"),
    ("diagram pid saturated", LD(at={"mid.y": 1.0}, diagram=loop(
        lambda: _blocks().PID(1.0, 1.0, u_min=-1.0, u_max=1.0))), MbsError,
     r"block 'mid' \(PID\): its output = 1 is at its limit \[-1, 1\] at the operating point"),
    ("diagram integrator at limit", LD(diagram=loop(
        lambda: _blocks().DiscreteIntegrator(initial=0.0, lower=0.0))), MbsError,
     r"block 'mid' \(DiscreteIntegrator\): its output = 0 is at its limit \[0, inf\]"),
    ("diagram rate limiter limiting", LD(at={"mid.u": 5.0}, diagram=loop(
        lambda: _blocks().RateLimiter(1.0))), MbsError,
     r"block 'mid' \(RateLimiter\) limits its slew at the operating point \(u = 5, y = 0\)"),
    ("diagram pid pure derivative", LD(domain="continuous", diagram=loop(
        lambda: _blocks().PID(1.0, 0.0, 0.5, tf=0.0))), MbsError,
     r"block 'mid' \(PID\): tf = 0 makes its derivative term kd·s improper"),
    ("diagram fmu without model exchange", fmu_loop(), MbsError,
     r"block 'cart' \(FMU cart_pendulum\.fmu\) has no Model Exchange interface, whose derivatives "
     r"the linearization needs: build it with interface='both', or give plants=\{'cart'"),
    ("diagram singular algebraic loop", LD(diagram=algebraic(-1.0)), MbsError,
     r"linearize: the diagram's algebraic loop through err\.y, g\.y is singular at the operating "
     r"point \(I - D W has no inverse: its loop gain is 1\)"),
    ("diagram fmu at a time", fmu_loop(at=0.5), ParameterError,
     r"linearize: at = 0\.5 \(a time\) with the FMU block 'cart': an FMU is linearized at its "
     r"initial state only"),
]

CASES = LINEARIZE_CASES + METHOD_CASES + CONTROL_CASES + DIAGRAM_CASES


@pytest.mark.parametrize("call, exc, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_named(call, exc, pattern, tmp_path):
    before = lin().K
    with pytest.raises(exc, match=pattern):
        call()
    assert lin().K == before  # the shared linearization is unchanged
    assert not list(tmp_path.glob("*.png")) + list(tmp_path.glob("*.html"))  # a refused plot writes nothing


CLI_CASES = [
    ("cli constant zero", ["--at", "x=0", "theta=0", "--set", "l=0"],
     r"mbsfmu: error: linearize: parameter 'l' = 0 is not allowed: with l = 0 the mass matrix is singular"),
    ("cli bode format", ["--at", "x=0", "theta=0", "--inputs", "F", "--bode", "{tmp}/b.xyz"],
     r"mbsfmu: error: --bode '.*b.xyz': '.xyz' is not an image format"),
    ("cli modes page in a folder not writable", ["--at", "x=0", "theta=0", "--modes", "/proc/m.html"],
     r"mbsfmu: error: --modes '/proc/m\.html': cannot write in '/proc'"),
    ("cli not an equilibrium", ["--at", "theta=1", "--equilibrium"],
     r"mbsfmu: error: linearize: the operating point \(x=0, theta=1\) is not an equilibrium"),
]


@pytest.mark.parametrize("args, pattern", cases(CLI_CASES, fast={"cli not an equilibrium"}))
def test_cli(args, pattern, tmp_path):
    """The CLI passes the same messages on, exit status 2, and checks a plot's path first."""
    import subprocess
    import sys

    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    res = subprocess.run([sys.executable, "-m", "mbsfmu", "linearize", str(CART), *args], capture_output=True,
                         text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 2, res.stderr
    assert re.search(pattern, res.stderr), res.stderr


def test_catalogue_size():
    """The count reported in issue 23's closing note, with issue 27's plot pages (7 method cases, 1
    of the CLI)."""
    assert (len(LINEARIZE_CASES), len(METHOD_CASES), len(CONTROL_CASES), len(CLI_CASES)) == (70, 61, 51, 4)
    assert len(DIAGRAM_CASES) == 36  # issue 28 item 3: linearize(diagram)
    assert len({c[0] for c in CASES}) == len(CASES)
