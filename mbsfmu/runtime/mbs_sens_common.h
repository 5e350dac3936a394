/*
 * mbs_sens_common.h -- what the direct (mbs_sensitivity.c) and the adjoint method (mbs_adjoint.c)
 * share: the augmented system of the state and its sensitivities, its integrator, the signals.
 * Internal to the engine's sensitivity analysis; compiled with the model (mbs_model.h).
 *
 * The augmented state X = [x (2 f), s_1 .. s_np (2 f each), q (nq), dq/dp_1 .. dq/dp_np (nq each)]:
 * the state, its sensitivities, and the integrals q_i = int sig_i dt of nq signals with theirs.
 * A signal is an index into [y (f), y' (f), lambda (m), the expression outputs (MBS_NOUT_EXPR)],
 * the layout of a row of sensitivities (mbs_sens_width).
 */
#ifndef MBS_SENS_COMMON_H
#define MBS_SENS_COMMON_H

#include <stddef.h>

#include "mbs_dop853.h"
#include "mbs_model.h"
#include "mbs_radau.h"
#include "mbs_rkstab.h"
#include "mbs_sensitivity.h"
#include "mbs_stepper.h"

#define F MBS_F
#define NX (2 * MBS_F)
#define NC MBS_M
#define NH MBS_MH
#define NIC MBS_NIC
#define NOUTX MBS_NOUT_EXPR
/* the signals: where lambda and the expression outputs begin */
#define SIG_LAMBDA NX
#define SIG_OUT (NX + NC)
#define SIG_COUNT (NX + NC + NOUTX)

/* offsets into the output of mbs_sens_tangent: dR, dG, dc, dV, de, d(E y') */
#define T_DR 0
#define T_DG (T_DR + F)
#define T_DC (T_DG + NC)
#define T_DV (T_DC + NH)
#define T_DE (T_DV + NC)
#define T_DEV (T_DE + NIC)
#define T_SIZE (T_DEV + NIC)
/* its argument z: a, lambda, then per direction dy, dy', dp */
#define Z_A 0
#define Z_L (Z_A + F)
#define Z_DIR (Z_L + NC)
#define D_SIZE (NX + MBS_NPRM)
#define Z_SIZE (Z_DIR + D_SIZE)
/* rows of the consistency conditions: [C_h; E] and [C; E_r] */
#define ROWS (NC + NIC)

#if MBS_HAS_SENS

typedef struct {
    mbs_instance *inst;
    mbs_form *form;
    int np;                /* parameter columns (what[j], index[j]) */
    const int *what, *index;
    int nq;                /* integrated signals qsig[i] */
    const int *qsig;
    int need_outputs;      /* the right-hand side evaluates the expression outputs (a q reads one) */
    int need_lambda;       /* ... and the multipliers' sensitivities (a q reads a multiplier) */
    int want_lambda;       /* set by a caller that reads S->L after the next right-hand side */
    int tree;              /* the articulated-body algorithm: its own tangent, no linear systems */
    double *H, *B, *A, *L; /* np x f, np x m, np x f, np x m: the linear systems, their solutions */
    double *Xd;            /* X' where only the by-products are wanted */
    double *zall, *tall;   /* the tangents of all columns at once: z, out */
    double *zout, *touts;  /* the output tangents of all columns: directions, np x NOUTX */
    double *prow;          /* np x m: the rows a projection of the columns must meet */
    double a0[F], lam0[MBS_ONE(NC)], outv[MBS_ONE(NOUTX)]; /* y'', lambda, outputs at the last X */
    double xdot[NX], z[MBS_ONE(Z_SIZE)], tout[MBS_ONE(T_SIZE)]; /* one column's tangents */
    double cs[MBS_ONE(NH + NC * F + NC)], ie[MBS_ONE(NIC + NIC * F)];
    double G[MBS_ONE(ROWS * F)], rhs[MBS_ONE(ROWS)], xs[NX];
    int free_idx[MBS_ONE(F)];
    char msg[700];
} mbs_sens;

/* One of the engine's methods on the augmented system (storage allocated here). */
typedef struct {
    int method;
    mbs_stepper rk;
    mbs_dop853 dp;
    mbs_radau rd;
    mbs_stepper *st;
    const mbs_step_method *meth;
    double *work;
    int *iwork;
} mbs_sens_stepper;

/* 0, or 1 with msg (out of memory, settings refused). */
int mbs_sens_stepper_init(mbs_sens_stepper *I, int method, int n, double rtol, double atol, double hmax,
                          char *msg, size_t len);
void mbs_sens_stepper_free(mbs_sens_stepper *I);
/* Its counters into stats[0..3]: rhs evaluations, accepted and rejected steps, projections. */
void mbs_sens_stepper_stats(const mbs_sens_stepper *I, long *stats);

/* 0, or 1 (out of memory). */
int mbs_sens_init(mbs_sens *S, mbs_instance *inst, int np, const int *what, const int *index, int nq,
                  const int *qsig);
void mbs_sens_free(mbs_sens *S);
/* values in X: 2 f (1 + np) + nq (1 + np) */
int mbs_sens_size(const mbs_sens *S);
/* the problem's functions (ctx = the mbs_sens); 0 on success, else S->msg says why */
int mbs_sens_rhs(void *ctx, double t, const double *X, double *Xdot);
int mbs_sens_project(void *ctx, double t, double *X);
int mbs_sens_jac(void *ctx, double t, const double *X, const double *fX, double *J);
/* consistent s_j(0) in X (x given; q and dq/dp set to 0) */
int mbs_sens_initial(mbs_sens *S, double t, double *X);
/* the value of signal sig and its sensitivity by column j at the X of the last mbs_sens_rhs */
double mbs_sens_signal(const mbs_sens *S, int sig, const double *X);
double mbs_sens_signal_tangent(const mbs_sens *S, int sig, const double *X, int j);
/* mbs_sens_rhs with the multipliers' sensitivities in S->L */
int mbs_sens_rhs_lambda(mbs_sens *S, double t, const double *X, double *Xdot);
/* the output tangents of every column at X into S->touts (after mbs_sens_rhs at X) */
void mbs_sens_output_tangents(mbs_sens *S, double t, const double *X);

#endif /* MBS_HAS_SENS */

#endif /* MBS_SENS_COMMON_H */
