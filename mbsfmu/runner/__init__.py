"""Block-diagram runner: blocks with named ports, wired output -> input, stepped together.

See :mod:`mbsfmu.runner.block` for the block interface and the registry of block types,
:mod:`mbsfmu.runner.diagram` for the diagram (wiring checks, execution order, algebraic loops,
multi-rate, real-time pacing), :mod:`mbsfmu.runner.live` for the live scope of a running
diagram, :mod:`mbsfmu.runner.fmu_block` for the FMU block (every FMI version
and interface: :mod:`mbsfmu.runner.fmi_access`, :mod:`mbsfmu.runner.me_integration`),
:mod:`mbsfmu.runner.ssp` for SSP import/export and :mod:`mbsfmu.runner.block_fmu` for exporting a
Python block as an FMU.  The standard blocks are in the top-level package ``blocks`` (which uses
the runner; the runner never imports it).
"""

from .block import BLOCK_TYPES, PORT_TYPES, SISO, Block, BlockError, block_type
from .block_fmu import export_block_fmu
from .diagram import AlgebraicLoopError, BlockRunError, Diagram, DiagramError, RealtimeError, Result
from .fmu_block import FMU
from .live import LiveView
from .ssp import SSPError, export_ssp, fmpy_parameter_set, import_ssp, simulate_ssp_fmpy

__all__ = ["Block", "SISO", "BlockError", "PORT_TYPES", "BLOCK_TYPES", "block_type", "FMU", "Diagram",
           "DiagramError", "AlgebraicLoopError", "RealtimeError", "BlockRunError", "Result", "LiveView",
           "export_ssp", "import_ssp", "SSPError", "export_block_fmu", "simulate_ssp_fmpy",
           "fmpy_parameter_set"]
