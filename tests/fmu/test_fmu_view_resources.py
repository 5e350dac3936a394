"""A native FMU carries its model's view in resources/mbsfmu_viewer.json (issue 27 item 4): every
FMI version and interface, beside an unchanged model description (the golden descriptions are
tests/fmu/test_fmi_descriptions.py); its coordinates and constants are the FMU's variables of the
same names, the constants' values their start values."""

import pathlib
import zipfile

import pytest

from mbsfmu.animation.model_view import RESOURCE, ModelView

MODELS = pathlib.Path(__file__).resolve().parents[2] / "models"


@pytest.mark.parametrize("fmi_version, interface", [(2, "cs"), (3, "both")])
def test_native_fmu_carries_its_view_in_resources(built_fmu, fmi_version, interface):
    fmpy = pytest.importorskip("fmpy")
    from fmpy.validation import validate_fmu

    fmu = built_fmu(MODELS / "cart_pendulum.py", fmi_version=fmi_version, interface=interface)
    with zipfile.ZipFile(fmu) as z:
        view = ModelView.from_json(z.read(RESOURCE))
        assert "resources/" not in z.read("modelDescription.xml").decode()
    assert validate_fmu(str(fmu)) == []
    md = fmpy.read_model_description(str(fmu))
    variables = {v.name: v for v in md.modelVariables}
    assert view.coordinates == ["x", "theta"]
    assert all(variables[c].causality == "output" for c in view.coordinates)
    assert {k: float(variables[k].start) for k in view.constants} == view.constants
    assert view.layout.frame_names == ["ISYS", "cart", "cart_cg", "rod", "rod_cg"]
    assert view.program is not None and view.unavailable is None
