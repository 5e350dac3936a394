"""What the parameter values of a model must satisfy, found once from the model itself.

Four kinds of requirement, checked in this order wherever parameter values enter (``simulate``'s
``params``, both FMU kinds at ``fmi2ExitInitializationMode`` and when a tunable parameter is
set between steps); each failure names the parameter and its value:

1. **declared bounds**: ``s.constant(name, value, min=..., max=...)`` (inclusive, as FMI's
   ``min``/``max`` attributes);
2. **mass properties** of every body whose mass or inertia depends on constants: the mass is
   positive, and the inertia tensor J about the centre of gravity is a possible rigid-body
   inertia: symmetric, positive semi-definite, and its principal moments satisfy the triangle
   inequality J1 + J2 >= J3.  Both are semi-definiteness conditions: J >= 0, and
   (tr J / 2) E - J >= 0 (its eigenvalues are (J1 + J2 - J3) / 2 and permutations);
3. **flexible-body factors** (``flexible_body(stiffness_factor=..., damping_factor=...)``) that
   depend on constants are >= 0: they multiply Ke and De, which the modal data's check keeps
   positive semidefinite, so a negative factor would make the body's elastic modes unstable or
   feed energy into them (0 is allowed: a body without elastic stiffness or damping);
4. **parameters the dynamics need non-zero**: a constant the model declares so (a
   LagrangianSystem's distance lengths: ``nonzero_parameters``), or a constant whose value 0
   makes the mass matrix reduced to the mechanism's degrees of freedom, N^T M N with N a basis
   of the null space of the constraint Jacobian C (seed 000 eqs. 11-18: the coordinate-
   partitioning reduction), singular, or makes C lose rank, where its default value does
   neither.  Found by a numerical probe at the model's initial configuration and one random
   configuration (both must show it), e.g. the
   crank length of a slider-crank (with r = 0 the crank angle moves no mass and no constraint
   fixes it).

:func:`parameter_requirements` derives them (cached per Equations object);
:meth:`ParameterRequirements.check` raises :class:`~mbsfmu.core.errors.ParameterError`.  The native FMU
gets the same tables in its generated header and checks them in C (``mbs_parameters.c``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ..core.errors import ModelError, ParameterError
from ..model.element_checks import mass_property_problem
from .recursive_newton_euler import recursive_newton_euler

#: relative tolerances of the probe
PROBE_RANK_RTOL = 1e-9
PROBE_SINGULAR_RTOL = 1e-12


@dataclass
class BodyCheck:
    """A body whose mass or inertia depends on constants: m, then J11 J12 J13 J22 J23 J33."""

    body: str
    expressions: list           # 7 sympy expressions in the constants
    parameters: list[str]       # the constants they depend on (declaration order)


#: what each flexible-body factor multiplies (for the messages)
FACTOR_MEANING = {"stiffness_factor": "the modal stiffness Ke", "damping_factor": "the modal damping De"}


@dataclass
class FactorCheck:
    """A flexible body's stiffness or damping factor that depends on constants (must be >= 0)."""

    body: str
    label: str                  # "stiffness_factor" or "damping_factor"
    expression: sp.Expr         # in the constants
    parameters: list[str]       # the constants it depends on (declaration order)

    @property
    def requirement(self) -> str:
        """"flexible body 'P1': stiffness_factor must be >= 0 (it scales ...)"; the C check
        prints the same text (the generated table mbs_factor_requirement)."""
        return (f"flexible body {self.body!r}: {self.label} must be >= 0 (it scales "
                f"{FACTOR_MEANING[self.label]})")


@dataclass
class ParameterRequirements:
    names: list[str]                                  # all constants, declaration order
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    bodies: list[BodyCheck] = field(default_factory=list)
    factors: list[FactorCheck] = field(default_factory=list)
    nonzero: dict[str, str] = field(default_factory=dict)  # constant -> why it must not be 0
    #: value sets that passed (the check is a pure function of the values): a repeated
    #: simulate() with the same parameters does not evaluate the bodies' inertias again
    passed: set = field(default_factory=set, repr=False, compare=False)

    def check(self, values: dict[str, float]) -> None:
        """ParameterError naming the first violated requirement (see the module docstring)."""
        key = tuple(values[n] for n in self.names)
        if key in self.passed:
            return
        self._check(values)
        if len(self.passed) >= 256:
            self.passed.clear()
        self.passed.add(key)

    def _check(self, values: dict[str, float]) -> None:
        for name, (lo, hi) in self.bounds.items():
            v = values[name]
            if v < lo:
                raise ParameterError(f"parameter {name!r} = {v!r} is below its minimum {lo!r}")
            if v > hi:
                raise ParameterError(f"parameter {name!r} = {v!r} is above its maximum {hi!r}")
        for b in self.bodies:
            mj = mass_properties(b, values)
            problem = mass_property_problem(mj)
            if problem:
                raise ParameterError(f"body {b.body!r}: {problem} ({given(b.parameters, values)})")
        for fc in self.factors:
            v = factor_value(fc, values)
            if not v >= 0.0:  # also NaN
                raise ParameterError(f"{fc.requirement}, got {v!r} ({given(fc.parameters, values)})")
        for name, why in self.nonzero.items():
            if values[name] == 0.0:
                raise ParameterError(f"parameter {name!r} = 0 is not allowed: {why}")


