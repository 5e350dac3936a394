/*
 * mbs_formulation.h -- the constrained formulations of mbsfmu in C (the engine).
 *
 * The engine's implementation of the Python classes in mbsfmu/reference/formulations/, which stay its readable reference
 * (tests compare both).  The state is x = [y, y'] (f coordinates and their rates); the model's
 * generated functions provide M, q - k, c, C, b', b'' and the extra initial conditions e(y),
 * E = de/dy.  Equation numbers refer to seed 000 unless marked 3.xx (seed 004).
 *
 * Nonholonomic constraints A(y, t) y' + a(y, t) = 0 are rows of C (A), b' (a) and b'' (A' y' + a')
 * after the mh holonomic ones, without a row in c: G = [C_h; A] is m x f, c has mh rows.  Every
 * velocity- and acceleration-level step below uses all m rows; the position level (Baumgarte's
 * beta^2 c, the Gauss-Newton and PStab position corrections, the consistent positions) the mh
 * holonomic rows only, so a purely nonholonomic system (mh = 0) is projected on the velocity
 * level alone (seed 004 eq. 3.75).  MBS_FORM_PARTITION needs mh == m.
 * The kind numbers MBS_FORM_* are generated from mbsfmu.core.constants.FORMULATION_KINDS (mbs_kinds.h).
 *
 *  MBS_FORM_MINIMAL    trees (m = 0):  M y'' = q - k, Cholesky                                (eq. 1)
 *  MBS_FORM_QR         optimal partitioning: an orthonormal null-space basis J of C and the
 *  MBS_FORM_SVD        minimum-norm solutions theta = -C^+ b', gamma = -C^+ b'' from the pivoted
 *                      QR of C^T = [Q1 Q2] [R; 0] P^T (J = Q2, eq. 20) or from its SVD
 *                      C^T = [U1 U2] [S; 0] V^T (J = U2, eq. 25):
 *                        y'  = J J^T (y' - theta) + theta                                      (eq. 30)
 *                        y'' = J (J^T M J)^-1 J^T (q - k - M gamma) + gamma                    (eq. 31,
 *                      with the sign of eq. 29; the printed eq. 31 has the bracket's sign flipped)
 *                      and the projection after each step: Gauss-Newton y <- y - C^+ c until
 *                      max|c| <= newton_tol, then y' <- y' - C^+ (C y' + b').  The rank is decided
 *                      with rank_tol relative to |R_00| or s_0: redundant constraints are harmless.
 *  MBS_FORM_BAUMGARTE  [M C^T; C 0] [y''; -lambda] = [q - k; -(b'' + 2 alpha (C y' + b') + beta^2 c)]
 *                      (beta^2 c in the holonomic rows only)
 *  MBS_FORM_DAE        (seed 004 sec. 2); alpha = beta = 0 is the plain index-1 DAE (eqs. 8-9)
 *  MBS_FORM_PROJECTION the index-1 DAE and after each step PStab (3.66, 3.68):
 *                        F = W (C W)^-1,  W = M^-1 C^T (weighting 0) or C^T (1, eq. 3.69)
 *                        y <- y - F_h c(y)  `iterations` times (fewer once max |c| <= newton_tol),
 *                        F_h = W_h (C_h W_h)^-1 of the holonomic rows, kept from the first,
 *                        y' <- y' - F (C y' + b')  with C, b' at the corrected y
 *  MBS_FORM_PARTITION  coordinate partitioning (eqs. 11-18): with C = [C_i C_d],
 *                        y'_d = -C_d^-1 (C_i y'_i + b'),  J_i = [I; -C_d^-1 C_i],
 *                        gamma = [0; -C_d^-1 b''],  (J_i^T M J_i) y''_i = J_i^T (q - k - M gamma)
 *                      and after each step Newton on c(y_i, y_d) = 0 for y_d, y'_d by eq. 13.
 *                      The dependent coordinates are the pivot columns of the column-pivoted QR of
 *                      C, chosen at the first evaluation unless given, and chosen again whenever
 *                      cond_2(C_d) > cond_max (the choice is part of the state: form->part).
 *
 * Lagrange multipliers, one algorithm for every formulation (mbs_form_multipliers; the Python
 * reference is Formulation.multipliers): y'' of eq. 8 by the null-space form of eq. 31 at the
 * given state (defined also for redundant constraints), then lambda = the minimum-norm solution
 * of C^T lambda = M y'' - (q - k) (eq. 3).
 *
 * mbs_form_rhs / mbs_form_project have the signatures of mbs_rhs_fn / mbs_project_fn of
 * mbs_rkstab.h with ctx = the mbs_form.  No dynamic allocation: the caller provides
 * MBS_FORM_WORK_SIZE doubles and MBS_FORM_IWORK_SIZE ints.  On failure the functions return
 * nonzero and leave a one-line explanation in form->message.
 */
