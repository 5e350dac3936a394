/*
 * mbs_dop853.h -- DOP853: Dormand-Prince 8(5,3) with post-stabilization, for tight tolerances (C99).
 *
 * The explicit Runge-Kutta pair of order 8 by Dormand & Prince (Prince & Dormand 1981), in the form
 * of Hairer's code DOP853 (Hairer, Norsett & Wanner, Solving ODEs I, 2nd ed., sec. II.10; the
 * coefficients are the decimal ones of dop853.f), with the interface and the step rules of
 * mbs_rkstab.h so that the engine can use either.
 *
 * One attempted step of size h from (t, x) with k1 = f(t, x) known:
 *   k2..k12 (11 evaluations of f; c12 = 1), x~ = x + h sum_j b_j k_j (8th order),
 *   error vectors (scaled by sc_i = atol + rtol max(|x_i|, |x~_i|), summed over the n states)
 *     E5 = sum_i (h sum_j er_j k_j / sc_i)^2             (the embedded 5th-order estimate)
 *     E3 = sum_i (h sum_j (b_j - bh_j) k_j / sc_i)^2     (the embedded 3rd-order estimate)
 *   err = E5 / sqrt(n (E5 + 0.01 E3))                    (DOP853's combination; O(h^8))
 *   if err <= 1 and p != NULL: x_new = project(t + h, x~) and
 *     err = sqrt(err^2 + rms((x_new - x~) / sc)^2)     (the projection's correction counts as error,
 *                                                       as in RKSTAB; it is O(h^9), so it only
 *                                                       matters when the projection moves far)
 *   err <= 1: accept; k13 = f(t + h, x_new) is k1 of the next step.
 * An accepted step costs 12 evaluations of f, a rejected one 11 (k13 is not needed by the error
 * estimate), and one projection per step that passed DOP853's error test.
 * Controller (DOP853's, with Lund's stabilization as in RKSTAB):
 *   fac = err^(1/8 - 0.2 beta) / errold^beta / 0.9 within [1/6, 1/0.333], h_new = h / fac (the ratio
 *   h_new / h lies in [0.333, 6]), errold = max(err, 1e-4) of the previous accepted step; a rejected
 *   step retries with h / min(1/0.333, err^(1/8 - 0.2 beta) / 0.9); no increase right after a
 *   rejection.  beta = 0.04 (RKSTAB's value; DOP853's default is 0, its documentation allows up to
 *   0.04).  At steady state it aims at err ~ 0.25 instead of 0.43, i.e. slightly shorter, more
 *   accurate steps, and damps the accept/reject oscillation.  Measured against beta = 0 at rtol
 *   1e-8 / 1e-10: a projected pendulum 16 / 6 instead of 31 / 40 rejections, 5 / 7 % fewer
 *   evaluations and a 1.4 / 1.5 times smaller error; Arenstorf's orbit 36 / 44 instead of 42 / 61
 *   rejections, +0.3 / -3 % evaluations, the same error; x'' = -4 x (no rejections) +7 % evaluations
 *   for a 1.7 times smaller error.  s.beta = 0 gives DOP853's controller (scipy's differs only in
 *   its ratio limits [0.2, 10] and in the cost of a rejected step).
 *   A stage argument, x~, x_new, k13 or error norm that is not finite rejects the step and shrinks
 *   h by 0.2 (as RKSTAB).
 * Singular positions (the hook weak of mbs_rkstab.h, set for the null-space formulations): DOP853
 *   tracks the regularity ratio rho of its accepted states, and when the singular time t*
 *   predicted from the last two (linear extrapolation, rho < 0.3 and falling) lies within 2.5
 *   proposed steps, it crosses t* with RKSTAB steps (the struct's own RKSTAB, near, with the same
 *   tolerances and the ratios so far) up to the mirror point 2 (t* - t) ahead, then goes on with
 *   DOP853 steps (the proposal at most 6 times RKSTAB's last step).  Why: near a rank drop of the
 *   constraint Jacobian (pivot p) the index-1 vector field amplifies a stage's distance from the
 *   manifold and its rounding by 1/p and 1/p^2 along the weak constraint directions.  RKSTAB's
 *   placement keeps its stages a quarter step from t*, but a DOP853 step has five of its 15
 *   abscissae within 0.2 of any point of its widest gap (c = 1/3 .. 0.6), and its long steps end
 *   far from t* with a large correction of the projection: with DOP853 steps alone (with RKSTAB's
 *   placement and filter of weak directions, or without counting the projection) the N = 2 and
 *   N = 10 four-bars of seed 003 and the singular slider-crank of seed 004 failed in 1 to 6 of 27
 *   runs at rtol 1e-8..1e-10, output steps 0.001..0.1, where RKSTAB passes all, or passed 100 times
 *   less accurately.  The counters (nfev, naccept, nreject, nproj) include the crossings' work;
 *   ncross counts them.
 * Starting step: the heuristic of mbs_rkstab.h (HNW I, sec. II.4) with the exponent 1/8.
 * Stiffness (DOP853's test): hrho = h |k13 - k12| / |x_new - (stage-12 argument)| (both at t + h)
 *   approximates h |lambda| of the dominant eigenvalue; DOP853 reports stiffness above 6.1 (its
 *   stability boundary on the negative real axis is about 6.1).
 * Dense output (Hairer's CONTD8, order 7), built only for a step that contains a requested output
 *   point, with 3 more evaluations of f (stages 14..16):
 *   z(t) = r1 + th (r2 + (1-th) (r3 + th (r4 + (1-th) (r5 + th (r6 + (1-th) (r7 + th r8)))))),
 *   th = (t - t_prev) / h, r1 = x, r2 = x_new - x, r3 = h k1 - r2, r4 = r2 - h k13 - r3,
 *   r5..r8 = h sum_j d_mj k_j (j = 1, 6..16).
 *   The polynomial joins the (projected) step ends x and x_new with the slopes k1 and k13 there,
 *   as RKSTAB's; it is not projected in between (the caller projects interpolated states).
 *
 * Usage (as mbs_rkstab.h; the callbacks and return codes MBS_RKSTAB_* are those of mbs_rkstab.h):
 *   double work[MBS_DOP853_WORK_SIZE(n)];
 *   mbs_dop853 s;
 *   mbs_dop853_init(&s, n, work, rtol, atol, hmax);     (optionally set s.hmin, s.h, s.beta)
 *   rc = mbs_dop853_advance_dense(&s, f, p, ctx, t0, x0, t_target, t_stop, max_steps, xout);
 *   or rc = mbs_dop853_advance(&s, f, p, ctx, &t, x, t_end, max_steps);
 *
 * No dynamic allocation, no global state, no output: all state lives in the struct and the
 * caller-provided work array; independent instances may be used concurrently.
 */
