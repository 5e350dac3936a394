"""The step-response metrics of a sweep (settling, overshoot, rise, peak, IAE/ISE/ITAE) against the
closed form of a second-order step response, and their verdicts 'not settled' and 'diverged'
(issue 28 item 2).

y(t) = 1 - exp(-z w t) (cos(wd t) + z / sqrt(1 - z^2) sin(wd t)), wd = w sqrt(1 - z^2), the
response of y'' + 2 z w y' + w^2 y = w^2 to a unit step from rest: overshoot
exp(-pi z / sqrt(1 - z^2)) at the peak time pi / wd; the settling and rise times are the roots
of the closed form found by brentq, the error integrals scipy.integrate.quad of it.
"""

import math

import numpy as np
import pytest
from scipy import integrate, optimize

import mbsfmu
from mbsfmu import SimulationError, System
from mbsfmu.study import batch, metrics, step_response
from mbsfmu.study.results import read_rows

Z, W = 0.3, 2.0
WD = W * math.sqrt(1 - Z * Z)
T_END, DT = 20.0, 1e-4


def y(t):
    t = np.asarray(t, dtype=float)
    return 1 - np.exp(-Z * W * t) * (np.cos(WD * t) + Z / math.sqrt(1 - Z * Z) * np.sin(WD * t))


def delayed(t, t0):
    """The response to a unit step at t0 (0 before it)."""
    t = np.asarray(t, dtype=float)
    return np.where(t > t0, y(np.maximum(t - t0, 0.0)), 0.0)


@pytest.fixture(scope="module")
def run():
    t = np.linspace(0.0, T_END, int(round(T_END / DT)) + 1)
    return {"time": t, "y": y(t), "r": np.ones_like(t)}


def value(spec, result):
    return metrics.Metric("m", spec).evaluate(result)


def last_band_exit(band=0.02, final=1.0, end=T_END):
    """The last time before ``end`` at which |y - final| = band * final: the last sign change on a
    fine scan, then brentq on the closed form."""
    g = lambda t: abs(float(y(t)) - final) - band * final  # noqa: E731
    ts = np.linspace(0.0, end, 400001)
    s = np.abs(y(ts) - final) - band * final
    k = np.nonzero(np.sign(s[:-1]) != np.sign(s[1:]))[0][-1]
    return optimize.brentq(g, ts[k], ts[k + 1], xtol=1e-14)


def first_crossing(level):
    return optimize.brentq(lambda t: float(y(t)) - level, 0.0, math.pi / WD, xtol=1e-14)


def test_overshoot_and_peak_equal_the_closed_form(run):
    mp = math.exp(-math.pi * Z / math.sqrt(1 - Z * Z))
    # the sampled peak misses the true one by at most (DT/2)^2 |y''| / 2 ~ 1e-8
    assert value("overshoot(y, reference=1)", run).value == pytest.approx(100 * mp, abs=1e-6)
    yf = float(y(T_END))  # without a reference the target is the last sample, 1 - 6e-6 here
    assert value("overshoot(y)", run).value == pytest.approx(100 * (1 + mp - yf) / yf, abs=1e-6)
    assert value("peak(y, reference=1)", run).value == pytest.approx(1 + mp, abs=1e-8)
    assert abs(value("peak_time(y, reference=1)", run).value - math.pi / WD) <= DT


def test_settling_time_is_the_last_exit_from_the_band(run):
    for band, spec in ((0.02, "settling(y, reference=1)"), (0.05, "settling(y, 5%, reference=1)")):
        got = value(spec, run)
        assert got.status == "ok"
        # linear interpolation inside one output interval: well below DT
        assert got.value == pytest.approx(last_band_exit(band), abs=1e-6)
    # without a reference the target is the last sample y(T_END)
    assert value("settling(y)", run).value == pytest.approx(last_band_exit(final=float(y(T_END))), abs=1e-6)


def test_rise_time_between_the_solved_crossings(run):
    t10, t90 = first_crossing(0.1), first_crossing(0.9)
    assert value("rise(y, reference=1)", run).value == pytest.approx(t90 - t10, abs=1e-8)
    t5, t95 = first_crossing(0.05), first_crossing(0.95)
    assert value("rise(y, reference=1, low=5%, high=0.95)", run).value == pytest.approx(t95 - t5, abs=1e-8)


