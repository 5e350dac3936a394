"""Demo: derive the double pendulum of seed 002 §4.1 symbolically, simulate it, write results;
then export the slider-crank (a closed loop) as a native FMI 2.0 Co-Simulation FMU and run it.

Writes out/double_pendulum.csv, out/double_pendulum.png and an animation out/double_pendulum.html
(plays in a browser, no network) and prints the mass matrix, the run statistics and the energy
drift (a conservative model: the drift measures accuracy).  Simulates the flexible double
pendulum of seed 002 §4.2 for 2 s and animates it (out/flexible_double_pendulum.html).
Writes out/slider_crank.fmu (Python-free binary + sources), validates it with fmpy, runs it
through fmpy for 2 s and compares it with mbsfmu.simulate of the same model.
Then balances the inverted cart-pendulum FMU with a discrete LQR controller in the block-diagram
runner after a reference step (ci/closed_loop_demo.py: out/cart_pendulum_loop.csv, .png and .html,
settling time, real-time factor, real-time jitter), and maps where a trolley crane's discrete LQR,
designed for a 2 m rope, holds the load over rope length and load from the linearized closed
loop, confirming three points by 20 s runs (examples/crane_loop.py).
Last, identifies the slider-crank's rod length l and slider mass m_slider from noisy
measurements of the slider's position made at known values (mbsfmu.fit, the Jacobian from the
direct method) and checks that both are recovered within 2 of their reported standard errors
(out/slider_crank_fit.csv, the data; out/slider_crank_fit.png, data, fitted model, residuals).
"""

from __future__ import annotations

import pathlib
import sys
import time

import sympy as sp

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "ci"))

import mbsfmu  # noqa: E402
from mbsfmu import derive  # noqa: E402
from mbsfmu.simulation.run_clock import timing_text  # noqa: E402


def main() -> int:
    out = ROOT / "out"
    out.mkdir(exist_ok=True)
    system = mbsfmu.load_model(ROOT / "models" / "double_pendulum.py")
    print(system.summary())
    start = time.perf_counter()
    eqs = derive(system)
    print(f"\nderived in {time.perf_counter() - start:.3f} s; mass matrix M(y):")
    sp.pprint(sp.trigsimp(eqs.expanded(eqs.M)))
    res = mbsfmu.simulate(system, t_end=10.0, dt=0.01, rtol=1e-10)
    csv_path, png_path = out / "double_pendulum.csv", out / "double_pendulum.png"
    res.to_csv(csv_path)
    res.plot(png_path)
    st = res.stats
    print(f"\nsimulated 10 s with {st['method']}: {st['nfev']} evaluations, {timing_text(st)}")
    print(f"relative energy drift over 10 s: {res.relative_energy_drift():.2e}")
    tip = res.frame("P2_cg")["position"][-1]
    print(f"P2_cg at t = 10 s: {tip.round(6).tolist()}")
    print(f"wrote {csv_path.relative_to(ROOT)} ({len(res.t)} rows) and {png_path.relative_to(ROOT)}")
    start = time.perf_counter()
    html = out / "double_pendulum.html"
    anim = res.animate(html, traces=["P2_cg"])  # the 3D viewer; the tip's path drawn
    print(f"3D viewer of {len(anim.times)} samples written to {html.relative_to(ROOT)} "
          f"({html.stat().st_size / 1e6:.2f} MB, self-contained) in {time.perf_counter() - start:.2f} s")
    status = flexible_demo(out) or fmu_demo(out)
    from closed_loop_demo import run as closed_loop

    return status or closed_loop(ROOT, out) or crane_demo() or fit_demo(out)


def crane_demo() -> int:
    from examples.crane_loop import main as crane

    print("\nclosed-loop crane (examples/crane_loop.py): where the gains for a 2 m rope hold the load")
    start = time.perf_counter()
    failures = crane()
    print(f"map and three confirming runs in {time.perf_counter() - start:.2f} s")
    return failures


