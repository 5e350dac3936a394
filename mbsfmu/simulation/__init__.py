"""Simulation of a model: integration with scipy and the result object."""

from .result import Result
from .simulate import simulate

__all__ = ["simulate", "Result"]
