/*
 * mbs_rkstab.h -- RKSTAB: Dormand-Prince 5(4) with post-stabilization inside the step (C99).
 *
 * C port of mbsfmu/reference/integrators/rkstab.py (same tableau, error norm, step-size controller, starting
 * step heuristic and rejection rules, so both take the same step sequence for the same problem).
 *
 * One attempted step of size h from (t, x) with k1 = f(t, x) known (FSAL):
 *   k2..k6 as in DOPRI5, x~ = x + h sum b_j k_j (5th order),
 *   x_new = project(t + h, x~)            (x_new = x~ when project == NULL),
 *   k7 = f(t + h, x_new)                  (FSAL: k1 of the next step),
 *   err = (x_new - x~) + h sum_{j=1..7} (b_j - b^_j) k_j,
 *   ||err|| = sqrt(1/n sum (err_i / sc_i)^2), sc_i = atol + rtol max(|x_i|, |x_new,i|) <= 1: accept.
 * Controller (Hairer's DOPRI5): safety 0.9, step ratio in [0.2, 10], PI with beta = 0.04 using the
 * previous accepted error (field errold), no increase right after a rejection. A stage argument,
 * x~ or error norm that is not finite rejects the step and shrinks h by 0.2.
 *
 * Usage:
 *   double work[MBS_RKSTAB_WORK_SIZE(n)];
 *   mbs_rkstab s;
 *   mbs_rkstab_init(&s, n, work, rtol, atol, hmax);    (optionally set s.hmin afterwards)
 *   for each communication step: rc = mbs_rkstab_advance(&s, f, p, ctx, &t, x, t_end, max_steps);
 *
 * No dynamic allocation, no global state, no output: all state lives in the struct and the
 * caller-provided work array; independent instances may be used concurrently.
 */
#ifndef MBS_RKSTAB_H
#define MBS_RKSTAB_H

