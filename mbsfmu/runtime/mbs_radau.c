/*
 * mbs_radau.c -- Radau IIA (order 5) for the engine; the method is described in mbs_radau.h.
 */
#include "mbs_radau.h"

#include <math.h>
#include <string.h>

#include "mbs_linalg.h"

/* nodes c1, c2 (c3 = 1) */
#define SQ6 2.449489742783178098
static const double C1 = (4.0 - SQ6) / 10.0, C2 = (4.0 + SQ6) / 10.0;
#define C1M1 (C1 - 1.0)
#define C2M1 (C2 - 1.0)
#define C1MC2 (C1 - C2)
/* embedded error estimate */
static const double DD1 = -(13.0 + 7.0 * SQ6) / 3.0, DD2 = (-13.0 + 7.0 * SQ6) / 3.0, DD3 = -1.0 / 3.0;
/* eigenvalues of A^-1: gamma and alpha +- i beta */
static const double GAMMA = 3.6378342527444962, ALPHA = 2.6810828736277523, BETA = 3.0504301992474105;
/* T with T^-1 A^-1 T = diag(gamma, [alpha -beta; beta alpha]) (T32 = 1, T33 = 0), and T^-1 */
static const double T11 = 9.1232394870892942792e-02, T12 = -0.14125529502095420843,
                    T13 = -3.0029194105147424492e-02, T21 = 0.24171793270710701896,
                    T22 = 0.20412935229379993199, T23 = 0.38294211275726193779,
                    T31 = 0.96604818261509293619;
static const double TI11 = 4.3255798900631553510, TI12 = 0.33919925181580986954,
                    TI13 = 0.54177053993587487119, TI21 = -4.1787185915519047273,
                    TI22 = -0.32768282076106238708, TI23 = 0.47662355450055045196,
                    TI31 = -0.50287263494578687595, TI32 = 2.5719269498556054292,
                    TI33 = -0.59603920482822492497;

#define NIT 7          /* Newton iterations per step */
#define SAFE 0.9
#define FACL 5.0       /* h may shrink to h / 5 ... */
#define FACR 0.125     /* ... and grow to 8 h per step */
#define THET 0.001     /* keep the Jacobian while the Newton contraction is below this */
#define QUOT1 1.0      /* keep h (and the LU) while the new step is within [1, 1.2] h */
#define QUOT2 1.2
#define MAX_SINGULAR 5
#define EPS 2.220446049250313e-16

typedef struct {
    double *X, *F0, *Z1, *Z2, *Z3, *W1, *W2, *W3, *CONT, *SCAL, *T1, *T2, *XS, *J, *E1, *E2;
    int *p1, *p2;
} parts;

static void layout(const mbs_radau *s, parts *P)
{
    const int n = s->n;
    double *w = s->work;
    P->X = w;
    P->F0 = w + n;
    P->Z1 = w + 2 * n; /* Z1, Z2, Z3 contiguous: [Z2; Z3] is the complex system's vector */
    P->Z2 = P->Z1 + n;
    P->Z3 = P->Z2 + n;
    P->W1 = P->Z3 + n;
    P->W2 = P->W1 + n;
    P->W3 = P->W2 + n;
    P->CONT = P->W3 + n; /* 4 n */
    P->SCAL = P->CONT + 4 * n;
    P->T1 = P->SCAL + n;
    P->T2 = P->T1 + n;
    P->XS = P->T2 + n;
    P->J = P->XS + n;
    P->E1 = P->J + n * n;
    P->E2 = P->E1 + n * n; /* 2n x 2n */
    P->p1 = s->iwork;
    P->p2 = s->iwork + n;
}

