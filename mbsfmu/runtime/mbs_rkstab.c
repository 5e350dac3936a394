/*
 * mbs_rkstab.c -- RKSTAB: Dormand-Prince 5(4) with post-stabilization (see mbs_rkstab.h).
 * Port of mbsfmu/reference/integrators/rkstab.py; keep the two in step.
 */
#include "mbs_rkstab.h"
#include "mbs_rk_shared.h"

#include <math.h>
#include <string.h>

/* Dormand-Prince 5(4) tableau. */
static const double C2 = 1.0 / 5, C3 = 3.0 / 10, C4 = 4.0 / 5, C5 = 8.0 / 9;
static const double A21 = 1.0 / 5;
static const double A31 = 3.0 / 40, A32 = 9.0 / 40;
static const double A41 = 44.0 / 45, A42 = -56.0 / 15, A43 = 32.0 / 9;
static const double A51 = 19372.0 / 6561, A52 = -25360.0 / 2187, A53 = 64448.0 / 6561,
                    A54 = -212.0 / 729;
static const double A61 = 9017.0 / 3168, A62 = -355.0 / 33, A63 = 46732.0 / 5247, A64 = 49.0 / 176,
                    A65 = -5103.0 / 18656;
static const double B1 = 35.0 / 384, B3 = 500.0 / 1113, B4 = 125.0 / 192, B5 = -2187.0 / 6784,
                    B6 = 11.0 / 84;
static const double BH1 = 5179.0 / 57600, BH3 = 7571.0 / 16695, BH4 = 393.0 / 640,
                    BH5 = -92097.0 / 339200, BH6 = 187.0 / 2100, BH7 = 1.0 / 40;

#define SAFETY 0.9
#define FACMIN 0.2
#define FACMAX 10.0
#define BETA 0.04
#define EXPO1 (0.2 - 0.75 * BETA)
#define NONFINITE_SHRINK 0.2
#define PLACE_WATCH 0.1   /* singular positions (rkstab.py _PLACE_*) */
#define PLACE_THETA 0.55
#define PLACE_REACH 2.5

double mbs_rk_rms(const double *v, const double *scale, int n)
{
    double sum = 0.0;
    int i;
    for (i = 0; i < n; ++i) {
        double q = v[i] / scale[i];
        sum += q * q;
    }
    return sqrt(sum / n);
}

double mbs_rk_spacing(double a)
{
    return nextafter(a, HUGE_VAL) - a;
}

int mbs_rk_all_finite(const double *v, int n)
{
    double sum = 0.0;
    int i;
    for (i = 0; i < n; ++i) sum += v[i] * v[i];
    return isfinite(sum);
}

int mbs_rkstab_init(mbs_rkstab *s, int n, double *work, double rtol, double atol, double hmax)
{
    if (s == NULL) return MBS_RKSTAB_EARG;
    memset(s, 0, sizeof(*s));
    if (n < 1 || work == NULL || !(rtol > 0.0) || !isfinite(rtol) || isnan(atol) || isinf(atol) ||
        isnan(hmax))
        return MBS_RKSTAB_EARG;
    s->n = n;
    s->work = work;
    s->rtol = rtol;
    s->atol = atol < 0.0 ? rtol / 10 : atol;
    s->hmax = hmax > 0.0 ? hmax : HUGE_VAL;
    s->hmin = 0.0;
    s->h = 0.0;
    s->errold = 1e-4;
    s->reject_last = 0;
    s->fsal_valid = 0;
    s->t_fsal = 0.0;
    return MBS_RKSTAB_OK;
}

void mbs_rkstab_reset_fsal(mbs_rkstab *s)
{
    if (s != NULL) s->fsal_valid = s->dense_valid = s->sing.valid = 0;
}

