"""The constraints of a model that both front ends take: holonomic constraints c(y, t) = 0
(seed 000 eq. 5), nonholonomic constraints A(y, t) y' + a(y, t) = 0 (seed 004 sec. 3.5,
eq. 3.75), the extra conditions that fix a constrained system's initial state, and the rate
symbols ``D<q>`` to write them with.  A System's loops between frames add rows before these
(:mod:`mbsfmu.model.frames`); the rows are named by :attr:`Constraints.constraint_names`.
"""

from __future__ import annotations

import sympy as sp

from ..core.checks import finite_number
from ..core.errors import ModelError
from .elements import HolonomicConstraint, InitialCondition, NonholonomicConstraint
from .expression_checks import check_differentiable, check_linear_in_rates
from .names import CONSTRAINTS, SYMBOLS, t


class Constraints:
    """The commands that constrain a model (a part of :class:`~mbsfmu.model.base.Model`)."""

    def constraint(self, name: str, expression) -> str:
        """A general holonomic constraint c(y, t) = 0 (seed 000 eq. 5)."""
        where = f"constraint {name!r}"
        e = self.expr(expression, where)
        bad = e.free_symbols & (set(self.yd) | {u.symbol for u in self.inputs.values()})
        if bad:
            hint = ("; a constraint on the velocities, A(y, t) y' + a(y, t) = 0, is a "
                    "nonholonomic_constraint()" if bad & set(self.yd) else "")
            raise ModelError(f"{where}: a holonomic constraint may depend on coordinates, time, "
                             f"time parameters and constants only, not on {sorted(map(str, bad))}"
                             + hint)
        if not (e.free_symbols & set(self.y)):
            raise ModelError(f"{where}: {e} does not depend on any coordinate")
        el = HolonomicConstraint(name, e)
        self._claim(name, where, CONSTRAINTS)
        self.holonomic.append(el)
        return name

    def nonholonomic_constraint(self, name: str, expression) -> str:
        """A nonholonomic constraint A(y, t) y' + a(y, t) = 0 given as the expression
        A y' + a in the rates ``D<coordinate>`` (seed 004 sec. 3.5, eq. 3.75), e.g. a knife
        edge that cannot slide sideways: ``nonholonomic_constraint('edge', -sin(th)*Dx +
        cos(th)*Dy)``.

        The expression must be linear in the rates (decided on its structure by
        :func:`check_linear_in_rates`: a polynomial of degree <= 1 in them, so Abs, sign,
        Piecewise in a rate or a term 1e-10 Dx^2 are refused at once, naming the rate),
        contain at least one rate and no acceleration; it may depend on
        coordinates, time, time parameters and constants.  Its row enters the velocity and
        acceleration levels (C y' + b' = 0 and C y'' + b'' = 0 with C = A, b' = a,
        b'' = A' y' + a'), not the position level c(y, t) = 0."""
        where = f"nonholonomic constraint {name!r}"
        acc = {str(a) for a in self.ydd}
        try:
            raw = (sp.sympify(expression, locals=dict(self._namespace)) if isinstance(expression, str)
                   else sp.sympify(expression))
        except (sp.SympifyError, TypeError, SyntaxError):
            raw = None
        found = sorted(str(x) for x in getattr(raw, "free_symbols", ()) if str(x) in acc)
        if found:
            raise ModelError(f"{where}: contains the acceleration(s) {', '.join(found)}; a "
                             "nonholonomic constraint A(y, t) y' + a(y, t) = 0 may depend on the "
                             "rates D<coordinate> (linearly), coordinates, time, time parameters "
                             "and constants only")
        e = self.expr(expression, where)
        bad = e.free_symbols & {u.symbol for u in self.inputs.values()}
        if bad:
            raise ModelError(f"{where}: may not depend on the input(s) {sorted(map(str, bad))}")
        bad = e.free_symbols & {p.acceleration for p in self.time_parameters.values()}
        if bad:
            raise ModelError(f"{where}: may not depend on {sorted(map(str, bad))}: its derivative "
                             "b'' would need the third derivative of the time parameter (p and "
                             "D<p> are allowed)")
        check_linear_in_rates(e, self.yd, where)
        smooth = set(self.y) | {t} | {x for p in self.time_parameters.values()
                                    for x in (p.symbol, p.velocity)}
        check_differentiable(e, smooth, where, 1, "its row of b'' = d/dt (A y' + a) needs the "
                             "derivatives of A and a")
        el = NonholonomicConstraint(name, e)
        self._claim(name, where, CONSTRAINTS)
        self.nonholonomic.append(el)
        return name

    def initial_condition(self, name: str, expression, value, rate=None) -> str:
        """An extra condition expression(y) = value (and d/dt expression = rate) that fixes
        the initial state of a constrained system together with c(y, 0) = 0, e.g. the crank
        angle of a slider-crank: ``initial_condition('crank', alpha + beta - pi, pi/4, 2*pi)``.
        The rates of the coordinates that are not given (guesses) follow from the rate without
        a warning; a warning comes only if given values contradict the conditions.

        ``name`` names the value in a run's ``initial=`` (and ``der(name)`` or ``D<name>`` the
        declared rate, :mod:`mbsfmu.model.initial_values`) and the FMU parameters that set
        them, so it must differ from every symbol and FMU variable of the model."""
        where = f"initial condition {name!r}"
        if isinstance(name, str) and name in self._names[SYMBOLS]:
            raise ModelError(f"{where}: the name {name!r} is taken by {self._names[SYMBOLS][name]}; "
                             "a run sets the condition's value by its name, so choose another name")
        e = self.expr(expression, where)
        if not (e.free_symbols & set(self.y)):
            raise ModelError(f"{where}: {e} does not depend on any coordinate")
        bad = e.free_symbols - set(self.y) - {c.symbol for c in self.constants_.values()}
        if bad:
            raise ModelError(f"{where}: may depend on coordinates and constants only, not on "
                             f"{sorted(map(str, bad))}")
        el = InitialCondition(name, e, finite_number(value, where),
                              None if rate is None else finite_number(rate, where + " rate"))
        self._claim(name, where, CONSTRAINTS, fmu=True)
        self.initial_conditions.append(el)
        return name

    def rates(self, coordinates):
        """The rate symbols D<q> of coordinates, to write nonholonomic constraints, outputs or
        energies with: ``s.rates(x)`` for one coordinate (its symbol or name) is the symbol
        Dx; a list, tuple or column vector of coordinates (a natural-coordinate point) gives
        the same shape of rates."""
        if isinstance(coordinates, (sp.MatrixBase, list, tuple)):
            out = [self.rates(q) for q in coordinates]
            return sp.Matrix(out).reshape(*coordinates.shape) if isinstance(
                coordinates, sp.MatrixBase) else type(coordinates)(out)
        name = coordinates.name if isinstance(coordinates, sp.Symbol) else coordinates
        if not isinstance(name, str) or name not in self.coordinates_ or (
                isinstance(coordinates, sp.Symbol) and coordinates != self.coordinates_[name].symbol):
            raise ModelError(f"rates(): {coordinates!r} is not a coordinate of {self.name!r} "
                             f"(coordinates: {', '.join(self.coordinates_) or 'none'})")
        return self.coordinates_[name].velocity

    @property
    def constraint_names(self) -> list[str]:
        """One name per scalar constraint: the rows of c (a System's loops, ``loop.x``,
        ``loop.rz``, first; then the holonomic constraints), then the nonholonomic ones."""
        return (self._closure_rows() + [h.name for h in self.holonomic]
                + [h.name for h in self.nonholonomic])

    def _closure_rows(self) -> list[str]:
        """The names of the rows that close loops between frames (none without frames)."""
        return []

    @property
    def constrained(self) -> bool:
        """True if the model has constraint rows (loops, holonomic or nonholonomic constraints)."""
        return bool(self.constraint_names)
