"""optimize() of a block diagram (issue 28 item 1): a controller gain tuned against a closed-loop
cost with a derivative-free minimizer or finite differences.

The loop ``diagram_loops.effort_loop(k)``: the integrator plant under u = k (1 - x) at step
T = 0.1, the cost J(k) = ∫ e² + ρ u² dt (trapezoidal rule on the runner's grid), in closed form
J(k) = (1 + ρ k²) (1/(k (2 - kT)) - T/2).  Its minimum, found here from the closed form by a
bounded scalar search to 1e-12, is the reference: the minimizers must find it to 1e-5.
"""

import pytest
from diagram_loops import LAG, STEP, effort_loop, lag_pi_loop
from scipy.optimize import minimize_scalar

import mbsfmu
from mbsfmu.core.errors import ParameterError

RHO = 0.25
COST = "iae(cost.y, reference=0)"  # = ∫ c dt, c >= 0


def closed_form(k):
    return (1 + RHO * k * k) * (1 / (k * (2 - k * STEP)) - STEP / 2)


K_BEST = minimize_scalar(closed_form, bounds=(0.5, 5.0), method="bounded", options={"xatol": 1e-12}).x


def test_the_closed_form_is_the_runners_cost():
    df = mbsfmu.sweep(effort_loop, {"k": [1.0, 2.0, 3.0]}, t_end=40.0, metrics={"J": COST},
                      scheduler="synchronous")
    assert df["J"].to_numpy() == pytest.approx([closed_form(k) for k in (1.0, 2.0, 3.0)], rel=1e-12)


@pytest.mark.parametrize("minimizer", ["Nelder-Mead", "Powell", "L-BFGS-B"])
def test_gain_tuned_to_the_analytic_optimum(minimizer, tmp_path):
    r = mbsfmu.optimize(effort_loop, minimize=COST, params={"k": (0.5, 5.0)}, t_end=40.0, minimizer=minimizer,
                        history=tmp_path / "h.csv")
    assert r.algorithm == minimizer
    assert r.values["k"] == pytest.approx(K_BEST, abs=1e-5)
    assert r.value == pytest.approx(closed_form(K_BEST), rel=1e-9)
    again = mbsfmu.optimize(effort_loop, minimize=COST, params={"k": (0.5, 5.0)}, t_end=40.0,
                            minimizer=minimizer, history=tmp_path / "h.csv")
    assert again.runs == 0 and again.taken == r.evaluations  # resumed from the history, bit for bit
    assert again.values == r.values


def test_constrained_gain_stops_at_its_bound_with_cobyla():
    """max |u| = k (at t = 0) <= 1.5 cuts off the unconstrained optimum k* > 1.5: J decreases up
    to k*, so the constrained optimum is k = 1.5."""
    assert K_BEST > 1.6
    r = mbsfmu.optimize(effort_loop, minimize=COST, params={"k": (0.5, 5.0)}, t_end=40.0,
                        constraints={"effort": "maxabs(ctrl.y) <= 1.5"})
    assert r.algorithm == "COBYLA"
    assert r.values["k"] == pytest.approx(1.5, abs=1e-5)
    assert "effort" in r.active


def test_unstable_gains_count_as_infinite_cost():
    """kT > 2 diverges: a search started near there still finds the optimum."""
    r = mbsfmu.optimize(effort_loop, minimize="iae(cost.y, reference=0, "
                                              "bound=1e6)", params={"k": (0.5, 25.0)},
                        start={"k": 21.0}, t_end=40.0, minimizer="Nelder-Mead")
    assert r.values["k"] == pytest.approx(K_BEST, abs=1e-4)
    assert (r.history["objective"] == float("inf")).any()


def test_bad_inputs_of_a_diagram_target():
    with pytest.raises(ParameterError, match=r"minimizer 'simplex' is not one of Nelder-Mead, Powell"):
        mbsfmu.optimize(effort_loop, minimize=COST, params={"k": (0.5, 5.0)}, t_end=40.0, minimizer="simplex")
    with pytest.raises(ParameterError, match=r"method= is of a model's runs; a diagram target's minimizer is "
                                             r"minimizer="):
        mbsfmu.optimize(effort_loop, minimize=COST, params={"k": (0.5, 5.0)}, t_end=40.0,
                        method="Nelder-Mead")
    with pytest.raises(ParameterError, match=r"minimizer 'Nelder-Mead' takes no constraints"):
        mbsfmu.optimize(effort_loop, minimize=COST, params={"k": (0.5, 5.0)}, t_end=40.0,
                        minimizer="Nelder-Mead", constraints={"u": "maxabs(ctrl.y) <= 1"})
    with pytest.raises(ParameterError, match=r"optimize: the factory diagram_loops.effort_loop has no "
                                             r"parameter 'gain' \(it takes: k, rho, step\)"):
        mbsfmu.optimize(effort_loop, minimize=COST, params={"gain": (0.5, 5.0)}, t_end=40.0)
    with pytest.raises(ParameterError, match=r"the diagram records no signal 'cost.z'; did you mean cost.y"):
        mbsfmu.optimize(effort_loop, minimize="final(cost.z)", params={"k": (0.5, 5.0)}, t_end=40.0)
    with pytest.raises(ParameterError, match=r"minimizer 'Nelder-Mead': a model's runs give exact gradients"):
        mbsfmu.optimize("models/cart_pendulum.py", minimize="final(x)", params={"m": (0.1, 0.2)}, t_end=0.1,
                        minimizer="Nelder-Mead")


def test_an_unstable_start_keeps_its_linear_value_and_the_search_leaves_it():
    """Fastest decay of the PI loop s² + (a + kp) s + ki = 0 (ki = 4, a = 1): the largest real
    part is -(a + kp)/2 while the poles are complex, rising again once they are real, least at
    the double pole (a + kp)² = 4 ki: kp = 3, s = -2.  Started at kp = -2 (poles 0.5 ± 1.94j,
    rows 'unstable' that keep their value), Nelder-Mead walks down to it."""
    ki = 4.0
    r = mbsfmu.optimize(lag_pi_loop, minimize="largest_real_part", params={"kp": (-3.0, 6.0)},
                        start={"kp": -2.0}, constants={"ki": ki}, linearize={"domain": "continuous"},
                        minimizer="Nelder-Mead")
    assert r.history["objective"].iat[0] == pytest.approx((1.0 - LAG) / 2 + 1.0 / 2, rel=1e-9)  # not +inf
    assert r.values["kp"] == pytest.approx(2 * ki ** 0.5 - LAG, abs=1e-3)
    assert r.value == pytest.approx(-ki ** 0.5, abs=1e-3)
