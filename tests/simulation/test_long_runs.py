"""Long runs: progress reports, the stiffness diagnostic, and nothing lost when a run fails or is
interrupted (API and CLI, the CLI with a real SIGINT to a second process)."""

import math
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from stiff_pendulum import STIFF_MODEL

import mbsfmu
from mbsfmu import SimulationError, SimulationInterrupted, StiffnessWarning, System, rot_z

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


@pytest.fixture(scope="module")
def stiff_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("stiff") / "elastic_pendulum.py"
    p.write_text(STIFF_MODEL)
    return p


def undamped_oscillator():
    s = System("fast_oscillator")
    k, m = s.constants(k=1e12, m=1.0)
    x, = s.coordinates("x")
    s.body("mass", rel_pos=[x, 0, 0], mass=m, inertia=[0, 0, 0])
    s.generalized_force("spring", "x", -k * x)
    s.initial(x=1e-6)
    return s


def run_until_warning(model, t_end, limit=20.0, **kw):
    """Simulate (the explicit method unless ``kw`` says otherwise), stop (by Ctrl-C from the
    progress callback) as soon as a warning arrived or after `limit` s; returns (warnings,
    seconds, the interruption)."""
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        def progress(t, te):
            if caught or time.perf_counter() - t0 > limit:
                raise KeyboardInterrupt

        with pytest.raises(SimulationInterrupted) as info:
            mbsfmu.simulate(model, t_end=t_end, progress=progress, progress_every=0.0, **kw)
    return [w for w in caught if w.category is StiffnessWarning], time.perf_counter() - t0, info.value


@pytest.mark.parametrize("method", ["explicit", "DOP853"])
def test_stiff_model_is_diagnosed_within_seconds(stiff_file, method):
    """RKSTAB and the engine's DOP853 alike: their steps are limited by the stability boundary
    (h |lambda| ~ 3.3 and 6.1), which the engine's diagnostic reports."""
    found, _, stop = run_until_warning(mbsfmu.load_model(stiff_file), 2.0, method=method)
    # promptly, counted in work rather than wall time (which a loaded machine or a sanitizer
    # build stretches): within the first 0.1 s of model time and 1e5 right-hand sides
    assert len(found) == 1
    assert stop.result.t[-1] <= 0.1 and stop.result.stats["nfev"] < 100_000
    text = str(found[0].message)
    assert "limited by stability" in text and "method='stiff'" in text and "--method stiff" in text
    # the estimate of the dominant eigenvalue is the model's: a double root at -sqrt(k/m) = -1e6
    lam = float(text.split("|lambda| ~ ")[1].split(" ")[0])
    assert lam == pytest.approx(1e6, rel=0.2)
    assert isinstance(stop, KeyboardInterrupt) and stop.result.partial


