/*
 * mbs_rkstab.h -- RKSTAB: Dormand-Prince 5(4) with post-stabilization inside the step (C99).
 *
 * C port of mbsfmu/reference/integrators/rkstab.py (same tableau, error norm, step-size controller, starting
 * step heuristic and rejection rules, so both take the same step sequence for the same problem);
 * a method of the step driver mbs_stepper.h, which runs the steps.
 *
 * One attempted step of size h from (t, x) with k1 = f(t, x) known (FSAL), seed 004 eqs. 4.9-4.13:
 *   k2..k6 as in DOPRI5, x~ = x + h sum b_j k_j (5th order),
 *   x_new = project(t + h, x~)            (x_new = x~ without projection),
 *   k7 = f(t + h, x_new)                  (FSAL: k1 of the next step),
 *   err = (x_new - x~) + h sum_{j=1..7} (b_j - b^_j) k_j,
 *   ||err|| = sqrt(1/n sum (err_i / sc_i)^2), sc_i = atol + rtol max(|x_i|, |x_new,i|) <= 1: accept.
 * Controller (Hairer's DOPRI5): the constants MBS_RKSTAB_* of mbsfmu/core/constants.py (RKSTAB):
 * safety 0.9, step ratio in [0.2, 10], PI with beta = 0.04 using the previous accepted error, no
 * increase right after a rejection.  A stage argument, x~ or error norm that is not finite rejects
 * the step and shrinks h by 0.2.  Near a singular position (the hook mbs_weak_fn) the steps are
 * placed so that the predicted singular time falls 0.55 into a step.
 * Dense output (Hairer's CONTD5, 4th order), stored for every accepted step:
 *   z(t) = r1 + th (r2 + (1 - th) (r3 + th (r4 + (1 - th) r5))),  th = (t - t_prev) / h.
 *
 * Usage:
 *   double work[MBS_RKSTAB_WORK_SIZE(n)];
 *   mbs_stepper s;
 *   mbs_rkstab_init(&s, n, work, rtol, atol, hmax);    (optionally set s.hmin, s.h afterwards)
 *   mbs_problem pb = {f, NULL, project, ctx, NULL};
 *   rc = mbs_stepper_advance_dense(&s, &mbs_rkstab_method, &pb, t0, x0, t_target, t_stop, max_steps, xout);
 *   or rc = mbs_stepper_advance(&s, &mbs_rkstab_method, &pb, &t, x, t_end, max_steps);
 */
#ifndef MBS_RKSTAB_H
#define MBS_RKSTAB_H

#include "mbs_stepper.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size (number of doubles) of the work array for n states: the rows of the explicit layout
 * (x, x_new, x~, the stage argument, d, k1..k7) and the five rows r1..r5 of the continuous
 * extension of the last step. */
#define MBS_RKSTAB_WORK_SIZE(n) (17 * (n))

/* The method (mbs_stepper.h). */
extern const mbs_step_method mbs_rkstab_method;

/* Initialise s for RKSTAB; returns MBS_STEP_OK or MBS_STEP_EARG (mbs_stepper_init). */
int mbs_rkstab_init(mbs_stepper *s, int n, double *work, double rtol, double atol, double hmax);

#ifdef __cplusplus
}
#endif

#endif /* MBS_RKSTAB_H */
