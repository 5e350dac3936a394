"""The initial values a run may set, by name: what ``simulate(initial=...)``, a sweep's design
columns and fixed values, ``mbsfmu simulate --set`` and the FMU's start values take.

* a coordinate ``x``: its initial position y0; its rate as ``der(x)`` or ``Dx``: y0';
* a named initial condition ``e`` (:meth:`~mbsfmu.model.constraints.Constraints.initial_condition`,
  models with constraints only): the value e0 of its condition e(y) = e0; its rate as
  ``der(e)`` or ``De``: e0' of d/dt e(y) = E y' = e0', only where the model declares a rate
  for it (a condition without a rate has no velocity row to set).

The coordinates' values are where the consistent initialization (seed 000 eqs. 5-6) starts from,
held first; a named initial condition is an equation the consistent state satisfies.  So where
a coordinate given too contradicts a condition, the condition wins: the coordinate moves, and
the warning about changed initial values names it (with ``fixed=`` holding it, no consistent
state exists and the ConstraintError names both).

The FMU variables of a condition are the parameters ``e`` and ``der(e)``
(:func:`condition_variables`); :func:`resolve` turns a mapping of names to numbers into the
start of one run (:class:`InitialValues`).  A name is looked up among the coordinates and their
rates first, then among the conditions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.checks import finite_number
from ..core.errors import ParameterError


def rate_name(name: str) -> str:
    """The canonical name of the rate of a coordinate or condition: ``der(name)``."""
    return f"der({name})"


def rate_of(key: str) -> str | None:
    """``name`` of a rate key ``der(name)`` or ``Dname``, else None."""
    if key.startswith("der(") and key.endswith(")"):
        return key[4:-1]
    if key.startswith("D") and len(key) > 1:
        return key[1:]
    return None


def condition_variables(system) -> list[tuple[str, str, float]]:
    """The settable values of the named initial conditions, in FMU order: (variable name, the
    condition's name, start value): each condition's value ``e`` first, then the rates
    ``der(e)`` of those that declare one.  None for a model without constraints, where
    conditions take no part (there is no consistent initialization)."""
    if not system.constrained:
        return []
    ics = system.initial_conditions
    return ([(ic.name, ic.name, float(ic.value)) for ic in ics]
            + [(rate_name(ic.name), ic.name, float(ic.rate)) for ic in ics if ic.rate is not None])


def settable_names(system) -> list[str]:
    """Every name :func:`resolve` takes (coordinates, ``der(x)``, ``Dx``, and the named initial
    conditions with their declared rates as ``der(e)`` and ``De``)."""
    coords = list(system.coordinates_)
    out = [*coords, *(rate_name(c) for c in coords), *(f"D{c}" for c in coords)]
    for var, ic, _ in condition_variables(system):
        out += [var] if var == ic else [var, f"D{ic}"]
    return out


def canonical_name(system, key: str) -> str:
    """The canonical name (``x``, ``der(x)``, ``e``, ``der(e)``) of a key of ``initial=``, or a
    ParameterError that says why it is none and lists what is settable."""
    name = lookup(system, key)
    if name is None:
        raise ParameterError(f"initial value {key!r}: not a coordinate, velocity or named initial "
                             f"condition of {system.name!r} ({_known(system)})")
    return name


def lookup(system, key) -> str | None:
    """The canonical name of ``key`` (see :func:`canonical_name`), None if it names nothing
    ``initial=`` takes; a ParameterError if it names a condition that cannot be set so (a rate
    the condition does not declare, a condition of a model without constraints)."""
    coords = system.coordinates_
    conditions = {ic.name: ic for ic in system.initial_conditions}
    if not isinstance(key, str):
        return None
    if key in coords:
        return key
    rated = rate_of(key)
    if rated in coords:
        return rate_name(rated)
    name = key if key in conditions else rated if rated in conditions else None
    if name is None:
        return None
    if not system.constrained:
        raise ParameterError(f"initial value {key!r}: the initial condition {name!r} of {system.name!r} "
                             "takes no part: the model has no constraints, so its coordinates are "
                             "its initial state (set them instead)")
    if name == key:
        return key
    if conditions[name].rate is None:
        raise ParameterError(f"initial value {key!r}: the initial condition {name!r} of {system.name!r} "
                             f"declares no rate (only its value {name!r} can be set; to set a rate, "
                             f"declare one: initial_condition({name!r}, ..., rate=...))")
    return rate_name(name)


def _known(system) -> str:
    coords = list(system.coordinates_)
    parts = [f"coordinates: {', '.join(coords) or 'none'}",
             f"velocities: {', '.join(rate_name(c) for c in coords) or 'none'} (or D<name>)"]
    conditions = [var for var, _, _ in condition_variables(system)]
    parts.append(f"named initial conditions: {', '.join(conditions) or 'none'}")
    return "; ".join(parts)


@dataclass
class InitialValues:
    """The start of one run: ``x0`` = [y0, y0'] (the model's values with the given ones set),
    ``given`` the coordinates and rates set (canonical names: held first by the consistent
    initialization, and never treated as guesses) and ``conditions`` the named initial
    conditions' values and rates set (canonical names ``e``, ``der(e)``)."""

    x0: np.ndarray
    given: list[str] = field(default_factory=list)
    conditions: dict[str, float] = field(default_factory=dict)

    def condition_targets(self, system) -> list[tuple[float, float | None]]:
        """:func:`condition_targets` with the values set here."""
        return condition_targets(system, self.conditions)


def condition_targets(system, values: dict) -> list[tuple[float, float | None]]:
    """(e0, e0' or None) of every named initial condition of ``system``, in its order: the
    values of ``values`` (by the canonical names ``e``, ``der(e)``), else the model's declared
    value and rate."""
    return [(values.get(ic.name, ic.value),
             None if ic.rate is None else values.get(rate_name(ic.name), ic.rate))
            for ic in system.initial_conditions]


def resolve(system, initial: dict | None) -> InitialValues:
    """The start of a run of ``system`` with the values of ``initial`` (see the module
    docstring); a bad name or a value that is not a finite number is a ParameterError naming
    it, and the same value given under two names (``Dx`` and ``der(x)``) is refused."""
    if initial is not None and not isinstance(initial, dict):
        raise ParameterError(f"initial must be a dict {{name: value}}, got {initial!r}")
    coords = system.coordinates_
    names = list(coords)
    y = np.array([c.initial for c in coords.values()], dtype=float)
    yd = np.array([c.initial_velocity for c in coords.values()], dtype=float)
    given, conditions, seen = [], {}, {}
    for key, val in (initial or {}).items():
        name = canonical_name(system, key)
        if name in seen:
            raise ParameterError(f"initial values {seen[name]!r} and {key!r} set the same value "
                                 f"{name!r}; give one of them")
        seen[name] = key
        v = finite_number(val, f"initial value {key!r}")
        if name in coords:
            y[names.index(name)] = v
            given.append(name)
        elif (rated := rate_of(name)) in coords:
            yd[names.index(rated)] = v
            given.append(name)
        else:
            conditions[name] = v
    return InitialValues(np.concatenate((y, yd)), given, conditions)
