/*
 * mbs_formulation.c -- the constrained formulations and the consistent initialization in C.
 * The mathematics is documented in mbs_formulation.h.
 */
#include "mbs_formulation.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mbs_linalg.h"

static void eval_tp(mbs_form *F, double t)
{
    if (F->ntp > 0 && F->time_parameters != NULL)
        F->time_parameters(t, F->prm, F->tp);
}

static double max_abs(int n, const double *a)
{
    double r = 0.0;
    int i;
    for (i = 0; i < n; i++) {
        double v = fabs(a[i]);
        if (!(v <= r)) /* NaN propagates */
            r = v;
    }
    return r;
}

/* c (mh), C (m x f), b' (m) at (t, y) in F->split (from its c on, in the layout of
 * mbs_constraints: the first mh rows of C are holonomic, the others nonholonomic), with the
 * intermediates that mbs_constrained_velocities reads after them: kept from the last evaluation
 * at the same t and y, else evaluated.  An integrator evaluates the right-hand side at the point
 * it has just projected, and the outputs want c, C and the multipliers at the point just
 * returned: each pays for the sin and cos of its configuration once.  Returns c. */
static double *positions_at(mbs_form *F, double t, const double *y)
{
    const size_t n = sizeof(double) * (size_t)F->f;
    if (!(F->split_valid && F->split_t == t && memcmp(F->split_y, y, n) == 0)) {
        F->positions(t, y, y, F->prm, F->u, F->tp, F->split);
        memcpy(F->split_y, y, n);
        F->split_t = t;
        F->split_valid = 1;
    }
    return F->split + F->f * F->f + F->f;
}

/* M, q - k, c, C, b', b'' at (t, y, yd) in F->split (the layout of mbs_constrained); returns it */
static double *constrained_at(mbs_form *F, double t, const double *y, const double *yd)
{
    positions_at(F, t, y);
    F->velocities(t, y, yd, F->prm, F->u, F->tp, F->split);
    return F->split;
}

void mbs_form_forget(mbs_form *F)
{
    F->split_valid = 0;
}

/* Pivoted QR of A = B^T where B (rows x cols, row-major) is the selection of the columns
 * idx[0..nc-1] of a (rows x ld) matrix (idx == NULL: all ld columns).  A is nc x rows. */
static int qr_of_transpose(int rows, int ld, const double *B, const int *idx, int nc, double *A,
                           double *tau, int *perm, int *rank, double rank_tol)
{
    int i, j;
    for (i = 0; i < nc; i++) {
        int col = idx ? idx[i] : i;
        for (j = 0; j < rows; j++)
            A[i * rows + j] = B[j * ld + col];
    }
    return mbs_qr_factor(nc, rows, A, tau, perm, rank, rank_tol);
}

/* Bump allocation from the caller's work arrays. */
static double *take(double **w, int n)
{
    double *r = *w;
    *w += n;
    return r;
}

static int *itake(int **w, int n)
{
    int *r = *w;
    *w += n;
    return r;
}

/* Coordinates named in a message's place: more would crowd out what the message says in the
 * fixed-size message buffer (the 22 of an N = 10 four-bar cut "... (a singular position" off). */
#define WHERE_MAX_COORDINATES 6

/* "at t=0.1 (phi=1, s=0.2)" into buf, for messages (the first WHERE_MAX_COORDINATES, then "...") */
static const char *where(const mbs_form *F, double t, const double *y, char *buf, size_t n)
{
    size_t len;
    int j;
    snprintf(buf, n, "at t=%.9g", t);
    if (F->names == NULL)
        return buf;
    for (j = 0; j < F->f && j < WHERE_MAX_COORDINATES; j++) {
        len = strlen(buf);
        if (len + 2 >= n)
            break;
        snprintf(buf + len, n - len, "%s%s=%.6g", j == 0 ? " (" : ", ", F->names[j], y[j]);
    }
    len = strlen(buf);
    if (len + 1 < n)
        snprintf(buf + len, n - len, "%s)", F->f > WHERE_MAX_COORDINATES ? ", ..." : "");
    return buf;
}

/* ---------------------------------------------------------------- QR and SVD of C^T */

/* A rank-revealing decomposition of C^T (f x m) for the null-space basis and for minimum-norm
 * solutions of C x = b (reference/formulations/null_space.py, NullSpaceDecomposition). */
typedef struct {
    int svd, f, m, rank;
    double *A;   /* QR: the factor of C^T; SVD: U (f x m) */
    double *tau; /* QR: reflectors (m + 1) */
    double *s;   /* SVD: singular values (m) */
    double *V;   /* SVD: right singular vectors (m x m) */
    double *Q;   /* SVD: QR of U1, for the orthogonal complement (f x m) */
    double *rinv; /* QR: 1 / R_jj (j < rank) */
    int *perm;   /* f ints */
} decomp;

static void decomp_alloc(decomp *D, int f, int m, int svd, double **w, int **iw)
{
    D->svd = svd;
    D->f = f;
    D->m = m;
    D->rank = 0;
    D->A = take(w, f * m);
    D->tau = take(w, m + f + 1);
    D->s = take(w, m + 1);
    D->V = take(w, m * m);
    D->Q = take(w, f * m);
    D->rinv = take(w, m + 1);
    D->perm = itake(iw, f + m);
}

/* Factor C^T; with J != NULL also the null-space basis J (f x (f - rank)).  0 on success. */
static int decomp_factor(decomp *D, const mbs_form *F, const double *C, double *J)
{
    const int f = D->f, m = D->m;
    int i, j, r2;
    if (!D->svd) {
        if (qr_of_transpose(m, f, C, NULL, f, D->A, D->tau, D->perm, &D->rank, F->rank_tol) != 0)
            return 1;
        for (j = 0; j < D->rank; j++)
            D->rinv[j] = 1.0 / D->A[j * m + j];
        if (J != NULL)
            mbs_qr_nullspace(f, m, D->A, D->tau, D->rank, J);
        return 0;
    }
    for (i = 0; i < f; i++)
        for (j = 0; j < m; j++)
            D->A[i * m + j] = C[j * f + i];
    if (mbs_svd_jacobi(f, m, D->A, D->s, D->V) < 0)
        return 1;
    D->rank = 0;
    if (m > 0 && D->s[0] > 0.0)
        for (j = 0; j < m && D->s[j] > F->rank_tol * D->s[0]; j++)
            D->rank++;
    if (J == NULL)
        return 0;
    if (D->rank == 0) {
        for (i = 0; i < f; i++)
            for (j = 0; j < f; j++)
                J[i * f + j] = i == j ? 1.0 : 0.0;
        return 0;
    }
    /* J = U2: the orthogonal complement of U1, from the Householder QR of U1 */
    for (i = 0; i < f; i++)
        for (j = 0; j < D->rank; j++)
            D->Q[i * D->rank + j] = D->A[i * m + j];
    if (mbs_qr_factor(f, D->rank, D->Q, D->tau, D->perm, &r2, 0.0) != 0)
        return 1;
    mbs_qr_nullspace(f, D->rank, D->Q, D->tau, D->rank, J);
    return 0;
}

