"""The metrics a gradient can be taken of.

A metric is written ``KIND(SIGNAL)``:

* ``final(S)``: the value of signal S at the end of the run;
* ``integral(S)``: its integral over the run, int_0^T S dt;
* ``mean(S)``: that integral divided by T;
* :func:`least_squares` ``(data, signals, weights)``: sum over the data's times t_k and signals S
  of w_S (S(t_k) - d_k)^2, the distance of the run to measured data;

with S a coordinate, ``der(coordinate)``, a user output (expression, frame kinematics or
reaction) or a constraint's multiplier by its name
(:func:`mbsfmu.simulation.sensitivity_columns.signal_index`), or an expression of the time, the
coordinates, their rates (``der(x)`` or ``Dx``), constants, time parameters and inputs, such as
``integral(k*x**2/2)``: the run's model then gets it as an output of its own
(:func:`expression_model`, a copy: the user's model is not changed).  Each is a differentiable function of
the parameters wherever the solution is.  The kinds of a sweep that are not (``max``, ``min``,
``peak`` of a signal, a settling time, an arbitrary Python function) are refused with the reason
and what to use instead: their derivative jumps where the time of the extremum or of the
crossing moves from one output point to another, so a gradient of them misleads an optimizer.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

import numpy as np

from ..core.errors import ModelError, ParameterError
from ..equations.derive import derive
from ..identification.measured_data import read_data
from ..simulation.sensitivity_columns import signal_index
from ..study.metrics import split_spec

#: the differentiable kinds and what the engine computes for each (ADJOINT_METRICS)
KINDS = {"final": "final", "integral": "integral", "mean": "integral", "least_squares": "least_squares"}
#: kinds of other tools that are not differentiable, and why
NOT_DIFFERENTIABLE = {
    "max": "the time of the maximum jumps from one output point to another as a parameter changes",
    "min": "the time of the minimum jumps from one output point to another as a parameter changes",
    "peak": "the time of the peak jumps from one output point to another as a parameter changes",
    "absmax": "the time of the largest |value| jumps as a parameter changes",
    "settling": "a settling time moves in jumps of the output grid and is flat in between",
    "settling_time": "a settling time moves in jumps of the output grid and is flat in between",
    "rms": "use mean() of an output that is the square of the signal, then take the root yourself",
    "peak_time": "the time of the peak moves in jumps of the output grid and is flat in between",
    "overshoot": "the time of the peak jumps from one output point to another as a parameter changes",
    "rise": "the crossing times of the 10 % and 90 % levels move with the output grid's interpolation",
    "iae": "|reference - x| has a kink wherever the error changes sign; integral((R - x)**2) (the ISE) is "
           "smooth",
    "itae": "|reference - x| has a kink wherever the error changes sign; integral(t*(R - x)**2) is smooth",
    "ise": "write it as integral((R - x)**2) with R the reference, which the engine differentiates",
}


@dataclass(frozen=True)
class Metric:
    """One metric's term: its metric's ``name``, ``kind`` ('final', 'integral', 'mean' or
    'least_squares'), the ``signal`` and its index in the engine's layout (``index``); for a
    least-squares term its ``points`` ((k, 3): time, data, weight).  A least-squares metric of
    several signals is one term per signal, summed."""

    name: str
    kind: str
    signal: str
    index: int
    points: np.ndarray | None = field(default=None, compare=False)
    expression: str | None = None  # an expression the run's model computes as an output

    @property
    def engine_kind(self) -> str:
        return KINDS[self.kind]


@dataclass(frozen=True)
class LeastSquares:
    """The metric sum_k sum_S w_S (S(t_k) - d_{k,S})^2 of :func:`least_squares`."""

    data: object
    signals: tuple
    weights: tuple


def least_squares(data, signals, weights=None) -> LeastSquares:
    """The least-squares distance of a run to measured ``data`` (a CSV path or a DataFrame with a
    ``time`` column and one column per signal, checked like a fit's:
    :mod:`mbsfmu.identification.measured_data`) over ``signals`` (a name or a list), with a
    weight per signal (``weights``: {signal: w} or a list; default 1)."""
    signals = (signals,) if isinstance(signals, str) else tuple(signals)
    if not signals:
        raise ParameterError("least_squares: give at least one signal")
    if weights is None:
        w = (1.0,) * len(signals)
    elif isinstance(weights, dict):
        bad = sorted(set(weights) - set(signals))
        if bad:
            raise ParameterError(f"least_squares: weights of {', '.join(map(repr, bad))}, which are not "
                                 f"among the signals {', '.join(signals)}")
        w = tuple(float(weights.get(s, 1.0)) for s in signals)
    else:
        w = tuple(float(x) for x in weights)
        if len(w) != len(signals):
            raise ParameterError(f"least_squares: {len(w)} weights for {len(signals)} signals")
    if not all(np.isfinite(x) and x > 0 for x in w):
        raise ParameterError(f"least_squares: the weights must be positive numbers, got {w}")
    return LeastSquares(data, signals, w)


def parse_metrics(system, metrics, t_end=None) -> list[Metric]:
    """``metrics``: ``{name: 'KIND(SIGNAL)' or least_squares(...)}`` or a list of
    ``'KIND(SIGNAL)'`` (named by themselves); ParameterError for anything else, with the reason.
    Data times must lie in [0, t_end]."""
    if isinstance(metrics, str):
        metrics = [metrics]
    if isinstance(metrics, (list, tuple)):
        metrics = {m if isinstance(m, str) else repr(m): m for m in metrics}
    if not isinstance(metrics, dict) or not metrics:
        raise ParameterError("metrics: give {name: 'final(x)'} or a list such as "
                             "['final(x)', 'integral(der(x))']")
    out = []
    for name, spec in metrics.items():
        if isinstance(spec, LeastSquares):
            out += _least_squares_terms(system, str(name), spec, t_end)
        else:
            out.append(_metric(system, name, spec))
    return out


def _least_squares_terms(system, name, spec: LeastSquares, t_end) -> list[Metric]:
    data = read_data(spec.data, list(spec.signals), t_end)
    terms = []
    for j, (signal, w) in enumerate(zip(spec.signals, spec.weights)):
        points = np.column_stack((data.times, data.values[:, j], np.full(len(data.times), w)))
        terms.append(Metric(name, "least_squares", signal, signal_index(system, signal), points))
    return terms


def _metric(system, name, spec) -> Metric:
    where = f"metric {name!r}"
    if callable(spec):
        raise ParameterError(f"{where}: a Python function cannot be differentiated by the engine; "
                             "write it as final(SIGNAL), integral(SIGNAL) or mean(SIGNAL), with an "
                             "output of the model (System.output) for an expression")
    if not isinstance(spec, str):
        raise ParameterError(f"{where}: {spec!r} is not a metric; write final(SIGNAL), integral(SIGNAL) "
                             "or mean(SIGNAL)")
    split = split_spec(spec)
    if split is None:
        raise ParameterError(f"{where}: {spec!r} is not of the form KIND(SIGNAL); write "
                             f"final({spec.strip()}) for its final value or integral(...) / mean(...)")
    kind, (signal, *arguments) = split
    if kind in NOT_DIFFERENTIABLE:
        raise ParameterError(f"{where}: {kind}({signal}) is not differentiable ({NOT_DIFFERENTIABLE[kind]}); "
                             "use final(), integral() or mean() of a signal, or see which parameters "
                             "matter for it with mbsfmu.study.sobol_indices")
    if kind not in KINDS:
        raise ParameterError(f"{where}: unknown kind {kind!r} in {spec!r}; the differentiable kinds are "
                             f"{', '.join(KINDS)}")
    if arguments:
        raise ParameterError(f"{where}: {spec!r}: {kind}() takes one signal and no arguments (from=, "
                             "reference=, bound= are a sweep's)")
    try:
        return Metric(str(name), kind, signal, signal_index(system, signal))
    except ParameterError:
        if _NAME.match(signal):  # a name, not an expression: the unknown signal it is
            raise
    expression = _DER.sub(lambda m: "D" + m.group(1), signal)
    try:
        system.expr(expression, f"{where}: {signal!r}")
    except ModelError as exc:
        raise ParameterError(f"{exc} (a metric reads a signal -- a coordinate, der(coordinate), an output, "
                             "a constraint -- or an expression of them)") from None
    return Metric(str(name), kind, signal, -1, expression=expression)


_NAME = re.compile(r"^(der\()?[A-Za-z_][\w.]*\)?$")
_DER = re.compile(r"der\(\s*([A-Za-z_]\w*)\s*\)")


def expression_model(system, terms):
    """(the model a run of ``terms`` needs, the terms on it): ``system`` itself, or where a term
    is an expression a copy with one output per such term (``metric.<name>``), derived and kept
    once per derivation of ``system`` (so repeated gradients, an optimizer's, build it once)."""
    wanted = tuple((m.name, m.expression) for m in terms if m.expression is not None)
    if not wanted:
        return system, terms

    def build(_eqs):
        extended = copy.deepcopy(system)
        for name, text in wanted:
            extended.output(f"metric.{name}", text, f"the expression of metric {name!r}")
        return extended

    extended = derive(system).derived(("metric_outputs", wanted), build)
    out = [m if m.expression is None else
           Metric(m.name, m.kind, f"metric.{m.name}", signal_index(extended, f"metric.{m.name}"), m.points)
           for m in terms]
    return extended, out
