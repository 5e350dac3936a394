"""The engine's stiff method, Radau IIA of order 5 (mbsfmu/runtime/mbs_radau.c), against closed
forms, published reference values and scipy.

The runtime is compiled with a small C harness (test problems, an analytic Jacobian and a driver over
a grid of communication points) into a shared library with the flags of tests/engine/test_c_rkstab.py and
called through ctypes; the same harness with a main() is built once more with the address and
undefined-behaviour sanitizers.
"""

import ctypes
import math
import shutil
import subprocess
import time

import numpy as np
import pytest
from c_support import RUNTIME, SANITIZE, compile_harness

SOURCES = [RUNTIME / "mbs_stepper.c", RUNTIME / "mbs_radau.c", RUNTIME / "mbs_linalg.c"]

# Codes from mbs_stepper.h
OK, EARG, EUNDERFLOW, ETOOMANY, ERHS, EPROJECT, ENONFINITE, EHMAX = 0, -1, -2, -3, -4, -5, -6, -7
ESINGULAR = -8

(PROTHERO, VDP, PENDULUM, FAIL_RHS, NAN_AFTER_1, LINEAR2, ROBERTSON, MATRIX, OSC, RHS_FAIL_AFTER, BAD_PROJ,
 STIFF_OSC) = range(12)
DENSE, STOP, ADVANCE = 0, 1, 2  # driver modes: t_stop = INFINITY, t_stop = each point, mbs_stepper_advance
STATS = ("naccept", "nreject", "nfev", "njev", "ndec", "nproj", "nnewton", "failed_call")

