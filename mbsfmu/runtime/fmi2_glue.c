/*
 * fmi2_glue.c -- FMI 2.0 Co-Simulation glue of the native (Python-free) mbsfmu FMUs.
 *
 * One file for all models, and it knows no model: everything a simulation does is the engine's
 * instance layer (mbs_instance.h: values and their rules, consistent start, do-step with dense
 * output, outputs, directional derivatives, state).  This file adds what FMI asks for on top:
 * the FMI state machine, argument checks, logging through the environment's logger, memory from
 * its allocator, FMU states with a checked header, their serialization, and statistics.
 *
 * Variables in the value-reference order of mbs_model.h (coordinates, velocities,
 * constraint_residual, user outputs, constants, solver settings, inputs) are Reals, except the
 * integration method 'method', an Integer (fmi2GetInteger / fmi2SetInteger; the instance holds
 * it as a double like every value); names, kinds and types come from the instance layer
 * (mbs_var_name, mbs_var_kind, mbs_var_type).  One more variable follows them: 'solver', the old
 * name of 'method', kept for one release; it reads and sets 'method', and its first set logs a
 * deprecation warning (deprecated_names).
 *
 * FMU states: a header every mbsfmu FMU shares (magic, size, a hash of the GUID, a checksum of
 * the payload) and the payload (the FMI state and the instance's saved state).  A state of
 * another model or build, or a corrupted one, is refused before its payload is read.  Serialized
 * states carry a tag, the payload size, the GUID and the checksum.
 *
 * Statistics: the wall time spent inside fmi2DoStep is measured with CLOCK_MONOTONIC and, with
 * the integrator's counters, logged under logEvents at fmi2Terminate (and fmi2Reset), so a tool
 * can read the FMU's own cost per communication step.  The work of each integration method
 * (accepted and rejected steps, right-hand sides, Jacobians, LU decompositions) is logged at the
 * same time under logStatistics.
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
#include "mbs_instance.h"

typedef enum { ST_INSTANTIATED, ST_INIT, ST_STEP, ST_TERMINATED, ST_ERROR } inst_state;

#define LOG_EVENTS 1u
#define LOG_WARNING 2u
#define LOG_ERROR 4u
#define LOG_STATISTICS 8u
#define LOG_ALL 15u

typedef struct {
    fmi2CallbackFunctions cb;
    char name[256];
    int logging_on;
    unsigned log_mask;
    int used_cb_alloc;
    inst_state state;
    int rtol_set;        /* solver_rtol was set: fmi2SetupExperiment's tolerance does not replace it */
    int solver_said;     /* the deprecated name 'solver' was set and its warning logged */
    long n_do_step;      /* statistics since instantiation or reset (not part of the FMU state) */
    double do_step_seconds;
    mbs_instance *I;     /* in the same allocation, after this struct */
} component;

#define COMPONENT_HEAD ((sizeof(component) + 15u) & ~(size_t)15u)

#define STATE_MAGIC 0x4d425346u /* "MBSF" */

/* An FMU state: the shared header, then the payload (FMI state, instance state).  The checksum
 * covers the payload; a state is accepted only if magic, size, model (a hash of the GUID) and
 * checksum match. */
typedef struct {
    uint32_t magic;
    uint32_t size;       /* sizeof(fmu_state) + payload size */
    uint64_t model;      /* hash64(GUID) */
    uint64_t checksum;   /* hash64 of the payload */
    int used_cb_alloc;
    int pad;
    /* payload: */
    int32_t fmi_state;
    int32_t pad2;
    /* followed by mbs_inst_state_size() bytes */
} fmu_state;

#define PAYLOAD_OFFSET offsetof(fmu_state, fmi_state)
#define PAYLOAD_SIZE (sizeof(fmu_state) - PAYLOAD_OFFSET + mbs_inst_state_size())
#define STATE_BYTES (sizeof(fmu_state) + mbs_inst_state_size())

static unsigned char *payload(fmu_state *s) { return (unsigned char *)s + PAYLOAD_OFFSET; }
static unsigned char *inst_blob(fmu_state *s) { return (unsigned char *)s + sizeof(fmu_state); }

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