/* x (f) = minimum-norm solution of C x = b (m) */
static void decomp_solve(const decomp *D, const double *b, double *x)
{
    const int f = D->f, m = D->m;
    int i, j, l;
    if (!D->svd) {
        mbs_qr_solve_minnorm_inv(f, m, D->A, D->tau, D->perm, D->rank, D->rinv, b, x);
        return;
    }
    for (i = 0; i < f; i++)
        x[i] = 0.0;
    for (j = 0; j < D->rank; j++) {
        double z = 0.0;
        for (l = 0; l < m; l++)
            z += D->V[l * m + j] * b[l];
        z /= D->s[j];
        for (i = 0; i < f; i++)
            x[i] += D->A[i * m + j] * z;
    }
}

/* ydd = J (J^T M J)^-1 J^T (h - M gamma) + gamma, J f x k (eq. 31 and eq. 16).  w: 2 f*f + 3 f. */
static int reduced_accelerations(int f, int k, const double *M, const double *h, const double *J,
                                 const double *gamma, double *ydd, double *w)
{
    double *MJ = w, *Mi = MJ + f * f, *r = Mi + f * f, *s = r + f, *inv = s + f;
    int rc;
    memcpy(r, h, sizeof(double) * (size_t)f);
    mbs_gemv(0, f, f, -1.0, M, gamma, 1.0, r);
    mbs_gemm(0, f, k, f, M, J, MJ);  /* M J */
    mbs_gemv(1, f, k, 1.0, J, r, 0.0, s);
    mbs_gemm(1, k, k, f, J, MJ, Mi); /* J^T M J */
    rc = mbs_chol_factor_inv(k, Mi, inv);
    if (rc != 0)
        return rc;
    mbs_chol_solve_inv(k, Mi, inv, s);
    memcpy(ydd, gamma, sizeof(double) * (size_t)f);
    mbs_gemv(0, f, k, 1.0, J, s, 1.0, ydd);
    return 0;
}

/* ---------------------------------------------------------------- right-hand sides */

static int rhs_minimal(mbs_form *F, double t, const double *x, double *xdot)
{
    int f = F->f, i, rc;
    double *M = F->work, *h = F->work + f * f;
    F->dynamics(t, x, x + f, F->prm, F->u, F->tp, M);
    rc = mbs_chol_factor(f, M);
    if (rc != 0) {
        snprintf(F->message, sizeof F->message,
                 "the mass matrix is not positive definite (Cholesky pivot %d) at t=%.9g", rc, t);
        return rc;
    }
    mbs_chol_solve(f, M, h);
    for (i = 0; i < f; i++) {
        xdot[i] = x[f + i];
        xdot[f + i] = h[i];
    }
    return 0;
}

static int rhs_optimal(mbs_form *F, double t, const double *x, double *xdot)
{
    const int f = F->f, m = F->m, mh = F->mh;
    const double *y = x, *v = x + f;
    double *w = F->work;
    int *iw = F->iwork;
    /* M, h, c, C, b', b'' at (y, y'_projected); c, C, b' (at y) first, in their place */
    double *cs = positions_at(F, t, y), *cp = F->split;
    double *J = take(&w, f * f), *theta = take(&w, f), *r = take(&w, f), *s = take(&w, f);
    double *gamma = take(&w, f), *red = take(&w, 2 * f * f + 3 * f);
    const double *C = cs + mh, *b1 = cs + mh + m * f;
    decomp D;
    int k, i, rc;
    decomp_alloc(&D, f, m, F->kind == MBS_FORM_SVD, &w, &iw);
    if (decomp_factor(&D, F, C, J) != 0) {
        snprintf(F->message, sizeof F->message, "the decomposition of the constraint Jacobian failed "
                 "at t=%.9g", t);
        return 1;
    }
    F->rank = D.rank;
    k = f - D.rank;
    decomp_solve(&D, b1, theta);
    for (i = 0; i < f; i++) {
        theta[i] = -theta[i];
        r[i] = v[i] - theta[i];
    }
    /* eq. 30: y' = J J^T (y' - theta) + theta, into xdot[0..f) */
    mbs_gemv(1, f, k, 1.0, J, r, 0.0, s);
    memcpy(xdot, theta, sizeof(double) * (size_t)f);
    mbs_gemv(0, f, k, 1.0, J, s, 1.0, xdot);
    F->velocities(t, y, xdot, F->prm, F->u, F->tp, cp);
    decomp_solve(&D, b1 + m, gamma); /* b'' follows b' */
    for (i = 0; i < f; i++)
        gamma[i] = -gamma[i];
    rc = reduced_accelerations(f, k, cp, cp + f * f, J, gamma, xdot + f, red);
    if (rc != 0) {
        snprintf(F->message, sizeof F->message,
                 "the reduced mass matrix J^T M J is not positive definite (pivot %d) at t=%.9g", rc, t);
        return rc;
    }
    return 0;
}

static int rhs_baumgarte(mbs_form *F, double t, const double *x, double *xdot)
{
    const int f = F->f, m = F->m, mh = F->mh;
    const double *y = x, *v = x + f;
    const double *cp = constrained_at(F, t, y, v);
    double *b2m = F->work, *lambda = b2m + m, *kw = lambda + m;
    const double *M = cp, *h = cp + f * f, *c = h + f, *C = c + mh, *b1 = C + m * f, *b2 = b1 + m;
    int i, l, rc;
    char at[160];
    for (i = 0; i < m; i++) { /* nonholonomic rows (i >= mh): the velocity term only */
        double cv = b1[i];
        for (l = 0; l < f; l++)
            cv += C[i * f + l] * v[l];
        b2m[i] = b2[i] + 2.0 * F->alpha * cv + (i < mh ? F->beta * F->beta * c[i] : 0.0);
    }
    rc = mbs_solve_kkt(f, m, M, C, h, b2m, xdot + f, lambda, kw);
    if (rc != 0) {
        if (rc <= f)
            snprintf(F->message, sizeof F->message,
                     "the mass matrix is not positive definite (pivot %d) %s", rc,
                     where(F, t, y, at, sizeof at));
        else
            snprintf(F->message, sizeof F->message,
                     "the matrix [[M, C^T], [C, 0]] is singular %s: a singular configuration or "
                     "redundant constraints (use formulation 'qr' or 'svd' for redundant constraints)",
                     where(F, t, y, at, sizeof at));
        return rc;
    }
    for (i = 0; i < f; i++)
        xdot[i] = v[i];
    return 0;
}

/* ---- coordinate partitioning */

/* New partition from the column-pivoted QR of C (m x f): the pivot columns become dependent. */
static int partition_choose(mbs_form *F, double t, const double *y, const double *C, double *A,
                            double *tau, int *perm)
{
    const int f = F->f, m = F->m;
    int rank, j;
    char at[160];
    memcpy(A, C, sizeof(double) * (size_t)(m * f));
    mbs_qr_factor(m, f, A, tau, perm, &rank, 0.0);
    if (!(fabs(A[(m - 1) * f + m - 1]) > 1e-10 * fabs(A[0]))) {
        snprintf(F->message, sizeof F->message,
                 "the constraint Jacobian has lost rank %s: no choice of independent coordinates "
                 "exists there (a singular configuration, or redundant constraints: use 'qr' or "
                 "'svd')", where(F, t, y, at, sizeof at));
        return 1;
    }
    for (j = 0; j < f; j++)
        F->part[2 + j] = 0;
    for (j = 0; j < m; j++)
        F->part[2 + perm[j]] = 1;
    F->part[0] = 1;
    F->part[1]++;
    F->switch_t = t;
    return 0;
}

