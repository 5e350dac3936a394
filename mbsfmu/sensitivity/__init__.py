"""Gradients of a run's metrics by constants and initial values (seed 002 §4): the direct
(forward) and the adjoint method of the engine (:func:`gradient`), on the metrics of
:mod:`.metrics`.  The trajectories of the sensitivities themselves come from
``simulate(..., sensitivities=[...])`` (:meth:`mbsfmu.simulation.result.Result.sensitivity`).
:func:`optimize` minimizes a metric over bounded parameters with these gradients
(:mod:`.optimization`, its history file :mod:`.optimization_history`, its result
:class:`OptimizationResult`); :mod:`mbsfmu.identification.search_checks` holds the checks it
shares with ``fit``."""

from .gradient import Gradient, gradient
from .metrics import LeastSquares, Metric, least_squares, parse_metrics
from .optimization import optimize
from .optimization_result import OptimizationResult

__all__ = ["gradient", "Gradient", "Metric", "LeastSquares", "least_squares", "parse_metrics", "optimize",
           "OptimizationResult"]
