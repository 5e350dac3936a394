/*
 * mbs_fmu.h -- an mbsfmu FMU whatever its FMI version: the layer under fmi2_glue.c and fmi3_glue.c.
 *
 * The engine's instance layer (mbs_instance.h) simulates; this layer makes an FMU of it, the same
 * for FMI 2.0 and 3.0, Co-Simulation and Model Exchange: the life cycle and its modes, argument
 * and mode checks with messages that name the function and the culprit, logging by category,
 * memory from the environment's allocator, typed access to the variables (the deprecated name
 * 'solver' of FMI 2.0, the accelerations der(x,2) of Model Exchange), FMU states with a checked
 * header and their serialization, directional and adjoint derivatives, statistics, and the Model
 * Exchange operations (time, continuous states, derivatives, the projection event).  A glue file
 * maps its version's types and signatures onto these functions and nothing more.
 *
 * Every function takes the FMI function's name (fn) for its messages and returns MBS_OK,
 * MBS_WARNING, MBS_DISCARD or MBS_ERROR: the numbers of fmi2Status and fmi3Status alike.  An
 * error is logged (category logStatusError) before it is returned, and a refused call changes
 * nothing.
 *
 * Variables (value references): the instance's [0, nvars) (mbs_model.h); with FMI 2.0 'solver'
 * at nvars, the deprecated name of 'method'; the acceleration der(<coordinate j>,2) at
 * nvars + 1 + j, calculated (the derivatives of the velocities), and for a model with constraints
 * 'constraint_tolerance' at nvars + 1 + f, a tunable parameter: variables of FMUs that declare
 * Model Exchange only (in either interface); with FMI 3.0 the independent variable 'time' at
 * nvars + 2 + f.
 *
 * Model Exchange (docs/guide/fmus.md, "Model Exchange and the constraints"): the continuous states are the
 * coordinates and their velocities, their derivatives the velocities and the accelerations of the
 * formulation chosen at the build.  With constraints, the importer's integrator lets the state
 * drift from them; after each completed integrator step whose drift exceeds constraint_tolerance the FMU
 * asks for an event, and at that event it projects the state back (mbs_inst_me_project) and says
 * that the continuous states changed.  There are no event indicators.
 */
#ifndef MBS_FMU_H
#define MBS_FMU_H

#include <stddef.h>

#include "mbs_instance.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MBS_DISCARD = 2 }; /* besides MBS_OK, MBS_WARNING and MBS_ERROR of mbs_instance.h */

/* the interface of an instance */
enum { MBS_FMU_COSIMULATION = 0, MBS_FMU_MODEL_EXCHANGE = 1 };

/* the modes of an instance (the states of FMI's state machines, both versions) */
typedef enum {
    MBS_FMU_INSTANTIATED,
    MBS_FMU_INIT,       /* initialization mode */
    MBS_FMU_STEP,       /* Co-Simulation: step mode (FMI 2.0: step complete) */
    MBS_FMU_EVENT,      /* Model Exchange: event mode */
    MBS_FMU_CONTINUOUS, /* Model Exchange: continuous-time mode */
    MBS_FMU_TERMINATED,
    MBS_FMU_FAILED,     /* error: only the state can be restored, or the instance reset or freed */
    MBS_FMU_NMODES
} mbs_fmu_mode;

#define MBS_IN(mode) (1u << (mode))
#define MBS_AFTER_INIT                                                                            \
    (MBS_IN(MBS_FMU_STEP) | MBS_IN(MBS_FMU_EVENT) | MBS_IN(MBS_FMU_CONTINUOUS) |                  \
     MBS_IN(MBS_FMU_TERMINATED) | MBS_IN(MBS_FMU_FAILED))

struct mbs_fmu;

/* What differs between the FMI versions besides the signatures. */
typedef struct {
    const char *prefix;       /* "fmi2" or "fmi3": the functions' names in messages */
    const char *type_text[2]; /* MBS_TYPE_REAL, MBS_TYPE_INTEGER in messages: "a Real variable" */
    const char *access[2];    /* the accessors' type names: "Real", "Integer" / "Float64", "Int64" */
    int deprecated_solver;    /* 1: 'solver' (value reference nvars) names 'method' */
    int time_variable;        /* 1: 'time' (value reference nvars + 2 + f) is a variable */
    /* hand a message to the environment's logger (status MBS_*, the category's name) */
    void (*emit)(struct mbs_fmu *c, int status, const char *category, const char *message);
} mbs_fmu_version;

/* An instance: the glue's own struct begins with it (the glue's fields follow), and the engine's
 * instance follows in the same allocation. */
typedef struct mbs_fmu {
    const mbs_fmu_version *version;
    void *(*calloc_fn)(size_t, size_t); /* the environment's allocator (or calloc) */
    void (*free_fn)(void *);
    char name[256];
    int interface;            /* MBS_FMU_COSIMULATION or MBS_FMU_MODEL_EXCHANGE */
    int logging_on;
    unsigned log_mask;
    mbs_fmu_mode mode;
    int rtol_set;             /* solver_rtol was set: the importer's tolerance does not replace it */
    int solver_said;          /* the deprecated name 'solver' was set and its warning logged */
    /* statistics since instantiation or reset (not part of the FMU state) */
    long n_do_step;
    double do_step_seconds;
    long n_derivatives, n_completed, n_projections;
    double constraint_tol;    /* Model Exchange: the drift that asks for a projection */
    char var_name[320];       /* a made-up variable name for a message (der(x,2)) */
    mbs_instance *I;
} mbs_fmu;

