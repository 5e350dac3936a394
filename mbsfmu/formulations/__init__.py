"""Stage 3 of the pipeline: formulations, how constraints are kept (the numpy reference of the
engine's ``mbs_formulation``; the reference integrators that run them are :mod:`mbsfmu.integrators`).

``make_formulation(name, numeric, inputs, **options)`` builds one of

* ``dae``        acceleration-level DAE, explicit form (seed 000 eq. 9), unstabilized
* ``baumgarte``  Baumgarte stabilization, options ``alpha``, ``beta``
* ``partition``  fixed independent coordinates (seed 000 eqs. 11-18), option ``independent``
* ``qr``, ``svd`` optimal linear combinations of coordinates (seed 000 eqs. 19-31)
* ``projection`` post-stabilization PStab (seed 004 Algorithm 3.3), option ``weighting``

Nonholonomic constraints A(y, t) y' + a(y, t) = 0 (``System.nonholonomic_constraint``) add rows
to C, b' and b'' but not to c: every formulation but ``partition`` and ``minimal`` takes them
(:data:`NONHOLONOMIC_FORMULATIONS`); the position-level parts (Baumgarte's beta^2 c, the
position projections, the consistent positions) use the holonomic rows only.

The default for systems with loops is ``qr``: it keeps both position and velocity constraints
to the Newton tolerance after every step (like ``projection``), and unlike ``projection`` and
``partition`` it needs neither a full-rank C (its rank-revealing QR takes redundant constraints)
nor a good choice of independent coordinates (the decomposition chooses the best directions at
every evaluation, so it runs through configurations where any fixed partition is singular).
"""

import math

import numpy as np

from ..errors import ParameterError
from .base import Formulation, InputSchedule, kkt_solve
from .baumgarte import Baumgarte
from .coordinate_partitioning import CoordinatePartitioning
from .dae import DAE
from .minimal_ode import MinimalODE
from .optimal_partitioning import OptimalPartitioning
from .post_stabilization import PostStabilization

DEFAULT_FORMULATION = "qr"

FORMULATIONS = {
    "dae": DAE,
    "baumgarte": Baumgarte,
    "partition": CoordinatePartitioning,
    "qr": lambda numeric, inputs=None, **kw: OptimalPartitioning(numeric, inputs, method="qr", **kw),
    "svd": lambda numeric, inputs=None, **kw: OptimalPartitioning(numeric, inputs, method="svd", **kw),
    "projection": PostStabilization,
}


def check_formulation_name(name) -> str:
    """``name`` (None means the default) if it names a formulation, else a ParameterError."""
    if name is None:
        return DEFAULT_FORMULATION
    if name not in FORMULATIONS and name != "minimal":
        raise ParameterError(f"unknown formulation {name!r}; choose one of "
                             f"{', '.join(FORMULATIONS)}")
    return name


#: the formulations that take nonholonomic constraints
NONHOLONOMIC_FORMULATIONS = ("qr", "svd", "projection", "baumgarte", "dae")


def check_nonholonomic(system, name) -> None:
    """A ParameterError if ``system`` has nonholonomic constraints and the formulation ``name``
    (None: the default) cannot take them."""
    rows = [h.name for h in getattr(system, "nonholonomic", ())]
    name = check_formulation_name(name)
    if rows and name not in NONHOLONOMIC_FORMULATIONS:
        raise ParameterError(
            f"{system.name}: formulation {name!r} cannot take the nonholonomic constraint(s) "
            f"{', '.join(map(repr, rows))} (it needs constraints on the positions only); choose "
            f"one of {', '.join(NONHOLONOMIC_FORMULATIONS)}")


#: the formulations that factor the mass matrix itself and so need it regular: the engine's
#: dae and baumgarte solve [[M, C^T], [C, 0]] through the Cholesky factor of M, projection
#: integrates the same way and projects with M^-1 C^T; qr, svd and partition need only the mass
#: matrix reduced by the constraints (see :mod:`mbsfmu.equations.mass_regularity`)
REGULAR_MASS_FORMULATIONS = ("dae", "baumgarte", "projection")


