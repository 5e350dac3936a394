/*
 * mbs_adjoint.c -- gradients of metrics by the adjoint method (see mbs_sensitivity.h, mbs_adj_run).
 *
 * Forward: the state alone (with the integrals of the integral metrics' signals), its steps kept
 * as their continuous extension sampled at NODES points each.  Backward, in tau = T - t, for every
 * metric m at once, lambda_m = (mu_y, mu_v) (2 f) and g_m (np):
 *
 *   d mu_y / dtau = a_y^T mu_v + h_y,   d mu_v / dtau = mu_y + a_y'^T mu_v + h_y',   d g / dtau = a_p^T mu_v + h_p
 *
 * where y'' = a(y, y', p) solves M a - C^T lambda = q - k, C a = -b'' (+ the Baumgarte terms).  With
 * K [da; dlambda] = -[R_x; G_x] dx (R, G of mbsfmu.equations.sensitivity_equations), a_x^T mu_v =
 * -(R_x^T nu1 + G_x^T nu2) where M nu1 + C^T nu2 = mu_v, C nu1 = 0: nu1, -nu2 are the y'' and lambda
 * of the accelerations' linear system with h = mu_v, b = 0 (mbs_form_kkt), and the bracket is the
 * adjoint code of the equations (mbs_sens_adjoint) with the weights wR = nu1, wG = nu2 (and wV =
 * 2 alpha nu2, wc = beta^2 nu2 for the Baumgarte terms).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs_sens_common.h"

#if MBS_HAS_SENS

#define NODES 8 /* samples per step: the continuous extensions are polynomials of degree <= 7 */
/* the forward run's tolerance relative to the run's: the adjoint's gradient is taken along the
 * forward trajectory, and is as accurate as it (a tenth: about the direct method's accuracy) */
#define ADJ_FORWARD_TOL 0.1

/* The forward trajectory: per step its start, its size and NODES samples of x (2 f each). */
typedef struct {
    double *t0, *h, *x;
    size_t n, cap;
} trajectory;

static int keep_step(trajectory *T, mbs_sens_stepper *I, const mbs_problem *pb, double *buf)
{
    const double t0 = I->st->t_prev, h = I->st->h_dense;
    int k;
    if (T->n == T->cap) {
        size_t cap = T->cap ? 2 * T->cap : 256;
        double *a = (double *)realloc(T->t0, cap * sizeof(double));
        double *b = a ? (double *)realloc(T->h, cap * sizeof(double)) : NULL;
        double *c = b ? (double *)realloc(T->x, cap * NODES * NX * sizeof(double)) : NULL;
        if (a) T->t0 = a;
        if (b) T->h = b;
        if (c) T->x = c;
        if (!a || !b || !c)
            return 1;
        T->cap = cap;
    }
    T->t0[T->n] = t0;
    T->h[T->n] = h;
    for (k = 0; k < NODES; k++) {
        const double t = k == NODES - 1 ? t0 + h : t0 + h * k / (NODES - 1.0);
        if (I->meth->interpolate(I->st, pb, t, buf) != MBS_STEP_OK)
            return 1;
        memcpy(T->x + (T->n * NODES + (size_t)k) * NX, buf, sizeof(double) * NX);
    }
    T->n++;
    return 0;
}

/* x(t) from the step that contains t: the polynomial through its NODES samples (barycentric form
 * on equidistant nodes, weights (-1)^k binom(NODES - 1, k)). */
static void state_at(const trajectory *T, double t, double *x)
{
    static const double w[NODES] = {1, -7, 21, -35, 35, -21, 7, -1};
    size_t lo = 0, hi = T->n - 1;
    const double *X;
    double th, num, den, c[NODES];
    int k, i;
    while (lo < hi) { /* the last step starting at or before t */
        size_t mid = (lo + hi + 1) / 2;
        if (T->t0[mid] <= t) lo = mid;
        else hi = mid - 1;
    }
    X = T->x + lo * NODES * NX;
    th = (t - T->t0[lo]) / T->h[lo] * (NODES - 1);
    for (k = 0; k < NODES; k++)
        if (th == (double)k) {
            memcpy(x, X + (size_t)k * NX, sizeof(double) * NX);
            return;
        }
    den = 0.0;
    for (k = 0; k < NODES; k++) {
        c[k] = w[k] / (th - k);
        den += c[k];
    }
    for (i = 0; i < NX; i++) {
        num = 0.0;
        for (k = 0; k < NODES; k++)
            num += c[k] * X[(size_t)k * NX + i];
        x[i] = num / den;
    }
}

