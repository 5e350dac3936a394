"""mbsfmu.optimize against independent references: closed-form optima of a linear oscillator
(the stiffness that makes final(x) smallest, the initial velocity that makes the integral of the
spring's energy smallest, the same under a constraint whose optimum lies on it: the KKT system
solved in closed form), the slider-crank's smallest final slider position (l - r exactly, at
the crank angle found by Brent's method on plain runs); one run per new point, and a resumed
optimization equal bit for bit to an uninterrupted one without any evaluation run twice."""

import json
import math
import pathlib

import numpy as np
import pytest
from oscillator_models import oscillator
from scipy.optimize import minimize_scalar

import mbsfmu
from mbsfmu import ParameterError
from mbsfmu.sensitivity import optimization

ROOT = pathlib.Path(__file__).resolve().parents[2]
SLIDER_CRANK = str(ROOT / "models" / "slider_crank.py")
# the oscillator of test_gradient: m = 2, k = 8 (omega = 2), x(0) = 0.3, energy k x^2 / 2
M, K, X0, T = 2.0, 8.0, 0.3, 1.0
W = math.sqrt(K / M)
# int_0^T of cos^2, cos sin, sin^2 (omega t)
A = T / 2 + math.sin(2 * W * T) / (4 * W)
B = math.sin(W * T) ** 2 / (2 * W)
C = T / 2 - math.sin(2 * W * T) / (4 * W)


@pytest.fixture
def runs(monkeypatch):
    """The number of gradient() calls (engine runs) of optimize."""
    count = {"n": 0}
    real = optimization.gradient

    def counting(*args, **kw):
        count["n"] += 1
        return real(*args, **kw)

    monkeypatch.setattr(optimization, "gradient", counting)
    return count


def test_stiffness_that_makes_final_x_smallest(runs):
    # x(T) = x0 cos(sqrt(k/m) T): smallest (-x0) at sqrt(k/m) T = pi, k = m pi^2 / T^2
    res = mbsfmu.optimize(oscillator(), minimize="final(x)", params={"k": (5.0, 30.0)}, t_end=T)
    assert res.success and res.algorithm == "L-BFGS-B"
    assert res.values["k"] == pytest.approx(M * math.pi**2 / T**2, rel=1e-7)
    assert res.value == pytest.approx(-X0, abs=1e-8)
    assert runs["n"] == res.evaluations == res.runs == len(res.history) and res.evaluations < 15
    assert list(res.history["evaluation"]) == list(range(res.evaluations))


def test_initial_velocity_that_makes_the_energy_integral_smallest():
    # int k x^2 / 2 with x = x0 cos wt + (v0 / w) sin wt is quadratic in v0: v0* = -x0 w B / C
    res = mbsfmu.optimize(
        oscillator(), minimize="integral(energy_spring)", params={"der(x)": (-2, 2)}, t_end=T
    )
    v0 = -X0 * W * B / C
    assert res.values["der(x)"] == pytest.approx(v0, rel=1e-7)
    e = K / 2 * (A * X0**2 + 2 * B / W * X0 * v0 + C / W**2 * v0**2)
    assert res.value == pytest.approx(e, rel=1e-8)
    # maximize the negated objective of another metric: the mean is the integral / T
    again = mbsfmu.optimize(oscillator(), maximize="mean(energy_spring)", params={"der(x)": (-2, 2)}, t_end=T)
    assert again.values["der(x)"] == pytest.approx(2.0) and again.at_bounds == ["der(x)"]


@pytest.mark.parametrize("relation,bound", [(">=", 0.1), ("==", -0.05), ("<=", -0.08)])
def test_constrained_optimum_on_the_constraint(relation, bound, runs):
    # minimize z^T Q z over z = (x0, v0) subject to a^T z (=, >=, <=) b with x(T) = a^T z; the
    # unconstrained minimum z = 0 violates it, so the optimum lies on a^T z = b:
    # z* = b Q^-1 a / (a^T Q^-1 a), and grad f = 2 Q z* = mu a (KKT) with mu = 2 b / (a^T Q^-1 a)
    Q = K / 2 * np.array([[A, B / W], [B / W, C / W**2]])
    a = np.array([math.cos(W * T), math.sin(W * T) / W])
    Qa = np.linalg.solve(Q, a)
    z = bound * Qa / (a @ Qa)
    res = mbsfmu.optimize(
        oscillator(),
        minimize="integral(energy_spring)",
        params={"x": (-1, 1), "der(x)": (-2, 2)},
        t_end=T,
        constraints={"end": ("final(x)", relation, bound)},
        start={"x": 0.3},
    )
    assert res.success and res.algorithm == "SLSQP"
    np.testing.assert_allclose(res.optimum, z, rtol=1e-7)
    assert res.constraints["end"][0] == pytest.approx(bound, rel=1e-8)
    assert res.active == ["end"] and res.satisfied == {"end": True}
    mu = 2 * bound / (a @ Qa)
    np.testing.assert_allclose(res.gradient[0], mu * a, rtol=1e-5)  # objective's gradient
    np.testing.assert_allclose(res.gradient[1], a, rtol=1e-7)  # the constraint's: d x(T) / d z
    assert runs["n"] == res.evaluations  # fun, jac and the constraint of one point: one run


