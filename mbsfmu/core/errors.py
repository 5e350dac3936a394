"""Exceptions raised by mbsfmu; every message names the offending item.  Also the one wording of
a deprecation (:func:`deprecated`, :func:`renamed_keyword`): an old spelling keeps working for one
release and says which new one to use."""

import warnings


class MbsError(Exception):
    """Base class of all mbsfmu errors."""


class ModelError(MbsError, ValueError):
    """A model description is malformed: unknown frame, duplicate name, bad inertia, ..."""


class ParameterError(MbsError, ValueError):
    """A parameter, input or initial value is missing, non-numeric or not finite."""


class SingularMassMatrixError(MbsError, ArithmeticError):
    """The mass matrix is singular, structurally or in a given configuration."""


class SimulationError(MbsError, RuntimeError):
    """The integrator failed (step size underflow, non-finite state, ...).  ``result`` holds
    what was computed before the failure (a partial Result, ``result.partial`` true), or None."""

    result = None


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception in the main thread (the ``mbsfmu`` command does this):
    a KeyboardInterrupt, so every path that keeps what it computed on Ctrl-C keeps it on
    SIGTERM too; only the exit status (143 instead of 130) and the wording differ."""


def stop_reason(exc: BaseException) -> str:
    """How a run was stopped, in words: 'terminated (SIGTERM)' or 'interrupted (Ctrl-C)'."""
    return "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted (Ctrl-C)"


class SweepError(MbsError, RuntimeError):
    """A parameter sweep ended before all its runs because the cluster could not go on: the
    scheduler went away, no worker was left, or a task failed outside any run.  ``rows`` (also
    ``result``) holds every row that finished, a DataFrame like the one ``sweep`` returns; with
    ``out`` they are written there too."""

    rows = None

    @property
    def result(self):
        return self.rows


class StudyError(MbsError, RuntimeError):
    """A study's runs ended but their rows cannot give what was asked of them: global
    sensitivity indices from rows with failed runs, or with metrics that are not finite numbers.
    ``rows`` holds every row, a DataFrame like the one ``sweep`` returns (with ``out`` they are
    in that file too, so that the same call can take them and run only what is missing)."""

    rows = None


class IdentifiabilityError(MbsError, ValueError):
    """The parameters of a fit cannot be told apart from the fitted signals: the Jacobian of
    the residuals is singular (a parameter the signals do not depend on, or a combination of
    parameters that changes none of them), so neither the estimates nor their standard errors
    are determined.  The message names the parameters and the combination."""


class SimulationInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (KeyboardInterrupt) or SIGTERM (:class:`Terminated`, then its
    ``__cause__``); ``result`` holds what was computed up to then (a partial Result).  A
    KeyboardInterrupt, so scripts still stop unless they catch it."""

    def __init__(self, message: str, result=None):
        super().__init__(message)
        self.result = result

    @property
    def terminated(self) -> bool:
        """True if the run was stopped by SIGTERM rather than Ctrl-C."""
        return isinstance(self.__cause__, Terminated)


class StiffnessWarning(UserWarning):
    """The explicit method's step is limited by stability, not accuracy (Hairer's estimate
    h |lambda| stays near its stability boundary): the model is stiff; method='stiff' takes far
    fewer steps."""


class RedundantConstraintWarning(UserWarning):
    """A constraint an element adds depends on the constraints already there (at the initial
    configuration): only the formulations that take redundant constraints ('qr', 'svd') will
    run the model."""


class InconsistentInitialValuesWarning(UserWarning):
    """Given initial values were changed to satisfy the constraints (consistent initialization,
    on either backend and in both FMU kinds)."""


class ControlDesignWarning(UserWarning):
    """A control design went through but leaves a mode of the plant alone: the inputs cannot move
    it (uncontrollable: it keeps its eigenvalue in the closed loop) or the linear model's outputs
    do not show it (unobservable); the message names the mode's coordinate."""


class ConstraintError(MbsError, ValueError):
    """Constraints that cannot be satisfied, redundant constraints a formulation cannot take,
    or a singular configuration of the constraint Jacobian."""


class StudyWarning(UserWarning):
    """A parameter study went on past something the user should know: rows of its file run again
    because they were damaged, failed rows taken from the file, a trajectory file that cannot be
    read."""


#: the end of every deprecation message (tests/pyproject.toml turn the warnings that say it into
#: errors, so the project itself uses only the new spellings)
DEPRECATED = "is deprecated and goes away in the next release"


def deprecated(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn with a DeprecationWarning '<old> is deprecated and goes away in the next release:
    use <new>', pointing at the caller of the function that calls this (``stacklevel``)."""
    warnings.warn(f"{old} {DEPRECATED}: use {new}", DeprecationWarning, stacklevel=stacklevel)


def renamed_keyword(function: str, new: str, new_value, old: str, old_value, default=None):
    """The value of keyword ``new`` of ``function`` whose old name ``old`` still works for one
    release: ``new_value`` if only it is given (not None), ``old_value`` with a DeprecationWarning
    if only the old one is, ``default`` if neither is; both given is a ParameterError (a refused
    call changes nothing)."""
    if old_value is None:
        return default if new_value is None else new_value
    if new_value is not None:
        raise ParameterError(f"{function}: {old}= and {new}= name the same setting ({old}= is its "
                             f"deprecated name): give only {new}=")
    deprecated(f"{function}({old}=...)", f"{new}=", stacklevel=4)
    return old_value
