/*
 * fmi_fuzz.c -- random FMI 2.0 Co-Simulation call sequences against a native mbsfmu FMU.
 *
 * Compiled together with the FMU's sources/ (the same C the FMU's binary is built from), once
 * plainly and once with -fsanitize=address,undefined, by tests/test_fuzz_native_fmu.py:
 *
 *     fmi_fuzz DESCRIPTION_FILE SEED N_CALLS
 *
 * DESCRIPTION_FILE: first line "guid <GUID>", then one line per variable "<vr> <kind> <name>"
 * with kind one of state (coordinate or velocity), calc, fixed, tunable, solver, method (the
 * Integer parameter 'method', values 0, 1 and 2, and its deprecated name 'solver'), input.  Every other variable is a Real.
 *
 * The driver keeps up to three instances and a pool of FMU states, draws a function and its
 * arguments at random (NULL pointers, non-finite and absurd values, wrong value references,
 * calls in the wrong state, corrupted and foreign serialized states, blocks that only look like
 * FMU states) and compares each outcome with what the FMI 2.0 standard and our documented rules
 * demand, from its own model of the instance's state machine:
 *
 *  - a call the rules refuse must return fmi2Error (never OK, never a crash) and log an error
 *    message that starts with the function's name and names the culprit (value reference or
 *    variable name) where there is one;                      counted: "accepted", "unnamed"
 *  - a refused call changes nothing: the serialized FMU state before and after is identical;
 *                                                              counted: "changed"
 *  - a failed step keeps the last communication point's values: fmi2GetReal afterwards returns
 *    what it returned before the step;                         counted: "lost"
 *  - every fmi2Error of any call comes with a logged message;  counted: "silent"
 *  - a call the rules allow and that cannot fail for physical reasons must succeed.
 *                                                              counted: "refused_good"
 * It prints one summary line "calls=... bad=... accepted=... unnamed=... changed=... lost=...
 * silent=... refused_good=..." with coverage counts (steps_ok, steps_failed, restored,
 * deserialized) and exits 0; sanitizers report (and abort) on any memory error.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

#define MAX_VARS 512
#define MAX_INST 3
#define MAX_STATES 8
#define MSG_LEN 1024

enum { K_STATE, K_CALC, K_FIXED, K_TUNABLE, K_SOLVER, K_METHOD, K_INPUT };
enum { S_INST, S_INIT, S_STEP, S_TERM, S_ERR };

static char guid[128];
static int nvars;
static int kind[MAX_VARS];
static char names[MAX_VARS][128];
static int vr_rtol = -1, vr_atol = -1, vr_hmax = -1, vr_method = -1;
static fmi2ValueReference reals[MAX_VARS]; /* the Real variables' value references */
static int nreals;

/* ------------------------------------------------------------------ random numbers */

static uint64_t rng_state;

static uint64_t rnd(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int irand(int n) { return (int)(rnd() % (uint64_t)n); }
static double urand(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }
static int chance(double p) { return urand() < p; }
static double nrand(void) /* standard normal */
{
    double u = urand() + 1e-300, v = urand();
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* ------------------------------------------------------------------ logger */

static int n_msg;
static fmi2Status last_status;
static char last_msg[MSG_LEN];

static void logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status,
                   fmi2String category, fmi2String message, ...)
{
    char buf[MSG_LEN];
    va_list ap;
    (void)env;
    (void)name;
    (void)category;
    va_start(ap, message);
    vsnprintf(buf, sizeof buf, message, ap);
    va_end(ap);
    n_msg++;
    last_status = status;
    memcpy(last_msg, buf, sizeof buf);
}

static const fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};

/* ------------------------------------------------------------------ shadow model */

typedef struct {
    fmi2Component c;
    int st;
    double t;
} inst;

typedef struct {
    fmi2FMUstate s;
    int owner;       /* instance index that created it (states are freed through it) */
    int st;          /* shadow state and time captured in it */
    double t;
} state_slot;

static inst in[MAX_INST];
static state_slot pool[MAX_STATES];
static unsigned char blob[1 << 16];
static size_t blob_size;
static int blob_st;
static double blob_t;

static long calls, bad, accepted, unnamed, changed, lost, silent, refused_good;
/* coverage: how deep the sequences got */
static long steps_ok, steps_failed, restored, deserialized;

/* a block that starts like an FMU state of an mbsfmu FMU but is not this model's */
static unsigned char fake_state[96];

/* ------------------------------------------------------------------ checking */

static int msg_before;

static void before_call(void) { msg_before = n_msg; }

/* A call the rules refuse: must be fmi2Error with a new error message starting with fn and
 * containing token (if not NULL). */