def check_regular_mass(system, name) -> None:
    """A ParameterError if the formulation ``name`` (None: the default) needs a regular mass
    matrix and ``system``'s is singular at its defaults (a coordinate without mass that the
    constraints fix), naming the formulation, the motion without mass and the formulations
    that run the model."""
    from ..equations.mass_regularity import singular_mass

    name = check_formulation_name(name)
    if name not in REGULAR_MASS_FORMULATIONS or not system.constrained:
        return
    why = singular_mass(system.equations())
    if why:
        fit = [f for f in ("qr", "svd", "partition")
               if not (f == "partition" and getattr(system, "nonholonomic", ()))]
        raise ParameterError(
            f"{system.name}: formulation {name!r} needs a regular mass matrix (it factors M "
            f"itself), but {why}; choose one of {', '.join(fit)}: they need only the mass matrix "
            "reduced by the constraints to be regular, as Lagrange's equations of the first "
            "kind do")


#: the options of the formulations, and the values each takes: (test, what it must be)
OPTIONS = {
    "alpha": (lambda v: _number(v) and math.isfinite(v) and v >= 0, "a finite number >= 0"),
    "beta": (lambda v: _number(v) and math.isfinite(v) and v >= 0, "a finite number >= 0"),
    "rank_tol": (lambda v: _number(v) and 0 < v < 1, "a number in (0, 1)"),
    "newton_tol": (lambda v: _number(v) and 0 < v < 1, "a number in (0, 1)"),
    "newton_max": (lambda v: _number(v) and v == int(v) and 1 <= v <= 1000, "an integer in [1, 1000]"),
    "iterations": (lambda v: _number(v) and v == int(v) and 1 <= v <= 1000, "an integer in [1, 1000]"),
    "cond_max": (lambda v: _number(v) and 1 < v < math.inf, "a finite number > 1 (a condition number)"),
    "weighting": (lambda v: v in ("mass", "identity"), "'mass' (3.66) or 'identity' (3.69)"),
    "independent": (lambda v: True, ""),  # names, checked by the formulation
}
#: the options each formulation takes
FORMULATION_OPTIONS = {
    "dae": (), "baumgarte": ("alpha", "beta"),
    "partition": ("independent", "cond_max", "newton_tol", "newton_max"),
    "qr": ("rank_tol", "newton_tol", "newton_max"), "svd": ("rank_tol", "newton_tol", "newton_max"),
    "projection": ("weighting", "iterations", "newton_tol"),
}


def _number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def check_options(name: str, options, constrained: bool = True) -> dict:
    """``options`` (a mapping or None) as a dict if the formulation ``name`` takes each of them
    with its value, else a ParameterError naming the option, the value and what it must be."""
    if options is None:
        return {}
    if not hasattr(options, "items"):
        raise ParameterError(f"formulation_options must be a dict of option names and values, "
                             f"got {options!r}")
    if options and not constrained:
        raise ParameterError(f"formulation_options {dict(options)!r}: the model has no constraints, so it "
                             "runs its minimal ODE, which takes no options")
    allowed = FORMULATION_OPTIONS.get(name, ())
    for key, value in options.items():
        if key not in allowed:
            raise ParameterError(f"formulation {name!r} has no option {key!r} (its options: "
                                 f"{', '.join(allowed) or 'none'})")
        test, text = OPTIONS[key]
        if not test(value):
            raise ParameterError(f"formulation {name!r}: option {key} must be {text}, got {value!r}")
    return dict(options)


def make_formulation(name, numeric, inputs=None, **options) -> Formulation:
    """The formulation ``name`` for a NumericModel with its ``options`` (checked against
    :data:`OPTIONS`); trees always get the minimal ODE."""
    name = check_formulation_name(name)
    check_nonholonomic(numeric.system, name)
    check_regular_mass(numeric.system, name)
    if numeric.m == 0 or name == "minimal":
        if numeric.m:
            raise ParameterError("formulation 'minimal' needs a system without constraints")
        check_options(name, options, constrained=False)
        return MinimalODE(numeric, inputs)
    return FORMULATIONS[name](numeric, inputs, **check_options(name, options))


__all__ = ["make_formulation", "check_formulation_name", "check_options", "OPTIONS", "FORMULATION_OPTIONS",
           "check_nonholonomic", "NONHOLONOMIC_FORMULATIONS", "check_regular_mass",
           "REGULAR_MASS_FORMULATIONS", "FORMULATIONS", "DEFAULT_FORMULATION", "Formulation",
           "InputSchedule", "kkt_solve", "MinimalODE", "DAE", "Baumgarte",
           "CoordinatePartitioning", "OptimalPartitioning", "PostStabilization"]