#ifndef MBS_FORMULATION_H
#define MBS_FORMULATION_H

#include <stddef.h>

#include "mbs_kinds.h" /* MBS_FORM_<NAME>, generated from mbsfmu/core/constants.py (FORMULATION_KINDS) */

#ifdef __cplusplus
extern "C" {
#endif

/* Generated model functions: out = the quantity group at (t, y, y', prm, u, tp). */
typedef void (*mbs_eq_fn)(double t, const double *y, const double *yd, const double *prm,
                          const double *u, const double *tp, double *out);
/* Generated time-parameter values (p, p', p'' per time parameter) at t. */
typedef void (*mbs_tp_fn)(double t, const double *prm, double *tp);


#define MBS_FORM_WORK_SIZE(f, m, nic)                                                           \
    (6 * (f) * (f) + 6 * (f) * ((m) + (nic)) + 3 * ((m) + (nic)) * ((m) + (nic)) + 16 * (f) +  \
     16 * ((m) + (nic)) + 32)
#define MBS_FORM_IWORK_SIZE(f, m, nic) (2 * (f) + 2 * ((m) + (nic)) + 8)
/* the partition state: valid flag, number of switches, per coordinate 1 if dependent */
#define MBS_FORM_PART_SIZE(f) ((f) + 2)

typedef struct {
    int f, m, nic, ntp;             /* sizes: coordinates, constraints, initial conditions, tp values */
    int mh;                         /* the first mh of the m constraints are holonomic (rows of c) */
    int kind;                       /* MBS_FORM_* */
    mbs_eq_fn dynamics;             /* M (f x f), q - k (f) */
    mbs_eq_fn constraints;          /* c (m), C (m x f), b' (m) */
    mbs_eq_fn positions;            /* c, C, b' (and what velocities reads), then */
    mbs_eq_fn velocities;           /* M, q - k, b'': the halves of mbs_constrained (mbs_model.h), */
    double *split;                  /* their buffer (MBS_NSPLIT doubles, owned by the caller), */
    double *split_y;                /* and the y (f doubles, owned by the caller) and t at which */
    double split_t;                 /* the position half in split was evaluated, */
    int split_valid;                /* if valid (cleared by mbs_form_forget) */
    mbs_eq_fn initial_conditions;   /* e (nic), E (nic x f) */
    mbs_tp_fn time_parameters;      /* may be NULL when ntp == 0 */
    const double *prm, *u;          /* parameter and input values (owned by the caller) */
    double *tp;                     /* ntp doubles (>= 1), scratch */
    double alpha, beta;             /* Baumgarte constants [1/s] */
    double rank_tol;                /* relative rank tolerance of the QR (1e-9) */
    double newton_tol;              /* absolute tolerance of the position projection (1e-13) */
    int newton_max;                 /* Gauss-Newton iterations of the projection (20) */
    int weighting;                  /* projection: 0 = M^-1 C^T (3.66), 1 = C^T (3.69) */
    int iterations;                 /* projection: position corrections per step (2, eq. 3.68) */
    double cond_max;                /* partition: largest cond_2(C_d) before a new choice (1e3) */
    int *part;                      /* partition: MBS_FORM_PART_SIZE(f) ints owned by the caller */
    double switch_t;                /* partition: time of the last choice */
    const char *const *names;       /* coordinate names for messages (may be NULL) */
    double *work;                   /* MBS_FORM_WORK_SIZE(f, m, nic) doubles */
    int *iwork;                     /* MBS_FORM_IWORK_SIZE(f, m, nic) ints */
    int rank;                       /* rank of C at the last QR */
    double pivot_scale;             /* largest pivot of the QR of C^T at the start (messages) */
    double weak_pivot;              /* qr, svd: pivots below this times the scale are weak
                                       constraint directions (mbs_form_weak; 0: none) */
    double *reached;                /* consistent initialization: f doubles that receive the
                                       positions Newton reached when they stay inconsistent (may
                                       be NULL; owned by the caller) */
    const unsigned char *ic_skip;   /* consistent initialization: initial conditions i with
                                       ic_skip[i] are left out (NULL: none; the caller clears their
                                       has_rate too) -- to find which ones conflict */
    long nproj;                     /* projections done */
    char message[512];              /* what went wrong in the last failing call */
} mbs_form;

/* Forget the position-level terms kept from the last evaluation (see positions_at in
 * mbs_formulation.c): to be called whenever parameters, inputs or the functions behind the
 * time parameters may have changed. */
void mbs_form_forget(mbs_form *F);

/* x' = F(t, x) of the chosen formulation; 0 on success. */
int mbs_form_rhs(void *ctx, double t, const double *x, double *xdot);

/* Projection of x after a step (QR, SVD, PROJECTION, PARTITION; a no-op returning 0 for the
 * other kinds); 0 on success. */
int mbs_form_project(void *ctx, double t, double *x);

/* The projection of x onto the constraints whatever the kind: the kind's own where it has one
 * (mbs_form_project), else that of QR (the least change of the positions by Newton, then of the
 * velocities); for a foreign integrator's state (Model Exchange).  0 on success. */
int mbs_form_project_state(mbs_form *F, double t, double *x);

/* 1 if the kind projects after each step. */
int mbs_form_projects(int kind);

/* Lagrange multipliers (m) at the state x (see above); 0 on success. */
int mbs_form_multipliers(mbs_form *F, double t, const double *x, double *lambda);

/* Their change dlambda (m) for a change dh (f) of q - k at the state x (b'' held); 0 on success. */
int mbs_form_multipliers_dh(mbs_form *F, double t, const double *x, const double *dh, double *dlambda);

/* The sensitivity equations' linear systems at the state x, one factorization for all: for k <
 * nrhs, ydd_k and lambda_k of M ydd - C^T lambda = h_k, C ydd = -b_k (h, ydd: nrhs x f; b, lambda:
 * nrhs x m; lambda NULL: ydd alone) by the null-space form (minimum-norm, redundant rows
 * harmless); m = 0: M ydd = h_k.
 * With fill != NULL the state's own y'' and lambda (h = q - k, b = b'') are solved first and
 * handed to fill(ctx, ydd0, lambda0, h, b), which writes the nrhs right-hand sides.  0 on success. */
typedef void (*mbs_kkt_fill)(void *ctx, const double *ydd0, const double *lambda0, double *h, double *b);
int mbs_form_kkt(mbs_form *F, double t, const double *x, int nrhs, mbs_kkt_fill fill, void *ctx,
                 double *h, double *b, double *ydd, double *lambda);

/* v (f) changed by the least amount in the entries idx[0..n-1] (NULL: all) so that G v = rhs
 * (nrow x f) holds as far as it can; returns max |G v - rhs| after, or -1 if the QR failed. */
/* The same for nrhs vectors v_k = v + k stride (all entries free) and right-hand sides rhs_k (rhs
 * + k nrow), with one factorization of G; returns the largest residual, or -1. */
double mbs_form_least_change_many(mbs_form *F, int nrow, const double *G, int nrhs, const double *rhs,
                                  double *v, int stride);
double mbs_form_least_change(mbs_form *F, int nrow, const double *G, const double *rhs,
                             const int *idx, int n, double *v);

/* For a failed run's message: 1 and a sentence in buf (time, pivot ratio, the row that is nearly
 * dependent on the others) if the column-pivoted QR of C^T at (t, y) has a pivot between low and
 * high times the larger of its largest pivot and the one recorded at the start (a singular
 * position; below low: an exactly redundant row), else 0 and "".  With record != 0 only records
 * the largest pivot at (t, y) as that scale (call it at the consistent start).  The Python
 * reference is Formulation.singularity_note; the thresholds are
 * mbsfmu.core.constants.SINGULAR_PIVOT. */
int mbs_form_singularity(mbs_form *F, double t, const double *y, int record, double low, double high,
                         const char *const *row_names, char *buf, size_t n);

/* RKSTAB's hook at singular positions (mbs_rkstab.weak; OptimalPartitioning.weak_directions): at
 * the projected state x the column-pivoted QR C^T P = Q R; the share of the projection's
 * correction d (2 f: positions, velocities; changed in place) along the columns Q_k whose pivot
 * (k < rank) lies below weak_pivot (MBS_SINGULAR_STEP_WEAK) times the larger of |R_00| and the pivot at the
 * start is removed (rounding of c amplified near a rank drop, not an error of the step).  Returns
 * the regularity ratio |R_(r-1)(r-1)| / that scale (1 without a pivot).  ctx is the mbs_form. */
double mbs_form_weak(void *ctx, double t, const double *x, double *d);

/* The constraint residual at the state x = [y, y']: max |c(t, y)|, and with nonholonomic rows the
 * larger of that and max |A y' + a| (0 for m = 0). */
double mbs_form_residual(mbs_form *F, double t, const double *x);

/* The constraint residuals at the state x = [y, y'] one level each: *position = max |c(t, y)| (the
 * mh holonomic rows, seed 000 eq. 5) and *velocity = max |C y' + b'| (all m rows, eq. 6; for the
 * nonholonomic ones A y' + a); both 0 for m = 0. */
void mbs_form_residuals(mbs_form *F, double t, const double *x, double *position, double *velocity);

/* The rank of C (all m rows) at (t, y) by the column-pivoted QR of C^T, counting the pivots above
 * rank_tol times the largest (seed 000 eq. 6: rank C < m means redundant constraints); the
 * absolute tolerance into *tol (may be NULL).  Also kept in F->rank. */
int mbs_form_rank(mbs_form *F, double t, const double *y, double *tol);

/* 1 if the kind takes redundant constraints (QR and SVD: their rank-revealing decomposition
 * constrains only rank C directions), else 0. */
int mbs_form_handles_redundant(int kind);

/*
 * Consistent initial state (seed 000 eqs. 5-6; consistent_initialization.py):
 *   positions:  g(y) = [c(t, y); e(y) - e0] = 0 (the holonomic rows) by Newton with minimum-norm
 *               steps and step halving, moving only coordinates j with fixed[j] == 0;
 *   velocities: [C; E_r] y' = [-b'; e0'] (all rows of C) for the rows r with has_rate[r], with the
 *               minimum change of the free rates: first of those without held_rates[j] (guesses;
 *               held_rates may be NULL), and only if the rows cannot hold that way of every one.
 * x (2f) holds the given values on entry and the consistent state on success.  On failure x is
 * unchanged, *bad_row is the worst violated row (< m: constraint row, the same index as in C;
 * else initial condition m + i; -1 for the velocity level), form->message explains and, where
 * the positions fail, form->reached (if set) receives where Newton ended.  The initial conditions
 * flagged in form->ic_skip (if set) are left out.
 * Returns 0 on success, 1 if the positions, 2 if the velocities cannot be made consistent.
 */
int mbs_form_consistent(mbs_form *F, double t, double *x, const unsigned char *fixed,
                        const unsigned char *held_rates, const double *e0, const double *rate,
                        const unsigned char *has_rate, double tol, int max_iter, int *bad_row);

#ifdef __cplusplus
}
#endif

#endif /* MBS_FORMULATION_H */
