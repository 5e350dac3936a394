"""The planar four-bar near a change point of models/four_bar.py, in natural coordinates.

Same mechanism and data as the relative-coordinate model (models/four_bar.py, our choice of data
there): ground pivots A = (0, 0) and D = (d, 0), crank A B (a = 0.2 m, 1.0 kg), coupler B C
(b = 0.45 m, 2.0 kg), rocker D C (c = 0.5 m, 2.2 kg), uniform bars moving in the x-y plane,
gravity g = 9.81 m/s^2 along -y.  (models/four_bar_natural.py is another mechanism: seed 003's
chain of N parallelograms.)

Coordinates (seed 003 ch. 2): the crank pin B = (B_x, B_y) and the coupler-rocker pin
C = (C_x, C_y), four coordinates; the shared points are the revolute joints.  Constraints: the
three rod lengths |B - A|^2 - a^2, |C - B|^2 - b^2, |C - D|^2 - c^2 (sec. 2.5), DoF 1.  Each bar
is a thin rod, T = m/6 (P'^2 + P'.Q' + Q'^2) (sec. 2.4), which is exactly the relative model's
uniform bar with Izz = m L^2 / 12 about its midpoint; its weight acts at the midpoint.

Initial state as in models/four_bar.py: the crank at phi1 = 60 degrees, released from rest, so
B = a (cos 60, sin 60) with B' = C' = 0.  The relative model's consistent initialization, started
from its guesses phi2 = 0.9, phi3 = 1.9, converges to phi2 = 9.1615... (2.8784 modulo 2 pi),
phi3 = 9.7180... (3.4349): the assembly with C below the ground line, C = (-0.21865, -0.14454)
(the coupler folded back, the rocker pointing left and down).  We compute that same C as the
intersection of the circles |C - B| = b, |C - D| = c on the right of the directed line B -> D
(cross2(C - B, D - B) > 0) from the default data and hand it to the initialization as a guess
(so other data are made consistent there, on the same branch).

Outputs: the coupler's end points ``B.x``, ``B.y`` and ``C.x``, ``C.y`` (the relative model's
frames ``B`` and ``C_coupler``).
"""

import math

from mbsfmu import LagrangianSystem

A0, B0, C0, D0 = 0.2, 0.45, 0.5, 0.26  # default a, b, c, d (models/four_bar.py)
PHI1 = 1.0471975511965976  # crank angle at t = 0 (models/four_bar.py)


def assembled_pins(a=A0, b=B0, c=C0, d=D0, phi1=PHI1):
    """B and C of the start: B on the crank at phi1, C the intersection of the circles about B
    (radius b) and D (radius c) on the right of the line B -> D."""
    bx, by = a * math.cos(phi1), a * math.sin(phi1)
    vx, vy = d - bx, -by
    L = math.hypot(vx, vy)
    x = (b**2 - c**2 + L**2) / (2 * L)  # distance from B along B -> D to the chord
    h = math.sqrt(b**2 - x**2)
    ux, uy = vx / L, vy / L
    return (bx, by), (bx + x * ux + h * uy, by + x * uy - h * ux)


def model() -> LagrangianSystem:
    s = LagrangianSystem("four_bar_change_point_natural",
                         "Planar four-bar near a change point in natural coordinates", dim=2)
    a, b, c, d, ma, mb, mc, g = s.constants(a=A0, b=B0, c=C0, d=D0, ma=1.0, mb=2.0, mc=2.2, g=9.81)
    s.gravity([0, -g])
    (bx, by), (cx, cy) = assembled_pins()
    B = s.point("B", initial=(bx, by))
    C = s.point("C", initial=(cx, cy), guess=True)
    s.rod("crank", [0, 0], B, ma, length=a)
    s.rod("coupler", B, C, mb, length=b)
    s.rod("rocker", [d, 0], C, mc, length=c)
    s.point_output("B", B)
    s.point_output("C", C)
    return s