static void expect_refused(fmi2Status st, const char *fn, const char *token, int has_logger)
{
    bad++;
    if (st != fmi2Error) {
        accepted++;
        fprintf(stderr, "ACCEPTED %s (status %d) token=%s\n", fn, (int)st, token ? token : "");
        return;
    }
    if (!has_logger)
        return;
    if (n_msg == msg_before || last_status != fmi2Error || strncmp(last_msg, fn, strlen(fn)) != 0 ||
        (token != NULL && strstr(last_msg, token) == NULL)) {
        unnamed++;
        fprintf(stderr, "UNNAMED %s token=%s: %s\n", fn, token ? token : "",
                n_msg == msg_before ? "(no message)" : last_msg);
    }
}

/* A call the rules allow: anything but fmi2Error/fmi2Fatal is fine; an error needs a message and,
 * when the call cannot fail for physical reasons (must_pass), is itself a finding. */
static int outcome(fmi2Status st, const char *fn, int must_pass)
{
    if (st == fmi2Error || st == fmi2Fatal) {
        if (n_msg == msg_before) {
            silent++;
            fprintf(stderr, "SILENT %s\n", fn);
        }
        if (must_pass) {
            refused_good++;
            fprintf(stderr, "REFUSED_GOOD %s: %s\n", fn, last_msg);
        }
        return 0;
    }
    return 1;
}

/* serialized snapshot of an instance (empty if its state cannot be taken) */
static size_t snapshot(inst *I, unsigned char *out, size_t cap)
{
    fmi2FMUstate s = NULL;
    size_t n = 0;
    int saved = n_msg;
    if (I->c == NULL || I->st == S_ERR)
        return 0;
    if (fmi2GetFMUstate(I->c, &s) != fmi2OK)
        return 0;
    if (fmi2SerializedFMUstateSize(I->c, s, &n) != fmi2OK || n > cap ||
        fmi2SerializeFMUstate(I->c, s, (fmi2Byte *)out, n) != fmi2OK)
        n = 0;
    fmi2FreeFMUstate(I->c, &s);
    n_msg = saved;
    return n;
}

static unsigned char snap_a[1 << 16], snap_b[1 << 16];
static size_t snap_n;

static void take_snapshot(inst *I) { snap_n = snapshot(I, snap_a, sizeof snap_a); }

static void check_unchanged(inst *I, const char *fn)
{
    size_t n;
    if (snap_n == 0)
        return;
    n = snapshot(I, snap_b, sizeof snap_b);
    if (n != snap_n || memcmp(snap_a, snap_b, n) != 0) {
        changed++;
        fprintf(stderr, "CHANGED by refused %s\n", fn);
    }
}

/* ------------------------------------------------------------------ argument generators */

static int valid_vr(fmi2ValueReference r) { return r < (fmi2ValueReference)nvars; }

static double any_value(fmi2ValueReference vr)
{
    int k = valid_vr(vr) ? kind[vr] : K_TUNABLE;
    if (chance(0.04))
        return NAN;
    if (chance(0.03))
        return chance(0.5) ? INFINITY : -INFINITY;
    if (chance(0.03))
        return chance(0.5) ? 1e300 : -1e300;
    if (chance(0.05))
        return 0.0;
    if (k == K_SOLVER) {
        if ((int)vr == vr_rtol)
            return chance(0.8) ? pow(10.0, -4.0 - 4.0 * urand()) : pow(10.0, 20.0 * nrand());
        if ((int)vr == vr_atol)
            return chance(0.8) ? pow(10.0, -5.0 - 5.0 * urand()) : pow(10.0, 20.0 * nrand());
        return chance(0.7) ? 0.0 : (chance(0.5) ? pow(10.0, -2.0 - 3.0 * urand()) : -1.0);
    }
    if (k == K_INPUT)
        return chance(0.9) ? nrand() : 1e3 * nrand();
    /* parameters and start values: mostly mild changes, sometimes sign flips */
    return chance(0.85) ? 0.5 + urand() : -urand();
}

static fmi2ValueReference any_vr(void)
{
    if (chance(0.06))
        return (fmi2ValueReference)(nvars + irand(5));
    if (chance(0.02))
        return (fmi2ValueReference)0xffffffffu;
    return (fmi2ValueReference)irand(nvars);
}

/* ------------------------------------------------------------------ the calls */

static inst *pick_inst(void) { return &in[irand(MAX_INST)]; }

