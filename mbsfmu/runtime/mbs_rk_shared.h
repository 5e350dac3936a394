/*
 * mbs_rk_shared.h -- pieces the engine's explicit integrators share (C99; internal, not part of
 * the engine's interface).  Defined in mbs_rkstab.c; used by mbs_rkstab.c and mbs_dop853.c, whose
 * step rules outside the method itself are the same (see mbs_dop853.c).
 */
#ifndef MBS_RK_SHARED_H
#define MBS_RK_SHARED_H

#include "mbs_rkstab.h"

/* A collapsed step size (MBS_RKSTAB_ECOLLAPSE): this many accepted steps in a row, each shorter
 * than this fraction of the call's horizon (the stop time t_clip where it is finite, else t_end,
 * minus the start of the call), end the call.  Such a run could not finish in 1e12 steps; it is
 * typically creeping towards a point where the solution is not smooth (an unstabilized
 * formulation at a singular position of the mechanism), each step accepted, never arriving.
 * The reference steppers apply the same rule (mbsfmu/reference/integrators/stepper.py, COLLAPSE). */
#define MBS_RK_COLLAPSE_RATIO 1e-12
#define MBS_RK_COLLAPSE_STEPS 10000

/* sqrt(1/n sum (v_i / scale_i)^2) */
double mbs_rk_rms(const double *v, const double *scale, int n);

/* 1 if the sum of squares of v[0..n) is finite (no NaN, no infinity, no overflow), else 0 */
int mbs_rk_all_finite(const double *v, int n);

/* The distance from a to the next larger double. */
double mbs_rk_spacing(double a);

/* Hairer's starting-step heuristic (HNW I, Sec. II.4) for a method whose error behaves as
 * O(h^order), from (t0, x0) with f0 = f(t0, x0) over at most span:
 *   h = min(100 h0, (0.01 / max(d1, d2))^(1/order), span, hmax),
 * one evaluation of f (counted in *nfev); sc, tmp and f1 are n doubles of scratch.  Returns
 * MBS_RKSTAB_OK with *h_out, or MBS_RKSTAB_ERHS. */
int mbs_rk_initial_step(int n, double rtol, double atol, double hmax, int order, mbs_rhs_fn f, void *ctx,
                        double t0, const double *x0, const double *f0, double span, double *sc, double *tmp,
                        double *f1, long *nfev, double *h_out);

/* The smallest step of a call from tc to t_end: hmin_set if > 0, else 1e-14 (t_end - tc); never
 * below 10 ulp(max(|tc|, |t_end|)). */
double mbs_rk_hmin(double hmin_set, double tc, double t_end);

/* The proposal after an accepted step of size h with error err <= 1 (the proposal was h_prop;
 * clipped: the step was cut to end at t_end), given the method's controller factor fac (h_next =
 * h / fac before the limits): fac within [1/facmax, 1/facmin], never above hmax, no growth right
 * after a rejection (reject_last); a step shortened to hit t_end keeps the proposal and the error
 * history, otherwise *errold = max(err, 1e-4). */
double mbs_rk_next_step(double fac, double facmin, double facmax, double hmax, int reject_last, double err,
                        double h, double h_prop, int clipped, double *errold);

/* Hairer's stiffness estimate of an accepted step of size h: h |k_new - k_s| / |x_new - x_s|, with
 * k_new = f(t + h, x_new) and k_s = f(t + h, x_s) at the argument x_s of the method's last stage
 * (0 where x_new = x_s); approximates h |lambda| of the dominant eigenvalue. */
double mbs_rk_hrho(int n, double h, const double *k_new, const double *k_s, const double *x_new,
                   const double *x_s);

/* Singular positions (rkstab.py, weak; mbs_rk_singular in mbs_rkstab.h).  The regularity ratio of
 * the start, once per (re)start: rho = weak(t, x, d = 0), d n doubles of scratch (nothing without
 * the hook or once known). */
void mbs_rk_singular_start(mbs_rk_singular *g, void *ctx, double t, const double *x, double *d, int n);

/* After an accepted step that ended at t: rho_prev <- rho <- rho_new. */
void mbs_rk_singular_accept(mbs_rk_singular *g, double t);

/* The time D = t* - tc from the last accepted state (at tc) to the singular time t* predicted by
 * linear extrapolation of the last two ratios, D = rho (tc - t_rho_prev) / (rho_prev - rho), once
 * rho < watch and falling; HUGE_VAL where none is predicted. */
double mbs_rk_singular_eta(const mbs_rk_singular *g, double tc, double watch);

/* RKSTAB's step placement: the next step h shortened, where D <= 2.5 h, to h = D / (j + 0.55), j >= 0
 * the smallest integer with h <= the proposal, so that t* falls 0.55 into a step, in the gap between
 * the stages c = 3/10 and 4/5 (rho < 0.1; only ever shortening). */
double mbs_rk_place_step(const mbs_rk_singular *g, double tc, double h);

/* The count of stability-limited steps (hrho above threshold; threshold 0: none are counted)
 * after one more accepted step: a step above adds one; steps below the threshold restart the
 * count once there are gap of them in a row (gap <= 1: every one), so that a single low value
 * of the noisy estimate between stability-limited steps does not hide a stiff run.  *below
 * counts the steps below the threshold in a row. */
int mbs_rk_stiff_count(int run, int *below, double hrho, double threshold, int gap);

#endif /* MBS_RK_SHARED_H */
