"""Gradients of metrics (mbsfmu.sensitivity.gradient): the direct and the adjoint method of the
engine against each other (1e-8 relative, at rtol 1e-11), against fourth-order central
differences of plain runs at rtol 1e-12 (1e-6 relative), and against the closed form of a
linear oscillator's integral (to the tolerance); bad metrics refused before any run."""

import importlib
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from oscillator_models import oscillator

import mbsfmu
from mbsfmu.core.errors import ParameterError
from mbsfmu.sensitivity import gradient, least_squares

CASES = [  # model, formulation, method, metrics, parameters, t_end
    ("slider_crank", "qr", "explicit",
     {"x": "final(x)", "w": "final(der(alpha))", "pin": "integral(pin.y)", "R": "final(reaction.pivot.x)"},
     ["r", "l", "m_slider", "crank_angle", "der(crank_angle)"], 1.0),
    ("slider_crank", "projection", "dop853", {"x": "final(x)", "m": "mean(der(x))"}, ["r", "m_rod"], 1.0),
    ("double_pendulum", None, "explicit", None, None, 1.0),
    ("rolling_disc", None, "explicit", None, None, 0.5),
    ("slider_crank_natural", None, "explicit", None, None, 0.5),
    ("slider_crank", "baumgarte", "stiff", {"x": "final(x)", "i": "integral(alpha)"}, ["l", "m_crank"], 0.3),
]


def _defaults(s, metrics, wrt):
    coords = list(s.coordinates_)
    if metrics is None:
        metrics = {"a": f"final({coords[0]})", "b": f"integral(der({coords[-1]}))"}
    if wrt is None:
        used = []
        for c in s.constants_:
            try:
                mbsfmu.simulation.sensitivity_columns.sensitivity_columns(s, [c])
                used.append(c)
            except ParameterError:
                pass
        wrt = used[:3] + [coords[0]]
    return metrics, wrt