const char *mbs_rkstab_message(int code)
{
    switch (code) {
    case MBS_RKSTAB_OK: return "success";
    case MBS_RKSTAB_EARG: return "invalid argument";
    case MBS_RKSTAB_EUNDERFLOW: return "step size underflow (repeated error-test failures)";
    case MBS_RKSTAB_ETOOMANY: return "maximum number of steps exceeded";
    case MBS_RKSTAB_ERHS: return "the right-hand side reported a failure";
    case MBS_RKSTAB_EPROJECT: return "the projection reported a failure";
    case MBS_RKSTAB_ENONFINITE: return "non-finite values (state, right-hand side or projection)";
    case MBS_RKSTAB_ECOLLAPSE: return "the step size collapsed (10000 accepted steps in a row shorter than "
                                      "1e-12 of the interval): the solution is not smooth here";
    case MBS_RKSTAB_EHMAX: return "the step-size limit (max_internal_step) is below the smallest step "
                                  "the integrator can resolve here";
    default: return "unknown error code";
    }
}

/* as _initial_step in rkstab.py (mbs_rk_shared.h) */
int mbs_rk_initial_step(int n, double rtol, double atol, double hmax, int order, mbs_rhs_fn f, void *ctx,
                        double t0, const double *x0, const double *f0, double span, double *sc, double *tmp,
                        double *f1, long *nfev, double *h_out)
{
    double d0, d1, d2, h0, h1, h;
    int i;
    for (i = 0; i < n; ++i) sc[i] = atol + rtol * fabs(x0[i]);
    d0 = mbs_rk_rms(x0, sc, n);
    d1 = mbs_rk_rms(f0, sc, n);
    h0 = (!(d0 >= 1e-5) || !(d1 >= 1e-5) || !isfinite(d0) || !isfinite(d1)) ? 1e-6 : 0.01 * d0 / d1;
    if (h0 > span) h0 = span;
    for (i = 0; i < n; ++i) tmp[i] = x0[i] + h0 * f0[i];
    ++*nfev;
    if (f(ctx, t0 + h0, tmp, f1) != 0) return MBS_RKSTAB_ERHS;
    for (i = 0; i < n; ++i) tmp[i] = f1[i] - f0[i];
    d2 = mbs_rk_rms(tmp, sc, n) / h0;
    if (!isfinite(d2)) {
        *h_out = h0 < hmax ? h0 : hmax;
        return MBS_RKSTAB_OK;
    }
    if (d1 <= 1e-15 && d2 <= 1e-15) {
        h1 = h0 * 1e-3;
        if (h1 < 1e-6) h1 = 1e-6;
    } else {
        h1 = pow(0.01 / (d1 > d2 ? d1 : d2), 1.0 / order);
    }
    h = 100 * h0;
    if (h1 < h) h = h1;
    if (span < h) h = span;
    if (hmax < h) h = hmax;
    *h_out = h;
    return MBS_RKSTAB_OK;
}

double mbs_rk_hmin(double hmin_set, double tc, double t_end)
{
    double hmin = hmin_set > 0.0 ? hmin_set : 1e-14 * (t_end - tc);
    double a = fabs(tc) > fabs(t_end) ? fabs(tc) : fabs(t_end);
    double u = 10.0 * mbs_rk_spacing(a);
    return u > hmin ? u : hmin;
}

/* Dense-output coefficients (Hairer's CONTD5, d2 = 0), as _D in rkstab.py. */
static const double D1 = -12715105075.0 / 11282082432, D3 = 87487479700.0 / 32700410799,
                    D4 = -10690763975.0 / 1880347072, D5 = 701980252875.0 / 199316789632,
                    D6 = -1453857185.0 / 822651844, D7 = 69997945.0 / 29380423;

/* Work rows (n doubles each, mbs_rkstab.h): X, K1..K7, ARG, XN, r1..r5 of the continuous
 * extension, S6 (the stage-6 argument). */
#define ROW(s, k) ((s)->work + (size_t)(k) * (size_t)(s)->n)
enum { W_X, W_K1, W_K2, W_K3, W_K4, W_K5, W_K6, W_K7, W_ARG, W_XN, W_R, W_S6 = W_R + 5 };

/* Outcome of one attempted step. */
enum { ATTEMPT_DONE, ATTEMPT_NONFINITE };

