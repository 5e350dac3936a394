/*
 * fmi2_glue.c -- generic FMI 2.0 Co-Simulation glue of the native (Python-free) mbsfmu FMUs.
 *
 * One file for all models.  The model-specific parts come from two generated files written next
 * to it by mbsfmu.fmu.native:
 *   model.c         -- mbs_dynamics(), mbs_constraints(), mbs_constrained(), mbs_initial_conditions(),
 *                      mbs_time_parameters() and the size macros MBS_NY, MBS_NPRM, MBS_NU, MBS_NTP,
 *                      MBS_NC, MBS_NIC (mbsfmu.codegen.c_source.generate_c)
 *   model_config.h  -- MBS_GUID, MBS_FORMULATION, the variables (names, start values, kinds) in
 *                      value-reference order (mbsfmu.fmu.model_description.fmu_variables), the
 *                      guess flags of the coordinates, the initial conditions' values and rates and
 *                      the names of the constraint rows
 *
 * Value-reference layout (f = MBS_NY, R = 1 if the model has constraints, else 0):
 *   [0, f)                 coordinates y
 *   [f, 2f)                velocities der(y)
 *   2f                     constraint_residual (only if R = 1)
 *   [VR_OUT, VR_OUT+NOUT)  user outputs (expressions, frame kinematics, multipliers)
 *   [VR_PRM, VR_PRM+NPRM)  model constants (prm)
 *   VR_RTOL, VR_ATOL, VR_HMAX   solver_rtol, solver_atol, max_internal_step
 *   [VR_U, VR_U+NU)        inputs (u)
 *
 * fmi2ExitInitializationMode makes the start values consistent with the constraints (Newton with
 * minimum-norm steps: coordinates that are not guesses, or were set by fmi2SetReal, are held
 * first; if that fails every coordinate may move; moved given values are reported as a warning).
 * fmi2DoStep returns x = (y, y') at t + h from RKSTAB (mbs_rkstab.c) in dense mode: the integrator
 * takes the steps its error control allows, also past communication points, and the state at t + h
 * is its continuous extension (projected onto the constraints, like every step end).  When an input
 * or parameter changes, it restarts at the communication point, and while they keep changing it
 * does not step past the next one (the input is held over [t, t + h]).  The formulation is
 * MBS_FORMULATION (mbs_formulation.c: the minimal ODE for trees; 'qr' with its
 * projection inside every step, or Baumgarte, for loops).  Inputs are held over the step.
 *
 * The FMU state (fmi2GetFMUstate & co.) is the plain-data struct sim_data: variable values, time,
 * integrator state including its step-size history and FSAL stage, so a restored run continues
 * bit-identically.  Serialized states carry a magic number, the GUID and the size, and are checked.
 *
 * User outputs are computed at every communication point and again when an input or parameter
 * changed before they are read (direct feed-through).  fmi2GetDirectionalDerivative gives their
 * derivatives by the inputs from the generated symbolic Jacobians (d out/du; for multipliers the
 * KKT system of seed 000 eq. 8 with d(q - k)/du); coordinates, rates and constraint_residual do
 * not depend directly on inputs (derivative 0).  Only after initialization, knowns = inputs.
 *
 * Statistics: the wall time spent inside fmi2DoStep is measured with CLOCK_MONOTONIC and, with
 * the integrator's counters, logged under logEvents at fmi2Terminate (and fmi2Reset) so that a
 * tool can read the FMU's own cost per communication step.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmi2Functions.h"
#include "mbs_formulation.h"
#include "mbs_linalg.h"
#include "mbs_parameters.h"
#include "mbs_rkstab.h"

#include "model.c"
#include "model_config.h"

#if MBS_NTP != 0 && !MBS_TP_FUNCTION
#error "the model's time parameters are Python callables: they cannot run in a native FMU"
#endif

#define F MBS_NY
#define NX (2 * MBS_NY)
#define HAS_RES (MBS_NC > 0)
#define VR_RES NX
#define VR_OUT (NX + HAS_RES)
#define VR_PRM (VR_OUT + MBS_NOUT)
#define VR_RTOL (VR_PRM + MBS_NPRM)
#define VR_ATOL (VR_RTOL + 1)
#define VR_HMAX (VR_RTOL + 2)
#define VR_U (VR_RTOL + 3)
#define NVARS (VR_U + MBS_NU)
#define NROWS (MBS_NC + MBS_NIC)

#if NVARS != MBS_NVARS
#error "model_config.h does not match model.c"
#endif

/* variable kinds (mbs_kind in model_config.h) */
#define K_STATE 0   /* coordinate or velocity: output, start value settable before initialization */
#define K_CALC 1    /* calculated output (constraint_residual) */
#define K_FIXED 2   /* fixed parameter */
#define K_TUNABLE 3 /* tunable parameter */
#define K_INPUT 4   /* input */

#define MAX_STEPS_PER_CALL 10000000L
#define INIT_TOL 1e-12
#define INIT_MAX_ITER 50
#define INIT_WARN_TOL 1e-8

/* stand-ins so that every generated function pointer exists for every model */
#if MBS_NIC == 0
#define MBS_IC_FN NULL
#else
#define MBS_IC_FN mbs_initial_conditions
#endif
#if MBS_NTP == 0
#define MBS_TP_FN NULL
#else
#define MBS_TP_FN mbs_time_parameters
#endif

typedef enum { ST_INSTANTIATED, ST_INIT, ST_STEP, ST_TERMINATED, ST_ERROR } inst_state;

/* Everything an FMU state holds: plain data, no pointers except rk.work (re-pointed on restore). */
typedef struct {
    inst_state state;
    double v[NVARS];           /* values in value-reference order */
    double t;                  /* time of the last communication point */
    double x[NX];              /* integrator state (y, y') */
    int fsal_dirty;            /* inputs or parameters changed: restart the integrator at t */
    int inputs_changing;       /* they changed at the last communication point */
    double t_stop;             /* stop time from fmi2SetupExperiment (INFINITY if not defined) */
    unsigned char given[NX];   /* start values set through fmi2SetReal */
    mbs_rkstab rk;
    double work[MBS_RKSTAB_WORK_SIZE(NX)];
} sim_data;

#define LOG_EVENTS 1u
#define LOG_WARNING 2u
#define LOG_ERROR 4u
#define LOG_ALL 15u

