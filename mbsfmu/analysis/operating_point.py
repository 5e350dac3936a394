"""The operating point of a linearization: set values of coordinates, velocities, inputs, time.

``at`` maps names to numbers or sympy expressions: a coordinate ``alpha``, its velocity
``der(alpha)`` (or ``Dalpha``), an input ``F``, a constant ``m`` (substituted like ``params``),
a time parameter ``p`` (and ``Dp``, ``D2p``), or the time ``t``.  Unnamed set values are:
coordinates 0 (for a model without constraints), velocities 0, inputs their defaults, t = 0,
time parameters their values at t.  A constrained model's coordinates that are not named are
solved from c(y) = 0 by Newton's method, starting from the model's initial values, with the
named ones held; named ones must satisfy the constraints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ..core.checks import finite_number
from ..core.errors import ConstraintError, ModelError, ParameterError
from ..equations.derive import derive
from ..equations.numeric_model import NumericModel
from ..equations.parameter_requirements import parameter_requirements

#: constraint residual above which an operating point is refused (model units)
CONSTRAINT_TOL = 1e-8


def set_value(value, where: str):
    """A set value as sympy: integers and integral floats exact, other floats as Float,
    sympy expressions unchanged; non-finite, complex and boolean values refused (a sympy number
    too: nan, zoo, oo, I)."""
    if isinstance(value, sp.Basic):
        if not isinstance(value, sp.Expr):
            raise ParameterError(f"{where}: give a number or a sympy expression, not {value!r}")
        if value.is_number and not (value.is_extended_real and value.is_finite):
            raise ParameterError(f"{where}: {value} is not a finite real number")
        return value
    if isinstance(value, str):
        raise ParameterError(f"{where}: give a number or a sympy expression, not the string {value!r}")
    if isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"{where}: give a number or a sympy expression, not {value!r}")
    v = finite_number(value, where)
    return sp.Integer(int(v)) if v.is_integer() else sp.Float(v)


@dataclass
class OperatingPoint:
    """Set values (sympy) of one operating point and the numbers of the constants for checks."""

    y: dict                      # coordinate name -> value (None: to be solved)
    yd: dict                     # coordinate name -> velocity
    u: dict                      # input name -> value
    t: sp.Expr
    constants: dict              # constant name -> value substituted into the equations
    time_parameters: dict = field(default_factory=dict)   # symbol -> value
    numbers: dict = field(default_factory=dict)           # constant symbol -> float (checks)

    def substitution(self, system) -> dict:
        """symbol -> value of everything set (what the equations are evaluated with)."""
        s = {system.t: self.t}
        for name, c in system.coordinates_.items():
            s[c.symbol] = self.y[name]
            s[c.velocity] = self.yd[name]
        for name, u in system.inputs.items():
            s[u.symbol] = self.u[name]
        for name, v in self.constants.items():
            s[system.constants_[name].symbol] = v
        s.update(self.time_parameters)
        return s

    def numeric(self, expr):
        """``expr`` (already at the point) as a float with the constants' numbers, or None when
        other symbols remain (a symbolic set value)."""
        e = sp.sympify(sp.sympify(expr).xreplace(self.numbers))  # a lone symbol becomes a float
        if e.free_symbols:
            return None
        return float(e)

    def numeric_matrix(self, M):
        if isinstance(M, np.ndarray):
            return M
        vals = [self.numeric(v) for v in M]
        if any(v is None for v in vals):
            return None
        return np.array(vals, dtype=float).reshape(M.shape)

    def as_dict(self) -> dict:
        out = {n: v for n, v in self.y.items()}
        out.update({f"der({n})": v for n, v in self.yd.items()})
        out.update(self.u)
        out["t"] = self.t
        return out


def operating_point(system, at, params, symbolic: bool) -> OperatingPoint:
    """Parse ``at`` (see the module docstring) and ``params`` (constants only) into an
    OperatingPoint."""
    at = dict(at or {})
    params = dict(params or {})
    for name in params:
        if name not in system.constants_:
            raise ParameterError(
                f"linearize: params: {name!r} is not a constant of {system.name!r} (constants: "
                f"{', '.join(system.constants_) or 'none'}); set values of coordinates, velocities, "
                "inputs and t go in at=")
    both = [n for n in params if n in at]
    if both:
        raise ParameterError(f"linearize: {', '.join(map(repr, both))} given in both params and at; "
                             "give each value once")
    y = {n: None for n in system.coordinates_}
    yd = {n: sp.S.Zero for n in system.coordinates_}
    u = {n: set_value(i.default, f"input {n!r}") for n, i in system.inputs.items()}
    t = sp.S.Zero
    constants = {}
    tp_values = {}
    tps = {}
    for p in system.time_parameters.values():
        tps[p.name], tps["D" + p.name], tps["D2" + p.name] = p.symbol, p.velocity, p.acceleration
    for name, value in {**params, **at}.items():
        where = f"linearize: {'params' if name in params else 'at'} {name!r}"
        if name in system.coordinates_:
            y[name] = set_value(value, where)
        elif name.startswith("der(") and name.endswith(")") and name[4:-1] in system.coordinates_:
            yd[name[4:-1]] = set_value(value, where)
        elif name.startswith("D") and name[1:] in system.coordinates_:
            yd[name[1:]] = set_value(value, where)
        elif name in system.inputs:
            u[name] = set_value(value, where)
        elif name in system.constants_:
            constants[name] = set_value(value, where)
        elif name in tps:
            tp_values[tps[name]] = set_value(value, where)
        elif name == "t":
            t = set_value(value, where)
        else:
            known = (list(system.coordinates_) + [f"der({n})" for n in system.coordinates_]
                     + list(system.inputs) + list(system.constants_) + list(tps) + ["t"])
            raise ParameterError(f"linearize: {name!r} is no coordinate, velocity, input, constant, "
                                 f"time parameter or t of {system.name!r} (known: {', '.join(known)})")
    numbers = {}
    for name, c in system.constants_.items():
        v = constants.get(name, c.value)
        if v is None:
            continue
        numbers[c.symbol] = float(v) if not isinstance(v, sp.Basic) or v.is_number else v
        if not symbolic and name not in constants:
            constants[name] = set_value(v, f"constant {name}")
    numbers = {k: v for k, v in numbers.items() if isinstance(v, float)}
    op = OperatingPoint(y, yd, u, t, constants, tp_values, numbers)
    _time_parameters(system, op)
    return op


def constant_values(system, op: OperatingPoint) -> dict | None:
    """name -> float of every constant (the set value, else the default), or None when one is
    symbolic or has no value."""
    values = {}
    for name, c in system.constants_.items():
        v = op.constants.get(name, c.value)
        v = op.numeric(v) if v is not None else None
        if v is None:
            return None
        values[name] = v
    return values


def check_constants(system, values: dict, where: str) -> None:
    """The constants' values (name -> float, every constant) against the model's requirements
    (:mod:`mbsfmu.equations.parameter_requirements`, as ``simulate`` checks them): a
    ParameterError starting with ``where`` names the parameter and its value, e.g. a constant
    with which the mass matrix is singular."""
    try:
        parameter_requirements(derive(system)).check(values)
    except ParameterError as exc:
        raise ParameterError(f"{where}: {exc}") from None


def _time_parameters(system, op: OperatingPoint) -> None:
    """Time parameters not set: their values (p, p', p'') at the operating time."""
    for p in system.time_parameters.values():
        syms = (p.symbol, p.velocity, p.acceleration)
        if all(s in op.time_parameters for s in syms):
            continue
        if p.expressions is not None:
            vals = [sp.sympify(e).xreplace({system.t: op.t}) for e in p.expressions]
            consts = {c.symbol: v for n, c in system.constants_.items()
                      if (v := op.constants.get(n)) is not None}
            vals = [v.xreplace(consts) for v in vals]
        else:
            tn = op.numeric(op.t)
            if tn is None:
                raise ParameterError(f"time parameter {p.name!r} is given by Python functions: "
                                     "linearize needs a numeric time t or its set values")
            vals = [set_value(fn(tn), f"time parameter {p.name}") for fn in p.functions]
        for s, v in zip(syms, vals):
            op.time_parameters.setdefault(s, v)


def complete_coordinates(system, eqs, op: OperatingPoint) -> None:
    """Fill the coordinates not set: 0 without constraints, else solved from c(y) = 0; then
    check that a constrained point satisfies c(y) = 0 (naming the worst constraint)."""
    missing = [n for n, v in op.y.items() if v is None]
    if not system.constrained:
        for n in missing:
            op.y[n] = sp.S.Zero
        return
    if eqs.mh < eqs.m:
        raise ModelError(f"{system.name}: linearize does not handle nonholonomic constraints yet")
    names = list(system.coordinates_)
    c_of = _constraint_function(system, eqs, op)
    if missing:
        given = [op.numeric(v) for n, v in op.y.items() if v is not None]
        if any(v is None for v in given) or c_of is None:
            raise ParameterError(
                f"linearize: coordinates {missing} of the constrained {system.name!r} are not set, and "
                "they can be solved from the constraints only with numbers for every constant and set "
                "value; give them")
        y = np.array([op.numeric(op.y[n]) if op.y[n] is not None else system.coordinates_[n].initial
                      for n in names])
        free = [names.index(n) for n in missing]
        for _ in range(50):
            c, C = c_of(y)
            if np.max(np.abs(c), initial=0.0) < 1e-13:
                break
            step = np.linalg.lstsq(C[:, free], -c, rcond=None)[0]
            y[free] += step
        for k in free:
            op.y[names[k]] = sp.Float(y[k])
    if c_of is None:
        return
    yv = [op.numeric(op.y[n]) for n in names]
    if any(v is None for v in yv):
        return  # symbolic set values: nothing to check with numbers
    c, _ = c_of(np.array(yv))
    rows = system.constraint_names[:eqs.mh]
    worst = int(np.argmax(np.abs(c))) if len(c) else 0
    if len(c) and abs(c[worst]) > CONSTRAINT_TOL:
        raise ConstraintError(
            f"the operating point violates constraint {rows[worst]!r}: residual {c[worst]:.3g} "
            f"(tolerance {CONSTRAINT_TOL:g}; all residuals: "
            + ", ".join(f"{r}={v:.3g}" for r, v in zip(rows, c)) + ")"
            + (f"; coordinates solved from the constraints: {missing}" if missing else ""))


def _constraint_function(system, eqs, op: OperatingPoint):
    """y -> (c, C) with numbers for everything but the coordinates (None when not possible)."""
    params = constant_values(system, op)
    tn = op.numeric(op.t)
    if params is None or tn is None:
        return None
    num = NumericModel(eqs, params, check=False)
    mh = eqs.mh

    def c_of(y):
        c, C, _ = num.constraint_parts(tn, y)
        return c, C[:mh]

    return c_of
