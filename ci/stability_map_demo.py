"""Demo: the stability of a controlled model mapped over two parameters from the linearization of
its closed loop, and three points of the map confirmed by simulation (issue 28 item 3).

The inverted cart-pendulum (``models/cart_pendulum.py``) is exported as a native FMU with Model
Exchange and Co-Simulation.  A discrete LQR gain is designed once, for the nominal rod (half
length l = 0.5 m, mass m = 0.1 kg) at 10 ms; it runs one period late (a unit delay: the
computation time) behind a force limit of ±20 N, and a reference step moves the cart by 0.2 m::

    ref ─ ctrl (StateFeedback, -K (x - r)) ─ late (UnitDelay) ─ sat (±20 N) ─ cart (FMU, l, m)
          └──────────────────── x, theta, der(x), der(theta) ──────────────────┘

For every (l, m) of a grid, ``largest_real_part`` of the diagram's discrete closed loop (the FMU
linearized about its upright rest state from its Model Exchange, the loop at the runner's step)
says whether the gains hold the rod up, without running the nonlinear model.  Three points,
one well inside the stable region, one near its edge and one outside it, are then run for 20 s
in the runner: the stable ones follow the reference to 1 mm, the unstable one lets the rod fall.

Writes ``out/stability_map.csv`` (l, m, largest real part [1/s], stable) and
``out/stability_map.png`` and prints the map.  Run: ``python ci/stability_map_demo.py``.
"""

from __future__ import annotations

import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
STEP = 0.01
F_MAX = 20.0
REF = 0.2
LENGTHS = (0.1, 0.15, 0.2, 0.3, 0.5, 0.8, 1.0, 1.2, 1.6, 2.0)
MASSES = (0.05, 0.1, 0.3, 0.6, 1.0, 2.0)
#: (l, m) confirmed by simulation: inside, near the edge, outside
CONFIRM = ((0.5, 0.1), (0.8, 1.0), (1.2, 0.3))


def design(root: pathlib.Path = ROOT):
    """(the FMU, the nominal linearization, the dlqr gain at STEP)."""
    import mbsfmu
    from mbsfmu.analysis import dlqr

    model = root / "models" / "cart_pendulum.py"
    fmu = mbsfmu.build_fmu(model, root / "out" / "stability_map", interface="both")
    lin = mbsfmu.linearize(mbsfmu.load_model(model), at={"x": 0, "theta": 0}, inputs=["F"],
                           symbolic=False)
    return fmu, lin, dlqr(lin, Q=[10, 100, 1, 1], R=[0.1], period=STEP)


def diagram(fmu, gain, l: float, m: float, theta0: float = 0.0):
    """The loop of the module docstring with the rod's half length l and mass m."""
    from blocks import FMU, Saturation, StateFeedback, Step, UnitDelay
    from mbsfmu.runner import Diagram

    d = Diagram(step=STEP)
    d.add("cart", FMU(fmu, parameters={"l": l, "m": m}, start_values={"theta": theta0},
                      outputs=tuple(gain.states)))
    d.add("ctrl", StateFeedback(gain.K, gain.states, gain.inputs, references=("x",)))
    d.add("late", UnitDelay())
    d.add("sat", Saturation(-F_MAX, F_MAX))
    d.add("ref", Step(0.1, 0.0, REF))
    for s in gain.states:
        d.connect(f"cart.{s}", f"ctrl.{s}")
    for a, b in (("ref.y", "ctrl.x_ref"), ("ctrl.F", "late.u"), ("late.y", "sat.u"), ("sat.y", "cart.F")):
        d.connect(a, b)
    return d


def stability_map(fmu, gain, lengths=LENGTHS, masses=MASSES) -> np.ndarray:
    """largest_real_part [1/s] of the discrete closed loop for every (l, m): rows l, columns m."""
    from mbsfmu.analysis.closed_loop import largest_real_part

    return np.array([[largest_real_part(diagram(fmu, gain, l, m)) for m in masses] for l in lengths])


def confirm(fmu, gain, l: float, m: float, t_end: float = 20.0) -> dict:
    """A run of the nonlinear loop at (l, m): the final cart error and the largest rod angle."""
    res = diagram(fmu, gain, l, m).run(t_end, check_finite=False)
    theta = res["cart.theta"]
    return {"l": l, "m": m, "x_error": float(abs(res["cart.x"][-1] - REF)),
            "max_theta": float(np.max(np.abs(theta[np.isfinite(theta)])))}


def run(root: pathlib.Path = ROOT, out: pathlib.Path | None = None) -> int:
    out = out or root / "out"
    out.mkdir(parents=True, exist_ok=True)
    fmu, _, gain = design(root)
    t = time.perf_counter()
    grid = stability_map(fmu, gain)
    seconds = time.perf_counter() - t
    print(f"largest real part of the closed loop's poles [1/s] ({grid.size} linearizations, "
          f"{seconds:.2f} s); rows: l [m], columns: m [kg]")
    print("   l \\ m " + "".join(f"{m:>8g}" for m in MASSES))
    for l, row in zip(LENGTHS, grid):
        print(f"{l:8g} " + "".join(f"{v:8.2f}" for v in row))
    with open(out / "stability_map.csv", "w") as f:
        f.write("l,m,largest_real_part,stable\n")
        for l, row in zip(LENGTHS, grid):
            for m, v in zip(MASSES, row):
                f.write(f"{l},{m},{float(v)!r},{int(v < 0)}\n")
    _plot(grid, out / "stability_map.png")
    failures = 0
    for l, m in CONFIRM:
        predicted = grid[LENGTHS.index(l), MASSES.index(m)] < 0
        r = confirm(fmu, gain, l, m)
        held = r["x_error"] < 1e-3 and r["max_theta"] < 0.5
        fell = r["max_theta"] > 1.0
        ok = held if predicted else fell
        failures += not ok
        print(f"l = {l} m, m = {m} kg: predicted {'stable' if predicted else 'unstable'}; run: cart "
              f"error {r['x_error']:.2e} m, largest |theta| {r['max_theta']:.3g} rad -> "
              f"{'agrees' if ok else 'DISAGREES'}")
    return failures


def _plot(grid, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    lim = float(np.max(np.abs(grid)))
    im = ax.imshow(grid, cmap="RdBu_r", vmin=-lim, vmax=lim, origin="lower", aspect="auto")
    ax.contour(grid, levels=[0.0], colors="k")
    ax.set_xticks(range(len(MASSES)), [f"{m:g}" for m in MASSES])
    ax.set_yticks(range(len(LENGTHS)), [f"{v:g}" for v in LENGTHS])
    ax.set_xlabel("rod mass m [kg]")
    ax.set_ylabel("rod half length l [m]")
    ax.set_title("largest real part of the closed-loop poles [1/s]\n"
                 "(blue: stable; gains for l = 0.5, m = 0.1)")
    for (l, m) in CONFIRM:
        ax.plot(MASSES.index(m), LENGTHS.index(l), "k*", markersize=12)
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(run())
