"""The Bricard mechanism of seed 003 sec. 6.1 in natural coordinates (MBS benchmark A04).

Five identical bars (mass m, length l, square cross-section h x h) in a closed chain of six
revolute joints P0 ... P5; P0 = (0, 0, 0) and P5 = (0, 0, l) are fixed with fixed joint axes
("spines") a0 = (0, 1, 0) and a5 = (1, 0, 0).  Grübler's count gives DoF 0; the special axis
directions give one degree of freedom (an overconstrained mechanism).

Coordinates (seed 003): the moving joints P1 ... P4 (12 coordinates).  The spines of the moving
joints are not coordinates; they follow from the bars (eq. 6.1.1):

    u_i = (P_i - P_(i-1)) / l,        a_i = u_i x a_(i-1)   (i = 1 ... 4),

so a_i is fixed in bar i (it is built from the bar's axis and the axis of the joint at its
start).  Constraints (11): the bar lengths |P_i - P_(i-1)|^2 - l^2 = 0 (i = 1 ... 5), every bar
perpendicular to the axis of the joint at its start, a_(i-1) . (P_i - P_(i-1)) = 0 (i = 1 ... 5),
and a5 . (P5 - P4) = 0 at the fixed end.  12 - 11 = 1 degree of freedom: the 11 x 12 Jacobian
has full rank along the motion, so the redundancy of the relative-coordinate model (30
conditions for 30 coordinates) does not appear in this description.

Energy (seed 003): bar i has its centre of gravity at M_i = (P_i + P_(i-1))/2 and the principal
inertia I = m/12 (2 h^2, l^2 + h^2, l^2 + h^2) about its axis u_i and two axes across it.  With
equal transverse moments, 1/2 w^T I w = 1/2 I_t |u_i'|^2 + 1/2 I_a (w . u_i)^2.  The spin
about the bar's axis is read off the bar's frame (u_i, a_(i-1), u_i x a_(i-1)) (seed 003
sec. 1.2: w_x = y' . z; the axis a_(i-1) of the joint at the bar's start is fixed in the bar):
w . u_i = a_(i-1)' . (u_i x a_(i-1)) = u_i . (a_(i-1) x a_(i-1)').  Bars 1 and 5 turn about a
fixed axis across them and have no spin.  So

    T = sum_i [ m/2 |M_i'|^2 + I_t/2 |u_i'|^2 + I_a/2 (u_i . (a_(i-1) x a_(i-1)'))^2 ],
    V = -sum_i m g . M_i.

(This frame uses a_(i-1) where the seed's uses a_i = u_i x a_(i-1); it is the same rigid
frame turned by 90 degrees about u_i, so the energy is the same, with one cross product less
in the expressions and none for bars 1 and 5: the derivation takes 5 s instead of 31 s.)

Data: m = 1 kg, l = 1 m, h = 0.1 m, g = 9.81 m/s^2, released from rest at the seed's Table 6.20
position P1 = (1, 0, 0), P2 = (1, -1, 0), P3 = (1, -1, 1), P4 = (0, -1, 1) (all 11 constraints
hold exactly); t = 0 ... 10 s.

Choices where the seed is ambiguous:

* The cross-section: the seed's data say "d = 0.1 m", its formulas call it h; we take h = 0.1 m
  (the benchmark's 0.1 m square section).
* Gravity direction: the seed writes V = sum m g M_i without a component; its sec. 2.4
  convention is -z, the benchmark's (whose geometry the seed copies) -y.  We use -y (the
  benchmark's) by default; ``model(gravity='z')`` gives the other reading.
* The spine formula divides by l (eq. 6.1.1; Table 6.19 omits it): the same for l = 1.
"""

import sympy as sp

from mbsfmu import LagrangianSystem
from mbsfmu.model.natural_coordinates import dot

START = [(1.0, 0.0, 0.0), (1.0, -1.0, 0.0), (1.0, -1.0, 1.0), (0.0, -1.0, 1.0)]


def model(gravity: str = "y") -> LagrangianSystem:
    if gravity not in ("y", "z"):
        raise ValueError(f"gravity must be 'y' or 'z' (the axis along which it pulls down), got {gravity!r}")
    s = LagrangianSystem("bricard", "Bricard mechanism in natural coordinates (seed 003 sec. 6.1)", dim=3)
    m, l, h, g = s.constants(m=1.0, l=1.0, h=0.1, g=9.81)
    s.gravity([0, -g, 0] if gravity == "y" else [0, 0, -g])
    P = [sp.Matrix([0, 0, 0])]
    P += [s.point(f"P{i}", initial=START[i - 1]) for i in range(1, 5)]
    P.append(sp.Matrix([0, 0, l]))
    a = [sp.Matrix([0, 1, 0])]
    I_axial, I_trans = m * 2 * h**2 / 12, m * (l**2 + h**2) / 12
    for i in range(1, 6):
        d = P[i] - P[i - 1]
        s.constraint(f"bar{i}_length", dot(d, d) - l**2)
        s.constraint(f"bar{i}_normal", dot(a[i - 1], d))
        u = d / l
        Mi = (P[i] + P[i - 1]) / 2
        Md, ud = s.velocity(Mi), s.velocity(u)
        T = m * dot(Md, Md) / 2 + I_trans * dot(ud, ud) / 2
        if 1 < i < 5:  # bars 1 and 5 turn about a fixed axis across them: no spin
            spin = dot(u, a[i - 1].cross(s.velocity(a[i - 1])))
            T += I_axial * spin**2 / 2
        s.kinetic_energy(T, f"bar{i}")
        s.potential_energy(-m * dot(s.gravity_field, Mi), f"bar{i}_weight")
        a.append(u.cross(a[i - 1]))
    s.constraint("end_axis", dot(sp.Matrix([1, 0, 0]), P[5] - P[4]))
    s.point_output("P2", P[2])
    return s
