"""The C runtime's dense linear algebra (mbs_linalg.c) agrees with numpy/scipy.

The library is compiled with -Wall -Wextra -Werror, which also asserts that it is warning-free.
"""

import ctypes
import pathlib
import subprocess

import numpy as np
import pytest
import scipy.linalg

RUNTIME = pathlib.Path(__file__).resolve().parents[2] / "mbsfmu" / "runtime"
SIZES = range(1, 13)
PIVOT_RTOL = 1e-14

_D = ctypes.POINTER(ctypes.c_double)
_I = ctypes.POINTER(ctypes.c_int)
_int, _dbl = ctypes.c_int, ctypes.c_double


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    out = tmp_path_factory.mktemp("linalg") / "libmbs_linalg.so"
    cmd = ["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fPIC", "-shared",
           str(RUNTIME / "mbs_linalg.c"), "-o", str(out), "-lm"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0 and not res.stderr, res.stderr
    so = ctypes.CDLL(str(out))
    sigs = {
        "mbs_lu_factor": [_int, _D, _I],
        "mbs_lu_solve": [_int, _D, _I, _D],
        "mbs_chol_factor": [_int, _D],
        "mbs_chol_solve": [_int, _D, _D],
        "mbs_qr_factor": [_int, _int, _D, _D, _I, _I, _dbl],
        "mbs_qr_apply_q": [_int, _int, _D, _D, _int, _D, _int],
        "mbs_qr_nullspace": [_int, _int, _D, _D, _int, _D],
        "mbs_qr_solve_minnorm": [_int, _int, _D, _D, _I, _int, _D, _D],
        "mbs_solve_kkt": [_int, _int, _D, _D, _D, _D, _D, _D, _D],
        "mbs_svd_jacobi": [_int, _int, _D, _D, _D],
    }
    so.mbs_gemv.argtypes = [_int, _int, _int, _dbl, _D, _D, _dbl, _D]
    so.mbs_gemv.restype = None
    so.mbs_gemm.argtypes = [_int, _int, _int, _int, _D, _D, _D]
    so.mbs_gemm.restype = None
    for name, args in sigs.items():
        fn = getattr(so, name)
        fn.argtypes = args
        fn.restype = _int
    return so


def dp(a):
    assert a.dtype == np.float64 and a.flags.c_contiguous
    return a.ctypes.data_as(_D)


def ip(a):
    assert a.dtype == np.intc and a.flags.c_contiguous
    return a.ctypes.data_as(_I)


def close(a, b, rtol=1e-12, what=""):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape, what
    scale = max(np.max(np.abs(b), initial=0.0), 1e-300)
    assert np.all(np.isfinite(a)), (what, a)
    assert np.max(np.abs(a - b), initial=0.0) <= rtol * scale, (what, a, b)


def well_conditioned(rng, n, m=None):
    """Random n x m matrix with singular values in [1, 3]."""
    m = n if m is None else m
    u, _ = np.linalg.qr(rng.standard_normal((n, n)))
    v, _ = np.linalg.qr(rng.standard_normal((m, m)))
    s = np.zeros((n, m))
    k = min(n, m)
    s[:k, :k] = np.diag(rng.uniform(1.0, 3.0, k))
    return u @ s @ v.T


def spd(rng, n):
    a = well_conditioned(rng, n)
    return a @ a.T


# ------------------------------------------------------------------ LU


@pytest.mark.parametrize("n", SIZES)
def test_lu_solve(lib, n):
    rng = np.random.default_rng(100 + n)
    a = well_conditioned(rng, n) * 10.0 ** rng.uniform(-3, 3)
    b = rng.standard_normal(n)
    lu = a.copy()
    piv = np.zeros(n, np.intc)
    assert lib.mbs_lu_factor(n, dp(lu), ip(piv)) == 0
    lu_ref, piv_ref = scipy.linalg.lu_factor(a)
    close(lu, lu_ref, what="factors")
    assert np.array_equal(piv, piv_ref)
    x = b.copy()
    assert lib.mbs_lu_solve(n, dp(lu), ip(piv), dp(x)) == 0
    close(x, np.linalg.solve(a, b), what="solution")


@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_lu_singular(lib, n):
    rng = np.random.default_rng(200 + n)
    a = rng.standard_normal((n, n))
    a[:, -1] = a[:, 0] if n > 1 else 0.0  # repeated column (or zero for n=1)
    piv = np.zeros(n, np.intc)
    st = lib.mbs_lu_factor(n, dp(a), ip(piv))
    assert 1 <= st <= n
    assert st == n  # the dependency shows at the last pivot


def test_lu_zero_nan_and_bad_args(lib):
    piv = np.zeros(3, np.intc)
    assert lib.mbs_lu_factor(3, dp(np.zeros((3, 3))), ip(piv)) == 1
    a = np.eye(3)
    a[1, 1] = np.nan
    assert lib.mbs_lu_factor(3, dp(a), ip(piv)) > 0
    # just above / below the documented relative threshold
    a = np.diag([1.0, 1.0, 2 * PIVOT_RTOL])
    assert lib.mbs_lu_factor(3, dp(a), ip(piv)) == 0
    a = np.diag([1.0, 1.0, 0.5 * PIVOT_RTOL])
    assert lib.mbs_lu_factor(3, dp(a), ip(piv)) == 3
    assert lib.mbs_lu_factor(-1, dp(np.eye(1)), ip(piv)) == -1
    assert lib.mbs_lu_factor(2, None, ip(piv)) == -2
    assert lib.mbs_lu_factor(0, None, None) == 0
    bad = np.array([5, 1, 2], np.intc)
    assert lib.mbs_lu_solve(3, dp(np.eye(3)), ip(bad), dp(np.ones(3))) == -3


# ------------------------------------------------------------ Cholesky


@pytest.mark.parametrize("n", SIZES)
def test_chol_solve(lib, n):
    rng = np.random.default_rng(300 + n)
    a = spd(rng, n) * 10.0 ** rng.uniform(-3, 3)
    b = rng.standard_normal(n)
    upper = np.triu(a, 1).copy()
    la = a.copy()
    assert lib.mbs_chol_factor(n, dp(la)) == 0
    close(np.tril(la), np.linalg.cholesky(a), what="factor")
    assert np.array_equal(np.triu(la, 1), upper)  # strict upper triangle untouched
    x = b.copy()
    assert lib.mbs_chol_solve(n, dp(la), dp(x)) == 0
    close(x, np.linalg.solve(a, b), what="solution")


@pytest.mark.parametrize("n", [1, 2, 6, 12])
def test_chol_not_pd(lib, n):
    rng = np.random.default_rng(400 + n)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    ev = rng.uniform(1.0, 3.0, n)
    ev[-1] = -1.0  # indefinite
    a = (q * ev) @ q.T
    st = lib.mbs_chol_factor(n, dp(a.copy()))
    assert 1 <= st <= n
    # positive semidefinite, rank deficient
    v = rng.standard_normal((n, max(n - 1, 1)))
    a = v @ v.T if n > 1 else np.zeros((1, 1))
    st = lib.mbs_chol_factor(n, dp(a.copy()))
    assert st == n
    a = np.eye(n)
    a[-1, -1] = np.nan
    assert lib.mbs_chol_factor(n, dp(a)) == n


# ------------------------------------------------------------------ QR


def qr_factor(lib, a, rank_tol=1e-10):
    m, n = a.shape
    qr = np.ascontiguousarray(a, dtype=float).copy()
    tau = np.zeros(max(min(m, n), 1))
    perm = np.zeros(max(n, 1), np.intc)
    rank = ctypes.c_int(-1)
    assert lib.mbs_qr_factor(m, n, dp(qr), dp(tau), ip(perm), ctypes.byref(rank), rank_tol) == 0
    return qr, tau, perm[:n], rank.value


def form_q(lib, qr, tau, k=None):
    m, n = qr.shape
    k = min(m, n) if k is None else k
    q = np.zeros((m, m))
    for j in range(m):
        e = np.zeros(m)
        e[j] = 1.0
        assert lib.mbs_qr_apply_q(m, n, dp(qr), dp(tau), k, dp(e), 0) == 0
        q[:, j] = e
    return q


SHAPES = [(m, n) for m in SIZES for n in (1, max(m // 2, 1), m, min(m + 3, 12))]


@pytest.mark.parametrize("m,n", SHAPES)
def test_qr_reconstruction(lib, m, n):
    rng = np.random.default_rng(500 + 13 * m + n)
    a = well_conditioned(rng, m, n)
    qr, tau, perm, rank = qr_factor(lib, a)
    assert rank == min(m, n)
    assert sorted(perm) == list(range(n))
    r = np.triu(qr)
    q = form_q(lib, qr, tau)
    close(q.T @ q, np.eye(m), what="Q orthogonal")
    close(q @ r, a[:, perm], what="A P = Q R")
    d = np.abs(np.diag(r))
    assert np.all(d[:-1] >= d[1:] * (1 - 1e-12)), "pivoting orders |R_ii|"
    # Q^T is the inverse of Q
    x = rng.standard_normal(m)
    y = x.copy()
    assert lib.mbs_qr_apply_q(m, n, dp(qr), dp(tau), min(m, n), dp(y), 1) == 0
    close(y, q.T @ x, what="Q^T x")
    assert lib.mbs_qr_apply_q(m, n, dp(qr), dp(tau), min(m, n), dp(y), 0) == 0
    close(y, x, what="Q Q^T x")
    # partial products: first k reflectors
    k = min(m, n) // 2
    qk = form_q(lib, qr, tau, k)
    close(qk.T @ qk, np.eye(m), what="Q_k orthogonal")
    close(qk[:, :k] @ r[:k, :k], (q @ r)[:, :k], what="first k columns")


def test_qr_rank_deficient(lib):
    rng = np.random.default_rng(600)
    for m in SIZES:
        for n in range(2, 13):
            a = well_conditioned(rng, m, n - 1)
            a = np.column_stack([a, a[:, rng.integers(n - 1)]])  # repeated column
            _, _, _, rank = qr_factor(lib, a)
            assert rank == min(m, n - 1), (m, n)
    # low rank product, zero matrix, rank_tol semantics
    a = rng.standard_normal((8, 3)) @ rng.standard_normal((3, 6))
    assert qr_factor(lib, a)[3] == 3
    assert qr_factor(lib, np.zeros((4, 3)))[3] == 0
    a = np.diag([1.0, 1e-3, 1e-8])
    assert qr_factor(lib, a, 1e-6)[3] == 2
    assert qr_factor(lib, a, 1e-9)[3] == 3
    assert qr_factor(lib, a, 0.0)[3] == 3
    perm, tau, rank = np.zeros(3, np.intc), np.zeros(3), ctypes.c_int()
    assert lib.mbs_qr_factor(3, 3, dp(a.copy()), dp(tau), ip(perm), ctypes.byref(rank), -1.0) == -7


def constraint_jacobian(rng, mc, f, redundant):
    c = well_conditioned(rng, mc, f)
    if redundant and mc > 1:
        c[-1] = 0.5 * c[0] - 2.0 * c[mc // 2 - 1] if mc > 2 else 3.0 * c[0]
    return c


CASES = [(mc, f) for f in SIZES for mc in range(1, f + 1)]


@pytest.mark.parametrize("redundant", [False, True])
def test_nullspace_and_minnorm(lib, redundant):
    rng = np.random.default_rng(700 + redundant)
    for mc, f in CASES:
        c = constraint_jacobian(rng, mc, f, redundant)
        expected_rank = np.linalg.matrix_rank(c)
        qr, tau, perm, rank = qr_factor(lib, c.T.copy())
        assert rank == expected_rank, (mc, f)
        j = np.full((f, f - rank), np.nan)
        assert lib.mbs_qr_nullspace(f, mc, dp(qr), dp(tau), rank, dp(j)) == 0
        close(j.T @ j, np.eye(f - rank), rtol=1e-13, what="J orthonormal")
        assert np.max(np.abs(c @ j), initial=0.0) <= 1e-13 * np.max(np.abs(c)), "C J = 0"
        # consistent right-hand side
        b = c @ rng.standard_normal(f)
        x = np.full(f, np.nan)
        assert lib.mbs_qr_solve_minnorm(f, mc, dp(qr), dp(tau), ip(perm), rank, dp(b), dp(x)) == 0
        x_ref = np.linalg.lstsq(c, b, rcond=None)[0]
        close(x, x_ref, what=f"min-norm {mc}x{f}")
        close(c @ x, b, what="C x = b")


def test_nullspace_full_space(lib):
    # rank 0: the null space is all of R^f
    f, mc = 4, 2
    qr, tau, perm, rank = qr_factor(lib, np.zeros((f, mc)))
    assert rank == 0
    j = np.zeros((f, f))
    assert lib.mbs_qr_nullspace(f, mc, dp(qr), dp(tau), rank, dp(j)) == 0
    close(j.T @ j, np.eye(f))
    assert lib.mbs_qr_nullspace(f, mc, dp(qr), dp(tau), 3, dp(j)) == -5


# ----------------------------------------------------------------- KKT


def kkt(lib, m_mat, c, h, b2):
    f, m = len(h), len(b2)
    ydd, lam = np.full(f, np.nan), np.full(max(m, 1), np.nan)
    work = np.full(f * f + f * m + m * m + f + m, np.nan)
    c = np.ascontiguousarray(c, dtype=float).reshape(m, f) if m else np.zeros((1, f))
    b2 = b2 if m else np.zeros(1)
    st = lib.mbs_solve_kkt(f, m, dp(m_mat), dp(c), dp(h), dp(b2), dp(ydd), dp(lam), dp(work))
    return st, ydd, lam[:m]


@pytest.mark.parametrize("f", SIZES)
def test_kkt(lib, f):
    rng = np.random.default_rng(800 + f)
    for m in range(0, f):
        m_mat = spd(rng, f) * 10.0 ** rng.uniform(-2, 2)
        c = well_conditioned(rng, m, f) if m else np.zeros((0, f))
        h, b2 = rng.standard_normal(f), rng.standard_normal(m)
        st, ydd, lam = kkt(lib, m_mat, c, h, b2)
        assert st == 0
        full = np.block([[m_mat, c.T], [c, np.zeros((m, m))]])
        sol = np.linalg.solve(full, np.concatenate([h, -b2]))
        close(ydd, sol[:f], what=f"ydd f={f} m={m}")
        close(lam, -sol[f:], what=f"lambda f={f} m={m}")


def test_kkt_failures(lib):
    rng = np.random.default_rng(900)
    f, m = 6, 3
    c = well_conditioned(rng, m, f)
    h, b2 = rng.standard_normal(f), rng.standard_normal(m)
    # M not positive definite: status in 1..f
    m_bad = spd(rng, f)
    m_bad[2, :] = m_bad[:, 2] = 0.0
    st, ydd, lam = kkt(lib, m_bad, c, h, b2)
    assert 1 <= st <= f
    # redundant constraints: Schur complement singular, status in f+1..f+m
    c_red = c.copy()
    c_red[2] = c_red[0] - 0.5 * c_red[1]
    st, _, _ = kkt(lib, spd(rng, f), c_red, h, b2)
    assert st == f + 3
    c_red[2] = c_red[0]
    st, _, _ = kkt(lib, spd(rng, f), c_red, h, b2)
    assert st == f + 3
    # more constraints than coordinates cannot be independent
    c_many = rng.standard_normal((f + 1, f))
    st, _, _ = kkt(lib, spd(rng, f), c_many, h, rng.standard_normal(f + 1))
    assert f < st <= 2 * f + 1
    # NaN in the mass matrix is reported, not propagated
    m_nan = spd(rng, f)
    m_nan[4, 4] = np.nan
    st, _, _ = kkt(lib, m_nan, c, h, b2)
    assert st == 5
    # bad arguments
    assert lib.mbs_solve_kkt(-1, 0, None, None, None, None, None, None, None) == -1
    assert lib.mbs_solve_kkt(2, -1, None, None, None, None, None, None, None) == -2


@pytest.mark.parametrize("m, n", [(0, 3), (3, 0), (1, 1), (4, 7), (7, 4)])
def test_gemv_matches_numpy(lib, m, n):
    rng = np.random.default_rng(10 * m + n)
    A = rng.standard_normal((m, n))
    for trans, (nx, ny) in ((0, (n, m)), (1, (m, n))):
        x = rng.standard_normal(nx)
        op = A.T if trans else A
        for alpha, beta in ((1.0, 0.0), (-1.0, 1.0), (2.5, -1.0)):
            y0 = rng.standard_normal(ny)
            y = y0.copy() if ny else np.zeros(1)
            lib.mbs_gemv(trans, m, n, alpha, dp(A if A.size else np.zeros(1)),
                         dp(x if nx else np.zeros(1)), beta, dp(y))
            close(y[:ny], alpha * op @ x + beta * y0, rtol=1e-14, what=(trans, alpha, beta))
    # beta = 0 never reads y (a NaN there does not leak into the result)
    y = np.full(max(m, 1), np.nan)
    lib.mbs_gemv(0, m, n, 1.0, dp(A if A.size else np.zeros(1)), dp(np.ones(max(n, 1))), 0.0,
                 dp(y))
    close(y[:m], A @ np.ones(n), rtol=1e-14)


@pytest.mark.parametrize("m,n,rank", [(6, 3, 3), (9, 4, 2), (3, 3, 3), (5, 1, 1), (7, 5, 0)])
def test_svd_jacobi_matches_lapack(lib, m, n, rank):
    """One-sided Jacobi SVD against numpy (LAPACK): singular values to 1e-13 relative, U^T U = I
    on the nonzero ones, and A V = U S."""
    rng = np.random.default_rng(m * 10 + n)
    a = rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n)) if rank else np.zeros((m, n))
    work, s, v = a.copy(), np.zeros(n), np.zeros((n, n))
    assert lib.mbs_svd_jacobi(m, n, dp(work), dp(s), dp(v)) == 0
    ref = np.linalg.svd(a, compute_uv=False)
    assert np.all(np.diff(s) <= 0)
    np.testing.assert_allclose(s, ref, rtol=0, atol=1e-13 * max(1.0, ref[0]))
    r = int(np.sum(s > 1e-12 * max(s[0], 1e-300)))
    assert r == rank
    u = work[:, :r]
    np.testing.assert_allclose(u.T @ u, np.eye(r), atol=1e-13)
    np.testing.assert_allclose(v.T @ v, np.eye(n), atol=1e-13)
    np.testing.assert_allclose(a @ v[:, :r], u * s[:r], atol=1e-12 * max(1.0, ref[0]))
    assert lib.mbs_svd_jacobi(2, 3, dp(np.zeros((2, 3))), dp(np.zeros(3)), dp(np.zeros((3, 3)))) == -1


@pytest.mark.parametrize("m,n,k", [(3, 4, 5), (1, 1, 1), (4, 0, 2), (2, 3, 0)])
def test_gemm_matches_numpy(lib, m, n, k):
    rng = np.random.default_rng(m + 7 * n + 49 * k)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    p = np.full((m, n), np.nan)
    lib.mbs_gemm(0, m, n, k, dp(a), dp(b), dp(p))
    np.testing.assert_allclose(p, a @ b, rtol=0, atol=1e-14)
    at = np.ascontiguousarray(a.T)
    p2 = np.full((m, n), np.nan)
    lib.mbs_gemm(1, m, n, k, dp(at), dp(b), dp(p2))
    np.testing.assert_array_equal(p2, p)  # the same sums in the same order
