"""The four native FMU kinds built and run (issue 26): FMI 2.0 / 3.0 x Co-Simulation / Model
Exchange, and one FMU with both interfaces; fmpy validates each FMU and simulates it.

* FMI 3.0 Co-Simulation gives the outputs of FMI 2.0 Co-Simulation bit for bit (the same
  engine, the same communication grid and tolerances);
* Model Exchange under fmpy's CVode (rtol 1e-10) follows the Co-Simulation run to 1e-6 of the
  coordinates' scale, and the constraint residual of a model with loops stays below 1e-8 (the
  FMU projects the state through a step event when the drift passes constraint_tolerance).
  (At rtol 1e-8 the tree meets 1e-6 of scale too, the slider-crank is 1.5e-6 of scale off.)
  Under fmpy's explicit Euler the error falls tenfold with the step (first order), and the
  residual of the slider-crank stays below 1e-6 at step 1e-4;
* an FMU with both interfaces runs either.
"""

import numpy as np
import pytest
from fmpy import read_model_description, simulate_fmu
from fmpy.validation import validate_fmu
from fmu_support import MODELS

#: a tree with an input and user outputs, a model with loops
MODELS_RUN = {"cart_pendulum": ["x", "theta", "der(x)", "drive_power"],
              "slider_crank": ["x", "alpha", "der(alpha)", "constraint_residual"]}
STOP, GRID = 1.0, 0.01
pytestmark = pytest.mark.slow  # each test builds an FMU of its own


def run(fmu, interface, **kw):
    outputs = MODELS_RUN[read_model_description(str(fmu)).modelName]
    fmi_type = {"cs": "CoSimulation", "me": "ModelExchange"}[interface]
    return simulate_fmu(str(fmu), fmi_type=fmi_type, stop_time=STOP, output_interval=GRID,
                        output=outputs, **kw)


def coordinates(result, model, every=1):
    """The first three outputs on the communication grid (every ``every``-th output point):
    where fmpy recorded an event (the projection of a model with loops) it has two rows at one
    time, the later one after it."""
    t = result["time"]
    after = np.append(t[1:] != t[:-1], True)
    grid = np.flatnonzero(after)[::every]
    np.testing.assert_allclose(t[grid], np.linspace(0.0, STOP, round(STOP / GRID) + 1), atol=1e-9)
    return np.column_stack([result[n][grid] for n in MODELS_RUN[model][:3]])


@pytest.fixture(scope="module")
def cs2(built_fmu):
    return {m: run(built_fmu(MODELS / f"{m}.py"), "cs") for m in MODELS_RUN}


@pytest.mark.parametrize("fmi_version, interface",
                         [(3, "cs"), (2, "me"), (3, "me"), (2, "both"), (3, "both")])
@pytest.mark.parametrize("model", MODELS_RUN)
def test_fmu_validates_and_runs(built_fmu, cs2, model, fmi_version, interface):
    fmu = built_fmu(MODELS / f"{model}.py", fmi_version=fmi_version, interface=interface)
    assert validate_fmu(str(fmu)) == []
    reference = cs2[model]
    if interface in ("cs", "both"):
        r = run(fmu, "cs")
        for name in MODELS_RUN[model]:
            np.testing.assert_array_equal(r[name], reference[name])  # bit for bit
    if interface in ("me", "both"):
        r = run(fmu, "me", relative_tolerance=1e-10)
        scale = np.abs(coordinates(reference, model)).max()
        assert np.abs(coordinates(r, model) - coordinates(reference, model)).max() < 1e-6 * scale
        if model == "slider_crank":
            assert r["constraint_residual"].max() < 1e-8


@pytest.mark.parametrize("model", MODELS_RUN)
def test_model_exchange_under_euler(built_fmu, cs2, model):
    """fmpy's Euler takes one step per output interval: steps 1e-3 and 1e-4, compared on the
    grid with the Co-Simulation run (whose own error, 1e-7, is far below Euler's)."""
    fmu = built_fmu(MODELS / f"{model}.py", fmi_version=3, interface="me")
    reference = coordinates(cs2[model], model)
    errors = []
    for h in (1e-3, 1e-4):
        r = simulate_fmu(str(fmu), fmi_type="ModelExchange", solver="Euler", step_size=h, output_interval=h,
                         stop_time=STOP, output=MODELS_RUN[model])
        on_grid = coordinates(r, model, every=round(GRID / h))
        errors.append(np.abs(on_grid - reference).max())
        if model == "slider_crank" and h == 1e-4:
            assert r["constraint_residual"].max() < 1e-6
    assert 5 < errors[0] / errors[1] < 20  # first order
    assert errors[1] < 1e-2 * np.abs(reference).max()


def test_fmi3_time_is_readable(built_fmu, tmp_path):
    """FMI 3.0's independent variable ``time`` (value reference nvars+2+f) reads the FMU's time."""
    from fmpy import extract
    from fmpy.fmi3 import FMU3Slave

    fmu = built_fmu(MODELS / "cart_pendulum.py", fmi_version=3, interface="cs")
    md = read_model_description(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    slave = FMU3Slave(guid=md.guid, unzipDirectory=extract(str(fmu), str(tmp_path)),
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="t")
    slave.instantiate()
    try:
        slave.enterInitializationMode(startTime=0.0)
        slave.exitInitializationMode()
        slave.doStep(0.0, 0.25)
        assert slave.getFloat64([vr["time"]]) == [0.25]
    finally:
        slave.terminate()
        slave.freeInstance()
