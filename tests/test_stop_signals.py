"""Nothing computed is lost on the other ways a command stops (issue 23 item 5): SIGTERM on
`mbsfmu simulate` and `mbsfmu sweep` behaves like Ctrl-C (what was computed is kept, the local
Dask cluster is shut down, exit status 143), and `mbsfmu animate` keeps the samples it simulated
when the simulation fails or drawing is stopped; without --t-end it simulates the documented
default.  Real processes and real signals, each sent once the command has made progress."""

import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import psutil
import pytest

from mbsfmu.cli import ANIMATE_T_END, EXIT_INTERRUPTED, EXIT_TERMINATED, main

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"

#: a pendulum driven by a torque that grows without bound as t -> 0.3 s: the run fails there
BLOWUP = '''\
from mbsfmu import System, rot_x


def model():
    s = System("blowup")
    a, = s.coordinates("a")
    s.gravity([0, 0, -9.81])
    s.body("P1", rel_rot=rot_x(a), cg_pos=[0, 0, -1.0], mass=1.0, inertia=[0.01, 1, 1])
    s.generalized_force("push", "a", 1 / (0.3 - s.t) ** 2)
    s.initial(a=0.2)
    return s
'''


def test_exit_statuses_are_the_shells():
    assert (EXIT_INTERRUPTED, EXIT_TERMINATED) == (130, 143)


