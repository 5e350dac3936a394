"""mbsfmu.fit against independent references:

* a model linear in its fitted parameters (a linear oscillator's initial position and rate):
  the estimates, standard errors and correlation are those of ordinary least squares in closed
  form, p = (A^T A)^-1 A^T d and Cov = s^2 (A^T A)^-1 (to the integrator's tolerance);
* synthetic data of the slider-crank made at known l and m_slider with Gaussian noise of known
  sigma and a fixed seed: the estimates within 2 standard errors of the true values, the noise
  estimate s within 20 % of sigma, the standard errors unchanged by a common factor of the
  weights;
* noise-free data: the true values recovered to 1e-8 relative, also of a named initial
  condition and through a reaction signal;
* a pair the signal cannot tell apart (k and m of an oscillator observed through x, which
  depends on k / m only) named with its null direction dk : dm = k : m.
"""

import json
import math
import pathlib

import numpy as np
import pandas as pd
import pytest
from oscillator_models import oscillator

import mbsfmu
from mbsfmu.cli import main
from mbsfmu.core.errors import IdentifiabilityError

ROOT = pathlib.Path(__file__).resolve().parents[2]
SLIDER_CRANK = ROOT / "models" / "slider_crank.py"
K, M = 8.0, 2.0
W = math.sqrt(K / M)




def slider_crank_data(times, sigma, seed, signals=("x",), **truth):
    """The slider-crank's signals at ``times`` (rtol 1e-12) with N(0, sigma^2) noise."""
    res = mbsfmu.simulate(
        mbsfmu.load_model(SLIDER_CRANK),
        times=np.r_[0.0, times],
        rtol=1e-12,
        params={k: v for k, v in truth.items() if k in ("l", "m_slider", "r")},
        initial={k: v for k, v in truth.items() if k not in ("l", "m_slider", "r")},
    )
    rng = np.random.default_rng(seed)
    from mbsfmu.simulation.result import signal_values

    return pd.DataFrame(
        {
            "time": times,
            **{s: signal_values(res, s)[1:] + sigma * rng.standard_normal(len(times)) for s in signals},
        }
    )


def test_linear_in_the_parameters_equals_ordinary_least_squares():
    t = np.linspace(0.05, 3.0, 60)
    x0, v0, sigma = 0.3, 0.5, 0.01
    A = np.column_stack((np.cos(W * t), np.sin(W * t) / W))  # x(t) = A [x0, v0]
    d = A @ [x0, v0] + sigma * np.random.default_rng(7).standard_normal(len(t))
    res = mbsfmu.fit(
        oscillator(), pd.DataFrame({"time": t, "x": d}), {"x": (-1, 1), "der(x)": (-2, 2)}, ["x"], rtol=1e-11
    )
    p_ols, ssr, *_ = np.linalg.lstsq(A, d, rcond=None)
    cov = ssr[0] / (len(t) - 2) * np.linalg.inv(A.T @ A)
    se = np.sqrt(np.diag(cov))
    np.testing.assert_allclose(res.estimates, p_ols, rtol=1e-8)
    np.testing.assert_allclose(res.ssr, ssr[0], rtol=1e-6)
    np.testing.assert_allclose(res.standard_errors.to_numpy(), se, rtol=1e-6)
    np.testing.assert_allclose(res.correlation.to_numpy()[0, 1], cov[0, 1] / (se[0] * se[1]), rtol=1e-6)
    np.testing.assert_allclose(res.residuals["x"].to_numpy(), d - A @ p_ols, atol=1e-9)
    # the noise: s estimates sigma, and the standard errors are those of the known sigma
    assert abs(math.sqrt(res.s2) / sigma - 1) < 0.2
    np.testing.assert_allclose(se, sigma * np.sqrt(np.diag(np.linalg.inv(A.T @ A))), rtol=0.2)


def test_slider_crank_noisy_data_recovered_within_two_standard_errors():
    truth, sigma = {"l": 0.5, "m_slider": 1.0}, 1e-3
    t = np.linspace(0.02, 2.0, 100)
    data = slider_crank_data(t, sigma, seed=3, **truth)
    res = mbsfmu.fit(
        SLIDER_CRANK,
        data,
        {"l": (0.4, 0.7), "m_slider": (0.5, 2.0)},
        ["x"],
        start={"l": 0.6, "m_slider": 1.5},
    )
    se = res.standard_errors
    for name, value in truth.items():
        assert abs(res.values[name] - value) < 2 * se[name], (name, res.values[name], se[name])
    assert abs(math.sqrt(res.s2) / sigma - 1) < 0.2
    assert res.success and res.evaluations == len(res.history) < 20
    last = res.history.iloc[-1]
    assert [last["l"], last["m_slider"]] == pytest.approx(res.estimates, rel=1e-12)
    # weights 1 / sigma^2: s ~ 1; a common factor of the weights changes neither the estimates
    # nor their standard errors
    weighted = mbsfmu.fit(
        SLIDER_CRANK,
        data,
        {"l": (0.4, 0.7), "m_slider": (0.5, 2.0)},
        ["x"],
        weights={"x": 1 / sigma**2},
        start={"l": 0.6, "m_slider": 1.5},
    )
    assert abs(math.sqrt(weighted.s2) - 1) < 0.2
    np.testing.assert_allclose(weighted.estimates, res.estimates, rtol=1e-7)
    np.testing.assert_allclose(weighted.standard_errors, se, rtol=1e-5)


