/*
 * mbs_sensitivity.h -- forward sensitivities of a run: dx(t)/dp by the direct method (C99).
 *
 * For the state x = [y, y'] of a started instance (mbs_instance.h) and np parameters p_j (a
 * constant, the initial value of a coordinate or of its rate, the value or rate of a named
 * initial condition) the engine integrates, together with x and by the same method and error
 * control, the sensitivities s_j = dx/dp_j = [s_y, s_y'] of the exact solution (seed 002 §4, the
 * direct method):
 *
 *   s_y' = s_y'-part,   s_y'' = sigma  with
 *   M sigma - C^T mu = -dR,   C sigma = -dG                              (the tangent of eqs. 7-8)
 *
 * where dR, dG are the tangents of R = M a - (q - k) - C^T lambda and G = C a + b'' (+ the
 * Baumgarte terms 2 alpha V + beta^2 c of the formulations that add them) along (s_y, s_y', e_j)
 * at the state's a = y'' and lambda, generated from the symbolic equations (mbs_sens_tangent,
 * mbsfmu.equations.sensitivity_equations); mu = dlambda/dp_j.  The linear systems are those of
 * the accelerations (mbs_form_kkt: the null-space form, redundant constraints harmless).
 *
 * Consistency (what the constraints' derivatives require): at the start
 *   C_h s_y + dc/dp = 0,  E s_y = de0/dp   (positions: the coordinates the start moved change)
 *   C s_y' + dV = 0,      E s_y' + ... = drate/dp   (rates: likewise)
 * by the least change of the unheld entries (mbs_form_least_change), and after every projection
 * of the state (formulations that project) the same corrections of each s_j: the projection
 * differentiated at its converged point, s <- (I - C^+ C) s - C^+ dc/dp (least change).
 *
 * The integrator runs on the augmented state X = [x, s_1, ..., s_np] (2 f (1 + np) values) with
 * the error test over all of it (MBS_SENS_ERROR_ALL) or over x alone (MBS_SENS_ERROR_STATE: the
 * plain run's steps, then the sensitivities are those of the discrete solution's step sequence,
 * not controlled); the stiff method's Newton matrix is block diagonal (the state's
 * Jacobian by differences in every block: the sensitivity equations are linear in s).
 * Storage is allocated here (malloc), per run.
 */
#ifndef MBS_SENSITIVITY_H
#define MBS_SENSITIVITY_H

#include <stddef.h>

#include "mbs_instance.h"
#include "mbs_kinds.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a parameter column is (what[j]) and its index (index[j]): MBS_SENS_CONSTANT (constant
 * index), MBS_SENS_POSITION, MBS_SENS_RATE (the initial value of coordinate index, of its rate),
 * MBS_SENS_IC_VALUE, MBS_SENS_IC_RATE (the value, the rate of initial condition index); what the
 * error test measures (error_control of mbs_sens_run): MBS_SENS_ERROR_ALL (the state and the
 * sensitivities, both to the tolerance) or MBS_SENS_ERROR_STATE (the state alone: the plain run's
 * steps, the sensitivities along).  All generated from mbsfmu.core.constants (mbs_kinds.h). */

/* 1 if the model was built with its sensitivity functions (mbs_sens_tangent ...), else 0. */
int mbs_sens_available(void);

/* Doubles per grid point and column in srec: the sensitivities of the signals y (f), y' (f),
 * lambda (m) and the expression outputs (MBS_NOUT_EXPR), in this order (a signal is an index into
 * this layout). */
size_t mbs_sens_width(void);

/* From the started instance over grid[0..n-1] (grid[0] = its time): rows of rec as mbs_inst_run
 * writes them (stride doubles, what `record` asks for), per grid point k and column j the
 * sensitivities srec[(k * np + j) * mbs_sens_width() ...], and per grid point the integrals
 * int_0^t sig dt of the nq signals qsig[i] and their sensitivities:
 * qrec[k * nq (1 + np) + i] and qrec[k * nq (1 + np) + nq (1 + j) + i].  stats (4 longs): rhs
 * evaluations, accepted and rejected steps, projections.  tick as in mbs_inst_run.  MBS_OK, or
 * MBS_ERROR with the message of the instance (mbs_inst_message) and *reached rows written. */
int mbs_sens_run(mbs_instance *inst, int np, const int *what, const int *index, int nq, const int *qsig,
                 int error_control, const double *grid, size_t n, double *rec, size_t stride,
                 int record, double *srec, double *qrec, long *stats, int (*tick)(void *ctx, double t),
                 void *ctx, size_t *reached);

/* The adjoint method (mbs_adjoint.c): from the started instance to t_end, the values of nm metrics
 * and their gradients by the np parameter columns, with one backward integration for all of them.
 * Metric i is the final value (kind[i] = MBS_ADJ_FINAL) or the integral over [t0, t_end]
 * (MBS_ADJ_INTEGRAL) of signal sig[i], or (MBS_ADJ_LEAST_SQUARES) sum_k w_k (sig_i(t_k) - d_k)^2
 * over its npts[i] points (t_k, d_k, w_k), three doubles each in pts, the metrics' in order (the
 * adjoint jumps by 2 w_k (sig - d_k) dsig/dx at each t_k).  With x' = F(x, p), J = phi(x(T), p) + int h(x, p) dt:
 *   mu(T) = dphi/dx,   -mu' = F_x^T mu + h_x^T,   dJ/dp_j = mu(t0) s_j(t0) + int (mu^T F_p + h_p) dt + dphi/dp,
 * integrated backward in tau = T - t by the instance's method on the forward trajectory (kept as
 * its continuous extension, eight values per step); F_x^T mu by the transposed linear systems of
 * the accelerations and the adjoint code of the equations (mbs_sens_adjoint).  values: nm, grad:
 * nm x np; stats (8 longs): the forward's then the backward's (rhs, accepted, rejected, projections). */
int mbs_adj_run(mbs_instance *inst, int np, const int *what, const int *index, int nm, const int *kind,
                const int *sig, const int *npts, const double *pts, double t_end, double *values, double *grad,
                long *stats, int (*tick)(void *ctx, double t), void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* MBS_SENSITIVITY_H */
