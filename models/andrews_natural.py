"""Andrews' squeezing mechanism of models/andrews.py in natural coordinates.

Same mechanism, data, motor torque, spring and consistent start as the relative-coordinate model
(models/andrews.py: Hairer & Wanner II, ch. VII.7, Fig. 7.1, Table 7.1; the IVP test set's
problem ``andrews``; seed 004 sec. 4.4.1; data in /work/shared/notes/andrews.md).  Motion in the
x-y plane, no gravity, fixed points O = (0, 0) (motor axis), A = (xa, ya), B = (xb, yb),
C = (xc, yc).

Coordinates (seed 003 ch. 2): four moving joint points, eight coordinates,

* ``P``: the pin between K1 and K2;
* ``Ej``: the joint E where K2, K3, K4 and K6 meet (one shared point: the relative model's
  three loop closures at E are here no equations at all; named ``Ej`` because sympy reserves
  ``E`` for Euler's number);
* ``Q``: the pin between K5 and K4;
* ``R``: the pin between K7 and K6.

Each body is a 2D rigid element (``rigid_body``) with two basic points, the first its reference
point; the local coordinates are those of the body frame of models/andrews.py (origin at the
body's pivot, x along the body axis where andrews.py puts lengths on x, -y where it puts them
on -y), so the centres of gravity are andrews.py's ``cg_pos`` unchanged:

========  =============  ====================  ==================  ===========  =======
body      pivot (local   second basic point    centre of gravity   relative     mass,
          (0, 0))        (local coordinates)   (local)             angle        inertia
========  =============  ====================  ==================  ===========  =======
K1        O (fixed)      P at (rr, 0)          (ra, 0)             beta         m1, i1
K2        P              E at (-d, 0)          (-da, 0)            beta+Theta   m2, i2
K3        B (fixed)      E at (0, -ss)         (sa, sb)            gamma        m3, i3
K4        Q              E at (0, -e)          (0, -(e - ea))      Phi+delta    m4, i4
K5        A (fixed)      Q at (zt, 0)          (ta, tb)            delta        m5, i5
K6        R              E at (zf, 0)          (zf - fa, 0)        Omega+eps.   m6, i6
K7        A (fixed)      R at (0, -u)          (ua, ub)            epsilon      m7, i7
========  =============  ====================  ==================  ===========  =======

``i1 .. i7`` are the moments about the centre of gravity and the normal z (andrews.py's Izz,
the only inertia that enters the planar motion).  The rigidity of each element is one distance
(``<body>_e1e1``): |P - O| = rr, |E - P| = d, |E - B| = ss, |E - Q| = e, |Q - A| = zt,
|E - R| = zf, |R - A| = u; seven constraints on eight coordinates, DoF 1 as in andrews.py (seven
angles, six loop conditions).  The mass matrices follow from eq. (2) of
:mod:`mbsfmu.model.natural_coordinates`; for the bodies on fixed pivots only sa^2 + sb^2 etc.
enters, as in andrews.py.

Forces:

* The spring end D is the point (sd, -sc) of K3 (andrews.py).  With e_1 = E - B (local
  E_1 = (0, -ss)) and e_2 = R e_1 (local R E_1 = (ss, 0)), eq. (1) gives
  D = B + (sc/ss) (E - B) + (sd/ss) R (E - B), R the rotation by +90 degrees.  The spring (c0,
  rest length l0, no damping) acts between C and D.
* The motor torque ``mom`` on K1 is the couple F at P, -F at O with
  F = mom R (P - O) / |P - O|^2 (moment (P - O) x F = mom); the force at the fixed O does no
  work, so only F at P enters (virtual work F . dP = mom d beta).

Initial state: andrews.py's consistent angles (the test set's, at rest) turned into points:
P = rr (cos beta, sin beta), E = P - d (cos(beta + Theta), sin(beta + Theta)),
Q = A + zt (cos delta, sin delta), R = A + u (sin epsilon, -cos epsilon), all velocities 0.
P is given (it fixes beta); Ej, Q and R are guesses that the initialization keeps (they satisfy
the constraints to rounding).

Outputs: the joint points ``P``, ``Ej``, ``Q``, ``R`` (``<point>.x``, ``.y``) and the spring end
``D``; in andrews.py these are the origins of the frames ``P``, ``K2_E``, ``K5_pin``, ``K7_pin``
and ``D``.
"""

import math

from mbsfmu import LagrangianSystem
from mbsfmu.model.natural_coordinates import dot, perp

