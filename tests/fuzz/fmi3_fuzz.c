/*
 * fmi3_fuzz.c -- the FMI 3.0 adapter of the fuzz driver (fmi_fuzz.h): the driver's calls as FMI
 * 3.0 functions (Float64, the Enumeration 'method' through Int64, fmi3DoStep's out-arguments,
 * adjoint derivatives), and the calls only FMI 3.0 has: the accessors of the types the model has
 * no variables of, clocks, configuration and step mode, variable dependencies, output
 * derivatives, the numbers of continuous states and event indicators, fmi3EvaluateDiscreteStates,
 * and the instantiations the FMU refuses (Scheduled Execution, event mode, intermediate updates).
 * Linked with fmi_fuzz.c and an FMU's sources/ with fmi3_glue.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#include "fmi_fuzz.h"

const int fz_version = 3;

const char *const fz_name[FN_COUNT] = {
    [FN_INSTANTIATE_CS] = "fmi3InstantiateCoSimulation", [FN_INSTANTIATE_ME] = "fmi3InstantiateModelExchange",
    [FN_SETUP] = "(no fmi3SetupExperiment)", [FN_ENTER_INIT] = "fmi3EnterInitializationMode",
    [FN_EXIT_INIT] = "fmi3ExitInitializationMode", [FN_TERMINATE] = "fmi3Terminate", [FN_RESET] = "fmi3Reset",
    [FN_GET_REAL] = "fmi3GetFloat64", [FN_SET_REAL] = "fmi3SetFloat64", [FN_GET_INT] = "fmi3GetInt64",
    [FN_SET_INT] = "fmi3SetInt64", [FN_DEBUG_LOGGING] = "fmi3SetDebugLogging",
    [FN_GET_STATE] = "fmi3GetFMUState", [FN_SET_STATE] = "fmi3SetFMUState", [FN_FREE_STATE] = "fmi3FreeFMUState",
    [FN_STATE_SIZE] = "fmi3SerializedFMUStateSize", [FN_SERIALIZE] = "fmi3SerializeFMUState",
    [FN_DESERIALIZE] = "fmi3DeserializeFMUState", [FN_DO_STEP] = "fmi3DoStep",
    [FN_DIRECTIONAL] = "fmi3GetDirectionalDerivative", [FN_ADJOINT] = "fmi3GetAdjointDerivative",
    [FN_ENTER_EVENT] = "fmi3EnterEventMode", [FN_UPDATE] = "fmi3UpdateDiscreteStates",
    [FN_ENTER_CONT] = "fmi3EnterContinuousTimeMode", [FN_COMPLETED] = "fmi3CompletedIntegratorStep",
    [FN_SET_TIME] = "fmi3SetTime", [FN_SET_STATES] = "fmi3SetContinuousStates",
    [FN_GET_STATES] = "fmi3GetContinuousStates", [FN_DERIVATIVES] = "fmi3GetContinuousStateDerivatives",
    [FN_EVENT_INDICATORS] = "fmi3GetEventIndicators", [FN_NOMINALS] = "fmi3GetNominalsOfContinuousStates",
};

static void logger(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category, fmi3String message)
{
    (void)env;
    (void)category;
    fz_log((int)status, message);
}

/* ---------------------------------------------------------------- the driver's calls */

void *fz_instantiate(int me, const char *name, const char *token, int logging)
{
    if (me)
        return fmi3InstantiateModelExchange(name, token, NULL, false, logging != 0, NULL, logger);
    return fmi3InstantiateCoSimulation(name, token, NULL, false, logging != 0, false, false, NULL, 0, NULL, logger,
                                       NULL);
}

void fz_free_instance(void *c) { fmi3FreeInstance(c); }

int fz_setup(void *c, int tol_def, double tol, double start, int stop_def, double stop)
{
    (void)c, (void)tol_def, (void)tol, (void)start, (void)stop_def, (void)stop;
    return FZ_ERROR; /* never called: fmi3EnterInitializationMode sets the experiment up */
}

