"""The slider-crank with a translational spring-damper-actuator (TSDA) of seed 004 sec. 4.4.4
(P9, from Yen & Petzold), in the seed's absolute coordinates.

Four bodies: GROUND (1), CRANK (2), ROD (3), SLIDER (4), each with the position (x_i, y_i) of
its centre of gravity and its angle theta_i; the ground is fixed at x1 = y1 = theta1 = 0 (the
seed's g1 ... g3), so the coordinates are the other nine and the mass matrix is the constant
diag(m2, m2, J2, m3, m3, J3, m4, m4, J4).  The remaining constraints, as the seed prints them:

    g4, g5   x1 - x2 + cos theta2 = 0, y1 - y2 + sin theta2 = 0   (crank pivot at the origin,
             1 m behind the crank's centre of gravity)
    g6, g7   x2 + 2 cos theta2 - x3 + 2.5 cos theta3 = 0, same in y   (crank pin, 2 m ahead of
             the crank's centre of gravity, = the rod's end 2.5 m behind its centre of gravity)
    g8, g9   x3 + 2.5 cos theta3 - x4 = 0, same in y   (rod's other end = slider)
    g10      (x1 - x4) sin theta1 - (y1 - y4) cos theta1 = 0   (slider on the ground's x axis)
    g11      cos theta1 sin theta4 - sin theta1 cos theta4 = 0   (slider does not turn)

so the crank is 3 m long, the rod 5 m, and the mechanism has one degree of freedom.  Forces: a
constant torque 100 N m on the crank, gravity (-y), and the TSDA between the ground point
(x1 + 12 cos theta1, y1 + 12 sin theta1) = (12, 0) and the slider point
(x4 + 2 cos theta4, y4 + 2 sin theta4): f = k (l - l0) + c l' with free length l0 = 10 m,
c = 10 N s/m, k = 1000 N/m (``model(k=10000)`` for the stiffer case of the seed's Figs 4.24/4.25),
no actuator force.  t = 0 ... 0.5 s.

Choices (the seed gives no masses, inertias or initial values):

* Masses and moments: crank m2 = 2 kg, J2 = 1.5 kg m^2; rod m3 = 5 kg, J3 = 5 * 5^2/12
  = 10.4167 kg m^2 (a uniform 5 m bar); slider m4 = 2 kg, J4 = 0.1 kg m^2 (it does not turn).
* The crank's geometry as printed (pivot 1 m and pin 2 m from its centre of gravity); the
  seed's digest notes the OCR of these constraints was not checked against the source.
* Initial state: the crank upright (theta2 = pi/2: pivot (0, 0), pin (0, 3)), the slider at
  x4 = 4 (rod from (0, 3) to (4, 0), theta3 = atan2(-3, 4)), at rest.  The TSDA starts at
  l = 6 m, compressed by 4 m.
* g = 9.81 m/s^2.

The mechanism is not conservative (torque and damper); its energy balance
E(t) - E(0) = int (100 theta2' - c l'^2) dt is the test's invariant.
"""

import math

import sympy as sp

from mbsfmu import LagrangianSystem

TORQUE = 100.0


def model(k: float = 1000.0) -> LagrangianSystem:
    s = LagrangianSystem("slider_crank_tsda", "Slider-crank with a spring-damper-actuator (seed 004 "
                         "sec. 4.4.4)", dim=2)
    m2, J2, m3, J3, m4, J4, kk, c, l0, g = s.constants(
        m2=2.0, J2=1.5, m3=5.0, J3=5.0 * 25.0 / 12, m4=2.0, J4=0.1, k=float(k), c=10.0, l0=10.0, g=9.81)
    s.gravity([0, -g])
    th3_0 = math.atan2(-3.0, 4.0)
    x2, y2, th2 = (s.coordinate(n, v) for n, v in (("x2", 0.0), ("y2", 1.0), ("theta2", math.pi / 2)))
    x3, y3, th3 = (s.coordinate(n, v) for n, v in (("x3", 2.0), ("y3", 1.5), ("theta3", th3_0)))
    x4, y4, th4 = (s.coordinate(n, v) for n, v in (("x4", 4.0), ("y4", 0.0), ("theta4", 0.0)))
    s.initial(Dx2=0.0, Dy2=0.0, Dtheta2=0.0, Dx3=0.0, Dy3=0.0, Dtheta3=0.0, Dx4=0.0, Dy4=0.0, Dtheta4=0.0)
    x1 = y1 = th1 = 0
    cos, sin = sp.cos, sp.sin
    s.constraint("g4", x1 - x2 + cos(th2))
    s.constraint("g5", y1 - y2 + sin(th2))
    s.constraint("g6", x2 + 2 * cos(th2) - x3 + 2.5 * cos(th3))
    s.constraint("g7", y2 + 2 * sin(th2) - y3 + 2.5 * sin(th3))
    s.constraint("g8", x3 + 2.5 * cos(th3) - x4)
    s.constraint("g9", y3 + 2.5 * sin(th3) - y4)
    s.constraint("g10", (x1 - x4) * sin(th1) - (y1 - y4) * cos(th1))
    s.constraint("g11", cos(th1) * sin(th4) - sin(th1) * cos(th4))
    for name, (x, y, th), m, J in (("crank", (x2, y2, th2), m2, J2), ("rod", (x3, y3, th3), m3, J3),
                                   ("slider", (x4, y4, th4), m4, J4)):
        s.point_mass(name, [x, y], m)
        s.kinetic_energy(J * s.velocity(th) ** 2 / 2, f"{name}_rotation")
    s.generalized_force("crank_torque", "theta2", TORQUE)
    s.spring_damper("tsda", [x1 + 12 * cos(th1), y1 + 12 * sin(th1)], [x4 + 2 * cos(th4), y4 + 2 * sin(th4)],
                    stiffness=kk, damping=c, rest_length=l0)
    return s
