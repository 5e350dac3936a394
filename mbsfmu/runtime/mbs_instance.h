/*
 * mbs_instance.h -- one running model: the layer every path of mbsfmu simulates through.
 *
 * An instance holds the values of the model's variables (in value-reference order, see
 * mbs_model.h), the integrator and the formulation, and offers what a simulation needs:
 *
 *   set / get values     with the model's rules checked before anything changes (solver-setting
 *                        ranges, declared bounds, parameter rules of mbs_parameters.h);
 *   start                consistent initial state (seed 000 eqs. 5-6), integrator set-up,
 *                        outputs at the start;
 *   do-step              from the current time t to t + h with dense output: the integrator takes
 *                        the steps its error control allows, also past communication points (up to
 *                        the stop time), and the state at t + h is its continuous extension,
 *                        projected onto the constraints like every step end.  After an input or
 *                        parameter changed, it restarts at t and does not step past t + h;
 *   run                  do-steps over a whole grid in one call, recording every point;
 *   outputs              user outputs (expressions, frame kinematics, Lagrange multipliers);
 *   directional derivatives of the outputs by the inputs (symbolic Jacobians, KKT for multipliers);
 *   state                save / restore of everything that determines the continuation.
 *
 * The FMI 2.0 glue (fmi2_glue.c) and the Python binding (mbs_python.c) are thin layers over this
 * API: the state machine of FMI, logging and argument checks live there, the simulation here.
 * Functions that can fail return MBS_OK, MBS_WARNING or MBS_ERROR (the numbers of fmi2Status) and
 * leave a one-line explanation in mbs_inst_message().
 *
 * The model's sizes are not visible here: the instance is an opaque block of
 * mbs_instance_size() bytes the caller allocates.
 */
#ifndef MBS_INSTANCE_H
#define MBS_INSTANCE_H

#include <stddef.h>

#include "mbs_formulation.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_instance mbs_instance;

enum { MBS_OK = 0, MBS_WARNING = 1, MBS_ERROR = 3 };

/* variable kinds (mbs_kind of the model) */
enum {
    MBS_VAR_STATE = 0,   /* coordinate or velocity: start value settable before the start */
    MBS_VAR_CALC = 1,    /* calculated output */
    MBS_VAR_FIXED = 2,   /* fixed parameter (the constraints depend on it) */
    MBS_VAR_TUNABLE = 3, /* tunable parameter (incl. the solver settings) */
    MBS_VAR_INPUT = 4,
    MBS_VAR_INITIAL = 5  /* value or rate of a named initial condition: settable before the start */
};

/* FMI types of the variables: every value is a double here, but the FMU declares the method
 * 'method' as an Integer (mbs_var_type) */
enum { MBS_TYPE_REAL = 0, MBS_TYPE_INTEGER = 1 };

/* ---- the model */
const char *mbs_model_name(void);
const char *mbs_model_guid(void);
int mbs_model_nvars(void);
const char *mbs_var_name(unsigned vr);  /* NULL for an unknown value reference */
int mbs_var_kind(unsigned vr);          /* -1 for an unknown value reference */
int mbs_var_type(unsigned vr);          /* MBS_TYPE_*, -1 for an unknown value reference */
/* sizes: f, nprm, nu, ntp, m, nic, nout, nvars, has_aba, first value reference of the outputs,
 * constants, solver settings and inputs, value reference of the method; returns the number
 * written (<= 14) */
int mbs_model_sizes(int *out);

/* ---- life cycle */
size_t mbs_instance_size(void);
/* (Re)initialise an instance: start values, time 0, default formulation and method. */
void mbs_inst_init(mbs_instance *inst);
const char *mbs_inst_message(const mbs_instance *inst);
/* Optional logger for events (level MBS_OK) and warnings (MBS_WARNING) of start and do-step. */
void mbs_inst_set_logger(mbs_instance *inst, void (*log)(void *ctx, int level, const char *msg), void *ctx);

