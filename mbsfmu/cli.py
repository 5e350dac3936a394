"""Command line: a thin shell over the Python API.

    mbsfmu info MODEL.py
    mbsfmu simulate MODEL.py --t-end T [--dt D] [--rtol R] [--atol A] [--method M]
                   [--formulation F] [--set NAME=VALUE ...] --out FILE.csv [--plot FILE.png]
                   [--progress | --no-progress]
    mbsfmu build MODEL.py -o NAME.fmu [--formulation F] [--kind native|pythonfmu]
                 [--method rkstab|stiff|dop853] [--fmi 2|3] [--interface cs|me|both]
    mbsfmu linearize MODEL.py [--at NAME=VALUE ...] [--inputs U ...] [--outputs Z ...]
                 [--set CONSTANT=VALUE ...] [--independent Y ...] [--equilibrium] [--symbolic]
                 [--json] [--bode FILE.png] [--modes FILE.png]

    mbsfmu sweep TARGET --param NAME=START:STOP:N|NAME=v1,v2,... [--design factorial|lhs|sobol|montecarlo
                 --samples N --seed S] [--metric NAME=KIND(SIGNAL) ...] --t-end T --out FILE.csv
                 [--resume check|restart|keep] [--retry-failed]
                 [--scheduler ADDR] [--workers N] [--batch B] [--cluster-timeout S] [--plot FILE.png]
    mbsfmu sobol TARGET --param NAME=LO:HI ... [--metric NAME=KIND(SIGNAL) ...] --t-end T [-n N]
                 [--second-order] [--seed S] [--out FILE.csv] [--plot FILE.png] [--json] (and sweep's
                 --resume, --retry-failed, --scheduler, --workers, ...)
    mbsfmu morris TARGET --param NAME=LO:HI ... [--metric ...] --t-end T [-n R] [--levels L] (likewise)
    mbsfmu fit MODEL.py DATA.csv --param NAME=LOW:HIGH ... --signal NAME ... [--start NAME=VALUE ...]
                 [--weight SIGNAL=W ...] [--set NAME=VALUE ...] [--t-end T] [--rtol R] [--method M]
                 [--formulation F] [--plot FILE.png] [--json]
    mbsfmu gradient MODEL.py --wrt NAME ... --metric NAME=KIND(SIGNAL) ... --t-end T
                 [--mode auto|forward|adjoint] [--set NAME=VALUE ...] [--rtol R] [--method M]
                 [--formulation F] [--json]
    mbsfmu optimize MODEL.py --param NAME=LOW:HIGH ... (--minimize EXPR | --maximize EXPR)
                 [--constraint 'NAME=EXPR<=VALUE' ...] --t-end T [--start NAME=VALUE ...]
                 [--set NAME=VALUE ...] [--history FILE.csv|FILE.jsonl] [--resume check|restart]
                 [--max-evaluations N] [--mode M] [--rtol R] [--method M] [--formulation F]
                 [--progress] [--plot FILE.png] [--json]
    (every --plot, --bode, --modes FILE: an image, .png, .pdf, .svg, ..., or .html, an interactive page)
    mbsfmu animate MODEL.py --out FILE.html|FILE.gif [--t-end T] [--dt D] [--set NAME=VALUE ...]
    mbsfmu animate RESULT.csv --model MODEL.py --out FILE.html|FILE.gif [--set CONSTANT=VALUE ...]
                 [--fps F] [--every N] [--dpi D]

``--set`` accepts constants, initial positions (``alpha=0.3``), initial velocities
(``der(alpha)=1`` or ``Dalpha=1``), the values of named initial conditions (``crank_angle=0.5``)
and their declared rates (``der(crank_angle)=1``) and constant input values.  The output paths are checked
before the run.  A refused input or a failed run exits with 2, Ctrl-C with 130 and SIGTERM with
143 (128 + the signal's number; SIGTERM stops a command exactly as Ctrl-C does).  A simulation
that fails or is stopped writes what it computed to ``<out>.partial.csv`` (``animate``: the
samples it simulated, also when drawing them fails or is stopped); ``sweep`` (and ``sobol``,
``morris`` with ``--out``) keeps every finished row in its ``--out`` file and shuts its local Dask
cluster down.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import pathlib
import signal
import sys
import threading
import warnings
import zipfile
from xml.etree import ElementTree

import sympy as sp

from .analysis import linearize
from .animation import check_options
from .animation.animate import check_viewer_frames
from .animation.scene import (
    check_deformation_scale,
    check_deformation_scale_of,
    check_drawable,
    drawn_frame_names,
)
from .core.errors import (
    MbsError,
    ParameterError,
    SimulationError,
    SimulationInterrupted,
    Terminated,
    stop_reason,
)
from .core.formulation_choice import DEFAULT_FORMULATION, FORMULATION_NAMES
from .core.output_files import check_output_path, partial_path, plot_path
from .core.solver_settings import DEFAULT_METHOD, METHOD_ALIASES, METHODS
from .equations.derive import derive
from .fmu.build import DEFAULT_KIND, KINDS, build_fmu
from .fmu.fmi_options import DEFAULT_FMI_VERSION, DEFAULT_INTERFACE, FMI_VERSIONS, INTERFACES
from .identification import fit
from .model.initial_values import condition_variables
from .model.initial_values import lookup as lookup_initial
from .model.loader import load_model
from .runner import LiveView, import_ssp
from .sensitivity import gradient, optimize
from .sensitivity.diagram_optimization import MINIMIZERS
from .sensitivity.gradient import MODES
from .simulation import Result, simulate
from .simulation.result import signal_names
from .simulation.run_clock import timing_text
from .simulation.simulate import (
    ATOL_FACTOR,
    BACKENDS,
    METHOD_DESCRIPTIONS,
    OTHER_SCIPY_METHODS,
    output_grid,
    simulate_defaults,
)
from .study import designs, morris_screening, sobol_indices, sweep
from .study.batch import is_diagram

_DEFAULTS = simulate_defaults()
#: the help of simulate's --method and --formulation, from the API's tables
_METHOD_HELP = "; ".join([*(f"{n}{' (default)' if n == _DEFAULTS['method'] else ''}: {d}"
                            for n, d in METHOD_DESCRIPTIONS.items()),
                          f"or a scipy method: {', '.join(OTHER_SCIPY_METHODS)}"])
_FORMULATION_HELP = "for models with loops: " + ", ".join(
    n + (" (default)" if n == DEFAULT_FORMULATION else "") for n in FORMULATION_NAMES)
#: the build's deprecated options: old flag -> its new name (each works for one release)
_RENAMED_BUILD_OPTIONS = {"--backend": "--kind", "--solver": "--method"}
#: exit status of a command stopped by a signal: 128 + its number, as a shell reports it
EXIT_INTERRUPTED = 128 + int(signal.SIGINT)  # Ctrl-C: 130
EXIT_TERMINATED = 128 + int(signal.SIGTERM)  # 143
#: simulated time of ``mbsfmu animate MODEL.py`` without --t-end [s]
ANIMATE_T_END = 5.0


class _SigtermAsInterrupt:
    """While a command runs, SIGTERM raises :class:`~mbsfmu.core.errors.Terminated` (a
    KeyboardInterrupt) in the main thread, so a command stopped by a process manager, a batch
    system or ``kill`` keeps what it computed exactly as on Ctrl-C.  Only the first SIGTERM
    raises: one that arrives while the command is already stopping (after a first SIGTERM, or
    while a KeyboardInterrupt unwinds: writing what was computed, shutting a cluster down) is
    ignored so that this work is not cut short.  SIGKILL still ends the process at once."""

    def __init__(self):
        self.stopping = False

    def __call__(self, signum, frame):
        if self.stopping or isinstance(sys.exc_info()[1], KeyboardInterrupt):
            return
        self.stopping = True
        raise Terminated(f"signal {signum} (SIGTERM)")

    @contextlib.contextmanager
    def installed(self):
        if threading.current_thread() is not threading.main_thread():
            yield  # signal handlers belong to the main thread; elsewhere SIGTERM keeps its default
            return
        self.stopping = False
        old = signal.signal(signal.SIGTERM, self)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, old)


_SIGTERM = _SigtermAsInterrupt()


#: the metavar of a plot option: an image (.png, .pdf, .svg, ...) or an interactive page (.html)
PLOT_FILE = "FILE.png|FILE.html"


def stopped_status(exc: KeyboardInterrupt) -> tuple[str, int]:
    """(how, exit status) of a command stopped by Ctrl-C or SIGTERM (also when the
    KeyboardInterrupt, e.g. a SimulationInterrupted, was raised from a Terminated)."""
    cause = exc if isinstance(exc, Terminated) else exc.__cause__
    if isinstance(cause, Terminated):
        return stop_reason(cause), EXIT_TERMINATED
    return stop_reason(exc), EXIT_INTERRUPTED


def _parse_sets(items, system):
    params, initial, inputs = {}, {}, {}
    for item in items or []:
        if "=" not in item:
            raise ParameterError(f"--set {item!r}: expected NAME=VALUE")
        name, value = (s.strip() for s in item.split("=", 1))
        try:
            v = float(value)
        except ValueError:
            raise ParameterError(f"--set {name}: {value!r} is not a number") from None
        if name in system.constants_:
            params[name] = v
        elif name in system.inputs:
            inputs[name] = v
        elif lookup_initial(system, name) is not None:  # or a message about a named initial condition
            initial[name] = v
        else:
            conditions = [n for n, _, _ in condition_variables(system)]
            known = list(system.constants_) + list(system.coordinates_) + conditions + list(system.inputs)
            raise ParameterError(f"--set {name}: no constant, coordinate, named initial condition or "
                                 f"input of that name in {system.name!r} (known: {', '.join(known)})")
    return params, initial, inputs


def cmd_info(args) -> int:
    system = load_model(args.model)
    print(system.summary())
    for line in signal_lines(system):
        print(line)
    eqs = derive(system)
    f = len(system.y)
    print(f"  equations: M {f}x{f}, k {f}x1, q {f}x1 over {len(eqs.intermediates)} "
          "intermediate variables")
    return 0


def signal_lines(system) -> list[str]:
    """What ``mbsfmu info`` lists besides the model's summary: the rate symbols a model file
    writes velocities with (damping, control laws, outputs, nonholonomic constraints), the user
    outputs (each with its description), and every signal a Result reads, which are the FMU's
    outputs too (with the reactions) and the signals of a sweep's metrics."""
    coords = system.coordinates_.values()
    outputs = list(getattr(system, "outputs", {}).values())
    signals = signal_names(system)
    return [f"  rates ({len(coords)}): " + ", ".join(f"{c.velocity} = der({c.name})" for c in coords),
            f"  outputs ({len(outputs)}): " + ", ".join(
                f"{o.name} ({o.description}{'; res.multipliers()' if o.constraint else ''})"
                for o in outputs),
            f"  result signals ({len(signals)}): " + ", ".join(signals)]