static int finite_vec(const double *v, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

int mbs_radau_init(mbs_radau *s, int n, double *work, int *iwork, double rtol, double atol, double hmax)
{
    if (s == NULL || n < 1 || work == NULL || iwork == NULL || !(rtol > 0.0) || !isfinite(rtol))
        return MBS_RKSTAB_EARG;
    memset(s, 0, sizeof *s);
    s->n = n;
    s->work = work;
    s->iwork = iwork;
    s->rtol = rtol;
    s->atol = atol < 0.0 ? rtol / 10.0 : atol;
    if (!(s->atol >= 0.0) || !isfinite(s->atol))
        return MBS_RKSTAB_EARG;
    s->hmax = hmax > 0.0 && isfinite(hmax) ? hmax : INFINITY;
    mbs_radau_reset(s);
    return MBS_RKSTAB_OK;
}

void mbs_radau_reset(mbs_radau *s)
{
    s->valid = 0;
    s->dense_valid = 0;
    s->jac_valid = 0;
    s->first = 1;
    s->reject_last = 0;
    s->faccon = 1.0;
    s->theta = 1.0;
}

const char *mbs_radau_message(int code)
{
    if (code == MBS_RADAU_ESINGULAR)
        return "the iteration matrix of the implicit method stayed singular while the step size was "
               "halved";
    return mbs_rkstab_message(code);
}

/* J at (t, X) with F0 = f(t, X): the user's, or forward differences (RADAU5's increments) */
static int jacobian(mbs_radau *s, const parts *P, mbs_rhs_fn f, mbs_jac_fn jac, void *ctx, double t)
{
    const int n = s->n;
    int i, j;
    s->njev++;
    if (jac != NULL) {
        if (jac(ctx, t, P->X, P->F0, P->J) != 0)
            return 1;
    } else {
        memcpy(P->XS, P->X, sizeof(double) * (size_t)n);
        for (j = 0; j < n; j++) {
            double save = P->XS[j], delt = sqrt(1e-16 * (fabs(save) > 1e-5 ? fabs(save) : 1e-5));
            P->XS[j] = save + delt;
            s->nfev++;
            if (f(ctx, t, P->XS, P->T1) != 0)
                return 1;
            for (i = 0; i < n; i++)
                P->J[i * n + j] = (P->T1[i] - P->F0[i]) / delt;
            P->XS[j] = save;
        }
    }
    return finite_vec(P->J, n * n) ? 0 : 1;
}

/* E1 = gamma/h I - J and E2 = [[alpha/h I - J, -beta/h I], [beta/h I, alpha/h I - J]], factored */
static int decompose(mbs_radau *s, const parts *P, double h)
{
    const int n = s->n, m = 2 * n;
    const double fac1 = GAMMA / h, alphn = ALPHA / h, betan = BETA / h;
    int i, j;
    s->ndec++;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            double jij = P->J[i * n + j];
            P->E1[i * n + j] = (i == j ? fac1 : 0.0) - jij;
            P->E2[i * m + j] = (i == j ? alphn : 0.0) - jij;
            P->E2[(n + i) * m + n + j] = (i == j ? alphn : 0.0) - jij;
            P->E2[i * m + n + j] = i == j ? -betan : 0.0;
            P->E2[(n + i) * m + j] = i == j ? betan : 0.0;
        }
    if (mbs_lu_factor(n, P->E1, P->p1) != 0 || mbs_lu_factor(m, P->E2, P->p2) != 0)
        return 1;
    return 0;
}

static double scaled_norm(const double *v, const double *scal, int n, int count)
{
    double sum = 0.0;
    int i;
    for (i = 0; i < n * count; i++) {
        double q = v[i] / scal[i % n];
        sum += q * q;
    }
    return sqrt(sum / (double)(n * count));
}

enum { STEP_ACCEPT, STEP_REJECT, STEP_NEWTON_FAIL, STEP_NONFINITE };

/* One attempted step of size h from (t, X) with J and the LU for h.  Returns STEP_* or a negative
 * MBS_RKSTAB_* code; *hnew is the next step size to try; on acceptance CONT, X, F0 are updated. */