/* ---- configuration (before start) */
/* Formulation kind (MBS_FORM_* of mbs_kinds.h); models without constraints always run
 * the minimal ODE.  Options are taken from mbs_inst_form() afterwards. */
int mbs_inst_set_formulation(mbs_instance *inst, int kind);
mbs_form *mbs_inst_form(mbs_instance *inst);
/* Formulation 'partition': fix the choice, dependent[j] != 0 for the m dependent coordinates
 * (without it the engine chooses at the first evaluation, and again whenever C_d degrades). */
int mbs_inst_set_partition(mbs_instance *inst, const unsigned char *dependent);
/* Integration method: MBS_METHOD_RKSTAB (explicit, stabilized DOPRI5), MBS_METHOD_STIFF (Radau
 * IIA 5 with the formulation's projection; it stops at every communication point, since its dense
 * output is of order 3 only) or MBS_METHOD_DOP853 (explicit Dormand-Prince 8(5,3), projected
 * after each step; fewer steps than RKSTAB at tight tolerances, mbs_dop853.h).  It is the value of the variable 'method' (whose start
 * value, the model's, is the default); setting that variable with mbs_inst_set switches the
 * method as well, also between do-steps (the integrator restarts at the next one). */
int mbs_inst_set_method(mbs_instance *inst, int method);
int mbs_inst_method(const mbs_instance *inst);
/* "rkstab", "stiff", "dop853" (the values of 'method', mbsfmu.core.solver_settings.METHODS); NULL for another
 * number, so that 0, 1, ... until NULL are all the methods */
const char *mbs_method_name(int method);
/* The step driver's descriptor of a method (mbs_stepper.h): Radau, DOP853 or RKSTAB. */
struct mbs_step_method;
const struct mbs_step_method *mbs_method_descriptor(int method);
/* Minimal ODE of a tree: 1 = articulated-body algorithm where the model has it, 0 = mass matrix. */
void mbs_inst_use_aba(mbs_instance *inst, int on);
/* Input values as a function of time (called before every right-hand side; writes u).  Return
 * nonzero to stop the integration (e.g. an exception in a Python callable). */
void mbs_inst_set_input_fn(mbs_instance *inst, int (*fn)(void *ctx, double t, double *u), void *ctx);
/* Time-parameter values (p, p', p'' each) at t, for models whose time parameters are not
 * expressions (MBS_TP_FUNCTION 0). */
void mbs_inst_set_tp_fn(mbs_instance *inst, int (*fn)(void *ctx, double t, double *tp), void *ctx);
/* Time of the start, and the stop time (steps never pass it; INFINITY: none). */
int mbs_inst_set_time(mbs_instance *inst, double t0, double t_stop);

/* ---- values */
/* Check and set: before the start any variable but calculated outputs; after it, inputs and
 * tunable parameters (incl. the solver settings and the method 'method', mbs_inst_set_method).
 * Everything is checked first: a refused call changes nothing. */
int mbs_inst_set(mbs_instance *inst, size_t n, const unsigned *vr, const double *value);
/* Values by value reference (outputs recomputed first if an input or parameter changed). */
int mbs_inst_get(mbs_instance *inst, size_t n, const unsigned *vr, double *value);
/* The current time and state x = [y, y'] (2 f doubles). */
double mbs_inst_time(const mbs_instance *inst);
const double *mbs_inst_state(const mbs_instance *inst);
/* Lagrange multipliers at the current state (m doubles; seed 000 eq. 8). */
int mbs_inst_multipliers(mbs_instance *inst, double *lambda);
/* Accelerations y'' at the current state (f doubles): the configured formulation's x' (as the
 * integrator evaluates it, mbs_inst_rhs), taken at the state without changing it (a partition
 * that would be chosen anew there is not). */
int mbs_inst_accelerations(mbs_instance *inst, double *ydd);
/* The constraint residuals at the current state: res[0] = max |c| (positions, seed 000 eq. 5),
 * res[1] = max |C y' + b'| (velocities, eq. 6; nonholonomic rows A y' + a included); 0 without
 * constraints. */
