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
 * Step size: err <= 1 accepts.  h_new = h / quot, quot = err^(1/4) / fac within [1/8, 5],
 *   fac = min(0.9, 0.9 (1 + 2 nit) / (newt + 2 nit)) (fewer Newton iterations, bolder steps), and
 *   Gustafsson's predictive controller after the first accepted step; no increase right after a
 *   rejection.  A rejected step retries with h_new (h / 10 on the very first step); a Newton
 *   iteration that diverges, a stage or error estimate that is not finite, or f returning nonzero
 *   during the step halve h (and recompute an old Jacobian); a Newton iteration that would be too
 *   slow shrinks h by its predicted rate; a singular iteration matrix halves h (5 times in a row:
 *   MBS_RADAU_ESINGULAR).
 * Reuse: the Jacobian is kept for the next step while the Newton contraction was fast
 *   (theta <= 0.001), the LU factors and h too while the new step would be within [1, 1.2] h.
 *   Jacobian, factors, step size and controller history persist across calls (plain data in the
 *   struct and the work arrays).
 * Projection: the formulation's projection p (as in mbs_rkstab.h) is applied to x_new of every
 *   step that passed the error test, before f(t + h, x_new) is evaluated for the next step (one
 *   call of p per accepted step); the error estimate is that of the unprojected step.
 * Dense output: the collocation polynomial of the last accepted step (unprojected, order 3; it
 *   passes through the unprojected x_new and through the stage values), as RKSTAB's dense output
 *   is unprojected: the caller projects interpolated states itself.
 *
 * Usage (parallel to mbs_rkstab.h; same callbacks and return codes plus MBS_RADAU_ESINGULAR):
 *   double work[MBS_RADAU_WORK_SIZE(n)];  int iwork[MBS_RADAU_IWORK_SIZE(n)];
 *   mbs_radau s;
 *   mbs_radau_init(&s, n, work, iwork, rtol, atol, hmax);   (optionally set s.hmin, s.h)
 *   rc = mbs_radau_advance_dense(&s, f, jac, p, ctx, t0, x0, t_target, t_stop, max_steps, xout);
 * No dynamic allocation, no global state, no output; independent instances may run concurrently.
 */
#ifndef MBS_RADAU_H
#define MBS_RADAU_H

#include "mbs_rkstab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Jacobian J = df/dx (n x n, row-major: J[i * n + j] = d f_i / d x_j) at (t, x), where
 * fx = f(t, x) is given; return 0 on success, nonzero on failure.  May be NULL: forward
 * differences, column j with the increment sqrt(eps max(1e-5, |x_j|)) (n evaluations of f). */
typedef int (*mbs_jac_fn)(void *ctx, double t, const double *x, const double *fx, double *J);

/* Return code beyond those of mbs_rkstab.h (-1..-7). */
#define MBS_RADAU_ESINGULAR (-8) /* the iteration matrix stayed singular while h was halved 5 times */
#define MBS_RADAU_ENEWTON (-9)   /* step size underflow after the Newton iteration diverged */

/* Work arrays for n states: doubles (x, f, Z, W, the collocation polynomial, scratch rows, J, the
 * real LU and the complex LU as real and imaginary parts) and ints (the two pivot vectors). */
#define MBS_RADAU_WORK_SIZE(n) (4 * (n) * (n) + 18 * (n))
#define MBS_RADAU_IWORK_SIZE(n) (2 * (n))

