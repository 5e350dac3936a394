"""Model Exchange against Co-Simulation at equal accuracy: the second part of ``bench/fmu_speed.py``.

For a model's native FMU with both interfaces (FMI 2.0 and FMI 3.0), over ``span`` seconds with
outputs on a grid of ``grid`` seconds, all through ``fmpy.simulate_fmu`` (so importer and
recorder overheads are the same for every run; ``record_events=False``: one row per grid point,
after a projection event):

* reference: the FMI 2.0 Co-Simulation FMU at ``solver_rtol`` 1e-12 (its own integrator),
  checked against the model's shipped reference result (``models/reference_results/``, 2 s) on
  their common grid points;
* Co-Simulation at ``solver_rtol`` 1e-6 and 1e-8 (the FMU's default): the error
  e = max over the grid and the coordinates of |q - q_ref| (the accuracy to match), the right-hand
  sides of the FMU's own integrator and its C-measured time in doStep (its logEvents statistics);
* Model Exchange under fmpy's CVode (BDF with a difference-quotient Jacobian) on a ladder of
  ``relative_tolerance`` values, both FMI versions (same calls, so the outputs must agree bit for
  bit), and under fmpy's explicit Euler (one step per output interval, so ``output_interval`` =
  the step and the error is read on every grid/h-th row): the error, the wall time of the
  ``simulate_fmu`` call, the importer's derivative calls, completed integrator steps and
  projections counted by the FMU itself (its logStatistics message at terminate), the largest
  ``constraint_residual`` on the grid if the model has constraints;
* equal accuracy: the loosest CVode tolerance on the ladder whose error is at most the
  Co-Simulation run's, timed again (best of ``repeat``) against the Co-Simulation run (best of
  ``repeat``); the ratios of wall time and of derivative calls to right-hand sides.  Euler's step
  for that error is extrapolated from its smallest measured step with the order observed between
  its two smallest steps (first order expected); its calls are span / step and its time the
  measured time per step times the calls (marked as extrapolated, not run).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from fmu_instances import CS_STATS, ME_STATS, errors, instance, statistics

REFERENCE_RTOL = 1e-12
#: Co-Simulation solver_rtol values whose accuracy Model Exchange has to reach (1e-8: the default)
CS_RTOLS = (1e-6, 1e-8)
#: CVode relative tolerances: half decades from 1e-4 to 1e-12 (quick: decades)
CVODE_RTOLS = tuple(10.0 ** (-k / 2) for k in range(8, 25))
CVODE_RTOLS_QUICK = tuple(10.0 ** -k for k in range(4, 13))
EULER_STEPS = (1e-3, 1e-4)


@dataclass
class Run:
    """One ``simulate_fmu`` run: its coordinates on the grid and what it cost."""

    label: str
    wall: float
    rows: np.ndarray                  # coordinates, one row per grid point
    calls: int                        # ME: derivative evaluations; CS: right-hand sides
    projections: int
    residual: float | None            # largest constraint_residual on the grid
    c_seconds: float | None = None    # CS: the FMU's own time in doStep
    completed: int | None = None      # ME: completed integrator steps
    error: float = math.nan
    all_rows: np.ndarray = field(default=None, repr=False)  # every recorded output, for bit checks


class Exchange:
    """The runs of one model: its FMUs (unzipped folder and model description per FMI version)."""

    def __init__(self, name: str, fmus: dict[int, tuple], span: float, grid: float):
        self.name, self.fmus, self.span, self.grid = name, fmus, span, grid
        #: the CS runs: FMI 2.0's if built (FMI 3.0's CS gives the same outputs bit for bit)
        self.cs_version = min(fmus)
        md = fmus[self.cs_version][1]
        states = [d.variable.derivative.name for d in md.derivatives]
        self.coordinates = states[: len(states) // 2]
        names = {v.name for v in md.modelVariables}
        self.outputs = self.coordinates + (["constraint_residual"] if "constraint_residual" in names else [])
        self.reference: np.ndarray | None = None

    def simulate(self, version: int, interface: str, label: str, repeat: int = 1, step: float | None = None,
                 **kw) -> Run:
        """Best wall time of ``repeat`` runs (the counts and rows of the last; the runs are
        deterministic).  ``step``: fmpy's Euler with this step (one per output interval)."""
        from fmpy import simulate_fmu

        unzipped, md = self.fmus[version]
        interval = step if step is not None else self.grid
        every = round(self.grid / interval)
        euler = {"solver": "Euler", "step_size": step} if step else {}
        best = math.inf
        for _ in range(repeat):
            fmu = instance(unzipped, md, interface, f"bench_{interface}",
                           ["logEvents" if interface == "cs" else "logStatistics"])
            t0 = time.perf_counter()
            res = simulate_fmu(str(unzipped), model_description=md, fmu_instance=fmu,
                               fmi_type="CoSimulation" if interface == "cs" else "ModelExchange",
                               stop_time=self.span, output_interval=interval, output=self.outputs,
                               record_events=False, **euler, **kw)
            best = min(best, time.perf_counter() - t0)
            fmu.freeInstance()
            if errors(fmu):
                raise RuntimeError(f"{self.name} {label}: the FMU logged errors: {errors(fmu)[:3]}")
        res = res[::every]
        n = round(self.span / self.grid) + 1
        if len(res) != n or not np.allclose(res["time"], np.linspace(0.0, self.span, n), atol=1e-9):
            raise RuntimeError(f"{self.name} {label}: the output rows are not the grid of {self.grid:g} s")
        all_rows = np.column_stack([res[o] for o in self.outputs])
        residual = (float(np.abs(res["constraint_residual"]).max())
                    if "constraint_residual" in self.outputs else None)
        if interface == "cs":
            st = statistics(fmu, CS_STATS)
            run = Run(label, best, all_rows[:, :len(self.coordinates)], int(st["nfev"]), int(st["nproj"]),
                      residual, c_seconds=st["seconds"], all_rows=all_rows)
        else:
            st = statistics(fmu, ME_STATS)
            run = Run(label, best, all_rows[:, :len(self.coordinates)], int(st["nder"]), int(st["nproj"]),
                      residual, completed=int(st["ncompleted"]), all_rows=all_rows)
        if self.reference is not None:
            run.error = float(np.abs(run.rows - self.reference).max())
        return run

    def cs(self, rtol: float, repeat: int = 1) -> Run:
        v = self.cs_version
        return self.simulate(v, "cs", f"CS FMI {v}.0, solver_rtol {rtol:.0e}", repeat,
                             start_values={"solver_rtol": rtol})

    def cvode(self, version: int, rtol: float, repeat: int = 1) -> Run:
        return self.simulate(version, "me", f"ME FMI {version}.0 CVode, rtol {rtol:.1e}", repeat,
                             relative_tolerance=rtol)

    def euler(self, version: int, step: float) -> Run:
        return self.simulate(version, "me", f"ME FMI {version}.0 Euler, h {step:.0e}", step=step)


