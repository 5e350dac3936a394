"""The formulations a user can choose, and their options: names, the default, the option table
and the checks every path makes the same way (``simulate`` on either backend, the engine, both
FMU kinds, the sweeps), written once.

The formulations themselves are written twice, as intended: in C (the engine's
``mbs_formulation.c``, kind numbers :data:`mbsfmu.core.constants.FORMULATION_KINDS`) and in
Python (the reference, :mod:`mbsfmu.reference.formulations`).  Every name here means the same
algorithm in both:

* ``dae``        acceleration-level DAE, explicit form (seed 000 eq. 9), unstabilized
* ``baumgarte``  Baumgarte stabilization, options ``alpha``, ``beta``
* ``partition``  fixed independent coordinates (seed 000 eqs. 11-18), option ``independent``
* ``qr``, ``svd`` optimal linear combinations of coordinates (seed 000 eqs. 19-31)
* ``projection`` post-stabilization PStab (seed 004 Algorithm 3.3), option ``weighting``
* ``minimal``    the minimal ODE of a tree (seed 002 eq. 11), which every model without
  constraints runs

The default for systems with loops is ``qr``: it keeps both position and velocity constraints
to the Newton tolerance after every step (like ``projection``), and unlike ``projection`` and
``partition`` it needs neither a full-rank C (its rank-revealing QR takes redundant constraints)
nor a good choice of independent coordinates (the decomposition chooses the best directions at
every evaluation, so it runs through configurations where any fixed partition is singular).
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ParameterError

DEFAULT_FORMULATION = "qr"

#: the formulations of models with constraints, in the order the help text lists them
FORMULATION_NAMES = ("dae", "baumgarte", "partition", "qr", "svd", "projection")


def check_formulation_name(name) -> str:
    """``name`` (None means the default) if it names a formulation, else a ParameterError."""
    if name is None:
        return DEFAULT_FORMULATION
    if name not in FORMULATION_NAMES and name != "minimal":
        raise ParameterError(f"unknown formulation {name!r}; choose one of "
                             f"{', '.join(FORMULATION_NAMES)}")
    return name


def check_minimal(name: str, constrained: bool) -> str:
    """``name`` unless it is 'minimal' for a model with constraints (a ParameterError): the
    minimal ODE is the formulation of trees only."""
    if constrained and name == "minimal":
        raise ParameterError("formulation 'minimal' needs a system without constraints")
    return name


#: the formulations that take nonholonomic constraints A(y, t) y' + a(y, t) = 0 (rows of C, b'
#: and b'' without a row in c; the position-level parts use the holonomic rows only)
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
#: matrix reduced by the constraints (the check: :func:`mbsfmu.equations.mass_regularity.
#: check_regular_mass`)
REGULAR_MASS_FORMULATIONS = ("dae", "baumgarte", "projection")


def _number(v) -> bool:
    """A real number that is not a bool (numpy's scalars included)."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


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