def test_the_hint_is_right_stiff_method_runs_the_model(stiff_file):
    """method='stiff' integrates the 2 s in a few hundred evaluations, and the swing equals the
    rigid pendulum's (the spring stretches by m g / k ~ 1e-11 m): phi'' = -(g/L) sin(phi)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", StiffnessWarning)  # an implicit method is never warned
        res = mbsfmu.simulate(stiff_file, t_end=2.0, dt=0.1, method="stiff", rtol=1e-8)
    assert res.stats["nfev"] < 3000
    ref = solve_ivp(lambda t, x: [x[1], -9.81 * math.sin(x[0])], (0, 2.0), [0.5, 0.0],
                    t_eval=res.t, rtol=1e-12, atol=1e-12)
    assert np.max(np.abs(res["phi"] - ref.y[0])) < 1e-6
    assert np.max(np.abs(res["r"])) < 1e-10


@pytest.mark.slow
def test_an_undamped_fast_oscillation_is_not_called_stiff():
    """k = 1e12 N/m on 1 kg without damping: the explicit method resolves the 1e6 rad/s motion
    in steps limited by accuracy (an implicit method would have to resolve it too), so there is
    no stiffness warning, however many steps it takes (the engine makes about 2.5e7 right-hand
    sides a second here)."""
    found, _, stop = run_until_warning(undamped_oscillator(), 10.0, limit=3.0)
    assert found == [] and stop.result.stats["nfev"] > 1_000_000


def pendulum():
    s = System("pendulum")
    L, g = s.constants(L=1.0, g=9.81)
    a, = s.coordinates("a")
    s.gravity([0, -g, 0])
    s.body("bob", rel_rot=rot_z(a), cg_pos=[0, -L, 0], mass=1.0, inertia=[0.01, 0.01, 0.01])
    s.initial(a=1.0)
    return s


@pytest.mark.parametrize("name", ["pendulum", "double_pendulum", "cart_pendulum"])
@pytest.mark.parametrize("method", ["explicit", "DOP853"])
def test_plain_pendulums_are_never_called_stiff(name, method):
    """Issue 23: a double pendulum over 10^4 s at rtol 1e-10 (1.8e6 steps) was called "probably
    stiff" because its steps were short relative to the interval.  Many steps limited by accuracy
    are not stiffness: no warning at the default and tight tolerances over long spans, nor at
    loose ones, where the step of an ordinary motion reaches the stability boundary itself (on
    the engine: about 4e6 steps in all)."""
    model = pendulum() if name == "pendulum" else mbsfmu.load_model(MODELS / f"{name}.py")
    with warnings.catch_warnings():
        warnings.simplefilter("error", StiffnessWarning)
        for rtol, t_end in ((1e-8, 1e4), (1e-10, 2e3), (1e-12, 500.0), (1e-3, 1e4), (1e-2, 1e4)):
            try:
                mbsfmu.simulate(model, t_end=t_end, dt=t_end / 100, rtol=rtol, method=method, backend="c")
            except SimulationError:
                assert rtol >= 1e-3  # a loose tolerance may end in an error, never in the warning


def stiff_slider_crank(k):
    """models/slider_crank.py with the slider held at x = 0.6 by a critically damped spring-damper
    of stiffness k (as in tests/engine/test_engine.py)."""
    s = mbsfmu.load_model(MODELS / "slider_crank.py")
    x = s.coordinates_["x"]
    kk, dd = s.constants(k_spring=k, d_spring=2.0 * math.sqrt(k))
    s.generalized_force("holder", "x", -kk * (x.symbol - 0.6) - dd * x.velocity)
    return s


@pytest.mark.parametrize("backend", ["c", "numpy"])
@pytest.mark.parametrize("model", ["slider_crank_1e10", "flyball_governor"])
def test_really_stiff_models_are_diagnosed(model, backend):
    """The slider-crank with its slider held by a critically damped 1e10 N/m spring-damper (in
    the loop: Hairer's estimate h |lambda| spans 0.1-100 from step to step, so one low value
    must not restart the count) and seed 003's flyball governor at rtol 1e-6: both warned,
    within the first 0.05 s of a 10 s run."""
    if model == "flyball_governor":
        system, rtol = mbsfmu.load_model(MODELS / "flyball_governor.py"), 1e-6
    else:
        system, rtol = stiff_slider_crank(1e10), 1e-8
    found, _, stop = run_until_warning(system, 10.0, backend=backend, rtol=rtol)
    assert len(found) == 1 and stop.result.t[-1] <= 0.05
    text = str(found[0].message)
    assert "the step is limited by stability, not accuracy" in text and "method='stiff'" in text


@pytest.mark.parametrize("name, t_end", [("double_pendulum", 20.0), ("cart_pendulum", 20.0)])
def test_ordinary_runs_are_not_warned(name, t_end):
    with warnings.catch_warnings():
        warnings.simplefilter("error", StiffnessWarning)
        mbsfmu.simulate(MODELS / f"{name}.py", t_end=t_end, rtol=1e-10)


def test_progress_callback():
    calls = []
    mbsfmu.simulate(MODELS / "slider_crank.py", t_end=2.0, progress=lambda t, te: calls.append((t, te)))
    times = [c[0] for c in calls]
    assert calls[0] == (0.0, 2.0) and calls[-1] == (2.0, 2.0)
    assert all(b >= a for a, b in zip(times, times[1:]))
    with pytest.raises(mbsfmu.ParameterError, match=r"progress must be a function"):
        mbsfmu.simulate(MODELS / "slider_crank.py", t_end=2.0, progress=3)


@pytest.mark.parametrize("name, method", [("double_pendulum", "explicit"), ("slider_crank", "explicit"),
                                          ("slider_crank", "stiff")])
def test_interrupted_run_keeps_the_rows_it_computed(name, method):
    """Ctrl-C (a KeyboardInterrupt from the progress callback) after about half the run: the
    partial result's rows are exactly the first rows of the complete run."""
    full = mbsfmu.simulate(MODELS / f"{name}.py", t_end=1.0, dt=0.05, method=method)

    def stop_halfway(t, te):
        if t > 0.5:
            raise KeyboardInterrupt

    with pytest.raises(SimulationInterrupted) as info:
        mbsfmu.simulate(MODELS / f"{name}.py", t_end=1.0, dt=0.05, method=method, progress=stop_halfway,
                        progress_every=0.0)
    part = info.value.result
    k = len(part.t)
    assert part.partial and "interrupted" in part.stop_reason
    assert 0.5 <= part.t[-1] < 1.0 and isinstance(info.value, KeyboardInterrupt)
    np.testing.assert_array_equal(part.t, full.t[:k])
    np.testing.assert_array_equal(part.y, full.y[:, :k])
    np.testing.assert_array_equal(part.yd, full.yd[:, :k])