def given(names, values) -> str:
    """'m_crank = -0.3, r = 0.15' (the parameter values a message refers to)."""
    return ", ".join(f"{n} = {values[n]!r}" for n in names)


def mass_properties(check: BodyCheck, values: dict[str, float]) -> np.ndarray:
    """[m, J11, J12, J13, J22, J23, J33] of a body for given parameter values."""
    subs = {sp.Symbol(n, real=True): values[n] for n in check.parameters}
    return np.array([float(e.xreplace(subs)) for e in check.expressions])


def factor_value(check: FactorCheck, values: dict[str, float]) -> float:
    """The value of a flexible-body factor for given parameter values."""
    return float(check.expression.xreplace({sp.Symbol(n, real=True): values[n]
                                            for n in check.parameters}))


def parameter_requirements(eqs) -> ParameterRequirements:
    """The requirements of ``eqs.system`` (derived once per Equations object)."""
    return eqs.derived("parameter_requirements", _derive)


def _derive(eqs) -> ParameterRequirements:
    s = eqs.system
    req = ParameterRequirements(list(s.constants_))
    for c in s.constants_.values():
        if math.isfinite(c.min) or math.isfinite(c.max):
            req.bounds[c.name] = (c.min, c.max)
    req.bodies = body_checks(s)
    req.factors = factor_checks(s)
    req.nonzero = _probe_nonzero(eqs)
    # what the model itself knows must not be 0 (a LagrangianSystem's distance lengths)
    for name, why in getattr(s, "nonzero_parameters", {}).items():
        req.nonzero.setdefault(name, why)
    return req


def body_checks(system) -> list[BodyCheck]:
    """One BodyCheck per element with mass (:meth:`~mbsfmu.model.base.Model.elements_with_mass`:
    a System's bodies, a LagrangianSystem's point masses, rods and rigid bodies) whose mass or
    inertia depends on constants (those with numeric mass properties were checked when they
    were declared)."""
    names = list(system.constants_)
    out = []
    for body in system.elements_with_mass():
        J = body.inertia
        exprs = [sp.sympify(e) for e in (body.mass, J[0, 0], J[0, 1], J[0, 2], J[1, 1], J[1, 2],
                                         J[2, 2])]
        syms = set().union(*(e.free_symbols for e in exprs))
        other = sorted(str(x) for x in syms if x.name not in system.constants_)
        if other:
            raise ModelError(f"body {body.name!r}: mass and inertia may depend on constants "
                             f"only, not on {', '.join(other)}")
        if syms:
            # the mass's constants first: they are the likelier culprits of a mass message
            mass = exprs[0].free_symbols
            params = sorted((n for n in names if sp.Symbol(n, real=True) in syms),
                            key=lambda n: sp.Symbol(n, real=True) not in mass)
            out.append(BodyCheck(body.name, exprs, params))
    return out


def factor_checks(system) -> list[FactorCheck]:
    """One FactorCheck per flexible-body factor that depends on constants (numeric factors were
    checked when the body was declared, System.flexible_body)."""
    names = list(system.constants_)
    out = []
    for body in getattr(system, "flexible_bodies", {}).values():
        for label in FACTOR_MEANING:
            e = sp.sympify(getattr(body, label))
            if e.free_symbols:
                params = [n for n in names if system.constants_[n].symbol in e.free_symbols]
                out.append(FactorCheck(body.name, label, e, params))
    return out


def _null_space(num, y):
    """(N, rank of C): an orthonormal basis N of the null space of C(y) (identity for trees)."""
    if not num.m:
        return np.eye(num.f), 0
    _, C, _ = num.constraint_parts(0.0, y)
    if not np.all(np.isfinite(C)):
        return None, -1  # e.g. a constant 0 that divides (a length): reported as not finite
    _, sv, Vt = np.linalg.svd(C)
    rank = int(np.sum(sv > PROBE_RANK_RTOL * (sv[0] if sv.size and sv[0] > 0 else 1.0)))
    return Vt[rank:].T, rank


