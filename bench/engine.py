"""The C engine against the numpy reference, measured in one run (issue 11).

1. Seed 000 Table 1 with the engine: slider-crank over 40 s and 300 s per engine formulation at
   rtol 1e-8 and 1e-10: CPU time of the engine's run (in-process, one call over the whole grid,
   dt = 0.01) and, for 40 s, of ``simulate(backend='numpy')`` in the same run, with the ratio.
2. Andrews' squeezer on [0, 0.3] (seed 004 Table 4.3), rtol 1e-4 ... 1e-8: function evaluations
   (NFCN) of the engine's RKSTAB and DOP853 against the seed's RKSTAB and MEXX, and CPU per
   evaluation.
3. A stiff spring-damper (k = 1e8 ... 1e10 N/m, critically damped) holding the slider-crank's
   slider, 1 s: the engine's explicit RKSTAB against its Radau IIA (steps, NFCN, CPU).

Run: ``.venv/bin/python bench/engine.py [--quick]`` (``--quick`` skips the 300 s runs and the
numpy reference at rtol 1e-10).
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

import mbsfmu
from mbsfmu import derive
from mbsfmu.engine.extension import Engine
from mbsfmu.model.loader import load_model
from mbsfmu.simulation.simulate import output_grid


def engine_cpu(system, form, t_end, rtol, dt=0.01, repeat=3, method="rkstab"):
    """(best CPU seconds of the engine's run, its statistics, residual) over ``repeat`` runs."""
    grid = output_grid(t_end, dt)
    best = np.inf
    for _ in range(repeat):
        e = Engine(system, form, method=method)
        e.set({"solver_rtol": rtol, "solver_atol": rtol / 10})
        e.start(0.0, t_end)
        t0 = time.process_time()
        rec, reached, status, message, _ = e.run(grid)
        best = min(best, time.process_time() - t0)
        if status != 0:
            raise RuntimeError(message)
    return best, e.statistics(), float(np.abs(rec[:, 2 * derive(system).numeric().f]).max())


def table1(quick: bool):
    s = load_model("models/slider_crank.py")
    print("Seed 000 Table 1 on the engine (slider-crank, dt = 0.01, CPU of the run)")
    print(f"{'formulation':12} {'rtol':>7} {'T':>5} {'engine ms':>10} {'nfev':>8} {'max|c|':>9} "
          f"{'numpy s':>8} {'ratio':>7}")
    for form in ("qr", "svd", "projection", "partition", "baumgarte", "dae"):
        for rtol in (1e-8, 1e-10):
            for t_end in ((40.0,) if quick else (40.0, 300.0)):
                cpu, st, res = engine_cpu(s, form, t_end, rtol)
                nfev = st["nfev"]
                ref = ratio = ""
                if t_end == 40.0 and not (quick and rtol < 1e-9):
                    t0 = time.process_time()
                    mbsfmu.simulate(s, t_end=t_end, rtol=rtol, backend="numpy", formulation=form)
                    ref_s = time.process_time() - t0
                    ref, ratio = f"{ref_s:8.2f}", f"{ref_s / cpu:7.0f}"
                print(f"{form:12} {rtol:7.0e} {t_end:5.0f} {1e3 * cpu:10.2f} {nfev:8d} {res:9.1e} "
                      f"{ref:>8} {ratio:>7}")


#: seed 004 Table 4.3 (Andrews on [0, 0.3], atol = rtol / 10): NFCN of RKSTAB and of MEXX per rtol
SEED_NFCN = {1e-4: (10712, 18724), 1e-5: (16550, 26060), 1e-6: (25688, 34550), 1e-7: (39230, 41764),
             1e-8: (59852, 47935)}


def andrews():
    """Seed 004 Table 4.3 on the engine: NFCN of its RKSTAB and DOP853 (both projecting with 'qr')
    beside the seed's RKSTAB and MEXX, the ratio of the engine's better method to the better of
    the seed's, and CPU per function evaluation."""
    s = load_model("models/andrews.py")
    print("\nAndrews' squeezer on [0, 0.3], engine with 'qr', atol = rtol / 10 (seed 004 Table 4.3)")
    print(f"{'rtol':>7} {'RKSTAB':>8} {'DOP853':>8} {'us/nfev':>8} {'seed RKSTAB':>12} {'MEXX':>8} "
          f"{'best/seed best':>15}")
    for rtol, (seed_rkstab, mexx) in SEED_NFCN.items():
        nfev, us = {}, []
        for method in ("rkstab", "dop853"):
            cpu, st, _ = engine_cpu(s, "qr", 0.3, rtol, dt=0.3, method=method)
            nfev[method] = st["nfev"]
            us.append(1e6 * cpu / st["nfev"])
        best = min(nfev.values())
        print(f"{rtol:7.0e} {nfev['rkstab']:8d} {nfev['dop853']:8d} {max(us):8.2f} {seed_rkstab:12d} "
              f"{mexx:8d} {best / min(seed_rkstab, mexx):15.2f}")


def stiff():
    import math

    print("\nStiff spring-damper on the slider (1 s, dt = 0.1, rtol 1e-8, 'qr'): RKSTAB against Radau IIA")
    print(f"{'k [N/m]':>8} {'method':>7} {'steps':>8} {'nfev':>9} {'CPU ms':>9}")
    for k in (1e8, 1e9, 1e10):
        s = load_model("models/slider_crank.py")
        x = s.coordinates_["x"]
        kk, dd = s.constants(k_spring=k, d_spring=2.0 * math.sqrt(k))
        s.generalized_force("holder", "x", -kk * (x.symbol - 0.6) - dd * x.velocity)
        for method in ("rkstab", "stiff"):
            cpu, st, _ = engine_cpu(s, "qr", 1.0, 1e-8, dt=0.1, repeat=1, method=method)
            print(f"{k:8.0e} {method:>7} {st['naccept']:8d} {st['nfev']:9d} {1e3 * cpu:9.2f}")


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    quick = "--quick" in sys.argv
    table1(quick)
    andrews()
    stiff()
