/*
 * mbs_parameters.c -- checks of a model's parameter values against its rules (see the header).
 */
#include "mbs_parameters.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mbs_linalg.h"

char *mbs_format_double(double v, char *buf, size_t n)
{
    /* integers below 1e16 keep all their digits (10, not 1e+01), as repr does */
    int digits, whole = 1;
    if (isfinite(v) && v != 0.0 && fabs(v) >= 1.0 && fabs(v) < 1e16)
        whole = (int)floor(log10(fabs(v))) + 1;
    for (digits = 1; digits <= 17; digits++) {
        snprintf(buf, n, "%.*g", digits > whole ? digits : whole, v);
        if (!isfinite(v) || strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

int mbs_mass_property_problem(const double mj[7], char *msg, size_t n)
{
    double ev[3], scale = 0.0, tol;
    int i;
    if (!(isfinite(mj[0]) && mj[0] > 0.0)) {
        char g[32];
        snprintf(msg, n, "mass must be positive, got %s", mbs_format_double(mj[0], g, sizeof g));
        return 1;
    }
    for (i = 1; i < 7; i++) {
        if (!isfinite(mj[i])) {
            snprintf(msg, n, "inertia tensor has non-finite entries");
            return 2;
        }
        if (fabs(mj[i]) > scale)
            scale = fabs(mj[i]);
    }
    tol = MBS_INERTIA_RTOL * (scale > 0.0 ? scale : 1e-300);
    mbs_sym3_eigenvalues(mj + 1, ev);
    if (ev[0] < -tol) {
        snprintf(msg, n, "inertia tensor is not positive semi-definite (principal moments %.6g, "
                 "%.6g, %.6g)", ev[0], ev[1], ev[2]);
        return 3;
    }
    if (ev[0] + ev[1] < ev[2] - tol) {
        snprintf(msg, n, "principal moments %.6g, %.6g, %.6g violate the triangle inequality "
                 "J1 + J2 >= J3 (no rigid body has this inertia)", ev[0], ev[1], ev[2]);
        return 4;
    }
    return 0;
}

/* " (m_crank = -0.3, r = 0.15)": the parameters idx[start[b]] .. idx[start[b + 1] - 1] of check b
 * (a body or a factor) with their values, appended to msg */
static void append_values(const mbs_param_rules *R, const int *start, const int *idx, int b,
                          const double *prm, char *msg, size_t n)
{
    size_t len = 0;
    int k;
    while (len < n && msg[len] != '\0')
        len++;
    for (k = start[b]; k < start[b + 1] && len + 1 < n; k++) {
        char g[32];
        int w = snprintf(msg + len, n - len, "%s%s = %s", k == start[b] ? " (" : ", ",
                         R->names[idx[k]], mbs_format_double(prm[idx[k]], g, sizeof g));
        if (w < 0)
            return;
        len += (size_t)w;
    }
    if (len + 1 < n && start[b + 1] > start[b])
        snprintf(msg + len, n - len, ")");
}

int mbs_check_parameters(const mbs_param_rules *R, const double *prm, double *mj_work, char *msg,
                         size_t n)
{
    int i;
    for (i = 0; i < R->nprm; i++) {
        if (prm[i] < R->min[i] || prm[i] > R->max[i]) {
            char g[32], b[32];
            int below = prm[i] < R->min[i];
            snprintf(msg, n, "parameter '%s' = %s is %s its %s %s", R->names[i],
                     mbs_format_double(prm[i], g, sizeof g), below ? "below" : "above",
                     below ? "minimum" : "maximum",
                     mbs_format_double(below ? R->min[i] : R->max[i], b, sizeof b));
            return 1;
        }
    }
    if (R->nbody > 0) {
        R->mass_properties(0.0, NULL, NULL, prm, NULL, NULL, mj_work);
        for (i = 0; i < R->nbody; i++) {
            char why[200];
            if (mbs_mass_property_problem(mj_work + 7 * i, why, sizeof why) != 0) {
                snprintf(msg, n, "body '%s': %s", R->body_names[i], why);
                append_values(R, R->body_prm_start, R->body_prm, i, prm, msg, n);
                return 2;
            }
        }
    }
    if (R->nfactor > 0) {
        double *value = mj_work + 7 * R->nbody;
        R->factor_values(0.0, NULL, NULL, prm, NULL, NULL, value);
        for (i = 0; i < R->nfactor; i++) {
            if (!(value[i] >= 0.0)) { /* also NaN */
                char g[32];
                snprintf(msg, n, "%s, got %s", R->factor_requirement[i],
                         mbs_format_double(value[i], g, sizeof g));
                append_values(R, R->factor_prm_start, R->factor_prm, i, prm, msg, n);
                return 4;
            }
        }
    }
    for (i = 0; i < R->nprm; i++) {
        if (R->nonzero_why[i] != NULL && prm[i] == 0.0) {
            snprintf(msg, n, "parameter '%s' = 0 is not allowed: %s", R->names[i], R->nonzero_why[i]);
            return 3;
        }
    }
    return 0;
}