static void call_instantiate(void)
{
    inst *I = pick_inst();
    int variant = irand(10);
    fmi2Component c;
    if (I->c != NULL) {
        fmi2FreeInstance(I->c);
        I->c = NULL;
    }
    before_call();
    calls++;
    if (variant == 0) {
        c = fmi2Instantiate("i", fmi2CoSimulation, "{wrong-guid}", "", &callbacks, fmi2False, fmi2False);
        expect_refused(c == NULL ? fmi2Error : fmi2OK, "fmi2Instantiate", "wrong GUID", 1);
    } else if (variant == 1) {
        c = fmi2Instantiate("i", fmi2ModelExchange, guid, "", &callbacks, fmi2False, fmi2False);
        expect_refused(c == NULL ? fmi2Error : fmi2OK, "fmi2Instantiate", "Co-Simulation", 1);
    } else if (variant == 2) {
        c = fmi2Instantiate(NULL, fmi2CoSimulation, guid, "", &callbacks, fmi2False, fmi2False);
        expect_refused(c == NULL ? fmi2Error : fmi2OK, "fmi2Instantiate", "instance name", 1);
    } else if (variant == 3) {
        c = fmi2Instantiate("i", fmi2CoSimulation, guid, "", NULL, fmi2False, fmi2False);
        expect_refused(c == NULL ? fmi2Error : fmi2OK, "fmi2Instantiate", NULL, 0);
    } else {
        c = fmi2Instantiate("i", fmi2CoSimulation, guid, NULL, &callbacks, fmi2False,
                            chance(0.3) ? fmi2True : fmi2False);
        if (c == NULL) {
            refused_good++;
            fprintf(stderr, "REFUSED_GOOD fmi2Instantiate\n");
        }
    }
    if (c != NULL && variant < 4)
        fmi2FreeInstance(c), c = NULL;
    I->c = c;
    I->st = S_INST;
    I->t = 0.0;
}

static void call_free_instance(void)
{
    inst *I = pick_inst();
    int k;
    calls++;
    if (I->c == NULL) {
        fmi2FreeInstance(NULL); /* must be harmless */
        return;
    }
    for (k = 0; k < MAX_STATES; k++)
        if (pool[k].s != NULL && &in[pool[k].owner] == I) {
            fmi2FreeFMUstate(I->c, &pool[k].s);
            pool[k].s = NULL;
        }
    fmi2FreeInstance(I->c);
    I->c = NULL;
}

static void call_setup(inst *I)
{
    double start = chance(0.9) ? 0.0 : (chance(0.5) ? NAN : 1.0);
    int stop_defined = chance(0.5);
    double stop = chance(0.8) ? start + 10.0 : (chance(0.5) ? start - 1.0 : INFINITY);
    fmi2Status st;
    int refuse = I->st != S_INST || !isfinite(start) ||
                 (stop_defined && !(isfinite(stop) && stop >= start));
    take_snapshot(I);
    before_call();
    st = fmi2SetupExperiment(I->c, chance(0.5), 1e-6, start, stop_defined, stop);
    if (refuse) {
        expect_refused(st, "fmi2SetupExperiment", NULL, 1);
        check_unchanged(I, "fmi2SetupExperiment");
    } else if (outcome(st, "fmi2SetupExperiment", 1)) {
        I->t = start;
    }
}

static void call_mode(inst *I)
{
    int which = irand(4);
    fmi2Status st;
    take_snapshot(I);
    before_call();
    if (which == 0) {
        st = fmi2EnterInitializationMode(I->c);
        if (I->st != S_INST) {
            expect_refused(st, "fmi2EnterInitializationMode", NULL, 1);
            check_unchanged(I, "fmi2EnterInitializationMode");
        } else if (outcome(st, "fmi2EnterInitializationMode", 1))
            I->st = S_INIT;
    } else if (which == 1) {
        st = fmi2ExitInitializationMode(I->c);
        if (I->st != S_INIT) {
            expect_refused(st, "fmi2ExitInitializationMode", NULL, 1);
            check_unchanged(I, "fmi2ExitInitializationMode");
        } else
            I->st = outcome(st, "fmi2ExitInitializationMode", 0) ? S_STEP : S_ERR;
    } else if (which == 2) {
        st = fmi2Terminate(I->c);
        if (I->st != S_STEP && I->st != S_ERR) {
            expect_refused(st, "fmi2Terminate", NULL, 1);
            check_unchanged(I, "fmi2Terminate");
        } else if (outcome(st, "fmi2Terminate", 1))
            I->st = S_TERM;
    } else {
        st = fmi2Reset(I->c);
        if (outcome(st, "fmi2Reset", 1))
            I->st = S_INST, I->t = 0.0;
    }
}

static void call_get_real(inst *I)
{
    fmi2ValueReference vr[4];
    double val[4];
    size_t n = (size_t)irand(4), i;
    int null_arg = chance(0.05), bad_vr = -1, integer = -1;
    fmi2Status st;
    char token[32];
    for (i = 0; i < n; i++) {
        vr[i] = any_vr();
        if (bad_vr < 0 && !valid_vr(vr[i]))
            bad_vr = (int)i;
        if (integer < 0 && valid_vr(vr[i]) && kind[vr[i]] == K_METHOD)
            integer = (int)i;
    }
    take_snapshot(I);
    before_call();
    st = fmi2GetReal(I->c, null_arg ? NULL : vr, n, val);
    if (I->st == S_INST) {
        expect_refused(st, "fmi2GetReal", NULL, 1);
    } else if (n > 0 && null_arg) {
        expect_refused(st, "fmi2GetReal", "NULL", 1);
    } else if (integer >= 0) { /* the FMU checks the types before it looks the values up */
        expect_refused(st, "fmi2GetReal", names[vr[integer]], 1);
    } else if (bad_vr >= 0) {
        snprintf(token, sizeof token, "%u", (unsigned)vr[bad_vr]);
        expect_refused(st, "fmi2GetReal", token, 1);
    } else {
        outcome(st, "fmi2GetReal", I->st != S_STEP); /* in step mode outputs may fail to compute */
        return;
    }
    check_unchanged(I, "fmi2GetReal");
}