#ifndef MBS_DOP853_H
#define MBS_DOP853_H

#include "mbs_rkstab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size (number of doubles) of the work array for n states: x, k1..k16, the stage argument, x~,
 * x_new, x and k1 at the start of the last step, r5..r8, and the work of the crossing RKSTAB. */
#define MBS_DOP853_WORK_SIZE(n) (26 * (n) + MBS_RKSTAB_WORK_SIZE(n))

typedef struct {
    int n;            /* number of states */
    double rtol;      /* relative tolerance (> 0) */
    double atol;      /* absolute tolerance (>= 0; init with atol < 0 selects rtol / 10) */
    double h;         /* proposed size of the next step; <= 0: starting-step heuristic on the next
                         advance call (set by init; the caller may set a first step) */
    double hmax;      /* upper bound of the step size (init with hmax <= 0 or inf: unlimited) */
    double hmin;      /* lower bound of the step size; 0 (default): 1e-14 * (t_end - t) of each call.
                         Never below 10 ulp(max(|t|, |t_end|)) either. */
    double beta;      /* Lund stabilization of the controller (init: 0.04; 0 gives DOP853's) */
    double errold;    /* previous accepted error norm for the stabilized controller (starts at 1e-4) */
    int reject_last;  /* 1 when the last attempted step was rejected */
    long nfev;        /* evaluations of the right-hand side (cumulative over calls) */
    long naccept;     /* accepted steps */
    long nreject;     /* rejected steps (error test or non-finite values) */
    long nproj;       /* calls of the projection (one per step that passed DOP853's error test) */
    long ndense;      /* steps whose dense output was built (3 evaluations of f each, in nfev) */
    double hrho;      /* stiffness estimate h |k13 - k12| / |x_new - x_12| of the last accepted step */
    double stiff_hrho;/* threshold of hrho for stiff_run (0: not counted); e.g. 80 % of 6.1 */
    int stiff_run;    /* accepted steps with hrho > stiff_hrho, limited by stability, not separated
                         by stiff_gap steps below it in a row (mbs_rk_stiff_count) */
    int stiff_gap;    /* steps below stiff_hrho in a row that restart stiff_run (0 or 1: each one) */
    int stiff_below;  /* steps below stiff_hrho in a row now */
    double hrho_stiff, h_stiff; /* hrho and h of the last step above stiff_hrho */
    double *work;     /* caller-provided, MBS_DOP853_WORK_SIZE(n) doubles */
    int fsal_valid;   /* 1 when work holds (t_fsal, x, k1 = f(t_fsal, x)) from the previous call */
    double t_fsal;    /* time of the stored state */
    int dense_valid;  /* 1 when work holds the stages of the last accepted step [t_prev, t_prev + h_dense] */
    int dense_ready;  /* 1 when its r5..r8 have been built (stages 14..16 evaluated) */
    double t_prev, h_dense;
    mbs_rk_singular sing; /* sing.weak: NULL (init) or the hook for singular positions, set after
                         init (mbs_rkstab.h); the ratios of DOP853's accepted states */
    int crossing;     /* 1 while near (RKSTAB) crosses a singular position, up to t_exit */
    double t_exit;
    mbs_rkstab near;  /* its work: the last MBS_RKSTAB_WORK_SIZE(n) doubles of work */
    long ncross;      /* singular positions crossed by RKSTAB */
} mbs_dop853;

