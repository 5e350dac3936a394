"""Numbers the C engine and the Python reference share, written once (here).

The engine's headers generated from here (:func:`kinds_header`, :func:`step_header`) and each
generated model header (``model_config.h``, through :func:`c_macros`) receive them as macros, and
the Python formulations take their defaults from :data:`DEFAULTS`, so the two implementations
cannot drift:

* the formulation names and their kind numbers in the engine (``MBS_FORM_<NAME>``),
* the integration methods (``MBS_METHOD_<NAME>``),
* RKSTAB's step-size control and the collapse rule of the integrators,
* the defaults of the formulation options (Baumgarte alpha and beta, the rank tolerance of the
  QR/SVD decompositions, the Newton tolerance and iteration limit of the projections, the
  iterations and weightings of PStab, the condition limit of coordinate partitioning),
* what the engine's run records besides the values, and the reasons it refuses a start,
* the packed layout of the generated ``mbs_constrained`` output: M (f x f, row-major), q - k (f),
  c (mh), C (m x f, row-major), b' (m), b'' (m) with m rows of which the first mh are holonomic
  (the others nonholonomic, without a row in c) -- :func:`constrained_layout`.
"""

from __future__ import annotations

#: formulation name -> kind number of the C engine (``MBS_FORM_<NAME>`` of the generated mbs_kinds.h)
FORMULATION_KINDS = {
    "minimal": 0,
    "qr": 1,
    "baumgarte": 2,
    "dae": 3,
    "svd": 4,
    "projection": 5,
    "partition": 6,
}

#: integration method name -> number of the C engine
METHOD_KINDS = {"rkstab": 0, "stiff": 1, "dop853": 2}

#: defaults of the formulation options (both implementations)
DEFAULTS = {
    "alpha": 10.0,        # Baumgarte, 1/s (critically damped at 10 rad/s)
    "beta": 10.0,         # Baumgarte, 1/s
    "rank_tol": 1e-9,     # rank of C relative to its largest pivot / singular value
    "newton_tol": 1e-13,  # absolute tolerance of the position projections
    "newton_max": 20,     # Gauss-Newton iterations of the projections
    "iterations": 2,      # position corrections of the PStab projection (seed 004 eq. 3.68)
    "cond_max": 1e3,      # coordinate partitioning: largest cond(C_d) before a new choice
}

#: a failed run's message calls the configuration singular when a pivot of the column-pivoted QR
#: of C^T lies between ``low`` and ``high`` times the largest (below ``low``: an exactly redundant
#: row, which the null-space formulations take; the same test in both implementations)
SINGULAR_PIVOT = {"low": 1e-13, "high": 1e-4}

#: singular positions on the null-space formulations 'qr' and 'svd': a pivot of
#: the column-pivoted QR of C^T below ``weak`` times the larger of the largest pivot there and at the
#: start marks a weak constraint direction, whose share of the projection's correction RKSTAB does
#: not count as error (there it is rounding of c amplified by 1 / pivot^2, not an error of the
#: step); the regularity ratio (the smallest pivot within the rank over that scale) tells RKSTAB
#: when to place its steps around the predicted singular time (mbs_rkstab.c, rkstab.py)
SINGULAR_STEP = {"weak": 0.03}

#: internal steps one do-step of the engine may take (both FMU kinds refuse a step that a
#: max_internal_step would make longer)
MAX_STEPS_PER_CALL = 10_000_000

#: the stiffness diagnostic of explicit runs (mbsfmu.simulation.run_monitor and the engine): a
#: run is reported as stiff when, and only when, its step is limited by stability: h rho
#: (Hairer's estimate of h |lambda|) is above ``fraction`` of the method's stability boundary for
#: ``steps`` accepted steps, never ``gap`` steps in a row below it in between (a single low value
#: is the estimate's noise, which on a stiff spring-damper in a loop spans two decades), while
#: more than ``min_remaining`` steps remain, at rtol <= ``rtol_max`` (above it the accuracy-limited
#: step of an ordinary motion reaches the stability boundary itself: a cart-pendulum at rtol 1e-2
#: would be called stiff).  Many small steps alone are not stiffness: a long span, a tight
#: tolerance or a fast motion that is really there need them with any method.
STIFFNESS = {
    "boundary_rkstab": 3.3,  # Dormand-Prince 5(4) on the negative real axis
    "boundary_dop853": 6.1,
    "fraction": 0.8,
    "steps": 15,
    "gap": 2,
    "min_remaining": 1e4,
    "rtol_max": 1e-3,
}

