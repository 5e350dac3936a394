"""The engine's stiff method, Radau IIA of order 5 (mbsfmu/runtime/mbs_radau.c), against closed
forms and published reference values.

The runtime is compiled with a small C harness (test problems + a driver over a grid in dense
mode) into a shared library and called through ctypes, as tests/test_c_rkstab.py does.
"""

import ctypes
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

RUNTIME = Path(__file__).resolve().parents[1] / "mbsfmu" / "runtime"
CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fPIC", "-shared"]
OK, EARG, EUNDERFLOW, ETOOMANY, ERHS, EPROJECT, ENONFINITE = 0, -1, -2, -3, -4, -5, -6
PROTHERO, VDP, PENDULUM, FAIL_RHS, NAN_AFTER_1, LINEAR = range(6)

HARNESS = r"""
#include <math.h>
#include <string.h>
#include "mbs_radau.h"

typedef struct { int problem; double p; } ctx_t;

static int rhs(void *vc, double t, const double *x, double *xd)
{
    const ctx_t *c = (const ctx_t *)vc;
    switch (c->problem) {
    case 0: xd[0] = -c->p * (x[0] - cos(t)) - sin(t); return 0;           /* Prothero-Robinson */
    case 1: xd[0] = x[1]; xd[1] = ((1 - x[0] * x[0]) * x[1] - x[0]) / c->p; return 0; /* VdP */
    case 2: {                                                              /* pendulum, index 1 */
        double lam = (x[2] * x[2] + x[3] * x[3] - 9.81 * x[1]) / (x[0] * x[0] + x[1] * x[1]);
        xd[0] = x[2]; xd[1] = x[3]; xd[2] = -lam * x[0]; xd[3] = -lam * x[1] - 9.81; return 0; }
    case 3: return 1;
    case 4: xd[0] = t > 1.0 ? NAN : -x[0]; return 0;
    case 5: xd[0] = -x[0] + x[1]; xd[1] = -c->p * x[1]; return 0;          /* eigenvalues -1, -p */
    }
    return 1;
}

static int jac(void *vc, double t, const double *x, const double *fx, double *J)
{
    const ctx_t *c = (const ctx_t *)vc;
    (void)t; (void)fx;
    J[0] = 0; J[1] = 1;
    J[2] = (-2 * x[0] * x[1] - 1) / c->p; J[3] = (1 - x[0] * x[0]) / c->p;
    return 0;
}

static int project(void *vc, double t, double *x)
{
    double r = sqrt(x[0] * x[0] + x[1] * x[1]), v;
    (void)vc; (void)t;
    x[0] /= r; x[1] /= r;                 /* onto x^2 + y^2 = 1 */
    v = x[0] * x[2] + x[1] * x[3];
    x[2] -= v * x[0]; x[3] -= v * x[1];   /* and x vx + y vy = 0 */
    return 0;
}

/* integrate over grid[0..m-1] in dense mode; rows of out get the states; stats: naccept, nreject,
 * nfev, njev, ndec, nproj */
int drive(int problem, double p, double rtol, double atol, int n, const double *x0, const double *grid,
          int m, double t_stop, int use_jac, int use_proj, long max_steps, double *out, long *stats)
{
    double work[MBS_RADAU_WORK_SIZE(4)];
    int iwork[MBS_RADAU_IWORK_SIZE(4)], k, rc = 0;
    mbs_radau s;
    ctx_t c;
    c.problem = problem; c.p = p;
    rc = mbs_radau_init(&s, n, work, iwork, rtol, atol, 0.0);
    if (rc != 0) return rc;
    memcpy(out, x0, sizeof(double) * (size_t)n);
    for (k = 1; k < m && rc == 0; k++)   /* t_stop == 0: stop at every grid point */
        rc = mbs_radau_advance_dense(&s, rhs, use_jac ? jac : NULL, use_proj ? project : NULL, &c,
                                     grid[0], x0, grid[k], t_stop == 0.0 ? grid[k] : t_stop, max_steps,
                                     out + k * n);
    stats[0] = s.naccept; stats[1] = s.nreject; stats[2] = s.nfev; stats[3] = s.njev;
    stats[4] = s.ndec; stats[5] = s.nproj;
    return rc;
}
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("radau")
    (d / "harness.c").write_text(HARNESS)
    out = d / "libradau.so"
    cmd = ["gcc", *CFLAGS, f"-I{RUNTIME}", str(d / "harness.c"), str(RUNTIME / "mbs_radau.c"),
           str(RUNTIME / "mbs_rkstab.c"), str(RUNTIME / "mbs_linalg.c"), "-o", str(out), "-lm"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0 and not res.stderr, res.stderr
    so = ctypes.CDLL(str(out))
    D, L = ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_long)
    so.drive.argtypes = [ctypes.c_int, ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_int, D, D,
                         ctypes.c_int, ctypes.c_double, ctypes.c_int, ctypes.c_int, ctypes.c_long, D, L]
    so.drive.restype = ctypes.c_int
    return so


def drive(lib, problem, x0, grid, *, p=0.0, rtol=1e-6, atol=None, t_stop=math.inf, jac=False, proj=False,
          max_steps=0):
    x0 = np.ascontiguousarray(x0, dtype=float)
    grid = np.ascontiguousarray(grid, dtype=float)
    out = np.zeros((len(grid), len(x0)))
    stats = np.zeros(6, dtype=np.int64)
    D, L = ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_long)
    rc = lib.drive(problem, p, rtol, rtol / 10 if atol is None else atol, len(x0), x0.ctypes.data_as(D),
                   grid.ctypes.data_as(D), len(grid), t_stop, int(jac), int(proj), max_steps,
                   out.ctypes.data_as(D), stats.ctypes.data_as(L))
    return rc, out, dict(zip(("naccept", "nreject", "nfev", "njev", "ndec", "nproj"), stats.tolist()))


@pytest.mark.parametrize("rtol, bound", [(1e-6, 1e-5), (1e-9, 1e-8)])  # global error ~ 10 rtol
def test_prothero_robinson_is_solved_in_few_steps(lib, rtol, bound):
    """x' = -1e6 (x - cos t) - sin t, x(0) = 1: exact x = cos t.  An explicit method needs about
    1e6 h-steps per second here; the L-stable method follows the smooth solution."""
    rc, out, st = drive(lib, PROTHERO, [1.0], [0.0, 10.0], p=1e6, rtol=rtol, atol=rtol, t_stop=0.0)
    assert rc == OK
    assert abs(out[-1, 0] - math.cos(10.0)) < bound
    assert st["naccept"] < 100


def test_van_der_pol_matches_the_ivp_test_set(lib):
    """The IVP test set's VDPOL (eps = 1e-6 on [0, 2], y(0) = (2, 0)): reference solution at t = 2
    y1 = 1.706167732170483, y2 = -0.8928097010247975 (Mazzia & Magherini, release 2.4)."""
    ref = np.array([1.706167732170483, -0.8928097010247975])
    nfev = {}
    for jac in (False, True):
        rc, out, st = drive(lib, VDP, [2.0, 0.0], [0.0, 2.0], p=1e-6, rtol=1e-8, atol=1e-8, jac=jac,
                            t_stop=0.0)
        assert rc == OK
        assert np.max(np.abs(out[-1] - ref) / np.abs(ref)) < 1e-6
        assert st["naccept"] < 3000 and st["njev"] >= 1
        nfev[jac] = st["nfev"]
    assert nfev[True] < nfev[False]  # the analytic Jacobian saves the difference quotients


def test_stepping_to_each_point_and_the_collocation_polynomial(lib):
    """Stopping at every communication point keeps the accuracy at each of them; the collocation
    polynomial between step ends (dense output, order 3) is only as good as its step is short,
    which is why the engine's stiff method stops at communication points."""
    grid = np.linspace(0.0, 10.0, 101)
    rc, out, st = drive(lib, PROTHERO, [1.0], grid, p=1e6, rtol=1e-8, atol=1e-8, t_stop=0.0)
    assert rc == OK and np.max(np.abs(out[:, 0] - np.cos(grid))) < 1e-8
    assert st["naccept"] < 400
    rc, out, st = drive(lib, VDP, [2.0, 0.0], np.linspace(0.0, 0.5, 51), p=1.0, rtol=1e-8, atol=1e-8)
    ref = drive(lib, VDP, [2.0, 0.0], np.linspace(0.0, 0.5, 51), p=1.0, rtol=1e-8, atol=1e-8, t_stop=0.0)[1]
    assert rc == OK and np.max(np.abs(out - ref)) < 1e-5
    rc, _, _ = drive(lib, LINEAR, [1.0, 1.0], [0.0, 1.0], p=1e4, t_stop=0.5)
    assert rc == EARG  # a stop time before the target is refused


