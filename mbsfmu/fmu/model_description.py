"""The model description of an FMU of a model, in either FMI version and for either interface
or both (docs/guide/fmus.md, Variables): :func:`model_description_xml`.

The variables, in value-reference order, are those of
:func:`mbsfmu.codegen.fmu_variables.fmu_variables` (coordinates, velocities ``der(<name>)``,
``constraint_residual`` for models with constraints, the user outputs, the constants, the
solver settings, the inputs), the variables the engine's model source lists too; what each FMI
version and interface adds or leaves out of them is :mod:`.declared_variables`, the writers are
:mod:`.model_description_fmi2` and :mod:`.model_description_fmi3`.
"""

from __future__ import annotations

import pathlib
import re

from ..codegen.fmu_variables import fmu_variables
from .declared_variables import declaration
from .description_xml import default_guid, log_statistics
from .fmi_options import DEFAULT_FMI_VERSION, DEFAULT_INTERFACE, check_fmi_options
from .model_description_fmi2 import fmi2_model_description
from .model_description_fmi3 import fmi3_model_description


def model_identifier(name: str) -> str:
    """A C identifier for the FMU's modelIdentifier (binary name) derived from a model name."""
    ident = re.sub(r"\W", "_", name)
    return ident if ident and not ident[0].isdigit() else f"m_{ident}"


def fmu_path(out_path, ident: str) -> pathlib.Path:
    """``out_path`` itself if it names a ``.fmu`` file, else ``out_path/<ident>.fmu``; the
    parent folder is created."""
    out_path = pathlib.Path(out_path)
    if out_path.suffix != ".fmu":
        out_path = out_path / f"{ident}.fmu"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    return out_path


#: the log category of the integrator statistics that both FMU kinds declare (FMI 2.0)
LOG_STATISTICS = log_statistics(2)


def model_description_xml(system, model_identifier: str, guid: str | None = None,
                          can_get_set_state: bool = True, directional_derivatives: bool = False,
                          generation_tool: str = "mbsfmu", source_files=(), variables=None,
                          fmi_version: int = DEFAULT_FMI_VERSION, interface: str = DEFAULT_INTERFACE) -> str:
    """modelDescription.xml text for an FMU of ``system`` of ``fmi_version`` (2 or 3) that
    declares ``interface`` (``'cs'``, ``'me'`` or ``'both'``); ``variables`` defaults to
    ``fmu_variables(system)``; ``guid`` (the FMI 3.0 ``instantiationToken``) to one derived from
    ``model_identifier``.  ``source_files`` (names in the FMU's ``sources/``) are listed in an
    FMI 2.0 description so that importers can rebuild the binary (FMI 3.0 lists them in
    ``sources/buildDescription.xml``, :func:`~.model_description_fmi3.build_description`)."""
    fmi_version, interface = check_fmi_options(fmi_version, interface)
    variables = fmu_variables(system) if variables is None else variables
    declared = declaration(variables, fmi_version, interface, time_dependent=bool(system.time_parameters))
    guid = guid or default_guid(model_identifier)
    options = dict(interface=interface, can_get_set_state=can_get_set_state,
                   directional_derivatives=directional_derivatives, generation_tool=generation_tool)
    if fmi_version == 2:
        return fmi2_model_description(system, model_identifier, guid, declared, source_files=source_files,
                                      **options)
    return fmi3_model_description(system, model_identifier, guid, declared, **options)