/* The backward problem. */
typedef struct {
    mbs_sens S;          /* np = 0: the state's accelerations, multipliers, outputs */
    mbs_sens G;          /* np = 2 f + nprm unit columns: signal gradients by (x, p) */
    trajectory traj;
    double T;            /* the end of the run */
    int np, nm;
    const int *what, *index, *kind, *sig;
    int any_output;      /* an integral metric reads an output */
    double *mu_v;        /* nm x f: the right-hand sides of the transposed systems */
    double *zero_b, *nu1, *lam; /* nm x m, nm x f, nm x m */
    double *zadj, *oadj; /* the adjoint function's z and out */
    double *XG;          /* 2 f (1 + 2 f + nprm): the state and the unit columns */
    double *ident, *jout;/* the output tangents along unit directions */
    double x[NX];
    int gwhat[NX + MBS_ONE(MBS_NPRM)], gindex[NX + MBS_ONE(MBS_NPRM)];
} adjoint;

static void adj_fill(void *ctx, const double *a, const double *lam, double *h, double *b)
{
    adjoint *A = (adjoint *)ctx;
    (void)h;
    (void)b; /* set up before: h = mu_v, b = 0 */
    memcpy(A->S.a0, a, sizeof(double) * F);
    memcpy(A->S.lam0, lam, sizeof(double) * MBS_ONE(NC));
}

/* The gradient (D_SIZE: by y, y', then the constants) of signal sig at the state x (time t);
 * prepared: the inputs and time parameters at t. */
static int signal_gradient(adjoint *A, int sig, double t, const double *x, double *g)
{
    int d;
    memset(g, 0, sizeof(double) * D_SIZE);
    if (sig < NX) {
        g[sig] = 1.0;
        return 0;
    }
    memcpy(A->XG, x, sizeof(double) * NX);
    if (sig >= SIG_OUT) {
#if NOUTX > 0
        mbs_sens_outputs(t, x, x + F, A->S.form->prm, A->S.form->u, A->S.form->tp, A->ident, D_SIZE, A->jout);
        for (d = 0; d < D_SIZE; d++)
            g[d] = A->jout[d * NOUTX + sig - SIG_OUT];
#endif
        return 0;
    }
    if (mbs_sens_rhs_lambda(&A->G, t, A->XG, A->G.Xd) != 0) { /* lambda's tangents along the unit columns */
        snprintf(A->S.msg, sizeof A->S.msg, "%s", A->G.msg);
        return 1;
    }
    for (d = 0; d < D_SIZE; d++)
        g[d] = A->G.L[d * NC + sig - SIG_LAMBDA];
    return 0;
}

/* The backward state Y: mu_m = (mu_y, mu_v) of each metric (2 f each), then g_m of each (np each):
 * the error test measures the mu (mbs_stepper.nerr), the g are integrals of them. */
#define MU(Y, m) ((Y) + (m) * NX)
#define GP(A, Y, m) ((Y) + (A)->nm * NX + (m) * (A)->np)
/* the weights of one metric in the adjoint function's z: wR (f), wG (m), wc (mh), wV (m) */
#define W_SIZE (F + 2 * NC + NH)

/* dmu_y = a_y^T mu_v + h_y, dmu_v = mu_y + a_y'^T mu_v + h_y', dg = a_p^T mu_v + h_p of metric m, from
 * abar = (a_y^T mu_v, a_y'^T mu_v, a_p^T mu_v) (sign +1) or its negative (sign -1). */
static int adj_derivatives(adjoint *A, double t, const double *Y, double *Yd, int m, const double *abar,
                           double sign)
{
    const double *mu = MU(Y, m), *ybar = abar, *ydbar = abar + F, *pbar = abar + NX;
    double *dmu = MU(Yd, m), *dg = GP(A, Yd, m), g[D_SIZE];
    int i, j;
    for (i = 0; i < F; i++) {
        dmu[i] = sign * ybar[i];
        dmu[F + i] = mu[i] + sign * ydbar[i];
    }
    for (j = 0; j < A->np; j++)
        dg[j] = A->what[j] == MBS_SENS_CONSTANT ? sign * pbar[A->index[j]] : 0.0;
    if (A->kind[m] == MBS_ADJ_INTEGRAL) { /* the running cost's h_x, h_p */
        if (signal_gradient(A, A->sig[m], t, A->x, g) != 0)
            return 1;
        for (i = 0; i < NX; i++)
            dmu[i] += g[i];
        for (j = 0; j < A->np; j++)
            if (A->what[j] == MBS_SENS_CONSTANT)
                dg[j] += g[NX + A->index[j]];
    }
    return 0;
}

