/*
 * mbs_sensitivity.c -- forward sensitivities of a run (see mbs_sensitivity.h for the equations).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs_dop853.h"
#include "mbs_model.h"
#include "mbs_radau.h"
#include "mbs_rkstab.h"
#include "mbs_sensitivity.h"
#include "mbs_stepper.h"

#define F MBS_F
#define NX (2 * MBS_F)
#define NC MBS_M
#define NH MBS_MH
#define NIC MBS_NIC

#if MBS_HAS_SENS

int mbs_sens_available(void) { return 1; }

size_t mbs_sens_width(void) { return (size_t)(NX + NC + MBS_NOUT_EXPR); }

/* offsets into the output of mbs_sens_tangent: dR, dG, dc, dV, de, d(E y') */
#define T_DR 0
#define T_DG (T_DR + F)
#define T_DC (T_DG + NC)
#define T_DV (T_DC + NH)
#define T_DE (T_DV + NC)
#define T_DEV (T_DE + NIC)
#define T_SIZE (T_DEV + NIC)
/* its argument z: a, lambda, then per direction dy, dy', dp */
#define Z_A 0
#define Z_L (Z_A + F)
#define Z_DIR (Z_L + NC)
#define D_SIZE (NX + MBS_NPRM)
#define Z_SIZE (Z_DIR + D_SIZE)
/* rows of the consistency conditions: [C_h; E] and [C; E_r] */
#define ROWS (NC + NIC)

typedef struct {
    mbs_instance *inst;
    mbs_form *form;
    int np;
    const int *what, *index;
    double *H, *B, *A, *L; /* np x f, np x m, np x f, np x m: the linear systems, their solutions */
    double *Xd;            /* 2 f (1 + np): X' where only S->L is wanted */
    double *zall, *tall;   /* the tangents of all columns at once: z, out */
    double xdot[NX], lam[MBS_ONE(NC)], z[MBS_ONE(Z_SIZE)], tout[MBS_ONE(T_SIZE)];
    double cs[MBS_ONE(NH + NC * F + NC)], ie[MBS_ONE(NIC + NIC * F)];
    double G[MBS_ONE(ROWS * F)], rhs[MBS_ONE(ROWS)], xs[NX], f1[NX];
    int free_idx[MBS_ONE(F)];
    char msg[700];
} sens;

/* the constant column j differentiates by (its index), or -1 */
static int constant_of(const sens *S, int j)
{
    return S->what[j] == MBS_SENS_CONSTANT ? S->index[j] : -1;
}

/* Inputs and time parameters at t, and the state's x' into S->xdot (the state's formulation). */
static int prepare(sens *S, double t, const double *x)
{
    if (mbs_inst_rhs(S->inst, t, x, NULL, NULL, S->xdot, NULL) != MBS_OK) {
        snprintf(S->msg, sizeof S->msg, "%s", mbs_inst_message(S->inst));
        return 1;
    }
    return 0;
}

/* Direction j of the tangents into d (D_SIZE): s (2 f) and the unit vector of its constant. */
static void direction(const sens *S, const double *s, int j, double *d)
{
    const int k = constant_of(S, j);
    int i;
    memcpy(d, s, sizeof(double) * NX);
    for (i = 0; i < MBS_NPRM; i++)
        d[NX + i] = i == k ? 1.0 : 0.0;
}

/* The tangents of R, G, c, V, e, E y' along s (2 f) and the column's constant, at a, lambda. */
static void tangent(sens *S, double t, const double *x, const double *a, const double *lam,
                    const double *s, int j)
{
    int i;
    memcpy(S->z + Z_A, a, sizeof(double) * F);
    for (i = 0; i < NC; i++)
        S->z[Z_L + i] = lam[i];
    direction(S, s, j, S->z + Z_DIR);
    mbs_sens_tangent(t, x, x + F, S->form->prm, S->form->u, S->form->tp, S->z, 1, S->tout);
}

/* The sensitivity systems' right-hand sides at the state's y'' = a, lambda (mbs_form_kkt's fill):
 * h_j = -dR, b_j = dG (+ the Baumgarte terms 2 alpha dV + beta^2 dc) along column j. */
typedef struct {
    sens *S;
    double t;
    const double *X;
} fill_ctx;