class _ProgressBar:
    """A tqdm bar over simulated time on stderr (the simulate(progress=...) callback)."""

    def __init__(self, t_end, label):
        from tqdm import tqdm

        self.bar = tqdm(total=t_end, unit="s", desc=label, file=sys.stderr, leave=False,
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| t={n:.4g}/{total:g} s "
                                   "[{elapsed}<{remaining}]")

    def __call__(self, t, t_end):
        self.bar.update(float(t) - self.bar.n)

    def close(self):
        self.bar.close()


def _simulate_keeping(system, keep: pathlib.Path, progress, hint: str = "", **options):
    """simulate(system, **options), or, when the run fails or is stopped (Ctrl-C, SIGTERM), the
    rows it computed written to ``keep`` and the exit status to return (2, 130 or 143) after
    saying so on stderr; ``hint`` is a line on what to do with the file."""
    try:
        return simulate(system, progress=progress, **options)
    except (SimulationError, SimulationInterrupted) as exc:
        if progress is not None:
            progress.close()
        if exc.result is None:
            raise
        _SIGTERM.stopping = True  # what was computed is written before the command ends
        if isinstance(exc, SimulationInterrupted):
            how, status = stopped_status(exc)
        else:
            how, status = f"error: {exc}", 2
        what = f"partial result up to t={exc.result.t[-1]:.6g} s ({len(exc.result.t)} rows)"
        written = _write_csv(exc.result, keep)
        print(f"mbsfmu: {how}\nmbsfmu: {what} {written}" + (f"\nmbsfmu: {hint}" if hint else ""),
              file=sys.stderr)
        return status


def _write_csv(result, path: pathlib.Path) -> str:
    """Write ``result`` to ``path``: 'written to PATH', or why it could not be written."""
    try:
        result.to_csv(path)
    except OSError as exc:
        return f"could not be written to {path} ({exc.strerror or exc})"
    return f"written to {path}"


def cmd_simulate(args) -> int:
    out = check_output_path(args.out, "--out", [("model file", args.model)])
    if args.plot:
        plot_path(args.plot, "--plot", [("model file", args.model), ("--out file", args.out)])
    system = load_model(args.model)
    params, initial, inputs = _parse_sets(args.set, system)
    show = sys.stderr.isatty() if args.progress is None else args.progress
    bar = _ProgressBar(args.t_end, system.name) if show else None
    res = _simulate_keeping(system, partial_path(out), bar, t_end=args.t_end, dt=args.dt, method=args.method,
                            rtol=args.rtol, atol=args.atol, params=params, initial=initial, inputs=inputs,
                            formulation=args.formulation, backend=args.backend)
    if isinstance(res, int):
        return res
    if bar is not None:
        bar.close()
    res.to_csv(out)
    if args.plot:
        res.plot(args.plot)
    st = res.stats
    extra = ""
    if res.has_constraints:
        extra = (f", formulation {st['formulation']}, max constraint residual "
                 f"{res.constraint_residual.max():.2e}")
    print(f"{system.name}: {len(res.t)} rows -> {args.out} ({st['method']}, backend {st['backend']}, "
          f"{st['nfev']} evaluations, {timing_text(st)}{extra})")
    return 0


