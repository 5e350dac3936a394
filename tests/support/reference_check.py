"""An FMU against its model's reference result (models/reference_results/, read and compared by
:mod:`mbsfmu.fmu.reference_results`): ``fmpy.simulate_fmu`` over the reference's span with
output points on its grid, every reference column compared (deviation relative to the signal's
scale, max(max |ref|, 1)).

* Co-Simulation: communication steps of the reference's output interval, the FMU's own method
  (the start value of ``method``) with ``solver_rtol`` = :data:`CS_RTOL` (atol by the FMU's rule);
  the run must match to :data:`CS_TOL`.  Measured with simulate's runs, which the native FMU
  repeats bit for bit (2026-11-27, every model of models/): the largest deviation is 8.1e-7 of
  scale for the four-bar under RKSTAB (its motion near a change point magnifies the local errors:
  8e-9 under DOP853), 8e-8 for the natural four-bar at its change point, at most 2e-8 for the
  other 18.
* Model Exchange: fmpy's ``'CVode'`` at relative tolerance :data:`ME_RTOL` must match to
  :data:`ME_TOL` (issue 26); ``'Euler'`` takes ``step_size`` (fmpy takes one Euler step per
  output interval, so the run's output interval is the step, a divisor of the reference's) and
  a ``tol`` of the caller's, as its error is of first order in the step.  The largest
  ``constraint_residual`` of the run (models with constraints) is reported with the deviation:
  how far the importer's integration drifted from the constraints between the FMU's projections.
  Measured on a trial merge with the FMI 3.0 / ME build (2026-11-27, fmpy 0.3.32): CVode at 1e-8
  gives 2.9e-7 (double pendulum) and 3.4e-7 (cart-pendulum), but 4.6e-4 for the slider-crank and
  5.2e-3 for the four-bar (1.2e-6 and 4.3e-5 at 1e-10); Euler's error falls tenfold with the step
  (double pendulum 4.6e-2 at 1e-3, 4.5e-3 at 1e-4).

:func:`check_against_reference` runs and compares; :func:`assert_matches_reference` also asserts.
"""

from __future__ import annotations

import pathlib
import time
from dataclasses import dataclass

import numpy as np

from mbsfmu.fmu.reference_results import Comparison, compare, reference_of

CS_RTOL = 1e-10
CS_TOL = 1e-6
ME_RTOL = 1e-8
ME_TOL = 1e-6
RESIDUAL = "constraint_residual"


@dataclass
class ReferenceCheck:
    """What one run of an FMU against its reference gave: the comparison, the largest
    constraint_residual of the run (None without constraints), the run's wall time, and how it
    ran (interface, solver)."""

    comparison: Comparison
    residual: float | None
    seconds: float
    how: str

    @property
    def deviation(self) -> float:
        return self.comparison.deviation

    def __str__(self) -> str:
        res = "" if self.residual is None else f"; largest constraint_residual {self.residual:.2g}"
        return f"{self.how}, {self.seconds:.2f} s: {self.comparison}{res}"


def check_against_reference(fmu, model_file, *, interface: str = "cs", solver: str = "CVode",
                            rtol: float | None = None, step_size: float | None = None,
                            start_values: dict | None = None) -> ReferenceCheck:
    """Run the FMU ``fmu`` of ``model_file`` with fmpy over its reference's span and compare.

    ``interface``: ``'cs'`` (``solver_rtol`` = ``rtol``, :data:`CS_RTOL` by default) or ``'me'``
    (fmpy's ``solver`` ``'CVode'`` at relative tolerance ``rtol``, :data:`ME_RTOL` by default, or
    ``'Euler'`` with ``step_size``).  ``start_values`` go to the FMU as well."""
    import fmpy

    ref = reference_of(pathlib.Path(model_file))
    assert ref is not None, f"{model_file} has no reference result (ci/make_reference_results)"
    md = fmpy.read_model_description(str(fmu))
    names = {v.name for v in md.modelVariables}
    output = list(ref.signals) + ([RESIDUAL] if RESIDUAL in names else [])
    s = ref.settings
    common = dict(start_time=s["start_time"], stop_time=s["stop_time"], output_interval=s["output_interval"],
                  output=output, record_events=False)
    values = dict(start_values or {})
    if interface == "cs":
        rtol = CS_RTOL if rtol is None else rtol
        kw = dict(fmi_type="CoSimulation", start_values={"solver_rtol": rtol, **values})
        how = f"CS, solver_rtol {rtol:g}"
    elif interface == "me":
        if solver == "Euler":
            assert step_size is not None, "ME with Euler needs a step_size"
            # fmpy (0.3) takes one Euler step per output interval: the step is the interval,
            # and compare() takes the rows at the reference's times
            kw = dict(fmi_type="ModelExchange", solver="Euler", step_size=step_size, start_values=values)
            common["output_interval"] = step_size
            how = f"ME, Euler step {step_size:g}"
        else:
            rtol = ME_RTOL if rtol is None else rtol
            kw = dict(fmi_type="ModelExchange", solver=solver, relative_tolerance=rtol, start_values=values)
            how = f"ME, {solver} rtol {rtol:g}"
    else:
        raise ValueError(f"interface must be 'cs' or 'me', got {interface!r}")
    t0 = time.perf_counter()
    rec = fmpy.simulate_fmu(str(fmu), **common, **kw)
    seconds = time.perf_counter() - t0
    residual = float(np.max(rec[RESIDUAL])) if RESIDUAL in output else None
    return ReferenceCheck(compare(rec, ref), residual, seconds, f"{pathlib.Path(fmu).name} {how}")


def assert_matches_reference(fmu, model_file, tol: float | None = None, **kw) -> ReferenceCheck:
    """:func:`check_against_reference`, asserting the worst deviation is below ``tol``
    (:data:`CS_TOL` for Co-Simulation and :data:`ME_TOL` for Model Exchange with a variable-step
    solver by default; Euler needs one); returns the check for a report."""
    check = check_against_reference(fmu, model_file, **kw)
    if tol is None:
        assert kw.get("solver") != "Euler", "give the tolerance of an Euler run"
        tol = ME_TOL if kw.get("interface") == "me" else CS_TOL
    assert check.deviation <= tol, f"{check} > {tol:g}"
    return check
