/* mbs_linalg.c - dense linear algebra for small matrices (see mbs_linalg.h). */
#include "mbs_linalg.h"

#include <math.h>
#include <stddef.h>

/* ------------------------------------------------------------------ LU */

int mbs_lu_factor(int n, double *A, int *piv)
{
    int i, j, k, p;
    double amax = 0.0, thr;

    if (n < 0) return -1;
    if (n == 0) return 0;
    if (A == NULL) return -2;
    if (piv == NULL) return -3;

    for (i = 0; i < n * n; i++) {
        double a = fabs(A[i]);
        if (a > amax) amax = a;
    }
    thr = MBS_LINALG_PIVOT_RTOL * amax;

    for (k = 0; k < n; k++) {
        double best = -1.0;
        p = k;
        for (i = k; i < n; i++) {
            double a = fabs(A[i * n + k]);
            if (a > best) { best = a; p = i; }
        }
        piv[k] = p;
        if (!(best > thr)) return k + 1; /* also catches NaN */
        if (p != k) {
            for (j = 0; j < n; j++) {
                double t = A[k * n + j];
                A[k * n + j] = A[p * n + j];
                A[p * n + j] = t;
            }
        }
        {
            double inv = 1.0 / A[k * n + k];
            for (i = k + 1; i < n; i++) {
                double l = A[i * n + k] * inv;
                A[i * n + k] = l;
                if (l != 0.0) {
                    for (j = k + 1; j < n; j++) A[i * n + j] -= l * A[k * n + j];
                }
            }
        }
    }
    return 0;
}

int mbs_lu_solve(int n, const double *LU, const int *piv, double *b)
{
    int i, j;

    if (n < 0) return -1;
    if (n == 0) return 0;
    if (LU == NULL) return -2;
    if (piv == NULL) return -3;
    if (b == NULL) return -4;
    for (i = 0; i < n; i++)
        if (piv[i] < i || piv[i] >= n) return -3;

    for (i = 0; i < n; i++) {
        int p = piv[i];
        if (p != i) { double t = b[i]; b[i] = b[p]; b[p] = t; }
    }
    for (i = 1; i < n; i++) {
        double s = b[i];
        for (j = 0; j < i; j++) s -= LU[i * n + j] * b[j];
        b[i] = s;
    }
    for (i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (j = i + 1; j < n; j++) s -= LU[i * n + j] * b[j];
        b[i] = s / LU[i * n + i];
    }
    return 0;
}

/* ------------------------------------------------------------ Cholesky */

int mbs_chol_factor(int n, double *A) { return mbs_chol_factor_inv(n, A, NULL); }

int mbs_chol_factor_inv(int n, double *A, double *inv)
{
    int i, j, k;
    double dmax = 0.0, thr, r;

    if (n < 0) return -1;
    if (n == 0) return 0;
    if (A == NULL) return -2;

    for (i = 0; i < n; i++) {
        double a = fabs(A[i * n + i]);
        if (a > dmax) dmax = a;
    }
    thr = MBS_LINALG_PIVOT_RTOL * dmax;

    for (j = 0; j < n; j++) {
        double d = A[j * n + j], ljj;
        for (k = 0; k < j; k++) d -= A[j * n + k] * A[j * n + k];
        if (!(d > thr)) return j + 1; /* also catches NaN */
        ljj = sqrt(d);
        A[j * n + j] = ljj;
        r = 1.0 / ljj;
        if (inv != NULL) inv[j] = r;
        for (i = j + 1; i < n; i++) {
            double s = A[i * n + j];
            for (k = 0; k < j; k++) s -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = s * r;
        }
    }
    return 0;
}

/* Forward substitution L y = b (lower triangle of L, ld = ldl), in place; with inv (the
 * reciprocals of L's diagonal) multiplying instead of dividing, which keeps the divisions off the
 * chain of dependent operations. */
static void lower_solve(int n, const double *L, int ldl, const double *inv, double *b)
{
    int i, j;
    for (i = 0; i < n; i++) {
        double s = b[i];
        for (j = 0; j < i; j++) s -= L[i * ldl + j] * b[j];
        b[i] = inv != NULL ? s * inv[i] : s / L[i * ldl + i];
    }
}

