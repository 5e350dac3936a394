"""Checks of the values a user hands to any stage, written once: a finite number, declared
bounds, a keyword given under two names, the coordinates held by consistent initialization.

Each check returns the value it accepts (as the type the stages use) or raises the error of
:mod:`.errors` that names where the value was given and what it must be.
"""

from __future__ import annotations

import math

from .errors import ModelError, ParameterError


def finite_number(value, where: str) -> float:
    """A finite float, or a ParameterError naming ``where`` ('<where>: ... is not a number')."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{where}: {value!r} is not a number") from None
    if not math.isfinite(v):
        raise ParameterError(f"{where}: {value!r} is not finite")
    return v


def declared_bounds(lo, hi, value, where: str) -> tuple[float, float]:
    """Checked (min, max) of a constant or input: numbers (or None for no bound), min <= max,
    and the default ``value`` (if any) inside them."""
    lo = -math.inf if lo is None else float(finite_number(lo, f"{where} min"))
    hi = math.inf if hi is None else float(finite_number(hi, f"{where} max"))
    if lo > hi:
        raise ModelError(f"{where}: min {lo!r} is greater than max {hi!r}")
    if value is not None and not lo <= value <= hi:
        raise ModelError(f"{where}: default value {value!r} is outside [{lo!r}, {hi!r}]")
    return lo, hi


def keyword_alias(where: str, canonical: str, value, alias: str, alias_value):
    """(value, keyword used) of a keyword that has an older alias; giving both is a ModelError."""
    if alias_value is None:
        return value, canonical
    if value is not None:
        raise ModelError(f"{where}: {alias!r} is an alias of {canonical!r}; give only one of them "
                         f"(preferably {canonical})")
    return alias_value, alias


def fixed_names(fixed) -> list:
    """``fixed`` (a coordinate name, or names) as a list, or a ParameterError saying what it must be."""
    if isinstance(fixed, str):
        return [fixed]
    try:
        return list(fixed or ())
    except TypeError:
        raise ParameterError(f"fixed must be a list of coordinate names, got {fixed!r}") from None


def check_fixed_names(names, fixed) -> None:
    """ParameterError naming the entries of ``fixed`` that are not coordinates in ``names``."""
    bad = [n for n in fixed_names(fixed) if n not in names]
    if bad:
        raise ParameterError(f"consistent initialization: unknown fixed coordinate(s) {bad}")
