"""fmpy instances of our FMUs for the benches, with every log message kept (``bench/fmu_speed.py``).

``instance(unzipped, md, interface, name, categories)`` makes fmpy's ``FMU2Slave``,
``FMU2Model``, ``FMU3Slave`` or ``FMU3Model`` for the FMI version of the model description ``md``
and the interface ``'cs'`` or ``'me'``, instantiates it with a logger that appends
``(status, category, message)`` to ``fmu.messages`` and, if ``categories`` are given, enables debug
logging for exactly those (an instantiation with logging on enables all of them).

Both FMI versions log the same statistics at terminate:

* Co-Simulation, under ``logEvents``: "statistics: N doStep calls, S s in doStep (U us per
  call), R right-hand sides, A accepted and J rejected internal steps, P projections", the wall
  time inside do-step measured by the FMU with CLOCK_MONOTONIC (:data:`CS_STATS`);
* Model Exchange, under ``logStatistics``: "statistics: N derivative evaluations, M completed
  integrator steps, P projections onto the constraints", the importer's calls counted by the FMU
  (:data:`ME_STATS`).
"""

from __future__ import annotations

import pathlib
import re

CS_STATS = re.compile(
    r"statistics: (?P<calls>\d+) doStep calls, (?P<seconds>[0-9.eE+-]+) s in doStep "
    r"\((?P<us>[0-9.eE+-]+) us per call\), (?P<nfev>\d+) right-hand sides, (?P<acc>\d+) accepted "
    r"and (?P<rej>\d+) rejected internal steps, (?P<nproj>\d+) projections")
ME_STATS = re.compile(
    r"statistics: (?P<nder>\d+) derivative evaluations, (?P<ncompleted>\d+) completed integrator "
    r"steps, (?P<nproj>\d+) projections onto the constraints")


def unzip(path: pathlib.Path) -> tuple[pathlib.Path, object]:
    """``path`` extracted beside it (into ``unzipped_<stem>``) and its model description."""
    from fmpy import extract, read_model_description

    folder = path.resolve().parent / f"unzipped_{path.stem}"
    extract(str(path), str(folder))
    return folder, read_model_description(str(folder))


def instance(unzipped: pathlib.Path, md, interface: str, name: str,
             categories: list[str] | None = None):
    """An instantiated fmpy FMU (see the module docstring); ``fmu.messages`` keeps its log."""
    from fmpy.fmi2 import FMU2Model, FMU2Slave
    from fmpy.fmi3 import FMU3Model, FMU3Slave

    from mbsfmu.fmu.fmpy_callbacks import recording_callbacks

    fmi3 = md.fmiVersion.startswith("3")
    cls = {(False, "cs"): FMU2Slave, (False, "me"): FMU2Model,
           (True, "cs"): FMU3Slave, (True, "me"): FMU3Model}[fmi3, interface]
    element = md.coSimulation if interface == "cs" else md.modelExchange
    fmu = cls(guid=md.guid, unzipDirectory=str(unzipped), modelIdentifier=element.modelIdentifier,
              instanceName=name)
    messages: list[tuple[int, str, str]] = []
    logging_on = bool(categories)
    if fmi3:
        def log_message(env, status, category, message):
            messages.append((int(status), (category or b"").decode(), (message or b"").decode()))

        fmu.instantiate(loggingOn=logging_on, logMessage=log_message)  # fmpy keeps the callback
    else:
        fmu.bench_callbacks = recording_callbacks(messages)  # alive as long as the instance
        fmu.instantiate(callbacks=fmu.bench_callbacks, loggingOn=logging_on)
    if logging_on:
        fmu.setDebugLogging(True, categories)
    fmu.messages = messages
    return fmu


def statistics(fmu, pattern: re.Pattern) -> dict[str, float] | None:
    """The numbers of the last message of ``fmu`` that ``pattern`` matches, or None."""
    found = None
    for _, _, message in fmu.messages:
        m = pattern.search(message)
        if m:
            found = {k: float(v) for k, v in m.groupdict().items()}
    return found


def errors(fmu) -> list[str]:
    """The messages ``fmu`` logged with status error or worse."""
    return [message for status, _, message in fmu.messages if status >= 3]
