"""The same answer from every path (issue 23 item 8): every model of the zoo at rtol 1e-10, with
its default method (RKSTAB; Radau IIA for the stiff flyball governor) and with DOP853, through
``simulate`` on the C engine and on the numpy reference and as a native FMU driven by fmpy with
only ``solver_rtol`` set (its atol is then simulate's default, rtol / 10 with constraints,
rtol / 100 without): every run passes against the model's independent reference
(tests/zoo_cases.py), and the FMU's states equal simulate's bit for bit (both run the engine's
instance layer with the same settings on the same grid, so they take the same steps).

Shortened for CI (bench/zoo.py runs the seeds' spans and every formulation): the spans are
Case.t_ci (2 s instead of 10 s for most models, 0.5 s of Bricard's 10 s, 0.1 s of the flyball's
1 s, 5 s of the rotating beam's 20 s, 0.5 s of the flexible pendulum's 2 s); the numpy backend
runs the default method over Case.numpy_ci (0.01 s to 1.5 s) and not at all for the N = 10
four-bar, Andrews' natural squeezer and the two flexible models (seconds to minutes in Python);
one FMU per model (its default formulation, 'qr'), built once and run with both methods, but
none for Bricard (its generated C compiles for 35 s; bench/zoo.py builds it).
"""

import warnings

import numpy as np
import pytest
from zoo_cases import CASES, Run

import mbsfmu

fmpy = pytest.importorskip("fmpy")

RTOL = 1e-10
METHOD = {"explicit": 0, "stiff": 1, "dop853": 2}  # the FMU parameter 'method'


def _simulate(system, t_end, case, method, backend):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mbsfmu.simulate(system, t_end, case.dt, rtol=RTOL, method=method, backend=backend)


@pytest.fixture(scope="module")
def fmu_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("zoo_fmus")


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
def test_every_path_gives_the_same_answer(case, fmu_dir):
    system = case.load()
    names = list(system.coordinates_)
    fmu = (mbsfmu.build_fmu(system, fmu_dir / f"{case.label.replace(' ', '_').replace('=', '')}.fmu",
                            kind="native") if case.fmu_ci else None)
    report = []
    for method in (case.method, "dop853"):
        res = _simulate(system, case.t_ci, case, method, "c")
        err = case.error(Run.of_result(res))
        report.append(f"{method} c {err:.1e}")
        assert err < case.bound, f"{case.label} {method} on the engine: {case.what} {err:.2e}"
        if fmu is None:
            continue
        rec = fmpy.simulate_fmu(str(fmu), stop_time=case.t_ci, output_interval=case.dt,
                                start_values={"solver_rtol": RTOL, "method": METHOD[method]})
        run = Run.of_fmpy(rec, names)
        assert np.array_equal(run.t, res.t)
        assert np.array_equal(run.y, res.y) and np.array_equal(run.yd, res.yd), (
            f"{case.label} {method}: FMU and simulate differ by {np.max(np.abs(run.y - res.y)):.2e}")
    if case.numpy_ci is not None:
        res = _simulate(system, case.numpy_ci, case, case.method, "numpy")
        err = case.error(Run.of_result(res))
        report.append(f"numpy {err:.1e}")
        assert err < case.bound, f"{case.label} {case.method} on numpy: {case.what} {err:.2e}"
    print(f"{case.label}: " + ", ".join(report))
