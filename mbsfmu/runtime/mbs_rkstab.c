/*
 * mbs_rkstab.c -- RKSTAB: Dormand-Prince 5(4) with post-stabilization (see mbs_rkstab.h): its
 * tableau, error estimator and continuous extension.  Port of mbsfmu/reference/integrators/rkstab.py; keep
 * the two in step (the controller's constants are generated from the same table).
 */
#include "mbs_rkstab.h"

#include <math.h>
#include <string.h>

/* Dormand-Prince 5(4) tableau (seed 004 eq. 4.9), 1-based: A[i][j] = a_ij, c_6 = 1. */
static const double C[7] = {0.0, 0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0};
static const double A[7][7] = {
    [2] = {[1] = 1.0 / 5},
    [3] = {[1] = 3.0 / 40, [2] = 9.0 / 40},
    [4] = {[1] = 44.0 / 45, [2] = -56.0 / 15, [3] = 32.0 / 9},
    [5] = {[1] = 19372.0 / 6561, [2] = -25360.0 / 2187, [3] = 64448.0 / 6561, [4] = -212.0 / 729},
    [6] = {[1] = 9017.0 / 3168, [2] = -355.0 / 33, [3] = 46732.0 / 5247, [4] = 49.0 / 176,
           [5] = -5103.0 / 18656},
};
/* b (b_2 = 0 is added: a non-finite k2 rejects the step) and the 4th-order companion b^ (b^_7 on k7) */
static const double B[7] = {0.0, 35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84};
static const double BH1 = 5179.0 / 57600, BH3 = 7571.0 / 16695, BH4 = 393.0 / 640, BH5 = -92097.0 / 339200,
                    BH6 = 187.0 / 2100, BH7 = 1.0 / 40;

/* Dense-output coefficients (Hairer's CONTD5, d2 = 0), as _D in rkstab.py. */
static const double D1 = -12715105075.0 / 11282082432, D3 = 87487479700.0 / 32700410799,
                    D4 = -10690763975.0 / 1880347072, D5 = 701980252875.0 / 199316789632,
                    D6 = -1453857185.0 / 822651844, D7 = 69997945.0 / 29380423;

/* The rows after the explicit layout: r1..r5 of the continuous extension. */
#define W_R MBS_RK_K(8)
#define ROW(s, k) MBS_ROW(s, k)

/* The scaled error norm of the attempt (the driver has k7 = f(t + h, x_new) in place):
 *   err = rms((d + h sum_i (b_i - bh_i) k_i) / (atol + rtol max(|x|, |x_new|))),
 * d = x_new - x~ the projection's correction (NULL without projection). */
static double error_norm(const mbs_stepper *s, double h, const double *d)
{
    const int n = s->n, ne = mbs_step_nerr(s);
    const double *X = ROW(s, MBS_RK_X), *XN = ROW(s, MBS_RK_XN);
    const double *K1 = ROW(s, MBS_RK_K(1)), *K2 = ROW(s, MBS_RK_K(2)), *K3 = ROW(s, MBS_RK_K(3));
    const double *K4 = ROW(s, MBS_RK_K(4)), *K5 = ROW(s, MBS_RK_K(5)), *K6 = ROW(s, MBS_RK_K(6));
    const double *K7 = ROW(s, MBS_RK_K(7));
    const double e1 = h * (B[1] - BH1), e3 = h * (B[3] - BH3), e4 = h * (B[4] - BH4), e5 = h * (B[5] - BH5);
    const double e6 = h * (B[6] - BH6), e7 = h * (0.0 - BH7);
    double sumsq = 0.0;
    int i;
    (void)n;
    for (i = 0; i < ne; ++i) {
        double ax = fabs(X[i]), axn = fabs(XN[i]);
        double e = e1 * K1[i] + 0.0 * K2[i] + e3 * K3[i] + e4 * K4[i] + e5 * K5[i] + e6 * K6[i] + e7 * K7[i];
        if (d != NULL) e = d[i] + e;
        e /= s->atol + s->rtol * (ax > axn ? ax : axn);
        sumsq += e * e;
    }
    return sqrt(sumsq / ne);
}