static uint64_t model_hash(void) { return hash64(mbs_model_guid(), strlen(mbs_model_guid())); }

/* ---------------------------------------------------------------- logging */

static unsigned category_bit(const char *category)
{
    if (strcmp(category, "logEvents") == 0)
        return LOG_EVENTS;
    if (strcmp(category, "logStatusWarning") == 0)
        return LOG_WARNING;
    if (strcmp(category, "logStatusError") == 0)
        return LOG_ERROR;
    if (strcmp(category, "logStatistics") == 0)
        return LOG_STATISTICS;
    if (strcmp(category, "logAll") == 0)
        return LOG_ALL;
    return 0;
}

/* Errors and warnings always reach the logger; other messages only when debug logging is on for
 * their category. */
static void log_msg(component *c, fmi2Status status, const char *category, const char *fmt, ...)
{
    char buf[1400], esc[2800];
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

/* the instance's events and warnings, through the FMU's logger */
static void instance_log(void *ctx, int level, const char *msg)
{
    component *c = (component *)ctx;
    if (level == MBS_WARNING)
        log_msg(c, fmi2Warning, "logStatusWarning", "%s", msg);
    else
        log_msg(c, fmi2OK, "logEvents", "%s", msg);
}

/* The model has no Boolean or String variables: any such access names the first value
 * reference and fails (an empty access is fine). */
static fmi2Status no_variables(fmi2Component comp, const char *fn, const char *type,
                               const fmi2ValueReference vr[], size_t nvr)
{
    if (comp == NULL)
        return fmi2Error;
    if (nvr == 0)
        return fmi2OK;
    return ERR((component *)comp, "%s: unknown value reference %u (no %s variables)", fn,
               vr ? (unsigned)vr[0] : 0u, type);
}

static int check_state(component *c, const char *fn, unsigned allowed)
{
    if (c == NULL)
        return 0;
    if (!(allowed & (1u << c->state))) {
        static const char *names[] = {"instantiated", "initialization mode", "step complete",
                                      "terminated", "error"};
        log_msg(c, fmi2Error, "logStatusError", "%s: not allowed in state '%s'", fn, names[c->state]);
        return 0;
    }
    return 1;
}

#define S_INST (1u << ST_INSTANTIATED)
#define S_INIT (1u << ST_INIT)
#define S_STEP (1u << ST_STEP)
#define S_TERM (1u << ST_TERMINATED)
#define S_ERR (1u << ST_ERROR)

static void *allocate(component *c, size_t n)
{
    return c->used_cb_alloc ? c->cb.allocateMemory(1, n) : calloc(1, n);
}

static void release(component *c, int used_cb_alloc, void *p)
{
    if (used_cb_alloc)
        c->cb.freeMemory(p);
    else
        free(p);
}

/* ---------------------------------------------------------------- common functions */

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }

const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component comp, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
    component *c = (component *)comp;
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
                          "logStatusWarning, logStatusError, logStatistics, logAll)",
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
    component *c;
    int use_cb;
    size_t size = COMPONENT_HEAD + mbs_instance_size();
    (void)fmuResourceLocation;
    (void)visible;
    if (functions == NULL)
        return NULL;
    use_cb = functions->allocateMemory != NULL && functions->freeMemory != NULL;
    c = use_cb ? (component *)functions->allocateMemory(1, size) : (component *)calloc(1, size);
    if (c == NULL)
        return NULL;
    memset(c, 0, size);
    c->cb = *functions;
    c->used_cb_alloc = use_cb;
    c->logging_on = loggingOn ? 1 : 0;
    c->log_mask = LOG_ALL;
    c->I = (mbs_instance *)((unsigned char *)c + COMPONENT_HEAD);
    snprintf(c->name, sizeof c->name, "%s", instanceName ? instanceName : "(unnamed)");
    if (instanceName == NULL || fmuType != fmi2CoSimulation || fmuGUID == NULL ||
        strcmp(fmuGUID, mbs_model_guid()) != 0) {
        if (instanceName == NULL)
            log_msg(c, fmi2Error, "logStatusError", "fmi2Instantiate: missing instance name");
        else if (fmuType != fmi2CoSimulation)
            log_msg(c, fmi2Error, "logStatusError", "fmi2Instantiate: only Co-Simulation is supported");
        else
            log_msg(c, fmi2Error, "logStatusError", "fmi2Instantiate: wrong GUID '%s' (expected '%s')",
                    fmuGUID ? fmuGUID : "(null)", mbs_model_guid());
        release(c, use_cb, c);
        return NULL;
    }
    mbs_inst_set_logger(c->I, instance_log, c);
    mbs_inst_init(c->I);
    c->state = ST_INSTANTIATED;
    log_msg(c, fmi2OK, "logEvents", "fmi2Instantiate: model %s", mbs_model_name());
    return c;
}

