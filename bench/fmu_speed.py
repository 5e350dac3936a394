"""Our FMUs as an importer drives them: cost per communication step of the Co-Simulation kinds
(native FMI 2.0, native FMI 3.0, pythonfmu), and Model Exchange against Co-Simulation at equal
accuracy.

**Part 1, Co-Simulation.** Three FMUs of ``models/slider_crank.py`` (default formulation ``'qr'``
with projection in all): ``mbsfmu.build_fmu(..., fmi_version=2, interface="both")`` and
``fmi_version=3`` (native; they carry Model Exchange too, for part 2: their Co-Simulation is the
same code as a CS-only FMU's) and ``kind="pythonfmu"`` (FMI 2.0 CS), built into
``bench/out/fmu_speed/`` and driven in this one process through fmpy's ``FMU2Slave`` /
``FMU3Slave``, as a co-simulation master would: ``--t-end`` seconds (default 40) at ``--step``
communication steps (default 1 ms, i.e. 40 000 ``doStep`` calls), ``solver_rtol`` = ``--rtol``
(default 1e-8, the FMUs' default) and ``solver_atol`` = ``--atol`` (default 1e-9; the
slider-crank's states are of order 0.1 to 300, so the relative tolerance dominates).

What is timed:

* ``doStep``: ``time.perf_counter()`` read immediately before and after every ``doStep`` call,
  differences summed.  This is the cost seen by a Python master: it includes fmpy's ctypes call
  and status check (FMI 3.0's ``doStep`` also builds four output arguments and a tuple) and one
  pair of timer reads, whose cost is measured on an empty pair and printed as "timer overhead"
  (not subtracted).
* ``get``: after every step all outputs of the FMU are read in one ``getReal`` (FMI 2.0) /
  ``getFloat64`` (FMI 3.0) call, timed the same way and reported separately.  The FMUs compute
  their outputs (constraint residual, user outputs) inside ``doStep``.
* the native FMUs' own cost: their do-step measures its wall time with CLOCK_MONOTONIC and logs
  it with the integrator's counters under ``logEvents`` at terminate, the same message in both
  FMI versions; it is parsed from the logger callback ("C-internal" below).

Target (issue 11): ≤ 1 µs of C-internal cost per 1 ms communication step (a real-time factor
≥ 1000 at 1 kHz).  pythonfmu steps with the same C engine; its ratio to the native FMU shows the
cost of its Python layer per call.

Cross-checks: FMI 3.0 against FMI 2.0, every output at every communication point, bit for bit
(the same engine, the same calls); the coordinates of native and pythonfmu (bit for bit too);
the largest ``constraint_residual`` output over the run.

**Part 2, Model Exchange** (``bench/fmu_exchange.py``, skipped with ``--no-me``): the slider-crank
(constraints: the FMU projects the state through a step event when the drift passes its
``constraint_tolerance``) and the double pendulum of ``models/double_pendulum.py`` (a tree: no
projection), each as FMI 2.0 and FMI 3.0 Model Exchange under ``fmpy.simulate_fmu`` with CVode (a
ladder of tolerances) and with Euler, over ``--me-t-end`` seconds (default 10) with outputs every
``--me-grid`` seconds (default 0.01), against our own CS FMU at ``solver_rtol`` 1e-6 and 1e-8:
the error against the CS FMU at 1e-12 (checked against the model's reference result), the wall
time, the importer's derivative calls (counted by the FMU) against the CS FMU's right-hand sides,
projections and drift, and the ratios at equal accuracy.  ``--repeat`` (default 3) runs of each
matched setting, the best time kept.

Run from the repository root: ``.venv/bin/python bench/fmu_speed.py [--quick] [--t-end 40]
[--step 1e-3] [--rtol 1e-8] [--atol 1e-9] [--me-t-end 10] [--me-grid 0.01] [--repeat 3]
[--no-me]``.  ``--quick``: 2 s in both parts (the span of the models' reference results, which
the reference run is checked against), CVode tolerances in decades, the double pendulum as FMI
3.0 only.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))  # fmu_instances, fmu_exchange

from fmu_instances import CS_STATS, errors, instance, statistics, unzip  # noqa: E402

MODEL = ROOT / "models" / "slider_crank.py"
TREE = ROOT / "models" / "double_pendulum.py"
OUT = ROOT / "bench" / "out" / "fmu_speed"
#: the kinds of the Co-Simulation part: build_fmu's options; the native FMUs carry both
#: interfaces, so the Model Exchange part runs the same files
KINDS = {"native-2.0": {"kind": "native", "fmi_version": 2, "interface": "both"},
         "native-3.0": {"kind": "native", "fmi_version": 3, "interface": "both"},
         "pythonfmu": {"kind": "pythonfmu"}}
NATIVE = ("native-2.0", "native-3.0")
TARGET_C_US = 1.0  # issue 11


def build(model: pathlib.Path, folder: pathlib.Path, options: dict) -> tuple[pathlib.Path, float]:
    import mbsfmu

    if folder.exists():
        shutil.rmtree(folder)
    t0 = time.perf_counter()
    path = mbsfmu.build_fmu(model, folder, **options)
    return path, time.perf_counter() - t0


def timer_overhead(n: int = 200_000) -> float:
    """Seconds of one ``t = perf_counter(); ...; acc += perf_counter() - t`` with nothing in
    between (median of a few repeats)."""
    pc = time.perf_counter
    best = []
    for _ in range(5):
        acc = 0.0
        for _ in range(n):
            t = pc()
            acc += pc() - t
        best.append(acc / n)
    return float(np.median(best))


def run(kind: str, path: pathlib.Path, t_end: float, h: float, rtol: float, atol: float,
        progress: float) -> dict:
    """``t_end / h`` doStep calls of the FMU at ``path`` through fmpy's FMU2Slave or FMU3Slave,
    all outputs read after each (see the module docstring)."""
    unzipped, md = unzip(path)
    fmu = instance(unzipped, md, "cs", f"bench_{kind}", None if kind == "pythonfmu" else ["logEvents"])
    vr = {v.name: v.valueReference for v in md.modelVariables}
    outputs = [v.name for v in md.modelVariables if v.causality == "output"]
    tolerances = [vr["solver_rtol"], vr["solver_atol"]], [rtol, atol]
    if md.fmiVersion.startswith("3"):
        fmu.enterInitializationMode(startTime=0.0)
        fmu.setFloat64(*tolerances)
        get = fmu.getFloat64
    else:
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.setReal(*tolerances)
        get = fmu.getReal
    fmu.exitInitializationMode()
    out_vr = [vr[n] for n in outputs]
    n = int(round(t_end / h))
    rows = np.empty((n + 1, len(out_vr)))
    rows[0] = get(out_vr)
    pc = time.perf_counter
    t_step = t_get = 0.0
    next_report = progress
    wall0 = pc()
    for k in range(n):
        t = k * h
        t0 = pc()
        fmu.doStep(currentCommunicationPoint=t, communicationStepSize=h)
        t1 = pc()
        rows[k + 1] = get(out_vr)
        t2 = pc()
        t_step += t1 - t0
        t_get += t2 - t1
        if progress and (k + 1) * h >= next_report - 1e-9 and k + 1 < n:
            print(f"    {kind}: t = {(k + 1) * h:6.1f} s, {pc() - wall0:7.1f} s wall", flush=True)
            next_report += progress
    wall = pc() - wall0
    fmu.terminate()
    fmu.freeInstance()
    return {"n": n, "doStep": t_step, "get": t_get, "wall": wall, "outputs": outputs, "rows": rows,
            "errors": errors(fmu), "c_stats": statistics(fmu, CS_STATS)}


def met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def print_c_internal(kind: str, res: dict, h: float) -> None:
    """The FMU's own cost per doStep (its logEvents statistics) and what fmpy adds."""
    c = res["c_stats"]
    if c is None:
        print(f"{kind} C-internal statistics: NOT FOUND in the log (no 'statistics:' message)")
        return
    steps = c["acc"] + c["rej"]
    print(f"{kind} C-internal (CLOCK_MONOTONIC inside do-step): {c['seconds']:.6f} s for "
          f"{int(c['calls'])} calls = {c['us']:.3f} us per step, RTF {h / (c['us'] * 1e-6):.0f}")
    print(f"  {int(c['nfev'])} right-hand sides ({c['nfev'] / c['calls']:.2f} per step), "
          f"{int(c['acc'])} accepted + {int(c['rej'])} rejected internal steps "
          f"({steps / c['calls']:.2f} per step), {int(c['nproj'])} projections; "
          f"~{c['seconds'] / max(c['nfev'], 1) * 1e9:.0f} ns of doStep time per right-hand side")
    print(f"  Python-side doStep minus C-internal: {(res['doStep'] - c['seconds']) / res['n'] * 1e6:.2f} us "
          "per call (fmpy/ctypes call, timer)")