static void call_set_real(inst *I)
{
    fmi2ValueReference vr[4];
    double val[4];
    size_t n = (size_t)(1 + irand(3)), i;
    int null_arg = chance(0.04), first_bad = -1, stepping = I->st == S_STEP, may_fail = 0;
    const char *token = NULL;
    char num[32];
    fmi2Status st;
    for (i = 0; i < n; i++) {
        /* mostly settable variables for the current state, so that runs get somewhere */
        vr[i] = any_vr();
        val[i] = any_value(vr[i]);
    }
    for (i = 0; i < n && first_bad < 0; i++) {
        int k = valid_vr(vr[i]) ? kind[vr[i]] : -1;
        if (k < 0) {
            snprintf(num, sizeof num, "%u", (unsigned)vr[i]);
            token = num;
        } else if (!isfinite(val[i]) || k == K_CALC || k == K_METHOD ||
                   (stepping && (k == K_STATE || k == K_FIXED)))
            token = names[vr[i]];
        else if (k == K_SOLVER) {
            double v = val[i];
            int ok = (int)vr[i] == vr_rtol ? (v >= 1e-14 && v <= 0.1)
                     : (int)vr[i] == vr_atol ? (v >= 0.0 && v <= 1.0)
                                             : (v == 0.0 || v >= 1e-10);
            if (!ok)
                token = names[vr[i]];
        } else if (k == K_TUNABLE || k == K_FIXED || k == K_INPUT)
            may_fail = 1; /* the model's parameter rules and declared bounds */
        if (token != NULL)
            first_bad = (int)i;
    }
    take_snapshot(I);
    before_call();
    st = fmi2SetReal(I->c, null_arg ? NULL : vr, n, val);
    if (I->st != S_INST && I->st != S_INIT && I->st != S_STEP)
        expect_refused(st, "fmi2SetReal", NULL, 1);
    else if (null_arg)
        expect_refused(st, "fmi2SetReal", "NULL", 1);
    else if (first_bad >= 0) {
        expect_refused(st, "fmi2SetReal", NULL, 1); /* which culprit is named first is the FMU's */
        if (st == fmi2Error && strstr(last_msg, token) == NULL) {
            /* the FMU may name another bad entry of the same call first: accept any entry */
            int named = 0;
            for (i = 0; i < n; i++) {
                snprintf(num, sizeof num, "%u", (unsigned)vr[i]);
                named |= strstr(last_msg, valid_vr(vr[i]) ? names[vr[i]] : num) != NULL;
            }
            if (!named) {
                unnamed++;
                fprintf(stderr, "UNNAMED fmi2SetReal: %s\n", last_msg);
            }
        }
    } else {
        if (!outcome(st, "fmi2SetReal", !may_fail)) {
            /* refused by a parameter rule: it must name one of the variables set */
            int named = 0;
            for (i = 0; i < n; i++)
                named |= strstr(last_msg, names[vr[i]]) != NULL;
            if (!named) {
                unnamed++;
                fprintf(stderr, "UNNAMED fmi2SetReal rule: %s\n", last_msg);
            }
            check_unchanged(I, "fmi2SetReal");
        }
        return;
    }
    check_unchanged(I, "fmi2SetReal");
}

/* The Integer 'method' or its deprecated name 'solver' (get in the states of fmi2GetReal, set in those of fmi2SetReal, values
 * 0, 1 and 2), and Integer access to anything else, Boolean and String access (no such variables). */
static void call_integer(inst *I)
{
    fmi2ValueReference vr[1];
    fmi2Integer iv[1];
    size_t n = (size_t)irand(2);
    int set = chance(0.5), k, allowed;
    const char *fn = set ? "fmi2SetInteger" : "fmi2GetInteger";
    char token[32];
    fmi2Status st;
    vr[0] = chance(0.5) || vr_method < 0 ? any_vr() : (fmi2ValueReference)vr_method;
    iv[0] = irand(5) - 1;
    k = n > 0 && valid_vr(vr[0]) ? kind[vr[0]] : -1;
    allowed = set ? (I->st == S_INST || I->st == S_INIT || I->st == S_STEP) : I->st != S_INST;
    take_snapshot(I);
    before_call();
    st = set ? fmi2SetInteger(I->c, vr, n, iv) : fmi2GetInteger(I->c, vr, n, iv);
    if (!allowed)
        expect_refused(st, fn, NULL, 1);
    else if (n == 0 || (k == K_METHOD && (!set || (iv[0] >= 0 && iv[0] <= 2)))) {
        outcome(st, fn, 1);
        return;
    } else if (k == K_METHOD) {
        expect_refused(st, fn, names[vr[0]], 1); /* a value that is not a method */
    } else {
        snprintf(token, sizeof token, "%u", (unsigned)vr[0]); /* a Real, or unknown */
        expect_refused(st, fn, token, 1);
    }
    check_unchanged(I, fn);
}