HARNESS = r"""
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mbs_radau.h"

/* Radau on the step driver: from (*t, x) to exactly t_end, or in dense mode */
static int advance(mbs_radau *s, mbs_rhs_fn f, mbs_jac_fn jac, mbs_project_fn p, void *ctx, double *t,
                   double *x, double t_end, long max_steps)
{
    const mbs_problem pb = {f, jac, p, ctx, NULL};
    return mbs_stepper_advance(&s->st, &mbs_radau_method, &pb, t, x, t_end, max_steps);
}

static int advance_dense(mbs_radau *s, mbs_rhs_fn f, mbs_jac_fn jac, mbs_project_fn p, void *ctx, double t0,
                         const double *x0, double t_target, double t_stop, long max_steps, double *xout)
{
    const mbs_problem pb = {f, jac, p, ctx, NULL};
    return mbs_stepper_advance_dense(&s->st, &mbs_radau_method, &pb, t0, x0, t_target, t_stop, max_steps,
                                     xout);
}

typedef struct { int problem, n; double p; const double *A; } ctx_t;

static int rhs(void *vc, double t, const double *x, double *xd)
{
    const ctx_t *c = (const ctx_t *)vc;
    int i, j;
    switch (c->problem) {
    case 0: xd[0] = -c->p * (x[0] - cos(t)) - sin(t); return 0;                 /* Prothero-Robinson */
    case 1: xd[0] = x[1]; xd[1] = ((1 - x[0] * x[0]) * x[1] - x[0]) / c->p; return 0;   /* VdP */
    case 2: case 10: {                                          /* pendulum, index-1 accelerations */
        double lam = (x[2] * x[2] + x[3] * x[3] - 9.81 * x[1]) / (x[0] * x[0] + x[1] * x[1]);
        xd[0] = x[2]; xd[1] = x[3]; xd[2] = -lam * x[0]; xd[3] = -lam * x[1] - 9.81; return 0; }
    case 3: return 1;
    case 4: xd[0] = t > 1.0 ? NAN : -x[0]; return 0;
    case 5: xd[0] = -x[0] + x[1]; xd[1] = -c->p * x[1]; return 0;                /* eigenvalues -1, -p */
    case 6:                                                                       /* Robertson */
        xd[0] = -0.04 * x[0] + 1e4 * x[1] * x[2];
        xd[2] = 3e7 * x[1] * x[1];
        xd[1] = -xd[0] - xd[2];
        return 0;
    case 7:                                                                       /* x' = A x */
        for (i = 0; i < c->n; i++) {
            double s = 0.0;
            for (j = 0; j < c->n; j++) s += c->A[i * c->n + j] * x[j];
            xd[i] = s;
        }
        return 0;
    case 8: xd[0] = x[1]; xd[1] = -x[0]; return 0;                                /* oscillator */
    case 9: xd[0] = -x[0]; return t > 0.5;
    case 11: xd[0] = x[1]; xd[1] = -x[0]; xd[2] = -c->p * (x[2] - x[0]); return 0;  /* y3 follows y1 */
    case 12: xd[0] = -1.0 / x[0]; return 0;            /* x = sqrt(1 - 2t): x' infinite at t = 1/2 */
    }
    return 1;
}

static int jac(void *vc, double t, const double *x, const double *fx, double *J)
{
    const ctx_t *c = (const ctx_t *)vc;
    int i;
    (void)t; (void)fx;
    switch (c->problem) {
    case 0: J[0] = -c->p; return 0;
    case 1:
        J[0] = 0; J[1] = 1;
        J[2] = (-2 * x[0] * x[1] - 1) / c->p; J[3] = (1 - x[0] * x[0]) / c->p;
        return 0;
    case 5: J[0] = -1; J[1] = 1; J[2] = 0; J[3] = -c->p; return 0;
    case 6:
        J[0] = -0.04; J[1] = 1e4 * x[2]; J[2] = 1e4 * x[1];
        J[6] = 0; J[7] = 6e7 * x[1]; J[8] = 0;
        for (i = 0; i < 3; i++) J[3 + i] = -J[i] - J[6 + i];
        return 0;
    case 7: memcpy(J, c->A, sizeof(double) * (size_t)(c->n * c->n)); return 0;
    case 8: J[0] = 0; J[1] = 1; J[2] = -1; J[3] = 0; return 0;
    case 11:
        for (i = 0; i < 9; i++) J[i] = 0.0;
        J[1] = 1; J[3] = -1; J[6] = c->p; J[8] = -c->p;
        return 0;
    }
    return 1;
}

static int project(void *vc, double t, double *x)
{
    const ctx_t *c = (const ctx_t *)vc;
    double r = sqrt(x[0] * x[0] + x[1] * x[1]), v;
    (void)t;
    if (c->problem == 10 && t > 0.3) return 1;
    x[0] /= r; x[1] /= r;                 /* onto x^2 + y^2 = 1 */
    v = x[0] * x[2] + x[1] * x[3];
    x[2] -= v * x[0]; x[3] -= v * x[1];   /* and x vx + y vy = 0 */
    return 0;
}

static double circle_residual(const double *x)
{
    double r1 = fabs(x[0] * x[0] + x[1] * x[1] - 1.0), r2 = fabs(x[0] * x[2] + x[1] * x[3]);
    return r1 > r2 ? r1 : r2;
}

/* Integrate over grid[0..m-1]: mode 0 dense (t_stop = INFINITY), 1 dense with t_stop = each point,
 * 2 mbs_stepper_advance from point to point.  Rows of out get the states.  h0, hmin: set after init
 * when > 0.  The work arrays are allocated with exactly the documented sizes.
 * stats: naccept, nreject, nfev, njev, ndec, nproj, nnewton, number of the failing call (0: none).
 * info: max constraint residual of the internal state after each call (pendulum), final t_cur. */
int drive(int problem, double p, const double *A, double rtol, double atol, double hmax, double h0,
          double hmin, int n, const double *x0, const double *grid, int m, int mode, int use_jac,
          int use_proj, long max_steps, double *out, long *stats, double *info)
{
    double *work = malloc(sizeof(double) * (size_t)MBS_RADAU_WORK_SIZE(n > 0 ? n : 0) + 1);
    int *iwork = malloc(sizeof(int) * (size_t)MBS_RADAU_IWORK_SIZE(n > 0 ? n : 0) + 1);
    int k, rc;
    mbs_radau s;
    ctx_t c;
    c.problem = problem; c.n = n; c.p = p; c.A = A;
    info[0] = 0.0; info[1] = NAN;
    memset(stats, 0, 8 * sizeof(long));
    rc = mbs_radau_init(&s, n, work, iwork, rtol, atol, hmax);
    if (rc == 0) {
        if (h0 > 0) s.st.h = h0;
        if (hmin > 0) s.st.hmin = hmin;
        memcpy(out, x0, sizeof(double) * (size_t)n);
        for (k = 1; k < m && rc == 0; k++) {
            double *row = out + k * n;
            if (mode == 2) {
                double t = grid[k - 1];
                memcpy(row, row - n, sizeof(double) * (size_t)n);
                rc = advance(&s, rhs, use_jac ? jac : NULL, use_proj ? project : NULL, &c, &t, row,
                                       grid[k], max_steps);
                info[1] = t;
            } else {
                rc = advance_dense(&s, rhs, use_jac ? jac : NULL, use_proj ? project : NULL, &c,
                                             grid[0], x0, grid[k], mode == 1 ? grid[k] : INFINITY,
                                             max_steps, row);
                info[1] = s.st.t;
            }
            if (problem == 2 && s.st.valid && circle_residual(work) > info[0])
                info[0] = circle_residual(work);
            if (rc != 0) stats[7] = k;
        }
        stats[0] = s.st.naccept; stats[1] = s.st.nreject; stats[2] = s.st.nfev; stats[3] = s.njev;
        stats[4] = s.ndec; stats[5] = s.st.nproj; stats[6] = s.nnewton;
    }
    free(work);
    free(iwork);
    return rc;
}

/* mbs_stepper_advance keeps its internal state when called with the state it returned, and restarts
 * (a new Jacobian) when x was changed: out = {njev after 1, 2 (unchanged x), 3 (changed x) calls,
 * codes}.  The oscillator is linear: its Newton iterations converge at once and the Jacobian is
 * kept for the whole run unless the integrator restarts. */
void restart_check(long *out)
{
    double work[MBS_RADAU_WORK_SIZE(2)], x[2] = {1.0, 0.0}, t = 0.0;
    int iwork[MBS_RADAU_IWORK_SIZE(2)], k;
    mbs_radau s;
    ctx_t c;
    c.problem = 8; c.n = 2; c.p = 1.0; c.A = NULL;
    mbs_radau_init(&s, 2, work, iwork, 1e-6, -1.0, 0.0);
    for (k = 0; k < 3; k++) {
        if (k == 2) x[1] += 1e-3;
        out[3 + k] = advance(&s, rhs, jac, NULL, &c, &t, x, 0.1 * (k + 1), 0);
        out[k] = s.njev;
    }
}

const char *message(int code) { return mbs_step_message(code); }

#ifdef SANITIZE_MAIN
#include <stdio.h>
/* A few runs under the sanitizers: every code path the tests take, with exact-size heap arrays. */
static double out[3 * 64], info[2], A[25];
static long st[8];

static int run(int problem, double p, double rtol, double atol, int n, const double *x0, int mode,
               int use_jac, int use_proj, long max_steps)
{
    const double grid[3] = {0.0, 1.0, 2.0};
    return drive(problem, p, A, rtol, atol, 0.0, 0.0, 0.0, n, x0, grid, 3, mode, use_jac, use_proj, max_steps,
                 out, st, info);
}

int main(void)
{
    const double vdp0[2] = {2.0, 0.0}, pend0[4] = {1.0, 0.0, 0.0, 0.0}, rob0[3] = {1.0, 0.0, 0.0};
    const double one[1] = {1.0}, x5[5] = {1, 2, 3, 4, 5};
    long chk[6];
    int i, mode, fails = 0;
    for (i = 0; i < 25; i++) A[i] = (i % 6 == 0) ? -(double)(1 + 1000 * i) : 0.01 * (i % 7);
    for (mode = 0; mode < 3; mode++) {
        fails += run(1, 1e-3, 1e-7, 1e-7, 2, vdp0, mode, mode == 1, 0, 0) != 0;
        fails += run(2, 0.0, 1e-8, 1e-10, 4, pend0, mode, 0, 1, 0) != 0;
        fails += run(6, 0.0, 1e-6, 1e-12, 3, rob0, mode, 0, 0, 0) != 0;
        fails += run(7, 0.0, 1e-6, 1e-8, 5, x5, mode, mode == 2, 0, 0) != 0;
        fails += run(11, 1e6, 1e-6, 1e-6, 3, rob0, mode, mode == 0, 0, 0) != 0;
    }
    fails += run(3, 0.0, 1e-6, 1e-7, 1, one, 0, 0, 0, 0) != ERHS_CODE;
    fails += run(4, 0.0, 1e-6, 1e-7, 1, one, 0, 0, 0, 0) == 0;
    fails += run(9, 0.0, 1e-6, 1e-7, 1, one, 0, 0, 0, 0) == 0;
    fails += run(10, 0.0, 1e-6, 1e-7, 4, pend0, 0, 0, 1, 0) == 0;
    fails += run(1, 1e-6, 1e-8, 1e-8, 2, vdp0, 0, 0, 0, 5) == 0;
    fails += run(0, 1e6, 1e-6, 1e-7, 0, one, 0, 0, 0, 0) == 0;
    restart_check(chk);
    printf("fails %d\n", fails);
    return fails != 0;
}
#endif
"""