#: Consistent initial angles (models/andrews.py, Hairer-Wanner II VII (7.9), IVP test set).
INITIAL = {
    "beta": -0.0617138900142764496358948458001,
    "Theta": 0.0,
    "gamma": 0.455279819163070380255912382449,
    "Phi": 0.222668390165885884674473185609,
    "delta": 0.487364979543842550225598953530,
    "Omega": -0.222668390165885884674473185609,
    "epsilon": 1.23054744454982119249735015568,
}

DATA = dict(m1=.04325, m2=.00365, m3=.02373, m4=.00706, m5=.07050, m6=.00706, m7=.05498,
            i1=2.194e-6, i2=4.410e-7, i3=5.255e-6, i4=5.667e-7, i5=1.169e-5, i6=5.667e-7,
            i7=1.912e-5,
            xa=-.06934, ya=-.00227, xb=-.03635, yb=.03273, xc=.014, yc=.072, c0=4530,
            d=28e-3, da=115e-4, e=2e-2, ea=1421e-5, rr=7e-3, ra=92e-5, l0=7785e-5,
            ss=35e-3, sa=1874e-5, sb=1043e-5, sc=18e-3, sd=2e-2, ta=2308e-5, tb=916e-5,
            u=4e-2, ua=1228e-5, ub=449e-5, zf=2e-2, zt=4e-2, fa=1421e-5, mom=33e-3)


def initial_points(k=DATA, q=INITIAL):
    """The joint points P, E, Q, R at the consistent start (see the module docstring)."""
    b, bt = q["beta"], q["beta"] + q["Theta"]
    P = (k["rr"] * math.cos(b), k["rr"] * math.sin(b))
    E = (P[0] - k["d"] * math.cos(bt), P[1] - k["d"] * math.sin(bt))
    Q = (k["xa"] + k["zt"] * math.cos(q["delta"]), k["ya"] + k["zt"] * math.sin(q["delta"]))
    R = (k["xa"] + k["u"] * math.sin(q["epsilon"]), k["ya"] - k["u"] * math.cos(q["epsilon"]))
    return P, E, Q, R


def model() -> LagrangianSystem:
    s = LagrangianSystem("andrews_natural",
                         "Andrews' squeezing mechanism in natural coordinates (Hairer-Wanner II, VII.7)",
                         dim=2)
    (m1, m2, m3, m4, m5, m6, m7, i1, i2, i3, i4, i5, i6, i7, xa, ya, xb, yb, xc, yc, c0,
     d, da, e, ea, rr, ra, l0, ss, sa, sb, sc, sd, ta, tb, u, ua, ub, zf, zt, fa, mom) = s.constants(
        **DATA)
    O, A, B, C = [0, 0], [xa, ya], [xb, yb], [xc, yc]
    p0, e0, q0, r0 = initial_points()
    P = s.point("P", initial=p0)
    E = s.point("Ej", initial=e0, guess=True)
    Q = s.point("Q", initial=q0, guess=True)
    R = s.point("R", initial=r0, guess=True)
    # the seven bodies, local coordinates = andrews.py's body frames (table in the docstring)
    s.rigid_body("K1", m1, [(O, [0, 0]), (P, [rr, 0])], cg=[ra, 0], inertia=i1)
    s.rigid_body("K2", m2, [(P, [0, 0]), (E, [-d, 0])], cg=[-da, 0], inertia=i2)
    s.rigid_body("K3", m3, [(B, [0, 0]), (E, [0, -ss])], cg=[sa, sb], inertia=i3)
    s.rigid_body("K4", m4, [(Q, [0, 0]), (E, [0, -e])], cg=[0, -(e - ea)], inertia=i4)
    s.rigid_body("K5", m5, [(A, [0, 0]), (Q, [zt, 0])], cg=[ta, tb], inertia=i5)
    s.rigid_body("K6", m6, [(R, [0, 0]), (E, [zf, 0])], cg=[zf - fa, 0], inertia=i6)
    s.rigid_body("K7", m7, [(A, [0, 0]), (R, [0, -u])], cg=[ua, ub], inertia=i7)
    # the spring end D on K3 (eq. (1) with e_1 = E - B) and the spring from C
    eB = E - s.pv(B)
    D = s.pv(B) + sc / ss * eB + sd / ss * perp(eB)
    s.spring_damper("spring", C, D, stiffness=c0, damping=0, rest_length=l0)
    # the motor torque on K1: the force of the couple at P (the one at O does no work)
    s.point_force("motor", P, mom * perp(P) / dot(P, P))
    for name, point in (("P", P), ("Ej", E), ("Q", Q), ("R", R), ("D", D)):
        s.point_output(name, point)
    return s
