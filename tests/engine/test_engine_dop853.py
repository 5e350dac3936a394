"""The engine's order-8 method (``method='dop853'`` on backend 'c', FMU ``method`` = 2): the
stabilized Dormand-Prince 8(5,3) of mbsfmu/runtime/mbs_dop853.c inside the instance layer.

References: a tight run of the engine's RKSTAB (itself tested against the numpy reference in
tests/engine/test_engine.py), energy conservation of the conservative double pendulum, scipy's DOP853
with the same projection (the numpy backend), and the native FMU driven through fmpy, which runs
the same instance layer and must give the same states bit for bit.
"""

import numpy as np
import pytest

import mbsfmu

fmpy = pytest.importorskip("fmpy")


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))


@pytest.fixture(scope="module")
def crank_reference():
    """The slider-crank over 5 s by RKSTAB at rtol 1e-13 (error ~1e-11)."""
    return mbsfmu.simulate("models/slider_crank.py", t_end=5.0, dt=0.05, rtol=1e-13, atol=1e-14, backend="c")


@pytest.mark.parametrize("form", ["qr", "svd", "projection", "partition", "baumgarte"])
def test_every_formulation_runs_dop853_to_its_tolerance(crank_reference, form):
    """rtol 1e-10: within 1e-8 of the tight reference everywhere, constraints kept by the
    projecting formulations to 1e-12, and the engine's counters say DOP853 ran."""
    r = mbsfmu.simulate("models/slider_crank.py", t_end=5.0, dt=0.05, rtol=1e-10, backend="c",
                        method="dop853", formulation=form)
    assert r.stats["method"] == "dop853" and r.stats["backend"] == "c"
    err = _rel(r.y, crank_reference.y)
    print(f"{form}: DOP853 rtol 1e-10, error {err:.2e}, NFCN {r.stats['nfev']}")
    assert err < 1e-8
    if form != "baumgarte":
        assert r.constraint_residual.max() < 1e-12


def test_dop853_needs_fewer_evaluations_than_rkstab_at_tight_tolerances(crank_reference):
    """At rtol 1e-10 the order-8 pair takes fewer right-hand sides than RKSTAB and is at least
    as accurate (measured over 5 s: about 0.7 times the NFCN)."""
    kw = {"t_end": 5.0, "dt": 0.05, "rtol": 1e-10, "backend": "c"}
    d = mbsfmu.simulate("models/slider_crank.py", method="dop853", **kw)
    k = mbsfmu.simulate("models/slider_crank.py", method="explicit", **kw)
    print(f"NFCN DOP853 {d.stats['nfev']}, RKSTAB {k.stats['nfev']}; errors "
          f"{_rel(d.y, crank_reference.y):.2e}, {_rel(k.y, crank_reference.y):.2e}")
    assert d.stats["nfev"] < 0.9 * k.stats["nfev"]
    assert _rel(d.y, crank_reference.y) <= _rel(k.y, crank_reference.y)


def test_tree_on_dop853_conserves_energy():
    """The double pendulum (no damping) on the articulated-body kernel: the total energy stays
    constant to 1e-9 relative over 10 s at rtol 1e-12."""
    r = mbsfmu.simulate("models/double_pendulum.py", t_end=10.0, dt=0.05, rtol=1e-12, backend="c",
                        method="dop853")
    assert r.stats["method"] == "dop853"
    e = r.energy()["total"]
    assert np.ptp(e) < 1e-9 * max(1.0, np.abs(e).max())


def test_engine_and_scipy_dop853_agree_to_the_tolerance(crank_reference):
    """Backend 'numpy' runs scipy's DOP853 with the formulation's projection after each step (a
    different step-size controller): both within their tolerance of the reference and of each
    other."""
    kw = {"t_end": 2.0, "dt": 0.05, "rtol": 1e-9, "method": "dop853"}
    a = mbsfmu.simulate("models/slider_crank.py", backend="c", **kw)
    b = mbsfmu.simulate("models/slider_crank.py", backend="numpy", **kw)
    assert b.stats["backend"] == "numpy"
    ref = crank_reference.y[:, : a.y.shape[1]]
    assert _rel(a.y, ref) < 1e-7 and _rel(b.y, ref) < 1e-7 and _rel(a.y, b.y) < 1e-7


@pytest.mark.slow
def test_native_fmu_with_method_dop853_equals_simulate(tmp_path):
    """A native FMU built with method='dop853', driven by fmpy, takes the steps simulate takes:
    the same states bit for bit at every communication point; its statistics name dop853."""
    from mbsfmu.fmu.native import build_native_fmu

    fmu = build_native_fmu("models/slider_crank.py", tmp_path / "crank.fmu", method="dop853")
    from mbsfmu.fmu.fmpy_callbacks import recorded_messages

    recorded = []
    with recorded_messages(recorded):  # not fmpy's logger=, whose C proxy dangles after the call
        r = fmpy.simulate_fmu(str(fmu), stop_time=2.0, output_interval=0.01, debug_logging=True,
                              start_values={"solver_rtol": 1e-9, "solver_atol": 1e-10})
    messages = [(category, message) for _, category, message in recorded]
    ref = mbsfmu.simulate("models/slider_crank.py", 2.0, 0.01, rtol=1e-9, atol=1e-10, method="dop853",
                          backend="c")
    assert np.array_equal(r["time"], ref.t)
    for i, n in enumerate(ref.coordinate_names):
        assert np.array_equal(r[n], ref.y[i]), n
        assert np.array_equal(r[f"der({n})"], ref.yd[i]), n
    stats = [m for c, m in messages if c == "logStatistics"][-1]
    assert "method dop853 (current)" in stats and "method rkstab" not in stats


def test_a_failed_dop853_run_names_the_model_and_keeps_the_partial_result():
    """A force of 1e300 N makes the state non-finite: SimulationError naming the model, with the
    output points reached (the same path as RKSTAB's)."""
    from mbsfmu.core.errors import SimulationError

    with pytest.raises(SimulationError) as info:
        mbsfmu.simulate("models/cart_pendulum.py", t_end=1.0, dt=0.01, backend="c", method="dop853",
                        inputs={"F": 1e300})
    exc = info.value
    assert "failed" in str(exc) and "cart_pendulum" in str(exc)
    if exc.result is not None:
        assert exc.result.partial and exc.result.t[-1] < 1.0

