"""Closed-loop sweep throughput: the LQR-balanced cart-pendulum loop of ci/stability_map_demo.py
swept over the rod's half length, ``mbsfmu.sweep`` of a diagram factory against a serial loop
over ``Diagram.run`` in one process.

The loop (native FMU plant with Model Exchange and Co-Simulation, discrete LQR at 10 ms, a unit
delay, a ±20 N limit, a reference step) runs ``--t-end`` seconds (default 3 s: 300 steps) for each
of ``--runs`` rod lengths (default 40, 0.2 to 2.0 m; the gains hold the shorter rods and let the
longer ones fall), keeping maxabs(cart.theta) with bound 1 rad and the settling time of cart.x.
One invocation measures, on the same design:

* **serial loop**: ``for l: diagram(l).run(t_end)`` and the same metrics, one process, what a
  user writes by hand; ``serial loop, FMU unpacked per run``: the same with the process's FMU
  cache emptied before each run (each FMU block parses and unpacks the FMU again, as every
  block did before the cache: what the cache saves);
* **sweep, in process** (``scheduler='synchronous'``): the study's own cost around the runs;
* **sweep, local default** (``scheduler=None``: a LocalCluster of worker processes started,
  used and closed inside the call, as a user gets it);
* **sweep of the linearized loop** (metric ``largest_real_part`` only, in process): the
  stability map without a run.

Runs per second, the ratio to the serial loop, and a check that the sweeps' rows equal the
serial loop's (bit for bit: the same runs).  Run from the repository root:
``.venv/bin/python bench/closed_loop_sweep.py [--runs 40] [--t-end 3]``.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mbsfmu  # noqa: E402
from mbsfmu.runner.fmu_block import FMU_FILES  # noqa: E402
from mbsfmu.study.metrics import make_metrics  # noqa: E402

METRICS = {"theta": "maxabs(cart.theta, bound=1.0)", "settle": "settling(cart.x, reference=ref.y)"}


def load_demo():
    """ci/stability_map_demo.py, imported by path (no worker can import it: pickled by value)."""
    spec = importlib.util.spec_from_file_location("stability_map_demo", ROOT / "ci" / "stability_map_demo.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["stability_map_demo"] = module
    spec.loader.exec_module(module)
    return module


def serial(factory, lengths, t_end, unpack_each: bool) -> list[dict]:
    """The hand-written loop: one Diagram.run per length, the same metrics and verdicts."""
    from mbsfmu.study.batch import _diverged
    from mbsfmu.study.metrics import worst

    metrics = make_metrics(METRICS)
    rows = []
    for l in lengths:
        if unpack_each:
            FMU_FILES.clear()
        try:
            res = factory(l=l).run(t_end)
            verdicts = [m.evaluate(res) for m in metrics]
            rows.append({"l": l, **{m.name: v.value for m, v in zip(metrics, verdicts)},
                         "status": worst(verdicts)})
        except mbsfmu.core.errors.SimulationError as exc:
            rows.append({"l": l, **{m.name: float("nan") for m in metrics},
                         "status": "diverged" if _diverged(exc, metrics) else "failed"})
    return rows


def timed(label, fn, n, table, repeat):
    """The fastest of ``repeat`` calls (the machine is shared: the least disturbed one)."""
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        s = time.perf_counter() - t
        best = s if best is None else min(best, s)
    s = best
    table.append((label, s, n / s))
    print(f"{label:45s} {s:8.2f} s  {n / s:8.1f} runs/s", flush=True)
    return out


def same(rows, df) -> str:
    a = np.array([[r["theta"], r["settle"]] for r in rows], dtype=float)
    b = df[["theta", "settle"]].to_numpy(dtype=float)
    status = [r["status"] for r in rows] == df["status"].tolist()
    equal = np.array_equal(a, b, equal_nan=True)
    if equal and status:
        return "bit for bit"
    return f"DIFFER (max {np.nanmax(np.abs(a - b)):.3g}, same status: {status})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--t-end", type=float, default=3.0)
    ap.add_argument("--repeat", type=int, default=3, help="calls of each configuration, the fastest kept")
    args = ap.parse_args()
    demo = load_demo()
    fmu, _, gain = demo.design(ROOT)
    factory = functools.partial(demo.diagram, fmu, gain, m=0.1)
    lengths = [float(v) for v in np.linspace(0.2, 2.0, args.runs)]
    n = len(lengths)
    print(f"{n} runs of {args.t_end:g} s ({round(args.t_end / demo.STEP)} steps) on {os.cpu_count()} CPUs")
    table = []
    r = args.repeat
    t_end = args.t_end
    rows = timed("serial loop over Diagram.run", lambda: serial(factory, lengths, t_end, False), n, table, r)
    timed("serial loop, FMU unpacked per run", lambda: serial(factory, lengths, t_end, True), n, table, r)
    sweep = functools.partial(mbsfmu.sweep, factory, {"l": lengths}, t_end=args.t_end, metrics=METRICS)
    sync = timed("sweep, in process (synchronous)", lambda: sweep(scheduler="synchronous"), n, table, r)
    local = timed("sweep, local default (LocalCluster)", lambda: sweep(), n, table, r)
    lin = timed("sweep of the linearized loop (in process)",
                lambda: mbsfmu.sweep(factory, {"l": lengths}, metrics={"sigma": "largest_real_part"},
                                     scheduler="synchronous"), n, table, r)
    base = table[0][2]
    print("\n| configuration | wall [s] | runs/s | vs serial loop |\n| --- | ---: | ---: | ---: |")
    for label, s, rate in table:
        print(f"| {label} | {s:.2f} | {rate:.1f} | {rate / base:.2f} |")
    print(f"\nrows: in process {same(rows, sync)}, local default {same(rows, local)}")
    unstable = (lin["sigma"] >= 0).to_numpy()
    status = local["status"].to_numpy()
    bad, good = status[unstable], status[~unstable]
    print(f"linear verdict against the runs' status: {int(unstable.sum())} unstable of {n}; of them "
          f"{int((bad == 'diverged').sum())} diverged and {int((bad == 'not settled').sum())} not settled "
          f"within {args.t_end:g} s, {int((bad == 'ok').sum())} ok; of the stable ones "
          f"{int((good == 'ok').sum())} ok, {int((good != 'ok').sum())} not")
    return 0


if __name__ == "__main__":
    sys.exit(main())
