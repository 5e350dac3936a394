/*
 * fmi_fuzz.c -- random FMI call sequences against a native mbsfmu FMU, Co-Simulation and Model
 * Exchange, for either FMI version: this file is the version-free driver, linked with one
 * adapter (fmi2_fuzz.c or fmi3_fuzz.c, the interface in fmi_fuzz.h) and the FMU's sources/ (the
 * same C the FMU's binary is built from, with the glue of the adapter's version), once plainly
 * and once with -fsanitize=address,undefined, by tests/fuzz/test_fuzz_native_fmu.py:
 *
 *     fmi_fuzz DESCRIPTION_FILE SEED N_CALLS
 *
 * DESCRIPTION_FILE: "guid <GUID>", "sizes <f> <m>" (coordinates, constraint rows), then one line
 * per variable "<vr> <kind> <name>" with kind one of state (coordinate or velocity), calc, fixed,
 * tunable, solver (solver_rtol, solver_atol, max_internal_step), method (the Integer/Enumeration
 * 'method', values 0, 1 and 2, and FMI 2.0's deprecated name 'solver'), input, accel (der(x,2))
 * and ctol (constraint_tolerance).  Value references not listed are unknown to the FMU.
 *
 * The driver keeps up to three instances (each Co-Simulation or Model Exchange) and a pool of FMU
 * states, draws a function and its arguments at random (NULL pointers, wrong counts, non-finite
 * and absurd values, wrong value references, calls in the wrong mode or of the other interface,
 * corrupted, foreign and other-interface FMU states) and compares each outcome with what the FMI
 * standard and the FMU's documented rules (mbs_fmu.h) demand, from its own model of the state
 * machines.  Model Exchange instances are also integrated by an explicit Euler loop (get
 * derivatives, set time and states, completed integrator step, the projection event) with a
 * small constraint_tolerance, so that projections happen.
 *
 *  - a call the rules refuse must return Error (never OK, never a crash) and log an error
 *    message that starts with the function's name and names the culprit (value reference,
 *    variable name, argument) where there is one;             counted: "accepted", "unnamed"
 *  - a refused call changes nothing: the serialized FMU state before and after is identical;
 *                                                              counted: "changed"
 *  - a failed call loses nothing: after a failed step the last communication point's values and
 *    time, after a failed derivative evaluation or projection the continuous states, are what
 *    they were;                                                counted: "lost"
 *  - every Error of any call comes with a logged message;     counted: "silent"
 *  - a call the rules allow and that cannot fail for physical reasons must succeed;
 *                                                              counted: "refused_good"
 *  - a good call's result keeps the documented rules: the derivatives of the coordinates are
 *    the velocities, the states read back are those set, der(x,2) are the derivatives of the
 *    velocities, nominals are 1, a tree never asks for an event, a projection leaves no drift
 *    above the tolerance, the number of continuous states is 2 f;   counted: "wrong"
 * It prints one summary line "calls=... bad=... accepted=... unnamed=... changed=... lost=...
 * silent=... refused_good=... wrong=..." with coverage counts (steps_ok, steps_failed, restored,
 * deserialized, me_steps, derivatives, events, projections, dual_checks) and exits 0;
 * sanitizers report (and abort) on any memory error.
 */
#include "fmi_fuzz.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INST 3
#define MAX_STATES 8
#define MSG_LEN 1024

char guid[128];
int nvr;
int kind[MAX_VARS];
char names[MAX_VARS][128];
int n_coord, n_constraints;
static int vr_rtol = -1, vr_atol = -1, vr_hmax = -1, vr_method = -1, vr_ctol = -1, vr_accel = -1;
static unsigned reals[MAX_VARS]; /* the Real variables read after every step (not der(x,2)) */
static int nreals;
static unsigned inputs[MAX_VARS], outputs[MAX_VARS]; /* the knowns and unknowns of derivatives */
static int ninputs, noutputs;

long calls, bad, accepted, unnamed, changed, lost, silent, refused_good, wrong;
/* coverage: how deep the sequences got */
static long steps_ok, steps_failed, restored, deserialized, me_steps, derivatives, events, projections, dual_checks;

/* ------------------------------------------------------------------ random numbers */

static uint64_t rng_state;

