"""The stiff flyball governor of seed 003 sec. 6.2 in natural coordinates (after MBS benchmark
A05, with the coupler rods replaced by stiff spring-dampers).  Run it with ``method='stiff'``.

A vertical shaft W O (W = (0, 0, 0), O = (0, 0, l_s)) turns freely about the global z axis.
Two rods A B and C D (mass m_r, length l_r) hang from the points A and C on a horizontal circle
of radius R about O, each by a revolute joint whose axis is horizontal and perpendicular to the
shaft's radius O A; globes (point masses m_g) sit at their ends B and D.  A slider E (mass m_sl)
moves freely along the shaft; its side points F = E + R u2 and G = E - R u2 are joined to the
rod midpoints M1 = (A + B)/2 and M2 = (C + D)/2 by spring-dampers (k, c, rest length d0).

Coordinates (seed 003): q = (A_x, A_y, B_x, B_y, B_z, E_z), with A_z = l_s and E_x = E_y = 0
(the slider's prismatic joint); the second rod is the first one turned by 180 degrees about the
shaft (C = (-A_x, -A_y, A_z), D = (-B_x, -B_y, B_z)), counted twice in the energies.
u1 = (O - W)/l_s = e_z, u2 = (A - O)/R, u3 = u2 x u1 (the axis of the revolute joint at A).
Constraints: |A - O|^2 - R^2 = 0, |A - B|^2 - l_r^2 = 0 and (A - B) . u3 = 0 (the rod stays in
the plane of the shaft and A).  DoF 3 (the real mechanism without the symmetry has 4).

Energies (seed 003): T = 1/2 J_s w^2 + 2 (1/2 m_r |M1'|^2 + 1/2 w_r^T J_r w_r)
+ 1/2 m_sl |E'|^2 + 2 (1/2 m_g |B'|^2), V = g (2 m_r M1_z + m_sl E_z + 2 m_g B_z)
+ 2 (1/2 k (|M1 - F| - d0)^2), R = 2 (1/2 c ((M1' - F') . u4)^2), u4 = (M1 - F)/|M1 - F|.

Data (seed 003 Table 6.24): shaft 0.3 kg, 1 x 0.01 x 0.01 m; rods 0.3 kg, 1 x 0.01 x 0.01 m;
slider 3 kg, a 0.1 m cube; globes 5 kg; R = 0.05 m; spring-dampers k = 8e5 N/m, c = 4e4 N s/m,
d0 = 0.5 m; g = 9.81 m/s^2.  Initial state (Table 6.25): A = (0.05, 0, 1), B = (0.916, 0, 0.5),
E_z = 0, turning at w0 = 2 pi rad/s: A_y' = w0 R, B_y' = w0 B_x, all other rates 0.

Choices where the seed is silent or inconsistent:

* B_x(0) = 0.05 + sqrt(3)/2 = 0.9160254 (the seed's 0.916 is rounded and violates the rod
  length by 2e-5; its beta_0, never defined, is the 30 degrees this gives), B_y'(0) = w0 B_x.
* l_s = l_r = 1 m (the seed's C2 writes l_s for the rod length; both are 1).
* The moments of inertia the seed does not give, from uniform prisms of the tabulated sizes:
  shaft about its axis J_s = m (w^2 + h^2)/12 = 5e-6 kg m^2; rods about their axis
  J_a = 5e-6 kg m^2 and across it J_t = m (l^2 + w^2)/12 = 0.0250025 kg m^2.
* The shaft's angular velocity from the coordinates: w = (A_x A_y' - A_y A_x')/R^2 (the rate of
  the angle of O A); the rod's angular velocity: 1/2 w_r^T J_r w_r = 1/2 J_t |u_r'|^2
  + 1/2 J_a (w_r . u_r)^2, u_r = (B - A)/l_r, with the spin w_r . u_r = u3' . (u_r x u3) read
  off the rod frame (u_r, u3, u_r x u3) (seed 003 sec. 1.2).
* The slider turns with the shaft, but the seed's T has no term for that: we add
  1/2 J_sl w^2 with the cube's J_sl = m (0.1^2 + 0.1^2)/12 = 0.005 kg m^2
  (``model(slider_spin=False)`` gives the seed's T).
* The seed states no end time; the tests and the benchmark use 1 s.
* The dampers' line of sight meets the shaft, so no torque acts about it: the angular momentum
  about the shaft is conserved (the seed's remark), the energy is not (the dampers dissipate).
  Output ``spin_momentum`` gives the angular momentum about z of the whole mechanism.
"""

