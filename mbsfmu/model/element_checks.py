"""Checks of the numbers an element is given, made when the element is added: the mass
properties of a body (positive mass, a possible inertia tensor; :func:`mass_property_problem`
is also the test of the parameter checks, and the reference of the C check
``mbs_mass_property_problem`` in ``mbs_parameters.c``) and the sizes of a visual shape.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import sympy as sp

from ..core.errors import ModelError, ParameterError
from .elements import Body

#: relative tolerance of the mass-property checks (of the largest |J_ij|)
INERTIA_RTOL = 1e-9


def mass_property_problem(mj) -> str:
    """'' if m > 0 and the inertia is possible, else what is wrong (reference of the C check
    mbs_mass_property_problem in mbs_parameters.c; here by the principal moments)."""
    m = float(mj[0])
    if not (math.isfinite(m) and m > 0.0):
        return f"mass must be positive, got {m!r}"
    J = np.array([[mj[1], mj[2], mj[3]], [mj[2], mj[4], mj[5]], [mj[3], mj[5], mj[6]]])
    if not np.all(np.isfinite(J)):
        return "inertia tensor has non-finite entries"
    tol = INERTIA_RTOL * max(np.abs(J).max(), 1e-300)
    ev = np.linalg.eigvalsh(J)
    moments = ", ".join(f"{v:.6g}" for v in ev)
    if ev[0] < -tol:
        return f"inertia tensor is not positive semi-definite (principal moments {moments})"
    if ev[0] + ev[1] < ev[2] - tol:
        return (f"principal moments {moments} violate the triangle inequality J1 + J2 >= J3 "
                "(no rigid body has this inertia)")
    return ""


def check_mass_properties(body: Body, params: dict[str, float]) -> None:
    """ModelError unless the body's mass is positive and its inertia tensor (about the centre of
    gravity) is possible: symmetric, positive semi-definite, principal moments satisfying the
    triangle inequality J1 + J2 >= J3 (zero moments are allowed for slender rods and point
    masses).  The test itself is :func:`mass_property_problem`, the one the parameter checks
    (:mod:`mbsfmu.equations.parameter_requirements`) use."""
    subs = {sp.Symbol(k, real=True): v for k, v in params.items()}
    where = f"body {body.name!r}"
    try:
        m = float(body.mass.xreplace(subs))
        J = np.array(body.inertia.xreplace(subs).tolist(), dtype=float)
    except TypeError:
        raise ParameterError(f"{where}: mass or inertia depends on something other than "
                             "constants") from None
    scale = max(np.abs(J).max(), 1e-300) if np.all(np.isfinite(J)) else 1.0
    if np.all(np.isfinite(J)) and np.abs(J - J.T).max() > 1e-12 * scale:
        raise ModelError(f"{where}: inertia tensor is not symmetric:\n{J}")
    problem = mass_property_problem([m, J[0, 0], J[0, 1], J[0, 2], J[1, 1], J[1, 2], J[2, 2]])
    if problem:
        raise ModelError(f"{where}: {problem}")


def visual_size(name: str, shape: str, size, meaning: tuple[str, ...]) -> tuple[float, ...]:
    """The size values of a visual shape, checked: as many positive finite numbers as the shape
    takes (one number for a box is a cube)."""
    if not meaning:
        if size is not None:
            raise ModelError(f"visual of {name!r}: shape {shape!r} takes no size, got {size!r}")
        return ()
    if size is None:
        raise ModelError(f"visual of {name!r}: shape {shape!r} needs a size ({', '.join(meaning)})")
    values = list(size) if isinstance(size, (list, tuple)) else [size]
    if shape == "box" and len(values) == 1:
        values = values * 3
    if len(values) != len(meaning):
        raise ModelError(f"visual of {name!r}: shape {shape!r} takes {len(meaning)} size value(s) "
                         f"({', '.join(meaning)}), got {size!r}")
    out = []
    for what, v in zip(meaning, values):
        ok = isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) and v > 0
        if not ok:
            raise ModelError(f"visual of {name!r}: the {what} of the {shape} must be a positive "
                             f"number, got {v!r}")
        out.append(float(v))
    return tuple(out)
