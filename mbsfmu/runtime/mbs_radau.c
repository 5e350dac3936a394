/*
 * mbs_radau.c -- Radau IIA of order 5 for the engine; the method is described in mbs_radau.h.
 */
#include "mbs_radau.h"

#include <math.h>
#include <string.h>

#include "mbs_linalg.h"
#include "mbs_rk_shared.h"

/* Nodes c1, c2 (c3 = 1). */
#define SQ6 2.449489742783178098
static const double C1 = (4.0 - SQ6) / 10.0, C2 = (4.0 + SQ6) / 10.0;
/* Embedded error estimate. */
static const double DD1 = -(13.0 + 7.0 * SQ6) / 3.0, DD2 = (-13.0 + 7.0 * SQ6) / 3.0, DD3 = -1.0 / 3.0;
/* Eigenvalues of A^-1: gamma and alpha +- i beta. */
static const double GAMMA = 3.6378342527444962, ALPHA = 2.6810828736277523, BETA = 3.0504301992474105;
/* T with T^-1 A^-1 T = diag(gamma, [alpha -beta; beta alpha]) (third row (t31, 1, 0)), and T^-1. */
static const double T11 = 9.1232394870892942792e-02, T12 = -0.14125529502095420843,
                    T13 = -3.0029194105147424492e-02, T21 = 0.24171793270710701896,
                    T22 = 0.20412935229379993199, T23 = 0.38294211275726193779,
                    T31 = 0.96604818261509293619;
static const double TI11 = 4.3255798900631553510, TI12 = 0.33919925181580986954,
                    TI13 = 0.54177053993587487119, TI21 = -4.1787185915519047273,
                    TI22 = -0.32768282076106238708, TI23 = 0.47662355450055045196,
                    TI31 = -0.50287263494578687595, TI32 = 2.5719269498556054292,
                    TI33 = -0.59603920482822492497;

#define NIT 7             /* Newton iterations per step at most */
#define SAFE 0.9          /* safety factor of the step-size control */
#define QUOT_MIN 0.125    /* h_new / h <= 8 ... */
#define QUOT_MAX 5.0      /* ... and >= 0.2 */
#define THET 0.001        /* keep the Jacobian while the Newton contraction is below this */
#define KEEP_LO 1.0       /* keep h and the LU while the new step is within [1, 1.2] h */
#define KEEP_HI 1.2
#define MAX_SINGULAR 5    /* singular iteration matrices in a row before giving up */
#define H_START 1e-6      /* RADAU5's first step */
#define EPS 2.220446049250313e-16

/* Rows of the work array. */
typedef struct {
    double *X;    /* state at t_cur (projected) */
    double *F0;   /* f(t_cur, X) */
    double *Z;    /* z1, z2, z3 (3n, contiguous); during an iteration the stage values of f and the
                     transformed Newton corrections */
    double *W;    /* w = (T^-1 x I) z (3n) */
    double *CONT; /* collocation polynomial of the last accepted step (4n, Newton form) */
    double *SCAL; /* Newton-norm scale */
    double *EF;   /* (d1 z1 + d2 z2 + d3 z3) / h of the error estimate */
    double *ERR;  /* error estimate */
    double *XS;   /* stage argument, scratch */
    double *XN;   /* x_new (projected) */
    double *FN;   /* f(t + h, x_new) */
    double *J;    /* Jacobian, n x n */
    double *E1;   /* LU of gamma/h I - J */
    double *E2R, *E2I; /* complex LU of (alpha + i beta)/h I - J: real and imaginary parts */
    int *P1, *P2; /* pivots */
} rows;

static void layout(const mbs_radau *s, rows *R)
{
    const int n = s->n;
    double *w = s->work;
    R->X = w;
    R->F0 = R->X + n;
    R->Z = R->F0 + n;
    R->W = R->Z + 3 * n;
    R->CONT = R->W + 3 * n;
    R->SCAL = R->CONT + 4 * n;
    R->EF = R->SCAL + n;
    R->ERR = R->EF + n;
    R->XS = R->ERR + n;
    R->XN = R->XS + n;
    R->FN = R->XN + n; /* 18 n so far */
    R->J = R->FN + n;
    R->E1 = R->J + n * n;
    R->E2R = R->E1 + n * n;
    R->E2I = R->E2R + n * n; /* + 4 n^2 */
    R->P1 = s->iwork;
    R->P2 = s->iwork + n;
}