@pytest.mark.parametrize("name,formulation,method,metrics,wrt,t_end", CASES)
def test_forward_and_adjoint_agree(name, formulation, method, metrics, wrt, t_end):
    s = importlib.import_module(f"models.{name}").model()
    metrics, wrt = _defaults(s, metrics, wrt)
    kw = dict(formulation=formulation, method=method, rtol=1e-11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fwd = gradient(s, metrics, wrt, t_end, mode="forward", **kw)
        adj = gradient(s, metrics, wrt, t_end, mode="adjoint", **kw)
    assert fwd.mode == "forward" and adj.mode == "adjoint"
    for m in fwd.values:
        assert adj.values[m] == pytest.approx(fwd.values[m], rel=1e-8, abs=1e-10)
    a, f = adj.gradient.to_numpy(), fwd.gradient.to_numpy()
    scale = np.abs(f).max(axis=1, keepdims=True)
    assert np.abs(a - f).max() <= 1e-8 * max(scale.max(), 1.0), np.abs(a - f) / np.maximum(scale, 1e-300)


def _value(s, metric, t_end, kw, **change):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gradient(s, {"m": metric}, [next(iter(s.constants_))], t_end, mode="forward",
                        rtol=1e-12, **kw, **change).values["m"]


def test_gradients_match_central_differences_of_plain_runs():
    """final(x) from simulate's plain runs; integral(pin.y) from the runs' own quadrature (an
    integral of the solution, not a sensitivity) -- the derivatives by the parameters are
    fourth-order differences of those values."""
    from models.slider_crank import model

    s = model()
    metrics = {"x": "final(x)", "pin": "integral(pin.y)"}
    wrt = ["l", "m_slider", "crank_angle"]
    adj = gradient(s, metrics, wrt, 0.8, mode="adjoint", rtol=1e-11)
    for p in wrt:
        base = s.constants_[p].value if p in s.constants_ else s.initial_conditions[0].value
        key = "params" if p in s.constants_ else "initial"
        h = 2e-4 * abs(base)
        for name, spec in metrics.items():
            v = [_value(s, spec, 0.8, {}, **{key: {p: base + k * h}}) for k in (2, 1, -1, -2)]
            fd = (-v[0] + 8 * v[1] - 8 * v[2] + v[3]) / (12 * h)
            assert adj.gradient.loc[name, p] == pytest.approx(fd, rel=1e-6, abs=1e-9), (name, p)


def test_linear_oscillator_integral_matches_the_closed_form():
    """int_0^T x dt = x0 sin(wT)/w + v0 (1 - cos wT)/w^2 with w = sqrt(k/m); its derivatives by
    x0, v0 and k (through w)."""
    s = oscillator()
    x0, v0, m, k, T = 0.3, 0.5, 2.0, 8.0, 1.7
    w = math.sqrt(k / m)

    def integral(x0, v0, w):
        return x0 * math.sin(w * T) / w + v0 * (1 - math.cos(w * T)) / w ** 2

    dw = 1e-6
    d_dw = (integral(x0, v0, w + dw) - integral(x0, v0, w - dw)) / (2 * dw)
    expected = {"x": math.sin(w * T) / w, "der(x)": (1 - math.cos(w * T)) / w ** 2, "k": d_dw / (2 * m * w)}
    for mode in ("forward", "adjoint"):
        g = gradient(s, {"I": "integral(x)"}, list(expected), T, mode=mode, rtol=1e-11,
                     initial={"x": x0, "Dx": v0})
        assert g.values["I"] == pytest.approx(integral(x0, v0, w), rel=1e-9)
        for p, ref in expected.items():
            assert g.gradient.loc["I", p] == pytest.approx(ref, rel=1e-7, abs=1e-10), (mode, p)


def test_auto_picks_the_adjoint_method_for_many_parameters_and_few_metrics():
    from models.slider_crank import model

    s = model()
    many = gradient(s, ["final(x)"], ["r", "l", "m_crank", "m_rod", "m_slider"], 0.2)
    few = gradient(s, ["final(x)", "final(alpha)", "final(beta)"], ["r"], 0.2)
    assert many.mode == "adjoint" and few.mode == "forward"
    assert list(many.gradient.index) == ["final(x)"]
    assert "gradient by the adjoint method" in str(many)






def _measured(s, t, **change):
    ref = mbsfmu.simulate(s, times=np.concatenate(([0.0], t)), rtol=1e-12, **change)
    rng = np.random.default_rng(7)
    return pd.DataFrame({"time": t, "x": ref["x"][1:] + 1e-3 * rng.standard_normal(len(t)),
                         "pin.y": ref["pin.y"][1:]})


def test_least_squares_metric_forward_adjoint_and_central_differences():
    """sum_k sum_S w_S (S(t_k) - d_k)^2 to data made at another rod length: the adjoint (with its
    jumps at the data times) equals the direct method, and both equal fourth-order differences of
    the metric's value (from plain runs at rtol 1e-12 on the data times)."""
    from models.slider_crank import model

    s = model()
    t = np.linspace(0.05, 0.8, 16)
    data = _measured(s, t, params={"l": 0.52})
    metric = {"fit": least_squares(data, ["x", "pin.y"], {"x": 2.0})}
    wrt = ["l", "m_slider", "crank_angle"]
    fwd = gradient(s, metric, wrt, 0.8, mode="forward", rtol=1e-11)
    adj = gradient(s, metric, wrt, 0.8, mode="adjoint", rtol=1e-11)
    assert adj.values["fit"] == pytest.approx(fwd.values["fit"], rel=1e-8)
    np.testing.assert_allclose(adj.gradient.to_numpy(), fwd.gradient.to_numpy(), rtol=1e-8, atol=1e-12)

    def value(**change):
        run = mbsfmu.simulate(s, times=np.concatenate(([0.0], t)), rtol=1e-12, **change)
        return 2.0 * np.sum((run["x"][1:] - data["x"]) ** 2) + np.sum((run["pin.y"][1:] - data["pin.y"]) ** 2)

    assert fwd.values["fit"] == pytest.approx(value(), rel=1e-7)
    for p, key, base in (("l", "params", 0.5), ("crank_angle", "initial", s.initial_conditions[0].value)):
        h = 2e-4 * base
        v = [value(**{key: {p: base + k * h}}) for k in (2, 1, -1, -2)]
        fd = (-v[0] + 8 * v[1] - 8 * v[2] + v[3]) / (12 * h)
        assert adj.gradient.loc["fit", p] == pytest.approx(fd, rel=1e-5), p






@pytest.mark.slow
def test_stiff_model_forward_and_adjoint_agree():
    """The flexible double pendulum (stiff: its elastic modes) on the stiff method: the adjoint's
    trajectory is Radau's collocation polynomial (order 3 between the step ends), so the two
    methods meet at 1e-8 from rtol 1e-12 on."""
    s = importlib.import_module("models.flexible_double_pendulum").model()
    coords = list(s.coordinates_)
    metrics = {"a": f"final({coords[0]})", "b": f"integral(der({coords[-1]}))"}
    wrt = ["stiffness", "g", coords[0]]
    fwd = gradient(s, metrics, wrt, 0.05, mode="forward", method="stiff", rtol=1e-12)
    adj = gradient(s, metrics, wrt, 0.05, mode="adjoint", method="stiff", rtol=1e-12)
    a, f = adj.gradient.to_numpy(), fwd.gradient.to_numpy()
    scale = np.abs(f).max(axis=1, keepdims=True)
    assert np.all(np.abs(a - f) <= 1e-8 * scale), np.abs(a - f) / scale


def test_metrics_of_expressions_match_quadrature_of_the_closed_form():
    """integral(x**2) and final(der(x)*x) of the oscillator (expressions: the run's model gets them
    as outputs of a copy) against scipy's quadrature of the closed-form solution and of its
    derivative by x0; the user's model keeps its outputs."""
    from scipy.integrate import quad

    s = oscillator()
    before = list(s.outputs)
    x0, v0, w, T = 0.3, 0.5, 2.0, 1.3

    def x(t, x0=x0):
        return x0 * math.cos(w * t) + v0 / w * math.sin(w * t)

    def xd(t, x0=x0):
        return -x0 * w * math.sin(w * t) + v0 * math.cos(w * t)

    metrics = {"I": "integral(x**2)", "F": "final(der(x)*x)", "E": "integral(k*x**2/2)",
               "O": "integral(energy_spring)"}
    for mode in ("forward", "adjoint"):
        g = gradient(s, metrics, ["x"], T, mode=mode, rtol=1e-11, initial={"x": x0, "Dx": v0})
        assert g.values["I"] == pytest.approx(quad(lambda t: x(t) ** 2, 0, T, epsabs=1e-14)[0], rel=1e-9)
        d_i = quad(lambda t: 2 * x(t) * math.cos(w * t), 0, T, epsabs=1e-14)[0]
        assert g.gradient.loc["I", "x"] == pytest.approx(d_i, rel=1e-8), mode
        assert g.values["F"] == pytest.approx(xd(T) * x(T), rel=1e-9)
        d_f = -w * math.sin(w * T) * x(T) + xd(T) * math.cos(w * T)
        assert g.gradient.loc["F", "x"] == pytest.approx(d_f, rel=1e-8), mode
        assert g.values["E"] == pytest.approx(g.values["O"], rel=1e-12)
        assert g.gradient.loc["E", "x"] == pytest.approx(g.gradient.loc["O", "x"], rel=1e-10)
    assert list(s.outputs) == before