/* Backward substitution L^T x = y, in place (inv as for lower_solve). */
static void lower_t_solve(int n, const double *L, int ldl, const double *inv, double *b)
{
    int i, j;
    for (i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (j = i + 1; j < n; j++) s -= L[j * ldl + i] * b[j];
        b[i] = inv != NULL ? s * inv[i] : s / L[i * ldl + i];
    }
}

int mbs_chol_solve(int n, const double *L, double *b) { return mbs_chol_solve_inv(n, L, NULL, b); }

int mbs_chol_solve_inv(int n, const double *L, const double *inv, double *b)
{
    if (n < 0) return -1;
    if (n == 0) return 0;
    if (L == NULL) return -2;
    if (b == NULL) return -3;
    lower_solve(n, L, n, inv, b);
    lower_t_solve(n, L, n, inv, b);
    return 0;
}

/* ------------------------------------------------------------------ QR */

/* Apply H_j = I - tau_j v_j v_j^T (stored in column j of QR, m x n) to the
 * strided m-vector x[0], x[inc], ..., x[(m-1)*inc]. */
static void apply_reflector(int m, int n, const double *QR, double tau, int j,
                            double *x, int inc)
{
    int i;
    double s;
    if (tau == 0.0) return;
    s = x[j * inc];
    for (i = j + 1; i < m; i++) s += QR[i * n + j] * x[i * inc];
    s *= tau;
    x[j * inc] -= s;
    for (i = j + 1; i < m; i++) x[i * inc] -= s * QR[i * n + j];
}

int mbs_qr_factor(int m, int n, double *A, double *tau, int *perm, int *rank,
                  double rank_tol)
{
    int i, j, c, k;

    if (m < 0) return -1;
    if (n < 0) return -2;
    if (rank == NULL) return -6;
    if (!(rank_tol >= 0.0)) return -7;
    k = m < n ? m : n;
    *rank = 0;
    if (n > 0 && perm == NULL) return -5;
    for (j = 0; j < n; j++) perm[j] = j;
    if (k == 0) return 0;
    if (A == NULL) return -3;
    if (tau == NULL) return -4;

    for (j = 0; j < k; j++) {
        /* column pivoting: largest remaining norm in rows j..m-1 */
        int p = j;
        double best = -1.0, x0, xnorm2 = 0.0;
        for (c = j; c < n; c++) {
            double s = 0.0;
            for (i = j; i < m; i++) s += A[i * n + c] * A[i * n + c];
            if (s > best) { best = s; p = c; }
        }
        if (p != j) {
            int t = perm[j]; perm[j] = perm[p]; perm[p] = t;
            for (i = 0; i < m; i++) {
                double a = A[i * n + j];
                A[i * n + j] = A[i * n + p];
                A[i * n + p] = a;
            }
        }
        /* Householder reflector for A[j:m, j] */
        x0 = A[j * n + j];
        for (i = j + 1; i < m; i++) xnorm2 += A[i * n + j] * A[i * n + j];
        if (xnorm2 == 0.0) {
            tau[j] = 0.0;
        } else {
            double beta = -copysign(sqrt(x0 * x0 + xnorm2), x0);
            double scale = 1.0 / (x0 - beta);
            tau[j] = (beta - x0) / beta;
            for (i = j + 1; i < m; i++) A[i * n + j] *= scale;
            A[j * n + j] = beta;
            /* apply H_j to the remaining columns */
            for (c = j + 1; c < n; c++) apply_reflector(m, n, A, tau[j], j, A + c, n);
        }
    }

    {
        double r0 = fabs(A[0]);
        int r = 0;
        if (r0 > 0.0) {
            double thr = rank_tol * r0;
            while (r < k && fabs(A[r * n + r]) > thr) r++;
        }
        *rank = r;
    }
    return 0;
}