typedef struct {
    fmi2CallbackFunctions cb;
    char name[256];
    int logging_on;
    unsigned log_mask;
    int used_cb_alloc;
    sim_data d;
    mbs_form form;
    double form_work[MBS_FORM_WORK_SIZE(F, MBS_NC, MBS_NIC)];
    int form_iwork[MBS_FORM_IWORK_SIZE(F, MBS_NC, MBS_NIC)];
    double tp[MBS_NTP > 0 ? MBS_NTP : 1];
    mbs_param_rules rules;
    double mj_work[MBS_NBODYCHECK > 0 ? 7 * MBS_NBODYCHECK : 1];
    char msg[1024];      /* scratch for messages built in parts */
#if MBS_NOUT > 0
    int outputs_dirty;   /* an input or parameter changed since the user outputs were computed */
    double out_expr[MBS_NOUT_EXPR > 0 ? MBS_NOUT_EXPR : 1];
#endif
#if MBS_NREACT > 0
    double cbuf[F * F + F + MBS_NC + MBS_NC * F + 2 * MBS_NC];
    double qr[MBS_NC * F], qr_tau[MBS_NC], lam[MBS_NC], kkt_work[MBS_KKT_WORK_SIZE(F, MBS_NC)];
    int qr_perm[F];
#endif
    long n_do_step;      /* statistics since instantiation or reset (not part of the FMU state) */
    double do_step_seconds;
} instance;

#define STATE_MAGIC 0x4d425346u /* "MBSF" */

/* An FMU state: a header every mbsfmu FMU shares (so that a state of another mbsfmu model is
 * recognised from its first fields, never read past them), then this model's sim_data.  The
 * checksum covers the bytes of d; a state is accepted only if magic, size, model (a hash of the
 * GUID) and checksum match. */
typedef struct {
    uint32_t magic;
    uint32_t size;       /* sizeof(fmu_state) */
    uint64_t model;      /* hash64(MBS_GUID) */
    uint64_t checksum;   /* hash64 of the bytes of d */
    int used_cb_alloc;
    sim_data d;
} fmu_state;

