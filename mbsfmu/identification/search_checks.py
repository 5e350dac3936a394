"""The checks of a search over bounded parameters of a model, shared by :func:`mbsfmu.fit` and
:func:`mbsfmu.optimize`: the ranges, the start, the values fixed beside the searched ones and a
count.  Each message starts with the command (``'fit'``, ``'optimize'``) and names the value."""

from __future__ import annotations

import numpy as np

from ..core.checks import finite_number
from ..core.errors import ParameterError
from ..model.initial_values import lookup as lookup_initial
from ..simulation.sensitivity_columns import sensitivity_columns
from ..study.designs import parse_bounds


def ranges(system, params, command: str, verb: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(names, lower, upper) of ``params`` ({name: (low, high)} or 'LOW:HIGH'), each a name the
    run can be differentiated by (:func:`~mbsfmu.simulation.sensitivity_columns.sensitivity_columns`:
    not a constant the equations do not read)."""
    if isinstance(params, dict) and not params:
        raise ParameterError(
            f"{command}: give at least one parameter to {verb} with its range {{name: (low, high)}}"
        )
    names, lower, upper = parse_bounds(params)
    for nm in names:
        if not isinstance(nm, str):
            raise ParameterError(f"{command} params: {nm!r} is not a name")
    try:
        sensitivity_columns(system, names)
    except ParameterError as exc:
        raise ParameterError(f"{command} params: {str(exc).removeprefix('sensitivities: ')}") from None
    return names, lower, upper


def keyed(given, label: str, allowed: list, what: str) -> dict:
    """``given`` ({name: number} or None) as a dict whose keys are all in ``allowed``; ``label``
    is the command and the keyword ('fit start')."""
    if given is not None and not isinstance(given, dict):
        raise ParameterError(f"{label} must be a dict {{name: value}}, got {given!r}")
    given = dict(given or {})
    unknown = [k for k in given if k not in allowed]
    if unknown:
        raise ParameterError(
            f"{label}: {', '.join(map(repr, unknown))} is not {article(what)} "
            f"(the {what}s: {', '.join(allowed)})"
        )
    return given


def model_value(system, name: str) -> float | None:
    """The model's own value of a parameter (a constant's value, a coordinate's initial value or
    rate, a named initial condition's value or rate), None where it has none."""
    if name in system.constants_:
        return system.constants_[name].value
    canonical = lookup_initial(system, name)
    coords = system.coordinates_
    if canonical in coords:
        return coords[canonical].initial
    rated = canonical[4:-1]
    if rated in coords:
        return coords[rated].initial_velocity
    ic = next(ic for ic in system.initial_conditions if ic.name in (canonical, rated))
    return ic.value if ic.name == canonical else ic.rate


def start_point(system, names, lower, upper, start, command: str, what: str) -> np.ndarray:
    """The start of the search: ``start``'s value (a finite number within the range) where
    given, else the model's value where it lies within the range, else the middle of the range."""
    start = keyed(start, f"{command} start", names, what)
    x0 = []
    for nm, lo, hi in zip(names, lower, upper):
        if nm in start:
            v = finite_number(start[nm], f"{command} start of {nm!r}")
            if not lo <= v <= hi:
                raise ParameterError(
                    f"{command} start of {nm!r}: {v:g} is outside its range [{lo:g}, {hi:g}]"
                )
            x0.append(v)
            continue
        v = model_value(system, nm)
        x0.append(float(v) if v is not None and lo <= v <= hi else 0.5 * (lo + hi))
    return np.array(x0)


def fixed_values(system, names, constants, initial, command: str, what: str) -> tuple[dict, dict]:
    """(constants, initial): the values fixed in every run, none of them one of ``names``."""
    for label, given in (("constants", constants), ("initial", initial)):
        if given is not None and not isinstance(given, dict):
            raise ParameterError(f"{command} {label} must be a dict {{name: value}}, got {given!r}")
    constants, initial = dict(constants or {}), dict(initial or {})
    searched = {canonical(system, nm) for nm in names}
    for label, given in (("constants", constants), ("initial", initial)):
        both = [k for k in given if canonical(system, k) in searched]
        if both:
            raise ParameterError(
                f"{command}: {', '.join(map(repr, both))} given both as {article(what)} and in "
                f"{label}= (a {what}'s value is the minimizer's)"
            )
    return constants, initial


def canonical(system, name):
    """A constant's name, or the canonical name of an initial value (``Dx`` is ``der(x)``)."""
    if not isinstance(name, str) or name in system.constants_:
        return name
    return lookup_initial(system, name) or name


def count(name: str, v) -> int:
    """A whole number >= 1 (``name`` includes the command: 'fit max_evaluations')."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ParameterError(f"{name} must be a whole number >= 1, got {v!r}")
    return int(v)


def split_values(system, names, p, constants: dict, initial: dict) -> tuple[dict, dict]:
    """(params, initial) of a run at the parameter values ``p``: the constants among ``names``
    into ``params``, the initial values into ``initial``, beside the fixed ones."""
    params, init = dict(constants), dict(initial)
    for nm, v in zip(names, p):
        (params if nm in system.constants_ else init)[nm] = float(v)
    return params, init


def article(noun: str) -> str:
    """'a fitted parameter', 'an optimized parameter'."""
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def values_text(names, p) -> str:
    return ", ".join(f"{n} = {v:.10g}" for n, v in zip(names, p))
