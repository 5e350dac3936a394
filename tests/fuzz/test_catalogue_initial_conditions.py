"""Catalogue of bad inputs of named initial conditions (issue 25): declaring one under a name a run
could not tell apart, and setting one per run through ``simulate(initial=...)`` on both backends,
a sweep and the CLI's ``--set``.

Each case is one bad input; the test asserts the exception type (or the CLI's exit status 2) and
that the message names the culprit by a regular expression.  What the decisions are: a rate can
be set only where the condition declares one; a condition of a model without constraints takes
no part, so setting it is refused; a coordinate given too that contradicts the condition moves
(a warning names it, tests/simulation/test_named_initial_conditions.py), and only held with
``fixed=`` it is an error naming both.  Both FMU kinds refuse a value that is not finite and a
set after fmi2ExitInitializationMode (tests/fmu/test_fmu_named_initial_conditions.py).
"""

import math
import pathlib

import pytest
from condition_models import ring

import mbsfmu
from mbsfmu import ConstraintError, ModelError, ParameterError, System
from mbsfmu.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
SLIDER = ROOT / "models" / "slider_crank.py"
BACKENDS = ["numpy", "c"]


def tree():
    """A model without constraints that declares an initial condition."""
    s = System("p")
    z, = s.coordinates("z")
    s.body("B", rel_pos=[0, 0, z], mass=1.0, inertia=[0, 0, 0])
    s.initial_condition("angle", z, 0.3)
    return s


def _later_constant():
    s = ring()
    s.constant("height", 1.0)


def _later_output():
    s = ring()
    s.output("height", "y")


MODEL_CASES = [
    ("named like a coordinate", lambda: ring().initial_condition("x", "y", 0.1), ModelError,
     r"initial condition 'x': the name 'x' is taken by coordinate 'x'; a run sets the condition's value "
     r"by its name, so choose another name"),
    ("named like a rate", lambda: ring().initial_condition("Dx", "y", 0.1), ModelError,
     r"initial condition 'Dx': the name 'Dx' is taken by rates of coordinate 'x'"),
    ("named like the residual", lambda: ring().initial_condition("constraint_residual", "y", 0.1), ModelError,
     r"initial condition 'constraint_residual': the name 'constraint_residual' is taken by an FMU "
     r"variable that the export adds itself"),
    ("named like a solver setting", lambda: ring().initial_condition("solver_rtol", "y", 0.1), ModelError,
     r"the name 'solver_rtol' is taken by an FMU variable that the export adds itself"),
    ("a constant named like it later", _later_constant, ModelError,
     r"constant 'height' and initial condition 'height' would both be the FMU variable 'height'; "
     r"rename one of them \(e\.g\. the initial condition to 'height_out'\)"),
    ("an output named like it later", _later_output, ModelError,
     r"output 'height' and initial condition 'height' would both be the FMU variable 'height'; "
     r"rename one of them \(e\.g\. the output to 'height_out'\)"),
    ("value nan", lambda: ring().initial_condition("h2", "x", math.nan), ParameterError,
     r"initial condition 'h2': nan is not finite"),
]


@pytest.mark.parametrize("make, exc, pattern", [c[1:] for c in MODEL_CASES], ids=[c[0] for c in MODEL_CASES])
def test_declaration(make, exc, pattern):
    with pytest.raises(exc, match=pattern):
        make()


KNOWN = (r"\(coordinates: x, alpha, beta; velocities: der\(x\), der\(alpha\), der\(beta\) \(or D<name>\); "
         r"named initial conditions: crank_angle, der\(crank_angle\)\)")

