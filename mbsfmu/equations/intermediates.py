"""Intermediate variables: how the derivation keeps expressions small.

Every non-trivial quantity computed body by body (rotation matrices, Jacobians, velocities,
accelerations) is stored as a fresh symbol ``_w<n>`` whose definition is recorded in order.
Later quantities are built from these symbols, so no expression grows with the depth of the
kinematic tree; the ordered list of definitions is a common-subexpression form that the code
generators print directly.  :meth:`Intermediates.expand` substitutes the definitions back when a
user wants a closed-form expression.
"""

from __future__ import annotations

import sympy as sp


class Intermediates:
    """An ordered list of definitions ``symbol = expression``."""

    def __init__(self, prefix: str = "_w"):
        self.prefix = prefix
        self.symbols: list[sp.Symbol] = []
        self.definitions: dict[sp.Symbol, sp.Expr] = {}
        self._expanded: dict[sp.Symbol, sp.Expr] = {}
        self._by_definition: dict[sp.Expr, sp.Symbol] = {}
        #: quantities derived from the definitions, kept so that each is derived once per
        #: derivation (the kinematics of a point expression: kinematics.expression_kinematics)
        self.memo: dict = {}

    def __len__(self) -> int:
        return len(self.symbols)

    def aux(self, expr) -> sp.Expr:
        """Return ``expr`` itself if it is trivial, the symbol of an earlier identical
        definition if there is one, else a new symbol standing for it.

        Reusing symbols lets sympy merge equal terms where they meet (the rotational terms
        ``J + J + ...`` of a chain's mass matrix become ``n*J``) and keeps repeated
        ``cos(q)`` or ``m*L**2/12`` from being evaluated once per body."""
        expr = sp.sympify(expr)
        if _trivial(expr):
            return expr
        sym = self._by_definition.get(expr)
        if sym is not None:
            return sym
        sym = sp.Symbol(f"{self.prefix}{len(self.symbols)}", real=True)
        self.symbols.append(sym)
        self.definitions[sym] = expr
        self._by_definition[expr] = sym
        return sym

    def matrix(self, M: sp.MatrixBase) -> sp.Matrix:
        """Apply :meth:`aux` to every entry of a matrix."""
        return sp.Matrix(M.rows, M.cols, [self.aux(v) for v in M])

    def expand(self, expr):
        """Substitute all intermediate definitions back (works on matrices too)."""
        if isinstance(expr, sp.MatrixBase):
            return expr.applyfunc(self.expand)
        expr = sp.sympify(expr)
        needed = [s for s in expr.free_symbols if s in self.definitions]
        if not needed:
            return expr
        return expr.xreplace({s: self._expand_symbol(s) for s in needed})

    def _expand_symbol(self, sym: sp.Symbol) -> sp.Expr:
        if sym not in self._expanded:
            # definitions only refer to earlier symbols: expand those first (iteratively)
            stack = [sym]
            while stack:
                s = stack[-1]
                deps = [d for d in self.definitions[s].free_symbols
                        if d in self.definitions and d not in self._expanded]
                if deps:
                    stack.extend(deps)
                    continue
                stack.pop()
                if s not in self._expanded:
                    d = self.definitions[s]
                    self._expanded[s] = d.xreplace(
                        {x: self._expanded[x] for x in d.free_symbols if x in self.definitions})
        return self._expanded[sym]

    def symbols_read(self, exprs) -> set:
        """Every symbol that ``exprs`` read, directly or through the definitions they need (the
        arguments among them: what the expressions depend on)."""
        exprs = [sp.sympify(e) for e in exprs]
        found = set().union(*(e.free_symbols for e in exprs)) if exprs else set()
        for s in self.needed_for(exprs):
            found |= self.definitions[s].free_symbols
        return found

    def needed_for(self, exprs) -> list[sp.Symbol]:
        """The intermediate symbols that ``exprs`` depend on, in definition order."""
        need: set[sp.Symbol] = set()
        stack = []
        for e in exprs:
            stack.extend(s for s in sp.sympify(e).free_symbols if s in self.definitions)
        while stack:
            s = stack.pop()
            if s in need:
                continue
            need.add(s)
            stack.extend(d for d in self.definitions[s].free_symbols
                         if d in self.definitions and d not in need)
        return [s for s in self.symbols if s in need]


def _trivial(expr: sp.Expr) -> bool:
    if expr.is_Atom:
        return True
    if expr.is_Mul and len(expr.args) == 2 and expr.args[0].is_Number and expr.args[1].is_Atom:
        return True  # -x, 2*x
    return False