/* C_d (m x m) and C_i (m x (f - m)) of the current partition; chooses a new one at the first
 * call and when cond_2(C_d) > cond_max.  ind/dep receive the column indices (ascending).
 * w: 2 m*f + m*m + f + 2 m + 2 doubles; iw: f ints. */
static int partition_split(mbs_form *F, double t, const double *y, const double *C, double *Cd,
                           double *Ci, int *ind, int *dep, double *w, int *iw)
{
    const int f = F->f, m = F->m;
    int pass, i, j, ni, nd;
    for (pass = 0; pass < 2; pass++) {
        double *S = w, *s = S + m * m, *V = s + m + 1;
        if (!F->part[0] && partition_choose(F, t, y, C, w, w + m * f, iw) != 0)
            return 1;
        ni = nd = 0;
        for (j = 0; j < f; j++) {
            if (F->part[2 + j])
                dep[nd++] = j;
            else
                ind[ni++] = j;
        }
        for (i = 0; i < m; i++) {
            for (j = 0; j < m; j++)
                Cd[i * m + j] = C[i * f + dep[j]];
            for (j = 0; j < f - m; j++)
                Ci[i * (f - m) + j] = C[i * f + ind[j]];
        }
        if (pass == 1)
            break;
        memcpy(S, Cd, sizeof(double) * (size_t)(m * m));
        mbs_svd_jacobi(m, m, S, s, V);
        if (s[0] > 0.0 && s[m - 1] * F->cond_max >= s[0])
            break;
        F->part[0] = 0; /* ill-conditioned: choose again at this configuration */
    }
    return 0;
}

static int rhs_partition(mbs_form *F, double t, const double *x, double *xdot)
{
    const int f = F->f, m = F->m, k = f - m;
    const double *y = x;
    double *w = F->work;
    int *iw = F->iwork;
    const double *cs = positions_at(F, t, y), *cp;
    double *Cd = take(&w, m * m), *Ci = take(&w, m * f), *J = take(&w, f * f);
    double *gamma = take(&w, f), *z = take(&w, f + m), *red = take(&w, 2 * f * f + 3 * f);
    double *scratch = take(&w, 2 * m * f + m * m + f + 2 * m + 2);
    int *ind = itake(&iw, f), *dep = itake(&iw, m), *piv = itake(&iw, m), *iscr = itake(&iw, f);
    double *v = xdot;
    const double *C = cs + m, *b1 = cs + m + m * f;
    int i, j, rc;
    char at[160];
    if (partition_split(F, t, y, C, Cd, Ci, ind, dep, scratch, iscr) != 0)
        return 1;
    if (mbs_lu_factor(m, Cd, piv) != 0) {
        snprintf(F->message, sizeof F->message, "C_d is singular %s", where(F, t, y, at, sizeof at));
        return 1;
    }
    /* eq. 14: y'_d = -C_d^-1 (C_i y'_i + b') */
    memcpy(v, x + f, sizeof(double) * (size_t)f);
    for (i = 0; i < m; i++) {
        double acc = b1[i];
        for (j = 0; j < k; j++)
            acc += Ci[i * k + j] * v[ind[j]];
        z[i] = -acc;
    }
    mbs_lu_solve(m, Cd, piv, z);
    for (i = 0; i < m; i++)
        v[dep[i]] = z[i];
    cp = constrained_at(F, t, y, v);
    /* eq. 12: J_i = [I; -C_d^-1 C_i] in the original coordinate order */
    for (i = 0; i < f * k; i++)
        J[i] = 0.0;
    for (j = 0; j < k; j++) {
        J[ind[j] * k + j] = 1.0;
        for (i = 0; i < m; i++)
            z[i] = -Ci[i * k + j];
        mbs_lu_solve(m, Cd, piv, z);
        for (i = 0; i < m; i++)
            J[dep[i] * k + j] = z[i];
    }
    /* eq. 15: gamma = [0; -C_d^-1 b''] */
    for (i = 0; i < m; i++)
        z[i] = -cp[f * f + f + m + m * f + m + i];
    mbs_lu_solve(m, Cd, piv, z);
    for (i = 0; i < f; i++)
        gamma[i] = 0.0;
    for (i = 0; i < m; i++)
        gamma[dep[i]] = z[i];
    rc = reduced_accelerations(f, k, cp, cp + f * f, J, gamma, xdot + f, red); /* eqs. 16, 18 */
    if (rc != 0) {
        snprintf(F->message, sizeof F->message,
                 "the reduced mass matrix J_i^T M J_i is not positive definite (pivot %d) %s", rc,
                 where(F, t, y, at, sizeof at));
        return rc;
    }
    return 0;
}

int mbs_form_rhs(void *ctx, double t, const double *x, double *xdot)
{
    mbs_form *F = (mbs_form *)ctx;
    eval_tp(F, t);
    if (F->m == 0)
        return rhs_minimal(F, t, x, xdot);
    switch (F->kind) {
    case MBS_FORM_QR:
    case MBS_FORM_SVD:
        return rhs_optimal(F, t, x, xdot);
    case MBS_FORM_PARTITION:
        return rhs_partition(F, t, x, xdot);
    case MBS_FORM_BAUMGARTE:
    case MBS_FORM_DAE:
    case MBS_FORM_PROJECTION:
        return rhs_baumgarte(F, t, x, xdot);
    default:
        return rhs_minimal(F, t, x, xdot);
    }
}

/* ---------------------------------------------------------------- projections */

int mbs_form_projects(int kind)
{
    return kind == MBS_FORM_QR || kind == MBS_FORM_SVD || kind == MBS_FORM_PROJECTION ||
           kind == MBS_FORM_PARTITION;
}

/* |R_(r-1)(r-1)| / scale of the column-pivoted QR factor A (f x m) of C^T with rank r, the scale
 * (into *scale) being the larger of |R_00| and the pivot at the start; 1 (scale 0) without a pivot. */
static double pivot_ratio(const mbs_form *F, const double *A, int m, int rank, double *scale)
{
    *scale = 0.0;
    if (rank == 0 || !(fabs(A[0]) > 0.0))
        return 1.0;
    *scale = fabs(A[0]) > F->pivot_scale ? fabs(A[0]) : F->pivot_scale;
    return fabs(A[(rank - 1) * m + rank - 1]) / *scale;
}

/* The column-pivoted QR of C^T (m rows of C, f columns) into A (f x m), tau, perm: the regularity
 * ratio |R_(r-1)(r-1)| / scale (r = rank by rank_tol, scale the larger of |R_00| and the pivot at
 * the start; 1 without a pivot), with the rank and the scale in *rank and *scale
 * (OptimalPartitioning._pivots_of). */
static double regularity(const mbs_form *F, const double *C, double *A, double *tau, int *perm, int *rank,
                         double *scale)
{
    const int f = F->f, m = F->m;
    *rank = 0;
    *scale = 0.0;
    if (m == 0 || qr_of_transpose(m, f, C, NULL, f, A, tau, perm, rank, F->rank_tol) != 0) {
        *rank = 0;
        return 1.0;
    }
    return pivot_ratio(F, A, m, *rank, scale);
}