static void call_other_types(inst *I)
{
    fmi2ValueReference vr[1];
    fmi2Boolean bv[1] = {0};
    fmi2String sv[1] = {"x"};
    size_t n = (size_t)irand(2);
    fmi2Status st;
    const char *fn;
    if (chance(0.5)) {
        call_integer(I);
        return;
    }
    vr[0] = any_vr();
    before_call();
    switch (irand(4)) {
    case 0: st = fmi2GetBoolean(I->c, vr, n, bv); fn = "fmi2GetBoolean"; break;
    case 1: st = fmi2SetBoolean(I->c, vr, n, bv); fn = "fmi2SetBoolean"; break;
    case 2: st = fmi2GetString(I->c, vr, n, sv); fn = "fmi2GetString"; break;
    default: st = fmi2SetString(I->c, vr, n, sv); fn = "fmi2SetString"; break;
    }
    if (n > 0) {
        char token[32];
        snprintf(token, sizeof token, "%u", (unsigned)vr[0]);
        expect_refused(st, fn, token, 1);
    } else
        outcome(st, fn, 1);
}

static void call_debug_logging(inst *I)
{
    const char *cats[3];
    static const char *known[] = {"logEvents", "logStatusWarning", "logStatusError", "logStatistics",
                                  "logAll"};
    size_t n = (size_t)irand(3), i;
    int bad_cat = 0, null_list = n > 0 && chance(0.1);
    fmi2Status st;
    for (i = 0; i < n; i++) {
        int r = irand(7);
        cats[i] = r < 5 ? known[r] : (r == 5 ? "noSuchCategory" : NULL);
        bad_cat |= r >= 5;
    }
    take_snapshot(I);
    before_call();
    st = fmi2SetDebugLogging(I->c, chance(0.5), n, null_list ? NULL : cats);
    if (null_list || bad_cat) {
        expect_refused(st, "fmi2SetDebugLogging", null_list ? "NULL" : NULL, 1);
        check_unchanged(I, "fmi2SetDebugLogging");
    } else
        outcome(st, "fmi2SetDebugLogging", 1);
}

static void call_do_step(inst *I)
{
    double t = chance(0.9) ? I->t : (chance(0.5) ? I->t + 0.5 : NAN);
    double h;
    double before[MAX_VARS], after[MAX_VARS];
    int have_before = 0, refuse;
    fmi2Status st;
    switch (irand(10)) {
    case 0: h = 0.0; break;
    case 1: h = -0.01; break;
    case 2: h = chance(0.5) ? NAN : INFINITY; break;
    case 3: h = 0.2; break;
    default: h = 0.001 + 0.02 * urand(); break;
    }
    refuse = I->st != S_STEP || !(h > 0.0) || !isfinite(h) || !isfinite(t) ||
             fabs(t - I->t) > 1e-9 * (1.0 + fabs(I->t));
    if (I->st == S_STEP) {
        int saved = n_msg;
        have_before = fmi2GetReal(I->c, reals, (size_t)nreals, before) == fmi2OK;
        n_msg = saved;
    }
    take_snapshot(I);
    before_call();
    st = fmi2DoStep(I->c, t, h, fmi2True);
    if (refuse) {
        expect_refused(st, "fmi2DoStep", NULL, 1);
        check_unchanged(I, "fmi2DoStep");
        return;
    }
    if (outcome(st, "fmi2DoStep", 0)) {
        I->t = t + h;
        steps_ok++;
        return;
    }
    steps_failed++;
    if (strstr(last_msg, "max_internal_step") != NULL && strstr(last_msg, "internal steps") != NULL) {
        check_unchanged(I, "fmi2DoStep"); /* refused for its step limit: nothing changed */
        return;
    }
    I->st = S_ERR;
    /* nothing computed is lost: the last communication point's values are still there */
    if (have_before) {
        int saved = n_msg;
        if (fmi2GetReal(I->c, reals, (size_t)nreals, after) != fmi2OK ||
            memcmp(before, after, sizeof(double) * (size_t)nreals) != 0) {
            lost++;
            fprintf(stderr, "LOST after failed step: %s\n", last_msg);
        }
        n_msg = saved;
    }
}

