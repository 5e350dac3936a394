"""The integrator settings every path accepts, with their defaults and sane ranges, written once.

``simulate`` (``rtol``, ``atol``, ``max_step``) and both FMU kinds (the tunable parameters
``solver_rtol``, ``solver_atol``, ``max_internal_step``) check the same ranges; the native FMU
gets them as macros in its generated header (:func:`c_macros`), so C and Python cannot drift.
The FMU parameter ``method`` chooses the integration method (an Integer whose values are the
engine's method numbers, :data:`mbsfmu.core.constants.METHOD_KINDS`: 0 = ``rkstab``, 1 =
``stiff``, 2 = ``dop853``); the export functions take it by name (``method="stiff"``) as its start
value, also by the aliases of :data:`METHOD_ALIASES` (``'explicit'``, scipy's ``'DOP853'``).  The
FMU's old name of that parameter, ``solver``, still works for one release
(:data:`DEPRECATED_FMU_NAMES`).

Why these ranges: below a relative tolerance of about 1e-14 (45 ulp) the error estimate of an
explicit Runge-Kutta method is rounding noise and every step fails; above 0.1 the result has no
correct digit.  An absolute tolerance above 1 (in the units of the coordinates: m, rad, m/s) makes
the error test accept anything and the step size grows until the constraints or the state blow
up.  A step limit below 1e-10 s cannot be honoured within the integrator's step budget for any
useful interval (and 0 means "no limit").

The default absolute tolerance is derived from the relative one by one rule, written here and
nowhere else (:func:`default_atol`; the native FMU gets its factors as macros): atol = rtol / 10
for a model with constraints (seed 004's setting for all its experiments) and rtol / 100 for a
tree.  ``simulate`` applies it when ``atol`` is left out (None) or 0, both FMU kinds when the
parameter ``solver_atol`` is 0 (its start value), so an FMU given only ``solver_rtol`` integrates
with the tolerances of ``simulate`` at the same ``rtol``.  A positive atol is taken as given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .constants import METHOD_KINDS
from .errors import ParameterError

#: the engine's integration methods, the values of the FMU parameter ``method``: canonical name ->
#: what it is (its number is that of the engine, METHOD_KINDS)
METHODS = {
    "rkstab": "explicit stabilized DOPRI5",
    "stiff": "Radau IIA 5",
    "dop853": "explicit stabilized Dormand-Prince 8(5,3)",
}
assert {n: i for i, n in enumerate(METHODS)} == METHOD_KINDS  # value i is method number i
#: other names of these methods, accepted wherever a method is chosen by name (simulate, the
#: export): 'explicit' (simulate's default, the explicit method) and scipy's spelling of DOP853
METHOD_ALIASES = {"explicit": "rkstab", "DOP853": "dop853"}
#: the export functions' default
DEFAULT_METHOD = "rkstab"
#: FMU variables kept for one release under their old name: old name -> the variable it sets
DEPRECATED_FMU_NAMES = {"solver": "method"}


def canonical_method(name: str) -> str:
    """The canonical name of one of the engine's methods (:data:`METHODS`) given by that name or
    an alias (:data:`METHOD_ALIASES`); anything else is returned as it is."""
    return METHOD_ALIASES.get(name, name) if isinstance(name, str) else name


#: atol = ATOL_FACTOR[...] * rtol where no absolute tolerance is given: with constraints, and for
#: trees (module docstring)
ATOL_FACTOR = {"constrained": 0.1, "tree": 0.01}
#: what solver_atol = 0 (and simulate's atol None or 0) means
ATOL_RULE = (f"derived from the relative tolerance: {ATOL_FACTOR['constrained']:g} rtol with constraints, "
             f"{ATOL_FACTOR['tree']:g} rtol without")


def default_atol(rtol: float, constrained: bool) -> float:
    """The absolute tolerance where none is given (0 or None): ATOL_FACTOR times rtol; the native
    runtime computes the same product (mbs_instance.c, solver_atol)."""
    return rtol * ATOL_FACTOR["constrained" if constrained else "tree"]


def effective_atol(atol, rtol: float, constrained: bool) -> float:
    """``atol`` where it is positive, else (None or 0) :func:`default_atol`."""
    return default_atol(rtol, constrained) if atol is None or atol == 0 else float(atol)


@dataclass(frozen=True)
class SolverSetting:
    name: str          # FMU parameter name
    api_name: str      # keyword of mbsfmu.simulate (tolerances, step limit) or of the export (method)
    default: float     # FMU default
    low: float         # smallest allowed value (inclusive)
    high: float        # largest allowed value (inclusive)
    description: str
    macro: str         # MBS_<macro>_MIN, _MAX in the generated C header
    zero_means: str = ""  # 0 is allowed besides [low, high] and means this
    zero_in_api: bool = False  # ... also for the simulate / export keyword
    choices: tuple = ()   # names of the values low, low + 1, ..., high (an Integer parameter)

    @property
    def type(self) -> str:
        """The FMI type of the FMU parameter."""
        return "Integer" if self.choices else "Real"


SOLVER_SETTINGS = (
    SolverSetting("solver_rtol", "rtol", 1e-8, 1e-14, 0.1,
                  "relative tolerance of the internal integrator", "RTOL"),
    SolverSetting("solver_atol", "atol", 0.0, 0.0, 1.0,
                  f"absolute tolerance of the internal integrator; 0 = {ATOL_RULE}", "ATOL",
                  zero_means="derived from rtol", zero_in_api=True),
    SolverSetting("max_internal_step", "max_step", 0.0, 1e-10, math.inf,
                  "largest internal step [s]; 0 = no limit", "HMAX", zero_means="no limit"),
    SolverSetting("method", "method", METHOD_KINDS[DEFAULT_METHOD], 0, len(METHODS) - 1,
                  "integration method: " + ", ".join(f"{METHOD_KINDS[n]} = {n} ({d})"
                                                     for n, d in METHODS.items())
                  + "; stiff suits stiff springs, dampers and contact penalties, dop853 tolerances "
                  "below about 1e-7", "METHOD",
                  choices=tuple(METHODS)),
)

#: FMU parameter name -> setting
BY_NAME = {s.name: s for s in SOLVER_SETTINGS}
#: simulate() / export keyword -> setting
BY_API_NAME = {s.api_name: s for s in SOLVER_SETTINGS}


def values_text(s: SolverSetting) -> str:
    """The values of a choice: '0 (rkstab: explicit stabilized DOPRI5), 1 (stiff: Radau IIA 5)'."""
    return ", ".join(f"{s.low + i} ({n}: {METHODS[n]})" for i, n in enumerate(s.choices))


def range_text(s: SolverSetting, api: bool = False) -> str:
    """'[1e-14, 0.1]', or for a step limit '0 (no limit) or [1e-10, inf)' (FMU parameter) and
    '[1e-10, inf]' (simulate's keyword, whose default inf means no limit), for atol
    '0 (derived from rtol) or (0, 1]'."""
    if s.choices:
        return values_text(s)
    hi = ("inf]" if api else "inf)") if math.isinf(s.high) else f"{s.high:g}]"
    text = f"{'(' if s.zero_means and s.low == 0 else '['}{s.low:g}, {hi}"  # 0 itself means zero_means
    return f"0 ({s.zero_means}) or {text}" if s.zero_means and (s.zero_in_api or not api) else text


def _check_choice(s: SolverSetting, value, api: bool) -> int:
    """The number of a choice: by name for the export keyword, by number for the FMU parameter."""
    if api:
        name = canonical_method(value)
        if isinstance(name, str) and name in s.choices:
            return int(s.low) + s.choices.index(name)
        allowed = ", ".join(f"{n!r} ({METHODS[n]})" for n in s.choices)
        aliases = ", ".join(f"{a!r} = {n!r}" for a, n in METHOD_ALIASES.items())
        raise ParameterError(f"{s.api_name} must be one of {allowed} (or {aliases}), got {value!r}")
    try:
        number = float(value) if not isinstance(value, str) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not (s.low <= number <= s.high and number == math.floor(number)):
        raise ParameterError(f"{s.name} = {value!r} is not one of its values {values_text(s)}")
    return int(number)


def check_setting(name: str, value, api: bool = False) -> float:
    """``value`` as a float if it is a number in the setting's range, else a ParameterError that
    names the setting, the value and the range.  ``name`` is the FMU parameter name, or the
    ``simulate`` (export) keyword when ``api`` is true.  The choice ``method`` gives its number
    (an int): the export keyword takes a name ('rkstab', 'stiff', or an alias such as 'explicit'),
    the FMU parameter a number."""
    s = BY_API_NAME[name] if api else BY_NAME[name]
    if s.choices:
        return _check_choice(s, value, api)
    label = s.api_name if api else s.name
    try:
        if isinstance(value, bool):  # True is 1 to float(), not a tolerance anybody means
            raise TypeError
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{label} must be a number, got {value!r}") from None
    if s.zero_means and v == 0.0 and (s.zero_in_api or not api):
        return v
    if api and s.api_name == "max_step" and v == math.inf:
        return v  # simulate's default: no limit
    if not (s.low <= v <= s.high):
        raise ParameterError(f"{label} = {value!r} is outside its range {range_text(s, api)}")
    return v


def c_macros() -> str:
    """``#define`` lines of the ranges for the native runtime (MBS_RTOL_MIN, ...; the factors of the
    default atol, MBS_ATOL_FACTOR_CONSTRAINED and _TREE; MBS_<macro>_ZERO, what 0 means where it
    is allowed besides the range; for the choice
    ``method`` also MBS_METHOD_VALUES, the text of its values for messages, and MBS_METHOD_NAMES,
    the names in number order)."""
    lines = [f"#define MBS_ATOL_FACTOR_{k.upper()} {v!r}" for k, v in ATOL_FACTOR.items()]
    for s in SOLVER_SETTINGS:
        lines.append(f"#define MBS_{s.macro}_MIN {s.low!r}")
        lines.append(f"#define MBS_{s.macro}_MAX {'INFINITY' if math.isinf(s.high) else repr(s.high)}")
        if s.zero_means:  # 0 is allowed and means this (the text of range messages)
            assert s.zero_means.isascii() and '"' not in s.zero_means
            lines.append(f'#define MBS_{s.macro}_ZERO "{s.zero_means}"')
        if s.choices:
            text = values_text(s)
            assert text.isascii() and '"' not in text and "\\" not in text
            lines.append(f'#define MBS_{s.macro}_VALUES "{text}"')
            lines.append(f"#define MBS_{s.macro}_NAMES " + ", ".join(f'"{n}"' for n in s.choices))
    return "\n".join(lines)
