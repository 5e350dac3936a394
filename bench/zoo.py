"""The same answer from every path: every model in ``models/`` at rtol 1e-10, every formulation it
offers, the default method (RKSTAB; Radau IIA for the flyball governor) and DOP853, through
``simulate`` on the C engine and on the numpy reference and as a native FMU (issue 23 item 8).

For each model (tests/zoo_cases.py: the seed's span, the output step, the independent reference
and the bound that passes) and each formulation ('minimal' for trees; 'qr', 'svd', 'projection',
'partition', 'baumgarte', 'dae' for loops, without 'partition' for nonholonomic constraints):

* ``simulate`` on the engine with each method: the verdict -- ``pass`` with the error against the
  reference, ``FAIL`` with it (a run that ends but misses the bound), or the first words of the
  error it raises --, accepted steps and the engine's run time;
* a native FMU of that formulation (``mbsfmu.build_fmu``), driven by ``fmpy.simulate_fmu`` with
  only ``solver_rtol`` and ``solver`` set: its verdict and whether its states equal simulate's
  bit for bit (``=``), else their largest difference;
* ``simulate`` on the numpy backend with the default formulation and each method over
  ``--numpy-span`` seconds at most (the spans are printed; the Python reference takes seconds to
  minutes per second of motion for the larger models).

The last column says whether every path agrees: all pass, or all fail with the same kind of
error (the numpy backend's verdict against the engine's over the same span).  Run from the
repository root: ``.venv/bin/python bench/zoo.py [--quick] [--only NAME] [--no-fmu]
[--numpy-span S]``; ``--quick`` runs the CI spans of tests/zoo_cases.py.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from zoo_cases import CASES, Run  # noqa: E402

import mbsfmu  # noqa: E402
from mbsfmu.core.formulation_choice import DEFAULT_FORMULATION  # noqa: E402
from mbsfmu.fmu.native import NATIVE_FORMULATIONS  # noqa: E402

RTOL = 1e-10
METHOD = {"explicit": 0, "stiff": 1, "dop853": 2}  # the FMU parameter 'method'


def formulations(system) -> list[str]:
    """What the model offers: the minimal ODE of a tree, else every formulation of the engine
    (without coordinate partitioning for nonholonomic constraints, which it refuses by name)."""
    if not system.constrained:
        return ["minimal"]
    return [f for f in NATIVE_FORMULATIONS if not (f == "partition" and system.nonholonomic)]


def kind(exc: BaseException) -> str:
    """The first words of an error message that say what happened (for the table)."""
    text = str(exc).split(": ", 1)[-1]
    for key in ("step size underflow", "collapsed", "singular", "redundant", "not converge", "non-finite",
                "cannot take", "maximum number of steps", "projection"):
        if key in text:
            return key
    return text[:40]


def verdict(case, run_or_exc) -> tuple[str, str]:
    """(verdict, detail): ('pass', error), ('FAIL', error), or for an error ('error: ' and what it
    says, its type and the time of the last output point kept or the time the FMU names)."""
    if isinstance(run_or_exc, BaseException):
        t = getattr(getattr(run_or_exc, "result", None), "t", None)
        at = f"t={t[-1]:.3g}" if t is not None and len(t) else ""
        m = re.search(r"integration from t=([0-9.eE+-]+)", str(run_or_exc))
        at = f"t={float(m.group(1)):.3g}" if m and not at else at
        return f"error: {kind(run_or_exc)}", f"({type(run_or_exc).__name__}{', ' + at if at else ''})"
    err = case.error(run_or_exc)
    return ("pass" if err < case.bound else "FAIL"), f"{err:.1e}"


def simulate(system, case, t_end, method, formulation, backend):
    """(Run or exception, Result or None, seconds)."""
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = mbsfmu.simulate(system, t_end, case.dt, rtol=RTOL, method=method, backend=backend,
                                  formulation=None if formulation == "minimal" else formulation)
        return Run.of_result(res), res, time.perf_counter() - start
    except (mbsfmu.MbsError, ArithmeticError, ValueError) as exc:
        return exc, None, time.perf_counter() - start


class FmuFailed(Exception):
    """An FMU run that fmpy stopped: the FMU's own last error message."""


