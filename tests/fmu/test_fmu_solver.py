"""The FMU parameter ``method`` (issue 11, item 3; named ``solver`` until issue 24): the integration
method of both FMU kinds.

``method`` is a tunable Integer parameter right after ``max_internal_step`` (0 = rkstab, the explicit
stabilized DOPRI5; 1 = stiff, Radau IIA 5; 2 = dop853), its start value chosen at export
(``method=``); the deprecated name ``solver`` is tested in tests/fmu/test_vocabulary_deprecations.py.  The
case is the slider-crank whose slider is held by a critically damped spring-damper of 1e8 N/m
(fast mode |lambda| ~ 2e4 1/s, as in tests/engine/test_engine.py): stiff, the fast motion decays.  The
FMUs are driven by fmpy over 1 s with communication steps of 0.01 s, and the number of internal
steps is read from the statistics each FMU logs under ``logStatistics`` at fmi2Terminate.
"""

import math
import re
from functools import partial

import numpy as np
import pytest
from fmu_support import MODELS, Lazy, Slave, slider_crank_variant

import mbsfmu
from mbsfmu.core.errors import ParameterError

fmpy = pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")

from fmpy.fmi1 import FMICallException  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402

from mbsfmu.codegen.fmu_variables import fmu_variables  # noqa: E402
from mbsfmu.fmu.fmpy_callbacks import recorded_messages  # noqa: E402
from mbsfmu.fmu.native import build_native_fmu  # noqa: E402
from mbsfmu.fmu.pythonfmu_export import build_pythonfmu  # noqa: E402

KINDS = ("native", "pythonfmu")
T_END, H = 1.0, 0.01
SETTINGS = {"solver_rtol": 1e-8, "solver_atol": 1e-9}
VALUES = ("0 (rkstab: explicit stabilized DOPRI5), 1 (stiff: Radau IIA 5), "
          "2 (dop853: explicit stabilized Dormand-Prince 8(5,3))")
STATS = re.compile(r"method (\w+)( \(current\))?: (\d+) accepted(?: and (\d+) rejected)? steps, "
                   r"(\d+) right-hand sides(?:, (\d+) Jacobians)?(?:, (\d+) LU decompositions)?")

#: models/slider_crank.py with the slider held by a stiff spring-damper at x = 0.6 m
STIFF = ("The slider-crank of models/slider_crank.py, its slider held by a spring-damper of 1e8 N/m.",
         'x = s.coordinates_["x"]',
         "k, d = s.constants(k_spring=1e8, d_spring=2.0 * math.sqrt(1e8 * 1.0))",
         's.generalized_force("holder", "x", -k * (x.symbol - 0.6) - d * x.velocity)')


@pytest.fixture(scope="module")
def fmus(tmp_path_factory, built_fmu):
    out = tmp_path_factory.mktemp("solver")
    model = slider_crank_variant(out / "stiff_crank.py", *STIFF)
    return Lazy({"model": lambda: model,
                 "native": lambda: build_native_fmu(model, out / "native" / "stiff_crank.fmu",
                                                    method="stiff"),
                 "pythonfmu": lambda: build_pythonfmu(model, out / "pythonfmu" / "stiff_crank.fmu",
                                                      method="stiff"),
                 "cart": partial(built_fmu, MODELS / "cart_pendulum.py")})


def statistics(messages):
    """{method: (accepted, rejected, nfev, njev, ndec)} of the last logStatistics message, and the
    current method (None where an integrator does not count it)."""
    text = [m for s, c, m in messages if c == "logStatistics"][-1]
    assert text.startswith("integrator statistics: "), text
    found = STATS.findall(text)
    assert found, text
    counts = {f[0]: tuple(int(v) if v else None for v in (f[2], f[3], f[4], f[5], f[6])) for f in found}
    return counts, next(f[0] for f in found if f[1])


def run(path, **kw):
    """fmpy.simulate_fmu over 1 s at 0.01 s with debug logging; (result, log messages)."""
    messages = []
    values = {**SETTINGS, **kw.pop("start_values", {})}
    # not fmpy's logger=: its C proxy would keep pointing at that logger after the call (the
    # next message of any FMU then crashes the process); recorded_messages says more
    with recorded_messages(messages):
        r = fmpy.simulate_fmu(str(path), stop_time=T_END, output_interval=H, start_values=values,
                              debug_logging=True, **kw)
    return r, messages


