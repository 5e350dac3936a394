"""Slider-crank mechanism modeled from the slider, as in seed 000 §5 (Fig. 2).

Motion in the x-y plane, gravity along -z (so it does not enter the equations).  The slider
(1.0 kg) moves on the x axis at x > 0; the connecting rod (uniform, l = 0.5 m, 0.5 kg,
Izz = m l^2 / 12) is hinged at the slider with the absolute angle ``alpha``; the crank (uniform,
r = 0.15 m, 0.3 kg, Izz = m r^2 / 12, cg at its midpoint) is hinged at the rod's far end with
the angle ``beta`` relative to the rod.  The loop closes where the crank's free end meets the
fixed pivot at the origin (two conditions, x and y).  No drive, no damping: the mechanism
coasts and its energy is conserved.

Initial state (issue #3): crank at 45 degrees from the +x axis (absolute; the crank points
from the pivot to the pin, which is the direction alpha + beta - pi), turning at 2 pi rad/s.
The remaining coordinates and rates are solved by the consistent initialization from the
guesses below.
"""

import math

from mbsfmu import System, rot_z


def model() -> System:
    s = System("slider_crank", "Slider-crank modeled from the slider (seed 000 §5)")
    r, l, m_crank, m_rod, m_slider, g = s.constants(
        r=0.15, l=0.5, m_crank=0.3, m_rod=0.5, m_slider=1.0, g=9.81)
    x, alpha, beta = s.coordinates("x", "alpha", "beta")
    s.gravity([0, 0, -g])
    s.body("slider", rel_pos=[x, 0, 0], mass=m_slider, inertia=[0, 0, 0])
    J_rod = m_rod * l**2 / 12
    s.body("rod", ref="slider", rel_rot=rot_z(alpha), cg_pos=[l / 2, 0, 0], mass=m_rod,
           inertia=[0, J_rod, J_rod])
    s.frame("rod_end", ref="rod", pos=[l, 0, 0])
    J_crank = m_crank * r**2 / 12
    s.body("crank", ref="rod_end", rel_rot=rot_z(beta), cg_pos=[r / 2, 0, 0], mass=m_crank,
           inertia=[0, J_crank, J_crank])
    s.frame("crank_end", ref="crank", pos=[r, 0, 0])
    s.loop("pivot", "ISYS", "crank_end", translations="xy")
    s.initial_condition("crank_angle", alpha + beta - math.pi, math.pi / 4, rate=2 * math.pi)
    s.initial_guess(x=0.6, alpha=2.9, beta=1.0, Dx=0.0, Dalpha=0.0, Dbeta=0.0)
    # FMU outputs: the crank pin's position and the reaction force at the fixed pivot
    s.frame_output("rod_end", prefix="pin")
    s.reaction_outputs()
    return s
