/*
 * mbs_linalg.h - dense linear algebra for small matrices (FMU runtime).
 *
 * Conventions
 * -----------
 *  - C99, no dynamic allocation: callers pass all output and work arrays.
 *  - Matrices are row-major with leading dimension = number of columns:
 *    element (i, j) of an n_rows x n_cols matrix A is A[i * n_cols + j].
 *  - Indices (piv, perm) are 0-based.
 *  - Every function returns an int status:
 *       0   success
 *      >0   numerical failure at pivot index k-1 (k = returned value):
 *           singular (LU, KKT) or not positive definite (Cholesky, KKT)
 *      <0   bad argument: -i means the i-th argument (1-based) is invalid
 *           (negative size, NULL pointer, out-of-range value).
 *    A NaN pivot is always reported as a failure (>0), never propagated
 *    silently.  After a failure (>0) the output arrays hold partial results
 *    and must not be used.
 *
 * Pivot thresholds
 * ----------------
 *  MBS_LINALG_PIVOT_RTOL = 1e-14 (relative):
 *   - LU: a pivot u_kk is singular when |u_kk| <= 1e-14 * max_ij |A_ij|
 *     (max over the input matrix).
 *   - Cholesky: the k-th pivot d_k = a_kk - sum_{j<k} l_kj^2 (i.e. l_kk^2)
 *     fails when d_k <= 1e-14 * max_i |a_ii| (max over the input diagonal).
 *  These are tests on unpivoted factorizations: an exactly singular matrix
 *  whose non-singular part is itself ill-conditioned can yield a rounding-
 *  level pivot above the threshold and pass (we measured ~1.5% of random
 *  redundant-constraint KKT systems with near-parallel constraint rows).  Use
 *  the rank from mbs_qr_factor for robust rank/redundancy decisions.
 *  NaNs in a factored matrix are always reported; NaNs in right-hand sides
 *  (b, h, b2) simply propagate into the solution.
 */
#ifndef MBS_LINALG_H
#define MBS_LINALG_H

#ifndef MBS_LINALG_PIVOT_RTOL
#define MBS_LINALG_PIVOT_RTOL 1e-14 /* override with -DMBS_LINALG_PIVOT_RTOL=... */
#endif

/* Work array length (doubles) required by mbs_solve_kkt. */
#define MBS_KKT_WORK_SIZE(f, m) ((f) * (f) + (f) * (m) + (m) * (m) + (f) + (m))

