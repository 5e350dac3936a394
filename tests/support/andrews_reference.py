"""Andrews' squeezing mechanism as Hairer and Wanner publish it (HW II, ch. VII.7; the IVP test
set's ``andrews.f``), coded in numpy apart from mbsfmu, sharing only the parameter values with
models/andrews.py: M(q), f(q, q'), g(q), G(q) and q'' and lambda from the KKT system

    [[M, G^T], [G, 0]] [q''; lambda] = [f; -L],      L = d/dt(G) q'  (so that g'' = G q'' + L = 0),

integrated as an index-1 ODE with scipy's DOP853 at rtol 1e-12 (tests/zoo/test_andrews.py, the
zoo's cases in zoo_cases.py).
"""

import math

import numpy as np
from scipy.integrate import solve_ivp

from models import andrews

P = {"m1": .04325, "m2": .00365, "m3": .02373, "m4": .00706, "m5": .07050, "m6": .00706,
     "m7": .05498, "i1": 2.194e-6, "i2": 4.410e-7, "i3": 5.255e-6, "i4": 5.667e-7,
     "i5": 1.169e-5, "i6": 5.667e-7, "i7": 1.912e-5, "xa": -.06934, "ya": -.00227,
     "xb": -.03635, "yb": .03273, "xc": .014, "yc": .072, "c0": 4530, "d": 28e-3, "da": 115e-4,
     "e": 2e-2, "ea": 1421e-5, "rr": 7e-3, "ra": 92e-5, "l0": 7785e-5, "ss": 35e-3,
     "sa": 1874e-5, "sb": 1043e-5, "sc": 18e-3, "sd": 2e-2, "ta": 2308e-5, "tb": 916e-5,
     "u": 4e-2, "ua": 1228e-5, "ub": 449e-5, "zf": 2e-2, "zt": 4e-2, "fa": 1421e-5, "mom": 33e-3}

NAMES = ("beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon")
Q0 = np.array([andrews.INITIAL[n] for n in NAMES])


