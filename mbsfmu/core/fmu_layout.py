"""The FMU's variables as every stage sees them: the record of one variable and the names the
export adds to those of the model.

The variables of a model, in value-reference order (:func:`mbsfmu.codegen.fmu_variables.
fmu_variables`, which needs the derived equations, lists them): the coordinates, their
velocities ``der(<name>)``, :data:`RESIDUAL` for a model with constraints, the user outputs,
the constants, the solver settings (:mod:`.solver_settings`), the inputs, the values and rates of
the named initial conditions of a model with constraints and last the deprecated
names of renamed variables (``solver``, :data:`.solver_settings.DEPRECATED_FMU_NAMES`).  Both FMU kinds,
the engine's model source and the model description use that one list; a model may not name a
constant, coordinate, input or output like a variable the export adds (:func:`added_names`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .solver_settings import DEPRECATED_FMU_NAMES, SOLVER_SETTINGS

#: the output of a model with constraints: the max-norm of the constraint residual
RESIDUAL = "constraint_residual"


@dataclass
class FmuVariable:
    name: str
    value_reference: int
    causality: str
    variability: str
    initial: str | None
    start: float | None
    description: str = ""
    kind: str = ""  # coordinate, velocity, residual, output, reaction, constant, solver, input,
    # initial_condition, deprecated; the FMU's own: acceleration and constraint_tolerance (Model
    # Exchange), time (FMI 3.0)
    dependencies: tuple = ()  # names of the inputs an output depends on directly
    min: float = -math.inf  # declared bounds (FMI min/max attributes, written when finite)
    max: float = math.inf
    type: str = "Real"  # FMI type: Real, or Integer (method and its deprecated name solver)


#: Model Exchange FMUs of models with constraints: the tunable parameter after the accelerations
#: (value reference nvars + 1 + f), the drift max(|c|, |C y' + b'|) above which a completed
#: integrator step asks for the event that projects the state (mbs_fmu.h)
CONSTRAINT_TOLERANCE = "constraint_tolerance"
#: its start value (in the constraints' own units)
CONSTRAINT_TOLERANCE_START = 1e-6


def added_names() -> dict[str, str]:
    """The FMU variables the export adds itself (name -> what it is), which no constant,
    coordinate, input or output of a model may take."""
    out = {RESIDUAL: "the constraint residual of models with loops",
           CONSTRAINT_TOLERANCE: "the drift from the constraints a Model Exchange FMU projects away"}
    out.update({st.name: f"the solver setting {st.name}" for st in SOLVER_SETTINGS})
    out.update({old: f"the old name of the solver setting {new}"
                for old, new in DEPRECATED_FMU_NAMES.items()})
    return out