void mbs_inst_residuals(mbs_instance *inst, double *res);

/* ---- simulation */
/* x' = F(t, x) at the state x (2 f doubles) as the integrator evaluates it: the configured
 * formulation (a tree: the articulated-body algorithm where the model has it and it is on, else
 * M y'' = q - k by Cholesky), inputs given as functions and external time parameters taken at t.
 * prm (nprm doubles) and u (nu doubles), where not NULL, replace the instance's parameter and
 * input values for this one evaluation (unchecked, not stored; a given u also replaces the input
 * function).  Nothing of the instance changes but its scratch space and, with u NULL, the input
 * values an input function writes (as in a step).  On failure MBS_ERROR with the message,
 * and *pivot (if not NULL) = j + 1 when a tree's pivot of coordinate j failed (a singular
 * configuration), else 0. */
int mbs_inst_rhs(mbs_instance *inst, double t, const double *x, const double *prm, const double *u,
                 double *xdot, int *pivot);
/* Consistent start.  hold == NULL: the coordinates that are not guesses, or were set, are held
 * first, and if that fails every coordinate may move (moved given values give MBS_WARNING);
 * otherwise exactly the coordinates j with hold[j] keep their values.  At the consistent state
 * the rank of C is checked (redundant constraints are refused unless the formulation takes them)
 * and the accelerations must exist.  A refusal says what and where: the violated row, its
 * residual, the held coordinates, where Newton ended and which held coordinates and initial
 * conditions conflict; the rank and its tolerance; the coordinate whose mass pivot failed. */
int mbs_inst_start(mbs_instance *inst, const unsigned char *hold);
/* Why the last start failed: an MBS_START_* code (mbsfmu.core.constants.START_FAILURES), 0 if it
 * did not. */
int mbs_inst_start_failure(const mbs_instance *inst);
int mbs_inst_do_step(mbs_instance *inst, double t, double h);
/* Do-steps over grid[0..n-1] (grid[0] = the current time).  Row k of rec (stride doubles) gets
 * the values of the value references [0, first constant) at grid[k] (states, residual, user
 * outputs), then what `record` asks for (flags MBS_RECORD_*, mbsfmu.core.constants.RECORD), in
 * this order: the m multipliers (mbs_inst_multipliers), the f accelerations
 * (mbs_inst_accelerations), the two residuals (mbs_inst_residuals); recording changes nothing of
 * the run.  tick(ctx, t) is called after every point; nonzero stops the run (MBS_ERROR, code
 * MBS_STOPPED).  *reached = the number of rows written. */
int mbs_inst_run(mbs_instance *inst, const double *grid, size_t n, double *rec, size_t stride,
                 int record, int (*tick)(void *ctx, double t), void *ctx, size_t *reached);
/* The doubles of one row of mbs_inst_run that records `record`. */
size_t mbs_inst_record_width(int record);

/* Why the last do-step failed: an MBS_STEP_* code (mbs_stepper.h), or MBS_STOPPED (tick), 0 if it did not. */
#define MBS_STOPPED (-100)
int mbs_inst_last_code(const mbs_instance *inst);

/* Jacobians, LU decompositions and Newton iterations of the stiff method since the start. */
void mbs_inst_stiff_statistics(const mbs_instance *inst, long *njev, long *ndec, long *nnewton);

/* The stiffness warning of this run ('' if none): the explicit method's steps are limited by
 * stability (see mbsfmu.simulation.run_monitor); also sent to the logger. */
const char *mbs_inst_stiffness(const mbs_instance *inst);

/* The k-th choice of the partition since the start (formulation 'partition'): its time and the
 * dependent coordinates (f flags).  Returns the number of choices (the first 32 are kept). */
int mbs_inst_switch(const mbs_instance *inst, int k, double *t, unsigned char *dependent);

/* Statistics since the start: right-hand sides, accepted and rejected steps, projections. */
void mbs_inst_statistics(const mbs_instance *inst, long *nfev, long *naccept, long *nreject, long *nproj);