void fmi2FreeInstance(fmi2Component comp)
{
    component *c = (component *)comp;
    if (c != NULL)
        release(c, c->used_cb_alloc, c);
}

/* The value reference of solver_rtol (the first solver setting, mbs_model_sizes). */
static fmi2ValueReference rtol_reference(void)
{
    int sizes[16];
    mbs_model_sizes(sizes);
    return (fmi2ValueReference)sizes[11];
}

fmi2Status fmi2SetupExperiment(fmi2Component comp, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    component *c = (component *)comp;
    const fmi2ValueReference vr_rtol = rtol_reference();
    if (!check_state(c, "fmi2SetupExperiment", S_INST))
        return fmi2Error;
    if (!isfinite(startTime))
        return ERR(c, "fmi2SetupExperiment: start time %g is not finite", startTime);
    if (stopTimeDefined && !(isfinite(stopTime) && stopTime >= startTime))
        return ERR(c, "fmi2SetupExperiment: stop time %g is not a finite time after the start time %g",
                   stopTime, startTime);
    if (mbs_inst_set_time(c->I, startTime, stopTimeDefined ? stopTime : INFINITY) != MBS_OK)
        return ERR(c, "fmi2SetupExperiment: %s", mbs_inst_message(c->I));
    /* the importer's tolerance is solver_rtol's value unless that was set (solver_atol = 0 follows
     * it by simulate's rule); one outside solver_rtol's range is said and left aside */
    if (toleranceDefined && !c->rtol_set && mbs_inst_set(c->I, 1, &vr_rtol, &tolerance) != MBS_OK) {
        log_msg(c, fmi2Warning, "logStatusWarning", "fmi2SetupExperiment: the tolerance is not taken "
                "(%s); solver_rtol keeps its value", mbs_inst_message(c->I));
        return fmi2Warning;
    }
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component comp)
{
    component *c = (component *)comp;
    if (!check_state(c, "fmi2EnterInitializationMode", S_INST))
        return fmi2Error;
    c->state = ST_INIT;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component comp)
{
    component *c = (component *)comp;
    int rc;
    if (!check_state(c, "fmi2ExitInitializationMode", S_INIT))
        return fmi2Error;
    rc = mbs_inst_start(c->I, NULL);
    if (rc == MBS_ERROR) {
        c->state = ST_ERROR;
        return ERR(c, "fmi2ExitInitializationMode: %s", mbs_inst_message(c->I));
    }
    c->state = ST_STEP;
    if (rc == MBS_WARNING) {
        log_msg(c, fmi2Warning, "logStatusWarning", "%s", mbs_inst_message(c->I));
        return fmi2Warning;
    }
    log_msg(c, fmi2OK, "logEvents", "fmi2ExitInitializationMode: t=%g", mbs_inst_time(c->I));
    return fmi2OK;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "method stiff (current): 187 accepted and 3 rejected steps, ..." appended to buf at len (with
 * "; " before it unless first); methods other than the current one only if they did any work.
 * Returns the new length. */
static size_t method_statistics(component *c, char *buf, size_t size, size_t len, int method, int current)
{
    long nacc, nrej, nfev, njev, ndec;
    int w;
    if (mbs_inst_method_statistics(c->I, method, &nacc, &nrej, &nfev, &njev, &ndec) != MBS_OK ||
        (!current && nacc + nrej + nfev == 0) || len >= size)
        return len;
    w = snprintf(buf + len, size - len, "%smethod %s%s: %ld accepted and %ld rejected steps, %ld "
                 "right-hand sides, %ld Jacobians, %ld LU decompositions", len ? "; " : "",
                 mbs_method_name(method), current ? " (current)" : "", nacc, nrej, nfev, njev, ndec);
    if (w < 0)
        return len;
    return len + (size_t)w < size ? len + (size_t)w : size - 1; /* truncated: the buffer is full */
}

/* The FMU's cost (logEvents), and the work of each integration method that ran (logStatistics:
 * the current one first, then any other the run switched from). */
static void log_statistics(component *c)
{
    long nfev, nacc, nrej, nproj;
    char buf[1024];
    size_t len;
    int m, current = mbs_inst_method(c->I);
    mbs_inst_statistics(c->I, &nfev, &nacc, &nrej, &nproj);
    log_msg(c, fmi2OK, "logEvents",
            "statistics: %ld doStep calls, %.6f s in doStep (%.3f us per call), %ld right-hand "
            "sides, %ld accepted and %ld rejected internal steps, %ld projections",
            c->n_do_step, c->do_step_seconds,
            c->n_do_step ? 1e6 * c->do_step_seconds / (double)c->n_do_step : 0.0, nfev, nacc, nrej, nproj);
    buf[0] = '\0';
    len = method_statistics(c, buf, sizeof buf, 0, current, 1);
    for (m = 0; mbs_method_name(m) != NULL; m++)
        if (m != current)
            len = method_statistics(c, buf, sizeof buf, len, m, 0);
    log_msg(c, fmi2OK, "logStatistics", "integrator statistics: %s", buf);
}

fmi2Status fmi2Terminate(fmi2Component comp)
{
    component *c = (component *)comp;
    if (!check_state(c, "fmi2Terminate", S_STEP | S_ERR))
        return fmi2Error;
    log_statistics(c);
    c->state = ST_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component comp)
{
    component *c = (component *)comp;
    if (c == NULL)
        return fmi2Error;
    log_statistics(c);
    c->n_do_step = 0;
    c->do_step_seconds = 0.0;
    c->rtol_set = 0;
    mbs_inst_init(c->I);
    c->state = ST_INSTANTIATED;
    log_msg(c, fmi2OK, "logEvents", "fmi2Reset");
    return fmi2OK;
}

/* ---------------------------------------------------------------- get / set */

/* The deprecated name 'solver' of the variable 'method': its value reference follows the
 * instance's variables, that of 'method' is the last of the model's sizes. */
static fmi2ValueReference deprecated_solver_reference(void) { return (fmi2ValueReference)mbs_model_nvars(); }

static fmi2ValueReference method_reference(void)
{
    int sizes[16];
    return (fmi2ValueReference)sizes[mbs_model_sizes(sizes) - 1];
}

static int var_type(fmi2ValueReference vr)
{
    return vr == deprecated_solver_reference() ? MBS_TYPE_INTEGER : mbs_var_type(vr);
}

static const char *var_name(fmi2ValueReference vr)
{
    return vr == deprecated_solver_reference() ? "solver" : mbs_var_name(vr);
}

/* vr[] with the deprecated name replaced by the variable it names: vr itself where it does not
 * occur, else a copy in buf (nbuf entries) or allocated (NULL if that fails; the caller releases a
 * copy that is not buf).  A set (`set`) logs the deprecation once per instance. */
static const fmi2ValueReference *deprecated_names(component *c, const char *fn, const fmi2ValueReference vr[],
                                                  size_t nvr, fmi2ValueReference *buf, size_t nbuf, int set)
{
    const fmi2ValueReference old = deprecated_solver_reference(), now = method_reference();
    fmi2ValueReference *out;
    size_t i, n = 0;
    for (i = 0; i < nvr; i++)
        n += vr[i] == old;
    if (n == 0)
        return vr;
    if (set && !c->solver_said) {
        c->solver_said = 1;
        log_msg(c, fmi2Warning, "logStatusWarning", "%s: the variable 'solver' (value reference %u) is "
                "deprecated and goes away in the next release: use 'method' (value reference %u), which "
                "it sets", fn, (unsigned)old, (unsigned)now);
    }
    if (nvr > ((size_t)-1) / sizeof *out)
        return NULL;
    out = nvr <= nbuf ? buf : (fmi2ValueReference *)allocate(c, nvr * sizeof *out);
    for (i = 0; out != NULL && i < nvr; i++)
        out[i] = vr[i] == old ? now : vr[i];
    return out;
}

/* 1 if no known value reference of vr[] has another FMI type than `type`, else 0 after logging
 * which one (unknown references are left to the instance, which names them). */
static int of_type(component *c, const char *fn, const fmi2ValueReference vr[], size_t nvr, int type)
{
    size_t i;
    for (i = 0; i < nvr; i++) {
        int t = var_type(vr[i]);
        if (t >= 0 && t != type) {
            log_msg(c, fmi2Error, "logStatusError", "%s: '%s' (value reference %u) is %s variable: use "
                    "fmi2%s%s", fn, var_name(vr[i]), (unsigned)vr[i],
                    t == MBS_TYPE_INTEGER ? "an Integer" : "a Real", strncmp(fn, "fmi2Get", 7) ? "Set" : "Get",
                    t == MBS_TYPE_INTEGER ? "Integer" : "Real");
            return 0;
        }
    }
    return 1;
}

/* doubles for n values: buf if n <= nbuf, else allocated (NULL if that fails) */
static double *values_buffer(component *c, double *buf, size_t nbuf, size_t n)
{
    if (n <= nbuf)
        return buf;
    if (n > ((size_t)-1) / sizeof(double))
        return NULL;
    return (double *)allocate(c, n * sizeof(double));
}

fmi2Status fmi2GetReal(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[])
{
    component *c = (component *)comp;
    if (!check_state(c, "fmi2GetReal", S_INIT | S_STEP | S_TERM | S_ERR))
        return fmi2Error;
    if (nvr > 0 && (vr == NULL || value == NULL))
        return ERR(c, "fmi2GetReal: NULL argument");
    if (!of_type(c, "fmi2GetReal", vr, nvr, MBS_TYPE_REAL))
        return fmi2Error;
    if (mbs_inst_get(c->I, nvr, vr, value) != MBS_OK)
        return ERR(c, "fmi2GetReal: %s", mbs_inst_message(c->I));
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                       const fmi2Real value[])
{
    component *c = (component *)comp;
    if (!check_state(c, "fmi2SetReal", S_INST | S_INIT | S_STEP))
        return fmi2Error;
    if (nvr > 0 && (vr == NULL || value == NULL))
        return ERR(c, "fmi2SetReal: NULL argument");
    if (!of_type(c, "fmi2SetReal", vr, nvr, MBS_TYPE_REAL))
        return fmi2Error;
    if (mbs_inst_set(c->I, nvr, vr, value) != MBS_OK)
        return ERR(c, "fmi2SetReal: %s", mbs_inst_message(c->I));
    for (size_t i = 0; i < nvr; i++)
        c->rtol_set |= vr[i] == rtol_reference();
    return fmi2OK;
}

/* fmi2GetInteger (into `out`) and fmi2SetInteger (from `in`): the Integer variable (method, also
 * by its deprecated name solver) is held as a double by the instance, converted here. */
static fmi2Status integer_values(fmi2Component comp, const char *fn, unsigned states,
                                 const fmi2ValueReference vr[], size_t nvr, const fmi2Integer *in,
                                 fmi2Integer *out)
{
    component *c = (component *)comp;
    double small[8], *v;
    fmi2ValueReference refs_small[8];
    const fmi2ValueReference *refs;
    size_t i;
    int rc = MBS_OK, renamed;
    if (!check_state(c, fn, states))
        return fmi2Error;
    if (nvr > 0 && (vr == NULL || (in == NULL && out == NULL)))
        return ERR(c, "%s: NULL argument", fn);
    if (!of_type(c, fn, vr, nvr, MBS_TYPE_INTEGER))
        return fmi2Error;
    refs = deprecated_names(c, fn, vr, nvr, refs_small, sizeof refs_small / sizeof refs_small[0], in != NULL);
    renamed = refs != vr;
    v = refs == NULL ? NULL : values_buffer(c, small, sizeof small / sizeof small[0], nvr);
    if (v != NULL && in != NULL) {
        for (i = 0; i < nvr; i++)
            v[i] = (double)in[i];
        rc = mbs_inst_set(c->I, nvr, refs, v); /* checks every value first: a refusal changes nothing */
    } else if (v != NULL) {
        rc = mbs_inst_get(c->I, nvr, refs, v);
        for (i = 0; rc == MBS_OK && i < nvr; i++)
            out[i] = (fmi2Integer)v[i];
    }
    if (v != NULL && v != small)
        release(c, c->used_cb_alloc, v);
    if (refs != NULL && refs != vr && refs != refs_small)
        release(c, c->used_cb_alloc, (void *)refs);
    if (v == NULL)
        return ERR(c, "%s: out of memory for %lu values", fn, (unsigned long)nvr);
    if (rc != MBS_OK)
        return ERR(c, "%s: %s%s", fn, mbs_inst_message(c->I),
                   renamed ? " (given by its deprecated name 'solver')" : "");
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr, fmi2Integer value[])
{
    return integer_values(comp, "fmi2GetInteger", S_INIT | S_STEP | S_TERM | S_ERR, vr, nvr, NULL, value);
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
    return integer_values(comp, "fmi2SetInteger", S_INST | S_INIT | S_STEP, vr, nvr, value, NULL);
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

static fmu_state *alloc_state(component *c)
{
    fmu_state *s = (fmu_state *)allocate(c, STATE_BYTES);
    if (s != NULL) {
        memset(s, 0, STATE_BYTES);
        s->magic = STATE_MAGIC;
        s->size = (uint32_t)STATE_BYTES;
        s->model = model_hash();
        s->used_cb_alloc = c->used_cb_alloc;
    }
    return s;
}

/* The state behind FMUstate if it is one of this model's, intact; else NULL with a message.  Only
 * the shared header is read before the model is known to match. */
static fmu_state *as_state(component *c, fmi2FMUstate FMUstate, const char *fn)
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
    if (s->size != STATE_BYTES || s->model != model_hash()) {
        log_msg(c, fmi2Error, "logStatusError", "%s: the FMU state belongs to another model or "
                "build (this is %s, GUID %s)", fn, mbs_model_name(), mbs_model_guid());
        return NULL;
    }
    return s;
}

/* the payload's validity beyond the checksum: fields a crafted state could break */
static int payload_ok(const unsigned char *p)
{
    int32_t st;
    memcpy(&st, p, sizeof st);
    if (st < (int32_t)ST_INSTANTIATED || st > (int32_t)ST_ERROR)
        return 0;
    return mbs_inst_state_check(p + (sizeof(fmu_state) - PAYLOAD_OFFSET)) == 0;
}

fmi2Status fmi2GetFMUstate(fmi2Component comp, fmi2FMUstate *FMUstate)
{
    component *c = (component *)comp;
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
    s->fmi_state = (int32_t)c->state;
    mbs_inst_save(c->I, inst_blob(s));
    s->checksum = hash64(payload(s), PAYLOAD_SIZE);
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component comp, fmi2FMUstate FMUstate)
{
    component *c = (component *)comp;
    fmu_state *s;
    if (!check_state(c, "fmi2SetFMUstate", S_INST | S_INIT | S_STEP | S_TERM | S_ERR))
        return fmi2Error;
    s = as_state(c, FMUstate, "fmi2SetFMUstate");
    if (s == NULL)
        return fmi2Error;
    if (hash64(payload(s), PAYLOAD_SIZE) != s->checksum || !payload_ok(payload(s)))
        return ERR(c, "fmi2SetFMUstate: the FMU state is corrupt (checksum mismatch)");
    c->state = (inst_state)s->fmi_state;
    mbs_inst_restore(c->I, inst_blob(s));
    return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component comp, fmi2FMUstate *FMUstate)
{
    component *c = (component *)comp;
    fmu_state *s;
    if (c == NULL)
        return fmi2Error;
    if (FMUstate == NULL || *FMUstate == NULL)
        return fmi2OK;
    s = as_state(c, *FMUstate, "fmi2FreeFMUstate");
    if (s == NULL)
        return fmi2Error;
    s->magic = 0;
    release(c, s->used_cb_alloc, s);
    *FMUstate = NULL;
    return fmi2OK;
}

/* Serialized layout (same binary and platform only): the 8-byte tag "MBSFMUS3", the payload size
 * (8 bytes, native order), the GUID (64 bytes, zero padded), the checksum hash64 of the payload
 * (8 bytes), then the payload. */
#define SER_TAG "MBSFMUS3"
#define SER_GUID 64
#define SER_HEAD (8 + 8 + SER_GUID + 8)
#define SER_SIZE (SER_HEAD + PAYLOAD_SIZE)

static void guid_field(char *guid)
{
    memset(guid, 0, SER_GUID);
    strncpy(guid, mbs_model_guid(), SER_GUID - 1);
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component comp, fmi2FMUstate FMUstate, size_t *size)
{
    component *c = (component *)comp;
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
    component *c = (component *)comp;
    fmu_state *s;
    uint64_t n = PAYLOAD_SIZE;
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
    guid_field(guid);
    memcpy(serializedState, SER_TAG, 8);
    memcpy(serializedState + 8, &n, 8);
    memcpy(serializedState + 16, guid, SER_GUID);
    memcpy(serializedState + 16 + SER_GUID, &s->checksum, 8);
    memcpy(serializedState + SER_HEAD, payload(s), PAYLOAD_SIZE);
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component comp, const fmi2Byte serializedState[], size_t size,
                                   fmi2FMUstate *FMUstate)
{
    component *c = (component *)comp;
    fmu_state *s;
    uint64_t n, sum;
    char guid[SER_GUID];
    if (c == NULL)
        return fmi2Error;
    if (serializedState == NULL || FMUstate == NULL)
        return ERR(c, "fmi2DeSerializeFMUstate: NULL %s",
                   serializedState == NULL ? "buffer" : "state pointer");
    if (size < SER_HEAD || memcmp(serializedState, SER_TAG, 8) != 0)
        return ERR(c, "fmi2DeSerializeFMUstate: not a serialized state of an mbsfmu FMU "
                      "(%lu bytes, tag %s expected)", (unsigned long)size, SER_TAG);
    memcpy(&n, serializedState + 8, 8);
    guid_field(guid);
    if (memcmp(serializedState + 16, guid, SER_GUID) != 0)
        return ERR(c, "fmi2DeSerializeFMUstate: the state was serialized by another model's FMU "
                      "(this is %s, GUID %s)", mbs_model_name(), mbs_model_guid());
    if (n != PAYLOAD_SIZE || size != SER_SIZE)
        return ERR(c, "fmi2DeSerializeFMUstate: %lu bytes with a payload of %lu, expected %lu and %lu "
                      "(truncated, or another build)", (unsigned long)size, (unsigned long)n,
                   (unsigned long)SER_SIZE, (unsigned long)PAYLOAD_SIZE);
    memcpy(&sum, serializedState + 16 + SER_GUID, 8);
    if (hash64(serializedState + SER_HEAD, PAYLOAD_SIZE) != sum)
        return ERR(c, "fmi2DeSerializeFMUstate: the serialized state is corrupt (checksum mismatch)");
    if (!payload_ok((const unsigned char *)serializedState + SER_HEAD))
        return ERR(c, "fmi2DeSerializeFMUstate: the serialized state is corrupt (invalid fields)");
    if (*FMUstate != NULL) {
        s = as_state(c, *FMUstate, "fmi2DeSerializeFMUstate");
        if (s == NULL)
            return fmi2Error;
    } else {
        s = alloc_state(c);
        if (s == NULL)
            return ERR(c, "fmi2DeSerializeFMUstate: out of memory");
        *FMUstate = s;
    }
    memcpy(payload(s), serializedState + SER_HEAD, PAYLOAD_SIZE);
    s->checksum = sum;
    return fmi2OK;
}

/* ---------------------------------------------------------------- directional derivatives */

fmi2Status fmi2GetDirectionalDerivative(fmi2Component comp, const fmi2ValueReference vUnknown_ref[],
                                        size_t nUnknown, const fmi2ValueReference vKnown_ref[],
                                        size_t nKnown, const fmi2Real dvKnown[], fmi2Real dvUnknown[])
{
    component *c = (component *)comp;
    int sizes[16], nu, vr_u;
    size_t i;
    if (!check_state(c, "fmi2GetDirectionalDerivative", S_STEP | S_TERM))
        return fmi2Error;
    if ((nUnknown > 0 && (vUnknown_ref == NULL || dvUnknown == NULL)) ||
        (nKnown > 0 && (vKnown_ref == NULL || dvKnown == NULL)))
        return ERR(c, "fmi2GetDirectionalDerivative: NULL argument");
    mbs_model_sizes(sizes);
    nu = sizes[2];
    vr_u = sizes[12];
    if (nu == 0 && nKnown > 0)
        return ERR(c, "fmi2GetDirectionalDerivative: the model has no inputs, so no knowns");
    {
    double du[nu > 0 ? nu : 1];
    memset(du, 0, sizeof du);
    for (i = 0; i < nKnown; i++) {
        if (mbs_var_kind(vKnown_ref[i]) != MBS_VAR_INPUT)
            return ERR(c, "fmi2GetDirectionalDerivative: known %u is not an input (the knowns of a "
                          "co-simulation FMU after initialization are its inputs)", (unsigned)vKnown_ref[i]);
        if (!isfinite(dvKnown[i]))
            return ERR(c, "fmi2GetDirectionalDerivative: seed for '%s' is not finite",
                       mbs_var_name(vKnown_ref[i]));
        du[vKnown_ref[i] - (unsigned)vr_u] += dvKnown[i];
    }
    if (mbs_inst_output_derivatives(c->I, du, nUnknown, vUnknown_ref, dvUnknown) != MBS_OK)
        return ERR(c, "fmi2GetDirectionalDerivative: %s", mbs_inst_message(c->I));
    }
    return fmi2OK;
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
    return ERR((component *)comp, "fmi2SetRealInputDerivatives: not supported (canInterpolateInputs=false)");
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
    return ERR((component *)comp,
               "fmi2GetRealOutputDerivatives: not supported (maxOutputDerivativeOrder=0)");
}

fmi2Status fmi2DoStep(fmi2Component comp, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize, fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    component *c = (component *)comp;
    double t_wall;
    (void)noSetFMUStatePriorToCurrentPoint;
    if (!check_state(c, "fmi2DoStep", S_STEP))
        return fmi2Error;
    t_wall = now_seconds();
    if (mbs_inst_do_step(c->I, currentCommunicationPoint, communicationStepSize) != MBS_OK) {
        /* a refused call (bad arguments) leaves the FMU usable; a failed integration does not */
        if (mbs_inst_last_code(c->I) != 0)
            c->state = ST_ERROR;
        return ERR(c, "fmi2DoStep: %s", mbs_inst_message(c->I));
    }
    c->do_step_seconds += now_seconds() - t_wall;
    c->n_do_step++;
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component comp)
{
    return ERR((component *)comp, "fmi2CancelStep: fmi2DoStep is never asynchronous");
}

/* The status getters: a NULL value pointer is an error; a kind they do not report gives
 * fmi2Discard (fmi2DoStep is never asynchronous, so there is nothing pending to ask about). */
static fmi2Status status_args(fmi2Component comp, const void *value, const char *fn)
{
    if (comp == NULL)
        return fmi2Error;
    if (value == NULL)
        return ERR((component *)comp, "%s: NULL value pointer", fn);
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
        *value = mbs_inst_time(((component *)comp)->I);
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
