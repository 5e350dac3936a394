"""The engine's one step driver (mbsfmu/runtime/mbs_stepper.c) and the constants it shares with the
Python reference: RKSTAB's step-size control and the collapse rule are written once, in
mbsfmu/core/constants.py, and generated into the header the C integrators include
(mbs_step_constants.h); the C build sees the same values (read back from the compiled method
descriptors), a value changed in Python is the one the next build runs with, and no C source of
the runtime writes them a second time.

The three methods on the driver are tested against closed forms and references in
tests/engine/test_c_rkstab.py, test_c_dop853.py and test_c_radau.py; here what they share, on one
problem with a closed-form solution for all three: what the statistics count, where the
projection hook is called, dense output taking the steps of one call, the stop reasons and the
state they hand back, and the collapse guard.
"""

import ctypes
import re
import shutil

import numpy as np
import pytest
from c_support import RUNTIME, compile_harness

from mbsfmu.core import constants
from mbsfmu.reference.integrators import rkstab
from mbsfmu.runtime import ENGINE_HEADERS, ENGINE_SOURCES, GENERATED_HEADERS, source

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

/* Method k (0 RKSTAB, 1 DOP853, 2 Radau) initialized for n <= 2 states at rtol and atol, in static
 * storage: its stepper and descriptor; the code of its init. */
static int method(int k, int n, double rtol, double atol, mbs_stepper **s, const mbs_step_method **m)
{
    static double work[MBS_DOP853_WORK_SIZE(2) + MBS_RADAU_WORK_SIZE(2)];
    static int iwork[MBS_RADAU_IWORK_SIZE(2)];
    static mbs_stepper r;
    static mbs_dop853 d;
    static mbs_radau a;
    *s = k == 0 ? &r : k == 1 ? &d.st : &a.st;
    *m = k == 0 ? &mbs_rkstab_method : k == 1 ? &mbs_dop853_method : &mbs_radau_method;
    return k == 0 ? mbs_rkstab_init(&r, n, work, rtol, atol, 0.0)
         : k == 1 ? mbs_dop853_init(&d, n, work, rtol, atol, 0.0)
                  : mbs_radau_init(&a, n, work, iwork, rtol, atol, 0.0);
}

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
    mbs_stepper *s;
    const mbs_step_method *m;
    const mbs_problem pb = {creep, NULL, NULL, &w, NULL};
    double x = 0.0, t = 0.0;
    int rc = method(k, 1, 1e-6, 1e-20, &s, &m);
    if (rc != 0) return rc;
    rc = mbs_stepper_advance(s, m, &pb, &t, &x, 1.0, max_steps);
    *t_out = t;
    *naccept = s->naccept;
    return rc;
}

/* The unit vector turning at rate w, x' = -w y, y' = w x, from (1, 0): (cos wt, sin wt) on the unit
 * circle, its invariant manifold.  f fails (returns 1) after fail_f, the projection after fail_p, and
 * f gives NaN after nan_after (HUGE_VAL: never); nf and np count the calls. */
typedef struct {
    double w, fail_f, fail_p, nan_after;
    long nf, np;
} turn;

static int turn_f(void *ctx, double t, const double *x, double *xd)
{
    turn *c = ctx;
    c->nf++;
    if (t > c->fail_f) return 1;
    xd[0] = t > c->nan_after ? NAN : -c->w * x[1];
    xd[1] = c->w * x[0];
    return 0;
}

/* onto the unit circle: x / |x| */
static int turn_p(void *ctx, double t, double *x)
{
    turn *c = ctx;
    const double r = hypot(x[0], x[1]);
    c->np++;
    if (t > c->fail_p) return 1;
    x[0] /= r;
    x[1] /= r;
    return 0;
}

/* Method k (0 RKSTAB, 1 DOP853, 2 Radau with difference Jacobians) on turn from t = 0 to t_end at
 * rtol, atol = rtol / 10, projected or not, at most max_steps attempts (0: no limit): with ngrid = 0
 * one mbs_stepper_advance call (t_out, x_out: where it ended); with ngrid > 0 dense output at
 * t_end k / ngrid, k = 1..ngrid (never stepping past t_end) into xgrid (2 ngrid), then the internal
 * state into t_out, x_out.  stats: nfev, naccept, nreject, nproj, calls of f, calls of the
 * projection.  The return code of the (first failing) call. */