/* FNV-1a, 64 bit */
static uint64_t hash64(const void *data, size_t n)
{
    const unsigned char *b = (const unsigned char *)data;
    uint64_t h = 1469598103934665603ull;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

static uint64_t model_hash(void) { return hash64(MBS_GUID, strlen(MBS_GUID)); }

/* ---------------------------------------------------------------- logging */

static unsigned category_bit(const char *category)
{
    if (strcmp(category, "logEvents") == 0)
        return LOG_EVENTS;
    if (strcmp(category, "logStatusWarning") == 0)
        return LOG_WARNING;
    if (strcmp(category, "logStatusError") == 0)
        return LOG_ERROR;
    if (strcmp(category, "logAll") == 0)
        return LOG_ALL;
    return 0;
}

/* Errors and warnings always reach the logger; other messages only when debug logging is on for
 * their category. */
static void log_msg(instance *c, fmi2Status status, const char *category, const char *fmt, ...)
{
    char buf[1024], esc[2048];
    va_list ap;
    size_t i, j = 0;
    if (c == NULL || c->cb.logger == NULL)
        return;
    if (status == fmi2OK && !(c->logging_on && (c->log_mask & category_bit(category))))
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* the logger treats the message as a format string: escape '%' */
    for (i = 0; buf[i] != '\0' && j + 2 < sizeof esc; i++) {
        esc[j++] = buf[i];
        if (buf[i] == '%')
            esc[j++] = '%';
    }
    esc[j] = '\0';
    c->cb.logger(c->cb.componentEnvironment, c->name, status, category, esc);
}

#define ERR(c, ...) (log_msg((c), fmi2Error, "logStatusError", __VA_ARGS__), fmi2Error)

/* The model has only Real variables: any Integer/Boolean/String access names the first
 * value reference and fails (an empty access is fine). */
static fmi2Status no_variables(fmi2Component comp, const char *fn, const char *type,
                               const fmi2ValueReference vr[], size_t nvr)
{
    if (comp == NULL)
        return fmi2Error;
    if (nvr == 0)
        return fmi2OK;
    return ERR((instance *)comp, "%s: unknown value reference %u (no %s variables)", fn,
               vr ? (unsigned)vr[0] : 0u, type);
}

static int check_state(instance *c, const char *fn, unsigned allowed)
{
    if (c == NULL)
        return 0;
    if (!(allowed & (1u << c->d.state))) {
        static const char *names[] = {"instantiated", "initialization mode", "step complete",
                                      "terminated", "error"};
        log_msg(c, fmi2Error, "logStatusError", "%s: not allowed in state '%s'", fn,
                names[c->d.state]);
        return 0;
    }
    return 1;
}

#define S_INST (1u << ST_INSTANTIATED)
#define S_INIT (1u << ST_INIT)
#define S_STEP (1u << ST_STEP)
#define S_TERM (1u << ST_TERMINATED)
#define S_ERR (1u << ST_ERROR)
#define S_ANY (S_INST | S_INIT | S_STEP | S_TERM | S_ERR)

/* ---------------------------------------------------------------- model */

static void setup_form(instance *c)
{
    mbs_form *fm = &c->form;
    memset(fm, 0, sizeof *fm);
    fm->f = F;
    fm->m = MBS_NC;
    fm->nic = MBS_NIC;
    fm->ntp = MBS_NTP;
    fm->kind = MBS_NC > 0 ? MBS_FORMULATION : MBS_FORM_ODE;
    fm->dynamics = mbs_dynamics;
    fm->constraints = mbs_constraints;
    fm->constrained = mbs_constrained;
    fm->initial_conditions = MBS_IC_FN;
    fm->time_parameters = MBS_TP_FN;
    fm->prm = c->d.v + VR_PRM;
    fm->u = c->d.v + VR_U;
    fm->tp = c->tp;
    fm->alpha = MBS_BAUMGARTE_ALPHA;
    fm->beta = MBS_BAUMGARTE_BETA;
    fm->rank_tol = 1e-9;
    fm->newton_tol = 1e-13;
    fm->newton_max = 20;
    fm->work = c->form_work;
    fm->iwork = c->form_iwork;
}

#if MBS_NBODYCHECK > 0
#define MBS_MASS_FN mbs_mass_properties
#else
#define MBS_MASS_FN NULL
#endif

static void setup_rules(instance *c)
{
    mbs_param_rules *r = &c->rules;
    r->nprm = MBS_NPRM;
    r->names = mbs_names + VR_PRM;
    r->min = mbs_prm_min;
    r->max = mbs_prm_max;
    r->nonzero_why = mbs_prm_nonzero_why;
    r->nbody = MBS_NBODYCHECK;
    r->body_names = mbs_body_check_names;
    r->body_prm_start = mbs_body_prm_start;
    r->body_prm = mbs_body_prm;
    r->mass_properties = MBS_MASS_FN;
}

/* The range of a solver setting (mbsfmu/solver_settings.py): 0 if value is allowed, else 1 with
 * the explanation in c->msg. */
static int solver_setting_problem(instance *c, fmi2ValueReference vr, double value)
{
    double lo = vr == VR_RTOL ? MBS_RTOL_MIN : vr == VR_ATOL ? MBS_ATOL_MIN : MBS_HMAX_MIN;
    double hi = vr == VR_RTOL ? MBS_RTOL_MAX : vr == VR_ATOL ? MBS_ATOL_MAX : MBS_HMAX_MAX;
    int zero_ok = vr == VR_HMAX;
    char g[32], l[32], h[32];
    if ((zero_ok && value == 0.0) || (value >= lo && value <= hi))
        return 0;
    mbs_format_double(lo, l, sizeof l);
    if (isinf(hi))
        snprintf(h, sizeof h, "inf)");
    else
        snprintf(h, sizeof h, "%s]", mbs_format_double(hi, g, sizeof g));
    snprintf(c->msg, sizeof c->msg, "%s = %s is outside its range %s[%s, %s", mbs_names[vr],
             mbs_format_double(value, g, sizeof g), zero_ok ? "0 (no limit) or " : "", l, h);
    return 1;
}

/* Declared bounds of a parameter or input (0 if inside, else 1 with c->msg set). */
static int bounds_problem(instance *c, fmi2ValueReference vr, double value)
{
    double lo = -INFINITY, hi = INFINITY;
    char g[32], b[32];
#if MBS_NPRM > 0
    if (vr >= VR_PRM && vr < VR_PRM + MBS_NPRM)
        lo = mbs_prm_min[vr - VR_PRM], hi = mbs_prm_max[vr - VR_PRM];
#endif
#if MBS_NU > 0
    if (vr >= VR_U && vr < VR_U + MBS_NU)
        lo = mbs_u_min[vr - VR_U], hi = mbs_u_max[vr - VR_U];
#endif
    if (value >= lo && value <= hi)
        return 0;
    snprintf(c->msg, sizeof c->msg, "%s '%s' = %s is %s its %s %s",
             vr >= VR_U ? "input" : "parameter", mbs_names[vr], mbs_format_double(value, g, sizeof g),
             value < lo ? "below" : "above", value < lo ? "minimum" : "maximum",
             mbs_format_double(value < lo ? lo : hi, b, sizeof b));
    return 1;
}

#if MBS_NREACT > 0
/* Lagrange multipliers at the state x: C^T lambda = M y'' - (q - k) with y'' of the formulation
 * (seed 000 eq. 3), minimum-norm by the pivoted QR of C (unique unless constraints are redundant). */
static int multipliers(instance *c, double t, const double *x)
{
    double xdot[NX], r[F];
    const double *M = c->cbuf, *h = c->cbuf + F * F, *C = h + F + MBS_NC;
    int rank, rc = mbs_form_rhs(&c->form, t, x, xdot);
    if (rc != 0)
        return rc;
    mbs_constrained(t, x, x + F, c->d.v + VR_PRM, c->d.v + VR_U, c->tp, c->cbuf);
    memcpy(r, h, sizeof r);
    mbs_gemv(0, F, F, 1.0, M, xdot + F, -1.0, r);
    memcpy(c->qr, C, sizeof c->qr);
    rc = mbs_qr_factor(MBS_NC, F, c->qr, c->qr_tau, c->qr_perm, &rank, 1e-9);
    if (rc == 0)
        rc = mbs_qr_solve_minnorm(MBS_NC, F, c->qr, c->qr_tau, c->qr_perm, rank, r, c->lam);
    if (rc != 0)
        snprintf(c->form.message, sizeof c->form.message, "the multipliers cannot be computed");
    return rc;
}
#endif

#if MBS_NOUT > 0
static int compute_outputs(instance *c)
{
    const double *x = c->d.x;
    int i;
#if MBS_NTP > 0
    mbs_time_parameters(c->d.t, c->d.v + VR_PRM, c->tp);
#endif
    mbs_outputs(c->d.t, x, x + F, c->d.v + VR_PRM, c->d.v + VR_U, c->tp, c->out_expr);
#if MBS_NREACT > 0
    if (multipliers(c, c->d.t, x) != 0)
        return 1;
#endif
    for (i = 0; i < MBS_NOUT; i++) {
        int src = mbs_out_src[i];
#if MBS_NREACT > 0
        c->d.v[VR_OUT + i] = src >= 0 ? c->out_expr[src] : c->lam[-src - 1];
#else
        c->d.v[VR_OUT + i] = c->out_expr[src];
#endif
    }
    c->outputs_dirty = 0;
    return 0;
}
#endif

static int publish(instance *c)
{
    memcpy(c->d.v, c->d.x, sizeof c->d.x);
#if HAS_RES
    c->d.v[VR_RES] = mbs_form_residual(&c->form, c->d.t, c->d.x);
#endif
#if MBS_NOUT > 0
    return compute_outputs(c);
#else
    return 0;
#endif
}

static void reset_values(instance *c)
{
    memcpy(c->d.v, mbs_start, sizeof c->d.v);
    memset(c->d.given, 0, sizeof c->d.given);
    c->d.t = 0.0;
    c->d.t_stop = INFINITY;
    c->d.fsal_dirty = 1;
}

/* Every value the model's rules cover (solver settings, parameters, inputs) at the values v;
 * 0 if they are fine, else 1 with the explanation in c->msg. */
static int values_problem(instance *c, const double *v)
{
    fmi2ValueReference vr;
    for (vr = VR_RTOL; vr < VR_U; vr++)
        if (solver_setting_problem(c, vr, v[vr]))
            return 1;
    for (vr = VR_U; vr < NVARS; vr++)
        if (bounds_problem(c, vr, v[vr]))
            return 1;
    return mbs_check_parameters(&c->rules, v + VR_PRM, c->mj_work, c->msg, sizeof c->msg) != 0;
}

#if MBS_NC > 0
/* Consistent initial state from the start values in c->d.v (see the file comment). */
static fmi2Status consistent_init(instance *c)
{
    unsigned char fixed[F];
    double x[NX];
    int j, nheld = 0, rc = 1, bad = -1;
    char moved[768];
    size_t len = 0;
    for (j = 0; j < F; j++) {
        fixed[j] = (unsigned char)(!mbs_guess[j] || c->d.given[j]);
        nheld += fixed[j];
    }
    if (nheld > 0 && nheld < F) {
        memcpy(x, c->d.v, sizeof x);
        rc = mbs_form_consistent(&c->form, c->d.t, x, fixed, mbs_ic_value, mbs_ic_rate,
                                 mbs_ic_has_rate, INIT_TOL, INIT_MAX_ITER, &bad);
        if (rc != 0)
            log_msg(c, fmi2OK, "logEvents", "holding the given coordinates failed (%s); "
                    "letting every coordinate move", c->form.message);
    }
    if (rc != 0) {
        memset(fixed, 0, sizeof fixed);
        memcpy(x, c->d.v, sizeof x);
        rc = mbs_form_consistent(&c->form, c->d.t, x, fixed, mbs_ic_value, mbs_ic_rate,
                                 mbs_ic_has_rate, INIT_TOL, INIT_MAX_ITER, &bad);
    }
    if (rc != 0) {
        if (bad >= 0)
            return ERR(c, "fmi2ExitInitializationMode: no consistent initial state: '%s' %s",
                       mbs_row_names[bad], c->form.message);
        return ERR(c, "fmi2ExitInitializationMode: %s", c->form.message);
    }
    moved[0] = '\0';
    for (j = 0; j < NX; j++) {
        int guess = j < F ? mbs_guess[j] : mbs_guess_velocity[j - F];
        if ((!guess || c->d.given[j]) && fabs(x[j] - c->d.v[j]) > INIT_WARN_TOL && len < sizeof moved) {
            int w = snprintf(moved + len, sizeof moved - len, "%s%s: %.9g -> %.9g", len ? "; " : "",
                             mbs_names[j], c->d.v[j], x[j]);
            if (w > 0)
                len += (size_t)w;
        }
    }
    memcpy(c->d.x, x, sizeof x);
    if (moved[0] != '\0') {
        log_msg(c, fmi2Warning, "logStatusWarning",
                "initial values changed to satisfy the constraints: %s", moved);
        return fmi2Warning;
    }
    return fmi2OK;
}
#endif

/* ---------------------------------------------------------------- common functions */

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }

const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component comp, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
    instance *c = (instance *)comp;
    unsigned mask = 0;
    size_t i;
    if (c == NULL)
        return fmi2Error;
    if (nCategories > 0 && categories == NULL)
        return ERR(c, "fmi2SetDebugLogging: NULL category list");
    for (i = 0; i < nCategories; i++) {
        unsigned bit = categories[i] ? category_bit(categories[i]) : 0u;
        if (bit == 0)
            return ERR(c, "fmi2SetDebugLogging: unknown log category '%s' (known: logEvents, "
                          "logStatusWarning, logStatusError, logAll)",
                       categories[i] ? categories[i] : "(null)");
        mask |= bit;
    }
    c->logging_on = loggingOn ? 1 : 0;
    c->log_mask = nCategories == 0 ? LOG_ALL : mask;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn)
{
    instance *c;
    int use_cb;
    (void)fmuResourceLocation;
    (void)visible;
    if (functions == NULL)
        return NULL;
    use_cb = functions->allocateMemory != NULL && functions->freeMemory != NULL;
    c = use_cb ? (instance *)functions->allocateMemory(1, sizeof(instance))
               : (instance *)calloc(1, sizeof(instance));
    if (c == NULL)
        return NULL;
    memset(c, 0, sizeof *c);
    c->cb = *functions;
    c->used_cb_alloc = use_cb;
    c->logging_on = loggingOn ? 1 : 0;
    c->log_mask = LOG_ALL;
    snprintf(c->name, sizeof c->name, "%s", instanceName ? instanceName : "(unnamed)");
    if (instanceName == NULL || fmuType != fmi2CoSimulation || fmuGUID == NULL ||
        strcmp(fmuGUID, MBS_GUID) != 0) {
        if (instanceName == NULL)
            log_msg(c, fmi2Error, "logStatusError", "fmi2Instantiate: missing instance name");
        else if (fmuType != fmi2CoSimulation)
            log_msg(c, fmi2Error, "logStatusError",
                    "fmi2Instantiate: only Co-Simulation is supported");
        else
            log_msg(c, fmi2Error, "logStatusError", "fmi2Instantiate: wrong GUID '%s' (expected '%s')",
                    fmuGUID ? fmuGUID : "(null)", MBS_GUID);
        if (use_cb)
            functions->freeMemory(c);
        else
            free(c);
        return NULL;
    }
    reset_values(c);
    setup_form(c);
    setup_rules(c);
    c->d.state = ST_INSTANTIATED;
    log_msg(c, fmi2OK, "logEvents", "fmi2Instantiate: model %s", MBS_MODEL_NAME);
    return c;
}

void fmi2FreeInstance(fmi2Component comp)
{
    instance *c = (instance *)comp;
    if (c == NULL)
        return;
    if (c->used_cb_alloc)
        c->cb.freeMemory(c);
    else
        free(c);
}

fmi2Status fmi2SetupExperiment(fmi2Component comp, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    instance *c = (instance *)comp;
    (void)toleranceDefined; /* the tolerance is the parameter solver_rtol */
    (void)tolerance;
    /* check everything first: a rejected call changes nothing */
    if (!check_state(c, "fmi2SetupExperiment", S_INST))
        return fmi2Error;
    if (!isfinite(startTime))
        return ERR(c, "fmi2SetupExperiment: start time %g is not finite", startTime);
    if (stopTimeDefined && !(isfinite(stopTime) && stopTime >= startTime))
        return ERR(c, "fmi2SetupExperiment: stop time %g is not a finite time after the start time %g",
                   stopTime, startTime);
    c->d.t_stop = stopTimeDefined ? stopTime : INFINITY;
    c->d.t = startTime;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component comp)
{
    instance *c = (instance *)comp;
    if (!check_state(c, "fmi2EnterInitializationMode", S_INST))
        return fmi2Error;
    c->d.state = ST_INIT;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component comp)
{
    instance *c = (instance *)comp;
    fmi2Status status = fmi2OK;
    double xdot[NX];
    int rc;
    if (!check_state(c, "fmi2ExitInitializationMode", S_INIT))
        return fmi2Error;
    if (values_problem(c, c->d.v)) {
        c->d.state = ST_ERROR;
        return ERR(c, "fmi2ExitInitializationMode: %s", c->msg);
    }
    memcpy(c->d.x, c->d.v, sizeof c->d.x);
#if MBS_NC > 0
    status = consistent_init(c);
    if (status == fmi2Error) {
        c->d.state = ST_ERROR;
        return fmi2Error;
    }
#endif
    rc = mbs_rkstab_init(&c->d.rk, NX, c->d.work, c->d.v[VR_RTOL], c->d.v[VR_ATOL], c->d.v[VR_HMAX]);
    if (rc != MBS_RKSTAB_OK) {
        c->d.state = ST_ERROR;
        return ERR(c, "fmi2ExitInitializationMode: integrator setup failed: %s",
                   mbs_rkstab_message(rc));
    }
    rc = mbs_form_rhs(&c->form, c->d.t, c->d.x, xdot);
    for (int i = 0; rc == 0 && i < NX; i++)
        if (!isfinite(xdot[i])) {
            snprintf(c->form.message, sizeof c->form.message,
                     "the accelerations are not finite at t=%.9g", c->d.t);
            rc = 1;
        }
    if (rc != 0) {
        c->d.state = ST_ERROR;
        return ERR(c, "fmi2ExitInitializationMode: at the initial state: %s", c->form.message);
    }
    if (publish(c) != 0) {
        c->d.state = ST_ERROR;
        return ERR(c, "fmi2ExitInitializationMode: outputs at the initial state: %s", c->form.message);
    }
    c->d.fsal_dirty = 1;
    c->d.state = ST_STEP;
    log_msg(c, fmi2OK, "logEvents", "fmi2ExitInitializationMode: t=%g", c->d.t);
    return status;
}

