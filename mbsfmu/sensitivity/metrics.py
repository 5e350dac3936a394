"""The metrics a gradient can be taken of.

A metric is written ``KIND(SIGNAL)``:

* ``final(S)``: the value of signal S at the end of the run;
* ``integral(S)``: its integral over the run, int_0^T S dt;
* ``mean(S)``: that integral divided by T;

with S a coordinate, ``der(coordinate)``, a user output (expression, frame kinematics or
reaction) or a constraint's multiplier by its name
(:func:`mbsfmu.simulation.sensitivity_columns.signal_index`).  Each is a differentiable function of
the parameters wherever the solution is.  The kinds of a sweep that are not (``max``, ``min``,
``peak`` of a signal, a settling time, an arbitrary Python function) are refused with the reason
and what to use instead: their derivative jumps where the time of the extremum or of the
crossing moves from one output point to another, so a gradient of them misleads an optimizer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.errors import ParameterError
from ..simulation.sensitivity_columns import signal_index

#: the differentiable kinds and what the engine computes for each (ADJOINT_METRICS)
KINDS = {"final": "final", "integral": "integral", "mean": "integral"}
#: kinds of other tools that are not differentiable, and why
NOT_DIFFERENTIABLE = {
    "max": "the time of the maximum jumps from one output point to another as a parameter changes",
    "min": "the time of the minimum jumps from one output point to another as a parameter changes",
    "peak": "the time of the peak jumps from one output point to another as a parameter changes",
    "absmax": "the time of the largest |value| jumps as a parameter changes",
    "settling": "a settling time moves in jumps of the output grid and is flat in between",
    "settling_time": "a settling time moves in jumps of the output grid and is flat in between",
    "rms": "use mean() of an output that is the square of the signal, then take the root yourself",
}
_FORM = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.+)\)\s*$")


@dataclass(frozen=True)
class Metric:
    """One metric: its ``name``, ``kind`` ('final', 'integral' or 'mean'), the ``signal`` and its
    index in the engine's layout (``index``)."""

    name: str
    kind: str
    signal: str
    index: int

    @property
    def engine_kind(self) -> str:
        return KINDS[self.kind]


def parse_metrics(system, metrics) -> list[Metric]:
    """``metrics``: ``{name: 'KIND(SIGNAL)'}`` or a list of ``'KIND(SIGNAL)'`` (named by
    themselves); ParameterError for anything else, with the reason."""
    if isinstance(metrics, str):
        metrics = [metrics]
    if isinstance(metrics, (list, tuple)):
        metrics = {m if isinstance(m, str) else repr(m): m for m in metrics}
    if not isinstance(metrics, dict) or not metrics:
        raise ParameterError("metrics: give {name: 'final(x)'} or a list such as "
                             "['final(x)', 'integral(der(x))']")
    return [_metric(system, name, spec) for name, spec in metrics.items()]


def _metric(system, name, spec) -> Metric:
    where = f"metric {name!r}"
    if callable(spec):
        raise ParameterError(f"{where}: a Python function cannot be differentiated by the engine; "
                             "write it as final(SIGNAL), integral(SIGNAL) or mean(SIGNAL), with an "
                             "output of the model (System.output) for an expression")
    if not isinstance(spec, str):
        raise ParameterError(f"{where}: {spec!r} is not a metric; write final(SIGNAL), integral(SIGNAL) "
                             "or mean(SIGNAL)")
    m = _FORM.match(spec)
    if m is None:
        raise ParameterError(f"{where}: {spec!r} is not of the form KIND(SIGNAL); write "
                             f"final({spec.strip()}) for its final value or integral(...) / mean(...)")
    kind, signal = m.group(1).lower(), m.group(2).strip()
    if kind in NOT_DIFFERENTIABLE:
        raise ParameterError(f"{where}: {kind}({signal}) is not differentiable ({NOT_DIFFERENTIABLE[kind]}); "
                             "use final(), integral() or mean() of a signal, or see which parameters "
                             "matter for it with mbsfmu.study.sobol_indices")
    if kind not in KINDS:
        raise ParameterError(f"{where}: unknown kind {kind!r} in {spec!r}; the differentiable kinds are "
                             f"{', '.join(KINDS)}")
    return Metric(str(name), kind, signal, signal_index(system, signal))
