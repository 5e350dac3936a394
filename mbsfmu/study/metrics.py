"""What a study keeps of each run: named scalar metrics of its signals, and a verdict on each.

A metric is given as ``name: spec`` with spec one of

- a string ``'KIND(SIGNAL)'`` or ``'KIND(SIGNAL, ARG=VALUE, ...)'`` such as ``'max(x)'``,
  ``'final(der(theta))'`` or ``'settling(x, from=2.0, reference=x_ref)'``,
- a pair ``('KIND', 'SIGNAL')``,
- a function ``f(result) -> float`` of the run's result (a :class:`mbsfmu.Result`, or fmpy's
  structured array for an FMU).

- for a diagram target, a metric of its linearized closed loop (:data:`LINEAR_KINDS`, no
  signal): ``'largest_real_part'`` (max Re s of the closed-loop poles, 1/s; a discrete loop's
  poles z mapped by s = ln|z|/T + i arg(z)/T, so that < 0 is stable in either domain),
  ``'stable'`` (1 or 0), ``'min_damping'`` (the least damping ratio ζ = -Re s/|s| of the poles;
  nan-free: a pole at s = 0 counts as ζ = 0), ``'spectral_radius'`` (max |z|, discrete loops),
  taken from ``mbsfmu.linearize(diagram, **linearize)`` of the run's diagram.

KIND is one of :data:`KINDS` over the samples s_0..s_n of the signal on the output grid (final
s_n, max, min, mean, RMS sqrt(mean(s_i^2)), maxabs max |s_i|), or a measure of a step response
of :data:`STEP_KINDS` (:mod:`.step_response` states the mathematics): ``settling`` (time),
``overshoot`` (percent of the step), ``rise`` (time from 10 % to 90 % of the step), ``peak`` and
``peak_time``, and the integrals of the error e = reference - signal ``iae``, ``ise``, ``itae``
(trapezoidal rule on the output grid).  The signal is any name the result knows: a coordinate,
``der(NAME)``, ``constraint_residual``, or an FMU's variable.

Arguments (after the signal, ``name=value``; a percentage such as ``5%`` is a fraction 0.05):

- ``bound=B`` (every kind): the run **diverged** when the signal leaves |s| <= B anywhere; a
  signal that is not finite (inf, nan) diverged whatever the bound;
- ``from=T`` (step kinds): the time the step is counted from, in seconds.  ``from`` is the
  word of the control literature (settling time *from* the step); the metric string is read by
  this module, not by Python, so the keyword is no obstacle.  Without it, the last step of the
  ``reference`` signal (:func:`.step_response.reference_step_time`), or the run's first time;
- ``reference=R`` (step kinds; required by iae, ise, itae): a signal name or a number; its
  final value is the target F the signal must reach (default: the signal's own final value);
- ``band=`` (settling; also as the second positional argument, ``settling(x, 5%)``): the half
  width of the band around F as a fraction of the step |F - s(t0)|, 2 % unless given;
- ``hold=`` (settling): the signal must stay in its band over the last ``hold`` seconds of the
  run, else it has **not settled** (nan).  Default: 0 with a reference (the last sample must be
  in the band), else 10 % of the time from t0 to the end (the target is then the last sample,
  which is always in its own band, so a signal still moving at the end is caught this way);
- ``low=``, ``high=`` (rise): the fractions of the step between which the rise is timed
  (10 % and 90 %).

Each metric's verdict (:meth:`Metric.evaluate`) is ``ok``, ``unstable`` (a metric of the
linearized closed loop, whose value is kept, when that loop is unstable: a prediction, not yet
a run), ``not settled`` (a settling or rise time that is nan: the signal is outside its band at
the end, or never reaches ``high``) or ``diverged`` (the value nan); a run's row takes the worst
verdict of its metrics as its status (in that order), with the reasons as its message, and
keeps every other metric's value.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ..core.errors import ParameterError
from . import step_response

KINDS = {
    "final": lambda s: s[-1],
    "max": np.max,
    "min": np.min,
    "mean": np.mean,
    "rms": lambda s: np.sqrt(np.mean(np.square(s))),
    "maxabs": lambda s: np.max(np.abs(s)),
}
#: the measures of a step response, and the arguments each takes besides bound
STEP_KINDS = {
    "settling": ("from", "reference", "band", "hold"),
    "overshoot": ("from", "reference"),
    "rise": ("from", "reference", "low", "high"),
    "peak": ("from", "reference"),
    "peak_time": ("from", "reference"),
    "iae": ("from", "reference"),
    "ise": ("from", "reference"),
    "itae": ("from", "reference"),
}
#: the metrics of a diagram's linearized closed loop (an analysis ClosedLoop), see the docstring
LINEAR_KINDS = {
    "largest_real_part": lambda loop: loop.largest_real_part,
    "stable": lambda loop: float(loop.stable),
    "min_damping": lambda loop: float(np.min(np.nan_to_num(loop.damping, nan=0.0))) if loop.A.size
    else math.inf,
    "spectral_radius": lambda loop: loop.spectral_radius,
}
#: kinds that need the result's time as well as the signal
TIMED = set(STEP_KINDS)
#: the kinds whose reference is required (the error e = reference - signal)
ERROR_KINDS = ("iae", "ise", "itae")
SETTLING_BAND = 0.02
#: the arguments' defaults (None: see the module docstring)
DEFAULTS = {"from": None, "reference": None, "band": SETTLING_BAND, "hold": None, "low": 0.1, "high": 0.9,
            "bound": None}
#: the fraction of the window a settling without a reference must hold its band at the end
HOLD_FRACTION = 0.1

#: a row's status from its metrics' verdicts, best to worst ('failed': the run gave no result)
VERDICTS = ("ok", "unstable", "not settled", "diverged")

_EXPR = re.compile(r"^\s*(\w+)\s*\((.+)\)\s*$", re.S)
_BARE = re.compile(r"^\s*(\w+)\s*(?:\(\s*\))?\s*$")
_NUMBER = re.compile(r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(%?)$")
_NAME = re.compile(r"^[A-Za-z_][\w.]*(\([A-Za-z_][\w.]*\))?$")


@dataclass(frozen=True)
class Verdict:
    """A metric's value on one run, ``status`` one of :data:`VERDICTS`, and ``note`` the reason
    when it is not 'ok'."""

    value: float
    status: str = "ok"
    note: str = ""


def unstable_pole(loop) -> str:
    """The pole of ``loop`` (an analysis ClosedLoop) farthest into the unstable region, said in
    its plane (and in the s-plane for a discrete loop)."""
    s = loop.s_poles
    k = int(np.argmax(s.real))
    if loop.domain == "discrete":
        z = loop.poles[k]
        return (f"pole z = {z:.6g}, |z| = {abs(z):.6g} > 1; s = ln(z)/T = {s[k]:.6g} 1/s "
                f"at T = {loop.dt:g} s")
    return f"pole s = {s[k]:.6g} 1/s"


def settling_time(t, s, band: float = SETTLING_BAND) -> float:
    """The settling time of samples ``s`` at times ``t`` from t_0, to the signal's final value
    (:func:`.step_response.settling_time`)."""
    return step_response.settling_time(t, s, band)


class Metric:
    """One named metric: ``Metric('x_max', 'max(x)')(result) -> float``; :meth:`evaluate` gives
    the value with its verdict."""

    def __init__(self, name: str, spec):
        self.name = name
        self.function = spec if callable(spec) else None
        self.kind = self.signal = None
        self.args = dict(DEFAULTS)
        self.given: tuple = ()
        if self.function is None:
            self.kind, self.signal, given = _parse(name, spec)
            self.args.update(given)
            self.given = tuple(k for k in DEFAULTS if k in given)

    @property
    def linear(self) -> bool:
        """Whether the metric is one of the linearized closed loop (:data:`LINEAR_KINDS`)."""
        return self.kind in LINEAR_KINDS

    @property
    def band(self) -> float:
        return self.args["band"]

    @property
    def signals(self) -> list[str]:
        """The result's signals the metric reads (its signal, and a reference given by name)."""
        ref = self.args["reference"]
        return [s for s in (self.signal, ref if isinstance(ref, str) else None) if s is not None]

    def check_time(self, t_end: float) -> None:
        """A ``from`` after the run's end ``t_end`` is a ParameterError."""
        start = self.args["from"]
        if start is not None and t_end is not None and start > float(t_end):
            raise ParameterError(f"metric {self.name!r} = {self.text}: from={start!r} lies beyond the "
                                 f"end of the run (t_end={float(t_end)!r})")

    def __call__(self, result) -> float:
        return self.evaluate(result).value

    def evaluate(self, result) -> Verdict:
        """The value of the metric on ``result``, and its verdict (module docstring)."""
        if self.function is not None:
            return Verdict(float(self.function(result)))
        if self.linear:
            loop = getattr(result, "loop", None)
            if loop is None:
                raise ParameterError(f"metric {self.name!r} = {self.text}: the run has no linearized closed "
                                     "loop (a metric of a diagram target)")
            value = float(LINEAR_KINDS[self.kind](loop))
            if loop.stable:
                return Verdict(value)
            return Verdict(value, "unstable", f"metric {self.name!r}: the linearized closed loop is unstable "
                                              f"({unstable_pole(loop)})")
        s = self._samples(result, self.signal)
        t = np.asarray(result["time"], dtype=float) if self.kind in TIMED else None
        broke = self.divergence(result, s, t)
        if broke is not None:
            return broke
        if self.kind in KINDS:
            return Verdict(float(KINDS[self.kind](s)))
        return self._step(result, t, s)

    def divergence(self, result, s=None, t=None) -> Verdict | None:
        """The 'diverged' verdict when the signal is not finite or leaves |s| <= bound on
        ``result`` (a whole run or the part a failed run reached), else None."""
        if self.signal is None:
            return None
        s = self._samples(result, self.signal) if s is None else s
        if s.size == 0:
            return None
        bound = self.args["bound"]
        bad = ~np.isfinite(s)
        why = "is not finite"
        if not bad.any() and bound is not None:
            bad = np.abs(s) > bound
            why = f"leaves its bound |{self.signal}| <= {bound!r}"
        if not bad.any():
            return None
        k = int(np.argmax(bad))
        t = np.asarray(result["time"], dtype=float) if t is None else t
        return Verdict(float("nan"), "diverged",
                       f"metric {self.name!r}: {self.signal} {why} at t={t[k]:.6g} ({float(s[k])!r})")

    def _samples(self, result, signal) -> np.ndarray:
        try:
            return np.asarray(result[signal], dtype=float)
        except (KeyError, ValueError) as exc:
            raise ParameterError(f"metric {self.name!r} = {self.text}: no signal {signal!r} in the result "
                                 f"({exc})") from None

    def _step(self, result, t, s) -> Verdict:
        ref = self.args["reference"]
        r = self._samples(result, ref) if isinstance(ref, str) else None
        t0 = self.args["from"]
        if t0 is None:
            t0 = step_response.reference_step_time(t, r) if r is not None else float(t[0])
        self.check_time(t[-1])
        tw, sw = step_response.window(t, s, t0)
        final = float(r[-1]) if r is not None else (float(ref) if ref is not None else float(sw[-1]))
        kind = self.kind
        if kind in ERROR_KINDS:
            e = (step_response.window(t, r, t0)[1] if r is not None else float(ref)) - sw
            return Verdict(step_response.error_integrals(tw, e)[kind])
        if kind == "overshoot":
            return Verdict(step_response.overshoot(sw, final))
        if kind in ("peak", "peak_time"):
            return Verdict(step_response.peak(tw, sw, final)[kind == "peak_time"])
        if kind == "rise":
            low, high = self.args["low"], self.args["high"]
            v = step_response.rise_time(tw, sw, final, low, high)
            if math.isnan(v) and sw[0] != final:
                return Verdict(v, "not settled", f"metric {self.name!r}: {self.signal} never reaches "
                                                 f"{high:.4g} of its step to {final!r} after t={t0:.6g}")
            return Verdict(v)
        hold = self.args["hold"]
        if hold is None:
            hold = 0.0 if ref is not None else HOLD_FRACTION * (tw[-1] - tw[0])
        v = step_response.settling_time(tw, sw, self.band, final, hold)
        if math.isnan(v):
            when = (f"at the end (t={tw[-1]:.6g})" if hold == 0 else
                    f"within the last {hold:.6g} s before t={tw[-1]:.6g}")
            return Verdict(v, "not settled",
                           f"metric {self.name!r}: {self.signal} is still outside its "
                           f"{100 * self.band:.4g} % band around {final!r} {when} (counted from t={t0:.6g})")
        return Verdict(v)

    @property
    def text(self) -> str:
        """The definition of a KIND(SIGNAL) metric: ``'max(theta)'``, ``'settling(x, 0.02)'`` (a
        settling time always with its band), then the arguments given, in a fixed order."""
        if self.function is not None:
            return getattr(self.function, "__qualname__", repr(self.function))
        if self.linear:
            return self.kind
        parts = [self.signal]
        if self.kind == "settling":
            parts.append(repr(self.band))
        parts += [f"{k}={self.args[k]}" if isinstance(self.args[k], str) else f"{k}={self.args[k]!r}"
                  for k in self.given if k != "band"]
        return f"{self.kind}({', '.join(parts)})"

    def __repr__(self):
        return f"Metric({self.name!r}, {self.function or self.text!r})"


