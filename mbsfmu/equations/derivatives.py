"""Forward (tangent) and reverse (adjoint) derivatives of expressions over the intermediates.

The equations of motion are straight-line programs: an ordered list of definitions
``w_k = e_k(arguments, w_1 .. w_(k-1))`` (:class:`~.intermediates.Intermediates`) and outputs
``o_i(arguments, w)``.  Their derivatives are taken the same way, as further definitions, so
they stay as small as the equations themselves (each is a sum of one term per symbol a
definition reads, never an expanded closed form):

**tangent** (forward mode) along a direction given by the tangents of some arguments,

    w'_k = sum_s  de_k/ds  s'        (s: the arguments and earlier w read by e_k),
    o'_i = sum_s  do_i/ds  s',

one tangent definition per definition that depends on the direction, the partial derivatives
de_k/ds definitions of their own (they do not depend on the direction); the cost of one
directional derivative is a small multiple of one evaluation, whatever the number of outputs,
and of each further direction a linear combination per definition.

**adjoint** (reverse mode) of the weighted sum ``sum_i v_i o_i`` with weights v,

    bar s = sum_i v_i do_i/ds + sum_k  bar w_k  de_k/ds   (k over the definitions that read s),

the bars taken in reverse definition order, so that each ``bar w_k`` is complete before it
is passed on; the cost of the gradient by every argument is a small multiple of one
evaluation, whatever the number of arguments.

:func:`substitute` replaces arguments inside the definitions (new definitions for those that
read them, the others shared): the inverse dynamics of a tree reads its accelerations in the
places of the rates, and a residual needs both.
"""

from __future__ import annotations

import sympy as sp

from .intermediates import Intermediates


def _derivative(expr: sp.Expr, s: sp.Symbol) -> sp.Expr:
    d = sp.diff(expr, s)
    if d.has(sp.DiracDelta):  # a jump of a derivative (sign, Heaviside): zero almost everywhere
        d = d.replace(lambda e: isinstance(e, sp.DiracDelta), lambda e: sp.S.Zero)
    return d


def tangent(w: Intermediates, outputs, seeds: dict) -> list[sp.Expr]:
    """The directional derivatives of ``outputs`` (expressions over ``w``) for the argument
    tangents ``seeds`` (symbol -> expression; arguments not in it have tangent 0).  New
    definitions are added to ``w`` (``aux``: equal ones are shared)."""
    outputs = [sp.sympify(o) for o in outputs]
    tan = {s: sp.sympify(v) for s, v in seeds.items() if sp.sympify(v) != 0}
    for sym in w.needed_for(outputs):
        e = w.definitions[sym]
        d = _linear_combination(e, tan, w)
        if d != 0:
            tan[sym] = w.aux(d)
    return [_linear_combination(o, tan, w) for o in outputs]


def _linear_combination(e: sp.Expr, tan: dict, w: Intermediates) -> sp.Expr:
    """sum_s de/ds s' with each partial derivative a definition of its own: it reads no tangent,
    so code for many directions evaluates it once (the cos of a sin, say), not per direction."""
    return sp.Add(*[w.aux(_derivative(e, s)) * tan[s] for s in e.free_symbols if s in tan])


def adjoint(w: Intermediates, outputs, weights, arguments) -> list[sp.Expr]:
    """The gradient of ``sum_i weights[i] * outputs[i]`` by each of ``arguments`` (symbols that
    are not intermediates), by reverse accumulation over the definitions of ``w``; new
    definitions (the bars, and the partial derivatives they read, which do not depend on the
    weights) are added to ``w``."""
    outputs = [sp.sympify(o) for o in outputs]
    bars: dict = {}

    def add(s, term):
        bars.setdefault(s, []).append(term)

    for o, v in zip(outputs, weights):
        for s in o.free_symbols:
            add(s, w.aux(_derivative(o, s)) * v)
    for sym in reversed(w.needed_for(outputs)):
        terms = bars.pop(sym, None)
        if not terms:
            continue
        bar = w.aux(sp.Add(*terms))
        if bar == 0:
            continue
        e = w.definitions[sym]
        for s in e.free_symbols:
            add(s, w.aux(_derivative(e, s)) * bar)
    return [sp.Add(*bars.get(a, [])) for a in arguments]


def substitute(w: Intermediates, exprs, mapping: dict) -> list[sp.Expr]:
    """``exprs`` with the argument symbols of ``mapping`` replaced, also inside the definitions
    they read: each definition that depends on a replaced symbol gets a new definition."""
    exprs = [sp.sympify(e) for e in exprs]
    new = dict(mapping)
    for sym in w.needed_for(exprs):
        e = w.definitions[sym]
        hit = {s: new[s] for s in e.free_symbols if s in new}
        if hit:
            new[sym] = w.aux(e.xreplace(hit))
    return [e.xreplace({s: new[s] for s in e.free_symbols if s in new}) for e in exprs]
