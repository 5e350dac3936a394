"""Sweeps of FMI 3.0 and Model Exchange FMUs (fmpy's simulate_fmu with fmi_type and solver).

References: the FMI 2.0 Co-Simulation FMU of the same model (the same engine: FMI 3.0 CS rows
equal it bit for bit) and its run at a tight tolerance (Model Exchange under CVode follows it to
1e-7 of scale; under fmpy's forward Euler, which steps once per output interval dt, the error is
first order: it halves with dt).  Two rows, half a second each."""

import numpy as np
import pytest

import mbsfmu

pytest.importorskip("fmpy")

CART = "models/cart_pendulum.py"
DESIGN = {"m": [0.1, 0.25]}
METRICS = {"x_end": "final(x)", "theta_max": "max(theta)"}
RUN = dict(t_end=0.5, metrics=METRICS, scheduler="synchronous")


@pytest.fixture(scope="module")
def fmus(built_fmu):
    return {"fmi2": built_fmu(CART), "fmi3": built_fmu(CART, fmi_version=3, interface="both")}


@pytest.fixture(scope="module")
def reference(fmus):
    """The FMI 2.0 CS rows at solver_rtol 1e-12."""
    return mbsfmu.sweep(fmus["fmi2"], DESIGN, dt=0.01, start_values={"solver_rtol": 1e-12}, **RUN)


def values(df):
    assert (df["status"] == "ok").all(), df["message"].tolist()
    return df[list(METRICS)].to_numpy()


def test_fmi3_cs_rows_are_fmi2_rows(fmus):
    rows2 = mbsfmu.sweep(fmus["fmi2"], DESIGN, dt=0.01, **RUN)
    rows3 = mbsfmu.sweep(fmus["fmi3"], DESIGN, dt=0.01, **RUN)
    assert np.array_equal(values(rows3), values(rows2))


def test_model_exchange_cvode_follows_the_cs_reference(fmus, reference):
    me = mbsfmu.sweep(fmus["fmi3"], DESIGN, dt=0.01, rtol=1e-10, fmi_type="ModelExchange", solver="CVode",
                      **RUN)
    ref = values(reference)
    assert np.max(np.abs(values(me) - ref)) <= 1e-7 * np.abs(ref).max()


def test_model_exchange_euler_is_first_order(fmus, reference):
    ref = values(reference)
    errors = []
    for dt in (0.002, 0.001):
        euler = mbsfmu.sweep(fmus["fmi3"], DESIGN, dt=dt, fmi_type="ModelExchange", solver="Euler", **RUN)
        errors.append(np.max(np.abs(values(euler) - ref)))
    assert errors[1] < 0.05 * np.abs(ref).max()
    assert 1.7 < errors[0] / errors[1] < 2.3, errors


def test_failed_fmi3_row_quotes_the_fmu(fmus):
    """An FMI 3.0 run that fails is a row whose message carries what the FMU logged (FMI 3.0's
    log goes through the run's own logMessage, not fmpy's FMI 2.0 logger proxy)."""
    df = mbsfmu.sweep(fmus["fmi3"], {"mc": [1.0, -1.0]}, t_end=0.1, dt=0.01, metrics={"x": "final(x)"},
                      scheduler="synchronous")
    assert df["status"].tolist() == ["ok", "failed"]
    assert "body 'cart': mass must be positive, got -1" in df["message"][1]