static int all_finite(const double *v, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

/* sqrt(1/(n m) sum (v_i / scal_(i mod n))^2) over m consecutive rows of n */
static double scaled_norm(const double *v, const double *scal, int n, int m)
{
    double sum = 0.0;
    int i, k;
    for (k = 0; k < m; k++)
        for (i = 0; i < n; i++) {
            double q = v[k * n + i] / scal[i];
            sum += q * q;
        }
    return sqrt(sum / ((double)n * m));
}

int mbs_radau_init(mbs_radau *s, int n, double *work, int *iwork, double rtol, double atol, double hmax)
{
    if (s == NULL)
        return MBS_RKSTAB_EARG;
    memset(s, 0, sizeof *s);
    if (n < 1 || work == NULL || iwork == NULL || !(rtol > 0.0) || !isfinite(rtol) || isnan(atol) ||
        isinf(atol) || isnan(hmax))
        return MBS_RKSTAB_EARG;
    s->n = n;
    s->work = work;
    s->iwork = iwork;
    s->rtol = rtol;
    s->atol = atol < 0.0 ? rtol / 10.0 : atol;
    s->hmax = hmax > 0.0 ? hmax : HUGE_VAL;
    s->hmin = 0.0;
    s->h = 0.0;
    mbs_radau_reset(s);
    return MBS_RKSTAB_OK;
}

void mbs_radau_reset(mbs_radau *s)
{
    if (s == NULL)
        return;
    s->valid = 0;
    s->dense_valid = 0;
    s->jac_valid = 0;
    s->jac_fresh = 0;
    s->lu_valid = 0;
    s->h_lu = 0.0;
    s->first = 1;
    s->reject_last = 0;
    s->h_acc = 0.0;
    s->err_acc = 1e-2;
    s->faccon = 1.0;
    s->theta = 1.0;
}

const char *mbs_radau_message(int code)
{
    if (code == MBS_RADAU_ESINGULAR)
        return "the iteration matrix of the implicit method stayed singular while the step size was "
               "halved";
    if (code == MBS_RADAU_ENEWTON)
        return "step size underflow: the Newton iteration of the implicit method diverged at every "
               "step size (no solution of its stage equations near the state: a singularity of the "
               "model's forces or constraints, or a discontinuity)";
    return mbs_rkstab_message(code);
}

/* Jacobian at (t, X) with F0 = f(t, X): the callback's, or forward differences. */
static int jacobian(mbs_radau *s, const rows *R, mbs_rhs_fn f, mbs_jac_fn jac, void *ctx, double t)
{
    const int n = s->n;
    int i, j;
    s->njev++;
    if (jac != NULL) {
        if (jac(ctx, t, R->X, R->F0, R->J) != 0)
            return MBS_RKSTAB_ERHS;
    } else {
        memcpy(R->XS, R->X, sizeof(double) * (size_t)n);
        for (j = 0; j < n; j++) {
            const double xj = R->X[j];
            const double delta = sqrt(EPS * (fabs(xj) > 1e-5 ? fabs(xj) : 1e-5));
            R->XS[j] = xj + delta;
            s->nfev++;
            if (f(ctx, t, R->XS, R->FN) != 0)
                return MBS_RKSTAB_ERHS;
            for (i = 0; i < n; i++)
                R->J[i * n + j] = (R->FN[i] - R->F0[i]) / ((xj + delta) - xj);
            R->XS[j] = xj;
        }
    }
    return all_finite(R->J, n * n) ? MBS_RKSTAB_OK : MBS_RKSTAB_ENONFINITE;
}

/* Complex LU with partial pivoting (pivot: largest |re| + |im|), in place, of the n x n matrix
 * ar + i ai; piv as mbs_lu_factor.  Singular (returns k + 1) when the modulus of the k-th pivot is
 * <= MBS_LINALG_PIVOT_RTOL times the largest modulus of the input, or NaN. */
static int clu_factor(int n, double *ar, double *ai, int *piv)
{
    double amax = 0.0, thr;
    int i, j, k;
    for (i = 0; i < n * n; i++) {
        double a = hypot(ar[i], ai[i]);
        if (a > amax)
            amax = a;
    }
    thr = MBS_LINALG_PIVOT_RTOL * amax;
    for (k = 0; k < n; k++) {
        double best = -1.0, pr, pi, d, ir, ii;
        int p = k;
        for (i = k; i < n; i++) {
            double a = fabs(ar[i * n + k]) + fabs(ai[i * n + k]);
            if (a > best) {
                best = a;
                p = i;
            }
        }
        piv[k] = p;
        if (!(hypot(ar[p * n + k], ai[p * n + k]) > thr))
            return k + 1;
        if (p != k)
            for (j = 0; j < n; j++) {
                double tr = ar[k * n + j], ti = ai[k * n + j];
                ar[k * n + j] = ar[p * n + j];
                ai[k * n + j] = ai[p * n + j];
                ar[p * n + j] = tr;
                ai[p * n + j] = ti;
            }
        pr = ar[k * n + k];
        pi = ai[k * n + k];
        d = pr * pr + pi * pi;
        ir = pr / d; /* 1 / pivot */
        ii = -pi / d;
        for (i = k + 1; i < n; i++) {
            double xr = ar[i * n + k], xi = ai[i * n + k];
            double lr = xr * ir - xi * ii, li = xr * ii + xi * ir;
            ar[i * n + k] = lr;
            ai[i * n + k] = li;
            if (lr != 0.0 || li != 0.0)
                for (j = k + 1; j < n; j++) {
                    double ur = ar[k * n + j], ui = ai[k * n + j];
                    ar[i * n + j] -= lr * ur - li * ui;
                    ai[i * n + j] -= lr * ui + li * ur;
                }
        }
    }
    return 0;
}

/* Solve (ar + i ai) (xr + i xi) = br + i bi with the factors of clu_factor; b is overwritten. */
static void clu_solve(int n, const double *ar, const double *ai, const int *piv, double *br, double *bi)
{
    int i, j, k;
    for (k = 0; k < n; k++)
        if (piv[k] != k) {
            double tr = br[k], ti = bi[k];
            br[k] = br[piv[k]];
            bi[k] = bi[piv[k]];
            br[piv[k]] = tr;
            bi[piv[k]] = ti;
        }
    for (i = 1; i < n; i++) { /* L y = b, unit diagonal */
        double sr = br[i], si = bi[i];
        for (j = 0; j < i; j++) {
            double lr = ar[i * n + j], li = ai[i * n + j];
            sr -= lr * br[j] - li * bi[j];
            si -= lr * bi[j] + li * br[j];
        }
        br[i] = sr;
        bi[i] = si;
    }
    for (i = n - 1; i >= 0; i--) { /* U x = y */
        double sr = br[i], si = bi[i], ur, ui, d;
        for (j = i + 1; j < n; j++) {
            double vr = ar[i * n + j], vi = ai[i * n + j];
            sr -= vr * br[j] - vi * bi[j];
            si -= vr * bi[j] + vi * br[j];
        }
        ur = ar[i * n + i];
        ui = ai[i * n + i];
        d = ur * ur + ui * ui;
        br[i] = (sr * ur + si * ui) / d;
        bi[i] = (si * ur - sr * ui) / d;
    }
}

/* Factor E1 = gamma/h I - J (real) and E2 = (alpha + i beta)/h I - J (complex); nonzero: singular. */
static int decompose(mbs_radau *s, const rows *R, double h)
{
    const int n = s->n;
    const double g = GAMMA / h, a = ALPHA / h, b = BETA / h;
    int i, j;
    s->ndec++;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            const double jij = R->J[i * n + j];
            R->E1[i * n + j] = (i == j ? g : 0.0) - jij;
            R->E2R[i * n + j] = (i == j ? a : 0.0) - jij;
            R->E2I[i * n + j] = i == j ? b : 0.0;
        }
    if (mbs_lu_factor(n, R->E1, R->P1) != 0)
        return 1;
    return clu_factor(n, R->E2R, R->E2I, R->P2) != 0;
}

