/*
 * mbs_instance.c -- one running model (see mbs_instance.h for the API and its semantics).
 *
 * The only runtime file compiled against the model contract (mbs_model.h): sizes are compile-time
 * constants, so an instance is one block without further allocation, and its saveable part
 * (mbs_sim) is plain data that a state copy moves with memcpy.
 */
#include "mbs_instance.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mbs_dop853.h"
#include "mbs_linalg.h"
#include "mbs_model.h"
#include "mbs_parameters.h"
#include "mbs_radau.h"
#include "mbs_rkstab.h"
#include "mbs_stepper.h"

#define F MBS_F
#define NX MBS_NX
#define NVARS MBS_NVARS
#define VR_PRM MBS_VR_PRM
#define VR_U MBS_VR_U

#if NVARS != MBS_VR_IC + MBS_NICVAR
#error "model_config.h and the value-reference layout of mbs_model.h disagree"
#endif
#if MBS_NTP != 0 && !MBS_TP_FUNCTION
#define TP_EXTERNAL 1 /* the time parameters come from mbs_inst_set_tp_fn (Python callables) */
#else
#define TP_EXTERNAL 0
#endif

#define MAX_STEPS_PER_CALL MBS_MAX_STEPS_PER_CALL
#define MBS_SWITCH_LOG 32
#define INIT_TOL 1e-12
#define INIT_MAX_ITER 50
#define INIT_WARN_TOL 1e-8

/* Everything a saved state holds: plain data, no pointers except the integrators' work arrays
 * and the explicit methods' hook for singular positions (re-pointed on restore). */
typedef struct {
    double v[NVARS];           /* values in value-reference order */
    double t;                  /* time of the last communication point */
    double x[NX];              /* integrator state (y, y') */
    int started;               /* mbs_inst_start succeeded */
    int fsal_dirty;            /* inputs or parameters changed: restart the integrator at t */
    int inputs_changing;       /* they changed at the last communication point */
    double t_stop;             /* steps never pass it (INFINITY: no stop time) */
    unsigned char given[NX];   /* start values set through mbs_inst_set */
    int part[MBS_FORM_PART_SIZE(F)]; /* coordinate partitioning: the current choice */
    double t0;                 /* time of the start */
    int stiff_warned;          /* whether the stiffness warning was given */
    int method;                /* MBS_METHOD_RKSTAB, MBS_METHOD_STIFF or MBS_METHOD_DOP853 */
    mbs_stepper rk;            /* the methods on the step driver (mbs_stepper.h), each with its work */
    double work[MBS_RKSTAB_WORK_SIZE(NX)];
    mbs_radau rd;
    double rwork[MBS_RADAU_WORK_SIZE(NX)];
    int riwork[MBS_RADAU_IWORK_SIZE(NX)];
    mbs_dop853 dp;
    double dwork[MBS_DOP853_WORK_SIZE(NX)];
    int me_moved;              /* Model Exchange: time or state set since the values were published */
} mbs_sim;

struct mbs_instance {
    mbs_sim d;
    int kind;                  /* formulation (MBS_FORM_*) */
    int aba;                   /* trees: articulated-body algorithm */
    mbs_form form;
    double form_work[MBS_FORM_WORK_SIZE(F, MBS_M, MBS_NIC)];
    int form_iwork[MBS_FORM_IWORK_SIZE(F, MBS_M, MBS_NIC)];
    double form_split[MBS_NSPLIT];
    double form_split_y[MBS_ONE(F)];
    double tp[MBS_ONE(MBS_NTP)];
    mbs_param_rules rules;
    double mj_work[MBS_ONE(7 * MBS_NBODYCHECK + MBS_NFACTORCHECK)];
    int (*input_fn)(void *, double, double *);
    void *input_ctx;
    int (*tp_fn)(void *, double, double *);
    void *tp_ctx;
    void (*log)(void *, int, const char *);
    void *log_ctx;
    int last_code;
    int start_failure;         /* why the last start failed (MBS_START_*), 0 if it did not */
    int outputs_dirty;         /* an input or parameter changed since the outputs were computed */
    double out_expr[MBS_ONE(MBS_NOUT_EXPR)];
    double lam[MBS_ONE(MBS_M)];
    double reached[MBS_ONE(F)];  /* where Newton ended in a failed consistent start */
    double ic_value[MBS_ONE(MBS_NIC)]; /* the initial conditions' e0, e0' and rows with e0' at this */
    double ic_rate[MBS_ONE(MBS_NIC)];  /* start (ic_targets: from the variables at MBS_VR_IC) */
    unsigned char ic_has_rate[MBS_ONE(MBS_NIC)];
    char msg[2048];
    char stiff_msg[512];       /* the stiffness warning of this run ('' if none) */
    int nswitch;               /* partition choices logged (the first MBS_SWITCH_LOG are kept) */
    double switch_t[MBS_SWITCH_LOG];
    unsigned char switch_dep[MBS_SWITCH_LOG][F];
    unsigned char held[NX];    /* what the last consistent start held: coordinates, then rates */
};

/* ---------------------------------------------------------------- the model */

const char *mbs_model_name(void) { return MBS_MODEL_NAME; }

const char *mbs_model_guid(void) { return MBS_GUID; }

int mbs_model_nvars(void) { return NVARS; }

const char *mbs_var_name(unsigned vr) { return vr < NVARS ? mbs_names[vr] : NULL; }

int mbs_var_kind(unsigned vr) { return vr < NVARS ? (int)mbs_kind[vr] : -1; }

int mbs_var_type(unsigned vr)
{
    return vr >= NVARS ? -1 : vr == MBS_VR_METHOD ? MBS_TYPE_INTEGER : MBS_TYPE_REAL;
}

int mbs_model_sizes(int *out)
{
    int s[] = {MBS_F, MBS_NPRM, MBS_NU, MBS_NTP, MBS_M, MBS_NIC, MBS_NOUT, NVARS, MBS_HAS_ABA,
               MBS_VR_OUT, VR_PRM, MBS_VR_RTOL, VR_U, MBS_VR_METHOD};
    memcpy(out, s, sizeof s);
    return (int)(sizeof s / sizeof s[0]);
}

size_t mbs_instance_size(void) { return sizeof(mbs_instance); }

const char *mbs_inst_message(const mbs_instance *I) { return I->msg; }

static int fail(mbs_instance *I, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(I->msg, sizeof I->msg, fmt, ap);
    va_end(ap);
    return MBS_ERROR;
}

