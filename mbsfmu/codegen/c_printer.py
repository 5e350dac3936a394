"""A small, fast C printer for the expressions of generated models.

sympy's ``C99CodePrinter`` (``ccode``) is general: every node goes through method lookup by the
class's MRO, ``precedence()``, sign extraction by building ``-expr`` and, before printing, an
``xreplace`` of the whole expression to rename the model's symbols to C names (``y[3]``,
``prm[0]``).  For large models that overhead dominates code generation (timings:
bench/results/derive.md).  :class:`CPrinter` prints the node types that derivation produces

* ``Add``, ``Mul`` (numerator / denominator, leading sign), ``Pow`` with an integer exponent
  (2 to 4 as products, -1 as ``1.0/(b)``), 1/2 (``sqrt``), 1/3 (``cbrt``) or another rational
  exponent (``pow``),
* ``sin``, ``cos``, ``tan``, ``asin``, ``acos``, ``atan``, ``atan2``, the hyperbolic functions,
  ``exp``, ``log`` and ``Abs`` (``fabs``),
* symbols, integers and rationals,

directly from the un-renamed expression: the C name of each model symbol (or of any
sub-expression, e.g. a hoisted ``cos(y[3])`` held in a local) is looked up in ``names``.
Anything else (floats, constants such as pi, Piecewise, ...) is printed by sympy's printer
(``_CPrinter`` below) on that sub-expression, renamed.

The text is that of ``_CPrinter`` with ``order="none"`` (arguments in sympy's stored order, the
same signs, parentheses and number formats), so the compiled code does the same floating-point
operations in the same order and gives bit-identical results; the tests compare both printers
on every expression of several models.  One difference is deliberate: a power with exponent -2
to -4 in a denominator is parenthesized (``x/((y)*(y))``), where ``_CPrinter`` prints
``x/(y)*(y)``, which C reads as ``(x/y)*y``.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.numbers import equal_valued
from sympy.printing.c import C99CodePrinter, get_math_macros
from sympy.printing.precedence import PRECEDENCE, precedence

_ADD = PRECEDENCE["Add"]
_MUL = PRECEDENCE["Mul"]
_POW = PRECEDENCE["Pow"]
_FUNC = PRECEDENCE["Func"]
_ATOM = PRECEDENCE["Atom"]
#: the level of the operand of a unary minus (between Mul and Pow, as in sympy's printers)
_NEG = 0.5 * (_POW + _MUL)

#: sympy function class -> C99 function of the same arguments
FUNCTIONS = {
    sp.sin: "sin", sp.cos: "cos", sp.tan: "tan", sp.asin: "asin", sp.acos: "acos",
    sp.atan: "atan", sp.atan2: "atan2", sp.sinh: "sinh", sp.cosh: "cosh", sp.tanh: "tanh",
    sp.exp: "exp", sp.log: "log", sp.Abs: "fabs",
}

_MACROS = get_math_macros()


class _CPrinter(C99CodePrinter):
    """C99 printer that writes small integer powers as products (pow() is slow)."""

    def _print_Pow(self, expr):
        base, exp = expr.args
        if exp.is_Integer and 2 <= abs(int(exp)) <= 4:
            b = f"({self._print(base)})"
            prod = "*".join([b] * abs(int(exp)))
            return prod if exp > 0 else f"1.0/({prod})"
        if exp == -1:
            return f"1.0/({self._print(base)})"
        return super()._print_Pow(expr)


def _printer():
    return _CPrinter({"order": "none", "strict": True})


class UnknownSymbols(Exception):
    """Symbols without a C name in an expression (``.symbols``, sorted by name)."""

    def __init__(self, symbols):
        self.symbols = sorted(map(str, symbols))
        super().__init__(", ".join(self.symbols))


class CPrinter:
    """Print sympy expressions as C99 text, naming symbols (and any other sub-expression) by
    ``names`` (expression -> C text).  :meth:`doprint` raises :class:`UnknownSymbols` for
    symbols that are not in ``names``."""

    def __init__(self, names: dict):
        self.names = dict(names)
        self._fallback = None
        self._renamed = None

    def doprint(self, expr) -> str:
        """C text of ``expr``."""
        self._unknown = set()
        text = self._print(sp.sympify(expr))
        if self._unknown:
            raise UnknownSymbols(self._unknown)
        return text

    # ------------------------------------------------------------------ dispatch
    def _print(self, e) -> str:
        name = self.names.get(e)
        if name is not None:
            return name
        if e.is_Symbol:
            self._unknown.add(e)
            return str(e)
        if e.is_Add:
            return self._add(e)
        if e.is_Mul:
            return self._mul(e)
        if e.is_Pow:
            return self._pow(e)
        if e.is_Integer:
            return str(e.p)
        if e.is_Rational:
            return f"{e.p}.0/{e.q}.0"
        fn = FUNCTIONS.get(e.func)
        if fn is not None:
            if e in _MACROS:
                return _MACROS[e]
            return f"{fn}({', '.join(self._print(a) for a in e.args)})"
        return self._sympy(e)

    def _precedence(self, e) -> float:
        if e in self.names or e.is_Symbol:
            return _ATOM
        if e.is_Add:
            return _ADD
        if e.is_Mul:
            c = e.args[0]
            return _ADD if c.is_Number and c.is_extended_negative else _MUL
        if e.is_Pow:
            return _POW
        if e.is_Integer:
            return _ADD if e.p < 0 else _ATOM
        if e.is_Rational:
            return _ADD if e.p < 0 else _MUL
        if e.func in FUNCTIONS:
            return _FUNC
        return precedence(e)

    def _paren(self, e, level) -> str:
        text = self._print(e)
        return f"({text})" if self._precedence(e) <= level else text

    # ------------------------------------------------------------------ nodes
    def _add(self, e) -> str:
        parts = []
        for term in e.args:
            t = self._print(term)
            sign = "+"
            if t.startswith("-"):
                sign, t = "-", t[1:]
            parts += [sign, f"({t})" if self._precedence(term) < _ADD else t]
        first = parts.pop(0)
        return ("-" if first == "-" else "") + " ".join(parts)

    def _mul(self, e) -> str:
        if e in _MACROS:
            return _MACROS[e]
        args = e.args
        c = args[0]
        if c.is_Number and c.is_extended_negative:
            sign, prec = "-", _ADD
            c = -c
            args = args[1:] if c is sp.S.One else (c, *args[1:])
        else:
            sign, prec = "", _MUL
        num, den = [], []
        for item in args:
            if item.is_Pow and item.exp.is_Rational and item.exp.is_negative:
                base, exp = item.args
                if exp == -1:
                    # a product raised to -1 (left unevaluated) gets one more pair of parentheses
                    text = self._paren(base, prec)
                    den.append(f"({text})" if base.is_Mul else text)
                else:
                    den.append(self._denominator_pow(base, -exp))
            else:
                num.append(item)
        if not num:
            num_text = ["1"]
        elif len(num) == 1 and sign:
            num_text = [self._paren(num[0], _NEG)]
        else:
            num_text = [self._paren(x, prec) for x in num]
        text = sign + "*".join(num_text)
        if not den:
            return text
        if len(den) == 1:
            return f"{text}/{den[0]}"
        return f"{text}/({'*'.join(den)})"

    def _denominator_pow(self, base, exp) -> str:
        """b**exp (exp > 0) as a factor of a denominator: a product form is parenthesized."""
        text = self._pow_text(base, exp, sp.Pow(base, exp, evaluate=False))
        return f"({text})" if exp.is_Integer and 2 <= exp <= 4 else text

    def _pow(self, e) -> str:
        return self._pow_text(e.base, e.exp, e)

    def _pow_text(self, base, exp, e) -> str:
        if exp.is_Integer and 2 <= abs(exp.p) <= 4:
            b = f"({self._print(base)})"
            prod = "*".join([b] * abs(exp.p))
            return prod if exp.p > 0 else f"1.0/({prod})"
        if exp == -1:
            return f"1.0/({self._print(base)})"
        if e in _MACROS:
            return _MACROS[e]
        if exp.is_Rational or exp.is_Float:
            if equal_valued(exp, 0.5):
                return f"sqrt({self._print(base)})"
            if exp == sp.Rational(1, 3):
                return f"cbrt({self._print(base)})"
            if exp.is_Rational:
                return f"pow({self._print(base)}, {self._print(exp)})"
        return self._sympy(e)

    # ------------------------------------------------------------------ anything else
    def _sympy(self, e) -> str:
        """``e`` printed by sympy's C printer after renaming its symbols."""
        if self._fallback is None:
            self._fallback = _printer()
            self._renamed = {k: sp.Symbol(v) for k, v in self.names.items() if k.is_Symbol}
        stray = [s for s in e.free_symbols if s not in self.names]
        if stray:
            self._unknown.update(stray)
            return str(e)
        named = {k: sp.Symbol(v) for k, v in self.names.items() if not k.is_Symbol and e.has(k)}
        return self._fallback.doprint(e.xreplace({**named, **self._renamed}))
