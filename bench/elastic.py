"""Elastic bodies: a modal flexible body against the rigid-segment model a user would write.

1. **Spin-up beam** (``models/rotating_beam.py``, Kane, Ryan and Banerjee): the modal model (10
   Euler-Bernoulli elements, 4 in-plane modes, geometric stiffening) against n rigid segments
   joined by rotational springs (the reference model of ``tests/test_rotating_beam.py``) for n =
   4, 8, 16, 32, over the 20 s of the benchmark at rtol 1e-9.  For each: derivation time
   (model to equations, ``derive(system)`` with M, k, q), the build (code generation and
   compilation, or the compile cache, up to a loaded engine: the first ``simulate`` less its
   engine time), the run (the engine's time of a second ``simulate``, ``stats['engine_seconds']``),
   steps, and the largest difference of the tip deflection from the 32-segment model (the
   finest; the segment models converge as about 1/n^2).
2. **Flexible double pendulum** (``models/flexible_double_pendulum.py``, seed 002 §4.2): the
   derivation time, a 2 s run at rtol 1e-8 and 1e-10, the energy drift with and without
   geometric stiffening (only the model without it is conservative), and the native FMU's cost
   per 1 ms communication step through fmpy's ``FMU2Slave``.

Run from the repository root: ``.venv/bin/python bench/elastic.py [--quick]`` (``--quick``
leaves out the 32-segment model and uses the 16-segment one as the reference).
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mbsfmu  # noqa: E402
from mbsfmu import derive  # noqa: E402


def _load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


RB = _load(ROOT / "models" / "rotating_beam.py", "rotating_beam_bench")
SEGMENTS = _load(ROOT / "tests" / "test_rotating_beam.py", "rotating_beam_test_bench")
T_END, DT = 20.0, 0.05


def timed_run(system, **kw):
    """(derivation [s], code generation and engine build [s], Result of a second, warm run)."""
    start = time.perf_counter()
    eqs = derive(system)
    eqs.M, eqs.k, eqs.q  # noqa: B018 (derive now, to time it apart from the run)
    derived = time.perf_counter() - start
    start = time.perf_counter()
    first = mbsfmu.simulate(system, **kw)
    build = time.perf_counter() - start - first.stats["engine_seconds"]
    return derived, build, mbsfmu.simulate(system, **kw)


def spin_up(quick: bool) -> None:
    print("spin-up beam, 20 s, rtol 1e-9: tip deflection in the hub frame")
    rows = []
    derive, build, r = timed_run(RB.model(), t_end=T_END, dt=DT, rtol=1e-9)
    tips = {"modal (4 modes, stiffening)": (derive, build, r, RB.beam_data().nodes[-1].phi[1] @ r.y)}
    for n in (4, 8, 16) + (() if quick else (32,)):
        s = SEGMENTS.segment_model(n)
        derive, build, r = timed_run(s, t_end=T_END, dt=DT, rtol=1e-9)
        pos = r.frame(f"end{n}")["position"]
        theta = np.array([float(RB.spin_angle(tt)) for tt in r.t])
        tip = -np.sin(theta) * pos[:, 0] + np.cos(theta) * pos[:, 1]
        tips[f"{n} rigid segments"] = (derive, build, r, tip)
    ref_name = f"{16 if quick else 32} rigid segments"
    ref = tips[ref_name][3]
    print(f"| model | coordinates | derive [s] | build [s] | run [ms] | steps | min tip [m] "
          f"| max diff to {ref_name} [m] |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (derive, build, r, tip) in tips.items():
        rows.append(name)
        print(f"| {name} | {len(r.coordinate_names)} | {derive:.2f} | {build:.2f} | "
              f"{1e3 * r.stats['engine_seconds']:.1f} | {r.stats['steps']} | {tip.min():.4f} | "
              f"{np.abs(tip - ref).max():.2e} |")


def double_pendulum() -> None:
    fdp = _load(ROOT / "models" / "flexible_double_pendulum.py", "fdp_bench")
    print("\nflexible double pendulum (seed 002 §4.2), 2 s")
    for stiff in (True, False):
        derive, build, r = timed_run(fdp.model(geometric_stiffening=stiff), t_end=2.0, dt=0.01, rtol=1e-10)
        print(f"  stiffening {'on ' if stiff else 'off'}: derive {derive:.2f} s, build {build:.2f} s, "
              f"rtol 1e-10 run {1e3 * r.stats['engine_seconds']:.0f} ms ({r.stats.get('nfev')} evaluations, "
              f"{1e9 * r.stats['engine_seconds'] / r.stats['nfev']:.0f} ns each), relative energy drift "
              f"{r.relative_energy_drift():.1e}")
    _, _, r8 = timed_run(fdp.model(), t_end=2.0, dt=0.01, rtol=1e-8)
    print(f"  rtol 1e-8 run {1e3 * r8.stats['engine_seconds']:.0f} ms ({r8.stats.get('nfev')} evaluations)")
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    folder = pathlib.Path(tempfile.mkdtemp(prefix="bench-elastic-"))
    fmu = mbsfmu.build_fmu(ROOT / "models" / "flexible_double_pendulum.py", folder / "fdp.fmu",
                           kind="native")
    md = read_model_description(str(fmu))
    slave = FMU2Slave(guid=md.guid, unzipDirectory=extract(str(fmu)),
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="bench")
    slave.instantiate()
    slave.setupExperiment(startTime=0.0)
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    h, n = 1e-3, 2000
    start = time.perf_counter()
    for i in range(n):
        slave.doStep(currentCommunicationPoint=i * h, communicationStepSize=h)
    per = (time.perf_counter() - start) / n
    slave.terminate()
    slave.freeInstance()
    print(f"  native FMU through fmpy: {1e6 * per:.1f} us per 1 ms doStep (real-time factor {h / per:.0f})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    spin_up(args.quick)
    double_pendulum()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
