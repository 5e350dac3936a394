/*
 * mbs_stepper.h -- the one step driver of the engine's integrators (C99).
 *
 * RKSTAB (mbs_rkstab.c: Dormand-Prince 5(4) with the projection inside the step, seed 004 sec. 4.2-4.3),
 * DOP853 (mbs_dop853.c: Dormand-Prince 8(5,3), projected after the step) and Radau IIA of order 5
 * (mbs_radau.c: the stiff method, projected after the step) run on this driver.  A method is a
 * descriptor, mbs_step_method: for an explicit method its Butcher tableau, its error estimator and
 * its continuous extension; for Radau its own attempt (Newton on the collocation system) and its
 * own step-size controller.  Everything else is the driver's (mbs_stepper.c):
 *
 *   the calls       mbs_stepper_advance_dense: from the internal state (or, after a reset, from the
 *                   caller's), steps as the error control allows past t_target, never past t_stop,
 *                   and the state at t_target from the continuous extension of the step that
 *                   contains it; mbs_stepper_advance: to exactly t_end from the caller's state (the
 *                   internal state continues when it is the one the previous call returned).  The
 *                   state and f(t, x) persist across calls (first same as last), as do the step-size
 *                   proposal and the controller's history, all in plain data (saved with memcpy).
 *   one call        the state's f(t, x) where not known; the starting step (Hairer's heuristic,
 *                   HNW I sec. II.4, where the method has an order for it, else its first step); the
 *                   smallest step hmin; hmax.
 *   one step        the stop reasons checked before each attempt (MBS_STEP_ETOOMANY, ECOLLAPSE,
 *                   the step below hmin: EUNDERFLOW or the cause of the last rejection); the step
 *                   clipped to end exactly at t_stop (or stretched by at most 1 % to it); the
 *                   method's attempt; then
 *                     accepted: the method's controller and continuous extension, the counters,
 *                       the collapse count, the stiffness estimate, the new state;
 *                     rejected (error test failed): the method's controller;
 *                     broken (non-finite values, a failing right-hand side of Radau, a diverging
 *                       Newton iteration, a singular iteration matrix): the method's retry (h
 *                       times nonfinite_shrink), remembering the cause for the stop reason.
 *   projection      (seed 004): the formulation's projection p of an attempt's end point x~ onto the
 *                   constraint manifold, in one of two places, the method's choice:
 *                     in the step (RKSTAB, seed 004 eqs. 4.10-4.13): every attempt is projected
 *                       before its error test, x_new = p(x~), the next stage f(t + h, x_new) is
 *                       taken at the projected point and the correction x_new - x~ counts as error;
 *                     after the step (DOP853, Radau): only an attempt that passed the error test is
 *                       projected; DOP853 adds the correction's norm to its error (and tests again),
 *                       Radau does not (its estimate is that of the collocation step).
 *   statistics      nfev, naccept, nreject, nproj of the stepper (a method adds its own).
 *   stiffness       Hairer's estimate h |lambda| ~ h |f(t+h, x_new) - f(t+h, x_s)| / |x_new - x_s|
 *                   (x_s the argument of the last stage, also at t + h) of every accepted explicit
 *                   step, and the count of stability-limited steps (stiff_*).
 *   singular        positions of a mechanism (seed 003, rkstab.py weak): the formulation's hook weak
 *                   removes from a projection's correction its share along weak constraint
 *                   directions and returns a regularity ratio rho of x_new that vanishes linearly
 *                   at the singular position; the driver tracks rho of the accepted states and
 *                   extrapolates the singular time t* (mbs_singular), then either places the steps
 *                   so that t* falls 0.55 into one, between the stages (RKSTAB), or hands the
 *                   crossing of t* to a companion method up to the mirror point 2 t* - t (DOP853
 *                   crosses with RKSTAB).
 *
 * No dynamic allocation, no global state, no output: all state lives in the structs and in the
 * caller's work arrays; independent steppers may run concurrently.
 */
