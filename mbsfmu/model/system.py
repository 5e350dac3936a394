"""The user-facing model description, in the spirit of Neweul-M2's modeling commands.

Seed 002 sec. 4.1 defines a system by constants (``newUserVarKonst``), generalized coordinates
(``newGenCoord``), bodies placed relative to an existing frame (``newBody`` with ``RelPos``,
``RelRot``, ``CgPos``, ``CgRot``, ``Mass``, ``Inertia``), force elements and gravity.  The
:class:`System` below offers the same commands as Python methods::

    s = System("double_pendulum")
    m, L1 = s.constants(m=2.0, L1=1.0)
    alpha, = s.coordinates("alpha")
    s.body("P1", ref="ISYS", rel_rot=rot_x(alpha), cg_pos=[0, 0, -L1], mass=m,
           inertia=[[0.01, 0, 0], [0, 1, 0], [0, 0, 1]])

Expressions may be sympy expressions built from the returned symbols or strings that are parsed
in the system's namespace (``"L1*sin(alpha)"``).  Every error names the offending element.

Names: the symbols (constants, coordinates with their rates ``D<q>``, time parameters, inputs)
are unique among themselves and may not be E, I or pi (sympy's constants in a string); frames and
bodies, force elements, constraints and outputs each have a namespace of their own (a spring
``k1`` next to a constant ``k1``, a frame ``E``).  Constants, coordinates, inputs and outputs are
FMU variables as well, so an output may not take the name of one of those.
"""

from __future__ import annotations

import keyword
import os
import re
import warnings
from collections.abc import Callable

import sympy as sp

from ..core.checks import declared_bounds, finite_number, keyword_alias
from ..core.errors import MbsError, ModelError, ParameterError
from ..core.fmu_layout import added_names
from .elastic import modal_data as md
from .elastic.modal_data import check_frame_node, linear_form
from .element_checks import check_mass_properties, visual_size
from .elements import (
    AppliedForce,
    Body,
    Constant,
    Coordinate,
    FlexibleBody,
    Frame,
    GeneralizedForce,
    HolonomicConstraint,
    InitialCondition,
    Input,
    LoopClosure,
    NonholonomicConstraint,
    Output,
    SpringDamper,
    TimeParameter,
    Visual,
)
from .expression_checks import check_differentiable, check_linear_in_rates, check_rotation_matrix
from .rotations import Rotation, as_rotation

#: The time symbol used in every model.
t = sp.Symbol("t", real=True)

INERTIAL = "ISYS"

#: The namespaces of a System's names.  Symbols (constants, coordinates with their rates D<q>
#: and D2<q>, time parameters with D<p> and D2<p>, inputs) can all appear in one expression, so
#: they are unique among themselves.  Element names never enter an expression: frames (and
#: bodies, whose primary frame has the body's name), force elements, constraints (loops,
#: holonomic constraints and initial conditions, which share the tables of constraint rows) and
#: outputs each have their own, so a spring ``k1`` and a constant ``k1`` live side by side.
SYMBOLS, FRAMES, FORCES, CONSTRAINTS, OUTPUTS = "symbol", "frame", "force element", "constraint", "output"

#: Why a name is refused, per namespace.  E, I and pi are only reserved as symbols: sympy reads
#: them in a string expression as its constants (Euler's number, the imaginary unit, pi).
_RESERVED_SYMBOL = {
    "t": "t is the time symbol", "time": "time is the time column of results and FMUs",
    INERTIAL: f"{INERTIAL} is the inertial frame",
    **{n: f"sympy reads {n} in a string expression as its constant {what}, so E, I and pi "
          "cannot name a symbol (they may name frames, bodies and other elements)"
       for n, what in (("E", "E (Euler's number)"), ("I", "I (the imaginary unit)"), ("pi", "pi"))},
}
_RESERVED_ELEMENT = {INERTIAL: f"{INERTIAL} is the inertial frame"}


