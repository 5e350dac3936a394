"""`mbsfmu run`: the diagram of an SSP file in the block-diagram runner from the command line.

The SSP: the cart-pendulum native FMU in a loop with an integrating controller exported as an FMU
(the diagram of tests/runner/test_ssp.py).  The command's CSV equals fmpy's own SSP simulation of
the same file (the independent reference; the runner's row k + 1 is fmpy's row k) to the last bit;
with --live the scope's stream, read by this test while the command runs in its own process,
ends with the CSV's last row; the plant is drawn from the run (--animate); bad options are
refused before anything runs and write nothing.
"""

import re
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from fmu_support import MODELS, TOL

pytest.importorskip("pythonfmu")

from fmpy.ssp.simulation import simulate_ssp  # noqa: E402, F401  (fmpy's SSP support is there)

from blocks.control import PID  # noqa: E402
from blocks.fmu import FMU  # noqa: E402
from mbsfmu.cli import main  # noqa: E402
from mbsfmu.runner.block_fmu import export_block_fmu  # noqa: E402
from mbsfmu.runner.diagram import Diagram  # noqa: E402
from mbsfmu.runner.live import read_events  # noqa: E402
from mbsfmu.runner.ssp import export_ssp, import_ssp, simulate_ssp_fmpy  # noqa: E402

H = 1.0 / 64
ROOT = MODELS.parent


@pytest.fixture(scope="module")
def ssp(tmp_path_factory, built_fmu):
    out = tmp_path_factory.mktemp("run")
    d = Diagram(H)
    d.add("plant", FMU(built_fmu(MODELS / "cart_pendulum.py"), parameters={**TOL, "mc": 2.0},
                       start_values={"theta": 0.05}))
    d.add("ctrl", FMU(export_block_fmu(PID(kp=0.0, ki=5.0), out / "ctrl.fmu", step_size=H), sample_time=H))
    d.connect("plant.x", "ctrl.u")
    d.connect("ctrl.y", "plant.F")
    return export_ssp(d, out / "loop.ssp")


def test_run_writes_what_fmpy_computes_and_draws_the_plant(ssp, tmp_path, capsys):
    out, png, page = tmp_path / "r.csv", tmp_path / "r.png", tmp_path / "r.html"
    assert main(["run", str(ssp), "--t-end", "1", "--out", str(out), "--plot", str(png),
                 "--animate", str(page)]) == 0
    said = capsys.readouterr().out
    assert "loop.ssp: 65 rows of" in said and str(out) in said
    ours = pd.read_csv(out)
    ref = simulate_ssp_fmpy(ssp, stop_time=1.0)
    assert len(ours) == len(ref) + 1
    for name in ("plant.x", "plant.theta", "ctrl.y"):
        np.testing.assert_array_equal(ours[name].to_numpy()[1:], ref[name], err_msg=name)
    assert png.stat().st_size > 5_000
    api = tmp_path / "api.html"
    import_ssp(ssp).run(1.0).animate(api)  # the runner's own page of the same run (tests/runner)
    assert "<title>plant: Cart with inverted pendulum</title>" in page.read_text()
    assert page.read_bytes() == api.read_bytes()


def test_run_live_streams_the_run_to_its_last_row(ssp, tmp_path):
    out = tmp_path / "live.csv"
    proc = subprocess.Popen([sys.executable, "-m", "mbsfmu", "run", str(ssp), "--t-end", "2", "--realtime",
                             "--live", "--window", "1", "--signal", "plant.x", "--signal", "ctrl.y",
                             "--out", str(out)], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            cwd=ROOT)
    try:
        seen, deadline = "", time.monotonic() + 120
        while "live view of the run" not in seen:
            assert proc.poll() is None and time.monotonic() < deadline, seen + proc.stderr.read()
            seen += proc.stderr.readline()
        url = re.search(r"(http://127\.0\.0\.1:\d+/)", seen).group(1)
        events = list(read_events(url, timeout=60))
    finally:
        stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    meta = next(d for e, d in events if e == "meta")
    assert meta["signals"] == ["plant.x", "ctrl.y"]
    last = [d for e, d in events if e == "data"][-1]
    rows = pd.read_csv(out)
    assert last["rows"] == len(rows) == 129
    np.testing.assert_array_equal(last["last"], rows[["plant.x", "ctrl.y"]].to_numpy()[-1])
    assert events[-1][0] == "end" and events[-1][1]["status"] == "finished"
    assert "real time at rtf 1" in stdout


