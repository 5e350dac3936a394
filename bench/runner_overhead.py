"""Per-step overhead of the diagram runner, and its real-time jitter at 1 kHz.

The diagram: ``src`` (a step of the force at t = 0.5 s) -> ``msd`` (a native FMU of a 1-DOF
mass-spring model, m = 1 kg, k = 10 N/m, input force ``F``, outputs ``x`` and ``der(x)``) ->
``gain`` (0.5 x), run by :class:`mbsfmu.runner.Diagram` at 1 ms steps.  The FMU is built with
``mbsfmu.build_fmu`` into ``bench/out/runner_overhead/``; the FMU block is ``blocks.fmu.FMU``.

What is timed (``time.perf_counter`` around whole loops; the best of ``--repeat`` runs):

* fmpy: the same FMU through fmpy's ``FMU2Slave`` by hand, per step
  ``setReal([F], [f(t)])``, ``doStep(t, h)``, ``getReal([x, der(x)])`` and ``0.5 * x`` in Python:
  what a hand-written co-simulation loop costs;
* runner: ``Diagram.run`` of the 3-block diagram (``wall_time`` of its statistics: the step
  loop, without starting the blocks), with and without the rollback checkpoints;
* overhead = runner - fmpy, per step;
* runner alone: the same diagram with the FMU replaced by a trivial Python block (one multiply
  per output): what the runner costs around three near-empty blocks;
* cross-check: the runner's and the fmpy loop's ``x`` agree to round-off.

Real time: the diagram paced at 1 kHz for ``--rt-seconds`` (default 60; ``--quick``: 5 s) with
``overrun="catch_up"``: jitter (actual start of a step minus its deadline) p50 / p99 / max,
overruns, achieved real-time factor.

With ``--live``, the same real-time run in a row: without a live view, with a live view
(:mod:`mbsfmu.runner.live`, served by its own process) that no page reads, with one read by a
client (a Python process reading the event stream, as a page would), and, where Debian's
Chromium and Playwright are installed, with the page open in headless Chromium (driven from a
process of its own, as tests/support/browser_support.py does): once as the browser tests open
it (the scope and the 3D view of the FMU's model; no GPU here, so WebGL and the compositor run
in SwiftShader, a CPU emulation of a GPU), once as the scope alone (the model's coordinate not
recorded) with ``--disable-gpu`` (Skia draws the canvas, no GL emulation: nearer to what a
page costs the CPU where a GPU draws); Chromium's CPU seconds while the page is open are
printed with it.  What serving the scope costs the pacing, and what a browser on the same machine costs.
Every reader is started (imports done, browser launched) before its run; the load average
(1 min) before each run is printed with it, and how often the kernel preempted the run's process
(involuntary context switches: another process took the CPU, which on 2 shared cores is what
makes a run late; waiting for the interpreter lock would be a voluntary switch).  ``--pin``
sets up a test bench's split: the run on the first CPU, the view's server
(``LiveView(cpus=...)``) and the readers with their browser on the others.

Targets (issue 5): runner overhead ≤ 20 µs per step; p99 jitter ≤ 100 µs, no overruns.

Run from the repository root: ``.venv/bin/python bench/runner_overhead.py [--quick]
[--t-end 20] [--repeat 3] [--rt-seconds 60] [--live [--rounds 4] [--pin]]``.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "out" / "runner_overhead"
STEP = 1e-3
T_FORCE = 0.5  # the force steps from 0 to 1 N here
TARGET_OVERHEAD_US = 20.0
TARGET_P99_US = 100.0

from mbsfmu.runner import SISO, Block, Diagram  # noqa: E402


def build_fmu() -> pathlib.Path:
    """The mass-spring model with an input force as a native FMU."""
    from mbsfmu import System, build_fmu

    s = System("msd", "mass on a spring with an input force")
    m, k = s.constants(m=1.0, k=10.0)
    (x,) = s.coordinates("x")
    F = s.input("F", 0.0)
    s.body("mass", ref="ISYS", rel_pos=[x, 0, 0], mass=m, inertia=[0, 0, 0])
    s.generalized_force("spring", "x", -k * x + F)
    s.initial(x=0.1)
    OUT.mkdir(parents=True, exist_ok=True)
    return build_fmu(s, OUT)


def force(t: float) -> float:
    return 1.0 if t >= T_FORCE - 1e-12 else 0.0


class StepSource(Block):
    """The force input (as blocks.sources.Step, kept here so the bench does not depend on it)."""

    outputs = ("y",)

    def output(self, t, u):
        return (force(t),)


class Half(SISO):
    def feedthrough(self):
        return {"y": ("u",)}

    def output(self, t, u):
        return (0.5 * u[0],)


class Trivial(Block):
    """Stands in for the FMU: two outputs, one multiply each."""

    inputs = ("F",)
    outputs = ("x", "der(x)")

    def output(self, t, u):
        return (0.1 * u[0], 0.0)

    def update(self, t, u):
        pass


def diagram(path: pathlib.Path | None) -> Diagram:
    from blocks.fmu import FMU

    d = Diagram(STEP)
    d.add("src", StepSource())
    d.add("msd", FMU(path) if path is not None else Trivial())
    d.add("gain", Half())
    d.connect("src.y", "msd.F")
    d.connect("msd.x", "gain.u")
    return d


def fmpy_loop(path: pathlib.Path, n: int) -> tuple[float, np.ndarray]:
    """The FMU through FMU2Slave by hand; returns (seconds for the n steps, x at every point)."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    md = read_model_description(str(path))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    unzipped = extract(str(path))
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=unzipped,
                    modelIdentifier=md.coSimulation.modelIdentifier, instanceName="fmpy_loop")
    fmu.instantiate()
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    vF, vout = [vr["F"]], [vr["x"], vr["der(x)"]]
    xs = np.empty(n + 1)
    h = STEP
    pc = time.perf_counter
    t0 = pc()
    for i in range(n + 1):
        t = i * h
        fmu.setReal(vF, [force(t)])
        x, v = fmu.getReal(vout)
        y = 0.5 * x  # the gain, for a like-for-like comparison
        xs[i] = y
        if i < n:
            fmu.doStep(currentCommunicationPoint=t, communicationStepSize=h)
    wall = pc() - t0
    fmu.terminate()
    fmu.freeInstance()
    return wall, 2 * xs


