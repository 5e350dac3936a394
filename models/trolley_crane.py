"""Trolley crane: a trolley on a straight rail driven by a force ``F``, a load hanging from it on
a rigid, massless rope; the load is a point mass.  A planar overhead crane (issue 28).

Our choice of data (the seeds give none): trolley mass M = ``trolley_mass`` = 20 kg moving along
x, load mass m = ``load_mass`` = 50 kg at the rope's end, rope length L = ``rope_length`` = 2 m
from the trolley's hinge to the load, gravity g = 9.81 m/s^2 along -z, viscous rail friction
d = ``rail_friction`` = 0 N s/m by default (so that the free model conserves energy).
Coordinates: ``x`` (trolley position) and ``theta`` (rope angle from the vertical, positive
swinging the load towards +x: the load is at (x + L sin theta, 0, -L cos theta)).  The FMU's
outputs are the coordinates and their rates (``x``, ``theta``, ``der(x)``, ``der(theta)``), the
load's position ``load.x/.y/.z`` and the power of the drive force.

Equations of motion (Lagrange, for checking):

    (M + m) x'' + m L cos(theta) theta'' - m L sin(theta) theta'^2 = F - d x'
    m L cos(theta) x'' + m L^2 theta'' + m g L sin(theta) = 0

With the trolley free (F = 0, d = 0) the small swings have the angular frequency
omega^2 = g (M + m) / (M L): the trolley moves against the load.  Initial state theta = 0.05 rad,
at rest.
"""

from mbsfmu import System, rot_y


def model() -> System:
    s = System("trolley_crane", "Trolley crane with a load on a rigid rope")
    M = s.constant("trolley_mass", 20.0, "mass of the trolley [kg]", min=0.0)
    m = s.constant("load_mass", 50.0, "mass of the load at the rope's end [kg]", min=0.0)
    L = s.constant("rope_length", 2.0, "length of the rope from the trolley's hinge to the load [m]", min=0.0)
    g = s.constant("g", 9.81, "gravity along -z [m/s^2]")
    d = s.constant("rail_friction", 0.0, "viscous friction of the trolley on its rail [N s/m]", min=0.0)
    x, theta = s.coordinates("x", "theta")
    F = s.input("F", 0.0)
    s.gravity([0, 0, -g])
    s.body("trolley", ref="ISYS", rel_pos=[x, 0, 0], mass=M, inertia=[0, 0, 0])
    # rot_y(-theta) turns the hanging rope's -z towards +x for theta > 0
    s.body("load", ref="trolley", rel_rot=rot_y(-theta), cg_pos=[0, 0, -L], mass=m,
           inertia=[0, 0, 0])
    s.force("drive", "trolley", [F, 0, 0])
    s.generalized_force("rail_friction", "x", -d * s.coordinates_["x"].velocity)
    s.initial(theta=0.05)
    s.frame_output("load_cg", prefix="load")
    s.output("drive_power", F * s.coordinates_["x"].velocity, "power of the drive force F [W]")
    return s
