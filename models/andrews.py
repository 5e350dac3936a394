"""Andrews' squeezing mechanism: seven planar rigid bodies, three closed loops, one degree of freedom.

Sources: Hairer & Wanner, *Solving Ordinary Differential Equations II*, ch. VII.7 (Fig. 7.1,
Table 7.1, eqs. 7.4-7.9), the problem ``andrews`` of the IVP test set (Mazzia et al.,
``andrews.f``, revision 1.2 2006/10/02; M(q), f(q, q'), g(q) and G(q) written out there) and
seed 004 §4.4.1 (the test problem of RKSTAB).  Parameters, consistent initial values and
accelerations/multipliers at t = 0 are those of ``/work/shared/notes/andrews.md`` (= the test set's).

Geometry (SI units, motion in the x-y plane of ISYS, no gravity), with O = (0, 0) the motor axis
and the fixed points A = (xa, ya), B = (xb, yb), C = (xc, yc):

* ``K1`` turns about O by the absolute angle ``beta``; cg at ``ra`` on its axis; the pin P to K2
  at ``rr`` on its axis.  The motor torque ``mom`` acts on K1.
* ``K2`` is hinged at P with the angle ``Theta`` relative to K1 (absolute beta + Theta); its cg
  is at ``-da`` and the joint point E at ``-d`` along its axis.
* ``K3`` turns about B by the absolute angle ``gamma``; its joint point at ``ss`` along its -y
  axis, i.e. B + ss (sin gamma, -cos gamma); the spring end D at (sd, -sc) in K3, the cg at
  (sa, sb).  A linear spring (c0, rest length l0, no damping) acts between C and D.
* ``K5`` turns about A by the absolute angle ``delta``; cg at (ta, tb); the pin to K4 at ``zt``
  on its axis.  ``K4`` is hinged there with the angle ``Phi`` relative to K5 (absolute
  Phi + delta); joint point at ``e`` and cg at ``e - ea`` along its -y axis.
* ``K7`` turns about A by the absolute angle ``epsilon``; cg at (ua, ub); the pin to K6 at ``u``
  along its -y axis.  ``K6`` is hinged there with the angle ``Omega`` relative to K7 (absolute
  Omega + epsilon); joint point at ``zf`` and cg at ``zf - fa`` on its axis.

Three loop closures (``s.loop``, x and y in ISYS components) join the joint point E of K2 with
the joint points of K3, K4 and K6.  Each loop goes from E on K2 (frame a) to the point of K3, K4
or K6 (frame b), so c = r_b - r_a is the test set's g(q) (g1, g2 for K3, g3, g4 for K4, g5, g6
for K6) with the sign flipped, C = -G.  mbsfmu writes M y'' + k = q + C^T lambda, the test set
M q'' = f - G^T lambda, so the two sign flips cancel: our multipliers equal the test set's
lambda_1 .. lambda_6 in this order (``Result.multipliers()`` keys)
``loop_K3.x, loop_K3.y, loop_K4.x, loop_K4.y, loop_K6.x, loop_K6.y``; each is the x or y
component (ISYS) of the joint force that K2 exerts on K3, K4 or K6 at E.

Our choices (the planar data fix only what enters the equations):

* Inertias: the tables give the moment ``i1 .. i7`` about the cg and the normal z.  We use the
  principal inertias [i/2, i/2, i] (a thin plate, the triangle inequality holds with equality);
  only Izz = i enters the planar motion.
* The cg directions of K3, K5 and K7 ((sa, sb), (ta, tb), (ua, ub) placed along x, y of the body
  frame) do not matter: these bodies turn about fixed pivots, so only sa^2 + sb^2 etc. enters.
* Point names: E is a point of four bodies (the joint of K2 with K3, K4 and K6), so each body's
  copy is a frame of its own: ``K2_E``, ``K3_E``, ``K4_E``, ``K6_E``.

Initial state: the test set's consistent values (at rest).  The model's coordinates start there
exactly; the consistent initialization of ``simulate`` keeps them (residual ~1e-17).
"""

from mbsfmu import System, rot_z

#: Consistent initial positions (Hairer-Wanner II, VII (7.9); IVP test set ``andrews.f``).
INITIAL = {
    "beta": -0.0617138900142764496358948458001,
    "Theta": 0.0,
    "gamma": 0.455279819163070380255912382449,
    "Phi": 0.222668390165885884674473185609,
    "delta": 0.487364979543842550225598953530,
    "Omega": -0.222668390165885884674473185609,
    "epsilon": 1.23054744454982119249735015568,
}

#: Accelerations and multipliers at t = 0 (IVP test set ``andrews.f``, initial values y(15..27)).
ACCELERATIONS_T0 = {"beta": 14222.4439199541138705911625887,
                    "Theta": -10666.8329399655854029433719415,
                    "gamma": 0.0, "Phi": 0.0, "delta": 0.0, "Omega": 0.0, "epsilon": 0.0}
