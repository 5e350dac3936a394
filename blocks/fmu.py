"""An FMU as a block of a diagram (FMI 2.0 or 3.0, Co-Simulation or Model Exchange): the runner's
own FMU block (:mod:`mbsfmu.runner.fmu_block`, the one SSP import makes), offered here beside the
other standard blocks."""

from mbsfmu.runner.fmu_block import FMU

__all__ = ["FMU"]