/* The backward right-hand side of a tree on the articulated-body algorithm: mu_v . a by the
 * algorithm's adjoint code, for all metrics at once (x and the inputs at t are set). */
static int tree_rhs(adjoint *A, double t, const double *Y, double *Yd)
{
#if MBS_HAS_ABA
    const mbs_form *fm = A->S.form;
    int m;
#if MBS_TP_FUNCTION && MBS_NTP > 0
    mbs_time_parameters(t, fm->prm, fm->tp);
#endif
    for (m = 0; m < A->nm; m++)
        memcpy(A->zadj + m * F, MU(Y, m) + F, sizeof(double) * F);
    mbs_sens_tree_adjoint(t, A->x, A->x + F, fm->prm, fm->u, fm->tp, A->zadj, A->nm, A->oadj);
    for (m = 0; m < A->nm; m++)
        if (adj_derivatives(A, t, Y, Yd, m, A->oadj + m * D_SIZE, 1.0) != 0)
            return 1;
    return 0;
#else
    (void)A;
    (void)t;
    (void)Y;
    (void)Yd;
    return 1;
#endif
}

static int adj_rhs(void *ctx, double tau, const double *Y, double *Yd)
{
    adjoint *A = (adjoint *)ctx;
    mbs_form *fm = A->S.form;
    const int baumgarte = fm->kind == MBS_FORM_BAUMGARTE || fm->kind == MBS_FORM_DAE;
    const double t = A->T - tau;
    int m, i;
    state_at(&A->traj, t, A->x);
    if (mbs_inst_inputs_at(A->S.inst, t) != MBS_OK) {
        snprintf(A->S.msg, sizeof A->S.msg, "%s", mbs_inst_message(A->S.inst));
        return 1;
    }
    if (A->S.tree) /* a_x^T mu_v by the articulated-body algorithm's own adjoint code */
        return tree_rhs(A, t, Y, Yd);
    for (m = 0; m < A->nm; m++)
        memcpy(A->mu_v + m * F, MU(Y, m) + F, sizeof(double) * F);
    if (mbs_form_kkt(fm, t, A->x, A->nm, adj_fill, A, A->mu_v, A->zero_b, A->nu1, A->lam) != 0) {
        snprintf(A->S.msg, sizeof A->S.msg, "%s", fm->message);
        return 1;
    }
    /* z = [a, lambda, the weights of every metric]: nu1 on R, nu2 on G (and the Baumgarte terms) */
    memcpy(A->zadj, A->S.a0, sizeof(double) * F);
    for (i = 0; i < NC; i++)
        A->zadj[F + i] = A->S.lam0[i];
    for (m = 0; m < A->nm; m++) {
        double *w = A->zadj + F + NC + m * W_SIZE;
        memcpy(w, A->nu1 + m * F, sizeof(double) * F);
        for (i = 0; i < NC; i++) {
            const double nu2 = -A->lam[m * NC + i];
            w[F + i] = nu2;                                                /* wG */
            w[F + NC + NH + i] = baumgarte ? 2.0 * fm->alpha * nu2 : 0.0;  /* wV */
            if (i < NH)
                w[F + NC + i] = baumgarte ? fm->beta * fm->beta * nu2 : 0.0; /* wc */
        }
    }
    mbs_sens_adjoint(t, A->x, A->x + F, fm->prm, fm->u, fm->tp, A->zadj, A->nm, A->oadj);
    for (m = 0; m < A->nm; m++) /* a_x^T mu_v = -(R_x^T nu1 + G_x^T nu2) */
        if (adj_derivatives(A, t, Y, Yd, m, A->oadj + m * D_SIZE, -1.0) != 0)
            return 1;
    return 0;
}

