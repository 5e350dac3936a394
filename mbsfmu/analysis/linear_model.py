"""The result of :func:`mbsfmu.linearize`: second-order form, state space, names.

Second-order form in the deviations from the operating point (seed 002 §4.1)::

    M0 δÿ + D δẏ + K δy = F δu

and the state space with x = [δy; δẏ] (``der(name)`` for the rates)::

    ẋ = A x + B δu,     δz = C x + D_ss δu.

``D`` on this object is the damping matrix, as in the seed; the state-space feed-through is
``ss.D`` (the four state-space matrices together, with names, are :attr:`Linearization.ss`).
A symbolic result (constants or set values left as symbols) gives numbers with
:meth:`Linearization.to_numeric`; every numerical method (modes, transfer functions, plots,
``to_control``) uses the constants' default values when called on a symbolic result.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import sympy as sp

from ..core.errors import ParameterError, SingularMassMatrixError
from ..equations.parameter_requirements import moving_coordinates
from ..model.lagrangian import LagrangianSystem
from . import arguments
from .modal import bode, frequency_response, modal_table, modes, plot_modes, transfer_function
from .operating_point import check_constants


@dataclass
class StateSpaceModel:
    """ẋ = A x + B u, z = C x + D u with named states, inputs and outputs (numpy or sympy)."""

    A: object
    B: object
    C: object
    D: object
    states: list
    inputs: list
    outputs: list


@dataclass
class Linearization:
    """Linear model of a multibody system about an operating point (see the module docstring)."""

    system_name: str
    coordinates: list          # all coordinates of the model
    independent: list          # the coordinates of the linear model (all, without constraints)
    J: object                  # δy = J δy_i (f x n)
    M0: object
    D: object
    K: object
    F: object
    Cy: object                 # output matrix on δy_i
    Cyd: object                # output matrix on δẏ_i
    Du: object                 # output feed-through
    inputs: list
    outputs: list
    point: dict                # set values: coordinates, der(...), inputs, t
    acceleration: object       # ÿ_i at the point (0 at an equilibrium)
    velocity: object           # ẏ_i at the point
    equilibrium: bool
    constants: dict = field(default_factory=dict)     # constant symbol -> default value
    substituted: dict = field(default_factory=dict)   # constants substituted before deriving
    #: the linearized model (for drawings of the mode shapes), not part of the result's value
    system: object = field(default=None, repr=False, compare=False)

    # ------------------------------------------------------------------ names and sizes
    @property
    def states(self) -> list[str]:
        return [*self.independent, *(f"der({n})" for n in self.independent)]

    @property
    def n(self) -> int:
        """Degrees of freedom of the linear model."""
        return len(self.independent)

    @property
    def symbolic(self) -> bool:
        return not isinstance(self.M0, np.ndarray)

    @property
    def free_symbols(self) -> set:
        if not self.symbolic:
            return set()
        out = set()
        for M in (self.M0, self.D, self.K, self.F, self.Cy, self.Cyd, self.Du):
            out |= M.free_symbols
        return out

    # ------------------------------------------------------------------ state space
    @property
    def A(self):
        n = self.n
        if self.symbolic:
            return sp.Matrix.vstack(sp.Matrix.hstack(sp.zeros(n, n), sp.eye(n)),
                                    sp.Matrix.hstack(-self.M0.LUsolve(self.K), -self.M0.LUsolve(self.D)))
        return np.block([[np.zeros((n, n)), np.eye(n)],
                         [-np.linalg.solve(self.M0, self.K), -np.linalg.solve(self.M0, self.D)]])

    @property
    def B(self):
        n, m = self.n, len(self.inputs)
        if self.symbolic:
            return sp.Matrix.vstack(sp.zeros(n, m), self.M0.LUsolve(self.F))
        return np.vstack([np.zeros((n, m)), np.linalg.solve(self.M0, self.F)])

    @property
    def C(self):
        if self.symbolic:
            return sp.Matrix.hstack(self.Cy, self.Cyd)
        return np.hstack([self.Cy, self.Cyd])

    @property
    def ss(self) -> StateSpaceModel:
        return StateSpaceModel(self.A, self.B, self.C, self.Du, self.states, list(self.inputs),
                               list(self.outputs))

    @property
    def drift(self):
        """The constant part [ẏ0; ÿ0] of ẋ (zero at an equilibrium)."""
        if self.symbolic:
            return sp.Matrix.vstack(self.velocity, self.acceleration)
        return np.concatenate([np.ravel(self.velocity), np.ravel(self.acceleration)])

    # ------------------------------------------------------------------ numbers
    def to_numeric(self, params: dict | None = None, **values) -> Linearization:
        """The same linearization with numbers: constants from ``params`` (by name; defaults for
        the others), other symbols (symbolic set values) from ``values`` by name.

        Checked first (ParameterError naming the culprit): every name is a constant or a symbol
        of this result still free (not one substituted when linearizing), every value a finite
        real number, and the constants meet the model's requirements as in ``simulate`` (a mass
        matrix singular with them names the constant); a mass matrix that is singular with the
        values is a SingularMassMatrixError naming the motion that moves no mass."""
        params = arguments.mapping(params, "to_numeric: params")
        if not self.symbolic:
            if params or values:
                raise ParameterError(
                    f"to_numeric: the linearization of {self.system_name!r} is numeric already (its "
                    f"constants were substituted); linearize again with params={{...}} to change "
                    f"{', '.join(sorted([*params, *values]))}")
            return self
        by_name = {str(s): v for s, v in self.constants.items() if v is not None}
        known_constants = {str(s) for s in self.constants}
        for k, v in params.items():
            if k in self.substituted:
                raise ParameterError(f"to_numeric: constant {k!r} was substituted when linearizing "
                                     f"({k} = {self.substituted[k]}); linearize again to change it")
            if k not in known_constants:
                raise ParameterError(f"to_numeric: unknown constant {k!r} "
                                     f"(constants: {', '.join(sorted(known_constants))})")
            by_name[k] = arguments.real_number(v, f"to_numeric: params {k!r}")
        free = {str(s) for s in self.free_symbols} - known_constants
        for k, v in values.items():
            if k not in free:
                raise ParameterError(f"to_numeric: {k!r} is no symbol of this linearization "
                                     f"(symbolic set values: {', '.join(sorted(free)) or 'none'}; "
                                     "constants go in params)")
            by_name[k] = arguments.real_number(v, f"to_numeric: {k}")
        subs = {}
        missing = []
        for s in self.free_symbols:
            if str(s) in by_name:
                subs[s] = sp.Float(float(by_name[str(s)]))
            else:
                missing.append(str(s))
        if missing:
            raise ParameterError(f"to_numeric: no value for {sorted(missing)}; give them as "
                                 "to_numeric(params, name=value)")
        if params and self.system is not None:
            consts = {str(s): by_name.get(str(s)) for s in self.constants}
            for k, v in self.substituted.items():
                consts[k] = float(v) if sp.sympify(v).is_number else None
            if all(v is not None for v in consts.values()):
                check_constants(self.system, consts, "to_numeric")

        def num(M):
            M = sp.Matrix(M).xreplace(subs)
            return np.array(M.evalf(), dtype=float).reshape(M.shape)

        J, M0 = num(self.J), num(self.M0)
        singular = mass_singularity(M0, J, self.coordinates)
        if singular:
            what, motion, cond = singular
            used = ", ".join(f"{s} = {v}" for s, v in subs.items())
            raise SingularMassMatrixError(f"to_numeric: {self.system_name}: {what} is singular with "
                                          f"{used} (condition number {cond:.1e}): {motion} would "
                                          "move no mass")
        return replace(self, J=J, M0=M0, D=num(self.D), K=num(self.K),
                       F=num(self.F), Cy=num(self.Cy), Cyd=num(self.Cyd), Du=num(self.Du),
                       acceleration=num(self.acceleration), velocity=num(self.velocity),
                       point={k: _number(v, subs) for k, v in self.point.items()})

    def numeric(self) -> Linearization:
        """Numbers (defaults for the constants) for the numerical methods."""
        return self.to_numeric() if self.symbolic else self

    def to_system(self, name: str | None = None):
        """The linear model as a model of its own, to export it as an FMU through the same path
        as the nonlinear one (``mbsfmu.build_fmu``) and run both in one diagram.

        It is a :class:`~mbsfmu.model.lagrangian.LagrangianSystem` whose coordinates are the
        deviations δy_i of the independent coordinates, named like them, with inputs δu and
        outputs δz named like the linearization's (outputs that are states of the linear model
        are its coordinates already and are left out; so are rates of dependent coordinates,
        whose ``der(...)`` names are no output names).  Eq. (1) becomes the kinetic energy
        T = δẏᵀ M0 δẏ / 2 and one generalized force per coordinate, -(K δy + D δẏ) + F δu (K
        need not be symmetric).  Only about an equilibrium: elsewhere the linear model has the
        constant part ``drift``, which this form would drop."""
        lin = self.numeric()
        if not lin.equilibrium and np.any(np.abs(lin.drift) > 0.0):
            raise ParameterError(f"{self.system_name}: to_system needs a linearization about an "
                                 "equilibrium (this one has a drift [y0', y0''] != 0)")
        s = LagrangianSystem(name or f"{self.system_name}_linear",
                             f"linearization of {self.system_name} about {self.point}")
        y = sp.Matrix(s.coordinates(*self.independent))
        v = sp.Matrix([s.coordinates_[n].velocity for n in self.independent])
        u = sp.Matrix([s.input(n, 0.0) for n in self.inputs])
        M0, D, K, F = (sp.Matrix(np.asarray(a, float)) for a in (lin.M0, lin.D, lin.K, lin.F))
        s.kinetic_energy((v.T * M0 * v)[0] / 2)
        force = -K * y - D * v + (F * u if self.inputs else sp.zeros(len(y), 1))
        for i, n in enumerate(self.independent):
            s.generalized_force(f"linear_{n}", n, force[i])
        states = set(lin.states)
        Cy, Cyd = sp.Matrix(np.asarray(lin.Cy, float)), sp.Matrix(np.asarray(lin.Cyd, float))
        Du = sp.Matrix(np.asarray(lin.Du, float)) if self.inputs else None
        for k, out in enumerate(self.outputs):
            if out in states or "(" in out:
                continue
            z = (Cy[k, :] * y)[0] + (Cyd[k, :] * v)[0] + ((Du[k, :] * u)[0] if Du is not None else 0)
            s.output(out, z, f"deviation of {out} from the operating point")
        return s

    # ------------------------------------------------------------------ analysis
    def modes(self):
        """Modal analysis (:func:`mbsfmu.analysis.modal.modes`)."""
        return modes(self.numeric())

    def modal_table(self) -> str:
        return modal_table(self.numeric())

    def transfer_function(self, input: str, output: str):
        """(numerator, denominator) coefficients in descending powers of s of δz/δu."""
        return transfer_function(self.numeric(), input, output)

    def frequency_response(self, input: str, output: str, frequencies_hz):
        return frequency_response(self.numeric(), input, output, frequencies_hz)

    def bode(self, path, pairs=None, frequencies_hz=None):
        """Bode plot of the (input, output) ``pairs`` (default: every pair): an image (PNG, ...) or,
        for a ``path`` ending in .html, an interactive page."""
        return bode(self.numeric(), path, pairs, frequencies_hz)

    def plot_modes(self, path, count: int = 6):
        """Mode shapes (an image, or an interactive page for a ``path`` ending in .html): one
        panel per mode -- for a model with frames the mechanism drawn in its plane at the
        operating point and displaced along the mode, else the shape over the model's
        coordinates as bars."""
        return plot_modes(self.numeric(), path, count)

    def to_control(self):
        """A python-control ``StateSpace`` with the state, input and output names (python-control
        allows no ``.`` in a signal name: ``rod_centre.x`` becomes ``rod_centre_x``)."""
        try:
            import control
        except ImportError:
            raise ImportError("to_control() needs python-control: pip install control") from None
        lin = self.numeric()
        def names(ns):
            return [str(n).replace(".", "_") for n in ns]

        return control.ss(lin.A, lin.B, lin.C, lin.Du, states=names(lin.states),
                          inputs=names(lin.inputs), outputs=names(lin.outputs), name=self.system_name)

    def to_dict(self) -> dict:
        """Everything as JSON-ready numbers: state space, second-order form, names, modes."""
        lin = self.numeric()
        return {
            "system": self.system_name,
            "A": lin.A.tolist(), "B": lin.B.tolist(), "C": lin.C.tolist(), "D": lin.Du.tolist(),
            "states": lin.states, "inputs": list(lin.inputs), "outputs": list(lin.outputs),
            "independent": list(lin.independent), "coordinates": list(lin.coordinates),
            "second_order": {"M0": lin.M0.tolist(), "D": lin.D.tolist(), "K": lin.K.tolist(),
                             "F": lin.F.tolist()},
            "operating_point": {k: _json_number(v) for k, v in lin.point.items()},
            "equilibrium": bool(lin.equilibrium),
            "modes": [m.as_dict() for m in modes(lin)],
        }


#: a (reduced) mass matrix with a condition number above this is singular
SINGULAR_MASS_COND = 1e12


def mass_singularity(M, J, coordinates) -> tuple[str, str, float] | None:
    """None if the mass matrix M (numbers, in the independent coordinates) is regular, else
    ("the mass matrix" or "the mass matrix reduced by the constraints", the motion of its null
    vector mapped to every coordinate by δy = J δy_i as in "coordinate 'a'", its condition
    number)."""
    M = np.asarray(M, dtype=float)
    cond = np.linalg.cond(M) if M.size else 1.0
    if np.isfinite(cond) and cond <= SINGULAR_MASS_COND:
        return None
    w, V = np.linalg.eigh(0.5 * (M + M.T))
    v = np.asarray(J, dtype=float) @ V[:, int(np.argmin(np.abs(w)))]
    what = "the mass matrix" + (" reduced by the constraints" if M.shape[0] < len(coordinates) else "")
    return what, moving_coordinates(coordinates, v), float(cond)


def _number(v, subs):
    v = sp.sympify(v).xreplace(subs)
    return float(v) if v.is_number else v


def _json_number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)
