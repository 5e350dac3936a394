/*
 * mbs_radau.h -- the engine's stiff method: Radau IIA of order 5 (3 stages), C99.
 *
 * The collocation method of Hairer & Wanner (Solving ODEs II, sec. IV.8, code RADAU5) for
 * x' = f(t, x).  One attempted step of size h from (t, x):
 *   stage increments Z = (z1, z2, z3), z_k ~ x(t + c_k h) - x, solve Z = h (A x I) F(x + Z) by
 *   simplified Newton iterations; with W = (T^-1 x I) Z and T^-1 A^-1 T = diag(gamma,
 *   [alpha -beta; beta alpha]) each iteration needs three evaluations of f, one real n x n solve
 *   with E1 = gamma/h I - J and one complex n x n solve with E2 = (alpha + i beta)/h I - J
 *   (J = df/dx, finite differences of f unless a Jacobian callback is given).  At most 7
 *   iterations; the contraction rate theta decides early whether they will converge.
 *   Starting values: the collocation polynomial of the previous step, extrapolated (zero on the
 *   first step).  x_new = x + z3 (stiffly accurate, L-stable).
 * Error estimate: RADAU5's embedded formula filtered through E1^-1,
 *   err = E1^-1 (f(t, x) + (d1 z1 + d2 z2 + d3 z3) / h)  (re-filtered once with f(t, x + err) on the
 *   first step and after a rejection), norm sqrt(1/n sum (err_i / sc_i)^2) with
 *   sc_i = atol' + rtol' max(|x_i|, |x_new,i|) (the Newton iteration's norm uses |x_i| only), where
 *   RADAU5's internal tolerances are rtol' = 0.1 rtol^(2/3), atol' = rtol' atol / rtol.
 *   Since the estimate is O(h^4) and the true local error O(h^6), the global error is usually of
 *   the order of rtol.
 * Step size: err < 1 accepts.  h_new = h / quot, quot = err^(1/4) / fac within [1/8, 5],
 *   fac = min(0.9, 0.9 (1 + 2 nit) / (newt + 2 nit)) (fewer Newton iterations, bolder steps), and
 *   Gustafsson's predictive controller after the first accepted step; no increase right after a
 *   rejection.  A rejected step retries with h_new (h / 10 on the very first step); a Newton
 *   iteration that diverges, a stage or error estimate that is not finite, or f returning nonzero
 *   during the step halve h (and recompute an old Jacobian); a Newton iteration that would be too
 *   slow shrinks h by its predicted rate; a singular iteration matrix halves h (5 times in a row:
 *   MBS_STEP_ESINGULAR).
 * Reuse: the Jacobian is kept for the next step while the Newton contraction was fast
 *   (theta <= 0.001), the LU factors and h too while the new step would be within [1, 1.2] h.
 *   Jacobian, factors, step size and controller history persist across calls (plain data in the
 *   struct and the work arrays).
 * Projection (after the step, mbs_stepper.h): the formulation's projection p is applied to x_new of every
 *   step that passed the error test, before f(t + h, x_new) is evaluated for the next step (one
 *   call of p per accepted step); the error estimate is that of the unprojected step.
 * Dense output: the collocation polynomial of the last accepted step (unprojected, order 3; it
 *   passes through the unprojected x_new and through the stage values), as RKSTAB's dense output
 *   is unprojected: the caller projects interpolated states itself.
 *
 * The steps are those of the step driver (mbs_stepper.h), with Radau's attempt, controller and
 * dense output as the method's (mbs_radau_method): hmin is 1e-14 min(span, 1) of a call (at least
 * 10 ulp of each step's start), the first step 1e-6 (at least 100 hmin); a collapsed step size
 * ends a call as it does the explicit methods' (MBS_STEP_ECOLLAPSE).
 *
 * Usage (the driver's callbacks and return codes):
 *   double work[MBS_RADAU_WORK_SIZE(n)];  int iwork[MBS_RADAU_IWORK_SIZE(n)];
 *   mbs_radau s;
 *   mbs_radau_init(&s, n, work, iwork, rtol, atol, hmax);   (optionally set s.st.hmin, s.st.h)
 *   mbs_problem pb = {f, jac, project, ctx, NULL};                 (jac, project may be NULL)
 *   rc = mbs_stepper_advance_dense(&s.st, &mbs_radau_method, &pb, t0, x0, t_target, t_stop, max_steps, xout);
 * No dynamic allocation, no global state, no output; independent instances may run concurrently.
 */
#ifndef MBS_RADAU_H
#define MBS_RADAU_H

#include "mbs_stepper.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Work arrays for n states: doubles (x, f, Z, W, the collocation polynomial, scratch rows, J, the
 * real LU and the complex LU as real and imaginary parts) and ints (the two pivot vectors). */
#define MBS_RADAU_WORK_SIZE(n) (4 * (n) * (n) + 18 * (n))
#define MBS_RADAU_IWORK_SIZE(n) (2 * (n))

typedef struct {
    mbs_stepper st;     /* the driver's part (first: the driver's hooks cast back) */
    int *iwork;         /* MBS_RADAU_IWORK_SIZE(n) ints, caller-provided */
    long njev;          /* Jacobians (analytic or by differences; their evaluations of f in st.nfev) */
    long ndec;          /* decompositions: one real and one complex LU each */
    long nnewton;       /* Newton iterations (three evaluations of f each) */
    /* internal state: plain data, saved and restored with the instance (re-point work, iwork) */
    int jac_valid;      /* work holds a usable Jacobian (possibly of an earlier step) */
    int jac_fresh;      /* ... computed at the state's time (a failure cannot be cured by a new one) */
    int lu_valid;       /* work holds the LU factors of E1 and E2 for the step h_lu */
    double h_lu;
    int first;          /* no step accepted since the (re)start */
    double h_acc, err_acc; /* last accepted step and its error (Gustafsson's controller) */
    double faccon, theta;  /* Newton convergence: theta / (1 - theta), contraction rate */
    struct {
        double rtol, atol, fnewt; /* the internal tolerances and Newton criterion of a call */
    } tol;
    int nsing;          /* singular iteration matrices in a row in this call */
} mbs_radau;

/* The method (mbs_stepper.h). */
extern const mbs_step_method mbs_radau_method;

/* Initialise s; returns MBS_STEP_OK or MBS_STEP_EARG (n < 1, NULL arrays, rtol not > 0 or not
 * finite, atol or hmax NaN, atol infinite).  Counters are zeroed, the internal state invalid. */
int mbs_radau_init(mbs_radau *s, int n, double *work, int *iwork, double rtol, double atol, double hmax);

#ifdef __cplusplus
}
#endif

#endif /* MBS_RADAU_H */