int mbs_qr_apply_q(int m, int n, const double *QR, const double *tau, int k,
                   double *x, int transpose)
{
    int j, kmax;
    if (m < 0) return -1;
    if (n < 0) return -2;
    kmax = m < n ? m : n;
    if (k < 0 || k > kmax) return -5;
    if (k == 0) return 0;
    if (QR == NULL) return -3;
    if (tau == NULL) return -4;
    if (x == NULL) return -6;
    if (transpose) {
        for (j = 0; j < k; j++) apply_reflector(m, n, QR, tau[j], j, x, 1);
    } else {
        for (j = k - 1; j >= 0; j--) apply_reflector(m, n, QR, tau[j], j, x, 1);
    }
    return 0;
}

int mbs_qr_nullspace(int m, int n, const double *QR, const double *tau,
                     int rank, double *J)
{
    int i, j, c, k, nc;
    if (m < 0) return -1;
    if (n < 0) return -2;
    k = m < n ? m : n;
    if (rank < 0 || rank > k) return -5;
    nc = m - rank;
    if (nc == 0) return 0;
    if (J == NULL) return -6;
    if (k > 0 && QR == NULL) return -3;
    if (k > 0 && tau == NULL) return -4;
    /* J = Q [0; I] : start from the unit columns e_rank.., apply Q */
    for (i = 0; i < m; i++)
        for (c = 0; c < nc; c++) J[i * nc + c] = (i == rank + c) ? 1.0 : 0.0;
    for (c = 0; c < nc; c++)
        for (j = k - 1; j >= 0; j--) apply_reflector(m, n, QR, tau[j], j, J + c, nc);
    return 0;
}

int mbs_qr_solve_minnorm(int m, int n, const double *QR, const double *tau,
                         const int *perm, int rank, const double *b, double *x)
{
    return mbs_qr_solve_minnorm_inv(m, n, QR, tau, perm, rank, NULL, b, x);
}

int mbs_qr_solve_minnorm_inv(int m, int n, const double *QR, const double *tau, const int *perm,
                             int rank, const double *rinv, const double *b, double *x)
{
    int i, j, k;
    if (m < 0) return -1;
    if (n < 0) return -2;
    k = m < n ? m : n;
    if (rank < 0 || rank > k) return -6;
    if (m > 0 && x == NULL) return -8;
    for (i = 0; i < m; i++) x[i] = 0.0;
    if (rank == 0) return 0;
    if (QR == NULL) return -3;
    if (tau == NULL) return -4;
    if (perm == NULL) return -5;
    if (b == NULL) return -7;
    for (j = 0; j < n; j++)
        if (perm[j] < 0 || perm[j] >= n) return -5;
    /* R11^T y = (P^T b)[0:rank], R11 = QR[0:rank, 0:rank] upper */
    for (i = 0; i < rank; i++) {
        double s = b[perm[i]], d = QR[i * n + i];
        for (j = 0; j < i; j++) s -= QR[j * n + i] * x[j];
        if (!(d != 0.0)) return i + 1;
        x[i] = rinv != NULL ? s * rinv[i] : s / d;
    }
    for (j = k - 1; j >= 0; j--) apply_reflector(m, n, QR, tau[j], j, x, 1);
    return 0;
}

/* ----------------------------------------------------------------- KKT */