double mbs_form_weak(void *ctx, double t, const double *x, double *d)
{
    mbs_form *F = (mbs_form *)ctx;
    const int f = F->f, m = F->m, kmax = f < m ? f : m;
    double *w = F->work, *A = take(&w, f * m), *tau = take(&w, m + f + 1), *z = take(&w, f);
    double scale, rho;
    int rank, k, h, i, any = 0;
    if (m == 0)
        return 1.0;
    eval_tp(F, t);
    rho = regularity(F, positions_at(F, t, x) + F->mh, A, tau, F->iwork, &rank, &scale);
    for (k = 0; k < rank; k++)
        any |= fabs(A[k * m + k]) < F->weak_pivot * scale;
    if (!any)
        return rho;
    for (h = 0; h < 2; h++) { /* positions, then velocities: d -= Q_w Q_w^T d */
        double *dh = d + h * f;
        memcpy(z, dh, sizeof(double) * (size_t)f);
        mbs_qr_apply_q(f, m, A, tau, kmax, z, 1);
        for (i = 0; i < f; i++)
            if (!(i < rank && fabs(A[i * m + i]) < F->weak_pivot * scale))
                z[i] = 0.0;
        mbs_qr_apply_q(f, m, A, tau, kmax, z, 0);
        for (i = 0; i < f; i++)
            dh[i] -= z[i];
    }
    return rho;
}

/* QR and SVD: Gauss-Newton with minimum-norm steps on the holonomic rows, then eq. 30 (all rows) */
static int project_optimal(mbs_form *F, double t, double *x)
{
    const int f = F->f, m = F->m, mh = F->mh;
    double *y = x, *v = x + f, *w = F->work;
    int *iw = F->iwork;
    const double *cs = F->split + f * f + f, *c = cs, *C = cs + mh, *b1 = cs + mh + m * f;
    double *d = take(&w, f), *r = take(&w, m);
    decomp D, Dh; /* of C, and of its first mh (holonomic) rows */
    int it, i;
    double res;
    decomp_alloc(&D, f, m, F->kind == MBS_FORM_SVD, &w, &iw);
    decomp_alloc(&Dh, f, mh, F->kind == MBS_FORM_SVD, &w, &iw);
    for (it = 0;; it++) {
        positions_at(F, t, y);
        res = max_abs(mh, c);
        if (res <= F->newton_tol || it == F->newton_max || !isfinite(res))
            break;
        if (decomp_factor(&Dh, F, C, NULL) != 0)
            break;
        decomp_solve(&Dh, c, d);
        for (i = 0; i < f; i++)
            y[i] -= d[i];
    }
    if (!(res <= F->newton_tol)) {
        snprintf(F->message, sizeof F->message,
                 "the position projection did not converge at t=%.9g (residual %.3g after %d "
                 "iterations); the constraints may not be satisfiable here", t, res, it);
        return 1;
    }
    if (decomp_factor(&D, F, C, NULL) != 0) {
        snprintf(F->message, sizeof F->message, "the decomposition of the constraint Jacobian failed "
                 "at t=%.9g", t);
        return 1;
    }
    if (mh > 0) { /* near a rank drop one more step (OptimalPartitioning.project) */
        int rank;
        double scale, rho;
        if (D.svd) /* the regularity is that of the pivoted QR; D's own factors are the SVD's */
            rho = regularity(F, C, D.Q, D.tau, D.perm, &rank, &scale); /* unused after an SVD */
        else /* D holds that QR already (the same factorization regularity computes) */
            rho = pivot_ratio(F, D.A, m, D.rank, &scale);
        if (rho < F->weak_pivot && decomp_factor(&Dh, F, C, NULL) == 0) {
            decomp_solve(&Dh, c, d);
            for (i = 0; i < f; i++)
                y[i] -= d[i];
            positions_at(F, t, y);
            if (decomp_factor(&D, F, C, NULL) != 0) {
                snprintf(F->message, sizeof F->message, "the decomposition of the constraint "
                         "Jacobian failed at t=%.9g", t);
                return 1;
            }
        }
    }
    F->rank = D.rank;
    /* y' <- y' - C^+ (C y' + b')  (eq. 30 in the form whose rounding scales with the residual) */
    memcpy(r, b1, sizeof(double) * (size_t)m);
    mbs_gemv(0, m, f, 1.0, C, v, 1.0, r);
    decomp_solve(&D, r, d);
    for (i = 0; i < f; i++)
        v[i] -= d[i];
    return 0;
}

/* PStab's weighting at y: W = M^-1 C^T (seed 004 eq. 3.66, weighting 'mass', M = L L^T factored in
 * place in F->split) or C^T (eq. 3.69, 'identity'), f x m; c, C, b' at y in F->split.  col and
 * Linv: f doubles of scratch. */
static int pstab_weights(mbs_form *F, double t, double *y, double *v, double *W, double *col, double *Linv)
{
    const int f = F->f, m = F->m;
    double *M = F->split;
    const double *C = M + f * f + f + F->mh;
    int i, j, rc;
    char at[160];
    if (F->weighting == 0) {
        constrained_at(F, t, y, v);
        rc = mbs_chol_factor_inv(f, M, Linv); /* M = L L^T in place */
        if (rc != 0) {
            snprintf(F->message, sizeof F->message, "the mass matrix is not positive definite "
                     "(pivot %d) %s", rc, where(F, t, y, at, sizeof at));
            return rc;
        }
    } else {
        positions_at(F, t, y);
    }
    for (j = 0; j < m; j++) {
        for (i = 0; i < f; i++)
            col[i] = C[j * f + i];
        if (F->weighting == 0)
            mbs_chol_solve_inv(f, M, Linv, col);
        for (i = 0; i < f; i++)
            W[i * m + j] = col[i];
    }
    return 0;
}

/* PStab (seed 004 eqs. 3.66, 3.68, 3.69) */
static int project_pstab(mbs_form *F, double t, double *x)
{
    const int f = F->f, m = F->m, mh = F->mh;
    double *y = x, *v = x + f, *w = F->work;
    double *W = take(&w, f * m), *S = take(&w, m * m), *z = take(&w, m), *col = take(&w, f);
    double *Linv = take(&w, f), *Sinv = take(&w, m); /* reciprocals of the factors' diagonals */
    double *Sh = S, *Shinv = Sinv; /* C_h W_h of the holonomic rows: S itself if all are */
    double *M = F->split; /* M, then c, C, b' at y, and after each correction at the new y */
    const double *c = M + f * f + f, *C = c + mh, *b1 = C + m * f;
    int i, j, it, rc;
    char at[160];
    rc = pstab_weights(F, t, y, v, W, col, Linv);
    if (rc != 0)
        return rc;
    mbs_gemm(0, m, m, f, C, W, S); /* C M^-1 C^T or C C^T */
    F->nproj++;
    if (mh < m) { /* nonholonomic rows: the positions are corrected with the leading block */
        Sh = take(&w, mh * mh);
        Shinv = take(&w, mh);
        for (i = 0; i < mh; i++)
            for (j = 0; j < mh; j++)
                Sh[i * mh + j] = S[i * m + j];
    }
    rc = mbs_chol_factor_inv(m, S, Sinv);
    if (rc == 0 && Sh != S)
        rc = mbs_chol_factor_inv(mh, Sh, Shinv);
    if (rc != 0) {
        snprintf(F->message, sizeof F->message,
                 "projection impossible %s: C M^-1 C^T is singular (redundant constraints or a "
                 "singular configuration; use formulation 'qr' or 'svd' for redundant constraints)",
                 where(F, t, y, at, sizeof at));
        return rc;
    }
    /* y <- y - W_h (C_h W_h)^-1 c: z is zero in the nonholonomic rows (seed 004 eq. 3.75) */
    for (it = 0; it < F->iterations && !(max_abs(mh, c) <= F->newton_tol); it++) {
        memcpy(z, c, sizeof(double) * (size_t)mh);
        mbs_chol_solve_inv(mh, Sh, Shinv, z);
        for (i = mh; i < m; i++)
            z[i] = 0.0;
        mbs_gemv(0, f, m, -1.0, W, z, 1.0, y);
        positions_at(F, t, y);
    }
    memcpy(z, b1, sizeof(double) * (size_t)m);
    mbs_gemv(0, m, f, 1.0, C, v, 1.0, z);
    mbs_chol_solve_inv(m, S, Sinv, z);
    mbs_gemv(0, f, m, -1.0, W, z, 1.0, v);
    return 0;
}