static void call_status(inst *I)
{
    fmi2Status sv;
    fmi2Real rv;
    fmi2Integer iv;
    fmi2Boolean bv;
    fmi2String strv;
    int null_arg = chance(0.3), which = irand(6);
    fmi2Status st;
    const char *fn;
    before_call();
    switch (which) {
    case 0: st = fmi2GetStatus(I->c, fmi2DoStepStatus, null_arg ? NULL : &sv); fn = "fmi2GetStatus"; break;
    case 1: st = fmi2GetRealStatus(I->c, fmi2LastSuccessfulTime, null_arg ? NULL : &rv); fn = "fmi2GetRealStatus"; break;
    case 2: st = fmi2GetIntegerStatus(I->c, fmi2DoStepStatus, null_arg ? NULL : &iv); fn = "fmi2GetIntegerStatus"; break;
    case 3: st = fmi2GetBooleanStatus(I->c, fmi2Terminated, null_arg ? NULL : &bv); fn = "fmi2GetBooleanStatus"; break;
    case 4: st = fmi2GetStringStatus(I->c, fmi2PendingStatus, null_arg ? NULL : &strv); fn = "fmi2GetStringStatus"; break;
    default: st = fmi2CancelStep(I->c); fn = "fmi2CancelStep"; null_arg = 1; break;
    }
    if (null_arg)
        expect_refused(st, fn, which == 5 ? NULL : "NULL", 1);
    else
        outcome(st, fn, 1);
    if (which == 1 && !null_arg && st == fmi2OK && rv != I->t && I->st != S_INST) {
        lost++; /* fmi2LastSuccessfulTime must be the last communication point */
        fprintf(stderr, "LOST: last successful time %g, expected %g\n", rv, I->t);
    }
}

static state_slot *free_slot(void)
{
    int k;
    for (k = 0; k < MAX_STATES; k++)
        if (pool[k].s == NULL)
            return &pool[k];
    return NULL;
}

static void call_get_state(inst *I)
{
    state_slot *slot = free_slot();
    fmi2FMUstate s = NULL;
    fmi2Status st;
    int null_arg = chance(0.05);
    if (slot == NULL)
        return;
    before_call();
    st = fmi2GetFMUstate(I->c, null_arg ? NULL : &s);
    if (I->st == S_ERR || null_arg) {
        expect_refused(st, "fmi2GetFMUstate", null_arg ? "NULL" : NULL, 1);
        return;
    }
    if (outcome(st, "fmi2GetFMUstate", 1)) {
        slot->s = s;
        slot->owner = (int)(I - in);
        slot->st = I->st;
        slot->t = I->t;
    }
}

static void call_set_state(inst *I)
{
    int k = irand(MAX_STATES), variant = irand(10);
    fmi2Status st;
    take_snapshot(I);
    before_call();
    if (variant == 0) {
        st = fmi2SetFMUstate(I->c, NULL);
        expect_refused(st, "fmi2SetFMUstate", "NULL", 1);
        check_unchanged(I, "fmi2SetFMUstate");
    } else if (variant == 1) {
        st = fmi2SetFMUstate(I->c, fake_state);
        expect_refused(st, "fmi2SetFMUstate", "another model", 1);
        check_unchanged(I, "fmi2SetFMUstate");
    } else if (pool[k].s != NULL) {
        st = fmi2SetFMUstate(I->c, pool[k].s);
        if (outcome(st, "fmi2SetFMUstate", 1))
            I->st = pool[k].st, I->t = pool[k].t, restored++;
    }
}

static void call_free_state(void)
{
    int k = irand(MAX_STATES);
    inst *I = &in[pool[k].owner];
    fmi2Status st;
    if (pool[k].s == NULL || I->c == NULL)
        return;
    before_call();
    st = fmi2FreeFMUstate(I->c, &pool[k].s);
    outcome(st, "fmi2FreeFMUstate", 1);
    pool[k].s = NULL;
}

static void call_serialize(inst *I)
{
    int k = irand(MAX_STATES), variant = irand(8);
    size_t n = 0;
    fmi2Status st;
    static unsigned char small[8];
    if (pool[k].s == NULL)
        return;
    before_call();
    if (variant == 0) {
        st = fmi2SerializedFMUstateSize(I->c, pool[k].s, NULL);
        expect_refused(st, "fmi2SerializedFMUstateSize", "NULL", 1);
        return;
    }
    st = fmi2SerializedFMUstateSize(I->c, pool[k].s, &n);
    if (!outcome(st, "fmi2SerializedFMUstateSize", 1) || n > sizeof blob)
        return;
    before_call();
    if (variant == 1) {
        st = fmi2SerializeFMUstate(I->c, pool[k].s, NULL, n);
        expect_refused(st, "fmi2SerializeFMUstate", "NULL buffer", 1);
    } else if (variant == 2) {
        st = fmi2SerializeFMUstate(I->c, pool[k].s, (fmi2Byte *)small, sizeof small);
        expect_refused(st, "fmi2SerializeFMUstate", "too small", 1);
    } else {
        st = fmi2SerializeFMUstate(I->c, pool[k].s, (fmi2Byte *)blob, n);
        if (outcome(st, "fmi2SerializeFMUstate", 1))
            blob_size = n, blob_st = pool[k].st, blob_t = pool[k].t;
    }
}