#if MBS_M > 0
static void note(mbs_instance *I, int level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    if (I->log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    I->log(I->log_ctx, level, buf);
}
#endif

static void log_switches(mbs_instance *I);

/* ---------------------------------------------------------------- set-up */

#if MBS_NBODYCHECK > 0
#define MASS_FN mbs_mass_properties
#else
#define MASS_FN NULL
#endif
#if MBS_NFACTORCHECK > 0
#define FACTOR_FN mbs_factor_values
#else
#define FACTOR_FN NULL
#endif
#if MBS_NIC > 0
#define IC_FN mbs_initial_conditions
#else
#define IC_FN NULL
#endif
#if MBS_TP_FUNCTION && MBS_NTP > 0
#define TP_FN mbs_time_parameters
#else
#define TP_FN NULL
#endif

static void setup_form(mbs_instance *I)
{
    mbs_form *fm = &I->form;
    memset(fm, 0, sizeof *fm);
    fm->f = F;
    fm->m = MBS_M;
    fm->mh = MBS_MH;
    fm->nic = MBS_NIC;
    fm->ntp = MBS_NTP;
    fm->kind = MBS_M > 0 ? I->kind : MBS_FORM_MINIMAL;
    fm->dynamics = mbs_dynamics;
    fm->constraints = mbs_constraints;
    fm->positions = mbs_constrained_positions;
    fm->velocities = mbs_constrained_velocities;
    fm->split = I->form_split;
    fm->split_y = I->form_split_y;
    fm->initial_conditions = IC_FN;
    fm->time_parameters = TP_FN;
    fm->prm = I->d.v + VR_PRM;
    fm->u = I->d.v + VR_U;
    fm->tp = I->tp;
    fm->alpha = I->kind == MBS_FORM_BAUMGARTE ? MBS_DEFAULT_ALPHA : 0.0;
    fm->beta = I->kind == MBS_FORM_BAUMGARTE ? MBS_DEFAULT_BETA : 0.0;
    fm->rank_tol = MBS_DEFAULT_RANK_TOL;
    fm->weak_pivot = MBS_SINGULAR_STEP_WEAK;
    fm->newton_tol = MBS_DEFAULT_NEWTON_TOL;
    fm->newton_max = MBS_DEFAULT_NEWTON_MAX;
    fm->weighting = 0;
    fm->iterations = MBS_DEFAULT_ITERATIONS;
    fm->cond_max = MBS_DEFAULT_COND_MAX;
    fm->part = I->d.part;
    fm->names = mbs_names;
    fm->work = I->form_work;
    fm->iwork = I->form_iwork;
}

int mbs_inst_set_formulation(mbs_instance *I, int kind)
{
    if (kind < MBS_FORM_MINIMAL || kind > MBS_FORM_PARTITION)
        return fail(I, "formulation %d is not a formulation of the engine", kind);
    if (kind == MBS_FORM_MINIMAL && MBS_M > 0)
        return fail(I, "formulation 'minimal' needs a system without constraints");
#if MBS_M > MBS_MH
    if (kind == MBS_FORM_PARTITION)
        return fail(I, "formulation 'partition' cannot take the nonholonomic constraint '%s'%s "
                       "(it needs constraints on the positions only); choose one of qr, svd, "
                       "projection, baumgarte, dae", mbs_row_names[MBS_MH],
                    MBS_M - MBS_MH > 1 ? " (and the others)" : "");
#endif
    I->kind = kind;
    memset(I->d.part, 0, sizeof I->d.part);
    setup_form(I);
    return MBS_OK;
}

int mbs_inst_set_partition(mbs_instance *I, const unsigned char *dependent)
{
    int j, nd = 0;
    for (j = 0; j < F; j++)
        nd += dependent[j] != 0;
    if (MBS_M == 0 || I->kind != MBS_FORM_PARTITION)
        return fail(I, "independent coordinates are an option of the formulation 'partition'");
    if (nd != MBS_M)
        return fail(I, "partition: %d coordinates and %d constraints leave %d independent coordinates, "
                       "got %d", F, MBS_M, F - MBS_M, F - nd);
    for (j = 0; j < F; j++)
        I->d.part[2 + j] = dependent[j] != 0;
    I->d.part[0] = 1;
    I->d.part[1] = 0;
    return MBS_OK;
}

mbs_form *mbs_inst_form(mbs_instance *I) { return &I->form; }

int mbs_inst_set_method(mbs_instance *I, int method)
{
    if (mbs_method_name(method) == NULL)
        return fail(I, "method %d is not a method of the engine (%s)", method, MBS_METHOD_VALUES);
    if (I->d.method != method)
        I->d.fsal_dirty = 1;
    I->d.method = method;
    I->d.v[MBS_VR_METHOD] = (double)method;
    return MBS_OK;
}

int mbs_inst_method(const mbs_instance *I) { return I->d.method; }

const char *mbs_method_name(int method)
{
    static const char *const names[] = {MBS_METHOD_NAMES};
    return method >= MBS_METHOD_MIN && method <= MBS_METHOD_MAX ? names[method - MBS_METHOD_MIN] : NULL;
}

void mbs_inst_use_aba(mbs_instance *I, int on) { I->aba = on && MBS_HAS_ABA; }

void mbs_inst_set_input_fn(mbs_instance *I, int (*fn)(void *, double, double *), void *ctx)
{
    I->input_fn = fn;
    I->input_ctx = ctx;
    mbs_form_forget(&I->form);
}

void mbs_inst_set_tp_fn(mbs_instance *I, int (*fn)(void *, double, double *), void *ctx)
{
    I->tp_fn = fn;
    I->tp_ctx = ctx;
    mbs_form_forget(&I->form);
}

void mbs_inst_set_logger(mbs_instance *I, void (*log)(void *, int, const char *), void *ctx)
{
    I->log = log;
    I->log_ctx = ctx;
}

static void setup_rules(mbs_instance *I)
{
    mbs_param_rules *r = &I->rules;
    r->nprm = MBS_NPRM;
    r->names = mbs_names + VR_PRM;
    r->min = mbs_prm_min;
    r->max = mbs_prm_max;
    r->nonzero_why = mbs_prm_nonzero_why;
    r->nbody = MBS_NBODYCHECK;
    r->body_names = mbs_body_check_names;
    r->body_prm_start = mbs_body_prm_start;
    r->body_prm = mbs_body_prm;
    r->mass_properties = MASS_FN;
    r->nfactor = MBS_NFACTORCHECK;
    r->factor_requirement = mbs_factor_requirement;
    r->factor_prm_start = mbs_factor_prm_start;
    r->factor_prm = mbs_factor_prm;
    r->factor_values = FACTOR_FN;
}

void mbs_inst_init(mbs_instance *I)
{
    void (*log)(void *, int, const char *) = I->log;
    void *log_ctx = I->log_ctx;
    memset(I, 0, sizeof *I);
    I->log = log;
    I->log_ctx = log_ctx;
    memcpy(I->d.v, mbs_start, sizeof I->d.v);
    I->d.t_stop = INFINITY;
    I->d.fsal_dirty = 1;
    I->d.method = (int)I->d.v[MBS_VR_METHOD]; /* the start value of 'method' (checked at start) */
    I->kind = MBS_M > 0 ? MBS_FORMULATION : MBS_FORM_MINIMAL;
    I->aba = MBS_HAS_ABA;
    mbs_inst_set_formulation(I, I->kind);
    setup_rules(I);
}

int mbs_inst_set_time(mbs_instance *I, double t0, double t_stop)
{
    if (!isfinite(t0))
        return fail(I, "start time %g is not finite", t0);
    if (!(t_stop >= t0) || isnan(t_stop))
        return fail(I, "stop time %g is not a time after the start time %g", t_stop, t0);
    I->d.t = t0;
    I->d.t_stop = t_stop;
    return MBS_OK;
}

/* ---------------------------------------------------------------- value checks */

/* The range of a solver setting (mbsfmu/core/solver_settings.py): 0 if value is allowed, else 1 with
 * the explanation in I->msg.  The variable 'method' takes the numbers MBS_METHOD_MIN..MAX only. */
static int solver_setting_problem(mbs_instance *I, unsigned vr, double value)
{
    if (vr == MBS_VR_METHOD) {
        char g[32];
        if (value >= MBS_METHOD_MIN && value <= MBS_METHOD_MAX && value == floor(value))
            return 0;
        snprintf(I->msg, sizeof I->msg, "%s = %s is not one of its values %s", mbs_names[vr],
                 mbs_format_double(value, g, sizeof g), MBS_METHOD_VALUES);
        return 1;
    }
    double lo = vr == MBS_VR_RTOL ? MBS_RTOL_MIN : vr == MBS_VR_ATOL ? MBS_ATOL_MIN : MBS_HMAX_MIN;
    double hi = vr == MBS_VR_RTOL ? MBS_RTOL_MAX : vr == MBS_VR_ATOL ? MBS_ATOL_MAX : MBS_HMAX_MAX;
    const char *zero = vr == MBS_VR_HMAX ? MBS_HMAX_ZERO : vr == MBS_VR_ATOL ? MBS_ATOL_ZERO : NULL;
    char g[32], l[32], h[32];
    if ((zero != NULL && value == 0.0) || (value >= lo && value <= hi))
        return 0;
    mbs_format_double(lo, l, sizeof l);
    if (isinf(hi))
        snprintf(h, sizeof h, "inf)");
    else
        snprintf(h, sizeof h, "%s]", mbs_format_double(hi, g, sizeof g));
    snprintf(I->msg, sizeof I->msg, "%s = %s is outside its range %s%s%s%s%s, %s", mbs_names[vr],
             mbs_format_double(value, g, sizeof g), zero ? "0 (" : "", zero ? zero : "", zero ? ") or " : "",
             zero && lo == 0.0 ? "(" : "[", l, h); /* 0 itself means `zero` */
    return 1;
}

/* The absolute tolerance the integrators use: solver_atol, or where it is 0 the rule of
 * mbsfmu/core/solver_settings.py (default_atol): a factor of solver_rtol, with constraints and without. */
static double solver_atol(const mbs_instance *I)
{
    const double atol = I->d.v[MBS_VR_ATOL];
    return atol > 0.0 ? atol
                      : I->d.v[MBS_VR_RTOL] * (MBS_M > 0 ? MBS_ATOL_FACTOR_CONSTRAINED : MBS_ATOL_FACTOR_TREE);
}

/* Declared bounds of a parameter or input (0 if inside, else 1 with I->msg set). */
static int bounds_problem(mbs_instance *I, unsigned vr, double value)
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
    snprintf(I->msg, sizeof I->msg, "%s '%s' = %s is %s its %s %s",
             vr >= VR_U ? "input" : "parameter", mbs_names[vr], mbs_format_double(value, g, sizeof g),
             value < lo ? "below" : "above", value < lo ? "minimum" : "maximum",
             mbs_format_double(value < lo ? lo : hi, b, sizeof b));
    return 1;
}

