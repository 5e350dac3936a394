"""Parameter study throughput: 2 000 slider-crank runs of 10 s on Dask against a plain fmpy loop.

The design is a full factorial over the crank length ``r`` (0.10 to 0.20 m, 50 values) and the
rod mass ``m_rod`` (0.3 to 0.8 kg, 40 values) of ``models/slider_crank.py``; every run goes 10 s
with outputs every 10 ms (default formulation ``qr``, rtol 1e-8) and keeps three metrics:
max(x), min(x) and max(constraint_residual).  One run of this script measures, on the same
design (``--runs`` smaller for a quick look):

* **fmpy loop**: what a user writes by hand, ``for row: fmpy.simulate_fmu(native FMU,
  start_values=row, ...)``, one process (the FMU unpacked by fmpy at every call, as it does);
  ``fmpy loop (unpacked once)``: the same with the FMU unpacked once beforehand;
* **sweep, in process** (``scheduler='synchronous'``): the engine with no Dask around it;
* **sweep, local default** (``scheduler=None``: a LocalCluster of worker processes, started,
  used and closed inside the call, as a user gets it);
* **sweep, 1 and 2 distributed workers**: a scheduler and workers started with Dask's command
  line on 127.0.0.1 (:class:`mbsfmu.study.cli_cluster.CliCluster`), the sweep given the address;
  the cluster's start is not in the time, the model's load and compile on each worker is;
* **sweep of the FMU, local default**: the native FMU as the target, run by fmpy on the workers;
* **scheduler overhead per task**: 2 000 empty tasks (``client.map`` of a no-op) on the
  2-worker cluster, and the 2-worker sweep with one run per task (``batch=1``) against the
  default batching.

Runs per second and ratios to the fmpy loop are printed, with a check that every configuration
gives the same rows as the in-process sweep (the native FMU steps the same engine over the same
output grid, so bit for bit is expected there too; the script prints the largest difference if
not).

Run from the repository root: ``.venv/bin/python bench/sweep.py [--runs 2000] [--quick]``
(about 5 minutes at the defaults on two cores, most of it the fmpy loop).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mbsfmu  # noqa: E402
from mbsfmu.study import designs  # noqa: E402
from mbsfmu.study.cli_cluster import CliCluster  # noqa: E402

MODEL = str(ROOT / "models" / "slider_crank.py")
METRICS = {"x_max": "max(x)", "x_min": "min(x)", "residual": "max(constraint_residual)"}
T_END, DT, RTOL = 10.0, 0.01, 1e-8


def noop(i):
    return i


def design_of(n_runs: int):
    """The r x m_rod factorial, 50 x 40 for 2 000 runs (fewer values each for fewer runs)."""
    nr = max(1, round(np.sqrt(n_runs * 50 / 40)))
    nm = max(1, n_runs // nr)
    return designs.factorial({"r": f"0.10:0.20:{nr}", "m_rod": f"0.3:0.8:{nm}"})


def fmpy_loop(fmu, design, unpack_once: bool):
    from fmpy import extract, read_model_description, simulate_fmu

    target, md = str(fmu), None
    if unpack_once:
        md = read_model_description(str(fmu))
        target = extract(str(fmu), unzipdir=tempfile.mkdtemp(prefix="bench-sweep-"))
    rows = []
    start = time.perf_counter()
    for values in design.to_dict("records"):
        r = simulate_fmu(target, model_description=md, start_values=values, stop_time=T_END,
                         output_interval=DT, relative_tolerance=RTOL, output=["x", "constraint_residual"])
        rows.append((np.max(r["x"]), np.min(r["x"]), np.max(r["constraint_residual"])))
    return time.perf_counter() - start, np.array(rows)


def timed_sweep(target, design, **kw):
    start = time.perf_counter()
    df = mbsfmu.sweep(target, design, t_end=T_END, dt=DT, rtol=RTOL, metrics=METRICS, **kw)
    wall = time.perf_counter() - start
    bad = df[df["status"] != "ok"]
    if len(bad):
        raise SystemExit(f"{len(bad)} runs failed, e.g. {bad['message'].iloc[0]}")
    return wall, df[list(METRICS)].to_numpy()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--quick", action="store_true", help="200 runs")
    args = ap.parse_args(argv)
    n = 200 if args.quick else args.runs
    design = design_of(n)
    n = len(design)
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    print(f"{n} slider-crank runs of {T_END:g} s (outputs every {DT:g} s, rtol {RTOL:g}); "
          f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}")
    fmu = mbsfmu.build_fmu(MODEL, work / "slider_crank.fmu", kind="native")

    results = {}
    results["fmpy loop"] = fmpy_loop(fmu, design, unpack_once=False)
    results["fmpy loop (unpacked once)"] = fmpy_loop(fmu, design, unpack_once=True)
    results["sweep, in process"] = timed_sweep(MODEL, design, scheduler="synchronous")
    results["sweep, local default"] = timed_sweep(MODEL, design)
    start = time.perf_counter()  # what the local default spends on starting its cluster
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=min(os.cpu_count() or 1, 4), threads_per_worker=1, processes=True,
                      dashboard_address=None) as lc, Client(lc) as c:
        c.gather(c.map(noop, range(4), pure=False))
        local_start = time.perf_counter() - start
    overhead = {}
    for k in (1, 2):
        with CliCluster(work, n_workers=k, pythonpath=ROOT) as cluster:
            client = cluster.connect()
            results[f"sweep, {k} distributed worker{'s' if k > 1 else ''}"] = timed_sweep(
                MODEL, design, scheduler=client)
            if k == 2:
                client.gather(client.map(noop, range(100), pure=False))  # warm
                m = 2000
                start = time.perf_counter()
                client.gather(client.map(noop, range(m), pure=False))
                overhead["empty task"] = (time.perf_counter() - start) / m
                sub = design.iloc[: min(n, 400)].reset_index(drop=True)
                w1, _ = timed_sweep(MODEL, sub, scheduler=client, batch=1)
                wd, _ = timed_sweep(MODEL, sub, scheduler=client)
                overhead["batch=1"] = (w1, wd, len(sub))
            client.close()
    results["sweep of the FMU, local default"] = timed_sweep(fmu, design)

    base = results["fmpy loop"][0]
    print("\n| configuration | wall [s] | runs/s | ms/run | vs fmpy loop |\n|---|---|---|---|---|")
    for name, (wall, _) in results.items():
        print(f"| {name} | {wall:.2f} | {n / wall:.0f} | {1e3 * wall / n:.2f} | {base / wall:.1f}x |")
    ref = results["sweep, in process"][1]
    print("\nrows equal to the in-process sweep:")
    for name, (_, rows) in results.items():
        diff = np.max(np.abs(rows - ref))
        exact = np.array_equal(rows, ref)
        print(f"  {name}: {'bit for bit' if exact else f'max |difference| {diff:.2e}'}")
    per_task = overhead["empty task"]
    w1, wd, m = overhead["batch=1"]
    per_run = results["sweep, in process"][0] / n
    print(f"\nscheduler: {1e3 * per_task:.3f} ms per empty task on 2 workers "
          f"({1 / per_task:.0f} tasks/s); {m} runs with batch=1: {w1:.2f} s, default batch: {wd:.2f} s "
          f"(+{1e3 * (w1 - wd) / m:.2f} ms per extra task)")
    print(f"engine cost per run in process: {1e3 * per_run:.2f} ms; the local default's cluster start "
          f"(LocalCluster of {min(os.cpu_count() or 1, 4)} processes, first tasks back): {local_start:.2f} s")
    for workers in (10, 100):
        need = workers / (per_run * (1 / per_task))
        batch = max(1, int(np.ceil(need)))
        print(f"  {workers} workers: the scheduler keeps up with batches of >= {batch} runs "
              f"(tasks/s needed at batch 1: {workers / per_run:.0f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