/* Outcomes of one attempted step. */
enum { STEP_ACCEPT, STEP_REJECT, STEP_NEWTON_FAIL, STEP_NONFINITE, STEP_RHS_FAIL };

/* Internal tolerances and Newton stopping criterion of a call. */
typedef struct {
    double rtol, atol, fnewt;
} tolerances;

/* Newton iteration and error estimate of one step of size h from (t, X) with the factors for h.
 * STEP_ACCEPT: err <= 1 (*err, *newt set), XN = projected x_new, FN = f(t + h, XN), Z = the stage
 * increments.  STEP_REJECT: error test failed or Newton too slow; *hnew is the step to retry.
 * Other STEP_*: halve h.  Negative: MBS_RKSTAB_EPROJECT. */
static int attempt(mbs_radau *s, const rows *R, mbs_rhs_fn f, mbs_project_fn p, void *ctx, double t,
                   double h, double t_new, const tolerances *tol, double *err_out, int *newt_out,
                   double *hnew)
{
    const int n = s->n;
    const double g = GAMMA / h, a = ALPHA / h, b = BETA / h;
    const double c[3] = {C1, C2, 1.0};
    double *Z1 = R->Z, *Z2 = R->Z + n, *Z3 = R->Z + 2 * n;
    double *W1 = R->W, *W2 = R->W + n, *W3 = R->W + 2 * n;
    double dyno, dynold = 1.0, thq, thqold = 1.0, err;
    int i, k, newt = 0;

    for (i = 0; i < n; i++)
        R->SCAL[i] = tol->atol + tol->rtol * fabs(R->X[i]);
    if (s->dense_valid && !s->first) {
        /* starting values: the last collocation polynomial at t + c_k h, relative to its end */
        const double *d1 = R->CONT + n, *d2 = R->CONT + 2 * n, *d3 = R->CONT + 3 * n;
        for (k = 0; k < 3; k++) {
            const double q = c[k] * h / s->h_dense;
            double *Zk = R->Z + k * n;
            for (i = 0; i < n; i++)
                Zk[i] = q * (d1[i] + (q - (C2 - 1.0)) * (d2[i] + (q - (C1 - 1.0)) * d3[i]));
        }
        for (i = 0; i < n; i++) {
            W1[i] = TI11 * Z1[i] + TI12 * Z2[i] + TI13 * Z3[i];
            W2[i] = TI21 * Z1[i] + TI22 * Z2[i] + TI23 * Z3[i];
            W3[i] = TI31 * Z1[i] + TI32 * Z2[i] + TI33 * Z3[i];
        }
    } else {
        memset(R->Z, 0, sizeof(double) * (size_t)(3 * n));
        memset(R->W, 0, sizeof(double) * (size_t)(3 * n));
    }

    s->faccon = pow(s->faccon > EPS ? s->faccon : EPS, 0.8);
    s->theta = THET;
    for (;;) {
        if (newt >= NIT)
            return STEP_NEWTON_FAIL;
        /* f at the stages, written over Z */
        for (k = 0; k < 3; k++) {
            double *Zk = R->Z + k * n;
            for (i = 0; i < n; i++)
                R->XS[i] = R->X[i] + Zk[i];
            if (!all_finite(R->XS, n))
                return STEP_NONFINITE;
            s->nfev++;
            if (f(ctx, t + c[k] * h, R->XS, Zk) != 0)
                return STEP_RHS_FAIL;
            if (!all_finite(Zk, n))
                return STEP_NONFINITE;
        }
        /* right-hand sides of the transformed systems: (T^-1 F) - (T^-1 A^-1 T / h) W */
        for (i = 0; i < n; i++) {
            const double f1 = Z1[i], f2 = Z2[i], f3 = Z3[i];
            const double r1 = TI11 * f1 + TI12 * f2 + TI13 * f3;
            const double r2 = TI21 * f1 + TI22 * f2 + TI23 * f3;
            const double r3 = TI31 * f1 + TI32 * f2 + TI33 * f3;
            Z1[i] = r1 - g * W1[i];
            Z2[i] = r2 - a * W2[i] + b * W3[i];
            Z3[i] = r3 - b * W2[i] - a * W3[i];
        }
        mbs_lu_solve(n, R->E1, R->P1, Z1);
        clu_solve(n, R->E2R, R->E2I, R->P2, Z2, Z3);
        s->nnewton++;
        newt++;
        dyno = scaled_norm(R->Z, R->SCAL, n, 3);
        if (!isfinite(dyno))
            return STEP_NONFINITE;
        if (newt > 1 && newt < NIT) {
            thq = dyno / dynold;
            s->theta = newt == 2 ? thq : sqrt(thq * thqold);
            thqold = thq;
            if (s->theta < 0.99) {
                double dyth;
                s->faccon = s->theta / (1.0 - s->theta);
                dyth = s->faccon * dyno * pow(s->theta, NIT - 1 - newt) / tol->fnewt;
                if (dyth >= 1.0) { /* would not converge within NIT iterations: a smaller step */
                    const double qnewt = dyth < 20.0 ? dyth : 20.0;
                    *hnew = 0.8 * h * pow(qnewt, -1.0 / (4.0 + NIT - 1 - newt));
                    return STEP_REJECT;
                }
            } else {
                return STEP_NEWTON_FAIL;
            }
        }
        dynold = dyno > EPS ? dyno : EPS;
        for (i = 0; i < n; i++) {
            const double w1 = W1[i] + Z1[i], w2 = W2[i] + Z2[i], w3 = W3[i] + Z3[i];
            W1[i] = w1;
            W2[i] = w2;
            W3[i] = w3;
            Z1[i] = T11 * w1 + T12 * w2 + T13 * w3;
            Z2[i] = T21 * w1 + T22 * w2 + T23 * w3;
            Z3[i] = T31 * w1 + w2;
        }
        if (s->faccon * dyno <= tol->fnewt)
            break;
    }
    *newt_out = newt;

    /* error estimate, scaled with max(|x|, |x_new|) */
    for (i = 0; i < n; i++) {
        const double ax = fabs(R->X[i]), axn = fabs(R->X[i] + Z3[i]);
        R->SCAL[i] = tol->atol + tol->rtol * (ax > axn ? ax : axn);
        R->EF[i] = (DD1 * Z1[i] + DD2 * Z2[i] + DD3 * Z3[i]) / h;
        R->ERR[i] = R->F0[i] + R->EF[i];
    }
    mbs_lu_solve(n, R->E1, R->P1, R->ERR);
    err = scaled_norm(R->ERR, R->SCAL, n, 1);
    if (err >= 1.0 && (s->first || s->reject_last) && isfinite(err)) {
        for (i = 0; i < n; i++)
            R->XS[i] = R->X[i] + R->ERR[i];
        if (!all_finite(R->XS, n))
            return STEP_NONFINITE;
        s->nfev++;
        if (f(ctx, t, R->XS, R->ERR) != 0)
            return STEP_RHS_FAIL;
        for (i = 0; i < n; i++)
            R->ERR[i] += R->EF[i];
        mbs_lu_solve(n, R->E1, R->P1, R->ERR);
        err = scaled_norm(R->ERR, R->SCAL, n, 1);
    }
    if (!isfinite(err))
        return STEP_NONFINITE;
    *err_out = err > 1e-10 ? err : 1e-10;
    if (err >= 1.0)
        return STEP_REJECT; /* *hnew from the controller */

    /* passed: x_new, projected, and f there */
    for (i = 0; i < n; i++)
        R->XN[i] = R->X[i] + Z3[i];
    if (p != NULL) {
        s->nproj++;
        if (p(ctx, t_new, R->XN) != 0)
            return MBS_RKSTAB_EPROJECT;
        if (!all_finite(R->XN, n))
            return STEP_NONFINITE;
    }
    s->nfev++;
    if (f(ctx, t_new, R->XN, R->FN) != 0)
        return STEP_RHS_FAIL;
    if (!all_finite(R->FN, n))
        return STEP_NONFINITE;
    return STEP_ACCEPT;
}

