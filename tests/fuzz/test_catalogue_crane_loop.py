"""Catalogue of bad inputs of the crane example (models/trolley_crane.py, examples/crane_loop.py):
the model's parameters given to ``simulate``, and the loop's rope length, load and initial angle
given to the factory ``crane_loop`` (checked by the FMU block when built, or by the FMU when the
run starts), and its linearization.  Each case asserts the exception type and that the message
names the parameter and its value (or what is wrong), by a regular expression; a refused
``crane_loop`` leaves the nominal design untouched."""

import math

import numpy as np
import pytest

import mbsfmu
from examples import crane_loop as example
from mbsfmu.core.errors import ParameterError
from mbsfmu.runner import BlockError, BlockRunError

MODEL = "models/trolley_crane.py"

#: (label, call, exception, pattern)
CASES = [
    ("negative rope length to simulate", lambda: mbsfmu.simulate(MODEL, 0.1, params={"rope_length": -1.0}),
     ParameterError, r"parameter 'rope_length' = -1\.0 is below its minimum 0\.0"),
    ("negative friction to simulate", lambda: mbsfmu.simulate(MODEL, 0.1, params={"rail_friction": -1.0}),
     ParameterError, r"parameter 'rail_friction' = -1\.0 is below its minimum 0\.0"),
    ("misspelt parameter", lambda: mbsfmu.simulate(MODEL, 0.1, params={"rope_lenght": 1.0}),
     ParameterError, r"unknown parameter\(s\) \['rope_lenght'\] for 'trolley_crane' \(constants: "
                     r"trolley_mass, load_mass, rope_length, g, rail_friction\)"),
    ("negative rope length to the loop", lambda: example.crane_loop(-1.0),
     BlockError, r"parameter 'rope_length' of trolley_crane\.fmu = -1\.0 is outside its declared range "
                 r"\[0\.0, inf\]"),
    ("rope length as text", lambda: example.crane_loop("2"),
     BlockError, r"'rope_length' is a Real variable; got '2' of type str"),
    ("zero rope length", lambda: example.crane_loop(0.0).run(0.1),
     BlockRunError, r"(?s)crane at t=0: start\(\) failed: .*parameter 'rope_length' = 0 is not allowed: with "
                    r"rope_length = 0 the mass matrix is singular \(coordinate 'theta' would move no mass\)"),
    ("rope length nan", lambda: example.crane_loop(math.nan).run(0.1),
     BlockRunError, r"(?s)crane at t=0: .*value nan for variable 'rope_length' is not finite"),
    ("zero load", lambda: example.crane_loop(2.0, 0.0).run(0.1),
     BlockRunError, r"(?s)crane at t=0: .*body 'load': mass must be positive, got 0 \(load_mass = 0\)"),
    ("infinite load", lambda: example.crane_loop(2.0, math.inf).run(0.1),
     BlockRunError, r"(?s)crane at t=0: .*value inf for variable 'load_mass' is not finite"),
    ("initial angle nan", lambda: example.crane_loop(2.0, theta0=math.nan).run(0.1),
     BlockRunError, r"(?s)crane at t=0: .*fmi2SetReal of 'theta' = nan"),
    ("misspelt domain", lambda: mbsfmu.linearize(example.crane_loop(2.0), domain="discret"),
     ParameterError, r"linearize: domain must be 'continuous' or 'discrete', not 'discret'"),
    ("linearized at a time", lambda: mbsfmu.linearize(example.crane_loop(2.0), at=1.5),
     ParameterError, r"at = 1\.5 \(a time\) with the FMU block 'crane': an FMU is linearized at its initial "
                     r"state only"),
]


@pytest.mark.parametrize("call, exc, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_inputs(call, exc, pattern):
    K = example.design().K.copy()
    with pytest.raises(exc, match=pattern):
        call()
    np.testing.assert_array_equal(example.design().K, K)


def test_catalogue_size():
    """The number of bad inputs catalogued here (reported in the issue note)."""
    assert len(CASES) == 12
