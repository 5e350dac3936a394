"""What ``simulate(..., sensitivities=[...])`` differentiates by: names -> the engine's columns.

A name is one of

* a constant (``System.constant``): the run's value of it, as ``params`` sets it;
* a coordinate ``x``: its initial value (as ``initial={'x': ...}`` sets it), and ``der(x)`` or
  ``Dx`` the initial value of its rate;
* a named initial condition (``System.initial_condition``): its value, and ``der(name)`` its rate.

Each becomes a column ``(what, index)`` of ``mbs_sensitivity.h`` (MBS_SENS_*).  Names that the
run cannot differentiate by are refused before anything runs, with the reason: a constant the
equations do not depend on (its sensitivities would be zero: almost always a typo or a
misunderstanding), a constant that a time parameter's expressions read (the generated time
parameters are not differentiated), the rate of an initial condition that declares none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.constants import SENSITIVITY_COLUMNS, SENSITIVITY_ERROR_CONTROL
from ..core.errors import ParameterError
from ..equations.derive import derive
from ..equations.sensitivity_equations import sensitivity_equations
from ..model.initial_values import lookup as lookup_initial
from ..model.initial_values import rate_of

#: the column kinds of mbs_sensitivity.h
CONSTANT, POSITION, RATE, IC_VALUE, IC_RATE = (SENSITIVITY_COLUMNS[k] for k in (
    "constant", "position", "rate", "ic_value", "ic_rate"))


@dataclass
class SensitivityRequest:
    """What a run on the engine computes besides the state: the parameter columns (``names``,
    ``what``, ``index``), the error control, the signals whose integrals (and their sensitivities)
    the direct method integrates (``integrals``: signal indices, :func:`signal_index`), and for
    the adjoint method its metrics (``adjoint``: (kind, signal index) pairs, kinds of
    :data:`mbsfmu.core.constants.ADJOINT_METRICS`; then the run records no trajectory)."""

    names: list
    what: list
    index: list
    error_control: str = "all"
    integrals: list = field(default_factory=list)
    adjoint: list | None = None
    points: list | None = None  # per adjoint metric: None, or the (k, 3) points of a least-squares one


def request(system, names, error_control: str = "all", integrals=(), adjoint=None) -> SensitivityRequest:
    """A :class:`SensitivityRequest` for the parameters ``names``, checked."""
    return SensitivityRequest(*sensitivity_columns(system, names), check_error_control(error_control),
                              list(integrals), adjoint)


def signal_names(system) -> list[str]:
    """The signals in the engine's layout of a sensitivity row: the coordinates, their rates
    der(NAME), the constraints' multipliers (by constraint name), the expression outputs."""
    coords = list(system.coordinates_)
    outputs = [o.name for o in getattr(system, "outputs", {}).values() if o.constraint is None]
    return coords + [f"der({c})" for c in coords] + list(system.constraint_names) + outputs


def signal_index(system, signal: str) -> int:
    """Where ``signal`` (a coordinate, der(coordinate) or Dcoordinate, a user output --
    expression, frame kinematics or reaction --, or a constraint's multiplier by its name) is in
    that layout; ParameterError naming the signals otherwise."""
    coords = list(system.coordinates_)
    f = len(coords)
    constraints = list(system.constraint_names)
    rate = rate_of(signal)
    if signal in coords:
        return coords.index(signal)
    if rate in coords:
        return f + coords.index(rate)
    if signal in constraints:
        return 2 * f + constraints.index(signal)
    outputs = getattr(system, "outputs", {})
    if signal in outputs:
        o = outputs[signal]
        if o.constraint is not None:
            return 2 * f + constraints.index(o.constraint)
        expr = [n for n, x in outputs.items() if x.constraint is None]
        return 2 * f + len(constraints) + expr.index(signal)
    raise ParameterError(f"{signal!r} is not a signal of {system.name!r}: a coordinate, der(coordinate), "
                         f"an output or a constraint ({', '.join(signal_names(system))})")