/* The continuous extension of the accepted step from (t, x) to x_new (Hairer's CONTD5): rows r1..r5
 * with x(t + theta h) = r1 + theta (r2 + (1-theta) (r3 + theta (r4 + (1-theta) r5))). */
static void store_dense(mbs_stepper *s, double t, double h)
{
    const int n = s->n;
    const double *X = ROW(s, MBS_RK_X), *K1 = ROW(s, MBS_RK_K(1)), *K3 = ROW(s, MBS_RK_K(3));
    const double *K4 = ROW(s, MBS_RK_K(4)), *K5 = ROW(s, MBS_RK_K(5)), *K6 = ROW(s, MBS_RK_K(6));
    const double *K7 = ROW(s, MBS_RK_K(7)), *XN = ROW(s, MBS_RK_XN);
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
    s->t_prev = t;
    s->h_dense = h;
    s->dense_valid = 1;
}

static int interpolate(mbs_stepper *s, const mbs_problem *pb, double t, double *xout)
{
    const int n = s->n;
    const double *R = ROW(s, W_R), th = (t - s->t_prev) / s->h_dense, th1 = 1.0 - th;
    int i;
    (void)pb;
    for (i = 0; i < n; ++i)
        xout[i] = R[i] + th * (R[n + i] + th1 * (R[2 * n + i] + th * (R[3 * n + i] + th1 * R[4 * n + i])));
    return MBS_STEP_OK;
}

/* The PI controller (constants of mbsfmu/core/constants.py) and the continuous extension. */
static double accepted(mbs_stepper *s, const mbs_step_method *m, const mbs_try *a, double t, double h,
                       double t_new, double h_prop, int clipped, double t_end)
{
    const double h_next = mbs_rk_pi_accepted(s, m->control, a->err, h, h_prop, clipped);
    (void)t_new;
    (void)t_end;
    store_dense(s, t, h);
    return h_next;
}

static const mbs_rk_tableau TABLEAU = {
    .stages = 6, .c = C, .a = &A[0][0], .stride = 7, .b = B, .sparse = 0, .project_in_step = 1,
    .error = error_norm,
};

static const mbs_step_control CONTROL = {
    .order = MBS_RKSTAB_ORDER, .safety = MBS_RKSTAB_SAFETY, .facmin = MBS_RKSTAB_FACMIN,
    .facmax = MBS_RKSTAB_FACMAX, .beta = MBS_RKSTAB_BETA, .beta_weight = MBS_RKSTAB_BETA_WEIGHT,
};

const mbs_step_method mbs_rkstab_method = {
    .name = "rkstab",
    .row_f = MBS_RK_K(1), .row_xn = MBS_RK_XN, .row_fn = MBS_RK_K(7),
    .start_order = MBS_RKSTAB_ORDER,
    .hmin_span = HUGE_VAL, /* hmin 1e-14 of the span, at least 10 ulp of the call's larger end */
    .nonfinite_shrink = MBS_RKSTAB_NONFINITE_SHRINK,
    .control = &CONTROL,
    .finite = mbs_step_finite_sumsq,
    .singular = {.mode = MBS_SING_PLACE, .watch = MBS_RKSTAB_PLACE_WATCH, .reach = MBS_RKSTAB_PLACE_REACH,
                 .theta = MBS_RKSTAB_PLACE_THETA},
    .tableau = &TABLEAU,
    .attempt = mbs_rk_attempt,
    .accepted = accepted,
    .rejected = mbs_rk_rejected,
    .hrho = mbs_rk_hrho,
    .interpolate = interpolate,
};

int mbs_rkstab_init(mbs_stepper *s, int n, double *work, double rtol, double atol, double hmax)
{
    return mbs_stepper_init(s, &mbs_rkstab_method, n, work, rtol, atol, hmax);
}
