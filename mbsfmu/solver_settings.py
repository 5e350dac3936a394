"""The integrator settings every path accepts, with their defaults and sane ranges, written once.

``simulate`` (``rtol``, ``atol``, ``max_step``) and both FMU flavours (the tunable parameters
``solver_rtol``, ``solver_atol``, ``max_internal_step``) check the same ranges; the native FMU
gets them as macros in its generated header (:func:`c_macros`), so C and Python cannot drift.

Why these ranges: below a relative tolerance of about 1e-14 (45 ulp) the error estimate of an
explicit Runge-Kutta method is rounding noise and every step fails; above 0.1 the result has no
correct digit.  An absolute tolerance above 1 (in the units of the coordinates: m, rad, m/s) makes
the error test accept anything and the step size grows until the constraints or the state blow
up.  A step limit below 1e-10 s cannot be honoured within the integrator's step budget for any
useful interval (and 0 means "no limit").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import ParameterError


@dataclass(frozen=True)
class SolverSetting:
    name: str          # FMU parameter name
    api_name: str      # keyword of mbsfmu.simulate
    default: float     # FMU default
    low: float         # smallest allowed value (inclusive)
    high: float        # largest allowed value (inclusive)
    description: str
    zero_means: str = ""  # 0 is allowed besides [low, high] and means this


SOLVER_SETTINGS = (
    SolverSetting("solver_rtol", "rtol", 1e-8, 1e-14, 0.1,
                  "relative tolerance of the internal integrator"),
    SolverSetting("solver_atol", "atol", 1e-9, 0.0, 1.0,
                  "absolute tolerance of the internal integrator"),
    SolverSetting("max_internal_step", "max_step", 0.0, 1e-10, math.inf,
                  "largest internal step [s]; 0 = no limit", zero_means="no limit"),
)

#: FMU parameter name -> setting
BY_NAME = {s.name: s for s in SOLVER_SETTINGS}
#: simulate() keyword -> setting
BY_API_NAME = {s.api_name: s for s in SOLVER_SETTINGS}


def range_text(s: SolverSetting, api: bool = False) -> str:
    """'[1e-14, 0.1]', or for a step limit '0 (no limit) or [1e-10, inf)' (FMU parameter) and
    '[1e-10, inf]' (simulate's keyword, whose default inf means no limit)."""
    hi = ("inf]" if api else "inf)") if math.isinf(s.high) else f"{s.high:g}]"
    text = f"[{s.low:g}, {hi}"
    return f"0 ({s.zero_means}) or {text}" if s.zero_means and not api else text


def check_setting(name: str, value, api: bool = False) -> float:
    """``value`` as a float if it is a number in the setting's range, else a ParameterError that
    names the setting, the value and the range.  ``name`` is the FMU parameter name, or the
    ``simulate`` keyword when ``api`` is true."""
    s = BY_API_NAME[name] if api else BY_NAME[name]
    label = s.api_name if api else s.name
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{label} must be a number, got {value!r}") from None
    if s.zero_means and v == 0.0 and not api:
        return v
    if api and s.api_name == "max_step" and v == math.inf:
        return v  # simulate's default: no limit
    if not (s.low <= v <= s.high):
        raise ParameterError(f"{label} = {value!r} is outside its range {range_text(s, api)}")
    return v


def c_macros() -> str:
    """``#define`` lines of the ranges for the native runtime (MBS_RTOL_MIN, ...)."""
    lines = []
    for s, macro in zip(SOLVER_SETTINGS, ("RTOL", "ATOL", "HMAX")):
        lines.append(f"#define MBS_{macro}_MIN {s.low!r}")
        lines.append(f"#define MBS_{macro}_MAX {'INFINITY' if math.isinf(s.high) else repr(s.high)}")
    return "\n".join(lines)