def cross_check(results: dict, t_end: float) -> None:
    """FMI 3.0 against FMI 2.0 (every output at every communication point, bit for bit) and
    native against pythonfmu (the coordinates and rates)."""
    nat, nat3, py = results["native-2.0"], results["native-3.0"], results["pythonfmu"]
    names = nat["outputs"]
    same = nat3["outputs"] == names and np.array_equal(nat["rows"], nat3["rows"])
    print(f"cross-check native-3.0 against native-2.0: all {len(names)} outputs at all "
          f"{nat['n'] + 1} communication points {'bit-identical' if same else 'DIFFERENT'}"
          + ("" if same else f" (max |diff| {np.max(np.abs(nat['rows'] - nat3['rows'])):.2e})"))
    print(f"cross-check at t = {t_end:g} s (native - pythonfmu):")
    for name in ("x", "alpha", "beta", "der(x)", "der(alpha)", "der(beta)"):
        i = names.index(name)
        a, b = nat["rows"][-1, i], py["rows"][-1, i]
        print(f"  {name:11s} native {a: .12f}  pythonfmu {b: .12f}  diff {a - b: .2e}")
    i3 = [names.index(k) for k in ("x", "alpha", "beta")]
    diff_end = float(np.max(np.abs(nat["rows"][-1, i3] - py["rows"][-1, i3])))
    diff_all = float(np.max(np.abs(nat["rows"][:, i3] - py["rows"][:, i3])))
    print(f"  max |diff| of x, alpha, beta: {diff_end:.2e} at t_end, {diff_all:.2e} over all "
          "communication points")
    ir = names.index("constraint_residual")
    for kind in KINDS:
        print(f"  max constraint_residual {kind:10s}: {np.max(np.abs(results[kind]['rows'][:, ir])):.2e}")


