"""Every model in ``models/`` at two tolerances, in-process and as a native FMU.

For each model (with its seed's span where the seed gives one) and rtol 1e-6 and 1e-10, the
default formulation ('qr') and the default method (RKSTAB; Radau IIA, ``method='stiff'``, for
the flyball governor):

* ``simulate`` on the C engine: accepted and rejected steps, CPU of the engine's run over the
  grid (``stats["cpu_seconds"]``: CPU time of the integration only; compilation, instance set-up
  and consistent initialization are ``stats["setup_seconds"]``), the largest constraint residual
  on the grid, the relative energy drift (conservative models only), and the significant
  correct digits at the end, SCD = -log10(max_i |q_i - q_ref,i| / max_i |q_ref,i|) against a
  tight run (DOP853 at rtol 1e-12; Radau at 1e-12 for the flyball).  This is the norm-wise
  form of seed 003's SCD (sec. 4.3), whose component-wise form blows up for coordinates near 0;
* the native FMU (``mbsfmu.build_fmu(..., backend='native')``) driven by ``fmpy.simulate_fmu``
  with ``solver_rtol`` set (atol = rtol/10 as in simulate) at the same output interval: wall
  time of ``simulate_fmu`` (instantiation included), residual and SCD of its final state.

Run from the repository root: ``.venv/bin/python bench/zoo.py [--quick] [--no-fmu]``.
The singular slider-crank's reference is the tight run of its linear reformulation (eq. 4.28),
the same motion on the same branch: its own tight runs fail at the singular positions.
``--quick`` runs only rtol 1e-6 and shortens the spans to at most 1 s.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import tempfile
import time
import warnings

import numpy as np

import mbsfmu

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"

#: (label, file, model kwargs, t_end, dt, method, conservative)
CASES = [
    ("double_pendulum", "double_pendulum.py", {}, 10.0, 0.01, "explicit", True),
    ("spinning_top", "spinning_top.py", {}, 10.0, 0.01, "explicit", True),
    ("cart_pendulum", "cart_pendulum.py", {}, 10.0, 0.01, "explicit", True),
    ("slider_crank", "slider_crank.py", {}, 10.0, 0.01, "explicit", True),
    ("slider_crank_natural", "slider_crank_natural.py", {}, 10.0, 0.01, "explicit", True),
    ("four_bar", "four_bar.py", {}, 10.0, 0.01, "explicit", True),
    ("four_bar_natural", "four_bar_natural.py", {}, 10.0, 0.01, "explicit", True),
    ("andrews", "andrews.py", {}, 0.03, 0.001, "explicit", False),
    ("copy_machine", "copy_machine.py", {}, 10.0, 0.01, "explicit", False),
    ("bricard", "bricard.py", {}, 10.0, 0.01, "explicit", True),
    ("flyball_governor", "flyball_governor.py", {}, 1.0, 0.01, "stiff", False),
    ("two_link_arm I", "two_link_arm.py", {"case": "I"}, 10.0, 0.01, "explicit", True),
    ("two_link_arm II", "two_link_arm.py", {"case": "II"}, 2.0, 0.01, "explicit", False),
    ("singular_slider_crank", "singular_slider_crank.py", {}, 3.0, 0.01, "explicit", True),  # ref: linear
    ("singular_slider_crank lin", "singular_slider_crank.py", {"constraint": "linear"}, 3.0, 0.01,
     "explicit", True),
    ("slider_crank_tsda k=1e3", "slider_crank_tsda.py", {"k": 1000.0}, 0.5, 0.01, "explicit", False),
    ("slider_crank_tsda k=1e4", "slider_crank_tsda.py", {"k": 10000.0}, 0.5, 0.01, "explicit", False),
]
FMU_SOLVER = {"explicit": 0, "stiff": 1}


def scd(q, q_ref) -> float:
    err = float(np.max(np.abs(q - q_ref))) / max(float(np.max(np.abs(q_ref))), 1e-300)
    return math.inf if err == 0 else -math.log10(err)


def run(system, t_end, dt, method, rtol):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mbsfmu.simulate(system, t_end, dt, method=method, rtol=rtol)


def reference(system, t_end, dt, method):
    """(final coordinates, rtol) of the tightest run that passes: 1e-12, else 1e-11, 1e-10
    (the N four-bar's singular passes stop DOP853 at rtol 1e-11 and below)."""
    tight = "stiff" if method == "stiff" else "DOP853"
    for rtol in (1e-12, 1e-11, 1e-10):
        try:
            return run(system, t_end, dt, tight, rtol).y[:, -1], rtol
        except mbsfmu.MbsError:
            continue
    return None, None


def fmu_run(path, system, t_end, dt, method, rtol, q_ref):
    import fmpy

    names = list(system.coordinates_)
    start = time.perf_counter()
    r = fmpy.simulate_fmu(str(path), stop_time=t_end, output_interval=dt,
                          start_values={"solver_rtol": rtol, "solver_atol": rtol / 10,
                                        "solver": FMU_SOLVER[method]})
    wall = time.perf_counter() - start
    q = np.array([r[n][-1] for n in names])
    resid = float(np.max(r["constraint_residual"])) if "constraint_residual" in r.dtype.names else 0.0
    return wall, resid, scd(q, q_ref)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="rtol 1e-6 only, spans of at most 1 s")
    ap.add_argument("--no-fmu", action="store_true", help="skip the native FMUs")
    args = ap.parse_args(argv)
    rtols = (1e-6,) if args.quick else (1e-6, 1e-10)
    out = pathlib.Path(tempfile.mkdtemp(prefix="mbsfmu_zoo_"))
    head = ("| model | T [s] | rtol | steps | rejected | run [ms] | max abs(c) | energy drift | SCD "
            "| FMU wall [ms] | FMU max abs(c) | FMU SCD |")
    print(head)
    print("|" + " --- |" * (head.count("|") - 1))
    for label, file, kwargs, t_end, dt, method, conservative in CASES:
        if args.quick:
            t_end = min(t_end, 1.0)
        system = mbsfmu.load_model(MODELS / file, **kwargs)
        # the singular slider-crank's tight runs fail at its singular positions: its reference is
        # the tight run of the non-singular reformulation (the same motion on the same branch)
        ref_system = (mbsfmu.load_model(MODELS / file, constraint="linear")
                      if file == "singular_slider_crank.py" else system)
        q_ref, ref_rtol = reference(ref_system, t_end, dt, method)
        if q_ref is None:
            print(f"| {label} | {t_end:g} | no reference: the tight runs failed |")
            continue
        if ref_rtol != 1e-12:
            label += f" (ref. rtol {ref_rtol:g})"
        fmu = None
        if not args.no_fmu:
            fmu = mbsfmu.build_fmu(system, out / f"{label.replace(' ', '_').replace('=', '')}.fmu",
                                   backend="native")
        for rtol in rtols:
            try:
                res = run(system, t_end, dt, method, rtol)
            except mbsfmu.MbsError as exc:
                print(f"| {label} | {t_end:g} | {rtol:g} | failed: {str(exc).splitlines()[0][:90]} |")
                continue
            st = res.stats
            resid = float(np.max(res.constraint_residual)) if res.has_constraints else 0.0
            drift = f"{res.relative_energy_drift():.1e}" if conservative else ""
            row = (f"| {label} | {t_end:g} | {rtol:g} | {st.get('steps', st.get('naccept', ''))} | "
                   f"{st.get('nreject', '')} | {1e3 * st.get('cpu_seconds', math.nan):.1f} | {resid:.1e} | "
                   f"{drift} | {scd(res.y[:, -1], q_ref):.2f} |")
            if fmu is not None:
                try:
                    wall, fresid, fscd = fmu_run(fmu, system, t_end, dt, method, rtol, q_ref)
                    row += f" {1e3 * wall:.1f} | {fresid:.1e} | {fscd:.2f} |"
                except Exception as exc:  # noqa: BLE001 - report and go on with the next model
                    row += f" failed: {str(exc).splitlines()[0][:60]} | | |"
            print(row, flush=True)


if __name__ == "__main__":
    main()
