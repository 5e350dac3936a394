"""Demo part 3: the inverted cart-pendulum FMU balanced by a state-feedback controller in the runner.

The zoo's ``cart_pendulum`` (rod upright at theta = 0, unstable; starts at theta = 0.1 rad) is
exported as a native FMU.  A discrete LQR controller, designed from the symbolic linearization
of the same model at the upright position (``mbsfmu.linearize``, then ``mbsfmu.analysis.dlqr``
on the zero-order-hold discretization), runs every 10 ms (multi-rate: the diagram steps at
1 ms); a reference step moves the cart from 0 to 0.5 m at t = 1 s; the force is limited to
±20 N::

    ref (Step) ─┐
    plant.x ────┤ ctrl (Function: F = -K [x - r, theta, x', theta'], every 10 ms) ─ sat ─ plant.F
    plant.theta ┤
    plant.der(x), plant.der(theta)

Writes ``out/cart_pendulum_loop.csv``, ``out/cart_pendulum_loop.png`` and the 3D viewer page
``out/cart_pendulum_loop.html`` (the plant drawn from the recorded coordinates through the view
the FMU carries, 100 frames per second) and prints the
settling time, the largest rod angle, the real-time factor of the run as fast as possible, and
the jitter of a 2 s run paced to the wall clock.
"""

from __future__ import annotations

import pathlib
import time

import numpy as np

T_END = 6.0
STEP, CONTROL_PERIOD = 1e-3, 1e-2
REF_TIME, REF = 1.0, 0.5
F_MAX = 20.0


def lqr_gain(system, period: float):
    """Discrete LQR gain K (F = -K [x, theta, x', theta']) of the ZOH discretization at
    ``period``, from the linearization about the upright rest position (symbolic in the
    constants, evaluated with their defaults), and the linearization itself."""
    import mbsfmu
    from mbsfmu.analysis import dlqr

    lin = mbsfmu.linearize(system, at={"x": 0.0, "theta": 0.0}, inputs=["F"], equilibrium=True)
    gain = dlqr(lin, Q=[10.0, 100.0, 1.0, 1.0], R=[0.1], period=period)
    assert gain.states == ["x", "theta", "der(x)", "der(theta)"]
    return gain.K[0], lin


def build_diagram(fmu: pathlib.Path, K, parameters=None):
    """The loop of the module docstring; ``parameters``: of the plant's FMU block."""
    from blocks import FMU, Function, Saturation, Step
    from mbsfmu.runner import Diagram

    k = [float(v) for v in K]

    def state_feedback(t, r, x, theta, dx, dtheta):
        return -(k[0] * (x - r) + k[1] * theta + k[2] * dx + k[3] * dtheta)

    d = Diagram(step=STEP)
    d.add("ref", Step(time=REF_TIME, before=0.0, after=REF))
    d.add("plant", FMU(fmu, parameters=parameters))
    d.add("ctrl", Function(state_feedback, inputs=("r", "x", "theta", "dx", "dtheta"),
                           outputs=("F",), sample_time=CONTROL_PERIOD))
    d.add("sat", Saturation(-F_MAX, F_MAX))
    d.connect("ref.y", "ctrl.r")
    for port, var in (("x", "x"), ("theta", "theta"), ("dx", "der(x)"), ("dtheta", "der(theta)")):
        d.connect(f"plant.{var}", f"ctrl.{port}")
    d.connect("ctrl.F", "sat.u")
    d.connect("sat.y", "plant.F")
    return d


def settling_time(t, x, target, t_from, band=0.02):
    """First time after which |x - target| stays within band * |target| (nan if never)."""
    outside = np.nonzero((t >= t_from) & (np.abs(x - target) > band * abs(target)))[0]
    if len(outside) == 0:
        return 0.0
    last = outside[-1]
    return float(t[last + 1] - t_from) if last + 1 < len(t) else float("nan")


def run(root: pathlib.Path, out: pathlib.Path) -> int:
    import mbsfmu

    model = root / "models" / "cart_pendulum.py"
    system = mbsfmu.load_model(model)
    fmu = mbsfmu.build_fmu(system, out / "cart_pendulum.fmu")
    start = time.perf_counter()
    K, lin = lqr_gain(system, CONTROL_PERIOD)
    unstable = [m for m in lin.modes() if m.eigenvalue.real > 0]
    print(f"\nlinearized upright (symbolic, {time.perf_counter() - start:.3f} s with the LQR design): "
          f"K = {lin.K.tolist()}, unstable pole {unstable[0].eigenvalue.real:.4f} 1/s")
    print(f"closed loop: {fmu.relative_to(root)} + discrete LQR every "
          f"{CONTROL_PERIOD * 1e3:.0f} ms, K = {np.round(K, 3).tolist()}")
    d = build_diagram(fmu, K)
    print("execution order:", " -> ".join("+".join(g) for g in d.execution_order()))
    start = time.perf_counter()
    res = d.run(T_END)
    wall = time.perf_counter() - start
    csv_path, png_path = out / "cart_pendulum_loop.csv", out / "cart_pendulum_loop.png"
    res.to_csv(csv_path)
    res.plot(png_path, signals=["ref.y", "plant.x", "plant.theta", "sat.y"])
    t, x, theta = res.t, res["plant.x"], res["plant.theta"]
    ts = settling_time(t, x, REF, REF_TIME)
    print(f"ran {T_END:g} s ({len(t) - 1} steps) in {wall:.3f} s: real-time factor "
          f"{T_END / wall:.0f} as fast as possible")
    print(f"cart settles to {REF} m within 2 % {ts:.2f} s after the step; final x = "
          f"{x[-1]:.4f} m, max |theta| = {np.max(np.abs(theta)):.3f} rad, max |F| = "
          f"{np.max(np.abs(res['sat.y'])):.1f} N")
    print(f"wrote {csv_path.relative_to(root)} and {png_path.relative_to(root)}")
    start = time.perf_counter()
    html = out / "cart_pendulum_loop.html"
    anim = res.animate(html)  # the plant drawn from the recorded coordinates (the FMU's view)
    print(f"drew the plant from the recorded x and theta: {len(anim.times)} frames into "
          f"{html.relative_to(root)} ({html.stat().st_size / 1e6:.2f} MB) in "
          f"{time.perf_counter() - start:.3f} s")
    rt = d.run(2.0, realtime=True).stats
    print(f"paced to the wall clock for 2 s at 1 kHz: achieved real-time factor "
          f"{rt['rtf_achieved']:.3f}, jitter p50 {rt['jitter_p50_us']:.0f} us, p99 "
          f"{rt['jitter_p99_us']:.0f} us, max {rt['jitter_max_us']:.0f} us, overruns "
          f"{rt['overruns']}")
    ok = np.isfinite(ts) and ts < 4.0 and abs(x[-1] - REF) < 0.01 and abs(theta[-1]) < 0.01
    return 0 if ok else 1