/* Every value the model's rules cover (solver settings, parameters, inputs) at the values v;
 * 0 if they are fine, else 1 with the explanation in I->msg. */
static int values_problem(mbs_instance *I, const double *v)
{
    unsigned vr;
    for (vr = MBS_VR_RTOL; vr < VR_U; vr++)
        if (solver_setting_problem(I, vr, v[vr]))
            return 1;
    for (vr = VR_U; vr < VR_U + MBS_NU; vr++)
        if (bounds_problem(I, vr, v[vr]))
            return 1;
    return mbs_check_parameters(&I->rules, v + VR_PRM, I->mj_work, I->msg, sizeof I->msg) != 0;
}

int mbs_inst_set(mbs_instance *I, size_t n, const unsigned *vr, const double *value)
{
    int stepping = I->d.started;
    size_t i;
    /* check everything first so that a rejected call changes nothing */
    for (i = 0; i < n; i++) {
        int kind;
        if (vr[i] >= NVARS)
            return fail(I, "unknown value reference %u (the model has %d variables)", vr[i], NVARS);
        kind = mbs_kind[vr[i]];
        if (!isfinite(value[i]))
            return fail(I, "value %g for variable '%s' is not finite", value[i], mbs_names[vr[i]]);
        if (kind == MBS_VAR_CALC)
            return fail(I, "'%s' is a calculated output and cannot be set", mbs_names[vr[i]]);
        if (stepping && kind == MBS_VAR_STATE)
            return fail(I, "output '%s' cannot be set after initialization", mbs_names[vr[i]]);
        if (stepping && kind == MBS_VAR_FIXED)
            return fail(I, "parameter '%s' is fixed (the constraints depend on it) and cannot be "
                           "changed after initialization", mbs_names[vr[i]]);
        if (stepping && kind == MBS_VAR_INITIAL)
            return fail(I, "parameter '%s' is a named initial condition (it sets the start) and cannot be "
                           "changed after initialization", mbs_names[vr[i]]);
        if (vr[i] >= MBS_VR_RTOL && vr[i] < VR_U && solver_setting_problem(I, vr[i], value[i]))
            return MBS_ERROR;
        if (bounds_problem(I, vr[i], value[i]))
            return MBS_ERROR;
    }
#if MBS_NPRM > 0
    if (stepping) {
        /* the new parameter values together must satisfy the model's rules */
        double prm[MBS_NPRM];
        int any = 0;
        memcpy(prm, I->d.v + VR_PRM, sizeof prm);
        for (i = 0; i < n; i++)
            if (vr[i] >= VR_PRM && vr[i] < VR_PRM + MBS_NPRM) {
                prm[vr[i] - VR_PRM] = value[i];
                any = 1;
            }
        if (any && mbs_check_parameters(&I->rules, prm, I->mj_work, I->msg, sizeof I->msg) != 0)
            return MBS_ERROR;
    }
#endif
    for (i = 0; i < n; i++) {
        if (I->d.v[vr[i]] != value[i]) {
            I->d.fsal_dirty = 1; /* the first stage of the next step must be re-evaluated */
            I->outputs_dirty = 1;
            mbs_form_forget(&I->form);
        }
        I->d.v[vr[i]] = value[i];
        if (vr[i] == MBS_VR_METHOD)
            I->d.method = (int)value[i]; /* the integrator restarts at the next do-step */
        if (mbs_kind[vr[i]] == MBS_VAR_STATE)
            I->d.given[vr[i]] = 1;
    }
    return MBS_OK;
}

/* ---------------------------------------------------------------- right-hand side */

static int fill_tp(mbs_instance *I, double t)
{
#if TP_EXTERNAL
    if (I->tp_fn == NULL) {
        snprintf(I->form.message, sizeof I->form.message,
                 "the time parameters are Python functions and none were given to the engine");
        return 1;
    }
    if (I->tp_fn(I->tp_ctx, t, I->tp) != 0) {
        snprintf(I->form.message, sizeof I->form.message, "the time parameters failed at t=%.9g", t);
        return 1;
    }
#else
    (void)I;
    (void)t;
#endif
    return 0;
}

/* Inputs given as functions of time, and external time parameters, at t. */
static int inputs_at(mbs_instance *I, double t)
{
    if (I->input_fn != NULL && I->input_fn(I->input_ctx, t, I->d.v + VR_U) != 0) {
        snprintf(I->form.message, sizeof I->form.message, "the inputs failed at t=%.9g", t);
        return 1;
    }
    return fill_tp(I, t);
}

/* x' of the instance's formulation with the inputs and time parameters as they are now; 0, or the
 * failing function's status (for a tree: j + 1 if the pivot of coordinate j failed). */
static int eval_rhs(mbs_instance *I, double t, const double *x, double *xdot)
{
#if MBS_HAS_ABA
    if (I->aba && MBS_M == 0) {
        int i, rc;
#if MBS_TP_FUNCTION && MBS_NTP > 0
        mbs_time_parameters(t, I->form.prm, I->tp);
#endif
        rc = mbs_aba(t, x, x + F, I->form.prm, I->form.u, I->tp, xdot + F);
        if (rc != 0) {
            snprintf(I->form.message, sizeof I->form.message,
                     "the articulated-body pivot of coordinate '%s' failed at t=%.9g (a singular "
                     "configuration, or mass properties that are not physical)", mbs_names[rc - 1], t);
            return rc;
        }
        for (i = 0; i < F; i++)
            xdot[i] = x[F + i];
        return 0;
    }
#endif
    return mbs_form_rhs(&I->form, t, x, xdot);
}

/* x' of the instance's formulation, with the inputs (and external time parameters) at t. */
static int inst_rhs(void *ctx, double t, const double *x, double *xdot)
{
    mbs_instance *I = (mbs_instance *)ctx;
    if (inputs_at(I, t) != 0)
        return 1;
    return eval_rhs(I, t, x, xdot);
}

int mbs_inst_rhs(mbs_instance *I, double t, const double *x, const double *prm, const double *u,
                 double *xdot, int *pivot)
{
    const double *own_prm = I->form.prm, *own_u = I->form.u;
    int rc;
    if (pivot != NULL)
        *pivot = 0;
    if (prm != NULL)
        I->form.prm = prm;
    if (u != NULL)
        I->form.u = u;
    if (prm != NULL || u != NULL) /* values the position-level terms kept may not have seen */
        mbs_form_forget(&I->form);
    rc = u != NULL ? fill_tp(I, t) : inputs_at(I, t);
    if (rc == 0) {
        rc = eval_rhs(I, t, x, xdot);
        /* the minimal ODE of a tree reports the failed pivot of a coordinate (ABA or Cholesky) */
        if (rc > 0 && rc <= F && MBS_M == 0 && pivot != NULL)
            *pivot = rc;
    }
    if (prm != NULL || u != NULL)
        mbs_form_forget(&I->form);
    I->form.prm = own_prm;
    I->form.u = own_u;
    return rc == 0 ? MBS_OK : fail(I, "%s", I->form.message);
}

static int inst_project(void *ctx, double t, double *x)
{
    mbs_instance *I = (mbs_instance *)ctx;
    return mbs_form_project(&I->form, t, x);
}

#if MBS_M > 0
static double inst_weak(void *ctx, double t, const double *x, double *d)
{
    mbs_instance *I = (mbs_instance *)ctx;
    return mbs_form_weak(&I->form, t, x, d);
}
#endif

/* The stepper of an integration method (MBS_METHOD_*) and the method it runs (mbs_stepper.h). */
static mbs_stepper *stepper(mbs_sim *d, int method)
{
    return method == MBS_METHOD_STIFF ? &d->rd.st : method == MBS_METHOD_DOP853 ? &d->dp.st : &d->rk;
}

