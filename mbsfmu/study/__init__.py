"""Parameter studies: run one model or FMU over a design of parameter sets on Dask.

``designs`` makes the parameter sets, ``metrics`` what each run keeps, ``checks`` what is
checked before the first run, ``batch`` runs batches of runs on a Dask scheduler (the model
loaded once per worker process), ``results`` keeps the rows in a CSV file that a restarted study
resumes from, ``definition`` what produced them beside it.  :func:`sweep`
(:mod:`.parameter_sweep`) ties them together.  :mod:`.global_sensitivity` runs a sweep over
SALib's designs and gives Sobol' indices (:func:`sobol_indices`) and Morris elementary effects
(:func:`morris_screening`) of its metrics.
"""

from __future__ import annotations

from ..core.errors import StudyWarning
from . import (
               batch,
               checks,
               definition,
               designs,
               failures,
               global_sensitivity,
               metrics,
               plots,
               results,
               trajectories,
)
from .designs import factorial, latin_hypercube, monte_carlo, sobol, table
from .global_sensitivity import GlobalSensitivity, morris_screening, sobol_indices
from .parameter_sweep import sweep
from .plots import plot_study

__all__ = ["sweep", "plot_study", "factorial", "latin_hypercube", "sobol", "monte_carlo", "table", "designs",
           "metrics", "plots", "results", "batch", "trajectories", "checks", "definition", "failures",
           "StudyWarning", "sobol_indices", "morris_screening", "GlobalSensitivity", "global_sensitivity"]
