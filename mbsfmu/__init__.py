"""mbsfmu: symbolic multibody equations of motion, simulation and FMI export.

Pipeline: model (a System or a LagrangianSystem, both a Model) -> equations (M y'' + k = q with
the constraints c, C, b', b''; :func:`derive`) -> codegen (C99) -> the C engine (``runtime``, its
Python side ``engine``), which simulate, both FMU kinds, the runner's FMU blocks and sweeps run;
the Python formulations and integrators (``reference``) are its oracle.  Analysis (linearize,
modes, control design) works on the equations.  What every stage shares is ``core``; the layers
and what each holds: docs/architecture.md.
"""

from . import natural
from .analysis import linearize
from .core.errors import (
    ConstraintError,
    IdentifiabilityError,
    MbsError,
    ModelError,
    ParameterError,
    RedundantConstraintWarning,
    SimulationError,
    SimulationInterrupted,
    SingularMassMatrixError,
    StiffnessWarning,
    StudyError,
    SweepError,
)
from .equations import derive
from .fmu.build import build_fmu
from .identification import FitResult, fit
from .model import INERTIAL, LagrangianSystem, Model, System, cardan, euler, rot_x, rot_y, rot_z, sequence, t
from .model.loader import load_model
from .sensitivity import OptimizationResult, optimize
from .simulation import Result, simulate
from .study import sweep

__version__ = "0.1.0"

__all__ = ["Model", "System", "LagrangianSystem", "derive", "linearize", "simulate", "sweep", "fit",
           "FitResult", "optimize", "OptimizationResult", "build_fmu",
           "Result", "load_model", "rot_x", "rot_y", "rot_z", "cardan", "euler", "sequence", "t", "INERTIAL",
           "MbsError", "ModelError",
           "ParameterError", "SimulationError", "SimulationInterrupted", "StiffnessWarning",
           "SingularMassMatrixError", "ConstraintError", "SweepError", "StudyError", "IdentifiabilityError",
           "RedundantConstraintWarning", "natural"]
