"""Stage 1 of the pipeline: the model description (System, frames, bodies, forces; or a
LagrangianSystem given by its energies and constraints, e.g. in natural coordinates)."""

from .element_checks import check_mass_properties
from .lagrangian import LagrangianSystem
from .rotations import Rotation, cardan, euler, rot_x, rot_y, rot_z, sequence
from .system import INERTIAL, System, t

__all__ = ["System", "LagrangianSystem", "Rotation", "rot_x", "rot_y", "rot_z", "cardan", "euler",
           "sequence", "INERTIAL", "t", "check_mass_properties"]
