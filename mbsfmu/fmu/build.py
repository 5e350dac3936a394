"""One entry point for both FMU kinds: ``build_fmu(model, out, kind=..., formulation=...,
method=..., fmi_version=..., interface=...)``.

* ``kind="native"`` (default): :func:`~mbsfmu.fmu.native.build_native_fmu`, a Python-free
  binary of the C engine: FMI 2.0 (default) or 3.0, Co-Simulation (default), Model Exchange or
  both (:mod:`mbsfmu.fmu.fmi_options`);
* ``kind="pythonfmu"``: :func:`~mbsfmu.fmu.pythonfmu_export.build_pythonfmu`, which runs the
  same engine in the importing tool's Python (mbsfmu must be installed there): FMI 2.0
  Co-Simulation only (:data:`PYTHONFMU_ONLY`).

Both take every formulation for models with loops (``'qr'`` by default).  ``method`` is the start
value of the FMU's integration method, the tunable parameter ``method``: ``'rkstab'`` (default,
explicit), ``'stiff'`` (Radau IIA 5) or ``'dop853'`` (:data:`mbsfmu.core.solver_settings.METHODS`;
the aliases ``'explicit'`` and ``'DOP853'`` of ``simulate`` are taken too; docs/guide/fmus.md,
"Choosing the method").

The keywords' old names ``backend=`` (for ``kind=``) and ``solver=`` (for ``method=``) work for
one release with a DeprecationWarning; giving an old and its new name together is refused.
"""

from __future__ import annotations

import pathlib

from ..core.errors import ParameterError, renamed_keyword
from ..core.solver_settings import DEFAULT_METHOD, check_setting
from ..model import Model
from .fmi_options import DEFAULT_FMI_VERSION, DEFAULT_INTERFACE, INTERFACES, check_fmi_options
from .native import build_native_fmu
from .pythonfmu_export import build_pythonfmu

#: the FMU kinds
KINDS = ("native", "pythonfmu")
#: the default FMU kind
DEFAULT_KIND = "native"
#: the one (FMI version, interface) of the pythonfmu kind: pythonfmu exports FMI 2.0
#: Co-Simulation; pythonfmu3, its FMI 3.0 fork, is alpha-stage work of one maintainer, and our
#: pythonfmu kind wraps pythonfmu's FMI 2.0 binary in a guard library (docs/guide/fmus.md)
PYTHONFMU_ONLY = (2, "cs")


def build_fmu(model, out=".", *, kind: str | None = None, formulation: str | None = None,
              method: str | None = None, fmi_version=DEFAULT_FMI_VERSION,
              interface: str = DEFAULT_INTERFACE, backend: str | None = None,
              solver: str | None = None) -> pathlib.Path:
    """Build an FMU of ``model`` (a model file; a System for the native kind) at ``out`` (a
    ``.fmu`` file name, or a folder that receives ``<model>.fmu``); returns the path of the FMU.

    ``kind``: ``'native'`` (None: the default) or ``'pythonfmu'``; ``formulation``: how loop
    constraints are kept (None: ``'qr'``); ``method``: the start value of the FMU parameter
    ``method`` (None: ``'rkstab'``); ``fmi_version``: 2 (FMI 2.0, the default) or 3 (FMI 3.0);
    ``interface``: ``'cs'`` (Co-Simulation, the default), ``'me'`` (Model Exchange) or
    ``'both'``; the pythonfmu kind builds FMI 2.0 Co-Simulation only.  ``backend`` and ``solver``
    are the deprecated names of ``kind`` and ``method``."""
    kind = renamed_keyword("build_fmu", "kind", kind, "backend", backend, DEFAULT_KIND)
    method = renamed_keyword("build_fmu", "method", method, "solver", solver, DEFAULT_METHOD)
    if kind not in KINDS:
        raise ParameterError(f"unknown FMU kind {kind!r}; choose one of {', '.join(KINDS)}")
    check_setting("method", method, api=True)
    fmi_version, interface = check_fmi_options(fmi_version, interface)
    if kind == "native":
        return build_native_fmu(model, out, formulation=formulation, method=method,
                                fmi_version=fmi_version, interface=interface)
    if (fmi_version, interface) != PYTHONFMU_ONLY:
        raise ParameterError(f"the pythonfmu kind builds FMI 2.0 Co-Simulation FMUs only: for FMI "
                             f"{fmi_version}.0 {INTERFACES[interface]} build the native kind (the default)")
    if isinstance(model, Model):
        raise ParameterError(f"the pythonfmu kind bundles the model file: pass its path, not a "
                             f"{type(model).__name__}")
    path = pathlib.Path(model)
    if not path.is_file():
        raise ParameterError(f"model file {str(path)!r} does not exist")
    return build_pythonfmu(path, out, formulation=formulation, method=method)