def fmt(x: float | None, spec: str = ".2e") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def print_runs(runs: list[Run]) -> None:
    print(f"  {'run':38s} {'error':>9s} {'wall [s]':>9s} {'calls':>8s} {'us/call':>8s} "
          f"{'completed':>9s} {'proj.':>6s} {'max resid.':>10s}")
    for r in runs:
        print(f"  {r.label:38s} {fmt(r.error):>9s} {r.wall:9.3f} {r.calls:8d} "
              f"{r.wall / max(r.calls, 1) * 1e6:8.1f} {fmt(r.completed, 'd'):>9s} {r.projections:6d} "
              f"{fmt(r.residual, '.1e'):>10s}")


def euler_extrapolation(runs: list[Run], target: float, span: float, steps: tuple[float, ...]) -> str:
    """Euler's step for the error ``target`` from its two smallest steps (see the module
    docstring), as one line."""
    (h1, e1, r1), (h2, e2, r2) = [(h, r.error, r) for h, r in zip(steps, runs)][-2:]
    order = math.log(e1 / e2) / math.log(h1 / h2)
    if not 0.7 < order < 1.5:
        return (f"Euler: order {order:.2f} between h {h1:.0e} and {h2:.0e} (errors {e1:.1e}, {e2:.1e}): "
                "not yet in its first-order range at this span; no extrapolation")
    h = h2 * (target / e2) ** (1.0 / order)
    calls = span / h
    seconds = r2.wall / (span / h2) * calls
    return (f"Euler (extrapolated, order {order:.2f} observed): h {h:.1e}, {calls:.2e} derivative calls, "
            f"~{seconds:.3g} s at its measured {r2.wall / (span / h2) * 1e6:.1f} us per step")


def check_reference(ex: Exchange, model_file) -> str:
    """Our reference against the model's shipped reference result (models/reference_results/: a
    tight run of the engine written with 12 digits) on their common grid points, as one line."""
    from mbsfmu.fmu.reference_results import reference_of

    ref = reference_of(model_file)
    if ref is None:
        return "no reference result shipped with the model"
    k = np.rint(ref.time / ex.grid).astype(int)
    common = (np.abs(k * ex.grid - ref.time) < 1e-9) & (k < len(ex.reference))
    if not common.any():
        return f"{ref.csv.name}: no grid point in common"
    shipped = np.column_stack([ref[c] for c in ex.coordinates])[common]
    diff = np.abs(ex.reference[k[common]] - shipped).max()
    s = ref.settings
    return (f"against {ref.csv.name} ({s['method']} at rtol {s['rtol']:g}, 12 digits) on "
            f"t <= {ref.time[common][-1]:g} s: max |diff| of the coordinates {diff:.1e}")


