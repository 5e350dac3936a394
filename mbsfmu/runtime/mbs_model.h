/*
 * mbs_model.h -- the contract between the C engine and one generated model.
 *
 * Every model built by mbsfmu (mbsfmu.codegen.c_model) provides four files:
 *   model_config.h  sizes, name, GUID and build settings (the macros used below),
 *   model.c         the functions and tables declared here but mbs_aba,
 *   model_aba.c     mbs_aba (where MBS_HAS_ABA), and
 *   model_tree.c    the Newton-Euler parts of mbs_dynamics (where MBS_HAS_ABA);
 * the last two need no header, and compile in parallel with model.c.
 * The engine (mbs_instance.c) is compiled against this header only; nothing else in the runtime
 * includes model files.
 *
 * Equations (seed 002 eqs. 1-11, seed 000 eqs. 5-8), all with the argument list MBS_EQ_ARGS:
 *   t time, y coordinates (MBS_F), yd their rates, prm constants (MBS_NPRM), u inputs (MBS_NU),
 *   tp time-parameter values p, p', p'' (MBS_NTP), out the outputs (layout per function below).
 */
#ifndef MBS_MODEL_H
#define MBS_MODEL_H

#include "model_config.h"

#define MBS_EQ_ARGS                                                                               \
    double t, const double *y, const double *yd, const double *prm, const double *u,              \
        const double *tp, double *out

/* M (f x f, row-major), q - k (f) */
void mbs_dynamics(MBS_EQ_ARGS);
/* c (MBS_MH), C (m x f), b' (m): the m = MBS_M rows of C are the MBS_MH holonomic constraints,
 * which have a row in c, then the nonholonomic ones A y' + a = 0 (rows A of C, a of b') */
void mbs_constraints(MBS_EQ_ARGS);
/* M, q - k, c, C, b', b'' (mbsfmu.core.constants.constrained_layout) */
void mbs_constrained(MBS_EQ_ARGS);
/* mbs_constrained in two halves, for formulations that need C before they know the y' at which
 * b'' is wanted (the null-space formulations project y' first): the first writes c, C, b' at y
 * into their places in out (the layout of mbs_constrained) and MBS_NSHARED intermediates after
 * that layout; the second, given out as the first left it, writes M, q - k and b'' at (y, yd).
 * Together they cost one evaluation of the position-level terms (sin, cos) instead of two. */
void mbs_constrained_positions(MBS_EQ_ARGS);
void mbs_constrained_velocities(MBS_EQ_ARGS);
/* kinetic and potential energy */
void mbs_energy(MBS_EQ_ARGS);
/* e (MBS_NIC) and E = de/dy (MBS_NIC x f) of the extra initial conditions */
void mbs_initial_conditions(MBS_EQ_ARGS);
/* the MBS_NOUT_EXPR user outputs that are expressions, and their derivatives by u (row-major) */
void mbs_outputs(MBS_EQ_ARGS);
void mbs_outputs_du(MBS_EQ_ARGS);
/* d(q - k)/du (f x nu) */
void mbs_force_du(MBS_EQ_ARGS);
/* m, J11, J12, J13, J22, J23, J33 of each of the MBS_NBODYCHECK checked bodies */
void mbs_mass_properties(MBS_EQ_ARGS);
/* the value of each of the MBS_NFACTORCHECK flexible-body factors that depend on parameters */
void mbs_factor_values(MBS_EQ_ARGS);
#if MBS_TP_FUNCTION
/* p, p', p'' of each time parameter at t */
void mbs_time_parameters(double t, const double *prm, double *tp);
#endif
#if MBS_HAS_SENS
/* the sensitivity functions (mbsfmu.codegen.c_sensitivity; z and out as laid out in
 * mbsfmu.equations.sensitivity_equations), in builds for the sensitivity analysis; the tangents
 * along nd directions at once */
void mbs_sens_tangent(double t, const double *y, const double *yd, const double *prm, const double *u,
                      const double *tp, const double *z, int nd, double *out);
void mbs_sens_adjoint(double t, const double *y, const double *yd, const double *prm, const double *u,
                      const double *tp, const double *z, int nd, double *out);
void mbs_sens_outputs(double t, const double *y, const double *yd, const double *prm, const double *u,
                      const double *tp, const double *z, int nd, double *out);
#if MBS_HAS_ABA
/* a tree on the articulated-body algorithm: the tangents of its y'' along nd directions (dy, dy',
 * dp), and the gradients by (y, y', p) of mu . y'' for nd weightings mu */
void mbs_sens_tree_tangent(double t, const double *y, const double *yd, const double *prm, const double *u,
                           const double *tp, const double *z, int nd, double *out);
