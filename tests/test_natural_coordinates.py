"""The natural-coordinate models of seed 003 (models/four_bar_natural.py,
models/slider_crank_natural.py) against independent references, on every path that runs them:
the numpy reference, the C engine, the native FMU and the pythonfmu FMU.

References:
* the parallelogram N four-bar keeps all cranks at one angle phi, A_j = (j l + l cos phi,
  l sin phi).  Each crank (a rod pinned at one end) has T = m l^2 phi'^2 / 6 and
  V = m g l sin phi / 2, each coupler translates with its ends: T = m l^2 phi'^2 / 2,
  V = m g l sin phi.  So J phi'' = -K cos phi with J = (N + 1) m l^2 / 3 + N m l^2 and
  K = (3N + 1) m g l / 2, integrated here with scipy at rtol 1e-13 (phi(0) = pi/2,
  phi'(0) = -v0 / l);
* the slider-crank in relative coordinates (models/slider_crank.py): the crank pin is the
  origin of its frame ``rod_end``.
"""

import math

import numpy as np
import pytest
from fmu_support import MODELS, TOL, assert_matches
from scipy.integrate import solve_ivp

import mbsfmu
from mbsfmu import derive

FOUR_BAR = MODELS / "four_bar_natural.py"
SLIDER = MODELS / "slider_crank_natural.py"
T_FOUR_BAR = 10.0  # seed 003 sec. 5.1: t = 0 ... 10 s


def parallelogram_angle(t, N=2, m=1.0, l=1.0, g=9.81, v0=1.0):
    """phi(t) of J phi'' = -K cos phi (see the module docstring)."""
    J = (N + 1) * m * l**2 / 3 + N * m * l**2
    K = (3 * N + 1) * m * g * l / 2
    sol = solve_ivp(lambda _, x: [x[1], -K / J * math.cos(x[0])], (0.0, float(t[-1])),
                    [math.pi / 2, -v0 / l], method="DOP853", rtol=1e-13, atol=1e-13, t_eval=t)
    return sol.y[0]


def test_four_bar_equations_have_a_constant_mass_matrix():
    """Natural coordinates: M constant (only constants in it), no velocity terms (k = 0), 2N + 2
    coordinates and 2N + 1 length constraints, for N = 2 and N = 3."""
    for N in (2, 3):
        s = mbsfmu.load_model(FOUR_BAR, N=N)
        eqs = derive(s)
        assert len(s.y) == 2 * N + 2 and eqs.m == 2 * N + 1
        consts = {c.symbol for c in s.constants_.values()}
        assert eqs.M.free_symbols <= consts
        assert all(v == 0 for v in eqs.k)


def test_four_bar_against_the_one_dof_reduction():
    """Seed 003's N four-bar (N = 2), 10 s: the default formulation ('qr') on the engine's
    DOP853 at rtol 1e-10 stays within 1e-7 of the 1-DOF solution at every output point through
    the 10 passes of the singular horizontal position; residual <= 1e-10, relative energy drift
    <= 1e-8.  (The default explicit method, RKSTAB, collapses its steps at the first singular
    pass at this tolerance; see the model's docstring.)"""
    s = mbsfmu.load_model(FOUR_BAR)
    res = mbsfmu.simulate(s, T_FOUR_BAR, 0.01, method="dop853", rtol=1e-10, backend="c")
    assert res.stats["formulation"] == "qr"
    phi = parallelogram_angle(res.t)
    passes = int(np.sum(np.diff(np.sign(np.cos(phi))) != 0))
    err = max(max(float(np.max(np.abs(res[f"A{j}_x"] - (j + np.cos(phi))))),
                  float(np.max(np.abs(res[f"A{j}_y"] - np.sin(phi))))) for j in range(3))
    residual, drift = float(np.max(res.constraint_residual)), res.relative_energy_drift()
    print(f"four-bar N=2, {T_FOUR_BAR:g} s, {passes} singular passes: max position error {err:.2e}, "
          f"residual {residual:.1e}, energy drift {drift:.1e}, {res.stats['steps']} steps")
    assert passes >= 10
    assert err < 1e-7
    assert residual < 1e-10
    assert drift < 1e-8


@pytest.fixture(scope="module")
def slider_reference():
    """The relative-coordinate slider-crank over 3 s at rtol 1e-12 (engine), the pin's path."""
    res = mbsfmu.simulate(MODELS / "slider_crank.py", 3.0, 0.01, rtol=1e-12, backend="c")
    return res.t, res.frame("rod_end")["position"], res["x"]