def test_error_integrals_equal_quadrature_of_the_closed_form(run):
    # e = 1 - y has kinks of |e| at its zeros t = (k pi - atan(sqrt(1 - z^2) / z)) / wd ... found
    # numerically and given to quad as break points
    zeros = [optimize.brentq(lambda t: float(y(t)) - 1, a, a + math.pi / WD)
             for a in np.arange(0.1, T_END - math.pi / WD, math.pi / WD)
             if (y(a) - 1) * (y(a + math.pi / WD) - 1) < 0]
    e = lambda t: 1 - float(y(t))  # noqa: E731
    quad = dict(points=zeros, limit=1000, epsabs=1e-13, epsrel=1e-12)
    iae = integrate.quad(lambda t: abs(e(t)), 0, T_END, **quad)[0]
    ise = integrate.quad(lambda t: e(t) ** 2, 0, T_END, **quad)[0]
    itae = integrate.quad(lambda t: t * abs(e(t)), 0, T_END, **quad)[0]
    # the trapezoidal rule's error: DT^2 / 12 * int |e''| ~ 1e-9
    for kind, exact in (("iae", iae), ("ise", ise), ("itae", itae)):
        assert value(f"{kind}(y, reference=1)", run).value == pytest.approx(exact, rel=1e-7, abs=1e-9), kind
        assert value(f"{kind}(y, reference=r)", run).value == value(f"{kind}(y, reference=1)", run).value


def test_a_step_at_t0_is_counted_from_t0():
    t0 = 2.0
    t = np.linspace(0.0, T_END, int(round(T_END / DT)) + 1)
    res = {"time": t, "y": delayed(t, t0), "r": (t > t0).astype(float)}
    assert step_response.reference_step_time(t, res["r"]) == t0  # r(t0) = 0: the last sample before
    exit_time = last_band_exit()
    for spec in ("settling(y, reference=r)", f"settling(y, from={t0}, reference=1)"):
        assert value(spec, res).value == pytest.approx(exit_time, abs=1e-6), spec
    # without a reference the target is the last sample, y(T_END - t0)
    own = last_band_exit(final=float(y(T_END - t0)), end=T_END - t0)
    assert value(f"settling(y, from={t0})", res).value == pytest.approx(own, abs=1e-6)
    mp = math.exp(-math.pi * Z / math.sqrt(1 - Z * Z))
    assert value("overshoot(y, reference=r)", res).value == pytest.approx(100 * mp, abs=1e-6)
    assert abs(value("peak_time(y, reference=r)", res).value - math.pi / WD) <= DT
    # counted from t = 0 instead, the settling time carries the step's delay
    assert value("settling(y, reference=1)", res).value == pytest.approx(t0 + exit_time, abs=1e-6)
    # a from between output times: the window starts with the interpolated sample
    tw, sw = step_response.window(t, res["y"], t0 + DT / 2)
    assert tw[0] == t0 + DT / 2 and sw[0] == pytest.approx((res["y"][20000] + res["y"][20001]) / 2)


def test_slow_response_has_not_settled_and_says_why():
    t = np.linspace(0.0, 5.0, 5001)
    res = {"time": t, "x": 1 - np.exp(-t / 10.0)}  # tau = 10 s, watched for 5 s
    got = value("settling(x, reference=1)", res)
    assert math.isnan(got.value) and got.status == "not settled"
    assert got.note == ("metric 'm': x is still outside its 2 % band around 1.0 at the end (t=5) "
                        "(counted from t=0)")
    # without a reference: outside the band around its last sample within the last 10 % (0.5 s)
    got = value("settling(x)", res)
    assert math.isnan(got.value) and got.status == "not settled"
    assert f"x is still outside its 2 % band around {1 - math.exp(-0.5)!r} within the last 0.5 s before t=5" \
        in got.note
    got = value("rise(x, reference=1)", res)
    assert math.isnan(got.value) and got.status == "not settled" and "never reaches 0.9" in got.note


