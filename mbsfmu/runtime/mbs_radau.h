/*
 * mbs_radau.h -- the engine's stiff method: Radau IIA of order 5 (3 stages), C99.
 *
 * The collocation method of Hairer & Wanner (Solving ODEs II, sec. IV.8) for x' = f(t, x):
 * the stage increments Z = (z1, z2, z3) solve  Z = h (A x I) F(Z)  by simplified Newton
 * iterations; with the transformation T^-1 A^-1 T = diag(gamma, [alpha -beta; beta alpha]) each
 * iteration needs one real n x n system with (gamma/h I - J) and one complex one with
 * ((alpha + i beta)/h I - J), J = df/dx (finite differences of f unless a Jacobian is given).
 * x_new = x + z3 (stiffly accurate, L-stable).  The error estimate is the embedded formula of
 * RADAU5 filtered through (gamma/h I - J)^-1 (re-filtered once after a rejection), the step size
 * control Gustafsson's predictive controller, and the Jacobian is kept while the Newton iteration
 * contracts fast (theta <= 0.001) and the LU while h changes by less than 20 %.
 *
 * The formulation's projection p (as in mbs_rkstab.h) is applied to every accepted step; the
 * error estimate is that of the unprojected step.  The continuous extension is the collocation
 * polynomial of the last step (order 3); in dense mode (mbs_radau_advance_dense) the state at a
 * communication point is that polynomial, not projected, as RKSTAB's dense output.
 *
 * Same callbacks and return codes as mbs_rkstab.h, plus MBS_RADAU_ESINGULAR.  No dynamic
 * allocation, no global state: the caller provides MBS_RADAU_WORK_SIZE(n) doubles and
 * MBS_RADAU_IWORK_SIZE(n) ints.
 */
#ifndef MBS_RADAU_H
#define MBS_RADAU_H

#include "mbs_rkstab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Jacobian J = df/dx (n x n, row-major) at (t, x) where fx = f(t, x); 0 on success. */
typedef int (*mbs_jac_fn)(void *ctx, double t, const double *x, const double *fx, double *J);

#define MBS_RADAU_ESINGULAR (-8) /* the iteration matrix stayed singular while h was halved */

#define MBS_RADAU_WORK_SIZE(n) (6 * (n) * (n) + 20 * (n))
#define MBS_RADAU_IWORK_SIZE(n) (3 * (n))

typedef struct {
    int n;
    double rtol, atol;  /* tolerances (atol < 0 at init: rtol / 10) */
    double h;           /* proposed next step (<= 0: chosen at the first call) */
    double hmax, hmin;  /* step bounds (hmin 0: 1e-14 of each call's span) */
    long nfev, njev, ndec, naccept, nreject, nproj, nnewton; /* counters (cumulative) */
    double *work;
    int *iwork;
    /* internal state (plain data: saved and restored with the instance) */
    int valid;          /* work holds x and f(t_cur, x) */
    double t_cur;
    int dense_valid;    /* the collocation polynomial of the last step [t_prev, t_prev + h_dense] */
    double t_prev, h_dense;
    int jac_valid;      /* J is the Jacobian at t_cur */
    int first, reject_last;
    double h_acc, err_acc, faccon, theta;
} mbs_radau;

int mbs_radau_init(mbs_radau *s, int n, double *work, int *iwork, double rtol, double atol, double hmax);

/* Dense mode with the semantics of mbs_rkstab_advance_dense (steps may pass t_target up to t_stop;
 * xout = the collocation polynomial at t_target).  jac may be NULL (finite differences). */
int mbs_radau_advance_dense(mbs_radau *s, mbs_rhs_fn f, mbs_jac_fn jac, mbs_project_fn p, void *ctx,
                            double t0, const double *x0, double t_target, double t_stop, long max_steps,
                            double *xout);

/* Forget the internal state (after x or the inputs changed between calls). */
void mbs_radau_reset(mbs_radau *s);

const char *mbs_radau_message(int code);

#ifdef __cplusplus
}
#endif

#endif /* MBS_RADAU_H */
