"""Numerical evaluation of the equations of motion with generated Python/numpy code.

This is the readable reference (simulate's backend 'numpy'): ``NumericModel`` binds parameter
values to the generated functions and offers the mass matrix, the accelerations y'' = M^-1 (q - k)
(seed 002 eq. 11 solved for y''), energies and frame kinematics, for one state or a time series.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..core.checks import finite_number
from ..core.errors import ModelError, ParameterError, SingularMassMatrixError
from .mass_regularity import mass_problem
from .outputs import expression_outputs
from .parameter_requirements import parameter_requirements
from .python_source import make_function

_FRAME_FIELDS = ("r", "S", "v", "omega", "JT", "JR", "abar", "alphabar")


def _functions(eqs) -> dict:
    """Generated functions, compiled once per Equations object."""
    cache = getattr(eqs, "_numeric_cache", None)
    if cache is None:
        cache = {}
        eqs._numeric_cache = cache
    return cache


class NumericModel:
    """Equations of motion with numbers: parameter values bound, functions compiled."""

    def __init__(self, eqs, params=None, inputs=None, check=True):
        self.eqs = eqs
        self.system = s = eqs.system
        self.f = len(s.y)
        self.coordinate_names = list(s.coordinates_)
        self.constant_names = list(s.constants_)
        self.input_names = list(s.inputs)
        self.set_params(params or {}, check=check)
        self.u = np.array([u.default for u in s.inputs.values()], dtype=float)
        if inputs:
            self.set_inputs(inputs)
        self._tp = self._time_parameter_functions()

    # ---------------------------------------------------------------- parameters and inputs
    def set_params(self, params: dict, check: bool = True) -> None:
        """Bind parameter values (defaults for those not given).  With ``check`` they must meet
        the model's requirements (:mod:`mbsfmu.equations.parameter_requirements`: declared
        bounds, positive masses and possible inertias, non-zero where the dynamics need it);
        a ParameterError names the parameter and its value."""
        s = self.system
        unknown = [k for k in params if k not in s.constants_]
        if unknown:
            raise ParameterError(f"unknown parameter(s) {unknown} for {s.name!r} "
                                 f"(constants: {', '.join(s.constants_) or 'none'})")
        values = {}
        for c in s.constants_.values():
            v = params.get(c.name, c.value)
            if v is None:
                raise ParameterError(f"constant {c.name!r} has no value; give one with "
                                     f"params={{'{c.name}': ...}} or --set {c.name}=VALUE")
            values[c.name] = finite_number(v, f"parameter {c.name!r}")
        if check:
            parameter_requirements(self.eqs).check(values)
        self.params = values
        self.prm = np.array([values[n] for n in self.constant_names], dtype=float)

    def set_inputs(self, values: dict) -> None:
        for k, v in values.items():
            if k not in self.system.inputs:
                raise ParameterError(f"unknown input {k!r} (inputs: {', '.join(self.input_names) or 'none'})")
            v = finite_number(v, f"input {k!r}")
            u = self.system.inputs[k]
            if not u.min <= v <= u.max:
                raise ParameterError(f"input {k!r} = {v!r} is outside its range [{u.min!r}, {u.max!r}]")
            self.u[self.input_names.index(k)] = v

    def _time_parameter_functions(self):
        s = self.system
        funcs = []
        consts = [c.symbol for c in s.constants_.values()]
        for p in s.time_parameters.values():
            if p.functions is not None:
                funcs.extend(p.functions)
            else:
                for e in p.expressions:
                    lam = sp.lambdify([s.t, consts], e, modules=["numpy"])
                    funcs.append(lambda t, lam=lam: lam(t, self.prm))
        return funcs

    def time_parameters(self, t):
        """Values (p, p', p'') of all time parameters at time t (scalar or array).

        User callables that do not accept arrays are called once per time point."""
        t = np.asarray(t, dtype=float)
        out = []
        for fn in self._tp:
            try:
                v = np.asarray(fn(t), dtype=float)
                if v.shape not in ((), t.shape):
                    raise ValueError
            except (TypeError, ValueError):
                v = np.array([float(fn(float(ti))) for ti in t.ravel()]).reshape(t.shape)
            out.append(v + np.zeros_like(t))
        return out

    # ---------------------------------------------------------------- generated functions
    def _fn(self, key, outputs_fn, vectorized=False):
        cache = _functions(self.eqs)
        k = (key, vectorized)
        if k not in cache:
            cache[k] = make_function(self.system, self.eqs.intermediates, outputs_fn(),
                                     name=key.replace(":", "_"), vectorized=vectorized)
        return cache[k]

    def _dyn(self, vectorized=False):
        e = self.eqs
        return self._fn("dynamics", lambda: list(e.M) + list(e.q - e.k), vectorized)

    def mass_and_force(self, t, y, yd, u=None):
        """M (f x f) and q - k (f) at one state."""
        out = self._dyn()(t, y, yd, self.prm, self.u if u is None else u, self._tp_at(t))
        f = self.f
        return np.array(out[: f * f]).reshape(f, f), np.array(out[f * f:])

    def expression_outputs(self, t, y, yd, u=None):
        """Values of the user outputs that are expressions or frame kinematics (declaration
        order, multipliers left out; see :mod:`mbsfmu.equations.outputs`) at one state."""
        fn = self._fn("outputs", lambda: expression_outputs(self.eqs))
        return np.array(fn(t, y, yd, self.prm, self.u if u is None else u, self._tp_at(t)), dtype=float)

    def expression_output_series(self, t, Y, YD, U=None) -> np.ndarray:
        """:meth:`expression_outputs` for a whole time series (Y, YD of shape (f, n)): (n, outputs)."""
        args = self._series_args(t, Y, YD, U)
        n = len(args[0])
        fn = self._fn("outputs", lambda: expression_outputs(self.eqs), vectorized=True)
        values = [np.broadcast_to(np.asarray(v, dtype=float), (n,)) for v in fn(*args)]
        return np.stack(values, axis=-1) if values else np.zeros((n, 0))

    #: what evaluates single states: "numpy" (the generated Python), or "c" once the compiled
    #: kernel replaced the per-state methods (:func:`mbsfmu.engine.c_kernel.use_c_kernel`)
    backend = "numpy"
    #: None, or (set with the compiled kernel) a function that returns the whole right-hand side
    #: x' = F(t, x) of a tree compiled on the engine, or None where the engine cannot be built
    compiled_rhs = None

    # ---------------------------------------------------------------- constraints
    @property
    def m(self) -> int:
        """Number of scalar constraints (rows of C: holonomic and nonholonomic)."""
        return self.eqs.m

    @property
    def mh(self) -> int:
        """Number of holonomic constraints (rows of c; the first rows of C)."""
        return self.eqs.mh

    def _tp_at(self, t):
        return [float(v) for v in self.time_parameters(t)] if self._tp else ()

    def constraint_parts(self, t, y):
        """c (mh), C (m x f) and b' (m) at one configuration (seed 000 eqs. 5-6; the last
        m - mh rows of C and b' are the nonholonomic A and a)."""
        e = self.eqs
        fn = self._fn("constraints", lambda: list(e.c) + list(e.C) + list(e.b1))
        out = fn(t, y, y, self.prm, self.u, self._tp_at(t))
        m, mh, f = self.m, self.mh, self.f
        return (np.array(out[:mh]), np.array(out[mh:mh + m * f]).reshape(m, f),
                np.array(out[mh + m * f:]))

    def constrained_parts(self, t, y, yd, u=None):
        """M, q - k, c (mh), C (m x f), b', b'' (m) at one state (seed 000 eqs. 3-7)."""
        e = self.eqs
        fn = self._fn("constrained", lambda: (list(e.M) + list(e.q - e.k) + list(e.c) + list(e.C)
                                               + list(e.b1) + list(e.b2)))
        out = fn(t, y, yd, self.prm, self.u if u is None else u, self._tp_at(t))
        f, m, mh = self.f, self.m, self.mh
        o = np.array(out)
        i = 0
        parts = []
        for size, shape in ((f * f, (f, f)), (f, (f,)), (mh, (mh,)), (m * f, (m, f)), (m, (m,)),
                            (m, (m,))):
            parts.append(o[i:i + size].reshape(shape))
            i += size
        return tuple(parts)

    def constraint_series(self, t, Y, YD=None):
        """The constraint residual over a time series (Y, YD of shape (f, n)): the max-norm of
        c and, for nonholonomic constraints, of A y' + a (which needs YD)."""
        e = self.eqs
        if self.m == 0:
            return np.zeros(len(np.atleast_1d(t)))
        mh, yd = self.mh, sp.Matrix(self.system.yd)
        if YD is None and self.m > mh:
            raise ParameterError("the residual of nonholonomic constraints needs the velocities")
        fn = self._fn("residual", lambda: list(e.c) + [(e.C[i, :] * yd)[0] + e.b1[i]
                                                       for i in range(mh, self.m)], True)
        args = self._series_args(t, Y, Y if YD is None else YD)
        n = len(args[0])
        c = np.stack([np.broadcast_to(np.asarray(v, dtype=float), (n,)) for v in fn(*args)])
        return np.max(np.abs(c), axis=0)

    def accelerations(self, t, y, yd, u=None):
        """y'' = M^-1 (q - k) at one state; SingularMassMatrixError where M is singular."""
        M, h = self.mass_and_force(t, y, yd, u)
        try:
            return np.linalg.solve(M, h)
        except np.linalg.LinAlgError:
            raise SingularMassMatrixError(self._where("mass matrix is singular", t, y)) from None

    def check_state(self, t, y, yd, u=None) -> None:
        """Raise a clear error if M is not positive definite or the state is not finite."""
        if not (np.all(np.isfinite(y)) and np.all(np.isfinite(yd))):
            raise ParameterError(self._where("state is not finite", t, y))
        M, h = self.mass_and_force(t, y, yd, u)
        if not np.all(np.isfinite(M)) or not np.all(np.isfinite(h)):
            raise ModelError(self._where("equations of motion are not finite", t, y))
        try:
            np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            if not self.m:
                raise SingularMassMatrixError(self._where(
                    "mass matrix is not positive definite (a singular configuration, or a "
                    "coordinate that moves no mass)", t, y)) from None
            # with constraints M may be singular where they fix the motions without mass
            _, why = mass_problem(self, y)
            if why:
                raise SingularMassMatrixError(self._where(why.replace("the ", "", 1), t, y)) from None

    def _where(self, what, t, y):
        state = ", ".join(f"{n}={v:.6g}" for n, v in zip(self.coordinate_names, y))
        return f"{self.system.name}: {what} at t={t:.6g} ({state})"

    # ---------------------------------------------------------------- time series
    def _series_args(self, t, Y, YD, U=None):
        t = np.asarray(t, dtype=float)
        U = self.u[:, None] * np.ones_like(t) if U is None else U
        return t, Y, YD, self.prm, U, self.time_parameters(t)

    def accelerations_series(self, t, Y, YD, U=None):
        """y'' for a whole time series: Y and YD have shape (f, n); result (f, n)."""
        args = self._series_args(t, Y, YD, U)
        n = len(args[0])
        out = [np.broadcast_to(np.asarray(v, dtype=float), (n,)) for v in self._dyn(True)(*args)]
        f = self.f
        M = np.stack(out[: f * f]).reshape(f, f, n).transpose(2, 0, 1)
        h = np.stack(out[f * f:]).T
        return np.linalg.solve(M, h[..., None])[..., 0].T

    def energy_series(self, t, Y, YD, U=None):
        """(kinetic, potential) energy over a time series."""
        e = self.eqs
        fn = self._fn("energy", lambda: [e.kinetic_energy, e.potential_energy], True)
        args = self._series_args(t, Y, YD, U)
        n = len(args[0])
        T, V = (np.broadcast_to(np.asarray(v, dtype=float), (n,)) for v in fn(*args))
        return np.array(T), np.array(V)

    def pose_series(self, names, t, Y, U=None) -> tuple[np.ndarray, np.ndarray]:
        """Origins r_K (n, k, 3) and rotations S_K (n, k, 3, 3) of the frames ``names`` over a
        time series (Y of shape (f, n); ISYS components, seed 002 eq. 3), evaluated from the
        symbolic kinematics with the bound parameters, the time parameters at each t and the
        inputs ``U`` (f_u, n; default the current inputs).  Positions and rotations depend on
        the configuration only, so no velocities or accelerations are needed."""
        kin = self.eqs.kinematics
        every = list(kin.placed)
        index = [every.index(kin[n].name) for n in names]  # a ModelError names an unknown frame

        def outputs():  # one function for all frames of the model, compiled once
            return [x for n in every for x in (*kin[n].r, *kin[n].S)]

        vals = self.configuration_series("poses", outputs, t, Y, U)
        n = vals.shape[1]
        vals = np.moveaxis(vals.reshape(len(every), 12, n), -1, 0)[:, index]
        return vals[:, :, :3].copy(), vals[:, :, 3:].reshape(n, len(index), 3, 3)

    def configuration_series(self, key, outputs_fn, t, Y, U=None) -> np.ndarray:
        """Expressions of the configuration (coordinates, time, time parameters, inputs and
        constants; ``outputs_fn()`` lists them, compiled once under ``key``) over a time
        series: shape (expressions, n)."""
        fn = self._fn(key, outputs_fn, True)
        Y = np.asarray(Y, dtype=float).reshape(self.f, -1)
        args = self._series_args(t, Y, np.zeros_like(Y), U)
        n = len(args[0])
        return np.stack([np.broadcast_to(np.asarray(v, dtype=float), (n,)) for v in fn(*args)])

    def frame_series(self, name, t, Y, YD, YDD, U=None) -> dict[str, np.ndarray]:
        """Position, rotation, velocity, angular velocity, acceleration and angular
        acceleration of frame ``name`` over a time series (ISYS components)."""
        K = self.eqs.kinematics[name]

        def outputs():
            return [x for fld in _FRAME_FIELDS for x in getattr(K, fld)]

        fn = self._fn(f"frame:{name}", outputs, True)
        args = self._series_args(t, Y, YD, U)
        n = len(args[0])
        vals = iter([np.broadcast_to(np.asarray(v, dtype=float), (n,)) for v in fn(*args)])
        f = self.f
        sizes = {"r": (3,), "S": (3, 3), "v": (3,), "omega": (3,), "JT": (3, f), "JR": (3, f),
                 "abar": (3,), "alphabar": (3,)}
        got = {}
        for fld in _FRAME_FIELDS:
            cnt = int(np.prod(sizes[fld]))
            arr = np.stack([next(vals) for _ in range(cnt)]) if cnt else np.zeros((0, n))
            got[fld] = np.moveaxis(arr.reshape(*sizes[fld], n), -1, 0)
        a = got["abar"] + np.einsum("nij,jn->ni", got["JT"], YDD)
        alpha = got["alphabar"] + np.einsum("nij,jn->ni", got["JR"], YDD)
        return {"position": got["r"], "rotation": got["S"], "velocity": got["v"],
                "angular_velocity": got["omega"], "acceleration": a,
                "angular_acceleration": alpha}