static int attempt(mbs_radau *s, const parts *P, mbs_rhs_fn f, void *ctx, double t, double h,
                   double rtol_n, double atol_n, double fnewt, double *hnew, int *newt_out)
{
    const int n = s->n;
    const double fac1 = GAMMA / h, alphn = ALPHA / h, betan = BETA / h;
    double dyno = 0.0, dynold = 1.0, thq, thqold = 1.0, err, fac, quot;
    int i, k, newt;

    for (i = 0; i < n; i++)
        P->SCAL[i] = atol_n + rtol_n * fabs(P->X[i]);
    /* starting values: the last step's collocation polynomial, extrapolated */
    if (s->dense_valid && !s->first) {
        const double c3q = h / s->h_dense, c1q = C1 * c3q, c2q = C2 * c3q;
        const double *a1 = P->CONT + n, *a2 = P->CONT + 2 * n, *a3 = P->CONT + 3 * n;
        for (i = 0; i < n; i++) {
            P->Z1[i] = c1q * (a1[i] + (c1q - C2M1) * (a2[i] + (c1q - C1M1) * a3[i]));
            P->Z2[i] = c2q * (a1[i] + (c2q - C2M1) * (a2[i] + (c2q - C1M1) * a3[i]));
            P->Z3[i] = c3q * (a1[i] + (c3q - C2M1) * (a2[i] + (c3q - C1M1) * a3[i]));
            P->W1[i] = TI11 * P->Z1[i] + TI12 * P->Z2[i] + TI13 * P->Z3[i];
            P->W2[i] = TI21 * P->Z1[i] + TI22 * P->Z2[i] + TI23 * P->Z3[i];
            P->W3[i] = TI31 * P->Z1[i] + TI32 * P->Z2[i] + TI33 * P->Z3[i];
        }
    } else {
        memset(P->Z1, 0, sizeof(double) * (size_t)(3 * n));
        memset(P->W1, 0, sizeof(double) * (size_t)(3 * n));
    }
    s->faccon = s->faccon > EPS ? pow(s->faccon, 0.8) : pow(EPS, 0.8);
    for (newt = 0;;) {
        if (newt >= NIT)
            return STEP_NEWTON_FAIL;
        /* the stage values f(t + c_k h, X + Z_k), written over Z_k */
        for (k = 0; k < 3; k++) {
            double *Z = P->Z1 + k * n, ck = k == 0 ? C1 : (k == 1 ? C2 : 1.0);
            for (i = 0; i < n; i++)
                P->XS[i] = P->X[i] + Z[i];
            if (!finite_vec(P->XS, n))
                return STEP_NONFINITE;
            s->nfev++;
            if (f(ctx, t + ck * h, P->XS, Z) != 0 || !finite_vec(Z, n))
                return STEP_NONFINITE;
        }
        for (i = 0; i < n; i++) {
            double f1 = P->Z1[i], f2 = P->Z2[i], f3 = P->Z3[i];
            double a1 = TI11 * f1 + TI12 * f2 + TI13 * f3;
            double a2 = TI21 * f1 + TI22 * f2 + TI23 * f3;
            double a3 = TI31 * f1 + TI32 * f2 + TI33 * f3;
            P->Z1[i] = a1 - fac1 * P->W1[i];
            P->Z2[i] = a2 - alphn * P->W2[i] + betan * P->W3[i];
            P->Z3[i] = a3 - betan * P->W2[i] - alphn * P->W3[i];
        }
        mbs_lu_solve(n, P->E1, P->p1, P->Z1);
        mbs_lu_solve(2 * n, P->E2, P->p2, P->Z2);
        s->nnewton++;
        newt++;
        dyno = scaled_norm(P->Z1, P->SCAL, n, 3);
        if (!isfinite(dyno))
            return STEP_NEWTON_FAIL;
        if (newt > 1 && newt < NIT) {
            thq = dyno / dynold;
            s->theta = newt == 2 ? thq : sqrt(thq * thqold);
            thqold = thq;
            if (s->theta < 0.99) {
                double dyth;
                s->faccon = s->theta / (1.0 - s->theta);
                dyth = s->faccon * dyno * pow(s->theta, NIT - 1 - newt) / fnewt;
                if (dyth >= 1.0) { /* too slow to converge within NIT: a smaller step */
                    double qnewt = dyth < 1e-4 ? 1e-4 : (dyth > 20.0 ? 20.0 : dyth);
                    *hnew = 0.8 * h * pow(qnewt, -1.0 / (4.0 + NIT - 1 - newt));
                    *newt_out = newt;
                    return STEP_REJECT;
                }
            } else {
                return STEP_NEWTON_FAIL;
            }
        }
        dynold = dyno > EPS ? dyno : EPS;
        for (i = 0; i < n; i++) {
            double w1 = P->W1[i] += P->Z1[i], w2 = P->W2[i] += P->Z2[i], w3 = P->W3[i] += P->Z3[i];
            P->Z1[i] = T11 * w1 + T12 * w2 + T13 * w3;
            P->Z2[i] = T21 * w1 + T22 * w2 + T23 * w3;
            P->Z3[i] = T31 * w1 + w2;
        }
        if (s->faccon * dyno <= fnewt)
            break;
    }
    *newt_out = newt;

    /* error estimate, filtered by (gamma/h I - J)^-1 */
    for (i = 0; i < n; i++) {
        P->T1[i] = (DD1 * P->Z1[i] + DD2 * P->Z2[i] + DD3 * P->Z3[i]) / h;
        P->T2[i] = P->T1[i] + P->F0[i];
    }
    mbs_lu_solve(n, P->E1, P->p1, P->T2);
    err = scaled_norm(P->T2, P->SCAL, n, 1);
    if (err >= 1.0 && (s->first || s->reject_last)) {
        for (i = 0; i < n; i++)
            P->XS[i] = P->X[i] + P->T2[i];
        s->nfev++;
        if (f(ctx, t, P->XS, P->T2) != 0 || !finite_vec(P->T2, n))
            return STEP_NONFINITE;
        for (i = 0; i < n; i++)
            P->T2[i] += P->T1[i];
        mbs_lu_solve(n, P->E1, P->p1, P->T2);
        err = scaled_norm(P->T2, P->SCAL, n, 1);
    }
    if (!isfinite(err))
        return STEP_NONFINITE;
    if (err < 1e-10)
        err = 1e-10;
    fac = SAFE * (1.0 + 2.0 * NIT) / (newt + 2.0 * NIT);
    if (fac > SAFE)
        fac = SAFE;
    quot = pow(err, 0.25) / fac;
    quot = quot < FACR ? FACR : (quot > FACL ? FACL : quot);
    if (!(err < 1.0)) {
        *hnew = h / quot;
        return STEP_REJECT;
    }
    if (!s->first) { /* Gustafsson's predictive controller */
        double facgus = (s->h_acc / h) * pow(err * err / s->err_acc, 0.25) / SAFE;
        facgus = facgus < FACR ? FACR : (facgus > FACL ? FACL : facgus);
        if (facgus > quot)
            quot = facgus;
    }
    *hnew = h / quot;
    s->h_acc = h;
    s->err_acc = err > 1e-2 ? err : 1e-2;
    /* collocation polynomial of the step, then x_new = X + Z3 */
    for (i = 0; i < n; i++) {
        double z1 = P->Z1[i], z2 = P->Z2[i], z3 = P->Z3[i], ak, a3;
        P->CONT[i] = P->X[i] + z3;
        P->CONT[n + i] = (z2 - z3) / C2M1;
        ak = (z1 - z2) / C1MC2;
        a3 = (ak - z1 / C1) / C2;
        P->CONT[2 * n + i] = (ak - P->CONT[n + i]) / C1M1;
        P->CONT[3 * n + i] = P->CONT[2 * n + i] - a3;
        P->X[i] = P->CONT[i];
    }
    return STEP_ACCEPT;
}

