/*
 * mbs_stepper.c -- the one step driver of RKSTAB, DOP853 and Radau (see mbs_stepper.h for what the
 * driver does and what a method provides).
 */
#include "mbs_stepper.h"

#include <math.h>
#include <string.h>

#define ROW(s, k) MBS_ROW(s, k)
#define STR(x) #x
#define XSTR(x) STR(x)

/* internal code of the step loop: a crossing by the companion begins at the current state */
#define CROSS_BEGINS 1

/* The largest stage count of an explicit tableau (DOP853's dense output uses 16 stages). */
#define MAX_TERMS 17

/* ---------------------------------------------------------------- small helpers */

int mbs_step_finite_sumsq(const double *v, int n)
{
    double sum = 0.0;
    int i;
    for (i = 0; i < n; ++i) sum += v[i] * v[i];
    return isfinite(sum);
}

int mbs_step_finite_each(const double *v, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

double mbs_step_spacing(double a)
{
    return nextafter(a, HUGE_VAL) - a;
}

/* sqrt(1/n sum (v_i / scale_i)^2) */
static double rms(const double *v, const double *scale, int n)
{
    double sum = 0.0;
    int i;
    for (i = 0; i < n; ++i) {
        double q = v[i] / scale[i];
        sum += q * q;
    }
    return sqrt(sum / n);
}

const char *mbs_step_message(int code)
{
    switch (code) {
    case MBS_STEP_OK: return "success";
    case MBS_STEP_EARG: return "invalid argument";
    case MBS_STEP_EUNDERFLOW: return "step size underflow (repeated error-test failures)";
    case MBS_STEP_ETOOMANY: return "maximum number of steps exceeded";
    case MBS_STEP_ERHS: return "the right-hand side reported a failure";
    case MBS_STEP_EPROJECT: return "the projection reported a failure";
    case MBS_STEP_ENONFINITE: return "non-finite values (state, right-hand side or projection)";
    case MBS_STEP_ECOLLAPSE:
        return "the step size collapsed (" XSTR(MBS_STEP_COLLAPSE_STEPS) " accepted steps in a row shorter than "
               XSTR(MBS_STEP_COLLAPSE_RATIO) " of the interval): the solution is not smooth here";
    case MBS_STEP_EHMAX: return "the step-size limit (max_internal_step) is below the smallest step "
                                "the integrator can resolve here";
    case MBS_STEP_ESINGULAR:
        return "the iteration matrix of the implicit method stayed singular while the step size was halved";
    case MBS_STEP_ENEWTON:
        return "step size underflow: the Newton iteration of the implicit method diverged at every "
               "step size (no solution of its stage equations near the state: a singularity of the "
               "model's forces or constraints, or a discontinuity)";
    default: return "unknown error code";
    }
}

/* ---------------------------------------------------------------- life cycle */

int mbs_stepper_init(mbs_stepper *s, const mbs_step_method *m, int n, double *work, double rtol, double atol,
                     double hmax)
{
    if (s == NULL || m == NULL) return MBS_STEP_EARG;
    memset(s, 0, sizeof(*s));
    if (n < 1 || work == NULL || !(rtol > 0.0) || !isfinite(rtol) || isnan(atol) || isinf(atol) || isnan(hmax))
        return MBS_STEP_EARG;
    s->n = n;
    s->work = work;
    s->rtol = rtol;
    s->atol = atol < 0.0 ? rtol / 10 : atol;
    s->hmax = hmax > 0.0 ? hmax : HUGE_VAL;
    s->beta = m->control != NULL ? m->control->beta : 0.0;
    s->errold = 1e-4;
    if (m->restart != NULL) m->restart(s);
    return MBS_STEP_OK;
}

void mbs_stepper_reset(mbs_stepper *s, const mbs_step_method *m)
{
    if (s == NULL) return;
    s->valid = s->dense_valid = s->sing.valid = s->crossing = 0;
    if (m->restart != NULL) m->restart(s);
}

const double *mbs_stepper_state(mbs_stepper *s, const mbs_step_method *m, double *t)
{
    if (s->crossing) {
        const mbs_stepper *r = m->singular.companion_of(s);
        if (r->valid) {
            *t = r->t;
            return r->work;
        }
    }
    *t = s->t;
    return s->work;
}

int mbs_stepper_check(const mbs_stepper *s, int n)
{
    return (s->n != n && s->n != 0) || (s->valid & ~1) || (s->dense_valid & ~1) || (s->sing.valid & ~1) ||
           (s->crossing & ~1) || (s->valid && !isfinite(s->t));
}

/* ---------------------------------------------------------------- singular positions */

/* The regularity ratio of the start, once per (re)start: rho = weak(t, x, d = 0), d n doubles of
 * scratch (nothing without the hook or once known). */
static void singular_start(mbs_singular *g, void *ctx, double t, const double *x, double *d, int n)
{
    if (g->weak == NULL || g->valid) return;
    memset(d, 0, (size_t)n * sizeof(double));
    g->rho = g->rho_new = g->weak(ctx, t, x, d);
    g->t_rho = t;
    g->rho_prev = HUGE_VAL;
    g->t_rho_prev = t;
    g->valid = 1;
}

/* After an accepted step that ended at t: rho_prev <- rho <- rho_new. */
static void singular_accept(mbs_singular *g, double t)
{
    if (g->weak == NULL || !g->valid) return;
    g->rho_prev = g->rho;
    g->t_rho_prev = g->t_rho;
    g->rho = g->rho_new;
    g->t_rho = t;
}

/* The time D = t* - tc from the last accepted state (at tc) to the singular time t* predicted by
 * linear extrapolation of the last two ratios, D = rho (tc - t_rho_prev) / (rho_prev - rho), once
 * rho < watch and falling; HUGE_VAL where none is predicted. */
static double singular_eta(const mbs_singular *g, double tc, double watch)
{
    double D;
    if (g->weak == NULL || !g->valid || !(g->rho < g->rho_prev && g->rho_prev < HUGE_VAL && g->rho < watch))
        return HUGE_VAL;
    D = g->rho * (tc - g->t_rho_prev) / (g->rho_prev - g->rho);
    return D > 0.0 ? D : HUGE_VAL;
}

/* RKSTAB's step placement: the next step h shortened, where D <= reach h, to h = D / (j + theta),
 * j >= 0 the smallest integer with h <= the proposal, so that t* falls theta into a step (0.55: in
 * the gap between the stages c = 3/10 and 4/5; only ever shortening). */
static double place(const mbs_singular *g, const mbs_singular_rule *r, double tc, double h)
{
    const double D = singular_eta(g, tc, r->watch);
    int j;
    if (!(D <= r->reach * h)) return h;
    j = (int)ceil(D / h - r->theta);
    if (j < 0) j = 0;
    return D / (j + r->theta);
}

/* A singular time ahead of a method that crosses with its companion: within reach proposed steps
 * it ends this method's steps (the companion crosses up to the mirror point 2 t* - t). */
static int crossing_ahead(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double h)
{
    const double D = singular_eta(&s->sing, s->t, m->singular.watch);
    if (pb->project == NULL || s->sing.weak == NULL || !(D <= m->singular.reach * h && s->t + 2.0 * D > s->t))
        return 0;
    s->crossing = 1;
    s->t_exit = s->t + 2.0 * D;
    return 1;
}

/* Begin a crossing: the companion starts afresh at the state with the same tolerances, the ratios
 * so far and the proposal, placed by the companion's rule. */
static int cross_begin(mbs_stepper *s, const mbs_step_method *m)
{
    const mbs_step_method *cm = m->singular.companion;
    mbs_stepper *r = m->singular.companion_of(s);
    int rc = mbs_stepper_init(r, cm, s->n, r->work, s->rtol, s->atol, s->hmax);
    if (rc != MBS_STEP_OK) return rc;
    r->hmin = s->hmin;
    r->sing = s->sing;
    r->h = place(&r->sing, &cm->singular, s->t, s->h);
    s->ncross++;
    return MBS_STEP_OK;
}

/* End a crossing: the method goes on from the companion's last accepted state (its f(t, x)
 * evaluated anew), the proposal at most facmax times the companion's last step. */
static void cross_end(mbs_stepper *s, const mbs_step_method *m, const mbs_stepper *r)
{
    memcpy(s->work, r->work, (size_t)s->n * sizeof(double));
    s->t = r->t;
    s->valid = s->dense_valid = 0;
    if (m->restart != NULL) m->restart(s);
    s->sing = r->sing;
    s->reject_last = 0;
    if (s->h > m->control->facmax * r->h) s->h = m->control->facmax * r->h;
    s->crossing = 0;
}

/* The companion's steps of a crossing, up to its end (then *done = 0: the method goes on) or to
 * t_target (*done = 1, xout written); its work is added to the method's counters. */
static int cross(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double t_target,
                 double t_stop, long max_steps, double *xout, int *done)
{
    const mbs_step_method *cm = m->singular.companion;
    mbs_stepper *r = m->singular.companion_of(s);
    const long c[4] = {r->nfev, r->naccept, r->nreject, r->nproj};
    int rc;
    *done = 0;
    if (r->valid && r->t >= s->t_exit && t_target >= r->t) {
        cross_end(s, m, r);
        return MBS_STEP_OK;
    }
    if (t_target > s->t_exit) /* the companion to the end of the crossing, then the method on */
        rc = mbs_stepper_advance_dense(r, cm, pb, s->t, s->work, s->t_exit, s->t_exit, max_steps, xout);
    else
        rc = mbs_stepper_advance_dense(r, cm, pb, s->t, s->work, t_target,
                                       t_stop < s->t_exit ? t_stop : s->t_exit, max_steps, xout);
    s->nfev += r->nfev - c[0];
    s->naccept += r->naccept - c[1];
    s->nreject += r->nreject - c[2];
    s->nproj += r->nproj - c[3];
    if (rc != MBS_STEP_OK || t_target <= s->t_exit) {
        *done = 1;
        return rc;
    }
    cross_end(s, m, r);
    return MBS_STEP_OK;
}

/* ---------------------------------------------------------------- one call */

/* What the step loop of one call keeps. */
typedef struct {
    double t_end, t_stop; /* steps until t >= t_end, never past t_stop */
    double hmin;          /* the call's smallest step */
    double h_collapse;    /* accepted steps shorter than this count towards a collapse */
    double h;             /* the proposal for the next attempt */
    long max_steps, nattempt, short_run;
    int cause;            /* what a step below hmin means: the cause of the last rejection */
} call;

/* f(t, x) of the internal state, where not known. */
static int state_slope(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb)
{
    double *F = ROW(s, m->row_f);
    s->nfev++;
    if (pb->f(pb->ctx, s->t, s->work, F) != 0) return MBS_STEP_ERHS;
    if (!m->finite(F, s->n)) return MBS_STEP_ENONFINITE;
    s->valid = 1;
    return MBS_STEP_OK;
}

/* The smallest step of a call to t_end: hmin if set, else 1e-14 min(t_end - t, hmin_span); never
 * below 10 ulp of max(|t|, |t_end|), or of |t| where the method checks each step's start. */
static double call_hmin(const mbs_stepper *s, const mbs_step_method *m, double t_end)
{
    const double span = t_end - s->t;
    const double hmin = s->hmin > 0.0 ? s->hmin : 1e-14 * (span < m->hmin_span ? span : m->hmin_span);
    const double a = m->hmin_each_step || fabs(s->t) > fabs(t_end) ? fabs(s->t) : fabs(t_end);
    const double u = 10.0 * mbs_step_spacing(a);
    return u > hmin ? u : hmin;
}

/* Hairer's starting-step heuristic (HNW I, Sec. II.4; rkstab.py _initial_step) for a method whose
 * error behaves as O(h^order), from (t0, x0) with f0 = f(t0, x0) over at most span:
 *   h = min(100 h0, (0.01 / max(d1, d2))^(1/order), span, hmax),
 * one evaluation of f; the rows ARG, XN and K2 of the explicit layout as scratch. */
static int hairer_start(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double span,
                        double *h_out)
{
    const int n = s->n;
    const double *x0 = s->work, *f0 = ROW(s, m->row_f);
    double *sc = ROW(s, MBS_RK_ARG), *tmp = ROW(s, MBS_RK_XN), *f1 = ROW(s, MBS_RK_K(2));
    double d0, d1, d2, h0, h1, h;
    int i;
    for (i = 0; i < n; ++i) sc[i] = s->atol + s->rtol * fabs(x0[i]);
    d0 = rms(x0, sc, n);
    d1 = rms(f0, sc, n);
    h0 = (!(d0 >= 1e-5) || !(d1 >= 1e-5) || !isfinite(d0) || !isfinite(d1)) ? 1e-6 : 0.01 * d0 / d1;
    if (h0 > span) h0 = span;
    for (i = 0; i < n; ++i) tmp[i] = x0[i] + h0 * f0[i];
    s->nfev++;
    if (pb->f(pb->ctx, s->t + h0, tmp, f1) != 0) return MBS_STEP_ERHS;
    for (i = 0; i < n; ++i) tmp[i] = f1[i] - f0[i];
    d2 = rms(tmp, sc, n) / h0;
    if (!isfinite(d2)) {
        *h_out = h0 < s->hmax ? h0 : s->hmax;
        return MBS_STEP_OK;
    }
    if (d1 <= 1e-15 && d2 <= 1e-15) {
        h1 = h0 * 1e-3;
        if (h1 < 1e-6) h1 = 1e-6;
    } else {
        h1 = pow(0.01 / (d1 > d2 ? d1 : d2), 1.0 / m->start_order);
    }
    h = 100 * h0;
    if (h1 < h) h = h1;
    if (span < h) h = span;
    if (s->hmax < h) h = s->hmax;
    *h_out = h;
    return MBS_STEP_OK;
}

/* The first proposal of a call: the kept one, or the method's starting step; never above hmax. */
static int starting_step(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, call *c)
{
    if (s->h > 0.0 && isfinite(s->h)) {
        c->h = s->h < s->hmax ? s->h : s->hmax;
        return MBS_STEP_OK;
    }
    if (m->start_order > 0) return hairer_start(s, m, pb, c->t_end - s->t, &c->h);
    c->h = m->first_step > 100.0 * c->hmin ? m->first_step : 100.0 * c->hmin;
    if (c->h > s->hmax) c->h = s->hmax;
    return MBS_STEP_OK;
}

/* Set up a call from the internal state (at s->t < t_end). */
static int begin_call(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, call *c)
{
    int rc;
    if (!(s->rtol > 0.0) || !isfinite(s->rtol) || !(s->atol >= 0.0) || !isfinite(s->atol) || isnan(s->hmax))
        return MBS_STEP_EARG;
    if (!m->finite(s->work, s->n)) return MBS_STEP_ENONFINITE;
    if (!s->valid && (rc = state_slope(s, m, pb)) != MBS_STEP_OK) return rc;
    if (m->begin != NULL) m->begin(s);
    c->hmin = call_hmin(s, m, c->t_end);
    if ((rc = starting_step(s, m, pb, c)) != MBS_STEP_OK) return rc;
    if (s->hmax < c->hmin) return MBS_STEP_EHMAX;
    c->h_collapse = MBS_STEP_COLLAPSE_RATIO * ((isfinite(c->t_stop) ? c->t_stop : c->t_end) - s->t);
    c->nattempt = c->short_run = 0;
    c->cause = MBS_STEP_EUNDERFLOW;
    if (pb->project != NULL && m->singular.mode != MBS_SING_NONE) /* the start's regularity */
        singular_start(&s->sing, pb->ctx, s->t, s->work, ROW(s, MBS_RK_D), s->n);
    return MBS_STEP_OK;
}

/* Hairer's stiffness estimate of the accepted step h and the count of stability-limited steps. */
static void stiffness(mbs_stepper *s, double hrho, double h)
{
    s->hrho = hrho;
    s->stiff_run = mbs_step_stiff_count(s->stiff_run, &s->stiff_below, s->hrho, s->stiff_hrho, s->stiff_gap);
    if (s->stiff_below == 0 && s->stiff_run > 0) {
        s->hrho_stiff = s->hrho;
        s->h_stiff = h;
    }
}

int mbs_step_stiff_count(int run, int *below, double hrho, double threshold, int gap)
{
    if (!(threshold > 0.0)) {
        *below = 0;
        return 0;
    }
    if (hrho > threshold) {
        *below = 0;
        return run + 1;
    }
    return ++*below >= gap ? 0 : run;
}

/* Take a passed attempt of size h from tc to t_new. */
static void accept(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, call *c, const mbs_try *a,
                   double tc, double h, double t_new, int clipped)
{
    const size_t bytes = (size_t)s->n * sizeof(double);
    double h_next = m->accepted(s, m, a, tc, h, t_new, c->h, clipped, c->t_end);
    s->reject_last = 0;
    c->cause = MBS_STEP_EUNDERFLOW;
    s->naccept++;
    c->short_run = h < c->h_collapse ? c->short_run + 1 : 0;
    if (m->hrho != NULL) stiffness(s, m->hrho(s, m, h), h);
    memcpy(s->work, ROW(s, m->row_xn), bytes);
    memcpy(ROW(s, m->row_f), ROW(s, m->row_fn), bytes);
    s->t = t_new;
    if (pb->project != NULL && m->singular.mode != MBS_SING_NONE) {
        singular_accept(&s->sing, t_new);
        if (m->singular.mode == MBS_SING_PLACE) h_next = place(&s->sing, &m->singular, t_new, h_next);
    }
    c->h = h_next;
}

/* Count a rejected or broken attempt of size h from tc; the retry's size. */
static void reject(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, call *c, const mbs_try *a,
                   double tc, double h)
{
    double h_next;
    s->nreject++;
    h_next = m->rejected(s, m, a, h);
    s->reject_last = 1;
    c->cause = a->outcome == MBS_TRY_BROKEN ? a->cause : MBS_STEP_EUNDERFLOW;
    if (a->outcome == MBS_TRY_REJECTED && pb->project != NULL && m->singular.mode == MBS_SING_PLACE)
        h_next = place(&s->sing, &m->singular, tc, h_next);
    c->h = h_next;
}

/* One attempt from the internal state, after the stop reasons; MBS_STEP_OK or what ends the call. */
static int step(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, call *c)
{
    const double tc = s->t;
    double h = c->h, t_new, hmin = c->hmin;
    mbs_try a;
    int clipped = 0, rc;
    if (m->hmin_each_step && 10.0 * mbs_step_spacing(fabs(tc)) > hmin) hmin = 10.0 * mbs_step_spacing(fabs(tc));
    if (c->max_steps > 0 && c->nattempt >= c->max_steps) return MBS_STEP_ETOOMANY;
    if (c->short_run >= MBS_STEP_COLLAPSE_STEPS) return MBS_STEP_ECOLLAPSE;
    if (h < hmin) return c->cause;
    if (m->singular.mode == MBS_SING_CROSS && crossing_ahead(s, m, pb, h)) return CROSS_BEGINS;
    c->nattempt++;
    if (tc + 1.01 * h >= c->t_stop) { /* shortened (or stretched by 1 %) to end at t_stop */
        h = c->t_stop - tc;
        t_new = c->t_stop;
        clipped = 1;
    } else {
        t_new = tc + h;
    }
    memset(&a, 0, sizeof a);
    rc = m->attempt(s, m, pb, tc, h, t_new, &a);
    if (rc != MBS_STEP_OK) return rc;
    if (a.outcome == MBS_TRY_PASSED) {
        accept(s, m, pb, c, &a, tc, h, t_new, clipped);
        if (pb->accepted != NULL && pb->accepted(pb->ctx, s, m) != 0) return MBS_STEP_ERHS;
    } else
        reject(s, m, pb, c, &a, tc, h);
    return MBS_STEP_OK;
}

/* Steps from the internal state until its time reaches t_end, never past t_stop (>= t_end).
 * Returns MBS_STEP_OK, a failure, or CROSS_BEGINS (the companion takes over at the state). */
static int advance(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double t_end, double t_stop,
                   long max_steps)
{
    call c;
    int rc;
    c.t_end = t_end;
    c.t_stop = t_stop;
    c.max_steps = max_steps;
    rc = begin_call(s, m, pb, &c);
    if (rc != MBS_STEP_OK) return rc;
    while (s->t < t_end && rc == MBS_STEP_OK) rc = step(s, m, pb, &c);
    s->h = c.h;
    return rc;
}

/* ---------------------------------------------------------------- the calls */

int mbs_stepper_advance_dense(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double t0,
                              const double *x0, double t_target, double t_stop, long max_steps, double *xout)
{
    int rc, done;
    if (s == NULL || m == NULL || pb == NULL || pb->f == NULL || x0 == NULL || xout == NULL || s->work == NULL ||
        s->n < 1 || !isfinite(t0) || !isfinite(t_target) || t_target < t0 || isnan(t_stop))
        return MBS_STEP_EARG;
    if (t_stop < t_target) t_stop = t_target;
    if (!s->valid && !s->crossing) { /* (re)start from the caller's state */
        memmove(s->work, x0, (size_t)s->n * sizeof(double));
        s->t = t0;
        s->dense_valid = 0;
        if (m->restart != NULL) m->restart(s);
    }
    for (;;) {
        if (s->crossing) {
            rc = cross(s, m, pb, t_target, t_stop, max_steps, xout, &done);
            if (done) return rc;
            continue;
        }
        if (t_target > s->t) {
            rc = advance(s, m, pb, t_target, t_stop, max_steps);
            if (rc == CROSS_BEGINS && (rc = cross_begin(s, m)) == MBS_STEP_OK) continue;
            if (rc != MBS_STEP_OK) return rc;
        }
        if (t_target == s->t) {
            memcpy(xout, s->work, (size_t)s->n * sizeof(double));
            return MBS_STEP_OK;
        }
        if (!s->dense_valid || t_target < s->t_prev) return MBS_STEP_EARG; /* not inside the last step */
        return m->interpolate(s, pb, t_target, xout);
    }
}

int mbs_stepper_advance(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double *t, double *x,
                        double t_end, long max_steps)
{
    const double *xs;
    double ts;
    int rc;
    if (s == NULL || m == NULL || t == NULL || x == NULL || s->work == NULL || s->n < 1 || !isfinite(*t) ||
        !isfinite(t_end) || t_end < *t)
        return MBS_STEP_EARG;
    if (t_end == *t) return MBS_STEP_OK;
    xs = mbs_stepper_state(s, m, &ts);
    if ((s->valid || s->crossing) && !(ts == *t && memcmp(xs, x, (size_t)s->n * sizeof(double)) == 0))
        mbs_stepper_reset(s, m);
    rc = mbs_stepper_advance_dense(s, m, pb, *t, x, t_end, t_end, max_steps, x);
    if (s->valid || s->crossing) {
        xs = mbs_stepper_state(s, m, &ts);
        *t = ts;
        memmove(x, xs, (size_t)s->n * sizeof(double));
    }
    return rc;
}

/* ---------------------------------------------------------------- explicit Runge-Kutta methods */

/* One pass of mbs_rk_combine: out = src + the nt terms hc[j] k[j] (1 <= nt <= 8), each component
 * summed from the left; the sum of squares of out, summed in the order of the components. */
#define TERM(j) + hc[j] * k[j][i]
#define PASS(terms)                         \
    for (i = 0; i < n; ++i) {               \
        const double v = src[i] terms;      \
        out[i] = v;                         \
        sum += v * v;                       \
    }                                       \
    break
static double add_terms(double *out, const double *src, const double *hc, const double *const *k, int nt,
                        int n)
{
    double sum = 0.0;
    int i;
    switch (nt) {
    case 1: PASS(TERM(0));
    case 2: PASS(TERM(0) TERM(1));
    case 3: PASS(TERM(0) TERM(1) TERM(2));
    case 4: PASS(TERM(0) TERM(1) TERM(2) TERM(3));
    case 5: PASS(TERM(0) TERM(1) TERM(2) TERM(3) TERM(4));
    case 6: PASS(TERM(0) TERM(1) TERM(2) TERM(3) TERM(4) TERM(5));
    case 7: PASS(TERM(0) TERM(1) TERM(2) TERM(3) TERM(4) TERM(5) TERM(6));
    default: PASS(TERM(0) TERM(1) TERM(2) TERM(3) TERM(4) TERM(5) TERM(6) TERM(7));
    }
    return sum;
}
#undef PASS
#undef TERM

double mbs_rk_combine(double *out, const double *base, double h, const double *coef, int jmax,
                      const double *const *K, int n, int sparse)
{
    double hc[8], sum = 0.0;
    const double *k[8], *src = base;
    int i, j = 1, nt;
    if (base == NULL) {
        for (i = 0; i < n; ++i) out[i] = 0.0;
        src = out;
    }
    while (j <= jmax) { /* the next (up to) eight terms, in one pass */
        for (nt = 0; nt < 8 && j <= jmax; ++j) {
            if (sparse && coef[j] == 0.0) continue;
            hc[nt] = h * coef[j];
            k[nt++] = K[j];
        }
        if (nt == 0) break;
        sum = add_terms(out, src, hc, k, nt, n);
        src = out;
    }
    if (src != out) { /* no terms */
        sum = 0.0;
        for (i = 0; i < n; ++i) {
            out[i] = src[i];
            sum += out[i] * out[i];
        }
    }
    return sum;
}

/* Stages 2..s and x~ (row XT); 1 where a stage argument or x~ is not finite by the explicit methods'
 * rule, its sum of squares (f never sees it). */
static int rk_stages(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double t, double h,
                     double t_new)
{
    const mbs_rk_tableau *tb = m->tableau;
    const int n = s->n;
    const double *X = s->work, *K[MAX_TERMS];
    double *ARG = ROW(s, MBS_RK_ARG), *XT = ROW(s, MBS_RK_XT);
    int i;
    for (i = 1; i <= tb->stages; ++i) K[i] = ROW(s, MBS_RK_K(i));
    for (i = 2; i <= tb->stages; ++i) {
        const double c = tb->c[i];
        if (!isfinite(mbs_rk_combine(ARG, X, h, tb->a + i * tb->stride, i - 1, K, n, tb->sparse))) return 1;
        s->nfev++;
        if (pb->f(pb->ctx, c == 1.0 ? t_new : t + c * h, ARG, ROW(s, MBS_RK_K(i))) != 0) return MBS_STEP_ERHS;
    }
    return isfinite(mbs_rk_combine(XT, X, h, tb->b, tb->stages, K, n, tb->sparse)) ? MBS_STEP_OK : 1;
}

/* The outcome of a finished attempt: a non-finite error norm breaks it (its cause: non-finite
 * values where x_new, or f(t + h, x_new) if it was evaluated (kn_fresh), are not finite, else an
 * overflowing norm, an ordinary failure), otherwise the error test decides. */
static void classify(const mbs_stepper *s, const mbs_step_method *m, mbs_try *a, int kn_fresh)
{
    const int n = s->n;
    if (isfinite(a->err)) {
        a->outcome = a->err <= 1.0 ? MBS_TRY_PASSED : MBS_TRY_REJECTED;
        return;
    }
    a->outcome = MBS_TRY_BROKEN;
    a->cause = m->finite(ROW(s, m->row_xn), n) && (!kn_fresh || m->finite(ROW(s, m->row_fn), n))
                   ? MBS_STEP_EUNDERFLOW
                   : MBS_STEP_ENONFINITE;
}

/* The projection inside the step (RKSTAB, seed 004 eqs. 4.10-4.13): x_new = p(t_new, x~) of every
 * attempt, k_{s+1} = f(t_new, x_new), the correction d = x_new - x~ (its rounding along weak
 * constraint directions removed by the hook) in the error estimate. */
static int project_in_step(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double h,
                           double t_new, mbs_try *a)
{
    const int n = s->n;
    const double *XT = ROW(s, MBS_RK_XT);
    double *XN = ROW(s, MBS_RK_XN), *D = ROW(s, MBS_RK_D);
    int i;
    if (pb->project != NULL) {
        s->nproj++;
        if (pb->project(pb->ctx, t_new, XN) != 0) return MBS_STEP_EPROJECT;
    }
    s->nfev++;
    if (pb->f(pb->ctx, t_new, XN, ROW(s, m->row_fn)) != 0) return MBS_STEP_ERHS;
    if (pb->project != NULL) {
        for (i = 0; i < n; ++i) D[i] = XN[i] - XT[i];
        if (s->sing.weak != NULL) s->sing.rho_new = s->sing.weak(pb->ctx, t_new, XN, D);
    }
    a->err = m->tableau->error(s, h, pb->project != NULL ? D : NULL);
    classify(s, m, a, 1);
    return MBS_STEP_OK;
}

int mbs_step_project_after(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double t_new,
                           const double *xt, double *d, mbs_try *a)
{
    const int n = s->n;
    const double *X = s->work;
    double *XN = ROW(s, m->row_xn), *FN = ROW(s, m->row_fn);
    int i;
    a->outcome = MBS_TRY_BROKEN;
    a->cause = MBS_STEP_ENONFINITE;
    if (pb->project != NULL && a->err <= 1.0) {
        s->nproj++;
        if (pb->project(pb->ctx, t_new, XN) != 0) return MBS_STEP_EPROJECT;
        if (!m->finite(XN, n)) return MBS_STEP_OK;
        if (xt != NULL) { /* the correction counts: err = sqrt(err^2 + rms((x_new - x~) / sc)^2) */
            const int ne = mbs_step_nerr(s);
            double sum = 0.0;
            for (i = 0; i < ne; ++i) {
                const double ax = fabs(X[i]), axt = fabs(xt[i]);
                const double q = (XN[i] - xt[i]) / (s->atol + s->rtol * (ax > axt ? ax : axt));
                sum += q * q;
            }
            a->err = sqrt(a->err * a->err + sum / ne);
        }
        if (s->sing.weak != NULL && d != NULL) { /* the regularity of x_new */
            for (i = 0; i < n; ++i) d[i] = XN[i] - xt[i];
            s->sing.rho_new = s->sing.weak(pb->ctx, t_new, XN, d);
        }
    }
    if (a->err <= 1.0) { /* f at the new point: the next step's f(t, x) */
        s->nfev++;
        if (pb->f(pb->ctx, t_new, XN, FN) != 0) {
            a->cause = MBS_STEP_ERHS;
            return m->rhs_failure_rejects ? MBS_STEP_OK : MBS_STEP_ERHS;
        }
        if (!m->finite(FN, n)) return MBS_STEP_OK;
    }
    classify(s, m, a, 0);
    return MBS_STEP_OK;
}

int mbs_rk_attempt(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double t, double h,
                   double t_new, mbs_try *a)
{
    const mbs_rk_tableau *tb = m->tableau;
    int rc;
    a->outcome = MBS_TRY_BROKEN;
    a->cause = MBS_STEP_ENONFINITE;
    rc = rk_stages(s, m, pb, t, h, t_new);
    if (rc != MBS_STEP_OK) return rc < 0 ? rc : MBS_STEP_OK;
    memcpy(ROW(s, MBS_RK_XN), ROW(s, MBS_RK_XT), (size_t)s->n * sizeof(double));
    if (tb->project_in_step) return project_in_step(s, m, pb, h, t_new, a);
    a->err = tb->error(s, h, NULL);
    return mbs_step_project_after(s, m, pb, t_new, ROW(s, MBS_RK_XT), ROW(s, MBS_RK_D), a);
}

double mbs_rk_pi_accepted(mbs_stepper *s, const mbs_step_control *c, double err, double h, double h_prop,
                          int clipped)
{
    double fac = pow(err, 1.0 / c->order - c->beta_weight * s->beta) / pow(s->errold, s->beta) / c->safety;
    double h_next;
    if (fac > 1.0 / c->facmin) fac = 1.0 / c->facmin;
    if (fac < 1.0 / c->facmax) fac = 1.0 / c->facmax;
    h_next = h / fac;
    if (h_next > s->hmax) h_next = s->hmax;
    if (clipped && h < h_prop) { /* shortened to hit t_stop: the proposal and the history are kept */
        if (h_next < h_prop) h_next = h_prop;
        if (s->reject_last && h_next > h_prop) h_next = h_prop;
    } else {
        if (s->reject_last && h_next > h) h_next = h;
        s->errold = err > 1e-4 ? err : 1e-4;
    }
    return h_next;
}

double mbs_rk_rejected(mbs_stepper *s, const mbs_step_method *m, const mbs_try *a, double h)
{
    const mbs_step_control *c = m->control;
    double q;
    if (a->outcome == MBS_TRY_BROKEN) return h * m->nonfinite_shrink;
    q = pow(a->err, 1.0 / c->order - c->beta_weight * s->beta) / c->safety;
    return h / (q < 1.0 / c->facmin ? q : 1.0 / c->facmin);
}

double mbs_rk_hrho(const mbs_stepper *s, const mbs_step_method *m, double h)
{
    const int n = s->n, st = m->tableau->stages;
    const double *k_new = ROW(s, MBS_RK_K(st + 1)), *k_s = ROW(s, MBS_RK_K(st));
    const double *x_new = ROW(s, MBS_RK_XN), *x_s = ROW(s, MBS_RK_ARG);
    double dk = 0.0, dx = 0.0;
    int i;
    for (i = 0; i < n; ++i) {
        dk += (k_new[i] - k_s[i]) * (k_new[i] - k_s[i]);
        dx += (x_new[i] - x_s[i]) * (x_new[i] - x_s[i]);
    }
    return dx > 0.0 ? h * sqrt(dk / dx) : 0.0;
}
