/* pythonfmu_guard.c -- the guard library of mbsfmu's pythonfmu FMUs (mbsfmu.fmu.pythonfmu_export).
 *
 * pythonfmu's FMI library turns every Python exception into fmi2Fatal (and frees the Python
 * instance), has no other way to return fmi2Error, and passes log messages to the importer only
 * while debug logging is on.  This library is the FMU's binary: it loads pythonfmu's library
 * (GUARD_INNER, beside it), forwards every FMI call to it, and
 *  - checks the instance (a registry of live instances), the pointer arguments and the GUID
 *    before anything reaches Python;
 *  - lets the Python slave report warnings and errors while it handles a call
 *    (mbsfmu_guard_report): they go to the importer's logger at once, with or without debug
 *    logging, and the call returns the worst status reported;
 *  - answers the status inquiries itself (fmi2LastSuccessfulTime from mbsfmu_guard_time);
 *  - wraps FMU states in registered handles, so that a pointer that is not a live state of this
 *    model is refused without being dereferenced.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GUARD_GUID, GUARD_MODEL, GUARD_INNER: written per model by mbsfmu.fmu.pythonfmu_export */
#include "guard_config.h"

/* ------------------------------------------------------------ FMI 2.0 types (the standard ABI) */
typedef void *fmi2Component;
typedef void *fmi2ComponentEnvironment;
typedef void *fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef char fmi2Char;
typedef const fmi2Char *fmi2String;
typedef char fmi2Byte;
typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef enum { fmi2ModelExchange, fmi2CoSimulation } fmi2Type;
typedef enum { fmi2DoStepStatus, fmi2PendingStatus, fmi2LastSuccessfulTime, fmi2Terminated } fmi2StatusKind;
typedef void (*fmi2CallbackLogger)(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String,
                                   fmi2String, ...);
