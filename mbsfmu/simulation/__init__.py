"""Simulation of a model: :func:`simulate` prepares a run (arguments, formulation, consistent start)
and hands it to the C engine or to a reference stepper of :mod:`mbsfmu.reference.integrators`; :class:`Result`
is the one result type."""

from .result import Result
from .simulate import simulate

__all__ = ["simulate", "Result"]
