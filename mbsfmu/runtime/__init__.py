"""Stage 4 of the pipeline: the C engine that every simulation runs on.

The hand-written C sources in this folder are the engine: the model contract (``mbs_model.h``,
which each generated model implements), the instance layer (``mbs_instance``), the integrators
on one step driver (``mbs_stepper``: ``mbs_rkstab``, ``mbs_dop853`` for tight tolerances, and
``mbs_radau`` for stiff models), the constraint formulations
(``mbs_formulation``), the parameter rules (``mbs_parameters``) and the dense linear algebra
(``mbs_linalg``).  The FMU layer (``mbs_fmu``: an FMU whatever its FMI version and interface) sits
on the instance layer, and the FMI 2.0 and 3.0 glue (``fmi2_glue.c``, ``fmi3_glue.c``) on it.

Python code never opens these files by path: :func:`source` returns one file's text (also of the
headers generated from :mod:`mbsfmu.core.constants`, which are not in the folder) and :func:`source_dir` the
folder of the hand-written ones.
"""

from __future__ import annotations

import pathlib

from ..core import constants

_DIR = pathlib.Path(__file__).resolve().parent

#: the engine's C files compiled into every model's binary (with the generated model.c)
ENGINE_SOURCES = ("mbs_instance.c", "mbs_formulation.c", "mbs_linalg.c", "mbs_parameters.c", "mbs_stepper.c",
                  "mbs_rkstab.c", "mbs_dop853.c", "mbs_radau.c")
#: the headers they include (:data:`GENERATED_HEADERS` among them)
ENGINE_HEADERS = ("mbs_model.h", "mbs_instance.h", "mbs_formulation.h", "mbs_linalg.h", "mbs_parameters.h",
                  "mbs_stepper.h", "mbs_rkstab.h", "mbs_dop853.h", "mbs_radau.h", constants.STEP_HEADER,
                  constants.KINDS_HEADER)
#: the engine's sensitivity analysis (mbs_sensitivity.h): compiled into the Python engine only,
#: not into FMUs (it allocates its storage per run)
SENSITIVITY_SOURCES = ("mbs_sensitivity.c", "mbs_adjoint.c")
SENSITIVITY_HEADERS = ("mbs_sensitivity.h", "mbs_sens_common.h")
#: headers generated from Python (never kept in this folder): name -> the function that writes it
GENERATED_HEADERS = {constants.STEP_HEADER: constants.step_header,
                     constants.KINDS_HEADER: constants.kinds_header}


def source_dir() -> pathlib.Path:
    """The folder of the engine's C sources (for ``-I`` and for copying into an FMU)."""
    return _DIR


def source(name: str) -> str:
    """The text of the engine's C file ``name`` (e.g. ``"mbs_linalg.c"``), generated for the
    headers of :data:`GENERATED_HEADERS`."""
    if name in GENERATED_HEADERS:
        return GENERATED_HEADERS[name]()
    path = _DIR / name
    if path.parent != _DIR or path.suffix not in (".c", ".h") or not path.exists():
        raise FileNotFoundError(f"{name!r} is not a source file of the mbsfmu C engine")
    return path.read_text()