def co_simulation(args, t_end: float, h: float, paths: dict) -> None:
    """The first part: cost per communication step of each kind (see the module docstring)."""
    overhead = timer_overhead()
    print(f"timer overhead (one perf_counter pair + sum): {overhead * 1e6:.3f} us per call, "
          "included in the times below, not subtracted")
    results = {}
    for kind in KINDS:
        print(f"running {kind} ...", flush=True)
        results[kind] = run(kind, paths[kind], t_end, h, args.rtol, args.atol,
                            args.progress if args.progress > 0 else 0.0)
        if results[kind]["errors"]:
            print(f"  {kind} logged errors: {results[kind]['errors'][:3]}")

    print()
    print(f"{'kind':10s} {'doStep [s]':>11s} {'us/doStep':>11s} {'RTF':>9s} "
          f"{'get [s]':>12s} {'us/get':>11s} {'loop wall [s]':>14s}")
    print("-" * 84)
    for kind, r in results.items():
        per = r["doStep"] / r["n"]
        print(f"{kind:10s} {r['doStep']:11.4f} {per * 1e6:11.2f} {h / per:9.1f} "
              f"{r['get']:12.4f} {r['get'] / r['n'] * 1e6:11.2f} {r['wall']:14.2f}")
    print(f"(RTF = real-time factor = communication step / time per doStep; get = all "
          f"{len(results['native-2.0']['outputs'])} outputs in one getReal (FMI 2.0) / getFloat64 "
          "(FMI 3.0) call per step)")

    print()
    for kind in NATIVE:
        print_c_internal(kind, results[kind], h)
    nat, nat3 = results["native-2.0"], results["native-3.0"]
    print()
    print(f"ratio pythonfmu / native-2.0 doStep time: {results['pythonfmu']['doStep'] / nat['doStep']:.1f}x")
    print("  (both kinds step with the same C engine since issue 11; the ratio is the cost of "
          "pythonfmu's Python layer per doStep, no longer a target)")
    print(f"ratio native-3.0 / native-2.0 doStep time: {nat3['doStep'] / nat['doStep']:.2f}x"
          + (f", C-internal {nat3['c_stats']['us'] / nat['c_stats']['us']:.2f}x"
             if nat["c_stats"] and nat3["c_stats"] else ""))
    for kind in NATIVE:
        c = results[kind]["c_stats"]
        if c is None:
            print(f"target <= {TARGET_C_US:g} us C-internal per step ({kind}): NOT met (no statistics)")
        else:
            print(f"target <= {TARGET_C_US:g} us C-internal per {h * 1e3:g} ms step ({kind}): "
                  f"{met(c['us'] <= TARGET_C_US)} ({c['us']:.3f} us, RTF {h / (c['us'] * 1e-6):.0f}; "
                  f"target RTF >= {h / (TARGET_C_US * 1e-6):.0f})")
    print()
    cross_check(results, t_end)