/* One attempted step of size h from (tc, X) with k1 = f(tc, X) in K1: stages 2..6, the 5th-order
 * solution x~ (in ARG), its projection x_new = p(x~) (in XN), k7 = f(t_new, x_new) and the scaled
 * error norm
 *   err = rms((x_new - x~ + h sum_i (b_i - bh_i) k_i) / (atol + rtol max(|x|, |x_new|))),
 * (the projection's correction counts as error; without projection x_new = x~).  A non-finite
 * stage argument or x~ ends the attempt at once (ATTEMPT_NONFINITE; f never sees it).
 * Returns an MBS_RKSTAB_* failure of f or p, or 0 with *outcome set. */
static int attempt_step(mbs_rkstab *s, mbs_rhs_fn f, mbs_project_fn p, void *ctx, double tc, double h,
                        double t_new, int *outcome, double *err)
{
    const int n = s->n;
    const double *X = ROW(s, W_X), *K1 = ROW(s, W_K1);
    double *K2 = ROW(s, W_K2), *K3 = ROW(s, W_K3), *K4 = ROW(s, W_K4), *K5 = ROW(s, W_K5);
    double *K6 = ROW(s, W_K6), *K7 = ROW(s, W_K7), *ARG = ROW(s, W_ARG), *XN = ROW(s, W_XN);
    double *S6 = ROW(s, W_S6);
    /* coefficients times h, as CB = h * _TABLE in rkstab.py */
    const double a21 = h * A21;
    const double a31 = h * A31, a32 = h * A32;
    const double a41 = h * A41, a42 = h * A42, a43 = h * A43;
    const double a51 = h * A51, a52 = h * A52, a53 = h * A53, a54 = h * A54;
    const double a61 = h * A61, a62 = h * A62, a63 = h * A63, a64 = h * A64, a65 = h * A65;
    const double b1 = h * B1, b3 = h * B3, b4 = h * B4, b5 = h * B5, b6 = h * B6;
    const double e1 = h * (B1 - BH1), e3 = h * (B3 - BH3), e4 = h * (B4 - BH4), e5 = h * (B5 - BH5);
    const double e6 = h * (B6 - BH6), e7 = h * (0.0 - BH7);
    double sumsq = 0.0;
    int i;

    *outcome = ATTEMPT_NONFINITE;
    for (i = 0; i < n; ++i) ARG[i] = X[i] + a21 * K1[i];
    if (!mbs_rk_all_finite(ARG, n)) return 0;
    s->nfev++;
    if (f(ctx, tc + C2 * h, ARG, K2) != 0) return MBS_RKSTAB_ERHS;
    for (i = 0; i < n; ++i) ARG[i] = X[i] + a31 * K1[i] + a32 * K2[i];
    if (!mbs_rk_all_finite(ARG, n)) return 0;
    s->nfev++;
    if (f(ctx, tc + C3 * h, ARG, K3) != 0) return MBS_RKSTAB_ERHS;
    for (i = 0; i < n; ++i) ARG[i] = X[i] + a41 * K1[i] + a42 * K2[i] + a43 * K3[i];
    if (!mbs_rk_all_finite(ARG, n)) return 0;
    s->nfev++;
    if (f(ctx, tc + C4 * h, ARG, K4) != 0) return MBS_RKSTAB_ERHS;
    for (i = 0; i < n; ++i) ARG[i] = X[i] + a51 * K1[i] + a52 * K2[i] + a53 * K3[i] + a54 * K4[i];
    if (!mbs_rk_all_finite(ARG, n)) return 0;
    s->nfev++;
    if (f(ctx, tc + C5 * h, ARG, K5) != 0) return MBS_RKSTAB_ERHS;
    for (i = 0; i < n; ++i)
        ARG[i] = X[i] + a61 * K1[i] + a62 * K2[i] + a63 * K3[i] + a64 * K4[i] + a65 * K5[i];
    if (!mbs_rk_all_finite(ARG, n)) return 0;
    s->nfev++;
    if (f(ctx, t_new, ARG, K6) != 0) return MBS_RKSTAB_ERHS;
    memcpy(S6, ARG, (size_t)n * sizeof(double));
    /* 5th-order solution x~ (in ARG); k2 has weight 0 */
    for (i = 0; i < n; ++i)
        ARG[i] = X[i] + b1 * K1[i] + 0.0 * K2[i] + b3 * K3[i] + b4 * K4[i] + b5 * K5[i] + b6 * K6[i];
    if (!mbs_rk_all_finite(ARG, n)) return 0;

    memcpy(XN, ARG, (size_t)n * sizeof(double));
    if (p != NULL) {
        s->nproj++;
        if (p(ctx, t_new, XN) != 0) return MBS_RKSTAB_EPROJECT;
    }
    s->nfev++;
    if (f(ctx, t_new, XN, K7) != 0) return MBS_RKSTAB_ERHS;
    if (p != NULL && s->sing.weak != NULL) { /* the rounding along weak constraint directions is no error */
        double *D = ROW(s, W_R); /* scratch: the continuous extension is stored after acceptance */
        for (i = 0; i < n; ++i) D[i] = XN[i] - ARG[i];
        s->sing.rho_new = s->sing.weak(ctx, t_new, XN, D);
    }
    for (i = 0; i < n; ++i) {
        double ax = fabs(X[i]), axn = fabs(XN[i]);
        double e = e1 * K1[i] + 0.0 * K2[i] + e3 * K3[i] + e4 * K4[i] + e5 * K5[i] + e6 * K6[i] +
                   e7 * K7[i];
        if (p != NULL) e = (s->sing.weak != NULL ? ROW(s, W_R)[i] : XN[i] - ARG[i]) + e;
        e /= s->atol + s->rtol * (ax > axn ? ax : axn);
        sumsq += e * e;
    }
    *err = sqrt(sumsq / n);
    *outcome = ATTEMPT_DONE;
    return 0;
}

