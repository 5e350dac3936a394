"""A planar four-bar linkage under gravity that passes near a singular (change-point) position.

Ground pivots A = (0, 0) and D = (d, 0); crank AB (length a), coupler BC (length b), rocker DC
(length c), all uniform bars moving in the x-y plane with gravity along -y.  Our choice of
data: a = 0.2 m, b = 0.45 m, c = 0.5 m, d = 0.26 m, so a + c = 0.70 m is within 1 cm of
b + d = 0.71 m: near the change-point condition, the crank and the rocker become nearly
collinear with the coupler/ground once per revolution, where C loses rank almost completely and
every fixed choice of independent coordinates becomes ill-conditioned.  Masses 1.0, 2.0,
2.2 kg (about 4.5 kg/m).

Coordinates: ``phi1`` (crank angle, absolute), ``phi2`` (coupler angle relative to the
crank), ``phi3`` (rocker angle, absolute).  The loop closes where the coupler's end meets the
rocker's end.  ``model(closure='3d')`` closes the loop in all three directions x, y, z: the
z condition is then identically redundant (a planar four-bar closed in 3D), which the 'qr' and
'svd' formulations handle and the others report.
"""

from mbsfmu import System, rot_z


def model(closure: str = "planar") -> System:
    s = System("four_bar", "Planar four-bar near a change point")
    a, b, c, d, ma, mb, mc, g = s.constants(a=0.2, b=0.45, c=0.5, d=0.26, ma=1.0, mb=2.0,
                                            mc=2.2, g=9.81)
    phi1, phi2, phi3 = s.coordinates("phi1", "phi2", "phi3")
    s.gravity([0, -g, 0])

    def bar(m, L):
        J = m * L**2 / 12
        return {"mass": m, "inertia": [0, J, J], "cg_pos": [L / 2, 0, 0]}

    s.body("crank", rel_rot=rot_z(phi1), **bar(ma, a))
    s.frame("B", ref="crank", pos=[a, 0, 0])
    s.body("coupler", ref="B", rel_rot=rot_z(phi2), **bar(mb, b))
    s.frame("C_coupler", ref="coupler", pos=[b, 0, 0])
    s.body("rocker", rel_pos=[d, 0, 0], rel_rot=rot_z(phi3), **bar(mc, c))
    s.frame("C_rocker", ref="rocker", pos=[c, 0, 0])
    if closure not in ("planar", "3d"):
        raise ValueError(f"closure must be 'planar' or '3d', got {closure!r}")
    s.loop("joint_C", "C_coupler", "C_rocker", translations="xy" if closure == "planar" else "xyz",
           in_frame="ISYS")
    # start with the crank at 60 degrees, released from rest; the rest follows from c = 0
    s.initial(phi1=1.0471975511965976)
    s.initial_guess(phi2=0.9, phi3=1.9)
    return s
