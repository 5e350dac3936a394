"""An FMU built from a model carries its view in resources/mbsfmu_viewer.json (issue 27 item 4):
a native FMU of every FMI version and interface, beside an unchanged model description (the
golden descriptions are tests/fmu/test_fmi_descriptions.py), and a pythonfmu FMU the same file;
its coordinates and constants are the FMU's variables of the same names, the constants' values
their start values."""

import json
import pathlib
import zipfile

import numpy as np
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


@pytest.mark.parametrize("name", ["slider_crank", "flexible_double_pendulum"])
def test_pythonfmu_carries_the_native_view(built_fmu, name):
    """The pythonfmu kind carries the same resources/mbsfmu_viewer.json as the native kind (layout,
    names, values; the pose programs compute the same poses), fmpy's validator still reports
    nothing, and the poses it computes equal the model's pose function (NumericModel.pose_series)
    at simulated coordinates, every constant changed by 10 %; the flexible model's view names its
    elastic coordinates (what deformation_scale scales)."""
    pytest.importorskip("pythonfmu")
    fmpy = pytest.importorskip("fmpy")
    from fmpy.validation import validate_fmu

    import mbsfmu
    from mbsfmu.animation.model_view import read_view
    from mbsfmu.model.loader import load_model

    fmu = built_fmu(MODELS / f"{name}.py", kind="pythonfmu")
    with zipfile.ZipFile(fmu) as z, zipfile.ZipFile(built_fmu(MODELS / f"{name}.py")) as native:
        mine, theirs = (json.loads(f.read(RESOURCE)) for f in (z, native))
    assert mine.pop("program")["outputs"] and theirs.pop("program")["outputs"]
    assert mine == theirs  # the programs may order a sum's terms differently (sympy): poses below
    assert validate_fmu(str(fmu)) == []
    view = read_view(fmu)
    system = load_model(MODELS / f"{name}.py")
    variables = {v.name for v in fmpy.read_model_description(str(fmu)).modelVariables}
    assert set(view.coordinates) | set(view.constants) <= variables
    assert view.elastic == [c for b in getattr(system, "flexible_bodies", {}).values() for c in b.coordinates]
    assert bool(view.elastic) == (name == "flexible_double_pendulum")
    res = mbsfmu.simulate(system, t_end=0.5, dt=0.05)
    changed = {c.name: 1.1 * c.value for c in system.constants_.values()}
    num = mbsfmu.derive(system).numeric()
    num.set_params(changed, check=False)
    want_r, want_S = num.pose_series(view.layout.frame_names, res.t, res.y)
    r, S = view.poses(res.t, res.y, changed)
    assert np.max(np.abs(r - want_r)) <= 1e-12 * max(1.0, float(np.max(np.abs(want_r))))
    assert np.max(np.abs(S - want_S)) <= 1e-12
    assert np.ptp(r) > 0.1  # the model moved
