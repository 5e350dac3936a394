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

``'settling(SIGNAL)'`` or ``'settling(SIGNAL, 5%)'`` (band 2 % unless given, also as a fraction
``0.05``) is the settling time: the first output time t_k from which on every sample stays
within the band |s_i - s_n| <= b for i >= k, with b the fraction of the step |s_n - s_0| (of
the largest deviation max |s_i - s_n| when the signal ends where it started).  A signal that
never leaves the band settles at t_0; one still moving at the end settles at t_n.
"""

from __future__ import annotations

import re

import numpy as np

from ..core.errors import ParameterError

KINDS = {
    "final": lambda s: s[-1],
    "max": np.max,
    "min": np.min,
    "mean": np.mean,
    "rms": lambda s: np.sqrt(np.mean(np.square(s))),
    "maxabs": lambda s: np.max(np.abs(s)),
}

#: kinds that need the result's time as well as the signal
TIMED = {"settling"}
SETTLING_BAND = 0.02

_EXPR = re.compile(r"^\s*(\w+)\s*\(\s*(.+?)\s*\)\s*$")
_BAND = re.compile(r"^(.*\S)\s*,\s*([0-9.eE+-]+)\s*(%?)$")


def settling_time(t, s, band: float = SETTLING_BAND) -> float:
    """The settling time of samples ``s`` at times ``t`` (module docstring)."""
    t = np.asarray(t, dtype=float)
    s = np.asarray(s, dtype=float)
    dev = np.abs(s - s[-1])
    step = abs(s[-1] - s[0])
    b = band * (step if step > 0 else dev.max())
    outside = np.nonzero(dev > b)[0]
    if outside.size == 0:
        return float(t[0])
    return float(t[min(outside[-1] + 1, len(t) - 1)])


class Metric:
    """One named metric: ``Metric('x_max', 'max(x)')(result) -> float``."""

    def __init__(self, name: str, spec):
        self.name = name
        self.function = spec if callable(spec) else None
        self.kind = self.signal = None
        self.band = SETTLING_BAND
        if self.function is None:
            self.kind, self.signal, band = _parse(name, spec)
            if band is not None:
                self.band = band

    def __call__(self, result) -> float:
        if self.function is not None:
            return float(self.function(result))
        try:
            samples = np.asarray(result[self.signal], dtype=float)
        except (KeyError, ValueError) as exc:
            raise ParameterError(f"metric {self.name!r} = {self.kind}({self.signal}): no signal "
                                 f"{self.signal!r} in the result ({exc})") from None
        if self.kind == "settling":
            return settling_time(result["time"], samples, self.band)
        return float(KINDS[self.kind](samples))

    @property
    def text(self) -> str:
        """The definition of a KIND(SIGNAL) metric: ``'max(theta)'``, ``'settling(x, 0.02)'``
        (a settling time always with its band)."""
        if self.function is not None:
            return getattr(self.function, "__qualname__", repr(self.function))
        if self.kind in TIMED:
            return f"{self.kind}({self.signal}, {self.band!r})"
        return f"{self.kind}({self.signal})"

    def __repr__(self):
        return f"Metric({self.name!r}, {self.function or self.text!r})"


def _parse(name: str, spec) -> tuple[str, str, float | None]:
    """(kind, signal, settling band or None) of a metric's spec."""
    known = ", ".join([*KINDS, *sorted(TIMED)])
    if isinstance(spec, str):
        m = _EXPR.match(spec)
        if not m:
            raise ParameterError(f"metric {name!r}: {spec!r} is not KIND(SIGNAL) with KIND one of {known}")
        kind, signal = m.group(1).lower(), m.group(2)
    elif isinstance(spec, (tuple, list)) and len(spec) == 2 and all(isinstance(s, str) for s in spec):
        kind, signal = spec[0].lower(), spec[1]
    else:
        raise ParameterError(f"metric {name!r}: give 'KIND(SIGNAL)', ('KIND', 'SIGNAL') or a function "
                             f"of the result, got {spec!r}")
    if kind not in KINDS and kind not in TIMED:
        raise ParameterError(f"metric {name!r}: unknown kind {kind!r}; use one of {known}")
    band = None
    if kind == "settling":
        m = _BAND.match(signal)
        if m:
            try:
                band = float(m.group(2)) / (100 if m.group(3) else 1)
            except ValueError:
                band = -1.0
            if not (0 < band < 1):
                raise ParameterError(f"metric {name!r}: the settling band {m.group(2)}{m.group(3)} must "
                                     f"lie between 0 and 1 (or 0 % and 100 %)")
            signal = m.group(1)
    return kind, signal, band


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