void mbs_sens_tree_adjoint(double t, const double *y, const double *yd, const double *prm, const double *u,
                           const double *tp, const double *z, int nd, double *out);
#endif
#endif
#if MBS_HAS_ABA
/* y'' of a tree by the articulated-body algorithm: 0, or j + 1 if the pivot of coordinate j failed */
int mbs_aba(MBS_EQ_ARGS);
#endif

/* Sizes (the letters of docs/architecture.md's glossary): MBS_F coordinates y, MBS_M rows of C
 * (holonomic and nonholonomic constraints), the first MBS_MH of them holonomic (rows of c).
 *
 * Value-reference layout (also mbsfmu.codegen.fmu_variables.fmu_variables):
 *   [0, f) coordinates, [f, 2f) velocities, 2f constraint_residual (models with constraints),
 *   user outputs, constants, solver_rtol, solver_atol, max_internal_step, method, inputs, and for
 *   models with constraints the MBS_NICVAR values of the named initial conditions: each
 *   condition's value e0 (MBS_NIC), then the rate e0' of each that declares one
 *   (mbs_ic_has_rate), the targets of the consistent initialization.
 * Every value is held as a double; method (the integration method, MBS_METHOD_*) is the one
 * Integer variable of the FMU.  The FMU's deprecated names follow the instance's variables:
 * 'solver', the old name of 'method', at MBS_NVARS (fmi2_glue.c handles it). */
#define MBS_NX (2 * MBS_F)
#define MBS_HAS_RES (MBS_M > 0)
#define MBS_VR_RES MBS_NX
#define MBS_VR_OUT (MBS_NX + MBS_HAS_RES)
#define MBS_VR_PRM (MBS_VR_OUT + MBS_NOUT)
#define MBS_VR_RTOL (MBS_VR_PRM + MBS_NPRM)
#define MBS_VR_ATOL (MBS_VR_RTOL + 1)
#define MBS_VR_HMAX (MBS_VR_RTOL + 2)
#define MBS_VR_METHOD (MBS_VR_RTOL + 3)
#define MBS_VR_U (MBS_VR_RTOL + 4)
#define MBS_VR_IC (MBS_VR_U + MBS_NU)
#define MBS_NROWS (MBS_M + MBS_NIC)
/* doubles of the output of mbs_constrained, and with the intermediates of its two halves */
#define MBS_NCONSTRAINED (MBS_F * MBS_F + MBS_F + MBS_MH + 2 * MBS_M + MBS_M * MBS_F)
#define MBS_NSPLIT (MBS_NCONSTRAINED + MBS_NSHARED)

#define MBS_ONE(n) ((n) > 0 ? (n) : 1) /* array sizes of possibly empty tables */

/* Variables, in value-reference order: start values, names and kinds (MBS_VAR_* of mbs_instance.h) */
extern const double mbs_start[MBS_NVARS];
extern const char *const mbs_names[MBS_NVARS];
extern const unsigned char mbs_kind[MBS_NVARS];

/* Consistent initialization: guess flags of positions and rates, whether each initial condition
 * declares a rate, their expressions, and the names of the rows of [c; e] for messages (the values
 * and rates are variables: start values in mbs_start, from MBS_VR_IC) */
extern const unsigned char mbs_guess[MBS_ONE(MBS_F)];
extern const unsigned char mbs_guess_velocity[MBS_ONE(MBS_F)];
extern const unsigned char mbs_ic_has_rate[MBS_ONE(MBS_NIC)];
extern const char *const mbs_ic_expression[MBS_ONE(MBS_NIC)]; /* e_i, as the model wrote it */
extern const char *const mbs_row_names[MBS_ONE(MBS_NROWS)];

/* Per user output: its index in mbs_outputs' output (>= 0) or -(constraint row + 1), a multiplier */
extern const int mbs_out_src[MBS_ONE(MBS_NOUT)];

/* Parameter rules (mbs_parameters.h) */
extern const double mbs_prm_min[MBS_ONE(MBS_NPRM)];
extern const double mbs_prm_max[MBS_ONE(MBS_NPRM)];
extern const char *const mbs_prm_nonzero_why[MBS_ONE(MBS_NPRM)];
extern const char *const mbs_body_check_names[MBS_ONE(MBS_NBODYCHECK)];
extern const int mbs_body_prm_start[MBS_NBODYCHECK + 1];
extern const int mbs_body_prm[];
extern const char *const mbs_factor_requirement[MBS_ONE(MBS_NFACTORCHECK)];
extern const int mbs_factor_prm_start[MBS_NFACTORCHECK + 1];
extern const int mbs_factor_prm[];
extern const double mbs_u_min[MBS_ONE(MBS_NU)];
extern const double mbs_u_max[MBS_ONE(MBS_NU)];

#endif /* MBS_MODEL_H */