static void call_deserialize(inst *I)
{
    static unsigned char work[1 << 16];
    state_slot *slot = free_slot();
    fmi2FMUstate s = NULL;
    size_t n = blob_size;
    int variant = irand(6), changes = 0;
    fmi2Status st;
    if (slot == NULL || blob_size == 0)
        return;
    memcpy(work, blob, blob_size);
    if (variant == 0) { /* random corruption of 1..8 bytes */
        int j, m = 1 + irand(8);
        for (j = 0; j < m; j++) {
            size_t pos = (size_t)irand((int)n);
            unsigned char old = work[pos];
            work[pos] = (unsigned char)(old + 1 + irand(255));
            changes += work[pos] != old;
        }
    } else if (variant == 1) {
        n = (size_t)irand((int)blob_size); /* truncated */
        changes = 1;
    } else if (variant == 2) {
        memcpy(work + 16, "{another-model-guid}", 20); /* another model's GUID */
        changes = 1;
    }
    before_call();
    st = fmi2DeSerializeFMUstate(I->c, (const fmi2Byte *)work, n, chance(0.04) ? NULL : &s);
    if (changes || n_msg != msg_before) {
        if (changes)
            expect_refused(st, "fmi2DeSerializeFMUstate", NULL, 1);
        if (st == fmi2OK && s != NULL)
            fmi2FreeFMUstate(I->c, &s);
        return;
    }
    if (outcome(st, "fmi2DeSerializeFMUstate", 1) && s != NULL) {
        deserialized++;
        slot->s = s;
        slot->owner = (int)(I - in);
        slot->st = blob_st;
        slot->t = blob_t;
    }
}

static void call_directional(inst *I)
{
    fmi2ValueReference unk[3], kn[3];
    double dk[3], du[3];
    size_t nu = (size_t)irand(4), nk = (size_t)irand(3), i;
    int refuse = I->st != S_STEP && I->st != S_TERM, null_arg = chance(0.05);
    fmi2Status st;
    for (i = 0; i < nu; i++) {
        unk[i] = chance(0.8) ? (fmi2ValueReference)irand(nvars) : any_vr();
        if (!valid_vr(unk[i]) || (kind[unk[i]] != K_STATE && kind[unk[i]] != K_CALC))
            refuse = 1;
    }
    for (i = 0; i < nk; i++) {
        kn[i] = any_vr();
        dk[i] = chance(0.9) ? nrand() : NAN;
        if (!valid_vr(kn[i]) || kind[kn[i]] != K_INPUT || !isfinite(dk[i]))
            refuse = 1;
    }
    if (null_arg && (nu > 0 || nk > 0))
        refuse = 1;
    take_snapshot(I);
    before_call();
    st = fmi2GetDirectionalDerivative(I->c, null_arg ? NULL : unk, nu, kn, nk,
                                      null_arg ? NULL : dk, du);
    if (refuse) {
        expect_refused(st, "fmi2GetDirectionalDerivative", NULL, 1);
        check_unchanged(I, "fmi2GetDirectionalDerivative");
    } else
        outcome(st, "fmi2GetDirectionalDerivative", 0); /* may fail at a singular KKT system */
}

static void call_input_derivatives(inst *I)
{
    fmi2ValueReference vr[1] = {0};
    fmi2Integer order[1] = {1};
    double v[1] = {0.0};
    size_t n = (size_t)irand(2);
    fmi2Status st;
    int get = chance(0.5);
    before_call();
    st = get ? fmi2GetRealOutputDerivatives(I->c, vr, n, order, v)
             : fmi2SetRealInputDerivatives(I->c, vr, n, order, v);
    if (n > 0)
        expect_refused(st, get ? "fmi2GetRealOutputDerivatives" : "fmi2SetRealInputDerivatives",
                       "not supported", 1);
    else
        outcome(st, "derivatives", 1);
}

static void call_null_instance(void)
{
    fmi2ValueReference vr[1] = {0};
    double v[1] = {0.0};
    fmi2FMUstate s = NULL;
    int r = irand(8);
    fmi2Status st;
    switch (r) {
    case 0: st = fmi2SetupExperiment(NULL, fmi2False, 0.0, 0.0, fmi2False, 0.0); break;
    case 1: st = fmi2DoStep(NULL, 0.0, 0.01, fmi2True); break;
    case 2: st = fmi2GetReal(NULL, vr, 1, v); break;
    case 3: st = fmi2SetReal(NULL, vr, 1, v); break;
    case 4: st = fmi2GetFMUstate(NULL, &s); break;
    case 5: st = fmi2EnterInitializationMode(NULL); break;
    case 6: st = fmi2Terminate(NULL); break;
    default: st = fmi2Reset(NULL); break;
    }
    calls++;
    expect_refused(st, "(null instance)", NULL, 0);
}