/* coordinate partitioning: Newton for y_d on c = 0, then y'_d from eq. 13 */
static int project_partition(mbs_form *F, double t, double *x)
{
    const int f = F->f, m = F->m, k = f - m;
    double *y = x, *v = x + f, *w = F->work;
    int *iw = F->iwork;
    double *Cd = take(&w, m * m), *Ci = take(&w, m * f);
    double *z = take(&w, m), *scratch = take(&w, 2 * m * f + m * m + f + 2 * m + 2);
    int *ind = itake(&iw, f), *dep = itake(&iw, m), *piv = itake(&iw, m), *iscr = itake(&iw, f);
    const double *c = positions_at(F, t, y), *C = c + m, *b1 = c + m + m * f;
    int it, i, j, converged = 0;
    double res = 0.0;
    char at[160];
    F->nproj++;
    if (partition_split(F, t, y, C, Cd, Ci, ind, dep, scratch, iscr) != 0)
        return 1;
    for (it = 0; it <= F->newton_max; it++) {
        res = max_abs(m, c);
        if (res <= F->newton_tol) {
            converged = 1;
            break;
        }
        if (it == F->newton_max || !isfinite(res))
            break;
        for (i = 0; i < m; i++)
            for (j = 0; j < m; j++)
                Cd[i * m + j] = C[i * f + dep[j]];
        if (mbs_lu_factor(m, Cd, piv) != 0)
            break;
        memcpy(z, c, sizeof(double) * (size_t)m);
        mbs_lu_solve(m, Cd, piv, z);
        for (i = 0; i < m; i++)
            y[dep[i]] -= z[i];
        positions_at(F, t, y);
    }
    if (!converged) {
        snprintf(F->message, sizeof F->message,
                 "Newton's method for the dependent coordinates did not converge %s (residual %.3g)",
                 where(F, t, y, at, sizeof at), res);
        return 1;
    }
    for (i = 0; i < m; i++) {
        double acc = b1[i];
        for (j = 0; j < m; j++)
            Cd[i * m + j] = C[i * f + dep[j]];
        for (j = 0; j < k; j++)
            acc += C[i * f + ind[j]] * v[ind[j]];
        z[i] = -acc;
    }
    if (mbs_lu_factor(m, Cd, piv) != 0) {
        snprintf(F->message, sizeof F->message, "C_d is singular %s", where(F, t, y, at, sizeof at));
        return 1;
    }
    mbs_lu_solve(m, Cd, piv, z);
    for (i = 0; i < m; i++)
        v[dep[i]] = z[i];
    return 0;
}

int mbs_form_project(void *ctx, double t, double *x)
{
    mbs_form *F = (mbs_form *)ctx;
    if (F->m == 0 || !mbs_form_projects(F->kind))
        return 0;
    eval_tp(F, t);
    switch (F->kind) {
    case MBS_FORM_PROJECTION:
        return project_pstab(F, t, x);
    case MBS_FORM_PARTITION:
        return project_partition(F, t, x);
    default:
        F->nproj++;
        return project_optimal(F, t, x);
    }
}

int mbs_form_project_state(mbs_form *F, double t, double *x)
{
    if (F->m == 0)
        return 0;
    if (mbs_form_projects(F->kind))
        return mbs_form_project(F, t, x);
    eval_tp(F, t);
    F->nproj++;
    return project_optimal(F, t, x);
}

/* max |C_i y' + b'_i| over the rows i = from..m-1 of c, C, b' at cs (positions_at's layout) */
static double velocity_residual(const mbs_form *F, const double *cs, const double *v, int from)
{
    const int f = F->f, m = F->m;
    const double *C = cs + F->mh, *b1 = C + m * f;
    double r = 0.0;
    int i, l;
    for (i = from; i < m; i++) {
        double a = b1[i];
        for (l = 0; l < f; l++)
            a += C[i * f + l] * v[l];
        a = fabs(a);
        if (!(a <= r)) /* NaN propagates */
            r = a;
    }
    return r;
}

double mbs_form_residual(mbs_form *F, double t, const double *x)
{
    const double *c;
    double r, a;
    if (F->m == 0)
        return 0.0;
    eval_tp(F, t);
    c = positions_at(F, t, x);
    r = max_abs(F->mh, c);
    a = velocity_residual(F, c, x + F->f, F->mh); /* A y' + a of the nonholonomic rows */
    return a <= r ? r : a;
}

void mbs_form_residuals(mbs_form *F, double t, const double *x, double *position, double *velocity)
{
    const double *c;
    *position = *velocity = 0.0;
    if (F->m == 0)
        return;
    eval_tp(F, t);
    c = positions_at(F, t, x);
    *position = max_abs(F->mh, c);
    *velocity = velocity_residual(F, c, x + F->f, 0);
}

int mbs_form_rank(mbs_form *F, double t, const double *y, double *tol)
{
    const int f = F->f, m = F->m;
    double *w = F->work, *A = take(&w, f * m), *tau = take(&w, m + f + 1);
    int rank = 0;
    if (tol != NULL)
        *tol = 0.0;
    if (m > 0) {
        eval_tp(F, t);
        if (qr_of_transpose(m, f, positions_at(F, t, y) + F->mh, NULL, f, A, tau, F->iwork, &rank,
                            F->rank_tol) != 0)
            rank = 0;
        if (tol != NULL)
            *tol = F->rank_tol * fabs(A[0]);
    }
    F->rank = rank;
    return rank;
}

int mbs_form_handles_redundant(int kind)
{
    return kind == MBS_FORM_QR || kind == MBS_FORM_SVD;
}

/* ---------------------------------------------------------------- singular positions */

