/*
 * mbs_dop853.h -- DOP853: Dormand-Prince 8(5,3) with post-stabilization, for tight tolerances (C99).
 *
 * The explicit Runge-Kutta pair of order 8 by Dormand & Prince (Prince & Dormand 1981), in the form
 * of Hairer's code DOP853 (Hairer, Norsett & Wanner, Solving ODEs I, 2nd ed., sec. II.10; the
 * coefficients are the decimal ones of dop853.f), with the interface and the step rules of
 * mbs_rkstab.h (the step driver mbs_stepper.h) so that the engine can use either.
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
 *   for a 1.7 times smaller error.  s.st.beta = 0 gives DOP853's controller (scipy's differs only in
 *   its ratio limits [0.2, 10] and in the cost of a rejected step).
 *   A stage argument, x~, x_new, k13 or error norm that is not finite rejects the step and shrinks
 *   h by 0.2 (as RKSTAB).
 * Singular positions (the hook weak of mbs_stepper.h, set for the null-space formulations): DOP853
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
 *   st.ncross counts them.
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
 * The steps are those of the step driver (mbs_stepper.h): clipping to t_stop, the step-size
 * proposal after a shortened step, hmin, non-finite values, FSAL across calls, the counters.
 *
 * Usage (as mbs_rkstab.h, with the driver's callbacks and return codes):
 *   double work[MBS_DOP853_WORK_SIZE(n)];
 *   mbs_dop853 s;
 *   mbs_dop853_init(&s, n, work, rtol, atol, hmax);     (optionally set s.st.hmin, s.st.h, s.st.beta)
 *   mbs_problem pb = {f, NULL, project, ctx, NULL};
 *   rc = mbs_stepper_advance_dense(&s.st, &mbs_dop853_method, &pb, t0, x0, t_target, t_stop, max_steps, xout);
 *   or rc = mbs_stepper_advance(&s.st, &mbs_dop853_method, &pb, &t, x, t_end, max_steps);
 */
#ifndef MBS_DOP853_H
#define MBS_DOP853_H

#include "mbs_rkstab.h"
#include "mbs_stepper.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size (number of doubles) of the work array for n states: the rows of the explicit layout (x,
 * x_new, x~, the stage argument, d, k1..k13), k14..k16, x and k1 at the start of the last step,
 * r5..r8, and the work of the crossing RKSTAB. */
#define MBS_DOP853_WORK_SIZE(n) (27 * (n) + MBS_RKSTAB_WORK_SIZE(n))

typedef struct {
    mbs_stepper st;   /* the driver's part (first: the driver's hooks cast back) */
    long ndense;      /* steps whose dense output was built (3 evaluations of f each, in st.nfev) */
    int dense_ready;  /* 1 when the r5..r8 of the last step have been built (stages 14..16 evaluated) */
    mbs_stepper near; /* the crossing RKSTAB; its work: the last MBS_RKSTAB_WORK_SIZE(n) doubles of work */
} mbs_dop853;

/* The method (mbs_stepper.h). */
extern const mbs_step_method mbs_dop853_method;

/* Initialise s; returns MBS_STEP_OK or MBS_STEP_EARG (n < 1, NULL work, rtol not > 0 or not
 * finite, atol or hmax NaN, atol infinite). Counters are zeroed. */
int mbs_dop853_init(mbs_dop853 *s, int n, double *work, double rtol, double atol, double hmax);

#ifdef __cplusplus
}
#endif

#endif /* MBS_DOP853_H */
