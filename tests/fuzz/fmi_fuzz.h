/*
 * fmi_fuzz.h -- the version-free driver of random FMI call sequences (fmi_fuzz.c) and the
 * interface of its two version adapters (fmi2_fuzz.c for FMI 2.0, fmi3_fuzz.c for FMI 3.0).
 *
 * The driver draws calls, keeps a shadow model of each instance's state machine (Co-Simulation
 * and Model Exchange) and checks every outcome; an adapter maps the driver's calls onto its
 * version's functions (one line each) and adds the calls only its version has.  Statuses are
 * ints with the numbers fmi2Status and fmi3Status share (OK 0, Warning 1, Discard 2, Error 3,
 * Fatal 4); instances and FMU states are void pointers.
 */
#ifndef FMI_FUZZ_H
#define FMI_FUZZ_H

#include <stddef.h>

#define FZ_OK 0
#define FZ_WARNING 1
#define FZ_DISCARD 2
#define FZ_ERROR 3
#define FZ_FATAL 4

#define MAX_VARS 512
#define MAX_X 128 /* continuous states */

/* kinds of variables (the description file's words): state (coordinate or velocity), calc,
 * fixed, tunable, solver (solver_rtol, solver_atol, max_internal_step), method (the Integer /
 * Enumeration 'method', and FMI 2.0's deprecated name 'solver'), input, accel (der(x,2) of an
 * FMU with Model Exchange), ctol (constraint_tolerance of an FMU with Model Exchange) */
enum { K_STATE, K_CALC, K_FIXED, K_TUNABLE, K_SOLVER, K_METHOD, K_INPUT, K_ACCEL, K_CTOL, K_NONE };

/* the shadow modes */
enum { S_INST, S_INIT, S_STEP, S_EVENT, S_CONT, S_TERM, S_ERR };

typedef struct {
    void *c;
    int me;  /* 1: instantiated for Model Exchange */
    int st;  /* S_* */
    double t;
} inst;

/* the driver's calls, for the functions' names in messages (fz_name) */
enum {
    FN_INSTANTIATE_CS, FN_INSTANTIATE_ME, FN_SETUP, FN_ENTER_INIT, FN_EXIT_INIT, FN_TERMINATE, FN_RESET,
    FN_GET_REAL, FN_SET_REAL, FN_GET_INT, FN_SET_INT, FN_DEBUG_LOGGING,
    FN_GET_STATE, FN_SET_STATE, FN_FREE_STATE, FN_STATE_SIZE, FN_SERIALIZE, FN_DESERIALIZE,
    FN_DO_STEP, FN_DIRECTIONAL, FN_ADJOINT,
    FN_ENTER_EVENT, FN_UPDATE, FN_ENTER_CONT, FN_COMPLETED, FN_SET_TIME, FN_SET_STATES, FN_GET_STATES,
    FN_DERIVATIVES, FN_EVENT_INDICATORS, FN_NOMINALS,
    FN_COUNT
};

/* ---------------------------------------------------------------- the driver (fmi_fuzz.c) */

/* the description (read_description) */
extern char guid[128];
extern int nvr;                 /* value references 0 .. nvr-1 are looked at (gaps are unknown) */
extern int kind[MAX_VARS];      /* K_*, K_NONE for a gap */
extern char names[MAX_VARS][128];
extern int n_coord, n_constraints; /* f and m */

/* random numbers */
int irand(int n);
double urand(void);
int chance(double p);
double nrand(void);

/* the counters */
extern long calls, bad, accepted, unnamed, changed, lost, silent, refused_good, wrong;

/* an environment's logger hands every message here */
void fz_log(int status, const char *message);
extern char last_msg[];

/* checks: before_call() before the call, then one of these with its status */
void before_call(void);
void expect_refused(int st, const char *fn, const char *token, int has_logger);
int outcome(int st, const char *fn, int must_pass);
/* a successful call whose result breaks a documented rule */
void wrong_result(const char *fn, const char *what);
void take_snapshot(inst *I);
void check_unchanged(inst *I, const char *fn);
/* before_call + calls++, for the adapters */
void fz_begin(void);

int valid_vr(unsigned r);
unsigned any_vr(void);
inst *pick_inst(void);

/* ---------------------------------------------------------------- an adapter (fmi2_fuzz.c, fmi3_fuzz.c) */

extern const int fz_version;                  /* 2 or 3 */
extern const char *const fz_name[FN_COUNT];   /* the FMI function behind each call */

/* a working instance (NULL if refused): name and token as given */
void *fz_instantiate(int me, const char *name, const char *token, int logging);
void fz_free_instance(void *c);
/* FMI 2.0 only: fmi2SetupExperiment (FMI 3.0 takes its arguments in fz_enter_init) */
int fz_setup(void *c, int tol_def, double tol, double start, int stop_def, double stop);
int fz_enter_init(void *c, int tol_def, double tol, double start, int stop_def, double stop);
int fz_exit_init(void *c);
int fz_terminate(void *c);
int fz_reset(void *c);
int fz_debug_logging(void *c, int on, size_t n, const char *const *categories);
/* nvalues: FMI 3.0's nValues (FMI 2.0 has none) */
int fz_get_real(void *c, const unsigned *vr, size_t n, double *v, size_t nvalues);
int fz_set_real(void *c, const unsigned *vr, size_t n, const double *v, size_t nvalues);
int fz_get_int(void *c, const unsigned *vr, size_t n, long long *v, size_t nvalues);
int fz_set_int(void *c, const unsigned *vr, size_t n, const long long *v, size_t nvalues);
int fz_get_state(void *c, void **s);
int fz_set_state(void *c, void *s);
int fz_free_state(void *c, void **s);
int fz_state_size(void *c, void *s, size_t *n);
int fz_serialize(void *c, void *s, unsigned char *bytes, size_t n);
int fz_deserialize(void *c, const unsigned char *bytes, size_t n, void **s);
/* null_out: FMI 3.0's out-arguments NULL; *last: FMI 3.0's lastSuccessfulTime (FMI 2.0:
 * fmi2GetRealStatus(fmi2LastSuccessfulTime) after the step) */
int fz_do_step(void *c, double t, double h, int null_out, double *last);
/* nseed, nsens: FMI 3.0's nSeed and nSensitivity */
int fz_directional(void *c, const unsigned *unk, size_t nu, const unsigned *kn, size_t nk, const double *seed,
                   size_t nseed, double *sens, size_t nsens);
int fz_adjoint(void *c, const unsigned *unk, size_t nu, const unsigned *kn, size_t nk, const double *seed,
               size_t nseed, double *sens, size_t nsens); /* FMI 3.0 only */
/* Model Exchange; null_out: the out-arguments NULL */
int fz_enter_event(void *c);
int fz_update(void *c, int null_out, int *states_changed);
int fz_enter_cont(void *c);
int fz_completed(void *c, int null_out, int *enter_event);
int fz_set_time(void *c, double t);
int fz_set_states(void *c, const double *x, size_t n);
int fz_get_states(void *c, double *x, size_t n);
int fz_derivatives(void *c, double *xdot, size_t n);
int fz_event_indicators(void *c, double *z, size_t n);
int fz_nominals(void *c, double *x, size_t n);

/* one of the calls only this version has (on I, or without an instance) */
void fz_version_call(inst *I);

#endif /* FMI_FUZZ_H */
