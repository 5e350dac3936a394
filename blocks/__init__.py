"""Standard blocks for the block-diagram runner (arrives with the runner issue)."""

from .fmu import FMU
