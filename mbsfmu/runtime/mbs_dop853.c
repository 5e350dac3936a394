/*
 * mbs_dop853.c -- DOP853 with post-stabilization (see mbs_dop853.h).
 * The step rules outside the method itself (clipping to t_end, step-size proposal after a shortened
 * step, hmin, non-finite values, FSAL across calls) are those of mbs_rkstab.c; keep the two in step.
 */
#include "mbs_dop853.h"
#include "mbs_rk_shared.h"

#include <math.h>
#include <string.h>

/* Tableau of DOP853 (dop853.f by E. Hairer; stages 1-based as there).  Stages 1..12 make the step,
 * stage 13 is f(t + h, x_new), stages 14..16 serve the dense output only. */
static const double C[17] = {
    0.0, 0.0,
    0.526001519587677318785587544488e-01, 0.789002279381515978178381316732e-01,
    0.118350341907227396726757197510, 0.281649658092772603273242802490,
    0.333333333333333333333333333333, 0.25,
    0.307692307692307692307692307692, 0.651282051282051282051282051282,
    0.6, 0.857142857142857142857142857142,
    1.0, 1.0,
    0.1, 0.2, 0.777777777777777777777777777778};

static const double A[17][16] = {
    [2] = {[1] = 5.26001519587677318785587544488e-2},
    [3] = {[1] = 1.97250569845378994544595329183e-2, [2] = 5.91751709536136983633785987549e-2},
    [4] = {[1] = 2.95875854768068491816892993775e-2, [3] = 8.87627564304205475450678981324e-2},
    [5] = {[1] = 2.41365134159266685502369798665e-1, [3] = -8.84549479328286085344864962717e-1,
           [4] = 9.24834003261792003115737966543e-1},
    [6] = {[1] = 3.7037037037037037037037037037e-2, [4] = 1.70828608729473871279604482173e-1,
           [5] = 1.25467687566822425016691814123e-1},
    [7] = {[1] = 3.7109375e-2, [4] = 1.70252211019544039314978060272e-1,
           [5] = 6.02165389804559606850219397283e-2, [6] = -1.7578125e-2},
    [8] = {[1] = 3.70920001185047927108779319836e-2, [4] = 1.70383925712239993810214054705e-1,
           [5] = 1.07262030446373284651809199168e-1, [6] = -1.53194377486244017527936158236e-2,
           [7] = 8.27378916381402288758473766002e-3},
    [9] = {[1] = 6.24110958716075717114429577812e-1, [4] = -3.36089262944694129406857109825,
           [5] = -8.68219346841726006818189891453e-1, [6] = 2.75920996994467083049415600797e1,
           [7] = 2.01540675504778934086186788979e1, [8] = -4.34898841810699588477366255144e1},
    [10] = {[1] = 4.77662536438264365890433908527e-1, [4] = -2.48811461997166764192642586468,
            [5] = -5.90290826836842996371446475743e-1, [6] = 2.12300514481811942347288949897e1,
            [7] = 1.52792336328824235832596922938e1, [8] = -3.32882109689848629194453265587e1,
            [9] = -2.03312017085086261358222928593e-2},
    [11] = {[1] = -9.3714243008598732571704021658e-1, [4] = 5.18637242884406370830023853209,
            [5] = 1.09143734899672957818500254654, [6] = -8.14978701074692612513997267357,
            [7] = -1.85200656599969598641566180701e1, [8] = 2.27394870993505042818970056734e1,
            [9] = 2.49360555267965238987089396762, [10] = -3.0467644718982195003823669022},
    [12] = {[1] = 2.27331014751653820792359768449, [4] = -1.05344954667372501984066689879e1,
            [5] = -2.00087205822486249909675718444, [6] = -1.79589318631187989172765950534e1,
            [7] = 2.79488845294199600508499808837e1, [8] = -2.85899827713502369474065508674,
            [9] = -8.87285693353062954433549289258, [10] = 1.23605671757943030647266201528e1,
            [11] = 6.43392746015763530355970484046e-1},
    /* row 13 = the weights b of the 8th-order solution */
    [13] = {[1] = 5.42937341165687622380535766363e-2, [6] = 4.45031289275240888144113950566,
            [7] = 1.89151789931450038304281599044, [8] = -5.8012039600105847814672114227,
            [9] = 3.1116436695781989440891606237e-1, [10] = -1.52160949662516078556178806805e-1,
            [11] = 2.01365400804030348374776537501e-1, [12] = 4.47106157277725905176885569043e-2},
    [14] = {[1] = 5.61675022830479523392909219681e-2, [7] = 2.53500210216624811088794765333e-1,
            [8] = -2.46239037470802489917441475441e-1, [9] = -1.24191423263816360469010140626e-1,
            [10] = 1.5329179827876569731206322685e-1, [11] = 8.20105229563468988491666602057e-3,
            [12] = 7.56789766054569976138603589584e-3, [13] = -8.298e-3},
    [15] = {[1] = 3.18346481635021405060768473261e-2, [6] = 2.83009096723667755288322961402e-2,
            [7] = 5.35419883074385676223797384372e-2, [8] = -5.49237485713909884646569340306e-2,
            [11] = -1.08347328697249322858509316994e-4, [12] = 3.82571090835658412954920192323e-4,
            [13] = -3.40465008687404560802977114492e-4, [14] = 1.41312443674632500278074618366e-1},
    [16] = {[1] = -4.28896301583791923408573538692e-1, [6] = -4.69762141536116384314449447206,
            [7] = 7.68342119606259904184240953878, [8] = 4.06898981839711007970213554331,
            [9] = 3.56727187455281109270669543021e-1, [13] = -1.39902416515901462129418009734e-3,
            [14] = 2.9475147891527723389556272149, [15] = -9.15095847217987001081870187138},
};
#define B (A[13])

