"""The slider-crank of models/slider_crank.py in natural coordinates (seed 003 sec. 5.2 style).

Same mechanism and data as the relative-coordinate model (seed 000 sec. 5): motion in the x-y
plane, crank O P pinned to the ground at the origin (thin uniform rod, r = 0.15 m, 0.3 kg),
connecting rod P B (thin uniform rod, l = 0.5 m, 0.5 kg), slider B (point mass 1.0 kg) on the
x axis at x > 0.  The relative model's gravity acts along -z, normal to the plane of motion, so
it does not enter; this planar model leaves it out (and has no constant g).

Coordinates (seed 003 ch. 2): the crank pin P = (P_x, P_y) and the slider B = (B_x, B_y), four
coordinates.  Constraints: the rod lengths |P|^2 - r^2 = 0 and |B - P|^2 - l^2 = 0 (sec. 2.5),
and a prismatic joint between the ground and the slider (B on the line through O along x:
(B - O) x e_x = 0, i.e. B_y = 0); the seed instead drops B_y from the coordinates.  DoF 1.
The thin-rod T (m/6 (A'^2 + A'.B' + B'^2)) is the relative model's uniform bar with
Izz = m L^2 / 12 exactly.

Initial state as in models/slider_crank.py (issue #3): crank at 45 degrees from +x, turning at
2 pi rad/s, i.e. P = r (cos 45, sin 45), P' = 2 pi r (-sin 45, cos 45); B and B' follow from the
constraints (computed here from the default r and l; they are starting guesses, so other values
of r and l are made consistent by the initialization).
"""

import math

from mbsfmu import LagrangianSystem


def model() -> LagrangianSystem:
    s = LagrangianSystem("slider_crank_natural", "Slider-crank in natural coordinates", dim=2)
    r0, l0 = 0.15, 0.5
    r, l, m_crank, m_rod, m_slider = s.constants(r=r0, l=l0, m_crank=0.3, m_rod=0.5, m_slider=1.0)
    c = math.cos(math.pi / 4)
    px, py = r0 * c, r0 * c
    vx, vy = -2 * math.pi * r0 * c, 2 * math.pi * r0 * c
    bx = px + math.sqrt(l0**2 - py**2)
    vb = vx + py * vy / (px - bx)  # (P - B).(P' - B') = 0 with B' = (vb, 0)
    P = s.point("P", initial=(px, py), velocity=(vx, vy))
    B = s.point("B", initial=(bx, 0.0), velocity=(vb, 0.0), guess=True)
    s.rod("crank", [0, 0], P, m_crank, length=r)
    s.rod("rod", P, B, m_rod, length=l)
    s.point_mass("slider", B, m_slider)
    s.prismatic("guide", [0, 0], [1, 0], B)
    # FMU outputs as in the relative model: the crank pin's position, the reactions
    s.point_output("pin", P)
    s.reaction_outputs()
    return s
