"""The constraints of a LagrangianSystem (seed 003 sec. 2.5): holonomic constraints twice
differentiable in the coordinates and time, nonholonomic ones given by a scalar, and the
natural-coordinate joints written as products u . v - r = 0 (distance, perpendicularity, unit
length, prismatic joints) whose rows come from the kinematics of u and v.  An element's
rigidity constraint identical to an existing one is left out; one that depends on the existing
ones at the initial configuration (the numerical rank of the constraint Jacobian there) is added
with a RedundantConstraintWarning.
"""

from __future__ import annotations

import warnings

import numpy as np
import sympy as sp

from ..core.errors import ModelError, RedundantConstraintWarning
from .expression_checks import check_differentiable
from .names import FRAMES, t
from .natural_coordinates import dot, perp
from .start_values import number

#: relative tolerances: of the identity check of element constraints (values at random points)
#: and of the redundancy check (distance of a new gradient from the span of the others, relative
#: to its length)
IDENTICAL_RTOL = 1e-9
REDUNDANT_RTOL = 1e-9


class NaturalConstraints:
    """The constraint commands of a LagrangianSystem (a part of
    :class:`~mbsfmu.model.LagrangianSystem`)."""

    def constraint(self, name: str, expression) -> str:
        """A holonomic constraint c(y, t) = 0 (seed 003 eq. 1.2.2); twice differentiable in
        the coordinates and time (its rows of C and b'' need the derivatives)."""
        where = f"constraint {name!r}"
        e = self._scalar(expression, where)
        vel = e.free_symbols & set(self.yd)
        if vel:
            raise ModelError(
                f"{where} is velocity-dependent (it contains {', '.join(sorted(map(str, vel)))}): a "
                "holonomic constraint c(y, t) = 0 may depend on coordinates, time, time parameters "
                "and constants only; a constraint on the velocities A(y, t) y' + a(y, t) = 0 is a "
                "nonholonomic_constraint()")
        smooth = set(self.y) | {t} | {p.symbol for p in self.time_parameters.values()}
        check_differentiable(e, smooth, where, 2, "its rows of C = dc/dy and b'' need its first "
                             "and second derivatives")
        return super().constraint(name, e)

    def nonholonomic_constraint(self, name: str, expression) -> str:
        """A nonholonomic constraint A(y, t) y' + a(y, t) = 0, given as the scalar A y' + a
        (see :meth:`Model.nonholonomic_constraint`; ``velocity(point)`` and ``rates(point)``
        help build it)."""
        if isinstance(expression, (sp.MatrixBase, list, tuple, set, dict)) or getattr(
                expression, "shape", ()) != ():  # a 1 x 1 matrix is its element, others refused
            expression = self._scalar(expression, f"nonholonomic constraint {name!r}")
        return super().nonholonomic_constraint(name, expression)

    def distance(self, name: str, a, b, length) -> str:
        """|a - b|^2 - length^2 = 0 (seed 003 sec. 2.5, rigidity); the length must be positive
        (checked where it has a value: a number, or constants with defaults)."""
        where = f"distance constraint {name!r}"
        pa, pb = self.pv(a, where), self.pv(b, where)
        if pa == pb:
            raise ModelError(f"{where}: both ends are the same point")
        ell = self._length(length, where)
        self._product(name, pa - pb, pa - pb, ell**2)
        self._length_parameters(ell, where)
        self.drawn.append((name, (pa, pb)))
        return name

    def _product(self, name: str, u, v, r) -> str:
        """The constraint u . v - r = 0 (u, v point or vector expressions, r of constants and
        time), kept with its factors so that its rows come from the kinematics of u and v."""
        self.constraint(name, dot(u, v) - r)
        self.holonomic[-1].product = (sp.Matrix(u), sp.Matrix(v), sp.sympify(r))
        return name

    def perpendicular(self, name: str, u, v) -> str:
        """u . v = 0 (seed 003 sec. 2.5, a right angle kept between two vectors)."""
        where = f"perpendicularity constraint {name!r}"
        return self._product(name, self.pv(u, where), self.pv(v, where), 0)

    def unit_length(self, name: str, u) -> str:
        """u . u - 1 = 0 (a unit vector)."""
        pu = self.pv(u, f"unit-length constraint {name!r}")
        return self._product(name, pu, pu, 1)

    def prismatic(self, name: str, p, u, q, v=None, normals=None) -> list[str]:
        """A prismatic joint (seed 003 sec. 2.5): the point ``q`` of the second element stays
        on the line through the point ``p`` of the first along its vector ``u``.

        2D: ``<name>_line``: (q - p) x u = 0, and with ``v`` (a vector of the second element)
        ``<name>_parallel``: u x v = 0, so the elements do not rotate relative to each other.
        3D: ``normals`` (n1, n2) are two vectors of the first element perpendicular to u;
        ``<name>_n1``, ``<name>_n2``: (q - p) . n_i = 0, and with ``v`` also v . n_i = 0.  The
        two independent equations per condition avoid the redundant third component of a
        cross product; the relative rotation about the axis is kept by sharing a vector
        perpendicular to u between the elements (as the seed suggests) or by a constraint."""
        where = f"prismatic joint {name!r}"
        pp, pu, pq = self.pv(p, where + " p"), self.pv(u, where + " u"), self.pv(q, where + " q")
        pvv = None if v is None else self.pv(v, where + " v")
        names = []
        if self.dim == 2:
            if normals is not None:
                raise ModelError(f"{where}: normals are for 3D joints only")
            names.append(self._product(f"{name}_line", perp(pq - pp), pu, 0))
            if pvv is not None:
                names.append(self._product(f"{name}_parallel", perp(pu), pvv, 0))
            return names
        if normals is None or len(normals) != 2:
            raise ModelError(f"{where}: a 3D prismatic joint needs normals=(n1, n2), two vectors of "
                             "the first element perpendicular to u")
        ns = [self.pv(n, where + " normal") for n in normals]
        for i, n in enumerate(ns, 1):
            names.append(self._product(f"{name}_n{i}", pq - pp, n, 0))
        if pvv is not None:
            for i, n in enumerate(ns, 1):
                names.append(self._product(f"{name}_v{i}", pvv, n, 0))
        return names

    def _rigidity(self, element: str, label: str, u, v, r) -> str | None:
        """Add the constraint ``<element>_<label>``: u . v - r = 0 made by an element, unless
        the same one (or its negative) exists; warn if it depends on the existing ones at the
        start."""
        name = f"{element}_{label}"
        expr = dot(u, v) - r
        if self._identical(expr) is not None:
            return None
        others = self._dependence(expr)
        self._product(name, u, v, r)
        if others is not None:
            warnings.warn(RedundantConstraintWarning(
                f"{self.name}: the constraint {name!r} that {self._names[FRAMES][element]} adds "
                f"is redundant at the initial configuration: its gradient is "
                + (f"a combination of those of {', '.join(map(repr, others))}" if others else "zero")
                + "; only the formulations 'qr' and 'svd' take redundant constraints (the others "
                "refuse the model); leave it out with rigid_body(..., rigid=False) and the "
                "element's other constraints (distance(), perpendicular())"), stacklevel=3)
        return name

    def _identical(self, expr) -> str | None:
        """The name of a holonomic constraint whose expression is ``expr`` or -``expr`` (up to
        rounding of their numbers) as a function of all its symbols, else None.  Decided by
        values, not by expanding: a candidate must have the same symbols, and it is identical
        if its values agree with expr's at three random points (every symbol uniform in
        [0.5, 1.5]) to IDENTICAL_RTOL of their size."""
        e = sp.sympify(expr)
        syms = e.free_symbols
        candidates = [h for h in self.holonomic if h.expression.free_symbols == syms]
        if not candidates:
            return None
        rng = np.random.default_rng(7)
        points = [dict(zip(syms, rng.uniform(0.5, 1.5, len(syms)))) for _ in range(3)]
        mine = [number(e.xreplace(p)) for p in points]
        if any(v is None for v in mine):
            return None
        for h in candidates:
            theirs = [number(h.expression.xreplace(p)) for p in points]
            if any(v is None for v in theirs):
                continue
            for sign in (1.0, -1.0):
                if all(abs(a - sign * b) <= IDENTICAL_RTOL * (abs(a) + abs(b) + 1e-300)
                       for a, b in zip(mine, theirs)):
                    return h.name
        return None

    def _gradient_row(self, key, expr, values: dict) -> np.ndarray | None:
        """dc/dy of the constraint expression ``expr`` at ``values`` (None if a symbol has no
        value there or c is not finite), by complex steps: dc/dy_j = Im c(y + i h e_j) / h with
        h = 1e-30, exact to rounding for the analytic expressions a constraint may hold (its
        non-smooth functions are refused, a Piecewise is differentiated symbolically); one
        vectorized evaluation of c lambdified once (kept under ``key``)."""
        if key not in self._gradients:
            syms = sorted(expr.free_symbols, key=str)
            self._gradients[key] = (syms, sp.lambdify(syms, expr, "numpy"))
        syms, fn = self._gradients[key]
        if any(x not in values for x in syms):
            return None
        index = {q: j for j, q in enumerate(self.y)}
        moving = [k for k, x in enumerate(syms) if x in index]
        row = np.zeros(len(index))
        if not moving:
            return row
        if expr.has(sp.Piecewise):
            for k in moving:
                value = number(sp.diff(expr, syms[k]).xreplace(values))
                if value is None:
                    return None
                row[index[syms[k]]] = value
            return row
        h = 1e-30
        args = []
        for k, x in enumerate(syms):
            arg = np.full(len(moving), complex(values[x]))
            if k in moving:
                arg[moving.index(k)] += 1j * h
            args.append(arg)
        with np.errstate(all="ignore"):
            out = np.broadcast_to(np.asarray(fn(*args), dtype=complex), (len(moving),))
        for m, k in enumerate(moving):
            row[index[syms[k]]] = out[m].imag / h
        return row if np.all(np.isfinite(row)) and np.all(np.isfinite(out.real)) else None

    def _dependence(self, expr) -> list[str] | None:
        """None if the gradient of the new constraint ``expr`` at the initial configuration (the
        symbols as in :meth:`_start_values`, constants without default 0.7) is independent of
        those of the holonomic constraints already there, else the names of those it is a
        combination of ([] for a zero gradient): the numerical rank of the constraint Jacobian
        at the start, not a symbolic comparison.  The distance of the new gradient from the
        span of the others, relative to its length, is compared with REDUNDANT_RTOL."""
        values = self._start_values()
        values.update({c.symbol: 0.7 for c in self.constants_.values() if c.value is None})
        g = self._gradient_row(None, sp.sympify(expr), values)
        self._gradients.pop(None, None)
        if g is None:
            return None
        scale = float(np.abs(g).max())
        if scale == 0.0:
            return []
        rows, names = [], []
        for h in self.holonomic:
            r = self._gradient_row(h.name, h.expression, values)
            if r is not None and r.any():
                rows.append(r)
                names.append(h.name)
        if not rows:
            return None
        G = np.array(rows)
        coef, *_ = np.linalg.lstsq(G.T, g, rcond=None)
        if np.abs(G.T @ coef - g).max() > REDUNDANT_RTOL * scale:
            return None
        big = np.abs(coef) * np.abs(G).max(axis=1)
        return [n for n, c in zip(names, big) if c > 1e-6 * big.max()]
