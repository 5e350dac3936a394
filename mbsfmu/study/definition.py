"""What defines a study's runs, kept beside its rows so that a resumed study can tell whether the
rows in the file come from the same runs.

A study's rows file ``OUT`` gets a definition file ``OUT.definition.json`` (written atomically
before the first run): a flat table of entries, each a JSON value,

- ``target``: the kind of target and its identity: a model file's SHA-256 (of its bytes), an
  FMU's GUID, for a ``System`` its name; ``model``: the digest of the model's definition (a
  model file's or a System's, see :func:`digest`), so that a change in a module the model file
  imports is seen too;
- the settings of every run: ``t_end``, ``dt``, ``rtol`` and every other keyword of
  :func:`mbsfmu.simulate` with its value (defaults included, the backend resolved), or for an
  FMU the options given to ``fmpy.simulate_fmu``; fixed values given to the sweep (``params``,
  ``initial``, ``inputs``, ``start_values``) are among them;
- ``parameters`` (the design's columns) and ``design`` (its number of runs and the SHA-256 of
  its values);
- ``metric NAME`` for every metric (``max(theta)``, ``settling(x, 0.05)``, or a function's
  identity, see :func:`describe`) and ``keep``.

Two definitions are compared entry by entry (:func:`differences`).  The digest of an object
(a System, an element, an option object) is the SHA-256 of a canonical text of everything it
holds: its public attributes, recursively, in their (insertion) order, sympy expressions by
``srepr``, arrays by their bytes; attributes whose names start with ``_`` are caches and
bookkeeping derived from the others (``System._equations``, the name registry) and are left
out.  The text is the same in every process (no ``id``, no hash-seed-dependent order: sets are
sorted), and it changes with any change of the model.  A function is identified by its module,
qualified name and source text (a lambda, whose source is the whole statement around it, and a
function without source by its byte code, constants and names, which are the same for one
Python version), its default arguments and the numbers, strings and functions it closes over;
a global variable it reads, or the content of a list or object it closes over, is not seen.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import os
import pathlib

import numpy as np
import sympy as sp

from ..core.errors import ParameterError

#: the definition file of rows file OUT is OUT + SUFFIX
SUFFIX = ".definition.json"
FORMAT = 1
#: hex digits of a digest shown in a definition (64 bits: collisions are not a concern here)
SHOWN = 16


def path_of(rows_path) -> pathlib.Path:
    """The definition file of a rows file."""
    p = pathlib.Path(rows_path)
    return p.with_name(p.name + SUFFIX)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:SHOWN]


def _canonical(value, path: tuple) -> str:
    """The canonical text of ``value`` (module docstring); ``path`` holds the ids of the objects
    being written, so that a reference cycle is written as a back-reference."""
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return repr(value.item())
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return f"array({data.dtype.str}, {data.shape}, {sha256(data.tobytes())})"
    try:
        if isinstance(value, (sp.Basic, sp.MatrixBase)):
            return "sympy:" + sp.srepr(value)
    except ImportError:  # pragma: no cover - sympy is a dependency
        pass
    if id(value) in path:
        return f"<back {len(path) - path.index(id(value))}>"
    inner = (*path, id(value))
    if isinstance(value, dict):
        items = (f"{_canonical(k, inner)}: {_canonical(v, inner)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return type(value).__name__ + "[" + ", ".join(_canonical(v, inner) for v in value) + "]"
    if isinstance(value, (set, frozenset)):
        return "set[" + ", ".join(sorted(_canonical(v, inner) for v in value)) + "]"
    if inspect.isfunction(value) or inspect.ismethod(value):
        return _function_text(value, inner)
    fields = getattr(value, "__dict__", None)
    if fields is None:  # a builtin or C object without attributes: its type and repr
        return f"{type(value).__module__}.{type(value).__qualname__}:{value!r}"
    public = {k: v for k, v in fields.items() if not k.startswith("_")}
    return f"{type(value).__module__}.{type(value).__qualname__}{_canonical(public, inner)}"


def _function_text(fn, path: tuple) -> str:
    func = getattr(fn, "__func__", fn)
    try:
        # a lambda's source is the whole statement around it (a change beside it would count)
        source = _code_text(func.__code__) if func.__name__ == "<lambda>" else inspect.getsource(func)
    except (OSError, TypeError):  # defined where no source is kept: its byte code instead
        source = _code_text(func.__code__)
    cells = [c.cell_contents for c in (func.__closure__ or ()) if _filled(c) and _constant(c.cell_contents)]
    parts = [f"{func.__module__}.{func.__qualname__}", source, _canonical(func.__defaults__, path),
             _canonical(func.__kwdefaults__, path), _canonical(cells, path)]
    if inspect.ismethod(fn):
        parts.append(_canonical(fn.__self__, path))
    return "function(" + "|".join(parts) + ")"


def _code_text(code) -> str:
    """A code object as text: its byte code, constants (nested code objects likewise) and
    names; the same in every process of one Python version."""
    consts = ", ".join(_code_text(c) if inspect.iscode(c) else repr(c) for c in code.co_consts)
    return f"code({code.co_code.hex()}; {consts}; {code.co_names!r}; {code.co_varnames!r})"


def _constant(value) -> bool:
    """Whether a value a function closes over is a constant of its definition (a number,
    string, tuple of them, or a function), not state it keeps (a list it appends to)."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        return True
    if isinstance(value, (tuple, frozenset)):
        return all(_constant(v) for v in value)
    return inspect.isfunction(value)