def sensitivity_columns(system, names) -> tuple[list[str], list[int], list[int]]:
    """(names, what, index) of the parameters ``names`` (a name or a list of names)."""
    if isinstance(names, str):
        names = [names]
    if isinstance(names, dict):
        raise ParameterError(f"sensitivities must be a list of names, got a dict {names!r:.80}; the "
                             "values of the parameters are set by params= and initial=")
    try:
        names = list(names)
    except TypeError:
        raise ParameterError(f"sensitivities must be a list of names, got {names!r}") from None
    if not names:
        raise ParameterError("sensitivities: give at least one name (a constant, a coordinate, "
                             "der(coordinate) or a named initial condition)")
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise ParameterError(f"sensitivities: {bad[0]!r} is not a name")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ParameterError(f"sensitivities: {', '.join(map(repr, dup))} given more than once")
    constants = list(system.constants_)
    coords = list(system.coordinates_)
    ics = [ic.name for ic in system.initial_conditions]
    used = _constants_used(system)
    timed = _constants_in_time_parameters(system)
    what, index = [], []
    for n in names:
        if n in constants:
            if n in timed:
                raise ParameterError(f"sensitivities: constant {n!r} enters the time parameter(s) "
                                     f"{', '.join(timed[n])}, whose derivatives are not generated; "
                                     "sensitivities by it are not available")
            if n not in used:
                raise ParameterError(f"sensitivities: the equations of {system.name!r} do not depend on "
                                     f"constant {n!r} (its sensitivities would be zero)")
            what.append(CONSTANT)
            index.append(constants.index(n))
            continue
        try:  # an initial value: the names initial= takes, looked up as it looks them up
            canonical = lookup_initial(system, n)
        except ParameterError as exc:
            raise ParameterError(f"sensitivities: {exc}") from None
        if canonical is None:
            raise ParameterError(
                f"sensitivities: {n!r} is not a parameter of {system.name!r}; give a constant "
                f"({', '.join(constants) or 'none'}), a coordinate or der(coordinate) "
                f"({', '.join(coords)}) or a named initial condition ({', '.join(ics) or 'none'})")
        rate = canonical[4:-1] if canonical.startswith("der(") else None  # lookup's rates: der(name)
        kind = (POSITION if canonical in coords else RATE if rate in coords
                else IC_VALUE if canonical in ics else IC_RATE)
        what.append(kind)
        index.append(coords.index(rate or canonical) if kind in (POSITION, RATE)
                     else ics.index(rate or canonical))
    return names, what, index


def check_error_control(value) -> str:
    """simulate's ``sensitivity_error_control``: 'all' or 'state' (ParameterError otherwise)."""
    if value not in SENSITIVITY_ERROR_CONTROL:
        raise ParameterError(f"sensitivity_error_control must be one of "
                             f"{', '.join(map(repr, SENSITIVITY_ERROR_CONTROL))}, got {value!r}")
    return value


def _constants_used(system) -> set[str]:
    """The constants whose tangent seed dp_k reaches the sensitivity equations or the outputs'
    tangents (through the intermediates): those the run depends on."""
    def used(eqs):
        se = sensitivity_equations(eqs)
        found = eqs.intermediates.symbols_read(list(se.tangent) + list(se.outputs_tangent))
        names = list(system.constants_)
        seeds = se.z_tangent[len(se.z_tangent) - len(names):]
        return frozenset(n for n, d in zip(names, seeds) if d in found)

    return derive(system).derived("constants_used", used)  # once per derivation


def _constants_in_time_parameters(system) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    syms = {c.symbol: name for name, c in system.constants_.items()}
    for p in system.time_parameters.values():
        for e in p.expressions or ():
            for s in getattr(e, "free_symbols", ()):
                if s in syms and p.name not in out.setdefault(syms[s], []):
                    out[syms[s]].append(p.name)
    return out
