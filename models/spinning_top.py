"""A symmetric spinning top on a fixed point, described by Cardan angles.

The body frame is placed at the fixed point (origin) by R = Rx(alpha) Ry(beta) Rz(gamma); the
symmetry axis is the body z axis and the centre of gravity lies on it at distance h.  The
equations show the gyroscopic terms w x I w that make the top precess instead of falling.
Our choice of data: m = 1 kg, h = 0.1 m, transverse inertia A = 2e-3 kg m^2 and axial inertia
C = 3.5e-3 kg m^2 about the cg, gravity 9.81 m/s^2 along -z.  Initial state: tilted by
alpha = 0.3 rad, spinning at Dgamma = 50 rad/s (Cardan singularity at beta = +-pi/2 is not
approached in this motion).
"""

from mbsfmu import System, cardan


def model() -> System:
    s = System("spinning_top", "Symmetric spinning top (Cardan angles)")
    m, h, A, C, g = s.constants(m=1.0, h=0.1, A=2e-3, C=3.5e-3, g=9.81)
    alpha, beta, gamma = s.coordinates("alpha", "beta", "gamma")
    s.gravity([0, 0, -g])
    s.body("top", ref="ISYS", rel_rot=cardan(alpha, beta, gamma), cg_pos=[0, 0, h], mass=m,
           inertia=[A, A, C])
    s.initial(alpha=0.3, Dgamma=50.0)
    return s