int fz_enter_init(void *c, int tol_def, double tol, double start, int stop_def, double stop)
{
    return fmi3EnterInitializationMode(c, tol_def != 0, tol, start, stop_def != 0, stop);
}

int fz_exit_init(void *c) { return fmi3ExitInitializationMode(c); }
int fz_terminate(void *c) { return fmi3Terminate(c); }
int fz_reset(void *c) { return fmi3Reset(c); }

int fz_debug_logging(void *c, int on, size_t n, const char *const *categories)
{
    return fmi3SetDebugLogging(c, on != 0, n, (const fmi3String *)categories);
}

int fz_get_real(void *c, const unsigned *vr, size_t n, double *v, size_t nvalues)
{
    return fmi3GetFloat64(c, vr, n, v, nvalues);
}

int fz_set_real(void *c, const unsigned *vr, size_t n, const double *v, size_t nvalues)
{
    return fmi3SetFloat64(c, vr, n, v, nvalues);
}

int fz_get_int(void *c, const unsigned *vr, size_t n, long long *v, size_t nvalues)
{
    fmi3Int64 iv[8] = {0};
    size_t i;
    int st = fmi3GetInt64(c, vr, n, iv, nvalues);
    for (i = 0; i < n && i < 8; i++)
        v[i] = (long long)iv[i];
    return st;
}

int fz_set_int(void *c, const unsigned *vr, size_t n, const long long *v, size_t nvalues)
{
    fmi3Int64 iv[8] = {0};
    size_t i;
    for (i = 0; i < n && i < 8; i++)
        iv[i] = (fmi3Int64)v[i];
    return fmi3SetInt64(c, vr, n, iv, nvalues);
}

int fz_get_state(void *c, void **s) { return fmi3GetFMUState(c, s); }
int fz_set_state(void *c, void *s) { return fmi3SetFMUState(c, s); }
int fz_free_state(void *c, void **s) { return fmi3FreeFMUState(c, s); }
int fz_state_size(void *c, void *s, size_t *n) { return fmi3SerializedFMUStateSize(c, s, n); }
int fz_serialize(void *c, void *s, unsigned char *bytes, size_t n) { return fmi3SerializeFMUState(c, s, bytes, n); }

int fz_deserialize(void *c, const unsigned char *bytes, size_t n, void **s)
{
    return fmi3DeserializeFMUState(c, bytes, n, s);
}

int fz_do_step(void *c, double t, double h, int null_out, double *last)
{
    fmi3Boolean event = true, terminate = true, early = true;
    fmi3Float64 lst = NAN;
    int st = fmi3DoStep(c, t, h, true, &event, null_out ? NULL : &terminate, &early, &lst);
    if (!null_out) {
        *last = lst;
        if (c != NULL && (event || terminate || early))
            wrong_result("fmi3DoStep", "an event, termination or early return is said");
    }
    return st;
}

int fz_directional(void *c, const unsigned *unk, size_t nu, const unsigned *kn, size_t nk, const double *seed,
                   size_t nseed, double *sens, size_t nsens)
{
    return fmi3GetDirectionalDerivative(c, unk, nu, kn, nk, seed, nseed, sens, nsens);
}

int fz_adjoint(void *c, const unsigned *unk, size_t nu, const unsigned *kn, size_t nk, const double *seed,
               size_t nseed, double *sens, size_t nsens)
{
    return fmi3GetAdjointDerivative(c, unk, nu, kn, nk, seed, nseed, sens, nsens);
}

int fz_enter_event(void *c) { return fmi3EnterEventMode(c); }