/* Step-size control after an accepted step of size h with error err <= 1 (the proposal was
 * h_prop; clipped: the step was cut to end at t_clip): Lund-stabilized
 * h_next = h err^-(1/5 - 0.75 beta) errold^beta SAFETY within [FACMIN h, FACMAX h], never
 * above hmax, no growth right after a rejection; a step shortened to hit t_end keeps the
 * proposal and the error history. */
static double next_step(mbs_rkstab *s, double err, double h, double h_prop, int clipped)
{
    const double fac = pow(err, EXPO1) / pow(s->errold, BETA) / SAFETY;
    return mbs_rk_next_step(fac, FACMIN, FACMAX, s->hmax, s->reject_last, err, h, h_prop, clipped, &s->errold);
}

double mbs_rk_next_step(double fac, double facmin, double facmax, double hmax, int reject_last, double err,
                        double h, double h_prop, int clipped, double *errold)
{
    double h_next;
    if (fac > 1.0 / facmin) fac = 1.0 / facmin;
    if (fac < 1.0 / facmax) fac = 1.0 / facmax;
    h_next = h / fac;
    if (h_next > hmax) h_next = hmax;
    if (clipped && h < h_prop) {
        if (h_next < h_prop) h_next = h_prop;
        if (reject_last && h_next > h_prop) h_next = h_prop;
    } else {
        if (reject_last && h_next > h) h_next = h;
        *errold = err > 1e-4 ? err : 1e-4;
    }
    return h_next;
}

/* Hairer's stiffness estimate h rho = h |k7 - k6| / |x_new - stage-6 argument| (both at t + h)
 * of the accepted step, and the count of stability-limited steps (mbs_rk_stiff_count). */
static void stiffness_estimate(mbs_rkstab *s, double h)
{
    s->hrho = mbs_rk_hrho(s->n, h, ROW(s, W_K7), ROW(s, W_K6), ROW(s, W_XN), ROW(s, W_S6));
    s->stiff_run = mbs_rk_stiff_count(s->stiff_run, &s->stiff_below, s->hrho, s->stiff_hrho, s->stiff_gap);
    if (s->stiff_below == 0 && s->stiff_run > 0) {
        s->hrho_stiff = s->hrho;
        s->h_stiff = h;
    }
}

