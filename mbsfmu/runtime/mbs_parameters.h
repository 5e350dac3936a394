/*
 * mbs_parameters.h -- the rules a model's parameter values must satisfy (FMU runtime).
 *
 * C counterpart of mbsfmu/equations/parameter_requirements.py, which derives the rules and is
 * the reference these checks are tested against.  Checked in this order, the first violation is
 * reported with the parameter's name and value:
 *   1. declared bounds min <= p <= max (FMI min/max attributes);
 *   2. mass properties of every body whose mass m or inertia J (about its centre of gravity)
 *      depends on parameters: m > 0, J positive semi-definite, principal moments satisfying the
 *      triangle inequality J1 + J2 >= J3 (tolerance MBS_INERTIA_RTOL of max |J_ij|);
 *   3. flexible-body stiffness and damping factors that depend on parameters are >= 0 (they
 *      multiply the modal stiffness Ke and damping De; the requirement's text is in the table);
 *   4. parameters the dynamics need non-zero (value 0 makes the reduced mass matrix singular or
 *      the constraints lose rank; found by the model's probe, the reason is part of the table).
 * The tables are generated into model_config.h (mbsfmu.fmu.native.model_config).
 */
#ifndef MBS_PARAMETERS_H
#define MBS_PARAMETERS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MBS_INERTIA_RTOL 1e-9

/* m, J11, J12, J13, J22, J23, J33 of each checked body (or the value of each checked factor), in
 * the generated-function signature */
typedef void (*mbs_mass_fn)(double t, const double *y, const double *yd, const double *prm,
                            const double *u, const double *tp, double *out);

typedef struct {
    int nprm;
    const char *const *names;       /* parameter names */
    const double *min, *max;        /* declared bounds (-INFINITY / INFINITY where none) */
    const char *const *nonzero_why; /* why parameter i must not be 0, or NULL */
    int nbody;                      /* bodies whose mass properties depend on parameters */
    const char *const *body_names;
    const int *body_prm_start;      /* nbody + 1 offsets into body_prm */
    const int *body_prm;            /* indices of the parameters each body's properties use */
    mbs_mass_fn mass_properties;    /* 7 values per checked body; only prm is read */
    int nfactor;                    /* flexible-body factors that depend on parameters */
    const char *const *factor_requirement; /* "flexible body 'P1': stiffness_factor must be ..." */
    const int *factor_prm_start;    /* nfactor + 1 offsets into factor_prm */
    const int *factor_prm;          /* indices of the parameters each factor uses */
    mbs_mass_fn factor_values;      /* 1 value per checked factor; only prm is read */
} mbs_param_rules;

/* 0 if prm satisfies every rule; else nonzero, and msg (n bytes) names the parameter(s), their
 * values and what is wrong.  mj_work holds 7 * nbody + nfactor doubles (>= 1). */
int mbs_check_parameters(const mbs_param_rules *R, const double *prm, double *mj_work, char *msg,
                         size_t n);

/* 0 if mj = (m, J11, J12, J13, J22, J23, J33) are possible rigid-body mass properties; else 1
 * (mass), 2 (inertia not finite), 3 (not positive semi-definite) or 4 (triangle inequality),
 * with the explanation in msg (n bytes). */
int mbs_mass_property_problem(const double mj[7], char *msg, size_t n);

/* The shortest "%.Ng" text of v (N = 1..17) that reads back as v, like Python's repr, into buf
 * (n bytes, 32 are enough); returns buf. */
char *mbs_format_double(double v, char *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* MBS_PARAMETERS_H */
