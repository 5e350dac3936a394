/*
 * mbs_sensitivity.c -- forward sensitivities of a run (see mbs_sensitivity.h for the equations)
 * and the augmented system the adjoint method (mbs_adjoint.c) shares (mbs_sens_common.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs_sens_common.h"

#if MBS_HAS_SENS

int mbs_sens_available(void) { return 1; }

size_t mbs_sens_width(void) { return (size_t)SIG_COUNT; }

/* ---------------------------------------------------------------- the integrator */

int mbs_sens_stepper_init(mbs_sens_stepper *I, int method, int n, double rtol, double atol, double hmax,
                          char *msg, size_t len)
{
    int rc;
    memset(I, 0, sizeof *I);
    I->method = method;
    I->meth = mbs_method_descriptor(method);
    I->work = (double *)calloc(method == MBS_METHOD_STIFF ? (size_t)MBS_RADAU_WORK_SIZE((size_t)n)
                               : method == MBS_METHOD_DOP853 ? (size_t)MBS_DOP853_WORK_SIZE(n)
                                                             : (size_t)MBS_RKSTAB_WORK_SIZE(n),
                               sizeof(double));
    I->iwork = (int *)calloc((size_t)MBS_RADAU_IWORK_SIZE(n), sizeof(int));
    if (I->work == NULL || I->iwork == NULL) {
        snprintf(msg, len, "out of memory for an integrator of %d values", n);
        return 1;
    }
    if (hmax <= 0.0)
        hmax = INFINITY;
    rc = method == MBS_METHOD_STIFF    ? mbs_radau_init(&I->rd, n, I->work, I->iwork, rtol, atol, hmax)
         : method == MBS_METHOD_DOP853 ? mbs_dop853_init(&I->dp, n, I->work, rtol, atol, hmax)
                                       : mbs_rkstab_init(&I->rk, n, I->work, rtol, atol, hmax);
    I->st = method == MBS_METHOD_STIFF ? &I->rd.st : method == MBS_METHOD_DOP853 ? &I->dp.st : &I->rk;
    if (rc != MBS_STEP_OK) {
        snprintf(msg, len, "the integrator refused its settings: %s", mbs_step_message(rc));
        return 1;
    }
    return 0;
}

void mbs_sens_stepper_stats(const mbs_sens_stepper *I, long *stats)
{
    if (I->st == NULL)
        return;
    stats[0] = I->st->nfev;
    stats[1] = I->st->naccept;
    stats[2] = I->st->nreject;
    stats[3] = I->st->nproj;
}

void mbs_sens_stepper_free(mbs_sens_stepper *I)
{
    free(I->work);
    free(I->iwork);
    I->work = NULL;
    I->iwork = NULL;
}

/* ---------------------------------------------------------------- the augmented system */

int mbs_sens_init(mbs_sens *S, mbs_instance *inst, int np, const int *what, const int *index, int nq,
                  const int *qsig)
{
    int i;
    memset(S, 0, sizeof *S);
    S->inst = inst;
    S->form = mbs_inst_form(inst);
    S->np = np;
    S->what = what;
    S->index = index;
    S->nq = nq;
    S->qsig = qsig;
    S->tree = mbs_inst_uses_aba(inst);
    for (i = 0; i < nq; i++) {
        S->need_outputs |= qsig[i] >= SIG_OUT;
        S->need_lambda |= qsig[i] >= SIG_LAMBDA && qsig[i] < SIG_OUT;
    }
    S->H = (double *)calloc((size_t)(np * F + 1), sizeof(double));
    S->A = (double *)calloc((size_t)(np * F + 1), sizeof(double));
    S->B = (double *)calloc((size_t)(np * NC + 1), sizeof(double));
    S->L = (double *)calloc((size_t)(np * NC + 1), sizeof(double));
    S->Xd = (double *)calloc((size_t)mbs_sens_size(S), sizeof(double));
    S->zall = (double *)calloc((size_t)(Z_DIR + np * D_SIZE), sizeof(double));
    S->tall = (double *)calloc((size_t)(np * T_SIZE + 1), sizeof(double));
    S->zout = (double *)calloc((size_t)(np * D_SIZE + 1), sizeof(double));
    S->touts = (double *)calloc((size_t)(np * NOUTX + 1), sizeof(double));
    S->prow = (double *)calloc((size_t)(np * NC + 1), sizeof(double));
    if (S->H == NULL || S->A == NULL || S->B == NULL || S->L == NULL || S->Xd == NULL || S->zall == NULL ||
        S->tall == NULL || S->zout == NULL || S->touts == NULL || S->prow == NULL) {
        snprintf(S->msg, sizeof S->msg, "out of memory for %d sensitivities", np);
        return 1;
    }
    return 0;
}

