"""The sensitivity bench's two models written in CasADi's expression graph, from the mechanics.

Independent of mbsfmu's derivation: each model states its kinetic energy T and potential V in
CasADi SX symbols and gets its equations of motion from Lagrange's equations by CasADi's own
automatic differentiation,

    M(q) q'' = dL/dq - (d/dq (dT/dq')) q',   L = T - V,   M = d^2 T / dq'^2,

M and the right-hand side are SX expressions; q'' = M^-1 (...) is solved numerically in the
ODE's MX graph (``casadi.solve(M, b, 'qr')``, whose derivatives CasADi knows): a symbolic solve
of the 20 x 20 chain (SX QR) gives a right-hand side whose rounding noise made CVODES take ten
times the steps per decade of tolerance below 1e-9.  Each function returns a
:class:`CasadiModel`: the ODE x' = f(x, p) with x = [q, q'], the parameters p, and the
final-value metrics as SX expressions of (x, p).

* :func:`slider_crank` -- the mechanism of ``models/slider_crank.py`` in one *minimal*
  coordinate, the crank angle theta (the model's ``crank_angle``: the direction from the fixed
  pivot to the pin, from the +x axis), the loop closed in closed form.  The pin is at
  r (cos theta, sin theta); the rod (length l) runs from the slider at (x, 0), x > 0, to the pin,
  so with s = r sin(theta) / l

      x = r cos(theta) + l sqrt(1 - s^2),   alpha = pi - asin(s)

  (alpha: the rod's absolute angle, slider -> pin, near pi as in the model's initial guess
  2.9).  T = 1/2 m_slider x'^2 + 1/2 m_rod |v_rod cg|^2 + 1/2 (m_rod l^2 / 12) alpha'^2
  + 1/2 (m_crank r^2 / 3) theta'^2 (the crank turns about its end); gravity is along -z, so V = 0.
  Parameters r, l, m_crank, m_rod, m_slider; the initial state [theta0, theta0'] is the
  integrator's x0 (the model's initial condition ``crank_angle`` and its rate).
* :func:`chain` -- the planar N-link pendulum chain of ``bench/sensitivity.py``'s
  ``mbsfmu_chain``: relative joint angles q_i about z, absolute angles phi_i = q_1 + ... + q_i,
  link i a uniform rod of mass m_i and length L_i from joint i-1 (joint 0 at the origin) along
  (cos phi_i, sin phi_i), gravity g along -y; T = sum 1/2 m_i |v_Gi|^2 + 1/2 (m_i L_i^2 / 12)
  phi_i'^2, V = sum m_i g y_Gi.  Parameters m_1..m_N, L_1..L_N (g fixed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import casadi as ca


@dataclass
class CasadiModel:
    """x' = ode(x, p) (MX, :attr:`x`, :attr:`p`); ``metrics`` (name -> SX of :attr:`x_sx` and
    :attr:`p_sx`) are evaluated at the final state."""

    x: ca.MX
    p: ca.MX
    ode: ca.MX
    x_sx: ca.SX
    p_sx: ca.SX
    param_names: list[str]
    metrics: dict[str, ca.SX]

    def metrics_function(self, names) -> ca.Function:
        """h(x, p) = the metrics ``names`` as one column."""
        return ca.Function("h", [self.x_sx, self.p_sx], [ca.vertcat(*(self.metrics[n] for n in names))])


def lagrange_model(q, u, p, T, V, param_names, metrics) -> CasadiModel:
    """The model of Lagrange's equations for kinetic energy T(q, u) and potential V(q), u = q'."""
    dT_du = ca.gradient(T, u)
    M = ca.jacobian(dT_du, u)
    rhs = ca.gradient(T - V, q) - ca.mtimes(ca.jacobian(dT_du, q), u)
    x = ca.vertcat(q, u)
    parts = ca.Function("lagrange", [x, p], [M, rhs])
    xm, pm = ca.MX.sym("x", x.numel()), ca.MX.sym("p", p.numel())
    Mm, rhs_m = parts(xm, pm)
    ode = ca.vertcat(xm[q.numel():], ca.solve(Mm, rhs_m, "qr"))
    return CasadiModel(xm, pm, ode, x, p, param_names, metrics)


def slider_crank(r=0.15, l=0.5, m_crank=0.3, m_rod=0.5, m_slider=1.0) -> tuple[CasadiModel, list]:
    """The slider-crank in the crank angle; returns (model, default parameter values)."""
    th, om = ca.SX.sym("theta"), ca.SX.sym("omega")
    names = ["r", "l", "m_crank", "m_rod", "m_slider"]
    p = ca.SX.sym("p", len(names))
    r_, l_, mc, mr, ms = (p[i] for i in range(len(names)))
    s = r_ * ca.sin(th) / l_
    x = r_ * ca.cos(th) + l_ * ca.sqrt(1 - s**2)
    alpha = math.pi - ca.asin(s)
    rod_cg = ca.vertcat(x, 0) + l_ / 2 * ca.vertcat(ca.cos(alpha), ca.sin(alpha))

    def rate(e):  # d/dt of an expression of theta
        return ca.jacobian(e, th) * om

    T = (ms * rate(x) ** 2 + mr * ca.sumsqr(rate(rod_cg)) + mr * l_**2 / 12 * rate(alpha) ** 2
         + mc * r_**2 / 3 * om**2) / 2
    metrics = {"x": x, "der(alpha)": rate(alpha), "pin.y": r_ * ca.sin(th)}
    return (lagrange_model(th, om, p, T, ca.SX(0), names, metrics),
            [r, l, m_crank, m_rod, m_slider])


def chain(n: int, g: float = 9.81) -> CasadiModel:
    """The planar n-link chain; parameters m_1..m_n, L_1..L_n; metrics tip.x, tip.y (the last
    link's free end) and der(q1)."""
    q, u = ca.SX.sym("q", n), ca.SX.sym("u", n)
    m, L = ca.SX.sym("m", n), ca.SX.sym("L", n)
    phi, w = ca.cumsum(q), ca.cumsum(u)
    joint, v_joint = ca.SX.zeros(2), ca.SX.zeros(2)
    T, V = 0, 0
    for i in range(n):
        e = ca.vertcat(ca.cos(phi[i]), ca.sin(phi[i]))
        e_perp = ca.vertcat(-ca.sin(phi[i]), ca.cos(phi[i]))
        cg = joint + L[i] / 2 * e
        v_cg = v_joint + L[i] / 2 * w[i] * e_perp
        T += m[i] * ca.sumsqr(v_cg) / 2 + m[i] * L[i] ** 2 / 12 * w[i] ** 2 / 2
        V += m[i] * g * cg[1]
        joint, v_joint = joint + L[i] * e, v_joint + L[i] * w[i] * e_perp
    names = [f"m{i + 1}" for i in range(n)] + [f"L{i + 1}" for i in range(n)]
    metrics = {"tip.x": joint[0], "tip.y": joint[1], "der(q1)": u[0]}
    return lagrange_model(q, u, ca.vertcat(m, L), T, V, names, metrics)