int fz_update(void *c, int null_out, int *states_changed)
{
    fmi3Boolean need = true, term = true, nominals = true, values = false, defined = true;
    fmi3Float64 next = NAN;
    int st = fmi3UpdateDiscreteStates(c, &need, &term, &nominals, null_out ? NULL : &values, &defined, &next);
    if (st == fmi3OK && !null_out) {
        *states_changed = values;
        if (need || term || nominals || defined)
            wrong_result("fmi3UpdateDiscreteStates", "a discrete update, termination, new nominals or a time "
                                                     "event is said");
    }
    return st;
}

int fz_enter_cont(void *c) { return fmi3EnterContinuousTimeMode(c); }

int fz_completed(void *c, int null_out, int *enter_event)
{
    fmi3Boolean ev = false, term = false;
    int st = fmi3CompletedIntegratorStep(c, true, null_out ? NULL : &ev, &term);
    if (st == fmi3OK && !null_out) {
        *enter_event = ev;
        if (term)
            wrong_result("fmi3CompletedIntegratorStep", "terminateSimulation is set");
    }
    return st;
}

int fz_set_time(void *c, double t) { return fmi3SetTime(c, t); }
int fz_set_states(void *c, const double *x, size_t n) { return fmi3SetContinuousStates(c, x, n); }
int fz_get_states(void *c, double *x, size_t n) { return fmi3GetContinuousStates(c, x, n); }
int fz_derivatives(void *c, double *xdot, size_t n) { return fmi3GetContinuousStateDerivatives(c, xdot, n); }
int fz_event_indicators(void *c, double *z, size_t n) { return fmi3GetEventIndicators(c, z, n); }
int fz_nominals(void *c, double *x, size_t n) { return fmi3GetNominalsOfContinuousStates(c, x, n); }

/* ---------------------------------------------------------------- FMI 3.0's own calls */

/* An accessor of a type the model has no variables of: an empty call is fine, any other names
 * the value reference (unknown, or a variable of another type) and changes nothing. */
