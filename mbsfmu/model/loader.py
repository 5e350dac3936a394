"""Load a model file: any Python file with a ``model()`` function returning a model (a System or a
LagrangianSystem); and :func:`system_of`, the one reading of "a model" by simulate and linearize
(a model, its equations or a model file)."""

from __future__ import annotations

import importlib.util
import pathlib
import traceback

from ..core.errors import ModelError
from .base import Model


def load_model(path, **kwargs):
    """Import ``path`` and return ``model(**kwargs)``; errors name the file."""
    p = pathlib.Path(path)
    if p.is_dir():
        raise ModelError(f"model file {str(p)!r} is a directory; give the model's .py file")
    if not p.is_file():
        raise ModelError(f"model file {str(p)!r} does not exist")
    if p.suffix != ".py":
        raise ModelError(f"model file {str(p)!r} is not a Python file: a model file is a .py file with a "
                         "model() function")
    spec = importlib.util.spec_from_file_location(f"_mbsfmu_model_{p.stem}", p)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ModelError:
        raise
    except (Exception, SystemExit) as exc:
        raise ModelError(f"{p}: importing the model file failed: {type(exc).__name__}: {exc}") from exc
    fn = getattr(module, "model", None)
    if not callable(fn):
        raise ModelError(f"{p}: no model() function found")
    try:
        system = fn(**kwargs)
    except (Exception, SystemExit) as exc:
        where = _line_in(exc, p)
        raise ModelError(f"{p}{where}: model() failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(system, Model):
        raise ModelError(f"{p}: model() returned {type(system).__name__}, not a mbsfmu model (a System "
                         "or a LagrangianSystem)")
    return system


def _line_in(exc: BaseException, path: pathlib.Path) -> str:
    """', line N' of the last traceback frame of ``exc`` inside the model file ('' if none)."""
    target = str(path.resolve())
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__)
             if str(pathlib.Path(f.filename).resolve()) == target]
    return f", line {lines[-1]}" if lines else ""


def system_of(model):
    """The model (a System or a LagrangianSystem) of ``model``: the model itself, the model of its
    equations (an object with ``system`` and ``M``) or the model file it names; a TypeError for
    anything else."""
    if isinstance(model, Model):
        return model
    if hasattr(model, "system") and hasattr(model, "M"):
        return model.system
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        return load_model(model)
    raise TypeError(f"simulate() needs a model (System or LagrangianSystem), its Equations or a model "
                    f"file, got {type(model)!r}")
