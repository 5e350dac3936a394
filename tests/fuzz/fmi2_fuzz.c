/*
 * fmi2_fuzz.c -- the FMI 2.0 adapter of the fuzz driver (fmi_fuzz.h): the driver's calls as FMI
 * 2.0 functions, and the calls only FMI 2.0 has (the status getters, fmi2CancelStep, the input
 * and output derivatives, Boolean and String access, instantiation with an unknown fmi2Type or
 * without callbacks).  Linked with fmi_fuzz.c and an FMU's sources/ with fmi2_glue.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "fmi_fuzz.h"

const int fz_version = 2;

const char *const fz_name[FN_COUNT] = {
    [FN_INSTANTIATE_CS] = "fmi2Instantiate", [FN_INSTANTIATE_ME] = "fmi2Instantiate",
    [FN_SETUP] = "fmi2SetupExperiment", [FN_ENTER_INIT] = "fmi2EnterInitializationMode",
    [FN_EXIT_INIT] = "fmi2ExitInitializationMode", [FN_TERMINATE] = "fmi2Terminate", [FN_RESET] = "fmi2Reset",
    [FN_GET_REAL] = "fmi2GetReal", [FN_SET_REAL] = "fmi2SetReal", [FN_GET_INT] = "fmi2GetInteger",
    [FN_SET_INT] = "fmi2SetInteger", [FN_DEBUG_LOGGING] = "fmi2SetDebugLogging",
    [FN_GET_STATE] = "fmi2GetFMUstate", [FN_SET_STATE] = "fmi2SetFMUstate", [FN_FREE_STATE] = "fmi2FreeFMUstate",
    [FN_STATE_SIZE] = "fmi2SerializedFMUstateSize", [FN_SERIALIZE] = "fmi2SerializeFMUstate",
    [FN_DESERIALIZE] = "fmi2DeSerializeFMUstate", [FN_DO_STEP] = "fmi2DoStep",
    [FN_DIRECTIONAL] = "fmi2GetDirectionalDerivative", [FN_ADJOINT] = "(no adjoint in FMI 2.0)",
    [FN_ENTER_EVENT] = "fmi2EnterEventMode", [FN_UPDATE] = "fmi2NewDiscreteStates",
    [FN_ENTER_CONT] = "fmi2EnterContinuousTimeMode", [FN_COMPLETED] = "fmi2CompletedIntegratorStep",
    [FN_SET_TIME] = "fmi2SetTime", [FN_SET_STATES] = "fmi2SetContinuousStates",
    [FN_GET_STATES] = "fmi2GetContinuousStates", [FN_DERIVATIVES] = "fmi2GetDerivatives",
    [FN_EVENT_INDICATORS] = "fmi2GetEventIndicators", [FN_NOMINALS] = "fmi2GetNominalsOfContinuousStates",
};

static void logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                   fmi2String message, ...)
{
    char buf[1024];
    va_list ap;
    (void)env;
    (void)name;
    (void)category;
    va_start(ap, message);
    vsnprintf(buf, sizeof buf, message, ap);
    va_end(ap);
    fz_log((int)status, buf);
}

static const fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};

/* ---------------------------------------------------------------- the driver's calls */

void *fz_instantiate(int me, const char *name, const char *token, int logging)
{
    return fmi2Instantiate(name, me ? fmi2ModelExchange : fmi2CoSimulation, token, NULL, &callbacks, fmi2False,
                           logging ? fmi2True : fmi2False);
}

void fz_free_instance(void *c) { fmi2FreeInstance(c); }

int fz_setup(void *c, int tol_def, double tol, double start, int stop_def, double stop)
{
    return fmi2SetupExperiment(c, tol_def, tol, start, stop_def, stop);
}

int fz_enter_init(void *c, int tol_def, double tol, double start, int stop_def, double stop)
{
    (void)tol_def, (void)tol, (void)start, (void)stop_def, (void)stop; /* fmi2SetupExperiment's */
    return fmi2EnterInitializationMode(c);
}

int fz_exit_init(void *c) { return fmi2ExitInitializationMode(c); }
int fz_terminate(void *c) { return fmi2Terminate(c); }
int fz_reset(void *c) { return fmi2Reset(c); }

int fz_debug_logging(void *c, int on, size_t n, const char *const *categories)
{
    return fmi2SetDebugLogging(c, on, n, (const fmi2String *)categories);
}

int fz_get_real(void *c, const unsigned *vr, size_t n, double *v, size_t nvalues)
{
    (void)nvalues;
    return fmi2GetReal(c, vr, n, v);
}

