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

/* ---------------------------------------------------------------- right-hand sides */

static int rhs_ode(mbs_form *F, double t, const double *x, double *xdot)
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

static int rhs_qr(mbs_form *F, double t, const double *x, double *xdot)
{
    const int f = F->f, m = F->m;
    const double *y = x, *v = x + f;
    double *cs = F->work;                       /* c, C, b' at y */
    double *cp = cs + 2 * m + m * f;            /* M, h, c, C, b', b'' at (y, y'_projected) */
    double *A = cp + f * f + f + m * f + 3 * m; /* QR of C^T (f x m) */
    double *tau = A + f * m;
    double *J = tau + m + 1;                    /* f x k null-space basis */
    double *theta = J + f * f, *vp = theta + f, *gamma = vp + f, *r = gamma + f, *s = r + f;
    double *MJ = s + f, *Mi = MJ + f * f;
    const double *C = cs + m, *b1 = cs + m + m * f;
    const double *M, *h, *b2;
    int *perm = F->iwork;
    int rank, k, i, j, l, rc;

    F->constraints(t, y, y, F->prm, F->u, F->tp, cs);
    rc = qr_of_transpose(m, f, C, NULL, f, A, tau, perm, &rank, F->rank_tol);
    if (rc != 0) {
        snprintf(F->message, sizeof F->message, "QR of the constraint Jacobian failed (%d) at t=%.9g",
                 rc, t);
        return 1;
    }
    F->rank = rank;
    k = f - rank;
    mbs_qr_nullspace(f, m, A, tau, rank, J);
    mbs_qr_solve_minnorm(f, m, A, tau, perm, rank, b1, theta);
    for (i = 0; i < f; i++) {
        theta[i] = -theta[i];
        r[i] = v[i] - theta[i];
    }
    /* eq. 30: y' = J J^T (y' - theta) + theta */
    mbs_gemv(1, f, k, 1.0, J, r, 0.0, s);
    memcpy(vp, theta, sizeof(double) * (size_t)f);
    mbs_gemv(0, f, k, 1.0, J, s, 1.0, vp);
    F->constrained(t, y, vp, F->prm, F->u, F->tp, cp);
    M = cp;
    h = cp + f * f;
    b2 = cp + f * f + f + m + m * f + m;
    mbs_qr_solve_minnorm(f, m, A, tau, perm, rank, b2, gamma);
    for (i = 0; i < f; i++)
        gamma[i] = -gamma[i];
    /* eq. 31: y'' = J (J^T M J)^-1 J^T (h - M gamma) + gamma */
    memcpy(r, h, sizeof(double) * (size_t)f);
    mbs_gemv(0, f, f, -1.0, M, gamma, 1.0, r);
    for (i = 0; i < f; i++)
        for (j = 0; j < k; j++) {
            double acc = 0.0;
            for (l = 0; l < f; l++)
                acc += M[i * f + l] * J[l * k + j];
            MJ[i * k + j] = acc;
        }
    mbs_gemv(1, f, k, 1.0, J, r, 0.0, s);
    for (i = 0; i < k; i++) {
        for (j = 0; j < k; j++) {
            double a = 0.0;
            for (l = 0; l < f; l++)
                a += J[l * k + i] * MJ[l * k + j];
            Mi[i * k + j] = a;
        }
    }
    rc = mbs_chol_factor(k, Mi);
    if (rc != 0) {
        snprintf(F->message, sizeof F->message,
                 "the reduced mass matrix J^T M J is not positive definite (pivot %d) at t=%.9g", rc, t);
        return rc;
    }
    mbs_chol_solve(k, Mi, s);
    memcpy(xdot, vp, sizeof(double) * (size_t)f);
    memcpy(xdot + f, gamma, sizeof(double) * (size_t)f);
    mbs_gemv(0, f, k, 1.0, J, s, 1.0, xdot + f);
    return 0;
}

static int rhs_baumgarte(mbs_form *F, double t, const double *x, double *xdot)
{
    const int f = F->f, m = F->m;
    const double *y = x, *v = x + f;
    double *cp = F->work;
    double *b2m = cp + f * f + f + m * f + 3 * m, *lambda = b2m + m, *kw = lambda + m;
    const double *M = cp, *h = cp + f * f, *c = h + f, *C = c + m, *b1 = C + m * f, *b2 = b1 + m;
    int i, l, rc;
    F->constrained(t, y, v, F->prm, F->u, F->tp, cp);
    for (i = 0; i < m; i++) {
        double cv = b1[i];
        for (l = 0; l < f; l++)
            cv += C[i * f + l] * v[l];
        b2m[i] = b2[i] + 2.0 * F->alpha * cv + F->beta * F->beta * c[i];
    }
    rc = mbs_solve_kkt(f, m, M, C, h, b2m, xdot + f, lambda, kw);
    if (rc != 0) {
        if (rc <= f)
            snprintf(F->message, sizeof F->message,
                     "the mass matrix is not positive definite (pivot %d) at t=%.9g", rc, t);
        else
            snprintf(F->message, sizeof F->message,
                     "C M^-1 C^T is singular (pivot %d) at t=%.9g: redundant constraints or a "
                     "singular configuration (the 'qr' formulation handles redundant constraints)",
                     rc - f, t);
        return rc;
    }
    for (i = 0; i < f; i++)
        xdot[i] = v[i];
    return 0;
}