def _compile(tmp, extra, output, shared=True):
    return compile_harness(tmp, HARNESS, SOURCES, output, extra, shared)


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    tmp = tmp_path_factory.mktemp("c_radau")
    so = tmp / "libradau_test.so"
    res = _compile(tmp, [], so)
    assert res.returncode == 0 and not res.stderr, res.stderr  # warning-free with -Wall -Wextra -Werror
    dll = ctypes.CDLL(str(so))
    D, L, i, d = ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_long), ctypes.c_int, ctypes.c_double
    dll.drive.argtypes = [i, d, D, d, d, d, d, d, i, D, D, i, i, i, i, ctypes.c_long, D, L, D]
    dll.drive.restype = i
    dll.restart_check.argtypes = [L]
    dll.restart_check.restype = None
    dll.message.argtypes = [i]
    dll.message.restype = ctypes.c_char_p
    return dll


def drive(lib, problem, x0, grid, *, p=0.0, A=None, rtol=1e-6, atol=None, hmax=0.0, h0=0.0, hmin=0.0,
          mode=DENSE, jac=False, proj=False, max_steps=0):
    """Run the C driver; returns (code, states at the grid points, statistics)."""
    x0 = np.ascontiguousarray(x0, dtype=float)
    grid = np.ascontiguousarray(grid, dtype=float)
    out = np.zeros((len(grid), max(len(x0), 1)))
    stats = np.zeros(8, dtype=np.int64)
    info = np.zeros(2)
    D, L = ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_long)
    Ap = None if A is None else np.ascontiguousarray(A, dtype=float)
    rc = lib.drive(problem, p, None if Ap is None else Ap.ctypes.data_as(D), rtol,
                   rtol / 10 if atol is None else atol, hmax, h0, hmin, len(x0), x0.ctypes.data_as(D),
                   grid.ctypes.data_as(D), len(grid), mode, int(jac), int(proj), max_steps,
                   out.ctypes.data_as(D), stats.ctypes.data_as(L), info.ctypes.data_as(D))
    st = dict(zip(STATS, stats.tolist()))
    st["resid"], st["t"] = info.tolist()
    return rc, out, st