/* The 3rd-order weights bh differ from b in stages 1, 9 and 12 only (b - bh elsewhere is b). */
static const double BH1 = 0.244094488188976377952755905512, BH9 = 0.733846688281611857341361741547,
                    BH12 = 0.220588235294117647058823529412e-01;

/* Weights er of the 5th-order error estimate (stages 1, 6..12). */
static const double ER1 = 0.1312004499419488073250102996e-01, ER6 = -0.1225156446376204440720569753e+01,
                    ER7 = -0.4957589496572501915214079952, ER8 = 0.1664377182454986536961530415e+01,
                    ER9 = -0.3503288487499736816886487290, ER10 = 0.3341791187130174790297318841,
                    ER11 = 0.8192320648511571246570742613e-01, ER12 = -0.2235530786388629525884427845e-01;

/* Dense output: r5..r8 = h sum_j D[m][j] k_j, m = 0..3 (Hairer's d4j..d7j). */
static const double D[4][17] = {
    {[1] = -0.84289382761090128651353491142e+1, [6] = 0.56671495351937776962531783590,
     [7] = -0.30689499459498916912797304727e+1, [8] = 0.23846676565120698287728149680e+1,
     [9] = 0.21170345824450282767155149946e+1, [10] = -0.87139158377797299206789907490,
     [11] = 0.22404374302607882758541771650e+1, [12] = 0.63157877876946881815570249290,
     [13] = -0.88990336451333310820698117400e-1, [14] = 0.18148505520854727256656404962e+2,
     [15] = -0.91946323924783554000451984436e+1, [16] = -0.44360363875948939664310572000e+1},
    {[1] = 0.10427508642579134603413151009e+2, [6] = 0.24228349177525818288430175319e+3,
     [7] = 0.16520045171727028198505394887e+3, [8] = -0.37454675472269020279518312152e+3,
     [9] = -0.22113666853125306036270938578e+2, [10] = 0.77334326684722638389603898808e+1,
     [11] = -0.30674084731089398182061213626e+2, [12] = -0.93321305264302278729567221706e+1,
     [13] = 0.15697238121770843886131091075e+2, [14] = -0.31139403219565177677282850411e+2,
     [15] = -0.93529243588444783865713862664e+1, [16] = 0.35816841486394083752465898540e+2},
    {[1] = 0.19985053242002433820987653617e+2, [6] = -0.38703730874935176555105901742e+3,
     [7] = -0.18917813819516756882830838328e+3, [8] = 0.52780815920542364900561016686e+3,
     [9] = -0.11573902539959630126141871134e+2, [10] = 0.68812326946963000169666922661e+1,
     [11] = -0.10006050966910838403183860980e+1, [12] = 0.77771377980534432092869265740,
     [13] = -0.27782057523535084065932004339e+1, [14] = -0.60196695231264120758267380846e+2,
     [15] = 0.84320405506677161018159903784e+2, [16] = 0.11992291136182789328035130030e+2},
    {[1] = -0.25693933462703749003312586129e+2, [6] = -0.15418974869023643374053993627e+3,
     [7] = -0.23152937917604549567536039109e+3, [8] = 0.35763911791061412378285349910e+3,
     [9] = 0.93405324183624310003907691704e+2, [10] = -0.37458323136451633156875139351e+2,
     [11] = 0.10409964950896230045147246184e+3, [12] = 0.29840293426660503123344363579e+2,
     [13] = -0.43533456590011143754432175058e+2, [14] = 0.96324553959188282948394950600e+2,
     [15] = -0.39177261675615439165231486172e+2, [16] = -0.14972683625798562581422125276e+3},
};

