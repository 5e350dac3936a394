"""A thin disc rolling without slipping on a horizontal plane (seed 004 sec. 4.6, digest P11;
from Neimark and Fufaev): a nonholonomic system.

Coordinates q = (x, y, phi, theta, psi): (x, y) the contact point on the plane, phi the heading
(the direction e_t = (cos phi, sin phi, 0) of the line where the disc touches the plane), theta
the tilt of the disc's plane from the vertical, psi the spin of the disc relative to the frame
(e_t, u, n) that follows heading and tilt.  Radius r, mass m, transverse moment A and axial
moment C about the centre.  The energies are the seed's (its eq. for T, as printed):

    T = m/2 (x'^2 + y'^2 + r^2 theta'^2 + r^2 phi'^2 sin^2 theta)
        - m r [theta' cos theta (x' sin phi - y' cos phi) + phi' sin theta (x' cos phi + y' sin phi)]
        + A/2 (theta'^2 + phi'^2 cos^2 theta) + C/2 (psi' + phi' sin theta)^2,
    V = m g r cos theta,

and rolling without slipping (seed eq. 4.29), two nonholonomic constraints

    x' + r cos phi psi' = 0,     y' + r sin phi psi' = 0.

Check of the printed T (an independent derivation, repeated numerically by
tests/simulation/test_nonholonomic.py): with e_n = e_z x e_t, the centre is G = P + r u with
u = cos theta e_z + sin theta e_n (theta > 0 leans the disc to the left of e_t), the axis is
n = e_t x u, and the angular velocity is w = phi' e_z - theta' e_t + psi' n.  Then
|v_G|^2 = |P'|^2 + r^2 (theta'^2 + phi'^2 sin^2 theta) + 2 r P'.u' gives the first two lines,
w.e_t = -theta', w.u = phi' cos theta and w.n = psi' + phi' sin theta give the last, and the
material point at the contact has velocity v_G + w x (-r u) = P' + r psi' e_t, which vanishes
exactly by the two constraints above.  So the printed T, V and constraints are consistent (with
theta the tilt from the vertical, as the seed says) and are used unchanged.

The seed gives no numbers (r, m, A, C and the initial state are missing or unreadable); our
choices: a thin uniform disc of r = 0.1 m, m = 1 kg, A = m r^2 / 4 = 2.5e-3 kg m^2,
C = m r^2 / 2 = 5e-3 kg m^2, g = 9.81 m/s^2.  Start: x = y = phi = psi = 0, tilted by
theta = 0.2 rad, rolling at psi' = -20 rad/s (2 m/s forward along +x) and turning at
phi' = 0.7 rad/s, close to the steady circle of that tilt and spin (phi' = 0.667 rad/s, radius
about 3 m; the relation is derived in tests/simulation/test_nonholonomic.py), so the disc wobbles gently
about theta = 0.2 and rolls round without falling for as long as we ran it (20 s).  x' and y'
are left to the consistent initialization (they follow from the constraints: x' = 2, y' = 0).
"""

import sympy as sp

from mbsfmu import LagrangianSystem


def model() -> LagrangianSystem:
    s = LagrangianSystem("rolling_disc", "Disc rolling without slipping (seed 004 sec. 4.6)")
    r, m, A, C, g = s.constants(r=0.1, m=1.0, A=2.5e-3, C=5e-3, g=9.81)
    x, y, phi, theta, psi = (s.coordinate(n) for n in ("x", "y", "phi", "theta", "psi"))
    Dx, Dy, Dphi, Dtheta, Dpsi = s.yd
    sin, cos = sp.sin, sp.cos
    s.kinetic_energy(m / 2 * (Dx**2 + Dy**2 + r**2 * Dtheta**2 + r**2 * Dphi**2 * sin(theta)**2)
                     - m * r * (Dtheta * cos(theta) * (Dx * sin(phi) - Dy * cos(phi))
                                + Dphi * sin(theta) * (Dx * cos(phi) + Dy * sin(phi)))
                     + A / 2 * (Dtheta**2 + Dphi**2 * cos(theta)**2)
                     + C / 2 * (Dpsi + Dphi * sin(theta))**2)
    s.potential_energy(m * g * r * cos(theta))
    s.nonholonomic_constraint("roll_x", Dx + r * cos(phi) * Dpsi)
    s.nonholonomic_constraint("roll_y", Dy + r * sin(phi) * Dpsi)
    s.initial(theta=0.2, Dphi=0.7, Dtheta=0.0, Dpsi=-20.0)
    s.initial_guess(Dx=0.0, Dy=0.0)
    return s
