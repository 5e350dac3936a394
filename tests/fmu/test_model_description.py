"""The FMI 2.0 model description of every zoo model passes fmpy's validator."""

import pytest
from fmpy import read_model_description
from fmpy.validation import validate_model_description

from mbsfmu.codegen.fmu_variables import fmu_variables
from mbsfmu.fmu.model_description import model_description_xml
from models import andrews, cart_pendulum, double_pendulum, four_bar, slider_crank, spinning_top

MODELS = [double_pendulum, cart_pendulum, spinning_top, slider_crank, four_bar, andrews]


@pytest.mark.parametrize("mod", MODELS, ids=lambda m: m.__name__.split(".")[-1])
def test_model_description_validates(mod, tmp_path):
    s = mod.model()
    path = tmp_path / "modelDescription.xml"
    path.write_text(model_description_xml(s, s.name))
    md = read_model_description(str(path), validate=True)
    problems = validate_model_description(md, validate_variable_names=True,
                                          validate_model_structure=True)
    assert problems == []
    names = [v.name for v in md.modelVariables]
    for c in s.coordinates_:
        assert c in names and f"der({c})" in names
    assert ("constraint_residual" in names) == bool(s.loops or s.holonomic)
    for p in ("solver_rtol", "solver_atol", "max_internal_step", *s.constants_):
        v = next(v for v in md.modelVariables if v.name == p)
        assert v.causality == "parameter"
    assert [v.name for v in md.modelVariables if v.causality == "input"] == list(s.inputs)
    assert [u.variable.name for u in md.outputs][: len(s.coordinates_)] == list(s.coordinates_)


def test_loop_geometry_parameters_are_fixed_others_tunable():
    var = {v.name: v for v in fmu_variables(slider_crank.model())}
    assert var["r"].variability == "fixed" and var["l"].variability == "fixed"
    assert var["m_rod"].variability == "tunable" and var["solver_rtol"].variability == "tunable"
    assert var["x"].initial == "approx"
    tree = {v.name: v for v in fmu_variables(cart_pendulum.model())}
    assert tree["x"].initial == "exact" and tree["l"].variability == "tunable"
    assert tree["F"].causality == "input" and tree["F"].start == 0.0