# ---------------------------------------------------------------- the parameter
@pytest.mark.slow
def test_method_is_a_tunable_integer_after_max_internal_step(fmus):
    """Both kinds declare method alike (Integer, min 0, max 1, its values in the description,
    the start value of the build) and the category logStatistics; fmpy's validator accepts them;
    the inputs follow method, and the deprecated name solver comes last."""
    from fmpy import read_model_description

    for name in ("native", "pythonfmu", "cart"):
        md = read_model_description(str(fmus[name]))
        by = {v.name: v for v in md.modelVariables}
        v = by["method"]
        assert (v.type, v.causality, v.variability, v.initial) == ("Integer", "parameter", "tunable", "exact")
        assert (v.start, v.min, v.max) == ("0" if name == "cart" else "1", "0", "2"), name
        assert all(f"{i} = {n}" in v.description for i, n in enumerate(("rkstab", "stiff", "dop853")))
        assert v.valueReference == by["max_internal_step"].valueReference + 1
        assert "logStatistics" in [c.name for c in md.logCategories]
        assert validate_fmu(str(fmus[name])) == [], name
    cart = {v.name: v.valueReference for v in read_model_description(str(fmus["cart"])).modelVariables}
    assert cart["F"] == cart["method"] + 1
    from models import cart_pendulum

    names = [v.name for v in fmu_variables(cart_pendulum.model())]
    assert names[-6:] == ["solver_rtol", "solver_atol", "max_internal_step", "method", "F", "solver"]


def test_export_refuses_an_unknown_method_by_name(fmus, tmp_path, capsys):
    message = ("method must be one of 'rkstab' (explicit stabilized DOPRI5), 'stiff' (Radau IIA 5), "
               "'dop853' (explicit stabilized Dormand-Prince 8(5,3)) (or 'explicit' = 'rkstab', "
               "'DOP853' = 'dop853'), got 'radau'")
    for kind in KINDS:
        with pytest.raises(ParameterError) as exc:
            mbsfmu.build_fmu(fmus["model"], tmp_path, kind=kind, method="radau")
        assert str(exc.value) == message
    from mbsfmu.cli import main

    assert main(["build", str(fmus["model"]), "-o", str(tmp_path), "--method", "radau"]) == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.glob("*.fmu"))


# ---------------------------------------------------------------- the stiff method
@pytest.mark.slow
def test_stiff_method_takes_a_bounded_number_of_steps(fmus):
    """1 s of the stiff slider-crank at communication steps of 0.01 s: Radau IIA takes a bounded
    number of steps (275 accepted here; it stops at each of the 100 communication points), the explicit
    method ten times as many (2507, limited by stability), to the same state."""
    stiff, log_stiff = run(fmus["native"])
    explicit, log_explicit = run(fmus["native"], start_values={"method": 0})
    (counts_stiff, current), (counts_explicit, other) = statistics(log_stiff), statistics(log_explicit)
    assert (current, other) == ("stiff", "rkstab") and list(counts_stiff) == ["stiff"]
    accepted, rejected, nfev, njev, ndec = counts_stiff["stiff"]
    print(f"stiff slider-crank, 1 s at 0.01 s: stiff {counts_stiff['stiff']}, explicit "
          f"{counts_explicit['rkstab']} (accepted, rejected, nfev, njev, ndec)")
    assert accepted < 400 and njev < 50 and 0 < ndec < accepted
    assert counts_explicit["rkstab"][0] > 5 * accepted
    assert counts_explicit["rkstab"][3:] == (0, 0)
    for n in ("x", "alpha", "beta"):
        assert np.max(np.abs(stiff[n] - explicit[n])) < 1e-6, n
    assert np.max(stiff["constraint_residual"]) < 1e-12