def test_slider_crank_smallest_final_position_against_plain_runs():
    # the slider is nearest the pivot when the crank points away from it: x = l - r (0.35) exactly;
    # the crank angle at the start that puts it there at t = 0.3 s, by Brent's method on plain runs
    res = mbsfmu.optimize(SLIDER_CRANK, minimize="final(x)", params={"crank_angle": (0.0, 3.0)}, t_end=0.3)
    assert res.value == pytest.approx(0.35, abs=1e-9)

    def final_x(angle):
        return mbsfmu.simulate(SLIDER_CRANK, 0.3, dt=0.3, rtol=1e-12, initial={"crank_angle": angle})["x"][-1]

    ref = minimize_scalar(final_x, bounds=(0.6, 1.2), method="bounded", options={"xatol": 1e-9})
    assert ref.fun == pytest.approx(0.35, abs=1e-9)
    assert res.values["crank_angle"] == pytest.approx(ref.x, abs=2e-5)
    assert res.evaluations < 15


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_resume_continues_without_running_an_evaluation_twice(tmp_path, suffix, runs):
    problem = dict(minimize="final(x)", params={"k": (5.0, 30.0)}, t_end=T)
    whole = mbsfmu.optimize(oscillator(), **problem)
    n = runs["n"]
    assert n == whole.evaluations > 5
    history = tmp_path / f"h{suffix}"
    part = mbsfmu.optimize(oscillator(), history=history, max_evaluations=4, **problem)
    assert not part.success and "stopped after max_evaluations = 4" in part.message
    assert part.evaluations == part.runs == 4 and runs["n"] == n + 4
    rest = mbsfmu.optimize(oscillator(), history=history, **problem)
    assert runs["n"] == n + whole.evaluations  # the first 4 taken from the file, none run twice
    assert (rest.taken, rest.runs) == (4, whole.evaluations - 4)
    assert np.array_equal(rest.optimum, whole.optimum) and rest.value == whole.value
    assert rest.history["objective"].tolist() == whole.history["objective"].tolist()
    assert rest.history["resumed"].tolist() == [True] * 4 + [False] * (whole.evaluations - 4)
    lines = [ln for ln in history.read_text().splitlines() if ln]
    assert len(lines) == whole.evaluations + (suffix == ".csv")
    if suffix == ".jsonl":
        assert json.loads(lines[-1])["parameters"]["k"] == whole.optimum[0]
    # a third run takes everything from the file
    third = mbsfmu.optimize(oscillator(), history=history, **problem)
    assert (
        third.runs == 0 and third.taken == whole.evaluations and np.array_equal(third.optimum, whole.optimum)
    )


def test_history_of_another_optimization_refused_or_moved_aside(tmp_path, runs):
    history = tmp_path / "h.csv"
    problem = dict(minimize="final(x)", params={"k": (5.0, 30.0)}, max_evaluations=2)
    mbsfmu.optimize(oscillator(), history=history, t_end=T, **problem)
    before = history.read_bytes()
    with pytest.raises(ParameterError, match=r"another optimization:\n  t_end: 1.0 in h.csv, 1.5 now\n"):
        mbsfmu.optimize(oscillator(), history=history, t_end=1.5, **problem)
    with pytest.raises(
        ParameterError, match=r"bounds: \{\"k\": \[5.0, 30.0\]\} in h.csv, \{\"k\": \[5.0, 31.0\]\}"
    ):
        mbsfmu.optimize(oscillator(), history=history, t_end=T, **{**problem, "params": {"k": (5.0, 31.0)}})
    changed = oscillator()
    changed.constants_["m"].value = 2.5
    with pytest.raises(ParameterError, match=r"model: System 'oscillator' sha256 \w+ in h.csv, System "):
        mbsfmu.optimize(changed, history=history, t_end=T, **problem)
    assert history.read_bytes() == before and runs["n"] == 2
    res = mbsfmu.optimize(oscillator(), history=history, t_end=1.5, resume="restart", **problem)
    assert res.runs == 2 and (tmp_path / "h.old-1.csv").read_bytes() == before
    assert (tmp_path / "h.old-1.csv.definition.json").exists()


def test_damaged_record_is_run_again(tmp_path, runs):
    history = tmp_path / "h.csv"
    problem = dict(minimize="final(x)", params={"k": (5.0, 30.0)}, t_end=T, max_evaluations=3)
    first = mbsfmu.optimize(oscillator(), history=history, **problem)
    text = history.read_text().splitlines(keepends=True)
    history.write_text("".join(text[:-1]) + text[-1][:-20])  # the last record cut off
    with pytest.warns(
        UserWarning, match=r"h.csv': 1 record\(s\) dropped and evaluated again: line 4: cut off"
    ):
        again = mbsfmu.optimize(oscillator(), history=history, **problem)
    assert (again.taken, again.runs) == (2, 1) and np.array_equal(again.optimum, first.optimum)
    now = history.read_text().splitlines()
    assert now[:3] == [t.rstrip("\n") for t in text[:3]] and len(now) == 4  # rewritten without the cut record
    assert now[3].split(",")[:5] == text[3].split(",")[:5]  # run again: the same numbers but the seconds


def test_progress_lines_and_plot(tmp_path, capsys):
    rows = []
    res = mbsfmu.optimize(
        oscillator(), minimize="final(x)", params={"k": (5.0, 30.0)}, t_end=T, progress=rows.append
    )
    assert [r["evaluation"] for r in rows] == list(range(res.evaluations))
    mbsfmu.optimize(
        oscillator(),
        minimize="final(x)",
        params={"k": (5.0, 30.0)},
        t_end=T,
        progress=True,
        max_evaluations=2,
    )
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("evaluation 1: k = 8 -> objective -0.12484405") and len(err) == 2
    path = res.plot(tmp_path / "o.png")
    assert pathlib.Path(path).stat().st_size > 1000
    text = str(res)
    assert "minimize final(x) of oscillator over k by L-BFGS-B" in text and "19.739208" in text
    d = res.to_dict()
    assert json.loads(json.dumps(d))["optimum"]["k"] == res.values["k"]
