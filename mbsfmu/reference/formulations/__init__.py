"""The reference formulations: how constraints are kept, in Python (the readable oracle of the
engine's ``mbs_formulation.c``, and the no-compiler fallback; the reference integrators that run
them are :mod:`mbsfmu.reference.integrators`).

``make_formulation(name, numeric, inputs, **options)`` builds the formulation ``name`` (the
names, the default, the options and their checks: :mod:`mbsfmu.core.formulation_choice`) for a
NumericModel.  Nonholonomic constraints A(y, t) y' + a(y, t) = 0 (``System.nonholonomic_constraint``)
add rows to C, b' and b'' but not to c: the position-level parts (Baumgarte's beta^2 c, the
position projections, the consistent positions) use the holonomic rows only.
"""

from ...core.formulation_choice import (
    FORMULATION_NAMES,
    check_formulation_name,
    check_minimal,
    check_nonholonomic,
    check_options,
)
from ...equations.mass_regularity import check_regular_mass
from .base import Formulation, InputSchedule, kkt_solve
from .baumgarte import Baumgarte
from .coordinate_partitioning import CoordinatePartitioning
from .dae import DAE
from .minimal_ode import MinimalODE
from .optimal_partitioning import OptimalPartitioning
from .post_stabilization import PostStabilization

FORMULATIONS = {
    "dae": DAE,
    "baumgarte": Baumgarte,
    "partition": CoordinatePartitioning,
    "qr": lambda numeric, inputs=None, **kw: OptimalPartitioning(numeric, inputs, method="qr", **kw),
    "svd": lambda numeric, inputs=None, **kw: OptimalPartitioning(numeric, inputs, method="svd", **kw),
    "projection": PostStabilization,
}
assert tuple(FORMULATIONS) == FORMULATION_NAMES


def make_formulation(name, numeric, inputs=None, **options) -> Formulation:
    """The formulation ``name`` for a NumericModel with its ``options`` (checked against
    :data:`mbsfmu.core.formulation_choice.OPTIONS`); trees always get the minimal ODE."""
    name = check_formulation_name(name)
    check_nonholonomic(numeric.system, name)
    check_regular_mass(numeric.eqs, name)
    check_minimal(name, bool(numeric.m))
    if numeric.m == 0:
        check_options(name, options, constrained=False)
        return MinimalODE(numeric, inputs)
    return FORMULATIONS[name](numeric, inputs, **check_options(name, options))


__all__ = ["make_formulation", "FORMULATIONS", "Formulation",
           "InputSchedule", "kkt_solve", "MinimalODE", "DAE", "Baumgarte",
           "CoordinatePartitioning", "OptimalPartitioning", "PostStabilization"]
