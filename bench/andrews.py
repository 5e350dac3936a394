"""Andrews' squeezing mechanism: mbsfmu's stabilized integrator against seed 004 (RKSTAB, MEXX) and Radau.

The problem is ``models/andrews.py`` (Hairer & Wanner II, VII.7; IVP test set ``andrews``): seven
coordinates, six loop constraints, one degree of freedom, consistent initial values at rest.

Part 1 -- seed 004, Table 4.3 (and Table 4.1)
---------------------------------------------
Chin's thesis (seed 004 §4.4.1) runs RKSTAB (DOPRI5(4) + PStab) and Lubich's MEXX on Andrews over
**t in [0, 0.3]** ("We test our RKSTAB on the time interval [0,0.3]") with rtol = 1e-4 ... 1e-8 and
atol = rtol/10 (the default of all its experiments).  We run mbsfmu's RKSTAB
(``method='explicit'``) with the default formulation ``qr`` and with ``projection`` (PStab, seed
Algorithm 3.3) on the same interval and tolerances, and print function evaluations (NFCN), steps
(accepted + rejected), CPU seconds and the drift: the largest |g(q)| and |G(q) v| over all
accepted steps after stabilization, and the largest |g|, |G v| of the raw Runge-Kutta results
before stabilization (how far a step leaves the manifold).  The seed's CPU seconds come from a
1995 workstation and are printed for completeness only; compare NFCN.  Function evaluations are
counted as in the seed: calls of the right-hand side (stages), not of the projection.

Part 2 -- accuracy at t = 0.03 against Radau
--------------------------------------------
At t = 0.03 (the IVP test set's end point) the error is the largest relative error of the seven
angles against our own tight-tolerance solution (RKSTAB + ``projection`` at rtol 1e-12), which
is checked against scipy's DOP853 on the index-1 ODE at rtol 1e-13 and against the IVP test
set's published reference.  The competitor is scipy's Radau (``solve_ivp``) on the same index-1
ODE -- y'' and lambda from the KKT system [[M, C^T], [C, 0]], i.e. mbsfmu's formulation ``dae``,
the same generated code -- without any projection, atol = rtol/10.  CPU is process time, the best
of ``--repeat`` runs.  "CPU ratio at equal accuracy" interpolates our CPU-versus-error curve
(log-log, piecewise linear) at each Radau error.

Usage::

    .venv/bin/python bench/andrews.py                 # full run (about 3-4 minutes)
    .venv/bin/python bench/andrews.py --quick         # rtol 1e-4 ... 1e-6 only
    .venv/bin/python bench/andrews.py --markdown out.md   # also write the tables as Markdown
    .venv/bin/python bench/andrews.py --diagnose      # + why qr needs fewer NFCN than projection
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mbsfmu import derive  # noqa: E402
from mbsfmu.core.errors import SimulationError  # noqa: E402
from mbsfmu.reference.consistent_initialization import consistent_state  # noqa: E402
from mbsfmu.reference.formulations import make_formulation  # noqa: E402
from mbsfmu.reference.integrators.rkstab import integrate  # noqa: E402
from mbsfmu.simulation.simulate import initial_state  # noqa: E402
from models import andrews  # noqa: E402

#: Seed 004, Table 4.3 (MEXX vs RKSTAB, [0, 0.3], atol = rtol/10) and Table 4.1 (PStab NFCN).
SEED = {
    1e-4: {"rkstab_nfcn": 10712, "rkstab_cpu": 10.08, "mexx_nfcn": 18724, "mexx_cpu": 18.61,
           "t41_nfcn": 10784, "t41_nstep": 1791},
    1e-5: {"rkstab_nfcn": 16550, "rkstab_cpu": 14.41, "mexx_nfcn": 26060, "mexx_cpu": 25.72,
           "t41_nfcn": 17024, "t41_nstep": 2837},
    1e-6: {"rkstab_nfcn": 25688, "rkstab_cpu": 22.53, "mexx_nfcn": 34550, "mexx_cpu": 33.62,
           "t41_nfcn": 25592, "t41_nstep": 4265},
    1e-7: {"rkstab_nfcn": 39230, "rkstab_cpu": 33.99, "mexx_nfcn": 41764, "mexx_cpu": 40.54,
           "t41_nfcn": 38780, "t41_nstep": 6463},
    1e-8: {"rkstab_nfcn": 59852, "rkstab_cpu": 52.18, "mexx_nfcn": 47935, "mexx_cpu": 46.08,
           "t41_nfcn": None, "t41_nstep": None},
}
SEED_T_END = 0.3
ACC_T_END = 0.03
NAMES = tuple(andrews.INITIAL)
FORMULATIONS = ("qr", "projection")


def setup():
    system = andrews.model()
    numeric = derive(system).numeric()
    x0 = consistent_state(numeric, initial_state(system))
    return system, numeric, x0


def rkstab_run(numeric, x0, formulation, t_end, rtol, record=False):
    """mbsfmu's RKSTAB (what ``simulate(method='explicit')`` calls) on [0, t_end].

    With ``record`` the raw (unstabilized) step results are kept for the drift statistics; only
    references are stored inside the timed run."""
    form = make_formulation(formulation, numeric)
    raw = []

    def project(t, x):
        raw.append((t, x))
        return form.project(t, x)

    start = time.process_time()
    sol = integrate(form, x0, (0.0, t_end), project=project if record else form.project,
                    rtol=rtol, atol=rtol / 10, t_eval=None if record else [t_end])
    cpu = time.process_time() - start
    return sol, cpu, raw


def drift(numeric, states):
    """Largest |g(q)| and |G(q) v| over (t, x) pairs."""
    f = numeric.f
    pos = vel = 0.0
    for t, x in states:
        c, C, b1 = numeric.constraint_parts(t, x[:f])
        pos = max(pos, float(np.max(np.abs(c))))
        vel = max(vel, float(np.max(np.abs(C @ x[f:] + b1))))
    return pos, vel


def best_of(repeat, fn):
    best = None
    for _ in range(repeat):
        out = fn()
        if best is None or out[1] < best[1]:
            best = out
    return best


def part1(numeric, x0, tols, t_end):
    rows = []
    for rtol in tols:
        for form in FORMULATIONS:
            sol, cpu, raw = rkstab_run(numeric, x0, form, t_end, rtol, record=True)
            post = drift(numeric, zip(sol.t, sol.x.T))
            pre = drift(numeric, raw)
            rows.append({"rtol": rtol, "form": form, "nfev": sol.nfev, "nstep": sol.naccept + sol.nreject,
                         "naccept": sol.naccept, "nreject": sol.nreject, "cpu": cpu,
                         "post": post, "pre": pre})
            print(f"  rtol {rtol:.0e} {form:10s} NFCN {sol.nfev:6d}  CPU {cpu:6.2f} s", flush=True)
    return rows


def radau_run(numeric, x0, t_end, rtol):
    form = make_formulation("dae", numeric)
    start = time.process_time()
    sol = solve_ivp(form, (0.0, t_end), x0, method="Radau", rtol=rtol, atol=rtol / 10)
    cpu = time.process_time() - start
    if sol.status != 0:
        raise RuntimeError(f"Radau failed at rtol {rtol}: {sol.message}")
    return sol.y[:numeric.f, -1], cpu, form.nfev, len(sol.t) - 1


def rel_error(y, ref):
    return float(np.max(np.abs(y - ref) / np.abs(ref)))


def part2(numeric, x0, tols, radau_tols, repeat):
    f = numeric.f
    sol, cpu_ref, _ = rkstab_run(numeric, x0, "projection", ACC_T_END, 1e-12)
    ref = sol.x[:f, -1]
    dop = solve_ivp(make_formulation("dae", numeric), (0.0, ACC_T_END), x0, method="DOP853",
                    rtol=1e-13, atol=1e-14)
    published = np.array([andrews.REFERENCE_T003[n] for n in NAMES])
    checks = {"DOP853 rtol 1e-13 (index-1 ODE)": rel_error(dop.y[:f, -1], ref),
              "IVP test set reference (PSIDE 1e-14)": rel_error(published, ref)}
    rows = []
    for rtol in sorted(set(tols) | set(radau_tols), reverse=True):
        if rtol in tols:
            for form in FORMULATIONS:
                try:
                    sol, cpu, _ = best_of(repeat, lambda form=form, rtol=rtol: rkstab_run(
                        numeric, x0, form, ACC_T_END, rtol))
                except SimulationError as exc:
                    print(f"  rtol {rtol:.0e} {form}: FAILED ({exc})", flush=True)
                    continue
                rows.append({"rtol": rtol, "solver": f"RKSTAB {form}",
                             "err": rel_error(sol.x[:f, -1], ref), "nfev": sol.nfev,
                             "steps": sol.naccept + sol.nreject, "cpu": cpu})
        if rtol in radau_tols:
            y, cpu, nfev, steps = best_of(repeat, lambda rtol=rtol: radau_run(numeric, x0, ACC_T_END, rtol))
            rows.append({"rtol": rtol, "solver": "Radau (index-1, scipy)", "err": rel_error(y, ref),
                         "nfev": nfev, "steps": steps, "cpu": cpu})
        print(f"  rtol {rtol:.0e} done", flush=True)
    return ref, checks, rows


def cpu_at_error(rows, solver, err):
    """Our CPU at a given error by log-log interpolation over our runs.

    Returns (cpu, note): note is '' inside our range; '>' if ``err`` is larger than our largest
    error (then cpu is that of our least accurate run, an upper bound of what we would need);
    None if ``err`` is smaller than our smallest error."""
    pts = sorted((r["err"], r["cpu"]) for r in rows if r["solver"] == solver)
    e = np.log([p[0] for p in pts])
    c = np.log([p[1] for p in pts])
    x = math.log(err)
    if x > e[-1]:
        return pts[-1][1], ">"
    if x < e[0]:
        return None, None
    return float(np.exp(np.interp(x, e, c))), ""


def tables(rows1, ref_checks, rows2, t_end, tols):
    seed = abs(t_end - SEED_T_END) < 1e-12
    out = [f"### Part 1: RKSTAB on Andrews, t in [0, {t_end:g}], atol = rtol/10 "
           "(seed 004 Tables 4.1, 4.3)\n"]
    if not seed:
        out.append(f"(t_end = {t_end:g} is not the seed's 0.3: the seed columns do not apply)\n")
    out.append("| rtol | seed RKSTAB NFCN | seed MEXX NFCN | ours qr NFCN | ours projection NFCN "
               "| qr steps (rej) | projection steps (rej) | seed RKSTAB / MEXX CPU [s, 1995] "
               "| qr CPU [s] (us/NFCN) | projection CPU [s] (us/NFCN) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    by = {(r["rtol"], r["form"]): r for r in rows1}
    for rtol in tols:
        s = SEED.get(rtol, {}) if seed else {}
        q, p = by[(rtol, "qr")], by[(rtol, "projection")]

        def mark(n, s=s):
            ref = s.get("rkstab_nfcn")
            return f"{n}" if ref is None else f"{n} ({100 * (n - ref) / ref:+.1f} %)"

        def cpu(r):
            return f"{r['cpu']:.2f} ({1e6 * r['cpu'] / r['nfev']:.0f})"

        out.append(f"| {rtol:.0e} | {s.get('rkstab_nfcn', '-')} | {s.get('mexx_nfcn', '-')} "
                   f"| {mark(q['nfev'])} | {mark(p['nfev'])} | {q['nstep']} ({q['nreject']}) "
                   f"| {p['nstep']} ({p['nreject']}) | {s.get('rkstab_cpu', '-')} / {s.get('mexx_cpu', '-')} "
                   f"| {cpu(q)} | {cpu(p)} |")
    if seed:
        out.append("\n(percentages: our NFCN relative to seed RKSTAB, Table 4.3; seed Table 4.1 PStab "
                   "NFCN: " + ", ".join(f"{SEED[r]['t41_nfcn']}" for r in tols
                                        if SEED.get(r, {}).get("t41_nfcn")) + ")")
    out.append("\nDrift, max over the run: after stabilization (accepted steps) and of the raw "
               "Runge-Kutta result before stabilization (all attempted steps):\n")
    out.append("| rtol | formulation | max abs(g) after | max abs(G v) after "
               "| max abs(g) before | max abs(G v) before |")
    out.append("|---|---|---|---|---|---|")
    for r in rows1:
        out.append(f"| {r['rtol']:.0e} | {r['form']} | {r['post'][0]:.1e} | {r['post'][1]:.1e} "
                   f"| {r['pre'][0]:.1e} | {r['pre'][1]:.1e} |")
    out.append(f"\n### Part 2: accuracy at t = {ACC_T_END:g} against Radau (index-1 ODE, no projection)\n")
    out.append("Reference: RKSTAB + projection at rtol 1e-12; its max relative difference (7 angles) to")
    for k, v in ref_checks.items():
        out.append(f"- {k}: {v:.1e}")
    out.append("")
    out.append("| rtol | solver | max rel. error (7 angles) | NFCN | steps | CPU [s] |")
    out.append("|---|---|---|---|---|---|")
    for r in rows2:
        out.append(f"| {r['rtol']:.0e} | {r['solver']} | {r['err']:.1e} | {r['nfev']} | {r['steps']} "
                   f"| {r['cpu']:.3f} |")
    out.append("\nCPU at equal accuracy: at each Radau error, our CPU interpolated (log-log) on our runs; "
               "'>' = Radau's error is larger than that of all our runs, so our least accurate run "
               "(which is still more accurate) is used.\n")
    out.append("| Radau rtol | Radau error | Radau CPU [s] | qr CPU [s] | Radau/qr | projection CPU [s] "
               "| Radau/projection |")
    out.append("|---|---|---|---|---|---|---|")
    for r in rows2:
        if not r["solver"].startswith("Radau"):
            continue
        cells = []
        for solver in ("RKSTAB qr", "RKSTAB projection"):
            cpu, note = cpu_at_error(rows2, solver, r["err"])
            if cpu is None:
                cells += ["(more accurate than all our runs)", "-"]
            else:
                cells += [f"{note}{cpu:.3f}" if not note else f"{cpu:.3f} (ours more accurate)",
                          f"{note}{r['cpu'] / cpu:.1f}x"]
        out.append(f"| {r['rtol']:.0e} | {r['err']:.1e} | {r['cpu']:.3f} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def diagnose(numeric, x0, tols, t_end):
    """Why 'qr' needs fewer evaluations than 'projection': 'qr' evaluates the right-hand side at
    the velocity-projected state (seed 000 eq. 30 inside rhs), 'projection' at the raw stage value.
    Swap that one ingredient in both and count evaluations again."""
    from mbsfmu.reference.formulations.base import kkt_solve
    from mbsfmu.reference.formulations.optimal_partitioning import OptimalPartitioning
    from mbsfmu.reference.formulations.post_stabilization import PostStabilization

    class QRWithoutEq30(OptimalPartitioning):
        def rhs(self, t, x):
            f = self.f
            y, v = x[:f], x[f:]
            M, h, c, C, b1, b2 = self.numeric.constrained_parts(t, y, v)
            d = self.decompose(C)
            gamma = -d.pinv_solve(b2)
            ydd = d.J @ np.linalg.solve(d.J.T @ M @ d.J, d.J.T @ (h - M @ gamma)) + gamma
            return np.concatenate((v, ydd))

    class ProjectionWithVelocityProjection(PostStabilization):
        def rhs(self, t, x):
            f = self.f
            y, v = x[:f], x[f:]
            M, h, c, C, b1, b2 = self.numeric.constrained_parts(t, y, v)
            v = v - self._F(t, y, M, C) @ (C @ v + b1)
            M, h, c, C, b1, b2 = self.numeric.constrained_parts(t, y, v)
            return np.concatenate((v, kkt_solve(M, h, C, b2)[0]))

    out = ["| rtol | qr | qr without eq. 30 in rhs | projection | projection + velocity projection in rhs |",
           "|---|---|---|---|---|"]
    for rtol in tols:
        cells = []
        for form in (make_formulation("qr", numeric), QRWithoutEq30(numeric),
                     make_formulation("projection", numeric), ProjectionWithVelocityProjection(numeric)):
            sol = integrate(form, x0, (0.0, t_end), project=form.project, rtol=rtol, atol=rtol / 10,
                            t_eval=[t_end])
            cells.append(f"{sol.nfev} ({sol.nreject} rej.)")
        out.append(f"| {rtol:.0e} | " + " | ".join(cells) + " |")
        print(f"  rtol {rtol:.0e} done", flush=True)
    return (f"\n### Diagnosis: NFCN on [0, {t_end:g}] with the velocity projection inside the "
            "right-hand side swapped\n\n" + "\n".join(out))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tols", type=float, nargs="+", default=[1e-4, 1e-5, 1e-6, 1e-7, 1e-8])
    ap.add_argument("--acc-tols", type=float, nargs="+",
                    default=[1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11],
                    help="rtol of our runs in part 2")
    ap.add_argument("--radau-tols", type=float, nargs="+",
                    default=[1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10], help="rtol of Radau in part 2")
    ap.add_argument("--t-end", type=float, default=SEED_T_END, help="seed interval end (0.3)")
    ap.add_argument("--repeat", type=int, default=3, help="CPU: best of N runs in part 2")
    ap.add_argument("--quick", action="store_true", help="rtol 1e-4 ... 1e-6 only")
    ap.add_argument("--markdown", type=pathlib.Path, help="also write the tables to this file")
    ap.add_argument("--diagnose", action="store_true",
                    help="also count NFCN with the velocity projection in rhs swapped (qr vs projection)")
    args = ap.parse_args(argv)
    if args.quick:
        args.tols = [t for t in args.tols if t >= 1e-6]
        args.acc_tols = [t for t in args.acc_tols if t >= 1e-6]
        args.radau_tols = [t for t in args.radau_tols if t >= 1e-6]
        args.repeat = 1
    start = time.perf_counter()
    system, numeric, x0 = setup()
    rkstab_run(numeric, x0, "qr", 1e-3, 1e-4)  # compile the generated functions outside the timings
    rkstab_run(numeric, x0, "projection", 1e-3, 1e-4)
    print(f"Part 1: seed 004 comparison on [0, {args.t_end:g}]", flush=True)
    rows1 = part1(numeric, x0, args.tols, args.t_end)
    print(f"Part 2: accuracy at t = {ACC_T_END:g}", flush=True)
    _, checks, rows2 = part2(numeric, x0, args.acc_tols, args.radau_tols, args.repeat)
    text = tables(rows1, checks, rows2, args.t_end, args.tols)
    if args.diagnose:
        print("Diagnosis", flush=True)
        text += "\n" + diagnose(numeric, x0, args.tols, args.t_end)
    print()
    print(text)
    print(f"\n(total bench time {time.perf_counter() - start:.0f} s)")
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