void mbs_sens_free(mbs_sens *S)
{
    free(S->H);
    free(S->A);
    free(S->B);
    free(S->L);
    free(S->Xd);
    free(S->zall);
    free(S->tall);
    free(S->zout);
    free(S->touts);
    free(S->prow);
}

int mbs_sens_size(const mbs_sens *S) { return (NX + S->nq) * (1 + S->np); }

/* the constant column j differentiates by (its index), or -1 */
static int constant_of(const mbs_sens *S, int j)
{
    return S->what[j] == MBS_SENS_CONSTANT ? S->index[j] : -1;
}

/* Inputs and time parameters at t, and the state's x' into S->xdot (the state's formulation). */
static int prepare(mbs_sens *S, double t, const double *x)
{
    if (mbs_inst_rhs(S->inst, t, x, NULL, NULL, S->xdot, NULL) != MBS_OK) {
        snprintf(S->msg, sizeof S->msg, "%s", mbs_inst_message(S->inst));
        return 1;
    }
    return 0;
}

/* Direction j of the tangents into d (D_SIZE): s (2 f) and the unit vector of its constant. */
static void direction(const mbs_sens *S, const double *s, int j, double *d)
{
    const int k = constant_of(S, j);
    int i;
    memcpy(d, s, sizeof(double) * NX);
    for (i = 0; i < MBS_NPRM; i++)
        d[NX + i] = i == k ? 1.0 : 0.0;
}

/* The tangents of c, V, e, E y' (and of R, G at a = 0, lambda = 0, unused: the rows of the
 * consistency conditions read neither) along s (2 f) and the column's constant. */
static void condition_tangents(mbs_sens *S, double t, const double *x, const double *s, int j)
{
    direction(S, s, j, S->z + Z_DIR); /* S->z's a and lambda stay 0 */
    mbs_sens_tangent(t, x, x + F, S->form->prm, S->form->u, S->form->tp, S->z, 1, S->tout);
}

/* The sensitivity systems' right-hand sides at the state's y'' = a, lambda (mbs_form_kkt's fill):
 * h_j = -dR, b_j = dG (+ the Baumgarte terms 2 alpha dV + beta^2 dc) along column j. */
typedef struct {
    mbs_sens *S;
    double t;
    const double *X;
} fill_ctx;

static void fill_rhs(void *ctx, const double *a, const double *lam, double *H, double *B)
{
    const fill_ctx *c = (const fill_ctx *)ctx;
    mbs_sens *S = c->S;
    const mbs_form *fm = S->form;
    const int baumgarte = fm->kind == MBS_FORM_BAUMGARTE || fm->kind == MBS_FORM_DAE;
    int j, i;
    memcpy(S->a0, a, sizeof(double) * F);
    for (i = 0; i < NC; i++)
        S->lam0[i] = lam[i];
    if (S->np == 0)
        return;
    memcpy(S->zall + Z_A, a, sizeof(double) * F);
    for (i = 0; i < NC; i++)
        S->zall[Z_L + i] = lam[i];
    for (j = 0; j < S->np; j++)
        direction(S, c->X + NX * (1 + j), j, S->zall + Z_DIR + j * D_SIZE);
    mbs_sens_tangent(c->t, c->X, c->X + F, fm->prm, fm->u, fm->tp, S->zall, S->np, S->tall);
    for (j = 0; j < S->np; j++) {
        const double *tout = S->tall + j * T_SIZE;
        for (i = 0; i < F; i++)
            H[j * F + i] = -tout[T_DR + i];
        for (i = 0; i < NC; i++) {
            double g = tout[T_DG + i];
            if (baumgarte)
                g += 2.0 * fm->alpha * tout[T_DV + i] + (i < NH ? fm->beta * fm->beta * tout[T_DC + i] : 0.0);
            B[j * NC + i] = g;
        }
    }
}

