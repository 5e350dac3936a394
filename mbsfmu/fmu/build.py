"""One entry point for both FMU flavours: ``build_fmu(model, out, backend=..., formulation=...,
solver=...)``.

* ``backend="native"`` (default): :func:`~mbsfmu.fmu.native.build_native_fmu`, a Python-free
  binary of the C engine;
* ``backend="pythonfmu"``: :func:`~mbsfmu.fmu.pythonfmu_export.build_pythonfmu`, which runs the
  same engine in the importing tool's Python (mbsfmu must be installed there).

Both take every formulation for models with loops (``'qr'`` by default).  ``solver`` is the start
value of the FMU's integration method, the tunable parameter ``solver``: ``'rkstab'`` (default,
explicit), ``'stiff'`` (Radau IIA 5) or ``'dop853'`` (:data:`mbsfmu.core.solver_settings.SOLVERS`;
docs/guide/fmus.md, "Choosing the solver").
"""

from __future__ import annotations

import inspect
import pathlib

from ..core.errors import ParameterError
from ..core.solver_settings import DEFAULT_SOLVER, check_setting
from ..model import Model
from .native import build_native_fmu
from .pythonfmu_export import build_pythonfmu

BACKENDS = ("native", "pythonfmu")


def build_fmu(model, out=".", *, backend: str = "native", formulation: str | None = None,
              solver: str = DEFAULT_SOLVER) -> pathlib.Path:
    """Build an FMI 2.0 Co-Simulation FMU of ``model`` (a model file; a System for the native
    backend) at ``out`` (a ``.fmu`` file name, or a folder that receives ``<model>.fmu``);
    returns the path of the FMU."""
    if backend not in BACKENDS:
        raise ParameterError(f"unknown FMU backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    check_setting("solver", solver, api=True)
    if backend == "native":
        return build_native_fmu(model, out, formulation=formulation, solver=solver)

    if isinstance(model, Model):
        raise ParameterError(f"the pythonfmu backend bundles the model file: pass its path, not a "
                             f"{type(model).__name__}")
    path = pathlib.Path(model)
    if not path.is_file():
        raise ParameterError(f"model file {str(path)!r} does not exist")

    return build_pythonfmu(path, out, formulation=formulation, solver=solver)


def build_defaults() -> dict:
    """The defaults of build_fmu's keywords (the CLI shows these in its help)."""
    return {k: p.default for k, p in inspect.signature(build_fmu).parameters.items()
            if p.default is not inspect.Parameter.empty}