def _mass_matrix(num, y):
    """M at configuration y, t = 0.  For a tree on joint coordinates column by column from the
    recursive Newton-Euler M v (:mod:`.recursive_newton_euler`, all f columns in one vectorized
    call), so that the probe does not derive M (O(N f^2) terms) for a model whose run never
    needs it; otherwise from the equations' M."""
    rn = recursive_newton_euler(num.eqs)
    if rn.mass_times is None:
        return num.mass_and_force(0.0, y, np.zeros(num.f))[0]
    f = num.f
    fn = num._fn("mass_times", lambda: rn.mass_times, vectorized=True)
    cols = fn(0.0, np.repeat(y[:, None], f, axis=1), np.eye(f), num.prm, num.u, num._tp_at(0.0))
    M = np.stack([np.broadcast_to(np.asarray(c, dtype=float), (f,)) for c in cols])
    return 0.5 * (M + M.T)


def _reduced(num, y):
    """(eigenvalues and eigenvectors of N^T M N, N, rank of C) at configuration y, t = 0."""
    M = _mass_matrix(num, y)
    N, rank = _null_space(num, y)
    if N is None:
        return None, None, N, rank
    Mr = N.T @ M @ N
    if Mr.size == 0 or not np.all(np.isfinite(Mr)):
        return None, None, N, rank
    w, V = np.linalg.eigh(0.5 * (Mr + Mr.T))
    return w, V, N, rank


def _probe_nonzero(eqs) -> dict[str, str]:
    """Constants whose value 0 makes the reduced mass matrix singular or C lose rank at two
    configurations where their default value does neither (see the module docstring)."""
    s = eqs.system
    if any(c.value is None for c in s.constants_.values()) or not s.coordinates_:
        return {}
    num = eqs.numeric(check=False)
    f = num.f
    y0 = np.array([c.initial for c in s.coordinates_.values()], dtype=float)
    rng = np.random.default_rng(20261124)
    configs = [y0, y0 + rng.normal(0.0, 0.3, f)]
    default = num.prm.copy()
    ok = []
    try:
        with np.errstate(all="ignore"):
            for y in configs:
                w, _, _, rank = _reduced(num, y)
                if w is not None and w[0] > PROBE_SINGULAR_RTOL * w[-1]:
                    ok.append((y, w[-1], rank))
            if not ok:
                return {}
            out = {}
            for i, name in enumerate(num.constant_names):
                if default[i] == 0.0:
                    continue
                num.prm[:] = default
                num.prm[i] = 0.0
                reasons = []
                for y, scale, rank_default in ok:
                    w, V, N, rank = _reduced(num, y)
                    if rank < 0:
                        reasons.append("the constraint Jacobian is not finite")
                    elif rank < rank_default:
                        reasons.append("the constraints lose rank (the mechanism would change "
                                       "its number of degrees of freedom)")
                    elif w is None:
                        reasons.append("the mass matrix is not finite")
                    elif w[0] <= PROBE_SINGULAR_RTOL * scale:
                        reasons.append(singular_mass_text(num.coordinate_names, N @ V[:, 0],
                                                          bool(num.m)))
                    else:
                        break
                else:
                    out[name] = f"with {name} = 0 {reasons[0]}"
            return out
    finally:
        num.prm[:] = default


def moving_coordinates(names, v, what: str = "coordinate") -> str:
    """"coordinate 'theta'" or "a combined motion of 'x', 'theta'": the coordinates (or other
    ``what``) of ``names`` that the vector ``v`` (real or complex) moves (entries above a tenth
    of its largest), largest first."""
    a = np.abs(np.asarray(v))
    order = [i for i in np.argsort(-a) if a[i] > 0.1 * a.max()]
    moving = ", ".join(repr(names[i]) for i in order)
    return f"{what} {moving}" if len(order) == 1 else f"a combined motion of {moving}"


def singular_mass_text(names, v, constrained: bool) -> str:
    """Why the (reduced) mass matrix is singular, naming the coordinates of its null vector v."""
    motion = moving_coordinates(names, v)
    if constrained:
        return (f"the mass matrix reduced by the constraints is singular ({motion} would move "
                "no mass)")
    return f"the mass matrix is singular ({motion} would move no mass)"