def platform_gaps(seconds: float, threshold: float = 0.5e-3) -> list[float]:
    """Gaps longer than ``threshold`` in a bare Python busy loop over ``seconds`` (no runner, no
    FMU, garbage collector off): the preemptions the machine itself imposes on any process."""
    import gc

    was = gc.isenabled()
    gc.disable()
    clock = time.perf_counter
    last = clock()
    end = last + seconds
    gaps = []
    while last < end:
        now = clock()
        if now - last > threshold:
            gaps.append(now - last)
        last = now
    if was:
        gc.enable()
    return gaps


CLIENT = """
import json, sys
from mbsfmu.runner.live import read_events
n, last = 0, None
print("ready", flush=True)  # started, imports done: before the run
url = sys.stdin.readline().strip()
for event, data in read_events(url, timeout=60):
    if event == "data":
        n, last = n + 1, data["last"]
print(json.dumps({"messages": n, "last": last}))
"""

BROWSER = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from browser_support import CHROMIUM, launch
from playwright.sync_api import sync_playwright

def tree_cpu():
    # CPU seconds used so far by the processes below this one (Playwright's driver, Chromium)
    parent = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(pid)] = (int(stat[1]), int(stat[11]) + int(stat[12]))
    below, total, grew = {os.getpid()}, 0, True
    while grew:
        grew = False
        for pid, (ppid, ticks) in parent.items():
            if ppid in below and pid not in below:
                below.add(pid)
                total += ticks
                grew = True
    return total / os.sysconf("SC_CLK_TCK")

OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
with sync_playwright() as p:
    if sys.argv[2] == "swiftshader":  # as the browser tests: WebGL in software (SwiftShader)
        browser = launch(p, OFFLINE)
    else:  # software raster without GL emulation: no WebGL, the 2D canvas drawn by Skia
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--disable-gpu", OFFLINE])
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    page.goto("about:blank")
    print("ready", flush=True)  # Chromium started: before the run
    url = sys.stdin.readline().strip()
    cpu, wall = tree_cpu(), time.perf_counter()
    page.goto(url)
    page.wait_for_function("window.scope.ended", timeout=120000)
    cpu, wall = tree_cpu() - cpu, time.perf_counter() - wall
    last = page.evaluate("window.scope.last")
    browser.close()
print(json.dumps({"messages": None, "last": last, "browser_cpu": cpu, "browser_wall": wall}))
"""


def browser_available() -> bool:
    """Debian's Chromium and Playwright's client (as the browser tests use them)."""
    import importlib.util

    return pathlib.Path("/usr/bin/chromium").exists() and \
        importlib.util.find_spec("playwright") is not None


#: with --pin: (the run's CPUs, the CPUs of the view's server and its readers)
PIN: tuple[set, set] | None = None


def pin_cores() -> tuple[set, set]:
    """This process (the run) onto the first CPU, the view's server and readers onto the others."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--pin needs two CPUs")
    run, rest = {cpus[0]}, set(cpus[1:])
    os.sched_setaffinity(0, run)
    print(f"pinned: the run on CPU {cpus[0]}, the view's server and its readers on CPU "
          f"{', '.join(map(str, sorted(rest)))}")
    return run, rest