/* Newton form of the collocation polynomial u of the step from the increments Z (nodes s = 0,
 * c2 - 1, c1 - 1, -1 in units of the step, relative to its end):
 *   u(s) = x_new + s (d1 + (s - c2 + 1) (d2 + (s - c1 + 1) d3)),  u(-1) = x. */
static void store_polynomial(const mbs_radau *s, const rows *R)
{
    const int n = s->n;
    const double *Z1 = R->Z, *Z2 = R->Z + n, *Z3 = R->Z + 2 * n;
    int i;
    for (i = 0; i < n; i++) {
        const double d1 = (Z2[i] - Z3[i]) / (C2 - 1.0);        /* u[0, c2-1] */
        const double d12 = (Z1[i] - Z2[i]) / (C1 - C2);        /* u[c2-1, c1-1] */
        const double d2 = (d12 - d1) / (C1 - 1.0);             /* u[0, c2-1, c1-1] */
        const double d13 = (d12 - Z1[i] / C1) / C2;            /* u[c2-1, c1-1, -1] */
        R->CONT[i] = R->X[i] + Z3[i];
        R->CONT[n + i] = d1;
        R->CONT[2 * n + i] = d2;
        R->CONT[3 * n + i] = d2 - d13;                         /* u[0, c2-1, c1-1, -1] */
    }
}

