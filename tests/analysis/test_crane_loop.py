"""examples/crane_loop.py (issue 28, "How it must be shown"): the trolley crane under a discrete
LQR designed for a 2 m rope, behind a 13 ms transport delay and a force limit.

* Over the example's grid of rope lengths and loads (8 x 6), the verdict of a 20 s run of the
  nonlinear loop by the example's metrics (the trolley settles within 2 % of its 1 m step,
  counted from the reference's step and held for the last 2 s; the rope angle stays within
  ±0.5 rad) is 'ok' exactly where the closed loop's poles from ``mbsfmu.linearize(diagram)`` have
  a largest real part < 0 (the loop the runner computes: ``domain="discrete"``), and the grid
  holds both verdicts; the map is the one printed in docs/guide/closed-loop-crane.md.
* The closed loop of the diagram (the FMU's Model Exchange differentiated, the delay and the
  limit as the runner executes them) equals python-control's ``feedback`` of the model's own
  linearization, discretized by hand (``c2d``, zero-order hold at 10 ms), in series with the
  delay written by hand (τ = 1.3 T: 0.7 z⁻¹ + 0.3 z⁻²), and the ``dlqr`` gain: poles to 1e-10
  relative (measured: at most 3.4e-13), stable and unstable points alike.
* The script (``python examples/crane_loop.py``) prints its map and confirms its three points;
  the docstring's numbers (the unstable swing pair, the nominal poles, the edge at 1 m) hold.
"""

import pathlib

import control
import numpy as np
import pytest
from scipy.optimize import brentq

import mbsfmu
from examples import crane_loop as example

#: relative agreement of the diagram's poles with the hand-built loop (the FMU plant is
#: differentiated numerically, the hand-built one symbolically)
POLE_RTOL = 1e-10


@pytest.fixture(scope="module")
def fmu(tmp_path_factory):
    return example.plant_fmu(tmp_path_factory.mktemp("crane") / "trolley_crane.fmu")


def assert_same_poles(p, ref, rtol):
    p, ref = list(np.asarray(p, complex)), list(np.asarray(ref, complex))
    assert len(p) == len(ref), (p, ref)
    worst = 0.0
    for r in ref:
        k = int(np.argmin([abs(q - r) for q in p]))
        worst = max(worst, abs(p[k] - r) / max(1.0, abs(r)))
        p.pop(k)
    assert worst <= rtol, worst
    return worst


@pytest.mark.slow
def test_the_runs_verdict_agrees_with_the_closed_loop_poles_over_the_grid(fmu):
    verdicts = {}
    for L in example.LENGTHS:
        for m in example.LOADS:
            sigma = mbsfmu.linearize(example.crane_loop(L, m, fmu=fmu), **example.LINEARIZE).largest_real_part
            status, values = example.verdict(example.crane_loop(L, m, fmu=fmu).run(example.T_END,
                                                                                   check_finite=False))
            verdicts[L, m] = (sigma, status)
            assert (status == "ok") == (sigma < 0), (L, m, sigma, status, values)
            assert status in ("ok", "not settled", "diverged")
    stable = [k for k, (s, _) in verdicts.items() if s < 0]
    assert 0 < len(stable) < len(verdicts)
    # the corner of the issue: designed for 2 m, the gains lose a 1 m rope with a 77.5 kg load
    assert verdicts[1.0, 77.5][0] > 0 and verdicts[1.0, 77.5][1] != "ok"
    assert verdicts[2.0, 50.0] == (pytest.approx(-0.7204, abs=1e-4), "ok")
    assert all(s < 0 for (L, _), (s, _) in verdicts.items() if L >= 2.0)
    assert all(s > 0 for (L, _), (s, _) in verdicts.items() if L <= 0.75)
    print({k: (round(s, 3), v) for k, (s, v) in verdicts.items()})
    # the map printed in the docs is this one (to its 3 decimals)
    for (L, m), value in docs_table().items():
        assert verdicts[L, m][0] == pytest.approx(value, abs=6e-4), (L, m)