/* The counters of one method since the start (each method keeps its own, so a run that switched
 * has both): accepted and rejected steps, right-hand sides (for the stiff method including the
 * difference quotients of its Jacobians), Jacobians and LU decompositions (0 for rkstab).
 * Returns MBS_ERROR for an unknown method. */
int mbs_inst_method_statistics(const mbs_instance *inst, int method, long *naccept, long *nreject,
                               long *nfev, long *njev, long *ndec);

/* Directional derivatives of the value references unknown[0..nu-1] by the inputs: du holds the
 * seed per input (nu doubles), dv receives one value per unknown. */
int mbs_inst_output_derivatives(mbs_instance *inst, const double *du, size_t n, const unsigned *unknown,
                                double *dv);

/* ---- for the sensitivity analysis (mbs_sensitivity.h), after the start */
/* Set the state to x (2 f) at t, as if a do-step had ended there (outputs computed; the
 * integrators restart). */
int mbs_inst_set_state(mbs_instance *inst, double t, const double *x);
/* One row of mbs_inst_run at the current state (the values, then what `record` asks for). */
int mbs_inst_record(mbs_instance *inst, int record, double *row);
/* What the last consistent start held (2 f flags: coordinates, then rates; 0: it moved them). */
const unsigned char *mbs_inst_held(const mbs_instance *inst);
/* The inputs (given as functions) and the time parameters at t, as a right-hand side takes them. */
int mbs_inst_inputs_at(mbs_instance *inst, double t);
/* Leave msg as the instance's message (mbs_inst_message); returns MBS_ERROR. */
int mbs_inst_fail(mbs_instance *inst, const char *msg);
/* 1 if the right-hand side is the articulated-body algorithm (a tree built with it, not off). */
int mbs_inst_uses_aba(const mbs_instance *inst);
/* The method (MBS_METHOD_*) and its solver settings as a do-step would use them. */
int mbs_inst_start_method(const mbs_instance *inst, double *rtol, double *atol, double *hmax);

/* ---- Model Exchange: the importer's integrator moves time and state (after the start) */
/* The continuous states are x = [y, y'] (2 f), in value-reference order; their derivatives are
 * x' = [y', y''] of the configured formulation (mbs_inst_rhs).  Setting the time or the states
 * changes nothing else; the values (states, residual, outputs) follow at the next mbs_inst_get.
 * Non-finite times and states are refused. */
int mbs_inst_me_set_time(mbs_instance *inst, double t);
int mbs_inst_me_set_states(mbs_instance *inst, size_t n, const double *x);
/* x' = [y', y''] at the current time and state (n = 2 f): the velocity states themselves, and the
 * formulation's accelerations; a non-finite derivative is an error naming it. */
int mbs_inst_me_derivatives(mbs_instance *inst, size_t n, double *xdot);
/* The drift of the state from the constraints: the larger of max |c| and max |C y' + b'| (0
 * without constraints). */
double mbs_inst_me_drift(mbs_instance *inst);
/* 1 if the drift exceeds tol (or is not finite), else 0. */
int mbs_inst_me_drifted(mbs_instance *inst, double tol);
/* The projection event: if the drift exceeds tol (in the constraints' own units), the state is
 * projected onto the constraints (the least change of the positions, then of the velocities; the
 * formulation's own projection where it has one) and *changed = 1; else nothing changes and
 * *changed = 0. */
int mbs_inst_me_project(mbs_instance *inst, double tol, int *changed);

/* ---- state */
size_t mbs_inst_state_size(void);
void mbs_inst_save(const mbs_instance *inst, void *buf);
/* 0 if buf (mbs_inst_state_size() bytes) is a state this model could have written. */
int mbs_inst_state_check(const void *buf);
void mbs_inst_restore(mbs_instance *inst, const void *buf);

#ifdef __cplusplus
}
#endif

#endif /* MBS_INSTANCE_H */