/* drive an instance towards stepping, so that deep states are reached often */
static void advance_towards_step(inst *I)
{
    int saved = n_msg;
    if (I->st == S_INST && fmi2SetupExperiment(I->c, fmi2False, 0.0, 0.0, fmi2False, 0.0) == fmi2OK &&
        fmi2EnterInitializationMode(I->c) == fmi2OK) {
        I->st = S_INIT;
        I->t = 0.0;
    }
    if (I->st == S_INIT)
        I->st = fmi2ExitInitializationMode(I->c) <= fmi2Warning ? S_STEP : S_ERR;
    if (I->st == S_ERR || I->st == S_TERM) {
        fmi2Reset(I->c);
        I->st = S_INST;
        I->t = 0.0;
    }
    n_msg = saved;
}

/* ------------------------------------------------------------------ main */

static int read_description(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512], k[32], name[128];
    int vr;
    if (f == NULL)
        return 0;
    if (fgets(line, sizeof line, f) == NULL || sscanf(line, "guid %127s", guid) != 1) {
        fclose(f);
        return 0;
    }
    while (fgets(line, sizeof line, f) != NULL && nvars < MAX_VARS) {
        if (sscanf(line, "%d %31s %127s", &vr, k, name) != 3 || vr != nvars)
            break;
        kind[vr] = strcmp(k, "state") == 0     ? K_STATE
                   : strcmp(k, "calc") == 0    ? K_CALC
                   : strcmp(k, "fixed") == 0   ? K_FIXED
                   : strcmp(k, "tunable") == 0 ? K_TUNABLE
                   : strcmp(k, "solver") == 0  ? K_SOLVER
                   : strcmp(k, "method") == 0  ? K_METHOD
                                               : K_INPUT;
        if (kind[vr] != K_METHOD)
            reals[nreals++] = (fmi2ValueReference)vr;
        else if (vr_method < 0)
            vr_method = vr; /* 'method', not its deprecated name 'solver' (an Integer after it) */
        snprintf(names[vr], sizeof names[vr], "%s", name);
        if (strcmp(name, "solver_rtol") == 0) vr_rtol = vr;
        if (strcmp(name, "solver_atol") == 0) vr_atol = vr;
        if (strcmp(name, "max_internal_step") == 0) vr_hmax = vr;
        nvars++;
    }
    fclose(f);
    return nvars > 0 && vr_rtol >= 0 && vr_atol >= 0 && vr_hmax >= 0;
}

int main(int argc, char **argv)
{
    long n_calls, i;
    int k;
    if (argc == 2 && strcmp(argv[1], "--selftest") == 0) {
        /* proves the sanitizers are active: a heap over-read they must report */
        volatile int past = 6 + argc; /* 8, unknown to the compiler */
        char *p = (char *)calloc(8, 1);
        int v = p[past];
        free(p);
        printf("%d\n", v);
        return 0;
    }
    if (argc != 4 || !read_description(argv[1])) {
        fprintf(stderr, "usage: fmi_fuzz DESCRIPTION SEED N_CALLS (a valid description file)\n");
        return 2;
    }
    rng_state = strtoull(argv[2], NULL, 10);
    n_calls = strtol(argv[3], NULL, 10);
    /* a block that begins like a state of an mbsfmu FMU (magic "MBSF") but is not this model's */
    memset(fake_state, 0xab, sizeof fake_state);
    fake_state[0] = 0x46, fake_state[1] = 0x53, fake_state[2] = 0x42, fake_state[3] = 0x4d;
    for (i = 0; calls < n_calls; i++) {
        inst *I = pick_inst();
        int r = irand(100);
        if (I->c == NULL || r < 2) {
            call_instantiate();
            continue;
        }
        if (r < 4) {
            call_free_instance();
            continue;
        }
        if (r < 6) {
            call_null_instance();
            continue;
        }
        if (r < 20)
            advance_towards_step(I);
        calls++;
        if (r < 24) call_setup(I);
        else if (r < 32) call_mode(I);
        else if (r < 42) call_get_real(I);
        else if (r < 56) call_set_real(I);
        else if (r < 59) call_other_types(I);
        else if (r < 62) call_debug_logging(I);
        else if (r < 78) call_do_step(I);
        else if (r < 81) call_status(I);
        else if (r < 85) call_get_state(I);
        else if (r < 88) call_set_state(I);
        else if (r < 90) call_free_state();
        else if (r < 93) call_serialize(I);
        else if (r < 96) call_deserialize(I);
        else if (r < 98) call_directional(I);
        else call_input_derivatives(I);
    }
    for (k = 0; k < MAX_STATES; k++)
        if (pool[k].s != NULL && in[pool[k].owner].c != NULL)
            fmi2FreeFMUstate(in[pool[k].owner].c, &pool[k].s);
    for (k = 0; k < MAX_INST; k++)
        if (in[k].c != NULL)
            fmi2FreeInstance(in[k].c);
    printf("calls=%ld bad=%ld accepted=%ld unnamed=%ld changed=%ld lost=%ld silent=%ld "
           "refused_good=%ld steps_ok=%ld steps_failed=%ld restored=%ld deserialized=%ld\n", calls,
           bad, accepted, unnamed, changed, lost, silent, refused_good, steps_ok, steps_failed,
           restored, deserialized);
    return 0;
}