#ifndef MBS_STEPPER_H
#define MBS_STEPPER_H

#include "mbs_step_constants.h" /* generated from mbsfmu/core/constants.py */

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- the problem */

/* Right-hand side x' = f(t, x): write xdot[0..n-1]; return 0 on success, nonzero on failure (for
 * example a singular mass matrix). x must not be modified. */
typedef int (*mbs_rhs_fn)(void *ctx, double t, const double *x, double *xdot);

/* Projection onto the invariant manifold, in place; return 0 on success, nonzero on failure. */
typedef int (*mbs_project_fn)(void *ctx, double t, double *x);

/* Singular positions (rkstab.py, weak): remove in place from the projection's correction
 * d = x_new - x~ (n values) its share that is rounding along weak constraint directions, and
 * return a regularity ratio of x_new in [0, 1] that vanishes linearly at a singular position. */
typedef double (*mbs_weak_fn)(void *ctx, double t, const double *x, double *d);

/* Jacobian J = df/dx (n x n, row-major: J[i * n + j] = d f_i / d x_j) at (t, x), where
 * fx = f(t, x) is given; return 0 on success, nonzero on failure (used by Radau; NULL: forward
 * differences). */
typedef int (*mbs_jac_fn)(void *ctx, double t, const double *x, const double *fx, double *J);

struct mbs_stepper;
struct mbs_step_method;

/* Called after every accepted step (the state, and the continuous extension of the step through
 * the method's interpolate, are the step's); nonzero stops the call with MBS_STEP_ERHS. */
typedef int (*mbs_step_hook)(void *ctx, struct mbs_stepper *s, const struct mbs_step_method *m);

/* What a call integrates: f, optionally its Jacobian, optionally the projection (NULL: none),
 * the context handed to each, and optionally a hook after each accepted step. */
typedef struct {
    mbs_rhs_fn f;
    mbs_jac_fn jac;
    mbs_project_fn project;
    void *ctx;
    mbs_step_hook accepted;
} mbs_problem;

/* ---------------------------------------------------------------- stop reasons */

#define MBS_STEP_OK 0
#define MBS_STEP_EARG (-1)       /* invalid argument (n < 1, NULL work, bad tolerance, t_end < t, ...) */
#define MBS_STEP_EUNDERFLOW (-2) /* step size fell below the minimum after error-test failures */
#define MBS_STEP_ETOOMANY (-3)   /* more than max_steps attempted steps in one call */
#define MBS_STEP_ERHS (-4)       /* the right-hand side (or the Jacobian) returned nonzero */
#define MBS_STEP_EPROJECT (-5)   /* the projection returned nonzero */
#define MBS_STEP_ENONFINITE (-6) /* non-finite x or f(t, x) at the start of a call, or step size
                                    underflow after steps that produced non-finite values */
#define MBS_STEP_EHMAX (-7)      /* hmax is below the smallest step the call can take (hmin) */
#define MBS_STEP_ESINGULAR (-8)  /* Radau: the iteration matrix stayed singular while h was halved 5 times */
#define MBS_STEP_ENEWTON (-9)    /* Radau: step size underflow after the Newton iteration diverged */
#define MBS_STEP_ECOLLAPSE (-10) /* MBS_STEP_COLLAPSE_STEPS accepted steps in a row shorter than
                                    MBS_STEP_COLLAPSE_RATIO of the call's horizon (the stop time where
                                    it is finite, else t_end, minus the start of the call): such a run
                                    could not finish in 1e12 steps; it is typically creeping towards a
                                    point where the solution is not smooth.  The reference steppers
                                    apply the same rule (mbsfmu/reference/integrators/stepper.py) */

/* Static text for a return code. */
const char *mbs_step_message(int code);

/* ---------------------------------------------------------------- the stepper */

