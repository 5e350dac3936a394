"""Sensitivities of the slider-crank: the engine's direct method against central differences.

Gradients of three metrics (the final slider position x, the final crank rate der(alpha) and
the final pin.y output) by the five constants the equations read (r, l, m_crank, m_rod,
m_slider) over 10 s at rtol 1e-8, two ways:

* direct: one run with ``sensitivities=[...]`` (runtime/mbs_sensitivity.c);
* central differences: 2 p + 1 plain runs at the same rtol, step 1e-4 relative;

each against a reference of fourth-order central differences of plain runs at rtol 1e-12
(independent of the direct method).  Times are wall-clock of the runs after a warm-up (the
builds are not timed), the best of ``--repeat``.

    .venv/bin/python bench/sensitivity.py [--t-end 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import mbsfmu
from models.slider_crank import model

PARAMS = ["r", "l", "m_crank", "m_rod", "m_slider"]
METRICS = ["x", "der(alpha)", "pin.y"]


def final_values(res):
    return np.array([res[m][-1] for m in METRICS])


def run(s, t_end, rtol, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mbsfmu.simulate(s, t_end, dt=t_end / 100, rtol=rtol, **kw)


def central(s, t_end, rtol, order=2, h_rel=1e-4):
    cols = []
    for p in PARAMS:
        v = s.constants_[p].value
        h = h_rel * abs(v)
        ks = (1, -1) if order == 2 else (2, 1, -1, -2)
        f = [final_values(run(s, t_end, rtol, params={p: v + k * h})) for k in ks]
        if order == 2:
            cols.append((f[0] - f[1]) / (2 * h))
        else:
            cols.append((-f[0] + 8 * f[1] - 8 * f[2] + f[3]) / (12 * h))
    return np.array(cols).T


def direct(s, t_end, rtol):
    res = run(s, t_end, rtol, sensitivities=PARAMS)
    return np.array([[res.sensitivity(m, p)[-1] for p in PARAMS] for m in METRICS]), res


def best(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rtol", type=float, default=1e-8)
    a = ap.parse_args()
    s = model()
    run(s, 0.1, a.rtol)
    direct(s, 0.1, a.rtol)  # builds, not timed
    t_plain, _ = best(lambda: run(s, a.t_end, a.rtol), a.repeat)
    t_direct, (g_direct, res) = best(lambda: direct(s, a.t_end, a.rtol), a.repeat)
    t_fd, g_fd = best(lambda: central(s, a.t_end, a.rtol), a.repeat)
    ref = central(s, a.t_end, 1e-12, order=4)
    scale = np.abs(ref).max(axis=1, keepdims=True)
    err_direct = np.abs(g_direct - ref).max() / scale.max()
    err_fd = np.abs(g_fd - ref).max() / scale.max()
    print(f"slider-crank {a.t_end:g} s, rtol {a.rtol:g}: gradients of {len(METRICS)} metrics by "
          f"{len(PARAMS)} constants")
    print(f"{'method':34s} {'time [s]':>9s} {'/ one run':>9s} {'rel. error':>11s}")
    print(f"{'one plain run':34s} {t_plain:9.4f} {1.0:9.2f} {'':>11s}")
    print(f"{'direct (engine sensitivities)':34s} {t_direct:9.4f} {t_direct / t_plain:9.2f} "
          f"{err_direct:11.2e}")
    print(f"{'central differences (2p + 1 runs)':34s} {t_fd:9.4f} {t_fd / t_plain:9.2f} {err_fd:11.2e}")
    print(f"direct is {t_fd / t_direct:.2f}x faster than central differences, "
          f"{err_fd / max(err_direct, 1e-300):.1f}x more accurate; steps: plain run vs direct "
          f"{res.stats['naccept']}")


if __name__ == "__main__":
    main()