def cmd_run(args) -> int:
    """Run the diagram of an SSP file (FMU blocks wired as it says) in the block-diagram runner,
    as fast as it goes or paced to the wall clock, optionally with the live scope."""
    out = check_output_path(args.out, "--out", [("SSP file", args.ssp)])
    if args.plot:
        plot_path(args.plot, "--plot", [("SSP file", args.ssp), ("--out file", args.out)])
    if args.animate:
        check_output_path(args.animate, "--animate", [("SSP file", args.ssp), ("--out file", args.out)])
    if args.animate and pathlib.Path(args.animate).suffix.lower() != ".html":
        raise ParameterError(f"--animate {args.animate!r}: the drawn plant of a run is a 3D viewer page; "
                             "end the name in .html")
    viewer = [o for o, v in (("--trace", args.trace), ("--axes", args.axes),
                             ("--deformation-scale", args.deformation_scale != 1.0)) if v]
    if viewer and not args.animate:
        raise ParameterError(f"{viewer[0]} sets the drawn plant: give it with --animate FILE.html")
    if args.animate:  # the model-free part of the check; the plant's frames are known after the run
        check_deformation_scale_of("the plant", True, args.deformation_scale)
    live = False
    if args.live or args.port is not None:
        live = LiveView(args.signal or None, port=args.port or 0,
                        window=10.0 if args.window is None else args.window)
    elif args.signal or args.window is not None:
        raise ParameterError(f"{'--signal' if args.signal else '--window'} sets the live scope: give it "
                             "with --live")
    diagram = import_ssp(args.ssp, step=args.step)
    try:
        res = diagram.run(args.t_end, realtime=args.realtime, rtf=args.rtf, record=args.record or None,
                          live=live, algebraic_loops=args.algebraic_loops)
    except SimulationError as exc:
        if getattr(exc, "result", None) is None or not len(exc.result):
            raise
        _SIGTERM.stopping = True
        keep = partial_path(out)
        written = _write_csv(exc.result, keep)
        print(f"mbsfmu: error: {exc}\nmbsfmu: the signals up to t={exc.result.t[-1]:.6g} s "
              f"({len(exc.result)} rows) {written}", file=sys.stderr)
        return 2
    res.to_csv(out)
    if args.plot:
        res.plot(args.plot)
    if args.animate:
        res.animate(args.animate, block=args.block, traces=args.trace, axes=args.axes,
                    deformation_scale=args.deformation_scale)
    st = res.stats
    pace = (f", real time at rtf {args.rtf:g} (achieved {st['rtf_achieved']:.4g}, jitter p99 "
            f"{st['jitter_p99_us']:.0f} us, {st['overruns']} overruns)" if args.realtime else "")
    print(f"{pathlib.Path(args.ssp).name}: {len(res)} rows of {len(res.columns) - 1} signals -> "
          f"{args.out}{pace}")
    return 0


def _renamed_options(args, renamed: dict) -> None:
    """Take the values of deprecated options (``renamed``: old flag -> new flag) into their new
    ones, with a one-line note on stderr each; an old and its new flag given together is a
    ParameterError (nothing is done)."""
    for old, new in renamed.items():
        old_dest, new_dest = old.lstrip("-").replace("-", "_"), new.lstrip("-").replace("-", "_")
        value = getattr(args, old_dest)
        if value is None:
            continue
        if getattr(args, new_dest) is not None:
            raise ParameterError(f"{old} and {new} name the same setting ({old} is its deprecated "
                                 f"name): give only {new}")
        print(f"mbsfmu: warning: {old} is deprecated and goes away in the next release: use {new}",
              file=sys.stderr, flush=True)
        setattr(args, new_dest, value)


def cmd_build(args) -> int:
    _renamed_options(args, _RENAMED_BUILD_OPTIONS)
    kind = DEFAULT_KIND if args.kind is None else args.kind
    path = build_fmu(args.model, args.output, kind=kind, formulation=args.formulation, method=args.method,
                     fmi_version=int(args.fmi), interface=args.interface)
    with zipfile.ZipFile(path) as z:
        variables = ElementTree.fromstring(z.read("modelDescription.xml")).find("ModelVariables")
    print(f"{path} ({kind}, FMI {args.fmi}.0 {INTERFACES[args.interface]}, "
          f"{path.stat().st_size / 1024:.0f} KiB, {len(variables)} variables)")
    return 0


def _parse_at(items) -> dict:
    at = {}
    for item in items or []:
        if "=" not in item:
            raise ParameterError(f"--at {item!r}: expected NAME=VALUE")
        name, value = (x.strip() for x in item.split("=", 1))
        try:
            at[name] = float(value)
        except ValueError:
            raise ParameterError(f"--at {name}: {value!r} is not a number") from None
    return at


def _matrix_text(name, M, rows, cols) -> str:
    if M.size == 0:
        return f"{name} ({M.shape[0]}x{M.shape[1]}): empty"
    width = max(12, *(len(c) + 1 for c in cols))
    lead = max(len(r) for r in rows)
    lines = [f"{name} ({M.shape[0]}x{M.shape[1]}):",
             " " * (lead + 2) + "".join(f"{c:>{width}}" for c in cols)]
    for r, row in zip(rows, M):
        lines.append(f"  {r:<{lead}}" + "".join(f"{v + 0.0:>{width}.6g}" for v in row))  # no -0
    return "\n".join(lines)


def cmd_linearize(args) -> int:

    for opt in ("bode", "modes"):
        if getattr(args, opt):
            plot_path(getattr(args, opt), f"--{opt}")  # folder and image format, before the work
    system = load_model(args.model)
    params, initial, inputs = _parse_sets(args.set, system)
    if initial or inputs:
        raise ParameterError("linearize: --set takes constants; give coordinates, velocities and "
                             "inputs of the operating point with --at")
    at = _parse_at(args.at)
    lin = linearize(system, at=at, inputs=args.inputs, outputs=args.outputs, params=params,
                    symbolic=args.symbolic, independent=args.independent, equilibrium=args.equilibrium)
    num = lin.numeric()
    if args.bode:
        num.bode(args.bode)
    if args.modes:
        num.plot_modes(args.modes)
    if args.json:
        print(json.dumps(num.to_dict()))
        return 0
    point = ", ".join(f"{k}={float(v):g}" for k, v in num.point.items())
    print(f"{system.name} linearized at {point}"
          + (" (an equilibrium)" if num.equilibrium else " (not an equilibrium: x' has a constant part)"))
    if lin.independent != lin.coordinates:
        print(f"independent coordinates: {', '.join(lin.independent)} (of {', '.join(lin.coordinates)})")
    if args.symbolic:
        for name in ("M0", "D", "K", "F"):
            print(f"{name} =")
            print(sp.pretty(getattr(lin, name)))
    st, u, z = num.states, num.inputs, num.outputs
    print(_matrix_text("A", num.A, st, st))
    print(_matrix_text("B", num.B, st, u))
    print(_matrix_text("C", num.C, z, st))
    print(_matrix_text("D", num.Du, z, u))
    print("modes:")
    print(num.modal_table())
    return 0


def _parse_params(items, design: str, command: str = "sweep") -> dict:
    """--param NAME=SPEC as {name: spec}: value lists and START:STOP:N ranges for factorial, LO:HI
    bounds for lhs and sobol (and the sobol and morris commands), LO:HI or a scipy.stats
    distribution DIST(a,b,...) for montecarlo; a name given twice is refused."""
    out = {}
    for item in items or []:
        if "=" not in item:
            raise ParameterError(f"--param {item!r}: expected NAME=SPEC")
        name, spec = (x.strip() for x in item.split("=", 1))
        if name in out:
            raise ParameterError(f"--param {name} is given twice")
        if design == "montecarlo" and "(" in spec:
            out[name] = _distribution(name, spec)
        else:
            out[name] = spec
    if not out:
        raise ParameterError(f"{command}: give at least one --param")
    return out


