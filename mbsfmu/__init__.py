"""mbsfmu: symbolic multibody equations of motion, simulation and FMI export.

Pipeline: model (System or LagrangianSystem) -> equations (M, k, q) -> formulations (ODE / DAE)
-> codegen -> FMU; analysis (linearize, modes, control design) works on the equations.
"""

from . import natural
from .analysis import linearize
from .core.errors import (
    ConstraintError,
    MbsError,
    ModelError,
    ParameterError,
    RedundantConstraintWarning,
    SimulationError,
    SimulationInterrupted,
    SingularMassMatrixError,
    StiffnessWarning,
    SweepError,
)
from .equations import derive
from .fmu.build import build_fmu
from .model import INERTIAL, LagrangianSystem, System, cardan, euler, rot_x, rot_y, rot_z, sequence, t
from .model.loader import load_model
from .simulation import Result, simulate
from .study import sweep

__version__ = "0.1.0"

__all__ = ["System", "LagrangianSystem", "derive", "linearize", "simulate", "sweep", "build_fmu", "Result",
           "load_model", "rot_x", "rot_y", "rot_z", "cardan", "euler", "sequence", "t", "INERTIAL",
           "MbsError", "ModelError",
           "ParameterError", "SimulationError", "SimulationInterrupted", "StiffnessWarning",
           "SingularMassMatrixError", "ConstraintError", "SweepError", "RedundantConstraintWarning",
           "natural"]