@pytest.mark.parametrize("backend,formulation", [("numpy", "qr"), ("c", "qr"), ("c", "svd"),
                                                 ("c", "projection"), ("c", "partition"),
                                                 ("c", "baumgarte"), ("c", "dae")])
def test_slider_crank_against_relative_coordinates(slider_reference, backend, formulation):
    """The crank pin's path and the slider's position of the natural model agree with the
    relative model's to 1e-8 over 3 s at rtol 1e-11, with every formulation."""
    t, pin, x = slider_reference
    res = mbsfmu.simulate(SLIDER, 3.0, 0.01, rtol=1e-11, backend=backend, formulation=formulation)
    assert np.array_equal(res.t, t)
    err = max(float(np.max(np.abs(res["P_x"] - pin[:, 0]))), float(np.max(np.abs(res["P_y"] - pin[:, 1]))))
    err_slider = float(np.max(np.abs(res["B_x"] - x)))
    print(f"slider-crank ({backend}, {formulation}): pin {err:.1e}, slider {err_slider:.1e}, residual "
          f"{np.max(res.constraint_residual):.1e}, drift {res.relative_energy_drift():.1e}")
    assert err < 1e-8 and err_slider < 1e-8
    assert np.max(np.abs(res["B_y"])) < 1e-10  # the prismatic joint
    assert res.relative_energy_drift() < 1e-8


def test_slider_crank_multipliers_close_the_equations_of_motion():
    """The multipliers are available as for a System (Result.multipliers, one per constraint
    row) and close Lagrange's equations of the first kind, M y'' + k = q + C^T lambda, at every
    output point to 1e-9."""
    res = mbsfmu.simulate(SLIDER, 0.5, 0.05, rtol=1e-10, backend="numpy")
    lam = res.multipliers()
    assert list(lam) == ["crank_length", "rod_length", "guide_line"]
    L = np.array(list(lam.values()))
    for i, t in enumerate(res.t):
        M, h, _, C, _, _ = res.numeric.constrained_parts(t, res.y[:, i], res.yd[:, i])
        assert np.max(np.abs(M @ res.ydd[:, i] - h - C.T @ L[:, i])) < 1e-9


# ---------------------------------------------------------------- FMUs
fmpy = pytest.importorskip("fmpy")


@pytest.fixture(scope="module")
def slider_fmus(tmp_path_factory):
    from mbsfmu.fmu.native import build_native_fmu
    from mbsfmu.fmu.pythonfmu_export import build_pythonfmu

    out = tmp_path_factory.mktemp("natural_fmus")
    built = {"native": build_native_fmu(SLIDER, out / "native" / "slider_crank_natural.fmu")}
    try:
        import pythonfmu  # noqa: F401
    except ImportError:
        return built
    built["pythonfmu"] = build_pythonfmu(SLIDER, out / "pythonfmu" / "slider_crank_natural.fmu")
    return built


@pytest.mark.parametrize("kind", ["native", "pythonfmu"])
def test_slider_crank_fmu_matches_the_numpy_reference(slider_fmus, kind):
    """Both FMU kinds of the natural slider-crank run with fmpy (RKSTAB on the engine, 'qr')
    and agree with simulate's numpy reference (rkstab, 'qr', the FMU's tolerances) to 1e-8 in
    every coordinate and rate; outputs and residual as the FMU conventions say."""
    if kind not in slider_fmus:
        pytest.skip("pythonfmu is not installed")
    path = slider_fmus[kind]
    from fmpy.validation import validate_fmu

    assert validate_fmu(str(path)) == []
    r = fmpy.simulate_fmu(str(path), stop_time=1.0, output_interval=0.01, start_values=dict(TOL))
    ref = mbsfmu.simulate(SLIDER, 1.0, 0.01, method="rkstab", formulation="qr", rtol=1e-10, atol=1e-12,
                          backend="numpy")
    assert_matches(r, ref)
    assert np.max(r["constraint_residual"]) < 1e-12
    for name in ("pin.x", "pin.y", "reaction.crank_length", "reaction.rod_length", "reaction.guide_line"):
        assert name in r.dtype.names
    assert np.array_equal(r["pin.x"], r["P_x"]) and np.array_equal(r["pin.y"], r["P_y"])
