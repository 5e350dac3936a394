"""Print an ordered list of intermediate definitions plus outputs as one Python function.

The function has the signature ``f(t, y, yd, prm, u, tp)`` with arrays of coordinates,
velocities, constants, inputs and time-parameter values (p, p', p'' per time parameter).  With
``vectorized=False`` it uses the ``math`` module and is fastest for scalar calls (one state);
with ``vectorized=True`` it uses numpy and evaluates a whole time series at once (each argument
row then holds one array over time).  Model symbols are renamed to safe identifiers, so any
user name works.
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import sympy as sp
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import PythonCodePrinter


class _Named:
    """Prints the symbols in ``names`` (symbol -> identifier) by their identifier: renaming
    by ``xreplace`` would rebuild every expression (and re-sort its sums by the new names),
    which took most of the time of a large model's function."""

    names: dict = {}

    def _print_Symbol(self, expr):
        name = self.names.get(expr)
        return name if name is not None else super()._print_Symbol(expr)


class _NumPyPrinter(_Named, NumPyPrinter):
    pass


class _MathPrinter(_Named, PythonCodePrinter):
    def _print_Pow(self, expr, rational=False):
        # the outer parentheses matter: sympy prints x / b**2 as "x/" + this, and treats a
        # power as atomic, so without them x/(b)*(b) multiplied by b instead of dividing
        base, exp = expr.args
        if exp == 2:
            return f"(({self._print(base)})*({self._print(base)}))"
        if exp == -1:
            return f"(1.0/({self._print(base)}))"
        return super()._print_Pow(expr, rational)


def argument_symbols(system) -> list[tuple[str, list[sp.Symbol]]]:
    """The argument arrays of a generated function and the symbols each one unpacks."""
    tps = []
    for p in system.time_parameters.values():
        tps += [p.symbol, p.velocity, p.acceleration]
    return [
        ("y", system.y),
        ("yd", system.yd),
        ("prm", [c.symbol for c in system.constants_.values()]),
        ("u", [u.symbol for u in system.inputs.values()]),
        ("tp", tps),
    ]


def make_function(system, intermediates, outputs, name="kernel", vectorized=False):
    """Compile ``outputs`` (a list of scalar expressions) into a Python function."""
    outputs = [sp.sympify(e) for e in outputs]
    names = {system.t: "t"}
    lines = [f"def {name}(t, y, yd, prm, u, tp):"]
    for arg, syms in argument_symbols(system):
        if not syms:
            continue
        safe = [f"_{arg}{i}" for i in range(len(syms))]
        names.update(zip(syms, safe))
        lines.append(f"    {', '.join(safe)}, = {arg}")
    # order="none": print sums as stored; sorting long sums dominated the printing time
    printer = _NumPyPrinter({"order": "none"}) if vectorized else _MathPrinter({"order": "none"})
    printer.names = names
    for s in intermediates.needed_for(outputs):
        lines.append(f"    {s} = {printer.doprint(intermediates.definitions[s])}")
    outs = [printer.doprint(e) for e in outputs]
    lines.append("    return (" + "".join(o + ", " for o in outs) + ")")
    source = "\n".join(lines) + "\n"
    namespace = {"math": math, "numpy": np, "functools": functools}
    exec(compile(source, f"<mbsfmu {system.name}.{name}>", "exec"), namespace)
    fn = namespace[name]
    fn.source = source
    fn.model_names = {v: str(k) for k, v in names.items()}  # safe identifier -> model name
    return fn


_SAFE_NAME = re.compile(r"\b_(?:y|yd|prm|u|tp)\d+\b")


def failing_line(exc: BaseException) -> str | None:
    """The statement of a generated function in which ``exc`` was raised (the innermost one), with
    the model's names in place of the argument identifiers (intermediates keep theirs), or None if
    it was not raised in generated code."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        fn = tb.tb_frame.f_globals.get(code.co_name) if code.co_filename.startswith("<mbsfmu ") else None
        if getattr(fn, "source", None) is not None:
            found = fn, tb.tb_lineno
        tb = tb.tb_next
    if found is None:
        return None
    fn, lineno = found
    line = fn.source.splitlines()[lineno - 1].strip()
    return _SAFE_NAME.sub(lambda m: fn.model_names.get(m.group(0), m.group(0)), line)