def docs_table() -> dict:
    """{(L, m): largest real part} of the table in docs/guide/closed-loop-crane.md."""
    page = (pathlib.Path(example.__file__).parents[1] / "docs" / "guide" / "closed-loop-crane.md").read_text()
    lines = [ln for ln in page.splitlines() if ln.startswith("| ")]
    head = next(i for i, ln in enumerate(lines) if ln.startswith("| L [m]"))
    loads = [float(c) for c in lines[head].strip("|").split("|")[1:]]
    table = {}
    for ln in lines[head + 2:head + 2 + len(example.LENGTHS)]:
        cells = [c.strip().replace("\u2212", "-") for c in ln.strip("|").split("|")]
        for m, v in zip(loads, cells[1:]):
            table[float(cells[0]), m] = float(v)
    assert len(table) == len(example.LENGTHS) * len(example.LOADS)
    return table


def hand_built_poles(L, m):
    """Closed-loop z-poles of feedback(Pd · D, K): Pd the ZOH discretization of the model's
    linearization at (L, m), D the 13 ms transport delay at 10 ms steps, K the dlqr gain."""
    T = example.PERIOD
    lin = example.plant_linearization(L, m)
    Pd = control.c2d(control.ss(lin.A, lin.B, lin.C, lin.Du), T, "zoh")
    n, f = divmod(round((example.PERIOD + example.DEAD_TIME) / T * 1000), 1000)
    assert (n, f) == (1, 300)  # τ / T = 1.3: y[k] = 0.7 u[k-1] + 0.3 u[k-2]
    delay = control.ss(control.tf([0.7, 0.3], [1.0, 0.0, 0.0], T))  # (0.7 z + 0.3) / z^2
    gain = example.design()
    return control.poles(control.feedback(Pd * delay, control.ss([], [], [], gain.K, T)))


@pytest.mark.parametrize("L, m", [(2.0, 50.0), (1.0, 150.0), (1.0, 30.0), (0.5, 10.0)])
def test_the_diagrams_closed_loop_is_the_feedback_of_plant_delay_and_gain(fmu, L, m):
    cl = mbsfmu.linearize(example.crane_loop(L, m, fmu=fmu), domain="discrete")
    assert cl.domain == "discrete" and cl.dt == example.PERIOD
    ref = hand_built_poles(L, m)
    worst = assert_same_poles(cl.poles, ref, POLE_RTOL)
    print(f"L = {L}, m = {m}: worst relative pole deviation {worst:.1e}")
    assert cl.stable == bool(np.max(np.abs(ref)) < 1)
    assert cl.largest_real_part == pytest.approx(np.max(np.log(np.abs(ref))) / example.PERIOD, rel=1e-6)


def test_the_gain_is_the_nominal_design():
    """dlqr of the 2 m, 50 kg model at 10 ms: its own closed loop (no delay) is stable, and the
    gain is the same whatever loop it is put in."""
    gain = example.design()
    assert gain.states == ["x", "theta", "der(x)", "der(theta)"] and gain.plane == "z"
    assert np.max(np.abs(gain.poles)) < 1
    K = gain.K.copy()
    example.crane_loop(0.5, 10.0)
    np.testing.assert_array_equal(example.design().K, K)


def test_the_script_prints_its_map_and_confirms_three_points(capsys):
    assert example.main() == 0
    out = capsys.readouterr().out
    assert out.count("-> agrees") == 3 and "DISAGREES" not in out
    assert "L = 1.0 m, m = 30.0 kg: linear unstable; 20 s run: diverged" in out


def test_what_the_docstring_says_about_the_unstable_corner(fmu):
    """The numbers of the example's docstring: the unstable pair at L = 1 m, m = 30 kg is the swing
    (s = 0.563 ± 5.576j, near omega = sqrt(g (M + m) / (M L)) = 4.95 rad/s), the nominal loop's
    slowest poles, and the edge at L = 1 m at 117 kg."""
    def loop(L, m):
        return mbsfmu.linearize(example.crane_loop(L, m, fmu=fmu), **example.LINEARIZE)

    s = loop(1.0, 30.0).s_poles
    top = s[np.argsort(-s.real)[:2]]
    np.testing.assert_allclose(sorted(top.imag), [-5.576, 5.576], atol=1e-3)
    np.testing.assert_allclose(top.real, 0.563, atol=1e-3)
    assert abs(abs(top[0].imag) - np.sqrt(9.81 * 50 / 20)) < 0.15 * 4.95
    s = loop(2.0, 50.0).s_poles
    np.testing.assert_allclose(sorted(s[np.argsort(-s.real)[:2]].imag), [-0.890, 0.890], atol=1e-3)
    edge = brentq(lambda m: loop(1.0, m).largest_real_part, 110.0, 150.0, xtol=0.01)
    assert edge == pytest.approx(116.86, abs=0.05)