# ------------------------------------------------------------------ Hairer-Wanner's equations
def hw_parts(q, qd):
    """M, f, g, G and L = (dG/dt) q' of HW II, VII (7.4)-(7.8) at one state."""
    p = P
    be, th, ga, ph, de, om, ep = q
    bep, thp, gap, php, dep, omp, epp = qd
    m1, m2, m3, m4, m5, m6, m7 = (p[f"m{i}"] for i in range(1, 8))
    i1, i2, i3, i4, i5, i6, i7 = (p[f"i{i}"] for i in range(1, 8))
    rr, ra, d, da, e, ea, ss, zt, zf, u, fa = (p[k] for k in
                                                ("rr", "ra", "d", "da", "e", "ea", "ss", "zt", "zf",
                                                 "u", "fa"))
    sin, cos = math.sin, math.cos
    M = np.zeros((7, 7))
    M[0, 0] = m1 * ra**2 + m2 * (rr**2 - 2 * da * rr * cos(th) + da**2) + i1 + i2
    M[1, 0] = M[0, 1] = m2 * (da**2 - da * rr * cos(th)) + i2
    M[1, 1] = m2 * da**2 + i2
    M[2, 2] = m3 * (p["sa"]**2 + p["sb"]**2) + i3
    M[3, 3] = m4 * (e - ea)**2 + i4
    M[4, 3] = M[3, 4] = m4 * ((e - ea)**2 + zt * (e - ea) * sin(ph)) + i4
    M[4, 4] = (m4 * (zt**2 + 2 * zt * (e - ea) * sin(ph) + (e - ea)**2)
               + m5 * (p["ta"]**2 + p["tb"]**2) + i4 + i5)
    M[5, 5] = m6 * (zf - fa)**2 + i6
    M[6, 5] = M[5, 6] = m6 * ((zf - fa)**2 - u * (zf - fa) * sin(om)) + i6
    M[6, 6] = (m6 * ((zf - fa)**2 - 2 * u * (zf - fa) * sin(om) + u**2)
               + m7 * (p["ua"]**2 + p["ub"]**2) + i6 + i7)
    # spring between D on K3 and the fixed point C
    xd = p["sd"] * cos(ga) + p["sc"] * sin(ga) + p["xb"]
    yd = p["sd"] * sin(ga) - p["sc"] * cos(ga) + p["yb"]
    lang = math.hypot(xd - p["xc"], yd - p["yc"])
    force = -p["c0"] * (lang - p["l0"]) / lang
    fx, fy = force * (xd - p["xc"]), force * (yd - p["yc"])
    f = np.array([
        p["mom"] - m2 * da * rr * thp * (thp + 2 * bep) * sin(th),
        m2 * da * rr * bep**2 * sin(th),
        fx * (p["sc"] * cos(ga) - p["sd"] * sin(ga)) + fy * (p["sd"] * cos(ga) + p["sc"] * sin(ga)),
        m4 * zt * (e - ea) * dep**2 * cos(ph),
        -m4 * zt * (e - ea) * php * (php + 2 * dep) * cos(ph),
        -m6 * u * (zf - fa) * epp**2 * cos(om),
        m6 * u * (zf - fa) * omp * (omp + 2 * epp) * cos(om),
    ])
    bt, pd, oe = be + th, ph + de, om + ep
    btp, pdp, oep = bep + thp, php + dep, omp + epp
    # each g_i is a sum of a*cos(phi), a*sin(phi) over linear angle combinations phi; the
    # second time derivative of such a term at q'' = 0 is -(the term) * phi'^2
    E = (rr * cos(be) - d * cos(bt), rr * sin(be) - d * sin(bt))                 # point E of K2
    E2 = (rr * cos(be) * bep**2 - d * cos(bt) * btp**2, rr * sin(be) * bep**2 - d * sin(bt) * btp**2)
    g = np.array([
        E[0] - ss * sin(ga) - p["xb"],
        E[1] + ss * cos(ga) - p["yb"],
        E[0] - e * sin(pd) - zt * cos(de) - p["xa"],
        E[1] + e * cos(pd) - zt * sin(de) - p["ya"],
        E[0] - zf * cos(oe) - u * sin(ep) - p["xa"],
        E[1] - zf * sin(oe) + u * cos(ep) - p["ya"],
    ])
    L = -np.array([
        E2[0] - ss * sin(ga) * gap**2,
        E2[1] + ss * cos(ga) * gap**2,
        E2[0] - e * sin(pd) * pdp**2 - zt * cos(de) * dep**2,
        E2[1] + e * cos(pd) * pdp**2 - zt * sin(de) * dep**2,
        E2[0] - zf * cos(oe) * oep**2 - u * sin(ep) * epp**2,
        E2[1] - zf * sin(oe) * oep**2 + u * cos(ep) * epp**2,
    ])
    G = np.zeros((6, 7))
    G[0::2, 0] = -rr * sin(be) + d * sin(bt)
    G[0::2, 1] = d * sin(bt)
    G[1::2, 0] = rr * cos(be) - d * cos(bt)
    G[1::2, 1] = -d * cos(bt)
    G[0, 2], G[1, 2] = -ss * cos(ga), -ss * sin(ga)
    G[2, 3], G[2, 4] = -e * cos(pd), -e * cos(pd) + zt * sin(de)
    G[3, 3], G[3, 4] = -e * sin(pd), -e * sin(pd) - zt * cos(de)
    G[4, 5], G[4, 6] = zf * sin(oe), zf * sin(oe) - u * cos(ep)
    G[5, 5], G[5, 6] = -zf * cos(oe), -zf * cos(oe) - u * sin(ep)
    return M, f, g, G, L


def hw_kkt(q, qd):
    """q'' and lambda of M q'' = f - G^T lambda, G q'' + L = 0."""
    M, f, _, G, L = hw_parts(q, qd)
    K = np.zeros((13, 13))
    K[:7, :7], K[:7, 7:], K[7:, :7] = M, G.T, G
    sol = np.linalg.solve(K, np.concatenate((f, -L)))
    return sol[:7], sol[7:]


def andrews_reference(t_eval):
    """Hairer and Wanner's squeezer (hw_kkt) at t_eval from the initial state Q0 at rest: the
    seven angles (beta, Theta, gamma, Phi, delta, Omega, epsilon)."""
    def rhs(t, x):
        return np.concatenate((x[7:], hw_kkt(x[:7], x[7:])[0]))

    sol = solve_ivp(rhs, (0.0, float(t_eval[-1])), np.concatenate((Q0, np.zeros(7))), method="DOP853",
                    rtol=1e-12, atol=1e-12, t_eval=t_eval)
    assert sol.status == 0, sol.message
    return sol.y[:7]