def test_stiff_linear_system_against_closed_form(lib):
    """x1' = -x1 + x2, x2' = -1e4 x2: x2 = e^(-1e4 t), x1 = e^-t + (e^-t - e^(-1e4 t)) / (1e4 - 1)."""
    grid = np.linspace(0.0, 5.0, 51)
    rc, out, st = drive(lib, LINEAR, [1.0, 1.0], grid, p=1e4, rtol=1e-9, atol=1e-12, t_stop=0.0)
    assert rc == OK
    t = grid
    x1 = np.exp(-t) + (np.exp(-t) - np.exp(-1e4 * t)) / (1e4 - 1)
    assert np.max(np.abs(out[5:, 0] - x1[5:])) < 1e-8
    assert st["naccept"] < 300


def test_projection_keeps_the_pendulum_on_its_circle(lib):
    """Planar pendulum in Cartesian coordinates (index-1 form) with a projection after every step:
    the constraints hold to rounding at each output point (a step end) and the energy stays within
    the tolerance."""
    grid = np.linspace(0.0, 10.0, 101)
    rc, out, st = drive(lib, PENDULUM, [1.0, 0.0, 0.0, 0.0], grid, rtol=1e-9, atol=1e-11, proj=True,
                        t_stop=0.0)
    assert rc == OK and st["nproj"] == st["naccept"]
    x, y, vx, vy = out.T
    energy = 0.5 * (vx**2 + vy**2) + 9.81 * y
    assert np.max(np.abs(energy - energy[0])) < 1e-6
    assert np.max(np.abs(x**2 + y**2 - 1)) < 1e-13 and np.max(np.abs(x * vx + y * vy)) < 1e-12


def test_failures_are_codes_not_hangs(lib):
    rc, _, _ = drive(lib, PROTHERO, [1.0], [0.0, 1.0], p=1e6, rtol=0.0)
    assert rc == EARG
    rc, _, _ = drive(lib, FAIL_RHS, [1.0], [0.0, 1.0])
    assert rc == ERHS
    rc, _, _ = drive(lib, NAN_AFTER_1, [1.0], [0.0, 2.0])
    assert rc in (ENONFINITE, ERHS)
    rc, _, _ = drive(lib, VDP, [2.0, 0.0], [0.0, 2.0], p=1e-6, rtol=1e-8, max_steps=10)
    assert rc == ETOOMANY
    rc, _, _ = drive(lib, PROTHERO, [math.nan], [0.0, 1.0], p=1e6)
    assert rc == ENONFINITE