def compare(name: str, model_file, fmus: dict[int, tuple], span: float, grid: float, repeat: int,
            quick: bool) -> dict:
    """Run the comparison of one model (see the module docstring), print its tables and return
    the numbers of the matched runs."""
    ex = Exchange(name, fmus, span, grid)
    print(f"\n=== Model Exchange: {name}, {span:g} s, outputs every {grid:g} s; coordinates "
          f"{', '.join(ex.coordinates)}; error = max |q - q_ref| on the grid")
    ref = ex.cs(REFERENCE_RTOL)
    ex.reference = ref.rows
    print(f"reference: CS FMI {ex.cs_version}.0 at solver_rtol {REFERENCE_RTOL:g} ({ref.calls} right-hand "
          f"sides, {ref.wall:.3f} s); largest |q| {np.abs(ref.rows).max():.3g}")
    print(f"  reference checked {check_reference(ex, model_file)}")

    cs = {rtol: ex.cs(rtol, repeat) for rtol in CS_RTOLS}
    print(f"Co-Simulation (the FMU's own integrator; calls = its right-hand sides; best of {repeat}):")
    print_runs(list(cs.values()))
    for rtol, r in cs.items():
        print(f"    solver_rtol {rtol:.0e}: {r.c_seconds:.4f} s inside doStep (C), "
              f"{(r.wall - r.c_seconds) / r.wall:.0%} of the wall time is fmpy's loop and recorder")

    rtols = CVODE_RTOLS_QUICK if quick else CVODE_RTOLS
    print("Model Exchange, fmpy's CVode (calls = the importer's derivative calls, counted by the FMU):")
    ladder = {}
    identical = True
    for rtol in rtols:
        ladder[rtol] = r3 = ex.cvode(3, rtol)
        if 2 in fmus:
            r2 = ex.cvode(2, rtol)
            identical &= (np.array_equal(r3.all_rows, r2.all_rows)
                          and (r3.calls, r3.projections) == (r2.calls, r2.projections))
            r3.label += f" (2.0: {r2.wall:.3f} s)"
    print_runs(list(ladder.values()))
    if 2 in fmus:
        print("  FMI 2.0 and FMI 3.0 Model Exchange at every tolerance: "
              + ("bit-identical outputs, the same counts" if identical else "DIFFERENT outputs or counts"))

    print("Model Exchange, fmpy's explicit Euler (one step per output interval):")
    euler = [ex.euler(3, h) for h in EULER_STEPS]
    euler2 = [ex.euler(2, EULER_STEPS[-1])] if 2 in fmus else []
    print_runs(euler + euler2)
    if euler2:
        same = np.array_equal(euler[-1].all_rows, euler2[0].all_rows)
        print(f"  FMI 2.0 and 3.0 under Euler at h {EULER_STEPS[-1]:g}: outputs "
              f"{'bit-identical' if same else 'DIFFERENT'}")

    matched = {}
    print(f"At equal accuracy (CVode: the loosest tolerance on the ladder that reaches the CS error; "
          f"wall times best of {repeat}, FMI 3.0):")
    for rtol, c in cs.items():
        good = [t for t, r in ladder.items() if r.error <= c.error]
        print(f"  CS at solver_rtol {rtol:.0e}: error {c.error:.2e}, {c.wall:.4f} s, "
              f"{c.calls} right-hand sides")
        if not good:
            print(f"    CVode: not reached down to rtol {min(rtols):.0e} "
                  f"(best {min(r.error for r in ladder.values()):.2e})")
            matched[rtol] = {"cs": c, "me": None}
        else:
            me = ex.cvode(3, max(good), repeat)
            print(f"    CVode at rtol {max(good):.1e}: error {me.error:.2e}, {me.wall:.4f} s, "
                  f"{me.calls} derivative calls, {me.projections} projections, "
                  f"max residual {fmt(me.residual, '.1e')}")
            print(f"    ratio ME (CVode) / CS: wall time {me.wall / c.wall:.1f}x, derivative calls / "
                  f"right-hand sides {me.calls / c.calls:.1f}x")
            matched[rtol] = {"cs": c, "me": me, "me_rtol": max(good)}
        print(f"    {euler_extrapolation(euler, c.error, span, EULER_STEPS)}")
    return matched