/* "; inputs held over the step: F = 1e+300, ..." into c->msg ('' without inputs), so that a
 * failed step names the values that drove it. */
static void inputs_text(instance *c)
{
    size_t len = 0;
    int i;
    c->msg[0] = '\0';
    for (i = 0; i < MBS_NU && len + 1 < sizeof c->msg; i++) {
        char g[32];
        int w = snprintf(c->msg + len, sizeof c->msg - len, "%s%s = %s",
                         i == 0 ? "; inputs held over the step: " : ", ", mbs_names[VR_U + i],
                         mbs_format_double(c->d.v[VR_U + i], g, sizeof g));
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void log_statistics(instance *c)
{
    log_msg(c, fmi2OK, "logEvents",
            "statistics: %ld doStep calls, %.6f s in doStep (%.3f us per call), %ld right-hand "
            "sides, %ld accepted and %ld rejected internal steps, %ld projections",
            c->n_do_step, c->do_step_seconds,
            c->n_do_step ? 1e6 * c->do_step_seconds / (double)c->n_do_step : 0.0, c->d.rk.nfev,
            c->d.rk.naccept, c->d.rk.nreject, c->form.nproj);
}

fmi2Status fmi2Terminate(fmi2Component comp)
{
    instance *c = (instance *)comp;
    if (!check_state(c, "fmi2Terminate", S_STEP | S_ERR))
        return fmi2Error;
    log_statistics(c);
    c->d.state = ST_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component comp)
{
    instance *c = (instance *)comp;
    if (c == NULL)
        return fmi2Error;
    log_statistics(c);
    c->n_do_step = 0;
    c->do_step_seconds = 0.0;
    c->form.nproj = 0;
    memset(&c->d, 0, sizeof c->d);
    reset_values(c);
    c->d.state = ST_INSTANTIATED;
    log_msg(c, fmi2OK, "logEvents", "fmi2Reset");
    return fmi2OK;
}

/* ---------------------------------------------------------------- get / set */

fmi2Status fmi2GetReal(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[])
{
    instance *c = (instance *)comp;
    size_t i;
    if (!check_state(c, "fmi2GetReal", S_INIT | S_STEP | S_TERM | S_ERR))
        return fmi2Error;
    if (nvr > 0 && (vr == NULL || value == NULL))
        return ERR(c, "fmi2GetReal: NULL argument");
    for (i = 0; i < nvr; i++)
        if (vr[i] >= NVARS)
            return ERR(c, "fmi2GetReal: unknown value reference %u (the model has %d variables)",
                       (unsigned)vr[i], NVARS);
#if MBS_NOUT > 0
    if (c->outputs_dirty && c->d.state == ST_STEP && compute_outputs(c) != 0)
        return ERR(c, "fmi2GetReal: computing the outputs failed: %s", c->form.message);
#endif
    for (i = 0; i < nvr; i++)
        value[i] = c->d.v[vr[i]];
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                       const fmi2Real value[])
{
    instance *c = (instance *)comp;
    int stepping;
    size_t i;
    if (!check_state(c, "fmi2SetReal", S_INST | S_INIT | S_STEP))
        return fmi2Error;
    if (nvr > 0 && (vr == NULL || value == NULL))
        return ERR(c, "fmi2SetReal: NULL argument");
    stepping = c->d.state == ST_STEP;
    /* check everything first so that a rejected call changes nothing */
    for (i = 0; i < nvr; i++) {
        int kind;
        if (vr[i] >= NVARS)
            return ERR(c, "fmi2SetReal: unknown value reference %u (the model has %d variables)",
                       (unsigned)vr[i], NVARS);
        kind = mbs_kind[vr[i]];
        if (!isfinite(value[i]))
            return ERR(c, "fmi2SetReal: value %g for variable '%s' is not finite", value[i],
                       mbs_names[vr[i]]);
        if (kind == K_CALC)
            return ERR(c, "fmi2SetReal: '%s' is a calculated output and cannot be set",
                       mbs_names[vr[i]]);
        if (stepping && kind == K_STATE)
            return ERR(c, "fmi2SetReal: output '%s' cannot be set after initialization",
                       mbs_names[vr[i]]);
        if (stepping && kind == K_FIXED)
            return ERR(c, "fmi2SetReal: parameter '%s' is fixed (the constraints depend on it) and "
                          "cannot be changed after initialization", mbs_names[vr[i]]);
        if (vr[i] >= VR_RTOL && vr[i] < VR_U && solver_setting_problem(c, vr[i], value[i]))
            return ERR(c, "fmi2SetReal: %s", c->msg);
        if (bounds_problem(c, vr[i], value[i]))
            return ERR(c, "fmi2SetReal: %s", c->msg);
    }
#if MBS_NPRM > 0
    if (stepping) {
        /* the new parameter values together must satisfy the model's rules */
        double prm[MBS_NPRM > 0 ? MBS_NPRM : 1];
        int any = 0;
        memcpy(prm, c->d.v + VR_PRM, sizeof(double) * MBS_NPRM);
        for (i = 0; i < nvr; i++)
            if (vr[i] >= VR_PRM && vr[i] < VR_PRM + MBS_NPRM) {
                prm[vr[i] - VR_PRM] = value[i];
                any = 1;
            }
        if (any && mbs_check_parameters(&c->rules, prm, c->mj_work, c->msg, sizeof c->msg) != 0)
            return ERR(c, "fmi2SetReal: %s", c->msg);
    }
#endif
    for (i = 0; i < nvr; i++) {
        if (c->d.v[vr[i]] != value[i]) {
            c->d.fsal_dirty = 1; /* the first stage of the next step must be re-evaluated */
#if MBS_NOUT > 0
            c->outputs_dirty = 1;
#endif
        }
        c->d.v[vr[i]] = value[i];
        if (mbs_kind[vr[i]] == K_STATE)
            c->d.given[vr[i]] = 1;
    }
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr, fmi2Integer value[])
{
    (void)value;
    return no_variables(comp, "fmi2GetInteger", "Integer", vr, nvr);
}

fmi2Status fmi2GetBoolean(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean value[])
{
    (void)value;
    return no_variables(comp, "fmi2GetBoolean", "Boolean", vr, nvr);
}

fmi2Status fmi2GetString(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr, fmi2String value[])
{
    (void)value;
    return no_variables(comp, "fmi2GetString", "String", vr, nvr);
}

fmi2Status fmi2SetInteger(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Integer value[])
{
    (void)value;
    return no_variables(comp, "fmi2SetInteger", "Integer", vr, nvr);
}

fmi2Status fmi2SetBoolean(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Boolean value[])
{
    (void)value;
    return no_variables(comp, "fmi2SetBoolean", "Boolean", vr, nvr);
}

fmi2Status fmi2SetString(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                         const fmi2String value[])
{
    (void)value;
    return no_variables(comp, "fmi2SetString", "String", vr, nvr);
}

/* ---------------------------------------------------------------- FMU state */

static fmu_state *alloc_state(instance *c)
{
    fmu_state *s = c->used_cb_alloc ? (fmu_state *)c->cb.allocateMemory(1, sizeof(fmu_state))
                                    : (fmu_state *)calloc(1, sizeof(fmu_state));
    if (s != NULL) {
        memset(s, 0, sizeof *s);
        s->magic = STATE_MAGIC;
        s->size = (uint32_t)sizeof(fmu_state);
        s->model = model_hash();
        s->used_cb_alloc = c->used_cb_alloc;
    }
    return s;
}

/* The state behind FMUstate if it is one of this model's, intact; else NULL with a message.  Only
 * the shared header is read before the model is known to match. */
static fmu_state *as_state(instance *c, fmi2FMUstate FMUstate, const char *fn)
{
    fmu_state *s = (fmu_state *)FMUstate;
    if (s == NULL) {
        log_msg(c, fmi2Error, "logStatusError", "%s: NULL FMU state", fn);
        return NULL;
    }
    if (s->magic != STATE_MAGIC) {
        log_msg(c, fmi2Error, "logStatusError", "%s: not an FMU state of an mbsfmu FMU (freed "
                "already, or another FMU's)", fn);
        return NULL;
    }
    if (s->size != sizeof(fmu_state) || s->model != model_hash()) {
        log_msg(c, fmi2Error, "logStatusError", "%s: the FMU state belongs to another model or "
                "build (this is %s, GUID %s)", fn, MBS_MODEL_NAME, MBS_GUID);
        return NULL;
    }
    return s;
}

/* d's validity beyond the checksum: sizes, flags and enumerations a crafted state could break */
static int state_data_ok(const sim_data *d)
{
    int i;
    if ((unsigned)d->state > (unsigned)ST_ERROR || (d->rk.n != NX && d->rk.n != 0) ||
        (d->rk.n == 0 && d->state != ST_INSTANTIATED && d->state != ST_INIT) || (d->fsal_dirty & ~1) ||
        (d->inputs_changing & ~1) || (d->rk.fsal_valid & ~1) || (d->rk.dense_valid & ~1) ||
        !isfinite(d->t) || isnan(d->t_stop))
        return 0;
    for (i = 0; i < NX; i++)
        if (d->given[i] > 1 || !isfinite(d->x[i]))
            return 0;
    return 1;
}

fmi2Status fmi2GetFMUstate(fmi2Component comp, fmi2FMUstate *FMUstate)
{
    instance *c = (instance *)comp;
    fmu_state *s;
    if (!check_state(c, "fmi2GetFMUstate", S_INST | S_INIT | S_STEP | S_TERM))
        return fmi2Error;
    if (FMUstate == NULL)
        return ERR(c, "fmi2GetFMUstate: NULL argument");
    if (*FMUstate != NULL) {
        s = as_state(c, *FMUstate, "fmi2GetFMUstate");
        if (s == NULL)
            return fmi2Error;
    } else {
        s = alloc_state(c);
        if (s == NULL)
            return ERR(c, "fmi2GetFMUstate: out of memory");
        *FMUstate = s;
    }
    memcpy(&s->d, &c->d, sizeof s->d);
    s->checksum = hash64(&s->d, sizeof s->d);
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component comp, fmi2FMUstate FMUstate)
{
    instance *c = (instance *)comp;
    fmu_state *s;
    if (!check_state(c, "fmi2SetFMUstate", S_INST | S_INIT | S_STEP | S_TERM | S_ERR))
        return fmi2Error;
    s = as_state(c, FMUstate, "fmi2SetFMUstate");
    if (s == NULL)
        return fmi2Error;
    if (hash64(&s->d, sizeof s->d) != s->checksum || !state_data_ok(&s->d))
        return ERR(c, "fmi2SetFMUstate: the FMU state is corrupt (checksum mismatch)");
    memcpy(&c->d, &s->d, sizeof c->d);
    c->d.rk.work = c->d.work;
#if MBS_NOUT > 0
    c->outputs_dirty = 0; /* the state holds the outputs computed at its time */
#endif
    return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component comp, fmi2FMUstate *FMUstate)
{
    instance *c = (instance *)comp;
    fmu_state *s;
    if (c == NULL)
        return fmi2Error;
    if (FMUstate == NULL || *FMUstate == NULL)
        return fmi2OK;
    s = as_state(c, *FMUstate, "fmi2FreeFMUstate");
    if (s == NULL)
        return fmi2Error;
    s->magic = 0;
    if (s->used_cb_alloc)
        c->cb.freeMemory(s);
    else
        free(s);
    *FMUstate = NULL;
    return fmi2OK;
}

/* Serialized layout (same binary and platform only): the 8-byte tag "MBSFMUS2", the size of
 * sim_data (8 bytes, native order), the GUID (64 bytes, zero padded), the checksum hash64 of the
 * sim_data bytes (8 bytes), then the bytes of sim_data. */
#define SER_TAG "MBSFMUS2"
#define SER_GUID 64
#define SER_HEAD (8 + 8 + SER_GUID + 8)
#define SER_SIZE (SER_HEAD + sizeof(sim_data))

fmi2Status fmi2SerializedFMUstateSize(fmi2Component comp, fmi2FMUstate FMUstate, size_t *size)
{
    instance *c = (instance *)comp;
    if (c == NULL)
        return fmi2Error;
    if (as_state(c, FMUstate, "fmi2SerializedFMUstateSize") == NULL)
        return fmi2Error;
    if (size == NULL)
        return ERR(c, "fmi2SerializedFMUstateSize: NULL size pointer");
    *size = SER_SIZE;
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component comp, fmi2FMUstate FMUstate, fmi2Byte serializedState[],
                                 size_t size)
{
    instance *c = (instance *)comp;
    fmu_state *s;
    uint64_t n = sizeof(sim_data);
    char guid[SER_GUID];
    if (c == NULL)
        return fmi2Error;
    s = as_state(c, FMUstate, "fmi2SerializeFMUstate");
    if (s == NULL)
        return fmi2Error;
    if (serializedState == NULL)
        return ERR(c, "fmi2SerializeFMUstate: NULL buffer");
    if (size < SER_SIZE)
        return ERR(c, "fmi2SerializeFMUstate: buffer of %lu bytes is too small, %lu needed "
                      "(fmi2SerializedFMUstateSize)", (unsigned long)size, (unsigned long)SER_SIZE);
    memset(guid, 0, sizeof guid);
    strncpy(guid, MBS_GUID, sizeof guid - 1);
    memcpy(serializedState, SER_TAG, 8);
    memcpy(serializedState + 8, &n, 8);
    memcpy(serializedState + 16, guid, SER_GUID);
    memcpy(serializedState + 16 + SER_GUID, &s->checksum, 8);
    memcpy(serializedState + SER_HEAD, &s->d, sizeof(sim_data));
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component comp, const fmi2Byte serializedState[], size_t size,
                                   fmi2FMUstate *FMUstate)
{
    instance *c = (instance *)comp;
    fmu_state *s;
    uint64_t n, sum;
    char guid[SER_GUID];
    if (c == NULL)
        return fmi2Error;
    if (serializedState == NULL || FMUstate == NULL)
        return ERR(c, "fmi2DeSerializeFMUstate: NULL %s", serializedState == NULL ? "buffer"
                                                                                   : "state pointer");
    if (size < SER_HEAD || memcmp(serializedState, SER_TAG, 8) != 0)
        return ERR(c, "fmi2DeSerializeFMUstate: not a serialized state of an mbsfmu FMU "
                      "(%lu bytes, tag %s expected)", (unsigned long)size, SER_TAG);
    memcpy(&n, serializedState + 8, 8);
    memset(guid, 0, sizeof guid);
    strncpy(guid, MBS_GUID, sizeof guid - 1);
    if (memcmp(serializedState + 16, guid, SER_GUID) != 0)
        return ERR(c, "fmi2DeSerializeFMUstate: the state was serialized by another model's FMU "
                      "(this is %s, GUID %s)", MBS_MODEL_NAME, MBS_GUID);
    if (n != sizeof(sim_data) || size != SER_SIZE)
        return ERR(c, "fmi2DeSerializeFMUstate: %lu bytes with a payload of %lu, expected %lu and %lu "
                      "(truncated, or another build)", (unsigned long)size, (unsigned long)n,
                   (unsigned long)SER_SIZE, (unsigned long)sizeof(sim_data));
    memcpy(&sum, serializedState + 16 + SER_GUID, 8);
    if (hash64(serializedState + SER_HEAD, sizeof(sim_data)) != sum)
        return ERR(c, "fmi2DeSerializeFMUstate: the serialized state is corrupt (checksum mismatch)");
    if (*FMUstate != NULL) {
        s = as_state(c, *FMUstate, "fmi2DeSerializeFMUstate");
        if (s == NULL)
            return fmi2Error;
    } else {
        s = NULL;
    }
    {
        sim_data d;
        memcpy(&d, serializedState + SER_HEAD, sizeof d);
        if (!state_data_ok(&d))
            return ERR(c, "fmi2DeSerializeFMUstate: the serialized state is corrupt (invalid fields)");
        if (s == NULL) {
            s = alloc_state(c);
            if (s == NULL)
                return ERR(c, "fmi2DeSerializeFMUstate: out of memory");
            *FMUstate = s;
        }
        memcpy(&s->d, &d, sizeof d);
        s->checksum = sum;
    }
    return fmi2OK;
}

/* ---------------------------------------------------------------- directional derivatives */

fmi2Status fmi2GetDirectionalDerivative(fmi2Component comp, const fmi2ValueReference vUnknown_ref[],
                                        size_t nUnknown, const fmi2ValueReference vKnown_ref[],
                                        size_t nKnown, const fmi2Real dvKnown[], fmi2Real dvUnknown[])
{
    instance *c = (instance *)comp;
    double du[MBS_NU > 0 ? MBS_NU : 1];
    size_t i;
    if (!check_state(c, "fmi2GetDirectionalDerivative", S_STEP | S_TERM))
        return fmi2Error;
    if ((nUnknown > 0 && (vUnknown_ref == NULL || dvUnknown == NULL)) ||
        (nKnown > 0 && (vKnown_ref == NULL || dvKnown == NULL)))
        return ERR(c, "fmi2GetDirectionalDerivative: NULL argument");
    memset(du, 0, sizeof du);
#if MBS_NU == 0
    if (nKnown > 0)
        return ERR(c, "fmi2GetDirectionalDerivative: the model has no inputs, so no knowns");
#endif
    for (i = 0; i < nKnown && MBS_NU > 0; i++) {
        if (vKnown_ref[i] >= NVARS || mbs_kind[vKnown_ref[i]] != K_INPUT)
            return ERR(c, "fmi2GetDirectionalDerivative: known %u is not an input (the knowns of a "
                          "co-simulation FMU after initialization are its inputs)", (unsigned)vKnown_ref[i]);
        if (!isfinite(dvKnown[i]))
            return ERR(c, "fmi2GetDirectionalDerivative: seed for '%s' is not finite",
                       mbs_names[vKnown_ref[i]]);
#if MBS_NU > 0
        du[vKnown_ref[i] - VR_U] += dvKnown[i];
#endif
    }
    for (i = 0; i < nUnknown; i++) {
        fmi2ValueReference r = vUnknown_ref[i];
        if (r >= NVARS || (mbs_kind[r] != K_STATE && mbs_kind[r] != K_CALC))
            return ERR(c, "fmi2GetDirectionalDerivative: unknown %u is not an output", (unsigned)r);
    }
#if MBS_NOUT > 0 && MBS_NU > 0
    {
        double dout[MBS_NOUT_EXPR > 0 ? MBS_NOUT_EXPR * MBS_NU : 1];
        double dval[MBS_NOUT];
        const double *x = c->d.x;
        int k, j;
#if MBS_NTP > 0
        mbs_time_parameters(c->d.t, c->d.v + VR_PRM, c->tp);
#endif
        mbs_outputs_du(c->d.t, x, x + F, c->d.v + VR_PRM, c->d.v + VR_U, c->tp, dout);
#if MBS_NREACT > 0
        {
            double dhu[F * MBS_NU], dh[F], zero[MBS_NC], dydd[F], dlam[MBS_NC];
            int rc;
            mbs_force_du(c->d.t, x, x + F, c->d.v + VR_PRM, c->d.v + VR_U, c->tp, dhu);
            mbs_constrained(c->d.t, x, x + F, c->d.v + VR_PRM, c->d.v + VR_U, c->tp, c->cbuf);
            mbs_gemv(0, F, MBS_NU, 1.0, dhu, du, 0.0, dh);
            memset(zero, 0, sizeof zero);
            rc = mbs_solve_kkt(F, MBS_NC, c->cbuf, c->cbuf + F * F + F + MBS_NC, dh, zero, dydd, dlam,
                               c->kkt_work);
            if (rc != 0)
                return ERR(c, "fmi2GetDirectionalDerivative: the KKT matrix is singular (pivot %d): "
                              "the multipliers are not unique here (redundant constraints?)", rc);
            for (k = 0; k < MBS_NOUT; k++)
                if (mbs_out_src[k] < 0)
                    dval[k] = dlam[-mbs_out_src[k] - 1];
        }
#endif
        for (k = 0; k < MBS_NOUT; k++) {
            int src = mbs_out_src[k];
            if (src >= 0) {
                double acc = 0.0;
                for (j = 0; j < MBS_NU; j++)
                    acc += dout[src * MBS_NU + j] * du[j];
                dval[k] = acc;
            }
        }
        for (i = 0; i < nUnknown; i++) {
            fmi2ValueReference r = vUnknown_ref[i];
            dvUnknown[i] = (r >= VR_OUT && r < VR_OUT + MBS_NOUT) ? dval[r - VR_OUT] : 0.0;
        }
        return fmi2OK;
    }
#else
    for (i = 0; i < nUnknown; i++)
        dvUnknown[i] = 0.0; /* no output depends directly on an input */
    return fmi2OK;
#endif
}

/* ---------------------------------------------------------------- co-simulation */

fmi2Status fmi2SetRealInputDerivatives(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[])
{
    (void)vr;
    (void)order;
    (void)value;
    if (comp == NULL)
        return fmi2Error;
    if (nvr == 0)
        return fmi2OK;
    return ERR((instance *)comp, "fmi2SetRealInputDerivatives: not supported (canInterpolateInputs=false)");
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[])
{
    (void)vr;
    (void)order;
    (void)value;
    if (comp == NULL)
        return fmi2Error;
    if (nvr == 0)
        return fmi2OK;
    return ERR((instance *)comp,
               "fmi2GetRealOutputDerivatives: not supported (maxOutputDerivativeOrder=0)");
}

fmi2Status fmi2DoStep(fmi2Component comp, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize, fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    instance *c = (instance *)comp;
    double t_end, t_stop, x[NX], t_wall;
    mbs_project_fn project = c != NULL && c->form.kind == MBS_FORM_QR ? mbs_form_project : NULL;
    int rc;
    (void)noSetFMUStatePriorToCurrentPoint;
    if (!check_state(c, "fmi2DoStep", S_STEP))
        return fmi2Error;
    if (!(communicationStepSize > 0.0) || !isfinite(communicationStepSize))
        return ERR(c, "fmi2DoStep: communication step size must be > 0 (got %g)", communicationStepSize);
    if (!isfinite(currentCommunicationPoint))
        return ERR(c, "fmi2DoStep: current communication point is not finite");
    if (fabs(currentCommunicationPoint - c->d.t) > 1e-9 * (1.0 + fabs(c->d.t)))
        return ERR(c, "fmi2DoStep: current communication point %.17g does not match the FMU time %.17g",
                   currentCommunicationPoint, c->d.t);
    if (c->d.v[VR_HMAX] > 0.0 && communicationStepSize / c->d.v[VR_HMAX] > (double)MAX_STEPS_PER_CALL)
        return ERR(c, "fmi2DoStep: max_internal_step = %g s would need more than %ld internal steps "
                      "for the communication step of %g s; raise max_internal_step or shorten the step",
                   c->d.v[VR_HMAX], MAX_STEPS_PER_CALL, communicationStepSize);
    c->d.rk.rtol = c->d.v[VR_RTOL];
    c->d.rk.atol = c->d.v[VR_ATOL];
    c->d.rk.hmax = c->d.v[VR_HMAX] > 0.0 ? c->d.v[VR_HMAX] : INFINITY;
    /* Inputs or parameters changed: restart at the communication point (the steps taken past it
     * assumed the old values), and while they keep changing, do not step past the next one. */
    c->d.inputs_changing = c->d.fsal_dirty;
    if (c->d.fsal_dirty) {
        mbs_rkstab_reset_fsal(&c->d.rk);
        c->d.fsal_dirty = 0;
    }
    t_end = currentCommunicationPoint + communicationStepSize;
    t_stop = c->d.inputs_changing ? t_end : c->d.t_stop;
    c->form.message[0] = '\0';
    t_wall = now_seconds();
    rc = mbs_rkstab_advance_dense(&c->d.rk, mbs_form_rhs, project, &c->form, c->d.t, c->d.x, t_end,
                                  t_stop, MAX_STEPS_PER_CALL, x);
    if (rc == MBS_RKSTAB_OK && project != NULL && project(&c->form, t_end, x) != 0)
        rc = MBS_RKSTAB_EPROJECT; /* the interpolated state is projected like every step end */
    if (rc != MBS_RKSTAB_OK) {
        /* keep the last communication point's state: outputs, time and FMU state stay valid */
        mbs_rkstab_reset_fsal(&c->d.rk);
        c->d.state = ST_ERROR;
        inputs_text(c);
        return ERR(c, "fmi2DoStep: integration from t=%.17g to %.17g failed (internal time %.17g): "
                      "%s%s%s%s", currentCommunicationPoint, t_end, c->d.rk.t_fsal,
                   mbs_rkstab_message(rc), c->form.message[0] ? ": " : "", c->form.message, c->msg);
    }
    memcpy(c->d.x, x, sizeof x);
    c->d.t = t_end;
    if (publish(c) != 0) {
        c->d.state = ST_ERROR;
        return ERR(c, "fmi2DoStep: outputs at t=%.17g: %s", t_end, c->form.message);
    }
    c->do_step_seconds += now_seconds() - t_wall;
    c->n_do_step++;
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component comp)
{
    return ERR((instance *)comp, "fmi2CancelStep: fmi2DoStep is never asynchronous");
}

/* The status getters: a NULL value pointer is an error; a kind they do not report gives
 * fmi2Discard (fmi2DoStep is never asynchronous, so there is nothing pending to ask about). */
static fmi2Status status_args(fmi2Component comp, const void *value, const char *fn)
{
    if (comp == NULL)
        return fmi2Error;
    if (value == NULL)
        return ERR((instance *)comp, "%s: NULL value pointer", fn);
    return fmi2OK;
}

fmi2Status fmi2GetStatus(fmi2Component comp, const fmi2StatusKind s, fmi2Status *value)
{
    (void)s;
    return status_args(comp, value, "fmi2GetStatus") == fmi2OK ? fmi2Discard : fmi2Error;
}

fmi2Status fmi2GetRealStatus(fmi2Component comp, const fmi2StatusKind s, fmi2Real *value)
{
    if (status_args(comp, value, "fmi2GetRealStatus") != fmi2OK)
        return fmi2Error;
    if (s == fmi2LastSuccessfulTime) {
        *value = ((instance *)comp)->d.t;
        return fmi2OK;
    }
    return fmi2Discard;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component comp, const fmi2StatusKind s, fmi2Integer *value)
{
    (void)s;
    return status_args(comp, value, "fmi2GetIntegerStatus") == fmi2OK ? fmi2Discard : fmi2Error;
}

fmi2Status fmi2GetBooleanStatus(fmi2Component comp, const fmi2StatusKind s, fmi2Boolean *value)
{
    if (status_args(comp, value, "fmi2GetBooleanStatus") != fmi2OK)
        return fmi2Error;
    if (s == fmi2Terminated) {
        *value = fmi2False;
        return fmi2OK;
    }
    return fmi2Discard;
}

fmi2Status fmi2GetStringStatus(fmi2Component comp, const fmi2StatusKind s, fmi2String *value)
{
    (void)s;
    return status_args(comp, value, "fmi2GetStringStatus") == fmi2OK ? fmi2Discard : fmi2Error;
}
