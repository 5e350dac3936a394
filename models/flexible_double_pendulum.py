"""The double pendulum of seed 002 §4.2 with both rods replaced by flexible beams.

As in the seed: each pendulum is a beam extending 1 m from its frame of reference in -z, whose
modal analysis used 10 elements, with 4 nodes and 3 modes exported; the frame of reference is
attached to node 1 (clamped there for the modal analysis: a nodal-fixed frame), and the motion
lies in the yz-plane (the seed's ``nodalfixed_yz_4n_3m``).  The first pendulum hangs from ISYS on
the hinge ``alpha`` about x, the second from the first one's tip node on the hinge ``phi``;
initial state alpha = 0.4, phi = 1.5 at rest, undeformed (seed 002 §4.1).

Our beam data (the seed gives none): an aluminium strip 20 mm x 4 mm, thin side in y, so that
it bends in the plane of the swing: E = 70 GPa, rho = 2700 kg/m^3, A = 8e-5 m^2, I = 1.067e-10
m^4 (bending in y), 0.216 kg per beam, first bending frequency 3.3 Hz clamped.  Euler-Bernoulli
elements built by :func:`mbsfmu.model.elastic.beam_modal_data`; geometric stiffening from the
beam's axial stress under gravity and rotation (SID ksigma).  ``stiffness_scale`` multiplies E
in the finite-element model (the rigid double pendulum is its limit); the constant
``stiffness`` (an FMU parameter, default 1) multiplies the modal stiffness of both beams, the
same thing without rebuilding the modal data, so a sweep can vary it.
``geometric_stiffening=False`` leaves ksigma out (the equations are then conservative: T + V is
constant).
"""

from mbsfmu import System, rot_x
from mbsfmu.model.elastic import beam_modal_data

LENGTH, WIDTH, THICKNESS = 1.0, 0.020, 0.004
E, RHO = 70e9, 2700.0


def beam_data(stiffness_scale: float = 1.0):
    """The modal data of one pendulum (both are the same beam)."""
    A = WIDTH * THICKNESS
    I_thin = WIDTH * THICKNESS**3 / 12  # bending in y (the plane of the swing)
    I_wide = THICKNESS * WIDTH**3 / 12
    return beam_modal_data(LENGTH, E=E * stiffness_scale, rho=RHO, A=A, Iy=I_thin, Iz=I_wide,
                           y_axis=(0.0, 1.0, 0.0), n_elements=10, export=4, modes=3, axis=(0.0, 0.0, -1.0),
                           bc="clamped", frame_node=1, plane="yz")


def model(stiffness_scale: float = 1.0, geometric_stiffening: bool = True) -> System:
    s = System("flexible_double_pendulum", "Flexible Double Pendulum")
    g = s.constant("g", 9.81)
    k = s.constant("stiffness", 1.0, "factor on both beams' modal stiffness (E x factor)", min=0.0)
    alpha, phi = s.coordinates("alpha", "phi")
    s.gravity([0, 0, -g])
    data = beam_data(stiffness_scale)
    s.flexible_body("P1", ref="ISYS", rel_rot=rot_x(alpha), data=data,
                    geometric_stiffening=geometric_stiffening, stiffness_factor=k)
    tip = f"P1_{data.nodes[-1].id}"
    s.flexible_body("P2", ref=tip, rel_rot=rot_x(phi), data=data, geometric_stiffening=geometric_stiffening,
                    stiffness_factor=k)
    s.initial(alpha=0.4, phi=1.5)
    s.visual("P1", color="tab:blue")
    s.visual("P2", color="tab:orange")
    return s