static uint64_t rnd(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int irand(int n) { return (int)(rnd() % (uint64_t)n); }
double urand(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }
int chance(double p) { return urand() < p; }
double nrand(void) /* standard normal */
{
    double u = urand() + 1e-300, v = urand();
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* ------------------------------------------------------------------ logger */

static int n_msg;
static int last_status;
char last_msg[MSG_LEN];

void fz_log(int status, const char *message)
{
    n_msg++;
    last_status = status;
    snprintf(last_msg, sizeof last_msg, "%s", message);
}

/* ------------------------------------------------------------------ shadow model */

typedef struct {
    void *s;
    int owner;       /* instance index that created it (states are freed through it) */
    int me, st;      /* interface, shadow mode and time captured in it */
    double t;
} state_slot;

static inst in[MAX_INST];
static state_slot pool[MAX_STATES];
static unsigned char blob[1 << 16];
static size_t blob_size;
static int blob_st, blob_me;
static double blob_t;

/* a block that starts like an FMU state of an mbsfmu FMU but is not this model's */
static unsigned char fake_state[96];

static int started(const inst *I) { return I->st == S_STEP || I->st == S_EVENT || I->st == S_CONT; }
static int after_init(const inst *I) { return I->st >= S_STEP; }

/* ------------------------------------------------------------------ checking */

static int msg_before;

void before_call(void) { msg_before = n_msg; }

void fz_begin(void)
{
    calls++;
    before_call();
}

/* A call the rules refuse: must be Error with a new error message starting with fn and
 * containing token (if not NULL). */
void expect_refused(int st, const char *fn, const char *token, int has_logger)
{
    bad++;
    if (st != FZ_ERROR) {
        accepted++;
        fprintf(stderr, "ACCEPTED %s (status %d) token=%s\n", fn, st, token ? token : "");
        return;
    }
    if (!has_logger)
        return;
    if (n_msg == msg_before || last_status != FZ_ERROR || strncmp(last_msg, fn, strlen(fn)) != 0 ||
        (token != NULL && strstr(last_msg, token) == NULL)) {
        unnamed++;
        fprintf(stderr, "UNNAMED %s token=%s: %s\n", fn, token ? token : "",
                n_msg == msg_before ? "(no message)" : last_msg);
    }
}

/* A call the rules allow: anything but Error/Fatal is fine; an error needs a message and, when
 * the call cannot fail for physical reasons (must_pass), is itself a finding. */
int outcome(int st, const char *fn, int must_pass)
{
    if (st == FZ_ERROR || st == FZ_FATAL) {
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

void wrong_result(const char *fn, const char *what)
{
    wrong++;
    fprintf(stderr, "WRONG %s: %s\n", fn, what);
}

/* serialized snapshot of an instance (empty if its state cannot be taken) */
static size_t snapshot(inst *I, unsigned char *out, size_t cap)
{
    void *s = NULL;
    size_t n = 0;
    int saved = n_msg;
    if (I->c == NULL || I->st == S_ERR)
        return 0;
    if (fz_get_state(I->c, &s) != FZ_OK)
        return 0;
    if (fz_state_size(I->c, s, &n) != FZ_OK || n > cap || fz_serialize(I->c, s, out, n) != FZ_OK)
        n = 0;
    fz_free_state(I->c, &s);
    n_msg = saved;
    return n;
}

static unsigned char snap_a[1 << 16], snap_b[1 << 16];
static size_t snap_n;

void take_snapshot(inst *I) { snap_n = snapshot(I, snap_a, sizeof snap_a); }

void check_unchanged(inst *I, const char *fn)
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

/* the continuous states of a Model Exchange instance, quietly (0 if they cannot be read) */
static int quiet_states(inst *I, double *x)
{
    int saved = n_msg, ok = fz_get_states(I->c, x, 2 * (size_t)n_coord) == FZ_OK;
    n_msg = saved;
    return ok;
}

/* after a failed call of a Model Exchange instance: the states are those it had before */
static void check_states_kept(inst *I, const double *before, const char *fn)
{
    double after[MAX_X];
    if (!quiet_states(I, after) || memcmp(before, after, sizeof(double) * 2 * (size_t)n_coord) != 0) {
        lost++;
        fprintf(stderr, "LOST states after failed %s: %s\n", fn, last_msg);
    }
}

/* ------------------------------------------------------------------ argument generators */

int valid_vr(unsigned r) { return r < (unsigned)nvr && kind[r] != K_NONE; }

static double any_value(unsigned vr)
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
    if (k == K_CTOL)
        return chance(0.9) ? pow(10.0, -9.0 + 5.0 * urand()) : -urand();
    if (k == K_INPUT)
        return chance(0.9) ? nrand() : 1e3 * nrand();
    /* parameters and start values: mostly mild changes, sometimes sign flips */
    return chance(0.85) ? 0.5 + urand() : -urand();
}

unsigned any_vr(void)
{
    if (chance(0.06))
        return (unsigned)(nvr + irand(5));
    if (chance(0.02))
        return 0xffffffffu;
    return (unsigned)irand(nvr);
}

/* nValues of FMI 3.0's accessors: mostly n, sometimes not */
static size_t any_count(size_t n) { return fz_version == 3 && chance(0.04) ? n + 1 : n; }

inst *pick_inst(void) { return &in[irand(MAX_INST)]; }

static void free_states_of(inst *I)
{
    int k;
    for (k = 0; k < MAX_STATES; k++)
        if (pool[k].s != NULL && &in[pool[k].owner] == I) {
            fz_free_state(I->c, &pool[k].s);
            pool[k].s = NULL;
        }
}

/* ------------------------------------------------------------------ life cycle */

static void call_instantiate(void)
{
    inst *I = pick_inst();
    int variant = irand(10), me = chance(0.5);
    const char *fn = fz_name[me ? FN_INSTANTIATE_ME : FN_INSTANTIATE_CS];
    void *c;
    if (I->c != NULL) {
        free_states_of(I);
        fz_free_instance(I->c);
        I->c = NULL;
    }
    fz_begin();
    if (variant == 0) {
        c = fz_instantiate(me, "i", "{wrong-guid}", 0);
        expect_refused(c == NULL ? FZ_ERROR : FZ_OK, fn, "wrong", 1);
    } else if (variant == 1) {
        c = fz_instantiate(me, NULL, guid, 0);
        expect_refused(c == NULL ? FZ_ERROR : FZ_OK, fn, "instance name", 1);
    } else {
        c = fz_instantiate(me, "i", guid, chance(0.3));
        if (c == NULL) {
            refused_good++;
            fprintf(stderr, "REFUSED_GOOD %s: %s\n", fn, last_msg);
        }
    }
    if (c != NULL && variant < 2)
        fz_free_instance(c), c = NULL;
    I->c = c;
    I->me = me;
    I->st = S_INST;
    I->t = 0.0;
}

static void call_free_instance(void)
{
    inst *I = pick_inst();
    calls++;
    if (I->c == NULL) {
        fz_free_instance(NULL); /* must be harmless */
        return;
    }
    free_states_of(I);
    fz_free_instance(I->c);
    I->c = NULL;
}

/* start, stop and tolerance of an experiment: 1 if the rules refuse them */
static int draw_experiment(int *tol_def, double *tol, double *start, int *stop_def, double *stop)
{
    *start = chance(0.9) ? 0.0 : (chance(0.5) ? NAN : 1.0);
    *stop_def = chance(0.5);
    *stop = chance(0.8) ? *start + 10.0 : (chance(0.5) ? *start - 1.0 : INFINITY);
    *tol_def = chance(0.5);
    /* a tolerance outside solver_rtol's range is said (a warning) and left aside */
    *tol = chance(0.8) ? 1e-6 : (chance(0.5) ? NAN : 10.0);
    return !isfinite(*start) || (*stop_def && !(isfinite(*stop) && *stop >= *start));
}

static void call_setup(inst *I) /* FMI 2.0 */
{
    int tol_def, stop_def, refuse;
    double tol, start, stop;
    int st;
    refuse = draw_experiment(&tol_def, &tol, &start, &stop_def, &stop) || I->st != S_INST;
    take_snapshot(I);
    before_call();
    st = fz_setup(I->c, tol_def, tol, start, stop_def, stop);
    if (refuse) {
        expect_refused(st, fz_name[FN_SETUP], NULL, 1);
        check_unchanged(I, fz_name[FN_SETUP]);
    } else if (outcome(st, fz_name[FN_SETUP], 1)) {
        I->t = start;
    }
}

static void call_mode(inst *I)
{
    int which = irand(4);
    int st;
    take_snapshot(I);
    before_call();
    if (which == 0) {
        const char *fn = fz_name[FN_ENTER_INIT];
        int tol_def = 0, stop_def = 0, refuse = 0;
        double tol = 0.0, start = I->t, stop = 0.0;
        if (fz_version == 3) /* FMI 3.0 sets the experiment up here */
            refuse = draw_experiment(&tol_def, &tol, &start, &stop_def, &stop);
        st = fz_enter_init(I->c, tol_def, tol, start, stop_def, stop);
        if (I->st != S_INST || refuse) {
            expect_refused(st, fn, NULL, 1);
            check_unchanged(I, fn);
        } else if (outcome(st, fn, 1))
            I->st = S_INIT, I->t = start;
    } else if (which == 1) {
        const char *fn = fz_name[FN_EXIT_INIT];
        st = fz_exit_init(I->c);
        if (I->st != S_INIT) {
            expect_refused(st, fn, NULL, 1);
            check_unchanged(I, fn);
        } else
            I->st = outcome(st, fn, 0) ? (I->me ? S_EVENT : S_STEP) : S_ERR;
    } else if (which == 2) {
        const char *fn = fz_name[FN_TERMINATE];
        st = fz_terminate(I->c);
        if (!started(I) && I->st != S_ERR) {
            expect_refused(st, fn, NULL, 1);
            check_unchanged(I, fn);
        } else if (outcome(st, fn, 1))
            I->st = S_TERM;
    } else {
        st = fz_reset(I->c);
        if (outcome(st, fz_name[FN_RESET], 1))
            I->st = S_INST, I->t = 0.0;
    }
}

static void call_debug_logging(inst *I)
{
    const char *cats[3];
    static const char *categories[] = {"logEvents", "logStatusWarning", "logStatusError", "logStatistics", "logAll"};
    const char *fn = fz_name[FN_DEBUG_LOGGING];
    size_t n = (size_t)irand(3), i;
    int bad_cat = 0, null_list = n > 0 && chance(0.1);
    int st;
    for (i = 0; i < n; i++) {
        int r = irand(7);
        cats[i] = r < 5 ? categories[r] : (r == 5 ? "noSuchCategory" : NULL);
        bad_cat |= r >= 5;
    }
    take_snapshot(I);
    before_call();
    st = fz_debug_logging(I->c, chance(0.5), n, null_list ? NULL : cats);
    if (null_list || bad_cat) {
        expect_refused(st, fn, null_list ? "NULL" : NULL, 1);
        check_unchanged(I, fn);
    } else
        outcome(st, fn, 1);
}

/* ------------------------------------------------------------------ variables */

static void call_get_real(inst *I)
{
    unsigned vr[4];
    double val[5];
    size_t n = (size_t)irand(4), nvalues = any_count(n), i;
    int null_arg = chance(0.05), bad_vr = -1, integer = -1, accel = -1;
    const char *fn = fz_name[FN_GET_REAL];
    int st;
    char token[32];
    for (i = 0; i < n; i++) {
        vr[i] = any_vr();
        if (chance(0.1) && vr_accel >= 0)
            vr[i] = (unsigned)(vr_accel + irand(n_coord));
        if (bad_vr < 0 && !valid_vr(vr[i]))
            bad_vr = (int)i;
        if (integer < 0 && valid_vr(vr[i]) && kind[vr[i]] == K_METHOD)
            integer = (int)i;
        if (accel < 0 && valid_vr(vr[i]) && kind[vr[i]] == K_ACCEL)
            accel = (int)i;
    }
    take_snapshot(I);
    before_call();
    st = fz_get_real(I->c, null_arg ? NULL : vr, n, val, nvalues);
    if (nvalues != n) {
        expect_refused(st, fn, "values for", 1);
    } else if (I->st == S_INST) {
        expect_refused(st, fn, NULL, 1);
    } else if (n > 0 && null_arg) {
        expect_refused(st, fn, "NULL", 1);
    } else if (integer >= 0) { /* the FMU checks the types before it looks the values up */
        expect_refused(st, fn, names[vr[integer]], 1);
    } else if (accel >= 0 && I->st == S_INIT) { /* der(x,2) is calculated after the initialization */
        expect_refused(st, fn, names[vr[accel]], 1);
    } else if (bad_vr >= 0) {
        snprintf(token, sizeof token, "%u", vr[bad_vr]);
        expect_refused(st, fn, token, 1);
    } else {
        /* in step mode outputs may fail to compute, and after a Model Exchange instance's states
         * were set, or for der(x,2), anywhere after the initialization */
        outcome(st, fn, I->st == S_INIT || (!I->me && I->st != S_STEP && accel < 0));
        return;
    }
    check_unchanged(I, fn);
}

/* which entry of a set makes the rules refuse it (-1: none); *may_fail: a parameter rule or a
 * declared bound may refuse it */
static int refused_entry(inst *I, const unsigned *vr, const double *val, size_t n, int *may_fail)
{
    size_t i;
    *may_fail = 0;
    for (i = 0; i < n; i++) {
        int k = valid_vr(vr[i]) ? kind[vr[i]] : -1;
        double v = val[i];
        if (k < 0 || k == K_METHOD || !isfinite(v) || k == K_CALC || k == K_ACCEL)
            return (int)i;
        if (I->st == S_CONT && (k == K_TUNABLE || k == K_SOLVER || k == K_CTOL))
            return (int)i; /* tunable parameters change in event mode, not in continuous-time mode */
        if (started(I) && (k == K_STATE || k == K_FIXED))
            return (int)i;
        if (k == K_CTOL && !(v > 0.0))
            return (int)i;
        if (k == K_SOLVER) {
            int ok = (int)vr[i] == vr_rtol ? (v >= 1e-14 && v <= 0.1)
                     : (int)vr[i] == vr_atol ? (v >= 0.0 && v <= 1.0)
                                             : (v == 0.0 || v >= 1e-10);
            if (!ok)
                return (int)i;
        }
        if (k == K_TUNABLE || k == K_FIXED || k == K_INPUT)
            *may_fail = 1; /* the model's parameter rules and declared bounds */
    }
    return -1;
}

/* 1 if msg names one of the n value references (by name, or by number if unknown) */
static int names_one(const char *msg, const unsigned *vr, size_t n)
{
    char num[32];
    size_t i;
    for (i = 0; i < n; i++) {
        snprintf(num, sizeof num, "%u", vr[i]);
        if (strstr(msg, valid_vr(vr[i]) ? names[vr[i]] : num) != NULL)
            return 1;
    }
    return 0;
}

static void call_set_real(inst *I)
{
    unsigned vr[4];
    double val[5];
    size_t n = (size_t)(1 + irand(3)), nvalues = any_count(n), i;
    int null_arg = chance(0.04), first_bad, may_fail;
    const char *fn = fz_name[FN_SET_REAL];
    int st;
    for (i = 0; i < n; i++) {
        vr[i] = chance(0.05) && vr_ctol >= 0 ? (unsigned)vr_ctol : any_vr();
        val[i] = any_value(vr[i]);
    }
    first_bad = refused_entry(I, vr, val, n, &may_fail);
    take_snapshot(I);
    before_call();
    st = fz_set_real(I->c, null_arg ? NULL : vr, n, val, nvalues);
    if (nvalues != n)
        expect_refused(st, fn, "values for", 1);
    else if (I->st == S_TERM || I->st == S_ERR)
        expect_refused(st, fn, NULL, 1);
    else if (null_arg)
        expect_refused(st, fn, "NULL", 1);
    else if (first_bad >= 0) {
        /* which culprit is named first is the FMU's: any entry of the call will do */
        expect_refused(st, fn, NULL, 1);
        if (st == FZ_ERROR && !names_one(last_msg, vr, n)) {
            unnamed++;
            fprintf(stderr, "UNNAMED %s: %s\n", fn, last_msg);
        }
    } else {
        if (!outcome(st, fn, !may_fail)) {
            /* refused by a parameter rule: it must name one of the variables set */
            if (!names_one(last_msg, vr, n)) {
                unnamed++;
                fprintf(stderr, "UNNAMED %s rule: %s\n", fn, last_msg);
            }
            check_unchanged(I, fn);
        }
        return;
    }
    check_unchanged(I, fn);
}

/* The Integer/Enumeration 'method' (or FMI 2.0's deprecated name 'solver'), values 0, 1 and 2,
 * and Integer access to anything else. */
static void call_integer(inst *I)
{
    unsigned vr[1];
    long long iv[2];
    size_t n = (size_t)irand(2), nvalues = any_count(n);
    int set = chance(0.5), k, allowed;
    const char *fn = fz_name[set ? FN_SET_INT : FN_GET_INT];
    char token[32];
    int st;
    vr[0] = chance(0.5) || vr_method < 0 ? any_vr() : (unsigned)vr_method;
    iv[0] = irand(5) - 1;
    k = n > 0 && valid_vr(vr[0]) ? kind[vr[0]] : -1;
    allowed = set ? (I->st <= S_CONT) : I->st != S_INST;
    take_snapshot(I);
    before_call();
    st = set ? fz_set_int(I->c, vr, n, iv, nvalues) : fz_get_int(I->c, vr, n, iv, nvalues);
    if (nvalues != n)
        expect_refused(st, fn, "values for", 1);
    else if (!allowed)
        expect_refused(st, fn, NULL, 1);
    else if (n == 0 || (k == K_METHOD && (!set || (iv[0] >= 0 && iv[0] <= 2 && I->st != S_CONT)))) {
        outcome(st, fn, 1);
        if (n > 0 && !set && st == FZ_OK && !(iv[0] >= 0 && iv[0] <= 2))
            wrong_result(fn, "the method is not 0, 1 or 2");
        return;
    } else if (k == K_METHOD) {
        expect_refused(st, fn, names[vr[0]], 1); /* not a method, or set in continuous-time mode */
    } else {
        snprintf(token, sizeof token, "%u", vr[0]); /* a Real, or unknown */
        expect_refused(st, fn, token, 1);
    }
    check_unchanged(I, fn);
}

/* ------------------------------------------------------------------ Co-Simulation */

static void call_do_step(inst *I)
{
    double t = chance(0.9) ? I->t : (chance(0.5) ? I->t + 0.5 : NAN);
    double h, last = NAN;
    double before[MAX_VARS], after[MAX_VARS];
    int have_before = 0, refuse, null_out = fz_version == 3 && chance(0.03);
    const char *fn = fz_name[FN_DO_STEP];
    int st;
    switch (irand(10)) {
    case 0: h = 0.0; break;
    case 1: h = -0.01; break;
    case 2: h = chance(0.5) ? NAN : INFINITY; break;
    case 3: h = 0.2; break;
    default: h = 0.001 + 0.02 * urand(); break;
    }
    refuse = null_out || I->me || I->st != S_STEP || !(h > 0.0) || !isfinite(h) || !isfinite(t) ||
             fabs(t - I->t) > 1e-9 * (1.0 + fabs(I->t));
    if (I->st == S_STEP) {
        int saved = n_msg;
        have_before = fz_get_real(I->c, reals, (size_t)nreals, before, (size_t)nreals) == FZ_OK;
        n_msg = saved;
    }
    take_snapshot(I);
    before_call();
    st = fz_do_step(I->c, t, h, null_out, &last);
    if (refuse) {
        expect_refused(st, fn, null_out ? "NULL" : I->me ? "Co-Simulation" : NULL, 1);
        check_unchanged(I, fn);
        if (!null_out && !I->me && I->st == S_STEP && last != I->t) {
            lost++;
            fprintf(stderr, "LOST: last successful time %.17g after a refused step, expected %.17g\n", last, I->t);
        }
        return;
    }
    if (outcome(st, fn, 0)) {
        I->t = t + h;
        steps_ok++;
        if (last != I->t) {
            wrong_result(fn, "the last successful time is not the end of the step");
            fprintf(stderr, "  %.17g != %.17g\n", last, I->t);
        }
        return;
    }
    steps_failed++;
    if (last != I->t) {
        lost++; /* the last successful time is the last communication point */
        fprintf(stderr, "LOST: last successful time %.17g after a failed step, expected %.17g\n", last, I->t);
    }
    if (strstr(last_msg, "max_internal_step") != NULL && strstr(last_msg, "internal steps") != NULL) {
        check_unchanged(I, fn); /* refused for its step limit: nothing changed */
        return;
    }
    I->st = S_ERR;
    /* nothing computed is lost: the last communication point's values are still there */
    if (have_before) {
        int saved = n_msg;
        if (fz_get_real(I->c, reals, (size_t)nreals, after, (size_t)nreals) != FZ_OK ||
            memcmp(before, after, sizeof(double) * (size_t)nreals) != 0) {
            lost++;
            fprintf(stderr, "LOST after failed step: %s\n", last_msg);
        }
        n_msg = saved;
    }
}

/* Directional (adjoint = 0) or adjoint derivatives of outputs by inputs: the knowns must be
 * inputs, the unknowns outputs, the seeds (one per known, or per unknown) finite; FMI 3.0's seed
 * and sensitivity counts must match.  A directional derivative that succeeds is checked against
 * the adjoint one: <w, J v> = <J^T w, v>. */
static void call_derivative(inst *I, int adjoint)
{
    unsigned unk[3], kn[3];
    double seed[4], sens[4], w[3], jtw[3];
    size_t nu = (size_t)irand(4), nk = (size_t)irand(3), i;
    size_t nseed = adjoint ? nu : nk, nsens = adjoint ? nk : nu;
    int refuse = I->me || (I->st != S_STEP && I->st != S_TERM), null_arg = chance(0.05);
    int sized = fz_version == 3 && chance(0.05);
    const char *fn = fz_name[adjoint ? FN_ADJOINT : FN_DIRECTIONAL];
    int st;
    for (i = 0; i < nu; i++) {
        unk[i] = chance(0.5) ? outputs[irand(noutputs)] : any_vr();
        if (!valid_vr(unk[i]) || (kind[unk[i]] != K_STATE && kind[unk[i]] != K_CALC))
            refuse = 1;
    }
    for (i = 0; i < nk; i++) {
        kn[i] = ninputs > 0 && chance(0.8) ? inputs[irand(ninputs)] : any_vr();
        if (!valid_vr(kn[i]) || kind[kn[i]] != K_INPUT)
            refuse = 1;
    }
    for (i = 0; i < nseed; i++) {
        seed[i] = chance(0.9) ? nrand() : NAN;
        refuse |= !isfinite(seed[i]);
    }
    if (null_arg && (nu > 0 || nseed > 0)) /* the unknowns and the seeds are NULL */
        refuse = 1;
    if (sized)
        nseed += 1, refuse = 1;
    take_snapshot(I);
    before_call();
    st = (adjoint ? fz_adjoint : fz_directional)(I->c, null_arg ? NULL : unk, nu, kn, nk, null_arg ? NULL : seed,
                                                 nseed, sens, nsens);
    if (refuse) {
        expect_refused(st, fn, sized ? "seeds" : NULL, 1);
        check_unchanged(I, fn);
        return;
    }
    if (!outcome(st, fn, 0) || adjoint || fz_version != 3 || nu == 0 || nk == 0)
        return; /* may fail at a singular KKT system */
    for (i = 0; i < nu; i++)
        w[i] = nrand();
    before_call();
    st = fz_adjoint(I->c, unk, nu, kn, nk, w, nu, jtw, nk);
    if (outcome(st, fz_name[FN_ADJOINT], 1)) {
        double a = 0.0, b = 0.0, scale = 0.0;
        dual_checks++;
        for (i = 0; i < nu; i++)
            a += w[i] * sens[i], scale += fabs(w[i] * sens[i]);
        for (i = 0; i < nk; i++)
            b += jtw[i] * seed[i], scale += fabs(jtw[i] * seed[i]);
        if (fabs(a - b) > 1e-12 * (1.0 + scale))
            wrong_result(fz_name[FN_ADJOINT], "<w, J v> differs from <J^T w, v>");
    }
}

/* ------------------------------------------------------------------ FMU states */

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
    void *s = NULL;
    int st, null_arg = chance(0.05);
    const char *fn = fz_name[FN_GET_STATE];
    if (slot == NULL)
        return;
    before_call();
    st = fz_get_state(I->c, null_arg ? NULL : &s);
    if (I->st == S_ERR || null_arg) {
        expect_refused(st, fn, I->st == S_ERR ? "not allowed" : "NULL", 1); /* the mode is checked first */
        return;
    }
    if (outcome(st, fn, 1)) {
        slot->s = s;
        slot->owner = (int)(I - in);
        slot->me = I->me;
        slot->st = I->st;
        slot->t = I->t;
    }
}

static void call_set_state(inst *I)
{
    int k = irand(MAX_STATES), variant = irand(10);
    const char *fn = fz_name[FN_SET_STATE];
    int st;
    take_snapshot(I);
    before_call();
    if (variant == 0) {
        st = fz_set_state(I->c, NULL);
        expect_refused(st, fn, "NULL", 1);
        check_unchanged(I, fn);
    } else if (variant == 1) {
        st = fz_set_state(I->c, fake_state);
        expect_refused(st, fn, "another model", 1);
        check_unchanged(I, fn);
    } else if (pool[k].s != NULL) {
        st = fz_set_state(I->c, pool[k].s);
        if (pool[k].me != I->me) { /* a state of the other interface */
            expect_refused(st, fn, I->me ? "taken from a Co-Simulation" : "taken from a Model Exchange", 1);
            check_unchanged(I, fn);
        } else if (outcome(st, fn, 1))
            I->st = pool[k].st, I->t = pool[k].t, restored++;
    }
}

static void call_free_state(void)
{
    int k = irand(MAX_STATES);
    inst *I = &in[pool[k].owner];
    int st;
    if (pool[k].s == NULL || I->c == NULL)
        return;
    before_call();
    st = fz_free_state(I->c, &pool[k].s);
    outcome(st, fz_name[FN_FREE_STATE], 1);
    pool[k].s = NULL;
}

static void call_serialize(inst *I)
{
    int k = irand(MAX_STATES), variant = irand(8);
    size_t n = 0;
    int st;
    static unsigned char small[8];
    if (pool[k].s == NULL)
        return;
    before_call();
    if (variant == 0) {
        st = fz_state_size(I->c, pool[k].s, NULL);
        expect_refused(st, fz_name[FN_STATE_SIZE], "NULL", 1);
        return;
    }
    st = fz_state_size(I->c, pool[k].s, &n);
    if (!outcome(st, fz_name[FN_STATE_SIZE], 1) || n > sizeof blob)
        return;
    before_call();
    if (variant == 1) {
        st = fz_serialize(I->c, pool[k].s, NULL, n);
        expect_refused(st, fz_name[FN_SERIALIZE], "NULL buffer", 1);
    } else if (variant == 2) {
        st = fz_serialize(I->c, pool[k].s, small, sizeof small);
        expect_refused(st, fz_name[FN_SERIALIZE], "too small", 1);
    } else {
        st = fz_serialize(I->c, pool[k].s, blob, n);
        if (outcome(st, fz_name[FN_SERIALIZE], 1))
            blob_size = n, blob_st = pool[k].st, blob_t = pool[k].t, blob_me = pool[k].me;
    }
}

static void call_deserialize(inst *I)
{
    static unsigned char work[1 << 16];
    state_slot *slot = free_slot();
    void *s = NULL;
    size_t n = blob_size;
    int variant = irand(7), changes = 0, null_out = 0;
    const char *fn = fz_name[FN_DESERIALIZE];
    int st;
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
    } else if (variant == 3) {
        null_out = chance(0.5);
    }
    before_call();
    st = fz_deserialize(I->c, work, n, null_out ? NULL : &s);
    if (changes || null_out) {
        expect_refused(st, fn, null_out ? "NULL" : NULL, 1);
        if (st == FZ_OK && s != NULL)
            fz_free_state(I->c, &s);
        return;
    }
    if (blob_me != I->me) { /* a state of the other interface */
        expect_refused(st, fn, "taken from", 1);
        if (st == FZ_OK && s != NULL)
            fz_free_state(I->c, &s);
        return;
    }
    if (outcome(st, fn, 1) && s != NULL) {
        deserialized++;
        slot->s = s;
        slot->owner = (int)(I - in);
        slot->me = blob_me;
        slot->st = blob_st;
        slot->t = blob_t;
    }
}

/* ------------------------------------------------------------------ Model Exchange */

/* the derivatives of the coordinates (ydot) are the velocity states (v) */
static void check_coordinate_rates(const char *fn, const double *ydot, const double *v)
{
    int j;
    for (j = 0; j < n_coord; j++)
        if (ydot[j] != v[j]) {
            wrong_result(fn, "the derivative of a coordinate is not its velocity");
            return;
        }
}

/* the token of a refused Model Exchange call made on a Co-Simulation instance */
static const char *on_cs_token(int op)
{
    if (fz_version == 3 && (op == FN_ENTER_EVENT || op == FN_UPDATE))
        return "no event mode"; /* FMI 3.0: Co-Simulation without event mode */
    return "a function of Model Exchange";
}

/* One Model Exchange function with drawn arguments, on any instance in any mode. */
static void call_me(inst *I)
{
    static const int ops[] = {FN_ENTER_EVENT, FN_UPDATE, FN_ENTER_CONT, FN_COMPLETED, FN_SET_TIME,
                              FN_SET_STATES, FN_GET_STATES, FN_DERIVATIVES, FN_EVENT_INDICATORS, FN_NOMINALS};
    int op = ops[irand((int)(sizeof ops / sizeof ops[0]))];
    const char *fn = fz_name[op], *token = NULL;
    size_t nx = 2 * (size_t)n_coord, n = nx, j;
    double x[MAX_X + 1], y[MAX_X + 1], before[MAX_X];
    int null_arg = chance(0.05), allowed, must_pass = 1, flag = 0, have_before;
    int st, refuse_arg = 0;
    double t = I->t;
    if (chance(0.05))
        n = chance(0.5) ? nx + 1 : (size_t)irand((int)nx);
    switch (op) {
    case FN_ENTER_EVENT: allowed = I->st == S_EVENT || I->st == S_CONT; break;
    case FN_UPDATE: case FN_ENTER_CONT: allowed = I->st == S_EVENT; break;
    case FN_COMPLETED: allowed = I->st == S_CONT; break;
    case FN_SET_TIME: allowed = I->st == S_EVENT || I->st == S_CONT; break;
    case FN_SET_STATES: allowed = I->st == S_CONT; break;
    case FN_NOMINALS: allowed = 1; break;
    case FN_DERIVATIVES: allowed = after_init(I); break;
    default: allowed = I->st != S_INST; break; /* states, event indicators */
    }
    have_before = I->me && I->st != S_INST && quiet_states(I, before);
    /* the arguments and what the rules say of them, in the order the FMU checks them */
    if (op == FN_UPDATE || op == FN_COMPLETED) {
        refuse_arg = null_arg; /* NULL out-arguments are checked first */
        token = "NULL";
    } else if (op == FN_SET_TIME) {
        t = chance(0.9) ? I->t + 0.01 * urand() : (chance(0.5) ? NAN : -INFINITY);
    } else if (op == FN_SET_STATES) {
        for (j = 0; j < n && j < MAX_X + 1; j++)
            x[j] = have_before && j < nx ? before[j] + 1e-3 * nrand() : nrand();
        if (chance(0.15) && n > 0)
            x[irand((int)n)] = chance(0.5) ? NAN : INFINITY;
        if (chance(0.03) && n > 0)
            x[irand((int)n)] = 1e300; /* finite: taken; the derivatives may then fail */
    }
    if (op == FN_EVENT_INDICATORS)
        n = chance(0.8) ? 0 : (size_t)irand(3); /* the model has none */
    take_snapshot(I);
    before_call();
    switch (op) {
    case FN_ENTER_EVENT: st = fz_enter_event(I->c); break;
    case FN_UPDATE: st = fz_update(I->c, null_arg, &flag); break;
    case FN_ENTER_CONT: st = fz_enter_cont(I->c); break;
    case FN_COMPLETED: st = fz_completed(I->c, null_arg, &flag); break;
    case FN_SET_TIME: st = fz_set_time(I->c, t); break;
    case FN_SET_STATES: st = fz_set_states(I->c, null_arg ? NULL : x, n); break;
    case FN_GET_STATES: st = fz_get_states(I->c, null_arg ? NULL : y, n); break;
    case FN_DERIVATIVES: st = fz_derivatives(I->c, null_arg ? NULL : y, n); break;
    case FN_EVENT_INDICATORS: st = fz_event_indicators(I->c, null_arg ? NULL : y, n); break;
    default: st = fz_nominals(I->c, null_arg ? NULL : y, n); break;
    }
    if (refuse_arg || !I->me || !allowed) {
        expect_refused(st, fn, refuse_arg ? token : !I->me ? on_cs_token(op) : "not allowed", 1);
        check_unchanged(I, fn);
        return;
    }
    /* the counts and values, after the interface and the mode */
    if (op >= FN_SET_STATES && null_arg && n > 0)
        refuse_arg = 1, token = "NULL";
    else if (op == FN_EVENT_INDICATORS ? n != 0 : (op >= FN_SET_STATES && n != nx))
        refuse_arg = 1, token = op == FN_EVENT_INDICATORS ? "event indicators" : "and the model has";
    else if (op == FN_SET_TIME && !isfinite(t))
        refuse_arg = 1, token = "not finite";
    else if (op == FN_SET_STATES)
        for (j = 0; j < n && !refuse_arg; j++)
            if (!isfinite(x[j]))
                refuse_arg = 1, token = names[j];
    if (refuse_arg) {
        expect_refused(st, fn, token, 1);
        check_unchanged(I, fn);
        return;
    }
    if (op == FN_DERIVATIVES || op == FN_UPDATE)
        must_pass = 0; /* a singular configuration, a projection that does not converge */
    if (!outcome(st, fn, must_pass)) {
        if (have_before)
            check_states_kept(I, before, fn);
        if (op == FN_UPDATE)
            I->st = S_ERR;
        return;
    }
    switch (op) {
    case FN_ENTER_EVENT: I->st = S_EVENT; events++; break;
    case FN_ENTER_CONT: I->st = S_CONT; break;
    case FN_SET_TIME: I->t = t; break;
    case FN_UPDATE:
        projections += flag;
        if (flag && n_constraints == 0)
            wrong_result(fn, "a tree's state was projected");
        break;
    case FN_COMPLETED:
        if (flag && n_constraints == 0)
            wrong_result(fn, "a tree asks for an event");
        break;
    case FN_SET_STATES:
        if (!quiet_states(I, y) || memcmp(x, y, sizeof(double) * nx) != 0)
            wrong_result(fn, "the states read back are not those set");
        break;
    case FN_DERIVATIVES:
        derivatives++;
        if (have_before)
            check_coordinate_rates(fn, y, before + n_coord);
        break;
    case FN_NOMINALS:
        for (j = 0; j < nx; j++)
            if (y[j] != 1.0)
                wrong_result(fn, "a nominal is not 1");
        break;
    default: break;
    }
}

/* Drive an instance quietly towards step mode (Co-Simulation) or event mode and then, with
 * probability p_cont, continuous-time mode (Model Exchange), through a reset if it failed or
 * terminated, so that deep states are reached often. */
static void advance(inst *I, double p_cont)
{
    int saved = n_msg;
    if (I->st == S_ERR || I->st == S_TERM) {
        fz_reset(I->c);
        I->st = S_INST;
        I->t = 0.0;
    }
    if (I->st == S_INST && (fz_version == 3 || fz_setup(I->c, 0, 0.0, 0.0, 0, 0.0) == FZ_OK) &&
        fz_enter_init(I->c, 0, 0.0, 0.0, 0, 0.0) == FZ_OK) {
        I->st = S_INIT;
        I->t = 0.0;
    }
    if (I->st == S_INIT)
        I->st = fz_exit_init(I->c) > FZ_WARNING ? S_ERR : I->me ? S_EVENT : S_STEP;
    if (I->st == S_CONT && fz_enter_event(I->c) == FZ_OK)
        I->st = S_EVENT;
    if (I->st == S_EVENT && chance(p_cont) && fz_enter_cont(I->c) == FZ_OK)
        I->st = S_CONT;
    n_msg = saved;
}

/* An importer's explicit Euler loop: derivatives, time and states, completed integrator step,
 * and the projection event when the FMU asks for it (constraint_tolerance small, so it does). */
static void me_integrate(inst *I)
{
    double x[MAX_X], xd[MAX_X], y[MAX_X], acc[MAX_X];
    unsigned avr[MAX_X];
    size_t nx = 2 * (size_t)n_coord, j;
    int k, steps = 5 + irand(40), ev = 0, flag = 0;
    double h = chance(0.5) ? 1e-3 : 1e-4 + 1e-2 * urand();
    advance(I, 0.0);
    if (I->st != S_EVENT)
        return;
    if (vr_ctol >= 0 && chance(0.8)) {
        unsigned vr = (unsigned)vr_ctol;
        double tol = pow(10.0, -9.0 + 4.0 * urand());
        before_call();
        if (!outcome(fz_set_real(I->c, &vr, 1, &tol, 1), fz_name[FN_SET_REAL], 1))
            return;
    }
    before_call();
    if (!outcome(fz_enter_cont(I->c), fz_name[FN_ENTER_CONT], 1))
        return;
    I->st = S_CONT;
    for (k = 0; k < steps; k++) {
        before_call();
        if (!outcome(fz_get_states(I->c, x, nx), fz_name[FN_GET_STATES], 1))
            return;
        before_call();
        if (!outcome(fz_derivatives(I->c, xd, nx), fz_name[FN_DERIVATIVES], 0)) {
            check_states_kept(I, x, fz_name[FN_DERIVATIVES]);
            return;
        }
        derivatives++;
        check_coordinate_rates(fz_name[FN_DERIVATIVES], xd, x + n_coord);
        if (vr_accel >= 0 && chance(0.2)) { /* der(x,2) are the derivatives of the velocities */
            for (j = 0; j < (size_t)n_coord; j++)
                avr[j] = (unsigned)vr_accel + (unsigned)j;
            before_call();
            if (outcome(fz_get_real(I->c, avr, (size_t)n_coord, acc, (size_t)n_coord), fz_name[FN_GET_REAL], 0))
                for (j = 0; j < (size_t)n_coord; j++)
                    if (!(fabs(acc[j] - xd[n_coord + j]) <= 1e-9 * (1.0 + fabs(acc[j])))) {
                        wrong_result(fz_name[FN_GET_REAL], "der(x,2) is not the derivative of der(x)");
                        break;
                    }
        }
        for (j = 0; j < nx; j++)
            y[j] = x[j] + h * xd[j];
        before_call();
        if (!outcome(fz_set_time(I->c, I->t + h), fz_name[FN_SET_TIME], 1))
            return;
        I->t += h;
        for (j = 0; j < nx; j++)
            if (!isfinite(y[j]))
                return; /* far outside the model's range: the next set is refused */
        before_call();
        if (!outcome(fz_set_states(I->c, y, nx), fz_name[FN_SET_STATES], 1))
            return;
        if (!quiet_states(I, x) || memcmp(x, y, sizeof(double) * nx) != 0)
            wrong_result(fz_name[FN_SET_STATES], "the states read back are not those set");
        before_call();
        if (!outcome(fz_completed(I->c, 0, &ev), fz_name[FN_COMPLETED], 1))
            return;
        me_steps++;
        if (ev && n_constraints == 0)
            wrong_result(fz_name[FN_COMPLETED], "a tree asks for an event");
        if (!ev)
            continue;
        before_call();
        if (!outcome(fz_enter_event(I->c), fz_name[FN_ENTER_EVENT], 1))
            return;
        I->st = S_EVENT;
        events++;
        before_call();
        if (!outcome(fz_update(I->c, 0, &flag), fz_name[FN_UPDATE], 0)) {
            check_states_kept(I, y, fz_name[FN_UPDATE]);
            I->st = S_ERR;
            return;
        }
        projections += flag;
        before_call();
        if (!outcome(fz_enter_cont(I->c), fz_name[FN_ENTER_CONT], 1))
            return;
        I->st = S_CONT;
        before_call();
        if (outcome(fz_completed(I->c, 0, &ev), fz_name[FN_COMPLETED], 1) && ev)
            wrong_result(fz_name[FN_UPDATE], "the projection left a drift above constraint_tolerance");
    }
}

/* ------------------------------------------------------------------ without an instance */

static void call_null_instance(void)
{
    unsigned vr[1] = {0};
    double v[1] = {0.0}, last;
    void *s = NULL;
    int flag, st, r = irand(10);
    switch (r) {
    case 0: st = fz_enter_init(NULL, 0, 0.0, 0.0, 0, 0.0); break;
    case 1: st = fz_do_step(NULL, 0.0, 0.01, 0, &last); break;
    case 2: st = fz_get_real(NULL, vr, 1, v, 1); break;
    case 3: st = fz_set_real(NULL, vr, 1, v, 1); break;
    case 4: st = fz_get_state(NULL, &s); break;
    case 5: st = fz_terminate(NULL); break;
    case 6: st = fz_reset(NULL); break;
    case 7: st = fz_set_time(NULL, 0.0); break;
    case 8: st = fz_derivatives(NULL, v, 1); break;
    default: st = fz_completed(NULL, 0, &flag); break;
    }
    calls++;
    expect_refused(st, "(null instance)", NULL, 0);
}

/* ------------------------------------------------------------------ main */

static int kind_of(const char *k)
{
    static const char *const words[] = {"state", "calc", "fixed", "tunable", "solver", "method", "input",
                                        "accel", "ctol"};
    int i;
    for (i = 0; i < K_NONE; i++)
        if (strcmp(k, words[i]) == 0)
            return i;
    return -1;
}

static int read_description(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512], k[32], name[128];
    int vr, i;
    if (f == NULL)
        return 0;
    for (i = 0; i < MAX_VARS; i++)
        kind[i] = K_NONE;
    if (fgets(line, sizeof line, f) == NULL || sscanf(line, "guid %127s", guid) != 1 ||
        fgets(line, sizeof line, f) == NULL || sscanf(line, "sizes %d %d", &n_coord, &n_constraints) != 2 ||
        n_coord < 1 || 2 * n_coord > MAX_X) {
        fclose(f);
        return 0;
    }
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "%d %31s %127s", &vr, k, name) != 3 || vr < 0 || vr >= MAX_VARS - 8 ||
            kind_of(k) < 0) {
            fclose(f);
            return 0;
        }
        kind[vr] = kind_of(k);
        if (vr >= nvr)
            nvr = vr + 1;
        if (kind[vr] != K_METHOD && kind[vr] != K_ACCEL)
            reals[nreals++] = (unsigned)vr;
        if (kind[vr] == K_METHOD && vr_method < 0)
            vr_method = vr; /* 'method', not its deprecated name 'solver' (after it) */
        if (kind[vr] == K_ACCEL && vr_accel < 0)
            vr_accel = vr;
        if (kind[vr] == K_CTOL)
            vr_ctol = vr;
        if (kind[vr] == K_INPUT)
            inputs[ninputs++] = (unsigned)vr;
        if (kind[vr] == K_STATE || kind[vr] == K_CALC)
            outputs[noutputs++] = (unsigned)vr;
        snprintf(names[vr], sizeof names[vr], "%s", name);
        if (strcmp(name, "solver_rtol") == 0) vr_rtol = vr;
        if (strcmp(name, "solver_atol") == 0) vr_atol = vr;
        if (strcmp(name, "max_internal_step") == 0) vr_hmax = vr;
    }
    fclose(f);
    return noutputs > 0 && vr_rtol >= 0 && vr_atol >= 0 && vr_hmax >= 0;
}