static void call_other_types(inst *I)
{
    fmi3ValueReference vr[1];
    union {
        fmi3Float32 f32;
        fmi3Int8 i8;
        fmi3UInt8 u8;
        fmi3Int16 i16;
        fmi3UInt16 u16;
        fmi3Int32 i32;
        fmi3UInt32 u32;
        fmi3UInt64 u64;
        fmi3Boolean b;
        fmi3String s;
        fmi3Binary bin;
        fmi3Clock clk;
        fmi3Float64 f64;
    } v[1];
    size_t n = (size_t)irand(2), size[1] = {0};
    fmi3UInt64 cnt[1] = {0}, res[1] = {1};
    fmi3IntervalQualifier q[1];
    int which = irand(28), st;
    const char *fn;
    char token[32];
    vr[0] = any_vr();
    memset(v, 0, sizeof v);
    v[0].s = "x";
    take_snapshot(I);
    fz_begin();
    switch (which) {
    case 0: st = fmi3GetFloat32(I->c, vr, n, &v[0].f32, n); fn = "fmi3GetFloat32"; break;
    case 1: st = fmi3SetFloat32(I->c, vr, n, &v[0].f32, n); fn = "fmi3SetFloat32"; break;
    case 2: st = fmi3GetInt8(I->c, vr, n, &v[0].i8, n); fn = "fmi3GetInt8"; break;
    case 3: st = fmi3SetInt8(I->c, vr, n, &v[0].i8, n); fn = "fmi3SetInt8"; break;
    case 4: st = fmi3GetUInt8(I->c, vr, n, &v[0].u8, n); fn = "fmi3GetUInt8"; break;
    case 5: st = fmi3SetUInt8(I->c, vr, n, &v[0].u8, n); fn = "fmi3SetUInt8"; break;
    case 6: st = fmi3GetInt16(I->c, vr, n, &v[0].i16, n); fn = "fmi3GetInt16"; break;
    case 7: st = fmi3SetInt16(I->c, vr, n, &v[0].i16, n); fn = "fmi3SetInt16"; break;
    case 8: st = fmi3GetUInt16(I->c, vr, n, &v[0].u16, n); fn = "fmi3GetUInt16"; break;
    case 9: st = fmi3SetUInt16(I->c, vr, n, &v[0].u16, n); fn = "fmi3SetUInt16"; break;
    case 10: st = fmi3GetInt32(I->c, vr, n, &v[0].i32, n); fn = "fmi3GetInt32"; break;
    case 11: st = fmi3SetInt32(I->c, vr, n, &v[0].i32, n); fn = "fmi3SetInt32"; break;
    case 12: st = fmi3GetUInt32(I->c, vr, n, &v[0].u32, n); fn = "fmi3GetUInt32"; break;
    case 13: st = fmi3SetUInt32(I->c, vr, n, &v[0].u32, n); fn = "fmi3SetUInt32"; break;
    case 14: st = fmi3GetUInt64(I->c, vr, n, &v[0].u64, n); fn = "fmi3GetUInt64"; break;
    case 15: st = fmi3SetUInt64(I->c, vr, n, &v[0].u64, n); fn = "fmi3SetUInt64"; break;
    case 16: st = fmi3GetBoolean(I->c, vr, n, &v[0].b, n); fn = "fmi3GetBoolean"; break;
    case 17: st = fmi3SetBoolean(I->c, vr, n, &v[0].b, n); fn = "fmi3SetBoolean"; break;
    case 18: st = fmi3GetString(I->c, vr, n, &v[0].s, n); fn = "fmi3GetString"; break;
    case 19: st = fmi3SetString(I->c, vr, n, &v[0].s, n); fn = "fmi3SetString"; break;
    case 20: st = fmi3GetBinary(I->c, vr, n, size, &v[0].bin, n); fn = "fmi3GetBinary"; break;
    case 21: st = fmi3SetBinary(I->c, vr, n, size, &v[0].bin, n); fn = "fmi3SetBinary"; break;
    case 22: st = fmi3GetClock(I->c, vr, n, &v[0].clk); fn = "fmi3GetClock"; break;
    case 23: st = fmi3SetClock(I->c, vr, n, &v[0].clk); fn = "fmi3SetClock"; break;
    case 24: st = fmi3GetIntervalDecimal(I->c, vr, n, &v[0].f64, q); fn = "fmi3GetIntervalDecimal"; break;
    case 25: st = fmi3GetIntervalFraction(I->c, vr, n, cnt, res, q); fn = "fmi3GetIntervalFraction"; break;
    case 26: st = fmi3SetShiftDecimal(I->c, vr, n, &v[0].f64); fn = "fmi3SetShiftDecimal"; break;
    default: st = fmi3SetIntervalFraction(I->c, vr, n, cnt, res); fn = "fmi3SetIntervalFraction"; break;
    }
    if (n > 0) {
        snprintf(token, sizeof token, "%u", vr[0]);
        expect_refused(st, fn, token, 1);
        check_unchanged(I, fn);
    } else
        outcome(st, fn, 1);
}

/* What the FMU does not have: configuration mode (no structural parameters), step mode (its
 * Co-Simulation has no event mode), dependencies (they are in the model description), output
 * derivatives, clocks.  And what it answers: the numbers of continuous states (2 f) and event
 * indicators (0), fmi3EvaluateDiscreteStates. */