# (label, model, initial=, other keywords of simulate, exception, regex)
SIMULATE_CASES = [
    ("unknown name", SLIDER, {"crank": 0.5}, {}, ParameterError,
     r"initial value 'crank': not a coordinate, velocity or named initial condition of 'slider_crank' "
     + KNOWN),
    ("rate of an unknown name", SLIDER, {"Dcrank": 0.5}, {}, ParameterError,
     r"initial value 'Dcrank': not a coordinate, velocity or named initial condition"),
    ("value nan", SLIDER, {"crank_angle": math.nan}, {}, ParameterError,
     r"initial value 'crank_angle': nan is not finite"),
    ("value inf", SLIDER, {"crank_angle": math.inf}, {}, ParameterError,
     r"initial value 'crank_angle': inf is not finite"),
    ("rate -inf", SLIDER, {"der(crank_angle)": -math.inf}, {}, ParameterError,
     r"initial value 'der\(crank_angle\)': -inf is not finite"),
    ("value text", SLIDER, {"crank_angle": "half"}, {}, ParameterError,
     r"initial value 'crank_angle': 'half' is not a number"),
    ("rate under both names", SLIDER, {"der(crank_angle)": 1.0, "Dcrank_angle": 2.0}, {}, ParameterError,
     r"initial values 'der\(crank_angle\)' and 'Dcrank_angle' set the same value 'der\(crank_angle\)'; "
     r"give one of them"),
    ("rate not declared", ring, {"der(height)": 1.0}, {}, ParameterError,
     r"initial value 'der\(height\)': the initial condition 'height' of 'ring' declares no rate \(only its "
     r"value 'height' can be set; to set a rate, declare one: "
     r"initial_condition\('height', \.\.\., rate=\.\.\.\)\)"),
    ("rate not declared (D)", ring, {"Dheight": 1.0}, {}, ParameterError,
     r"initial value 'Dheight': the initial condition 'height' of 'ring' declares no rate"),
    ("condition of a tree", tree, {"angle": 0.1}, {}, ParameterError,
     r"initial value 'angle': the initial condition 'angle' of 'p' takes no part: the model has no "
     r"constraints, so its coordinates are its initial state \(set them instead\)"),
    ("initial not a dict", SLIDER, [("crank_angle", 0.5)], {}, ParameterError,
     r"initial must be a dict \{name: value\}"),
    ("value out of reach", ring, {"height": 2.0}, {}, ConstraintError,
     r"ring: no consistent initial state: '(circle|height)' stays violated by .* It cannot hold together "
     r"with: initial condition 'height' \(y = 2\)"),
    ("held coordinate contradicts it", SLIDER, {"crank_angle": 0.5, "alpha": 2.9}, {"fixed": ["alpha"]},
     ConstraintError, r"cannot hold together with: held coordinate alpha = 2\.9; initial condition "
                      r"'crank_angle' \(alpha \+ beta - 3\.14159265358979 = 0\.5\)"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("model, initial, kw, exc, pattern", [c[1:] for c in SIMULATE_CASES],
                         ids=[c[0] for c in SIMULATE_CASES])
def test_simulate(model, initial, kw, exc, pattern, backend):
    with pytest.raises(exc, match=pattern):
        mbsfmu.simulate(model() if callable(model) else model, t_end=0.1, backend=backend, initial=initial,
                        **kw)


# (label, design, fixed initial=, regex of the ParameterError)
SWEEP_CASES = [
    ("design column unknown", {"crank": [0.1]}, None,
     r"unknown parameter\(s\) 'crank' of the sweep target \(it has: .*crank_angle, .*der\(crank_angle\)"),
    ("fixed value nan", {"l": [0.5]}, {"crank_angle": math.nan},
     r"initial value 'crank_angle': nan is not finite"),
    ("fixed and a design column", {"crank_angle": [0.1]}, {"crank_angle": 0.2},
     r"'crank_angle' given both in initial= and as a design column"),
    ("rate under its other name in the design", {"der(crank_angle)": [1.0]}, {"Dcrank_angle": 2.0},
     r"'Dcrank_angle' given both in initial= and as a design column"),
]


@pytest.mark.parametrize("design, initial, pattern", [c[1:] for c in SWEEP_CASES],
                         ids=[c[0] for c in SWEEP_CASES])
def test_sweep(tmp_path, design, initial, pattern):
    with pytest.raises(ParameterError, match=pattern):
        mbsfmu.sweep(SLIDER, design, t_end=0.1, initial=initial, scheduler="synchronous",
                     out=tmp_path / "o.csv")
    assert not list(tmp_path.iterdir())  # nothing written


RING_FILE = "from condition_models import model  # noqa: F401\n"

# (label, model (None: the slider-crank), --set items, regex of the error on stderr)
CLI_CASES = [
    ("unknown name", None, ["crank=0.5"],
     r"--set crank: no constant, coordinate, named initial condition or input of that name in 'slider_crank' "
     r"\(known: r, l, m_crank, m_rod, m_slider, g, x, alpha, beta, crank_angle, der\(crank_angle\)\)"),
    ("value nan", None, ["crank_angle=nan"], r"initial value 'crank_angle': nan is not finite"),
    ("value text", None, ["crank_angle=half"], r"--set crank_angle: 'half' is not a number"),
    ("rate not declared", RING_FILE, ["der(height)=1"],
     r"initial value 'der\(height\)': the initial condition 'height' of 'ring' declares no rate"),
    ("value out of reach", RING_FILE, ["height=2"],
     r"It cannot hold together with: initial condition 'height'"),
]


@pytest.mark.parametrize("text, sets, pattern", [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
def test_cli(tmp_path, capsys, text, sets, pattern):
    model = SLIDER
    if text is not None:
        model = tmp_path / "ring.py"
        model.write_text(text)
    out = tmp_path / "o.csv"
    args = ["simulate", str(model), "--t-end", "0.1", "--out", str(out)]
    for item in sets:
        args += ["--set", item]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("mbsfmu: error: ") and "Traceback" not in err
    assert __import__("re").search(pattern, err), err
    assert not out.exists()


def test_catalogue_size():
    """The number of bad inputs catalogued here (reported in the issue note)."""
    n = len(MODEL_CASES) + 2 * len(SIMULATE_CASES) + len(SWEEP_CASES) + len(CLI_CASES)
    assert n >= 40