static void interpolate(const mbs_radau *s, const rows *R, double t, double *out)
{
    const int n = s->n;
    const double q = (t - s->t_cur) / s->h_dense;
    int i;
    for (i = 0; i < n; i++) {
        const double inner = R->CONT[2 * n + i] + (q - (C1 - 1.0)) * R->CONT[3 * n + i];
        out[i] = R->CONT[i] + q * (R->CONT[n + i] + (q - (C2 - 1.0)) * inner);
    }
}

/* Steps from the valid internal state until t_cur >= t_target, never past t_stop (>= t_target). */
static int integrate(mbs_radau *s, mbs_rhs_fn f, mbs_jac_fn jac, mbs_project_fn p, void *ctx,
                     double t_target, double t_stop, long max_steps)
{
    const int n = s->n;
    rows R;
    tolerances tol;
    double h, hmin_call, span = t_target - s->t_cur;
    long nattempt = 0;
    int rc = MBS_RKSTAB_OK, nsing = 0;
    int underflow_rc = MBS_RKSTAB_EUNDERFLOW; /* what h < hmin means: the cause of the last rejection */

    layout(s, &R);
    if (!(s->rtol > 0.0) || !isfinite(s->rtol) || !(s->atol >= 0.0) || !isfinite(s->atol) || isnan(s->hmax))
        return MBS_RKSTAB_EARG;
    /* RADAU5's internal tolerances (the estimate is of order 4, the method of order 5) */
    tol.rtol = 0.1 * pow(s->rtol, 2.0 / 3.0);
    tol.atol = tol.rtol * s->atol / s->rtol;
    tol.fnewt = sqrt(tol.rtol) < 0.03 ? sqrt(tol.rtol) : 0.03;
    if (tol.fnewt < 10.0 * EPS / tol.rtol)
        tol.fnewt = 10.0 * EPS / tol.rtol;

    /* smallest step: the caller's, or 1e-14 of the span (at most 1e-14), and never below 10 ulp(t)
     * (checked at every step) */
    hmin_call = s->hmin > 0.0 ? s->hmin : 1e-14 * (span < 1.0 ? span : 1.0);
    if (hmin_call < 10.0 * mbs_rk_spacing(fabs(s->t_cur)))
        hmin_call = 10.0 * mbs_rk_spacing(fabs(s->t_cur));
    if (s->hmax < hmin_call)
        return MBS_RKSTAB_EHMAX;
    if (s->h > 0.0 && isfinite(s->h)) {
        h = s->h;
    } else {
        h = H_START > 100.0 * hmin_call ? H_START : 100.0 * hmin_call;
    }
    if (h > s->hmax)
        h = s->hmax;

    while (s->t_cur < t_target) {
        const double t = s->t_cur;
        double hstep = h, t_new, hmin, err = 0.0, hnew = h, quot = 1.0, fac;
        int res, newt = 0, clipped = 0;

        hmin = 10.0 * mbs_rk_spacing(fabs(t));
        if (hmin < hmin_call)
            hmin = hmin_call;
        if (max_steps > 0 && nattempt >= max_steps) {
            rc = MBS_RKSTAB_ETOOMANY;
            break;
        }
        if (h < hmin) {
            rc = underflow_rc;
            break;
        }
        nattempt++;
        if (t + 1.01 * h >= t_stop) {
            hstep = t_stop - t;
            t_new = t_stop;
            clipped = 1;
        } else {
            t_new = t + hstep;
        }

        if (!s->jac_valid) {
            rc = jacobian(s, &R, f, jac, ctx, t);
            if (rc != MBS_RKSTAB_OK)
                break;
            s->jac_valid = 1;
            s->jac_fresh = 1;
            s->lu_valid = 0;
        }
        if (!s->lu_valid || s->h_lu != hstep) {
            s->lu_valid = 0;
            if (decompose(s, &R, hstep) != 0) {
                if (++nsing >= MAX_SINGULAR) {
                    rc = MBS_RADAU_ESINGULAR;
                    break;
                }
                s->nreject++;
                s->reject_last = 1;
                underflow_rc = MBS_RKSTAB_EUNDERFLOW;
                h = 0.5 * hstep;
                if (!s->jac_fresh)
                    s->jac_valid = 0;
                continue;
            }
            nsing = 0;
            s->lu_valid = 1;
            s->h_lu = hstep;
        }

        res = attempt(s, &R, f, p, ctx, t, hstep, t_new, &tol, &err, &newt, &hnew);
        if (res < 0) {
            rc = res;
            break;
        }
        if (res == STEP_ACCEPT || (res == STEP_REJECT && err >= 1.0)) {
            /* step-size controller: fewer Newton iterations allow a bolder step */
            fac = SAFE * (1.0 + 2.0 * NIT) / (newt + 2.0 * NIT);
            if (fac > SAFE)
                fac = SAFE;
            quot = pow(err, 0.25) / fac;
            quot = quot < QUOT_MIN ? QUOT_MIN : (quot > QUOT_MAX ? QUOT_MAX : quot);
            hnew = hstep / quot;
        }
        if (res == STEP_ACCEPT) {
            const int shortened = clipped && hstep < h;
            if (!s->first && !shortened) { /* Gustafsson's predictive controller */
                double facgus = (s->h_acc / hstep) * pow(err * err / s->err_acc, 0.25) / SAFE;
                facgus = facgus < QUOT_MIN ? QUOT_MIN : (facgus > QUOT_MAX ? QUOT_MAX : facgus);
                if (facgus > quot)
                    hnew = hstep / facgus;
            }
            if (!shortened) {
                s->h_acc = hstep;
                s->err_acc = err > 1e-2 ? err : 1e-2;
            }
            store_polynomial(s, &R);
            memcpy(R.X, R.XN, sizeof(double) * (size_t)n);
            memcpy(R.F0, R.FN, sizeof(double) * (size_t)n);
            s->t_prev = t;
            s->t_cur = t_new;
            s->h_dense = t_new - t;
            s->dense_valid = 1;
            s->naccept++;
            s->first = 0;
            s->jac_fresh = 0;
            underflow_rc = MBS_RKSTAB_EUNDERFLOW;
            if (s->reject_last && hnew > hstep)
                hnew = hstep;
            if (hnew > s->hmax)
                hnew = s->hmax;
            if (shortened) {
                /* shortened to hit t_stop: keep the proposal */
                if (hnew < h)
                    hnew = h;
                if (s->reject_last && hnew > h)
                    hnew = h;
            }
            s->reject_last = 0;
            if (s->theta > THET)
                s->jac_valid = 0; /* slow contraction: a new Jacobian at the new point */
            else if (!shortened && hnew >= KEEP_LO * hstep && hnew <= KEEP_HI * hstep)
                hnew = hstep; /* keep the Jacobian and the LU factors */
            h = hnew;
        } else {
            s->nreject++;
            s->reject_last = 1;
            if (res == STEP_REJECT) { /* error test (h / 10 on the first step) or slow Newton */
                h = (s->first && err >= 1.0) ? 0.1 * hstep : hnew;
                underflow_rc = MBS_RKSTAB_EUNDERFLOW;
            } else {
                h = 0.5 * hstep;
                underflow_rc = res == STEP_NONFINITE     ? MBS_RKSTAB_ENONFINITE
                               : res == STEP_RHS_FAIL    ? MBS_RKSTAB_ERHS
                               : res == STEP_NEWTON_FAIL ? MBS_RADAU_ENEWTON
                                                         : MBS_RKSTAB_EUNDERFLOW;
            }
            if (!s->jac_fresh)
                s->jac_valid = 0; /* retry with the Jacobian at this point */
        }
    }
    s->h = h;
    return rc;
}