int mbs_rk_stiff_count(int run, int *below, double hrho, double threshold, int gap)
{
    if (!(threshold > 0.0)) {
        *below = 0;
        return 0;
    }
    if (hrho > threshold) {
        *below = 0;
        return run + 1;
    }
    return ++*below >= gap ? 0 : run;
}

double mbs_rk_hrho(int n, double h, const double *k_new, const double *k_s, const double *x_new,
                   const double *x_s)
{
    double dk = 0.0, dx = 0.0;
    int i;
    for (i = 0; i < n; ++i) {
        dk += (k_new[i] - k_s[i]) * (k_new[i] - k_s[i]);
        dx += (x_new[i] - x_s[i]) * (x_new[i] - x_s[i]);
    }
    return dx > 0.0 ? h * sqrt(dk / dx) : 0.0;
}

/* The continuous extension of the accepted step from (tc, X) to XN (Hairer's CONTD5): rows r1..r5
 * with x(tc + theta h) = r1 + theta (r2 + (1-theta) (r3 + theta (r4 + (1-theta) r5))). */
static void store_dense(mbs_rkstab *s, double tc, double h)
{
    const int n = s->n;
    const double *X = ROW(s, W_X), *K1 = ROW(s, W_K1), *K3 = ROW(s, W_K3), *K4 = ROW(s, W_K4);
    const double *K5 = ROW(s, W_K5), *K6 = ROW(s, W_K6), *K7 = ROW(s, W_K7), *XN = ROW(s, W_XN);
    double *R = ROW(s, W_R);
    int i;
    for (i = 0; i < n; ++i) {
        double r2 = XN[i] - X[i], r3 = h * K1[i] - r2;
        R[i] = X[i];
        R[n + i] = r2;
        R[2 * n + i] = r3;
        R[3 * n + i] = r2 - h * K7[i] - r3;
        R[4 * n + i] = h * (D1 * K1[i] + D3 * K3[i] + D4 * K4[i] + D5 * K5[i] + D6 * K6[i] + D7 * K7[i]);
    }
    s->t_prev = tc;
    s->h_dense = h;
    s->dense_valid = 1;
}

void mbs_rk_singular_start(mbs_rk_singular *g, void *ctx, double t, const double *x, double *d, int n)
{
    if (g->weak == NULL || g->valid) return;
    memset(d, 0, (size_t)n * sizeof(double));
    g->rho = g->rho_new = g->weak(ctx, t, x, d);
    g->t_rho = t;
    g->rho_prev = HUGE_VAL;
    g->t_rho_prev = t;
    g->valid = 1;
}

void mbs_rk_singular_accept(mbs_rk_singular *g, double t)
{
    if (g->weak == NULL || !g->valid) return;
    g->rho_prev = g->rho;
    g->t_rho_prev = g->t_rho;
    g->rho = g->rho_new;
    g->t_rho = t;
}

double mbs_rk_singular_eta(const mbs_rk_singular *g, double tc, double watch)
{
    double D;
    if (g->weak == NULL || !g->valid || !(g->rho < g->rho_prev && g->rho_prev < HUGE_VAL && g->rho < watch))
        return HUGE_VAL;
    D = g->rho * (tc - g->t_rho_prev) / (g->rho_prev - g->rho);
    return D > 0.0 ? D : HUGE_VAL;
}

double mbs_rk_place_step(const mbs_rk_singular *g, double tc, double h)
{
    const double D = mbs_rk_singular_eta(g, tc, PLACE_WATCH);
    int j;
    if (!(D <= PLACE_REACH * h)) return h;
    j = (int)ceil(D / h - PLACE_THETA);
    if (j < 0) j = 0;
    return D / (j + PLACE_THETA);
}

/* Make k1 = f(tc, x) available in K1 with x copied to X, unless the caller's state is the one the
 * previous call returned (FSAL). */