def _parse_metrics(items) -> dict:
    """--metric NAME=KIND(SIGNAL) as {name: 'KIND(SIGNAL)'}."""
    metrics = {}
    for item in items or []:
        if "=" not in item:
            raise ParameterError(f"--metric {item!r}: expected NAME=KIND(SIGNAL)")
        name, expr = (x.strip() for x in item.split("=", 1))
        metrics[name] = expr
    return metrics


def _study_options(args) -> dict:
    """The keywords of a sweep's runs from the options every study command shares."""
    show = sys.stderr.isatty() if args.progress is None else args.progress
    return dict(t_end=args.t_end, dt=args.dt, rtol=args.rtol, metrics=_parse_metrics(args.metric) or None,
                scheduler=args.scheduler, workers=args.workers, batch=args.batch, progress=show,
                trajectories=args.trajectories, connect_timeout=args.connect_timeout, resume=args.resume,
                retry_failed=args.retry_failed, cluster_timeout=args.cluster_timeout)


def _resume_lines(rows, out) -> list[str]:
    """What a study took from its rows file and moved aside, as the CLI says it."""
    r = rows.attrs["resume"]
    lines = [f"moved {old} aside to {new} (--resume restart)" for old, new in r["moved"]]
    if r["taken"] or r["damaged"] or r["retried"]:
        lines.append(f"resumed {out}: {r['taken']} rows taken from the file ({r['failed_taken']} failed), "
                     f"{r['ran']} runs run ({len(r['damaged'])} damaged rows and {len(r['retried'])} failed "
                     "rows run again)")
    return lines


def _distribution(name, spec):
    from scipy import stats

    dist, _, args = spec.partition("(")
    make = getattr(stats, dist.strip(), None)
    if not hasattr(make, "rvs") or not args.endswith(")"):
        raise ParameterError(f"--param {name}: {spec!r} is not a scipy.stats distribution like norm(1, 0.1)")
    try:
        return make(*(float(a) for a in args[:-1].split(",") if a.strip()))
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"--param {name}: {spec!r}: {exc}") from None


def cmd_sweep(args) -> int:
    out = check_output_path(args.out, "--out")
    plot = plot_path(args.plot, "--plot", [("--out file", args.out)]) if args.plot else None
    params = _parse_params(args.param, args.design)
    if args.design == "factorial":
        design = designs.factorial(params)
    else:
        if args.samples is None:
            raise ParameterError(f"--design {args.design} needs --samples N")
        make = {"lhs": designs.latin_hypercube, "sobol": designs.sobol,
                "montecarlo": designs.monte_carlo}[args.design]
        design = make(params, args.samples, seed=args.seed)
    df = sweep(args.target, design, out=out, plot=plot, linearize=_parse_linearize(args.linearize),
               **_study_options(args))
    failed = int((df["status"] == "failed").sum())
    counts = df["status"].value_counts()
    verdicts = "".join(f", {counts[s]} {s}" for s in ("unstable", "not settled", "diverged") if s in counts)
    for line in _resume_lines(df, args.out):
        print(line)
    print(f"{len(df)} runs ({failed} failed{verdicts}) -> {args.out}"
          + (f", plot -> {args.plot}" if plot else ""))
    return 0


def _parse_linearize(items) -> dict | None:
    """--linearize KEY=VALUE items as mbsfmu.linearize's options (a number where it reads as one,
    else the text); None without any."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"--linearize {item!r}: expected KEY=VALUE, e.g. --linearize "
                                 "domain=discrete")
        try:
            out[key.strip()] = float(value) if "." in value or "e" in value.lower() else int(value)
        except ValueError:
            out[key.strip()] = value.strip()
    return out or None


def _print_result(result, notes, as_json: bool) -> bool:
    """A command's result: with --json the notes on stderr and one JSON object on stdout, else
    the notes and the result's table on stdout.  Returns ``as_json`` (nothing more to print)."""
    for line in notes:
        print(line, file=sys.stderr if as_json else sys.stdout)
    print(json.dumps(result.to_dict()) if as_json else result)
    return as_json


def cmd_global_sensitivity(args) -> int:
    """``sobol`` and ``morris``: the indices as a table (or one JSON object with --json)."""
    out = check_output_path(args.out, "--out") if args.out else None
    plot = plot_path(args.plot, "--plot", [("--out file", args.out)]) if args.plot else None
    ranges = _parse_params(args.param, "lhs", args.command)
    options = dict(n=args.n, seed=args.seed, conf_level=args.conf_level, out=out, plot=plot,
                   **_study_options(args))
    try:
        if args.command == "sobol":
            result = sobol_indices(args.target, ranges, second_order=args.second_order, **options)
        else:
            result = morris_screening(args.target, ranges, levels=args.levels, **options)
    except ImportError as exc:  # SALib missing: say so as any refused input
        raise ParameterError(str(exc)) from None
    if _print_result(result, _resume_lines(result.rows, args.out), args.json):
        return 0
    where = (f" -> {args.out}" if out else "") + (f", plot -> {args.plot}" if plot else "")
    print(f"{result.runs} runs{where}")
    return 0


def _parse_numbers(items, option: str) -> dict:
    """NAME=VALUE items of ``option`` as {name: float}; a name given twice is refused."""
    out = {}
    for item in items or []:
        if "=" not in item:
            raise ParameterError(f"{option} {item!r}: expected NAME=VALUE")
        name, value = (x.strip() for x in item.split("=", 1))
        if name in out:
            raise ParameterError(f"{option} {name} is given twice")
        try:
            out[name] = float(value)
        except ValueError:
            raise ParameterError(f"{option} {name}: {value!r} is not a number") from None
    return out


def cmd_fit(args) -> int:
    """``fit``: the estimates as a table (or one JSON object with --json), the plot if asked."""
    inputs_files = [("model file", args.model), ("data file", args.data)]
    plot = plot_path(args.plot, "--plot", inputs_files) if args.plot else None
    system = load_model(args.model)
    params, initial, inputs = _parse_sets(args.set, system)
    if not args.signal:
        raise ParameterError("fit: give at least one --signal (a column of the data)")
    result = fit(system, args.data, _parse_params(args.param, "lhs", "fit"), args.signal,
                 weights=_parse_numbers(args.weight, "--weight") or None, t_end=args.t_end,
                 start=_parse_numbers(args.start, "--start") or None, constants=params, initial=initial,
                 inputs=inputs or None, rtol=args.rtol, method=args.method, formulation=args.formulation)
    if plot is not None:
        result.plot(plot)
    if args.json:
        print(json.dumps(result.to_dict()))
        return 0
    print(result)
    if plot is not None:
        print(f"plot -> {args.plot}")
    return 0


def cmd_gradient(args) -> int:
    """``gradient``: the metrics' values and gradients as a table (or one JSON object)."""
    system = load_model(args.model)
    params, initial, inputs = _parse_sets(args.set, system)
    metrics = _parse_metrics(args.metric)
    if not metrics:
        raise ParameterError("gradient: give at least one --metric NAME=KIND(SIGNAL), e.g. --metric "
                             "xT='final(x)'")
    if not args.wrt:
        raise ParameterError("gradient: give at least one --wrt NAME (a constant, an initial value or a "
                             "named initial condition)")
    result = gradient(system, metrics, args.wrt, args.t_end, mode=args.mode, method=args.method,
                      rtol=args.rtol, params=params, initial=initial, inputs=inputs or None,
                      formulation=args.formulation)
    print(json.dumps(result.to_dict()) if args.json else result)
    return 0