int turn_run(int k, const double *fail, double rtol, int project, double t_end, long max_steps, int ngrid,
             double *xgrid, double *t_out, double *x_out, long *stats)
{
    mbs_stepper *s;
    const mbs_step_method *m;
    turn c = {1.0, fail[0], fail[1], fail[2], 0, 0};
    const mbs_problem pb = {turn_f, NULL, project ? turn_p : NULL, &c, NULL};
    double t = 0.0, x[2] = {1.0, 0.0};
    const double *xs;
    int g, rc = method(k, 2, rtol, rtol / 10, &s, &m);
    if (rc == MBS_STEP_OK && ngrid == 0) rc = mbs_stepper_advance(s, m, &pb, &t, x, t_end, max_steps);
    for (g = 1; rc == MBS_STEP_OK && g <= ngrid; g++)
        rc = mbs_stepper_advance_dense(s, m, &pb, 0.0, x, t_end * g / ngrid, t_end, max_steps,
                                       xgrid + 2 * (g - 1));
    if (ngrid > 0) {
        xs = mbs_stepper_state(s, m, &t);
        x[0] = xs[0];
        x[1] = xs[1];
    }
    *t_out = t;
    x_out[0] = x[0];
    x_out[1] = x[1];
    stats[0] = s->nfev;
    stats[1] = s->naccept;
    stats[2] = s->nreject;
    stats[3] = s->nproj;
    stats[4] = c.nf;
    stats[5] = c.np;
    return rc;
}
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return build(tmp_path_factory.mktemp("c_stepper"))