int mbs_solve_kkt(int f, int m, const double *M, const double *C,
                  const double *h, const double *b2, double *ydd,
                  double *lambda, double *work)
{
    int i, j, k, st;
    double *L, *W, *S, *Li, *Si;

    if (f < 0) return -1;
    if (m < 0) return -2;
    if (f == 0) {
        /* no coordinates: S = 0, only solvable without constraints */
        return m > 0 ? 1 : 0;
    }
    if (M == NULL) return -3;
    if (m > 0 && C == NULL) return -4;
    if (h == NULL) return -5;
    if (m > 0 && b2 == NULL) return -6;
    if (ydd == NULL) return -7;
    if (m > 0 && lambda == NULL) return -8;
    if (work == NULL) return -9;

    L = work;
    W = work + f * f;
    S = W + f * m;
    Li = S + m * m; /* reciprocals of the diagonals of L and of S's factor */
    Si = Li + f;

    /* M = L L^T */
    for (i = 0; i < f * f; i++) L[i] = M[i];
    st = mbs_chol_factor_inv(f, L, Li);
    if (st != 0) return st;

    /* z = L^{-1} h  (kept in ydd) */
    for (i = 0; i < f; i++) ydd[i] = h[i];
    lower_solve(f, L, f, Li, ydd);

    if (m > 0) {
        /* W = L^{-1} C^T, solved column by column (column c of W has stride m) */
        for (i = 0; i < f; i++)
            for (k = 0; k < m; k++) W[i * m + k] = C[k * f + i];
        for (k = 0; k < m; k++) {
            for (i = 0; i < f; i++) {
                double s = W[i * m + k];
                for (j = 0; j < i; j++) s -= L[i * f + j] * W[j * m + k];
                W[i * m + k] = s * Li[i];
            }
        }
        /* S = W^T W (lower triangle), rhs = -b2 - W^T z */
        for (i = 0; i < m; i++) {
            double r = -b2[i];
            for (k = 0; k < f; k++) r -= W[k * m + i] * ydd[k];
            lambda[i] = r;
            for (j = 0; j <= i; j++) {
                double s = 0.0;
                for (k = 0; k < f; k++) s += W[k * m + i] * W[k * m + j];
                S[i * m + j] = s;
                S[j * m + i] = s;
            }
        }
        st = mbs_chol_factor_inv(m, S, Si);
        if (st != 0) return f + st;
        mbs_chol_solve_inv(m, S, Si, lambda);
        /* z + W lambda */
        for (i = 0; i < f; i++) {
            double s = ydd[i];
            for (k = 0; k < m; k++) s += W[i * m + k] * lambda[k];
            ydd[i] = s;
        }
    }
    lower_t_solve(f, L, f, Li, ydd);
    return 0;
}

/* ------------------------------------------------------------------ matrix-vector */

void mbs_gemv(int trans, int m, int n, double alpha, const double *A, const double *x,
              double beta, double *y)
{
    int i, j;
    int ny = trans ? n : m;
    for (i = 0; i < ny; i++)
        y[i] = beta == 0.0 ? 0.0 : beta * y[i];
    if (!trans) {
        for (i = 0; i < m; i++) {
            double acc = 0.0;
            for (j = 0; j < n; j++)
                acc += A[i * n + j] * x[j];
            y[i] += alpha * acc;
        }
    } else {
        for (i = 0; i < m; i++) {
            const double ax = alpha * x[i];
            for (j = 0; j < n; j++)
                y[j] += A[i * n + j] * ax;
        }
    }
}

void mbs_sym3_eigenvalues(const double a[6], double ev[3])
{
    /* cyclic Jacobi: rotations G(p, q, theta) zero A_pq in turn; each sweep squares the size of
     * the off-diagonal part, so a few sweeps reach rounding level (Golub & Van Loan, 8.5) */
    double A[3][3], t;
    int sweep, k;
    static const int P[3] = {0, 0, 1}, Q[3] = {1, 2, 2};
    A[0][0] = a[0], A[0][1] = A[1][0] = a[1], A[0][2] = A[2][0] = a[2];
    A[1][1] = a[3], A[1][2] = A[2][1] = a[4], A[2][2] = a[5];
    for (sweep = 0; sweep < 50; sweep++) {
        double off = A[0][1] * A[0][1] + A[0][2] * A[0][2] + A[1][2] * A[1][2];
        double diag = A[0][0] * A[0][0] + A[1][1] * A[1][1] + A[2][2] * A[2][2];
        if (!(off > 1e-36 * diag) || !isfinite(off))
            break;
        for (k = 0; k < 3; k++) {
            const int p = P[k], q = Q[k], r = 3 - p - q;
            double apq = A[p][q], theta, tn, c, s, app, aqq, arp, arq;
            if (apq == 0.0)
                continue;
            theta = (A[q][q] - A[p][p]) / (2.0 * apq);
            tn = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
            c = 1.0 / sqrt(tn * tn + 1.0);
            s = tn * c;
            app = A[p][p] - tn * apq;
            aqq = A[q][q] + tn * apq;
            arp = c * A[r][p] - s * A[r][q];
            arq = s * A[r][p] + c * A[r][q];
            A[p][p] = app, A[q][q] = aqq;
            A[p][q] = A[q][p] = 0.0;
            A[r][p] = A[p][r] = arp;
            A[r][q] = A[q][r] = arq;
        }
    }
    ev[0] = A[0][0], ev[1] = A[1][1], ev[2] = A[2][2];
    if (ev[0] > ev[1]) t = ev[0], ev[0] = ev[1], ev[1] = t;
    if (ev[1] > ev[2]) t = ev[1], ev[1] = ev[2], ev[2] = t;
    if (ev[0] > ev[1]) t = ev[0], ev[0] = ev[1], ev[1] = t;
}