def worst(verdicts) -> str:
    """The row status of metric verdicts: the worst of :data:`VERDICTS` among them."""
    return max((v.status for v in verdicts), key=VERDICTS.index, default="ok")


def _parse(name: str, spec) -> tuple[str, str, dict]:
    """(kind, signal, {argument: value given}) of a metric's spec."""
    known = ", ".join([*KINDS, *STEP_KINDS])
    bare = _BARE.match(spec) if isinstance(spec, str) else None
    if bare is not None and bare.group(1).lower() in LINEAR_KINDS:
        return bare.group(1).lower(), None, {}
    if isinstance(spec, str):
        split = split_spec(spec)
        if split is None:
            raise ParameterError(f"metric {name!r}: {spec!r} is not KIND(SIGNAL) with KIND one of {known}, "
                                 f"nor a metric of the linearized closed loop ({', '.join(LINEAR_KINDS)})")
        kind, (signal, *rest) = split
    elif isinstance(spec, (tuple, list)) and len(spec) == 2 and all(isinstance(s, str) for s in spec):
        kind, signal, rest = spec[0].lower(), spec[1].strip(), []
    else:
        raise ParameterError(f"metric {name!r}: give 'KIND(SIGNAL)', ('KIND', 'SIGNAL') or a function "
                             f"of the result, got {spec!r}")
    if kind not in KINDS and kind not in STEP_KINDS:
        raise ParameterError(f"metric {name!r}: unknown kind {kind!r}; use one of {known}")
    allowed = (*STEP_KINDS.get(kind, ()), "bound")
    given = {}
    for k, arg in enumerate(rest):
        key, eq, value = arg.partition("=")
        key, value = key.strip(), value.strip()
        if not eq:
            if kind != "settling" or k != 0:
                raise ParameterError(f"metric {name!r}: {arg!r} in {spec!r} is not NAME=VALUE (arguments "
                                     f"of {kind}: {', '.join(allowed)})")
            key, value = "band", arg
        if key not in allowed:
            raise ParameterError(f"metric {name!r}: {kind}() has no argument {key!r} (it takes: "
                                 f"{', '.join(allowed)})")
        if key in given:
            raise ParameterError(f"metric {name!r}: argument {key!r} given twice in {spec!r}")
        given[key] = _value(name, kind, key, value)
    if kind in ERROR_KINDS and "reference" not in given:
        raise ParameterError(f"metric {name!r}: {kind}({signal}) needs reference=NAME (a signal) or "
                             f"reference=NUMBER: the error is reference - {signal}")
    if "low" in given or "high" in given:
        low, high = given.get("low", DEFAULTS["low"]), given.get("high", DEFAULTS["high"])
        if not low < high:
            raise ParameterError(f"metric {name!r}: rise from low={low!r} to high={high!r}: low must be "
                                 "below high")
    return kind, signal, given