def start(*args):
    return subprocess.Popen([sys.executable, "-m", "mbsfmu", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)


def read_until(proc, pattern, timeout=180.0):
    """stderr of ``proc`` until ``pattern`` appears in it (AssertionError with what was read if the
    process ends or ``timeout`` s pass first): the command has made progress."""
    deadline, seen = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        chunk = os.read(proc.stderr.fileno(), 4096).decode()
        seen += chunk
        if re.search(pattern, seen):
            return seen
        if not chunk:
            break
    proc.kill()
    raise AssertionError(f"no {pattern!r} from {proc.args}: {seen[-2000:]}")


def terminate(proc, timeout=120.0) -> str:
    """SIGTERM to ``proc``; its remaining stderr once it has ended."""
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        proc.kill()
        raise


@pytest.fixture(scope="module")
def elastic(tmp_path_factory):
    """tests/test_long_runs.py's stiff elastic pendulum: about a second of run per 2 s simulated
    with the explicit method, so a run of 100 s is under way for a while."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_long_runs import STIFF_MODEL

    p = tmp_path_factory.mktemp("stop") / "elastic_pendulum.py"
    p.write_text(STIFF_MODEL)
    return p


def test_sigterm_on_simulate_writes_the_partial_result(elastic, tmp_path):
    """As Ctrl-C (tests/test_long_runs.py): the rows computed so far in out.partial.csv on the
    output grid, out.csv not written, exit status 143."""
    out = tmp_path / "out.csv"
    proc = start("simulate", elastic, "--t-end", "100", "--dt", "0.002", "--out", out, "--progress")
    seen = read_until(proc, r"t=(0\.0[1-9]|0\.[1-9]|[1-9])")  # past its first output rows
    stderr = seen + terminate(proc)
    assert proc.returncode == 143, stderr[-2000:]
    assert "mbsfmu: terminated (SIGTERM)" in stderr and "Traceback" not in stderr
    partial = tmp_path / "out.partial.csv"
    assert f"written to {partial}" in stderr and not out.exists()
    data = np.loadtxt(partial, delimiter=",", skiprows=1, ndmin=2)
    assert len(data) >= 5
    np.testing.assert_allclose(data[:, 0], 0.002 * np.arange(len(data)), atol=1e-12)
    rows = re.search(r"partial result up to t=([0-9.]+) s \((\d+) rows\)", stderr)
    assert int(rows.group(2)) == len(data) and float(rows.group(1)) == pytest.approx(data[-1, 0])


def rows_written(path) -> int:
    return max(0, sum(1 for _ in open(path)) - 1) if path.exists() else 0


def sweep_until_rows(args, out, rows):
    """Start `mbsfmu sweep ...` and wait until ``rows`` rows are in ``out``."""
    proc = start("sweep", *args)
    deadline = time.monotonic() + 180
    while rows_written(out) < rows:
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the sweep wrote no rows"
        time.sleep(0.05)
    return proc


def check_rows(out, design_m, before):
    """The rows file after a stop: whole lines only, every row sound and of the design, at least
    the rows that were there when the signal was sent."""
    text = out.read_text()
    assert text.endswith("\n")
    df = pd.read_csv(out)
    assert len(df) >= before and len(df) < len(design_m)
    assert (df["status"] == "ok").all() and df["run"].is_unique
    np.testing.assert_array_equal(df["m"].to_numpy(), design_m[df["run"].to_numpy()])
    return df


SWEEP = ["models/cart_pendulum.py", "--param", "m=0.1:0.5:200", "--metric", "x_max=max(x)",
         "--t-end", "20"]
DESIGN_M = np.linspace(0.1, 0.5, 200)


def test_sigterm_on_a_sweep_keeps_the_rows_and_leaves_no_worker(tmp_path):
    """The default local cluster of worker processes: after SIGTERM every finished row is in the
    rows file, exit status 143 with a word on resuming, and no worker process is left."""
    out = tmp_path / "study.csv"
    proc = sweep_until_rows([*SWEEP, "--workers", "2", "--out", out], out, 2)  # a batch from a worker
    workers = psutil.Process(proc.pid).children(recursive=True)
    assert workers, "the local cluster has worker processes"
    before = rows_written(out)
    stderr = terminate(proc)
    assert proc.returncode == 143, stderr[-2000:]
    assert "mbsfmu: terminated (SIGTERM)" in stderr and "the same command runs the others" in stderr
    assert "Traceback" not in stderr
    _, alive = psutil.wait_procs(workers, timeout=15)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], alive
    df = check_rows(out, DESIGN_M, before)
    print(f"sweep stopped by SIGTERM: {len(df)} of 200 rows kept, {len(workers)} processes ended")


def test_sigterm_on_a_synchronous_sweep_keeps_the_rows(tmp_path):
    out = tmp_path / "study.csv"
    proc = sweep_until_rows([*SWEEP, "--scheduler", "synchronous", "--batch", "1", "--out", out], out, 3)
    before = rows_written(out)
    stderr = terminate(proc)
    assert proc.returncode == 143 and "mbsfmu: terminated (SIGTERM)" in stderr, stderr[-2000:]
    check_rows(out, DESIGN_M, before)


def test_a_failing_animate_keeps_its_samples(tmp_path, capsys):
    """The simulation fails at t ~ 0.3 s: the samples up to there go to <out>.partial.csv (exit
    2, the command to draw them named); nothing is drawn; the partial CSV animates."""
    model = tmp_path / "blowup.py"
    model.write_text(BLOWUP)
    out = tmp_path / "b.gif"
    assert main(["animate", str(model), "--out", str(out), "--dpi", "20"]) == 2
    err = capsys.readouterr().err
    keep = tmp_path / "b.partial.csv"
    assert err.startswith("mbsfmu: error: blowup: ") and "step size underflow" in err
    assert f"partial result up to t=0.28 s (8 rows) written to {keep}" in err
    hint = f"draw it with: mbsfmu animate {keep} --model {model} --out {tmp_path / 'b.partial.gif'}"
    assert hint in err and not out.exists()
    data = np.loadtxt(keep, delimiter=",", skiprows=1, ndmin=2)
    np.testing.assert_allclose(data[:, 0], 0.04 * np.arange(8), atol=1e-12)
    assert main(hint.split(": ", 1)[1].split()[1:] + ["--dpi", "20"]) == 0
    assert "8 frames" in capsys.readouterr().out


def test_sigterm_while_drawing_keeps_the_simulated_samples(tmp_path):
    """1001 frames take a minute to draw: SIGTERM once drawing has begun stops at once (143),
    no animation file, the complete simulated samples in <out>.partial.csv."""
    out = tmp_path / "dp.html"
    proc = start("animate", MODELS / "double_pendulum.py", "--t-end", "20", "--dt", "0.02", "--out", out)
    seen = read_until(proc, r"simulated 1001 samples to t=20 s; drawing")
    started = time.monotonic()
    stderr = seen + terminate(proc, timeout=60)
    assert proc.returncode == 143, stderr[-2000:]
    assert time.monotonic() - started < 30
    keep = tmp_path / "dp.partial.csv"
    assert "mbsfmu: terminated (SIGTERM)" in stderr and "Traceback" not in stderr
    assert f"the animation was not written; the 1001 simulated samples (to t=20 s) are in {keep}" in stderr
    assert not out.exists()
    data = np.loadtxt(keep, delimiter=",", skiprows=1, ndmin=2)
    assert data.shape == (1001, 5)
    np.testing.assert_allclose(data[:, 0], 0.02 * np.arange(1001), atol=1e-12)


def test_animate_a_model_without_t_end_uses_the_default(tmp_path, capsys):
    out = tmp_path / "dp.gif"
    assert main(["animate", str(MODELS / "double_pendulum.py"), "--dt", "0.5", "--dpi", "20",
                 "--out", str(out), "--backend", "numpy"]) == 0
    n = int(ANIMATE_T_END / 0.5) + 1
    captured = capsys.readouterr()
    assert f"{n} frames" in captured.out and out.exists()
    assert f"simulated {n} samples to t={ANIMATE_T_END:g} s" in captured.err
