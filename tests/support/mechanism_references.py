"""References for the zoo's mechanisms, written apart from mbsfmu and from the models in models/
(numpy, scipy and sympy only; Lagrange's equations of the first kind by zoo_reference.py).
The tests that check a model against one of them, and zoo_cases.py, import them from here.

* The slider-crank of seed 000 sec. 5 (models/slider_crank.py) in the crank angle theta alone:
  the pin P = r (cos, sin)(theta), the slider x = r cos theta + sqrt(l^2 - r^2 sin^2 theta), the
  rod's cg midway between P and the slider, the rod angle atan2(P_y, P_x - x); with no gravity in
  the plane and no friction T = m(theta) theta'^2 / 2 is conserved, so
  theta' = sqrt(2 T0 / m(theta)), m(theta) built with sympy from these formulas.
* The parallelogram N four-bar of seed 003 sec. 5.1 (models/four_bar_natural.py): all cranks keep
  one angle phi, J phi'' = -K cos phi with J = (N + 1) m l^2 / 3 + N m l^2 and
  K = (3N + 1) m g l / 2 (tests/simulation/test_singular_positions.py derives them).
* The singular slider-crank of seed 004 sec. 4.5 (P10) on its reformulation th1 + th2 = pi
  (Remark 4.4): a 2 x 2 saddle-point system without singularity.
* Seed 003's copy machine in its minimal coordinates (theta, C_y), the Bricard mechanism and the
  flyball governor by the first kind in the seed's own frames (w = (z . y', x . z', y . x'),
  sec. 1.2).
* Seed 004's two-link arm (sec. 4.4.3: the printed M(theta) and f, the path constraints of
  cases I and II) and the TSDA slider-crank (sec. 4.4.4) in its crank angle phi.
"""

import math

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp
from zoo_reference import FirstKind, cross, dot, stack

# ---------------------------------------------------------------- seed 000: slider-crank
R, L, MC, MR, MS = 0.15, 0.5, 0.3, 0.5, 1.0
THETA0, OMEGA0 = math.pi / 4, 2 * math.pi


def one_dof_reference(t_eval):
    """(theta, slider x) over t_eval from theta' = sqrt(2 T0 / m(theta)) (module docstring)."""
    th = sp.Symbol("th")
    px, py = R * sp.cos(th), R * sp.sin(th)
    x = px + sp.sqrt(L**2 - py**2)
    rod = sp.atan2(py, px - x)
    gx, gy = (px + x) / 2, py / 2
    dx, dgx, dgy, drod = (sp.diff(e, th) for e in (x, gx, gy, rod))
    # T = m(th) th'^2 / 2
    m = (MS * dx**2 + MR * (dgx**2 + dgy**2) + MR * L**2 / 12 * drod**2
         + (MC * R**2 / 12 + MC * (R / 2) ** 2))
    m_f = sp.lambdify(th, m, "math")
    x_f = sp.lambdify(th, x, "math")
    T0 = 0.5 * m_f(THETA0) * OMEGA0**2
    sol = solve_ivp(lambda t, z: [math.sqrt(2 * T0 / m_f(z[0]))], (0, t_eval[-1]), [THETA0],
                    t_eval=t_eval, rtol=1e-13, atol=1e-14, method="DOP853")
    return sol.y[0], np.array([x_f(v) for v in sol.y[0]])


# ---------------------------------------------------------------- singular positions
def parallelogram_angle(t, N, m=1.0, l=1.0, g=9.81, v0=1.0):
    """phi(t) of J phi'' = -K cos phi (module docstring), phi(0) = pi/2, phi'(0) = -v0 / l."""
    J = (N + 1) * m * l**2 / 3 + N * m * l**2
    K = (3 * N + 1) * m * g * l / 2
    sol = solve_ivp(lambda _, x: [x[1], -K / J * math.cos(x[0])], (0.0, float(t[-1])),
                    [math.pi / 2, -v0 / l], method="DOP853", rtol=1e-13, atol=1e-13, t_eval=t)
    return sol.y[0]