def build(tmp):
    """The harness and the integrators compiled in the folder tmp (with the generated headers as
    mbsfmu.runtime.source gives them now), loaded."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
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
    dll.turn_run.argtypes = [ctypes.c_int, D, ctypes.c_double, ctypes.c_int, ctypes.c_double, ctypes.c_long,
                             ctypes.c_int, D, D, D, ctypes.POINTER(ctypes.c_long)]
    return dll


def test_the_c_build_sees_the_python_step_control(lib):
    """The values the compiled RKSTAB runs with are those of constants.RKSTAB, and the Python
    reference takes its own from the same table (so that both take the same steps)."""
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


def test_a_changed_python_value_reaches_the_compiled_integrators(lib, tmp_path, monkeypatch):
    """The header is generated from the Python tables at every build, so a value changed in
    constants.py is the value the next build runs with: RKSTAB's safety factor 0.9 -> 0.8 (smaller
    steps: more of them on the same problem) and the collapse rule's 10000 steps -> 777 (every
    method stops after 777 accepted short steps, and says so)."""
    default = turn(lib, 0, rtol=1e-8)
    monkeypatch.setitem(constants.RKSTAB, "safety", 0.8)
    monkeypatch.setitem(constants.COLLAPSE, "steps", 777)
    changed = build(tmp_path)
    out = np.zeros(11)
    changed.rkstab_control(out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
    assert out[1] == 0.8
    assert b"(777 accepted steps in a row" in changed.message(-10)
    for k in range(3):
        t, na = ctypes.c_double(), ctypes.c_long()
        assert changed.creep_run(k, 3e12, 200_000, ctypes.byref(t), ctypes.byref(na)) == -10
        assert na.value == 777
    r = turn(changed, 0, rtol=1e-8)
    assert r["rc"] == 0 and r["naccept"] > default["naccept"]  # measured 126 -> 150 steps
    assert np.abs(r["x"] - [np.cos(10.0), np.sin(10.0)]).max() < 5e-8


# ------------------------------------------------------------- what the three methods share

NEVER = float("inf")
METHODS = [(0, "rkstab"), (1, "dop853"), (2, "radau5")]
STATS = ("nfev", "naccept", "nreject", "nproj", "f_calls", "projection_calls")


def turn(lib, k, fail=(NEVER, NEVER, NEVER), rtol=1e-8, project=True, t_end=10.0, max_steps=0, ngrid=0):
    """turn_run of the harness: the rotating unit vector (exact: (cos t, sin t)) with method k; f
    fails after fail[0], the projection after fail[1], f is NaN after fail[2]."""
    D = ctypes.POINTER(ctypes.c_double)
    f = np.array(fail, dtype=float)
    xg, t, x = np.zeros(2 * max(ngrid, 1)), np.zeros(1), np.zeros(2)
    st = (ctypes.c_long * 6)()
    rc = lib.turn_run(k, f.ctypes.data_as(D), rtol, int(project), t_end, max_steps, ngrid,
                      xg.ctypes.data_as(D), t.ctypes.data_as(D), x.ctypes.data_as(D), st)
    return {"rc": rc, "t": float(t[0]), "x": x, "grid": xg.reshape(-1, 2), **dict(zip(STATS, st))}


def exact(t):
    return np.array([np.cos(t), np.sin(t)])


@pytest.mark.parametrize("k, name", METHODS)
def test_the_statistics_mean_the_same_for_every_method(lib, k, name):
    """The unit vector turning once in 2 pi, x' = -y, y' = x, over 10 s at rtol 1e-8 (atol 1e-9),
    projected onto the unit circle by the hook.  For every method: the end state within 5e-8 of
    (cos 10, sin 10) (measured: 1.4e-9 RKSTAB, 3.2e-9 DOP853, 9.6e-11 Radau) and on the circle to
    rounding (|x| - 1 <= 2 eps; without the projection 7e-10 .. 1.1e-8); nfev is every call of f
    (Radau's difference Jacobians too) and nproj every call of the projection.  Where the method
    projects: RKSTAB every attempt (in the step), DOP853 every attempt that passed its error test
    (the correction then counts and may reject it), Radau every accepted step."""
    r = turn(lib, k)
    assert r["rc"] == 0 and r["t"] == 10.0
    assert np.abs(r["x"] - exact(10.0)).max() < 5e-8, name
    assert abs(np.hypot(*r["x"]) - 1.0) <= 2 * np.finfo(float).eps
    assert r["nfev"] == r["f_calls"] and r["nproj"] == r["projection_calls"] > 0
    attempts = r["naccept"] + r["nreject"]
    assert {0: r["nproj"] == attempts, 1: r["naccept"] <= r["nproj"] <= attempts,
            2: r["nproj"] == r["naccept"]}[k]
    free = turn(lib, k, project=False)
    assert free["rc"] == 0 and free["nproj"] == free["projection_calls"] == 0
    assert abs(np.hypot(*free["x"]) - 1.0) > 1e-10  # the hook is what keeps the state on the circle


@pytest.mark.parametrize("k, name", METHODS)
def test_dense_output_takes_the_steps_of_one_call(lib, k, name):
    """Dense output at 50 points of [0, 10] (never stepping past 10) takes the steps of one call to
    10 and ends in the same state, bit for bit; the interpolated states (not projected) are within
    2e-7 of the exact ones (measured: 2.5e-9 RKSTAB, 9.3e-9 DOP853, 7.4e-8 Radau, whose collocation
    polynomial is of order 3)."""
    one = turn(lib, k)
    dense = turn(lib, k, ngrid=50)
    assert dense["rc"] == 0 and dense["t"] == 10.0
    counts = ("naccept", "nreject", "nproj")
    assert [dense[c] for c in counts] == [one[c] for c in counts]
    assert np.array_equal(dense["x"], one["x"])
    tg = 10.0 * np.arange(1, 51) / 50
    assert np.abs(dense["grid"] - exact(tg).T).max() < 2e-7, name


@pytest.mark.parametrize("k, name", METHODS)
def test_the_stop_reasons_mean_the_same_for_every_method(lib, k, name):
    """Each way a call ends gives the same code for every method, and the state handed back is the
    last accepted one: at a time before the failure, within 1e-9 of the exact solution there."""
    cases = [  # (what fails, code, the latest time the state may have)
        ({"fail": (0.5, NEVER, NEVER)}, -4, 0.5),          # f fails after t = 0.5: MBS_STEP_ERHS
        ({"fail": (NEVER, 0.3, NEVER)}, -5, 0.3),          # the projection fails after 0.3: EPROJECT
        ({"fail": (NEVER, NEVER, 1.0)}, -6, 1.0),          # f is NaN after 1: ENONFINITE
        ({"max_steps": 10}, -3, 10.0),                     # the 11th attempt: ETOOMANY
    ]
    for kw, code, t_max in cases:
        r = turn(lib, k, **kw)
        assert r["rc"] == code, (name, kw, r["rc"])
        assert 0.0 < r["t"] <= t_max
        assert np.abs(r["x"] - exact(r["t"])).max() < 1e-9, (name, kw)
        assert r["nfev"] == r["f_calls"] and r["nproj"] == r["projection_calls"]
        if code == -3:
            assert r["naccept"] + r["nreject"] == 10
        if code == -6:  # the steps shrank to the smallest one below the first NaN
            assert r["t"] > 1.0 - 1e-9
    assert turn(lib, k, rtol=-1.0)["rc"] == -1  # EARG, before any call of f
    assert turn(lib, k, rtol=-1.0)["f_calls"] == 0
