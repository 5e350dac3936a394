"""mbsfmu: symbolic multibody equations of motion, simulation and FMI export.

Pipeline: model (System) -> equations (M, k, q) -> formulations (ODE / DAE) -> codegen -> FMU.
"""

from .equations import derive
from .errors import (
           ConstraintError,
           MbsError,
           ModelError,
           ParameterError,
           SimulationError,
           SingularMassMatrixError,
)
from .model import INERTIAL, System, cardan, euler, rot_x, rot_y, rot_z, sequence, t
from .model.loader import load_model
from .simulation import Result, simulate

__version__ = "0.1.0"

__all__ = ["System", "derive", "simulate", "Result", "load_model", "rot_x", "rot_y", "rot_z",
           "cardan", "euler", "sequence", "t", "INERTIAL", "MbsError", "ModelError",
           "ParameterError", "SimulationError", "SingularMassMatrixError", "ConstraintError"]