static int first_stage(mbs_rkstab *s, mbs_rhs_fn f, void *ctx, double tc, const double *x)
{
    const int n = s->n;
    double *X = ROW(s, W_X), *K1 = ROW(s, W_K1);
    if (s->fsal_valid && s->t_fsal == tc && memcmp(X, x, (size_t)n * sizeof(double)) == 0)
        return MBS_RKSTAB_OK;
    s->fsal_valid = 0;
    if (X != x) memcpy(X, x, (size_t)n * sizeof(double));
    s->dense_valid = 0;
    s->nfev++;
    if (f(ctx, tc, X, K1) != 0) return MBS_RKSTAB_ERHS;
    if (!mbs_rk_all_finite(K1, n)) return MBS_RKSTAB_ENONFINITE;
    s->fsal_valid = 1;
    s->t_fsal = tc;
    return MBS_RKSTAB_OK;
}

/* Integrate the state in (*t, x) until *t >= t_end; a step is shortened (or stretched by 1 %) to
 * end exactly at t_clip >= t_end when it would pass it.  dense: store the continuous extension of
 * every accepted step (mbs_rkstab_advance_dense). */
static int advance_impl(mbs_rkstab *s, mbs_rhs_fn f, mbs_project_fn p, void *ctx, double *t,
                        double *x, double t_end, double t_clip, long max_steps, int dense)
{
    int n, rc = MBS_RKSTAB_OK, last_nonfinite = 0;
    double *X;
    double tc, h, hmin, span;
    long nattempt = 0, short_run = 0; /* accepted steps in a row below h_collapse */
    double h_collapse;

    if (s == NULL || f == NULL || t == NULL || x == NULL || s->work == NULL || s->n < 1)
        return MBS_RKSTAB_EARG;
    n = s->n;
    tc = *t;
    if (!isfinite(tc) || !isfinite(t_end) || t_end < tc || !(t_clip >= t_end)) return MBS_RKSTAB_EARG;
    if (t_end == tc) return MBS_RKSTAB_OK;
    X = ROW(s, W_X);
    if (!mbs_rk_all_finite(x, n)) return MBS_RKSTAB_ENONFINITE;
    rc = first_stage(s, f, ctx, tc, x);
    if (rc != MBS_RKSTAB_OK) return rc;

    span = t_end - tc;
    if (!(s->h > 0.0) || !isfinite(s->h)) {
        rc = mbs_rk_initial_step(n, s->rtol, s->atol, s->hmax, 5, f, ctx, tc, X, ROW(s, W_K1), span,
                                 ROW(s, W_ARG), ROW(s, W_XN), ROW(s, W_K2), &s->nfev, &h);
        if (rc != MBS_RKSTAB_OK) return rc;
    } else {
        h = s->h < s->hmax ? s->h : s->hmax;
    }
    hmin = mbs_rk_hmin(s->hmin, tc, t_end);
    if (s->hmax < hmin) return MBS_RKSTAB_EHMAX;
    h_collapse = MBS_RK_COLLAPSE_RATIO * ((isfinite(t_clip) ? t_clip : t_end) - tc);
    if (p != NULL) mbs_rk_singular_start(&s->sing, ctx, tc, X, ROW(s, W_R), n); /* the start's regularity */

    while (tc < t_end) {
        double t_new, h_prop = h, err = 0.0;
        int clipped = 0, outcome;

        if (max_steps > 0 && nattempt >= max_steps) { rc = MBS_RKSTAB_ETOOMANY; break; }
        if (short_run >= MBS_RK_COLLAPSE_STEPS) { rc = MBS_RKSTAB_ECOLLAPSE; break; }
        if (h < hmin) { rc = last_nonfinite ? MBS_RKSTAB_ENONFINITE : MBS_RKSTAB_EUNDERFLOW; break; }
        nattempt++;
        if (tc + 1.01 * h >= t_clip) {
            h = t_clip - tc;
            t_new = t_clip;
            clipped = 1;
        } else {
            t_new = tc + h;
        }
        rc = attempt_step(s, f, p, ctx, tc, h, t_new, &outcome, &err);
        if (rc != 0) break;
        if (outcome == ATTEMPT_NONFINITE || !isfinite(err)) {
            s->nreject++;
            s->reject_last = 1;
            /* a finite step whose scaled error overflows (tiny tolerances) is an ordinary failure */
            last_nonfinite = outcome == ATTEMPT_NONFINITE ||
                             !(mbs_rk_all_finite(ROW(s, W_XN), n) && mbs_rk_all_finite(ROW(s, W_K7), n));
            h *= NONFINITE_SHRINK;
            continue;
        }
        if (err <= 1.0) {
            double h_next = next_step(s, err, h, h_prop, clipped);
            s->reject_last = 0;
            last_nonfinite = 0;
            s->naccept++;
            short_run = h < h_collapse ? short_run + 1 : 0;
            stiffness_estimate(s, h);
            if (dense) store_dense(s, tc, h);
            tc = t_new;
            memcpy(X, ROW(s, W_XN), (size_t)n * sizeof(double));
            memcpy(ROW(s, W_K1), ROW(s, W_K7), (size_t)n * sizeof(double));
            h = h_next;
            if (p != NULL) {
                mbs_rk_singular_accept(&s->sing, tc);
                h = mbs_rk_place_step(&s->sing, tc, h);
            }
        } else {
            double q = pow(err, EXPO1) / SAFETY;
            s->nreject++;
            s->reject_last = 1;
            last_nonfinite = 0;
            h = h / (q < 1.0 / FACMIN ? q : 1.0 / FACMIN);
            if (p != NULL) h = mbs_rk_place_step(&s->sing, tc, h);
        }
    }

    s->h = h;
    s->t_fsal = tc;
    s->fsal_valid = 1;
    *t = tc;
    if (x != X) memcpy(x, X, (size_t)n * sizeof(double));
    return rc;
}