/* The regularity ratios of the accepted states near singular positions: the hook, rho of the
 * last two accepted states (rho at t_rho, rho_prev at t_rho_prev, HUGE_VAL: none; valid once the
 * start's is known) and rho_new, the ratio of the state the current attempt ends in. */
typedef struct {
    mbs_weak_fn weak; /* NULL (init) or the hook, set after init */
    int valid;
    double rho, t_rho, rho_prev, t_rho_prev, rho_new;
} mbs_singular;

/* What every method's state holds (a method's struct begins with it). */
typedef struct mbs_stepper {
    int n;            /* number of states */
    double rtol;      /* relative tolerance (> 0) */
    double atol;      /* absolute tolerance (>= 0; init with atol < 0 selects rtol / 10) */
    double h;         /* proposed size of the next step; <= 0: the starting step on the next call
                         (set by init; the caller may set a first step) */
    double hmax;      /* upper bound of the step size (init with hmax <= 0 or inf: unlimited) */
    double hmin;      /* lower bound of the step size; 0 (default): the method's rule (mbs_step_method) */
    double beta;      /* the explicit methods' Lund stabilization (init: the method's; 0: plain I controller) */
    double errold;    /* previous accepted error norm of the PI controller (starts at 1e-4) */
    int reject_last;  /* 1 when the last attempted step was rejected */
    long nfev;        /* evaluations of the right-hand side (cumulative over calls) */
    long naccept;     /* accepted steps */
    long nreject;     /* rejected and broken attempts */
    long nproj;       /* calls of the projection */
    double hrho;      /* stiffness estimate of the last accepted step (explicit methods) */
    double stiff_hrho;/* threshold of hrho for stiff_run (0: not counted), e.g. 80 % of the method's
                         stability boundary on the negative real axis */
    int stiff_run;    /* accepted steps with hrho > stiff_hrho, limited by stability, not separated
                         by stiff_gap steps below it in a row (mbs_step_stiff_count) */
    int stiff_gap;    /* steps below stiff_hrho in a row that restart stiff_run (0 or 1: each one) */
    int stiff_below;  /* steps below stiff_hrho in a row now */
    double hrho_stiff, h_stiff; /* hrho and h of the last step above stiff_hrho */
    double *work;     /* caller-provided, the method's WORK_SIZE(n) doubles; row 0 (n doubles) is the
                         internal state x */
    int valid;        /* 1 when work holds x (at t) and f(t, x) */
    double t;         /* time of the internal state */
    int dense_valid;  /* 1 when work holds the continuous extension of the step [t_prev, t_prev + h_dense] */
    double t_prev, h_dense;
    mbs_singular sing;/* sing.weak: NULL (init) or the formulation's hook, set after init */
    int crossing;     /* 1 while the method's companion crosses a singular position, up to t_exit */
    double t_exit;
    long ncross;      /* singular positions crossed by the companion (its work is in the counters) */
    int nerr;         /* the error norms measure the first nerr states (0, as init sets it: all n);
                         e.g. a state without the sensitivities integrated with it */
} mbs_stepper;

/* The number of states the error norms of s measure (nerr, or all n). */
static inline int mbs_step_nerr(const mbs_stepper *s)
{
    return s->nerr > 0 && s->nerr < s->n ? s->nerr : s->n;
}

/* ---------------------------------------------------------------- what a method provides */

typedef struct mbs_step_method mbs_step_method;

/* One attempt's outcome (mbs_step_method.attempt). */
enum { MBS_TRY_PASSED, MBS_TRY_REJECTED, MBS_TRY_BROKEN };
typedef struct {
    int outcome;     /* PASSED: accept; REJECTED: the error test failed (or Radau's Newton iteration
                        would converge too slowly), the controller chooses the retry; BROKEN: the
                        attempt could not be completed, retry with h nonfinite_shrink */
    double err;      /* scaled error norm (PASSED: <= 1) */
    int cause;       /* BROKEN: what a step below hmin then means (MBS_STEP_ENONFINITE, ERHS, ENEWTON,
                        or EUNDERFLOW) */
    int iterations;  /* Radau: Newton iterations of the attempt */
    double h_retry;  /* Radau: the step its Newton iteration suggests (REJECTED with err = 0) */
} mbs_try;