def test_failed_run_keeps_the_rows_before_the_failure():
    def force(t):
        return math.nan if t > 0.5 else math.sin(t)

    full = mbsfmu.simulate(MODELS / "cart_pendulum.py", t_end=0.5, dt=0.05, inputs={"F": math.sin})
    with pytest.raises(SimulationError, match=r"input 'F' is not finite at t=") as info:
        mbsfmu.simulate(MODELS / "cart_pendulum.py", t_end=1.0, dt=0.05, inputs={"F": force})
    part = info.value.result
    assert part.partial and "not finite" in part.stop_reason
    k = len(part.t)
    assert k >= 8 and part.t[-1] <= 0.5
    np.testing.assert_allclose(part.y, full.y[:, :k], rtol=0, atol=1e-9)


# ------------------------------------------------------------------ CLI


def cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "mbsfmu", *map(str, args)], capture_output=True,
                          text=True, cwd=kw.pop("cwd", ROOT), timeout=kw.pop("timeout", 300), **kw)


def test_cli_ctrl_c_writes_the_partial_result(stiff_file, tmp_path):
    """A real SIGINT to `mbsfmu simulate` running the stiff model with the explicit method: exit
    code 130, the rows computed so far in out.partial.csv, out.csv not written."""
    out = tmp_path / "out.csv"
    # (100 s: the engine's explicit run takes about a second per 2 s of this model)
    proc = subprocess.Popen([sys.executable, "-m", "mbsfmu", "simulate", str(stiff_file), "--t-end",
                             "100", "--dt", "0.002", "--out", str(out), "--progress"],
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    # wait until the run is under way: the progress bar has passed its first output rows
    deadline = time.time() + 120
    seen = ""
    while time.time() < deadline:
        chunk = os.read(proc.stderr.fileno(), 4096).decode()
        seen += chunk
        if re.search(r"t=(0\.0[1-9]|0\.[1-9]|[1-9])", seen) or not chunk:
            break
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=60)[1], None
    stderr = seen + (rest or "")
    assert proc.returncode == 130, stderr[-2000:]
    assert "StiffnessWarning" not in stderr and "mbsfmu: warning:" in stderr  # our own line
    assert not out.exists()
    partial = tmp_path / "out.partial.csv"
    data = np.loadtxt(partial, delimiter=",", skiprows=1, ndmin=2)
    assert len(data) >= 5
    np.testing.assert_allclose(data[:, 0], 0.002 * np.arange(len(data)), atol=1e-12)
    assert f"written to {partial}" in stderr


@pytest.mark.slow
def test_cli_checks_output_paths_before_running(tmp_path):
    model = MODELS / "cart_pendulum.py"
    cases = [
        (tmp_path / "missing" / "x.csv", "the directory"),
        (tmp_path, "is a directory"),
        (pathlib.Path("/proc/mbsfmu.csv"), "cannot write in '/proc'"),
    ]
    for out, message in cases:
        started = time.perf_counter()
        r = cli("simulate", model, "--t-end", "1e9", "--dt", "1", "--out", out)
        assert r.returncode == 2 and message in r.stderr and str(out) in r.stderr
        assert time.perf_counter() - started < 30  # refused before the (endless) run
    r = cli("simulate", model, "--t-end", "1", "--out", tmp_path / "ok.csv", "--plot",
            tmp_path / "nowhere" / "p.png")
    assert r.returncode == 2 and "--plot" in r.stderr and not (tmp_path / "ok.csv").exists()


@pytest.mark.slow
def test_cli_reports_an_exception_in_model_with_file_and_line(tmp_path):
    f = tmp_path / "broken_model.py"
    f.write_text("from mbsfmu import System\n\n\ndef model():\n    s = System('b')\n"
                 "    data = open('no_such_table.csv').read()\n    return s\n")
    r = cli("simulate", f, "--t-end", "1", "--out", tmp_path / "o.csv", cwd=tmp_path)
    assert r.returncode == 2
    assert f"{f}, line 6: model() failed: FileNotFoundError" in r.stderr
    assert "no_such_table.csv" in r.stderr and "Traceback" not in r.stderr


def test_rotation_of_a_model_is_checked():
    s = System("r")
    q, = s.coordinates("q")
    with pytest.raises(mbsfmu.ModelError, match=r"body 'B' rel_rot: the matrix is not a rotation"):
        s.body("B", rel_rot=[[2, 0, 0], [0, 1, 0], [0, 0, 1]], mass=1, inertia=[1, 1, 1])
    assert "B" not in s.bodies
    s.body("B", rel_rot=rot_z(q), mass=1, inertia=[1, 1, 1])
