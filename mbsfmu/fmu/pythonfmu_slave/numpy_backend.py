"""The pythonfmu FMU's integrator where the C engine cannot run (no C compiler, or a formulation
the engine does not have): the numpy formulations with the Python RKSTAB of
:mod:`mbsfmu.reference.formulations`, or scipy's Radau or DOP853 with the formulation's projection after
every step, restarted at every fmi2DoStep."""

import math
import warnings

import numpy as np

from mbsfmu.core.solver_settings import effective_atol
from mbsfmu.equations.derive import derive
from mbsfmu.model.initial_values import condition_targets
from mbsfmu.reference.consistent_initialization import consistent_state
from mbsfmu.reference.constraint_rank import check_rank
from mbsfmu.reference.formulations import make_formulation
from mbsfmu.reference.integrators import integrate, integrate_projected

from .backend import METHOD_NAMES, NUMPY, STEPPING, Refused
from .text import num

NUMPY_MAX_STEPS = 1_000_000  # internal steps one fmi2DoStep may take on the numpy path
#: the numpy path's scipy method for the engine's methods other than rkstab (projected after each step)
SCIPY_FALLBACK = {"stiff": "Radau", "dop853": "DOP853"}


class NumpyBackend:
    """The numpy formulations with the Python RKSTAB, or scipy's Radau with the formulation's
    projection after every step for 'stiff', restarted at every do-step (where the C engine cannot
    be built).  The values live in a dict by name."""

    name = NUMPY
    max_steps = NUMPY_MAX_STEPS

    def __init__(self, slave):
        self.slave = slave
        self.system = slave.system
        self.names = [v.name for v in slave.instance_vars]
        self.values = {v.name: (0.0 if v.start is None else float(v.start)) for v in slave.instance_vars}
        self.numeric = self.form = self.x = None
        self.time = 0.0
        self.work = {}  # counters per method since the start (summed over the do-steps)

    def _of(self, *kinds):
        return {v.name: self.values[v.name] for v in self.slave.instance_vars if v.kind in kinds}

    def get(self, vrs):
        return [self.values[self.names[vr]] for vr in vrs]

    def set(self, vrs, values):
        changes = {self.names[vr]: float(v) for vr, v in zip(vrs, values)}
        if self.numeric is not None:  # tunable parameters while stepping: the model checks them
            params = {n: changes.get(n, v) for n, v in self._of("constant").items()}
            if params != self.numeric.params:
                try:
                    self.numeric.set_params(params)
                except Exception as exc:
                    raise Refused(str(exc)) from None
        self.values.update(changes)

    def set_time(self, t0, t_stop):
        self.time = t0

    def _build(self, params, inputs):
        numeric = derive(self.system).numeric(params)
        numeric.set_inputs(inputs)
        return numeric, make_formulation(self.slave.FORMULATION if numeric.m else None, numeric)

    def _outputs(self, numeric, form, t, x):
        """The output values at (t, x): coordinates, rates, constraint residual, user outputs."""
        f = numeric.f
        out = dict(zip(self._of("coordinate"), map(float, x[:f])))
        out.update(zip(self._of("velocity"), map(float, x[f:])))
        if numeric.m:  # max |c|, and max |A y' + a| of nonholonomic rows
            c, C, b1 = numeric.constraint_parts(t, x[:f])
            r = np.concatenate((c, C[len(c):] @ x[f:] + b1[len(c):]))
            out["constraint_residual"] = float(np.max(np.abs(r))) if len(r) else 0.0
        outputs = list(self.system.outputs.values())
        if outputs:
            expr = iter(numeric.expression_outputs(t, x[:f], x[f:], form.inputs(t)))
            lam = None
            if any(o.constraint for o in outputs):
                lam = dict(zip(self.system.constraint_names, form.multipliers(t, x)))
            for o in outputs:
                out[o.name] = float(lam[o.constraint] if o.constraint else next(expr))
        bad = [n for n, v in out.items() if not math.isfinite(v)]
        if bad:
            raise FloatingPointError(f"output {bad[0]!r} is {out[bad[0]]!r} at t={num(t)}")
        return out

    def start(self, fn):
        t = self.time
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
                warnings.simplefilter("always")
                numeric, form = self._build(self._of("constant"), self._of("input"))
                x0 = np.array(list(self._of("coordinate").values()) + list(self._of("velocity").values()))
                if numeric.m:
                    given = [v.name for v in self.slave.instance_vars if v.kind in ("coordinate", "velocity")
                             and self.values[v.name] != v.start]
                    x0 = consistent_state(numeric, x0, t0=t, given=given, targets=condition_targets(
                        self.system, self._of("initial_condition")))
                    check_rank(form, t, x0[:numeric.f])
                numeric.check_state(t, x0[:numeric.f], x0[numeric.f:], form.inputs(t))
                outputs = self._outputs(numeric, form, t, x0)
        finally:
            self.slave._warn_all(fn, caught)
        self.numeric, self.form, self.x = numeric, form, x0
        self.values.update(outputs)
        self.work = {}

    def _integrate(self, method, t1, project, hmax):
        """One do-step's integration from (time, x) to t1: the solution and its counters."""
        rtol = self.values["solver_rtol"]
        atol = effective_atol(self.values["solver_atol"], rtol, bool(self.numeric.m))
        max_step = hmax if hmax > 0 else math.inf
        if method in SCIPY_FALLBACK:
            sol = integrate_projected(self.form, self.x, (self.time, t1), SCIPY_FALLBACK[method], [t1],
                                      project=project, rtol=rtol, atol=atol, max_step=max_step,
                                      max_steps=NUMPY_MAX_STEPS)
            # scipy's methods count neither their rejected steps nor Radau's decompositions
            stiff = method == "stiff"
            return sol, {"accepted": sol.naccept, "rejected": None, "nfev": sol.nfev,
                         "njev": sol.extra.get("njev", 0) if stiff else 0, "ndec": None if stiff else 0}
        sol = integrate(self.form, self.x, (self.time, t1), project=project, rtol=rtol, atol=atol,
                        t_eval=[t1], max_step=max_step, max_steps=NUMPY_MAX_STEPS)
        return sol, {"accepted": sol.naccept, "rejected": sol.nreject, "nfev": sol.nfev, "njev": 0, "ndec": 0}

    def statistics(self):
        return dict(self.work), METHOD_NAMES[int(self.values["method"])]

    def do_step(self, fn, t0, h):
        t1 = t0 + h
        hmax = self.values["max_internal_step"]
        method = METHOD_NAMES[int(self.values["method"])]
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
                warnings.simplefilter("always")
                params = self._of("constant")
                if params != self.numeric.params:
                    self.numeric.set_params(params)
                self.numeric.set_inputs(self._of("input"))
                project = self.form.project if self.form.projects else None
                sol, counts = self._integrate(method, t1, project, hmax)
                x = np.array(sol.x[:, -1], dtype=float)
                if not np.all(np.isfinite(x)):
                    raise FloatingPointError(f"the state became non-finite at t={num(t1)}")
                outputs = self._outputs(self.numeric, self.form, t1, x)
        except Exception as exc:
            held = "".join(f"; input {n} = {num(v)}" for n, v in self._of("input").items())
            raise Refused(f"integration from t={num(self.time)} to {num(t1)} failed: "
                           f"{type(exc).__name__}: {exc}{held}") from None
        finally:
            self.slave._warn_all(fn, caught)
        self.x = x
        self.time = t1
        self.values.update(outputs)
        total = self.work.setdefault(method, dict.fromkeys(counts, 0))
        for k, v in counts.items():
            total[k] = None if v is None else total[k] + v

    def save(self):
        return {"values": dict(self.values), "x": None if self.x is None else [float(v) for v in self.x]}

    def restore(self, data, mode, time):
        values = {n: float(data["values"][n]) for n in self.names}
        for var in self.slave.instance_vars:
            v = values[var.name]
            if var.kind in ("constant", "solver", "input", "initial_condition"):
                why = self.slave._value_problem(var, v)
            else:
                why = None if math.isfinite(v) else "not finite"
            if why:
                raise Refused(f"{self.slave._label(var)} = {num(v)}: {why}")
        numeric, form = self.numeric, self.form
        if mode in STEPPING:
            params = {v.name: values[v.name] for v in self.slave.instance_vars if v.kind == "constant"}
            try:
                if numeric is None:
                    inputs = {v.name: values[v.name] for v in self.slave.instance_vars if v.kind == "input"}
                    numeric, form = self._build(params, inputs)
                elif params != numeric.params:
                    numeric.set_params(params)
            except Exception as exc:
                raise Refused(f"{type(exc).__name__}: {exc}") from None
        else:
            numeric = form = None
        self.numeric, self.form = numeric, form
        self.values = values
        self.x = None if data["x"] is None else np.array(data["x"], dtype=float)
        self.time = float(time)
        self.work = {}  # not part of the state: statistics count on from the restore
