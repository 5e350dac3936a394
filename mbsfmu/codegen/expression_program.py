"""Expressions as a small JSON program that numpy evaluates without sympy and without ``eval``.

A model's generated C holds its equations; a file that travels with an FMU (the viewer's
resource, :mod:`mbsfmu.animation.model_view`) needs some of them again on the Python side, in a
form that is data, not code.  A *program* is a dict::

    {"arguments": {"y": [...names...], "prm": [...], ...},   # the input arrays and their names
     "lines": [["w0", expr], ["w1", expr], ...],              # intermediates, in order
     "outputs": [expr, ...]}

where an ``expr`` is a JSON number, a string naming an argument entry (``"y3"``: the fourth
entry of the argument array ``y``; ``"t"``: time) or an earlier line (``"w12"``), or a list
``[op, operand, ...]`` with ``op`` one of :data:`OPERATORS`: ``+``, ``*``, ``^`` (power), the
functions of C99 that the C printer knows (:data:`mbsfmu.codegen.c_printer.FUNCTIONS`) and
``sqrt``, ``sign``, ``min``, ``max``, ``floor``, ``ceiling``, relations, ``and``, ``or``,
``not`` and ``piecewise`` (``["piecewise", [expr, cond], ...]``: the first true condition's
expression, NaN where none is).  Rationals and constants such as pi are written as doubles (the
value C computes them to).  :func:`program` writes one from sympy's intermediate form
(:class:`~mbsfmu.equations.intermediates.Intermediates`), :func:`evaluate` runs one on numpy
arrays (one value per sample: a whole time series at once), :func:`check_program` refuses a
malformed one with the place it breaks.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .c_printer import FUNCTIONS

#: sympy function -> the program's operator, beyond Add, Mul and Pow
_SYMPY_FUNCTIONS = {**FUNCTIONS,
                    sp.sign: "sign", sp.floor: "floor", sp.ceiling: "ceiling", sp.Min: "min",
                    sp.Max: "max", sp.asinh: "asinh", sp.acosh: "acosh", sp.atanh: "atanh"}
_RELATIONS = {sp.StrictLessThan: "<", sp.LessThan: "<=", sp.StrictGreaterThan: ">",
              sp.GreaterThan: ">=", sp.Equality: "==", sp.Unequality: "!="}
_LOGIC = {sp.And: "and", sp.Or: "or", sp.Not: "not"}


def _fold(fn):
    return lambda *a: _reduce(fn, a)


def _reduce(fn, args):
    out = args[0]
    for a in args[1:]:
        out = fn(out, a)
    return out


#: operator -> numpy function of its evaluated operands
OPERATORS = {
    "+": _fold(np.add), "*": _fold(np.multiply), "^": np.power,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "exp": np.exp, "log": np.log,
    "fabs": np.abs, "sqrt": np.sqrt, "sign": np.sign, "floor": np.floor, "ceiling": np.ceil,
    "min": _fold(np.minimum), "max": _fold(np.maximum),
    "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal,
    "!=": np.not_equal, "and": _fold(np.logical_and), "or": _fold(np.logical_or),
    "not": np.logical_not,
}


class ProgramError(ValueError):
    """An expression the program cannot hold (at build), or a malformed program (when read)."""


def program(intermediates, outputs, arguments: dict, lines: tuple = ()) -> dict:
    """The program of ``outputs`` (sympy expressions) over the definitions of ``intermediates``
    they need.  ``arguments``: name -> list of sympy symbols (the argument arrays; ``t`` may be
    one of them as a 1-list, then it is named ``"t"``); ``lines``: (symbol, expression) pairs
    computed first (e.g. the time parameters from t).  A ProgramError names an expression it
    cannot write."""
    names = {}
    for arg, syms in arguments.items():
        if arg == "t":
            names.update({s: "t" for s in syms})
        else:
            names.update({s: f"{arg}{i}" for i, s in enumerate(syms)})
    outputs = [sp.sympify(e) for e in outputs]
    out_lines = []
    defs = list(lines) + [(s, intermediates.definitions[s]) for s in intermediates.needed_for(
        outputs + [sp.sympify(e) for _, e in lines])]
    for i, (sym, expr) in enumerate(defs):
        out_lines.append([f"w{i}", _encode(sp.sympify(expr), names)])
        names[sym] = f"w{i}"
    return {"arguments": {arg: [str(s) for s in syms] for arg, syms in arguments.items()},
            "lines": out_lines, "outputs": [_encode(e, names) for e in outputs]}


def _encode(e, names):
    name = names.get(e)
    if name is not None:
        return name
    if e.is_Symbol:
        raise ProgramError(f"symbol {e} is neither an argument nor an intermediate")
    if e.is_Number or e.is_NumberSymbol:
        if e.is_Integer:
            return int(e)
        v = float(e)
        if not np.isfinite(v):
            raise ProgramError(f"the number {e} is not finite")
        return v
    if e is sp.true or e is sp.false:
        return 1 if e is sp.true else 0
    if isinstance(e, sp.Piecewise):
        return ["piecewise", *[[_encode(x, names), _encode(c, names)] for x, c in e.args]]
    args = [_encode(a, names) for a in e.args]
    if e.is_Add:
        return ["+", *args]
    if e.is_Mul:
        return ["*", *args]
    if e.is_Pow:
        return ["sqrt", args[0]] if e.exp == sp.S.Half else ["^", *args]
    for table in (_SYMPY_FUNCTIONS, _RELATIONS, _LOGIC):
        op = table.get(e.func)
        if op is not None:
            return [op, *args]
    raise ProgramError(f"{e.func.__name__} (in {str(e)[:80]}) is not an operation of the "
                       f"expression program (known: {', '.join(OPERATORS)}, piecewise)")


def check_program(prog) -> None:
    """A ProgramError saying where ``prog`` (read from a file) is malformed: its parts, every
    reference defined before it is used, every operator known."""
    if not isinstance(prog, dict) or not {"arguments", "lines", "outputs"} <= set(prog):
        raise ProgramError("a program is a dict with 'arguments', 'lines' and 'outputs'")
    args = prog["arguments"]
    if not isinstance(args, dict) or not all(isinstance(v, list) for v in args.values()):
        raise ProgramError("'arguments' must map names to lists of names")
    known = {"t"} | {f"{a}{i}" for a, v in args.items() for i in range(len(v)) if a != "t"}
    for k, line in enumerate(prog["lines"]):
        if not (isinstance(line, list) and len(line) == 2 and isinstance(line[0], str)):
            raise ProgramError(f"line {k} is not [name, expression]")
        _check(line[1], known, f"line {k}")
        known.add(line[0])
    if not isinstance(prog["outputs"], list):
        raise ProgramError("'outputs' must be a list of expressions")
    for k, e in enumerate(prog["outputs"]):
        _check(e, known, f"output {k}")


def _check(e, known, where):
    if isinstance(e, bool) or not isinstance(e, (int, float, str, list)):
        raise ProgramError(f"{where}: {e!r} is not an expression")
    if isinstance(e, str) and e not in known:
        raise ProgramError(f"{where}: {e!r} is used before it is defined")
    if isinstance(e, list):
        if not e or (e[0] not in OPERATORS and e[0] != "piecewise"):
            raise ProgramError(f"{where}: unknown operation {e[:1]!r}")
        for a in e[1:]:
            for x in (a if e[0] == "piecewise" and isinstance(a, list) and len(a) == 2 else [a]):
                _check(x, known, where)


def evaluate(prog: dict, values: dict, n: int) -> list[np.ndarray]:
    """The outputs of ``prog`` with the argument arrays ``values`` (name -> sequence of arrays
    of n samples, or of numbers; ``"t"`` -> an array of n times), each broadcast to (n,)."""
    env = {"t": np.asarray(values.get("t", 0.0), dtype=float)}
    for arg, names in prog["arguments"].items():
        if arg == "t":
            continue
        vals = values[arg]
        if len(vals) != len(names):
            raise ProgramError(f"argument {arg!r} has {len(names)} entries, got {len(vals)} values")
        for i, v in enumerate(vals):
            env[f"{arg}{i}"] = np.asarray(v, dtype=float)

    def run(e):
        if isinstance(e, str):
            return env[e]
        if not isinstance(e, list):
            return float(e)
        if e[0] == "piecewise":
            out = np.full(n, np.nan)
            done = np.zeros(n, dtype=bool)
            for x, c in e[1:]:
                take = np.broadcast_to(np.asarray(run(c), dtype=bool), (n,)) & ~done
                out = np.where(take, run(x), out)
                done |= take
            return out
        return OPERATORS[e[0]](*[run(a) for a in e[1:]])

    with np.errstate(all="ignore"):  # a NaN shows where the model is not defined
        for name, e in prog["lines"]:
            env[name] = run(e)
        return [np.broadcast_to(np.asarray(run(e), dtype=float), (n,)) for e in prog["outputs"]]