/* the collocation polynomial of the last step at t */
static void interpolate(const mbs_radau *s, const parts *P, double t, double *out)
{
    const int n = s->n;
    const double q = (t - (s->t_prev + s->h_dense)) / s->h_dense;
    int i;
    for (i = 0; i < n; i++)
        out[i] = P->CONT[i] +
                 q * (P->CONT[n + i] + (q - C2M1) * (P->CONT[2 * n + i] + (q - C1M1) * P->CONT[3 * n + i]));
}

int mbs_radau_advance_dense(mbs_radau *s, mbs_rhs_fn f, mbs_jac_fn jac, mbs_project_fn p, void *ctx,
                            double t0, const double *x0, double t_target, double t_stop, long max_steps,
                            double *xout)
{
    parts P;
    int n, rc = MBS_RKSTAB_OK, lu_valid = 0, jac_fresh = 0, nsing = 0, last_nonfinite = 0;
    long nattempt = 0;
    double h, h_lu = 0.0, hmin, span, rtol_n, atol_n, fnewt;

    if (s == NULL || f == NULL || xout == NULL || s->work == NULL || s->n < 1 || !isfinite(t_target) ||
        isnan(t_stop) || t_stop < t_target)
        return MBS_RKSTAB_EARG;
    n = s->n;
    layout(s, &P);
    if (!s->valid) {
        if (x0 == NULL || !isfinite(t0) || t_target < t0)
            return MBS_RKSTAB_EARG;
        if (!finite_vec(x0, n))
            return MBS_RKSTAB_ENONFINITE;
        memcpy(P.X, x0, sizeof(double) * (size_t)n);
        s->t_cur = t0;
        s->nfev++;
        if (f(ctx, t0, P.X, P.F0) != 0)
            return MBS_RKSTAB_ERHS;
        if (!finite_vec(P.F0, n))
            return MBS_RKSTAB_ENONFINITE;
        s->valid = 1;
        s->first = 1;
        s->dense_valid = 0;
        s->jac_valid = 0;
    }
    if (t_target < s->t_cur) { /* inside the last step */
        if (!s->dense_valid || t_target < s->t_prev - 1e-12 * (1.0 + fabs(s->t_prev)))
            return MBS_RKSTAB_EARG;
        interpolate(s, &P, t_target, xout);
        return MBS_RKSTAB_OK;
    }
    /* RADAU5's internal tolerances: rtol' = 0.1 rtol^(2/3), atol' = rtol' atol / rtol */
    rtol_n = 0.1 * pow(s->rtol, 2.0 / 3.0);
    atol_n = rtol_n * s->atol / s->rtol;
    fnewt = 10.0 * EPS / rtol_n;
    if (fnewt < (sqrt(rtol_n) < 0.03 ? sqrt(rtol_n) : 0.03))
        fnewt = sqrt(rtol_n) < 0.03 ? sqrt(rtol_n) : 0.03;
    span = t_target - s->t_cur;
    h = s->h > 0.0 && isfinite(s->h) ? s->h : 1e-6 * (span > 1.0 ? span : 1.0);
    if (h > s->hmax)
        h = s->hmax;
    hmin = s->hmin > 0.0 ? s->hmin : 1e-14 * (span > 0.0 ? span : 1.0);
    if (s->hmax < hmin)
        return MBS_RKSTAB_EHMAX;

    while (s->t_cur < t_target) {
        double t = s->t_cur, hstep = h, hnew = h;
        int clipped = 0, res, newt = 0;
        if (max_steps > 0 && nattempt >= max_steps) {
            rc = MBS_RKSTAB_ETOOMANY;
            break;
        }
        if (h < hmin) {
            rc = last_nonfinite ? MBS_RKSTAB_ENONFINITE : MBS_RKSTAB_EUNDERFLOW;
            break;
        }
        nattempt++;
        if (t + 1.01 * h >= t_stop) {
            hstep = t_stop - t;
            clipped = 1;
        }
        if (!s->jac_valid) {
            if (jacobian(s, &P, f, jac, ctx, t) != 0) {
                rc = MBS_RKSTAB_ERHS;
                break;
            }
            s->jac_valid = 1;
            jac_fresh = 1;
            lu_valid = 0;
        }
        if (!lu_valid || h_lu != hstep) {
            if (decompose(s, &P, hstep) != 0) {
                if (++nsing >= MAX_SINGULAR) {
                    rc = MBS_RADAU_ESINGULAR;
                    break;
                }
                h = 0.5 * hstep;
                s->nreject++;
                continue;
            }
            lu_valid = 1;
            h_lu = hstep;
            nsing = 0;
        }
        res = attempt(s, &P, f, ctx, t, hstep, rtol_n, atol_n, fnewt, &hnew, &newt);
        if (res == STEP_ACCEPT) {
            s->naccept++;
            s->first = 0;
            s->t_prev = t;
            s->h_dense = hstep;
            s->dense_valid = 1;
            s->t_cur = t + hstep;
            if (clipped)
                s->t_cur = t_stop;
            last_nonfinite = 0;
            if (p != NULL) {
                s->nproj++;
                if (p(ctx, s->t_cur, P.X) != 0) {
                    rc = MBS_RKSTAB_EPROJECT;
                    break;
                }
            }
            s->nfev++;
            if (f(ctx, s->t_cur, P.X, P.F0) != 0) {
                rc = MBS_RKSTAB_ERHS;
                break;
            }
            if (!finite_vec(P.F0, n)) {
                rc = MBS_RKSTAB_ENONFINITE;
                break;
            }
            if (hnew > s->hmax)
                hnew = s->hmax;
            if (s->reject_last && hnew > hstep)
                hnew = hstep;
            if (clipped && hnew < h && !s->reject_last)
                hnew = h; /* a step shortened to the stop time does not shrink the proposal */
            s->reject_last = 0;
            jac_fresh = 0;
            if (s->theta <= THET && hnew / hstep >= QUOT1 && hnew / hstep <= QUOT2) {
                hnew = hstep; /* keep the Jacobian and the LU */
            } else {
                lu_valid = 0;
                if (s->theta > THET)
                    s->jac_valid = 0;
            }
            h = hnew;
        } else {
            s->nreject++;
            s->reject_last = 1;
            lu_valid = 0;
            if (res == STEP_NEWTON_FAIL || res == STEP_NONFINITE) {
                h = 0.5 * hstep;
                last_nonfinite = res == STEP_NONFINITE;
            } else {
                h = s->first ? 0.1 * hstep : hnew;
                last_nonfinite = 0;
            }
            if (!jac_fresh)
                s->jac_valid = 0; /* retry with the Jacobian at this point */
        }
    }
    s->h = h;
    if (rc != MBS_RKSTAB_OK)
        return rc;
    if (t_target == s->t_cur || !s->dense_valid)
        memcpy(xout, P.X, sizeof(double) * (size_t)n);
    else
        interpolate(s, &P, t_target, xout);
    return MBS_RKSTAB_OK;
}