#define SAFETY 0.9
#define FACMIN 0.333 /* smallest ratio h_new / h (DOP853's fac1) */
#define FACMAX 6.0   /* largest ratio h_new / h (DOP853's fac2) */
#define ORDER 8      /* the error estimate behaves as O(h^8): exponent 1/8 */
#define NONFINITE_SHRINK 0.2
#define CROSS_WATCH 0.3 /* singular positions: cross with RKSTAB once rho < this, falling, and */
#define CROSS_REACH 2.5 /* the predicted singular time lies within this many proposed steps */
#define CROSS_BEGINS 1  /* internal code of advance_impl: a crossing begins at the current state */

/* Work rows (n doubles each): X, K1..K16, ARG (stage argument; after a step the stage-12
 * argument), XT (x~), XN (x_new), XOLD and K1OLD (x and k1 at the start of the last step of a
 * dense call), R5..R8, then the work of the crossing RKSTAB (NEAR). */
enum { W_X, W_K1, W_ARG = W_K1 + 16, W_XT, W_XN, W_XOLD, W_K1OLD, W_R5, W_NEAR = W_R5 + 4 };
#define ROW(s, k) ((s)->work + (size_t)(k) * (size_t)(s)->n)
#define KROW(s, j) ROW(s, W_K1 + (j) - 1)

int mbs_dop853_init(mbs_dop853 *s, int n, double *work, double rtol, double atol, double hmax)
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
    s->beta = 0.04;
    s->errold = 1e-4;
    return MBS_RKSTAB_OK;
}

void mbs_dop853_reset_fsal(mbs_dop853 *s)
{
    if (s != NULL) s->fsal_valid = s->dense_valid = s->dense_ready = s->sing.valid = s->crossing = 0;
}

const char *mbs_dop853_message(int code)
{
    return mbs_rkstab_message(code);
}

/* out = base + h sum_{j=1..jmax} coef[j] k_j (base NULL: 0), skipping the zero coefficients;
 * K[j] is the row of k_j. */
static void combine(double *out, const double *base, double h, const double *coef, int jmax,
                    const double *const *K, int n)
{
    int i, j;
    if (base != NULL) {
        if (out != base) memcpy(out, base, (size_t)n * sizeof(double));
    } else {
        for (i = 0; i < n; ++i) out[i] = 0.0;
    }
    for (j = 1; j <= jmax; ++j) {
        const double hc = h * coef[j], *k = K[j];
        if (coef[j] == 0.0) continue;
        for (i = 0; i < n; ++i) out[i] += hc * k[i];
    }
}

/* The rows of k1..k16 (K[0] unused); old: k1 of the last step of a dense call (K1OLD). */
static void stage_rows(mbs_dop853 *s, const double **K, int old)
{
    int j;
    K[0] = NULL;
    for (j = 1; j <= 16; ++j) K[j] = KROW(s, j);
    if (old) K[1] = ROW(s, W_K1OLD);
}

/* Outcome of one attempted step. */
enum { ATTEMPT_DONE, ATTEMPT_NONFINITE };

/* DOP853's error norm of the step from X to XT (see mbs_dop853.h), scaled with
 * sc_i = atol + rtol max(|x_i|, |x~_i|). */