int mbs_svd_jacobi(int m, int n, double *A, double *s, double *V)
{
    const double eps = 2.220446049250313e-16;
    int i, j, p, q, sweep, rotated = 1;
    if (m < n || n < 0)
        return -1;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            V[i * n + j] = i == j ? 1.0 : 0.0;
    for (sweep = 0; sweep < 60 && rotated; sweep++) {
        rotated = 0;
        for (p = 0; p < n - 1; p++)
            for (q = p + 1; q < n; q++) {
                double alpha = 0.0, beta = 0.0, gamma = 0.0, zeta, t, c, sn;
                for (i = 0; i < m; i++) {
                    alpha += A[i * n + p] * A[i * n + p];
                    beta += A[i * n + q] * A[i * n + q];
                    gamma += A[i * n + p] * A[i * n + q];
                }
                if (!(fabs(gamma) > 4.0 * eps * sqrt(alpha * beta)))
                    continue;
                rotated = 1;
                zeta = (beta - alpha) / (2.0 * gamma);
                t = (zeta >= 0.0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
                c = 1.0 / sqrt(1.0 + t * t);
                sn = c * t;
                for (i = 0; i < m; i++) {
                    double ap = A[i * n + p], aq = A[i * n + q];
                    A[i * n + p] = c * ap - sn * aq;
                    A[i * n + q] = sn * ap + c * aq;
                }
                for (i = 0; i < n; i++) {
                    double vp = V[i * n + p], vq = V[i * n + q];
                    V[i * n + p] = c * vp - sn * vq;
                    V[i * n + q] = sn * vp + c * vq;
                }
            }
    }
    for (j = 0; j < n; j++) {
        double nrm = 0.0;
        for (i = 0; i < m; i++)
            nrm += A[i * n + j] * A[i * n + j];
        s[j] = sqrt(nrm);
    }
    /* sort descending (selection sort: n is small), moving the columns of U and V along */
    for (j = 0; j < n; j++) {
        int best = j;
        for (p = j + 1; p < n; p++)
            if (s[p] > s[best])
                best = p;
        if (best != j) {
            double tmp = s[j];
            s[j] = s[best];
            s[best] = tmp;
            for (i = 0; i < m; i++) {
                tmp = A[i * n + j];
                A[i * n + j] = A[i * n + best];
                A[i * n + best] = tmp;
            }
            for (i = 0; i < n; i++) {
                tmp = V[i * n + j];
                V[i * n + j] = V[i * n + best];
                V[i * n + best] = tmp;
            }
        }
    }
    for (j = 0; j < n; j++)
        for (i = 0; i < m; i++)
            A[i * n + j] = s[j] > 0.0 ? A[i * n + j] / s[j] : 0.0;
    return rotated ? 1 : 0;
}

void mbs_gemm(int transa, int m, int n, int k, const double *A, const double *B, double *P)
{
    int i, j, l;
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) {
            double acc = 0.0;
            for (l = 0; l < k; l++)
                acc += (transa ? A[l * m + i] : A[i * k + l]) * B[l * n + j];
            P[i * n + j] = acc;
        }
}