static void fill_rhs(void *ctx, const double *a, const double *lam, double *H, double *B)
{
    const fill_ctx *c = (const fill_ctx *)ctx;
    sens *S = c->S;
    const mbs_form *fm = S->form;
    const int baumgarte = fm->kind == MBS_FORM_BAUMGARTE || fm->kind == MBS_FORM_DAE;
    int j, i;
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

/* X' of the augmented system: the state's x' by its formulation, then s_j' = [s_y', sigma_j]; the
 * multipliers' sensitivities are left in S->L. */
static int aug_rhs(void *ctx, double t, const double *X, double *Xdot)
{
    sens *S = (sens *)ctx;
    fill_ctx c;
    int j;
    if (prepare(S, t, X) != 0)
        return 1;
    memcpy(Xdot, S->xdot, sizeof(double) * NX);
    c.S = S;
    c.t = t;
    c.X = X;
    if (mbs_form_kkt(S->form, t, X, S->np, fill_rhs, &c, S->H, S->B, S->A, S->L) != 0) {
        snprintf(S->msg, sizeof S->msg, "%s", S->form->message);
        return 1;
    }
    for (j = 0; j < S->np; j++) {
        double *sd = Xdot + NX * (1 + j);
        memcpy(sd, X + NX * (1 + j) + F, sizeof(double) * F);
        memcpy(sd + F, S->A + j * F, sizeof(double) * F);
    }
    return 0;
}

/* Make column j's s = [s_y, s_y'] consistent by the least change of its free entries: the
 * holonomic rows (and at the start the initial conditions with their values' derivatives) on
 * the positions, then all rows (and at the start the conditions with rates) on the rates.  free:
 * 2 f flags (NULL: every entry may change).  Returns the largest remaining residual. */
static double make_consistent(sens *S, double t, const double *x, double *s, int j, int start,
                              const unsigned char *free)
{
    mbs_form *fm = S->form;
    double worst = 0.0, r;
    int level, i, k, nrow, nfree;
    for (level = 0; level < 2; level++) {
        double *v = s + level * F;
        tangent(S, t, x, S->xdot + F, S->lam, s, j); /* c, V, e, E y' do not read a, lambda */
        nrow = 0;
        if (level == 0) {
            for (i = 0; i < NH; i++, nrow++) {
                memcpy(S->G + nrow * F, S->cs + NH + i * F, sizeof(double) * F);
                S->rhs[nrow] = -S->tout[T_DC + i];
            }
        } else {
            for (i = 0; i < NC; i++, nrow++) {
                memcpy(S->G + nrow * F, S->cs + NH + i * F, sizeof(double) * F);
                S->rhs[nrow] = -S->tout[T_DV + i];
            }
        }
        for (i = 0; start && i < NIC; i++) {
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
static void rows_at(sens *S, double t, const double *x)
{
    mbs_form *fm = S->form;
    if (NC > 0)
        fm->constraints(t, x, x + F, fm->prm, fm->u, fm->tp, S->cs);
    if (NIC > 0 && fm->initial_conditions != NULL)
        fm->initial_conditions(t, x, x + F, fm->prm, fm->u, fm->tp, S->ie);
}

/* The projection of the augmented state: the state's, then each column's (differentiated). */
static int aug_project(void *ctx, double t, double *X)
{
    sens *S = (sens *)ctx;
    int j;
    if (mbs_form_project(S->form, t, X) != 0) {
        snprintf(S->msg, sizeof S->msg, "%s", S->form->message);
        return 1;
    }
    if (prepare(S, t, X) != 0)
        return 1;
    rows_at(S, t, X);
    for (j = 0; j < S->np; j++)
        if (!(make_consistent(S, t, X, X + NX * (1 + j), j, 0, NULL) < HUGE_VAL)) {
            snprintf(S->msg, sizeof S->msg, "the sensitivities cannot be projected at t=%.9g", t);
            return 1;
        }
    return 0;
}

/* The stiff method's Newton matrix: the state's Jacobian (forward differences) in each block. */
static int aug_jac(void *ctx, double t, const double *X, const double *fX, double *J)
{
    sens *S = (sens *)ctx;
    const int n = NX * (1 + S->np);
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

/* Column j's start: the unit direction of an initial value, then consistent. */
static int initial_sensitivities(sens *S, double t, double *X)
{
    const unsigned char *held = mbs_inst_held(S->inst);
    unsigned char free[NX];
    int j, k;
    if (prepare(S, t, X) != 0)
        return 1;
    rows_at(S, t, X);
    for (k = 0; k < NX; k++)
        free[k] = (unsigned char)!held[k];
    for (j = 0; j < S->np; j++) {
        double *s = X + NX * (1 + j), s0[NX];
        memset(s, 0, sizeof(double) * NX);
        if (S->what[j] == MBS_SENS_POSITION)
            s[S->index[j]] = 1.0;
        else if (S->what[j] == MBS_SENS_RATE)
            s[F + S->index[j]] = 1.0;
        memcpy(s0, s, sizeof s0);
        if (make_consistent(S, t, X, s, j, 1, free) > 1e-9) { /* the held entries cannot stay */
            memcpy(s, s0, sizeof s0);
            if (make_consistent(S, t, X, s, j, 1, NULL) > 1e-9) {
                snprintf(S->msg, sizeof S->msg, "the initial sensitivities of parameter %d cannot "
                         "satisfy the constraints' derivatives (a singular start?)", j);
                return 1;
            }
        }
    }
    return 0;
}

/* Row k of rec and srec at the augmented state X (time t). */
static int record(sens *S, int rec_flags, double t, double *X, double *row, double *srow)
{
    const size_t w = mbs_sens_width();
    int j, i;
    if (mbs_inst_set_state(S->inst, t, X) != MBS_OK || mbs_inst_record(S->inst, rec_flags, row) != MBS_OK) {
        snprintf(S->msg, sizeof S->msg, "%s", mbs_inst_message(S->inst));
        return 1;
    }
    if (aug_rhs(S, t, X, S->Xd) != 0)
        return 1;
    for (j = 0; j < S->np; j++) {
        double *out = srow + (size_t)j * w;
        const double *s = X + NX * (1 + j);
        memcpy(out, s, sizeof(double) * NX);
        for (i = 0; i < NC; i++)
            out[NX + i] = S->L[j * NC + i];
#if MBS_NOUT_EXPR > 0
        {
            double zz[D_SIZE];
            direction(S, s, j, zz);
            mbs_sens_outputs(t, X, X + F, S->form->prm, S->form->u, S->form->tp, zz, 1, out + NX + NC);
        }
#endif
    }
    return 0;
}

int mbs_sens_run(mbs_instance *inst, int np, const int *what, const int *index, int error_control,
                 const double *grid, size_t n, double *rec, size_t stride, int record_flags, double *srec,
                 long *stats, int (*tick)(void *ctx, double t), void *ctx, size_t *reached)
{
    const int nx = NX * (1 + np);
    const size_t w = mbs_sens_width();
    sens *S = (sens *)calloc(1, sizeof(sens));
    double rtol, atol, hmax, *X = NULL, *Xk = NULL, *work = NULL;
    int *iwork = NULL, method, rc = MBS_ERROR, step;
    mbs_stepper rk;
    mbs_dop853 dp;
    mbs_radau rd;
    mbs_stepper *st;
    const mbs_step_method *meth;
    size_t k;
    *reached = 0;
    memset(stats, 0, 4 * sizeof(long));
    if (S == NULL)
        return MBS_ERROR;
    S->inst = inst;
    S->form = mbs_inst_form(inst);
    S->np = np;
    S->what = what;
    S->index = index;
    S->H = (double *)calloc((size_t)(np * F + 1), sizeof(double));
    S->A = (double *)calloc((size_t)(np * F + 1), sizeof(double));
    S->B = (double *)calloc((size_t)(np * MBS_ONE(NC) + 1), sizeof(double));
    S->L = (double *)calloc((size_t)(np * MBS_ONE(NC) + 1), sizeof(double));
    S->Xd = (double *)calloc((size_t)nx, sizeof(double));
    S->zall = (double *)calloc((size_t)(Z_DIR + np * D_SIZE), sizeof(double));
    S->tall = (double *)calloc((size_t)(np * T_SIZE + 1), sizeof(double));
    X = (double *)calloc((size_t)nx, sizeof(double));
    Xk = (double *)calloc((size_t)nx, sizeof(double));
    method = mbs_inst_start_method(inst, &rtol, &atol, &hmax);
    if (hmax <= 0.0)
        hmax = INFINITY;
    meth = method == MBS_METHOD_STIFF ? &mbs_radau_method
           : method == MBS_METHOD_DOP853 ? &mbs_dop853_method : &mbs_rkstab_method;
    work = (double *)calloc(method == MBS_METHOD_STIFF ? (size_t)MBS_RADAU_WORK_SIZE((size_t)nx)
                            : method == MBS_METHOD_DOP853 ? (size_t)MBS_DOP853_WORK_SIZE(nx)
                                                          : (size_t)MBS_RKSTAB_WORK_SIZE(nx),
                            sizeof(double));
    iwork = (int *)calloc((size_t)MBS_RADAU_IWORK_SIZE(nx), sizeof(int));
    if (S->H == NULL || S->A == NULL || S->B == NULL || S->L == NULL || S->Xd == NULL || S->zall == NULL || S->tall == NULL || X == NULL || Xk == NULL ||
        work == NULL || iwork == NULL) {
        snprintf(S->msg, sizeof S->msg, "out of memory for %d sensitivities", np);
        goto done;
    }
    memset(&rk, 0, sizeof rk);
    memset(&dp, 0, sizeof dp);
    memset(&rd, 0, sizeof rd);
    step = method == MBS_METHOD_STIFF    ? mbs_radau_init(&rd, nx, work, iwork, rtol, atol, hmax)
           : method == MBS_METHOD_DOP853 ? mbs_dop853_init(&dp, nx, work, rtol, atol, hmax)
                                         : mbs_rkstab_init(&rk, nx, work, rtol, atol, hmax);
    st = method == MBS_METHOD_STIFF ? &rd.st : method == MBS_METHOD_DOP853 ? &dp.st : &rk;
    if (error_control == MBS_SENS_ERROR_STATE)
        st->nerr = NX;
    if (step != MBS_STEP_OK) {
        snprintf(S->msg, sizeof S->msg, "the integrator refused its settings: %s", mbs_step_message(step));
        goto done;
    }
    {
        const mbs_problem pb = {aug_rhs, method == MBS_METHOD_STIFF ? aug_jac : NULL,
                                NC > 0 && mbs_form_projects(S->form->kind) ? aug_project : NULL, S};
        const double t0 = mbs_inst_time(inst);
        memcpy(X, mbs_inst_state(inst), sizeof(double) * NX);
        if (n > 0 && fabs(grid[0] - t0) > 1e-12 * (1.0 + fabs(t0))) {
            snprintf(S->msg, sizeof S->msg, "the grid starts at %.17g, the instance is at %.17g", grid[0], t0);
            goto done;
        }
        if (initial_sensitivities(S, t0, X) != 0)
            goto done;
        for (k = 0; k < n; k++) {
            if (k > 0) {
                const double t_stop = method == MBS_METHOD_STIFF ? grid[k] : grid[n - 1];
                step = mbs_stepper_advance_dense(st, meth, &pb, t0, X, grid[k], t_stop,
                                                 MBS_MAX_STEPS_PER_CALL, Xk);
                if (step == MBS_STEP_OK && pb.project != NULL && pb.project(S, grid[k], Xk) != 0)
                    step = MBS_STEP_EPROJECT;
                if (step != MBS_STEP_OK) {
                    char cause[700];
                    snprintf(cause, sizeof cause, "%s", S->msg);
                    snprintf(S->msg, sizeof S->msg, "integration with sensitivities to t=%.17g failed: "
                             "%s%s%.500s", grid[k], mbs_step_message(step), cause[0] ? ": " : "", cause);
                    goto done;
                }
            } else {
                memcpy(Xk, X, sizeof(double) * (size_t)nx);
            }
            if (record(S, record_flags, grid[k], Xk, rec + k * stride, srec + k * (size_t)np * w) != 0)
                goto done;
            *reached = k + 1;
            if (tick != NULL && tick(ctx, grid[k]) != 0) {
                snprintf(S->msg, sizeof S->msg, "stopped at t=%.17g", grid[k]);
                goto done;
            }
        }
        rc = MBS_OK;
    }
done:
    stats[0] = rk.nfev + dp.st.nfev + rd.st.nfev;
    stats[1] = rk.naccept + dp.st.naccept + rd.st.naccept;
    stats[2] = rk.nreject + dp.st.nreject + rd.st.nreject;
    stats[3] = rk.nproj + dp.st.nproj + rd.st.nproj;
    if (rc != MBS_OK)
        mbs_inst_fail(inst, S->msg);
    free(S->H);
    free(S->A);
    free(S->B);
    free(S->L);
    free(S->Xd);
    free(S->zall);
    free(S->tall);
    free(S);
    free(X);
    free(Xk);
    free(work);
    free(iwork);
    return rc;
}

#else /* built without the sensitivity functions */

int mbs_sens_available(void) { return 0; }

size_t mbs_sens_width(void) { return 0; }

int mbs_sens_run(mbs_instance *inst, int np, const int *what, const int *index, int error_control,
                 const double *grid, size_t n, double *rec, size_t stride, int record_flags, double *srec,
                 long *stats, int (*tick)(void *ctx, double t), void *ctx, size_t *reached)
{
    (void)error_control;
    (void)np;
    (void)what;
    (void)index;
    (void)grid;
    (void)n;
    (void)rec;
    (void)stride;
    (void)record_flags;
    (void)srec;
    (void)stats;
    (void)tick;
    (void)ctx;
    *reached = 0;
    mbs_inst_fail(inst, "this build of the model has no sensitivity functions");
    return MBS_ERROR;
}

#endif