# ------------------------------------------------------------------ 1. stiff linear problems


@pytest.mark.parametrize("rtol", [1e-6, 1e-9])
def test_prothero_robinson_in_few_steps(lib, rtol):
    """x' = -1e6 (x - cos t) - sin t, x(0) = 1: exact x = cos t.  An explicit method would need
    about 1e6 h-steps per unit of time (~1e7 steps here); the L-stable method follows the smooth
    solution.  Measured: 9 steps, error 2.0e-6 (rtol = atol = 1e-6); 12 steps, 3.2e-9 (1e-9)."""
    rc, out, st = drive(lib, PROTHERO, [1.0], [0.0, 10.0], p=1e6, rtol=rtol, atol=rtol, mode=STOP)
    assert rc == OK and st["t"] == 10.0
    assert abs(out[-1, 0] - math.cos(10.0)) < 10 * rtol
    assert st["naccept"] < 50 and st["njev"] <= 3


def test_stiff_linear_system_against_closed_form(lib):
    """x1' = -x1 + x2, x2' = -1e6 x2: x2 = e^(-1e6 t), x1 = e^-t + (e^-t - e^(-1e6 t)) / (1e6 - 1).
    The fast transient is resolved (errors at the grid points after it, t >= 0.1, below 1e-8 for
    rtol 1e-9), the slow phase is taken in long steps."""
    grid = np.linspace(0.0, 10.0, 101)
    rc, out, st = drive(lib, LINEAR2, [1.0, 1.0], grid, p=1e6, rtol=1e-9, atol=1e-12, mode=STOP)
    assert rc == OK
    x1 = np.exp(-grid) + (np.exp(-grid) - np.exp(-1e6 * grid)) / (1e6 - 1)
    x2 = np.exp(-1e6 * grid)
    assert np.max(np.abs(out[1:, 0] - x1[1:])) < 1e-8
    assert np.max(np.abs(out[1:, 1] - x2[1:])) < 1e-12
    assert st["naccept"] < 400 and st["nreject"] < 20


def test_larger_system_against_eigendecomposition(lib):
    """x' = A x, n = 40, A = -Q diag(lambda) Q^T + a skew part (complex eigenvalues), lambda from
    1 to 1e6: exercises the real and the complex LU with pivoting; compared with the matrix
    exponential computed by scipy."""
    expm = pytest.importorskip("scipy.linalg").expm
    rng = np.random.default_rng(7)
    n = 40
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    lam = np.logspace(0, 6, n)
    skew = rng.standard_normal((n, n))
    A = -(q * lam) @ q.T + 0.5 * (skew - skew.T)
    x0 = rng.standard_normal(n)
    grid = [0.0, 0.5, 1.0]
    for jac in (True, False):  # measured: 284 / 286 steps, errors 1.4e-10 / 1.2e-10, one Jacobian
        rc, out, st = drive(lib, MATRIX, x0, grid, A=A, rtol=1e-8, atol=1e-10, jac=jac, mode=STOP)
        assert rc == OK
        for k, t in enumerate(grid):
            assert np.max(np.abs(out[k] - expm(A * t) @ x0)) < 1e-8
        assert st["naccept"] < 400 and st["njev"] == 1  # linear: the Jacobian is kept