def split_spec(text: str) -> tuple[str, list[str]] | None:
    """``'KIND(SIGNAL, ARG=VALUE, ...)'`` as (kind in lower case, [SIGNAL, 'ARG=VALUE', ...]), the
    parts stripped and commas inside nested parentheses (``der(x)``, an expression) kept; None
    for a text of another form.  The one reader of metric strings (a sweep's and a gradient's)."""
    m = _EXPR.match(text)
    if m is None:
        return None
    return m.group(1).lower(), _split(m.group(2))


def _split(inside: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in inside:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    return [*parts, current.strip()]


def _value(name: str, kind: str, key: str, text: str):
    """An argument's value, checked: a fraction in (0, 1) for band, low, high; seconds >= 0 for
    from and hold; a positive bound; a signal name or a finite number for reference."""
    m = _NUMBER.match(text)
    if key == "reference" and m is None and _NAME.match(text):
        return text
    number = None if m is None else float(m.group(1)) / (100 if m.group(2) else 1)
    if number is None or not math.isfinite(number) or (m.group(2) and key not in ("band", "low", "high")):
        what = "a signal name or a number" if key == "reference" else "a number"
        raise ParameterError(f"metric {name!r}: {kind}(..., {key}={text}): {key} must be {what}")
    if key == "band" and not 0 < number < 1:
        raise ParameterError(f"metric {name!r}: the settling band {text} must lie between 0 and 1 "
                             "(or 0 % and 100 %)")
    if key in ("low", "high") and not 0 < number < 1:
        raise ParameterError(f"metric {name!r}: {key}={text} must lie between 0 and 1 (or 0 % and 100 %)")
    if key in ("from", "hold") and number < 0:
        raise ParameterError(f"metric {name!r}: {key}={text} must be a time >= 0 s")
    if key == "bound" and number <= 0:
        raise ParameterError(f"metric {name!r}: bound={text} must be positive (the run diverged where "
                             "|signal| > bound)")
    return number


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