int fz_set_real(void *c, const unsigned *vr, size_t n, const double *v, size_t nvalues)
{
    (void)nvalues;
    return fmi2SetReal(c, vr, n, v);
}

int fz_get_int(void *c, const unsigned *vr, size_t n, long long *v, size_t nvalues)
{
    fmi2Integer iv[8] = {0};
    size_t i;
    int st;
    (void)nvalues;
    st = fmi2GetInteger(c, vr, n, iv);
    for (i = 0; i < n && i < 8; i++)
        v[i] = iv[i];
    return st;
}

int fz_set_int(void *c, const unsigned *vr, size_t n, const long long *v, size_t nvalues)
{
    fmi2Integer iv[8] = {0};
    size_t i;
    (void)nvalues;
    for (i = 0; i < n && i < 8; i++)
        iv[i] = (fmi2Integer)v[i];
    return fmi2SetInteger(c, vr, n, iv);
}

int fz_get_state(void *c, void **s) { return fmi2GetFMUstate(c, s); }
int fz_set_state(void *c, void *s) { return fmi2SetFMUstate(c, s); }
int fz_free_state(void *c, void **s) { return fmi2FreeFMUstate(c, s); }
int fz_state_size(void *c, void *s, size_t *n) { return fmi2SerializedFMUstateSize(c, s, n); }

int fz_serialize(void *c, void *s, unsigned char *bytes, size_t n)
{
    return fmi2SerializeFMUstate(c, s, (fmi2Byte *)bytes, n);
}

int fz_deserialize(void *c, const unsigned char *bytes, size_t n, void **s)
{
    return fmi2DeSerializeFMUstate(c, (const fmi2Byte *)bytes, n, s);
}

int fz_do_step(void *c, double t, double h, int null_out, double *last)
{
    int st = fmi2DoStep(c, t, h, fmi2True);
    (void)null_out;
    if (c != NULL)
        fmi2GetRealStatus(c, fmi2LastSuccessfulTime, last);
    return st;
}

int fz_directional(void *c, const unsigned *unk, size_t nu, const unsigned *kn, size_t nk, const double *seed,
                   size_t nseed, double *sens, size_t nsens)
{
    (void)nseed, (void)nsens;
    return fmi2GetDirectionalDerivative(c, unk, nu, kn, nk, seed, sens);
}

int fz_adjoint(void *c, const unsigned *unk, size_t nu, const unsigned *kn, size_t nk, const double *seed,
               size_t nseed, double *sens, size_t nsens)
{
    (void)c, (void)unk, (void)nu, (void)kn, (void)nk, (void)seed, (void)nseed, (void)sens, (void)nsens;
    return FZ_ERROR; /* never called: FMI 2.0 has no adjoint derivatives */
}

int fz_enter_event(void *c) { return fmi2EnterEventMode(c); }

int fz_update(void *c, int null_out, int *states_changed)
{
    fmi2EventInfo info;
    int st = fmi2NewDiscreteStates(c, null_out ? NULL : &info);
    if (st == fmi2OK && !null_out)
        *states_changed = info.valuesOfContinuousStatesChanged == fmi2True;
    return st;
}

int fz_enter_cont(void *c) { return fmi2EnterContinuousTimeMode(c); }

int fz_completed(void *c, int null_out, int *enter_event)
{
    fmi2Boolean ev = fmi2False, term = fmi2False;
    int st = fmi2CompletedIntegratorStep(c, fmi2True, null_out ? NULL : &ev, &term);
    if (st == fmi2OK && !null_out) {
        *enter_event = ev == fmi2True;
        if (term != fmi2False)
            wrong_result("fmi2CompletedIntegratorStep", "terminateSimulation is set");
    }
    return st;
}

int fz_set_time(void *c, double t) { return fmi2SetTime(c, t); }
int fz_set_states(void *c, const double *x, size_t n) { return fmi2SetContinuousStates(c, x, n); }
int fz_get_states(void *c, double *x, size_t n) { return fmi2GetContinuousStates(c, x, n); }
int fz_derivatives(void *c, double *xdot, size_t n) { return fmi2GetDerivatives(c, xdot, n); }
int fz_event_indicators(void *c, double *z, size_t n) { return fmi2GetEventIndicators(c, z, n); }
int fz_nominals(void *c, double *x, size_t n) { return fmi2GetNominalsOfContinuousStates(c, x, n); }

/* ---------------------------------------------------------------- FMI 2.0's own calls */

/* The status getters (Co-Simulation's; the FMU answers them for either interface) and
 * fmi2CancelStep: a NULL value pointer is refused, fmi2CancelStep always. */
