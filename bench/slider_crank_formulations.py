"""Seed 000 Table 1 and Fig. 3, reproduced for every mbsfmu formulation in one run.

The slider-crank of ``models/slider_crank.py`` (modeled from the slider, seed 000 §5) is
simulated over 40 s and over 300 s with each formulation: the unstabilized acceleration-level
DAE (seed eq. 9), Baumgarte, fixed partitions with y_i = x, alpha, beta (eqs. 11-18), the QR and
SVD optimal combinations (eqs. 19-31), and post-stabilization (seed 004 PStab), plus the
"analytical" minimal formulation: one ODE in the crank angle (as the seed's first row),
integrated by scipy on lambdified sympy expressions.

Printed per run: CPU time of the integration, max position-level residual max|c|, and the
relative energy error max|E - E0| / E0 (the mechanism coasts: E is constant).  A PNG of the
residual over time (log scale) is written to bench/out/slider_crank_residual.png.

    python bench/slider_crank_formulations.py [--rtol 1e-10] [--t-long 300] [--method explicit]
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
import time
import warnings

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mbsfmu  # noqa: E402
from mbsfmu import derive  # noqa: E402
from models import slider_crank  # noqa: E402

RUNS = [
    ("DAE (eq. 9)", "dae", {}),
    ("Baumgarte a=b=10", "baumgarte", {}),
    ("Partition, y_i = x", "partition", {"independent": ["x"]}),
    ("Partition, y_i = alpha", "partition", {"independent": ["alpha"]}),
    ("Partition, y_i = beta", "partition", {"independent": ["beta"]}),
    ("SVD", "svd", {}),
    ("QR", "qr", {}),
    ("Projection (PStab)", "projection", {}),
]


def analytical(t_end, rtol, atol):
    """One ODE in the crank angle theta, T = m(theta) theta'^2 / 2 (Lagrange, 2nd kind)."""
    th, thd = sp.symbols("th thd")
    r, l, mc, mr, ms = 0.15, 0.5, 0.3, 0.5, 1.0
    px, py = r * sp.cos(th), r * sp.sin(th)
    x = px + sp.sqrt(l**2 - py**2)
    rod = sp.atan2(py, px - x)
    gx, gy = (px + x) / 2, py / 2
    m = (ms * sp.diff(x, th) ** 2 + mr * (sp.diff(gx, th) ** 2 + sp.diff(gy, th) ** 2)
         + mr * l**2 / 12 * sp.diff(rod, th) ** 2 + mc * r**2 / 12 + mc * (r / 2) ** 2)
    acc = -sp.diff(m, th) * thd**2 / (2 * m)
    f_acc = sp.lambdify((th, thd), acc, "math")
    f_m = sp.lambdify(th, m, "math")
    z0 = [math.pi / 4, 2 * math.pi]
    start = time.perf_counter()
    sol = solve_ivp(lambda t, z: [z[1], f_acc(z[0], z[1])], (0, t_end), z0, method="DOP853",
                    rtol=rtol, atol=atol, dense_output=False, t_eval=np.linspace(0, t_end, 301))
    cpu = time.perf_counter() - start
    E = 0.5 * np.array([f_m(a) for a in sol.y[0]]) * sol.y[1] ** 2
    return cpu, float(np.max(np.abs(E - E[0])) / E[0]), sol.nfev


def run(label, formulation, options, t_end, rtol, method):
    dt = t_end / 3000
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = mbsfmu.simulate(slider_crank.model(), t_end=t_end, dt=dt, rtol=rtol,
                                  method=method, formulation=formulation,
                                  formulation_options=options)
    except mbsfmu.MbsError as exc:
        return {"label": label, "failed": f"{type(exc).__name__}: {str(exc)[:60]}"}
    e = res.energy()["total"]
    return {"label": label, "cpu": res.stats["cpu_seconds"], "nfev": res.stats["nfev"],
            "residual": float(res.constraint_residual.max()),
            "energy": float(np.max(np.abs(e - e[0])) / abs(e[0])),
            "t": res.t, "res_t": res.constraint_residual}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rtol", type=float, default=1e-10)
    p.add_argument("--t-short", type=float, default=40.0)
    p.add_argument("--t-long", type=float, default=300.0)
    p.add_argument("--method", default="explicit", help="explicit (RKSTAB) or stiff (Radau)")
    p.add_argument("--png", default=str(ROOT / "bench" / "out" / "slider_crank_residual.png"))
    args = p.parse_args(argv)
    atol = args.rtol / 10

    start = time.perf_counter()
    derive(slider_crank.model())
    print(f"slider-crank, rtol {args.rtol:g}, atol {atol:g}, method {args.method}; derivation "
          f"(modeling time) {time.perf_counter() - start:.2f} s")
    head = (f"{'formulation':24s} | {'CPU ' + str(int(args.t_short)) + ' s':>9s} "
            f"{'max|c|':>9s} {'dE/E':>9s} | {'CPU ' + str(int(args.t_long)) + ' s':>10s} "
            f"{'max|c|':>9s} {'dE/E':>9s} {'nfev':>8s}")
    print(head)
    print("-" * len(head))
    cpu_s, dE_s, _ = analytical(args.t_short, args.rtol, atol)
    cpu_l, dE_l, nfev = analytical(args.t_long, args.rtol, atol)
    print(f"{'Analytical (1 ODE)':24s} | {cpu_s:9.2f} {'-':>9s} {dE_s:9.1e} | {cpu_l:10.2f} "
          f"{'-':>9s} {dE_l:9.1e} {nfev:8d}")
    long_runs = []
    for label, form, opts in RUNS:
        a = run(label, form, opts, args.t_short, args.rtol, args.method)
        b = run(label, form, opts, args.t_long, args.rtol, args.method)
        long_runs.append(b)

        def cols(r):
            if "failed" in r:
                return f"{'failed':>9s} {'':9s} {'':9s}"
            return f"{r['cpu']:9.2f} {r['residual']:9.1e} {r['energy']:9.1e}"

        nf = f"{b['nfev']:8d}" if "nfev" in b else ""
        print(f"{label:24s} | {cols(a)} | {cols(b):>30s} {nf}", flush=True)
        for r in (a, b):
            if "failed" in r:
                print(f"    {r['failed']}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    for r in long_runs:
        if "t" in r:
            ax.semilogy(r["t"], np.maximum(r["res_t"], 1e-18), label=r["label"], lw=1)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("max |c| (position-level residual) [m]")
    ax.set_title(f"Slider-crank constraint drift, rtol {args.rtol:g} (seed 000 Fig. 3)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    pathlib.Path(args.png).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.png, dpi=120)
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
