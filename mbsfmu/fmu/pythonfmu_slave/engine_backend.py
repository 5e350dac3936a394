"""The C engine as the pythonfmu FMU's integrator (:class:`mbsfmu.engine.extension.Engine`: the
instance layer of ``mbs_instance.h`` that the native FMU's ``fmi2_glue.c`` runs as well), so both
FMU kinds take the same steps and give the same values at every communication point."""

import base64
import math

from mbsfmu.core.constants import MAX_STEPS_PER_CALL, METHOD_KINDS
from mbsfmu.engine.extension import Engine
from mbsfmu.equations.derive import derive
from mbsfmu.equations.numeric_model import NumericModel

from .backend import METHOD_NAMES, Refused

ENGINE_MAX_STEPS = MAX_STEPS_PER_CALL  # internal steps one fmi2DoStep may take on the engine


class EngineBackend:
    """The C engine, as the native FMU runs it."""

    max_steps = ENGINE_MAX_STEPS

    def __init__(self, system, formulation, names, warn, method):
        self.engine = Engine(system, formulation, method=method)  # also the value of 'method'
        if self.engine.names != list(names):
            raise RuntimeError(f"the engine has the variables {self.engine.names}, the FMU {list(names)}")
        self.vr_method = self.engine.vr["method"]
        self.method = METHOD_KINDS[method]  # kept here: reading it could compute outputs
        self.work = {}  # counters of the methods the run switched away from
        self.instance = self.engine.instance
        self.error = self.engine.module.EngineError
        self.name = f"engine {self.engine.module.__name__}"  # the build: its saved states only
        self.warn = warn
        self.stiffness_said = False
        self.numeric = None
        if any(p.functions is not None for p in system.time_parameters.values()):
            # time parameters given as Python functions: the engine calls them (expressions among
            # them depend on the parameters, kept in step with the engine's in _sync)
            self.numeric = NumericModel(derive(system), check=False)
            self.instance.set_functions(None, lambda t: self.numeric._tp_at(t))

    def _sync(self, vrs=None, values=None):
        """The parameter values of the time-parameter functions: those just set, or all (read
        only where the engine has its outputs, so that reading computes nothing)."""
        if self.numeric is None:
            return
        names, constants = self.engine.names, self.numeric.constant_names
        if vrs is None:
            params = dict(zip(constants, self.engine.get(constants).tolist()))
        else:
            params = {names[r]: float(v) for r, v in zip(vrs, values) if names[r] in self.numeric.params}
        if params:
            self.numeric.set_params({**self.numeric.params, **params}, check=False)

    def get(self, vrs):
        try:
            return self.instance.get(vrs).tolist()
        except self.error as exc:
            raise Refused(str(exc)) from None

    def set(self, vrs, values):
        method = next((int(v) for r, v in zip(reversed(vrs), reversed(values)) if r == self.vr_method),
                      self.method)
        # a switch of the method: its counters are readable only while it is the current one
        before = self._counters() if method != self.method else None
        try:
            self.instance.set(vrs, values)
        except self.error as exc:
            raise Refused(str(exc)) from None
        if before is not None:
            self.work[METHOD_NAMES[self.method]] = before
            self.method = method
        self._sync(vrs, values)

    def _counters(self):
        """The current method's counters since the start (the engine's statistics are those of the
        current method, its Jacobians and decompositions those of the stiff one)."""
        st = self.instance.statistics()
        stiff = self.method == METHOD_KINDS["stiff"]
        return {"accepted": st["naccept"], "rejected": st["nreject"], "nfev": st["nfev"],
                "njev": st["njev"] if stiff else 0, "ndec": st["ndec"] if stiff else 0}

    def statistics(self):
        current = METHOD_NAMES[self.method]
        return {**self.work, current: self._counters()}, current

    def set_time(self, t0, t_stop):
        self.instance.set_time(t0, math.inf if t_stop is None else t_stop)

    def start(self, fn):
        try:
            warning = self.instance.start(None)
        except self.error as exc:
            raise Refused(str(exc)) from None
        self.work = {}
        self.stiffness_said = False
        if warning:
            self.warn(fn, warning)

    def do_step(self, fn, t, h):
        try:
            self.instance.do_step(t, h)
        except self.error as exc:
            raise Refused(str(exc)) from None
        if not self.stiffness_said:  # the engine's stiffness diagnostic, said once per run
            text = self.instance.statistics()["stiffness"]
            if text:
                self.stiffness_said = True
                self.warn(fn, text)

    @property
    def time(self):
        return self.instance.time

    def save(self):
        return base64.b64encode(self.instance.save()).decode("ascii")

    def restore(self, data, mode, time):
        try:
            self.instance.restore(base64.b64decode(data))
        except self.error as exc:
            raise Refused(str(exc)) from None
        # a restored state has its outputs: reading computes nothing.  The counters of a method
        # other than the restored one are not readable: statistics name the restored one only
        self.method = int(self.instance.get([self.vr_method])[0])
        self.work = {}
        self._sync()