const mbs_step_method *mbs_method_descriptor(int method)
{
    return method == MBS_METHOD_STIFF    ? &mbs_radau_method
           : method == MBS_METHOD_DOP853 ? &mbs_dop853_method
                                         : &mbs_rkstab_method;
}

/* The explicit methods' hook for singular positions (mbs_stepper.h): the null-space
 * formulations.  A function pointer, so it is set again when a saved state is restored (a
 * serialized state may come from another process, where the function has another address). */
static void singular_hook(mbs_instance *I)
{
    mbs_weak_fn weak = NULL;
#if MBS_M > 0
    if (I->form.kind == MBS_FORM_QR || I->form.kind == MBS_FORM_SVD)
        weak = inst_weak;
#endif
    I->d.rk.sing.weak = I->d.dp.st.sing.weak = weak;
}

static mbs_project_fn projection(const mbs_instance *I)
{
    return MBS_M > 0 && mbs_form_projects(I->form.kind) ? inst_project : NULL;
}

/* Every method set up from the values at the start, with the stiffness detection of the explicit
 * ones (80 % of their stability boundary, mbsfmu.core.constants.STIFFNESS). */
static int init_integrators(mbs_instance *I)
{
    const double rtol = I->d.v[MBS_VR_RTOL], atol = solver_atol(I), hmax = I->d.v[MBS_VR_HMAX];
    int rc = mbs_rkstab_init(&I->d.rk, NX, I->d.work, rtol, atol, hmax);
    if (rc == MBS_STEP_OK)
        rc = mbs_dop853_init(&I->d.dp, NX, I->d.dwork, rtol, atol, hmax);
    if (rc == MBS_STEP_OK)
        rc = mbs_radau_init(&I->d.rd, NX, I->d.rwork, I->d.riwork, rtol, atol, hmax);
    if (rc != MBS_STEP_OK)
        return rc;
    I->d.rk.stiff_hrho = MBS_STIFF_FRACTION * MBS_STIFF_BOUNDARY_RKSTAB;
    I->d.dp.st.stiff_hrho = MBS_STIFF_FRACTION * MBS_STIFF_BOUNDARY_DOP853;
    I->d.rk.stiff_gap = I->d.dp.st.stiff_gap = MBS_STIFF_GAP;
    singular_hook(I);
    return MBS_STEP_OK;
}

/* ---------------------------------------------------------------- outputs */

int mbs_inst_multipliers(mbs_instance *I, double *lambda)
{
#if MBS_M > 0
    if (inputs_at(I, I->d.t) != 0 || mbs_form_multipliers(&I->form, I->d.t, I->d.x, lambda) != 0)
        return fail(I, "%s", I->form.message);
#else
    (void)lambda;
    (void)I;
#endif
    return MBS_OK;
}

int mbs_inst_accelerations(mbs_instance *I, double *ydd)
{
    double xdot[NX];
    int part[MBS_FORM_PART_SIZE(F)], rc;
    const double switch_t = I->form.switch_t;
    memcpy(part, I->d.part, sizeof part); /* an evaluation may choose a partition: not kept */
    rc = inst_rhs(I, I->d.t, I->d.x, xdot);
    memcpy(I->d.part, part, sizeof part);
    I->form.switch_t = switch_t;
    if (rc != 0)
        return fail(I, "the accelerations at t=%.17g: %s", I->d.t, I->form.message);
    memcpy(ydd, xdot + F, sizeof(double) * F);
    return MBS_OK;
}

void mbs_inst_residuals(mbs_instance *I, double *res)
{
    mbs_form_residuals(&I->form, I->d.t, I->d.x, res, res + 1);
}

static int compute_outputs(mbs_instance *I)
{
#if MBS_NOUT > 0
    const double *x = I->d.x;
    int i;
    if (fill_tp(I, I->d.t) != 0)
        return fail(I, "%s", I->form.message);
#if MBS_TP_FUNCTION && MBS_NTP > 0
    mbs_time_parameters(I->d.t, I->d.v + VR_PRM, I->tp);
#endif
    mbs_outputs(I->d.t, x, x + F, I->d.v + VR_PRM, I->d.v + VR_U, I->tp, I->out_expr);
#if MBS_NREACT > 0
    if (mbs_inst_multipliers(I, I->lam) != MBS_OK)
        return MBS_ERROR;
#endif
    for (i = 0; i < MBS_NOUT; i++) {
        int src = mbs_out_src[i];
        I->d.v[MBS_VR_OUT + i] = src >= 0 ? I->out_expr[src] : I->lam[-src - 1];
    }
#endif
    I->outputs_dirty = 0;
    return MBS_OK;
}

/* States, residual and outputs into the values after the state changed. */
static int publish(mbs_instance *I)
{
    memcpy(I->d.v, I->d.x, sizeof I->d.x);
    if (inputs_at(I, I->d.t) != 0)
        return fail(I, "%s", I->form.message);
#if MBS_HAS_RES
    I->d.v[MBS_VR_RES] = mbs_form_residual(&I->form, I->d.t, I->d.x);
#endif
    return compute_outputs(I);
}

int mbs_inst_get(mbs_instance *I, size_t n, const unsigned *vr, double *value)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (vr[i] >= NVARS)
            return fail(I, "unknown value reference %u (the model has %d variables)", vr[i], NVARS);
    /* Model Exchange: the values at the time and state the importer set */
    if (I->d.me_moved && I->d.started) {
        if (publish(I) != MBS_OK)
            return fail(I, "computing the outputs at t=%.17g failed: %.900s", I->d.t, I->msg);
        I->d.me_moved = 0;
    }
    /* after a failed step the values stay those of the last communication point */
    if (I->outputs_dirty && I->d.started && I->last_code == 0 && compute_outputs(I) != MBS_OK)
        return fail(I, "computing the outputs failed: %.900s", I->msg);
    for (i = 0; i < n; i++)
        value[i] = I->d.v[vr[i]];
    return MBS_OK;
}

double mbs_inst_time(const mbs_instance *I) { return I->d.t; }

const double *mbs_inst_state(const mbs_instance *I) { return I->d.x; }

/* ---------------------------------------------------------------- start */

/* Append to buf (n bytes, holding a string) what fmt says; nothing once it is full. */
static void append(char *buf, size_t n, const char *fmt, ...)
{
    size_t len = strlen(buf);
    va_list ap;
    if (len + 1 >= n)
        return;
    va_start(ap, fmt);
    vsnprintf(buf + len, n - len, fmt, ap);
    va_end(ap);
}

/* "x=2, alpha=3.14579" of every coordinate in y, for messages */
static void coordinates_text(const double *y, char *buf, size_t n)
{
    int j;
    buf[0] = '\0';
    for (j = 0; j < F; j++)
        append(buf, n, "%s%s=%.6g", j ? ", " : "", mbs_names[j], y[j]);
}

#if MBS_M > 0
/* "['x', 'y']" of the coordinates j with fixed[j], or "none" */
static void held_text(const unsigned char *fixed, char *buf, size_t n)
{
    int j, any = 0;
    buf[0] = '\0';
    for (j = 0; j < F; j++)
        if (fixed[j])
            append(buf, n, "%s'%s'", any++ ? ", " : "[", mbs_names[j]);
    append(buf, n, any ? "]" : "none");
}

/* |g_row| of the rows of mbs_form_consistent ([c; e - e0], bad_row numbering) at the positions y */
static double row_violation(mbs_instance *I, int row, const double *y)
{
    double out[MBS_ONE(MBS_MH + MBS_M * F + MBS_M + MBS_NIC + MBS_NIC * F)];
    if (row < MBS_M) {
        mbs_constraints(I->d.t, y, y, I->form.prm, I->form.u, I->tp, out);
        return fabs(out[row]);
    }
#if MBS_NIC > 0
    mbs_initial_conditions(I->d.t, y, y, I->form.prm, I->form.u, I->tp, out);
    return fabs(out[row - MBS_M] - I->ic_value[row - MBS_M]);
#else
    return 0.0;
#endif
}

/* The held coordinates and initial conditions without any one of which a consistent state exists
 * (each tried by leaving it out of mbs_form_consistent), as "held coordinate x = 2; initial
 * condition 'e' (x = 2)" into buf ('' if none). */