#ifdef __cplusplus
extern "C" {
#endif

/* Right-hand side x' = f(t, x): write xdot[0..n-1]; return 0 on success, nonzero on failure (for
 * example a singular mass matrix). x must not be modified. */
typedef int (*mbs_rhs_fn)(void *ctx, double t, const double *x, double *xdot);

/* Projection onto the invariant manifold, in place; return 0 on success, nonzero on failure.
 * May be NULL (plain DOPRI5). */
typedef int (*mbs_project_fn)(void *ctx, double t, double *x);

/* Optional hook for singular positions (rkstab.py, weak): remove in place from the projection's
 * correction d = x_new - x~ (n values) its share that is rounding along weak constraint directions,
 * and return a regularity ratio of x_new in [0, 1] that vanishes linearly at a singular position. */
typedef double (*mbs_weak_fn)(void *ctx, double t, const double *x, double *d);

/* The regularity ratios of the accepted states near singular positions (rkstab.py, weak; the
 * functions are in mbs_rk_shared.h), which RKSTAB and DOP853 share: the hook, rho of the last two
 * accepted states (rho at t_rho, rho_prev at t_rho_prev, HUGE_VAL: none; valid once the start's is
 * known) and rho_new, the ratio of the state the current attempt ends in. */
typedef struct {
    mbs_weak_fn weak; /* NULL (init) or the hook, set after init */
    int valid;
    double rho, t_rho, rho_prev, t_rho_prev, rho_new;
} mbs_rk_singular;

/* Return codes. */
#define MBS_RKSTAB_OK 0
#define MBS_RKSTAB_EARG (-1)       /* invalid argument (n < 1, NULL work, bad tolerance, t_end < t, ...) */
#define MBS_RKSTAB_EUNDERFLOW (-2) /* step size fell below the minimum after error-test failures */
#define MBS_RKSTAB_ETOOMANY (-3)   /* more than max_steps attempted steps in one advance call */
#define MBS_RKSTAB_ERHS (-4)       /* the right-hand side returned nonzero */
#define MBS_RKSTAB_EPROJECT (-5)   /* the projection returned nonzero */
#define MBS_RKSTAB_ENONFINITE (-6) /* non-finite x or f(t, x) at the start of a call, or step size
                                      underflow after steps that produced non-finite values */
#define MBS_RKSTAB_EHMAX (-7)      /* hmax is below the smallest step the call can take (hmin) */
#define MBS_RKSTAB_ECOLLAPSE (-10) /* MBS_RK_COLLAPSE_STEPS accepted steps in a row shorter than
                                      MBS_RK_COLLAPSE_RATIO of the call's horizon (mbs_rk_shared.h) */

/* Size (number of doubles) of the work array for n states. */
#define MBS_RKSTAB_WORK_SIZE(n) (16 * (n))

typedef struct {
    int n;            /* number of states */
    double rtol;      /* relative tolerance (> 0) */
    double atol;      /* absolute tolerance (>= 0; init with atol < 0 selects rtol / 10) */
    double h;         /* proposed size of the next step; <= 0: Hairer's starting-step heuristic on the
                         next advance call (set by init; the caller may set a first step) */
    double hmax;      /* upper bound of the step size (init with hmax <= 0 or inf: unlimited) */
    double hmin;      /* lower bound of the step size; 0 (default): 1e-14 * (t_end - t) of each call.
                         Never below 10 ulp(max(|t|, |t_end|)) either. */
    double errold;    /* previous accepted error norm for the PI controller (starts at 1e-4) */
    int reject_last;  /* 1 when the last attempted step was rejected */
    long nfev;        /* evaluations of the right-hand side (cumulative over calls) */
    long naccept;     /* accepted steps */
    long nreject;     /* rejected steps (error test or non-finite values) */
    long nproj;       /* calls of the projection (one per attempted step that reached it) */
    double hrho;      /* Hairer's stiffness estimate h |f(t+h, x_new) - f(t+h, x_6)| / |x_new - x_6| of
                         the last accepted step (approximates h |lambda| of the dominant eigenvalue) */
    double stiff_hrho;/* threshold of hrho for stiff_run (0: not counted); e.g. 80 % of DOPRI5's
                         stability boundary 3.3 on the negative real axis */
    int stiff_run;    /* accepted steps with hrho > stiff_hrho, limited by stability, not separated
                         by stiff_gap steps below it in a row (mbs_rk_stiff_count) */
    int stiff_gap;    /* steps below stiff_hrho in a row that restart stiff_run (0 or 1: each one) */
    int stiff_below;  /* steps below stiff_hrho in a row now */
    double hrho_stiff, h_stiff; /* hrho and h of the last step above stiff_hrho */
    double *work;     /* caller-provided, MBS_RKSTAB_WORK_SIZE(n) doubles: x, k1..k7, two scratch rows,
                         the five rows r1..r5 of the continuous extension of the last step, the
                         stage-6 argument */
    int fsal_valid;   /* 1 when work holds (t_fsal, x, k1 = f(t_fsal, x)) from the previous call */
    double t_fsal;    /* time of the stored FSAL state */
    int dense_valid;  /* 1 when r1..r5 describe the last accepted step [t_prev, t_prev + h_dense] */
    double t_prev, h_dense;
    mbs_rk_singular sing; /* sing.weak: NULL (init) or the hook for singular positions, set after
                         init: the projection's correction is filtered by it, and when the ratio it
                         returns falls below 0.1 the steps are placed so that the singular time
                         predicted by linear extrapolation falls 0.55 into a step (rkstab.py) */
} mbs_rkstab;

/* Initialise s; returns MBS_RKSTAB_OK or MBS_RKSTAB_EARG. Counters are zeroed. */
int mbs_rkstab_init(mbs_rkstab *s, int n, double *work, double rtol, double atol, double hmax);

/* Integrate from *t to exactly t_end (forward only; t_end == *t returns at once). On return *t and
 * x hold the last accepted state: t_end and the solution on success; on failure the state where the
 * integration stopped. The last step is shortened (or stretched by at most 1 %) to end exactly at
 * t_end; the step size proposal in s->h is kept for the next call and is not reduced by that
 * shortened step, so consecutive calls continue with the step sizes of an uninterrupted run.
 * k1 = f(t, x) is reused from the previous call when *t and x equal (bitwise) the state it returned
 * and mbs_rkstab_reset_fsal has not been called; otherwise it is re-evaluated.
 * max_steps bounds the number of attempted steps in this call (<= 0: no limit).
 * Returns MBS_RKSTAB_OK or one of the negative codes above. */
int mbs_rkstab_advance(mbs_rkstab *s, mbs_rhs_fn f, mbs_project_fn p, void *ctx, double *t, double *x,
                       double t_end, long max_steps);

/* Dense mode (for co-simulation): the integrator keeps its own state (work[0..n), time t_fsal) and
 * takes the steps its error control allows, past communication points; the state at t_target is
 * the continuous extension of the step that contains it (Hairer's CONTD5, 4th order):
 *   z(t) = r1 + th (r2 + (1 - th) (r3 + th (r4 + (1 - th) r5))),  th = (t - t_prev) / h.
 * If the internal state is not valid (first call, or after mbs_rkstab_reset_fsal) it starts from
 * (t0, x0); otherwise t0 and x0 are ignored and the internal state continues.  Steps never pass
 * t_stop (>= t_target; INFINITY: no limit): t_stop = t_target gives the behaviour of
 * mbs_rkstab_advance.  xout receives the state at t_target (not projected).  Forward only:
 * t_target must not lie before the start of the last step. */
int mbs_rkstab_advance_dense(mbs_rkstab *s, mbs_rhs_fn f, mbs_project_fn p, void *ctx, double t0,
                             const double *x0, double t_target, double t_stop, long max_steps,
                             double *xout);

/* Forget the stored k1 (call after changing x or inputs that enter f between calls). */
void mbs_rkstab_reset_fsal(mbs_rkstab *s);

/* Static text for a return code. */
const char *mbs_rkstab_message(int code);

#ifdef __cplusplus
}
#endif

#endif /* MBS_RKSTAB_H */
