"""Gradients of a run's metrics by constants and initial values (seed 002 §4): the direct
(forward) and the adjoint method of the engine (:func:`gradient`), on the metrics of
:mod:`.metrics`.  The trajectories of the sensitivities themselves come from
``simulate(..., sensitivities=[...])`` (:meth:`mbsfmu.simulation.result.Result.sensitivity`)."""

from .gradient import Gradient, gradient
from .metrics import LeastSquares, Metric, least_squares, parse_metrics

__all__ = ["gradient", "Gradient", "Metric", "LeastSquares", "least_squares", "parse_metrics"]