# ------------------------------------------------------------------ 2. published references


VDP_REF = np.array([1.706167732170483, -0.8928097010247975])  # IVP test set, VDPOL at t = 2


def test_van_der_pol_matches_the_ivp_test_set(lib):
    """The IVP test set's VDPOL (Mazzia & Magherini, release 2.4): y1' = y2,
    y2' = ((1 - y1^2) y2 - y1) / eps, eps = 1e-6, y(0) = (2, 0), reference at t = 2
    y1 = 1.706167732170483, y2 = -0.8928097010247975.  With rtol = atol = 1e-7 the relative error
    is below 1e-5 (measured ~1e-6 with either Jacobian); the analytic Jacobian gives the same
    solution with fewer evaluations of f."""
    res = {}
    for jac in (False, True):
        rc, out, st = drive(lib, VDP, [2.0, 0.0], [0.0, 2.0], p=1e-6, rtol=1e-7, atol=1e-7, jac=jac,
                            mode=STOP)
        assert rc == OK
        assert np.max(np.abs(out[-1] - VDP_REF) / np.abs(VDP_REF)) < 1e-5
        assert 1 <= st["njev"] <= st["naccept"] + st["nreject"]
        res[jac] = (out[-1], st)
    (x_fd, st_fd), (x_an, st_an) = res[False], res[True]
    assert np.max(np.abs(x_fd - x_an) / np.abs(VDP_REF)) < 1e-5
    assert st_an["nfev"] < st_fd["nfev"] - 2 * st_an["njev"]  # two difference quotients per Jacobian saved
    assert abs(st_an["naccept"] - st_fd["naccept"]) < 0.1 * st_fd["naccept"]
    assert st_an["naccept"] < 2000


def test_van_der_pol_tight_against_scipy(lib):
    """mu = 1e3 in the usual form x'' - mu (1 - x^2) x' + x = 0 is VDPOL with time scaled by mu and
    eps = 1/mu^2; a quarter of the interval against scipy's Radau at rtol = atol = 1e-11."""
    solve_ivp = pytest.importorskip("scipy.integrate").solve_ivp
    eps = 1e-6

    def f(t, y):
        return [y[1], ((1 - y[0] ** 2) * y[1] - y[0]) / eps]

    def jac(t, y):
        return [[0.0, 1.0], [(-2 * y[0] * y[1] - 1) / eps, (1 - y[0] ** 2) / eps]]

    grid = np.linspace(0.0, 0.5, 6)
    ref = solve_ivp(f, (0.0, 0.5), [2.0, 0.0], method="Radau", rtol=1e-11, atol=1e-11, jac=jac,
                    t_eval=grid).y.T
    rc, out, st = drive(lib, VDP, [2.0, 0.0], grid, p=eps, rtol=1e-9, atol=1e-9, jac=True, mode=STOP)
    assert rc == OK
    assert np.max(np.abs(out - ref) / (1.0 + np.abs(ref))) < 1e-7


ROBER_T = [0.0, 40.0, 4e5, 4e10]