def _parse_constraints(items) -> dict:
    """--constraint NAME=EXPR<=VALUE as {name: 'EXPR<=VALUE'} (optimize parses the rest)."""
    out = {}
    for item in items or []:
        name, sep, spec = item.partition("=")
        if not sep or not name.strip() or spec[:1] == "=" or name.rstrip()[-1:] in "<>":
            raise ParameterError(f"--constraint {item!r}: expected NAME=EXPR<=VALUE (or >=, ==), e.g. "
                                 "--constraint 'E=integral(energy)<=0.5'")
        if name.strip() in out:
            raise ParameterError(f"--constraint {name.strip()} is given twice")
        out[name.strip()] = spec
    return out


def cmd_optimize(args) -> int:
    """``optimize``: the optimum as a table (or one JSON object with --json), the plot if asked."""
    inputs_files = [("model file", args.model)]
    plot = plot_path(args.plot, "--plot", inputs_files) if args.plot else None
    if args.history is not None:
        check_output_path(args.history, "--history", inputs_files)
    if is_diagram(args.model):
        return _optimize_diagram(args, plot)
    system = load_model(args.model)
    params, initial, inputs = _parse_sets(args.set, system)
    if args.progress is None:
        show = sys.stderr.isatty()
    else:
        show = args.progress
    options = {"inputs": inputs} if inputs else {}
    result = optimize(system, minimize=args.minimize, maximize=args.maximize,
                      params=_parse_params(args.param, "lhs", "optimize"), t_end=args.t_end,
                      constraints=_parse_constraints(args.constraint) or None,
                      start=_parse_numbers(args.start, "--start") or None, constants=params, initial=initial,
                      mode=args.mode, method=args.method, rtol=args.rtol, formulation=args.formulation,
                      history=args.history, resume=args.resume, max_evaluations=args.max_evaluations,
                      progress=show, minimizer=args.minimizer, xtol=args.xtol, **options)
    return _optimized(args, result, plot)


def _optimized(args, result, plot) -> int:
    """What ``optimize`` prints and draws of its result."""
    if plot is not None:
        result.plot(plot)
    notes = [f"moved {old} aside to {new} (--resume restart)" for old, new in result.moved]
    if result.dropped:
        notes.append(f"{len(result.dropped)} unreadable record(s) of {args.history} evaluated again")
    if _print_result(result, notes, args.json):
        return 0
    where = (f"history -> {args.history}" if args.history else "") + (
        f"{', ' if args.history else ''}plot -> {args.plot}" if plot else "")
    if where:
        print(where)
    return 0


def _optimize_diagram(args, plot) -> int:
    """``optimize`` of a diagram target: --set values are its fixed values (constants=)."""
    show = sys.stderr.isatty() if args.progress is None else args.progress
    result = optimize(args.model, minimize=args.minimize, maximize=args.maximize,
                      params=_parse_params(args.param, "lhs", "optimize"), t_end=args.t_end,
                      constraints=_parse_constraints(args.constraint) or None,
                      start=_parse_numbers(args.start, "--start") or None,
                      constants=_parse_numbers(args.set, "--set") or None, method=args.method,
                      formulation=args.formulation, mode=args.mode, minimizer=args.minimizer, xtol=args.xtol,
                      history=args.history, resume=args.resume, max_evaluations=args.max_evaluations,
                      progress=show)
    return _optimized(args, result, plot)


def cmd_animate(args) -> int:
    """Animate a model (simulated here first) or a result CSV with its model.

    A model that is simulated here keeps its samples: when the simulation fails or is stopped,
    or drawing the animation fails or is stopped, the samples go to ``<out stem>.partial.csv``
    (a result CSV: ``mbsfmu animate`` draws it with ``--model``); nothing is drawn from a
    simulation that did not finish."""
    out = check_output_path(args.out, "--out")
    check_options(out, args.fps, args.every, args.dpi, player=args.player,
                  viewer_extras=bool(args.trace or args.axes))
    source = pathlib.Path(args.source)
    kind = source.suffix.lower()
    keep = partial_path(out.with_suffix(".csv"))
    if kind == ".csv":
        if not args.model:
            raise ParameterError(f"animate {args.source}: a result CSV needs its model: --model MODEL.py")
        if args.t_end is not None:
            raise ParameterError("animate: --t-end is for a model file; a result CSV has its own times")
        system = load_model(args.model)
        check_drawable(system)
        check_deformation_scale(system, args.deformation_scale)
        params, initial, inputs = _parse_sets(args.set, system)
        if initial or inputs:
            raise ParameterError("animate: with a result CSV, --set takes constants only (the "
                                 "coordinates come from the CSV)")
        res = Result.read_csv(source, system, params)
    elif kind == ".py":
        if args.model:
            raise ParameterError(f"animate: --model is for a result CSV; {args.source} is the model")
        t_end = ANIMATE_T_END if args.t_end is None else args.t_end
        check_options(samples=len(output_grid(t_end, args.dt)), every=args.every)
        system = load_model(args.source)
        check_drawable(system)
        check_viewer_frames(drawn_frame_names(system), args.trace, args.axes)  # before simulating
        check_deformation_scale(system, args.deformation_scale)
        params, initial, inputs = _parse_sets(args.set, system)
        hint = (f"draw it with: mbsfmu animate {keep} --model {args.source} --out "
                f"{partial_path(out)}")
        res = _simulate_keeping(system, keep, None, hint, t_end=t_end, dt=args.dt, method=args.method,
                                params=params, initial=initial, inputs=inputs, backend=args.backend)
        if isinstance(res, int):
            return res
    else:
        raise ParameterError(f"animate: {args.source!r} is neither a model (.py) nor a result CSV (.csv)")
    try:
        if kind == ".py":
            print(f"mbsfmu: {system.name}: simulated {len(res.t)} samples to t={res.t[-1]:g} s; drawing "
                  f"{out}", file=sys.stderr, flush=True)
        anim = res.animate(out, fps=args.fps, every=args.every, dpi=args.dpi, player=args.player,
                           traces=args.trace, axes=args.axes, deformation_scale=args.deformation_scale)
    except OSError as exc:
        _keep_samples(res, kind, keep, "the animation was not written")
        raise ParameterError(f"--out {args.out!r}: writing the animation failed "
                             f"({exc.strerror or exc})") from None
    except BaseException:
        _keep_samples(res, kind, keep, "the animation was not written")
        raise
    print(f"{system.name}: {len(anim)} frames ({anim.fps:g} per second) -> {args.out}")
    return 0


def _keep_samples(res, kind: str, keep: pathlib.Path, why: str) -> None:
    """The samples of a model simulated by ``animate`` written to ``keep`` when drawing them
    failed or was stopped (those of a result CSV are in that file already)."""
    if kind != ".py":
        return
    _SIGTERM.stopping = True
    written = _write_csv(res, keep)
    print(f"mbsfmu: {why}; the {len(res.t)} simulated samples (to t={res.t[-1]:g} s) {written}",
          file=sys.stderr)


def _default(function, keyword: str):
    """The default of a keyword of an API function (the CLI's defaults are the API's)."""
    return inspect.signature(function).parameters[keyword].default


