"""Block-diagram runner: blocks with named ports, wired output -> input, stepped together.

See :mod:`mbsfmu.runner.block` for the block interface and :mod:`mbsfmu.runner.diagram` for the
diagram (wiring checks, execution order, algebraic loops, multi-rate, real-time pacing).
"""

from .block import PORT_TYPES, SISO, Block, BlockError
from .diagram import AlgebraicLoopError, BlockRunError, Diagram, DiagramError, RealtimeError, Result

__all__ = ["Block", "SISO", "BlockError", "PORT_TYPES", "Diagram", "DiagramError",
           "AlgebraicLoopError", "RealtimeError", "BlockRunError", "Result"]
