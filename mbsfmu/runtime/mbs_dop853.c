/*
 * mbs_dop853.c -- DOP853 with post-stabilization (see mbs_dop853.h): its tableau, error estimator
 * and continuous extension; the steps are the driver's (mbs_stepper.c).
 */
#include "mbs_dop853.h"

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

/* The rows after the explicit layout (k1..k13 there, k14..k16 of the dense output next): x and k1
 * at the start of the last step of a dense call (XOLD, K1OLD), r5..r8, then the work of the
 * crossing RKSTAB (NEAR). */
enum { W_XOLD = MBS_RK_K(17), W_K1OLD, W_R5, W_NEAR = W_R5 + 4 };
#define ROW(s, k) MBS_ROW(s, k)
#define KROW(s, j) MBS_ROW(s, MBS_RK_K(j))

/* DOP853's error norm of the step from X to XT (see mbs_dop853.h), scaled with
 * sc_i = atol + rtol max(|x_i|, |x~_i|); the projection's correction is added by the driver. */
static double error_norm(const mbs_stepper *s, double h, const double *d)
{
    const int n = mbs_step_nerr(s);
    const double *X = ROW(s, MBS_RK_X), *XT = ROW(s, MBS_RK_XT);
    const double *K1 = KROW(s, 1), *K6 = KROW(s, 6), *K7 = KROW(s, 7), *K8 = KROW(s, 8);
    const double *K9 = KROW(s, 9), *K10 = KROW(s, 10), *K11 = KROW(s, 11), *K12 = KROW(s, 12);
    const double e31 = B[1] - BH1, e39 = B[9] - BH9, e312 = B[12] - BH12;
    double err5 = 0.0, err3 = 0.0, deno;
    int i;
    (void)d;
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

/* The rows of k1..k16 (K[0] unused), k1 that of the start of the last step (K1OLD). */
static void dense_rows(mbs_stepper *s, const double **K)
{
    int j;
    K[0] = NULL;
    for (j = 1; j <= 16; ++j) K[j] = KROW(s, j);
    K[1] = ROW(s, W_K1OLD);
}

/* Stages 14..16 of the last step and r5..r8 of its interpolant (3 evaluations of f). */
static int build_dense(mbs_dop853 *d, const mbs_problem *pb)
{
    mbs_stepper *s = &d->st;
    const int n = s->n;
    const double *XOLD = ROW(s, W_XOLD), *K[17];
    double *ARG = ROW(s, MBS_RK_ARG);
    const double h = s->h_dense;
    int stage, m;
    dense_rows(s, K);
    for (stage = 14; stage <= 16; ++stage) {
        if (!isfinite(mbs_rk_combine(ARG, XOLD, h, A[stage], stage - 1, K, n, 1))) return MBS_STEP_ENONFINITE;
        s->nfev++;
        if (pb->f(pb->ctx, s->t_prev + C[stage] * h, ARG, KROW(s, stage)) != 0) return MBS_STEP_ERHS;
    }
    for (m = 0; m < 4; ++m) mbs_rk_combine(ROW(s, W_R5 + m), NULL, h, D[m], 16, K, n, 1);
    if (!mbs_step_finite_sumsq(ROW(s, W_R5), 4 * n)) return MBS_STEP_ENONFINITE;
    d->ndense++;
    d->dense_ready = 1;
    return MBS_STEP_OK;
}

/* Hairer's CONTD8 at t inside the last step [t_prev, t_prev + h_dense] (mbs_dop853.h), its r5..r8
 * built once per step. */
static int interpolate(mbs_stepper *s, const mbs_problem *pb, double t, double *xout)
{
    mbs_dop853 *d = (mbs_dop853 *)s;
    const int n = s->n;
    const double *XOLD = ROW(s, W_XOLD), *X = ROW(s, MBS_RK_X), *K1 = ROW(s, W_K1OLD), *K13 = KROW(s, 13);
    const double *R5 = ROW(s, W_R5), *R6 = R5 + n, *R7 = R6 + n, *R8 = R7 + n;
    const double h = s->h_dense, th = (t - s->t_prev) / h, th1 = 1.0 - th;
    int i;
    if (!d->dense_ready) {
        int rc = build_dense(d, pb);
        if (rc != MBS_STEP_OK) return rc;
    }
    for (i = 0; i < n; ++i) {
        const double r2 = X[i] - XOLD[i], r3 = h * K1[i] - r2, r4 = r2 - h * K13[i] - r3;
        const double tail = R5[i] + th * (R6[i] + th1 * (R7[i] + th * R8[i]));
        xout[i] = XOLD[i] + th * (r2 + th1 * (r3 + th * (r4 + th1 * tail)));
    }
    return MBS_STEP_OK;
}

/* The attempt overwrites the stages of the last step: its interpolant is gone. */
static int attempt(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double t, double h,
                   double t_new, mbs_try *a)
{
    s->dense_valid = ((mbs_dop853 *)s)->dense_ready = 0;
    return mbs_rk_attempt(s, m, pb, t, h, t_new, a);
}

/* The PI controller; every step keeps x and k1 of its start for the interpolant (with k2..k13
 * still in place): the step that reaches t_end needs it for the dense output, and a hook after
 * each step (mbs_problem.accepted) may sample any step's. */
static double accepted(mbs_stepper *s, const mbs_step_method *m, const mbs_try *a, double t, double h,
                       double t_new, double h_prop, int clipped, double t_end)
{
    const double h_next = mbs_rk_pi_accepted(s, m->control, a->err, h, h_prop, clipped);
    (void)t_new;
    (void)t_end;
    memcpy(ROW(s, W_XOLD), ROW(s, MBS_RK_X), (size_t)s->n * sizeof(double));
    memcpy(ROW(s, W_K1OLD), KROW(s, 1), (size_t)s->n * sizeof(double));
    s->t_prev = t;
    s->h_dense = h;
    s->dense_valid = 1;
    return h_next;
}

static void restart(mbs_stepper *s)
{
    ((mbs_dop853 *)s)->dense_ready = 0;
}

/* The crossing RKSTAB, its pointers (work, hook) set from s: a restored copy of the struct may
 * come from another process. */
static mbs_stepper *near_of(mbs_stepper *s)
{
    mbs_dop853 *d = (mbs_dop853 *)s;
    d->near.work = ROW(s, W_NEAR);
    d->near.sing.weak = s->sing.weak;
    return &d->near;
}

static const mbs_rk_tableau TABLEAU = {
    .stages = 12, .c = C, .a = &A[0][0], .stride = 16, .b = B, .sparse = 1, .project_in_step = 0,
    .error = error_norm,
};

/* DOP853's controller (fac1 = 0.333, fac2 = 6) with Lund's stabilization beta = 0.04 (mbs_dop853.h) */
static const mbs_step_control CONTROL = {
    .order = 8, .safety = 0.9, .facmin = 0.333, .facmax = 6.0, .beta = 0.04, .beta_weight = 0.2,
};

const mbs_step_method mbs_dop853_method = {
    .name = "dop853",
    .row_f = MBS_RK_K(1), .row_xn = MBS_RK_XN, .row_fn = MBS_RK_K(13),
    .start_order = 8,
    .hmin_span = HUGE_VAL,
    .nonfinite_shrink = 0.2,
    .control = &CONTROL,
    .finite = mbs_step_finite_sumsq,
    /* cross with RKSTAB once rho < 0.3 and falling and t* lies within 2.5 proposed steps */
    .singular = {.mode = MBS_SING_CROSS, .watch = 0.3, .reach = 2.5, .companion = &mbs_rkstab_method,
                 .companion_of = near_of},
    .tableau = &TABLEAU,
    .restart = restart,
    .attempt = attempt,
    .accepted = accepted,
    .rejected = mbs_rk_rejected,
    .hrho = mbs_rk_hrho,
    .interpolate = interpolate,
};

int mbs_dop853_init(mbs_dop853 *s, int n, double *work, double rtol, double atol, double hmax)
{
    if (s == NULL) return MBS_STEP_EARG;
    memset(s, 0, sizeof(*s));
    return mbs_stepper_init(&s->st, &mbs_dop853_method, n, work, rtol, atol, hmax);
}