int mbs_form_singularity(mbs_form *F, double t, const double *y, int record, double low, double high,
                         const char *const *row_names, char *buf, size_t n)
{
    const int f = F->f, m = F->m;
    double *w = F->work, *A = take(&w, f * m), *tau = take(&w, m + f + 1), scale;
    int *perm = F->iwork, rank, k, kmax = m < f ? m : f;
    if (n > 0)
        buf[0] = '\0';
    if (m == 0)
        return 0;
    eval_tp(F, t);
    regularity(F, positions_at(F, t, y) + F->mh, A, tau, perm, &rank, &scale);
    if (record) { /* the scale: the largest pivot at a regular state (the start) */
        F->pivot_scale = fabs(A[0]);
        return 0;
    }
    if (!(scale > 0.0))
        return 0;
    for (k = 0; k < kmax; k++) {
        const double ratio = fabs(A[k * m + k]) / scale;
        if (ratio > low && ratio < high) {
            const int row = perm[k];
            snprintf(buf, n, "at t=%.9g the constraint Jacobian is nearly singular (a pivot of its "
                     "column-pivoted QR is %.1e of the largest, here or at the start; row '%s' is "
                     "nearly dependent on the others): a singular position of the mechanism, which "
                     "this formulation and tolerance do not pass", t, ratio, row_names != NULL && row_names[row] != NULL
                     ? row_names[row] : "?");
            return 1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- Lagrange multipliers */

/* y'' of eq. 8 by the null-space form of eq. 31 (QR), then lambda = minimum-norm solution of
 * C^T lambda = M y'' - h.  cp holds M, h, c, C, b', b'' (b2 may be replaced by zero). */
static int multipliers_at(mbs_form *F, double t, const double *M, const double *h, const double *C,
                          const double *b2, double *lambda, double *w, int *iw)
{
    const int f = F->f, m = F->m;
    double *J = take(&w, f * f), *gamma = take(&w, f), *ydd = take(&w, f), *r = take(&w, f);
    double *red = take(&w, 2 * f * f + 3 * f), *Cq = take(&w, m * f), *tau = take(&w, m + f + 1);
    int *perm = itake(&iw, f + m);
    int rc, rank, i;
    decomp D;
    decomp_alloc(&D, f, m, 0, &w, &iw); /* the QR, whatever the formulation */
    if (decomp_factor(&D, F, C, J) != 0)
        goto failed;
    decomp_solve(&D, b2, gamma);
    for (i = 0; i < f; i++)
        gamma[i] = -gamma[i];
    rc = reduced_accelerations(f, f - D.rank, M, h, J, gamma, ydd, red);
    if (rc != 0) {
        snprintf(F->message, sizeof F->message, "the reduced mass matrix J^T M J is not positive "
                 "definite (pivot %d) at t=%.9g: no multipliers", rc, t);
        return rc;
    }
    memcpy(r, h, sizeof(double) * (size_t)f);
    mbs_gemv(0, f, f, 1.0, M, ydd, -1.0, r);
    memcpy(Cq, C, sizeof(double) * (size_t)(m * f));
    if (mbs_qr_factor(m, f, Cq, tau, perm, &rank, F->rank_tol) != 0 ||
        mbs_qr_solve_minnorm(m, f, Cq, tau, perm, rank, r, lambda) != 0)
        goto failed;
    return 0;
failed:
    snprintf(F->message, sizeof F->message, "the multipliers cannot be computed at t=%.9g", t);
    return 1;
}

int mbs_form_multipliers(mbs_form *F, double t, const double *x, double *lambda)
{
    const int f = F->f, m = F->m, mh = F->mh;
    const double *cp;
    if (m == 0)
        return 0;
    eval_tp(F, t);
    cp = constrained_at(F, t, x, x + f);
    return multipliers_at(F, t, cp, cp + f * f, cp + f * f + f + mh, cp + f * f + f + mh + m + m * f,
                          lambda, F->work, F->iwork);
}

int mbs_form_multipliers_dh(mbs_form *F, double t, const double *x, const double *dh, double *dlambda)
{
    const int f = F->f, m = F->m;
    double *w = F->work, *zero = take(&w, m);
    const double *cp;
    if (m == 0)
        return 0;
    eval_tp(F, t);
    cp = constrained_at(F, t, x, x + f);
    memset(zero, 0, sizeof(double) * (size_t)m);
    return multipliers_at(F, t, cp, dh, cp + f * f + f + F->mh, zero, dlambda, w, F->iwork);
}

/* ---------------------------------------------------------------- consistent initialization */

/* g = [c; e - e0] and G = [C_h; E] at y (mh + nic rows: the holonomic rows C_h of C). cs (c, C,
 * b' of all rows) and ie are scratch. */
static void init_residual(mbs_form *F, double t, const double *y, const double *e0, double *cs,
                          double *ie, double *g, double *G)
{
    const int f = F->f, mh = F->mh, nic = F->nic;
    int i;
    F->constraints(t, y, y, F->prm, F->u, F->tp, cs);
    memcpy(g, cs, sizeof(double) * (size_t)mh);
    memcpy(G, cs + mh, sizeof(double) * (size_t)(mh * f));
    if (nic > 0) {
        F->initial_conditions(t, y, y, F->prm, F->u, F->tp, ie);
        for (i = 0; i < nic; i++)
            g[mh + i] = ie[i] - e0[i];
        memcpy(G + mh * f, ie + nic, sizeof(double) * (size_t)(nic * f));
        for (i = 0; F->ic_skip != NULL && i < nic; i++)
            if (F->ic_skip[i]) { /* left out: a zero row, which no Newton step sees */
                g[mh + i] = 0.0;
                memset(G + (mh + i) * f, 0, sizeof(double) * (size_t)f);
            }
    }
}

/* The least change of v (f), only in the entries moveidx (nmove of them), that makes the nrow rows
 * G v = rhs hold, with (A, tau, perm, rank) the pivoted QR of the moving columns' G^T (NULL A: none
 * moves); returns the residual max |G v - rhs| afterwards.  gt, step: scratch. */
static double least_change_step(mbs_form *F, int nrow, const double *G, const double *rhs, const int *moveidx,
                                int nmove, const double *A, const double *tau, const int *perm, int rank,
                                double *v, double *gt, double *step)
{
    const int f = F->f;
    int i;
    memcpy(gt, rhs, sizeof(double) * (size_t)nrow);
    mbs_gemv(0, nrow, f, -1.0, G, v, 1.0, gt);
    if (A != NULL) {
        mbs_qr_solve_minnorm(nmove, nrow, A, tau, perm, rank, gt, step);
        for (i = 0; i < nmove; i++)
            v[moveidx[i]] += step[i];
    }
    memcpy(gt, rhs, sizeof(double) * (size_t)nrow); /* gt is free again: G v - rate */
    mbs_gemv(0, nrow, f, 1.0, G, v, -1.0, gt);
    return max_abs(nrow, gt);
}

/* The rates v (f) changed by the least amount, only those in moveidx (nmove of them), so that
 * the nrow rows G v = rhs hold (G, rhs as built by mbs_form_consistent); returns the residual
 * max |G v - rhs| afterwards, or -1 if the QR failed.  gt, A, tau, step, perm: scratch. */
static double consistent_rates(mbs_form *F, int nrow, const double *G, const double *rhs,
                               const int *moveidx, int nmove, double *v, double *gt, double *A,
                               double *tau, double *step, int *perm)
{
    int rank = 0, moves = nrow > 0 && nmove > 0;
    if (moves && qr_of_transpose(nrow, F->f, G, moveidx, nmove, A, tau, perm, &rank, F->rank_tol) != 0)
        return -1.0;
    return least_change_step(F, nrow, G, rhs, moveidx, nmove, moves ? A : NULL, tau, perm, rank, v, gt, step);
}

/* The linear systems of the sensitivity equations (mbs_formulation.h, mbs_form_kkt). */
typedef struct {
    int f, m, kk, rank;
    const double *M, *J, *Mi, *inv, *Cq, *tau;
    const int *perm;
    decomp *D;
} kkt_factors;

/* y'' and lambda (lambda NULL: y'' alone) of M y'' - C^T lambda = h, C y'' = -b with the factors K;
 * r, s, gamma: scratch. */
static int kkt_solve(const kkt_factors *K, const double *h, const double *b, double *ydd, double *lambda,
                     double *r, double *s, double *gamma)
{
    const int f = K->f, m = K->m;
    int i;
    if (m == 0) {
        memcpy(ydd, h, sizeof(double) * (size_t)f);
        mbs_chol_solve(f, K->M, ydd);
        return 0;
    }
    decomp_solve(K->D, b, gamma);
    for (i = 0; i < f; i++)
        gamma[i] = -gamma[i];
    memcpy(r, h, sizeof(double) * (size_t)f);
    mbs_gemv(0, f, f, -1.0, K->M, gamma, 1.0, r);
    mbs_gemv(1, f, K->kk, 1.0, K->J, r, 0.0, s);
    mbs_chol_solve_inv(K->kk, K->Mi, K->inv, s);
    memcpy(ydd, gamma, sizeof(double) * (size_t)f);
    mbs_gemv(0, f, K->kk, 1.0, K->J, s, 1.0, ydd);
    if (lambda == NULL)
        return 0;
    memcpy(r, h, sizeof(double) * (size_t)f); /* C^T lambda = M y'' - h */
    mbs_gemv(0, f, f, 1.0, K->M, ydd, -1.0, r);
    return mbs_qr_solve_minnorm(m, f, K->Cq, K->tau, K->perm, K->rank, r, lambda) != 0;
}

int mbs_form_kkt(mbs_form *F, double t, const double *x, int nrhs, mbs_kkt_fill fill, void *ctx,
                 double *h, double *b, double *ydd, double *lambda)
{
    const int f = F->f, m = F->m;
    double *w = F->work, *Mq, *C, *M;
    double *J = take(&w, f * f), *gamma = take(&w, f), *r = take(&w, f), *s = take(&w, f);
    double *MJ = take(&w, f * f), *Mi = take(&w, f * f), *inv = take(&w, f + 1);
    double *Cq = take(&w, m * f + 1), *tau = take(&w, m + f + 1), *a0 = take(&w, f), *l0 = take(&w, m + 1);
    double *own_h = take(&w, f);
    int *iw = F->iwork, *perm = itake(&iw, f + m);
    int k, rc = 0;
    decomp D;
    kkt_factors K;
    eval_tp(F, t);
    K.f = f;
    K.m = m;
    K.kk = f;
    K.D = &D;
    if (m == 0) {
        M = take(&w, f * f + f);
        F->dynamics(t, x, x + f, F->prm, F->u, F->tp, M);
        memcpy(own_h, M + f * f, sizeof(double) * (size_t)f);
        if ((rc = mbs_chol_factor(f, M)) != 0)
            goto singular;
        K.M = M;
    } else {
        Mq = constrained_at(F, t, x, x + f);
        M = Mq;
        C = Mq + f * f + f + F->mh;
        memcpy(own_h, Mq + f * f, sizeof(double) * (size_t)f);
        decomp_alloc(&D, f, m, 0, &w, &iw);
        if (decomp_factor(&D, F, C, J) != 0)
            goto failed;
        K.kk = f - D.rank;
        mbs_gemm(0, f, K.kk, f, M, J, MJ);   /* M J */
        mbs_gemm(1, K.kk, K.kk, f, J, MJ, Mi); /* J^T M J */
        if ((rc = mbs_chol_factor_inv(K.kk, Mi, inv)) != 0)
            goto singular;
        memcpy(Cq, C, sizeof(double) * (size_t)(m * f));
        if (mbs_qr_factor(m, f, Cq, tau, perm, &K.rank, F->rank_tol) != 0)
            goto failed;
        K.M = M;
        K.J = J;
        K.Mi = Mi;
        K.inv = inv;
        K.Cq = Cq;
        K.tau = tau;
        K.perm = perm;
    }
    if (fill != NULL) { /* the state's own y'' and lambda first (b'' after c, C, b' in Mq) */
        const double *b2 = m ? M + f * f + f + F->mh + m * f + m : NULL;
        if (kkt_solve(&K, own_h, b2, a0, l0, r, s, gamma) != 0)
            goto failed;
        fill(ctx, a0, l0, h, b);
    }
    for (k = 0; k < nrhs; k++)
        if (kkt_solve(&K, h + k * f, b + k * m, ydd + k * f, lambda ? lambda + k * m : NULL, r, s, gamma) != 0)
            goto failed;
    return 0;
singular:
    snprintf(F->message, sizeof F->message, "the %smass matrix is not positive definite (pivot %d) "
             "at t=%.9g: no sensitivities", m ? "reduced " : "", rc, t);
    return 1;
failed:
    snprintf(F->message, sizeof F->message, "the constraint Jacobian cannot be factored at t=%.9g: "
             "no sensitivities", t);
    return 1;
}

double mbs_form_least_change_many(mbs_form *F, int nrow, const double *G, int nrhs, const double *rhs,
                                  double *v, int stride)
{
    const int f = F->f;
    double *w = F->work, *gt = take(&w, nrow + f), *A = take(&w, nrow * f + 1);
    double *tau = take(&w, nrow + f + 1), *step = take(&w, f);
    int *all = F->iwork, *perm = F->iwork + f, rank, k;
    double worst = 0.0;
    if (nrow == 0)
        return 0.0;
    for (k = 0; k < f; k++)
        all[k] = k;
    if (qr_of_transpose(nrow, f, G, all, f, A, tau, perm, &rank, F->rank_tol) != 0) /* once for all */
        return -1.0;
    for (k = 0; k < nrhs; k++) {
        const double r = least_change_step(F, nrow, G, rhs + k * nrow, all, f, A, tau, perm, rank,
                                           v + (size_t)k * (size_t)stride, gt, step);
        if (!(r <= worst))
            worst = r;
    }
    return worst;
}

/* v (f) changed by the least amount, only in the entries idx[0..n-1] (idx NULL: all f), so that
 * the rows G v = rhs (nrow x f) hold as far as they can; returns max |G v - rhs| afterwards, or -1
 * if the factorization failed.  Scratch from F->work. */
double mbs_form_least_change(mbs_form *F, int nrow, const double *G, const double *rhs,
                             const int *idx, int n, double *v)
{
    const int f = F->f;
    double *w = F->work, *gt = take(&w, nrow + f), *A = take(&w, nrow * f + 1);
    double *tau = take(&w, nrow + f + 1), *step = take(&w, f);
    int *all = F->iwork, *iw = F->iwork + f, i;
    if (idx == NULL) {
        for (i = 0; i < f; i++)
            all[i] = i;
        idx = all;
        n = f;
    }
    return consistent_rates(F, nrow, G, rhs, idx, n, v, gt, A, tau, step, iw);
}


/* The scratch of mbs_form_consistent in F->work and F->iwork (R = m + nic rows at most): c, C, b'
 * of all rows (cs, b1 = b'), the initial conditions (ie), g and G = [C_h; E] at y, trial g and G
 * (gt, Gt), the QR (A, tau, perm), a step, the positions y and rates v being made consistent, the
 * right-hand sides of the velocity rows (rhs), scratch dv, the rates before (v0), and the indices
 * of the free coordinates and of the rates that move. */
typedef struct {
    double *cs, *ie, *g, *G, *gt, *Gt, *A, *tau, *step, *y, *v, *rhs, *dv, *v0;
    const double *b1;
    int *perm, *freeidx, *moveidx;
    int nfree;
} init_work;

static void init_workspace(mbs_form *F, init_work *w)
{
    const int f = F->f, m = F->m, mh = F->mh, nic = F->nic, R = m + nic;
    w->cs = F->work;
    w->ie = w->cs + 2 * m + m * f;
    w->g = w->ie + nic + nic * f;
    w->G = w->g + R;
    w->gt = w->G + R * f;
    w->Gt = w->gt + R;
    w->A = w->Gt + R * f;
    w->tau = w->A + f * R;
    w->step = w->tau + R + 1;
    w->y = w->step + f;
    w->v = w->y + f;
    w->rhs = w->v + f;
    w->dv = w->rhs + R;
    w->v0 = w->dv + f;
    w->b1 = w->cs + mh + m * f;
    w->perm = F->iwork;
    w->freeidx = F->iwork + R;
    w->moveidx = w->freeidx + f;
}

/* Positions: Newton with minimum-norm steps of the free coordinates on g(y) = 0 (the Rp = mh + nic
 * rows at the position level), halving a step until the residual falls.  0, or 1 with *bad_row and
 * the message when max |g| stays above tol. */
static int consistent_positions(mbs_form *F, double t, init_work *w, const double *e0, double tol,
                                int max_iter, int *bad_row)
{
    const int f = F->f, m = F->m, mh = F->mh, Rp = mh + F->nic;
    int it, i, rank, worst;
    double norm;
    init_residual(F, t, w->y, e0, w->cs, w->ie, w->g, w->G);
    norm = max_abs(Rp, w->g);
    for (it = 0; it < max_iter && !(norm <= tol) && w->nfree > 0; it++) {
        double lam = 1.0;
        int accepted = 0;
        if (qr_of_transpose(Rp, f, w->G, w->freeidx, w->nfree, w->A, w->tau, w->perm, &rank,
                            F->rank_tol) != 0)
            break;
        for (i = 0; i < Rp; i++)
            w->gt[i] = -w->g[i];
        mbs_qr_solve_minnorm(w->nfree, Rp, w->A, w->tau, w->perm, rank, w->gt, w->step);
        while (lam > 1e-4) {
            double ntry;
            double *ytry = w->dv; /* scratch f */
            memcpy(ytry, w->y, sizeof(double) * (size_t)f);
            for (i = 0; i < w->nfree; i++)
                ytry[w->freeidx[i]] += lam * w->step[i];
            init_residual(F, t, ytry, e0, w->cs, w->ie, w->gt, w->Gt);
            ntry = max_abs(Rp, w->gt);
            if (isfinite(ntry) && ntry < norm) {
                memcpy(w->y, ytry, sizeof(double) * (size_t)f);
                memcpy(w->g, w->gt, sizeof(double) * (size_t)Rp);
                memcpy(w->G, w->Gt, sizeof(double) * (size_t)(Rp * f));
                norm = ntry;
                accepted = 1;
                break;
            }
            lam *= 0.5;
        }
        if (!accepted)
            break;
    }
    if (norm <= tol)
        return 0;
    worst = 0;
    for (i = 1; i < Rp; i++)
        if (fabs(w->g[i]) > fabs(w->g[worst]))
            worst = i;
    *bad_row = worst < mh ? worst : m + worst - mh; /* the rows of c, then of e */
    if (F->reached != NULL)
        memcpy(F->reached, w->y, sizeof(double) * (size_t)f);
    snprintf(F->message, sizeof F->message,
             "violated by %.3g after Newton from the given values (%d coordinate(s) free)",
             Rp > 0 ? fabs(w->g[worst]) : 0.0, w->nfree);
    return 1;
}

/* The velocity rows at the consistent y: all rows of C (nonholonomic ones too) with -b', then the
 * rows of E whose condition gives a rate, with that rate (cs holds C and b' at y, G = [C_h; E]: E
 * moves down to row m, C takes rows 0..m).  Returns their number. */
static int velocity_rows(mbs_form *F, double t, init_work *w, const double *e0, const double *rate,
                         const unsigned char *has_rate)
{
    const int f = F->f, m = F->m, mh = F->mh, nic = F->nic, R = m + nic;
    int i, nrow = 0;
    init_residual(F, t, w->y, e0, w->cs, w->ie, w->g, w->G);
    if (mh < m && nic > 0)
        memmove(w->G + m * f, w->G + mh * f, sizeof(double) * (size_t)(nic * f));
    memcpy(w->G, w->cs + mh, sizeof(double) * (size_t)(m * f));
    for (i = 0; i < R; i++) {
        if (i >= m && !has_rate[i - m])
            continue;
        if (nrow != i)
            memmove(w->G + nrow * f, w->G + i * f, sizeof(double) * (size_t)f);
        w->rhs[nrow] = i < m ? -w->b1[i] : rate[i - m];
        nrow++;
    }
    return nrow;
}

/* Velocities: the least change of the free rates that satisfies the nrow velocity rows; first only
 * of those not held (guesses), so that given rates that fit the rows keep their values, and if the
 * rows cannot hold that way of every free rate.  0, or 2 with the message. */
static int consistent_velocities(mbs_form *F, init_work *w, int nrow, const unsigned char *held_rates,
                                 double tol)
{
    const int f = F->f;
    int i, nmove = 0;
    double vmax, vres = -1.0;
    memcpy(w->v0, w->v, sizeof(double) * (size_t)f);
    for (i = 0; i < w->nfree; i++)
        if (held_rates == NULL || !held_rates[w->freeidx[i]])
            w->moveidx[nmove++] = w->freeidx[i];
    if (nmove < w->nfree) {
        vres = consistent_rates(F, nrow, w->G, w->rhs, w->moveidx, nmove, w->v, w->gt, w->A, w->tau, w->step,
                                w->perm);
        vmax = max_abs(f, w->v);
        if (!(vres >= 0.0 && vres <= 1e3 * tol * (vmax > 1.0 ? vmax : 1.0))) {
            memcpy(w->v, w->v0, sizeof(double) * (size_t)f);
            vres = -1.0;
        }
    }
    if (vres < 0.0)
        vres = consistent_rates(F, nrow, w->G, w->rhs, w->freeidx, w->nfree, w->v, w->gt, w->A, w->tau,
                                w->step, w->perm);
    if (vres < 0.0) {
        snprintf(F->message, sizeof F->message, "QR of the velocity constraints failed");
        return 2;
    }
    vmax = max_abs(f, w->v);
    if (!(vres <= 1e3 * tol * (vmax > 1.0 ? vmax : 1.0))) {
        snprintf(F->message, sizeof F->message,
                 "no consistent initial velocities (velocity constraints violated by %.3g)", vres);
        return 2;
    }
    return 0;
}

int mbs_form_consistent(mbs_form *F, double t, double *x, const unsigned char *fixed,
                        const unsigned char *held_rates, const double *e0, const double *rate,
                        const unsigned char *has_rate, double tol, int max_iter, int *bad_row)
{
    const int f = F->f;
    init_work w;
    int j, rc;
    *bad_row = -1;
    eval_tp(F, t);
    init_workspace(F, &w);
    memcpy(w.y, x, sizeof(double) * (size_t)f);
    memcpy(w.v, x + f, sizeof(double) * (size_t)f);
    w.nfree = 0;
    for (j = 0; j < f; j++)
        if (!fixed[j])
            w.freeidx[w.nfree++] = j;
    if (consistent_positions(F, t, &w, e0, tol, max_iter, bad_row) != 0)
        return 1;
    rc = consistent_velocities(F, &w, velocity_rows(F, t, &w, e0, rate, has_rate), held_rates, tol);
    if (rc != 0)
        return rc;
    memcpy(x, w.y, sizeof(double) * (size_t)f);
    memcpy(x + f, w.v, sizeof(double) * (size_t)f);
    return 0;
}
