"""The five-link wheel suspension of seed 003 sec. 6.3 in natural coordinates (after von
Schwerin's benchmark; seed 004 sec. 4.4.2 uses the same mechanism in relative coordinates).

A wheel carrier (mass m_wc, inertia tensor J_wc about its centre of gravity B_T, in axes
parallel to the world frame at the start) is held by five rods i = 1 ... 5 with spherical
joints at the fixed car-body points F_i and at the carrier points P_i.  The tire (mass m_T,
principal inertia J_T = diag(J_a, J_r, J_r) about its centre B, x along the wheel axis B_S B)
turns on a revolute joint of the carrier about that axis.  A primary spring-damper joins the
midpoint P6 of rod 5 to the car-body point F6; a tire spring joins B to the road point R under
it.  Gravity -z.

Coordinates (seed 003): the points G, H, B_T of the wheel carrier and the rim point W of the
tire, 12 in all.  The carrier is a rigid element from the three basic points B_T (origin), G
(on its local x axis) and H (on its local y axis) with the seed's frame R1 = B_T G H
(``rigid_body`` with three points: constraints C1-C3, |G - B_T|^2 = l_x^2,
|H - B_T|^2 = l_y^2, (G - B_T).(H - B_T) = 0).  P_i, B and B_S are points of the carrier
(``body_point``: eq. (1) of :mod:`mbsfmu.model.natural_coordinates`, the seed's
P_i = B_T + Q (P_i0 - B_T0)), E = 2 B - B_S.  The tire is a rigid element from B, E and W
(the seed's R2 = B E W: x toward E, y toward W); its length |E - B| is the carrier's own, so
its only constraints are C4 |W - B|^2 = R0^2 and C5 (W - B).(B - B_S) = 0 (written out with
``rigid=False``: the element's third one, |E - B|^2 = const, would repeat the carrier's
rigidity and be redundant).  The rods: C_(5+i) |P_i - F_i|^2 = l_i^2 (``rod<i>_length``).
10 constraints, DoF 2 (the carrier's travel and the tire's spin), as the seed's Table 6.28.

Energies (seed 003 eqs. 6.3.1-6.3.2): the carrier and the tire by the element formula (the
seed's 1/2 m |C'|^2 + 1/2 w^T J w); rod i turns about F_i, T_i = 1/2 J_i |P_i'|^2 / l_i^2
(w_i = |P_i'| / l_i, J_i about F_i across the rod; no spin about the rod, as the seed): a
``rod`` from F_i to P_i with its moment about the centre J_i - m_i l_i^2 / 4 gives this T, its
weight m_i g (P_iz + F_iz) / 2 and the constraint ``rod<i>_length``.  Primary spring-damper
k_p, c_p, rest length d_p; tire spring k_T, rest length d_T; gravity on carrier and tire.

Data (seed 003 Tables 6.29-6.31; lengths from mm to m): m_wc = 15 kg, J_wc = [[0.3, 0.01,
0.015], [0.01, 0.2, 0.05], [0.015, 0.05, 0.2]] kg m^2; m_T = 12 kg, J_T = diag(1.46, 0.74,
0.74) kg m^2; rods m_i = 2, 2, 4, 1, 3 kg, J_i = 0.03, 0.05, 0.12, 0.06, 0.17 kg m^2;
k_p = 1.4e5 N/m, c_p = 1400 N s/m, d_p = 0.88 m; k_T = 2e6 N/m, d_T = 0.30 m; R0 = 0.3 m;
road R_amp = 0.03 m, R_per = 0.2 s; tire spin w = 100 rad/s; F_i, P_i(0), B_T(0), B(0),
B_S(0) as the seed's tables; g = 9.81 m/s^2.

Choices where the seed is silent or inconsistent (seed 003 notes, "Five-link"):

* l_x = l_y = 0.1 m (not given; G and H only span the carrier's frame: G(0) = B_T(0) +
  (l_x, 0, 0), H(0) = B_T(0) + (0, l_y, 0), as the seed's text requires, not its Table 6.31,
  whose G, H and W rows repeat F1, F2, F3).
* The rod lengths l_i = |P_i(0) - F_i| (223.7, 279.4, 297.9, 419.1, 411.2 mm): the seed's
  rounded 0.22 ... 0.42 m would violate the start by up to 6 mm.
* W(0) = B(0) + R0 n with n the unit vector across the wheel axis in the plane x = 0, upward
  (the seed's row violates |W - B| = R0 and (W - B).(B - B_S) = 0); the tire spins at w about
  the axis B_S -> B, so W'(0) = (R0 w, 0, 0) = (30, 0, 0) m/s as the seed's table says; every
  other rate is 0.
* F6 (not given) = P6(0) + (0, 0, d_p): the primary spring starts at its rest length, vertical.
* The springs have their rest lengths (the seed's V has none) and the road point is
  R = (B_x(0), B_y(0), B_z(0) - d_T + R_amp sin(2 pi t / R_per)) (the seed's R_z starts at
  B_z, i.e. a tire spring of length 0 against its rest length 0.3): the tire starts unloaded.
* The car body is at rest (its speed v is not given and enters nothing else).
* End time (not given): 1 s.

Outputs: ``B_T.x/y/z`` (the carrier's centre, the seed's Fig. 6.23), ``camber`` (the angle of the
wheel axis against the ground plane, degrees) and ``tire_spin``, the tire's angular velocity
about its axis, (z . y') of its frame (seed 003 sec. 1.2): no torque acts about the axis and
the tire is symmetric about it, so it stays w (an invariant the tests check).
"""