static void call_unsupported(inst *I)
{
    int which = irand(9), st, null_arg = chance(0.2);
    size_t n = 99, nd = 0;
    fmi3Int32 order[1] = {1};
    fmi3Float64 v[1] = {0.0};
    fmi3ValueReference vr[1] = {0};
    const char *fn = NULL, *token = NULL;
    take_snapshot(I);
    fz_begin();
    switch (which) {
    case 0: st = fmi3EnterConfigurationMode(I->c); fn = "fmi3EnterConfigurationMode"; token = "structural"; break;
    case 1: st = fmi3ExitConfigurationMode(I->c); fn = "fmi3ExitConfigurationMode"; token = "structural"; break;
    case 2: st = fmi3EnterStepMode(I->c); fn = "fmi3EnterStepMode"; token = "no event mode"; break;
    case 3:
        st = fmi3GetNumberOfVariableDependencies(I->c, 0, &nd);
        fn = "fmi3GetNumberOfVariableDependencies";
        token = "not provided";
        break;
    case 4: st = fmi3ActivateModelPartition(I->c, 0, 0.0); fn = "fmi3ActivateModelPartition"; token = "no clocks"; break;
    case 5:
        n = (size_t)irand(2);
        st = fmi3GetOutputDerivatives(I->c, vr, n, order, v, n);
        fn = "fmi3GetOutputDerivatives";
        if (n == 0) {
            outcome(st, fn, 1);
            return;
        }
        token = "not supported";
        break;
    case 6: case 7:
        fn = which == 6 ? "fmi3GetNumberOfContinuousStates" : "fmi3GetNumberOfEventIndicators";
        st = which == 6 ? fmi3GetNumberOfContinuousStates(I->c, null_arg ? NULL : &n)
                        : fmi3GetNumberOfEventIndicators(I->c, null_arg ? NULL : &n);
        if (null_arg) {
            token = "NULL";
            break;
        }
        if (outcome(st, fn, I->me) && st == fmi3OK && n != (which == 6 ? 2 * (size_t)n_coord : 0))
            wrong_result(fn, "not the model's number");
        return;
    default:
        st = fmi3EvaluateDiscreteStates(I->c);
        outcome(st, "fmi3EvaluateDiscreteStates", 1);
        return;
    }
    expect_refused(st, fn, token, 1);
    check_unchanged(I, fn);
}

/* Instantiations the FMU refuses: Scheduled Execution, Co-Simulation with event mode or with
 * intermediate variables; and one without a logger (it must work, and say nothing). */
static void call_odd_instantiation(void)
{
    fmi3Instance c = NULL;
    fmi3ValueReference vr[1] = {0};
    int which = irand(4);
    fz_begin();
    switch (which) {
    case 0:
        c = fmi3InstantiateScheduledExecution("i", guid, NULL, false, false, NULL, logger, NULL, NULL, NULL);
        expect_refused(c == NULL ? FZ_ERROR : FZ_OK, "fmi3InstantiateScheduledExecution", "Scheduled Execution", 1);
        break;
    case 1:
        c = fmi3InstantiateCoSimulation("i", guid, NULL, false, false, true, false, NULL, 0, NULL, logger, NULL);
        expect_refused(c == NULL ? FZ_ERROR : FZ_OK, "fmi3InstantiateCoSimulation", "eventModeUsed", 1);
        break;
    case 2:
        c = fmi3InstantiateCoSimulation("i", guid, NULL, false, false, false, false, vr, 1, NULL, logger, NULL);
        expect_refused(c == NULL ? FZ_ERROR : FZ_OK, "fmi3InstantiateCoSimulation", "intermediate", 1);
        break;
    default:
        c = fmi3InstantiateModelExchange("i", guid, NULL, false, true, NULL, NULL);
        if (c == NULL) {
            refused_good++;
            fprintf(stderr, "REFUSED_GOOD fmi3InstantiateModelExchange without a logger\n");
        } else if (fmi3EnterInitializationMode(c, false, 0.0, 0.0, false, 0.0) != fmi3OK ||
                   fmi3SetFloat64(c, vr, 1, NULL, 1) != fmi3Error) { /* refused, and nowhere to say it */
            wrong_result("fmi3InstantiateModelExchange", "an instance without a logger misbehaves");
        }
        break;
    }
    if (c != NULL)
        fmi3FreeInstance(c);
}

void fz_version_call(inst *I)
{
    switch (irand(5)) {
    case 0: case 1: call_other_types(I); break;
    case 2: case 3: call_unsupported(I); break;
    default: call_odd_instantiation(); break;
    }
}
