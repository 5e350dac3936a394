"""The planar two-link manipulator of seed 004 sec. 4.4.3 whose tip follows a prescribed path.

Two uniform links (mass m, length l, moment m l^2/12 about the centre of gravity) in the
vertical x-y plane, gravity -y; link 1 turns about the origin by the absolute angle ``theta1``
(from +x), link 2 is hinged at its end by the angle ``theta2`` relative to link 1.  The tip
(x2, y2) = (l c1 + l c12, l s1 + l s12) is held on a path by one constraint, whose Lagrange
multiplier is a reaction output: the joint torques that make the tip follow the path are
tau = C^T lambda (C = dc/dtheta, M theta'' + k = q + C^T lambda), i.e.
tau_1 = lambda dc/dtheta1 and tau_2 = lambda dc/dtheta2 (lambda comes from the equations of
motion, so the torques are computed from it rather than declared as expression outputs).  The
FMU has the output ``reaction.path`` (lambda) and the tip's position ``tip.x``, ``tip.y``;
``Result.multipliers()['path']`` gives lambda in simulate.

* ``case='I'``: the tip on the parabola y2 = x2^2 - beta (seed 004: y2 = b1 x2^2 + b2 with
  b1 = 1, b2 = -beta), beta chosen for consistency: beta = x2(0)^2 = (2 cos 70 deg)^2 = 0.467911;
  t = 0 ... 10 s.
* ``case='II'``: the tip height prescribed, y2 = sin^2(omega t) (4.26), omega = 0.5 rad/s.

Data (seed 004): l1 = l2 = 1 m, g = 9.81 m/s^2, theta1(0) = 70 deg, theta2(0) = -140 deg, at
rest (consistent for both cases: x2(0) = 2 cos 70 deg, y2(0) = 0, and the path's slope is 0 at
the start of case II).  The mass matrix and forces of this model are the seed's (uniform
links: m1 l1^2/3 + m2 (l1^2 + l2^2/3 + l1 l2 c2) etc.).

Choices where the seed is unreadable or silent:

* m1 = m2 = 30 kg: the seed's OCR prints "3Q kg"; we read the Q as a 0 (the usual OCR
  confusion of O and 0; 36 kg is the other reading).  Masses scale the multiplier, not the motion.
* Case II: omega = 0.5 rad/s (the seed's plots), t = 0 ... 2 s (its Fig. 4.19's time axis; the
  end time is not stated).
"""

import math

import sympy as sp

from mbsfmu import System, rot_z

CASES = ("I", "II")


def model(case: str = "I", omega: float = 0.5) -> System:
    if case not in CASES:
        raise ValueError(f"case must be 'I' or 'II', got {case!r}")
    s = System(f"two_link_arm_{case}", f"Two-link arm with prescribed tip path, case {case} (seed 004 "
               "sec. 4.4.3)")
    m1, m2, l1, l2, g = s.constants(m1=30.0, m2=30.0, l1=1.0, l2=1.0, g=9.81)
    th1, th2 = s.coordinates("theta1", "theta2")
    s.gravity([0, -g, 0])

    def link(m, L):
        J = m * L**2 / 12
        return {"mass": m, "inertia": [0, J, J], "cg_pos": [L / 2, 0, 0]}

    s.body("link1", rel_rot=rot_z(th1), **link(m1, l1))
    s.frame("elbow", ref="link1", pos=[l1, 0, 0])
    s.body("link2", ref="elbow", rel_rot=rot_z(th2), **link(m2, l2))
    s.frame("tip", ref="link2", pos=[l2, 0, 0])
    x2 = l1 * sp.cos(th1) + l2 * sp.cos(th1 + th2)
    y2 = l1 * sp.sin(th1) + l2 * sp.sin(th1 + th2)
    if case == "I":
        beta = s.constant("beta", (2 * math.cos(math.radians(70))) ** 2, "parabola offset [m]")
        s.constraint("path", y2 - x2**2 + beta)
    else:
        w = s.constant("omega", omega, "frequency of the prescribed height [rad/s]")
        s.constraint("path", y2 - sp.sin(w * s.t) ** 2)
    s.initial(theta1=math.radians(70), theta2=math.radians(-140), Dtheta1=0.0, Dtheta2=0.0)
    s.frame_output("tip", prefix="tip")
    s.reaction_outputs()
    return s