def slider_crank_reference(t, omega=-5.0, g=9.8):
    """(th1, th2) at t from the reformulation th1 + th2 = pi (seed Remark 4.4): the saddle-point
    system [[M, G^T], [G, 0]] [th''; lambda] = [f; 0] with G = (1, 1), f the seed's right-hand
    side of P10 (velocity terms from the Lagrangian of the unit double pendulum)."""
    def rhs(_, x):
        a, b, da, db = x
        d = b - a
        M = np.array([[2.0, math.cos(d)], [math.cos(d), 1.0]])
        f = np.array([math.sin(d) * db**2 + 2 * g * math.sin(a), -math.sin(d) * da**2 + g * math.sin(b)])
        K = np.block([[M, np.ones((2, 1))], [np.ones((1, 2)), np.zeros((1, 1))]])
        acc = np.linalg.solve(K, np.concatenate((f, [0.0])))[:2]
        return [da, db, acc[0], acc[1]]
    sol = solve_ivp(rhs, (0.0, float(t[-1])), [math.pi / 2, math.pi / 2, omega, -omega], method="DOP853",
                    rtol=1e-13, atol=1e-13, t_eval=t)
    return sol.y[0], sol.y[1]


# ---------------------------------------------------------------- seed 003
def _points(q, fixed_start, fixed_end):
    """[fixed_start, q[0:3], q[3:6], ..., fixed_end] as (3, batch) arrays."""
    pts = [q[3 * i:3 * i + 3] for i in range(len(q) // 3)]
    return [np.zeros_like(pts[0]) + np.reshape(fixed_start, (3, 1))] + pts + \
        [np.zeros_like(pts[0]) + np.reshape(fixed_end, (3, 1))]


def copy_machine_reference(t_eval):
    """(B_x, B_y, C_y) over t_eval from the 2-DOF equations in (theta, C_y):
    T = 1/2 m1 |B'/2|^2 + 1/2 I1 theta'^2 + 1/2 m2 C_y'^2, the springs' and gravity's V, the
    seed's R = 1/2 c2 C_y'^2."""
    m1 = m2 = l = 1.0
    w, k1, k2, c2, g = 0.02, 100.0, 100.0, 50.0, 9.81
    a = 0.7 * l

    def velocities(q, qd, t):
        th, thd, cyd = q[0], qd[0], qd[1]
        return stack(-l / 2 * np.sin(th) * thd, l / 2 * np.cos(th) * thd, thd, cyd)

    def potential(q, t):
        th, cy = q
        bx, by = l * np.cos(th), l * np.sin(th)
        ad = np.sqrt((a / l * bx - a) ** 2 + (a / l * by - l / 3) ** 2)
        bc = np.sqrt((bx - l) ** 2 + (by - cy) ** 2)
        return m1 * g * by / 2 + m2 * g * cy + k1 / 2 * (ad - l / 3) ** 2 + k2 / 2 * (bc - l / 2) ** 2

    ref = FirstKind(2, velocities, [m1, m1, m1 * (l**2 + w**2) / 12, m2], potential=potential,
                    dissipation=lambda q, qd, t: qd[1:2] + 0 * q[1:2], damping=[c2])
    x = ref.solve([0.0, -0.5, 0.0, 0.0], t_eval, rtol=1e-12, atol=1e-13)
    return np.cos(x[0]), np.sin(x[0]), x[1]


def bricard_reference():
    """Lagrange's equations of the first kind of seed 003 sec. 6.1 in its own terms: bar i has
    the frame (u_i, a_i, u_i x a_i) with a_i = u_i x a_(i-1), angular velocity
    w = (z . y', x . z', y . x') (sec. 1.2) and principal inertia m/12 (2h^2, l^2 + h^2,
    l^2 + h^2); gravity -y."""
    m, l, h, g = 1.0, 1.0, 0.1, 9.81
    e_y, e_x = np.array([0.0, 1.0, 0.0]), np.array([1.0, 0.0, 0.0])
    inertia = (m * 2 * h**2 / 12, m * (l**2 + h**2) / 12, m * (l**2 + h**2) / 12)

    def bars(q, qd):
        P, Pd = _points(q, (0, 0, 0), (0, 0, l)), _points(qd, (0, 0, 0), (0, 0, 0))
        a = [np.zeros_like(P[1]) + e_y[:, None]]
        ad = [np.zeros_like(Pd[1] * P[1])]
        out = []
        for i in range(1, 6):
            u, ud = (P[i] - P[i - 1]) / l, (Pd[i] - Pd[i - 1]) / l
            a.append(cross(u, a[i - 1]))
            ad.append(cross(ud, a[i - 1]) + cross(u, ad[i - 1]))
            out.append((P[i], P[i - 1], Pd[i], Pd[i - 1], u, ud, a[i], ad[i], a[i - 1], ad[i - 1]))
        return out

    def velocities(q, qd, t):
        rows = []
        for _, _, pd, pd0, x, xd, y, yd, _, _ in bars(q, qd):
            z, zd = cross(x, y), cross(xd, y) + cross(x, yd)
            rows += list((pd + pd0) / 2) + [dot(z, yd), dot(x, zd), dot(y, xd)]
        return stack(*rows)

    def potential(q, t):
        P = _points(q, (0, 0, 0), (0, 0, l))
        return sum(m * g * (P[i][1] + P[i - 1][1]) / 2 for i in range(1, 6))

    def constraints(q, t):
        rows = []
        for p, p0, _, _, _, _, _, _, a_prev, _ in bars(q, np.zeros_like(q)):
            rows += [dot(p - p0, p - p0) - l**2, dot(a_prev, p - p0)]
        p4 = q[9:12]
        return stack(*rows, dot(e_x[:, None] + 0 * p4, np.reshape([0, 0, l], (3, 1)) - p4))

    def constraint_rates(q, qd, t):
        rows = []
        for p, p0, pd, pd0, _, _, _, _, a_prev, ad_prev in bars(q, qd):
            rows += [2 * dot(p - p0, pd - pd0), dot(ad_prev, p - p0) + dot(a_prev, pd - pd0)]
        return stack(*rows, -qd[9] + 0 * q[9])

    weights = [m] * 3 + list(inertia)
    return FirstKind(12, velocities, weights * 5, potential=potential, constraints=constraints,
                     constraint_rates=constraint_rates)


def flyball_reference():
    """Lagrange's equations of the first kind of seed 003 sec. 6.2 in the seed's terms (rod
    frame (u_r, u3, u_r x u3) with w = (z . y', x . z', y . x'), both rods and globes counted
    twice, the spring-dampers as the seed's V and R), with the inertias the model chose; and
    the angular momentum about the shaft, L_z(states)."""
    m_s, m_r, m_sl, m_g, R, ls, lr, w = 0.3, 0.3, 3.0, 5.0, 0.05, 1.0, 1.0, 0.01
    k, c, d0, g = 8e5, 4e4, 0.5, 9.81
    J_s, J_sl = m_s * 2 * w**2 / 12, m_sl * 2 * 0.1**2 / 12
    J_r = (m_r * 2 * w**2 / 12, m_r * (lr**2 + w**2) / 12, m_r * (lr**2 + w**2) / 12)
    e_z = np.array([0.0, 0.0, 1.0])[:, None]

    def parts(q, qd):
        ax, ay, bx, by, bz, ez = q
        axd, ayd, bxd, byd, bzd, ezd = qd
        zero = 0 * (ax + axd)
        A, Ad = stack(ax, ay, ls + zero), stack(axd, ayd, zero)
        B, Bd = stack(bx, by, bz), stack(bxd, byd, bzd)
        E, Ed = stack(zero, zero, ez), stack(zero, zero, ezd)
        u2, u2d = (A - stack(zero, zero, ls + zero)) / R, Ad / R
        u3, u3d = cross(u2, e_z + zero), cross(u2d, e_z + zero)
        x, xd = (B - A) / lr, (Bd - Ad) / lr
        z, zd = cross(x, u3), cross(xd, u3) + cross(x, u3d)
        omega_r = (dot(z, u3d), dot(x, zd), dot(u3, xd))
        omega = (ax * ayd - ay * axd) / R**2
        M1, M1d = (A + B) / 2, (Ad + Bd) / 2
        F, Fd = E + R * u2, Ed + R * u2d
        return dict(A=A, Ad=Ad, B=B, Bd=Bd, u3=u3, u3d=u3d, x=x, xd=xd, omega_r=omega_r, omega=omega,
                    M1=M1, M1d=M1d, F=F, Fd=Fd, ezd=ezd + zero)

    def velocities(q, qd, t):
        p = parts(q, qd)
        return stack(p["omega"], *p["M1d"], *p["omega_r"], p["ezd"], *p["Bd"])

    weights = [J_s + J_sl] + [2 * m_r] * 3 + [2 * J for J in J_r] + [m_sl] + [2 * m_g] * 3

    def potential(q, t):
        p = parts(q, np.zeros_like(q))
        L = np.sqrt(dot(p["M1"] - p["F"], p["M1"] - p["F"]))
        return g * (2 * m_r * p["M1"][2] + m_sl * q[5] + 2 * m_g * q[4]) + 2 * k / 2 * (L - d0) ** 2

    def dissipation(q, qd, t):
        p = parts(q, qd)
        d = p["M1"] - p["F"]
        return (dot(p["M1d"] - p["Fd"], d) / np.sqrt(dot(d, d)))[None]

    def constraints(q, t):
        p = parts(q, np.zeros_like(q))
        A, B = p["A"], p["B"]
        return stack(q[0] ** 2 + q[1] ** 2 - R**2, dot(A - B, A - B) - lr**2, dot(A - B, p["u3"]))

    def constraint_rates(q, qd, t):
        p = parts(q, qd)
        A, B, Ad, Bd = p["A"], p["B"], p["Ad"], p["Bd"]
        return stack(2 * (q[0] * qd[0] + q[1] * qd[1]), 2 * dot(A - B, Ad - Bd),
                      dot(Ad - Bd, p["u3"]) + dot(A - B, p["u3d"]))

    ref = FirstKind(6, velocities, weights, potential=potential, dissipation=dissipation, damping=[2 * c],
                    constraints=constraints, constraint_rates=constraint_rates)

    def spin_momentum(X):
        """L_z of shaft, slider, rods (with their rotation about their centres) and globes."""
        p = parts(X[:6], X[6:])
        x, u3 = p["x"], p["u3"]
        w_r = p["omega_r"][1] * u3 + p["omega_r"][2] * cross(x, u3)  # across the rod
        L_rod = J_r[1] * w_r[2] + J_r[0] * p["omega_r"][0] * x[2]
        M1, M1d, B, Bd = p["M1"], p["M1d"], p["B"], p["Bd"]
        return ((J_s + J_sl) * p["omega"] + 2 * (m_r * (M1[0] * M1d[1] - M1[1] * M1d[0])
                                                 + m_g * (B[0] * Bd[1] - B[1] * Bd[0]) + L_rod))

    return ref, spin_momentum


# ---------------------------------------------------------------- seed 004
M_LINK, L_LINK, G = 30.0, 1.0, 9.81

BETA = (2 * math.cos(math.radians(70))) ** 2


def arm_mass_force(q, qd, t):
    """Seed 004's M(theta) and f(theta, theta') of the two-link manipulator (sec. 4.4.3)."""
    m1 = m2 = M_LINK
    l1 = l2 = L_LINK
    th1, th2 = q
    w1, w2 = qd
    c1, c2, s2, c12 = np.cos(th1), np.cos(th2), np.sin(th2), np.cos(th1 + th2)
    m12 = m2 * (l2**2 / 3 + l1 * l2 * c2 / 2)
    M = np.array([[m1 * l1**2 / 3 + m2 * (l1**2 + l2**2 / 3 + l1 * l2 * c2), m12],
                  [m12, m2 * l2**2 / 3]])
    f = np.array([-m1 * G * l1 * c1 / 2 - m2 * G * (l1 * c1 + l2 * c12 / 2)
                  + m2 * l1 * l2 * s2 * (2 * w1 * w2 + w2**2) / 2,
                  -m2 * G * l2 * c12 / 2 - m2 * l1 * l2 * s2 * w1**2 / 2])
    return M, f


def arm_reference(case, omega=0.5):
    def tip(q, qd):
        th1, th2 = q[0], q[1]
        w1, w12 = qd[0], qd[0] + qd[1]
        x = L_LINK * np.cos(th1) + L_LINK * np.cos(th1 + th2)
        y = L_LINK * np.sin(th1) + L_LINK * np.sin(th1 + th2)
        xd = -L_LINK * np.sin(th1) * w1 - L_LINK * np.sin(th1 + th2) * w12
        yd = L_LINK * np.cos(th1) * w1 + L_LINK * np.cos(th1 + th2) * w12
        return x, y, xd, yd

    if case == "I":
        def constraints(q, t):
            x, y, _, _ = tip(q, np.zeros_like(q))
            return (y - x**2 + BETA)[None]

        def rates(q, qd, t):
            x, _, xd, yd = tip(q, qd)
            return (yd - 2 * x * xd)[None]
    else:
        def constraints(q, t):
            _, y, _, _ = tip(q, np.zeros_like(q))
            return (y - np.sin(omega * t) ** 2)[None]

        def rates(q, qd, t):
            _, _, _, yd = tip(q, qd)
            return (yd - omega * np.sin(2 * omega * t) + 0 * q[0])[None]

    return FirstKind(2, mass_force=arm_mass_force, constraints=constraints, constraint_rates=rates)


def tsda_reference(k):
    """The slider-crank in the crank angle phi alone: crank cg (cos phi, sin phi), pin
    3 (cos phi, sin phi), slider x4 = 3 cos phi + s, s = sqrt(25 - 9 sin^2 phi), rod angle
    theta3 = -asin(3 sin phi / 5), rod cg halfway; the TSDA's length 10 - x4, so
    V = k x4^2 / 2 + gravity and R = c x4'^2 / 2; the torque 100 N m on phi."""
    m2, J2, m3, J3, m4 = 2.0, 1.5, 5.0, 5.0 * 25.0 / 12, 2.0
    c, g = 10.0, 9.81

    def geometry(phi):
        s = np.sqrt(25 - 9 * np.sin(phi) ** 2)
        ds = -9 * np.sin(phi) * np.cos(phi) / s
        x4, dx4 = 3 * np.cos(phi) + s, -3 * np.sin(phi) + ds
        return s, x4, dx4

    def velocities(q, qd, t):
        phi, w = q[0], qd[0]
        s, x4, dx4 = geometry(phi)
        rows = [-np.sin(phi) * w, np.cos(phi) * w, w,                               # crank
                (-3 * np.sin(phi) + dx4) / 2 * w, 3 * np.cos(phi) / 2 * w,           # rod cg
                -3 * np.cos(phi) / s * w, dx4 * w]                                   # rod angle, slider
        return np.stack(np.broadcast_arrays(*rows))

    def potential(q, t):
        phi = q[0]
        _, x4, _ = geometry(phi)
        return g * (m2 * np.sin(phi) + m3 * 3 * np.sin(phi) / 2) + k * x4**2 / 2

    def dissipation(q, qd, t):
        return (geometry(q[0])[2] * qd[0])[None]

    ref = FirstKind(1, velocities, [m2, m2, J2, m3, m3, J3, m4], potential=potential,
                    dissipation=dissipation, damping=[c], forces=lambda q, qd, t: 100.0 + 0 * q)
    return ref, geometry
