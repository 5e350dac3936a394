"""The variables of the pythonfmu FMUs: registered with pythonfmu in the value-reference order of
:func:`mbsfmu.codegen.fmu_variables.fmu_variables`, and read and set by value reference with every
value checked first (type, causality, mode, finite, declared range, the solver settings' ranges);
a refused fmi2Set call sets none of its values.  A deprecated name (``solver``, the old name of
``method``) reads and sets the variable it names, and setting it logs a deprecation warning."""

import math

from pythonfmu import Fmi2Causality, Fmi2Initial, Fmi2Variability, Integer, Real

from mbsfmu.core.errors import DEPRECATED, ParameterError
from mbsfmu.core.solver_settings import DEPRECATED_FMU_NAMES, check_setting

from .backend import Refused
from .text import a_or_an, num, vr_of

OUTPUTS = ("residual", "output", "reaction")  # kinds of the calculated outputs: never set


class Variables:
    """The variable calls of the slave (a part of :class:`~.slave.MbsfmuSlave`)."""

    def _register_variables(self):
        """Register every FMU variable with pythonfmu, in value-reference order, with the getters
        and setters below (pythonfmu writes modelDescription.xml from them)."""
        for v in self.fmu_vars:
            integer = v.type == "Integer"
            get, put = (self.get_integer, self.set_integer) if integer else (self.get_real, self.set_real)
            self.register_variable((Integer if integer else Real)(
                v.name, start=v.start, description=v.description,
                causality=Fmi2Causality[v.causality], variability=Fmi2Variability[v.variability],
                initial=Fmi2Initial[v.initial] if v.initial else None,
                getter=lambda r=v.value_reference, get=get: get([r])[0],
                setter=lambda x, r=v.value_reference, put=put: put([r], [x])))

    @staticmethod
    def _label(var):
        return f"{var.name!r} (value reference {var.value_reference})"

    def _target(self, var):
        """The variable ``var`` reads and sets: itself, or for a deprecated name the variable it names."""
        if var.kind != "deprecated":
            return var
        return next(v for v in self.fmu_vars if v.name == DEPRECATED_FMU_NAMES[var.name])

    def _deprecated_set(self, fn, var):
        """The FMU's deprecation warning for a set of the deprecated name ``var`` (once per instance)."""
        if var.name not in self.deprecated_said:
            self.deprecated_said.add(var.name)
            new = self._target(var)
            self._warn(fn, f"the variable {self._label(var)} {DEPRECATED}: use {self._label(new)}, "
                       "which it sets")

    def _value_problem(self, var, value):
        """Why ``value`` is no value for the parameter or input ``var`` (None if it is one)."""
        if var.kind == "solver":
            try:
                check_setting(var.name, value)
            except ParameterError as exc:
                return str(exc)
            return None
        if not math.isfinite(value):
            return "not a finite number"
        if not var.min <= value <= var.max:
            return f"outside its declared range [{num(var.min)}, {num(var.max)}]"
        return None

    def _set_problem(self, var, value):
        """Why fmi2SetReal may not give ``var`` the value ``value`` now (None if it may)."""
        if var.kind in OUTPUTS:
            return "it is a calculated output of the FMU and can never be set"
        if var.kind in ("coordinate", "velocity") and self.mode == "step":
            return ("it is a state of the integrator inside the FMU: it can be set (as a start value) "
                    "only before fmi2ExitInitializationMode")
        if var.kind == "constant" and var.variability == "fixed" and self.mode == "step":
            return ("it is a fixed parameter (the constraints depend on it): it can be set only before "
                    "fmi2ExitInitializationMode")
        if var.kind == "initial_condition" and self.mode == "step":
            return ("it is a named initial condition (it sets the start): it can be set only before "
                    "fmi2ExitInitializationMode")
        return self._value_problem(var, value)

    def _get(self, fn, type_name, vrs):
        """The values of the value references ``vrs`` of FMI type ``type_name`` (NaN, or 0 for
        Integers, where refused)."""
        cast, missing = (int, 0) if type_name == "Integer" else (float, math.nan)
        try:
            refs = [vr_of(vr) for vr in vrs]
            unknown = [r for r in refs if r not in self.by_vr]
            wrong = next((self.by_vr[r] for r in refs if r in self.by_vr and self.by_vr[r].type != type_name),
                         None)
            if wrong is not None:
                self._fail(fn, f"{self._label(wrong)} is {a_or_an(wrong.type)} variable: use "
                           f"fmi2Get{wrong.type}")
                return [missing] * len(vrs)
            values = iter(self.backend.get([self._target(self.by_vr[r]).value_reference
                                            for r in refs if r in self.by_vr]))
            out = [missing if r in unknown else cast(next(values)) for r in refs]
            if unknown:
                self._fail(fn, f"unknown value reference {unknown[0]} (of {len(unknown)} "
                           f"unknown; the model has value references 0 to {len(self.fmu_vars) - 1})")
            return out
        except Refused as exc:
            self._fail(fn, str(exc))
        except Exception as exc:
            self._internal(fn, exc)
        return [missing] * len(vrs)

    def _set(self, fn, type_name, vrs, values):
        """Set the value references ``vrs`` of FMI type ``type_name``: all of them or none."""
        try:
            if self.mode not in ("instantiated", "initialization", "step"):
                return self._wrong_mode(fn, ("instantiated", "initialization", "step"))
            refs, given = [], []
            for vr, value in zip(vrs, values):
                var = self.by_vr.get(vr_of(vr))
                if var is None:
                    return self._fail(fn, f"unknown value reference {vr_of(vr)} (value {num(value)}; the "
                                      f"model has value references 0 to {len(self.fmu_vars) - 1}); "
                                      "nothing was changed")
                if var.type != type_name:
                    return self._fail(fn, f"{self._label(var)} is {a_or_an(var.type)} variable: use "
                                      f"fmi2Set{var.type}; nothing was changed")
                number = int(value) if type_name == "Integer" else float(value)
                problem = self._set_problem(self._target(var), number)
                if problem:
                    shown = number if type_name == "Integer" else num(value)
                    return self._fail(fn, f"{self._label(var)} = {shown} refused: {problem}; "
                                      "nothing was changed")
                refs.append(self._target(var).value_reference)
                given.append(float(number))
            for vr in vrs:
                if self.by_vr[vr_of(vr)].kind == "deprecated":
                    self._deprecated_set(fn, self.by_vr[vr_of(vr)])
            if refs:
                self.backend.set(refs, given)
                self.hmax = next((v for r, v in zip(reversed(refs), reversed(given)) if r == self.vr_hmax),
                                 self.hmax)
                self.rtol_set |= self.vr_rtol in refs
        except Refused as exc:  # the model's rules for the parameter values together
            text = ", ".join(f"{self.fmu_vars[r].name} = {num(v)}" for r, v in zip(refs, given))
            self._fail(fn, f"{text} refused: {exc}; nothing was changed")
        except Exception as exc:
            self._internal(fn, exc)

    def get_real(self, vrs):
        return self._get("fmi2GetReal", "Real", vrs)

    def set_real(self, vrs, values):
        self._set("fmi2SetReal", "Real", vrs, values)

    def get_integer(self, vrs):
        """The Integer variable: the method 'method' (and its deprecated name 'solver')."""
        return self._get("fmi2GetInteger", "Integer", vrs)

    def set_integer(self, vrs, values):
        self._set("fmi2SetInteger", "Integer", vrs, values)

    def _no_variables(self, fn, type_name, vrs):
        if len(vrs):
            self._fail(fn, f"unknown value reference {vr_of(vrs[0])}: the model has no {type_name} "
                       "variables (all are Real but the Integer 'method')")

    def get_boolean(self, vrs):
        self._no_variables("fmi2GetBoolean", "Boolean", vrs)
        return [False] * len(vrs)

    def get_string(self, vrs):
        self._no_variables("fmi2GetString", "String", vrs)
        return [""] * len(vrs)

    def set_boolean(self, vrs, values):
        self._no_variables("fmi2SetBoolean", "Boolean", vrs)

    def set_string(self, vrs, values):
        self._no_variables("fmi2SetString", "String", vrs)

    def _held_inputs(self):
        inputs = [v for v in self.fmu_vars if v.kind == "input"]
        values = self.backend.get([v.value_reference for v in inputs])
        return "".join(f"; input {v.name} = {num(x)}" for v, x in zip(inputs, values))
