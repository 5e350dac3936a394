"""The symbols of a model and their start: constants, generalized coordinates with their rates,
time parameters, inputs, initial values and guesses (Neweul-M2's ``newUserVarKonst`` and
``newGenCoord``, seed 002 sec. 4.1), shared by both front ends.

Each command checks its arguments before it changes the model, so a refused declaration leaves
no trace; every number must be finite and a value with bounds inside them.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from ..core.checks import declared_bounds, finite_number
from ..core.errors import ModelError
from .elements import Constant, Coordinate, Input, TimeParameter
from .names import SYMBOLS, t


class Declarations:
    """The commands that declare symbols (a part of :class:`~mbsfmu.model.base.Model`)."""

    def constant(self, name: str, value=None, description: str = "", min=None, max=None) -> sp.Symbol:
        """Declare a named constant (``newUserVarKonst``); ``value`` is its default.

        ``min`` and ``max`` are inclusive bounds (FMI's ``min``/``max`` attributes): every value
        given later (``params=``, ``--set``, an FMU's ``fmi2SetReal``) is checked against them."""
        where = f"constant {name!r}"
        if value is not None:
            value = finite_number(value, where)
        lo, hi = declared_bounds(min, max, value, where)
        sym = self._symbol(name, where, fmu=True)
        self.constants_[name] = Constant(name, sym, value, description, lo, hi)
        return sym

    def constants(self, **values) -> tuple[sp.Symbol, ...]:
        """Declare several constants with default values; returns their symbols in order."""
        return tuple(self.constant(k, v) for k, v in values.items())

    def coordinate(self, name: str, initial: float = 0.0, velocity: float | None = None) -> sp.Symbol:
        """Declare a generalized coordinate (``newGenCoord``) with initial position and rate.

        A rate that is not given starts at 0 as a guess: the consistent initialization of a
        constrained system may change it without a warning (see :meth:`initial_guess`)."""
        dname, ddname = "D" + str(name), "D2" + str(name)
        self._check_name(name, f"coordinate {name!r}", SYMBOLS, fmu=True)  # its own name first
        for n in (dname, ddname):
            if n in self._names[SYMBOLS]:
                raise ModelError(f"duplicate name {n!r}: needed for the rates of coordinate {name!r} "
                                 f"but already used by {self._names[SYMBOLS][n]}")
        y0 = finite_number(initial, f"initial value of {name!r}")
        yd0 = finite_number(0.0 if velocity is None else velocity, f"initial velocity of {name!r}")
        sym = self._symbol(name, f"coordinate {name!r}", fmu=True)
        self._names[SYMBOLS][dname] = self._names[SYMBOLS][ddname] = f"rates of coordinate {name!r}"
        vel = sp.Symbol(dname, real=True)
        acc = sp.Symbol(ddname, real=True)
        self._namespace[dname] = vel
        self.coordinates_[name] = Coordinate(name, sym, vel, acc, y0, yd0,
                                             guess_velocity=velocity is None)
        return sym

    def coordinates(self, *names: str) -> tuple[sp.Symbol, ...]:
        return tuple(self.coordinate(n) for n in names)

    def initial(self, **values) -> None:
        """Set initial positions; ``initial(alpha=0.4)``; ``initial(Dalpha=1.0)`` sets a rate.

        Values set here are given: the consistent initialization of a constrained system warns
        if it has to change them (unlike guesses, see :meth:`initial_guess`)."""
        for key, v in values.items():
            if key in self.coordinates_:
                self.coordinates_[key].initial = finite_number(v, f"initial value of {key!r}")
                self.coordinates_[key].guess = False
            elif key.startswith("D") and key[1:] in self.coordinates_:
                co = self.coordinates_[key[1:]]
                co.initial_velocity = finite_number(v, f"initial velocity of {key!r}")
                co.guess_velocity = False
            else:
                raise ModelError(f"initial(): {key!r} is not a coordinate of {self.name!r}")

    def initial_guess(self, **values) -> None:
        """Like :meth:`initial`, but the values are only starting guesses for the consistent
        initialization of a constrained system (no warning when they move)."""
        self.initial(**values)
        for key in values:
            if key in self.coordinates_:
                self.coordinates_[key].guess = True
            else:
                self.coordinates_[key[1:]].guess_velocity = True

    def time_parameter(self, name: str, expression=None, derivative=None, second_derivative=None,
                       function: Callable | None = None, function_d: Callable | None = None,
                       function_dd: Callable | None = None) -> sp.Symbol:
        """Declare a prescribed function of time p(t).

        Give ``expression`` (a sympy expression or string in ``t`` and constants): p' and p''
        are derived symbolically unless given.  Or give three Python callables of t:
        ``function``, ``function_d``, ``function_dd``."""
        where = f"time parameter {name!r}"
        if (expression is None) == (function is None):
            raise ModelError(f"{where}: give either an expression or a function (not both)")
        if function is not None and not (callable(function_d) and callable(function_dd)):
            raise ModelError(f"{where}: a function needs its first and second derivatives as callables")
        exprs = None
        if expression is not None:
            e = self.expr(expression, where)
            bad = [s for s in e.free_symbols if s != t and s not in
                   {c.symbol for c in self.constants_.values()}]
            if bad:
                raise ModelError(f"{where}: may depend on t and constants only, not {bad}")
            d = self.expr(derivative, where) if derivative is not None else sp.diff(e, t)
            dd = (self.expr(second_derivative, where) if second_derivative is not None
                  else sp.diff(d, t))
            exprs = (e, d, dd)
        dname, ddname = "D" + str(name), "D2" + str(name)
        for n in (dname, ddname):
            if n in self._names[SYMBOLS]:
                raise ModelError(f"duplicate name {n!r}: needed for the derivatives of {where} "
                                 f"but already used by {self._names[SYMBOLS][n]}")
        sym = self._symbol(name, where)
        self._names[SYMBOLS][dname] = self._names[SYMBOLS][ddname] = f"derivatives of {where}"
        vel, acc = sp.Symbol(dname, real=True), sp.Symbol(ddname, real=True)
        self._namespace[dname], self._namespace[ddname] = vel, acc
        funcs = (function, function_d, function_dd) if function is not None else None
        self.time_parameters[name] = TimeParameter(name, sym, vel, acc, exprs, funcs)
        return sym

    def input(self, name: str, default: float = 0.0, min=None, max=None) -> sp.Symbol:
        """Declare an input whose value comes from outside (a future FMU input); ``min`` and
        ``max`` are inclusive bounds checked for every value the input receives."""
        where = f"input {name!r}"
        default = finite_number(default, f"default of {where}")
        lo, hi = declared_bounds(min, max, default, where)
        sym = self._symbol(name, where, fmu=True)
        self.inputs[name] = Input(name, sym, default, lo, hi)
        return sym