static double error_norm(mbs_dop853 *s, double h)
{
    const int n = s->n;
    const double *X = ROW(s, W_X), *XT = ROW(s, W_XT);
    const double *K1 = KROW(s, 1), *K6 = KROW(s, 6), *K7 = KROW(s, 7), *K8 = KROW(s, 8);
    const double *K9 = KROW(s, 9), *K10 = KROW(s, 10), *K11 = KROW(s, 11), *K12 = KROW(s, 12);
    const double e31 = B[1] - BH1, e39 = B[9] - BH9, e312 = B[12] - BH12;
    double err5 = 0.0, err3 = 0.0, deno;
    int i;
    for (i = 0; i < n; ++i) {
        const double ax = fabs(X[i]), axt = fabs(XT[i]);
        const double sc = s->atol + s->rtol * (ax > axt ? ax : axt);
        const double e3 = e31 * K1[i] + B[6] * K6[i] + B[7] * K7[i] + B[8] * K8[i] + e39 * K9[i] +
                          B[10] * K10[i] + B[11] * K11[i] + e312 * K12[i];
        const double e5 = ER1 * K1[i] + ER6 * K6[i] + ER7 * K7[i] + ER8 * K8[i] + ER9 * K9[i] +
                          ER10 * K10[i] + ER11 * K11[i] + ER12 * K12[i];
        err3 += (e3 / sc) * (e3 / sc);
        err5 += (e5 / sc) * (e5 / sc);
    }
    deno = err5 + 0.01 * err3;
    if (!(deno > 0.0)) deno = 1.0;
    return fabs(h) * err5 / sqrt(n * deno);
}

/* One attempted step of size h from (tc, X) with k1 = f(tc, X) in K1: stages 2..12, x~ (XT), the
 * error norm and, when that passes and p != NULL, x_new = p(x~) (XN) with its correction added to
 * the error.  A non-finite stage argument, x~ or x_new ends the attempt (ATTEMPT_NONFINITE; f
 * never sees it).  k13 is not evaluated here.  Returns an MBS_RKSTAB_* failure of f or p, or 0
 * with *outcome set. */
static int attempt_step(mbs_dop853 *s, mbs_rhs_fn f, mbs_project_fn p, void *ctx, double tc, double h,
                        double t_new, int *outcome, double *err)
{
    const int n = s->n;
    const double *X = ROW(s, W_X), *K[17];
    double *ARG = ROW(s, W_ARG), *XT = ROW(s, W_XT), *XN = ROW(s, W_XN);
    int stage, i;

    *outcome = ATTEMPT_NONFINITE;
    stage_rows(s, K, 0);
    for (stage = 2; stage <= 12; ++stage) {
        combine(ARG, X, h, A[stage], stage - 1, K, n);
        if (!mbs_rk_all_finite(ARG, n)) return 0;
        s->nfev++;
        if (f(ctx, stage == 12 ? t_new : tc + C[stage] * h, ARG, KROW(s, stage)) != 0)
            return MBS_RKSTAB_ERHS;
    }
    combine(XT, X, h, B, 12, K, n);
    if (!mbs_rk_all_finite(XT, n)) return 0;
    *err = error_norm(s, h);
    memcpy(XN, XT, (size_t)n * sizeof(double));
    if (p != NULL && *err <= 1.0) {
        double sum = 0.0;
        s->nproj++;
        if (p(ctx, t_new, XN) != 0) return MBS_RKSTAB_EPROJECT;
        if (!mbs_rk_all_finite(XN, n)) return 0;
        for (i = 0; i < n; ++i) {
            const double ax = fabs(X[i]), axt = fabs(XT[i]);
            const double q = (XN[i] - XT[i]) / (s->atol + s->rtol * (ax > axt ? ax : axt));
            sum += q * q;
        }
        *err = sqrt(*err * *err + sum / n);
        if (s->sing.weak != NULL) { /* the regularity of x_new (row R5 as scratch for the hook) */
            double *D = ROW(s, W_R5);
            for (i = 0; i < n; ++i) D[i] = XN[i] - XT[i];
            s->sing.rho_new = s->sing.weak(ctx, t_new, XN, D);
        }
    }
    *outcome = ATTEMPT_DONE;
    return 0;
}