/* Initialise s; returns MBS_RKSTAB_OK or MBS_RKSTAB_EARG (n < 1, NULL work, rtol not > 0 or not
 * finite, atol or hmax NaN, atol infinite). Counters are zeroed. */
int mbs_dop853_init(mbs_dop853 *s, int n, double *work, double rtol, double atol, double hmax);

/* Integrate from *t to exactly t_end, with the semantics of mbs_rkstab_advance: on return *t and x
 * hold the last accepted state (t_end and the solution on success).  The last step is shortened (or
 * stretched by at most 1 %) to end exactly at t_end; the step-size proposal s->h is not reduced by
 * that shortened step.  k1 = f(t, x) is reused when *t and x equal (bitwise) the state the
 * previous call returned and mbs_dop853_reset_fsal has not been called.  max_steps bounds the
 * attempted steps of this call (<= 0: no limit). */
int mbs_dop853_advance(mbs_dop853 *s, mbs_rhs_fn f, mbs_project_fn p, void *ctx, double *t, double *x,
                       double t_end, long max_steps);

/* Dense mode, with the semantics of mbs_rkstab_advance_dense: the integrator keeps its own state
 * (time t_fsal) and takes the steps its error control allows, past t_target but never past t_stop
 * (>= t_target; INFINITY: no limit; t_stop = t_target behaves as mbs_dop853_advance).  If the
 * internal state is not valid (first call, after mbs_dop853_reset_fsal) it starts from (t0, x0);
 * otherwise t0 and x0 are ignored.  xout receives the state at t_target: the internal (projected)
 * state if a step ends there, otherwise the order-7 interpolant of the step containing it (not
 * projected; its three extra stages are evaluated once per such step).  Forward only: t_target
 * must not lie before t0 nor before the start of the last step (MBS_RKSTAB_EARG).  On failure the
 * internal state is the last accepted one and xout is not written. */
int mbs_dop853_advance_dense(mbs_dop853 *s, mbs_rhs_fn f, mbs_project_fn p, void *ctx, double t0,
                             const double *x0, double t_target, double t_stop, long max_steps,
                             double *xout);

/* Forget the stored state and k1 (call after changing x or inputs that enter f between calls). */
void mbs_dop853_reset_fsal(mbs_dop853 *s);

/* The last accepted internal state (n doubles) and its time *t: DOP853's, or during a crossing
 * the crossing RKSTAB's. */
const double *mbs_dop853_state(const mbs_dop853 *s, double *t);

/* Static text for a return code (those of mbs_rkstab_message). */
const char *mbs_dop853_message(int code);

#ifdef __cplusplus
}
#endif

#endif /* MBS_DOP853_H */