#ifdef __cplusplus
extern "C" {
#endif

/*
 * LU factorization with partial (row) pivoting, in place:  P A = L U.
 *   n   : order of A (n >= 0)
 *   A   : n x n, overwritten by L (strictly lower, unit diagonal implied)
 *         and U (upper triangle incl. diagonal)
 *   piv : n ints; at step k rows k and piv[k] were swapped (LAPACK style)
 * Returns k+1 if the pivot at step k is singular (see threshold above).
 */
int mbs_lu_factor(int n, double *A, int *piv);

/*
 * Solve A x = b with the factors from mbs_lu_factor. b (n) is overwritten
 * by x.
 */
int mbs_lu_solve(int n, const double *LU, const int *piv, double *b);

/*
 * Cholesky factorization A = L L^T of a symmetric positive definite n x n
 * matrix, in place.  Only the lower triangle of A is read; on return it
 * holds L.  The strict upper triangle is left untouched.
 * Returns k+1 if the k-th pivot d_k = l_kk^2 is <= threshold (not PD).
 */
int mbs_chol_factor(int n, double *A);

/* Solve A x = b, A = L L^T from mbs_chol_factor (lower triangle of L read).
 * b (n) is overwritten by x. */
int mbs_chol_solve(int n, const double *L, double *b);

/* The same with the reciprocals of L's diagonal: mbs_chol_factor_inv writes inv[k] = 1 / l_kk
 * (n doubles; NULL: not written), and mbs_chol_solve_inv multiplies by them where
 * mbs_chol_solve divides (NULL: divides), which keeps the divisions off the substitutions'
 * chains of dependent operations (about twice as fast for the small systems of the engine). */
int mbs_chol_factor_inv(int n, double *A, double *inv);
int mbs_chol_solve_inv(int n, const double *L, const double *inv, double *b);

/*
 * Householder QR with column pivoting of an m x n matrix, in place:
 *
 *      A P = Q R,   Q = H_0 H_1 ... H_{k-1},  k = min(m, n),
 *      H_j = I - tau_j v_j v_j^T,  v_j = (0,..,0, 1, v_j[j+1..m-1]).
 *
 *   A        : m x n. On return R is in the upper triangle (incl. diagonal)
 *              and v_j[j+1..m-1] is stored below the diagonal of column j.
 *   tau      : min(m, n) doubles.
 *   perm     : n ints; column j of A P is column perm[j] of the input A.
 *              Pivoting picks, at step j, the remaining column with the
 *              largest 2-norm in rows j..m-1, so |R_00| >= |R_11| >= ...
 *   rank     : out, number of leading i with |R_ii| > rank_tol * |R_00|
 *              (0 if R_00 == 0 or k == 0).
 *   rank_tol : relative rank tolerance (>= 0), e.g. 1e-10.
 */
int mbs_qr_factor(int m, int n, double *A, double *tau, int *perm, int *rank,
                  double rank_tol);

/*
 * Apply Q_k = H_0 H_1 ... H_{k-1} (the first k reflectors, 0 <= k <= min(m,n))
 * of a factor from mbs_qr_factor to an m-vector x in place:
 *   transpose == 0:  x <- Q_k x
 *   transpose != 0:  x <- Q_k^T x
 */
int mbs_qr_apply_q(int m, int n, const double *QR, const double *tau, int k,
                   double *x, int transpose);

/*
 * Null-space basis of a constraint Jacobian C (mc x f).
 * Factor A = C^T (m = f rows, n = mc columns; the caller transposes C) with
 * mbs_qr_factor:  C^T P = Q R = [Q1 Q2] [R11 R12; 0 ~0],  Q1: f x rank.
 * This writes
 *      J = Q2 = Q[:, rank:m]      (m x (m - rank), row-major, ld = m - rank)
 * which has orthonormal columns with C J = 0 (range(Q1) = range(C^T) is the
 * row space of C, Q2 is its orthogonal complement).
 *   m, n, QR, tau : as passed to / returned by mbs_qr_factor
 *   rank          : rank from mbs_qr_factor (0 <= rank <= min(m, n))
 *   J             : m * (m - rank) doubles, output
 */
int mbs_qr_nullspace(int m, int n, const double *QR, const double *tau,
                     int rank, double *J);

/*
 * Minimum-norm solution of the (consistent, possibly underdetermined and
 * rank-deficient) system C x = b, given the pivoted QR of A = C^T as above
 * (m = f, n = mc):
 *
 *   C = A^T = P R^T Q^T  =>  C x = b  <=>  R^T Q^T x = P^T b,
 *   (P^T b)_j = b[perm[j]].  With x = Q1 y (x in range(C^T), hence minimum
 *   norm):  R11^T y = (P^T b)[0:rank]   (forward substitution),
 *   x = Q [y; 0].
 *
 * The remaining n - rank equations are assumed to be satisfied (redundant
 * constraints); they are not checked.
 *   b : n doubles (right-hand side, length mc),  x : m doubles (length f).
 * Returns i+1 if R11_ii == 0 (only possible for an inconsistent rank).
 */
int mbs_qr_solve_minnorm(int m, int n, const double *QR, const double *tau,
                         const int *perm, int rank, const double *b, double *x);

/* The same with rinv[i] = 1 / R_ii (i < rank), multiplied where mbs_qr_solve_minnorm divides
 * (NULL: divides), as for mbs_chol_solve_inv. */
int mbs_qr_solve_minnorm_inv(int m, int n, const double *QR, const double *tau, const int *perm,
                             int rank, const double *rinv, const double *b, double *x);

/*
 * Constrained dynamics (KKT) system with f coordinates and m constraints:
 *
 *   [ M  C^T ] [  ydd   ]   [  h  ]
 *   [ C   0  ] [ -lambda] = [ -b2 ]
 *
 * i.e.  M ydd - C^T lambda = h,  C ydd = -b2.  Solved by range-space method:
 *   M = L L^T (Cholesky),  W = L^{-1} C^T (f x m),  z = L^{-1} h,
 *   S = C M^{-1} C^T = W^T W (m x m, Cholesky),
 *   S lambda = -b2 - W^T z,   ydd = L^{-T} (z + W lambda).
 *   M    : f x f symmetric positive definite (lower triangle read)
 *   C    : m x f,   h : f,   b2 : m
 *   ydd  : f (out),  lambda : m (out)
 *   work : MBS_KKT_WORK_SIZE(f, m) = f*f + f*m + m*m + f + m doubles
 * Returns k+1 (1 <= k+1 <= f) if M is not positive definite at pivot k, or
 * f+k+1 if the Schur complement S is not positive definite at pivot k
 * (e.g. redundant constraints / rank-deficient C).
 * m == 0 is allowed (unconstrained: ydd = M^{-1} h).
 */
int mbs_solve_kkt(int f, int m, const double *M, const double *C,
                  const double *h, const double *b2, double *ydd,
                  double *lambda, double *work);

/*
 * Thin singular value decomposition of A (m x n, m >= n) by one-sided Jacobi rotations
 * (Hestenes): A V = U S with V (n x n) orthogonal.  Pairs of columns of A are rotated until they
 * are orthogonal to relative precision (|a_p . a_q| <= 4 eps |a_p| |a_q|), at most 60 sweeps.
 *   A : m x n, overwritten by U (m x n): column j is a_j / s_j, or 0 where s_j == 0
 *   s : n singular values, in descending order
 *   V : n x n, row-major (column j is the right singular vector of s_j)
 * Columns are sorted with their singular values.  Returns 0, or 1 if 60 sweeps did not reach
 * the precision (the result is then still a valid, less accurate factorization), or -1 for m < n.
 */
int mbs_svd_jacobi(int m, int n, double *A, double *s, double *V);

/* y = alpha op(A) x + beta y for the row-major m x n matrix A:
 *   trans == 0: op(A) = A,   x has n entries, y has m;
 *   trans != 0: op(A) = A^T, x has m entries, y has n.
 * With beta == 0 y is set without being read.  Any size may be 0. */
void mbs_gemv(int trans, int m, int n, double alpha, const double *A, const double *x,
              double beta, double *y);

/* P = op(A) B for row-major matrices: op(A) is m x k (transa == 0: A is m x k; transa != 0: A is
 * k x m and op(A) = A^T), B is k x n, P is m x n (not aliased with A or B).  Each entry is summed
 * in ascending order of the inner index.  Any size may be 0. */
void mbs_gemm(int transa, int m, int n, int k, const double *A, const double *B, double *P);

/* Eigenvalues of the symmetric 3 x 3 matrix A given by its upper triangle
 * a = (A11, A12, A13, A22, A23, A33), in ascending order (cyclic Jacobi rotations, accurate to
 * rounding also for repeated eigenvalues). */
void mbs_sym3_eigenvalues(const double a[6], double ev[3]);

#ifdef __cplusplus
}
#endif

#endif /* MBS_LINALG_H */