def test_growing_response_diverged():
    t = np.linspace(0.0, 10.0, 1001)
    res = {"time": t, "x": np.exp(0.5 * t) * np.sin(3 * t)}
    got = value("max(x, bound=20)", res)
    assert math.isnan(got.value) and got.status == "diverged"
    k = np.argmax(np.abs(res["x"]) > 20)
    assert f"x leaves its bound |x| <= 20.0 at t={t[k]:.6g}" in got.note
    assert value("max(x, bound=200)", res).status == "ok"  # |x| <= e^5 = 148
    res["x"][-3:] = np.inf
    got = value("settling(x)", res)
    assert got.status == "diverged" and "x is not finite at t=9.98" in got.note
    assert metrics.worst([metrics.Verdict(1.0), got, metrics.Verdict(np.nan, "not settled")]) == "diverged"


def test_a_run_stopped_by_the_integrator_diverged_only_past_a_bound():
    t = np.linspace(0.0, 1.0, 11)
    exc = SimulationError("m: step size too small at t=1")
    exc.result = {"time": t, "x": np.exp(8 * t)}
    assert "x leaves its bound" in batch._diverged(exc, metrics.make_metrics({"a": "max(x, bound=100)"}))
    assert batch._diverged(exc, metrics.make_metrics({"a": "max(x)"})) == ""  # no bound, finite: failed
    assert batch._diverged(ValueError("x"), metrics.make_metrics({"a": "max(x, bound=1)"})) == ""


def spring(c):
    """x'' = k (1 - x) - c x', k = W^2: the closed form above with z = c / (2 W) from rest."""
    s = System("spring")
    k, d = s.constants(k=W * W, c=c)
    x, = s.coordinates("x")
    s.gravity([0, 0, 0])
    s.body("B", rel_pos=[x, 0, 0], mass=1.0, inertia=[1, 1, 1])
    s.generalized_force("spring", "x", k * (1 - x) - d * s.coordinates_["x"].velocity)
    return s


SPRING_METRICS = {"ts": "settling(x, reference=1)", "os": "overshoot(x, reference=1)",
                  "iae": "iae(x, reference=1)", "xmax": "max(x, bound=50)"}


def test_sweep_rows_say_ok_not_settled_and_diverged_and_resume_keeps_them(tmp_path):
    # c = 2 z W: z = 0.3 settles at about 6.5 s, z = 0.01 rings far beyond 10 s, z = -0.5 grows as e^t
    design = {"c": [2 * Z * W, 0.04, -2.0]}
    out = tmp_path / "rows.csv"
    kw = dict(t_end=10.0, dt=1e-3, rtol=1e-10, metrics=SPRING_METRICS, scheduler="synchronous", out=out)
    df = mbsfmu.sweep(spring(1.0), design, **kw)
    assert df["status"].tolist() == ["ok", "not settled", "diverged"], df["message"].tolist()
    ok, slow, grows = (df.iloc[i] for i in range(3))
    assert ok["message"] == "" and ok["ts"] == pytest.approx(last_band_exit(), abs=1e-5)
    assert ok["os"] == pytest.approx(100 * math.exp(-math.pi * Z / math.sqrt(1 - Z * Z)), abs=1e-4)
    assert math.isnan(slow["ts"]) and "metric 'ts': x is still outside its 2 % band" in slow["message"]
    assert slow["xmax"] == pytest.approx(1 + math.exp(-math.pi * 0.01 / math.sqrt(1 - 1e-4)), abs=1e-5)
    assert math.isnan(grows["xmax"]) and "x leaves its bound |x| <= 50.0" in grows["message"]
    assert np.isfinite(grows["iae"])  # the row keeps its other metrics
    written = read_rows(out)  # the file reads back as written: nan where a metric has no value
    assert written["status"].tolist() == df["status"].tolist() and written["ts"].dtype == float
    np.testing.assert_array_equal(written["ts"].to_numpy(), df["ts"].to_numpy())
    # resume: the three rows are finished runs, none is run again, even with retry_failed
    again = mbsfmu.sweep(spring(1.0), design, retry_failed=True, **kw)
    assert again.attrs["resume"]["ran"] == 0 and again.attrs["resume"]["taken"] == 3
    assert again["status"].tolist() == df["status"].tolist()
    assert again["message"].tolist() == df["message"].tolist()
    np.testing.assert_array_equal(again[["ts", "os", "iae", "xmax"]].to_numpy(),
                                  df[["ts", "os", "iae", "xmax"]].to_numpy())