int mbs_form_rhs(void *ctx, double t, const double *x, double *xdot)
{
    mbs_form *F = (mbs_form *)ctx;
    eval_tp(F, t);
    if (F->m == 0 || F->kind == MBS_FORM_ODE)
        return rhs_ode(F, t, x, xdot);
    if (F->kind == MBS_FORM_QR)
        return rhs_qr(F, t, x, xdot);
    return rhs_baumgarte(F, t, x, xdot);
}

/* ---------------------------------------------------------------- projection */

int mbs_form_project(void *ctx, double t, double *x)
{
    mbs_form *F = (mbs_form *)ctx;
    const int f = F->f, m = F->m;
    double *y = x, *v = x + f;
    double *cs = F->work, *A = cs + 2 * m + m * f, *tau = A + f * m, *d = tau + m + 1, *w = d + f;
    const double *c = cs, *C = cs + m, *b1 = cs + m + m * f;
    int *perm = F->iwork;
    int it, i, rank = 0;
    double res;
    if (m == 0 || F->kind != MBS_FORM_QR)
        return 0;
    F->nproj++;
    eval_tp(F, t);
    for (it = 0;; it++) {
        F->constraints(t, y, y, F->prm, F->u, F->tp, cs);
        res = max_abs(m, c);
        if (res <= F->newton_tol || it == F->newton_max || !isfinite(res))
            break;
        if (qr_of_transpose(m, f, C, NULL, f, A, tau, perm, &rank, F->rank_tol) != 0)
            break;
        mbs_qr_solve_minnorm(f, m, A, tau, perm, rank, c, d);
        for (i = 0; i < f; i++)
            y[i] -= d[i];
    }
    if (!(res <= F->newton_tol)) {
        snprintf(F->message, sizeof F->message,
                 "the position projection did not converge at t=%.9g (residual %.3g after %d "
                 "iterations); the constraints may not be satisfiable here", t, res, it);
        return 1;
    }
    if (qr_of_transpose(m, f, C, NULL, f, A, tau, perm, &rank, F->rank_tol) != 0) {
        snprintf(F->message, sizeof F->message, "QR of the constraint Jacobian failed at t=%.9g", t);
        return 1;
    }
    F->rank = rank;
    /* y' <- y' - C^+ (C y' + b')  (eq. 30 in the form whose rounding scales with the residual) */
    memcpy(w, b1, sizeof(double) * (size_t)m);
    mbs_gemv(0, m, f, 1.0, C, v, 1.0, w);
    mbs_qr_solve_minnorm(f, m, A, tau, perm, rank, w, d);
    for (i = 0; i < f; i++)
        v[i] -= d[i];
    return 0;
}

double mbs_form_residual(mbs_form *F, double t, const double *y)
{
    if (F->m == 0)
        return 0.0;
    eval_tp(F, t);
    F->constraints(t, y, y, F->prm, F->u, F->tp, F->work);
    return max_abs(F->m, F->work);
}

/* ---------------------------------------------------------------- consistent initialization */

/* g = [c; e - e0] and G = [C; E] at y (R = m + nic rows). cs and ie are scratch. */
static void init_residual(mbs_form *F, double t, const double *y, const double *e0, double *cs,
                          double *ie, double *g, double *G)
{
    const int f = F->f, m = F->m, nic = F->nic;
    int i;
    F->constraints(t, y, y, F->prm, F->u, F->tp, cs);
    memcpy(g, cs, sizeof(double) * (size_t)m);
    memcpy(G, cs + m, sizeof(double) * (size_t)(m * f));
    if (nic > 0) {
        F->initial_conditions(t, y, y, F->prm, F->u, F->tp, ie);
        for (i = 0; i < nic; i++)
            g[m + i] = ie[i] - e0[i];
        memcpy(G + m * f, ie + nic, sizeof(double) * (size_t)(nic * f));
    }
}