static void call_status(inst *I)
{
    fmi2Status sv;
    fmi2Real rv = NAN;
    fmi2Integer iv;
    fmi2Boolean bv;
    fmi2String strv;
    int null_arg = chance(0.3), which = irand(6);
    int st;
    const char *fn;
    fz_begin();
    switch (which) {
    case 0: st = fmi2GetStatus(I->c, fmi2DoStepStatus, null_arg ? NULL : &sv); fn = "fmi2GetStatus"; break;
    case 1: st = fmi2GetRealStatus(I->c, fmi2LastSuccessfulTime, null_arg ? NULL : &rv); fn = "fmi2GetRealStatus"; break;
    case 2: st = fmi2GetIntegerStatus(I->c, fmi2DoStepStatus, null_arg ? NULL : &iv); fn = "fmi2GetIntegerStatus"; break;
    case 3: st = fmi2GetBooleanStatus(I->c, fmi2Terminated, null_arg ? NULL : &bv); fn = "fmi2GetBooleanStatus"; break;
    case 4: st = fmi2GetStringStatus(I->c, fmi2PendingStatus, null_arg ? NULL : &strv); fn = "fmi2GetStringStatus"; break;
    default: st = fmi2CancelStep(I->c); fn = "fmi2CancelStep"; null_arg = 1; break;
    }
    if (null_arg)
        expect_refused(st, fn, which == 5 ? "never asynchronous" : "NULL", 1);
    else
        outcome(st, fn, 1);
    if (which == 1 && !null_arg && st == fmi2OK && rv != I->t && I->st != S_INST) {
        lost++; /* fmi2LastSuccessfulTime must be the last communication point */
        fprintf(stderr, "LOST: last successful time %g, expected %g\n", rv, I->t);
    }
}

static void call_input_derivatives(inst *I)
{
    fmi2ValueReference vr[1] = {0};
    fmi2Integer order[1] = {1};
    double v[1] = {0.0};
    size_t n = (size_t)irand(2);
    int st, get = chance(0.5);
    const char *fn = get ? "fmi2GetRealOutputDerivatives" : "fmi2SetRealInputDerivatives";
    fz_begin();
    st = get ? fmi2GetRealOutputDerivatives(I->c, vr, n, order, v) : fmi2SetRealInputDerivatives(I->c, vr, n, order, v);
    if (n > 0)
        expect_refused(st, fn, "not supported", 1);
    else
        outcome(st, fn, 1);
}

static void call_other_types(inst *I)
{
    fmi2ValueReference vr[1];
    fmi2Boolean bv[1] = {0};
    fmi2String sv[1] = {"x"};
    size_t n = (size_t)irand(2);
    int st;
    const char *fn;
    char token[32];
    vr[0] = any_vr();
    take_snapshot(I);
    fz_begin();
    switch (irand(4)) {
    case 0: st = fmi2GetBoolean(I->c, vr, n, bv); fn = "fmi2GetBoolean"; break;
    case 1: st = fmi2SetBoolean(I->c, vr, n, bv); fn = "fmi2SetBoolean"; break;
    case 2: st = fmi2GetString(I->c, vr, n, sv); fn = "fmi2GetString"; break;
    default: st = fmi2SetString(I->c, vr, n, sv); fn = "fmi2SetString"; break;
    }
    if (n > 0) {
        snprintf(token, sizeof token, "%u", vr[0]);
        expect_refused(st, fn, token, 1);
        check_unchanged(I, fn);
    } else
        outcome(st, fn, 1);
}

/* an fmi2Type that is neither interface; no callbacks (so no logger to tell) */
static void call_odd_instantiation(void)
{
    fmi2Component c;
    fz_begin();
    if (chance(0.5)) {
        c = fmi2Instantiate("i", (fmi2Type)7, guid, NULL, &callbacks, fmi2False, fmi2False);
        expect_refused(c == NULL ? FZ_ERROR : FZ_OK, "fmi2Instantiate", "does not provide", 1);
    } else {
        c = fmi2Instantiate("i", fmi2CoSimulation, guid, NULL, NULL, fmi2False, fmi2False);
        expect_refused(c == NULL ? FZ_ERROR : FZ_OK, "fmi2Instantiate", NULL, 0);
    }
    if (c != NULL)
        fmi2FreeInstance(c);
}

void fz_version_call(inst *I)
{
    switch (irand(5)) {
    case 0: case 1: call_status(I); break;
    case 2: call_input_derivatives(I); break;
    case 3: call_other_types(I); break;
    default: call_odd_instantiation(); break;
    }
}
