"""Expressions of the user outputs (``System.output``, ``frame_output``, ``reaction_outputs``).

Expression outputs are taken as given; frame outputs are components of the frame's position
r, velocity v or angular velocity omega in ISYS (seed 002 eqs. 3-5, over intermediate
variables, so no closed form is expanded); reaction outputs are Lagrange multipliers, which
are no expression of the state alone (they come from the KKT system, seed 000 eq. 8) and are
listed as ``None``.

Direct feed-through: an expression output depends directly on the inputs in it; a reaction
depends on the inputs that enter q - k (through eq. 8); frame kinematics never do.
"""

from __future__ import annotations

import sympy as sp

_FIELDS = {"position": "r", "velocity": "v", "angular_velocity": "omega"}


def output_expressions(eqs) -> list:
    """One sympy expression per user output (None for reaction outputs), in declaration order."""
    out = []
    for o in eqs.system.outputs.values():
        if o.constraint is not None:
            out.append(None)
        elif o.frame is not None:
            out.append(getattr(eqs.frame(o.frame), _FIELDS[o.quantity])[o.component])
        else:
            out.append(o.expression)
    return out


def _input_symbols(system) -> dict:
    return {u.symbol: u.name for u in system.inputs.values()}


def _depends_on(eqs, exprs) -> set:
    """Input names that the expressions (over intermediates) depend on."""
    inputs = _input_symbols(eqs.system)
    if not inputs:
        return set()
    return {inputs[s] for s in eqs.intermediates.symbols_read(exprs) if s in inputs}


def feedthrough(eqs) -> dict[str, list[str]]:
    """For every user output the names of the inputs it depends on directly (model order)."""
    order = list(eqs.system.inputs)
    force_inputs = None
    result = {}
    for o, e in zip(eqs.system.outputs.values(), output_expressions(eqs)):
        if e is None:
            if force_inputs is None:
                force_inputs = _depends_on(eqs, list(eqs.q - eqs.k))
            deps = force_inputs
        else:
            deps = _depends_on(eqs, [e])
        result[o.name] = [n for n in order if n in deps]
    return result


def expression_outputs(eqs) -> list:
    """The expressions of the non-reaction outputs (what generated code evaluates)."""
    return [e for e in output_expressions(eqs) if e is not None]


def expression_input_jacobian(eqs) -> sp.Matrix:
    """d(expression outputs)/du (rows: expression outputs, columns: inputs), closed form."""
    exprs = expression_outputs(eqs)
    u = [i.symbol for i in eqs.system.inputs.values()]
    if not exprs or not u:
        return sp.zeros(len(exprs), len(u))
    return eqs.expanded(sp.Matrix(exprs)).jacobian(u)


def force_input_jacobian(eqs) -> sp.Matrix:
    """d(q - k)/du (f x nu), closed form: needed for the derivative of the multipliers."""
    u = [i.symbol for i in eqs.system.inputs.values()]
    f = len(eqs.system.y)
    if not u or not any(o.constraint for o in eqs.system.outputs.values()):
        return sp.zeros(f, len(u))
    return eqs.expanded(eqs.q - eqs.k).jacobian(u)
