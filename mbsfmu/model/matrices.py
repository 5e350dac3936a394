"""Checks of numeric tables a user gives (matrices of a finite-element model or of modal data,
weights of a controller): real finite arrays, symmetric and (semi)definite matrices.

Each check raises the exception class it is given (ModelError for model data, ParameterError
for arguments of a function), with a message that starts with ``what``, the name of the table.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import ModelError


def real_array(value, what: str, error=ModelError, finite: bool = True,
               allow_complex: bool = False) -> np.ndarray:
    """The numbers of ``value`` as a float array (complex with ``allow_complex``); ``error`` if
    it is missing (None), ragged, holds text, True/False or (unless allowed) complex numbers, or
    (with ``finite``) entries that are not finite (naming the first one)."""
    if value is None:
        raise error(f"{what} is missing")
    kinds = _leaf_kinds(value)
    try:
        a = np.asarray(value)
    except ValueError:  # ragged nested lists
        raise error(f"{what} must be a table of numbers (rows of equal length), got {_short(value)}") \
            from None
    if a.dtype.kind == "O":
        kinds |= {type(x) for x in a.ravel().tolist()}
    if a.dtype.kind in "US" or any(issubclass(k, (str, bytes)) for k in kinds):
        raise error(f"{what} must hold numbers, not text: {_short(value)}")
    if a.dtype.kind == "b" or any(issubclass(k, (bool, np.bool_)) for k in kinds):
        raise error(f"{what} must hold numbers, not True/False: {_short(value)}")
    if not allow_complex and (a.dtype.kind == "c"
                              or any(issubclass(k, (complex, np.complexfloating)) for k in kinds)):
        raise error(f"{what} must be real, got complex entries: {_short(value)}")
    try:
        a = a.astype(complex if allow_complex else float)
    except (TypeError, ValueError):
        raise error(f"{what} must hold numbers, got {_short(value)}") from None
    if finite and not np.all(np.isfinite(a)):
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        at = f" (entry {where[0] if len(where) == 1 else where} is {a[where]})" if where else ""
        raise error(f"{what} has entries that are not finite{at}")
    return a


def _leaf_kinds(value) -> set:
    """The types of the entries of nested lists and tuples (numpy would turn True into 1.0 in a
    list with floats); empty for anything else."""
    if not isinstance(value, (list, tuple)):
        return set()
    out, stack = set(), [value]
    while stack:
        v = stack.pop()
        for x in v:
            if isinstance(x, (list, tuple)):
                stack.append(x)
            else:
                out.add(type(x))
    return out


def _short(value, limit: int = 120) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[:limit] + "..."


def check_symmetric(A, what: str, definite: bool | None, rtol: float = 1e-8, error=ModelError) -> None:
    """``error`` unless A is square, symmetric to rtol of its largest entry and positive
    definite (``definite``) or semidefinite (to rtol of its largest eigenvalue); ``definite=None``
    checks the symmetry only (e.g. a geometric stiffness, which may be indefinite)."""
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise error(f"{what} must be a square matrix, got the shape {A.shape}")
    scale = np.abs(A).max(initial=0.0)
    asym = np.abs(A - A.T).max(initial=0.0)
    if asym > rtol * max(scale, 1e-300):
        i, j = np.unravel_index(np.argmax(np.abs(A - A.T)), A.shape)
        raise error(f"{what} is not symmetric: entry ({i}, {j}) is {float(A[i, j])!r}, "
                    f"({j}, {i}) is {float(A[j, i])!r}")
    if A.size == 0 or definite is None:
        return
    ev = np.linalg.eigvalsh((A + A.T) / 2)
    floor = rtol * max(abs(ev).max(), 1e-300)
    if (definite and ev.min() <= floor) or ev.min() < -floor:
        kind = "positive definite" if definite else "positive semidefinite"
        raise error(f"{what} is not {kind}: its smallest eigenvalue is {ev.min():.6g} "
                    f"(largest {ev.max():.6g})")
