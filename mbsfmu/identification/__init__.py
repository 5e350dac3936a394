"""Parameter identification: constants and initial values of a model fitted to a measurement
by nonlinear least squares with the Jacobian of the direct method (:func:`fit`,
:mod:`.least_squares_fit`); the measurement (:mod:`.measured_data`), the statistics of the
estimates (:mod:`.fit_statistics`) and the result (:class:`FitResult`)."""

from .fit_result import FitResult
from .least_squares_fit import fit

__all__ = ["fit", "FitResult"]