/* An explicit Runge-Kutta pair: s stages make a step from (t, x) with k_1 = f(t, x) known,
 *   k_i = f(t + c_i h, x + h sum_{j<i} a_ij k_j),  i = 2..s  (c_i = 1 is evaluated at t + h exactly),
 *   x~ = x + h sum_{j<=s} b_j k_j,
 * and k_{s+1} = f(t + h, x_new) at the (projected) end point, the next step's k_1.  Rows of the
 * work array (n doubles each): x, x_new, x~, the stage argument (after a step: that of stage s),
 * the projection's correction d, k_1 .. k_{s+1}, then the method's own rows. */
enum { MBS_RK_X, MBS_RK_XN, MBS_RK_XT, MBS_RK_ARG, MBS_RK_D, MBS_RK_K1 };
#define MBS_RK_K(j) (MBS_RK_K1 + (j) - 1)
typedef struct {
    int stages;           /* s */
    const double *c;      /* c[i], i = 1..s */
    const double *a;      /* a_ij = a[i * stride + j] */
    int stride;
    const double *b;      /* b[j], j = 1..s */
    int sparse;           /* 1: combinations skip the zero coefficients (DOP853); 0: every term is
                             added (DOPRI5 adds 0 k_2 to x~, so a non-finite k_2 rejects the step) */
    int project_in_step;  /* 1: RKSTAB's projection before the error test; 0: after it */
    /* The scaled error norm of the attempt (rows as above; k_{s+1} is known where project_in_step):
     * in the step, d is the projection's correction (NULL without projection); after the step,
     * d is NULL and the correction is added by the driver. */
    double (*error)(const mbs_stepper *s, double h, const double *d);
} mbs_rk_tableau;

/* The PI controller of the explicit methods (Hairer's DOPRI5 and DOP853 with Lund's stabilization):
 * after an accepted step of size h with error err
 *   fac = err^(1/order - beta_weight beta) / errold^beta / safety within [1/facmax, 1/facmin],
 *   h_new = h / fac (never above hmax, no growth right after a rejection, errold = max(err, 1e-4));
 * after a rejected one h_new = h / min(1/facmin, err^(1/order - beta_weight beta) / safety). */
typedef struct {
    int order;
    double safety, facmin, facmax, beta, beta_weight;
} mbs_step_control;

/* What to do near a singular position (the explicit methods, with projection and the hook). */
enum { MBS_SING_NONE, MBS_SING_PLACE, MBS_SING_CROSS };
typedef struct {
    int mode;             /* PLACE: place the steps (RKSTAB); CROSS: the companion crosses (DOP853) */
    double watch, reach;  /* once rho < watch and falling, and t* within reach proposed steps */
    double theta;         /* PLACE: h = D / (j + theta), the smallest j >= 0 with h <= the proposal */
    const mbs_step_method *companion;                /* CROSS: the method that crosses ... */
    mbs_stepper *(*companion_of)(mbs_stepper *s);    /* ... and its stepper (its work re-pointed) */
} mbs_singular_rule;

