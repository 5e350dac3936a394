"""A block diagram as a study's target: a *factory* (a function of the parameters that returns a
:class:`~mbsfmu.runner.Diagram`) or an *SSP file* whose parameters are named ``block.parameter``.

**Factory.**  ``f(**row) -> Diagram``: the design's columns (and the fixed ``params=``) are its
keyword arguments, checked against its signature before any run (an unknown name, or a
parameter without default that nothing sets, is a ParameterError).  It travels to the worker
processes pickled with cloudpickle; a function of a module that is not an installed package (a
script, a file loaded by path, a test module) is pickled *by value* (its code and the globals it
uses), and so are the other loaded modules that are no installed package (a helper file beside
it), so that a worker needs no import of them.  The factory is called once per run; it raises
or returns something else than a Diagram: that run is a failed row naming the factory.

**SSP file.**  Imported once per process (:func:`mbsfmu.runner.import_ssp`); each run builds
a new diagram of the same wiring whose FMU blocks are
:meth:`~mbsfmu.runner.FMU.with_values` of the imported ones with the row's values: ``block.NAME``
sets the parameter (or settable start value) NAME of component ``block``.

**Runs.**  Every run's diagram runs ``Diagram.run(t_end, **options)`` with the options
:data:`RUN_OPTIONS` (``record``, ``algebraic_loops``, ...); a result's columns are its signals
``block.port``.  Metrics of the linearized closed loop (:data:`.metrics.LINEAR_KINDS`) take
``mbsfmu.linearize(diagram, **linearize)`` of the run's diagram; a study whose metrics are all
of that kind runs no simulation.  In every process the FMU files of the diagrams are parsed and
unpacked once (:class:`mbsfmu.runner.fmu_block.FmuFiles`): a factory's new FMU blocks cost no
unzip.

**Definition** (what a resumed study compares, :mod:`.definition`): for a factory its identity
(module, name, source, defaults), the SHA-256 of its module's file, and of every FMU file the
first diagram holds; for an SSP the SHA-256 of the file.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import importlib.util
import inspect
import math
import numbers
import os
import pathlib
import re
import sys
import sysconfig

from ..analysis.closed_loop import linearize_diagram
from ..core.errors import ParameterError
from ..runner.diagram import BlockRunError, Diagram
from ..runner.fmu_block import FMU
from ..runner.ssp import import_ssp
from . import definition

#: Diagram.run's options a study passes on to every run
RUN_OPTIONS = ("record", "algebraic_loops", "loop_tol", "loop_max_iter", "check_finite", "rollback")
#: options that make no sense in a study of diagrams, with why
REFUSED = {
    "realtime": "a study runs its diagrams as fast as they go; pace one Diagram.run(realtime=True) instead",
    "rtf": "a study runs its diagrams as fast as they go (rtf paces a real-time run)",
    "overrun": "a study runs its diagrams as fast as they go (overrun is of a real-time run)",
    "live": "a study's runs have no live scope; watch one Diagram.run(live=True) instead",
    "dt": "a diagram's runs step at its own step (Diagram(step=...))",
    "rtol": "a diagram has no tolerance of its own (set its blocks' or FMUs')",
}
#: the options of mbsfmu.linearize(diagram, ...) a study takes as linearize={...}
LINEARIZE_OPTIONS = ("at", "loop_at", "domain", "plants", "pade_order")
#: rows a factory is tried on before the study gives up checking its diagram
PROBE_ROWS = 3
#: the top-level packages whose functions a worker imports (pickled by reference)
IMPORTED = ("mbsfmu", "blocks")
#: a factory named by text (the command line's form): FILE.py:FUNCTION
FACTORY_SPEC = re.compile(r"^(?P<file>.+\.py):(?P<name>[A-Za-z_]\w*)$")
#: the module names of the files :func:`load_factory` imports
LOADED_PREFIX = "mbsfmu_factory_"


class LinearOnly:
    """The outcome of a run without simulation: only the linearized closed loop ``loop``."""

    def __init__(self, loop):
        self.loop = loop


# ------------------------------------------------------------------------------- factories
def factory_label(fn) -> str:
    """``factory MODULE.NAME``, or ``factory FILE.py:NAME`` for one of :func:`load_factory`."""
    func = getattr(fn, "func", fn)  # a functools.partial: its function
    module = getattr(func, "__module__", None) or "?"
    name = getattr(func, "__qualname__", repr(func))
    file = getattr(sys.modules.get(module), "__file__", None)
    if module.startswith(LOADED_PREFIX) and file:
        return f"factory {pathlib.Path(file).name}:{name}"
    return f"factory {module}.{name}"


def _installed(module) -> bool:
    """Whether a worker process imports ``module`` by itself: a module of mbsfmu or blocks, or
    of an installed package (under site-packages), or a built-in one."""
    if module.__name__.split(".")[0] in IMPORTED:
        return True
    file = getattr(module, "__file__", None)
    if file is None:
        return True
    roots = _library_roots()
    return os.path.abspath(file).startswith(roots) or os.path.realpath(file).startswith(roots)


@functools.cache
def _library_roots() -> tuple[str, ...]:
    """The folders of installed packages and of the standard library (as given and resolved),
    each ending in a separator."""
    paths = sysconfig.get_paths()
    folders = {f(paths[k]) for k in ("purelib", "platlib", "stdlib", "platstdlib")
               for f in (os.path.abspath, os.path.realpath)}
    return tuple(d.rstrip(os.sep) + os.sep for d in folders)


def load_factory(spec: str, command: str = "sweep"):
    """The function FUNCTION of the Python file of ``'FILE.py:FUNCTION'``, the file imported by
    path as a module of its own (``mbsfmu_factory_<stem>_<digest>``, kept in ``sys.modules`` so
    that it pickles by value to the workers)."""
    m = FACTORY_SPEC.match(str(spec))
    path = pathlib.Path(m["file"]).resolve()
    if not path.is_file():
        raise ParameterError(f"{command} target {spec!r}: the file {m['file']!r} does not exist")
    data = path.read_bytes()
    stem = re.sub(r"\W", "_", path.stem)
    module_name = f"{LOADED_PREFIX}{stem}_{hashlib.sha1(data).hexdigest()[:12]}"
    module = sys.modules.get(module_name)
    if module is None:
        loader_spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[module_name] = module
        try:
            loader_spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise ParameterError(f"{command} target {spec!r}: importing {path.name} failed "
                                 f"({type(exc).__name__}: {exc})") from None
    fn = getattr(module, m["name"], None)
    if not callable(fn):
        functions = [n for n, v in vars(module).items()
                     if inspect.isfunction(v) and v.__module__ == module_name]
        close = difflib.get_close_matches(m["name"], functions, n=3)
        raise ParameterError(f"{command} target {spec!r}: {path.name} has no function {m['name']!r}"
                             + (f"; did you mean {', '.join(close)}?" if close else
                                f" (functions: {', '.join(functions) or 'none'})"))
    return fn


def by_value(fn) -> list:
    """The modules a worker may be unable to import, which ``fn`` goes with by value: when its own
    module is not of an installed package, that module and every other loaded module that is not
    (a helper file beside it, a folder put on ``sys.path`` by hand); only what ``fn`` reaches of
    them is pickled."""
    func = getattr(fn, "func", fn)
    module = sys.modules.get(getattr(func, "__module__", None) or "")
    if module is None or module.__name__ == "__main__" or _installed(module):
        return []
    others = [m for name, m in list(sys.modules.items())
              if m is not module and name != "__main__" and getattr(m, "__file__", None)
              and not _installed(m)]
    return [module, *others]


def factory_payload(fn) -> bytes:
    """``fn`` pickled for the workers: by value with the modules of :func:`by_value` (module
    docstring), so that a worker needs no import of them."""
    import cloudpickle

    modules = by_value(fn)
    for m in modules:
        cloudpickle.register_pickle_by_value(m)
    try:
        return cloudpickle.dumps(fn)
    except Exception as exc:
        raise ParameterError(f"sweep: the {factory_label(fn)} cannot be sent to worker processes "
                             f"({type(exc).__name__}: {exc}); make it a module-level function whose "
                             "globals pickle, or run with scheduler='synchronous'") from None
    finally:
        for m in modules:
            cloudpickle.unregister_pickle_by_value(m)


def check_factory(fn, columns, fixed: dict, command: str = "sweep") -> None:
    """The design's columns and the fixed values name keyword arguments of ``fn``, and every
    argument without a default is set by one of them."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{command}: the signature of the {factory_label(fn)} cannot be read "
                             f"({exc})") from None
    params = signature.parameters
    positional = [n for n, p in params.items() if p.kind == p.POSITIONAL_ONLY and p.default is p.empty]
    if positional:
        raise ParameterError(f"{command}: the {factory_label(fn)} takes {', '.join(map(repr, positional))} "
                             "positionally only: it is called with keyword arguments")
    keywords = [n for n, p in params.items()
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    takes_any = any(p.kind == p.VAR_KEYWORD for p in params.values())
    given = [*columns, *fixed]
    unknown = [n for n in given if n not in keywords]
    if unknown and not takes_any:
        close = {n: difflib.get_close_matches(n, keywords, n=1) for n in unknown}
        hints = [f"{n!r}" + (f" (did you mean {close[n][0]!r}?)" if close[n] else "") for n in unknown]
        raise ParameterError(f"{command}: the {factory_label(fn)} has no parameter {', '.join(hints)} "
                             f"(it takes: {', '.join(keywords) or 'none'})")
    missing = [n for n, p in params.items() if p.default is p.empty and n not in given
               and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if missing:
        setters = ("no design column and no params= value" if command == "sweep" else
                   "no optimized parameter and no constants= value")
        raise ParameterError(f"{command}: the {factory_label(fn)} needs {', '.join(map(repr, missing))}, "
                             f"which {setters} sets")


def make_diagram(fn, values: dict) -> Diagram:
    """The diagram of one run: ``fn(**values)``; an error or another type names the factory."""
    try:
        diagram = fn(**values)
    except Exception as exc:
        raise FactoryError(f"the {factory_label(fn)}({_values_text(values)}) raised "
                           f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(diagram, Diagram):
        raise FactoryError(f"the {factory_label(fn)}({_values_text(values)}) returned "
                           f"{type(diagram).__name__} {diagram!r:.60}, not a mbsfmu.runner.Diagram")
    return diagram


class FactoryError(ParameterError):
    """A factory failed to make the diagram of a run."""


def _values_text(values: dict) -> str:
    """``k=1.0, gain=StateFeedbackGain(...)``: each value's repr, cut at 40 characters."""
    def short(v):
        text = repr(v)
        return text if len(text) <= 40 else text[:37] + "..."

    return ", ".join(f"{k}={short(v)}" for k, v in values.items())


# ------------------------------------------------------------------------------- SSP files
def load_ssp(path: str) -> Diagram:
    """The SSP file's diagram, imported once per process (the template of every run)."""
    try:
        return import_ssp(path)
    except Exception as exc:
        raise ParameterError(f"sweep target {path!r} cannot be read as an SSP ({type(exc).__name__}: "
                             f"{exc})") from None


def ssp_settable(template: Diagram) -> dict:
    """{'block.NAME': role} of every value a run of the SSP's diagram may set."""
    return {f"{name}.{v}": role for name, b in template.blocks.items() if isinstance(b, FMU)
            for v, role in b.settable().items()}


def check_ssp_names(names, template: Diagram, what: str = "design column", command: str = "sweep") -> None:
    """Every name is ``block.NAME`` of a component and a settable variable of its FMU."""
    settable = ssp_settable(template)
    blocks = list(template.blocks)
    for name in names:
        if name in settable:
            continue
        block, dot, var = str(name).partition(".")
        if not dot or block not in template.blocks:
            close = difflib.get_close_matches(str(name), list(settable), n=3)
            if not close and block:
                close = difflib.get_close_matches(block, blocks, n=3)
            raise ParameterError(f"{command}: {what} {name!r} is not block.parameter of a block of the SSP "
                                 f"(blocks: {', '.join(blocks)})"
                                 + (f"; did you mean {', '.join(close)}?" if close else ""))
        own = [n.partition(".")[2] for n in settable if n.startswith(block + ".")]
        close = difflib.get_close_matches(var, own, n=3)
        raise ParameterError(f"{command}: {what} {name!r}: block {block!r} has no parameter or settable "
                             f"start value {var!r}"
                             + (f"; did you mean {', '.join(block + '.' + c for c in close)}?" if close
                                           else f" (it has: {', '.join(own) or 'none'})"))


def ssp_diagram(template: Diagram, values: dict) -> Diagram:
    """A new diagram of the template's wiring, each FMU block with the row's values set."""
    per_block: dict = {}
    for name, value in values.items():
        block, _, var = name.partition(".")
        per_block.setdefault(block, {})[var] = value
    d = Diagram(template.step, t0=template.t0)
    for name, b in template.blocks.items():
        mine = per_block.get(name, {})
        roles = b.settable() if mine else {}
        d.add(name, b.with_values({k: v for k, v in mine.items() if roles[k] == "parameter"},
                                  {k: v for k, v in mine.items() if roles[k] != "parameter"}))
    for src, dst in template.connections:
        d.connect(src, dst)
    return d


# ------------------------------------------------------------------------------- settings
def run_settings(probe: Diagram, t_end, options: dict, linearize, metrics: list,
                 trajectories: bool, command: str = "sweep") -> tuple[dict, dict]:
    """(the settings of every run, their definition entries), checked on the first run's
    diagram ``probe``: a bad option, an algebraic loop refused, a signal that is not
    recorded, a metric of the linear loop on a diagram that cannot be linearized is a
    ParameterError before any run."""
    for name in options:
        if name in REFUSED:
            raise ParameterError(f"{command}: {name}= is refused for a diagram target: {REFUSED[name]}")
        if name not in RUN_OPTIONS:
            raise ParameterError(f"{command}: a diagram target takes no keyword {name!r} (it takes "
                                 f"Diagram.run's {', '.join(RUN_OPTIONS)}, and linearize=)")
    linear = [m for m in metrics if m.function is None and m.linear]
    simulated = [m for m in metrics if not (m.function is None and m.linear)]
    lin = _linearize_options(linearize, bool(linear), command)
    if simulated or trajectories or t_end is not None:
        if t_end is None:
            raise ParameterError(f"{command}: t_end= (the end time of every run) is required: "
                                 + ("trajectories= are kept" if trajectories else
                                    f"metric {simulated[0].name!r} is of a simulation"))
        if (isinstance(t_end, bool) or not isinstance(t_end, numbers.Real) or not math.isfinite(t_end)
                or t_end <= probe.t0 or round((t_end - probe.t0) / probe.step) < 1):
            raise ParameterError(f"{command}: t_end must be a finite time at least one step "
                                 f"({probe.step:g} s) after the diagram's t0 = {probe.t0:g}, not {t_end!r}")
        t_end = float(t_end)
    run = dict(inspect.signature(Diagram.run).parameters)
    opts = {k: run[k].default for k in RUN_OPTIONS}
    opts.update(options)
    try:
        known = probe.recorded_signals(opts["record"], algebraic_loops=opts["algebraic_loops"])
    except Exception as exc:
        raise ParameterError(f"{command}: the diagram of the first run: {type(exc).__name__}: "
                             f"{exc}") from None
    for m in simulated:
        for signal in (m.signals if m.function is None else ()):
            if signal not in [*known, "time"]:
                close = difflib.get_close_matches(signal, known, n=3)
                raise ParameterError(f"metric {m.name!r} = {m.text}: the diagram records no signal {signal!r}"
                                     + (f"; did you mean {', '.join(close)}?" if close else
                                        f" (signals: {', '.join(known)})"))
        if m.function is None and t_end is not None:
            m.check_time(t_end)
    if linear:
        try:
            linearize_diagram(probe, **lin)
        except Exception as exc:
            raise ParameterError(f"metric {linear[0].name!r} = {linear[0].text}: the diagram of the first "
                                 f"run cannot be linearized ({type(exc).__name__}: {exc})") from None
    settings = {"t_end": t_end if (simulated or trajectories) else None, "run": dict(options),
                "linearize": lin if linear else None, "trajectories": trajectories}
    entries = {"t_end": t_end, **{k: definition.describe(v) for k, v in opts.items()},
               "linearize": definition.describe(lin) if linear else None}
    return settings, entries


def _linearize_options(linearize, wanted: bool, command: str) -> dict:
    if linearize is None:
        return {}
    if not isinstance(linearize, dict):
        raise ParameterError(f"{command}: linearize= must be a dict of mbsfmu.linearize's options "
                             f"({', '.join(LINEARIZE_OPTIONS)}), got {linearize!r:.60}")
    if not wanted:
        raise ParameterError(f"{command}: linearize= is given but no metric is of the linearized closed loop "
                             "(e.g. 'largest_real_part', 'stable')")
    for k in linearize:
        if k not in LINEARIZE_OPTIONS:
            close = difflib.get_close_matches(str(k), LINEARIZE_OPTIONS, n=1)
            raise ParameterError(f"{command}: linearize= has no option {k!r}"
                                 + (f"; did you mean {close[0]!r}?" if close else "")
                                 + f" (options: {', '.join(LINEARIZE_OPTIONS)})")
    return dict(linearize)


# ------------------------------------------------------------------------------- runs
def run(diagram: Diagram, settings: dict):
    """The outcome of one run's diagram: the runner's Result (with the linearized loop as its
    ``loop`` where a metric needs it), or :class:`LinearOnly`."""
    loop = linearize_diagram(diagram, **settings["linearize"]) if settings["linearize"] is not None else None
    if settings["t_end"] is None:
        return LinearOnly(loop)
    try:
        result = diagram.run(settings["t_end"], **settings["run"])
    except Exception as exc:
        exc.loop = loop  # the row keeps the linear metrics of a run that failed
        raise
    result.loop = loop
    return result


def non_finite(exc: Exception) -> str:
    """Why a diagram run stopped on a signal that was not finite (''; else not such a stop)."""
    signal = getattr(exc, "non_finite", None) if isinstance(exc, BlockRunError) else None
    if signal is None:
        return ""
    return f"{signal} is not finite at t={exc.t:.6g}"


# ------------------------------------------------------------------------------- definition
def identity(kind: str, target, probe: Diagram | None) -> dict:
    """The definition entries of the target (module docstring)."""
    if kind == "ssp":
        return {"target": f"SSP file sha256 {definition.sha256(pathlib.Path(target).read_bytes())}"}
    func = getattr(target, "func", target)
    module = sys.modules.get(getattr(func, "__module__", None) or "")
    file = getattr(module, "__file__", None)
    entries = {"target": factory_label(target), "factory": definition.describe(func)}
    if func is not target:  # a functools.partial: the values it binds
        entries["factory arguments"] = definition.describe([list(target.args), dict(target.keywords)])
    if file is not None and pathlib.Path(file).is_file():
        entries["factory file"] = f"sha256 {definition.sha256(pathlib.Path(file).read_bytes())}"
    fmus = sorted({str(b.path.resolve()) for b in (probe.blocks.values() if probe is not None else ())
                   if isinstance(b, FMU)})
    entries["fmu files"] = {p: f"sha256 {definition.sha256(pathlib.Path(p).read_bytes())}" for p in fmus}
    return entries