/* ---- life cycle */
/* A zeroed instance of `size` bytes (the glue's struct, at least sizeof(mbs_fmu)) followed by the
 * engine's instance, from calloc_fn (NULL: calloc; then free_fn is free); NULL if out of memory. */
mbs_fmu *mbs_fmu_alloc(size_t size, const mbs_fmu_version *version, void *(*calloc_fn)(size_t, size_t),
                       void (*free_fn)(void *));
/* Check the instantiation's arguments (name, interface, the token/GUID) and set the instance up;
 * on MBS_ERROR (logged) the caller frees it and returns NULL. */
int mbs_fmu_instantiate(mbs_fmu *c, const char *fn, const char *name, int interface, const char *token,
                        int logging_on);
void mbs_fmu_free(mbs_fmu *c);
int mbs_fmu_set_debug_logging(mbs_fmu *c, const char *fn, int on, size_t n, const char *const *categories);
/* Start and stop time, the importer's tolerance (taken as solver_rtol unless that was set). */
int mbs_fmu_setup(mbs_fmu *c, const char *fn, int tolerance_defined, double tolerance, double t0,
                  int stop_defined, double t_stop);
int mbs_fmu_enter_init(mbs_fmu *c, const char *fn);
/* The consistent start; then step mode (Co-Simulation) or event mode (Model Exchange). */
int mbs_fmu_exit_init(mbs_fmu *c, const char *fn);
int mbs_fmu_terminate(mbs_fmu *c, const char *fn);
int mbs_fmu_reset(mbs_fmu *c, const char *fn);

/* ---- logging and checks (for the glue's own functions) */
void mbs_fmu_log(mbs_fmu *c, int status, const char *category, const char *fmt, ...);
/* Log fmt as an error and return MBS_ERROR (MBS_ERROR without a message if c is NULL). */
int mbs_fmu_fail(mbs_fmu *c, const char *fmt, ...);
/* 1 if c's mode is among `allowed` (MBS_IN bits), else 0 after logging why (also for c NULL). */
int mbs_fmu_check_mode(mbs_fmu *c, const char *fn, unsigned allowed);

/* ---- variables */
/* Values of type `type` (MBS_TYPE_*; the glue converts Integer values) by value reference. */
int mbs_fmu_get(mbs_fmu *c, const char *fn, int type, const unsigned *vr, size_t n, double *value);
int mbs_fmu_set(mbs_fmu *c, const char *fn, int type, const unsigned *vr, size_t n, const double *value);
/* An access of a type the model has no variables of: fine if empty, else an error naming the
 * first value reference (type_text: "Boolean", ...). */
int mbs_fmu_no_variables(mbs_fmu *c, const char *fn, const char *type_text, const unsigned *vr, size_t n);

/* ---- FMU states */
int mbs_fmu_get_state(mbs_fmu *c, const char *fn, void **state);
int mbs_fmu_set_state(mbs_fmu *c, const char *fn, void *state);
int mbs_fmu_free_state(mbs_fmu *c, const char *fn, void **state);
int mbs_fmu_serialized_size(mbs_fmu *c, const char *fn, void *state, size_t *size);
int mbs_fmu_serialize(mbs_fmu *c, const char *fn, void *state, unsigned char *bytes, size_t size);
int mbs_fmu_deserialize(mbs_fmu *c, const char *fn, const unsigned char *bytes, size_t size, void **state);

/* ---- derivatives of the outputs by the inputs (Co-Simulation, after the initialization) */
/* out[i] = sum_k d unknown_i / d known_k seed[k] (knowns: inputs) */
int mbs_fmu_directional(mbs_fmu *c, const char *fn, const unsigned *unknown, size_t nu, const unsigned *known,
                        size_t nk, const double *seed, double *out);
/* out[k] = sum_i seed[i] d unknown_i / d known_k */
int mbs_fmu_adjoint(mbs_fmu *c, const char *fn, const unsigned *unknown, size_t nu, const unsigned *known,
                    size_t nk, const double *seed, double *out);

/* ---- Co-Simulation */
/* Output derivatives (maxOutputDerivativeOrder=0): an empty call is fine, any other refused. */
int mbs_fmu_no_output_derivatives(mbs_fmu *c, const char *fn, size_t n);
int mbs_fmu_do_step(mbs_fmu *c, const char *fn, double t, double h);
double mbs_fmu_time(const mbs_fmu *c);

/* ---- Model Exchange */
size_t mbs_fmu_continuous_states(void); /* 2 f */
int mbs_fmu_enter_event_mode(mbs_fmu *c, const char *fn);
int mbs_fmu_enter_continuous_mode(mbs_fmu *c, const char *fn);
/* The event's update: the projection (*states_changed = 1 if it moved the state). */
int mbs_fmu_update_discrete_states(mbs_fmu *c, const char *fn, int *states_changed);
/* *enter_event = 1 if the drift from the constraints exceeds constraint_tolerance. */
int mbs_fmu_completed_step(mbs_fmu *c, const char *fn, int *enter_event);
int mbs_fmu_set_time(mbs_fmu *c, const char *fn, double t);
int mbs_fmu_set_states(mbs_fmu *c, const char *fn, const double *x, size_t n);
int mbs_fmu_get_states(mbs_fmu *c, const char *fn, double *x, size_t n);
int mbs_fmu_get_derivatives(mbs_fmu *c, const char *fn, double *xdot, size_t n);
int mbs_fmu_get_nominals(mbs_fmu *c, const char *fn, double *nominal, size_t n);
int mbs_fmu_get_event_indicators(mbs_fmu *c, const char *fn, double *z, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* MBS_FMU_H */