struct mbs_step_method {
    const char *name;
    int row_f, row_xn, row_fn;  /* work rows of f(t, x), x_new and f(t + h, x_new) (x is row 0): an
                                   accepted step moves x_new and f(t + h, x_new) to x and f(t, x) */
    /* the step size */
    int start_order;            /* > 0: Hairer's starting step for an error O(h^start_order) (scratch:
                                   the explicit rows ARG, XN, K2); 0: max(first_step, 100 hmin) */
    double first_step;
    double hmin_span;           /* hmin = 1e-14 min(span, hmin_span) of a call, at least 10 ulp of ... */
    int hmin_each_step;         /* 0: the larger of |t| and |t_end| of the call; 1: each step's start */
    double nonfinite_shrink;    /* h factor of the retry after a broken attempt */
    const mbs_step_control *control; /* the explicit methods' PI controller (NULL for Radau) */
    /* what counts as finite: the sum of squares (explicit methods: also catches its overflow in the
       error norm), or each value (Radau) */
    int (*finite)(const double *v, int n);
    int rhs_failure_rejects;    /* 1: f failing inside a step breaks the attempt (Radau halves h);
                                   0: it ends the call (MBS_STEP_ERHS) */
    mbs_singular_rule singular;
    const mbs_rk_tableau *tableau; /* explicit methods (NULL for Radau) */
    /* hooks (NULL: nothing to do) */
    void (*restart)(mbs_stepper *s);   /* forget the method's own state: a new start (reset, init) */
    void (*begin)(mbs_stepper *s);     /* set up a call (tolerances that depend on rtol, ...) */
    /* One attempted step of size h from (t, x) to t_new = t + h (exactly t_stop where clipped):
     * fill *a and return MBS_STEP_OK, or a failure that ends the call. */
    int (*attempt)(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double t, double h,
                   double t_new, mbs_try *a);
    /* After a passed attempt of size h from t (the proposal was h_prop; clipped: cut to end at
     * t_stop): the continuous extension of the step and the next step's size (before the singular
     * placement).  Called before x_new moves to x. */
    double (*accepted)(mbs_stepper *s, const mbs_step_method *m, const mbs_try *a, double t, double h,
                       double t_new, double h_prop, int clipped, double t_end);
    /* After a rejected or broken attempt of size h: the size of the retry. */
    double (*rejected)(mbs_stepper *s, const mbs_step_method *m, const mbs_try *a, double h);
    /* Hairer's stiffness estimate of the accepted step h (NULL: none) */
    double (*hrho)(const mbs_stepper *s, const mbs_step_method *m, double h);
    /* The state at t inside the last accepted step [t_prev, t_prev + h_dense] (dense_valid). */
    int (*interpolate)(mbs_stepper *s, const mbs_problem *pb, double t, double *xout);
};

/* ---------------------------------------------------------------- the driver */

/* Initialise the stepper part of a method's state (the caller zeroes the rest first); counters
 * zeroed, no internal state, controller history fresh, beta the method's.  Returns MBS_STEP_OK or
 * MBS_STEP_EARG (n < 1, NULL work, rtol not > 0 or not finite, atol or hmax NaN, atol infinite). */
int mbs_stepper_init(mbs_stepper *s, const mbs_step_method *m, int n, double *work, double rtol, double atol,
                     double hmax);

/* Dense mode (for co-simulation): if the internal state is not valid (first call, after
 * mbs_stepper_reset) it starts from (t0, x0); otherwise t0 and x0 are ignored and the internal
 * state continues.  Steps are taken while the internal time is before t_target and never pass
 * t_stop (t_stop < t_target counts as t_target; INFINITY: no limit).  xout receives the state at
 * t_target: the internal (projected) state if a step ends there, otherwise the method's continuous
 * extension of the step containing it (not projected: the caller projects interpolated states).
 * Forward only: t_target must not lie before t0 nor before the start of the last step
 * (MBS_STEP_EARG).  max_steps bounds the attempted steps of this call (<= 0: no limit).  On failure
 * the internal state is the last accepted one and xout is not written. */
int mbs_stepper_advance_dense(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double t0,
                              const double *x0, double t_target, double t_stop, long max_steps, double *xout);

/* Integrate from *t to exactly t_end (forward only; t_end == *t returns at once).  On return *t
 * and x hold the last accepted state: t_end and the solution on success.  The last step is
 * shortened (or stretched by at most 1 %) to end exactly at t_end; the step-size proposal is not
 * reduced by it, so that consecutive calls take the steps of an uninterrupted run.  The internal
 * state continues when *t and x equal (bitwise) the state the previous call returned; otherwise
 * the stepper restarts from (*t, x) (mbs_stepper_reset). */