def _filled(cell) -> bool:
    try:
        _ = cell.cell_contents
    except ValueError:  # a cell not yet assigned
        return False
    return True


def digest(value) -> str:
    """The SHA-256 (first :data:`SHOWN` hex digits) of the canonical text of ``value``."""
    return sha256(_canonical(value, ()).encode("utf-8"))


def describe(value):
    """``value`` as a JSON value for a definition entry: numbers, strings, lists and dicts as
    they are (tuples as lists), a function as ``'function MODULE.NAME (sha256 ...)'``, an
    array or any other object as its type and digest."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    if isinstance(value, dict):
        return {str(k): describe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [describe(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((describe(v) for v in value), key=repr)
    if inspect.isfunction(value) or inspect.ismethod(value):
        func = getattr(value, "__func__", value)
        return f"function {func.__module__}.{func.__qualname__} (sha256 {digest(value)})"
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return f"{type(value).__qualname__} (sha256 {digest(value)})"


def normalized(entries: dict) -> dict:
    """The entries as they read back from the file (JSON round trip: tuples become lists)."""
    return json.loads(json.dumps(entries))


def text(value) -> str:
    """An entry's value as the messages show it: numbers by repr (0.3, 3.0), strings as they
    are, None as 'not given', anything else as JSON."""
    if value is None:
        return "not given"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, (bool, int, str)):
        return str(value)
    return json.dumps(value)


def differences(old: dict, new: dict, where: str) -> list[str]:
    """One line per entry that differs: ``'t_end: 0.3 in study.csv, 3.0 now'``."""
    lines = []
    for key in [*old, *(k for k in new if k not in old)]:
        a, b = old.get(key), new.get(key)
        if a != b and not (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)):
            lines.append(f"{key}: {text(a)} in {where}, {text(b)} now")
    return lines


def of_sweep(target, loaded, settings: dict, design, metrics: list, keep) -> dict:
    """The definition entries of a sweep (module docstring): ``target`` a
    :class:`.batch.Target` with ``loaded`` its loaded form (a System, or an FMU's folder and
    model description), ``settings`` the keywords of every run (already described), ``design``
    the DataFrame of parameter sets, ``metrics`` the :class:`.metrics.Metric` list."""
    if target.kind in ("factory", "ssp"):
        entries = {}  # the target's identity is among the settings' entries (.diagram_target.identity)
    elif target.kind == "fmu":
        entries = {"target": f"FMU GUID {loaded[1].guid}"}
    else:
        what = (f"model file sha256 {sha256(pathlib.Path(target.path).read_bytes())}"
                if target.kind == "model" else f"System {loaded.name!r}")
        model = f"{type(loaded).__name__} {loaded.name!r} sha256 {digest(loaded)}"
        entries = {"target": what, "model": model}
    values = np.ascontiguousarray(design.to_numpy(dtype=float))
    entries.update(settings)
    entries["parameters"] = [str(c) for c in design.columns]
    entries["design"] = f"{len(design)} runs, sha256 {sha256(values.tobytes())}"
    for m in metrics:
        entries[f"metric {m.name}"] = describe(m.function) if m.function is not None else m.text
    entries["keep"] = list(keep or [])
    return normalized(entries)


def read(path) -> dict | None:
    """The definition file's content, None if there is none; a damaged one is a ParameterError."""
    p = pathlib.Path(path)
    if not p.exists():
        return None
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ParameterError(f"cannot read the definition file {str(p)!r} ({exc}); resume='restart' "
                             "(--resume restart) moves the rows and it aside and starts over") from None
    if not isinstance(data, dict) or not isinstance(data.get("definition"), dict):
        raise ParameterError(f"the definition file {str(p)!r} holds no definition; resume='restart' "
                             "(--resume restart) moves the rows and it aside and starts over")
    return data


def write(path, data: dict) -> None:
    """Write the definition file atomically (a temporary file, then replace)."""
    p = pathlib.Path(path)
    tmp = p.with_name(p.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(p)
