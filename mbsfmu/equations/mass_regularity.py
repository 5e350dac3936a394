"""Whether the mass matrix M has to be regular, and whether it is.

Lagrange's equations of the first kind (seed 003 eq. 1.2.1; seed 000 eq. 8) give the
accelerations and multipliers of a constrained system from the augmented system

    [[M, C^T], [C, 0]] [y''; -lambda] = [q - k; -b''],

which is regular if and only if M is positive definite on the motions the constraints allow:
the mass matrix reduced by the constraints, N^T M N with N an orthonormal basis of the null
space of C, is regular (M positive semi-definite, C of full rank).  M itself may be singular: a
coordinate whose velocity is in no term of T (a point that only joins massless links, the seed's
massless slider of sec. 5.2), or the radial motion of a crank given only by its moment of inertia
about the pivot (T = J w^2 / 2 with w = (x y' - y x') / r^2, seed 003 sec. 2.4's rotational term
on its own): the constraints fix those motions.

The formulations that work with the reduced mass matrix (``qr``, ``svd``: J^T M J of eq. 31;
``partition``: J_i^T M J_i of eq. 16) run such a model; those that factor M itself need it
regular: the engine's ``dae`` and ``baumgarte`` solve the augmented system through the Cholesky
factor of M (its Schur complement C M^-1 C^T), and ``projection`` integrates the same way and
projects with M^-1 C^T (eq. 3.66).  :func:`singular_mass` probes a model once at its defaults;
:func:`mass_problem` decides at one configuration (the start of a run).
"""

from __future__ import annotations

import numpy as np

from ..core.errors import ParameterError
from ..core.formulation_choice import REGULAR_MASS_FORMULATIONS, check_formulation_name
from .parameter_requirements import PROBE_SINGULAR_RTOL, _mass_matrix, _null_space, moving_coordinates


def mass_problem(numeric, y) -> tuple[str, str]:
    """(why M is not regular, why the augmented system is not) at configuration ``y`` and
    t = 0, each '' where there is nothing to say: M must be positive semi-definite (a motion
    with negative kinetic energy is named in both) and N^T M N regular (the motion that moves
    no mass and that the constraints leave free); M singular only gives the first message (the
    motion that moves no mass, which the constraints fix)."""
    y = np.asarray(y, dtype=float)
    M = _mass_matrix(numeric, y)
    if not np.all(np.isfinite(M)):
        return "the mass matrix is not finite", "the mass matrix is not finite"
    w, V = np.linalg.eigh(0.5 * (M + M.T))
    scale = max(float(np.abs(w).max()), 1e-300)
    names = numeric.coordinate_names
    if w[0] < -PROBE_SINGULAR_RTOL * scale:
        why = (f"the mass matrix is not positive semi-definite ({moving_coordinates(names, V[:, 0])} "
               "would have a negative kinetic energy)")
        return why, why
    if w[0] > PROBE_SINGULAR_RTOL * scale:
        return "", ""
    singular = f"the mass matrix is singular ({moving_coordinates(names, V[:, 0])} would move no mass)"
    N, _ = _null_space(numeric, y)
    if N is None:
        return singular, "the constraint Jacobian is not finite"
    if N.shape[1] == 0:
        return singular, ""
    Mr = N.T @ M @ N
    wr, Vr = np.linalg.eigh(0.5 * (Mr + Mr.T))
    if wr[0] > PROBE_SINGULAR_RTOL * max(float(np.abs(wr).max()), 1e-300):
        return singular, ""
    return singular, (f"the mass matrix reduced by the constraints is singular "
                      f"({moving_coordinates(names, N @ Vr[:, 0])} would move no mass and no "
                      "constraint fixes it)")


def singular_mass(eqs) -> str:
    """'' unless M is singular at the model's default parameters both at its initial
    configuration and at a random one near it (the probe of
    :mod:`.parameter_requirements`); else why (the motion that moves no mass).  Derived once
    per Equations object; '' for a model whose constants lack values."""
    return eqs.derived("singular_mass", _probe)


def _probe(eqs) -> str:
    s = eqs.system
    if any(c.value is None for c in s.constants_.values()) or not s.coordinates_:
        return ""
    num = eqs.numeric(check=False)
    y0 = np.array([c.initial for c in s.coordinates_.values()], dtype=float)
    rng = np.random.default_rng(20261124)
    out = ""
    with np.errstate(all="ignore"):
        for y in (y0, y0 + rng.normal(0.0, 0.3, num.f)):
            why, _ = mass_problem(num, y)
            if not why:
                return ""
            out = out or why
    return out


def check_regular_mass(eqs, name) -> None:
    """A ParameterError if the formulation ``name`` (None: the default) needs a regular mass
    matrix (:data:`~mbsfmu.core.formulation_choice.REGULAR_MASS_FORMULATIONS`) and that of the
    equations ``eqs`` is singular at the model's defaults (a coordinate without mass that the
    constraints fix, :func:`singular_mass`), naming the formulation, the motion without mass and
    the formulations that run the model."""
    name = check_formulation_name(name)
    system = eqs.system
    if name not in REGULAR_MASS_FORMULATIONS or not system.constrained:
        return
    why = singular_mass(eqs)
    if why:
        fit = [f for f in ("qr", "svd", "partition")
               if not (f == "partition" and getattr(system, "nonholonomic", ()))]
        raise ParameterError(
            f"{system.name}: formulation {name!r} needs a regular mass matrix (it factors M "
            f"itself), but {why}; choose one of {', '.join(fit)}: they need only the mass matrix "
            "reduced by the constraints to be regular, as Lagrange's equations of the first "
            "kind do")