static void conflicts(mbs_instance *I, const unsigned char *fixed, const unsigned char *held_rates, char *buf,
                      size_t n)
{
    unsigned char fewer[F], skip[MBS_ONE(MBS_NIC)], has_rate[MBS_ONE(MBS_NIC)];
    double x[NX];
    int j, i, bad;
    buf[0] = '\0';
    for (j = 0; j < F; j++) {
        if (!fixed[j])
            continue;
        memcpy(fewer, fixed, sizeof fewer);
        fewer[j] = 0;
        memcpy(x, I->d.v, sizeof x);
        if (mbs_form_consistent(&I->form, I->d.t, x, fewer, held_rates, I->ic_value, I->ic_rate,
                                I->ic_has_rate, INIT_TOL, INIT_MAX_ITER, &bad) == 0)
            append(buf, n, "%sheld coordinate %s = %.9g", buf[0] ? "; " : "", mbs_names[j], I->d.v[j]);
    }
    for (i = 0; i < MBS_NIC; i++) {
        memset(skip, 0, sizeof skip);
        memcpy(has_rate, I->ic_has_rate, sizeof has_rate);
        skip[i] = 1;
        has_rate[i] = 0;
        I->form.ic_skip = skip;
        memcpy(x, I->d.v, sizeof x);
        if (mbs_form_consistent(&I->form, I->d.t, x, fixed, held_rates, I->ic_value, I->ic_rate, has_rate,
                                INIT_TOL, INIT_MAX_ITER, &bad) == 0)
            append(buf, n, "%sinitial condition '%s' (%s = %.9g)", buf[0] ? "; " : "", mbs_row_names[MBS_M + i],
                   mbs_ic_expression[i], I->ic_value[i]);
        I->form.ic_skip = NULL;
    }
}

/* The refusal of a start whose last attempt at a consistent state (holding `fixed`) failed with
 * mbs_form_consistent's rc and bad row: positions (rc 1) name the row, its residual where Newton
 * ended, the held coordinates, that state and the conflicts; velocities (rc 2) the residual and the
 * held coordinates. */
static int inconsistent(mbs_instance *I, int rc, int bad, const unsigned char *fixed,
                        const unsigned char *held_rates)
{
    char held[512], reached[768], culprits[768];
    const double violation = bad >= 0 ? row_violation(I, bad, I->reached) : 0.0;
    const size_t len = strlen(I->form.message);
    I->start_failure = MBS_START_INCONSISTENT;
    held_text(fixed, held, sizeof held);
    if (rc != 1 || bad < 0) { /* "no consistent initial velocities (... violated by 0.8)" */
        if (len > 0 && I->form.message[len - 1] == ')')
            return fail(I, "%.*s with fixed: %s)", (int)(len - 1), I->form.message, held);
        return fail(I, "%s (fixed: %s)", I->form.message, held);
    }
    coordinates_text(I->reached, reached, sizeof reached);
    conflicts(I, fixed, held_rates, culprits, sizeof culprits);
    return fail(I, "no consistent initial state: '%s' stays violated by %.3g (Newton from the given values, "
                   "fixed: %s; reached %s)%s%s%s", mbs_row_names[bad], violation, held, reached,
                culprits[0] ? ". It cannot hold together with: " : "", culprits,
                culprits[0] ? " (without any one of these a consistent state exists)" : "");
}

/* The targets e0, e0' of the named initial conditions at this start: the instance's variables from
 * MBS_VR_IC (each condition's value, then the rate of each that declares one), and which rows have
 * a rate (mbs_ic_has_rate). */
static void ic_targets(mbs_instance *I)
{
    int i, k = MBS_NIC;
    for (i = 0; i < MBS_NIC; i++) {
        I->ic_value[i] = I->d.v[MBS_VR_IC + i];
        I->ic_rate[i] = 0.0;
        if (mbs_ic_has_rate[i] && k < MBS_NICVAR) /* always, for a model of this layout */
            I->ic_rate[i] = I->d.v[MBS_VR_IC + k++];
        I->ic_has_rate[i] = mbs_ic_has_rate[i];
    }
}

/* Consistent initial state from the start values in I->d.v (see mbs_inst_start). */
static int consistent_init(mbs_instance *I, const unsigned char *hold)
{
    unsigned char fixed[F], held_rates[F];
    double x[NX];
    int j, nheld = 0, rc = 1, bad = -1;
    char moved[768];
    size_t len = 0;
    if (fill_tp(I, I->d.t) != 0)
        return fail(I, "%s", I->form.message);
    ic_targets(I);
    I->form.reached = I->reached;
    for (j = 0; j < F; j++) {
        fixed[j] = (unsigned char)(hold ? hold[j] != 0 : (!mbs_guess[j] || I->d.given[j]));
        held_rates[j] = (unsigned char)(!mbs_guess_velocity[j] || I->d.given[F + j]);
        nheld += fixed[j];
    }
    if (hold != NULL || (nheld > 0 && nheld < F)) {
        memcpy(x, I->d.v, sizeof x);
        rc = mbs_form_consistent(&I->form, I->d.t, x, fixed, held_rates, I->ic_value, I->ic_rate,
                                 I->ic_has_rate, INIT_TOL, INIT_MAX_ITER, &bad);
        if (rc != 0 && hold == NULL)
            note(I, MBS_OK, "holding the given coordinates failed (%s); letting every coordinate move",
                 I->form.message);
    }
    if (rc != 0 && hold == NULL) {
        memset(fixed, 0, sizeof fixed);
        memcpy(x, I->d.v, sizeof x);
        rc = mbs_form_consistent(&I->form, I->d.t, x, fixed, held_rates, I->ic_value, I->ic_rate,
                                 I->ic_has_rate, INIT_TOL, INIT_MAX_ITER, &bad);
    }
    if (rc != 0)
        return inconsistent(I, rc, bad, fixed, held_rates);
    memcpy(I->held, fixed, sizeof fixed);
    memcpy(I->held + F, held_rates, sizeof held_rates);
    moved[0] = '\0';
    for (j = 0; j < NX; j++) {
        int guess = j < F ? mbs_guess[j] : mbs_guess_velocity[j - F];
        if ((!guess || I->d.given[j]) && fabs(x[j] - I->d.v[j]) > INIT_WARN_TOL && len < sizeof moved) {
            int w = snprintf(moved + len, sizeof moved - len, "%s%s: %.9g -> %.9g", len ? "; " : "",
                             mbs_names[j], I->d.v[j], x[j]);
            if (w > 0)
                len += (size_t)w;
        }
    }
    memcpy(I->d.x, x, sizeof x);
    if (moved[0] != '\0') {
        snprintf(I->msg, sizeof I->msg, "initial values changed to satisfy the constraints: %s", moved);
        return MBS_WARNING;
    }
    return MBS_OK;
}
#endif

#if MBS_M > 0
/* Redundant constraints at the consistent start (rank C < nc, seed 000 eq. 6) are refused unless
 * the formulation takes them; the rank is kept for the statistics. */
static int check_rank(mbs_instance *I)
{
    static const char *const names[] = {MBS_FORMULATION_NAMES};
    double tol;
    const int rank = mbs_form_rank(&I->form, I->d.t, I->d.x, &tol);
    if (rank == MBS_M || mbs_form_handles_redundant(I->form.kind))
        return MBS_OK;
    I->start_failure = MBS_START_REDUNDANT;
    return fail(I, "the %d constraints are redundant (rank of C is %d with tolerance %.1e); formulation '%s' "
                   "cannot take redundant constraints: use 'qr' or 'svd'", MBS_M, rank, tol, names[I->form.kind]);
}
#endif

/* The refusal of a start whose first right-hand side failed (rc) or was not finite: equations that
 * are not finite there, or else a singular mass matrix (for a tree the coordinate whose pivot failed;
 * with constraints, after the rank check, the mass matrix on the motions they leave free). */