int main(int argc, char **argv)
{
    long n_calls;
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
    while (calls < n_calls) {
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
        if (r < 8) {
            fz_version_call(I); /* counts its own calls */
            continue;
        }
        if (r < 26)
            advance(I, 0.6);
        calls++;
        if (r < 28) {
            if (fz_version == 2)
                call_setup(I); /* FMI 3.0 sets the experiment up in call_mode's initialization */
            else
                call_get_real(I);
        } else if (r < 32) call_mode(I);
        else if (r < 39) call_get_real(I);
        else if (r < 50) call_set_real(I);
        else if (r < 53) call_integer(I);
        else if (r < 55) call_debug_logging(I);
        else if (r < 75) {
            /* the interface's own calls mostly, the other one's sometimes */
            if (I->me ? chance(0.9) : chance(0.1)) {
                if (I->me && chance(0.12))
                    me_integrate(I);
                else
                    call_me(I);
            } else
                call_do_step(I);
        } else if (r < 79) call_get_state(I);
        else if (r < 83) call_set_state(I);
        else if (r < 85) call_free_state();
        else if (r < 89) call_serialize(I);
        else if (r < 93) call_deserialize(I);
        else if (r < 97) call_derivative(I, fz_version == 3 && chance(0.5));
        else call_mode(I);
    }
    for (k = 0; k < MAX_STATES; k++)
        if (pool[k].s != NULL && in[pool[k].owner].c != NULL)
            fz_free_state(in[pool[k].owner].c, &pool[k].s);
    for (k = 0; k < MAX_INST; k++)
        if (in[k].c != NULL)
            fz_free_instance(in[k].c);
    printf("calls=%ld bad=%ld accepted=%ld unnamed=%ld changed=%ld lost=%ld silent=%ld refused_good=%ld "
           "wrong=%ld steps_ok=%ld steps_failed=%ld restored=%ld deserialized=%ld me_steps=%ld "
           "derivatives=%ld events=%ld projections=%ld dual_checks=%ld\n",
           calls, bad, accepted, unnamed, changed, lost, silent, refused_good, wrong, steps_ok, steps_failed,
           restored, deserialized, me_steps, derivatives, events, projections, dual_checks);
    return 0;
}
