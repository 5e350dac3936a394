"""Stage 1 of the pipeline: the model description.  Two front ends, siblings over one base
:class:`Model` (symbols, constraints, outputs): a :class:`System` of frames, bodies and force
elements, or a :class:`LagrangianSystem` given by its energies and constraints, e.g. in natural
coordinates."""

from .base import Model
from .element_checks import check_mass_properties
from .lagrangian import LagrangianSystem
from .multibody import System
from .names import INERTIAL, t
from .rotations import Rotation, cardan, euler, rot_x, rot_y, rot_z, sequence

__all__ = ["Model", "System", "LagrangianSystem", "Rotation", "rot_x", "rot_y", "rot_z", "cardan", "euler",
           "sequence", "INERTIAL", "t", "check_mass_properties"]