int mbs_stepper_advance(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double *t, double *x,
                        double t_end, long max_steps);

/* Forget the internal state (after x, inputs or parameters changed between calls); the step-size
 * proposal, the controller's PI history and the counters are kept. */
void mbs_stepper_reset(mbs_stepper *s, const mbs_step_method *m);

/* The last accepted internal state (n doubles) and its time *t: the stepper's, or during a
 * crossing its companion's. */
const double *mbs_stepper_state(mbs_stepper *s, const mbs_step_method *m, double *t);

/* 0 if the plain-data fields of a restored stepper of n states are possible (flags 0 or 1, n, a
 * finite time), else 1. */
int mbs_stepper_check(const mbs_stepper *s, int n);

/* ---------------------------------------------------------------- for the methods */

/* 1 if the sum of squares of v[0..n) is finite (no NaN, no infinity, no overflow), else 0 */
int mbs_step_finite_sumsq(const double *v, int n);
/* 1 if every v[i] is finite, else 0 */
int mbs_step_finite_each(const double *v, int n);
/* The distance from a to the next larger double. */
double mbs_step_spacing(double a);

/* Row k (n doubles) of a stepper's work array. */
#define MBS_ROW(s, k) ((s)->work + (size_t)(k) * (size_t)(s)->n)

/* The projection after the step (DOP853, Radau) of an attempt whose error a->err passed the
 * test: x_new (row row_xn, x~ on entry) = p(t_new, x~); where xt (x~) is given the correction
 * counts, err = sqrt(err^2 + rms((x_new - x~) / sc)^2) with sc = atol + rtol max(|x|, |x~|), and
 * the hook's regularity of x_new is taken (d: n doubles of scratch); then, if err still passes,
 * f(t_new, x_new) into row row_fn.  Sets a->outcome (and a->cause); returns MBS_STEP_OK or a
 * failure that ends the call. */
int mbs_step_project_after(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double t_new,
                           const double *xt, double *d, mbs_try *a);

/* The explicit methods: the attempt from the tableau (stages, x~, projection, error, k_{s+1}),
 * the PI controller after a passed and after a failed attempt, Hairer's stiffness estimate. */
int mbs_rk_attempt(mbs_stepper *s, const mbs_step_method *m, const mbs_problem *pb, double t, double h,
                   double t_new, mbs_try *a);
double mbs_rk_pi_accepted(mbs_stepper *s, const mbs_step_control *c, double err, double h, double h_prop,
                          int clipped);
double mbs_rk_rejected(mbs_stepper *s, const mbs_step_method *m, const mbs_try *a, double h);
double mbs_rk_hrho(const mbs_stepper *s, const mbs_step_method *m, double h);
/* out = base + h sum_{j=1..jmax} coef[j] k_j (base NULL: 0), each component summed from the left,
 * the terms in the order of j (sparse: skipping zero coefficients); K[j] is the row of k_j, out
 * none of them nor base.  Returns the sum of squares of out, summed as mbs_step_finite_sumsq sums
 * (finite exactly when that calls out finite). */
double mbs_rk_combine(double *out, const double *base, double h, const double *coef, int jmax,
                      const double *const *K, int n, int sparse);

/* The count of stability-limited steps (hrho above threshold; threshold 0: none are counted)
 * after one more accepted step: a step above adds one; steps below the threshold restart the
 * count once there are gap of them in a row (gap <= 1: every one), so that a single low value
 * of the noisy estimate between stability-limited steps does not hide a stiff run.  *below
 * counts the steps below the threshold in a row. */
int mbs_step_stiff_count(int run, int *below, double hrho, double threshold, int gap);

#ifdef __cplusplus
}
#endif

#endif /* MBS_STEPPER_H */