typedef struct {
    int n;              /* number of states */
    double rtol;        /* relative tolerance (> 0) */
    double atol;        /* absolute tolerance (>= 0; init with atol < 0 selects rtol / 10) */
    double h;           /* proposed next step; <= 0: 1e-6 (RADAU5's default; at least 100 hmin) */
    double hmax;        /* upper bound of the step size (init with hmax <= 0 or inf: unlimited) */
    double hmin;        /* lower bound of the step size; 0 (default): 1e-14 min(1, t_target - t) of
                           each call.  Never below 10 ulp(t) of the step's start either. */
    long nfev;          /* evaluations of f, including the difference quotients of J */
    long njev;          /* Jacobians (analytic or by differences) */
    long ndec;          /* decompositions: one real and one complex LU each */
    long naccept;       /* accepted steps */
    long nreject;       /* rejected attempts (error test, Newton failure, non-finite values, rhs
                           failure, singular iteration matrix) */
    long nproj;         /* calls of the projection (one per accepted step) */
    long nnewton;       /* Newton iterations (three evaluations of f each) */
    double *work;       /* MBS_RADAU_WORK_SIZE(n) doubles, caller-provided */
    int *iwork;         /* MBS_RADAU_IWORK_SIZE(n) ints, caller-provided */
    /* internal state: plain data, saved and restored with the instance (re-point work, iwork) */
    int valid;          /* work holds x (at t_cur) and f(t_cur, x) */
    double t_cur;       /* time of the internal state */
    int dense_valid;    /* work holds the collocation polynomial of the step [t_prev, t_cur] */
    double t_prev, h_dense; /* start and length (t_cur - t_prev) of that step */
    int jac_valid;      /* work holds a usable Jacobian (possibly of an earlier step) */
    int jac_fresh;      /* ... computed at t_cur (a failure cannot be cured by a new one) */
    int lu_valid;       /* work holds the LU factors of E1 and E2 for the step h_lu */
    double h_lu;
    int first;          /* no step accepted since the (re)start */
    int reject_last;    /* the last attempted step was rejected */
    double h_acc, err_acc; /* last accepted step and its error (Gustafsson's controller) */
    double faccon, theta;  /* Newton convergence: theta / (1 - theta), contraction rate */
} mbs_radau;

/* Initialise s; returns MBS_RKSTAB_OK or MBS_RKSTAB_EARG (n < 1, NULL arrays, rtol not > 0 or not
 * finite, atol or hmax NaN, atol infinite).  Counters are zeroed, the internal state invalid. */
int mbs_radau_init(mbs_radau *s, int n, double *work, int *iwork, double rtol, double atol, double hmax);

/* Dense mode, with the semantics of mbs_rkstab_advance_dense: if the internal state is not valid
 * (first call, after mbs_radau_reset) it starts from (t0, x0), otherwise t0 and x0 are ignored and
 * the internal state continues.  Steps are taken while the internal time is before t_target and
 * never pass t_stop (t_stop < t_target counts as t_target; INFINITY: no limit; a step that would
 * end within 1 % of h before t_stop is stretched to it).  xout receives the state at t_target:
 * the internal (projected) state if a step ends there, otherwise the collocation polynomial of the
 * step containing t_target (not projected).  Forward only: t_target must not lie before the start
 * of the last step (nor before t0 at a start): MBS_RKSTAB_EARG.  max_steps bounds the attempted
 * steps of this call (<= 0: no limit).  jac and p may be NULL.  On failure the internal state is
 * the last accepted one (still valid) and xout is not written.
 * Returns MBS_RKSTAB_OK, MBS_RKSTAB_EARG, ERHS (f failed at the start, in the Jacobian, or kept
 * failing until h fell below hmin), ENONFINITE (non-finite x0 or f(t0, x0), a non-finite
 * Jacobian, or steps that kept producing non-finite values until h fell below hmin), EUNDERFLOW,
 * ETOOMANY, EPROJECT, EHMAX (hmax < hmin) or MBS_RADAU_ESINGULAR. */
int mbs_radau_advance_dense(mbs_radau *s, mbs_rhs_fn f, mbs_jac_fn jac, mbs_project_fn p, void *ctx,
                            double t0, const double *x0, double t_target, double t_stop, long max_steps,
                            double *xout);

/* Integrate from *t to exactly t_end (forward only; t_end == *t returns at once), as
 * mbs_rkstab_advance: on return *t and x hold the last accepted (projected) state, t_end and the
 * solution on success.  The last step is shortened (or stretched by 1 %) to end at t_end; the
 * step-size proposal is not reduced by it.  The internal state (Jacobian, LU, controller) is
 * continued when *t and x equal (bitwise) the state the previous call returned; otherwise the
 * integrator restarts from (*t, x). */
int mbs_radau_advance(mbs_radau *s, mbs_rhs_fn f, mbs_jac_fn jac, mbs_project_fn p, void *ctx, double *t,
                      double *x, double t_end, long max_steps);

/* Forget the internal state (after x, inputs or parameters changed between calls); the step-size
 * proposal s->h and the counters are kept. */
void mbs_radau_reset(mbs_radau *s);

/* Static text for a return code (those of mbs_rkstab_message and MBS_RADAU_ESINGULAR). */
const char *mbs_radau_message(int code);

#ifdef __cplusplus
}
#endif

#endif /* MBS_RADAU_H */
