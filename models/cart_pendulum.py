"""Cart on a rail with an inverted pendulum hinged on it; input force ``F`` on the cart.

Our choice of data (the seeds give none): cart mass mc = 1.0 kg moving along x, pendulum a
uniform rod of mass m = 0.1 kg and length 2 l with l = 0.5 m (cg at distance l from the hinge,
inertia m (2l)^2 / 12 about the cg for rotation about y), gravity g = 9.81 m/s^2 along -z,
viscous cart friction d = 0 N s/m by default (so that the free model conserves energy).
Coordinates: ``x`` (cart position) and ``theta`` (pendulum angle from the upright, positive
tipping the rod towards +x).  Initial state theta = 0.1 rad, at rest.
"""

from mbsfmu import System, rot_y


def model() -> System:
    s = System("cart_pendulum", "Cart with inverted pendulum")
    mc, m, l, g, d = s.constants(mc=1.0, m=0.1, l=0.5, g=9.81, d=0.0)
    x, theta = s.coordinates("x", "theta")
    F = s.input("F", 0.0)
    s.gravity([0, 0, -g])
    s.body("cart", ref="ISYS", rel_pos=[x, 0, 0], mass=mc, inertia=[0, 0, 0])
    J = m * (2 * l) ** 2 / 12
    s.body("rod", ref="cart", rel_rot=rot_y(theta), cg_pos=[0, 0, l], mass=m,
           inertia=[J, J, 0])
    s.force("drive", "cart", [F, 0, 0])
    s.generalized_force("friction", "x", -d * s.coordinates_["x"].velocity)
    s.initial(theta=0.1)
    # FMU outputs besides the coordinates: where the rod's centre is, and the power the drive
    # force puts in (an input times a rate: a direct feed-through output)
    s.frame_output("rod_cg", prefix="rod_centre")
    s.output("drive_power", F * s.coordinates_["x"].velocity, "power of the drive force F [W]")
    return s
