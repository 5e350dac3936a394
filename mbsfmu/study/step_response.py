"""Measures of a step response on a run's output grid: settling time, overshoot, rise time,
peak, and the integrals of the error IAE, ISE, ITAE.

Every measure looks at the samples s_i at the output times t_i from a start time t0 on (the
time of the step; the samples are cut there, with s(t0) linearly interpolated when t0 falls
between two output times, so the window starts with the sample (t0, s(t0))), and at a target
F, the value the signal is asked to reach: a reference's final value, or else the signal's own
final value s_n.  The step is Δ = F - s(t0); times are counted from t0.

* **settling time**: with the band b = ``band`` · |Δ| (when Δ = 0: ``band`` times the largest
  deviation max |s_i - F| in the window), the time from t0 at which the signal enters the band
  |s - F| <= b for the last time, linearly interpolated between the last sample outside the
  band and the next one (0 for a signal that never leaves it).  The signal has **not settled**
  (nan) when it is outside the band at any sample of the last ``hold`` seconds of the window
  (``hold`` = 0: the last sample only).
* **overshoot**: 100 · max(0, max_i sign(Δ)(s_i - F)) / |Δ|, percent of the step beyond F.
* **rise time**: the time between the first crossings of s(t0) + ``low``·Δ and s(t0) +
  ``high``·Δ (10 % and 90 % by default), each linearly interpolated between samples (nan when
  the signal never reaches the ``high`` level).
* **peak**: the extreme value of the window in the direction of the step (its max for Δ >= 0,
  its min for Δ < 0) and its time from t0 (the first sample where it is reached).
* **IAE, ISE, ITAE** of the error e = r - s (r a reference signal or a constant): the integrals
  ∫|e| dt, ∫e² dt and ∫(t - t0)|e| dt over [t0, t_n] by the trapezoidal rule on the output
  grid, sum_i (t_{i+1} - t_i)(g_i + g_{i+1})/2 of the integrand's samples g_i.

The time of the reference's step (:func:`reference_step_time`) is the last output time at which
the reference still differed from its final value: t_{k-1} with k the first index from which
every sample equals r_n (to 1e-12 of the reference's range).  A reference constant over the run
has no step (t0 = t_0), and so has one still moving in its last sample interval (no final
value held).
"""

from __future__ import annotations

import numpy as np

#: relative tolerance within which a reference sample equals the reference's final value
SAME = 1e-12


def window(t, s, t0: float) -> tuple[np.ndarray, np.ndarray]:
    """The samples from ``t0`` on: ``(t, s)`` for t_i >= t0, starting with (t0, s(t0)) where s(t0)
    is linearly interpolated if t0 is not an output time."""
    t = np.asarray(t, dtype=float)
    s = np.asarray(s, dtype=float)
    k = int(np.searchsorted(t, t0, side="left"))
    if k < len(t) and t[k] == t0:
        return t[k:], s[k:]
    if k == 0:  # t0 before the first output time: the whole run
        return t, s
    s0 = s[k - 1] + (s[k] - s[k - 1]) * (t0 - t[k - 1]) / (t[k] - t[k - 1])
    return np.concatenate(([t0], t[k:])), np.concatenate(([s0], s[k:]))


def reference_step_time(t, r) -> float:
    """The time of the last step of the reference samples ``r`` (module docstring)."""
    t = np.asarray(t, dtype=float)
    r = np.asarray(r, dtype=float)
    tol = SAME * max(1.0, float(np.max(np.abs(r))))
    differs = np.nonzero(np.abs(r - r[-1]) > tol)[0]
    if differs.size == 0 or differs[-1] == len(r) - 2:  # no step, or one in the last interval
        return float(t[0])
    return float(t[differs[-1]])


def _crossing(t, d, level: float) -> float:
    """The first time at which ``d`` reaches ``level`` (d_0 < level), linearly interpolated; nan
    if it never does."""
    above = np.nonzero(d >= level)[0]
    if above.size == 0:
        return float("nan")
    k = int(above[0])
    if k == 0:
        return float(t[0])
    return float(t[k - 1] + (t[k] - t[k - 1]) * (level - d[k - 1]) / (d[k] - d[k - 1]))


def settling_time(t, s, band: float = 0.02, target: float | None = None, hold: float = 0.0) -> float:
    """The settling time of the window ``(t, s)`` (module docstring), nan if not settled; the
    window's first sample is its start t0 and ``target`` is F (default: the last sample)."""
    t = np.asarray(t, dtype=float)
    s = np.asarray(s, dtype=float)
    final = s[-1] if target is None else float(target)
    dev = np.abs(s - final)
    step = abs(final - s[0])
    b = band * (step if step > 0 else dev.max())
    outside = np.nonzero(dev > b)[0]
    if outside.size == 0:
        return 0.0
    k = int(outside[-1])
    if k == len(t) - 1 or t[k] > t[-1] - hold:
        return float("nan")
    # dev falls from above b (at k) to at most b (at k + 1): where it crosses b
    cross = t[k] + (t[k + 1] - t[k]) * (dev[k] - b) / (dev[k] - dev[k + 1])
    return float(cross - t[0])


def _direction(s, final: float) -> tuple[float, float]:
    """(sign of the step, its size |Δ|) of a window starting at s_0 and asked to reach ``final``."""
    step = final - s[0]
    return (1.0 if step >= 0 else -1.0), abs(step)


def overshoot(s, final: float) -> float:
    """Percent of the step |Δ| by which the window ``s`` goes beyond ``final`` (nan for Δ = 0)."""
    sign, size = _direction(s, final)
    if size == 0:
        return float("nan")
    return float(100.0 * max(0.0, float(np.max(sign * (s - final)))) / size)


def rise_time(t, s, final: float, low: float = 0.1, high: float = 0.9) -> float:
    """The time from the ``low`` to the ``high`` fraction of the step (module docstring)."""
    sign, size = _direction(s, final)
    if size == 0:
        return float("nan")
    d = sign * (s - s[0]) / size  # 0 at the start, 1 at the target
    return _crossing(t, d, high) - _crossing(t, d, low)


def peak(t, s, final: float) -> tuple[float, float]:
    """(value, time from t0) of the window's extreme in the direction of the step."""
    sign, _ = _direction(s, final)
    k = int(np.argmax(sign * s))
    return float(s[k]), float(t[k] - t[0])


def trapezoid(t, g) -> float:
    """sum_i (t_{i+1} - t_i)(g_i + g_{i+1})/2."""
    return float(np.sum(np.diff(t) * (g[1:] + g[:-1]) / 2.0))


def error_integrals(t, e) -> dict[str, float]:
    """IAE, ISE and ITAE of the error samples ``e`` on the window's times ``t`` (t_0 = t0)."""
    a = np.abs(e)
    return {"iae": trapezoid(t, a), "ise": trapezoid(t, e * e), "itae": trapezoid(t, (t - t[0]) * a)}