/* Step-size control after an accepted step of size h with error err <= 1 (the proposal was
 * h_prop; clipped: the step was cut to end at t_clip), as next_step in mbs_rkstab.c with DOP853's
 * exponent and limits: h_next = h / fac, fac = err^(1/8 - beta/5) / errold^beta / SAFETY within
 * [1/FACMAX, 1/FACMIN], never above hmax, no growth right after a rejection; a step shortened to
 * hit t_end keeps the proposal and the error history. */
static double next_step(mbs_dop853 *s, double err, double h, double h_prop, int clipped)
{
    const double fac = pow(err, 1.0 / ORDER - 0.2 * s->beta) / pow(s->errold, s->beta) / SAFETY;
    return mbs_rk_next_step(fac, FACMIN, FACMAX, s->hmax, s->reject_last, err, h, h_prop, clipped, &s->errold);
}

/* DOP853's stiffness estimate h rho = h |k13 - k12| / |x_new - stage-12 argument| (both at t + h)
 * of the accepted step, and the count of stability-limited steps (mbs_rk_stiff_count). */
static void stiffness_estimate(mbs_dop853 *s, double h)
{
    s->hrho = mbs_rk_hrho(s->n, h, KROW(s, 13), KROW(s, 12), ROW(s, W_XN), ROW(s, W_ARG));
    s->stiff_run = mbs_rk_stiff_count(s->stiff_run, &s->stiff_below, s->hrho, s->stiff_hrho, s->stiff_gap);
    if (s->stiff_below == 0 && s->stiff_run > 0) {
        s->hrho_stiff = s->hrho;
        s->h_stiff = h;
    }
}

/* Make k1 = f(tc, x) available in K1 with x copied to X, unless the caller's state is the one the
 * previous call returned (FSAL). */
static int first_stage(mbs_dop853 *s, mbs_rhs_fn f, void *ctx, double tc, const double *x)
{
    const int n = s->n;
    double *X = ROW(s, W_X), *K1 = KROW(s, 1);
    if (s->fsal_valid && s->t_fsal == tc && memcmp(X, x, (size_t)n * sizeof(double)) == 0)
        return MBS_RKSTAB_OK;
    s->fsal_valid = 0;
    if (X != x) memcpy(X, x, (size_t)n * sizeof(double));
    s->dense_valid = s->dense_ready = 0;
    s->nfev++;
    if (f(ctx, tc, X, K1) != 0) return MBS_RKSTAB_ERHS;
    if (!mbs_rk_all_finite(K1, n)) return MBS_RKSTAB_ENONFINITE;
    s->fsal_valid = 1;
    s->t_fsal = tc;
    return MBS_RKSTAB_OK;
}

/* Integrate the state in (*t, x) until *t >= t_end; a step is shortened (or stretched by 1 %) to
 * end exactly at t_clip >= t_end when it would pass it.  dense: keep x and k1 of the step that
 * reaches t_end (with k2..k13 still in place) for the interpolant. */