int mbs_form_consistent(mbs_form *F, double t, double *x, const unsigned char *fixed,
                        const double *e0, const double *rate, const unsigned char *has_rate,
                        double tol, int max_iter, int *bad_row)
{
    const int f = F->f, m = F->m, nic = F->nic, R = m + nic;
    double *cs = F->work, *ie = cs + 2 * m + m * f, *g = ie + nic + nic * f, *G = g + R;
    double *gt = G + R * f, *Gt = gt + R, *A = Gt + R * f, *tau = A + f * R, *step = tau + R + 1;
    double *y = step + f, *v = y + f, *rhs = v + f, *dv = rhs + R;
    const double *b1 = cs + m + m * f;
    int *perm = F->iwork, *freeidx = F->iwork + R;
    int nfree = 0, it, i, j, rank, nrow, worst;
    double norm, vmax, vres;

    *bad_row = -1;
    eval_tp(F, t);
    memcpy(y, x, sizeof(double) * (size_t)f);
    memcpy(v, x + f, sizeof(double) * (size_t)f);
    for (j = 0; j < f; j++)
        if (!fixed[j])
            freeidx[nfree++] = j;

    init_residual(F, t, y, e0, cs, ie, g, G);
    norm = max_abs(R, g);
    for (it = 0; it < max_iter && !(norm <= tol) && nfree > 0; it++) {
        double lam = 1.0;
        int accepted = 0;
        if (qr_of_transpose(R, f, G, freeidx, nfree, A, tau, perm, &rank, F->rank_tol) != 0)
            break;
        for (i = 0; i < R; i++)
            gt[i] = -g[i];
        mbs_qr_solve_minnorm(nfree, R, A, tau, perm, rank, gt, step);
        while (lam > 1e-4) {
            double ntry;
            double *ytry = dv; /* scratch f */
            memcpy(ytry, y, sizeof(double) * (size_t)f);
            for (i = 0; i < nfree; i++)
                ytry[freeidx[i]] += lam * step[i];
            init_residual(F, t, ytry, e0, cs, ie, gt, Gt);
            ntry = max_abs(R, gt);
            if (isfinite(ntry) && ntry < norm) {
                memcpy(y, ytry, sizeof(double) * (size_t)f);
                memcpy(g, gt, sizeof(double) * (size_t)R);
                memcpy(G, Gt, sizeof(double) * (size_t)(R * f));
                norm = ntry;
                accepted = 1;
                break;
            }
            lam *= 0.5;
        }
        if (!accepted)
            break;
    }
    if (!(norm <= tol)) {
        worst = 0;
        for (i = 1; i < R; i++)
            if (fabs(g[i]) > fabs(g[worst]))
                worst = i;
        *bad_row = worst;
        snprintf(F->message, sizeof F->message,
                 "violated by %.3g after Newton from the given values (%d coordinate(s) free)",
                 R > 0 ? fabs(g[worst]) : 0.0, nfree);
        return 1;
    }
    /* velocities: rows of C, then rows of E whose condition gives a rate; cs holds b' at y */
    init_residual(F, t, y, e0, cs, ie, g, G);
    nrow = 0;
    for (i = 0; i < R; i++) {
        if (i >= m && !has_rate[i - m])
            continue;
        if (nrow != i)
            memmove(G + nrow * f, G + i * f, sizeof(double) * (size_t)f);
        rhs[nrow] = i < m ? -b1[i] : rate[i - m];
        nrow++;
    }
    /* residual of the rows with the given rates */
    memcpy(gt, rhs, sizeof(double) * (size_t)nrow);
    mbs_gemv(0, nrow, f, -1.0, G, v, 1.0, gt);
    if (nrow > 0 && nfree > 0) {
        if (qr_of_transpose(nrow, f, G, freeidx, nfree, A, tau, perm, &rank, F->rank_tol) != 0) {
            snprintf(F->message, sizeof F->message, "QR of the velocity constraints failed");
            return 2;
        }
        mbs_qr_solve_minnorm(nfree, nrow, A, tau, perm, rank, gt, step);
        for (i = 0; i < nfree; i++)
            v[freeidx[i]] += step[i];
    }
    vmax = max_abs(f, v);
    memcpy(gt, rhs, sizeof(double) * (size_t)nrow); /* gt is free again: G v - rate */
    mbs_gemv(0, nrow, f, 1.0, G, v, -1.0, gt);
    vres = max_abs(nrow, gt);
    if (!(vres <= 1e3 * tol * (vmax > 1.0 ? vmax : 1.0))) {
        snprintf(F->message, sizeof F->message,
                 "no consistent initial velocities (velocity constraints violated by %.3g)", vres);
        return 2;
    }
    memcpy(x, y, sizeof(double) * (size_t)f);
    memcpy(x + f, v, sizeof(double) * (size_t)f);
    return 0;
}
