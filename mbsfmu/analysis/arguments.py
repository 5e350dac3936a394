"""Checked arguments of the analysis functions (linearize, the Linearization's methods, control
design): each bad value is a ParameterError whose message starts with ``where`` (the function
and the argument, e.g. ``"linearize: tol"``) and shows the value, before any work is done."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np

from ..core.errors import ParameterError
from ..model import matrices


def flag(value, where: str) -> bool:
    """True or False (numpy's too); anything else, 'no' or 1 included, is refused."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ParameterError(f"{where} must be True or False, got {value!r}")


def real_number(value, where: str) -> float:
    """A finite real number (not a bool, a string or a complex number)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{where} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ParameterError(f"{where} must be a finite number, got {value!r}")
    return v


def nonnegative(value, where: str) -> float:
    v = real_number(value, where)
    if v < 0:
        raise ParameterError(f"{where} must be >= 0, got {value!r}")
    return v


def positive(value, where: str) -> float:
    v = real_number(value, where)
    if v <= 0:
        raise ParameterError(f"{where} must be > 0, got {value!r}")
    return v


def count(value, where: str) -> int:
    """A whole number >= 1."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 1:
        raise ParameterError(f"{where} must be a whole number >= 1, got {value!r}")
    return int(value)


def mapping(value, where: str) -> dict:
    """A dict with names (strings) as keys; None is {}."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ParameterError(f"{where} must be a dict of values by name, got {type(value).__name__} "
                             f"{value!r}")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise ParameterError(f"{where}: the names must be strings, got {bad[0]!r}")
    return dict(value)


def name_list(value, where: str, known, what: str) -> list[str]:
    """A name or a list of distinct names, each one of ``known`` (``what`` says what they are:
    'input', 'output', ...)."""
    known = list(known)
    items = [value] if isinstance(value, str) else value
    try:
        items = list(items)
    except TypeError:
        raise ParameterError(f"{where} must be a name or a list of names, got {value!r}") from None
    for n in items:
        if not isinstance(n, str):
            raise ParameterError(f"{where}: {n!r} is not a name (a string)")
    unknown = [n for n in items if n not in known]
    if unknown:
        raise ParameterError(f"{where}: unknown {what}(s) {unknown} (known: {', '.join(known) or 'none'})")
    twice = sorted({n for n in items if items.count(n) > 1})
    if twice:
        raise ParameterError(f"{where}: {', '.join(map(repr, twice))} given more than once")
    return items


def real_array(value, where: str) -> np.ndarray:
    """The numbers of ``value`` as a float array: real (no bool, complex or text), finite."""
    return matrices.real_array(value, where, error=ParameterError)


def frequencies(value, where: str, allow_zero: bool = False) -> np.ndarray:
    """A non-empty list of finite frequencies in Hz, > 0 (>= 0 with ``allow_zero``)."""
    f = np.atleast_1d(real_array(value, where))
    if f.ndim != 1 or f.size == 0:
        raise ParameterError(f"{where} must be a non-empty list of frequencies [Hz], got {value!r}")
    low = f.min()
    if low < 0 or (low == 0 and not allow_zero):
        raise ParameterError(f"{where} must be {'>= 0' if allow_zero else '> 0'} Hz, got {float(low)!r}")
    return f