def live_view():
    from mbsfmu.runner.live import LiveView

    return LiveView(announce=False, cpus=PIN[1] if PIN else None)


def client_process(program: str, *args: str):
    """A reader of the live view in its own process, started and ready (imports done, a
    browser launched) before the run: it takes the page's address from stdin, reads to the
    end and prints JSON ``{"messages", "last"}`` (the last row it got)."""
    import subprocess

    proc = subprocess.Popen([sys.executable, "-c", program, str(ROOT / "tests" / "support"), *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            preexec_fn=(lambda: os.sched_setaffinity(0, PIN[1])) if PIN else None)
    assert proc.stdout.readline().strip() == "ready", "the client did not start"
    return proc


def connect(view, client) -> None:
    """Give the client the page's address as soon as the run serves it."""
    while view.url is None:
        time.sleep(0.001)
    client.stdin.write(view.url + "\n")
    client.stdin.flush()


def read_run(d: Diagram, seconds: float, program: str, label: str, *args: str,
             record=None) -> tuple[str, dict]:
    """The real-time run with a live view read by the client ``program`` (its statistics, with
    the browser's CPU seconds over the page's wall seconds where the client measures them)."""
    import json
    import threading

    view = live_view()
    client = client_process(program, *args)
    starter = threading.Thread(target=connect, args=(view, client))
    starter.start()
    res = d.run(seconds, realtime=True, live=view, record=record)
    starter.join()
    got = json.loads(client.communicate(timeout=60)[0])
    assert got["last"] == res.values[-1].tolist(), "the client's last row is the runner's"
    if "browser_cpu" in got:
        label += f" (Chromium's CPU {got['browser_cpu']:.1f} s in {got['browser_wall']:.1f} s)"
    return label, res.stats


def realtime_runs(d: Diagram, seconds: float, live: bool, browser: bool) -> list[tuple[str, dict]]:
    """The real-time run, and with ``live`` the same run with a live view unread, read by a
    stream client, and (``browser``) shown by a headless Chromium page; each with the load
    average (1 min) before it."""
    import resource

    def measured(run) -> tuple[str, dict]:
        """``run()``'s (label, statistics) with the load average before it and how often the
        kernel preempted this process meanwhile (involuntary context switches: another process
        took the CPU; waiting for the interpreter lock would be a voluntary one)."""
        before = os.getloadavg()[0]
        switches = resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw
        label, stats = run()
        return label, {**stats, "load_before": before,
                       "preempted": resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw - switches}

    runs = [measured(lambda: ("no live view", d.run(seconds, realtime=True).stats))]
    if live:
        runs.append(measured(lambda: ("live view, no client", d.run(
            seconds, realtime=True, live=live_view()).stats)))
        runs.append(measured(lambda: read_run(d, seconds, CLIENT, "live view, 1 client")))
        if browser:
            runs.append(measured(lambda: read_run(
                d, seconds, BROWSER, "live view, Chromium page + 3D view (SwiftShader)", "swiftshader")))
            # msd.x not recorded: no 3D view, the scope alone, drawn by Skia without GL emulation
            runs.append(measured(lambda: read_run(
                d, seconds, BROWSER, "live view, Chromium page, scope only (--disable-gpu)",
                "software", record=["src.y", "msd.der(x)", "gain.y"])))
    return runs


def best_run(d: Diagram, t_end: float, repeat: int, **kw):
    res, best = None, np.inf
    for _ in range(repeat):
        res = d.run(t_end, **kw)
        best = min(best, res.stats["wall_time"])
    return res, best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t-end", type=float, default=20.0, help="simulated time of the timing runs "
                    "[s] (default 20: 20 000 steps)")
    ap.add_argument("--repeat", type=int, default=3, help="timing runs, the best counts (default 3)")
    ap.add_argument("--rt-seconds", type=float, default=60.0,
                    help="length of the real-time run [s] (default 60)")
    ap.add_argument("--live", action="store_true",
                    help="also run it with a live view, unread and read by a client")
    ap.add_argument("--rounds", type=int, default=1,
                    help="with --live: the three real-time runs this many times, interleaved, so "
                         "that the machine's own noise falls on each alike (default 1)")
    ap.add_argument("--quick", action="store_true", help="--t-end 5, --rt-seconds 5")
    ap.add_argument("--pin", action="store_true",
                    help="with --live: the run on CPU 0, the view's server and its readers (Chromium) on "
                         "CPU 1 (a test bench's set-up: a core for the loop)")
    args = ap.parse_args(argv)
    t_end = 5.0 if args.quick else args.t_end
    rt_seconds = 5.0 if args.quick else args.rt_seconds
    n = round(t_end / STEP)

    import fmpy

    print(f"Python {sys.version.split()[0]}, fmpy {fmpy.__version__}, numpy {np.__version__}, "
          f"nproc {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    t = time.perf_counter()
    path = build_fmu()
    print(f"built {path.relative_to(ROOT)} in {time.perf_counter() - t:.1f} s")
    print(f"{n} steps of {STEP * 1e3:g} ms, best of {args.repeat}")

    fm = [fmpy_loop(path, n) for _ in range(args.repeat)]
    t_fmpy = min(w for w, _ in fm)
    x_fmpy = fm[0][1]
    d = diagram(path)
    res, t_run = best_run(d, t_end, args.repeat)
    _, t_run_nrb = best_run(d, t_end, args.repeat, rollback=False)
    _, t_alone = best_run(diagram(None), t_end, args.repeat)
    dx = float(np.max(np.abs(res["msd.x"] - x_fmpy)))

    us = 1e6 / (n + 1)
    rows = [("fmpy FMU2Slave loop (setReal, doStep, getReal)", t_fmpy),
            (f"runner, 3 blocks (rollback {'on' if res.stats['rollback'] else 'unavailable'})",
             t_run),
            ("runner, 3 blocks, rollback=False", t_run_nrb),
            ("runner alone, FMU replaced by a trivial block", t_alone)]
    print()
    for label, sec in rows:
        print(f"  {label:52s} {sec * us:7.2f} µs/step")
    overhead = (t_run - t_fmpy) * us
    print(f"  {'overhead = runner - fmpy loop':52s} {overhead:7.2f} µs/step  "
          f"(target ≤ {TARGET_OVERHEAD_US:g}: {'met' if overhead <= TARGET_OVERHEAD_US else 'NOT met'})")
    print(f"  max |x_runner - x_fmpy| = {dx:.3g} m")

    print(f"\nreal time: {rt_seconds:g} s at 1 kHz (overrun='catch_up') ...", flush=True)
    rounds = max(1, args.rounds) if args.live else 1
    if args.pin:
        global PIN
        PIN = pin_cores()
    browser = args.live and browser_available()
    if args.live and not browser:
        print("  (no Chromium page: /usr/bin/chromium or playwright missing)")
    runs = [run for _ in range(rounds) for run in realtime_runs(d, rt_seconds, args.live, browser)]
    for label, rt in runs:
        ok = rt["jitter_p99_us"] <= TARGET_P99_US and rt["overruns"] == 0
        print(f"  {label}: jitter p50 {rt['jitter_p50_us']:.1f} µs, p99 "
              f"{rt['jitter_p99_us']:.1f} µs, max {rt['jitter_max_us']:.1f} µs; overruns "
              f"{rt['overruns']}; achieved rtf {rt['rtf_achieved']:.5f}"
              + (f"; stream: {rt['live']['clients']} clients, {rt['live']['messages']} messages, "
                 f"{rt['live']['rows_skipped']} rows skipped" if "live" in rt else "")
              + f"; load average before {rt['load_before']:.2f}, preempted {rt['preempted']} times")
        print(f"    target p99 ≤ {TARGET_P99_US:g} µs and no overruns: {'met' if ok else 'NOT met'}")
    if rounds > 1:
        print(f"  over {rounds} interleaved rounds (median of the runs' p99 and max; overruns summed):")
        for kind in ("no live view", "live view, no client", "live view, 1 client",
                     "live view, Chromium page + 3D view", "live view, Chromium page, scope only"):
            same = [rt for label, rt in runs if label.startswith(kind)]
            if not same:
                continue
            print(f"    {kind:36s} load {np.median([rt['load_before'] for rt in same]):.2f}, "
                  f"preempted {np.median([rt['preempted'] for rt in same]):5.0f}, "
                  f"p99 {np.median([rt['jitter_p99_us'] for rt in same]):8.1f} µs, max "
                  f"{np.median([rt['jitter_max_us'] for rt in same]):8.1f} µs, overruns "
                  f"{sum(rt['overruns'] for rt in same)}")
    print(f"  load average after the run {os.getloadavg()[0]:.2f}")
    gaps = platform_gaps(rt_seconds / 3)
    print(f"platform baseline: a bare Python busy loop for {rt_seconds / 3:g} s was interrupted "
          f"{len(gaps)} times for more than 0.5 ms (longest {max(gaps, default=0) * 1e3:.2f} ms): "
          f"overruns of that size come from the machine, not the runner")
    return 0


if __name__ == "__main__":
    sys.exit(main())