int mbs_radau_advance_dense(mbs_radau *s, mbs_rhs_fn f, mbs_jac_fn jac, mbs_project_fn p, void *ctx,
                            double t0, const double *x0, double t_target, double t_stop, long max_steps,
                            double *xout)
{
    rows R;
    int n;
    if (s == NULL || f == NULL || xout == NULL || s->work == NULL || s->iwork == NULL || s->n < 1 ||
        !isfinite(t_target) || isnan(t_stop))
        return MBS_RKSTAB_EARG;
    n = s->n;
    layout(s, &R);
    if (!s->valid) { /* (re)start from the caller's state */
        if (x0 == NULL || !isfinite(t0) || t_target < t0)
            return MBS_RKSTAB_EARG;
        if (!all_finite(x0, n))
            return MBS_RKSTAB_ENONFINITE;
        mbs_radau_reset(s);
        memmove(R.X, x0, sizeof(double) * (size_t)n);
        s->nfev++;
        if (f(ctx, t0, R.X, R.F0) != 0)
            return MBS_RKSTAB_ERHS;
        if (!all_finite(R.F0, n))
            return MBS_RKSTAB_ENONFINITE;
        s->t_cur = t0;
        s->valid = 1;
    } else if (t_target < s->t_cur && (!s->dense_valid || t_target < s->t_prev)) {
        return MBS_RKSTAB_EARG; /* not inside the last step */
    }
    if (t_target > s->t_cur) {
        int rc = integrate(s, f, jac, p, ctx, t_target, t_stop > t_target ? t_stop : t_target, max_steps);
        if (rc != MBS_RKSTAB_OK)
            return rc;
    }
    if (t_target == s->t_cur)
        memcpy(xout, R.X, sizeof(double) * (size_t)n);
    else
        interpolate(s, &R, t_target, xout);
    return MBS_RKSTAB_OK;
}

int mbs_radau_advance(mbs_radau *s, mbs_rhs_fn f, mbs_jac_fn jac, mbs_project_fn p, void *ctx, double *t,
                      double *x, double t_end, long max_steps)
{
    int n, rc;
    if (s == NULL || f == NULL || t == NULL || x == NULL || s->work == NULL || s->n < 1 || !isfinite(*t) ||
        !isfinite(t_end) || t_end < *t)
        return MBS_RKSTAB_EARG;
    if (t_end == *t)
        return MBS_RKSTAB_OK;
    n = s->n;
    if (s->valid && !(s->t_cur == *t && memcmp(s->work, x, sizeof(double) * (size_t)n) == 0))
        mbs_radau_reset(s);
    rc = mbs_radau_advance_dense(s, f, jac, p, ctx, *t, x, t_end, t_end, max_steps, x);
    if (s->valid) {
        *t = s->t_cur;
        memcpy(x, s->work, sizeof(double) * (size_t)n);
    }
    return rc;
}