static int advance_impl(mbs_dop853 *s, mbs_rhs_fn f, mbs_project_fn p, void *ctx, double *t,
                        double *x, double t_end, double t_clip, long max_steps, int dense)
{
    int n, rc = MBS_RKSTAB_OK, last_nonfinite = 0;
    double *X, *K1, *K13, *XN;
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
    K1 = KROW(s, 1);
    K13 = KROW(s, 13);
    XN = ROW(s, W_XN);
    if (!mbs_rk_all_finite(x, n)) return MBS_RKSTAB_ENONFINITE;
    rc = first_stage(s, f, ctx, tc, x);
    if (rc != MBS_RKSTAB_OK) return rc;

    span = t_end - tc;
    if (!(s->h > 0.0) || !isfinite(s->h)) {
        /* Hairer's starting step with DOP853's order; rows ARG, XN and K2 as scratch */
        rc = mbs_rk_initial_step(n, s->rtol, s->atol, s->hmax, ORDER, f, ctx, tc, X, K1, span, ROW(s, W_ARG),
                                 XN, KROW(s, 2), &s->nfev, &h);
        if (rc != MBS_RKSTAB_OK) return rc;
    } else {
        h = s->h < s->hmax ? s->h : s->hmax;
    }
    hmin = mbs_rk_hmin(s->hmin, tc, t_end);
    if (s->hmax < hmin) return MBS_RKSTAB_EHMAX;
    h_collapse = MBS_RK_COLLAPSE_RATIO * ((isfinite(t_clip) ? t_clip : t_end) - tc);
    if (p != NULL && s->sing.weak != NULL && !s->sing.valid) { /* the start's regularity */
        s->dense_ready = 0; /* row R5 as scratch */
        mbs_rk_singular_start(&s->sing, ctx, tc, X, ROW(s, W_R5), n);
    }

    while (tc < t_end) {
        double t_new, h_prop = h, err = 0.0;
        int clipped = 0, outcome;

        if (max_steps > 0 && nattempt >= max_steps) { rc = MBS_RKSTAB_ETOOMANY; break; }
        if (short_run >= MBS_RK_COLLAPSE_STEPS) { rc = MBS_RKSTAB_ECOLLAPSE; break; }
        if (h < hmin) { rc = last_nonfinite ? MBS_RKSTAB_ENONFINITE : MBS_RKSTAB_EUNDERFLOW; break; }
        if (p != NULL && s->sing.weak != NULL) { /* a singular time ahead: RKSTAB crosses it */
            const double D = mbs_rk_singular_eta(&s->sing, tc, CROSS_WATCH);
            if (D <= CROSS_REACH * h && tc + 2.0 * D > tc) {
                s->crossing = 1;
                s->t_exit = tc + 2.0 * D;
                rc = CROSS_BEGINS;
                break;
            }
        }
        nattempt++;
        s->dense_valid = s->dense_ready = 0; /* the attempt overwrites the stages */
        if (tc + 1.01 * h >= t_clip) {
            h = t_clip - tc;
            t_new = t_clip;
            clipped = 1;
        } else {
            t_new = tc + h;
        }
        rc = attempt_step(s, f, p, ctx, tc, h, t_new, &outcome, &err);
        if (rc != 0) break;
        if (outcome == ATTEMPT_DONE && err <= 1.0) { /* k13 at the new point: the next step's k1 */
            s->nfev++;
            if (f(ctx, t_new, XN, K13) != 0) { rc = MBS_RKSTAB_ERHS; break; }
            if (!mbs_rk_all_finite(K13, n)) outcome = ATTEMPT_NONFINITE;
        }
        if (outcome == ATTEMPT_NONFINITE || !isfinite(err)) {
            s->nreject++;
            s->reject_last = 1;
            /* a finite step whose scaled error overflows (tiny tolerances) is an ordinary failure */
            last_nonfinite = outcome == ATTEMPT_NONFINITE;
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
            if (dense && t_new >= t_end) {
                memcpy(ROW(s, W_XOLD), X, (size_t)n * sizeof(double));
                memcpy(ROW(s, W_K1OLD), K1, (size_t)n * sizeof(double));
                s->t_prev = tc;
                s->h_dense = h;
                s->dense_valid = 1;
            }
            tc = t_new;
            memcpy(X, XN, (size_t)n * sizeof(double));
            memcpy(K1, K13, (size_t)n * sizeof(double));
            h = h_next;
            if (p != NULL) mbs_rk_singular_accept(&s->sing, tc);
        } else {
            double q = pow(err, 1.0 / ORDER - 0.2 * s->beta) / SAFETY;
            s->nreject++;
            s->reject_last = 1;
            last_nonfinite = 0;
            h = h / (q < 1.0 / FACMIN ? q : 1.0 / FACMIN);
        }
    }

    s->h = h;
    s->t_fsal = tc;
    s->fsal_valid = 1;
    *t = tc;
    if (x != X) memcpy(x, X, (size_t)n * sizeof(double));
    return rc;
}