#: a collapsed step size ends a run: ``steps`` accepted steps in a row, each shorter than ``ratio``
#: of the interval (the engine's step driver, mbs_stepper.c, as MBS_STEP_COLLAPSE_*, and the
#: reference steppers, mbsfmu/reference/integrators/stepper.py)
COLLAPSE = {"ratio": 1e-12, "steps": 10_000}

#: RKSTAB's step-size control (seed 004 sec. 4.3; Hairer's DOPRI5 controller), the Python reference
#: (mbsfmu/reference/integrators/rkstab.py) and the engine (mbs_rkstab.c, as MBS_RKSTAB_*) alike: after an
#: accepted step h_new = h / fac, fac = err^(1/order - beta_weight beta) / err_prev^beta / safety
#: within [1/facmax, 1/facmin]; after a rejected one h / min(1/facmin, err^(1/order - beta_weight
#: beta) / safety); after non-finite values h nonfinite_shrink.  Near a singular position (ratio
#: rho < place_watch and falling, the predicted singular time within place_reach proposed steps)
#: a step is shortened so that the singular time falls place_theta into it (between the stages
#: c = 3/10 and 4/5).
RKSTAB = {
    "order": 5,              # the error estimate is O(h^5): the controller's exponent 1/5
    "safety": 0.9,
    "facmin": 0.2,           # smallest step ratio h_new / h
    "facmax": 10.0,          # largest step ratio
    "beta": 0.04,            # Lund's PI stabilization (Hairer's DOPRI5 default)
    "beta_weight": 0.75,     # exponent of err: 1/order - beta_weight beta
    "nonfinite_shrink": 0.2,
    "place_watch": 0.1,
    "place_theta": 0.55,
    "place_reach": 2.5,
}

#: the headers of the engine generated from this module (never edited, nor kept in mbsfmu/runtime:
#: :func:`mbsfmu.runtime.source` makes them): the step-size control the integrators include, and
#: the numbers the engine's API shares with Python (formulations, methods, records, start failures)
STEP_HEADER = "mbs_step_constants.h"
KINDS_HEADER = "mbs_kinds.h"

#: weighting of the PStab projection -> number of the C engine (mbs_form.weighting)
WEIGHTINGS = {"mass": 0, "identity": 1}

#: what the engine's run records at each output point after the values (the states, the residual
#: and the user outputs), as flags of mbs_inst_run (``MBS_RECORD_<NAME>``), in this order:
#: the Lagrange multipliers (nc), the accelerations y'' (f), the constraint residuals on the
#: position and the velocity level (2)
RECORD = {"multipliers": 1, "accelerations": 2, "residuals": 4}

#: what a sensitivity column differentiates by (mbs_sensitivity.h, ``MBS_SENS_<NAME>``): a
#: constant, the initial value of a coordinate or of its rate, the value or rate of a named
#: initial condition
SENSITIVITY_COLUMNS = {"constant": 0, "position": 1, "rate": 2, "ic_value": 3, "ic_rate": 4}
#: what the error test of a run with sensitivities measures (``MBS_SENS_ERROR_<NAME>``): the
#: state and the sensitivities, or the state alone
SENSITIVITY_ERROR_CONTROL = {"all": 0, "state": 1}
#: the metrics the adjoint method differentiates (``MBS_ADJ_<NAME>``): a signal's final value, its
#: integral over the run, its weighted squared distance to data at given times
ADJOINT_METRICS = {"final": 0, "integral": 1, "least_squares": 2}

#: why the engine refused a start (mbs_inst_start_failure, ``MBS_START_<NAME>``): a value outside
#: its range or rules, no consistent initial state, redundant constraints the formulation cannot
#: take, a singular (reduced) mass matrix at the consistent start, equations that are not finite
#: there, outputs that cannot be computed there
START_FAILURES = {"values": 1, "inconsistent": 2, "redundant": 3, "singular_mass": 4, "not_finite": 5,
                  "outputs": 6}


def constrained_layout(f: int, m: int, mh: int | None = None) -> dict[str, slice]:
    """Where each quantity sits in the output of ``mbs_constrained`` (f coordinates, m rows of
    C of which ``mh`` (default: all) are holonomic and have a row in c)."""
    mh = m if mh is None else mh
    sizes = (("M", f * f), ("h", f), ("c", mh), ("C", m * f), ("b1", m), ("b2", m))
    out, start = {}, 0
    for name, n in sizes:
        out[name] = slice(start, start + n)
        start += n
    return out