void mbs_sens_output_tangents(mbs_sens *S, double t, const double *X)
{
#if NOUTX > 0
    int j;
    for (j = 0; j < S->np; j++)
        direction(S, X + NX * (1 + j), j, S->zout + j * D_SIZE);
    if (S->np > 0)
        mbs_sens_outputs(t, X, X + F, S->form->prm, S->form->u, S->form->tp, S->zout, S->np, S->touts);
#else
    (void)S;
    (void)t;
    (void)X;
#endif
}

double mbs_sens_signal(const mbs_sens *S, int sig, const double *X)
{
    if (sig < NX)
        return X[sig];
    if (sig < SIG_OUT)
        return S->lam0[sig - SIG_LAMBDA];
    return S->outv[sig - SIG_OUT];
}

double mbs_sens_signal_tangent(const mbs_sens *S, int sig, const double *X, int j)
{
    if (sig < NX)
        return X[NX * (1 + j) + sig];
    if (sig < SIG_OUT)
        return S->L[j * NC + sig - SIG_LAMBDA];
    return S->touts[j * NOUTX + sig - SIG_OUT];
}

/* X' of the augmented system: the state's x' by its formulation, s_j' = [s_y', sigma_j], the
 * integrated signals and their sensitivities; the by-products (y'', lambda, their sensitivities,
 * the outputs) stay in S. */
int mbs_sens_rhs(void *ctx, double t, const double *X, double *Xdot)
{
    mbs_sens *S = (mbs_sens *)ctx;
    fill_ctx c;
    int j, i;
    if (prepare(S, t, X) != 0)
        return 1;
    memcpy(Xdot, S->xdot, sizeof(double) * NX);
    if (S->tree) { /* sigma_j = the tangent of the articulated-body y'' itself */
#if MBS_HAS_ABA
        for (j = 0; j < S->np; j++)
            direction(S, X + NX * (1 + j), j, S->zall + Z_DIR + j * D_SIZE);
        if (S->np > 0)
            mbs_sens_tree_tangent(t, X, X + F, S->form->prm, S->form->u, S->form->tp, S->zall + Z_DIR, S->np,
                                  S->A);
#endif
    } else {
        c.S = S;
        c.t = t;
        c.X = X;
        if (mbs_form_kkt(S->form, t, X, S->np, fill_rhs, &c, S->H, S->B, S->A,
                         S->need_lambda || S->want_lambda ? S->L : NULL) != 0) {
            snprintf(S->msg, sizeof S->msg, "%s", S->form->message);
            return 1;
        }
    }
    for (j = 0; j < S->np; j++) {
        double *sd = Xdot + NX * (1 + j);
        memcpy(sd, X + NX * (1 + j) + F, sizeof(double) * F);
        memcpy(sd + F, S->A + j * F, sizeof(double) * F);
    }
    if (S->nq > 0) {
        double *Q = Xdot + NX * (1 + S->np);
#if NOUTX > 0
        if (S->need_outputs) {
            mbs_outputs(t, X, X + F, S->form->prm, S->form->u, S->form->tp, S->outv);
            mbs_sens_output_tangents(S, t, X);
        }
#endif
        for (i = 0; i < S->nq; i++) {
            Q[i] = mbs_sens_signal(S, S->qsig[i], X);
            for (j = 0; j < S->np; j++)
                Q[S->nq * (1 + j) + i] = mbs_sens_signal_tangent(S, S->qsig[i], X, j);
        }
    }
    return 0;
}

int mbs_sens_rhs_lambda(mbs_sens *S, double t, const double *X, double *Xdot)
{
    int rc;
    S->want_lambda = 1;
    rc = mbs_sens_rhs(S, t, X, Xdot);
    S->want_lambda = 0;
    return rc;
}

/* Make column j's start s = [s_y, s_y'] consistent by the least change of its free entries: the
 * holonomic rows and the initial conditions with their values' derivatives on the positions,
 * then all rows and the conditions with rates on the rates.  free: 2 f flags (NULL: every entry
 * may change).  Returns the largest remaining residual.  (The projections during the run:
 * project_columns.) */