MULTIPLIERS_T0 = (98.5668703962410896057654982170, -6.12268834425566265503114393122,
                  0.0, 0.0, 0.0, 0.0)

#: Reference positions at t = 0.03 (IVP test set ``andrews.f``, routine ``andsoln``: PSIDE with
#: rtol = atol = 1e-14, Cray C90 double precision).
REFERENCE_T003 = {
    "beta": 0.1581077119629904e2,
    "Theta": -0.1575637105984298e2,
    "gamma": 0.4082224013073101e-1,
    "Phi": -0.5347301163226948,
    "delta": 0.5244099658805304,
    "Omega": 0.5347301163226948,
    "epsilon": 0.1048080741042263e1,
}


def model() -> System:
    s = System("andrews", "Andrews' squeezing mechanism (Hairer-Wanner II, VII.7)")
    (m1, m2, m3, m4, m5, m6, m7, i1, i2, i3, i4, i5, i6, i7, xa, ya, xb, yb, xc, yc, c0,
     d, da, e, ea, rr, ra, l0, ss, sa, sb, sc, sd, ta, tb, u, ua, ub, zf, zt, fa, mom) = s.constants(
        m1=.04325, m2=.00365, m3=.02373, m4=.00706, m5=.07050, m6=.00706, m7=.05498,
        i1=2.194e-6, i2=4.410e-7, i3=5.255e-6, i4=5.667e-7, i5=1.169e-5, i6=5.667e-7,
        i7=1.912e-5,
        xa=-.06934, ya=-.00227, xb=-.03635, yb=.03273, xc=.014, yc=.072, c0=4530,
        d=28e-3, da=115e-4, e=2e-2, ea=1421e-5, rr=7e-3, ra=92e-5, l0=7785e-5,
        ss=35e-3, sa=1874e-5, sb=1043e-5, sc=18e-3, sd=2e-2, ta=2308e-5, tb=916e-5,
        u=4e-2, ua=1228e-5, ub=449e-5, zf=2e-2, zt=4e-2, fa=1421e-5, mom=33e-3)
    beta, Theta, gamma, Phi, delta, Omega, epsilon = s.coordinates(
        "beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon")

    def plate(i):
        """Principal inertias of a planar body with moment i about the normal (our choice)."""
        return [i / 2, i / 2, i]

    # driven crank K1 and the rod K2 that carries the common joint point E
    s.body("K1", rel_rot=rot_z(beta), cg_pos=[ra, 0, 0], mass=m1, inertia=plate(i1))
    s.frame("P", ref="K1", pos=[rr, 0, 0])
    s.body("K2", ref="P", rel_rot=rot_z(Theta), cg_pos=[-da, 0, 0], mass=m2, inertia=plate(i2))
    s.frame("K2_E", ref="K2", pos=[-d, 0, 0])
    # K3 about B, with the spring end D
    s.body("K3", rel_pos=[xb, yb, 0], rel_rot=rot_z(gamma), cg_pos=[sa, sb, 0], mass=m3,
           inertia=plate(i3))
    s.frame("K3_E", ref="K3", pos=[0, -ss, 0])
    s.frame("D", ref="K3", pos=[sd, -sc, 0])
    # K5 about A, K4 hinged on K5
    s.body("K5", rel_pos=[xa, ya, 0], rel_rot=rot_z(delta), cg_pos=[ta, tb, 0], mass=m5,
           inertia=plate(i5))
    s.frame("K5_pin", ref="K5", pos=[zt, 0, 0])
    s.body("K4", ref="K5_pin", rel_rot=rot_z(Phi), cg_pos=[0, -(e - ea), 0], mass=m4,
           inertia=plate(i4))
    s.frame("K4_E", ref="K4", pos=[0, -e, 0])
    # K7 about A, K6 hinged on K7
    s.body("K7", rel_pos=[xa, ya, 0], rel_rot=rot_z(epsilon), cg_pos=[ua, ub, 0], mass=m7,
           inertia=plate(i7))
    s.frame("K7_pin", ref="K7", pos=[0, -u, 0])
    s.body("K6", ref="K7_pin", rel_rot=rot_z(Omega), cg_pos=[zf - fa, 0, 0], mass=m6,
           inertia=plate(i6))
    s.frame("K6_E", ref="K6", pos=[zf, 0, 0])
    # forces: motor torque on K1, spring between the fixed point C and D on K3
    s.torque("motor", "K1", [0, 0, mom], in_frame="ISYS")
    s.frame("C", pos=[xc, yc, 0])
    s.spring_damper("spring", "C", "D", stiffness=c0, damping=0, rest_length=l0)
    # the three loops meeting at E (order and sign: see the module docstring)
    for body in ("K3", "K4", "K6"):
        s.loop(f"loop_{body}", "K2_E", f"{body}_E", translations="xy", in_frame="ISYS")
    s.initial(**INITIAL)
    return s
