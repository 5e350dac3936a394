"""Values and first derivatives of expressions over intermediate variables at one point.

The equations are stored as an ordered list of definitions ``w_k = d_k(x, w_1, ..., w_{k-1})``
(:mod:`mbsfmu.equations.intermediates`), where ``x`` are the coordinates, velocities and inputs.
Instead of expanding M, q - k, C into closed form and differentiating those (large)
expressions, this module runs the chain rule forward through the definitions and substitutes
the operating point x0 at once::

    w_k(x0)          = d_k(x0, w_1(x0), ..., w_{k-1}(x0))
    dw_k/dx_j (x0)   = ∂d_k/∂x_j (x0) + Σ_{l<k} ∂d_k/∂w_l (x0) · dw_l/dx_j (x0)

Each ∂d_k/∂(.) is the derivative of one small definition, evaluated at the point before it is
combined, so numbers (cos 0 = 1, sin 0 = 0) collapse the expressions early; what remains are
the symbols the caller leaves free (constants, symbolic set values).  Gradients are sparse:
a definition that does not depend on x_j carries no entry for it.
"""

from __future__ import annotations

import sympy as sp


class PointDerivatives:
    """``value(e)`` and ``gradient(e)`` of expressions over the intermediates of ``w`` at the
    point ``point`` (symbol -> value), differentiated with respect to ``variables``."""

    def __init__(self, w, point: dict, variables):
        self.w = w
        self.variables = list(variables)
        self.index = {v: i for i, v in enumerate(self.variables)}
        self.values: dict = dict(point)     # symbol -> value at the point (model symbols and w)
        self.grads: dict = {}               # intermediate symbol -> {variable index: derivative}

    def _prepare(self, exprs) -> None:
        """Run the forward pass over the intermediates ``exprs`` need (once each)."""
        defs = self.w.definitions
        for s in self.w.needed_for(exprs):
            if s in self.grads:
                continue
            d = defs[s]
            self.values[s] = d.xreplace(self.values)
            self.grads[s] = self._chain(d)

    def _chain(self, d) -> dict:
        g: dict = {}
        for x in d.free_symbols:
            if x in self.index:
                parts = {self.index[x]: sp.S.One}
            else:
                parts = self.grads.get(x)
            if not parts:
                continue
            pd = sp.diff(d, x).xreplace(self.values)
            if pd == 0:
                continue
            for j, gx in parts.items():
                g[j] = g.get(j, sp.S.Zero) + pd * gx
        return {j: v for j, v in g.items() if v != 0}

    def value(self, e):
        e = sp.sympify(e)
        self._prepare([e])
        return e.xreplace(self.values)

    def gradient(self, e) -> list:
        """[de/dx_j at the point for every variable x_j]."""
        e = sp.sympify(e)
        self._prepare([e])
        row = [sp.S.Zero] * len(self.variables)
        for j, v in self._chain(e).items():
            row[j] = v
        return row

    def values_of(self, exprs) -> sp.Matrix:
        exprs = list(exprs)
        self._prepare(exprs)
        return sp.Matrix(len(exprs), 1, [sp.sympify(e).xreplace(self.values) for e in exprs])

    def jacobian(self, exprs, variables) -> sp.Matrix:
        """d(exprs)/d(variables) at the point (rows: expressions; variables among ``self.variables``)."""
        exprs = list(exprs)
        self._prepare(exprs)
        cols = [self.index[v] for v in variables]
        rows = []
        for e in exprs:
            g = self.gradient(e)
            rows.append([g[j] for j in cols])
        return sp.Matrix(len(exprs), len(cols), [v for r in rows for v in r])
