"""A small model shared by the compiled-backend tests."""

import sympy as sp

from mbsfmu import System, rot_z


def shaker() -> System:
    """A pendulum on a pivot driven along x by a time parameter (exercises the tp argument)."""
    s = System("shaker")
    a, w, m, l, g = s.constants(a=0.1, w=3.0, m=0.7, l=0.4, g=9.81)
    (phi,) = s.coordinates("phi")
    p = s.time_parameter("p", a * s.t**3 * sp.sin(w * s.t))
    s.gravity([0, -g, 0])
    s.frame("pivot", ref="ISYS", pos=[p, 0, 0])
    s.body("bob", ref="pivot", rel_rot=rot_z(phi), cg_pos=[l, 0, 0], mass=m,
           inertia=[0, m * l**2 / 12, m * l**2 / 12])
    return s
