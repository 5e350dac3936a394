"""The Python face of the C engine: one compiled extension module per model.

:func:`engine_module` builds (or takes from the compile cache) the extension of a model: the
engine's C files, the model's generated files (:func:`mbsfmu.codegen.c_model.model_sources`)
and the binding ``mbs_python.c``.  :class:`Engine` wraps one instance of it by names instead of
value references::

    eng = Engine(system, formulation="qr")
    eng.set({"r": 0.2, "solver_rtol": 1e-10})
    eng.start()
    records = eng.run(grid)           # one call, no Python per step

The instance API and its semantics are those of ``mbs_instance.h``; the native FMU runs the
same C code through ``fmi2_glue.c``, so both take the same steps.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np

from ..codegen.c_model import MODEL_FILES, MODEL_HEADER, model_sources
from ..codegen.compile import compile_engine, precompile_object
from ..core import constants
from ..core.checks import check_fixed_names
from ..core.errors import MbsError, ParameterError
from ..core.formulation_choice import check_nonholonomic, check_options
from ..equations.derive import derive
from ..equations.mass_regularity import check_regular_mass
from ..runtime import ENGINE_HEADERS, ENGINE_SOURCES, SENSITIVITY_HEADERS, SENSITIVITY_SOURCES, source

#: formulations the engine runs (all of mbsfmu.reference.formulations)
ENGINE_FORMULATIONS = tuple(constants.FORMULATION_KINDS)

_LOADED: dict[str, object] = {}


def _load(module: str, path):
    if module in _LOADED:
        return _LOADED[module]
    spec = importlib.util.spec_from_file_location(module, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules.setdefault(module, mod)
    _LOADED[module] = mod
    return mod


def engine_module(system, unset_constants: bool = False, sensitivities: bool = False):
    """The compiled engine extension of ``system`` (built once per model and cached).

    Besides ``Instance`` it holds ``RHS``, the right-hand side of an instance as a fast callable
    (:class:`mbsfmu.engine.compiled_rhs.CompiledRHS` is one), and ``model_source``, the generated
    files compiled into it (``model.c``, ``model_aba.c``, ``model_tree.c``).

    Every constant needs a value (the start values of the instance; ParameterError otherwise)
    unless ``unset_constants``: for callers that hand every parameter value in at each call
    (CompiledRHS), a constant without one starts at 0.  ``sensitivities``: the build that also
    holds the model's sensitivity functions (:mod:`mbsfmu.codegen.c_sensitivity`), a module of
    its own, built on the first request."""
    if not unset_constants:
        for c in system.constants_.values():
            if c.value is None:
                raise ParameterError(f"constant {c.name!r} has no value; the engine needs a start "
                                     "value for every parameter")

    def build(_eqs):
        files = {name: source(name) for name in (*ENGINE_SOURCES, *ENGINE_HEADERS, *SENSITIVITY_SOURCES,
                                                 *SENSITIVITY_HEADERS, "mbs_python.c")}
        # model_aba.c includes no model header: compiled (and cached) by its text, started as
        # soon as it is printed, while model.c is generated
        model = model_sources(system, "qr", tag="python", unset_constants=True, on_file=precompile_object,
                              sensitivities=sensitivities)
        files.update((name, model[name]) for name in (*MODEL_FILES, MODEL_HEADER))
        compiled = (*ENGINE_SOURCES, *SENSITIVITY_SOURCES, *MODEL_FILES, "mbs_python.c")
        module, path = compile_engine(files, compiled,
                                      f"mbs_engine_{system.name}" + "_sens" * sensitivities,
                                      model_files=("model.c", MODEL_HEADER))
        mod = _load(module, path)
        # the generated part, for readers (CompiledRHS.source)
        mod.model_source = "\n".join(model[name] for name in MODEL_FILES)
        return mod

    return derive(system).derived("engine_module_sens" if sensitivities else "engine_module", build)


class EngineError(MbsError, RuntimeError):
    """The engine refused a call (its message says what and where).  A refused start carries
    ``failure``, why (a key of :data:`mbsfmu.core.constants.START_FAILURES`: 'inconsistent',
    'redundant', 'singular_mass', ...), else None."""

    failure = None


#: start failure code -> its name
_START_FAILURES = {code: name for name, code in constants.START_FAILURES.items()}


class Engine:
    """One instance of a model on the C engine, addressed by variable names."""

    def __init__(self, system, formulation: str | None = None, options: dict | None = None,
                 aba: bool = True, method: str = "rkstab", sensitivities: bool = False):
        self.system = system
        self.module = engine_module(system, sensitivities=sensitivities)
        self.sizes = self.module.sizes()
        variables = self.module.variables()
        self.names = [n for n, _ in variables]
        self.kinds = np.array([k for _, k in variables])
        self.vr = {n: i for i, n in enumerate(self.names)}
        self.instance = self.module.Instance()
        self.formulation = "minimal" if not self.sizes["m"] else (formulation or "qr")
        if self.formulation not in ENGINE_FORMULATIONS:
            raise ParameterError(f"unknown formulation {self.formulation!r}; choose one of "
                                 f"{', '.join(ENGINE_FORMULATIONS)}")
        if self.sizes["m"]:
            check_nonholonomic(system, self.formulation)
            check_regular_mass(derive(system), self.formulation)
        opts = self._engine_options(check_options(self.formulation, options, bool(self.sizes["m"])))
        if method not in constants.METHOD_KINDS:
            raise ParameterError(f"unknown engine method {method!r}; choose one of "
                                 f"{', '.join(constants.METHOD_KINDS)}")
        self.method = method
        opts["method"] = constants.METHOD_KINDS[method]
        try:
            self._call(self.instance.configure, constants.FORMULATION_KINDS[self.formulation], aba=aba,
                       **opts)
        except TypeError as exc:
            raise ParameterError(f"formulation {self.formulation!r}: bad option ({exc})") from None

    def _engine_options(self, opts: dict) -> dict:
        """The formulation options as the engine takes them (names of mbs_form's fields)."""
        if self.formulation == "baumgarte":
            opts.setdefault("alpha", constants.DEFAULTS["alpha"])
            opts.setdefault("beta", constants.DEFAULTS["beta"])
        if "weighting" in opts:  # checked by check_options
            opts["weighting"] = constants.WEIGHTINGS[opts["weighting"]]
        if "independent" in opts:
            independent = opts.pop("independent")
            if independent is not None:
                independent = [independent] if isinstance(independent, str) else list(independent)
                coords = self.names[:self.sizes["f"]]
                bad = [n for n in independent if n not in coords]
                if bad:
                    raise ParameterError(f"partition: unknown independent coordinate(s) {bad} "
                                         f"(coordinates: {', '.join(coords)})")
                opts["dependent"] = bytes(int(c not in independent) for c in coords)
        return opts

    def _call(self, fn, *args, **kw):
        try:
            return fn(*args, **kw)
        except self.module.EngineError as exc:
            raise EngineError(f"{self.system.name}: {exc}") from None

    def refs(self, names) -> np.ndarray:
        """Value references of ``names`` (ParameterError naming an unknown one)."""
        try:
            return np.array([self.vr[n] for n in names], dtype=np.uint32)
        except KeyError as exc:
            raise ParameterError(f"{self.system.name}: no variable {exc.args[0]!r}") from None

    def set(self, values: dict) -> None:
        """Set variables by name (checked by the engine first; a refused call changes nothing)."""
        if values:
            self._call(self.instance.set, self.refs(values), np.array(list(values.values()), float))

    def get(self, names) -> np.ndarray:
        return self._call(self.instance.get, self.refs(names))

    def set_functions(self, inputs=None, time_parameters=None) -> None:
        """Inputs and time parameters as Python functions of t (called at every right-hand side)."""
        self.instance.set_functions(inputs, time_parameters)

    def start(self, t0: float = 0.0, t_stop: float = np.inf, hold=None) -> str | None:
        """Consistent start (None, or the warning text if given values had to move).  ``hold``:
        names of the coordinates that keep their values (default: the FMU's rule)."""
        self._call(self.instance.set_time, float(t0), float(t_stop))
        mask = None
        if hold is not None:
            coords = self.names[:self.sizes["f"]]
            hold = [hold] if isinstance(hold, str) else list(hold)
            check_fixed_names(coords, hold)
            mask = bytes(int(c in hold) for c in coords)
        try:
            return self._call(self.instance.start, mask)
        except EngineError as exc:
            exc.failure = _START_FAILURES.get(self.instance.start_failure())
            raise

    def do_step(self, t: float, h: float) -> None:
        self._call(self.instance.do_step, float(t), float(h))

    def run(self, grid, with_lambda: bool = False, progress=None, every: float = 0.1, record=()):
        """Do-steps over ``grid`` in one call: (records, reached, status, message, code) as the
        binding returns them; records[k] = values of the value references [0, first constant)
        at grid[k], then what ``record`` names (keys of :data:`mbsfmu.core.constants.RECORD`,
        in that order; ``with_lambda`` is ``record=('multipliers',)``), each computed by the
        engine at the state of that point (:meth:`recorded` splits a row)."""
        flags = self._record_flags(("multipliers",) * with_lambda + tuple(record))
        return self.instance.run(np.ascontiguousarray(grid, dtype=float), record=flags,
                                 progress=progress, every=every)

    def run_sensitivities(self, grid, what, index, progress=None, every: float = 0.1, record=(),
                          error_control: str = "all", integrals=()):
        """:meth:`run` with the forward sensitivities of the parameter columns ``(what[j],
        index[j])`` (mbs_sensitivity.h; the engine must be built with ``sensitivities``):
        (records, sensitivities, integrals, reached, status, message, code, stats) with
        sensitivities[k, j] = the signals' derivatives by p_j at grid[k] ([y, y', lambda,
        expression outputs], :meth:`signal_index`), integrals[k, 0] the integrals from the start of
        the signals ``integrals`` (indices of that layout), integrals[k, 1 + j] their derivatives by
        p_j, and stats = (nfev, naccept, nreject, nproj) of the augmented integration.
        ``error_control``: 'all' (the error test measures state and sensitivities) or 'state'
        (the state alone: the plain run's steps)."""
        if error_control not in constants.SENSITIVITY_ERROR_CONTROL:
            choices = ", ".join(constants.SENSITIVITY_ERROR_CONTROL)
            raise ParameterError(f"error_control must be one of {choices}, got {error_control!r}")
        flags = self._record_flags(tuple(record))
        out, sens, quad, stats = self.instance.run_sensitivities(
            np.ascontiguousarray(grid, dtype=float), np.asarray(what, dtype=np.intc),
            np.asarray(index, dtype=np.intc), np.asarray(integrals, dtype=np.intc), record=flags,
            progress=progress, every=every, error_control=constants.SENSITIVITY_ERROR_CONTROL[error_control])
        return (out[0], sens, quad, *out[1:], stats)

    def run_adjoint(self, what, index, kinds, signals, t_end: float, points=None, progress=None,
                    every: float = 0.1):
        """From the started instance to ``t_end``, the values of the metrics ``(kinds[i],
        signals[i])`` (a key of :data:`mbsfmu.core.constants.ADJOINT_METRICS`, a signal index)
        and their gradients by the parameter columns by the adjoint method (mbs_adj_run):
        (values, gradient (metrics x columns), status, message, code, stats) with stats the
        forward's and the backward's (nfev, naccept, nreject, nproj).  ``points``: per metric
        None or the (k, 3) array of (time, data, weight) of a 'least_squares' metric."""
        k = [constants.ADJOINT_METRICS[x] for x in kinds]
        points = points or [None] * len(k)
        npts = [0 if p is None else len(p) for p in points]
        pts = [np.asarray(p, float).reshape(-1) for p in points if p is not None]
        pts = np.concatenate(pts) if pts else np.zeros(0)
        return self.instance.run_adjoint(np.asarray(what, dtype=np.intc), np.asarray(index, dtype=np.intc),
                                         np.asarray(k, dtype=np.intc), np.asarray(signals, dtype=np.intc),
                                         float(t_end), npts=np.asarray(npts, dtype=np.intc),
                                         pts=np.ascontiguousarray(pts), progress=progress, every=every)

    def _record_flags(self, record) -> int:
        bad = [r for r in record if r not in constants.RECORD]
        if bad:
            raise ParameterError(f"unknown record {bad} (it can record: {', '.join(constants.RECORD)})")
        return sum(constants.RECORD[r] for r in set(record))

    def recorded(self, rows, record) -> dict[str, np.ndarray]:
        """The columns of ``rows`` (of :meth:`run` with ``record``) after the values, by name:
        'multipliers' (n, nc; seed 000 eq. 3, mbs_form_multipliers), 'accelerations' (n, ny;
        the formulation's y''), 'residuals' (n, 2: max |c| and max |C y' + b'|)."""
        flags = self._record_flags(tuple(record))
        widths = {"multipliers": self.sizes["m"], "accelerations": self.sizes["f"], "residuals": 2}
        out, start = {}, self.sizes["vr_prm"]
        for name, flag in constants.RECORD.items():  # the order of mbs_inst_run
            if flags & flag:
                out[name] = rows[:, start:start + widths[name]]
                start += widths[name]
        return out

    def statistics(self) -> dict:
        return self.instance.statistics()

    @property
    def time(self) -> float:
        return self.instance.time

    @property
    def x(self) -> np.ndarray:
        return self.instance.x

    def save(self) -> bytes:
        return self.instance.save()

    def restore(self, state: bytes) -> None:
        self._call(self.instance.restore, state)