import math

import numpy as np
import sympy as sp

from mbsfmu import LagrangianSystem
from mbsfmu.natural import cross, dot

MM = 1e-3
F = np.array([(-64.0, 413.0, 327.0), (-303.0, 432.0, 295.0), (-93.0, 366.0, 4.0),
              (-236.0, 388.0, -109.0), (211.5, 384.5, -100.0)]) * MM
P0 = np.array([(-64.0, 636.0, 345.0), (-117.0, 636.0, 338.0), (-188.0, 647.0, -23.0),
               (-5.0, 737.0, -130.0), (2.5, 737.0, -134.0)]) * MM
BT0 = np.array([-103.0, 463.0, 87.0]) * MM
B0 = np.array([0.0, 768.0, 0.0]) * MM
BS0 = np.array([0.0, 686.0, -1.0]) * MM
ROD_MASS = (2.0, 2.0, 4.0, 1.0, 3.0)
ROD_INERTIA = (0.03, 0.05, 0.12, 0.06, 0.17)
L_XY = 0.1


def model() -> LagrangianSystem:
    s = LagrangianSystem("five_link_natural", "Five-link wheel suspension in natural coordinates "
                         "(seed 003 sec. 6.3)", dim=3)
    m_wc, m_T, J_a, J_r, R0, spin, k_p, c_p, d_p, k_T, d_T, R_amp, R_per, g = s.constants(
        m_wc=15.0, m_T=12.0, J_a=1.46, J_r=0.74, R0=0.3, spin=100.0, k_p=1.4e5, c_p=1400.0,
        d_p=0.88, k_T=2e6, d_T=0.3, R_amp=0.03, R_per=0.2, g=9.81)
    s.gravity([0, 0, -g])

    # the wheel carrier from its three basic points (the seed's R1 = B_T G H)
    BT = s.point("B_T", initial=BT0)
    G = s.point("G", initial=BT0 + (L_XY, 0, 0))
    H = s.point("H", initial=BT0 + (0, L_XY, 0))
    J_wc = [[0.3, 0.01, 0.015], [0.01, 0.2, 0.05], [0.015, 0.05, 0.2]]
    s.rigid_body("carrier", m_wc, points=[(BT, [0, 0, 0]), (G, [L_XY, 0, 0]), (H, [0, L_XY, 0])],
                 inertia=J_wc)

    def on_carrier(p):
        return s.body_point("carrier", list(np.asarray(p) - BT0))

    B, BS = on_carrier(B0), on_carrier(BS0)
    E = 2 * B - BS

    # the tire from B, E and its rim point W (the seed's R2 = B E W)
    axis = (B0 - BS0) / np.linalg.norm(B0 - BS0)
    up = np.array([0.0, -axis[2], axis[1]])          # across the axis, in the plane x = 0
    W0 = B0 + 0.3 * up
    W = s.point("W", initial=W0, velocity=100.0 * 0.3 * np.cross(axis, up))
    a_len = float(np.linalg.norm(B0 - BS0))
    s.rigid_body("tire", m_T, points=[(B, [0, 0, 0]), (E, [a_len, 0, 0]), (W, [0, R0, 0])],
                 inertia=[J_a, J_r, J_r], rigid=False)
    s.distance("rim", W, B, R0)                       # C4
    s.perpendicular("wheel_plane", W - B, B - BS)     # C5

    # the five rods about their car-body joints
    for i in range(5):
        length = float(np.linalg.norm(P0[i] - F[i]))
        # J_i about F_i -> about the centre: J_i - m_i l_i^2 / 4
        s.rod(f"rod{i + 1}", list(F[i]), on_carrier(P0[i]), ROD_MASS[i], length=length,
              inertia=ROD_INERTIA[i] - ROD_MASS[i] * length**2 / 4)

    # primary spring-damper (midpoint of rod 5 to F6) and tire spring (B to the road)
    P6 = (on_carrier(P0[4]) + sp.Matrix(F[4])) / 2
    F6 = (P0[4] + F[4]) / 2 + (0, 0, 0.88)
    s.spring_damper("primary", P6, list(F6), stiffness=k_p, damping=c_p, rest_length=d_p)
    road = [B0[0], B0[1], B0[2] - d_T + R_amp * sp.sin(2 * sp.pi * s.t / R_per)]
    s.spring_damper("tire_spring", B, road, stiffness=k_T, rest_length=d_T)

    s.point_output("B_T", BT)
    u = (B - BS) / a_len
    s.output("camber", sp.asin(u[2] / sp.sqrt(dot(u, u))) * 180 / math.pi,
             "angle of the wheel axis against the ground plane [deg]")
    x = (E - B) / a_len
    y = (W - B) / R0
    s.output("tire_spin", dot(cross(x, y), s.velocity(y)),
             "the tire's angular velocity about its axis, (x . y') of its frame's z [rad/s]")
    return s
