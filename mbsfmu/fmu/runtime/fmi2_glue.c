/*
 * fmi2_glue.c -- generic FMI 2.0 Co-Simulation glue of the native (Python-free) mbsfmu FMUs.
 *
 * One file for all models.  The model-specific parts come from two generated files written next
 * to it by mbsfmu.fmu.native:
 *   model.c         -- mbs_dynamics() etc. and the size macros MBS_NY, MBS_NPRM, MBS_NU, MBS_NTP, MBS_NC
 *                      (mbsfmu.codegen.c_source.generate_c)
 *   model_config.h  -- MBS_GUID, MBS_NVARS, the variable names and start values in value-reference
 *                      order (mbsfmu.fmu.model_description.fmu_variables)
 *
 * Value-reference layout (trees, MBS_NC == 0, MBS_NTP == 0):
 *   [0, f)                 coordinates y            (f = MBS_NY)
 *   [f, 2f)                velocities der(y)
 *   [2f, 2f+NPRM)          model constants (prm)
 *   VR_RTOL, VR_ATOL, VR_HMAX   solver_rtol, solver_atol, max_internal_step
 *   [VR_U, VR_U+NU)        inputs (u)
 *
 * Each fmi2DoStep integrates x = (y, yd) from t to t + h with the RKSTAB integrator
 * (mbs_rkstab.c, plain DOPRI5 for trees); x' = (yd, ydd) with M ydd = q - k solved by Cholesky.
 * Inputs are held constant over the step.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "mbs_linalg.h"
#include "mbs_rkstab.h"

#include "model.c"
#include "model_config.h"

#if MBS_NTP != 0
#error "native FMUs do not support time parameters yet"
#endif
#if MBS_NC != 0
#error "native FMUs do not support constraints (loops) yet"
#endif

#define F MBS_NY
#define NX (2 * MBS_NY)
#define VR_PRM (2 * MBS_NY)
#define VR_RTOL (VR_PRM + MBS_NPRM)
#define VR_ATOL (VR_RTOL + 1)
#define VR_HMAX (VR_RTOL + 2)
#define VR_U (VR_RTOL + 3)
#define NVARS (VR_U + MBS_NU)

#if NVARS != MBS_NVARS
#error "model_config.h does not match model.c"
#endif

#define MAX_STEPS_PER_CALL 10000000L

typedef enum { ST_INSTANTIATED, ST_INIT, ST_STEP, ST_TERMINATED, ST_ERROR } inst_state;

typedef struct {
    fmi2CallbackFunctions cb;
    char name[256];
    int logging_on;
    int used_cb_alloc;
    inst_state state;
    double v[NVARS];
    double t;
    double x[NX];
    int fsal_dirty;
    mbs_rkstab rk;
    double work[MBS_RKSTAB_WORK_SIZE(NX)];
    double dyn[F * F + F]; /* M then q - k */
    double tp_dummy[1];
    char msg[512];
} instance;

/* ---------------------------------------------------------------- logging */

static void log_msg(instance *c, fmi2Status status, const char *category, const char *fmt, ...)
{
    char buf[1024], esc[2048];
    va_list ap;
    size_t i, j = 0;
    if (c == NULL || c->cb.logger == NULL)
        return;
    if (status == fmi2OK && !c->logging_on)
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

/* ---------------------------------------------------------------- model */

static int rhs(void *ctx, double t, const double *x, double *xdot)
{
    instance *c = (instance *)ctx;
    double *M = c->dyn, *h = c->dyn + F * F;
    int i, rc;
    mbs_dynamics(t, x, x + F, c->v + VR_PRM, c->v + VR_U, c->tp_dummy, c->dyn);
    rc = mbs_chol_factor(F, M);
    if (rc != 0)
        return rc;
    rc = mbs_chol_solve(F, M, h);
    if (rc != 0)
        return rc;
    for (i = 0; i < F; i++) {
        xdot[i] = x[F + i];
        xdot[F + i] = h[i];
    }
    return 0;
}

static void reset_values(instance *c)
{
    memcpy(c->v, mbs_start, sizeof c->v);
    c->t = 0.0;
    c->fsal_dirty = 1;
}

static int check_solver_values(instance *c)
{
    double rtol = c->v[VR_RTOL], atol = c->v[VR_ATOL], hmax = c->v[VR_HMAX];
    if (!(rtol > 0.0)) {
        log_msg(c, fmi2Error, "logStatusError", "solver_rtol must be > 0 (got %g)", rtol);
        return 0;
    }
    if (!(atol >= 0.0)) {
        log_msg(c, fmi2Error, "logStatusError", "solver_atol must be >= 0 (got %g)", atol);
        return 0;
    }
    if (!(hmax >= 0.0)) {
        log_msg(c, fmi2Error, "logStatusError", "max_internal_step must be >= 0 (got %g)", hmax);
        return 0;
    }
    return 1;
}

/* ---------------------------------------------------------------- common functions */

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }

const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component comp, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
    instance *c = (instance *)comp;
    size_t i;
    if (c == NULL)
        return fmi2Error;
    for (i = 0; i < nCategories; i++) {
        const char *k = categories[i];
        if (k == NULL || (strcmp(k, "logEvents") && strcmp(k, "logStatusWarning") &&
                          strcmp(k, "logStatusError") && strcmp(k, "logAll")))
            return ERR(c, "fmi2SetDebugLogging: unknown log category '%s'", k ? k : "(null)");
    }
    c->logging_on = loggingOn ? 1 : 0;
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
    c->state = ST_INSTANTIATED;
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
    (void)toleranceDefined;
    (void)tolerance;
    (void)stopTimeDefined;
    (void)stopTime;
    if (!check_state(c, "fmi2SetupExperiment", S_INST))
        return fmi2Error;
    if (!isfinite(startTime))
        return ERR(c, "fmi2SetupExperiment: start time is not finite");
    c->t = startTime;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component comp)
{
    instance *c = (instance *)comp;
    if (!check_state(c, "fmi2EnterInitializationMode", S_INST))
        return fmi2Error;
    c->state = ST_INIT;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component comp)
{
    instance *c = (instance *)comp;
    double xdot[NX];
    int rc;
    if (!check_state(c, "fmi2ExitInitializationMode", S_INIT))
        return fmi2Error;
    if (!check_solver_values(c)) {
        c->state = ST_ERROR;
        return fmi2Error;
    }
    memcpy(c->x, c->v, sizeof c->x);
    rc = mbs_rkstab_init(&c->rk, NX, c->work, c->v[VR_RTOL], c->v[VR_ATOL], c->v[VR_HMAX]);
    if (rc != MBS_RKSTAB_OK) {
        c->state = ST_ERROR;
        return ERR(c, "fmi2ExitInitializationMode: integrator setup failed: %s",
                   mbs_rkstab_message(rc));
    }
    rc = rhs(c, c->t, c->x, xdot);
    if (rc != 0) {
        c->state = ST_ERROR;
        return ERR(c, "fmi2ExitInitializationMode: the mass matrix is not positive definite "
                      "(Cholesky pivot %d) at the initial state", rc);
    }
    c->fsal_dirty = 1;
    c->state = ST_STEP;
    log_msg(c, fmi2OK, "logEvents", "fmi2ExitInitializationMode: t=%g", c->t);
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component comp)
{
    instance *c = (instance *)comp;
    if (!check_state(c, "fmi2Terminate", S_STEP | S_ERR))
        return fmi2Error;
    c->state = ST_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component comp)
{
    instance *c = (instance *)comp;
    if (c == NULL)
        return fmi2Error;
    reset_values(c);
    c->state = ST_INSTANTIATED;
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
    for (i = 0; i < nvr; i++) {
        if (vr[i] >= NVARS)
            return ERR(c, "fmi2GetReal: unknown value reference %u", (unsigned)vr[i]);
        value[i] = c->v[vr[i]];
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                       const fmi2Real value[])
{
    instance *c = (instance *)comp;
    size_t i;
    if (!check_state(c, "fmi2SetReal", S_INST | S_INIT | S_STEP))
        return fmi2Error;
    if (nvr > 0 && (vr == NULL || value == NULL))
        return ERR(c, "fmi2SetReal: NULL argument");
    /* check everything first so that a rejected call changes nothing */
    for (i = 0; i < nvr; i++) {
        if (vr[i] >= NVARS)
            return ERR(c, "fmi2SetReal: unknown value reference %u", (unsigned)vr[i]);
        if (!isfinite(value[i]))
            return ERR(c, "fmi2SetReal: value %g for variable '%s' is not finite", value[i],
                       mbs_names[vr[i]]);
        if (c->state == ST_STEP && vr[i] < (fmi2ValueReference)NX)
            return ERR(c, "fmi2SetReal: output '%s' cannot be set after initialization",
                       mbs_names[vr[i]]);
    }
    for (i = 0; i < nvr; i++)
        c->v[vr[i]] = value[i];
    if (nvr > 0)
        c->fsal_dirty = 1;
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

/* ---------------------------------------------------------------- unsupported features */

fmi2Status fmi2GetFMUstate(fmi2Component comp, fmi2FMUstate *FMUstate)
{
    (void)FMUstate;
    return ERR((instance *)comp, "fmi2GetFMUstate: not supported (canGetAndSetFMUstate=false)");
}

fmi2Status fmi2SetFMUstate(fmi2Component comp, fmi2FMUstate FMUstate)
{
    (void)FMUstate;
    return ERR((instance *)comp, "fmi2SetFMUstate: not supported (canGetAndSetFMUstate=false)");
}

fmi2Status fmi2FreeFMUstate(fmi2Component comp, fmi2FMUstate *FMUstate)
{
    (void)FMUstate;
    return ERR((instance *)comp, "fmi2FreeFMUstate: not supported (canGetAndSetFMUstate=false)");
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component comp, fmi2FMUstate FMUstate, size_t *size)
{
    (void)FMUstate;
    (void)size;
    return ERR((instance *)comp, "fmi2SerializedFMUstateSize: not supported (canSerializeFMUstate=false)");
}

fmi2Status fmi2SerializeFMUstate(fmi2Component comp, fmi2FMUstate FMUstate, fmi2Byte serializedState[],
                                 size_t size)
{
    (void)FMUstate;
    (void)serializedState;
    (void)size;
    return ERR((instance *)comp, "fmi2SerializeFMUstate: not supported (canSerializeFMUstate=false)");
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component comp, const fmi2Byte serializedState[], size_t size,
                                   fmi2FMUstate *FMUstate)
{
    (void)serializedState;
    (void)size;
    (void)FMUstate;
    return ERR((instance *)comp, "fmi2DeSerializeFMUstate: not supported (canSerializeFMUstate=false)");
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component comp, const fmi2ValueReference vUnknown_ref[],
                                        size_t nUnknown, const fmi2ValueReference vKnown_ref[],
                                        size_t nKnown, const fmi2Real dvKnown[], fmi2Real dvUnknown[])
{
    (void)vUnknown_ref;
    (void)nUnknown;
    (void)vKnown_ref;
    (void)nKnown;
    (void)dvKnown;
    (void)dvUnknown;
    return ERR((instance *)comp,
               "fmi2GetDirectionalDerivative: not supported (providesDirectionalDerivative=false)");
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
    double t, t_end;
    int rc;
    (void)noSetFMUStatePriorToCurrentPoint;
    if (!check_state(c, "fmi2DoStep", S_STEP))
        return fmi2Error;
    if (!(communicationStepSize > 0.0) || !isfinite(communicationStepSize))
        return ERR(c, "fmi2DoStep: communication step size must be > 0 (got %g)", communicationStepSize);
    if (!isfinite(currentCommunicationPoint))
        return ERR(c, "fmi2DoStep: current communication point is not finite");
    if (fabs(currentCommunicationPoint - c->t) > 1e-9 * (1.0 + fabs(c->t)))
        return ERR(c, "fmi2DoStep: current communication point %.17g does not match the FMU time %.17g",
                   currentCommunicationPoint, c->t);
    if (!check_solver_values(c))
        return fmi2Error;
    c->rk.rtol = c->v[VR_RTOL];
    c->rk.atol = c->v[VR_ATOL];
    c->rk.hmax = c->v[VR_HMAX] > 0.0 ? c->v[VR_HMAX] : INFINITY;
    if (c->fsal_dirty) {
        mbs_rkstab_reset_fsal(&c->rk);
        c->fsal_dirty = 0;
    }
    t = c->t;
    t_end = currentCommunicationPoint + communicationStepSize;
    rc = mbs_rkstab_advance(&c->rk, rhs, NULL, c, &t, c->x, t_end, MAX_STEPS_PER_CALL);
    if (rc != MBS_RKSTAB_OK) {
        c->state = ST_ERROR;
        return ERR(c, "fmi2DoStep: integration from t=%.17g to %.17g failed at t=%.17g: %s",
                   currentCommunicationPoint, t_end, t, mbs_rkstab_message(rc));
    }
    c->t = t_end;
    memcpy(c->v, c->x, sizeof c->x);
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component comp)
{
    return ERR((instance *)comp, "fmi2CancelStep: fmi2DoStep is never asynchronous");
}

fmi2Status fmi2GetStatus(fmi2Component comp, const fmi2StatusKind s, fmi2Status *value)
{
    (void)s;
    (void)value;
    if (comp == NULL)
        return fmi2Error;
    return fmi2Discard; /* fmi2DoStep never returns fmi2Pending */
}

fmi2Status fmi2GetRealStatus(fmi2Component comp, const fmi2StatusKind s, fmi2Real *value)
{
    instance *c = (instance *)comp;
    if (c == NULL)
        return fmi2Error;
    if (s == fmi2LastSuccessfulTime && value != NULL) {
        *value = c->t;
        return fmi2OK;
    }
    return fmi2Discard;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component comp, const fmi2StatusKind s, fmi2Integer *value)
{
    (void)s;
    (void)value;
    return comp == NULL ? fmi2Error : fmi2Discard;
}

fmi2Status fmi2GetBooleanStatus(fmi2Component comp, const fmi2StatusKind s, fmi2Boolean *value)
{
    if (comp == NULL)
        return fmi2Error;
    if (s == fmi2Terminated && value != NULL) {
        *value = fmi2False;
        return fmi2OK;
    }
    return fmi2Discard;
}

fmi2Status fmi2GetStringStatus(fmi2Component comp, const fmi2StatusKind s, fmi2String *value)
{
    (void)s;
    (void)value;
    return comp == NULL ? fmi2Error : fmi2Discard;
}
