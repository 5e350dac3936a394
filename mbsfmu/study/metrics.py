"""What a study keeps of each run: named scalar metrics of its signals.

A metric is given as ``name: spec`` with spec one of

- a string ``'KIND(SIGNAL)'`` such as ``'max(x)'`` or ``'final(der(theta))'``,
- a pair ``('KIND', 'SIGNAL')``,
- a function ``f(result) -> float`` of the run's result (a :class:`mbsfmu.Result`, or fmpy's
  structured array for an FMU).

KIND is one of :data:`KINDS`, over the samples s_0..s_n of the signal on the output grid:
final s_n, max, min, mean, RMS sqrt(mean(s_i^2)), and maxabs max |s_i|.  The signal is any name
the result knows: a coordinate, ``der(NAME)``, ``constraint_residual`` (so the largest
constraint residual is ``'max(constraint_residual)'``), or an FMU's variable.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import ParameterError

KINDS = {
    "final": lambda s: s[-1],
    "max": np.max,
    "min": np.min,
    "mean": np.mean,
    "rms": lambda s: np.sqrt(np.mean(np.square(s))),
    "maxabs": lambda s: np.max(np.abs(s)),
}

_EXPR = re.compile(r"^\s*(\w+)\s*\(\s*(.+?)\s*\)\s*$")


class Metric:
    """One named metric: ``Metric('x_max', 'max(x)')(result) -> float``."""

    def __init__(self, name: str, spec):
        self.name = name
        self.function = spec if callable(spec) else None
        self.kind = self.signal = None
        if self.function is None:
            self.kind, self.signal = _parse(name, spec)

    def __call__(self, result) -> float:
        if self.function is not None:
            return float(self.function(result))
        try:
            samples = np.asarray(result[self.signal], dtype=float)
        except (KeyError, ValueError) as exc:
            raise ParameterError(f"metric {self.name!r} = {self.kind}({self.signal}): no signal "
                                 f"{self.signal!r} in the result ({exc})") from None
        return float(KINDS[self.kind](samples))

    def __repr__(self):
        return f"Metric({self.name!r}, {self.function or f'{self.kind}({self.signal})'!r})"


def _parse(name: str, spec) -> tuple[str, str]:
    if isinstance(spec, str):
        m = _EXPR.match(spec)
        if not m:
            raise ParameterError(f"metric {name!r}: {spec!r} is not KIND(SIGNAL) with KIND one of "
                                 f"{', '.join(KINDS)}")
        kind, signal = m.group(1).lower(), m.group(2)
    elif isinstance(spec, (tuple, list)) and len(spec) == 2 and all(isinstance(s, str) for s in spec):
        kind, signal = spec[0].lower(), spec[1]
    else:
        raise ParameterError(f"metric {name!r}: give 'KIND(SIGNAL)', ('KIND', 'SIGNAL') or a function "
                             f"of the result, got {spec!r}")
    if kind not in KINDS:
        raise ParameterError(f"metric {name!r}: unknown kind {kind!r}; use one of {', '.join(KINDS)}")
    return kind, signal


def make_metrics(metrics) -> list[Metric]:
    """The metrics of a study from ``{name: spec}`` (or a list of 'KIND(SIGNAL)' strings, each
    named KIND_SIGNAL)."""
    if metrics is None:
        return []
    if isinstance(metrics, (list, tuple)):
        metrics = {re.sub(r"\W+", "_", str(s)).strip("_"): s for s in metrics}
    out = []
    for name, spec in metrics.items():
        if not isinstance(name, str) or not name:
            raise ParameterError(f"metric names must be non-empty strings, got {name!r}")
        out.append(Metric(name, spec))
    return out
