"""The slave of mbsfmu's pythonfmu FMUs: one class, run inside the importing tool's Python.

The class (:mod:`.slave`) is made of its variables (:mod:`.variables`: registration and checked
values) and FMU states (:mod:`.states`: their format and checks); what integrates is one of two
backends with one face (:mod:`.backend`): the C engine (:mod:`.engine_backend`) or the numpy
formulations (:mod:`.numpy_backend`); refusals reach the importer through the FMU's guard
library (:mod:`.guard`).

Each FMU's script (written by :func:`mbsfmu.fmu.pythonfmu_export.build_pythonfmu`) subclasses
:class:`MbsfmuSlave` with the model's own values as class attributes: ``MODEL_FILE``,
``MODEL_NAME``, ``MODEL_GUID``, ``BINARY`` (the guard library's name), ``FORMULATION``,
``METHOD`` (the start value of the parameter ``method``, by name), ``VARIABLES`` (names in
value-reference order, as at build time) and ``N_STATE`` (length of the integrator state [y, y']).

The model runs on the C engine (:class:`mbsfmu.engine.extension.Engine`: the instance layer of
``mbs_instance.h`` that the native FMU's ``fmi2_glue.c`` runs as well): fmi2SetReal and
fmi2GetReal are its values (checked by it as well), fmi2ExitInitializationMode is its consistent
start, fmi2DoStep its do-step with dense output (the integrator continues across communication
points and restarts only after an input or parameter changed) and FMU states are its saved state.
So both FMU kinds take the same steps and give the same values at every communication point.
The engine's extension is compiled when the FMU is instantiated, in the importer's process (once
per model and mbsfmu version: mbsfmu's compile cache keeps it).  Where that is not possible (no C
compiler), or the FMU's formulation is not one of :data:`mbsfmu.engine.extension.ENGINE_FORMULATIONS`,
the instance integrates with the numpy formulations and the Python RKSTAB of
:mod:`mbsfmu.reference.formulations` instead (restarted at every fmi2DoStep, so its steps differ from the
native FMU's; outputs are updated at communication points only) and says so with a warning at
fmi2Instantiate.

The integration method is the Integer parameter ``method`` (fmi2SetInteger / fmi2GetInteger; 0 =
rkstab, 1 = stiff, 2 = dop853), as in the native FMU: on the engine it is the engine's method, on the
numpy path 'stiff' and 'dop853' are scipy's Radau and DOP853 with the formulation's projection after
every step.  Its old name ``solver`` (the last variable) reads and sets it for one release, and its
first set logs a deprecation warning.  At fmi2Terminate the
work of each method that ran is logged under ``logStatistics`` (with debug logging on, as pythonfmu
passes messages), in the native FMU's words.

Every FMI call is checked in full before anything changes; a refused call changes nothing and
reports why (function, variable, value, time) through the FMU's guard library, which passes the
message to the importer's logger and returns fmi2Error (see mbsfmu.fmu.pythonfmu_export).
No exception leaves a method that pythonfmu calls: pythonfmu would turn it into fmi2Fatal.
"""

from .slave import MbsfmuSlave, keep_namespace

__all__ = ["MbsfmuSlave", "keep_namespace"]