int mbs_rkstab_advance(mbs_rkstab *s, mbs_rhs_fn f, mbs_project_fn p, void *ctx, double *t, double *x,
                       double t_end, long max_steps)
{
    return advance_impl(s, f, p, ctx, t, x, t_end, t_end, max_steps, 0);
}

int mbs_rkstab_advance_dense(mbs_rkstab *s, mbs_rhs_fn f, mbs_project_fn p, void *ctx, double t0,
                             const double *x0, double t_target, double t_stop, long max_steps,
                             double *xout)
{
    int n, i, rc;
    double tint, th, th1, *X, *R;
    if (s == NULL || f == NULL || x0 == NULL || xout == NULL || s->work == NULL || s->n < 1 ||
        !isfinite(t0) || !isfinite(t_target) || t_target < t0 || isnan(t_stop))
        return MBS_RKSTAB_EARG;
    n = s->n;
    X = ROW(s, W_X);
    R = ROW(s, W_R);
    if (!s->fsal_valid) { /* (re)start from the caller's state */
        memcpy(X, x0, (size_t)n * sizeof(double));
        s->t_fsal = t0;
        s->dense_valid = 0;
    }
    tint = s->t_fsal;
    if (t_target > tint) {
        if (t_stop < t_target) t_stop = t_target;
        rc = advance_impl(s, f, p, ctx, &tint, X, t_target, isfinite(t_stop) ? t_stop : INFINITY,
                          max_steps, 1);
        if (rc != MBS_RKSTAB_OK) return rc;
    }
    if (t_target == tint) {
        memcpy(xout, X, (size_t)n * sizeof(double));
        return MBS_RKSTAB_OK;
    }
    if (!s->dense_valid || t_target < s->t_prev) return MBS_RKSTAB_EARG; /* not inside the last step */
    th = (t_target - s->t_prev) / s->h_dense;
    th1 = 1.0 - th;
    for (i = 0; i < n; ++i)
        xout[i] = R[i] + th * (R[n + i] + th1 * (R[2 * n + i] + th * (R[3 * n + i] + th1 * R[4 * n + i])));
    return MBS_RKSTAB_OK;
}
