"""examples/crane_loop.py (issue 28, "How it must be shown"): the trolley crane under a discrete
LQR designed for a 2 m rope, behind a 13 ms transport delay and a force limit.

* Over the example's grid of rope lengths and loads (8 x 6), the verdict of a 20 s run of the
  nonlinear loop by the example's metrics (the trolley settles within 2 % of its 1 m step,
  counted from the reference's step and held for the last 2 s; the rope angle stays within
  ±0.5 rad) is 'ok' exactly where the closed loop's poles from ``mbsfmu.linearize(diagram)`` have
  a largest real part < 0 (the loop the runner computes: ``domain="discrete"``), and the grid
  holds both verdicts.
* The closed loop of the diagram (the FMU's Model Exchange differentiated, the delay and the
  limit as the runner executes them) equals python-control's ``feedback`` of the model's own
  linearization, discretized by hand (``c2d``, zero-order hold at 10 ms), in series with the
  delay written by hand (τ = 1.3 T: 0.7 z⁻¹ + 0.3 z⁻²), and the ``dlqr`` gain: poles to 1e-10
  relative (measured: at most 3.4e-13), stable and unstable points alike.
* The script (``python examples/crane_loop.py``) prints its map and confirms its three points.
"""

import control
import numpy as np
import pytest

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


@pytest.mark.slow
def test_the_script_prints_its_map_and_confirms_three_points(capsys):
    assert example.main() == 0
    out = capsys.readouterr().out
    assert out.count("-> agrees") == 3 and "DISAGREES" not in out
    assert "L = 1.0 m, m = 30.0 kg: linear unstable; 20 s run: diverged" in out