import math

import sympy as sp

from mbsfmu import LagrangianSystem
from mbsfmu.model.natural_coordinates import dot


def model(slider_spin: bool = True) -> LagrangianSystem:
    s = LagrangianSystem("flyball_governor", "Stiff flyball governor in natural coordinates (seed 003 "
                         "sec. 6.2)", dim=3)
    m_s, m_r, m_sl, m_g, R, l_s, l_r, w, k, c, d0, g = s.constants(
        m_s=0.3, m_r=0.3, m_sl=3.0, m_g=5.0, R=0.05, l_s=1.0, l_r=1.0, w=0.01, k=8e5, c=4e4, d0=0.5,
        g=9.81)
    s.gravity([0, 0, -g])
    w0 = 2 * math.pi
    Ax, Ay = s.coordinate("A_x", 0.05, 0.0), s.coordinate("A_y", 0.0, w0 * 0.05)
    bx = 0.05 + math.sqrt(3) / 2  # the seed's 0.916, rounded; the rod 30 degrees below horizontal
    B = s.point("B", initial=(bx, 0.0, 0.5), velocity=(0.0, w0 * bx, 0.0))
    Ez = s.coordinate("E_z", 0.0, 0.0)
    A, O, E = sp.Matrix([Ax, Ay, l_s]), sp.Matrix([0, 0, l_s]), sp.Matrix([0, 0, Ez])
    u1 = sp.Matrix([0, 0, 1])
    u2 = (A - O) / R
    u3 = u2.cross(u1)
    ur = (B - A) / l_r
    M1, F = (A + B) / 2, E + R * u2
    s.distance("A_circle", A, O, R)
    s.distance("rod_length", A, B, l_r)
    s.constraint("rod_plane", dot(A - B, u3))

    omega = (Ax * s.velocity(Ay) - Ay * s.velocity(Ax)) / R**2
    J_s = m_s * 2 * w**2 / 12
    J_sl = m_sl * 2 * sp.Rational(1, 10) ** 2 / 12 if slider_spin else 0
    J_a, J_t = m_r * 2 * w**2 / 12, m_r * (l_r**2 + w**2) / 12
    M1d, urd = s.velocity(M1), s.velocity(ur)
    spin = dot(s.velocity(u3), ur.cross(u3))
    s.kinetic_energy((J_s + J_sl) * omega**2 / 2, "shaft_and_slider_rotation")
    s.kinetic_energy(2 * (m_r * dot(M1d, M1d) / 2 + J_t * dot(urd, urd) / 2 + J_a * spin**2 / 2), "rods")
    s.point_mass("slider", E, m_sl)
    s.kinetic_energy(2 * m_g * dot(s.velocity(B), s.velocity(B)) / 2, "globes")
    s.potential_energy(g * (2 * m_r * M1[2] + 2 * m_g * B[2]), "rods_and_globes_weight")
    # one spring-damper with twice the stiffness and damping acts as the two of the mechanism
    s.spring_damper("spring_dampers", M1, F, stiffness=2 * k, damping=2 * c, rest_length=d0)
    # angular momentum about z: shaft and slider, rods (translation and their rotation), globes
    r_m, v_m, v_b = M1, s.velocity(M1), s.velocity(B)
    Lz = (J_s + J_sl) * omega + 2 * (m_r * (r_m[0] * v_m[1] - r_m[1] * v_m[0])
                                      + m_g * (B[0] * v_b[1] - B[1] * v_b[0]))
    # a rod's own rotation: J_t (u_r x u_r')_z + J_a spin u_r_z
    Lz += 2 * (J_t * ur.cross(urd)[2] + J_a * spin * ur[2])
    s.output("spin_momentum", Lz, "angular momentum about the shaft [kg m^2/s]")
    s.point_output("B", B)
    return s
