"""The copy machine of seed 003 sec. 5.3 (and its Appendix A code) in natural coordinates.

A planar mechanism, y up, gravity -y.  A uniform rod O B (mass m1, length l) is pinned to the
ground at O = (0, 0); a spring k1 (rest length l/3) joins its point A = (a / l) B, a = 0.7 l, to
the fixed point D = (a, l/3); a box C (point mass m2) slides on the vertical line x = l; a spring
k2 (rest length l/2) joins B and C, and a damper c2 joins C to the fixed point E = (l, -2 l).

Coordinates (seed 003): q = (B_x, B_y, C_y), with the rod length |B|^2 - l^2 = 0 as the only
constraint: DoF 2.  The seed's extra state theta (the rod angle, integrated from
theta' = (B_x B_y' - B_y B_x') / l^2) is not a coordinate here; the output ``theta`` gives it
as atan2(B_y, B_x) (the same angle while the rod does not turn past +-pi).

Data (seed 003 Table 5.10 and the Appendix A code): m1 = m2 = 1 kg, l = 1 m, w = h = 0.02 m,
k1 = k2 = 100 N/m, c2 = 50 N s/m, g = 9.81 m/s^2; D and E from the code only.  Initial state:
B = (1, 0), C_y = -0.5, at rest (both springs at their rest lengths; gravity starts the motion).
t = 0 ... 10 s.

Choices where the seed is ambiguous or wrong:

* Kinetic energy of the rod.  The printed eq. 5.3.2 has 1/2 m1 |B'|^2 + 1/2 I1 theta'^2 with
  I1 = m1 (l^2 + h^2)/12 "about the WF origin", which is neither the energy about the centre of
  gravity nor about O.  We use what the Appendix A code computes (``rigidBodyKE`` with the
  centroid (l/2, 0)): T = 1/2 m1 |B'/2|^2 + 1/2 I1 theta'^2 with I1 = m1 (l^2 + w^2)/12 about
  the centre of gravity (w = h, so the number is the seed's I1).  This is the correct energy of
  a rod of square section pinned at its end.
* The damper: the seed's R = 1/2 c2 |C'|^2 equals the line-of-sight damper between C and E
  because E is directly below C; we use the line-of-sight element (R = 1/2 c2 L'^2).
* Spring natural length l/3 (the code's value; Table 5.10 prints 0.33).
"""

import sympy as sp

from mbsfmu import LagrangianSystem


def model() -> LagrangianSystem:
    s = LagrangianSystem("copy_machine", "Copy machine in natural coordinates (seed 003 sec. 5.3)", dim=2)
    m1, m2, l, w, k1, k2, c2, g = s.constants(m1=1.0, m2=1.0, l=1.0, w=0.02, k1=100.0, k2=100.0,
                                              c2=50.0, g=9.81)
    s.gravity([0, -g])
    a = 7 * l / 10
    B = s.point("B", initial=(1.0, 0.0))
    Cy = s.coordinate("C_y", -0.5, 0.0)
    C = sp.Matrix([l, Cy])
    # the rod O B: points O (local origin) and B (local (l, 0)), cg at (l/2, 0); |B|^2 = l^2
    s.rigid_body("rod", m1, points=[([0, 0], [0, 0]), (B, [l, 0])], cg=[l / 2, 0],
                 inertia=m1 * (l**2 + w**2) / 12)
    s.point_mass("box", C, m2)
    s.spring_damper("spring_AD", a / l * B, [a, l / 3], stiffness=k1, rest_length=l / 3)
    s.spring_damper("spring_BC", B, C, stiffness=k2, rest_length=l / 2)
    s.spring_damper("damper_CE", C, [l, -2 * l], damping=c2)
    s.output("theta", sp.atan2(B[1], B[0]), "rod angle from +x [rad]")
    return s