def _add_study_options(p) -> None:
    """The options of a sweep's runs, shared by sweep, sobol and morris."""
    p.add_argument("--metric", action="append", metavar="NAME=KIND(SIGNAL)",
                   help="KIND: final, max, min, mean, rms, maxabs, settling (settling(x) 2 %% band, "
                   "settling(x, 5%%)); SIGNAL: a coordinate, der(NAME), constraint_residual or an FMU "
                   "variable; repeatable (default: final values)")
    p.add_argument("--t-end", type=float, default=None,
                   help="end time of every run [s] (required but for a diagram whose metrics are all of its "
                   "linearized closed loop)")
    p.add_argument("--dt", type=float, default=None, help="output interval [s]")
    p.add_argument("--rtol", type=float, default=None, help="relative tolerance")
    p.add_argument("--resume", choices=["check", "restart", "keep"], default="check",
                   help="rows of another definition in --out: check refuses them (default), restart moves "
                   "them aside (OUT -> NAME.old-N.csv) and starts over, keep keeps them on purpose")
    p.add_argument("--retry-failed", action="store_true",
                   help="run the failed rows of --out again (default: they are taken as they are)")
    p.add_argument("--trajectories", metavar="DIR|FILE.npz", default=None,
                   help="also keep every run's trajectory: one CSV per run in DIR, or one .npz file")
    p.add_argument("--connect-timeout", type=float, default=10.0,
                   help="seconds to wait for a --scheduler address (default 10)")
    p.add_argument("--cluster-timeout", type=float, default=60.0,
                   help="seconds without any worker (or scheduler) after which the sweep ends with an "
                   "error, the finished rows written (default 60)")
    p.add_argument("--scheduler", default=None,
                   help="Dask scheduler address tcp://HOST:PORT, or synchronous, threads, processes "
                   "(default: a local cluster of worker processes)")
    p.add_argument("--workers", type=int, default=None, help="worker processes of the local cluster")
    p.add_argument("--batch", type=int, default=None, help="runs per task (default: ~4 tasks per worker)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")


