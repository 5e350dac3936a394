"""Forward sensitivities of a run (simulate(..., sensitivities=...), the engine's direct method,
runtime/mbs_sensitivity.c) against independent references:

* the closed form of a linear oscillator's solution and its derivatives by k, m, x0 and v0
  (to the integrator's tolerance);
* central differences of plain engine runs at rtol 1e-12 with steps that make their truncation
  error small (relative 1e-6 of the larger of the value and 1e-2 ...), on a loop (slider-crank)
  in each formulation and method, a tree (double pendulum, recursive Newton-Euler), a
  nonholonomic model (rolling disc), a natural-coordinate model and a stiff model (stiff method):
  agreement to 1e-6 relative to the largest sensitivity;
* the constraints' derivatives: C dy/dp + dc/dp = 0 on the whole run (consistent sensitivities).
"""

import math
import warnings

import numpy as np
import pytest
from oscillator_models import oscillator

import mbsfmu


def test_linear_oscillator_matches_the_closed_form_sensitivities():
    s = oscillator()
    x0, v0 = 0.3, 0.5
    res = mbsfmu.simulate(s, 3.0, dt=0.05, rtol=1e-11, initial={"x": x0, "Dx": v0},
                          sensitivities=["k", "m", "x", "der(x)"])
    t, m, k = res.t, 2.0, 8.0
    w = math.sqrt(k / m)
    x = x0 * np.cos(w * t) + v0 / w * np.sin(w * t)
    np.testing.assert_allclose(res["x"], x, atol=1e-9)
    dx_dw = -x0 * t * np.sin(w * t) + v0 * (t * np.cos(w * t) / w - np.sin(w * t) / w ** 2)
    expected = {"k": dx_dw / (2 * m * w), "m": dx_dw * (-k / (2 * m ** 2 * w)),
                "x": np.cos(w * t), "der(x)": np.sin(w * t) / w}
    for p, ref in expected.items():
        np.testing.assert_allclose(res.sensitivity("x", p), ref, atol=1e-8, err_msg=p)
    # the rate's sensitivity is the derivative of the position's
    np.testing.assert_allclose(res.sensitivity("der(x)", "x"), -w * np.sin(w * t), atol=1e-8)


def _central(s, p, t_end, base, kw, h_rel=2e-4):
    """Fourth-order central differences of plain runs at rtol 1e-12 by p (a constant or an
    initial value), step h_rel |base|: a function of the runs at base + (2, 1, -1, -2) h, whose
    truncation error is O(h^4) (so the step can stay large against the runs' rounding)."""
    h = h_rel * (abs(base) or 1.0)
    runs = []
    for k in (2, 1, -1, -2):
        key = "params" if p in s.constants_ else "initial"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs.append(mbsfmu.simulate(s, t_end, rtol=1e-12, **kw, **{key: {p: base + k * h}}))

    def derivative(read):
        a, b, c, d = (read(r) for r in runs)
        return (-a + 8 * b - 8 * c + d) / (12 * h)

    return derivative


CASES = [  # model, formulation, method, parameters
    ("slider_crank", "qr", "explicit", ["r", "l", "m_slider", "crank_angle", "der(crank_angle)"]),
    ("slider_crank", "projection", "dop853", ["r", "l", "m_rod"]),
    ("slider_crank", "baumgarte", "explicit", ["l", "m_rod"]),
    ("slider_crank", "partition", "stiff", ["r", "m_crank"]),
    ("double_pendulum", None, "explicit", None),
    ("rolling_disc", None, "explicit", None),
    ("slider_crank_natural", None, "explicit", None),
]


@pytest.mark.parametrize("name,formulation,method,wrt", CASES)
def test_forward_sensitivities_match_central_differences(name, formulation, method, wrt):
    import importlib

    s = importlib.import_module(f"models.{name}").model()
    coords = list(s.coordinates_)
    if wrt is None:
        wrt = list(s.constants_)[:3] + [coords[0]]
    kw = {"dt": 0.1, "formulation": formulation, "method": method}
    t_end = 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mbsfmu.simulate(s, t_end, rtol=1e-11, sensitivities=wrt, **kw)
    assert res.sensitivity_names == wrt
    for p in wrt:
        ics = {ic.name: ic.value for ic in s.initial_conditions}
        ics.update({f"der({ic.name})": ic.rate for ic in s.initial_conditions if ic.rate is not None})
        base = (s.constants_[p].value if p in s.constants_ else ics[p] if p in ics
                else res.y[coords.index(p)][0])
        fd = np.array([_central(s, p, t_end, base, kw)(lambda r, c=c: r[c]) for c in coords])
        got = np.array([res.sensitivity(c, p) for c in coords])
        scale = max(1.0, np.abs(fd).max())
        assert np.abs(got - fd).max() <= 1e-6 * scale, (p, np.abs(got - fd).max())


def test_loop_sensitivities_keep_the_constraints_derivative():
    """C(y) dy/dp + dc/dp = 0 along the run: the sensitivities stay consistent (the projection
    is differentiated), checked against central differences of c at the computed state."""
    from models.slider_crank import model

    s = model()
    res = mbsfmu.simulate(s, 1.0, dt=0.1, rtol=1e-10, sensitivities=["r"])
    num = res.numeric
    h = 1e-6
    for i, t in enumerate(res.t):
        y = res.y[:, i]
        S = np.array([res.sensitivity(c, "r")[i] for c in res.coordinate_names])
        c0, C, _ = num.constraint_parts(t, y)
        prm = dict(zip(num.constant_names, num.prm))
        plus = s.constants_["r"].value + h
        minus = s.constants_["r"].value - h
        cp = mbsfmu.derive(s).numeric({**prm, "r": plus}).constraint_parts(t, y)[0]
        cm = mbsfmu.derive(s).numeric({**prm, "r": minus}).constraint_parts(t, y)[0]
        assert np.abs(C @ S + (cp - cm) / (2 * h)).max() < 1e-8


def test_output_and_reaction_sensitivities_match_central_differences():
    from models.slider_crank import model

    s = model()
    res = mbsfmu.simulate(s, 0.5, dt=0.1, rtol=1e-11, sensitivities=["l"])
    d = _central(s, "l", 0.5, s.constants_["l"].value, {"dt": 0.1})
    for out in ("pin.x", "pin.y"):
        fd = d(lambda r, out=out: r[out])
        np.testing.assert_allclose(res.sensitivity(out, "l"), fd, atol=1e-6 * max(1, np.abs(fd).max()))
    for out in ("reaction.pivot.x", "reaction.pivot.y"):
        name = s.outputs[out].constraint
        fd = d(lambda r, name=name: r.multipliers()[name])
        np.testing.assert_allclose(res.sensitivity(out, "l"), fd, atol=1e-6 * max(1, np.abs(fd).max()))