@pytest.mark.slow
def test_states_equal_simulate_with_the_stiff_method(fmus):
    """The native FMU runs the instance layer that simulate(method='stiff', backend='c') runs,
    driven identically (the same do-steps from the same start): the states agree bit for bit."""
    r, _ = run(fmus["native"])
    ref = mbsfmu.simulate(fmus["model"], T_END, H, rtol=SETTINGS["solver_rtol"], atol=SETTINGS["solver_atol"],
                          method="stiff", backend="c")
    assert ref.stats["method"] == "stiff"
    assert np.array_equal(r["time"], ref.t)
    for i, n in enumerate(ref.coordinate_names):
        assert np.array_equal(r[n], ref.y[i]), n
        assert np.array_equal(r[f"der({n})"], ref.yd[i]), n


@pytest.mark.slow
def test_kinds_agree_on_the_stiff_method(fmus):
    """The pythonfmu kind steps with the same engine: the same values at every communication
    point (bit for bit; at least to 1e-12) and the same statistics."""
    r = {f: run(fmus[f]) for f in KINDS}
    a, b = r["native"][0], r["pythonfmu"][0]
    assert np.array_equal(a["time"], b["time"])
    diff = max(float(np.max(np.abs(a[n] - b[n]))) for n in a.dtype.names)
    print(f"stiff method: max difference between the kinds {diff:.3g}")
    assert diff <= 1e-12
    assert all(np.array_equal(a[n], b[n]) for n in a.dtype.names)
    assert statistics(r["native"][1]) == statistics(r["pythonfmu"][1])


# ---------------------------------------------------------------- switching and refusing
def _switched_run(path, tmp_path, folder):
    """rkstab for 0.5 s, then stiff (set between do-steps) with an FMU state taken at the switch;
    0.1 s back on rkstab, the state restored and the run continued: (rows, rows after the restore,
    statistics, the method read after the restore)."""
    s = Slave(path, tmp_path, folder=folder)
    s.instantiate(logging_on=True)
    s.start(SETTINGS, integers={"method": 0})
    rows = list(s.run(0.0, 50, H))
    s.fmu.setInteger([s.vr["method"]], [1])
    state = s.fmu.getFMUstate()
    rows += list(s.run(0.5, 50, H))
    s.fmu.setFMUstate(state)
    s.fmu.setInteger([s.vr["method"]], [0])
    s.run(0.5, 10, H)
    s.fmu.setFMUstate(state)
    method = s.fmu.getInteger([s.vr["method"]])[0]
    again = s.run(0.5, 50, H)
    s.fmu.terminate()
    assert s.errors() == []
    stats = statistics(s.messages)
    s.free()
    return np.array(rows), again, stats, method


@pytest.mark.slow
def test_switching_the_method_between_steps(fmus, tmp_path):
    """Setting method between do-steps switches the method (the integrator restarts); an FMU
    state keeps the method; both kinds switch alike; the statistics name both methods."""
    runs = {f: _switched_run(fmus[f], tmp_path, f) for f in KINDS}
    rows, again, (counts, current), method = runs["native"]
    assert method == 1 and np.array_equal(again, rows[50:])
    assert current == "stiff" and set(counts) == {"rkstab", "stiff"}
    assert counts["rkstab"][0] > 1000 and 0 < counts["stiff"][0] < 200
    assert np.array_equal(runs["pythonfmu"][0], rows) and np.array_equal(runs["pythonfmu"][1], again)
    assert runs["pythonfmu"][3] == 1 and runs["pythonfmu"][2][1] == "stiff"
    # the switched run is the stiff run to the tolerances (the fast mode has decayed either way)
    from fmpy import read_model_description

    stiff, _ = run(fmus["native"])
    names = [v.name for v in read_model_description(str(fmus["native"])).modelVariables
             if v.causality == "output"]
    for i, n in enumerate(names):
        if n in ("x", "alpha", "beta", "der(x)", "der(alpha)", "der(beta)"):
            assert np.max(np.abs(rows[:, i] - stiff[n][1:])) < 1e-5, n


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_an_invalid_method_is_refused_and_changes_nothing(fmus, tmp_path, kind):
    """method = 3, -1, or method set as a Real between do-steps: fmi2Error with a message naming
    the variable and its values; the run continues as if nothing had been called."""
    a, b = (Slave(fmus[kind], tmp_path, name, folder=kind) for name in ("a", "b"))
    for s in (a, b):
        s.instantiate()
        s.start()
        s.run(0.0, 3, H)
    for bad in (3, -1):
        with pytest.raises(FMICallException):
            a.fmu.setInteger([a.vr["method"]], [bad])
        assert f"method = {bad} is not one of its values {VALUES}" in a.errors()[-1]
        assert "fmi2SetInteger" in a.errors()[-1]
    with pytest.raises(FMICallException):
        a.fmu.setReal([a.vr["method"]], [0.0])
    assert "'method'" in a.errors()[-1] and "Integer" in a.errors()[-1]
    assert a.fmu.getInteger([a.vr["method"]]) == [1]
    assert np.array_equal(a.run(0.03, 10, H), b.run(0.03, 10, H))
    for s in (a, b):
        s.free()
    with pytest.raises(Exception, match="fmi2SetInteger|fmi2ExitInitializationMode|status 3"):
        fmpy.simulate_fmu(str(fmus[kind]), stop_time=0.1, output_interval=H, start_values={"method": 5})