static int adj_alloc(adjoint *A)
{
    const int nm = A->nm, np = A->np;
    int d;
    A->mu_v = (double *)calloc((size_t)(nm * F + 1), sizeof(double));
    A->zero_b = (double *)calloc((size_t)(nm * NC + 1), sizeof(double));
    A->nu1 = (double *)calloc((size_t)(nm * F + 1), sizeof(double));
    A->lam = (double *)calloc((size_t)(nm * NC + 1), sizeof(double));
    A->zadj = (double *)calloc((size_t)(F + NC + nm * W_SIZE + 1), sizeof(double));
    A->oadj = (double *)calloc((size_t)(nm * D_SIZE + 1), sizeof(double));
    A->XG = (double *)calloc((size_t)(NX * (1 + D_SIZE)), sizeof(double));
    A->ident = (double *)calloc((size_t)(D_SIZE * D_SIZE), sizeof(double));
    A->jout = (double *)calloc((size_t)(D_SIZE * NOUTX + 1), sizeof(double));
    (void)np;
    if (!A->mu_v || !A->zero_b || !A->nu1 || !A->lam || !A->zadj || !A->oadj || !A->XG || !A->ident || !A->jout)
        return 1;
    for (d = 0; d < D_SIZE; d++) {
        A->ident[d * D_SIZE + d] = 1.0;
        A->gwhat[d] = d < F ? MBS_SENS_POSITION : d < NX ? MBS_SENS_RATE : MBS_SENS_CONSTANT;
        A->gindex[d] = d < F ? d : d < NX ? d - F : d - NX;
        if (d < NX)
            A->XG[NX * (1 + d) + d] = 1.0;
    }
    return 0;
}

static void adj_free(adjoint *A)
{
    free(A->mu_v);
    free(A->zero_b);
    free(A->nu1);
    free(A->lam);
    free(A->zadj);
    free(A->oadj);
    free(A->XG);
    free(A->ident);
    free(A->jout);
    free(A->traj.t0);
    free(A->traj.h);
    free(A->traj.x);
}

/* After each accepted forward step: keep it (its samples) and let the caller stop. */
typedef struct {
    adjoint *A;
    const mbs_problem *pb;
    double *buf;
    int (*tick)(void *, double);
    void *ctx;
    int stopped, nomem;
} keeper;

static int keep(void *ctx, mbs_stepper *s, const mbs_step_method *m)
{
    keeper *k = (keeper *)ctx;
    mbs_sens_stepper I;
    I.st = s;
    I.meth = m;
    if (keep_step(&k->A->traj, &I, k->pb, k->buf) != 0) {
        k->nomem = 1;
        return 1;
    }
    if (k->tick != NULL && k->tick(k->ctx, s->t) != 0) {
        k->stopped = 1;
        return 1;
    }
    return 0;
}

static int keep_rhs(void *ctx, double t, const double *x, double *xdot)
{
    return mbs_sens_rhs(((keeper *)ctx)->pb->ctx, t, x, xdot);
}

static int keep_project(void *ctx, double t, double *x)
{
    return mbs_sens_project(((keeper *)ctx)->pb->ctx, t, x);
}

static int keep_jac(void *ctx, double t, const double *x, const double *fx, double *J)
{
    return mbs_sens_jac(((keeper *)ctx)->pb->ctx, t, x, fx, J);
}