class System:
    """A multibody system: an inertial frame ``ISYS`` plus everything added to it."""

    def __init__(self, name: str, title: str = ""):
        if not name or not str(name).isidentifier():
            raise ModelError(f"system name {name!r} must be a valid identifier")
        self.name = str(name)
        self.title = title or self.name
        self.t = t
        self.constants_: dict[str, Constant] = {}
        self.coordinates_: dict[str, Coordinate] = {}
        self.time_parameters: dict[str, TimeParameter] = {}
        self.inputs: dict[str, Input] = {}
        self.frames: dict[str, Frame] = {INERTIAL: Frame(INERTIAL, None)}
        self.bodies: dict[str, Body] = {}
        self.flexible_bodies: dict[str, FlexibleBody] = {}
        self.spring_dampers: list[SpringDamper] = []
        self.applied: list[AppliedForce] = []
        self.generalized_forces: list[GeneralizedForce] = []
        self.loops: list[LoopClosure] = []
        self.holonomic: list[HolonomicConstraint] = []
        self.nonholonomic: list[NonholonomicConstraint] = []
        self.initial_conditions: list[InitialCondition] = []
        self.outputs: dict[str, Output] = {}
        self.visuals: dict[str, Visual] = {}  # name -> how the animation draws it
        self.gravity_vector = sp.zeros(3, 1)
        # per namespace (SYMBOLS, FRAMES, ...): every name -> what it names
        self._names: dict[str, dict[str, str]] = {k: {} for k in (SYMBOLS, FRAMES, FORCES,
                                                                  CONSTRAINTS, OUTPUTS)}
        self._names[FRAMES][INERTIAL] = "the inertial frame"
        # names that become FMU variables (constants, coordinates, inputs, undotted outputs)
        self._fmu_names: dict[str, str] = {}
        self._namespace: dict[str, sp.Basic] = {"t": t}
        self._equations = None

    # ------------------------------------------------------------------ names and symbols
    def _claim(self, name: str, what: str, space: str = SYMBOLS, fmu: bool = False) -> None:
        """Take ``name`` in namespace ``space`` for ``what`` ("constant 'm'"); ``fmu``: the name
        also becomes an FMU variable, so it must differ from the other FMU variables (those of
        other namespaces and those the export adds itself)."""
        self._check_name(name, what, space, fmu)
        self._names[space][name] = what
        if fmu:
            self._fmu_names[name] = what
        self._equations = None

    def _check_name(self, name: str, what: str, space: str = SYMBOLS, fmu: bool = False) -> None:
        """The checks of :meth:`_claim` without taking the name."""
        if not isinstance(name, str) or not name.isidentifier():
            raise ModelError(f"{what} name {name!r} is not a valid identifier")
        reserved = _RESERVED_SYMBOL if space == SYMBOLS else _RESERVED_ELEMENT
        if name in reserved:
            raise ModelError(f"{what} name {name!r} is reserved: {reserved[name]}; choose another name")
        if keyword.iskeyword(name):
            raise ModelError(f"{what} name {name!r} is reserved: it is a Python keyword")
        if name in self._names[space]:
            raise ModelError(f"duplicate name {name!r}: already used by {self._names[space][name]}")
        if fmu:
            if name in self._fmu_names:
                other = self._fmu_names[name]
                out = what if space == OUTPUTS else other
                raise ModelError(f"{what} and {other} would both be the FMU variable {name!r}; "
                                 f"rename one of them (e.g. the {out.split(' ')[0]} to {name + '_out'!r})")
            fixed = added_names()
            if name in fixed:
                raise ModelError(f"{what}: the name {name!r} is taken by an FMU variable that the "
                                 f"export adds itself ({fixed[name]}); choose another name")

    def _symbol(self, name: str, what: str, fmu: bool = False) -> sp.Symbol:
        self._claim(name, what, SYMBOLS, fmu)
        s = sp.Symbol(name, real=True)
        self._namespace[name] = s
        return s

    def expr(self, value, where: str = "expression") -> sp.Expr:
        """Turn a number, string or sympy expression into a checked sympy expression."""
        try:
            if isinstance(value, str):
                e = sp.sympify(value, locals=dict(self._namespace))
            else:
                e = sp.sympify(value)
        except (sp.SympifyError, TypeError, SyntaxError) as exc:
            raise ModelError(f"{where}: cannot read {value!r} as an expression ({exc})"
                             + self._sympy_names(value)) from None
        if not isinstance(e, sp.Expr):
            raise ModelError(f"{where}: {value!r} is not a scalar expression" + self._sympy_names(value))
        known = set(self._namespace.values())
        unknown = [s for s in e.free_symbols if s not in known]
        if unknown:
            names = ", ".join(sorted(str(s) for s in unknown))
            raise ModelError(
                f"{where}: unknown symbol(s) {names}; declare them with constants(), "
                "coordinates(), time_parameter() or input() and use the returned symbols"
            )
        return e

    def _sympy_names(self, value) -> str:
        """'; zeta is a sympy function, ...' for the undeclared names in a string that sympy
        reads as its own functions (zeta, gamma, beta, ...), else ''."""
        if not isinstance(value, str):
            return ""
        names = sorted({n for n in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", value)
                        if n not in self._namespace and callable(getattr(sp, n, None))})
        if not names:
            return ""
        return (f"; {', '.join(names)} {'is a sympy function' if len(names) == 1 else 'are sympy functions'}"
                ", not a declared symbol: declare it with constants(), coordinates(), "
                "time_parameter() or input() (or choose another name) and use the returned symbol")

    def vector(self, value, where: str) -> sp.Matrix:
        if value is None:
            return sp.zeros(3, 1)
        if isinstance(value, str):
            value = [p for p in value.strip("[] ").replace(";", ",").split(",")]
        items = list(value) if not isinstance(value, sp.MatrixBase) else list(value)
        if len(items) != 3:
            raise ModelError(f"{where}: a 3-vector is needed, got {len(items)} components")
        return sp.Matrix([self.expr(v, where) for v in items])

    def _matrix3(self, value, where: str) -> sp.Matrix:
        try:
            M = sp.Matrix(value)
        except Exception as exc:  # sympy raises many kinds here
            raise ModelError(f"{where}: cannot read {value!r} as a 3x3 matrix ({exc})") from None
        if M.shape == (3, 1) or M.shape == (1, 3):
            M = sp.diag(*list(M))
        if M.shape != (3, 3):
            raise ModelError(f"{where}: a 3x3 matrix (or 3 principal values) is needed, got {M.shape}")
        return M.applyfunc(lambda v: self.expr(v, where))

    def _rotation(self, value, where: str) -> Rotation:
        try:
            rot = as_rotation(value)
        except (ValueError, TypeError, sp.SympifyError) as exc:
            raise ModelError(f"{where}: cannot read {value!r} as a rotation "
                             f"({' '.join(str(exc).split())})") from None
        for _, angle in rot.sequence:
            self.expr(angle, where)
        if rot.matrix_ is not None:
            check_rotation_matrix(self._matrix3(rot.matrix_, where), where, self._sample_values())
        return rot

    def _sample_values(self) -> dict:
        """Numbers for every declared symbol, for numerical checks of expressions: constants at
        their default values (else 0.7), anything else (coordinates, rates, time parameters,
        inputs, t) left to the caller's random samples."""
        return {c.symbol: c.value if c.value is not None else 0.7 for c in self.constants_.values()}

    def _frame_name(self, name: str, where: str) -> str:
        name = getattr(name, "name", name)
        if name not in self.frames:
            for fb in self.flexible_bodies.values():
                if isinstance(name, str) and name.startswith(fb.name + "_"):
                    raise ModelError(f"{where}: flexible body {fb.name!r} has no node frame {name!r} "
                                     f"(its nodes: {', '.join(str(nd.id) for nd in fb.data.nodes)}; "
                                     f"node frames: {', '.join(fb.node_frames)})")
            known = ", ".join(self.frames)
            raise ModelError(f"{where}: unknown reference frame {name!r} (known frames: {known})")
        return name

    # ------------------------------------------------------------------ declarations
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

    def initial_condition(self, name: str, expression, value, rate=None) -> str:
        """An extra condition expression(y) = value (and d/dt expression = rate) that fixes
        the initial state of a constrained system together with c(y, 0) = 0, e.g. the crank
        angle of a slider-crank: ``initial_condition('crank', alpha + beta - pi, pi/4, 2*pi)``.
        The rates of the coordinates that are not given (guesses) follow from the rate without
        a warning; a warning comes only if given values contradict the conditions."""
        where = f"initial condition {name!r}"
        e = self.expr(expression, where)
        if not (e.free_symbols & set(self.y)):
            raise ModelError(f"{where}: {e} does not depend on any coordinate")
        bad = e.free_symbols - set(self.y) - {c.symbol for c in self.constants_.values()}
        if bad:
            raise ModelError(f"{where}: may depend on coordinates and constants only, not on "
                             f"{sorted(map(str, bad))}")
        el = InitialCondition(name, e, finite_number(value, where),
                              None if rate is None else finite_number(rate, where + " rate"))
        self._claim(name, where, CONSTRAINTS)
        self.initial_conditions.append(el)
        return name

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

    def gravity(self, vector) -> None:
        """Set the gravity vector in ISYS components, e.g. ``gravity([0, 0, -g])``."""
        self.gravity_vector = self.vector(vector, "gravity")
        self._equations = None

    # ------------------------------------------------------------------ geometry
    def frame(self, name: str, ref: str = INERTIAL, rel_pos=None, rel_rot=None, *, pos=None,
              rot=None) -> str:
        """Add a frame placed in ``ref`` by the position vector ``rel_pos`` (from the origin of
        ``ref``, in ``ref`` components) and the rotation ``rel_rot`` (as for :meth:`body`).
        ``pos`` and ``rot`` are older aliases of ``rel_pos`` and ``rel_rot``."""
        where = f"frame {name!r}"
        rel_pos, pos_kw = keyword_alias(where, "rel_pos", rel_pos, "pos", pos)
        rel_rot, rot_kw = keyword_alias(where, "rel_rot", rel_rot, "rot", rot)
        fr = self._new_frame(name, ref, rel_pos, rel_rot, where, (pos_kw, rot_kw))
        self._claim(name, where, FRAMES)
        self.frames[name] = fr
        return name

    def _new_frame(self, name, ref, pos, rot, where, keywords=("rel_pos", "rel_rot")) -> Frame:
        """A checked Frame record (not yet added); ``keywords`` name the position and rotation
        arguments in messages."""
        ref = self._frame_name(ref, where)
        self._check_name(name, where, FRAMES)
        return Frame(name, ref, self.vector(pos, f"{where} {keywords[0]}"),
                     self._rotation(rot, f"{where} {keywords[1]}"))

    def body(self, name: str, ref: str = INERTIAL, rel_pos=None, rel_rot=None, cg_pos=None,
             cg_rot=None, mass=None, inertia=None) -> str:
        """Add a rigid body (``newBody``).

        Creates the primary frame ``name`` placed in ``ref`` by ``rel_pos``/``rel_rot`` and the
        centre-of-gravity frame ``name + '_cg'`` placed in the primary frame by
        ``cg_pos``/``cg_rot``.  A rotation is a :class:`Rotation` (``rot_z(q)``, ``cardan``, ...),
        three Cardan angles or a 3x3 matrix; a matrix must be a rotation (R^T R = E, det R = +1)
        for every value of its symbols (:func:`check_rotation_matrix`).  ``inertia`` is about
        the centre of gravity, in cg-frame components (a 3x3 matrix or three principal values).
        Everything is checked before the system is changed, so a rejected body leaves no trace."""
        where = f"body {name!r}"
        self._check_name(name, where, FRAMES)
        if mass is None:
            raise ModelError(f"{where}: a mass is needed")
        m = self.expr(mass, f"{where} mass")
        I = self._matrix3(inertia if inertia is not None else sp.zeros(3, 3), f"{where} inertia")
        asym = [(i, j) for i in range(3) for j in range(i + 1, 3)
                if sp.simplify(I[i, j] - I[j, i]) != 0]
        if asym:
            i, j = asym[0]
            raise ModelError(f"{where}: inertia tensor is not symmetric "
                             f"(I[{i},{j}] = {I[i, j]} but I[{j},{i}] = {I[j, i]})")
        cg = name + "_cg"
        primary = self._new_frame(name, ref, rel_pos, rel_rot, where)
        self._check_name(cg, f"cg frame of {where}", FRAMES)
        self.frames[name] = primary  # temporarily, so that the cg frame can refer to it
        try:
            cg_frame = self._new_frame(cg, name, cg_pos, cg_rot, where, ("cg_pos", "cg_rot"))
        finally:
            del self.frames[name]
        body = Body(name, name, cg, m, I)
        defaults = self.default_parameters(strict=False)
        if all(s.name in defaults for s in (m.free_symbols | I.free_symbols)):
            check_mass_properties(body, defaults)
        self._claim(name, where, FRAMES)
        self._claim(cg, f"cg frame of {where}", FRAMES)
        self.frames[name] = primary
        self.frames[cg] = cg_frame
        self.bodies[name] = body
        return name

    def flexible_body(self, name: str, ref: str = INERTIAL, rel_pos=None, rel_rot=None, data=None,
                      geometric_stiffening: bool = True, stiffness_factor=1, damping_factor=1) -> str:
        """Add a flexible body (seed 002 "Step 2-4 (elastic)"; Schwertassek and Wallrapp's SID).

        ``data`` is a :class:`~mbsfmu.model.elastic.ModalData` or the path of an mbsfmu-sid
        JSON file (:func:`~mbsfmu.model.elastic.load`).  The body's frame of reference R is the
        frame ``name``, placed in ``ref`` by ``rel_pos``/``rel_rot`` as the primary frame of
        :meth:`body`.  Its elastic coordinates q are new coordinates ``<name>_<mode>`` (mode
        names from ``data.modes``, default q01, q02, ...), starting at 0 (set them with
        :meth:`initial` like any coordinate).  Every node gets a frame ``<name>_<node id>``,
        an ordinary frame placed in R at

            c(q) = origin.M0 + origin.M1 q,    rotated by  rot_x(a_1) rot_y(a_2) rot_z(a_3),  a = psi q,

        the elementary rotations by the small angles psi q: equal to the node's small rotation
        to first order in q, and exact as a placement (its velocities follow from it), so force
        elements, loops, outputs and bodies on a node frame keep the equations consistent.  The
        frame of ``data.frame_node`` coincides with R (its mode shapes must vanish).
        ``geometric_stiffening``: use ``data.ksigma`` (if given) as in
        :mod:`mbsfmu.equations.flexible`.  ``stiffness_factor``, ``damping_factor``: numbers or
        expressions of constants multiplying the modal stiffness Ke and damping De (a constant
        makes them FMU parameters that a sweep can vary; for a beam, scaling Ke is scaling E).
        Everything is checked before the system changes."""
        where = f"flexible body {name!r}"
        if not isinstance(geometric_stiffening, bool):
            raise ModelError(f"{where}: geometric_stiffening must be True or False, got "
                             f"{geometric_stiffening!r}")
        factors = []
        for label, value in (("stiffness_factor", stiffness_factor), ("damping_factor", damping_factor)):
            e = self.expr(value, f"{where}: {label}")
            bad = e.free_symbols - {c.symbol for c in self.constants_.values()}
            if bad:
                raise ModelError(f"{where}: {label} may depend on constants only, not on "
                                 f"{sorted(map(str, bad))}")
            if e.is_number and not (e.is_real and e >= 0):
                raise ModelError(f"{where}: {label} must be a number >= 0, got {value!r}")
            factors.append(e)
        self._check_name(name, where, FRAMES)
        data = self._modal_data(data, where, md)
        modes = list(data.modes) if data.modes else [f"q{j + 1:02d}" for j in range(data.n)]
        coords = [f"{name}_{mode}" for mode in modes]
        node_frames = [f"{name}_{nd.id}" for nd in data.nodes]
        for cname in coords:
            cw = f"elastic coordinate {cname!r} of {where}"
            self._check_name(cname, cw, SYMBOLS, fmu=True)
            for dn in ("D" + cname, "D2" + cname):
                self._check_name(dn, f"rates of {cw}", SYMBOLS)
        if len(set(coords)) != len(coords):
            raise ModelError(f"{where}: mode names repeat ({', '.join(modes)})")
        for fname in node_frames:
            self._check_name(fname, f"node frame {fname!r} of {where}", FRAMES)
        primary = self._new_frame(name, ref, rel_pos, rel_rot, where)
        if data.frame_node is not None:
            check_frame_node(data, where)

        self._claim(name, where, FRAMES)
        self.frames[name] = primary
        syms = [self.coordinate(cname) for cname in coords]
        for nd, fname in zip(data.nodes, node_frames):
            if nd.id == data.frame_node:
                pos, rot = sp.zeros(3, 1), Rotation()
            else:
                pos = sp.Matrix([linear_form(nd.origin.M0[i], nd.phi[i], syms) for i in range(3)])
                angles = [linear_form(0.0, nd.psi[i], syms) for i in range(3)]
                rot = Rotation(tuple((ax, a) for ax, a in zip("xyz", angles) if a != 0))
            self._claim(fname, f"node frame {fname!r} of {where}", FRAMES)
            self.frames[fname] = Frame(fname, name, pos, rot)
        self.flexible_bodies[name] = FlexibleBody(name, name, data, coords, node_frames,
                                                  bool(geometric_stiffening), *factors)
        return name

    @staticmethod
    def _modal_data(data, where: str, md):
        """The checked ModalData of ``data`` (a ModalData or a path of an mbsfmu-sid file)."""
        if isinstance(data, md.ModalData):
            try:
                data.check()
            except ModelError as exc:
                raise ModelError(f"{where}: {exc}") from None
            return data
        if isinstance(data, (str, os.PathLike)):
            try:
                return md.load(data)
            except ModelError as exc:
                raise ModelError(f"{where}: {exc}") from None
        raise ModelError(f"{where}: data must be modal data (mbsfmu.model.elastic.ModalData) or the "
                         f"path of an mbsfmu-sid JSON file, got {type(data).__name__}")

    # ------------------------------------------------------------------ force elements
    def spring_damper(self, name: str, a: str, b: str, stiffness=0, damping=0,
                      rest_length=0) -> str:
        """Point-to-point spring-damper between the origins of frames ``a`` and ``b``."""
        where = f"spring-damper {name!r}"
        a = self._frame_name(a, where)
        b = self._frame_name(b, where)
        if a == b:
            raise ModelError(f"{where}: both ends are on frame {a!r}")
        el = SpringDamper(name, a, b, self.expr(stiffness, where), self.expr(damping, where),
                          self.expr(rest_length, where))
        self._claim(name, where, FORCES)
        self.spring_dampers.append(el)
        return name

    def force(self, name: str, frame: str, vector, in_frame: str = INERTIAL) -> str:
        """Applied force at the origin of ``frame``, components given in ``in_frame``."""
        return self._applied(name, "force", frame, vector, in_frame)

    def torque(self, name: str, frame: str, vector, in_frame: str = INERTIAL) -> str:
        """Applied torque on the body carrying ``frame``, components given in ``in_frame``."""
        return self._applied(name, "torque", frame, vector, in_frame)

    def _applied(self, name, kind, frame, vector, in_frame) -> str:
        where = f"{kind} {name!r}"
        frame = self._frame_name(frame, where)
        in_frame = self._frame_name(in_frame, where + " (in_frame)")
        el = AppliedForce(name, kind, frame, self.vector(vector, where), in_frame)
        self._claim(name, where, FORCES)
        self.applied.append(el)
        return name

    def generalized_force(self, name: str, coordinate: str, expression) -> str:
        """A generalized force added to the right-hand side q of one coordinate's equation."""
        where = f"generalized force {name!r}"
        coordinate = getattr(coordinate, "name", coordinate)
        if coordinate not in self.coordinates_:
            raise ModelError(f"{where}: {coordinate!r} is not a coordinate")
        el = GeneralizedForce(name, coordinate, self.expr(expression, where))
        self._claim(name, where, FORCES)
        self.generalized_forces.append(el)
        return name

    # ------------------------------------------------------------------ kinematic loops
    def loop(self, name: str, a: str, b: str, translations: str = "xyz", rotations: str = "",
             in_frame: str | None = None) -> str:
        """Close a kinematic loop between frames ``a`` and ``b`` (seed 000 §4).

        The origins of a and b must coincide along the ``translations`` axes of ``in_frame``
        (default: frame a), and a and b may not rotate relative to each other about the
        ``rotations`` axes of ``in_frame``.  One constraint per listed axis; e.g.
        ``loop('pin', 'crank_end', 'ISYS', translations='xy')`` for a planar revolute joint."""
        where = f"loop {name!r}"
        a = self._frame_name(a, where)
        b = self._frame_name(b, where)
        in_frame = self._frame_name(in_frame if in_frame is not None else a, where + " (in_frame)")
        if a == b:
            raise ModelError(f"{where}: both ends are on frame {a!r}")
        for label, axes in (("translations", translations), ("rotations", rotations)):
            if not isinstance(axes, str) or any(c not in "xyz" for c in axes) or len(set(axes)) != len(axes):
                raise ModelError(f"{where}: {label} must be distinct axes from 'xyz', got {axes!r}")
        if not translations and not rotations:
            raise ModelError(f"{where}: no translational or rotational direction is constrained")
        el = LoopClosure(name, a, b, translations, rotations, in_frame)
        self._claim(name, where, CONSTRAINTS)
        self.loops.append(el)
        return name

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

    @property
    def constrained(self) -> bool:
        """True if the model has constraint rows (loops, holonomic or nonholonomic constraints)."""
        return bool(self.loops or self.holonomic or self.nonholonomic)

    # ------------------------------------------------------------------ outputs
    _FRAME_QUANTITIES = {"position": ("x", "y", "z"), "velocity": ("vx", "vy", "vz"),
                         "angular_velocity": ("wx", "wy", "wz")}

    def _add_output(self, out: Output) -> str:
        name = out.name
        if not isinstance(name, str) or not all(p.isidentifier() for p in name.split(".")):
            raise ModelError(f"output name {name!r} must be identifiers joined by dots (e.g. tip.x)")
        if name in self.outputs:
            raise ModelError(f"duplicate output name {name!r}")
        if "." not in name:
            self._claim(name, f"output {name!r}", OUTPUTS, fmu=True)
        self.outputs[name] = out
        self._equations = None
        return name

    def output(self, name: str, expression, description: str = "") -> str:
        """A user-named output: an expression of t, coordinates, their rates (``D<name>``),
        constants, time parameters and inputs (inputs make it a direct feed-through output)."""
        where = f"output {name!r}"
        e = self.expr(expression, where)
        allowed = set(self.y) | set(self.yd) | {self.t}
        allowed |= {c.symbol for c in self.constants_.values()}
        allowed |= {u.symbol for u in self.inputs.values()}
        for p in self.time_parameters.values():
            allowed |= {p.symbol, p.velocity, p.acceleration}
        bad = e.free_symbols - allowed
        if bad:
            raise ModelError(f"{where}: may depend on t, coordinates, rates, constants, time "
                             f"parameters and inputs only, not on {sorted(map(str, bad))}")
        return self._add_output(Output(name, description or f"output {name}", expression=e))

    def frame_output(self, frame: str, quantity: str = "position", prefix: str | None = None) -> list[str]:
        """Outputs ``<prefix>.x/.y/.z`` (position), ``.vx/.vy/.vz`` (velocity) or
        ``.wx/.wy/.wz`` (angular velocity) of a frame, in ISYS components."""
        frame = self._frame_name(frame, f"frame output {frame!r}")
        if quantity not in self._FRAME_QUANTITIES:
            raise ModelError(f"frame output of {frame!r}: quantity must be one of "
                             f"{', '.join(self._FRAME_QUANTITIES)}, got {quantity!r}")
        names = []
        for i, comp in enumerate(self._FRAME_QUANTITIES[quantity]):
            names.append(self._add_output(Output(
                f"{prefix or frame}.{comp}", f"{quantity.replace('_', ' ')} of frame {frame} "
                f"({'xyz'[i]}, ISYS)", frame=frame, quantity=quantity, component=i)))
        return names

    def deflection_output(self, node_frame: str, prefix: str | None = None) -> list[str]:
        """Outputs ``<prefix>.ux/.uy/.uz``: the elastic displacement u = Phi q of a flexible
        body's node (the node frame's name, e.g. ``'P1_11'``), in the components of the body's
        frame of reference (seed 002 "Step 3 (elastic)": u = Phi(R) y_elastic).  The node's
        position is :meth:`frame_output` of the same frame."""
        where = f"deflection output {node_frame!r}"
        for fb in self.flexible_bodies.values():
            if node_frame in fb.node_frames:
                node = fb.data.nodes[fb.node_frames.index(node_frame)]
                q = [self.coordinates_[c].symbol for c in fb.coordinates]
                names = []
                for i, comp in enumerate(("ux", "uy", "uz")):
                    u = linear_form(0.0, node.phi[i], q)
                    names.append(self.output(f"{prefix or node_frame}.{comp}", u,
                                             f"elastic displacement of node {node_frame} ({'xyz'[i]}, "
                                             f"frame {fb.frame})"))
                return names
        nodes = [n for fb in self.flexible_bodies.values() for n in fb.node_frames]
        raise ModelError(f"{where}: not a node of a flexible body (nodes: {', '.join(nodes) or 'none'})")

    def reaction_outputs(self) -> list[str]:
        """One output ``reaction.<constraint>`` per constraint row defined so far: its Lagrange
        multiplier (M y'' + k = q + C^T lambda; for a translational loop condition the reaction
        force along that axis on the loop's frame b, for a rotational one the torque)."""
        rows = self.constraint_names
        if not rows:
            raise ModelError(f"{self.name}: reaction outputs need loops or constraints (define them first)")
        return [self._add_output(Output(f"reaction.{r}", f"Lagrange multiplier of constraint {r}",
                                        constraint=r)) for r in rows]

    @property
    def constraint_names(self) -> list[str]:
        """One name per scalar constraint: ``loop.x``, ``loop.rz`` or the constraint's name;
        the rows of c (loops, then holonomic constraints) first, then the nonholonomic ones."""
        names = []
        for lp in self.loops:
            names += [f"{lp.name}.{ax}" for ax in lp.translations]
            names += [f"{lp.name}.r{ax}" for ax in lp.rotations]
        names += [h.name for h in self.holonomic]
        names += [h.name for h in self.nonholonomic]
        return names

    # ------------------------------------------------------------------ animation
    #: shapes of :meth:`visual` and the size values each takes (with their meaning)
    VISUAL_SHAPES = {"line": (), "sphere": ("radius",), "box": ("length x", "length y", "length z"),
                     "cylinder": ("radius", "length")}

    def visual(self, name: str, shape: str = "line", size=None, color: str | None = None) -> str:
        """How the animation (:mod:`mbsfmu.animation`) draws a body, a frame or a flexible body.

        For a body, ``color`` colours its stick lines and the shape sits at its centre of
        gravity (the cg frame's pose); for a frame, the shape sits at that frame.  ``shape``:
        ``'line'`` (the stick figure only, no size), ``'sphere'`` (size = radius), ``'box'``
        (size = edge lengths along the frame's x, y, z, or one number for a cube) or
        ``'cylinder'`` (size = (radius, length), axis along the frame's z); sizes are positive
        numbers in model length units.  ``color`` is any matplotlib colour ('tab:red',
        '#1f77b4').  Shapes are drawn as wire frames (edges, three great circles, two rims and
        four generators)."""
        where = f"visual({name!r})"
        name = getattr(name, "name", name)
        known = list(self.frames) + list(getattr(self, "flexible_bodies", {}))
        if not isinstance(name, str) or name not in known:
            raise ModelError(f"{where}: no body, frame or flexible body of that name "
                             f"(known: {', '.join(known)})")
        if shape not in self.VISUAL_SHAPES:
            raise ModelError(f"visual of {name!r}: unknown shape {shape!r} "
                             f"(shapes: {', '.join(self.VISUAL_SHAPES)})")
        if shape != "line" and name in getattr(self, "flexible_bodies", {}):
            raise ModelError(f"visual of {name!r}: a flexible body is drawn as a line through its "
                             f"nodes; give only a color (shape 'line'), not {shape!r}")
        values = visual_size(name, shape, size, self.VISUAL_SHAPES[shape])
        if color is not None:
            from matplotlib.colors import is_color_like

            if not isinstance(color, str) or not is_color_like(color):
                raise ModelError(f"visual of {name!r}: {color!r} is not a matplotlib colour "
                                 "(e.g. 'tab:red', 'C1', '#1f77b4')")
        self.visuals[name] = Visual(name, shape, values, color)
        return name

    # ------------------------------------------------------------------ queries
    @property
    def y(self) -> list[sp.Symbol]:
        return [c.symbol for c in self.coordinates_.values()]

    @property
    def yd(self) -> list[sp.Symbol]:
        return [c.velocity for c in self.coordinates_.values()]

    @property
    def ydd(self) -> list[sp.Symbol]:
        return [c.acceleration for c in self.coordinates_.values()]

    def default_parameters(self, strict: bool = True) -> dict[str, float]:
        """Default constant values; ``strict`` raises for constants without a value."""
        out = {}
        for c in self.constants_.values():
            if c.value is None:
                if strict:
                    raise ParameterError(f"constant {c.name!r} has no value; give one in "
                                         "constant()/constants() or with params={...}")
                continue
            out[c.name] = c.value
        return out

    #: ``derive(model) -> Equations``, registered by :mod:`mbsfmu.equations` when it is imported
    #: (:meth:`register_derivation`); only the deprecated :meth:`equations` calls it, so that the
    #: model never imports its own derivation
    _derivation = None

    @staticmethod
    def register_derivation(derive: Callable) -> None:
        """Make ``derive`` (:func:`mbsfmu.derive`) what :meth:`equations` calls, for every front end."""
        System._derivation = staticmethod(derive)

    def equations(self):
        """Deprecated for one release: ``mbsfmu.derive(s)`` returns the same equations of motion.

        Warns with a DeprecationWarning; an MbsError if no derivation is registered."""
        kind = type(self).__name__
        warnings.warn(f"{kind}.equations() is deprecated and goes away in the next release: use "
                      "mbsfmu.derive(s), which returns the same Equations", DeprecationWarning, stacklevel=2)
        if self._derivation is None:
            raise MbsError(f"{self.name}: {kind}.equations() finds no derivation of the equations of motion "
                           "(mbsfmu.equations registers it when it is imported): import mbsfmu and call "
                           "mbsfmu.derive(s)")
        return self._derivation(self)

    def cached_equations(self, derive):
        """``derive(self)``, computed once and kept until the model changes: the equations of
        motion, which :func:`mbsfmu.derive` (the derivation of :mod:`mbsfmu.equations`) keeps
        here so that every stage shares one derivation and a pickled model takes it along.  The
        model itself never derives: it is the description the equations are derived from."""
        if self._equations is None:
            self._equations = derive(self)
        return self._equations

    def summary(self) -> str:
        lines = [f"system {self.name!r} ({self.title})"]
        lines.append(f"  coordinates ({len(self.coordinates_)}): " + ", ".join(
            f"{c.name}={c.initial:g} (D={c.initial_velocity:g})" for c in self.coordinates_.values()))
        lines.append(f"  constants ({len(self.constants_)}): " + ", ".join(
            f"{c.name}={c.value!r}" for c in self.constants_.values()))
        lines.append(f"  inputs ({len(self.inputs)}): " + ", ".join(
            f"{u.name}={u.default:g}" for u in self.inputs.values()))
        lines.append(f"  time parameters ({len(self.time_parameters)}): " + ", ".join(
            self.time_parameters))
        lines.append(f"  frames ({len(self.frames)}): " + ", ".join(self.frames))
        lines.append(f"  bodies ({len(self.bodies)}): " + ", ".join(self.bodies))
        if self.flexible_bodies:
            lines.append(f"  flexible bodies ({len(self.flexible_bodies)}): " + ", ".join(
                f"{b.name} ({len(b.coordinates)} modes, {len(b.node_frames)} nodes)"
                for b in self.flexible_bodies.values()))
        forces = ([e.name for e in self.spring_dampers] + [e.name for e in self.applied]
                  + [e.name for e in self.generalized_forces])
        lines.append(f"  force elements ({len(forces)}): " + ", ".join(forces))
        if self.constrained:
            nh = {h.name for h in self.nonholonomic}
            lines.append(f"  constraints ({len(self.constraint_names)}): " + ", ".join(
                n + (" (nonholonomic)" if n in nh else "") for n in self.constraint_names))
        return "\n".join(lines)
