"""What ``simulate`` raises when a run on a reference stepper (backend 'numpy', or a scipy method
on the compiled kernel) stops before its end.

Whatever stopped it -- the integrator (step size underflow, non-finite state), the model's
equations during the run (a singular mass or KKT matrix, a projection that cannot converge), scipy
itself, or a function of the user's -- the caller gets one exception that says what happened, with
``.result``, the output points reached (a partial :class:`~mbsfmu.simulation.result.Result`):

* a :class:`~mbsfmu.core.errors.SimulationError` naming the model, the method and the time of the last
  accepted step, with the original error's type and message where it was not one already (the
  engine's failed runs are SimulationErrors too);
* an input's or time parameter's own :class:`~mbsfmu.core.errors.MbsError` (a ParameterError, say)
  keeps its type, as on the engine;
* the message ends with what the formulation knows about the place: a singular position of the
  mechanism (:meth:`~mbsfmu.reference.formulations.base.Formulation.singularity_note`), and where the
  model's equations were not defined during the failed step (a square root of a negative number
  in a Newton iterate, :attr:`~mbsfmu.reference.formulations.base.Formulation.undefined`).
"""

from __future__ import annotations

from ..core.errors import ConstraintError, MbsError, SimulationError, SingularMassMatrixError


def run_failure(exc: Exception, system, form, stepper, method: str, partial_result) -> MbsError:
    """The exception for a run that stopped with ``exc`` at the stepper's last accepted step;
    ``partial_result(exc, reason)`` makes the partial Result from ``exc.partial`` (the output points
    reached, which :func:`mbsfmu.reference.integrators.sample` attaches to any exception)."""
    partial = getattr(exc, "partial", (None, None))
    if isinstance(exc, MbsError) and not isinstance(exc, (SimulationError, ConstraintError,
                                                          SingularMassMatrixError)):
        exc.result = partial_result(exc, str(exc))  # from the inputs or time parameters
        return exc
    if isinstance(exc, SimulationError):
        text = str(exc)
    else:
        why = str(exc) if isinstance(exc, MbsError) else f"{type(exc).__name__}: {exc}"
        text = f"{method} failed after t={stepper.t:.9g}: {why.removeprefix(f'{system.name}: ')}"
    if not text.startswith(f"{system.name}:"):
        text = f"{system.name}: {text}"
    notes = []
    if form.m:
        notes.append(form.singularity_note(stepper.t, stepper.x[:form.f]))
    if form.undefined is not None and form.undefined[0] >= stepper.t - stepper.h:  # in the last steps
        notes.append(form.undefined[1])
    err = SimulationError("; ".join([text, *filter(None, notes)]))
    err.partial = partial
    err.result = partial_result(err, str(err))
    err.__cause__ = exc
    return err
