"""The names of a model: one registry per namespace, and the names that become FMU variables.

Symbols (constants, coordinates with their rates ``D<q>`` and ``D2<q>``, time parameters with
``D<p>`` and ``D2<p>``, inputs) can all appear in one expression, so they are unique among
themselves and may not be E, I or pi (sympy reads those in a string as its constants).  Element
names never enter an expression: frames and bodies (a LagrangianSystem's points and elements),
force elements, constraints (loops, holonomic and nonholonomic constraints and initial
conditions, which share the tables of constraint rows) and outputs each have a namespace of
their own, so a spring ``k1`` and a constant ``k1`` live side by side.  Constants, coordinates,
inputs and outputs without a dot are FMU variables as well, so they must also differ from each
other and from the variables the export adds itself (``constraint_residual``, the solver
settings).
"""

from __future__ import annotations

import keyword

import sympy as sp

from ..core.errors import ModelError
from ..core.fmu_layout import added_names

#: The time symbol used in every model.
t = sp.Symbol("t", real=True)

#: The inertial frame, in whose components every model gives gravity and its global outputs.
INERTIAL = "ISYS"

#: The namespaces (see the module docstring).
SYMBOLS, FRAMES, FORCES, CONSTRAINTS, OUTPUTS = "symbol", "frame", "force element", "constraint", "output"
NAMESPACES = (SYMBOLS, FRAMES, FORCES, CONSTRAINTS, OUTPUTS)

#: Why a name is refused, per namespace.  E, I and pi are only reserved as symbols: sympy reads
#: them in a string expression as its constants (Euler's number, the imaginary unit, pi).
RESERVED_SYMBOL = {
    "t": "t is the time symbol", "time": "time is the time column of results and FMUs",
    INERTIAL: f"{INERTIAL} is the inertial frame",
    **{n: f"sympy reads {n} in a string expression as its constant {what}, so E, I and pi "
          "cannot name a symbol (they may name frames, bodies and other elements)"
       for n, what in (("E", "E (Euler's number)"), ("I", "I (the imaginary unit)"), ("pi", "pi"))},
}
RESERVED_ELEMENT = {INERTIAL: f"{INERTIAL} is the inertial frame"}

#: FMU variable names the export adds itself, which no constant, coordinate, input or output
#: may take (:func:`mbsfmu.codegen.fmu_variables.fmu_variables`)
FMU_FIXED_NAMES = added_names()


class Names(dict):
    """Every name a model has given out: per namespace (``names[space]``: name -> what it
    names, e.g. "constant 'm'"), and those that are also FMU variables (``fmu``)."""

    def __init__(self):
        super().__init__({space: {} for space in NAMESPACES})
        self[FRAMES][INERTIAL] = "the inertial frame"
        self.fmu: dict[str, str] = {}

    def check(self, name: str, what: str, space: str = SYMBOLS, fmu: bool = False) -> None:
        """A ModelError unless ``name`` is free in ``space`` for ``what``: an identifier, not
        reserved, not a Python keyword, not taken; with ``fmu`` also free among the FMU
        variables (those of other namespaces and those the export adds itself)."""
        if not isinstance(name, str) or not name.isidentifier():
            raise ModelError(f"{what} name {name!r} is not a valid identifier")
        reserved = RESERVED_SYMBOL if space == SYMBOLS else RESERVED_ELEMENT
        if name in reserved:
            raise ModelError(f"{what} name {name!r} is reserved: {reserved[name]}; choose another name")
        if keyword.iskeyword(name):
            raise ModelError(f"{what} name {name!r} is reserved: it is a Python keyword")
        if name in self[space]:
            raise ModelError(f"duplicate name {name!r}: already used by {self[space][name]}")
        if fmu:
            if name in self.fmu:
                other = self.fmu[name]
                out = what if space in (OUTPUTS, CONSTRAINTS) else other  # rename the newcomer
                kind = out.split(" '")[0]
                raise ModelError(f"{what} and {other} would both be the FMU variable {name!r}; "
                                 f"rename one of them (e.g. the {kind} to {name + '_out'!r})")
            if name in FMU_FIXED_NAMES:
                raise ModelError(f"{what}: the name {name!r} is taken by an FMU variable that the "
                                 f"export adds itself ({FMU_FIXED_NAMES[name]}); choose another name")

    def claim(self, name: str, what: str, space: str = SYMBOLS, fmu: bool = False) -> None:
        """Take ``name`` in ``space`` for ``what`` after the checks of :meth:`check`."""
        self.check(name, what, space, fmu)
        self[space][name] = what
        if fmu:
            self.fmu[name] = what