static double make_consistent(mbs_sens *S, double t, const double *x, double *s, int j,
                              const unsigned char *free)
{
    mbs_form *fm = S->form;
    double worst = 0.0, r;
    int level, i, k, nrow, nfree;
    for (level = 0; level < 2; level++) {
        double *v = s + level * F;
        condition_tangents(S, t, x, s, j);
        nrow = 0;
        for (i = 0; i < (level == 0 ? NH : NC); i++, nrow++) {
            memcpy(S->G + nrow * F, S->cs + NH + i * F, sizeof(double) * F);
            S->rhs[nrow] = -S->tout[(level == 0 ? T_DC : T_DV) + i];
        }
        for (i = 0; i < NIC; i++) {
            const int is_value = S->what[j] == MBS_SENS_IC_VALUE, is_rate = S->what[j] == MBS_SENS_IC_RATE;
            if (level == 1 && !mbs_ic_has_rate[i])
                continue;
            memcpy(S->G + nrow * F, S->ie + NIC + i * F, sizeof(double) * F);
            S->rhs[nrow] = -S->tout[(level ? T_DEV : T_DE) + i] +
                           ((level ? is_rate : is_value) && S->index[j] == i ? 1.0 : 0.0);
            nrow++;
        }
        if (nrow == 0)
            continue;
        /* the rows G v = G v_now + rhs: the change of v that cancels the tangent's residual */
        for (i = 0; i < nrow; i++) {
            double gv = 0.0;
            for (k = 0; k < F; k++)
                gv += S->G[i * F + k] * v[k];
            S->rhs[i] += gv;
        }
        nfree = 0;
        for (k = 0; k < F; k++)
            if (free == NULL || free[level * F + k])
                S->free_idx[nfree++] = k;
        r = mbs_form_least_change(fm, nrow, S->G, S->rhs, S->free_idx, nfree, v);
        if (r < 0.0)
            return HUGE_VAL;
        if (r > worst)
            worst = r;
    }
    return worst;
}

/* c, C, b' and e, E at the state (for the consistency rows). */
static void rows_at(mbs_sens *S, double t, const double *x)
{
    mbs_form *fm = S->form;
    if (NC > 0)
        fm->constraints(t, x, x + F, fm->prm, fm->u, fm->tp, S->cs);
    if (NIC > 0 && fm->initial_conditions != NULL)
        fm->initial_conditions(t, x, x + F, fm->prm, fm->u, fm->tp, S->ie);
}

/* The projection of the sensitivities (all columns at once, every entry free): on the positions
 * C_h s_y + dc = 0, then with the new s_y on the rates C s_y' + dV = 0, each by the least change. */
static int project_columns(mbs_sens *S, double t, double *X)
{
    const mbs_form *fm = S->form;
    int level, j, i;
    for (level = 0; level < 2; level++) {
        const int nrow = level == 0 ? NH : NC;
        if (nrow == 0)
            continue;
        memcpy(S->zall + Z_A, S->a0, sizeof(double) * F); /* c and V read neither a nor lambda */
        for (j = 0; j < S->np; j++)
            direction(S, X + NX * (1 + j), j, S->zall + Z_DIR + j * D_SIZE);
        mbs_sens_tangent(t, X, X + F, fm->prm, fm->u, fm->tp, S->zall, S->np, S->tall);
        for (j = 0; j < S->np; j++) { /* rhs_j = C s_j - d(row)_j: the rows the change must meet */
            const double *v = X + NX * (1 + j) + level * F, *d = S->tall + j * T_SIZE + (level ? T_DV : T_DC);
            for (i = 0; i < nrow; i++) {
                double g = -d[i];
                int k;
                for (k = 0; k < F; k++)
                    g += S->cs[NH + i * F + k] * v[k];
                S->prow[j * nrow + i] = g;
            }
        }
        if (mbs_form_least_change_many(S->form, nrow, S->cs + NH, S->np, S->prow, X + NX + level * F,
                                       NX) < 0.0)
            return 1;
    }
    return 0;
}

int mbs_sens_project(void *ctx, double t, double *X)
{
    mbs_sens *S = (mbs_sens *)ctx;
    if (mbs_form_project(S->form, t, X) != 0) {
        snprintf(S->msg, sizeof S->msg, "%s", S->form->message);
        return 1;
    }
    if (S->np == 0)
        return 0;
    if (mbs_inst_inputs_at(S->inst, t) != MBS_OK) {
        snprintf(S->msg, sizeof S->msg, "%s", mbs_inst_message(S->inst));
        return 1;
    }
    rows_at(S, t, X);
    if (project_columns(S, t, X) != 0) {
        snprintf(S->msg, sizeof S->msg, "the sensitivities cannot be projected at t=%.9g", t);
        return 1;
    }
    return 0;
}

