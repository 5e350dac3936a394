/*
 * mbs_formulation.h -- the constrained formulations of mbsfmu in C (FMU runtime).
 *
 * C counterpart of mbsfmu/formulations/{minimal_ode,optimal_partitioning,baumgarte,dae}.py and
 * consistent_initialization.py.  The state is x = [y, y'] (f coordinates and their rates); the
 * model's generated functions (mbsfmu.codegen.c_source) provide M, q - k, c, C, b', b'' and the
 * extra initial conditions e(y), E = de/dy.  Equation numbers refer to seed 000.
 *
 *  MBS_FORM_ODE        trees (m = 0):     M y'' = q - k, Cholesky                            (eq. 1)
 *  MBS_FORM_QR         optimal partitioning by column-pivoted QR of C^T = [Q1 Q2] [R; 0] P^T,
 *                      J = Q2 (orthonormal null-space basis of C), theta = -C^+ b', gamma = -C^+ b'':
 *                        y'  = J J^T (y' - theta) + theta                                      (eq. 30)
 *                        y'' = J (J^T M J)^-1 J^T (q - k - M gamma) + gamma                    (eq. 31,
 *                      with the sign of eq. 29; the printed eq. 31 has the bracket's sign flipped)
 *                      and the projection after each step: Gauss-Newton y <- y - C^+ c until
 *                      max|c| <= newton_tol, then y' <- y' - C^+ (C y' + b').  Redundant
 *                      constraints are harmless (rank decided with rank_tol relative to |R_00|).
 *  MBS_FORM_BAUMGARTE  [M C^T; C 0] [y''; -lambda] = [q - k; -(b'' + 2 alpha (C y' + b') + beta^2 c)]
 *                      (seed 004 sec. 2; alpha = beta = 0 is the plain index-1 DAE, eq. 9)
 *
 * mbs_form_rhs / mbs_form_project have the signatures of mbs_rhs_fn / mbs_project_fn of
 * mbs_rkstab.h with ctx = the mbs_form.  No dynamic allocation: the caller provides
 * MBS_FORM_WORK_SIZE doubles and MBS_FORM_IWORK_SIZE ints.  On failure the functions return
 * nonzero and leave a one-line explanation in form->message.
 */
#ifndef MBS_FORMULATION_H
#define MBS_FORMULATION_H

#ifdef __cplusplus
extern "C" {
#endif

/* Generated model functions: out = the quantity group at (t, y, y', prm, u, tp). */
typedef void (*mbs_eq_fn)(double t, const double *y, const double *yd, const double *prm,
                          const double *u, const double *tp, double *out);
/* Generated time-parameter values (p, p', p'' per time parameter) at t. */
typedef void (*mbs_tp_fn)(double t, const double *prm, double *tp);

enum { MBS_FORM_ODE = 0, MBS_FORM_QR = 1, MBS_FORM_BAUMGARTE = 2 };

#define MBS_FORM_WORK_SIZE(f, m, nic)                                                           \
    (6 * (f) * (f) + 4 * (f) * ((m) + (nic)) + ((m) + (nic)) * ((m) + (nic)) + 12 * (f) +     \
     8 * ((m) + (nic)) + 16)
#define MBS_FORM_IWORK_SIZE(f, m, nic) ((f) + (m) + (nic) + 4)

typedef struct {
    int f, m, nic, ntp;             /* sizes: coordinates, constraints, initial conditions, tp values */
    int kind;                       /* MBS_FORM_ODE, MBS_FORM_QR or MBS_FORM_BAUMGARTE */
    mbs_eq_fn dynamics;             /* M (f x f), q - k (f) */
    mbs_eq_fn constraints;          /* c (m), C (m x f), b' (m) */
    mbs_eq_fn constrained;          /* M, q - k, c, C, b', b'' */
    mbs_eq_fn initial_conditions;   /* e (nic), E (nic x f) */
    mbs_tp_fn time_parameters;      /* may be NULL when ntp == 0 */
    const double *prm, *u;          /* parameter and input values (owned by the caller) */
    double *tp;                     /* ntp doubles (>= 1), scratch */
    double alpha, beta;             /* Baumgarte constants [1/s] */
    double rank_tol;                /* relative rank tolerance of the QR (1e-9) */
    double newton_tol;              /* absolute tolerance of the position projection (1e-13) */
    int newton_max;                 /* Gauss-Newton iterations of the projection (20) */
    double *work;                   /* MBS_FORM_WORK_SIZE(f, m, nic) doubles */
    int *iwork;                     /* MBS_FORM_IWORK_SIZE(f, m, nic) ints */
    int rank;                       /* rank of C at the last QR */
    long nproj;                     /* projections done */
    char message[256];              /* what went wrong in the last failing call */
} mbs_form;

/* x' = F(t, x) of the chosen formulation; 0 on success. */
int mbs_form_rhs(void *ctx, double t, const double *x, double *xdot);

/* Projection of x onto the position and velocity constraints (MBS_FORM_QR; a no-op returning 0
 * for the other kinds); 0 on success. */
int mbs_form_project(void *ctx, double t, double *x);

/* max |c(t, y)| (0 for m = 0). */
double mbs_form_residual(mbs_form *F, double t, const double *y);

/*
 * Consistent initial state (seed 000 eqs. 5-6; consistent_initialization.py):
 *   positions:  g(y) = [c(t, y); e(y) - e0] = 0 by Newton with minimum-norm steps and step
 *               halving, moving only coordinates j with fixed[j] == 0;
 *   velocities: [C; E_r] y' = [-b'; e0'] for the rows r with has_rate[r], with the minimum change
 *               of the free rates.
 * x (2f) holds the given values on entry and the consistent state on success.  On failure x is
 * unchanged, *bad_row is the index of the worst violated row of g (< m: constraint, else initial
 * condition m + i; -1 for the velocity level) and form->message explains.
 * Returns 0 on success, 1 if the positions, 2 if the velocities cannot be made consistent.
 */
int mbs_form_consistent(mbs_form *F, double t, double *x, const unsigned char *fixed,
                        const double *e0, const double *rate, const unsigned char *has_rate,
                        double tol, int max_iter, int *bad_row);

#ifdef __cplusplus
}
#endif

#endif /* MBS_FORMULATION_H */
