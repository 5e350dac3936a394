"""The engine's one step driver (mbsfmu/runtime/mbs_stepper.c) and the constants it shares with the
Python reference: RKSTAB's step-size control and the collapse rule are written once, in
mbsfmu/runtime/constants.py, and generated into the header the C integrators include
(mbs_step_constants.h); the C build sees the same values (read back from the compiled method
descriptors), and no C source of the runtime writes them a second time.

The three methods on the driver are tested against closed forms and references in
tests/test_c_rkstab.py, test_c_dop853.py and test_c_radau.py; here what they share: the stop
reasons, the collapse guard of every method, and the crossing's companion.
"""

import ctypes
import re
import shutil

import numpy as np
import pytest
from c_support import RUNTIME, compile_harness

from mbsfmu.runtime import ENGINE_HEADERS, ENGINE_SOURCES, GENERATED_HEADERS, constants, source

HARNESS = r"""
#include <math.h>
#include <string.h>
#include "mbs_dop853.h"
#include "mbs_radau.h"
#include "mbs_rkstab.h"

/* RKSTAB's controller and placement as its compiled descriptor holds them, in the order of
 * constants.RKSTAB */
void rkstab_control(double *out)
{
    const mbs_step_method *m = &mbs_rkstab_method;
    out[0] = m->control->order;
    out[1] = m->control->safety;
    out[2] = m->control->facmin;
    out[3] = m->control->facmax;
    out[4] = m->control->beta;
    out[5] = m->control->beta_weight;
    out[6] = m->nonfinite_shrink;
    out[7] = m->singular.watch;
    out[8] = m->singular.theta;
    out[9] = m->singular.reach;
    out[10] = m->start_order;
}

void collapse_rule(double *out)
{
    out[0] = MBS_STEP_COLLAPSE_RATIO;
    out[1] = MBS_STEP_COLLAPSE_STEPS;
}

const char *message(int code) { return mbs_step_message(code); }

/* x' = cos(w t): resolving an oscillation of period 2e-12 s over 1 s takes steps of 1e-13 s, each
 * accepted: a run that could not finish in 1e12 steps. */
static int creep(void *ctx, double t, const double *x, double *xd)
{
    (void)x;
    xd[0] = cos(*(const double *)ctx * t);
    return 0;
}

/* x' = cos(w t) from 0 to 1 with method k (0 RKSTAB, 1 DOP853, 2 Radau) at rtol 1e-6, atol 1e-20,
 * at most max_steps attempts; the code, the time reached and the accepted steps. */
int creep_run(int k, double w, long max_steps, double *t_out, long *naccept)
{
    static double work[MBS_DOP853_WORK_SIZE(1) + MBS_RADAU_WORK_SIZE(1)];
    static int iwork[MBS_RADAU_IWORK_SIZE(1)];
    mbs_stepper r;
    mbs_dop853 d;
    mbs_radau a;
    mbs_stepper *s = k == 0 ? &r : k == 1 ? &d.st : &a.st;
    const mbs_step_method *m = k == 0 ? &mbs_rkstab_method : k == 1 ? &mbs_dop853_method : &mbs_radau_method;
    const mbs_problem pb = {creep, NULL, NULL, &w};
    double x = 0.0, t = 0.0;
    int rc = k == 0 ? mbs_rkstab_init(&r, 1, work, 1e-6, 1e-20, 0.0)
           : k == 1 ? mbs_dop853_init(&d, 1, work, 1e-6, 1e-20, 0.0)
                    : mbs_radau_init(&a, 1, work, iwork, 1e-6, 1e-20, 0.0);
    if (rc != 0) return rc;
    rc = mbs_stepper_advance(s, m, &pb, &t, &x, 1.0, max_steps);
    *t_out = t;
    *naccept = s->naccept;
    return rc;
}
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    tmp = tmp_path_factory.mktemp("c_stepper")
    so = tmp / "libstepper_test.so"
    sources = [RUNTIME / f for f in ("mbs_stepper.c", "mbs_rkstab.c", "mbs_dop853.c", "mbs_radau.c",
                                     "mbs_linalg.c")]
    res = compile_harness(tmp, HARNESS, sources, so)
    assert res.returncode == 0 and not res.stderr, res.stderr  # warning-free with -Wall -Wextra -Werror
    dll = ctypes.CDLL(str(so))
    D = ctypes.POINTER(ctypes.c_double)
    dll.rkstab_control.argtypes = [D]
    dll.collapse_rule.argtypes = [D]
    dll.message.argtypes = [ctypes.c_int]
    dll.message.restype = ctypes.c_char_p
    dll.creep_run.argtypes = [ctypes.c_int, ctypes.c_double, ctypes.c_long, D, ctypes.POINTER(ctypes.c_long)]
    return dll


def test_the_c_build_sees_the_python_step_control(lib):
    """The values the compiled RKSTAB runs with are those of constants.RKSTAB, and the Python
    reference takes its own from the same table (so that both take the same steps)."""
    from mbsfmu.integrators import rkstab

    out = np.zeros(11)
    lib.rkstab_control(out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
    r = constants.RKSTAB
    assert out.tolist() == [r["order"], r["safety"], r["facmin"], r["facmax"], r["beta"], r["beta_weight"],
                            r["nonfinite_shrink"], r["place_watch"], r["place_theta"], r["place_reach"],
                            r["order"]]
    assert (rkstab._SAFETY, rkstab._FACMIN, rkstab._FACMAX, rkstab._BETA) == (0.9, 0.2, 10.0, 0.04)
    assert rkstab._EXPO1 == 0.2 - 0.75 * 0.04  # Hairer's DOPRI5: 1/5 - 0.75 beta, bit for bit
    rule = np.zeros(2)
    lib.collapse_rule(rule.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
    assert rule.tolist() == [constants.COLLAPSE["ratio"], constants.COLLAPSE["steps"]]
    assert b"(10000 accepted steps in a row shorter than 1e-12 of the interval)" in lib.message(-10)


def test_the_constants_are_written_once():
    """The generated header holds every constant of the tables; no hand-written C file of the
    runtime defines one of them (or RKSTAB's old private names) again, and the header is not kept
    in the source folder (it is generated for every build: engine, native FMU, test harness)."""
    text = source(constants.STEP_HEADER)
    for name, value in constants.RKSTAB.items():
        assert f"#define MBS_RKSTAB_{name.upper()} {value!r}\n" in text
    for name, value in constants.COLLAPSE.items():
        assert f"#define MBS_STEP_COLLAPSE_{name.upper()} {value!r}\n" in text
    assert constants.STEP_HEADER in GENERATED_HEADERS and constants.STEP_HEADER in ENGINE_HEADERS
    assert not (RUNTIME / constants.STEP_HEADER).exists()
    names = [*(f"MBS_RKSTAB_{n.upper()}" for n in constants.RKSTAB),
             *(f"MBS_STEP_COLLAPSE_{n.upper()}" for n in constants.COLLAPSE),
             "SAFETY", "FACMIN", "FACMAX", "BETA", "EXPO1", "NONFINITE_SHRINK", "PLACE_WATCH", "PLACE_THETA",
             "PLACE_REACH"]  # the generated names, and RKSTAB's private ones of before
    private = re.compile(r"#define\s+(" + "|".join(names) + r")\b")
    for name in (*ENGINE_SOURCES, *ENGINE_HEADERS):
        if name in GENERATED_HEADERS:
            continue
        assert not private.search(source(name)), f"{name} writes a step-control constant of constants.py"


@pytest.mark.parametrize("k, name", [(0, "rkstab"), (1, "dop853"), (2, "radau5")])
def test_every_method_stops_a_collapsed_step_size(lib, k, name):
    """x' = cos(3e12 t) over 1 s: every method resolves the oscillation with steps of 1e-13 s, each
    accepted, and the driver ends the run by the collapse rule (10000 accepted steps in a row shorter
    than 1e-12 of the interval) long before its budget of 200000 attempts -- Radau too, which had no
    such guard before it ran on the driver."""
    t, na = ctypes.c_double(), ctypes.c_long()
    rc = lib.creep_run(k, 3e12, 200_000, ctypes.byref(t), ctypes.byref(na))
    assert rc == -10, (name, rc, lib.message(rc))
    assert na.value == constants.COLLAPSE["steps"]
    assert 0.0 < t.value < 1e-8
