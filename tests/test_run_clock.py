"""The times simulate reports are what they say (issue 23): on a fresh compile cache the engine's
compilation is in ``compile_seconds`` (within ``setup_seconds``), never in ``run_seconds`` or
``cpu_seconds``, which time the integration alone; the CLI and the demo print them apart."""

import re
import time

import pytest

import mbsfmu
from mbsfmu import System, derive, rot_x
from mbsfmu.cli import main
from mbsfmu.simulation.run_clock import timing_text

TIMES = ("setup_seconds", "compile_seconds", "run_seconds", "cpu_seconds")


def tiny(name):
    """A one-link pendulum (a model no other test compiles, so its engine is built here)."""
    s = System(name)
    m, L, g = s.constants(m=1.0, L=0.5, g=9.81)
    a, = s.coordinates("a")
    s.gravity([0, 0, -g])
    s.body("link", rel_rot=rot_x(a), cg_pos=[0, 0, -L], mass=m, inertia=[0.01, 0.01, 0.01])
    s.initial(a=0.3)
    return s


def test_compilation_is_reported_apart_from_the_run(cache):
    """The first run of a new model on a fresh cache spends seconds compiling the engine and
    well under a millisecond integrating 1 s (40 steps); the second run compiles nothing."""
    s = tiny("clock_pendulum")
    derive(s)  # derived before the clock starts: the call times its own work only
    start = time.perf_counter()
    first = mbsfmu.simulate(s, t_end=1.0, dt=0.01, backend="c")
    wall = time.perf_counter() - start
    st = first.stats
    print(f"fresh cache: {timing_text(st)}, call {wall:.3f} s")
    assert all(st[k] >= 0 for k in TIMES)
    assert st["compile_seconds"] > 0.2  # gcc ran (about 2.6 s on a quiet machine)
    assert st["compile_seconds"] <= st["setup_seconds"] <= wall
    assert st["run_seconds"] < 0.05 and st["cpu_seconds"] < 0.05  # measured 5e-5 s
    assert st["setup_seconds"] + st["run_seconds"] <= wall
    assert st["run_seconds"] < 0.01 * st["compile_seconds"]
    second = mbsfmu.simulate(s, t_end=1.0, dt=0.01, backend="c").stats
    assert second["compile_seconds"] < 0.01 and second["setup_seconds"] < 0.5
    assert second["nfev"] == st["nfev"]  # the same run


@pytest.mark.parametrize("backend, method", [("numpy", "explicit"), ("c", "RK45"), ("c", "stiff")])
def test_every_path_reports_the_four_times(cache, backend, method):
    """The reference stepper (numpy: nothing compiled; a scipy method on backend 'c': the C
    kernel compiled here) and the engine's stiff method report the same four times."""
    st = mbsfmu.simulate(tiny(f"clock_{backend}_{method}"), t_end=0.5, dt=0.05, backend=backend,
                         method=method).stats
    assert all(k in st and st[k] >= 0 for k in TIMES)
    assert st["compile_seconds"] <= st["setup_seconds"]
    if backend == "numpy":
        assert st["compile_seconds"] == 0.0
    else:
        assert st["compile_seconds"] > 0.05


def test_an_interrupted_run_keeps_its_times():
    def stop(t, t_end):
        if t > 0.2:
            raise KeyboardInterrupt

    with pytest.raises(mbsfmu.SimulationInterrupted) as info:
        mbsfmu.simulate(tiny("clock_stopped"), t_end=1.0, dt=0.01, progress=stop, progress_every=0.0,
                        backend="numpy")
    st = info.value.result.stats
    assert all(st[k] >= 0 for k in TIMES) and st["run_seconds"] > 0


def test_cli_prints_run_and_set_up_apart(tmp_path, capsys):
    model = tmp_path / "clock_cli.py"
    model.write_text("from mbsfmu import System, rot_x\n\n\ndef model():\n"
                     "    s = System('clock_cli')\n    a, = s.coordinates('a')\n"
                     "    s.gravity([0, 0, -9.81])\n"
                     "    s.body('link', rel_rot=rot_x(a), cg_pos=[0, 0, -0.5], mass=1.0,\n"
                     "           inertia=[0.01] * 3)\n"
                     "    s.initial(a=0.3)\n    return s\n")
    assert main(["simulate", str(model), "--t-end", "1", "--out", str(tmp_path / "o.csv")]) == 0
    out = capsys.readouterr().out
    number = r"[0-9.e+-]+ m?s"
    code = rf"( \(C code generated and compiled or loaded in {number}\))?"
    assert re.search(rf"101 rows -> .*o\.csv \(rkstab, backend c, \d+ evaluations, run {number} "
                     rf"\({number} CPU\), set-up {number}{code}\)", out), out


def test_timing_text():
    st = {"setup_seconds": 2.714, "compile_seconds": 2.636, "run_seconds": 4.7e-5, "cpu_seconds": 4.4e-5}
    assert timing_text(st) == ("run 0.047 ms (0.044 ms CPU), set-up 2.71 s (C code generated and compiled or "
                               "loaded in 2.64 s)")
    st.update(compile_seconds=0.0, setup_seconds=0.0021, run_seconds=3.3, cpu_seconds=3.2)
    assert timing_text(st) == "run 3.3 s (3.2 s CPU), set-up 2.1 ms"