static int no_accelerations(mbs_instance *I, int rc)
{
    double out[MBS_F * MBS_F + MBS_F];
    char state[768], why[600];
    int i, finite = 1;
    snprintf(why, sizeof why, "%s", I->form.message);
    coordinates_text(I->d.x, state, sizeof state);
    mbs_dynamics(I->d.t, I->d.x, I->d.x + F, I->form.prm, I->form.u, I->tp, out);
    for (i = 0; i < MBS_F * MBS_F + MBS_F; i++)
        finite = finite && isfinite(out[i]);
    if (!finite) {
        I->start_failure = MBS_START_NOT_FINITE;
        return fail(I, "the equations of motion are not finite at t=%.9g (%s)", I->d.t, state);
    }
    I->start_failure = MBS_START_SINGULAR_MASS;
    if (MBS_M == 0 && rc > 0 && rc <= F)
        return fail(I, "the mass matrix is not positive definite (the pivot of coordinate '%s' failed) at t=%.9g "
                       "(%s): a singular configuration, or a coordinate that moves no mass", mbs_names[rc - 1], I->d.t,
                    state);
    return fail(I, "the mass matrix is not positive definite%s at t=%.9g (%s): a singular configuration, or a "
                   "coordinate that moves no mass (%s)", MBS_M > 0 ? " on the motions the constraints leave free" : "",
                I->d.t, state, why);
}

int mbs_inst_start_failure(const mbs_instance *I) { return I->start_failure; }

int mbs_inst_start(mbs_instance *I, const unsigned char *hold)
{
    int status = MBS_OK, rc, i;
    double xdot[NX];
    char warning[1024];
    warning[0] = '\0';
    I->start_failure = MBS_START_VALUES;
    if (values_problem(I, I->d.v))
        return MBS_ERROR;
    I->start_failure = 0;
    mbs_form_forget(&I->form);
    memcpy(I->d.x, I->d.v, sizeof I->d.x);
#if MBS_M > 0
    status = consistent_init(I, hold);
    if (status == MBS_ERROR)
        return MBS_ERROR;
    if (status == MBS_WARNING)
        memcpy(warning, I->msg, sizeof warning);
    if (check_rank(I) != MBS_OK)
        return MBS_ERROR;
    /* the scale of C's pivots at a regular state, for the message of a run that fails later */
    mbs_form_singularity(&I->form, I->d.t, I->d.x, 1, 0.0, 0.0, NULL, NULL, 0);
#else
    (void)hold;
#endif
    rc = init_integrators(I);
    if (rc != MBS_STEP_OK)
        return fail(I, "integrator setup failed: %s", mbs_step_message(rc));
    I->d.t0 = I->d.t;
    I->d.stiff_warned = 0;
    I->stiff_msg[0] = '\0';
    I->nswitch = 0;
    I->form.message[0] = '\0';
    if (inputs_at(I, I->d.t) != 0)
        return fail(I, "at the initial state: %s", I->form.message);
    rc = eval_rhs(I, I->d.t, I->d.x, xdot);
    for (i = 0; rc == 0 && i < NX; i++)
        if (!isfinite(xdot[i])) {
            snprintf(I->form.message, sizeof I->form.message,
                     "the accelerations are not finite at t=%.9g", I->d.t);
            rc = -1;
        }
    if (rc != 0)
        return no_accelerations(I, rc);
    log_switches(I);
    if (publish(I) != MBS_OK) {
        I->start_failure = MBS_START_OUTPUTS;
        return fail(I, "outputs at the initial state: %.900s", I->msg);
    }
    I->d.fsal_dirty = 1;
    I->d.started = 1;
    I->last_code = 0;
    if (status == MBS_WARNING)
        memcpy(I->msg, warning, sizeof warning);
    return status;
}

/* ---------------------------------------------------------------- do-step */

/* "; inputs held over the step: F = 1e+300, ..." ('' without inputs), so that a failed step
 * names the values that drove it. */