# ---------------------------------------------------------------- without a C compiler
@pytest.mark.slow
def test_numpy_path_runs_the_stiff_method_with_scipys_radau(fmus, tmp_path, monkeypatch):
    """No compiler where the pythonfmu FMU is instantiated: 'stiff' is scipy's Radau with the
    formulation's projection after every step (restarted at every do-step), accurate to the
    tolerances; its statistics count accepted steps, right-hand sides and Jacobians.

    Over the transient only (0.05 s): restarted at the exact rest this model reaches (rates of
    1e-35), scipy 1.x's Radau crawls at steps of 1e-6 s, since its Newton rate test compares
    increments at rounding level and declares divergence (measured: 20 655 steps for 0.01 s).
    The engine's Radau does not (tests above)."""
    ref = mbsfmu.simulate(fmus["model"], 0.05, H, rtol=SETTINGS["solver_rtol"], atol=SETTINGS["solver_atol"],
                          method="stiff", backend="c")
    monkeypatch.setenv("CC", "no-such-c-compiler")
    s = Slave(fmus["pythonfmu"], tmp_path, "numpy", folder="numpy")
    s.instantiate(logging_on=True)
    assert any("numpy formulations" in m for st, c, m in s.messages if st == 1)
    s.start(SETTINGS)
    X = s.run(0.0, 5, H)
    s.fmu.terminate()
    counts, current = statistics(s.messages)
    accepted, rejected, nfev, njev, ndec = counts["stiff"]
    print(f"numpy path, scipy Radau, 0.05 s at 0.01 s: {accepted} accepted steps, {nfev} right-hand sides, "
          f"{njev} Jacobians")
    assert current == "stiff" and rejected is None and ndec is None and 0 < accepted < 1000
    for i, n in enumerate(s.outputs):
        if n in ref.coordinate_names:
            k = ref.coordinate_names.index(n)
            assert np.max(np.abs(X[:, i] - ref.y[k][1:])) < 1e-6, n
    assert np.max(X[:, s.outputs.index("constraint_residual")]) < 1e-10
    assert math.isfinite(X[-1, 0])
    s.free()


@pytest.mark.slow
def test_numpy_path_runs_dop853_with_scipys_dop853(fmus, tmp_path, monkeypatch):
    """No compiler: method = 2 (dop853) is scipy's DOP853 with the projection after every step,
    within the tolerances of the engine's DOP853; the statistics name dop853."""
    ref = mbsfmu.simulate(fmus["model"], 0.05, H, rtol=SETTINGS["solver_rtol"], atol=SETTINGS["solver_atol"],
                          method="dop853", backend="c")
    monkeypatch.setenv("CC", "no-such-c-compiler")
    s = Slave(fmus["pythonfmu"], tmp_path, "numpy8", folder="numpy8")
    s.instantiate(logging_on=True)
    s.start(SETTINGS, integers={"method": 2})
    X = s.run(0.0, 5, H)
    s.fmu.terminate()
    counts, current = statistics(s.messages)
    assert current == "dop853" and list(counts) == ["dop853"] and counts["dop853"][0] > 0
    for i, n in enumerate(s.outputs):
        if n in ref.coordinate_names:
            k = ref.coordinate_names.index(n)
            assert np.max(np.abs(X[:, i] - ref.y[k][1:])) < 1e-6, n
    s.free()
