"""Exceptions raised by mbsfmu; every message names the offending item."""


class MbsError(Exception):
    """Base class of all mbsfmu errors."""


class ModelError(MbsError, ValueError):
    """A model description is malformed: unknown frame, duplicate name, bad inertia, ..."""


class ParameterError(MbsError, ValueError):
    """A parameter, input or initial value is missing, non-numeric or not finite."""


class SingularMassMatrixError(MbsError, ArithmeticError):
    """The mass matrix is singular, structurally or in a given configuration."""


class SimulationError(MbsError, RuntimeError):
    """The integrator failed (step size underflow, non-finite state, ...)."""


class ConstraintError(MbsError, ValueError):
    """Constraints that cannot be satisfied, redundant constraints a formulation cannot take,
    or a singular configuration of the constraint Jacobian."""
