"""Every name a user can choose means the same algorithm on both backends (issue 24 item 2):
``method`` x ``formulation`` on the engine (backend 'c') and on the Python reference ('numpy').

* ``'explicit'`` is RKSTAB on both, trees included (the reference used to run scipy's DOP853 for
  trees): plain DOPRI5 with RKSTAB's step control where nothing is projected;
* ``'dop853'`` (scipy's spelling ``'DOP853'``) is Dormand-Prince 8(5,3) projected after every
  step: the engine's (Hairer's DOP853 with RKSTAB's stabilized controller) and scipy's (its own
  controller);
* ``'stiff'`` is Radau IIA of order 5 projecting after every step: the engine's (RADAU5's
  controller) and scipy's Radau.

Short runs (0.3 s at rtol 1e-9, output step 0.05 s) of the zoo's double pendulum (a tree), the
slider-crank (every formulation) and the rolling disc (nonholonomic, 'qr'): the two backends'
coordinates and rates agree within 2e-8 relative to the largest rate (20 rtol; measured at most
1.7e-9, the stiff method's with scipy's controller taking three times the engine's steps), and the
explicit method takes the same number of steps within one.
"""

import warnings

import numpy as np
import pytest
from zoo_cases import CASES

import mbsfmu

RTOL = 1e-9
ZOO = {c.label: c for c in CASES}
MODELS = [("double_pendulum", None)] + [
    ("slider_crank", f) for f in ("qr", "svd", "baumgarte", "dae", "projection", "partition")] + [
    ("rolling_disc", "qr")]
RUNS = [(label, form, method) for label, form in MODELS for method in ("explicit", "dop853", "stiff")]
SYSTEMS = {}


def _system(label):
    if label not in SYSTEMS:
        SYSTEMS[label] = ZOO[label].load()
    return SYSTEMS[label]


@pytest.mark.parametrize("label, formulation, method", RUNS,
                         ids=[f"{lb}-{f or 'tree'}-{m}" for lb, f, m in RUNS])
def test_a_method_is_the_same_on_both_backends(label, formulation, method):
    runs = {}
    for backend in ("c", "numpy"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs[backend] = mbsfmu.simulate(_system(label), 0.3, 0.05, rtol=RTOL, method=method,
                                            backend=backend, formulation=formulation)
    eng, ref = runs["c"], runs["numpy"]
    assert eng.stats["backend"] == "c" and eng.formulation is None  # the engine ran it
    scale = max(1.0, float(np.max(np.abs(ref.yd))))
    dev = max(np.max(np.abs(eng.y - ref.y)), np.max(np.abs(eng.yd - ref.yd))) / scale
    assert dev < 20 * RTOL, f"{label} {formulation} {method}: the backends differ by {dev:.1e}"
    if method == "explicit":
        assert ref.stats["method"] == "rkstab"
        assert abs(eng.stats["steps"] - ref.stats["steps"]) <= 1