typedef struct {
    fmi2CallbackLogger logger;
    void *(*allocateMemory)(size_t, size_t);
    void (*freeMemory)(void *);
    void (*stepFinished)(fmi2ComponentEnvironment, fmi2Status);
    fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;

/* ------------------------------------------------------------ pythonfmu's library */
typedef struct {
    void *handle;
    fmi2Component (*Instantiate)(fmi2String, fmi2Type, fmi2String, fmi2String,
                                 const fmi2CallbackFunctions *, fmi2Boolean, fmi2Boolean);
    void (*FreeInstance)(fmi2Component);
    fmi2Status (*SetDebugLogging)(fmi2Component, fmi2Boolean, size_t, const fmi2String[]);
    fmi2Status (*SetupExperiment)(fmi2Component, fmi2Boolean, fmi2Real, fmi2Real, fmi2Boolean,
                                  fmi2Real);
    fmi2Status (*EnterInitializationMode)(fmi2Component);
    fmi2Status (*ExitInitializationMode)(fmi2Component);
    fmi2Status (*Terminate)(fmi2Component);
    fmi2Status (*Reset)(fmi2Component);
    fmi2Status (*GetReal)(fmi2Component, const fmi2ValueReference[], size_t, fmi2Real[]);
    fmi2Status (*GetInteger)(fmi2Component, const fmi2ValueReference[], size_t, fmi2Integer[]);
    fmi2Status (*GetBoolean)(fmi2Component, const fmi2ValueReference[], size_t, fmi2Boolean[]);
    fmi2Status (*GetString)(fmi2Component, const fmi2ValueReference[], size_t, fmi2String[]);
    fmi2Status (*SetReal)(fmi2Component, const fmi2ValueReference[], size_t, const fmi2Real[]);
    fmi2Status (*SetInteger)(fmi2Component, const fmi2ValueReference[], size_t, const fmi2Integer[]);
    fmi2Status (*SetBoolean)(fmi2Component, const fmi2ValueReference[], size_t, const fmi2Boolean[]);
    fmi2Status (*SetString)(fmi2Component, const fmi2ValueReference[], size_t, const fmi2String[]);
    fmi2Status (*GetFMUstate)(fmi2Component, fmi2FMUstate *);
    fmi2Status (*SetFMUstate)(fmi2Component, fmi2FMUstate);
    fmi2Status (*FreeFMUstate)(fmi2Component, fmi2FMUstate *);
    fmi2Status (*SerializedFMUstateSize)(fmi2Component, fmi2FMUstate, size_t *);
    fmi2Status (*SerializeFMUstate)(fmi2Component, fmi2FMUstate, fmi2Byte[], size_t);
    fmi2Status (*DeSerializeFMUstate)(fmi2Component, const fmi2Byte[], size_t, fmi2FMUstate *);
    fmi2Status (*DoStep)(fmi2Component, fmi2Real, fmi2Real, fmi2Boolean);
} inner_api;

static inner_api api;
static char load_error[8192];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *symbol(const char *name)
{
    void *f = dlsym(api.handle, name);
    if (f == NULL && load_error[0] == '\0')
        snprintf(load_error, sizeof load_error, "%s has no function %s", GUARD_INNER, name);
    return f;
}

#define BIND(name) (*(void **)&api.name = symbol("fmi2" #name))

/* Load pythonfmu's library from the folder of this one (once); 0 on success. */
static int load_inner(void)
{
    Dl_info info;
    char path[4096];
    const char *slash;
    if (api.handle != NULL)
        return 0;
    if (load_error[0] != '\0')
        return 1;
    if (dladdr((void *)&load_inner, &info) == 0 || info.dli_fname == NULL) {
        snprintf(load_error, sizeof load_error, "cannot find the folder of the FMU's binary");
        return 1;
    }
    slash = strrchr(info.dli_fname, '/');
    snprintf(path, sizeof path, "%.*s/%s", slash ? (int)(slash - info.dli_fname) : 1,
             slash ? info.dli_fname : ".", GUARD_INNER);
    api.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (api.handle == NULL) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error,
                 "cannot load pythonfmu's library %s: %s (the FMU runs in a Python interpreter with "
                 "mbsfmu installed)", path, why ? why : "unknown reason");
        return 1;
    }
    BIND(Instantiate); BIND(FreeInstance); BIND(SetDebugLogging); BIND(SetupExperiment);
    BIND(EnterInitializationMode); BIND(ExitInitializationMode); BIND(Terminate); BIND(Reset);
    BIND(GetReal); BIND(GetInteger); BIND(GetBoolean); BIND(GetString);
    BIND(SetReal); BIND(SetInteger); BIND(SetBoolean); BIND(SetString);
    BIND(GetFMUstate); BIND(SetFMUstate); BIND(FreeFMUstate); BIND(SerializedFMUstateSize);
    BIND(SerializeFMUstate); BIND(DeSerializeFMUstate); BIND(DoStep);
    if (load_error[0] != '\0') {
        dlclose(api.handle);
        api.handle = NULL;
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------ instances */
typedef struct guard {
    struct guard *next;        /* registry of live instances */
    fmi2Component inner;       /* pythonfmu's instance */
    fmi2CallbackFunctions cb;
    char name[256];
    double time;               /* last communication point, reported by the slave */
    fmi2Status verdict;        /* worst status the slave reported during the current call */
    int dead;                  /* pythonfmu returned fmi2Fatal: its instance is gone */
    int connected;             /* the slave found this library (mbsfmu_guard_active) */
} guard;

static guard *instances;
static __thread guard *current; /* the instance whose call the slave is handling */

/* The message goes to the logger as its format string: '%' is escaped. */
static void emit(const guard *g, fmi2Status status, const char *category, const char *text)
{
    size_t n, i, j = 0;
    char small[1024], *buf;
    if (g == NULL || g->cb.logger == NULL)
        return;
    n = strlen(text);
    buf = 2 * n + 1 <= sizeof small ? small : malloc(2 * n + 1);
    if (buf == NULL) {
        buf = small;
        n = (sizeof small - 1) / 2;
    }
    for (i = 0; i < n; i++) {
        buf[j++] = text[i];
        if (text[i] == '%')
            buf[j++] = '%';
    }
    buf[j] = '\0';
    g->cb.logger(g->cb.componentEnvironment, g->name, status, category, buf);
    if (buf != small)
        free(buf);
}

static void logf_(const guard *g, fmi2Status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* t with the fewest digits that read back as t (as Python's repr) */
static void format_time(double t, char *buf, size_t size)
{
    int digits;
    for (digits = 1; digits < 17; digits++) {
        snprintf(buf, size, "%.*g", digits, t);
        if (strtod(buf, NULL) == t)
            return;
    }
    snprintf(buf, size, "%.17g", t);
}

/* fmt starts with the function name and ':'; the message gets " at t=<time>" after the name. */
static void logf_(const guard *g, fmi2Status status, const char *fmt, ...)
{
    char buf[2048], out[2200], t[32];
    const char *colon;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    colon = strchr(buf, ':');
    format_time(g ? g->time : 0.0, t, sizeof t);
    if (colon != NULL && strncmp(buf, "fmi2", 4) == 0)
        snprintf(out, sizeof out, "%.*s at t=%s%s", (int)(colon - buf), buf, t, colon);
    else
        snprintf(out, sizeof out, "%s", buf);
    emit(g, status, status == fmi2Warning ? "logStatusWarning" : "logStatusError", out);
}

#define ERR(g, ...) (logf_((g), fmi2Error, __VA_ARGS__), fmi2Error)

/* The live instance c, or NULL (nothing can be logged for an unknown instance). */
static guard *find(fmi2Component c)
{
    guard *g;
    pthread_mutex_lock(&lock);
    for (g = instances; g != NULL && g != (guard *)c; g = g->next)
        ;
    pthread_mutex_unlock(&lock);
    return g;
}

/* The instance c if it can take a call of fn, else NULL (after logging why). */
static guard *usable(fmi2Component c, const char *fn)
{
    guard *g = find(c);
    if (g != NULL && g->dead) {
        logf_(g, fmi2Error, "%s: the instance is unusable after a fatal error in pythonfmu; free it",
              fn);
        return NULL;
    }
    return g;
}

/* Around every forwarded call: the slave's reports go to g; the result is the worse of the
 * inner status and the worst report. */
static guard *enter(guard *g)
{
    guard *saved = current;
    current = g;
    g->verdict = fmi2OK;
    return saved;
}

static fmi2Status leave(guard *g, guard *saved, fmi2Status inner, const char *fn)
{
    current = saved;
    if (inner == fmi2Fatal) {
        g->dead = 1;
        logf_(g, fmi2Fatal, "%s: a Python exception escaped the slave (pythonfmu reports it only "
                            "with debug logging on); the instance cannot be used any more", fn);
    }
    return inner > g->verdict ? inner : g->verdict;
}

#define FORWARD(g, fn, call)                              \
    do {                                                  \
        guard *saved_ = enter(g);                         \
        fmi2Status inner_ = (call);                       \
        return leave((g), saved_, inner_, fn);            \
    } while (0)

/* ------------------------------------------------------------ functions for the Python slave */

/* Log a warning or error of the call in progress; 1 if there is one, 0 otherwise. */
int mbsfmu_guard_report(int status, const char *category, const char *message)
{
    guard *g = current;
    if (g == NULL)
        return 0;
    if (status < fmi2OK || status > fmi2Fatal)
        status = fmi2Error;
    emit(g, (fmi2Status)status, category ? category : "logAll", message ? message : "");
    if (status > (int)g->verdict)
        g->verdict = (fmi2Status)status;
    return 1;
}

/* The FMU time after the call in progress (fmi2LastSuccessfulTime). */
int mbsfmu_guard_time(double t)
{
    if (current == NULL)
        return 0;
    current->time = t;
    return 1;
}

/* The FMU time of the instance whose call is in progress (into *t); 0 if there is none. */
int mbsfmu_guard_call_time(double *t)
{
    if (current == NULL || t == NULL)
        return 0;
    *t = current->time;
    return 1;
}

/* 1 while this library is handling a call (the slave checks that it found the right copy). */
int mbsfmu_guard_active(void)
{
    if (current == NULL)
        return 0;
    current->connected = 1;
    return 1;
}

/* ------------------------------------------------------------ FMU states */
typedef struct state {
    struct state *next;
    fmi2FMUstate inner; /* pythonfmu's state (a Python object); NULL once freed */
} state;

/* Live states, and the last QUARANTINE freed ones: their memory is kept, so that a stale pointer
 * is recognized as freed instead of matching a new state at the same address. */
#define QUARANTINE 256
static state *states;
static state *freed[QUARANTINE];
static size_t n_freed;

static state *find_state(fmi2FMUstate s)
{
    state *p;
    pthread_mutex_lock(&lock);
    for (p = states; p != NULL && p != (state *)s; p = p->next)
        ;
    pthread_mutex_unlock(&lock);
    return p;
}

static int was_freed(fmi2FMUstate s)
{
    size_t i;
    int found = 0;
    pthread_mutex_lock(&lock);
    for (i = 0; i < QUARANTINE && !found; i++)
        found = freed[i] != NULL && freed[i] == (state *)s;
    pthread_mutex_unlock(&lock);
    return found;
}

/* Take s out of the live list into the quarantine (releasing the oldest one there). */
static void retire_state(state *s)
{
    state **p;
    pthread_mutex_lock(&lock);
    for (p = &states; *p != NULL; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    s->next = NULL;
    s->inner = NULL;
    free(freed[n_freed % QUARANTINE]);
    freed[n_freed++ % QUARANTINE] = s;
    pthread_mutex_unlock(&lock);
}

static fmi2Status unknown_state(guard *g, const char *fn, fmi2FMUstate s)
{
    if (was_freed(s))
        return ERR(g, "%s: the FMU state %p has been freed (fmi2FreeFMUstate); nothing was changed",
                   fn, s);
    return ERR(g, "%s: %p is not a live FMU state of model %s (GUID %s): a state of another FMU, "
                  "or not a state at all; nothing was changed",
               fn, s, GUARD_MODEL, GUARD_GUID);
}

/* Store the inner state new_inner in *out: in the handle *out names (reused, as FMI allows) or a
 * new one. */
static fmi2Status store_state(guard *g, const char *fn, fmi2FMUstate new_inner, fmi2FMUstate *out)
{
    state *s = *out != NULL ? find_state(*out) : NULL;
    if (*out != NULL && s == NULL) {
        api.FreeFMUstate(g->inner, &new_inner);
        return unknown_state(g, fn, *out);
    }
    if (s != NULL) {
        fmi2FMUstate old = s->inner;
        s->inner = new_inner;
        api.FreeFMUstate(g->inner, &old);
        return fmi2OK;
    }
    s = calloc(1, sizeof *s);
    if (s == NULL) {
        api.FreeFMUstate(g->inner, &new_inner);
        return ERR(g, "%s: out of memory", fn);
    }
    s->inner = new_inner;
    pthread_mutex_lock(&lock);
    s->next = states;
    states = s;
    pthread_mutex_unlock(&lock);
    *out = s;
    return fmi2OK;
}

/* ------------------------------------------------------------ FMI functions */
const char *fmi2GetTypesPlatform(void) { return "default"; }
const char *fmi2GetVersion(void) { return "2.0"; }

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn)
{
    guard *g, *saved;
    if (functions == NULL)
        return NULL;
    g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    g->cb = *functions;
    snprintf(g->name, sizeof g->name, "%s", instanceName ? instanceName : "(unnamed)");
    if (instanceName == NULL)
        logf_(g, fmi2Error, "fmi2Instantiate: missing instance name");
    else if (fmuType != fmi2CoSimulation)
        logf_(g, fmi2Error, "fmi2Instantiate: only Co-Simulation is supported (fmuType %d)", (int)fmuType);
    else if (fmuGUID == NULL || strcmp(fmuGUID, GUARD_GUID) != 0)
        logf_(g, fmi2Error, "fmi2Instantiate: wrong GUID '%s' (model %s has GUID '%s')",
              fmuGUID ? fmuGUID : "(null)", GUARD_MODEL, GUARD_GUID);
    else if (fmuResourceLocation == NULL)
        logf_(g, fmi2Error, "fmi2Instantiate: missing resource location");
    else {
        pthread_mutex_lock(&lock);
        int failed = load_inner();
        pthread_mutex_unlock(&lock);
        if (failed)
            logf_(g, fmi2Error, "fmi2Instantiate: %s", load_error);
        else {
            saved = enter(g);
            g->inner = api.Instantiate(instanceName, fmuType, fmuGUID, fmuResourceLocation, functions,
                                       visible, loggingOn);
            current = saved;
            if (g->inner != NULL && g->verdict < fmi2Error && !g->connected)
                logf_(g, fmi2Error, "fmi2Instantiate: the Python slave did not find this library (the "
                                    "FMU's binary) to report refused calls through; not starting without "
                                    "it");
            else if (g->inner != NULL && g->verdict < fmi2Error) {
                pthread_mutex_lock(&lock);
                g->next = instances;
                instances = g;
                pthread_mutex_unlock(&lock);
                return g;
            }
            if (g->inner != NULL) {
                saved = enter(g);
                api.FreeInstance(g->inner);
                current = saved;
            }
            else if (g->verdict < fmi2Error)
                logf_(g, fmi2Error, "fmi2Instantiate: pythonfmu could not create the slave (a "
                                    "Python exception; debug logging shows pythonfmu's message)");
        }
    }
    free(g);
    return NULL;
}

void fmi2FreeInstance(fmi2Component c)
{
    guard *g = find(c), **p;
    if (g == NULL)
        return;
    pthread_mutex_lock(&lock);
    for (p = &instances; *p != NULL; p = &(*p)->next)
        if (*p == g) {
            *p = g->next;
            break;
        }
    pthread_mutex_unlock(&lock);
    if (!g->dead) /* after a fatal error pythonfmu has released its objects already */
        api.FreeInstance(g->inner);
    free(g);
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
    guard *g = usable(c, "fmi2SetDebugLogging");
    size_t i;
    if (g == NULL)
        return fmi2Error;
    if (nCategories > 0 && categories == NULL)
        return ERR(g, "fmi2SetDebugLogging: NULL categories with nCategories = %zu", nCategories);
    for (i = 0; i < nCategories; i++)
        if (categories[i] == NULL)
            return ERR(g, "fmi2SetDebugLogging: category %zu is NULL", i);
    FORWARD(g, "fmi2SetDebugLogging", api.SetDebugLogging(g->inner, loggingOn, nCategories, categories));
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    guard *g = usable(c, "fmi2SetupExperiment");
    if (g == NULL)
        return fmi2Error;
    FORWARD(g, "fmi2SetupExperiment",
            api.SetupExperiment(g->inner, toleranceDefined, tolerance, startTime, stopTimeDefined, stopTime));
}

#define MODE_CHANGE(fname, member)                   \
    fmi2Status fname(fmi2Component c)                \
    {                                                \
        guard *g = usable(c, #fname);                \
        if (g == NULL)                               \
            return fmi2Error;                        \
        FORWARD(g, #fname, api.member(g->inner));    \
    }

MODE_CHANGE(fmi2EnterInitializationMode, EnterInitializationMode)
MODE_CHANGE(fmi2ExitInitializationMode, ExitInitializationMode)
MODE_CHANGE(fmi2Terminate, Terminate)
MODE_CHANGE(fmi2Reset, Reset)

/* get/set of each type: vr and value must be given when nvr > 0 */
#define ACCESS(fname, member, type)                                                           \
    fmi2Status fname(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, type value[]) \
    {                                                                                         \
        guard *g = usable(c, #fname);                                                         \
        if (g == NULL)                                                                        \
            return fmi2Error;                                                                 \
        if (nvr > 0 && vr == NULL)                                                            \
            return ERR(g, "%s: NULL value reference array with nvr = %zu", #fname, nvr);      \
        if (nvr > 0 && value == NULL)                                                         \
            return ERR(g, "%s: NULL value array with nvr = %zu", #fname, nvr);                \
        FORWARD(g, #fname, api.member(g->inner, vr, nvr, value));                             \
    }

ACCESS(fmi2GetReal, GetReal, fmi2Real)
ACCESS(fmi2GetInteger, GetInteger, fmi2Integer)
ACCESS(fmi2GetBoolean, GetBoolean, fmi2Boolean)
ACCESS(fmi2GetString, GetString, fmi2String)
ACCESS(fmi2SetReal, SetReal, const fmi2Real)
ACCESS(fmi2SetInteger, SetInteger, const fmi2Integer)
ACCESS(fmi2SetBoolean, SetBoolean, const fmi2Boolean)

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         const fmi2String value[])
{
    guard *g = usable(c, "fmi2SetString");
    size_t i;
    if (g == NULL)
        return fmi2Error;
    if (nvr > 0 && (vr == NULL || value == NULL))
        return ERR(g, "fmi2SetString: NULL %s array with nvr = %zu",
                   vr == NULL ? "value reference" : "value", nvr);
    for (i = 0; i < nvr; i++)
        if (value[i] == NULL)
            return ERR(g, "fmi2SetString: value %zu (value reference %u) is NULL", i, vr[i]);
    FORWARD(g, "fmi2SetString", api.SetString(g->inner, vr, nvr, value));
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    guard *g = usable(c, "fmi2GetFMUstate"), *saved;
    fmi2FMUstate inner = NULL;
    fmi2Status status;
    if (g == NULL)
        return fmi2Error;
    if (FMUstate == NULL)
        return ERR(g, "fmi2GetFMUstate: NULL state pointer");
    if (*FMUstate != NULL && find_state(*FMUstate) == NULL)
        return unknown_state(g, "fmi2GetFMUstate", *FMUstate);
    saved = enter(g);
    status = leave(g, saved, api.GetFMUstate(g->inner, &inner), "fmi2GetFMUstate");
    if (status >= fmi2Error) {
        if (inner != NULL && !g->dead)
            api.FreeFMUstate(g->inner, &inner);
        return status;
    }
    return store_state(g, "fmi2GetFMUstate", inner, FMUstate) == fmi2OK ? status : fmi2Error;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate)
{
    guard *g = usable(c, "fmi2SetFMUstate");
    state *s;
    if (g == NULL)
        return fmi2Error;
    if (FMUstate == NULL)
        return ERR(g, "fmi2SetFMUstate: NULL state");
    s = find_state(FMUstate);
    if (s == NULL)
        return unknown_state(g, "fmi2SetFMUstate", FMUstate);
    FORWARD(g, "fmi2SetFMUstate", api.SetFMUstate(g->inner, s->inner));
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    guard *g = usable(c, "fmi2FreeFMUstate");
    state *s;
    if (g == NULL)
        return fmi2Error;
    if (FMUstate == NULL)
        return ERR(g, "fmi2FreeFMUstate: NULL state pointer");
    if (*FMUstate == NULL)
        return fmi2OK;
    s = find_state(*FMUstate);
    if (s == NULL)
        return unknown_state(g, "fmi2FreeFMUstate", *FMUstate);
    api.FreeFMUstate(g->inner, &s->inner);
    retire_state(s);
    *FMUstate = NULL;
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate FMUstate, size_t *size)
{
    guard *g = usable(c, "fmi2SerializedFMUstateSize");
    state *s;
    if (g == NULL)
        return fmi2Error;
    if (size == NULL)
        return ERR(g, "fmi2SerializedFMUstateSize: NULL size pointer");
    s = FMUstate != NULL ? find_state(FMUstate) : NULL;
    if (s == NULL)
        return unknown_state(g, "fmi2SerializedFMUstateSize", FMUstate);
    FORWARD(g, "fmi2SerializedFMUstateSize", api.SerializedFMUstateSize(g->inner, s->inner, size));
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate, fmi2Byte serializedState[],
                                 size_t size)
{
    guard *g = usable(c, "fmi2SerializeFMUstate"), *saved;
    state *s;
    size_t need = 0;
    fmi2Status status;
    if (g == NULL)
        return fmi2Error;
    if (serializedState == NULL)
        return ERR(g, "fmi2SerializeFMUstate: NULL buffer");
    s = FMUstate != NULL ? find_state(FMUstate) : NULL;
    if (s == NULL)
        return unknown_state(g, "fmi2SerializeFMUstate", FMUstate);
    saved = enter(g);
    status = leave(g, saved, api.SerializedFMUstateSize(g->inner, s->inner, &need),
                   "fmi2SerializeFMUstate");
    if (status >= fmi2Error)
        return status;
    if (size < need)
        return ERR(g, "fmi2SerializeFMUstate: the buffer of %zu bytes is too small for the state "
                      "(%zu bytes, from fmi2SerializedFMUstateSize)", size, need);
    FORWARD(g, "fmi2SerializeFMUstate", api.SerializeFMUstate(g->inner, s->inner, serializedState, need));
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[], size_t size,
                                   fmi2FMUstate *FMUstate)
{
    guard *g = usable(c, "fmi2DeSerializeFMUstate"), *saved;
    fmi2FMUstate inner = NULL;
    fmi2Status status;
    if (g == NULL)
        return fmi2Error;
    if (serializedState == NULL)
        return ERR(g, "fmi2DeSerializeFMUstate: NULL serialized state");
    if (FMUstate == NULL)
        return ERR(g, "fmi2DeSerializeFMUstate: NULL state pointer");
    if (*FMUstate != NULL && find_state(*FMUstate) == NULL)
        return unknown_state(g, "fmi2DeSerializeFMUstate", *FMUstate);
    saved = enter(g);
    status = leave(g, saved, api.DeSerializeFMUstate(g->inner, serializedState, size, &inner),
                   "fmi2DeSerializeFMUstate");
    if (status >= fmi2Error) { /* refused: *FMUstate stays as it was */
        if (inner != NULL && !g->dead)
            api.FreeFMUstate(g->inner, &inner);
        return status;
    }
    return store_state(g, "fmi2DeSerializeFMUstate", inner, FMUstate) == fmi2OK ? status : fmi2Error;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[],
                                        size_t nUnknown, const fmi2ValueReference vKnown_ref[],
                                        size_t nKnown, const fmi2Real dvKnown[], fmi2Real dvUnknown[])
{
    guard *g = usable(c, "fmi2GetDirectionalDerivative");
    (void)vUnknown_ref, (void)nUnknown, (void)vKnown_ref, (void)nKnown, (void)dvKnown, (void)dvUnknown;
    if (g == NULL)
        return fmi2Error;
    return ERR(g, "fmi2GetDirectionalDerivative: not supported by the pythonfmu kind "
                  "(providesDirectionalDerivative=false; the native FMU has it)");
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[])
{
    guard *g = usable(c, "fmi2SetRealInputDerivatives");
    (void)vr, (void)order, (void)value;
    if (g == NULL)
        return fmi2Error;
    if (nvr == 0)
        return fmi2OK;
    return ERR(g, "fmi2SetRealInputDerivatives: not supported (canInterpolateInputs=false: inputs "
                  "are held over each communication step)");
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[])
{
    guard *g = usable(c, "fmi2GetRealOutputDerivatives");
    (void)vr, (void)order, (void)value;
    if (g == NULL)
        return fmi2Error;
    if (nvr == 0)
        return fmi2OK;
    return ERR(g, "fmi2GetRealOutputDerivatives: not supported (maxOutputDerivativeOrder=0)");
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize, fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    guard *g = usable(c, "fmi2DoStep");
    if (g == NULL)
        return fmi2Error;
    FORWARD(g, "fmi2DoStep", api.DoStep(g->inner, currentCommunicationPoint, communicationStepSize,
                                        noSetFMUStatePriorToCurrentPoint));
}

fmi2Status fmi2CancelStep(fmi2Component c)
{
    guard *g = usable(c, "fmi2CancelStep");
    if (g == NULL)
        return fmi2Error;
    return ERR(g, "fmi2CancelStep: fmi2DoStep is never asynchronous, there is nothing to cancel");
}

/* Status inquiries: a NULL value pointer is an error; a kind not reported gives fmi2Discard. */
static guard *status_args(fmi2Component c, const void *value, const char *fn)
{
    guard *g = find(c);
    if (g != NULL && value == NULL) {
        logf_(g, fmi2Error, "%s: NULL value pointer", fn);
        return NULL;
    }
    return g;
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value)
{
    (void)s;
    return status_args(c, value, "fmi2GetStatus") ? fmi2Discard : fmi2Error;
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value)
{
    guard *g = status_args(c, value, "fmi2GetRealStatus");
    if (g == NULL)
        return fmi2Error;
    if (s != fmi2LastSuccessfulTime)
        return fmi2Discard;
    *value = g->time;
    return fmi2OK;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value)
{
    (void)s;
    return status_args(c, value, "fmi2GetIntegerStatus") ? fmi2Discard : fmi2Error;
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value)
{
    guard *g = status_args(c, value, "fmi2GetBooleanStatus");
    if (g == NULL)
        return fmi2Error;
    if (s != fmi2Terminated)
        return fmi2Discard;
    *value = 0; /* the slave never asks to end the simulation */
    return fmi2OK;
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value)
{
    (void)s;
    return status_args(c, value, "fmi2GetStringStatus") ? fmi2Discard : fmi2Error;
}