def model_exchange(args, paths: dict, span: float) -> None:
    """The second part: Model Exchange under fmpy's CVode and Euler against the CS FMU at equal
    accuracy, on the slider-crank (constraints: projection events) and the double pendulum (a
    tree); see bench/fmu_exchange.py."""
    import fmu_exchange

    tree = {}
    for version in (3,) if args.quick else (2, 3):  # quick: FMI 3.0 only (its CS = FMI 2.0's)
        tree[version], sec = build(TREE, OUT / f"double_pendulum-{version}.0",
                                   {"fmi_version": version, "interface": "both"})
        print(f"build double pendulum FMI {version}.0 (both interfaces): {sec:6.2f} s -> "
              f"{tree[version].relative_to(ROOT)}")
    summary = {}
    for name, model, fmus in (("slider-crank", MODEL, {2: paths["native-2.0"], 3: paths["native-3.0"]}),
                              ("double pendulum", TREE, tree)):
        unzipped = {v: unzip(p) for v, p in fmus.items()}
        summary[name] = fmu_exchange.compare(name, model, unzipped, span, args.me_grid, args.repeat,
                                             args.quick)
    print("\n=== Summary: Model Exchange (FMI 3.0, fmpy's CVode) against our CS FMU at equal accuracy")
    print(f"{'model':16s} {'CS rtol':>8s} {'error':>9s} {'CS [s]':>8s} {'CS rhs':>7s} {'CVode rtol':>10s} "
          f"{'ME [s]':>8s} {'ME der.':>8s} {'proj.':>6s} {'time x':>7s} {'calls x':>8s}")
    for name, rows in summary.items():
        for rtol, m in rows.items():
            c, me = m["cs"], m["me"]
            if me is None:
                print(f"{name:16s} {rtol:8.0e} {c.error:9.2e} {c.wall:8.4f} {c.calls:7d}   "
                      "not reached by CVode")
                continue
            print(f"{name:16s} {rtol:8.0e} {c.error:9.2e} {c.wall:8.4f} {c.calls:7d} {m['me_rtol']:10.1e} "
                  f"{me.wall:8.4f} {me.calls:8d} {me.projections:6d} {me.wall / c.wall:7.1f} "
                  f"{me.calls / c.calls:8.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t-end", type=float, default=40.0, help="simulated time [s] (default 40)")
    ap.add_argument("--step", type=float, default=1e-3, help="communication step [s] (default 1e-3)")
    ap.add_argument("--rtol", type=float, default=1e-8, help="solver_rtol of the CS FMUs (default 1e-8)")
    ap.add_argument("--atol", type=float, default=1e-9, help="solver_atol of the CS FMUs (default 1e-9)")
    ap.add_argument("--me-t-end", type=float, default=10.0,
                    help="simulated time of the Model Exchange part [s] (default 10)")
    ap.add_argument("--me-grid", type=float, default=0.01,
                    help="output grid of the Model Exchange part [s] (default 0.01)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs per matched setting in the Model Exchange part, best time kept (default 3)")
    ap.add_argument("--no-me", action="store_true", help="only the Co-Simulation part")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: --t-end 2 --me-t-end 2, CVode tolerances in decades, the double "
                    "pendulum as FMI 3.0 only")
    ap.add_argument("--progress", type=float, default=10.0,
                    help="print progress every this many simulated seconds (0: never; default 10)")
    args = ap.parse_args(argv)
    t_end = 2.0 if args.quick else args.t_end
    me_span = 2.0 if args.quick else args.me_t_end
    h = args.step
    n = int(round(t_end / h))
    if n < 1 or abs(n * h - t_end) > 1e-9 * max(1.0, t_end):
        ap.error("--t-end must be a positive multiple of --step")
    m = round(me_span / args.me_grid)
    if m < 1 or abs(m * args.me_grid - me_span) > 1e-9 * max(1.0, me_span):
        ap.error("--me-t-end must be a positive multiple of --me-grid")
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")

    import fmpy

    print(f"slider-crank ({MODEL.relative_to(ROOT)}), {t_end:g} s at {h:g} s communication steps "
          f"({n} doStep calls), solver_rtol {args.rtol:g}, solver_atol {args.atol:g}")
    print(f"Python {sys.version.split()[0]}, fmpy {fmpy.__version__}, numpy {np.__version__}, "
          f"load average {os.getloadavg()[0]:.2f}")
    paths = {}
    for kind, options in KINDS.items():
        paths[kind], sec = build(MODEL, OUT / kind, options)
        print(f"build {kind:10s}: {sec:6.2f} s -> {paths[kind].relative_to(ROOT)}")
    co_simulation(args, t_end, h, paths)
    if not args.no_me:
        model_exchange(args, paths, me_span)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