static void inputs_text(mbs_instance *I, char *buf, size_t n)
{
    size_t len = 0;
    int i;
    buf[0] = '\0';
    if (I->input_fn != NULL)
        return; /* inputs vary over the step */
    for (i = 0; i < MBS_NU && len + 1 < n; i++) {
        char g[32];
        int w = snprintf(buf + len, n - len, "%s%s = %s", i == 0 ? "; inputs held over the step: " : ", ",
                         mbs_names[VR_U + i], mbs_format_double(I->d.v[VR_U + i], g, sizeof g));
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

/* Log a new choice of the partition (formulation 'partition'), as an event and in the switch log. */
static void log_switches(mbs_instance *I)
{
    int j;
    if (MBS_M == 0 || I->d.part[1] == I->nswitch)
        return;
    if (I->d.part[1] < I->nswitch) { /* a restored state: count on from it */
        I->nswitch = I->d.part[1];
        return;
    }
    if (I->nswitch < MBS_SWITCH_LOG) {
        I->switch_t[I->nswitch] = I->form.switch_t;
        for (j = 0; j < F; j++)
            I->switch_dep[I->nswitch][j] = (unsigned char)I->d.part[2 + j];
    }
    I->nswitch = I->d.part[1];
    if (I->log != NULL) {
        char buf[512];
        size_t len;
        snprintf(buf, sizeof buf, "partition: independent coordinates from t=%.9g:", I->form.switch_t);
        for (j = 0; j < F; j++) {
            len = strlen(buf);
            if (!I->d.part[2 + j] && len + 2 < sizeof buf)
                snprintf(buf + len, sizeof buf - len, " %s", mbs_names[j]);
        }
        I->log(I->log_ctx, MBS_OK, buf);
    }
}

int mbs_inst_switch(const mbs_instance *I, int k, double *t, unsigned char *dependent)
{
    if (k < 0 || k >= I->nswitch || k >= MBS_SWITCH_LOG)
        return I->nswitch;
    *t = I->switch_t[k];
    memcpy(dependent, I->switch_dep[k], F);
    return I->nswitch;
}

/* The stiffness diagnostic of run_monitor.py after a successful do-step: the explicit method's
 * steps are limited by stability (h rho above the threshold for MBS_STIFF_STEPS steps, never
 * MBS_STIFF_GAP in a row below it in between, with more than MBS_STIFF_MIN_REMAINING steps to go, at
 * rtol <= MBS_STIFF_RTOL_MAX).  Nothing else is called stiff: many small
 * steps limited by accuracy (a long span, a tight tolerance, a fast motion that is there) are not.
 * Said once per run, through the logger and mbs_inst_stiffness. */
static void check_stiffness(mbs_instance *I)
{
    /* the counters of the explicit method that ran (the driver keeps them for every method) */
    const mbs_stepper *s = stepper(&I->d, I->d.method);
    const double h = s->h, hrho = s->hrho_stiff, h_stiff = s->h_stiff;
    const int stiff_run = s->stiff_run;
    if (I->d.stiff_warned || stiff_run < MBS_STIFF_STEPS || !(h > 0.0) ||
        (I->d.t_stop - I->d.t) / h <= MBS_STIFF_MIN_REMAINING || I->d.v[MBS_VR_RTOL] > MBS_STIFF_RTOL_MAX)
        return;
    I->d.stiff_warned = 1;
    snprintf(I->stiff_msg, sizeof I->stiff_msg,
             "the explicit method is taking steps of %.3g s at t = %.6g s, about %.3g more to the stop "
             "time %g s; the step is limited by stability, not accuracy (h |lambda| = %.3g with "
             "|lambda| ~ %.3g 1/s): the model is stiff (a very stiff spring or damper). The stiff "
             "method takes far fewer steps where the fast motion is damped or not excited",
             h, I->d.t, (I->d.t_stop - I->d.t) / h, I->d.t_stop, hrho, hrho / h_stiff);
    if (I->log != NULL)
        I->log(I->log_ctx, MBS_WARNING, I->stiff_msg);
}

const char *mbs_inst_stiffness(const mbs_instance *I) { return I->stiff_msg; }

/* Every integrator starts afresh at the next do-step (from the state of the communication point). */
static void reset_integrators(mbs_instance *I)
{
    int k;
    for (k = 0; mbs_method_name(k) != NULL; k++)
        mbs_stepper_reset(stepper(&I->d, k), mbs_method_descriptor(k));
}

/* The settings of every method from the values (tunable between do-steps), and after a change
 * of inputs or parameters a restart at the communication point (the steps taken past it assumed
 * the old values); while they keep changing, steps do not pass the next one.  Inputs given as a
 * function of time are known ahead: the run continues past.  Returns the stop time of the step. */
static double set_up_integrators(mbs_instance *I, double t_end)
{
    double t_stop;
    int k;
    for (k = 0; mbs_method_name(k) != NULL; k++) {
        mbs_stepper *s = stepper(&I->d, k);
        s->rtol = I->d.v[MBS_VR_RTOL];
        s->atol = solver_atol(I);
        s->hmax = I->d.v[MBS_VR_HMAX] > 0.0 ? I->d.v[MBS_VR_HMAX] : INFINITY;
    }
    I->d.inputs_changing = I->d.fsal_dirty && I->input_fn == NULL;
    if (I->d.fsal_dirty) {
        reset_integrators(I);
        I->d.fsal_dirty = 0;
    }
    t_stop = I->d.inputs_changing ? t_end : I->d.t_stop;
    if (I->d.method == MBS_METHOD_STIFF) /* its dense output is of order 3 only: stop at t_end */
        t_stop = t_end;
    return t_stop < t_end ? t_end : t_stop;
}

/* A failed do-step from t to t_end (code rc): the message names the internal time, the cause, a
 * nearly singular configuration where the step size collapsed there, and the inputs; the
 * integrators restart from the last communication point, whose state (outputs, time, saved
 * states) stays valid. */
static int step_failed(mbs_instance *I, int rc, double t, double t_end)
{
    char inputs[512], singular[400] = "";
    double t_int;
    const double *x_int = mbs_stepper_state(stepper(&I->d, I->d.method), mbs_method_descriptor(I->d.method), &t_int);
    if (MBS_M > 0 &&
        (rc == MBS_STEP_EUNDERFLOW || rc == MBS_STEP_ETOOMANY || rc == MBS_STEP_ENEWTON ||
         rc == MBS_STEP_ECOLLAPSE) &&
        mbs_form_singularity(&I->form, t_int, x_int, 0, MBS_SINGULAR_PIVOT_LOW, MBS_SINGULAR_PIVOT_HIGH,
                             mbs_row_names, singular + 2, sizeof singular - 2))
        memcpy(singular, "; ", 2);
    reset_integrators(I);
    I->last_code = rc;
    inputs_text(I, inputs, sizeof inputs);
    return fail(I, "integration from t=%.17g to %.17g failed (internal time %.17g): %s%s%s%s%s", t,
                t_end, t_int, mbs_step_message(rc), I->form.message[0] ? ": " : "",
                I->form.message, singular, inputs);
}

int mbs_inst_do_step(mbs_instance *I, double t, double h)
{
    double t_end, t_stop, x[NX];
    const mbs_problem pb = {inst_rhs, NULL, projection(I), I, NULL};
    int rc;
    I->last_code = 0;
    if (!I->d.started)
        return fail(I, "the instance has not been started");
    if (!(h > 0.0) || !isfinite(h))
        return fail(I, "communication step size must be > 0 (got %g)", h);
    if (!isfinite(t))
        return fail(I, "current communication point is not finite");
    if (fabs(t - I->d.t) > 1e-9 * (1.0 + fabs(I->d.t)))
        return fail(I, "current communication point %.17g does not match the time %.17g", t, I->d.t);
    if (I->d.v[MBS_VR_HMAX] > 0.0 && h / I->d.v[MBS_VR_HMAX] > (double)MAX_STEPS_PER_CALL)
        return fail(I, "max_internal_step = %g s would need more than %ld internal steps for the "
                       "communication step of %g s; raise max_internal_step or shorten the step",
                    I->d.v[MBS_VR_HMAX], MAX_STEPS_PER_CALL, h);
    t_end = t + h;
    t_stop = set_up_integrators(I, t_end);
    I->form.message[0] = '\0';
    rc = mbs_stepper_advance_dense(stepper(&I->d, I->d.method), mbs_method_descriptor(I->d.method), &pb, I->d.t, I->d.x,
                                   t_end, t_stop, MAX_STEPS_PER_CALL, x);
    if (rc == MBS_STEP_OK && pb.project != NULL && pb.project(I, t_end, x) != 0)
        rc = MBS_STEP_EPROJECT; /* the interpolated state is projected like every step end */
    if (rc != MBS_STEP_OK)
        return step_failed(I, rc, t, t_end);
    memcpy(I->d.x, x, sizeof x);
    I->d.t = t_end;
    if (I->d.method != MBS_METHOD_STIFF)
        check_stiffness(I);
    log_switches(I);
    if (publish(I) != MBS_OK) {
        I->last_code = MBS_STEP_ERHS;
        return fail(I, "outputs at t=%.17g: %.900s", t_end, I->msg);
    }
    return MBS_OK;
}

size_t mbs_inst_record_width(int record)
{
    return (size_t)VR_PRM + (record & MBS_RECORD_MULTIPLIERS ? MBS_M : 0) +
           (record & MBS_RECORD_ACCELERATIONS ? F : 0) + (record & MBS_RECORD_RESIDUALS ? 2 : 0);
}

/* What `record` asks for at the current state into row (after the values); MBS_OK or MBS_ERROR. */
static int record_row(mbs_instance *I, int record, double *row)
{
    row += VR_PRM;
    if (record & MBS_RECORD_MULTIPLIERS) {
        if (mbs_inst_multipliers(I, row) != MBS_OK)
            return MBS_ERROR;
        row += MBS_M;
    }
    if (record & MBS_RECORD_ACCELERATIONS) {
        if (mbs_inst_accelerations(I, row) != MBS_OK)
            return MBS_ERROR;
        row += F;
    }
    if (record & MBS_RECORD_RESIDUALS)
        mbs_inst_residuals(I, row);
    return MBS_OK;
}

int mbs_inst_run(mbs_instance *I, const double *grid, size_t n, double *rec, size_t stride,
                 int record, int (*tick)(void *, double), void *ctx, size_t *reached)
{
    size_t k;
    *reached = 0;
    if (stride < mbs_inst_record_width(record))
        return fail(I, "record rows of %lu values are too short (%lu needed)", (unsigned long)stride,
                    (unsigned long)mbs_inst_record_width(record));
    for (k = 0; k < n; k++) {
        double *row = rec + k * stride;
        if (k > 0 && mbs_inst_do_step(I, I->d.t, grid[k] - I->d.t) != MBS_OK)
            return MBS_ERROR;
        memcpy(row, I->d.v, sizeof(double) * VR_PRM);
        if (record_row(I, record, row) != MBS_OK)
            return MBS_ERROR;
        *reached = k + 1;
        if (tick != NULL && tick(ctx, I->d.t) != 0) {
            I->last_code = MBS_STOPPED;
            return fail(I, "stopped at t=%.17g", I->d.t);
        }
    }
    return MBS_OK;
}

int mbs_inst_last_code(const mbs_instance *I) { return I->last_code; }

int mbs_inst_set_state(mbs_instance *I, double t, const double *x)
{
    if (!I->d.started)
        return fail(I, "the instance has not been started");
    memcpy(I->d.x, x, sizeof I->d.x);
    I->d.t = t;
    reset_integrators(I);
    return publish(I);
}

int mbs_inst_record(mbs_instance *I, int record, double *row)
{
    memcpy(row, I->d.v, sizeof(double) * VR_PRM);
    return record_row(I, record, row);
}

const unsigned char *mbs_inst_held(const mbs_instance *I) { return I->held; }

int mbs_inst_uses_aba(const mbs_instance *I) { return MBS_HAS_ABA && MBS_M == 0 && I->aba; }

int mbs_inst_fail(mbs_instance *I, const char *msg) { return fail(I, "%s", msg); }

int mbs_inst_inputs_at(mbs_instance *I, double t)
{
    if (inputs_at(I, t) != 0)
        return fail(I, "%s", I->form.message);
#if MBS_TP_FUNCTION && MBS_NTP > 0
    mbs_time_parameters(t, I->form.prm, I->tp);
#endif
    return MBS_OK;
}

int mbs_inst_start_method(const mbs_instance *I, double *rtol, double *atol, double *hmax)
{
    *rtol = I->d.v[MBS_VR_RTOL];
    *atol = solver_atol(I);
    *hmax = I->d.v[MBS_VR_HMAX];
    return I->d.method;
}

void mbs_inst_statistics(const mbs_instance *I, long *nfev, long *naccept, long *nreject, long *nproj)
{
    long njev, ndec;
    mbs_inst_method_statistics(I, I->d.method, naccept, nreject, nfev, &njev, &ndec);
    *nproj = I->form.nproj;
}

int mbs_inst_method_statistics(const mbs_instance *I, int method, long *naccept, long *nreject,
                               long *nfev, long *njev, long *ndec)
{
    const mbs_stepper *s;
    if (mbs_method_name(method) == NULL)
        return MBS_ERROR;
    s = stepper((mbs_sim *)&I->d, method);
    *naccept = s->naccept;
    *nreject = s->nreject;
    *nfev = s->nfev;
    *njev = method == MBS_METHOD_STIFF ? I->d.rd.njev : 0;
    *ndec = method == MBS_METHOD_STIFF ? I->d.rd.ndec : 0;
    return MBS_OK;
}

void mbs_inst_stiff_statistics(const mbs_instance *I, long *njev, long *ndec, long *nnewton)
{
    *njev = I->d.rd.njev;
    *ndec = I->d.rd.ndec;
    *nnewton = I->d.rd.nnewton;
}

/* ---------------------------------------------------------------- directional derivatives */

int mbs_inst_output_derivatives(mbs_instance *I, const double *du, size_t n, const unsigned *unknown,
                                double *dv)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (unknown[i] >= NVARS || (mbs_kind[unknown[i]] != MBS_VAR_STATE &&
                                    mbs_kind[unknown[i]] != MBS_VAR_CALC))
            return fail(I, "unknown %u is not an output", unknown[i]);
#if MBS_NOUT > 0 && MBS_NU > 0
    {
        double dout[MBS_ONE(MBS_NOUT_EXPR * MBS_NU)], dval[MBS_NOUT];
        const double *x = I->d.x;
        int k, j;
        if (fill_tp(I, I->d.t) != 0)
            return fail(I, "%s", I->form.message);
#if MBS_TP_FUNCTION && MBS_NTP > 0
        mbs_time_parameters(I->d.t, I->d.v + VR_PRM, I->tp);
#endif
        mbs_outputs_du(I->d.t, x, x + F, I->d.v + VR_PRM, I->d.v + VR_U, I->tp, dout);
#if MBS_NREACT > 0
        {
            double dhu[F * MBS_NU], dh[F], dlam[MBS_M];
            mbs_force_du(I->d.t, x, x + F, I->d.v + VR_PRM, I->d.v + VR_U, I->tp, dhu);
            mbs_gemv(0, F, MBS_NU, 1.0, dhu, du, 0.0, dh);
            if (mbs_form_multipliers_dh(&I->form, I->d.t, x, dh, dlam) != 0)
                return fail(I, "%s", I->form.message);
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
        for (i = 0; i < n; i++) {
            unsigned r = unknown[i];
            dv[i] = (r >= MBS_VR_OUT && r < MBS_VR_OUT + MBS_NOUT) ? dval[r - MBS_VR_OUT] : 0.0;
        }
        return MBS_OK;
    }
#else
    (void)du;
    for (i = 0; i < n; i++)
        dv[i] = 0.0; /* no output depends directly on an input */
    return MBS_OK;
#endif
}

/* ---------------------------------------------------------------- Model Exchange */

int mbs_inst_me_set_time(mbs_instance *I, double t)
{
    if (!I->d.started)
        return fail(I, "the instance has not been started");
    if (!isfinite(t))
        return fail(I, "the time %g is not finite", t);
    I->d.t = t;
    I->d.me_moved = 1;
    return MBS_OK;
}

int mbs_inst_me_set_states(mbs_instance *I, size_t n, const double *x)
{
    size_t j;
    if (!I->d.started)
        return fail(I, "the instance has not been started");
    if (n != NX)
        return fail(I, "%lu continuous states given; the model has %d (its %d coordinates, then their "
                    "velocities)", (unsigned long)n, NX, F);
    for (j = 0; j < n; j++)
        if (!isfinite(x[j]))
            return fail(I, "continuous state %lu ('%s') is %g, not a finite number", (unsigned long)j,
                        mbs_names[j], x[j]);
    memcpy(I->d.x, x, sizeof I->d.x);
    I->d.me_moved = 1;
    return MBS_OK;
}

int mbs_inst_me_derivatives(mbs_instance *I, size_t n, double *xdot)
{
    int pivot, j;
    if (!I->d.started)
        return fail(I, "the instance has not been started");
    if (n != NX)
        return fail(I, "%lu derivatives asked for; the model has %d continuous states", (unsigned long)n, NX);
    if (mbs_inst_rhs(I, I->d.t, I->d.x, NULL, NULL, xdot, &pivot) != MBS_OK) {
        if (pivot > 0)
            return fail(I, "the derivatives at t=%.17g: the mass matrix is singular at coordinate '%s' "
                        "(a singular configuration)", I->d.t, mbs_names[pivot - 1]);
        return fail(I, "the derivatives at t=%.17g: %.900s", I->d.t, I->form.message);
    }
    /* the coordinates' derivatives are the velocity states der(x) themselves, as the model
     * description declares (a formulation's x' may hold the velocity projected onto the velocity
     * constraints, eq. 30, which differs off the constraints: the projection event mends that) */
    memcpy(xdot, I->d.x + F, sizeof(double) * F);
    for (j = 0; j < NX; j++)
        if (!isfinite(xdot[j]))
            return fail(I, "the derivative of '%s' at t=%.17g is %g, not a finite number (a singular "
                        "configuration, or states far outside the model's range)", mbs_names[j], I->d.t, xdot[j]);
    return MBS_OK;
}

double mbs_inst_me_drift(mbs_instance *I)
{
    double res[2];
    mbs_inst_residuals(I, res);
    return res[0] > res[1] || isnan(res[0]) ? res[0] : res[1];
}

int mbs_inst_me_drifted(mbs_instance *I, double tol)
{
    return I->d.started && !(mbs_inst_me_drift(I) <= tol); /* NaN: drifted */
}

int mbs_inst_me_project(mbs_instance *I, double tol, int *changed)
{
    double x[NX], drift;
    *changed = 0;
    if (!I->d.started)
        return fail(I, "the instance has not been started");
    drift = mbs_inst_me_drift(I);
    if (drift <= tol) /* (NaN: on, to the message) */
        return MBS_OK;
    memcpy(x, I->d.x, sizeof x);
    if (!isfinite(drift) || inputs_at(I, I->d.t) != 0 || mbs_form_project_state(&I->form, I->d.t, x) != 0)
        return fail(I, "the projection onto the constraints failed at t=%.17g (constraint residual %g): "
                    "%.900s", I->d.t, drift, isfinite(drift) ? I->form.message : "the state is not finite");
    memcpy(I->d.x, x, sizeof x);
    I->d.me_moved = 1;
    *changed = 1;
    return MBS_OK;
}

/* ---------------------------------------------------------------- state */

size_t mbs_inst_state_size(void) { return sizeof(mbs_sim); }

void mbs_inst_save(const mbs_instance *I, void *buf) { memcpy(buf, &I->d, sizeof I->d); }

int mbs_inst_state_check(const void *buf)
{
    mbs_sim d;
    int i;
    memcpy(&d, buf, sizeof d);
    if ((d.started & ~1) || (d.rk.n == 0 && d.started) || (d.fsal_dirty & ~1) || (d.inputs_changing & ~1) ||
        (d.me_moved & ~1) ||
        !isfinite(d.t) || isnan(d.t_stop) || mbs_stepper_check(&d.rk, NX) || mbs_stepper_check(&d.dp.st, NX) ||
        mbs_stepper_check(&d.rd.st, NX))
        return 1;
    for (i = 0; i < NX; i++)
        if (d.given[i] > 1 || !isfinite(d.x[i]))
            return 1;
    if ((d.dp.dense_ready & ~1) || (d.rd.jac_valid & ~1) || (d.part[0] & ~1) || d.part[1] < 0 ||
        mbs_method_name(d.method) == NULL || d.v[MBS_VR_METHOD] != (double)d.method)
        return 1;
    for (i = 0; i < F; i++)
        if (d.part[2 + i] & ~1)
            return 1;
    return 0;
}

void mbs_inst_restore(mbs_instance *I, const void *buf)
{
    memcpy(&I->d, buf, sizeof I->d);
    mbs_form_forget(&I->form); /* the parameters may differ */
    I->d.rk.work = I->d.work;
    I->d.dp.st.work = I->d.dwork;
    I->d.rd.st.work = I->d.rwork;
    I->d.rd.iwork = I->d.riwork;
    singular_hook(I);
    I->outputs_dirty = 0; /* the state holds the outputs computed at its time */
}