def fit_demo(out: pathlib.Path) -> int:
    """Issue 25 item 6: two constants identified from noisy data made at known values."""
    import numpy as np
    import pandas as pd

    model = mbsfmu.load_model(ROOT / "models" / "slider_crank.py")
    truth, sigma = {"l": 0.5, "m_slider": 1.0}, 1e-3  # the model's values; noise 1 mm
    t = np.linspace(0.02, 2.0, 100)
    exact = mbsfmu.simulate(model, times=np.r_[0.0, t], rtol=1e-12, params=truth)["x"][1:]
    noisy = exact + sigma * np.random.default_rng(2025).standard_normal(len(t))
    data = out / "slider_crank_fit.csv"
    pd.DataFrame({"time": t, "x": noisy}).to_csv(data, index=False)
    res = mbsfmu.fit(model, data, {"l": (0.3, 0.8), "m_slider": (0.3, 3.0)}, ["x"],
                     start={"l": 0.65, "m_slider": 2.0}, weights={"x": 1 / sigma**2})
    res.plot(out / "slider_crank_fit.png")
    print(f"\nparameter identification (mbsfmu.fit) from {len(t)} samples of x with noise sigma = "
          f"{sigma:g} m, started at l = 0.65, m_slider = 2:\n{res}")
    se = res.standard_errors
    off = {n: abs(res.values[n] - v) / se[n] for n, v in truth.items()}
    print("true values: " + ", ".join(f"{n} = {v:g} (estimate {res.values[n]:.6g} +- {se[n]:.2g}, "
                                      f"{off[n]:.2f} standard errors off)" for n, v in truth.items()))
    print(f"wrote {data.relative_to(ROOT)} and out/slider_crank_fit.png")
    return 0 if all(v < 2 for v in off.values()) else 1


def flexible_demo(out: pathlib.Path) -> int:
    """Seed 002 §4.2: the double pendulum with flexible beams, 2 s, animated."""
    start = time.perf_counter()
    system = mbsfmu.load_model(ROOT / "models" / "flexible_double_pendulum.py")
    res = mbsfmu.simulate(system, t_end=2.0, dt=0.02, rtol=1e-8)
    data = system.flexible_bodies["P2"].data
    tip = data.nodes[-1].phi[1] @ res.y[[res.coordinate_names.index(c)
                                         for c in system.flexible_bodies["P2"].coordinates]]
    html = out / "flexible_double_pendulum.html"
    written = time.perf_counter()
    anim = res.animate(html, deformation_scale=100)  # millimetres of bending made visible
    written = time.perf_counter() - written
    print(f"\nflexible double pendulum (seed 002 §4.2, {len(res.coordinate_names)} coordinates): 2 s "
          f"simulated, largest tip deflection of the second beam {1e3 * abs(tip).max():.2f} mm; "
          f"3D viewer of {len(anim.times)} samples (deformation x100) written to {html.relative_to(ROOT)} "
          f"({html.stat().st_size / 1e6:.2f} MB) in {written:.2f} s; "
          f"{time.perf_counter() - start:.1f} s in all")
    return 0


def fmu_demo(out: pathlib.Path) -> int:
    import fmpy
    import numpy as np
    from fmpy.validation import validate_fmu

    model = ROOT / "models" / "slider_crank.py"
    start = time.perf_counter()
    fmu = mbsfmu.build_fmu(model, out / "slider_crank.fmu")
    print(f"\nbuilt {fmu.relative_to(ROOT)} in {time.perf_counter() - start:.2f} s; "
          f"validate_fmu problems: {validate_fmu(str(fmu)) or 'none'}")
    tol = {"solver_rtol": 1e-10, "solver_atol": 1e-12}
    start = time.perf_counter()
    r = fmpy.simulate_fmu(str(fmu), stop_time=2.0, output_interval=0.001, start_values=tol)
    wall = time.perf_counter() - start
    ref = mbsfmu.simulate(model, t_end=2.0, dt=0.001, rtol=1e-10, atol=1e-12, method="rkstab")
    diff = max(float(np.max(np.abs(r[n] - ref[n]))) for n in ref.coordinate_names)
    print(f"fmpy ran the FMU for 2 s at 1 ms steps in {wall:.3f} s (fmpy included); "
          f"max |FMU - mbsfmu.simulate| = {diff:.1e}, max constraint residual "
          f"{np.max(r['constraint_residual']):.1e}, pivot reaction at 2 s "
          f"({r['reaction.pivot.x'][-1]:.4f}, {r['reaction.pivot.y'][-1]:.4f}) N")
    return 0 if diff < 1e-7 else 1


if __name__ == "__main__":
    sys.exit(main())
