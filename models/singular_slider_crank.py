"""The singular slider-crank of seed 004 sec. 4.5 (P10, after Petzold, Ren & Maly 1993): crank
and connecting rod of equal length, so the mechanism passes kinematic singularities.

Two massless links of length 1 m with unit point masses at the crank pin and at the slider,
in the vertical plane (y up, g = 9.8 m/s^2); the angles ``theta1`` (crank) and ``theta2``
(rod) are absolute and measured from the upward vertical, so the pin is at
(sin theta1, cos theta1) and the slider at (sin theta1 + sin theta2, cos theta1 + cos theta2).
Lagrange's equations of L = T - V with

    T = 1/2 (2 theta1'^2 + 2 cos(theta2 - theta1) theta1' theta2' + theta2'^2),
    V = 19.6 cos theta1 + 9.8 cos theta2

give the seed's mass matrix [[2, cos theta_d], [cos theta_d, 1]] (theta_d = theta2 - theta1)
and gravity terms 19.6 sin theta1, 9.8 sin theta2; the velocity terms are
+sin(theta_d) theta2'^2 in the first row and -sin(theta_d) theta1'^2 in the second (the seed's
OCR leaves the signs unreadable; these follow from L).  The slider moves on the horizontal
line through the crank's pivot:

* ``constraint='nonlinear'`` (default, eq. 4.27): g = -cos theta1 - cos theta2 = 0 with
  G = (sin theta1, sin theta2), which vanishes at (theta1, theta2) = (0, pi) and (pi, 0): the
  slider is then at the pivot and the mechanism may continue on either branch
  theta2 = pi - theta1 or theta2 = pi + theta1.
* ``constraint='linear'`` (Remark 4.4, eq. 4.28): theta1 + theta2 - pi = 0, G = (1, 1), the
  branch theta2 = pi - theta1 without singularity.

Initial state (our choice; the seed takes it "as in [74]" and does not print it): crank and rod
horizontal, theta1 = theta2 = pi/2 (slider at x = 2), theta1' = 5 rad/s, theta2' = -5 rad/s
(consistent with both constraints).  On the branch theta2 = pi - theta1 the crank then turns
through the singular positions theta1 = pi (t = 0.43 s) and theta1 = 2 pi (t = 1.72 s) within
the seed's interval t = 0 ... 3 s.  The energy is conserved (E = 12.5 J).

This file only states the model; its tests at tight tolerance are elsewhere (integrator work on
singular positions).
"""

import math

import sympy as sp

from mbsfmu import LagrangianSystem


def model(constraint: str = "nonlinear") -> LagrangianSystem:
    if constraint not in ("nonlinear", "linear"):
        raise ValueError("constraint must be 'nonlinear' (eq. 4.27) or 'linear' (eq. 4.28), "
                         f"got {constraint!r}")
    s = LagrangianSystem("singular_slider_crank", "Slider-crank with equal crank and rod (seed 004 "
                         "sec. 4.5)", dim=2)
    g, = s.constants(g=9.8)
    th1 = s.coordinate("theta1", math.pi / 2, 5.0)
    th2 = s.coordinate("theta2", math.pi / 2, -5.0)
    w1, w2 = s.velocity(th1), s.velocity(th2)
    s.kinetic_energy((2 * w1**2 + 2 * sp.cos(th2 - th1) * w1 * w2 + w2**2) / 2)
    s.potential_energy(g * (2 * sp.cos(th1) + sp.cos(th2)))
    if constraint == "nonlinear":
        s.constraint("slider_line", -sp.cos(th1) - sp.cos(th2))
    else:
        s.constraint("slider_line", th1 + th2 - sp.pi)
    s.output("slider_x", sp.sin(th1) + sp.sin(th2), "slider position [m]")
    return s
