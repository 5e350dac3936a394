"""What the model descriptions of both FMI versions write alike: the default GUID, the log
categories, the default experiment and a variable's attributes.

Log categories: ``logEvents``, ``logStatusWarning``, ``logStatusError`` and ``logStatistics`` (the
integrator's work per method, logged at fmi2Terminate / fmi3Terminate), ``logAll`` for all of
them.
"""

from __future__ import annotations

import math
import uuid
from xml.sax.saxutils import quoteattr

from ..core.fmu_layout import FmuVariable


def default_guid(model_identifier: str) -> str:
    """The GUID of a description written without one (tests): derived from the identifier."""
    return "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"mbsfmu:{model_identifier}")) + "}"


def xml_bool(flag: bool) -> str:
    """An xs:boolean attribute value."""
    return "true" if flag else "false"


def log_statistics(fmi_version: int) -> tuple[str, str]:
    """The log category of the integrator statistics: (name, description)."""
    return ("logStatistics", "integrator statistics per method (accepted and rejected steps, "
            f"right-hand sides, Jacobians, LU decompositions) at fmi{fmi_version}Terminate")


def log_categories(fmi_version: int) -> list[str]:
    """The ``<LogCategories>`` element's lines."""
    name, description = log_statistics(fmi_version)
    return [
        "  <LogCategories>",
        '    <Category name="logEvents" description="initialization and parameter changes"/>',
        '    <Category name="logStatusWarning" description="warnings"/>',
        '    <Category name="logStatusError" description="errors"/>',
        f"    <Category name={quoteattr(name)} description={quoteattr(description)}/>",
        '    <Category name="logAll" description="everything"/>',
        "  </LogCategories>",
    ]


DEFAULT_EXPERIMENT = '  <DefaultExperiment startTime="0.0" stepSize="0.001"/>'


def variable_attributes(v: FmuVariable) -> list[str]:
    """name, valueReference, description, causality, variability and initial (where given)."""
    attrs = [f"name={quoteattr(v.name)}", f'valueReference="{v.value_reference}"',
             f"description={quoteattr(v.description)}", f'causality="{v.causality}"',
             f'variability="{v.variability}"']
    if v.initial:
        attrs.append(f'initial="{v.initial}"')
    return attrs


def value_attributes(v: FmuVariable) -> str:
    """' start=".." min=".." max=".."' of the given start and the finite bounds (integers for an
    Integer variable), with a leading space each."""
    number = int if v.type == "Integer" else repr
    typed = f' start="{number(v.start)}"' if v.start is not None else ""
    typed += f' min="{number(v.min)}"' if math.isfinite(v.min) else ""
    typed += f' max="{number(v.max)}"' if math.isfinite(v.max) else ""
    return typed


def unknown_list(dependencies: list[int], kind: str) -> str:
    """' dependencies=".." dependenciesKind=".."' of a ModelStructure unknown that depends on the
    knowns ``dependencies`` (indices or value references) with ``kind``; ' dependencies=""' for
    none."""
    deps = " ".join(map(str, dependencies))
    kinds = f' dependenciesKind="{" ".join(kind for _ in dependencies)}"' if deps else ""
    return f' dependencies="{deps}"{kinds}'