/* Stages 14..16 of the last step and r5..r8 of its interpolant (3 evaluations of f). */
static int build_dense(mbs_dop853 *s, mbs_rhs_fn f, void *ctx)
{
    const int n = s->n;
    const double *XOLD = ROW(s, W_XOLD), *K[17];
    double *ARG = ROW(s, W_ARG);
    const double h = s->h_dense;
    int stage, m;
    stage_rows(s, K, 1);
    for (stage = 14; stage <= 16; ++stage) {
        combine(ARG, XOLD, h, A[stage], stage - 1, K, n);
        if (!mbs_rk_all_finite(ARG, n)) return MBS_RKSTAB_ENONFINITE;
        s->nfev++;
        if (f(ctx, s->t_prev + C[stage] * h, ARG, KROW(s, stage)) != 0) return MBS_RKSTAB_ERHS;
    }
    for (m = 0; m < 4; ++m) combine(ROW(s, W_R5 + m), NULL, h, D[m], 16, K, n);
    if (!mbs_rk_all_finite(ROW(s, W_R5), 4 * n)) return MBS_RKSTAB_ENONFINITE;
    s->ndense++;
    s->dense_ready = 1;
    return MBS_RKSTAB_OK;
}

/* Hairer's CONTD8 at t inside the last step [t_prev, t_prev + h_dense] (mbs_dop853.h). */
static void interpolate(const mbs_dop853 *s, double t, double *xout)
{
    const int n = s->n;
    const double *XOLD = ROW(s, W_XOLD), *X = ROW(s, W_X), *K1 = ROW(s, W_K1OLD), *K13 = KROW(s, 13);
    const double *R5 = ROW(s, W_R5), *R6 = R5 + n, *R7 = R6 + n, *R8 = R7 + n;
    const double h = s->h_dense, th = (t - s->t_prev) / h, th1 = 1.0 - th;
    int i;
    for (i = 0; i < n; ++i) {
        const double r2 = X[i] - XOLD[i], r3 = h * K1[i] - r2, r4 = r2 - h * K13[i] - r3;
        const double tail = R5[i] + th * (R6[i] + th1 * (R7[i] + th * R8[i]));
        xout[i] = XOLD[i] + th * (r2 + th1 * (r3 + th * (r4 + th1 * tail)));
    }
}

/* The crossing RKSTAB, its pointers (work, hook) set from s: a restored copy of the struct may
 * come from another process. */
static mbs_rkstab *near_of(mbs_dop853 *s)
{
    s->near.work = ROW(s, W_NEAR);
    s->near.sing.weak = s->sing.weak;
    return &s->near;
}

/* Begin a crossing (s->crossing set by advance_impl): the RKSTAB near starts afresh at DOP853's
 * state with the same tolerances, the ratios so far and DOP853's proposal, placed. */
static int cross_begin(mbs_dop853 *s)
{
    mbs_rkstab *r = &s->near;
    int rc = mbs_rkstab_init(r, s->n, ROW(s, W_NEAR), s->rtol, s->atol, s->hmax);
    if (rc != MBS_RKSTAB_OK) return rc;
    r->hmin = s->hmin;
    r->sing = s->sing;
    r->h = mbs_rk_place_step(&r->sing, s->t_fsal, s->h);
    s->ncross++;
    return MBS_RKSTAB_OK;
}

/* End a crossing: DOP853 goes on from RKSTAB's last accepted state (its k1 is evaluated anew: the
 * state is taken as a restart with fsal_valid 0, whose time and x are the internal ones). */
static void cross_end(mbs_dop853 *s)
{
    mbs_rkstab *r = near_of(s);
    memcpy(ROW(s, W_X), r->work, (size_t)s->n * sizeof(double)); /* RKSTAB's state: work[0..n) */
    s->t_fsal = r->t_fsal;
    s->fsal_valid = s->dense_valid = s->dense_ready = 0;
    s->sing = r->sing;
    s->reject_last = 0;
    if (s->h > FACMAX * r->h) s->h = FACMAX * r->h;
    s->crossing = 0;
}

/* Add the work of the crossing RKSTAB since the counts c[4] (taken before) to DOP853's counters. */
static void cross_count(mbs_dop853 *s, const long *c)
{
    s->nfev += s->near.nfev - c[0];
    s->naccept += s->near.naccept - c[1];
    s->nreject += s->near.nreject - c[2];
    s->nproj += s->near.nproj - c[3];
}

const double *mbs_dop853_state(const mbs_dop853 *s, double *t)
{
    if (s->crossing && s->near.fsal_valid) {
        *t = s->near.t_fsal;
        return ROW(s, W_NEAR); /* RKSTAB's state: work[0..n) */
    }
    *t = s->t_fsal;
    return s->work;
}