/* The forward run from the instance's state to t_end: the trajectory, x(T) and the integrals. */
static int forward(adjoint *A, mbs_sens *Q, int method, double rtol, double atol, double hmax, double *XQ,
                   long *stats, int (*tick)(void *, double), void *ctx)
{
    mbs_sens_stepper I;
    double t = mbs_inst_time(A->S.inst);
    double *buf = (double *)calloc((size_t)mbs_sens_size(Q), sizeof(double));
    int rc = 1, step;
    keeper k;
    memset(&I, 0, sizeof I);
    /* a tenth of the tolerance: the gradient is as accurate as the trajectory it is taken along */
    if (buf == NULL || mbs_sens_stepper_init(&I, method, mbs_sens_size(Q), ADJ_FORWARD_TOL * rtol,
                                             ADJ_FORWARD_TOL * atol, hmax, Q->msg, sizeof Q->msg) != 0)
        goto done;
    {
        /* the state's problem (for the trajectory's interpolation), and the same with the hook */
        const mbs_problem inner = {mbs_sens_rhs, method == MBS_METHOD_STIFF ? mbs_sens_jac : NULL,
                                   NC > 0 && mbs_form_projects(Q->form->kind) ? mbs_sens_project : NULL, Q, NULL};
        const mbs_problem pb = {keep_rhs, inner.jac ? keep_jac : NULL, inner.project ? keep_project : NULL, &k,
                                keep};
        k.A = A;
        k.pb = &inner;
        k.buf = buf;
        k.tick = tick;
        k.ctx = ctx;
        k.stopped = k.nomem = 0;
        memcpy(XQ, mbs_inst_state(A->S.inst), sizeof(double) * NX);
        Q->msg[0] = '\0';
        step = mbs_stepper_advance(I.st, I.meth, &pb, &t, XQ, A->T, MBS_MAX_STEPS_PER_CALL);
        if (step != MBS_STEP_OK) {
            char cause[700];
            snprintf(cause, sizeof cause, "%s", k.nomem ? "out of memory for the forward trajectory"
                                                 : k.stopped ? "stopped" : Q->msg);
            snprintf(Q->msg, sizeof Q->msg, "the forward run of the adjoint method failed at t=%.17g: "
                     "%s%s%.500s", t, k.stopped || k.nomem ? "" : mbs_step_message(step),
                     cause[0] && !(k.stopped || k.nomem) ? ": " : "", cause);
            goto done;
        }
        rc = 0;
    }
done:
    mbs_sens_stepper_stats(&I, stats);
    mbs_sens_stepper_free(&I);
    free(buf);
    return rc;
}

/* x(t) from the trajectory into A->x, and what the signals read there (in Q). */
static int signals_at(adjoint *A, mbs_sens *Q, double t)
{
    state_at(&A->traj, t, A->x);
    if (mbs_sens_rhs(Q, t, A->x, Q->Xd) != 0) {
        snprintf(A->S.msg, sizeof A->S.msg, "%s", Q->msg);
        return 1;
    }
#if NOUTX > 0
    mbs_outputs(t, A->x, A->x + F, Q->form->prm, Q->form->u, Q->form->tp, Q->outv);
#endif
    return 0;
}

/* The least-squares metrics' values: values[m] += sum_k w_k (s(t_k) - d_k)^2. */
static int point_values(adjoint *A, mbs_sens *Q, const int *npts, const double *pts, double *values)
{
    int m, k, off = 0;
    for (m = 0; m < A->nm; m++) {
        for (k = 0; k < npts[m]; k++) {
            const double *p = pts + 3 * (off + k); /* t, data, weight */
            double s;
            if (signals_at(A, Q, p[0]) != 0)
                return 1;
            s = mbs_sens_signal(Q, A->sig[m], A->x) - p[1];
            values[m] += p[2] * s * s;
        }
        off += npts[m];
    }
    return 0;
}

/* The jumps at the data time te (backward): for each point there, mu_m += 2 w (s - d) ds/dx and
 * the direct term 2 w (s - d) ds/dp into grad. */
static int point_jumps(adjoint *A, mbs_sens *Q, const int *npts, const double *pts, double te, double *Y,
                       double *grad)
{
    double g[D_SIZE];
    int m, k, i, j, off = 0;
    if (signals_at(A, Q, te) != 0)
        return 1;
    for (m = 0; m < A->nm; m++) {
        for (k = 0; k < npts[m]; k++) {
            const double *p = pts + 3 * (off + k);
            double c;
            if (p[0] != te)
                continue;
            c = 2.0 * p[2] * (mbs_sens_signal(Q, A->sig[m], A->x) - p[1]);
            if (signal_gradient(A, A->sig[m], te, A->x, g) != 0)
                return 1;
            for (i = 0; i < NX; i++)
                MU(Y, m)[i] += c * g[i];
            for (j = 0; j < A->np; j++)
                if (A->what[j] == MBS_SENS_CONSTANT)
                    grad[m * A->np + j] += c * g[NX + A->index[j]];
        }
        off += npts[m];
    }
    return 0;
}

