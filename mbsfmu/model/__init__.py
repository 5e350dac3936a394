"""Stage 1 of the pipeline: the model description (System, frames, bodies, forces)."""

from .rotations import Rotation, cardan, euler, rot_x, rot_y, rot_z, sequence
from .system import INERTIAL, System, check_mass_properties, t

__all__ = ["System", "Rotation", "rot_x", "rot_y", "rot_z", "cardan", "euler", "sequence",
           "INERTIAL", "t", "check_mass_properties"]