int mbs_dop853_advance(mbs_dop853 *s, mbs_rhs_fn f, mbs_project_fn p, void *ctx, double *t, double *x,
                       double t_end, long max_steps)
{
    int rc;
    for (;;) {
        if (s->crossing) { /* RKSTAB to the end of the crossing or t_end, whichever comes first */
            const long c[4] = {s->near.nfev, s->near.naccept, s->near.nreject, s->near.nproj};
            rc = mbs_rkstab_advance(near_of(s), f, p, ctx, t, x, t_end < s->t_exit ? t_end : s->t_exit, max_steps);
            cross_count(s, c);
            if (rc != MBS_RKSTAB_OK || *t < s->t_exit) return rc;
            cross_end(s);
        }
        if (*t >= t_end) return MBS_RKSTAB_OK;
        rc = advance_impl(s, f, p, ctx, t, x, t_end, t_end, max_steps, 0);
        if (rc != CROSS_BEGINS) return rc;
        s->t_fsal = *t;
        rc = cross_begin(s);
        if (rc != MBS_RKSTAB_OK) return rc;
    }
}

int mbs_dop853_advance_dense(mbs_dop853 *s, mbs_rhs_fn f, mbs_project_fn p, void *ctx, double t0,
                             const double *x0, double t_target, double t_stop, long max_steps,
                             double *xout)
{
    int n, rc;
    double tint, *X;
    if (s == NULL || f == NULL || x0 == NULL || xout == NULL || s->work == NULL || s->n < 1 ||
        !isfinite(t0) || !isfinite(t_target) || t_target < t0 || isnan(t_stop))
        return MBS_RKSTAB_EARG;
    n = s->n;
    X = ROW(s, W_X);
    if (t_stop < t_target) t_stop = t_target;
    if (!s->fsal_valid && !s->crossing) { /* (re)start from the caller's state */
        memcpy(X, x0, (size_t)n * sizeof(double));
        s->t_fsal = t0;
        s->dense_valid = s->dense_ready = 0;
    }
    for (;;) {
        if (s->crossing) { /* the crossing RKSTAB's steps and dense output, up to the end of the crossing */
            mbs_rkstab *r = near_of(s);
            const long c[4] = {r->nfev, r->naccept, r->nreject, r->nproj};
            if (r->fsal_valid && r->t_fsal >= s->t_exit && t_target >= r->t_fsal) {
                cross_end(s);
                continue;
            }
            if (t_target > s->t_exit) { /* run it to the end, then DOP853 on */
                rc = mbs_rkstab_advance_dense(r, f, p, ctx, s->t_fsal, X, s->t_exit, s->t_exit, max_steps, xout);
                cross_count(s, c);
                if (rc != MBS_RKSTAB_OK) return rc;
                cross_end(s);
                continue;
            }
            rc = mbs_rkstab_advance_dense(r, f, p, ctx, s->t_fsal, X, t_target,
                                          t_stop < s->t_exit ? t_stop : s->t_exit, max_steps, xout);
            cross_count(s, c);
            return rc;
        }
        tint = s->t_fsal;
        if (t_target > tint) {
            rc = advance_impl(s, f, p, ctx, &tint, X, t_target, isfinite(t_stop) ? t_stop : INFINITY,
                              max_steps, 1);
            if (rc == CROSS_BEGINS) {
                s->t_fsal = tint;
                rc = cross_begin(s);
                if (rc != MBS_RKSTAB_OK) return rc;
                continue;
            }
            if (rc != MBS_RKSTAB_OK) return rc;
        }
        if (t_target == tint) {
            memcpy(xout, X, (size_t)n * sizeof(double));
            return MBS_RKSTAB_OK;
        }
        if (!s->dense_valid || t_target < s->t_prev) return MBS_RKSTAB_EARG; /* not inside the last step */
        if (!s->dense_ready) {
            rc = build_dense(s, f, ctx);
            if (rc != MBS_RKSTAB_OK) return rc;
        }
        interpolate(s, t_target, xout);
        return MBS_RKSTAB_OK;
    }
}