def _header(name: str, what: str, tables: str, lines: list[str]) -> str:
    """A generated header ``name`` of the ``#define`` lines, with its include guard and a comment
    saying ``what`` it holds and from which ``tables`` of this module."""
    guard = name.upper().replace(".", "_")
    return "\n".join([f"/* {what}; generated by mbsfmu from",
                      f"   mbsfmu/core/constants.py ({tables}), do not edit. */",
                      f"#ifndef {guard}", f"#define {guard}", *lines, "#endif", ""])


def step_header() -> str:
    """The text of :data:`STEP_HEADER`: RKSTAB's step-size control (``MBS_RKSTAB_<NAME>``) and the
    collapse rule (``MBS_STEP_COLLAPSE_<NAME>``), for the integrators, which include no model
    header."""
    lines = [f"#define MBS_RKSTAB_{name.upper()} {value!r}" for name, value in RKSTAB.items()]
    lines += [f"#define MBS_STEP_COLLAPSE_{name.upper()} {value!r}" for name, value in COLLAPSE.items()]
    return _header(STEP_HEADER, "Step-size control of the engine's integrators", "RKSTAB, COLLAPSE", lines)


def _by_number(table: dict[str, int]) -> list[str]:
    """The names of ``table`` in the order of their numbers, which must be 0, 1, 2, ..."""
    names = sorted(table, key=table.get)
    assert [table[n] for n in names] == list(range(len(names))), table
    return names


def kinds_header() -> str:
    """The text of :data:`KINDS_HEADER`, which mbs_formulation.h and mbs_instance.h include: the
    formulation kinds ``MBS_FORM_<NAME>`` (and ``MBS_FORMULATION_NAMES``, the names in number
    order), the integration methods ``MBS_METHOD_<NAME>``, the flags of what a run records
    ``MBS_RECORD_<NAME>``, the reasons of a refused start ``MBS_START_<NAME>`` and the kinds of
    sensitivity columns and error control ``MBS_SENS_<NAME>``, ``MBS_SENS_ERROR_<NAME>``."""
    lines = [f"#define MBS_FORM_{name.upper()} {kind}" for name, kind in FORMULATION_KINDS.items()]
    names = _by_number(FORMULATION_KINDS)
    lines.append("#define MBS_FORMULATION_NAMES " + ", ".join(f'"{n}"' for n in names))
    lines += [f"#define MBS_METHOD_{name.upper()} {kind}" for name, kind in METHOD_KINDS.items()]
    _by_number(METHOD_KINDS)
    lines += [f"#define MBS_RECORD_{name.upper()} {flag}" for name, flag in RECORD.items()]
    lines += [f"#define MBS_START_{name.upper()} {code}" for name, code in START_FAILURES.items()]
    lines += [f"#define MBS_SENS_{name.upper()} {code}" for name, code in SENSITIVITY_COLUMNS.items()]
    lines += [f"#define MBS_SENS_ERROR_{name.upper()} {code}"
              for name, code in SENSITIVITY_ERROR_CONTROL.items()]
    lines += [f"#define MBS_ADJ_{name.upper()} {code}" for name, code in ADJOINT_METRICS.items()]
    return _header(KINDS_HEADER, "The numbers the engine shares with Python",
                   "FORMULATION_KINDS, METHOD_KINDS, RECORD, START_FAILURES, SENSITIVITY_COLUMNS, "
                   "SENSITIVITY_ERROR_CONTROL, ADJOINT_METRICS", lines)


def c_macros() -> str:
    """The ``#define`` lines of these constants for a generated model header."""
    lines = [f"#define MBS_DEFAULT_{name.upper()} {value!r}" for name, value in DEFAULTS.items()]
    lines += [f"#define MBS_SINGULAR_PIVOT_{name.upper()} {v!r}" for name, v in SINGULAR_PIVOT.items()]
    lines += [f"#define MBS_SINGULAR_STEP_{name.upper()} {v!r}" for name, v in SINGULAR_STEP.items()]
    lines += [f"#define MBS_STIFF_{name.upper()} {value!r}" for name, value in STIFFNESS.items()]
    lines.append(f"#define MBS_MAX_STEPS_PER_CALL {MAX_STEPS_PER_CALL}L")
    return "\n".join(lines)
