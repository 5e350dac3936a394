"""Double pendulum exactly as in seed 002 §4.1 (Neweul-M2 modeling commands).

Data from the seed: m = 2, L1 = L2 = 1, Ix = 0.01, inertia diag(Ix, 1, 1) about the centre of
gravity, coordinates ``alpha`` and ``phi`` (rotations about x), the cg at [0, 0, -L] in the
body's primary frame, the second pendulum hinged at the first one's cg.  Gravity 9.81 m/s^2
along -z (our choice of the seed's unstated gravity: Neweul-M2's default).  Initial state
alpha = 0.4, phi = 1.5, at rest (seed: ``updateGeo(0,[0.4;1.5])``, ``Dy0 = [0;0]``).
"""

from mbsfmu import System, rot_x


def model() -> System:
    s = System("double_pendulum", "Double Pendulum")
    m, L1, L2, Ix, g = s.constants(m=2.0, L1=1.0, L2=1.0, Ix=0.01, g=9.81)
    alpha, phi = s.coordinates("alpha", "phi")
    s.gravity([0, 0, -g])
    inertia = [[Ix, 0, 0], [0, 1, 0], [0, 0, 1]]
    s.body("P1", ref="ISYS", rel_pos=[0, 0, 0], rel_rot=rot_x(alpha), cg_pos=[0, 0, -L1],
           mass=m, inertia=inertia)
    s.body("P2", ref="P1_cg", rel_pos=[0, 0, 0], rel_rot=rot_x(phi), cg_pos=[0, 0, -L2],
           mass=m, inertia=inertia)
    s.initial(alpha=0.4, phi=1.5)
    return s
