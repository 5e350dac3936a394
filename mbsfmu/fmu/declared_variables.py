"""The variables one native FMU's model description declares, by FMI version and interface, and
the facts of its model structure that both versions' writers render
(:mod:`.model_description_fmi2`, :mod:`.model_description_fmi3`).

Value references are the same in both versions and both interfaces:

* ``0 .. nvars-1``: the engine's variables (:func:`mbsfmu.codegen.fmu_variables.engine_variables`);
* ``nvars``: ``solver``, the deprecated name of ``method``: FMI 2.0 only;
* ``nvars+1+j`` (j < f): ``der(<coordinate j>,2)``, the acceleration of coordinate j: a local,
  calculated variable, declared only by FMUs with Model Exchange;
* ``nvars+1+f``: ``constraint_tolerance``, the drift from the constraints (max |c|, |C y' + b'|)
  above which a completed integrator step asks for the event that projects the state onto them:
  a tunable parameter of Model Exchange FMUs of models with constraints only;
* ``nvars+2+f``: ``time``, the independent variable FMI 3.0 requires: FMI 3.0 only (a model
  may not name anything ``time``).

The continuous states of Model Exchange are the f coordinates and then their f velocities
``der(<coordinate>)``; the derivative of coordinate j is the velocity variable ``der(x_j)``, that
of velocity j the acceleration ``der(x_j,2)``: with the state y = (q, v), y' = (v, v').

The knowns an output depends on directly (``dependencies`` in ``<ModelStructure>``): a coordinate
or velocity output depends on none (in Co-Simulation it is the integrator's state, not a function
of the inputs; with Model Exchange it is a state itself, whose self-dependency is implied); a
calculated output (``constraint_residual``, the user outputs) on the inputs it feeds through, and
where the knowns include more than the inputs, on more: with Model Exchange on all the states, in
FMI 3.0 (whose knowns include the parameters) on all the model's constants, and in both on the
independent variable ``time`` if the model has time parameters (a superset of the true
dependencies is allowed, an unlisted known means a zero partial derivative).  A Co-Simulation-only
FMI 2.0 FMU lists the inputs alone, as it always has.

Initial unknowns are the outputs whose start is not exact (``approx``: the coordinates and
velocities of a model with loops, which the consistent initialization may move; ``calculated``:
the residual and the user outputs) and, with Model Exchange, the states and derivatives that are
not exact (the accelerations).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..codegen.fmu_variables import engine_variables
from ..core.fmu_layout import CONSTRAINT_TOLERANCE, CONSTRAINT_TOLERANCE_START, FmuVariable
from .fmi_options import declares

#: the name of FMI 3.0's independent variable
TIME = "time"


def acceleration_name(coordinate: str) -> str:
    """The name of the second derivative of ``coordinate`` (FMI's structured naming)."""
    return f"der({coordinate},2)"


@dataclass(frozen=True)
class Declaration:
    """What one model description declares: ``variables`` in value-reference order (the order
    both versions list them in, so an FMI 2.0 index is the position + 1); with Model Exchange
    ``states`` in state order and ``derivatives[i]``, the derivative of ``states[i]``."""

    variables: tuple[FmuVariable, ...]
    states: tuple[FmuVariable, ...] = ()
    derivatives: tuple[FmuVariable, ...] = ()
    fmi_version: int = 2
    time_dependent: bool = False  # the model has time parameters

    def dependencies(self, output: FmuVariable) -> list[FmuVariable]:
        """The knowns ``output`` depends on directly, in the order of :attr:`variables`
        (module docstring)."""
        if output.kind in ("coordinate", "velocity"):
            return []
        names = set(output.dependencies)
        names.update(v.name for v in self.states)
        if self.fmi_version == 3:
            names.update(v.name for v in self.variables if v.kind == "constant")
        if self.time_dependent and (self.states or self.fmi_version == 3):
            names.add(TIME)
        return [v for v in self.variables if v.name in names]

    def derivative_of(self) -> dict[str, FmuVariable]:
        """Name of a derivative -> the state it is the derivative of."""
        return {d.name: s for s, d in zip(self.states, self.derivatives)}

    def outputs(self) -> list[FmuVariable]:
        return [v for v in self.variables if v.causality == "output"]

    def initial_unknowns(self) -> list[FmuVariable]:
        """The initial unknowns in the order of :attr:`variables` (module docstring)."""
        unknown = {v.name for v in self.outputs()}
        unknown.update(v.name for v in (*self.states, *self.derivatives))
        return [v for v in self.variables if v.name in unknown and v.initial in ("approx", "calculated")]

    def by_name(self) -> dict[str, FmuVariable]:
        return {v.name: v for v in self.variables}


def declaration(variables: list[FmuVariable], fmi_version: int, interface: str,
                time_dependent: bool = False) -> Declaration:
    """The :class:`Declaration` of an FMU of ``fmi_version`` and ``interface`` with the FMU
    variables ``variables`` (:func:`~mbsfmu.codegen.fmu_variables.fmu_variables`);
    ``time_dependent``: whether the model has time parameters."""
    engine = engine_variables(variables)
    nvars = len(engine)
    declared = list(engine)
    if fmi_version == 2:
        declared += [v for v in variables if v.kind == "deprecated"]  # solver, vr nvars
    coordinates = [v for v in engine if v.kind == "coordinate"]
    velocities = [v for v in engine if v.kind == "velocity"]
    accelerations = [FmuVariable(acceleration_name(c.name), nvars + 1 + j, "local", "continuous",
                                 "calculated", None, f"acceleration of {c.name}", kind="acceleration")
                     for j, c in enumerate(coordinates)]
    f = len(coordinates)
    me = declares(interface)[1]
    if me:
        declared += accelerations
        if any(v.kind == "residual" for v in engine):  # a model with constraints
            declared.append(FmuVariable(
                CONSTRAINT_TOLERANCE, nvars + 1 + f, "parameter", "tunable", "exact",
                CONSTRAINT_TOLERANCE_START, "drift from the constraints (max |c|, |C y' + b'|) above which a "
                "completed integrator step asks for the event that projects the state onto them",
                kind="constraint_tolerance"))
    if fmi_version == 3:
        declared.append(FmuVariable(TIME, nvars + 2 + f, "independent", "continuous", None, None,
                                    "simulation time", kind="time"))
    assert [v.value_reference for v in declared] == sorted(v.value_reference for v in declared)
    if not me:
        return Declaration(tuple(declared), fmi_version=fmi_version, time_dependent=time_dependent)
    return Declaration(tuple(declared), states=(*coordinates, *velocities),
                       derivatives=(*velocities, *accelerations), fmi_version=fmi_version,
                       time_dependent=time_dependent)


def needs_completed_integrator_step(system) -> bool:
    """Whether the importer must report completed integrator steps to a Model Exchange FMU of
    ``system``: for a model with constraints (m > 0), whose FMU projects the state back onto the
    constraints through a step event when the drift passes the tolerance; not for a tree."""
    return bool(system.constrained)