def test_standard_errors_agree_with_the_scatter_of_the_estimates_over_noisy_data_sets():
    """40 data sets of the same slider-crank run with independent noise (seeds 0..39): the
    standard deviation of the estimates is the reported standard error (to the 25 % that 40
    samples resolve), and about 95 % of the estimates lie within 2 standard errors."""
    t = np.linspace(0.02, 1.5, 60)
    exact = slider_crank_data(t, 0.0, seed=0, l=0.5, m_slider=1.0)["x"].to_numpy()
    model = mbsfmu.load_model(SLIDER_CRANK)
    estimates, errors = [], []
    for seed in range(40):
        d = exact + 1e-3 * np.random.default_rng(seed).standard_normal(len(t))
        res = mbsfmu.fit(
            model,
            pd.DataFrame({"time": t, "x": d}),
            {"l": (0.4, 0.7), "m_slider": (0.5, 2.0)},
            ["x"],
            start={"l": 0.6},
        )
        estimates.append(res.estimates)
        errors.append(res.standard_errors.to_numpy())
    estimates, errors = np.array(estimates), np.array(errors)
    np.testing.assert_allclose(estimates.std(axis=0, ddof=1), errors.mean(axis=0), rtol=0.25)
    assert np.all((np.abs(estimates - [0.5, 1.0]) < 2 * errors).mean(axis=0) >= 0.85)


def test_noise_free_data_recovered_to_1e_8():
    truth = {"l": 0.52, "m_slider": 1.3, "crank_angle": 0.9}
    t = np.linspace(0.05, 1.5, 40)
    data = slider_crank_data(t, 0.0, seed=0, signals=("x", "reaction.pivot.x"), **truth)
    res = mbsfmu.fit(
        SLIDER_CRANK,
        data,
        {"l": (0.4, 0.7), "m_slider": (0.5, 2.0), "crank_angle": (0.5, 1.2)},
        ["x", "reaction.pivot.x"],
        rtol=1e-12,
    )
    for name, value in truth.items():
        assert res.values[name] == pytest.approx(value, rel=1e-8), name
    assert res.cost < 1e-18


def test_start_defaults_to_the_models_value_else_the_middle():
    t = np.linspace(0.1, 2.0, 20)
    data = pd.DataFrame({"time": t, "x": 0.3 * np.cos(W * t)})
    res = mbsfmu.fit(oscillator(), data, {"k": (5.0, 10.0), "x": (0.35, 0.5)}, ["x"], max_evaluations=1)
    assert res.start.tolist() == [K, 0.425]
    assert "max_evaluations" in str(res)


def test_a_pair_the_signal_cannot_tell_apart_is_named_with_its_direction():
    t = np.linspace(0.1, 3.0, 30)
    data = pd.DataFrame({"time": t, "x": 0.3 * np.cos(W * t)})
    with pytest.raises(IdentifiabilityError) as err:
        mbsfmu.fit(oscillator(), data, {"k": (5, 10), "m": (1, 3)}, ["x"])
    # x depends on k / m only: d(k/m) = 0 along dk : dm = k : m = 1 : 0.25
    assert "the parameters 'k', 'm' cannot be told apart from these signals" in str(err.value)
    assert "dk : dm = +1 : +0.25 " in str(err.value)


def test_explicit_output_times_on_both_backends_match_the_closed_form():
    times = np.array([0.0, 0.013, 0.4, 0.41, 1.7, 2.5])
    for backend in ("c", "numpy"):
        res = mbsfmu.simulate(oscillator(), times=times, rtol=1e-11, backend=backend)
        assert res.t.tolist() == times.tolist()
        np.testing.assert_allclose(res["x"], 0.3 * np.cos(W * times), atol=1e-9, err_msg=backend)


def test_plot_and_table(tmp_path):
    t = np.linspace(0.05, 2.0, 30)
    d = 0.3 * np.cos(W * t) + 0.01 * np.random.default_rng(1).standard_normal(len(t))
    res = mbsfmu.fit(oscillator(), pd.DataFrame({"time": t, "x": d}), {"x": (0, 1), "k": (5, 10)}, ["x"])
    assert (
        res.plot(tmp_path / "fit.png") == str(tmp_path / "fit.png") and (tmp_path / "fit.png").stat().st_size
    )
    text = str(res)
    assert "std error" in text and "correlation:" in text and f"{res.evaluations} evaluations" in text
    table = res.table()
    assert table.loc["k", "std error"] == pytest.approx(res.standard_errors["k"])


def test_cli_fit_prints_the_estimates(tmp_path, capsys):
    truth = {"l": 0.5, "m_slider": 1.0}
    data = tmp_path / "measured.csv"
    slider_crank_data(np.linspace(0.02, 1.5, 60), 1e-3, seed=5, **truth).to_csv(data, index=False)
    args = [
        "fit",
        str(SLIDER_CRANK),
        str(data),
        "--param",
        "l=0.4:0.7",
        "--param",
        "m_slider=0.5:2",
        "--signal",
        "x",
        "--start",
        "l=0.6",
        "--weight",
        "x=1e6",
    ]
    assert main([*args, "--json", "--plot", str(tmp_path / "fit.png")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (tmp_path / "fit.png").exists()
    api = mbsfmu.fit(
        SLIDER_CRANK,
        data,
        {"l": (0.4, 0.7), "m_slider": (0.5, 2)},
        ["x"],
        start={"l": 0.6},
        weights={"x": 1e6},
    )
    assert out["estimates"] == api.values and out["standard_errors"] == api.standard_errors.to_dict()
    assert out["weights"] == {"x": 1e6} and out["data"] == str(data) and out["evaluations"] == api.evaluations
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "estimate" in text and "m_slider" in text