static int by_time_descending(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

int mbs_adj_run(mbs_instance *inst, int np, const int *what, const int *index, int nm, const int *kind,
                const int *sig, const int *npts, const double *pts, double t_end, double *values, double *grad,
                long *stats, int (*tick)(void *ctx, double t), void *ctx)
{
    adjoint A;
    mbs_sens Q, P;
    mbs_sens_stepper I;
    double rtol, atol, hmax, *XQ = NULL, *X0 = NULL, *Y = NULL, *events = NULL, tau, g[D_SIZE];
    int *qsig = NULL, nq = 0, m, j, i, rc = MBS_ERROR, method, step, nev = 0, ntot = 0, e;
    const double t0 = mbs_inst_time(inst);
    memset(&A, 0, sizeof A);
    memset(&Q, 0, sizeof Q);
    memset(&P, 0, sizeof P);
    memset(&I, 0, sizeof I);
    memset(stats, 0, 8 * sizeof(long));
    method = mbs_inst_start_method(inst, &rtol, &atol, &hmax);
    A.T = t_end;
    A.np = np;
    A.nm = nm;
    A.what = what;
    A.index = index;
    A.kind = kind;
    A.sig = sig;
    qsig = (int *)calloc((size_t)nm + 1, sizeof(int));
    for (m = 0; qsig != NULL && m < nm; m++)
        if (kind[m] == MBS_ADJ_INTEGRAL)
            qsig[nq++] = sig[m];
    if (qsig == NULL || mbs_sens_init(&A.S, inst, 0, NULL, NULL, 0, NULL) != 0 ||
        mbs_sens_init(&Q, inst, 0, NULL, NULL, nq, qsig) != 0 || adj_alloc(&A) != 0) {
        snprintf(A.S.msg, sizeof A.S.msg, "out of memory for the adjoint method");
        goto done;
    }
    if (mbs_sens_init(&A.G, inst, D_SIZE, A.gwhat, A.gindex, 0, NULL) != 0 ||
        mbs_sens_init(&P, inst, np, what, index, 0, NULL) != 0) {
        snprintf(A.S.msg, sizeof A.S.msg, "out of memory for the adjoint method");
        goto done;
    }
    if (!(t_end > t0)) {
        snprintf(A.S.msg, sizeof A.S.msg, "t_end = %.17g is not after the start %.17g", t_end, t0);
        goto done;
    }
    /* the initial sensitivities s_j(t0), consistent */
    X0 = (double *)calloc((size_t)mbs_sens_size(&P), sizeof(double));
    XQ = (double *)calloc((size_t)mbs_sens_size(&Q), sizeof(double));
    Y = (double *)calloc((size_t)(nm * (NX + np) + 1), sizeof(double));
    if (X0 == NULL || XQ == NULL || Y == NULL) {
        snprintf(A.S.msg, sizeof A.S.msg, "out of memory for the adjoint method");
        goto done;
    }
    memcpy(X0, mbs_inst_state(inst), sizeof(double) * NX);
    if (mbs_sens_initial(&P, t0, X0) != 0) {
        snprintf(A.S.msg, sizeof A.S.msg, "%s", P.msg);
        goto done;
    }
    if (forward(&A, &Q, method, rtol, atol, hmax, XQ, stats, tick, ctx) != 0) {
        snprintf(A.S.msg, sizeof A.S.msg, "%s", Q.msg);
        goto done;
    }
    /* the values and the terminal conditions mu(T) = dphi/dx, with dphi/dp kept in grad */
    if (mbs_sens_rhs(&Q, t_end, XQ, Q.Xd) != 0) {
        snprintf(A.S.msg, sizeof A.S.msg, "%s", Q.msg);
        goto done;
    }
#if NOUTX > 0
    mbs_outputs(t_end, XQ, XQ + F, Q.form->prm, Q.form->u, Q.form->tp, Q.outv);
#endif
    for (m = 0, i = 0; m < nm; m++) {
        if (kind[m] == MBS_ADJ_INTEGRAL || kind[m] == MBS_ADJ_LEAST_SQUARES) {
            values[m] = kind[m] == MBS_ADJ_INTEGRAL ? XQ[NX + i++] : 0.0;
            for (j = 0; j < np; j++)
                grad[m * np + j] = 0.0;
            continue;
        }
        values[m] = mbs_sens_signal(&Q, sig[m], XQ);
        if (signal_gradient(&A, sig[m], t_end, XQ, g) != 0)
            goto done;
        memcpy(MU(Y, m), g, sizeof(double) * NX);
        for (j = 0; j < np; j++)
            grad[m * np + j] = what[j] == MBS_SENS_CONSTANT ? g[NX + index[j]] : 0.0;
    }
    /* the least-squares values, and their data times (descending, distinct) */
    for (m = 0; m < nm; m++)
        ntot += kind[m] == MBS_ADJ_LEAST_SQUARES ? npts[m] : 0;
    events = (double *)calloc((size_t)ntot + 1, sizeof(double));
    if (events == NULL) {
        snprintf(A.S.msg, sizeof A.S.msg, "out of memory for the adjoint method");
        goto done;
    }
    for (i = 0; i < ntot; i++) {
        if (!(pts[3 * i] >= t0 && pts[3 * i] <= t_end)) {
            snprintf(A.S.msg, sizeof A.S.msg, "data time %.17g lies outside the run [%.17g, %.17g]", pts[3 * i],
                     t0, t_end);
            goto done;
        }
        events[i] = pts[3 * i];
    }
    if (ntot > 0 && point_values(&A, &Q, npts, pts, values) != 0)
        goto done;
    qsort(events, (size_t)ntot, sizeof(double), by_time_descending);
    for (i = 0; i < ntot; i++)
        if (nev == 0 || events[i] < events[nev - 1])
            events[nev++] = events[i];
    /* backward from tau = 0 (t = T) to tau = T - t0, with the jumps at the data times */
    if (mbs_sens_stepper_init(&I, method, nm * (NX + np), rtol, atol, hmax, A.S.msg, sizeof A.S.msg) != 0)
        goto done;
    I.st->nerr = nm * NX; /* the g are quadratures of the mu: their error follows */
    {
        const mbs_problem pb = {adj_rhs, NULL, NULL, &A, NULL};
        tau = 0.0;
        A.S.msg[0] = '\0';
        for (e = 0; e <= nev; e++) {
            const double tau_e = e < nev ? t_end - events[e] : t_end - t0;
            step = tau_e > tau ? mbs_stepper_advance(I.st, I.meth, &pb, &tau, Y, tau_e, MBS_MAX_STEPS_PER_CALL)
                               : MBS_STEP_OK;
            if (step != MBS_STEP_OK) {
                char cause[700];
                snprintf(cause, sizeof cause, "%s", A.S.msg);
                snprintf(A.S.msg, sizeof A.S.msg, "the backward (adjoint) integration failed at t=%.17g: "
                         "%s%s%.500s", t_end - tau, mbs_step_message(step), cause[0] ? ": " : "", cause);
                goto done;
            }
            if (e < nev && point_jumps(&A, &Q, npts, pts, events[e], Y, grad) != 0)
                goto done;
            if (tick != NULL && tick(ctx, t_end - tau) != 0) {
                snprintf(A.S.msg, sizeof A.S.msg, "stopped at t=%.17g (backward)", t_end - tau);
                goto done;
            }
        }
    }
    /* dJ/dp_j = mu(t0) . s_j(t0) + g_j + dphi/dp_j */
    for (m = 0; m < nm; m++)
        for (j = 0; j < np; j++) {
            double d = GP(&A, Y, m)[j];
            for (i = 0; i < NX; i++)
                d += MU(Y, m)[i] * X0[NX * (1 + j) + i];
            grad[m * np + j] += d;
        }
    rc = MBS_OK;
done:
    mbs_sens_stepper_stats(&I, stats + 4);
    if (rc != MBS_OK)
        mbs_inst_fail(inst, A.S.msg);
    mbs_sens_stepper_free(&I);
    mbs_sens_free(&A.S);
    mbs_sens_free(&A.G);
    mbs_sens_free(&Q);
    mbs_sens_free(&P);
    adj_free(&A);
    free(qsig);
    free(XQ);
    free(X0);
    free(Y);
    free(events);
    return rc;
}

#else /* built without the sensitivity functions */

int mbs_adj_run(mbs_instance *inst, int np, const int *what, const int *index, int nm, const int *kind,
                const int *sig, const int *npts, const double *pts, double t_end, double *values, double *grad,
                long *stats, int (*tick)(void *ctx, double t), void *ctx)
{
    (void)npts;
    (void)pts;
    (void)np;
    (void)what;
    (void)index;
    (void)nm;
    (void)kind;
    (void)sig;
    (void)t_end;
    (void)values;
    (void)grad;
    (void)stats;
    (void)tick;
    (void)ctx;
    return mbs_inst_fail(inst, "this build of the model has no sensitivity functions");
}

#endif
