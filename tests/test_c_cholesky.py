"""The straight-line Cholesky solve of CompiledRHS (mbsfmu.codegen.c_cholesky) against numpy,
and against the loop version in mbs_linalg.c for the pivot it reports on a bad matrix.

Each order is compiled once into one test library (with -Wall -Wextra -Werror): the written-out
code for n <= UNROLL_MAX and the fallback to the loop version above it."""

import ctypes
import subprocess

import numpy as np
import pytest

from mbsfmu.codegen.c_cholesky import UNROLL_MAX, cholesky_solve_source
from mbsfmu.codegen.c_rhs import linalg_source

SIZES = [1, 2, 3, 7, 10, UNROLL_MAX, UNROLL_MAX + 1, 20]
_D = ctypes.POINTER(ctypes.c_double)


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("chol")
    parts = [linalg_source()]
    for n in SIZES:
        src = cholesky_solve_source(n).replace("static int rhs_solve(", f"static int solve_{n}(")
        parts.append(src)
        parts.append(f"int rhs_solve_{n}(double *A, double *b) {{ return solve_{n}(A, b); }}\n")
    (d / "chol.c").write_text("\n".join(parts))
    out = d / "libchol.so"
    res = subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC",
                          "-shared", str(d / "chol.c"), "-o", str(out), "-lm"],
                         capture_output=True, text=True)
    assert res.returncode == 0 and not res.stderr, res.stderr
    so = ctypes.CDLL(str(out))
    for n in SIZES:
        fn = getattr(so, f"rhs_solve_{n}")
        fn.argtypes = [_D, _D]
        fn.restype = ctypes.c_int
    so.mbs_chol_factor.argtypes = [ctypes.c_int, _D]
    so.mbs_chol_factor.restype = ctypes.c_int
    return so


def solve(lib, A, b):
    A, b = np.ascontiguousarray(A, float).copy(), np.array(b, float)
    status = getattr(lib, f"rhs_solve_{len(b)}")(A.ctypes.data_as(_D), b.ctypes.data_as(_D))
    return status, b


@pytest.mark.parametrize("n", SIZES)
def test_solution_matches_numpy(lib, n):
    rng = np.random.default_rng(n)
    for _ in range(5):
        a = rng.standard_normal((n, n))
        A = a @ a.T + n * np.eye(n)            # condition number below ~10
        b = rng.standard_normal(n)
        upper_garbage = A + np.triu(rng.standard_normal((n, n)), 1)   # upper triangle unread
        status, x = solve(lib, upper_garbage, b)
        assert status == 0
        ref = np.linalg.solve(A, b)
        assert np.max(np.abs(x - ref)) <= 1e-13 * np.max(np.abs(ref))


@pytest.mark.parametrize("n", SIZES)
def test_failed_pivot_is_the_one_the_loop_version_reports(lib, n):
    rng = np.random.default_rng(100 + n)
    a = rng.standard_normal((n, n))
    A = a @ a.T + n * np.eye(n)
    k = n // 2
    for bad in (A[k, k] * 0 - 1.0, np.nan):     # a negative pivot, a NaN on the diagonal
        B = A.copy()
        B[k, k] = bad
        status, _ = solve(lib, B, np.ones(n))
        ref = B.copy()
        assert status == lib.mbs_chol_factor(n, ref.ctypes.data_as(_D)) == k + 1
    # a semidefinite matrix: the last pivot is (numerically) zero
    if n > 1:
        v = rng.standard_normal((n, n - 1))
        status, _ = solve(lib, v @ v.T, np.ones(n))
        ref = v @ v.T
        assert status == lib.mbs_chol_factor(n, ref.ctypes.data_as(_D)) > 0


def test_large_orders_call_the_loop_version():
    assert "mbs_chol_factor" in cholesky_solve_source(UNROLL_MAX + 1)
    small = cholesky_solve_source(UNROLL_MAX)
    assert "mbs_chol_factor" not in small and "for (" not in small
