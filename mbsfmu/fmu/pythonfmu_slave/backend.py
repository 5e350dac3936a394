"""What integrates inside a pythonfmu FMU: the C engine (:mod:`.engine_backend`) or, where it
cannot run, the numpy formulations (:mod:`.numpy_backend`).

Two backends with one face: get/set values by value reference (set checks everything first and
raises Refused, changing nothing), set_time, start and do_step (warning texts go to warn(fn,
text); a failure raises and leaves the values of the last communication point), time, save and
restore (JSON-able data, see :mod:`.states`), and statistics: ({method name: counters},
the current method's name), the counters being accepted, rejected, nfev, njev and ndec (None
where the integrator does not count them), each method's since the start.
"""

from mbsfmu.core.constants import METHOD_KINDS

NUMPY = "numpy"  # the backend name of the numpy path
METHOD_NAMES = {k: n for n, k in METHOD_KINDS.items()}  # value of the parameter method -> its name
STEPPING = ("step", "terminated", "error")  # modes that have an integrator state


class Refused(Exception):
    """A call the backend refused or could not do; its message says why (nothing was changed)."""


def refusal_text(exc):
    """What went wrong: a refusal's own words, another exception with its type."""
    return str(exc) if isinstance(exc, Refused) else f"{type(exc).__name__}: {exc}"


def statistics_text(work, current):
    """The logStatistics message of both FMU kinds ('integrator statistics: method stiff
    (current): 187 accepted and 3 rejected steps, 1301 right-hand sides, 40 Jacobians, 62 LU
    decompositions'), the current method first, the others only if they did any work."""
    parts = []
    for name in sorted(work, key=lambda n: n != current):
        w = work[name]
        if name != current and not any(w.values()):
            continue
        items = [f"{w['accepted']} accepted and {w['rejected']} rejected steps" if w["rejected"] is not None
                 else f"{w['accepted']} accepted steps", f"{w['nfev']} right-hand sides"]
        items += [f"{w[k]} {label}" for k, label in (("njev", "Jacobians"), ("ndec", "LU decompositions"))
                  if w[k] is not None]
        parts.append(f"method {name}{' (current)' if name == current else ''}: {', '.join(items)}")
    return "integrator statistics: " + "; ".join(parts)