@pytest.mark.parametrize("args, says", [
    (["--animate", "{tmp}/a.png"], "--animate '{tmp}/a.png': the drawn plant of a run is a 3D viewer page"),
    (["--signal", "plant.x"], "--signal sets the live scope: give it with --live"),
    (["--window", "5"], "--window sets the live scope: give it with --live"),
    (["--port", "-1"], "port must be"),
    (["--live", "--window", "0"], "window must be"),
    (["--live", "--signal", "plant.nope"], "plant.nope"),
    (["--record", "plant.nope"], "plant.nope"),
    (["--deformation-scale", "10"], "--deformation-scale sets the drawn plant: give it with --animate"),
    (["--trace", "rod"], "--trace sets the drawn plant: give it with --animate"),
    (["--animate", "{tmp}/a.html", "--deformation-scale", "0"],
     "deformation_scale must be a finite number > 0"),
])
def test_run_refuses_bad_options_and_writes_nothing(ssp, tmp_path, capsys, args, says):
    out = tmp_path / "x.csv"
    args = [a.format(tmp=tmp_path) for a in args]
    assert main(["run", str(ssp), "--t-end", "0.5", "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mbsfmu: error: ") and says.format(tmp=tmp_path) in err, err
    assert not out.exists() and not list(tmp_path.glob("*.partial.csv"))


def test_run_names_a_file_that_is_no_ssp(tmp_path, capsys):
    bad = tmp_path / "bad.ssp"
    bad.write_text("not a zip")
    assert main(["run", str(bad), "--t-end", "1", "--out", str(tmp_path / "x.csv")]) == 2
    assert "mbsfmu: error: bad.ssp is not an SSP (not a zip archive)" in capsys.readouterr().err


def test_a_failed_run_keeps_its_signals(tmp_path, built_fmu, capsys):
    """A loop that blows up (the controller's gain 1e200): the command says where it failed and
    keeps the rows recorded before the failing step in <out>.partial.csv, never in <out>."""
    d = Diagram(H)
    d.add("plant", FMU(built_fmu(MODELS / "cart_pendulum.py"), parameters={**TOL},
                       start_values={"theta": 0.05}))
    d.add("ctrl", FMU(export_block_fmu(PID(kp=1e200), tmp_path / "wild.fmu", step_size=H), sample_time=H))
    d.connect("plant.x", "ctrl.u")
    d.connect("ctrl.y", "plant.F")
    path = export_ssp(d, tmp_path / "wild.ssp")
    out = tmp_path / "w.csv"
    assert main(["run", str(path), "--t-end", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    got = re.search(r"the signals up to t=([0-9.e-]+) s \((\d+) rows\) written to (\S+)", err)
    assert err.startswith("mbsfmu: error: ") and got, err
    partial = pd.read_csv(tmp_path / "w.partial.csv")
    assert not out.exists() and got.group(3) == str(tmp_path / "w.partial.csv")
    assert len(partial) == int(got.group(2)) >= 1 and partial["time"].iloc[-1] == float(got.group(1))
    np.testing.assert_allclose(partial["time"], H * np.arange(len(partial)), rtol=0, atol=1e-12)


def test_run_passes_the_viewer_options_to_the_drawn_plant(ssp, tmp_path, capsys):
    """--trace/--axes reach the page as Result.animate's traces/axes; a deformation scale the
    plant cannot take (a rigid cart pendulum) is refused after the run, which keeps its CSV."""
    out, page, api = tmp_path / "r.csv", tmp_path / "r.html", tmp_path / "api.html"
    assert main(["run", str(ssp), "--t-end", "0.5", "--out", str(out), "--animate", str(page),
                 "--trace", "rod", "--axes", "cart"]) == 0
    import_ssp(ssp).run(0.5).animate(api, traces=["rod"], axes=["cart"])
    assert page.read_bytes() == api.read_bytes()
    plain = tmp_path / "plain.html"
    import_ssp(ssp).run(0.5).animate(plain)
    assert plain.read_bytes() != page.read_bytes()
    capsys.readouterr()
    kept = tmp_path / "k.csv"
    assert main(["run", str(ssp), "--t-end", "0.5", "--out", str(kept), "--animate", str(tmp_path / "k.html"),
                 "--deformation-scale", "10"]) == 2
    assert "has no flexible body" in capsys.readouterr().err
    assert len(pd.read_csv(kept)) == 33 and not (tmp_path / "k.html").exists()
