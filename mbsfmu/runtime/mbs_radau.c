/*
 * mbs_radau.c -- Radau IIA of order 5 for the engine; the method is described in mbs_radau.h.  Its
 * attempt (Newton on the collocation system) and its controller plug into the step driver
 * (mbs_stepper.c), which runs the steps.
 */
#include "mbs_radau.h"

#include <math.h>
#include <string.h>

#include "mbs_linalg.h"

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

/* Rows of the work array (in this order: X 0, F0 1, ..., XN 16, FN 17, then J and the factors). */
typedef struct {
    double *X;    /* state at t (projected) */
    double *F0;   /* f(t, X) */
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
    const int n = s->st.n;
    double *w = s->st.work;
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

/* Jacobian at (t, X) with F0 = f(t, X): the callback's, or forward differences. */
static int jacobian(mbs_radau *s, const rows *R, const mbs_problem *pb, double t)
{
    const int n = s->st.n;
    int i, j;
    s->njev++;
    if (pb->jac != NULL) {
        if (pb->jac(pb->ctx, t, R->X, R->F0, R->J) != 0)
            return MBS_STEP_ERHS;
    } else {
        memcpy(R->XS, R->X, sizeof(double) * (size_t)n);
        for (j = 0; j < n; j++) {
            const double xj = R->X[j];
            const double delta = sqrt(EPS * (fabs(xj) > 1e-5 ? fabs(xj) : 1e-5));
            R->XS[j] = xj + delta;
            s->st.nfev++;
            if (pb->f(pb->ctx, t, R->XS, R->FN) != 0)
                return MBS_STEP_ERHS;
            for (i = 0; i < n; i++)
                R->J[i * n + j] = (R->FN[i] - R->F0[i]) / ((xj + delta) - xj);
            R->XS[j] = xj;
        }
    }
    return mbs_step_finite_each(R->J, n * n) ? MBS_STEP_OK : MBS_STEP_ENONFINITE;
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
    const int n = s->st.n;
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

/* The rows of a stepper that is a Radau (the driver's hooks get its first member). */
#define RADAU(st) ((mbs_radau *)(st))

/* ---------------------------------------------------------------- the iteration matrices */

/* The Jacobian where it is not valid, and E1, E2 factored for the step h.  A singular matrix breaks
 * the attempt (h is halved; MAX_SINGULAR in a row end the call: MBS_STEP_ESINGULAR). */
static int matrices(mbs_radau *s, const rows *R, const mbs_problem *pb, double t, double h, mbs_try *a)
{
    int rc;
    if (!s->jac_valid) {
        rc = jacobian(s, R, pb, t);
        if (rc != MBS_STEP_OK)
            return rc;
        s->jac_valid = 1;
        s->jac_fresh = 1;
        s->lu_valid = 0;
    }
    if (s->lu_valid && s->h_lu == h)
        return MBS_STEP_OK;
    s->lu_valid = 0;
    if (decompose(s, R, h) != 0) {
        if (++s->nsing >= MAX_SINGULAR)
            return MBS_STEP_ESINGULAR;
        a->outcome = MBS_TRY_BROKEN;
        a->cause = MBS_STEP_EUNDERFLOW;
        return MBS_STEP_OK;
    }
    s->nsing = 0;
    s->lu_valid = 1;
    s->h_lu = h;
    return MBS_STEP_OK;
}

/* ---------------------------------------------------------------- one attempt */

/* Outcomes of the Newton iteration and the error estimate. */
enum { STEP_ACCEPT, STEP_REJECT, STEP_NEWTON_FAIL, STEP_NONFINITE, STEP_RHS_FAIL };

/* Starting values of the Newton iteration for the step h: the collocation polynomial of the last
 * step at t + c_k h, relative to its end (zero on the first step), and W = (T^-1 x I) Z. */
static void starting_values(const mbs_radau *s, const rows *R, double h)
{
    const int n = s->st.n;
    const double c[3] = {C1, C2, 1.0};
    const double *Z1 = R->Z, *Z2 = R->Z + n, *Z3 = R->Z + 2 * n;
    double *W1 = R->W, *W2 = R->W + n, *W3 = R->W + 2 * n;
    int i, k;
    if (!s->st.dense_valid || s->first) {
        memset(R->Z, 0, sizeof(double) * (size_t)(3 * n));
        memset(R->W, 0, sizeof(double) * (size_t)(3 * n));
        return;
    }
    for (k = 0; k < 3; k++) {
        const double *d1 = R->CONT + n, *d2 = R->CONT + 2 * n, *d3 = R->CONT + 3 * n;
        const double q = c[k] * h / s->st.h_dense;
        double *Zk = R->Z + k * n;
        for (i = 0; i < n; i++)
            Zk[i] = q * (d1[i] + (q - (C2 - 1.0)) * (d2[i] + (q - (C1 - 1.0)) * d3[i]));
    }
    for (i = 0; i < n; i++) {
        W1[i] = TI11 * Z1[i] + TI12 * Z2[i] + TI13 * Z3[i];
        W2[i] = TI21 * Z1[i] + TI22 * Z2[i] + TI23 * Z3[i];
        W3[i] = TI31 * Z1[i] + TI32 * Z2[i] + TI33 * Z3[i];
    }
}

/* f at the three stages x + z_k (at t + c_k h), written over Z; 0 or STEP_NONFINITE / RHS_FAIL. */
static int stage_values(mbs_radau *s, const rows *R, const mbs_problem *pb, double t, double h)
{
    const int n = s->st.n;
    const double c[3] = {C1, C2, 1.0};
    int i, k;
    for (k = 0; k < 3; k++) {
        double *Zk = R->Z + k * n;
        for (i = 0; i < n; i++)
            R->XS[i] = R->X[i] + Zk[i];
        if (!mbs_step_finite_each(R->XS, n))
            return STEP_NONFINITE;
        s->st.nfev++;
        if (pb->f(pb->ctx, t + c[k] * h, R->XS, Zk) != 0)
            return STEP_RHS_FAIL;
        if (!mbs_step_finite_each(Zk, n))
            return STEP_NONFINITE;
    }
    return 0;
}

/* One Newton correction: the right-hand sides of the transformed systems (T^-1 F) - (T^-1 A^-1 T / h) W
 * from the stage values in Z, solved with E1 (real) and E2 (complex) in place. */
static void newton_correction(const mbs_radau *s, const rows *R, double h)
{
    const int n = s->st.n;
    const double g = GAMMA / h, a = ALPHA / h, b = BETA / h;
    double *Z1 = R->Z, *Z2 = R->Z + n, *Z3 = R->Z + 2 * n;
    const double *W1 = R->W, *W2 = R->W + n, *W3 = R->W + 2 * n;
    int i;
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
}

/* W += the correction (in Z), and Z = (T x I) W. */
static void newton_update(const mbs_radau *s, const rows *R)
{
    const int n = s->st.n;
    double *Z1 = R->Z, *Z2 = R->Z + n, *Z3 = R->Z + 2 * n;
    double *W1 = R->W, *W2 = R->W + n, *W3 = R->W + 2 * n;
    int i;
    for (i = 0; i < n; i++) {
        const double w1 = W1[i] + Z1[i], w2 = W2[i] + Z2[i], w3 = W3[i] + Z3[i];
        W1[i] = w1;
        W2[i] = w2;
        W3[i] = w3;
        Z1[i] = T11 * w1 + T12 * w2 + T13 * w3;
        Z2[i] = T21 * w1 + T22 * w2 + T23 * w3;
        Z3[i] = T31 * w1 + w2;
    }
}

/* The simplified Newton iteration on the collocation system of the step h from (t, X), from the
 * starting values: at most NIT iterations; the contraction rate theta predicts early whether it
 * converges.  STEP_ACCEPT (converged: Z the stage increments, *newt_out iterations), STEP_REJECT
 * (it would converge too slowly: *hnew the step to retry), or STEP_NEWTON_FAIL / NONFINITE /
 * RHS_FAIL. */
static int newton(mbs_radau *s, const rows *R, const mbs_problem *pb, double t, double h, int *newt_out,
                  double *hnew)
{
    const int n = s->st.n;
    double dyno, dynold = 1.0, thq, thqold = 1.0, dyth;
    int newt = 0, rc;
    s->faccon = pow(s->faccon > EPS ? s->faccon : EPS, 0.8);
    s->theta = THET;
    for (;;) {
        if (newt >= NIT)
            return STEP_NEWTON_FAIL;
        if ((rc = stage_values(s, R, pb, t, h)) != 0)
            return rc;
        newton_correction(s, R, h);
        s->nnewton++;
        newt++;
        dyno = scaled_norm(R->Z, R->SCAL, n, 3);
        if (!isfinite(dyno))
            return STEP_NONFINITE;
        if (newt > 1 && newt < NIT) {
            thq = dyno / dynold;
            s->theta = newt == 2 ? thq : sqrt(thq * thqold);
            thqold = thq;
            if (!(s->theta < 0.99))
                return STEP_NEWTON_FAIL;
            s->faccon = s->theta / (1.0 - s->theta);
            dyth = s->faccon * dyno * pow(s->theta, NIT - 1 - newt) / s->tol.fnewt;
            if (dyth >= 1.0) { /* would not converge within NIT iterations: a smaller step */
                const double qnewt = dyth < 20.0 ? dyth : 20.0;
                *hnew = 0.8 * h * pow(qnewt, -1.0 / (4.0 + NIT - 1 - newt));
                return STEP_REJECT;
            }
        }
        dynold = dyno > EPS ? dyno : EPS;
        newton_update(s, R);
        if (s->faccon * dyno <= s->tol.fnewt)
            break;
    }
    *newt_out = newt;
    return STEP_ACCEPT;
}

/* RADAU5's error estimate of the converged step, scaled with max(|x|, |x_new|):
 *   err = E1^-1 (f(t, x) + (d1 z1 + d2 z2 + d3 z3) / h),
 * filtered once more with f(t, x + err) on the first step and after a rejection.  STEP_ACCEPT
 * (*err < 1), STEP_REJECT (*err >= 1) or STEP_NONFINITE / RHS_FAIL; *err at least 1e-10. */
static int error_estimate(mbs_radau *s, const rows *R, const mbs_problem *pb, double t, double h, double *err_out)
{
    const int n = s->st.n;
    const double *Z1 = R->Z, *Z2 = R->Z + n, *Z3 = R->Z + 2 * n;
    double err;
    int i;
    for (i = 0; i < n; i++) {
        const double ax = fabs(R->X[i]), axn = fabs(R->X[i] + Z3[i]);
        R->SCAL[i] = s->tol.atol + s->tol.rtol * (ax > axn ? ax : axn);
        R->EF[i] = (DD1 * Z1[i] + DD2 * Z2[i] + DD3 * Z3[i]) / h;
        R->ERR[i] = R->F0[i] + R->EF[i];
    }
    mbs_lu_solve(n, R->E1, R->P1, R->ERR);
    err = scaled_norm(R->ERR, R->SCAL, mbs_step_nerr(&s->st), 1);
    if (err >= 1.0 && (s->first || s->st.reject_last) && isfinite(err)) {
        for (i = 0; i < n; i++)
            R->XS[i] = R->X[i] + R->ERR[i];
        if (!mbs_step_finite_each(R->XS, n))
            return STEP_NONFINITE;
        s->st.nfev++;
        if (pb->f(pb->ctx, t, R->XS, R->ERR) != 0)
            return STEP_RHS_FAIL;
        for (i = 0; i < n; i++)
            R->ERR[i] += R->EF[i];
        mbs_lu_solve(n, R->E1, R->P1, R->ERR);
        err = scaled_norm(R->ERR, R->SCAL, mbs_step_nerr(&s->st), 1);
    }
    if (!isfinite(err))
        return STEP_NONFINITE;
    *err_out = err > 1e-10 ? err : 1e-10;
    return err >= 1.0 ? STEP_REJECT : STEP_ACCEPT;
}

/* The driver's outcome of a Newton iteration or error estimate that did not pass. */
static void failed(int res, mbs_try *a)
{
    a->outcome = res == STEP_REJECT ? MBS_TRY_REJECTED : MBS_TRY_BROKEN;
    a->cause = res == STEP_NONFINITE ? MBS_STEP_ENONFINITE : res == STEP_RHS_FAIL ? MBS_STEP_ERHS
               : res == STEP_NEWTON_FAIL ? MBS_STEP_ENEWTON : MBS_STEP_EUNDERFLOW;
}

/* One attempted step of size h from (t, X): the iteration matrices, the Newton iteration from the
 * starting values, the error estimate, and for a step that passed x_new = x + z3, projected after
 * the step (not counted in the error), and f(t + h, x_new). */
static int attempt(mbs_stepper *st, const mbs_step_method *m, const mbs_problem *pb, double t, double h,
                   double t_new, mbs_try *a)
{
    mbs_radau *s = RADAU(st);
    const int n = st->n;
    rows R;
    int i, rc, res;
    layout(s, &R);
    rc = matrices(s, &R, pb, t, h, a);
    if (rc != MBS_STEP_OK || a->outcome == MBS_TRY_BROKEN)
        return rc;
    for (i = 0; i < n; i++)
        R.SCAL[i] = s->tol.atol + s->tol.rtol * fabs(R.X[i]);
    starting_values(s, &R, h);
    res = newton(s, &R, pb, t, h, &a->iterations, &a->h_retry);
    if (res == STEP_ACCEPT)
        res = error_estimate(s, &R, pb, t, h, &a->err);
    if (res != STEP_ACCEPT) {
        failed(res, a);
        return MBS_STEP_OK;
    }
    for (i = 0; i < n; i++)
        R.XN[i] = R.X[i] + R.Z[2 * n + i];
    return mbs_step_project_after(st, m, pb, t_new, NULL, NULL, a);
}

/* ---------------------------------------------------------------- the controller and the dense output */

/* Newton form of the collocation polynomial u of the step from the increments Z (nodes s = 0,
 * c2 - 1, c1 - 1, -1 in units of the step, relative to its end):
 *   u(s) = x_new + s (d1 + (s - c2 + 1) (d2 + (s - c1 + 1) d3)),  u(-1) = x. */
static void store_polynomial(const mbs_radau *s, const rows *R)
{
    const int n = s->st.n;
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

static int interpolate(mbs_stepper *st, const mbs_problem *pb, double t, double *out)
{
    const mbs_radau *s = RADAU(st);
    const int n = st->n;
    const double q = (t - st->t) / st->h_dense;
    rows R;
    int i;
    (void)pb;
    layout(s, &R);
    for (i = 0; i < n; i++) {
        const double inner = R.CONT[2 * n + i] + (q - (C1 - 1.0)) * R.CONT[3 * n + i];
        out[i] = R.CONT[i] + q * (R.CONT[n + i] + (q - (C2 - 1.0)) * inner);
    }
    return MBS_STEP_OK;
}

/* h / h_new of the step-size controller after a step with error err and newt Newton iterations:
 * err^(1/4) / fac within [QUOT_MIN, QUOT_MAX], fac = min(SAFE, SAFE (1 + 2 NIT) / (newt + 2 NIT))
 * (fewer Newton iterations allow a bolder step). */
static double quotient(double err, int newt)
{
    double fac = SAFE * (1.0 + 2.0 * NIT) / (newt + 2.0 * NIT), quot;
    if (fac > SAFE)
        fac = SAFE;
    quot = pow(err, 0.25) / fac;
    return quot < QUOT_MIN ? QUOT_MIN : (quot > QUOT_MAX ? QUOT_MAX : quot);
}

/* After a passed attempt: the controller with Gustafsson's predictive rule after the first accepted
 * step (a step shortened to hit t_stop keeps the proposal and the history), the collocation
 * polynomial of the step, and the reuse of the Jacobian (slow contraction: a new one) and of the
 * LU factors and h (while the new step would be within [KEEP_LO, KEEP_HI] h). */
static double accepted(mbs_stepper *st, const mbs_step_method *m, const mbs_try *a, double t, double h,
                       double t_new, double h_prop, int clipped, double t_end)
{
    mbs_radau *s = RADAU(st);
    const int shortened = clipped && h < h_prop;
    const double quot = quotient(a->err, a->iterations);
    double hnew = h / quot;
    rows R;
    (void)m;
    (void)t_end;
    if (!s->first && !shortened) { /* Gustafsson's predictive controller */
        double facgus = (s->h_acc / h) * pow(a->err * a->err / s->err_acc, 0.25) / SAFE;
        facgus = facgus < QUOT_MIN ? QUOT_MIN : (facgus > QUOT_MAX ? QUOT_MAX : facgus);
        if (facgus > quot)
            hnew = h / facgus;
    }
    if (!shortened) {
        s->h_acc = h;
        s->err_acc = a->err > 1e-2 ? a->err : 1e-2;
    }
    layout(s, &R);
    store_polynomial(s, &R);
    st->t_prev = t;
    st->h_dense = t_new - t;
    st->dense_valid = 1;
    s->first = 0;
    s->jac_fresh = 0;
    if (st->reject_last && hnew > h)
        hnew = h;
    if (hnew > st->hmax)
        hnew = st->hmax;
    if (shortened) { /* shortened to hit t_stop: keep the proposal */
        if (hnew < h_prop)
            hnew = h_prop;
        if (st->reject_last && hnew > h_prop)
            hnew = h_prop;
    }
    if (s->theta > THET)
        s->jac_valid = 0; /* slow contraction: a new Jacobian at the new point */
    else if (!shortened && hnew >= KEEP_LO * h && hnew <= KEEP_HI * h)
        hnew = h; /* keep the Jacobian and the LU factors */
    return hnew;
}

/* After a failed attempt: the controller's step after the error test (h / 10 on the very first
 * step), the Newton iteration's after a slow one, h / 2 after a broken one; the Jacobian is taken
 * anew at this point unless it is from here. */
static double rejected(mbs_stepper *st, const mbs_step_method *m, const mbs_try *a, double h)
{
    mbs_radau *s = RADAU(st);
    double h_next;
    if (a->outcome == MBS_TRY_BROKEN)
        h_next = h * m->nonfinite_shrink;
    else if (a->err >= 1.0)
        h_next = s->first ? 0.1 * h : h / quotient(a->err, a->iterations);
    else
        h_next = a->h_retry;
    if (!s->jac_fresh)
        s->jac_valid = 0;
    return h_next;
}

/* ---------------------------------------------------------------- the method */

/* Forget the Jacobian, the factors and the controller's history (a new start). */
static void restart(mbs_stepper *st)
{
    mbs_radau *s = RADAU(st);
    s->jac_valid = 0;
    s->jac_fresh = 0;
    s->lu_valid = 0;
    s->h_lu = 0.0;
    s->first = 1;
    st->reject_last = 0;
    s->h_acc = 0.0;
    s->err_acc = 1e-2;
    s->faccon = 1.0;
    s->theta = 1.0;
}

/* RADAU5's internal tolerances of a call (the estimate is of order 4, the method of order 5):
 * rtol' = 0.1 rtol^(2/3), atol' = rtol' atol / rtol, and the Newton iteration's stopping criterion. */
static void begin(mbs_stepper *st)
{
    mbs_radau *s = RADAU(st);
    s->tol.rtol = 0.1 * pow(st->rtol, 2.0 / 3.0);
    s->tol.atol = s->tol.rtol * st->atol / st->rtol;
    s->tol.fnewt = sqrt(s->tol.rtol) < 0.03 ? sqrt(s->tol.rtol) : 0.03;
    if (s->tol.fnewt < 10.0 * EPS / s->tol.rtol)
        s->tol.fnewt = 10.0 * EPS / s->tol.rtol;
    s->nsing = 0;
}

const mbs_step_method mbs_radau_method = {
    .name = "radau5",
    .row_f = 1, .row_xn = 16, .row_fn = 17, /* rows F0, XN, FN of layout() */
    .start_order = 0,
    .first_step = H_START,
    .hmin_span = 1.0,  /* hmin 1e-14 min(span, 1), at least 10 ulp of each step's start */
    .hmin_each_step = 1,
    .nonfinite_shrink = 0.5,
    .finite = mbs_step_finite_each,
    .rhs_failure_rejects = 1,
    .restart = restart,
    .begin = begin,
    .attempt = attempt,
    .accepted = accepted,
    .rejected = rejected,
    .interpolate = interpolate,
};

int mbs_radau_init(mbs_radau *s, int n, double *work, int *iwork, double rtol, double atol, double hmax)
{
    int rc;
    if (s == NULL)
        return MBS_STEP_EARG;
    memset(s, 0, sizeof *s);
    if (iwork == NULL)
        return MBS_STEP_EARG;
    rc = mbs_stepper_init(&s->st, &mbs_radau_method, n, work, rtol, atol, hmax);
    if (rc == MBS_STEP_OK)
        s->iwork = iwork;
    return rc;
}