def _add_run_options(p, api) -> None:
    """The options of the runs of gradient and optimize."""
    p.add_argument("--t-end", type=float, required=True, help="end time of the run [s]")
    p.add_argument("--mode", default=_default(api, "mode"), choices=MODES,
                   help="the gradient's method: forward (direct), adjoint, or auto (adjoint when there are "
                   "more than twice as many parameters as metrics; default)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="a fixed constant, initial value or input of the run; repeatable")
    p.add_argument("--rtol", type=float, default=_default(api, "rtol"),
                   help="relative tolerance of the run (default %(default)g)")
    p.add_argument("--method", default=_default(api, "method"),
                   help="integration method: dop853 (default: the fewest steps at a gradient's "
                   "tolerances), explicit or stiff")
    p.add_argument("--formulation", default=None, help=_FORMULATION_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")


def _add_gradient_parsers(sub) -> None:
    pg = sub.add_parser("gradient", help="values and exact gradients of metrics of a run (direct or adjoint)",
                        description="the values of final(), integral() and mean() metrics of a run and their "
                        "gradients by constants and initial values, by the direct or the adjoint method")
    pg.add_argument("model", help="Python file with a model() function")
    pg.add_argument("--wrt", action="append", metavar="NAME",
                    help="a constant, initial value (x, der(x)) or named initial condition; repeatable")
    pg.add_argument("--metric", action="append", metavar="NAME=KIND(SIGNAL)",
                    help="KIND: final, integral or mean; SIGNAL: a coordinate, der(coordinate), output or "
                    "constraint; repeatable")
    _add_run_options(pg, gradient)
    pg.set_defaults(func=cmd_gradient)
    po = sub.add_parser("optimize", help="minimize or maximize a metric over bounded parameters (exact "
                        "gradients)", description="minimize (or maximize) a final(), integral() or mean() "
                        "metric over bounded constants and initial values, with constraints on other "
                        "metrics, by scipy.optimize with the exact gradients of the direct or adjoint method")
    po.add_argument("model", help="Python file with a model() function, or a diagram: an SSP (.ssp, "
                    "parameters BLOCK.NAME) or FILE.py:FUNCTION, a function of the parameters that returns a "
                    "Diagram (tuned without gradients: --minimizer)")
    po.add_argument("--param", action="append", metavar="NAME=LOW:HIGH",
                    help="a constant, initial value (x, der(x)) or named initial condition and its range; "
                    "repeatable")
    goal = po.add_mutually_exclusive_group(required=True)
    goal.add_argument("--minimize", metavar="KIND(SIGNAL)", help="the metric to minimize, e.g. 'final(x)'")
    goal.add_argument("--maximize", metavar="KIND(SIGNAL)", help="the metric to maximize")
    po.add_argument("--constraint", action="append", metavar="NAME=EXPR<=VALUE",
                    help="a constraint on a metric: NAME=KIND(SIGNAL)<=VALUE, >= or ==; repeatable")
    po.add_argument("--start", action="append", metavar="NAME=VALUE",
                    help="start of a parameter (default: the model's value if within the range, else the "
                    "middle)")
    po.add_argument("--history", metavar="FILE.csv|FILE.jsonl",
                    help="append every evaluation to this file; an existing one of the same optimization is "
                    "resumed (its evaluations are not run again)")
    po.add_argument("--resume", default=_default(optimize, "resume"), choices=["check", "restart"],
                    help="an existing --history of another optimization: check refuses it (default), restart "
                    "moves it aside (FILE.old-N.csv) and starts over")
    po.add_argument("--max-evaluations", type=int, default=_default(optimize, "max_evaluations"),
                    help="the most evaluations, those taken from --history included (default %(default)s)")
    po.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="a line per evaluation on stderr (default: when stderr is a terminal)")
    po.add_argument("--plot", metavar=PLOT_FILE, help="also plot the objective and the parameters per "
                    "evaluation")
    po.add_argument("--minimizer", default=None, choices=list(MINIMIZERS.values()),
                    help="a diagram's minimizer: Nelder-Mead (default), Powell, COBYLA (default with "
                    "constraints), or L-BFGS-B / SLSQP with finite differences (a model's: its "
                    "exact-gradient minimizer)")
    po.add_argument("--xtol", type=float, default=_default(optimize, "xtol"),
                    help="a derivative-free minimizer's tolerance on the parameters scaled to [0, 1] "
                    "(default %(default)g)")
    _add_run_options(po, optimize)
    po.set_defaults(func=cmd_optimize)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mbsfmu", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    pi = sub.add_parser("info", help="coordinates, parameters, inputs and sizes of a model")
    pi.add_argument("model", help="Python file with a model() function")
    pi.set_defaults(func=cmd_info)
    ps = sub.add_parser("simulate", help="simulate a model and write a CSV")
    ps.add_argument("model", help="Python file with a model() function")
    ps.add_argument("--t-end", type=float, required=True, help="end time [s]")
    ps.add_argument("--dt", type=float, default=_DEFAULTS["dt"],
                    help=f"output interval [s] (default {_DEFAULTS['dt']:g})")
    ps.add_argument("--rtol", type=float, default=_DEFAULTS["rtol"],
                    help=f"relative tolerance (default {_DEFAULTS['rtol']:g})")
    ps.add_argument("--atol", type=float, default=_DEFAULTS["atol"],
                    help=f"absolute tolerance (default {ATOL_FACTOR['constrained']:g} rtol for models with "
                         f"constraints, {ATOL_FACTOR['tree']:g} rtol for trees)")
    ps.add_argument("--method", default=_DEFAULTS["method"], help=_METHOD_HELP)
    ps.add_argument("--formulation", default=_DEFAULTS["formulation"], help=_FORMULATION_HELP)
    ps.add_argument("--backend", default=_DEFAULTS["backend"], choices=BACKENDS,
                    help="c: the C engine (default where a C compiler is found); numpy: the Python "
                    "reference")
    ps.add_argument("--set", action="append", metavar="NAME=VALUE",
                    help="constant, initial value or input; repeatable")
    ps.add_argument("--out", required=True, help="CSV file to write")
    ps.add_argument("--plot", metavar=PLOT_FILE, help="also write a plot of the coordinates")
    ps.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bar on stderr (default: when stderr is a terminal)")
    ps.set_defaults(func=cmd_simulate)
    pb = sub.add_parser("build", help="export a model as an FMU (FMI 2.0 or 3.0, Co-Simulation, Model "
                        "Exchange or both)")
    pb.add_argument("model", help="Python file with a model() function")
    pb.add_argument("-o", "--output", default=".",
                    help="FMU file (NAME.fmu) or folder (default: ./<model>.fmu)")
    pb.add_argument("--kind", default=None, choices=KINDS,
                    help=f"FMU kind: native: Python-free C binary (default {DEFAULT_KIND}); pythonfmu: "
                    "runs mbsfmu in the host's Python")
    pb.add_argument("--formulation", default=None, help=_FORMULATION_HELP + " (both FMU kinds)")
    pb.add_argument("--method", default=None,
                    help="start value of the FMU's integration method (the tunable parameter method): "
                    + ", ".join(f"{n} ({d})" for n, d in METHODS.items())
                    + f"; default {DEFAULT_METHOD}; also "
                    + ", ".join(f"{a} = {n}" for a, n in METHOD_ALIASES.items()))
    pb.add_argument("--fmi", default=str(DEFAULT_FMI_VERSION), choices=[str(v) for v in FMI_VERSIONS],
                    help=f"FMI version: 2 (FMI 2.0) or 3 (FMI 3.0); default {DEFAULT_FMI_VERSION} "
                    "(native kind; pythonfmu: 2 only)")
    pb.add_argument("--interface", default=DEFAULT_INTERFACE, choices=list(INTERFACES),
                    help="FMI interface: " + ", ".join(f"{k}: {v}" for k, v in INTERFACES.items())
                    + f"; default {DEFAULT_INTERFACE} (native kind; pythonfmu: cs only)")
    # the deprecated names of --kind and --method: they work for one release (_renamed_options)
    pb.add_argument("--backend", default=None, choices=KINDS, help=argparse.SUPPRESS)
    pb.add_argument("--solver", default=None, help=argparse.SUPPRESS)
    pb.set_defaults(func=cmd_build)
    pl = sub.add_parser("linearize", help="linear model about an operating point: state space and modes")
    pl.add_argument("model", help="Python file with a model() function")
    pl.add_argument("--at", nargs="+", metavar="NAME=VALUE", default=[],
                    help="operating point: coordinates (default 0, or solved from the constraints), "
                    "velocities der(NAME) (default 0), inputs (default: their defaults), t")
    pl.add_argument("--inputs", nargs="+", help="inputs of the linear model (default: all)")
    pl.add_argument("--outputs", nargs="+",
                    help="outputs: model outputs, coordinates, der(NAME) (default: the states)")
    pl.add_argument("--set", action="append", metavar="NAME=VALUE", help="constant value; repeatable")
    pl.add_argument("--independent", nargs="+",
                    help="independent coordinates of a constrained model (default: QR of C)")
    pl.add_argument("--equilibrium", action="store_true",
                    help="refuse an operating point that is not an equilibrium")
    pl.add_argument("--symbolic", action="store_true",
                    help="also print M0, D, K, F with the constants as symbols")
    pl.add_argument("--json", action="store_true",
                    help="print one JSON object (A, B, C, D, names, second-order form, modes)")
    pl.add_argument("--bode", metavar=PLOT_FILE, help="write a Bode plot of every input/output pair")
    pl.add_argument("--modes", metavar=PLOT_FILE, help="write a plot of the mode shapes")
    pl.set_defaults(func=cmd_linearize)
    pw = sub.add_parser("sweep", help="run a model or FMU over a design of parameter sets on Dask")
    pw.add_argument("target", help="model file (.py), FMU (.fmu), SSP (.ssp, parameters BLOCK.NAME) or "
                    "FILE.py:FUNCTION, a function of the parameters that returns a Diagram")
    pw.add_argument("--param", action="append", metavar="NAME=SPEC",
                    help="factorial: START:STOP:N or v1,v2,...; lhs/sobol: LO:HI; montecarlo: LO:HI "
                    "(uniform) or a scipy.stats distribution such as norm(1,0.1); repeatable")
    pw.add_argument("--design", default="factorial", choices=["factorial", "lhs", "sobol", "montecarlo"],
                    help="how the parameter sets are chosen (default factorial)")
    pw.add_argument("--samples", type=int, help="number of runs of an lhs, sobol or montecarlo design")
    pw.add_argument("--seed", type=int, default=None, help="seed of the random designs")
    pw.add_argument("--out", required=True,
                    help="CSV (or .parquet) of the rows; an existing one is resumed: its sound rows are "
                    "taken if they come from the same sweep definition (OUT.definition.json)")
    pw.add_argument("--plot", metavar=PLOT_FILE,
                    help="also plot the first metric: over one parameter, a heat map over two on a grid, "
                    "else a histogram")
    pw.add_argument("--linearize", action="append", metavar="KEY=VALUE",
                    help="an option of the linearization a diagram's metrics largest_real_part, stable, "
                    "min_damping, spectral_radius take (domain=discrete, pade_order=N); repeatable")
    _add_study_options(pw)
    pw.set_defaults(func=cmd_sweep)
    for name, api, what, n_help in (
            ("sobol", sobol_indices, "Sobol' indices (first order S1, total ST) of metrics over parameter "
             "ranges", "base samples, a power of 2 >= 8: n (p + 2) runs for p parameters, n (2p + 2) with "
             "--second-order"),
            ("morris", morris_screening, "Morris screening (elementary effects mu*, mu, sigma) of metrics "
             "over parameter ranges", "trajectories, >= 2: n (p + 1) runs for p parameters")):
        pg = sub.add_parser(name, help=what, description=what)
        pg.add_argument("target", help="model file (.py) or FMU (.fmu)")
        pg.add_argument("--param", action="append", metavar="NAME=LO:HI",
                        help="a constant, initial value or input and its range (uniform); repeatable")
        pg.add_argument("-n", type=int, default=_default(api, "n"), help=f"{n_help} (default %(default)s)")
        if name == "sobol":
            pg.add_argument("--second-order", action="store_true",
                            help="also the second-order indices S2 of every pair")
        else:
            pg.add_argument("--levels", type=int, default=_default(api, "levels"),
                            help="levels of the grid, even (default %(default)s)")
        pg.add_argument("--seed", type=int, default=_default(api, "seed"),
                        help="seed of the design and the bootstrap (default %(default)s: the same design "
                        "every time, so an --out file resumes)")
        pg.add_argument("--conf-level", type=float, default=_default(api, "conf_level"),
                        help="confidence level of the intervals (default %(default)s)")
        pg.add_argument("--out", default=None,
                        help="CSV (or .parquet) of the runs' rows, resumed as a sweep's (default: none kept)")
        pg.add_argument("--plot", metavar=PLOT_FILE, help="also write a bar chart of the indices")
        pg.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
        _add_study_options(pg)
        pg.set_defaults(func=cmd_global_sensitivity)
    pf = sub.add_parser("fit", help="fit constants and initial values to measured data (least squares)",
                        description="fit constants and initial values of a model to measured signals by "
                        "nonlinear least squares, with the Jacobian from the direct method")
    pf.add_argument("model", help="Python file with a model() function")
    pf.add_argument("data", help="CSV file with a time column and one column per --signal")
    pf.add_argument("--param", action="append", metavar="NAME=LOW:HIGH",
                    help="a constant, initial value (x, der(x)) or named initial condition to fit, and its "
                    "range; repeatable")
    pf.add_argument("--signal", action="append", metavar="NAME",
                    help="a fitted signal: coordinate, der(coordinate), output or constraint, a column of "
                    "the data; repeatable")
    pf.add_argument("--start", action="append", metavar="NAME=VALUE",
                    help="start of a fitted parameter (default: the model's value if within the range, "
                    "else the middle)")
    pf.add_argument("--weight", action="append", metavar="SIGNAL=W",
                    help="weight of a signal's squared residuals (default 1; 1/sigma^2 for noise sigma)")
    pf.add_argument("--set", action="append", metavar="NAME=VALUE",
                    help="a fixed constant, initial value or input of every run; repeatable")
    pf.add_argument("--t-end", type=float, default=None,
                    help="end time of the runs [s] (default: the last data time)")
    pf.add_argument("--rtol", type=float, default=_default(fit, "rtol"),
                    help="relative tolerance of the runs (default %(default)g)")
    pf.add_argument("--method", default=_default(fit, "method"),
                    help="integration method: explicit (default), dop853 or stiff")
    pf.add_argument("--formulation", default=None, help=_FORMULATION_HELP)
    pf.add_argument("--plot", metavar=PLOT_FILE, help="also plot data, fitted model and residuals")
    pf.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    pf.set_defaults(func=cmd_fit)
    _add_gradient_parsers(sub)
    pr = sub.add_parser("run", help="run the diagram of an SSP file in the block-diagram runner (in real "
                        "time, with a live scope in the browser)",
                        description="Run the diagram of an SSP file (its FMUs wired as it says; "
                        "mbsfmu.runner.export_ssp writes one) and write the recorded signals as CSV.")
    pr.add_argument("ssp", help="the SSP file (.ssp)")
    pr.add_argument("--t-end", type=float, required=True, help="end time [s]")
    pr.add_argument("--step", type=float, default=None,
                    help="communication step [s] (default: the one stored in the SSP by mbsfmu; required "
                         "for SSPs from other tools)")
    pr.add_argument("--record", action="append", metavar="BLOCK.PORT",
                    help="a signal to record (a block name: all its outputs); repeatable; default every "
                         "output")
    pr.add_argument("--realtime", action="store_true", help="pace the steps to the wall clock")
    pr.add_argument("--rtf", type=float, default=1.0, help="real-time factor with --realtime (default 1)")
    pr.add_argument("--algebraic-loops", choices=("error", "iterate"), default="error",
                    help="refuse algebraic loops (default) or solve them at every step")
    pr.add_argument("--live", action="store_true",
                    help="serve a live scope of the recorded signals on 127.0.0.1 while the run lasts "
                         "(its address is printed)")
    pr.add_argument("--port", type=int, default=None, help="the live scope's port (implies --live; "
                    "default: one the system chooses)")
    pr.add_argument("--window", type=float, default=None,
                    help="the live scope's rolling window of simulated time [s] (default 10)")
    pr.add_argument("--signal", action="append", metavar="BLOCK.PORT",
                    help="a signal the live scope plots (repeatable; default every recorded one)")
    pr.add_argument("--out", required=True, help="CSV file to write")
    pr.add_argument("--plot", metavar=PLOT_FILE, help="also write a plot of the recorded signals")
    pr.add_argument("--animate", metavar="FILE.html",
                    help="also draw the plant (an FMU built from a model) in a 3D viewer page")
    pr.add_argument("--block", default=None, help="the FMU block --animate draws (default: the one that "
                    "carries a view)")
    _add_viewer_options(pr)
    pr.set_defaults(func=cmd_run)
    pa = sub.add_parser("animate", help="animate a model or a result CSV as HTML or GIF (3D stick figure)")
    pa.add_argument("source", help="model file (.py, simulated first) or result CSV of mbsfmu simulate --out")
    pa.add_argument("--model", help="the model file of a result CSV")
    pa.add_argument("--out", required=True,
                    help="FILE.html (self-contained page with a player) or FILE.gif")
    pa.add_argument("--t-end", type=float, default=None,
                    help=f"end time [s] of the simulation of a model file (default {ANIMATE_T_END:g})")
    pa.add_argument("--dt", type=float, default=0.04,
                    help="output interval [s], one animation frame each (default 0.04: 25 per second)")
    pa.add_argument("--method", default=_DEFAULTS["method"], help="integration method, as for simulate")
    pa.add_argument("--backend", default=_DEFAULTS["backend"], choices=BACKENDS,
                    help="c: the C engine (default where a C compiler is found); numpy: the Python reference")
    pa.add_argument("--set", action="append", metavar="NAME=VALUE",
                    help="constant, initial value or input (a CSV: constants only); repeatable")
    pa.add_argument("--fps", type=float, default=None,
                    help="playback frames per second (default: real time, within 1-30)")
    pa.add_argument("--every", type=int, default=1, help="draw every n-th output sample (default 1)")
    pa.add_argument("--dpi", type=float, default=80, help="image resolution (5 x 5 inch figure; default 80)")
    pa.add_argument("--player", choices=("3d", "images"), default="3d",
                    help="what an .html file holds: the interactive 3D viewer (default) or "
                         "pre-rendered matplotlib images")
    _add_viewer_options(pa)
    pa.set_defaults(func=cmd_animate)
    return p


def _add_viewer_options(parser) -> None:
    """The 3D viewer's options, the same for `animate` and `run --animate`."""
    parser.add_argument("--trace", action="append", default=[], metavar="FRAME",
                        help="the 3D viewer draws this frame's path (repeatable)")
    parser.add_argument("--axes", action="append", default=[], metavar="FRAME",
                        help="the 3D viewer draws this frame's x, y, z axes (repeatable)")
    parser.add_argument("--deformation-scale", type=float, default=1.0, metavar="S",
                        help="draw flexible bodies with their elastic coordinates times S (default 1)")


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as 'mbsfmu: warning: ...' lines on stderr (the stiffness diagnostic, moved
    initial values), without Python's file and line."""
    print(f"mbsfmu: warning: {message}", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    """Run a command; a refused input or a failed run prints 'mbsfmu: error: ...' and returns
    2, Ctrl-C returns 130 and SIGTERM 143, after keeping what was computed (simulate and
    animate: the partial CSV; sweep: the finished rows in its --out file)."""
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings(), _SIGTERM.installed():
            warnings.showwarning = _show_warning
            return args.func(args)
    except MbsError as exc:
        print(f"mbsfmu: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        how, status = stopped_status(exc)
        note = ""
        if args.command in ("sweep", "sobol", "morris") and args.out:
            note = (f"\nmbsfmu: the rows of the runs that finished are in {args.out}; the same command "
                    "runs the others")
        if args.command == "optimize" and args.history:
            note = (f"\nmbsfmu: the evaluations made are in {args.history}; the same command continues "
                    "from them")
        print(f"mbsfmu: {how}{note}", file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(main())