def fmu_run(path, names, t_end, dt, method):
    """The FMU's Run, or FmuFailed with its logged error."""
    import fmpy

    errors = []

    def logger(env, instance, status, category, message):
        if status >= 3:
            errors.append(message.decode() if isinstance(message, bytes) else str(message))

    try:
        rec = fmpy.simulate_fmu(str(path), stop_time=t_end, output_interval=dt, logger=logger,
                                start_values={"solver_rtol": RTOL, "method": METHOD[method]})
        return Run.of_fmpy(rec, names)
    except Exception as exc:  # fmpy raises FMICallException and plain Exceptions
        return FmuFailed(errors[-1] if errors else str(exc))


def prefix(run, t_end):
    """The run (or error) up to t_end: what the numpy backend's shorter run is compared with."""
    if isinstance(run, BaseException):
        return run
    n = int(np.searchsorted(run.t, t_end + 1e-12, side="right"))
    return Run(run.t[:n], run.y[:, :n], run.yd[:, :n], run.names)


def same(a, b) -> str:
    """'=' if the two runs' states are equal bit for bit, else their largest difference."""
    if isinstance(a, BaseException) or isinstance(b, BaseException):
        return ""
    n = min(len(a.t), len(b.t))
    d = max(float(np.max(np.abs(a.y[:, :n] - b.y[:, :n]))), float(np.max(np.abs(a.yd[:, :n] - b.yd[:, :n]))))
    return "=" if d == 0.0 and len(a.t) == len(b.t) else f"{d:.0e}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the CI spans of tests/zoo_cases.py")
    ap.add_argument("--only", nargs="*", default=(), help="cases whose label contains one of these")
    ap.add_argument("--no-fmu", action="store_true", help="skip the native FMUs")
    ap.add_argument("--numpy-span", type=float, default=2.0,
                    help="longest span of the numpy backend's runs [s] (default 2)")
    args = ap.parse_args(argv)
    out = pathlib.Path(tempfile.mkdtemp(prefix="mbsfmu_zoo_"))
    head = ("| model | T [s] | formulation | method | engine | steps | ms | FMU | FMU = simulate "
            "| numpy T [s] | numpy | same verdict |")
    print(head)
    print("|" + " --- |" * (head.count("|") - 1))
    totals = {"runs": 0, "agree": 0}
    start_all = time.perf_counter()
    for case in CASES:
        if args.only and not any(o in case.label for o in args.only):
            continue
        system = case.load()
        names = list(system.coordinates_)
        t_end = case.t_ci if args.quick else case.t_end
        t_np = min(t_end, args.numpy_span)
        for form in formulations(system):
            fmu = None
            if not args.no_fmu:
                try:
                    fmu = mbsfmu.build_fmu(system, out / f"{case.label.replace(' ', '_').replace('=', '')}_"
                                           f"{form}.fmu", kind="native",
                                           formulation=None if form == "minimal" else form)
                except mbsfmu.MbsError as exc:
                    fmu = exc
            for method in (case.method, "dop853"):
                run, res, seconds = simulate(system, case, t_end, method, form, "c")
                v, detail = verdict(case, run)
                steps = res.stats.get("naccept", "") if res is not None else ""
                ms = f"{1e3 * res.stats.get('run_seconds', res.stats.get('engine_seconds', seconds)):.0f}" \
                    if res is not None else ""
                verdicts = {v}
                cells = [f"{v} {detail}", str(steps), ms]
                if isinstance(fmu, pathlib.Path):
                    frun = fmu_run(fmu, names, t_end, case.dt, method)
                    fv, fdetail = verdict(case, frun)
                    verdicts.add(fv)
                    cells += [f"{fv} {fdetail}", same(frun, run)]
                else:
                    cells += [f"build: {kind(fmu)}" if fmu is not None else "", ""]
                if form in ("minimal", DEFAULT_FORMULATION):  # the default formulation on numpy
                    nrun, _, nsec = simulate(system, case, t_np, method, form, "numpy")
                    nv, ndetail = verdict(case, nrun)
                    # against the engine's run over the same span
                    verdicts.add(nv if nv == verdict(case, prefix(run, t_np))[0] else f"numpy {nv}")
                    cells += [f"{t_np:g}", f"{nv} {ndetail} ({nsec:.1f} s)"]
                else:
                    cells += ["", ""]
                agree = len(verdicts) == 1
                totals["runs"] += 1
                totals["agree"] += agree
                print(f"| {case.label} | {t_end:g} | {form} | {method} | " + " | ".join(cells)
                      + f" | {'yes' if agree else 'NO'} |", flush=True)
    print(f"\n{totals['agree']} of {totals['runs']} (model, formulation, method) agree on every path; "
          f"{time.perf_counter() - start_all:.0f} s")


if __name__ == "__main__":
    main()