def test_robertson_against_scipy_and_published_values(lib):
    """Robertson's chemical kinetics to t = 4e10 (Hairer & Wanner II, sec. IV.10).  At t = 40 the
    classical values y = (0.7158271, 9.185535e-6, 0.2841637); at all points against scipy's Radau
    (rtol 1e-10, atol 1e-20), relative to each component's size; mass conservation y1 + y2 + y3 = 1."""
    solve_ivp = pytest.importorskip("scipy.integrate").solve_ivp

    def f(t, y):
        a, b = 0.04 * y[0] - 1e4 * y[1] * y[2], 3e7 * y[1] ** 2
        return [-a, a - b, b]

    def jac(t, y):
        return [[-0.04, 1e4 * y[2], 1e4 * y[1]], [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
                [0.0, 6e7 * y[1], 0.0]]

    ref = solve_ivp(f, (0.0, ROBER_T[-1]), [1.0, 0.0, 0.0], method="Radau", rtol=1e-10, atol=1e-20, jac=jac,
                    t_eval=ROBER_T).y.T
    assert np.max(np.abs(ref[1] - [0.7158271, 9.185535e-6, 0.2841637]) / ref[1]) < 1e-6
    for rtol, atol, bound in ((1e-6, 1e-12, 1e-3), (1e-8, 1e-20, 1e-5)):
        # measured: 295 steps (79 rejected), max relative error 3e-5; 669 steps, 2e-7
        rc, out, st = drive(lib, ROBERTSON, [1.0, 0.0, 0.0], ROBER_T, rtol=rtol, atol=atol, mode=DENSE)
        assert rc == OK
        assert np.max(np.abs(out[1:] - ref[1:]) / ref[1:]) < bound
        assert np.max(np.abs(out.sum(axis=1) - 1.0)) < 1e-12
        assert st["naccept"] < 1000


# ---------------------------------------------------------------------------- 3. dense output


def stiff_osc_exact(t, lam):
    """y1'' = -y1 (y2 = y1'), y3' = -lam (y3 - y1), y(0) = (1, 0, 1)."""
    y3 = (lam**2 * np.cos(t) + lam * np.sin(t) + np.exp(-lam * t)) / (1 + lam**2)
    return np.stack([np.cos(t), -np.sin(t), y3], axis=-1)


@pytest.mark.parametrize("rtol", [1e-6, 1e-9])
def test_dense_output_on_a_fine_grid(lib, rtol):
    """With t_stop = INFINITY the steps run past the communication points and the states there are
    the collocation polynomials (order 3).  A slow oscillation with a stiff component following it
    (eigenvalues +-i and -1e6) on 2001 points of [0, 20]:
    - the interpolation error is of the size of RADAU5's internal tolerance rtol' = 0.1 rtol^(2/3)
      (the error estimate is O(h^4), as is the collocation polynomial), i.e. 10 rtol at rtol = 1e-6
      but 100 rtol at 1e-9: measured max errors 3.8e-6 (rtol 1e-6, 94 steps) and 3.9e-8 (1e-9, 285
      steps), while the step ends are within 1.6 rtol and 4.8 rtol;
    - the steps are exactly those of a single call (bitwise the same state at the end)."""
    lam = 1e6
    grid = np.linspace(0.0, 20.0, 2001)
    x0 = [1.0, 0.0, 1.0]
    rc, out, st = drive(lib, STIFF_OSC, x0, grid, p=lam, rtol=rtol, atol=rtol, mode=DENSE, jac=True)
    assert rc == OK and st["t"] >= 20.0
    assert np.max(np.abs(out - stiff_osc_exact(grid, lam))) < 0.1 * rtol ** (2 / 3)
    rc1, out1, st1 = drive(lib, STIFF_OSC, x0, [0.0, 20.0], p=lam, rtol=rtol, atol=rtol, mode=DENSE, jac=True)
    assert rc1 == OK and np.array_equal(out1[-1], out[-1]) and st1 == st
    # a single call stopping at t_end: at most one step more (the last one shortened)
    rc2, _, st2 = drive(lib, STIFF_OSC, x0, [0.0, 20.0], p=lam, rtol=rtol, atol=rtol, mode=STOP, jac=True)
    assert rc2 == OK and abs(st2["naccept"] - st["naccept"]) <= 1
    # stopping at all 2001 points costs a step per point
    rc3, out3, st3 = drive(lib, STIFF_OSC, x0, grid, p=lam, rtol=rtol, atol=rtol, mode=STOP, jac=True)
    assert rc3 == OK and st3["naccept"] >= 2000 > st["naccept"]
    assert np.max(np.abs(out3 - stiff_osc_exact(grid, lam))) < 10 * rtol


def test_dense_output_is_not_error_controlled(lib):
    """A limitation, as in RADAU5: the error test controls the step ends only.  On Prothero-Robinson
    the step end is exact up to O(1/1e6) for any h, so h grows by 8 per step (9 steps for [0, 10],
    the last ~11 long) and the collocation polynomial of such a step is far from cos t.  hmax (or
    stopping at the communication points) bounds the interpolation error."""
    grid = np.linspace(0.0, 10.0, 1001)
    rc, out, st = drive(lib, PROTHERO, [1.0], grid, p=1e6, rtol=1e-6, atol=1e-6, mode=DENSE)
    assert rc == OK and st["naccept"] < 20
    assert abs(out[-1, 0] - math.cos(10.0)) > 1e-2  # interpolated inside a step of ~11
    rc, out, st = drive(lib, PROTHERO, [1.0], grid, p=1e6, rtol=1e-6, atol=1e-6, mode=DENSE, hmax=0.05)
    assert rc == OK and np.max(np.abs(out[:, 0] - np.cos(grid))) < 1e-5 and st["naccept"] < 250


def test_dense_output_nonstiff_oscillator(lib):
    """x'' = -x on 401 points of [0, 20] in dense mode: the interpolated states are within 10 rtol
    (rtol = 1e-7) of (cos t, -sin t)."""
    grid = np.linspace(0.0, 20.0, 401)
    rc, out, st = drive(lib, OSC, [1.0, 0.0], grid, rtol=1e-7, atol=1e-7, mode=DENSE, jac=True)
    assert rc == OK
    exact = np.stack([np.cos(grid), -np.sin(grid)], axis=1)
    assert np.max(np.abs(out - exact)) < 1e-6
    assert st["naccept"] < 400


def test_advance_ends_exactly_and_continues(lib):
    """mbs_stepper_advance (Radau): exactly at each point, continuing its state (Jacobian, LU, controller)
    when called with the state it returned, restarting when x was changed."""
    grid = np.linspace(0.0, 2.0, 21)
    rc, out, st = drive(lib, VDP, [2.0, 0.0], grid, p=1e-3, rtol=1e-8, atol=1e-8, mode=ADVANCE)
    rs, outs, sts = drive(lib, VDP, [2.0, 0.0], grid, p=1e-3, rtol=1e-8, atol=1e-8, mode=STOP)
    assert rc == OK and rs == OK and st["t"] == 2.0
    assert np.array_equal(out, outs) and st == sts  # the same steps as dense mode stopping there
    chk = np.zeros(6, dtype=np.int64)
    lib.restart_check(chk.ctypes.data_as(ctypes.POINTER(ctypes.c_long)))
    assert chk[3:].tolist() == [OK, OK, OK]
    assert chk[:3].tolist() == [1, 1, 2]  # a new Jacobian only after the change of x


# ------------------------------------------------------------------------------ 4. projection


@pytest.mark.parametrize("mode", [STOP, DENSE])
def test_projection_keeps_the_pendulum_on_its_circle(lib, mode):
    """Planar pendulum in Cartesian coordinates (index-1 accelerations) with a projection onto
    x^2 + y^2 = 1, x vx + y vy = 0 after every step: the internal state after every call is on the
    manifold to rounding, and the energy is kept within 1e-6 over 10 s (rtol 1e-9).  In dense mode
    the interpolated states are not projected: their residual is of the order of the tolerance."""
    grid = np.linspace(0.0, 10.0, 201)
    rc, out, st = drive(lib, PENDULUM, [1.0, 0.0, 0.0, 0.0], grid, rtol=1e-9, atol=1e-11, proj=True,
                        mode=mode)
    assert rc == OK and st["nproj"] == st["naccept"] > 0
    assert st["resid"] < 1e-13
    x, y, vx, vy = out.T
    energy = 0.5 * (vx**2 + vy**2) + 9.81 * y
    assert np.max(np.abs(energy - energy[0])) < 1e-6
    resid = np.maximum(np.abs(x**2 + y**2 - 1), np.abs(x * vx + y * vy))
    if mode == STOP:  # the states are step ends
        assert np.max(resid) < 1e-13
        free = drive(lib, PENDULUM, [1.0, 0.0, 0.0, 0.0], grid, rtol=1e-9, atol=1e-11, mode=STOP)
        assert free[0] == OK and free[2]["nproj"] == 0
        assert np.max(np.abs(free[1][:, 0] ** 2 + free[1][:, 1] ** 2 - 1)) > 1e-10  # drift without
    else:
        assert np.max(resid) < 1e-6


# ---------------------------------------------------------------------------- 5. order check


def test_order_five_with_fixed_steps(lib):
    """x'' = -x with the analytic Jacobian (one Newton correction solves the linear stage system
    exactly) and h fixed by hmax (loose rtol): the error at t = 1 falls by 2^5 per halving of h."""
    errs = []
    for nsteps in (4, 8, 16):
        h = 1.0 / nsteps
        rc, out, st = drive(lib, OSC, [1.0, 0.0], [0.0, 1.0], rtol=1e-1, atol=1e-1, hmax=h, h0=h, jac=True,
                            mode=STOP)
        assert rc == OK and st["naccept"] == nsteps and st["nreject"] == 0
        errs.append(np.max(np.abs(out[-1] - [math.cos(1.0), -math.sin(1.0)])))
    orders = np.log2(np.array(errs[:-1]) / errs[1:])
    assert np.all((orders > 4.7) & (orders < 5.3)), (errs, orders)


# ---------------------------------------------------------------------------- 6. failures


def test_failures_are_codes_not_hangs(lib):
    t0 = time.perf_counter()
    assert drive(lib, PROTHERO, [1.0], [0.0, 1.0], p=1e6, rtol=0.0)[0] == EARG
    assert drive(lib, PROTHERO, [1.0], [0.0, 1.0], p=1e6, rtol=-1e-6)[0] == EARG
    assert drive(lib, PROTHERO, [], [0.0, 1.0], p=1e6)[0] == EARG  # n < 1
    assert drive(lib, PROTHERO, [1.0], [0.0, -1.0], p=1e6)[0] == EARG  # target before the start
    rc, _, st = drive(lib, PROTHERO, [1.0], [0.0, 1.0, -1.0], p=1e6)
    assert rc == EARG and st["failed_call"] == 2  # target before the last step
    rc, out, st = drive(lib, OSC, [1.0, 0.0], [0.0, 1.0, 1.0 - 1e-6], rtol=1e-8, atol=1e-8)
    assert rc == OK and abs(out[2, 0] - math.cos(1.0 - 1e-6)) < 1e-7  # inside the last step: fine
    assert drive(lib, PROTHERO, [math.nan], [0.0, 1.0], p=1e6)[0] == ENONFINITE
    assert drive(lib, FAIL_RHS, [1.0], [0.0, 1.0])[0] == ERHS  # at the initial state
    rc, _, st = drive(lib, NAN_AFTER_1, [1.0], [0.0, 2.0])
    assert rc == ENONFINITE and 1.0 - 1e-6 < st["t"] <= 1.0
    assert st["naccept"] + st["nreject"] < 2000
    rc, _, st = drive(lib, RHS_FAIL_AFTER, [1.0], [0.0, 2.0])
    assert rc == ERHS and 0.5 - 1e-6 < st["t"] <= 0.5  # failures in the Newton iteration: h shrinks
    rc, _, st = drive(lib, VDP, [2.0, 0.0], [0.0, 2.0], p=1e-6, rtol=1e-8, max_steps=10)
    assert rc == ETOOMANY and st["naccept"] + st["nreject"] == 10
    assert drive(lib, VDP, [2.0, 0.0], [0.0, 2.0], p=1e-6, hmax=1e-4, hmin=1e-3)[0] == EHMAX
    rc, _, st = drive(lib, VDP, [2.0, 0.0], [0.0, 2.0], p=1e-6, hmin=1e-3, h0=0.01)
    assert rc == EUNDERFLOW and st["t"] < 2.0  # the fast transitions need shorter steps
    rc, _, st = drive(lib, BAD_PROJ, [1.0, 0.0, 0.0, 0.0], [0.0, 1.0], proj=True)
    assert rc == EPROJECT and 0.0 < st["t"] <= 0.3
    assert time.perf_counter() - t0 < 5.0
    for code in (OK, EARG, EUNDERFLOW, ETOOMANY, ERHS, EPROJECT, ENONFINITE, EHMAX, ESINGULAR):
        assert lib.message(code) and lib.message(code) != b"unknown error code"
    assert b"singular" in lib.message(ESINGULAR)
    assert lib.message(-99) == b"unknown error code"


# ---------------------------------------------------------------------------- 7. sanitizers


@pytest.mark.slow
def test_under_address_and_undefined_behaviour_sanitizers(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    exe = tmp_path / "radau_sanitized"
    res = _compile(tmp_path, [*SANITIZE, "-DSANITIZE_MAIN", f"-DERHS_CODE={ERHS}", "-g"], exe, shared=False)
    if res.returncode != 0 and ("sanitize" in res.stderr or "asan" in res.stderr.lower()):
        pytest.skip(f"sanitizers not available: {res.stderr[:200]}")
    assert res.returncode == 0, res.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "runtime error" not in run.stderr and "Sanitizer" not in run.stderr, (
        run.stdout + run.stderr)
    assert run.stdout.strip() == "fails 0"



@pytest.mark.parametrize("rtol", [1e-6, 1e-8])
def test_a_diverging_newton_iteration_is_reported_as_such(lib, rtol):
    """x' = -1/x from x = 1 (x = sqrt(1 - 2t)): at t = 1/2 the rate becomes infinite and the
    stage equations lose their solution; the run stops there, within a bounded number of steps,
    and says that the implicit method's Newton iteration diverged at every step size instead of
    'repeated error-test failures' (issue 12 item 4: a diverging implicit solve is reported as
    what it is)."""
    rc, out, st = drive(lib, 12, [1.0], [0.0, 1.0], rtol=rtol, atol=rtol / 100, max_steps=100_000)
    msg = lib.message(rc).decode()
    assert rc != 0 and "Newton iteration of the implicit method diverged" in msg, msg
    assert abs(st["t"] - 0.5) < 1e-8 and st["naccept"] + st["nreject"] < 1000, st