int mbs_sens_jac(void *ctx, double t, const double *X, const double *fX, double *J)
{
    mbs_sens *S = (mbs_sens *)ctx;
    const int n = mbs_sens_size(S);
    int i, k, b;
    memset(J, 0, sizeof(double) * (size_t)n * (size_t)n);
    memcpy(S->xs, X, sizeof S->xs);
    for (k = 0; k < NX; k++) {
        const double d = sqrt(2.2e-16 * fmax(1e-5, fabs(X[k])));
        S->xs[k] = X[k] + d;
        if (prepare(S, t, S->xs) != 0)
            return 1;
        S->xs[k] = X[k];
        for (i = 0; i < NX; i++) {
            const double v = (S->xdot[i] - fX[i]) / d;
            for (b = 0; b <= S->np; b++)
                J[(size_t)(b * NX + i) * (size_t)n + (size_t)(b * NX + k)] = v;
        }
    }
    return 0;
}

int mbs_sens_initial(mbs_sens *S, double t, double *X)
{
    const unsigned char *held = mbs_inst_held(S->inst);
    unsigned char free[NX];
    int j, k;
    memset(X + NX, 0, sizeof(double) * (size_t)(mbs_sens_size(S) - NX));
    if (prepare(S, t, X) != 0)
        return 1;
    rows_at(S, t, X);
    for (k = 0; k < NX; k++)
        free[k] = (unsigned char)!held[k];
    for (j = 0; j < S->np; j++) {
        double *s = X + NX * (1 + j), s0[NX];
        if (S->what[j] == MBS_SENS_POSITION)
            s[S->index[j]] = 1.0;
        else if (S->what[j] == MBS_SENS_RATE)
            s[F + S->index[j]] = 1.0;
        memcpy(s0, s, sizeof s0);
        if (make_consistent(S, t, X, s, j, free) > 1e-9) { /* the held entries cannot stay */
            memcpy(s, s0, sizeof s0);
            if (make_consistent(S, t, X, s, j, NULL) > 1e-9) {
                snprintf(S->msg, sizeof S->msg, "the initial sensitivities of parameter %d cannot "
                         "satisfy the constraints' derivatives (a singular start?)", j);
                return 1;
            }
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- the direct method */

/* Row k of rec, srec and qrec at the augmented state X (time t). */
static int record(mbs_sens *S, int rec_flags, double t, double *X, double *row, double *srow, double *qrow)
{
    const size_t w = mbs_sens_width();
    int j, i;
    if (mbs_inst_set_state(S->inst, t, X) != MBS_OK || mbs_inst_record(S->inst, rec_flags, row) != MBS_OK) {
        snprintf(S->msg, sizeof S->msg, "%s", mbs_inst_message(S->inst));
        return 1;
    }
    if (mbs_sens_rhs_lambda(S, t, X, S->Xd) != 0)
        return 1;
    mbs_sens_output_tangents(S, t, X);
    for (j = 0; j < S->np; j++) {
        double *out = srow + (size_t)j * w;
        for (i = 0; i < SIG_COUNT; i++)
            out[i] = mbs_sens_signal_tangent(S, i, X, j);
    }
    for (i = 0; i < S->nq * (1 + S->np); i++) /* q, then dq/dp_j per column */
        qrow[i] = X[NX * (1 + S->np) + i];
    return 0;
}

int mbs_sens_run(mbs_instance *inst, int np, const int *what, const int *index, int nq, const int *qsig,
                 int error_control, const double *grid, size_t n, double *rec, size_t stride,
                 int record_flags, double *srec, double *qrec, long *stats, int (*tick)(void *ctx, double t),
                 void *ctx, size_t *reached)
{
    mbs_sens S;
    mbs_sens_stepper I;
    double rtol, atol, hmax, *X = NULL, *Xk = NULL;
    const size_t w = mbs_sens_width();
    int method, rc = MBS_ERROR, step, nx;
    size_t k;
    *reached = 0;
    memset(stats, 0, 4 * sizeof(long));
    memset(&I, 0, sizeof I);
    method = mbs_inst_start_method(inst, &rtol, &atol, &hmax);
    if (mbs_sens_init(&S, inst, np, what, index, nq, qsig) != 0)
        goto done;
    nx = mbs_sens_size(&S);
    X = (double *)calloc((size_t)nx, sizeof(double));
    Xk = (double *)calloc((size_t)nx, sizeof(double));
    if (X == NULL || Xk == NULL) {
        snprintf(S.msg, sizeof S.msg, "out of memory for %d sensitivities", np);
        goto done;
    }
    if (mbs_sens_stepper_init(&I, method, nx, rtol, atol, hmax, S.msg, sizeof S.msg) != 0)
        goto done;
    if (error_control == MBS_SENS_ERROR_STATE)
        I.st->nerr = NX;
    {
        const mbs_problem pb = {mbs_sens_rhs, method == MBS_METHOD_STIFF ? mbs_sens_jac : NULL,
                                NC > 0 && mbs_form_projects(S.form->kind) ? mbs_sens_project : NULL, &S, NULL};
        const double t0 = mbs_inst_time(inst);
        memcpy(X, mbs_inst_state(inst), sizeof(double) * NX);
        if (n > 0 && fabs(grid[0] - t0) > 1e-12 * (1.0 + fabs(t0))) {
            snprintf(S.msg, sizeof S.msg, "the grid starts at %.17g, the instance is at %.17g", grid[0], t0);
            goto done;
        }
        if (mbs_sens_initial(&S, t0, X) != 0)
            goto done;
        for (k = 0; k < n; k++) {
            if (k > 0) {
                const double t_stop = method == MBS_METHOD_STIFF ? grid[k] : grid[n - 1];
                S.msg[0] = '\0';
                step = mbs_stepper_advance_dense(I.st, I.meth, &pb, t0, X, grid[k], t_stop,
                                                 MBS_MAX_STEPS_PER_CALL, Xk);
                if (step == MBS_STEP_OK && pb.project != NULL && pb.project(&S, grid[k], Xk) != 0)
                    step = MBS_STEP_EPROJECT;
                if (step != MBS_STEP_OK) {
                    char cause[700];
                    snprintf(cause, sizeof cause, "%s", S.msg);
                    snprintf(S.msg, sizeof S.msg, "integration with sensitivities to t=%.17g failed: "
                             "%s%s%.500s", grid[k], mbs_step_message(step), cause[0] ? ": " : "", cause);
                    goto done;
                }
            } else {
                memcpy(Xk, X, sizeof(double) * (size_t)nx);
            }
            if (record(&S, record_flags, grid[k], Xk, rec + k * stride, srec + k * (size_t)np * w,
                       qrec + k * (size_t)(nq * (1 + np))) != 0)
                goto done;
            *reached = k + 1;
            if (tick != NULL && tick(ctx, grid[k]) != 0) {
                snprintf(S.msg, sizeof S.msg, "stopped at t=%.17g", grid[k]);
                goto done;
            }
        }
        rc = MBS_OK;
    }
done:
    mbs_sens_stepper_stats(&I, stats);
    if (rc != MBS_OK)
        mbs_inst_fail(inst, S.msg);
    mbs_sens_stepper_free(&I);
    mbs_sens_free(&S);
    free(X);
    free(Xk);
    return rc;
}

#else /* built without the sensitivity functions */

int mbs_sens_available(void) { return 0; }

size_t mbs_sens_width(void) { return 0; }

int mbs_sens_run(mbs_instance *inst, int np, const int *what, const int *index, int nq, const int *qsig,
                 int error_control, const double *grid, size_t n, double *rec, size_t stride,
                 int record_flags, double *srec, double *qrec, long *stats, int (*tick)(void *ctx, double t),
                 void *ctx, size_t *reached)
{
    (void)np;
    (void)what;
    (void)index;
    (void)nq;
    (void)qsig;
    (void)error_control;
    (void)grid;
    (void)n;
    (void)rec;
    (void)stride;
    (void)record_flags;
    (void)srec;
    (void)qrec;
    (void)stats;
    (void)tick;
    (void)ctx;
    *reached = 0;
    return mbs_inst_fail(inst, "this build of the model has no sensitivity functions");
}

#endif
