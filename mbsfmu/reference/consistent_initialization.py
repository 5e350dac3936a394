"""Consistent initial values for systems with constraints (seed 000 eqs. 5-6).

Positions solve g(y) = [c(y, t0); e(y) - e0] = 0 and velocities [C; de/dy] y' = [-b'; e0'] (C and
b' with the rows of nonholonomic constraints A y' + a = 0 too, which have no position level) where
e are the model's extra initial conditions (``System.initial_condition``; only the rows of those
that give a rate enter the velocity level); e0 and e0' are the model's declared values unless a
run sets them (``targets``, from :class:`mbsfmu.model.initial_values.InitialValues`).  Coordinates
in ``fixed`` keep their given values; the others move by Newton's method with minimum-norm
(least-squares) steps and step halving, starting from the given values.  The rates change by the
least amount, first only the guesses (rates the user did not give), so given rates that fit stay
as they are; only if the velocity rows cannot hold that way do the given rates move too.  A warning
names every given (non-guess) value that moved by more than ``warn_tol``, which happens only when
the given values are inconsistent; an error names the constraint that could not be satisfied.
"""

from __future__ import annotations

import warnings

import numpy as np
import sympy as sp

from ..core.checks import check_fixed_names, fixed_names
from ..core.errors import ConstraintError, InconsistentInitialValuesWarning


def declared_targets(system) -> list[tuple[float, float | None]]:
    """(e0, e0' or None) of each initial condition as the model declares it."""
    return [(ic.value, ic.rate) for ic in system.initial_conditions]


def _condition_functions(numeric, targets):
    """(e(y) - e0, E(y)) of the initial conditions with the values ``targets``, or None."""
    s = numeric.system
    ics = s.initial_conditions
    if not ics:
        return None
    consts = [c.symbol for c in s.constants_.values()]
    e = sp.Matrix([ic.expression for ic in ics])
    E = e.jacobian(s.y)
    fe = sp.lambdify([s.y, consts], list(e), "math")
    fE = sp.lambdify([s.y, consts], E, "numpy")
    e0 = np.array([value for value, _ in targets], dtype=float)
    return (lambda y: np.array(fe(y, numeric.prm)) - e0,
            lambda y: np.atleast_2d(np.array(fE(y, numeric.prm), dtype=float)))


def consistent_state(numeric, x0, t0=0.0, fixed=None, tol=1e-12, max_iter=50, warn_tol=1e-8,
                     given=(), targets=None):
    """Return x = [y, y'] satisfying the constraints (and initial conditions) at t0.

    ``fixed`` names the coordinates to hold.  If it is not given, the given (non-guess)
    coordinates are held first and only the guesses move; if no consistent state exists that
    way, every coordinate may move (minimum-norm change), and a warning names what moved.
    ``given`` lists names (``x``, ``der(x)``) the user set explicitly: never treated as guesses.
    ``targets``: (e0, e0' or None) per initial condition, default the model's
    (:func:`declared_targets`)."""
    names = numeric.coordinate_names
    fixed = fixed_names(fixed)
    targets = declared_targets(numeric.system) if targets is None else list(targets)
    if fixed:
        return _consistent_state(numeric, x0, t0, list(fixed), tol, max_iter, warn_tol, given, targets)
    coords = list(numeric.system.coordinates_.values())
    held = [c.name for c in coords if not c.guess or c.name in given]
    if held and len(held) < len(names):
        try:
            return _consistent_state(numeric, x0, t0, held, tol, max_iter, warn_tol, given, targets)
        except ConstraintError:
            pass
    return _consistent_state(numeric, x0, t0, [], tol, max_iter, warn_tol, given, targets)


def _consistent_rates(A, rhs, v, move) -> tuple[np.ndarray, float]:
    """(rates, residual): v with the rates ``move`` (indices) changed by the least amount
    (least squares) so that A v = rhs, and max |A v - rhs| afterwards."""
    v = v.copy()
    if len(move) and A.size:
        dv = np.linalg.lstsq(A[:, move], rhs - A @ v, rcond=None)[0]
        v[move] += dv
    return v, (float(np.max(np.abs(A @ v - rhs))) if A.size else 0.0)


def _conflicts(numeric, x0, t0, fixed, tol, max_iter, targets, skip=()) -> list[str]:
    """The held coordinates and initial conditions without any one of which a consistent state
    exists (each tried by leaving it out), described for a message."""
    out = []
    names = numeric.coordinate_names
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InconsistentInitialValuesWarning)
        for name in fixed:
            try:
                _consistent_state(numeric, x0, t0, [n for n in fixed if n != name], tol, max_iter,
                                  1e300, (), targets, skip)
            except ConstraintError:
                continue
            out.append(f"held coordinate {name} = {x0[names.index(name)]:.9g}")
        for ic, (value, _) in zip(numeric.system.initial_conditions, targets):
            try:
                _consistent_state(numeric, x0, t0, fixed, tol, max_iter, 1e300, (), targets,
                                  set(skip) | {ic.name})
            except ConstraintError:
                continue
            out.append(f"initial condition {ic.name!r} ({ic.expression} = {value:.9g})")
    return out


def _consistent_state(numeric, x0, t0, fixed, tol, max_iter, warn_tol, given, targets, skip=None):
    """One Newton attempt holding ``fixed``; the initial conditions named in ``skip`` are left
    out (used to find which conditions conflict)."""
    s = numeric.system
    names = numeric.coordinate_names
    f = numeric.f
    check_fixed_names(names, fixed)
    free = np.array([j for j, n in enumerate(names) if n not in fixed], dtype=int)
    y = np.array(x0[:f], dtype=float)
    v = np.array(x0[f:], dtype=float)
    y_given, v_given = y.copy(), v.copy()
    ic = _condition_functions(numeric, targets)
    keep = [i for i, c in enumerate(s.initial_conditions) if c.name not in (skip or ())]
    if ic is not None and len(keep) < len(s.initial_conditions):
        ic = (lambda yy, f=ic[0]: f(yy)[keep], lambda yy, F=ic[1]: F(yy)[keep]) if keep else None
    mh = numeric.mh
    row_names = s.constraint_names[:mh] + [s.initial_conditions[i].name for i in keep]

    def residual(yy):
        """g, its Jacobian G (holonomic rows of C and de/dy), and all rows of C and b'."""
        c, C, b1 = numeric.constraint_parts(t0, yy)
        if ic is None:
            return c, C[:mh], (C, b1)
        return np.concatenate((c, ic[0](yy))), np.vstack((C[:mh], ic[1](yy))), (C, b1)

    g, G, vel = residual(y)
    norm = np.max(np.abs(g)) if g.size else 0.0
    for _ in range(max_iter):
        if norm <= tol:
            break
        step = np.linalg.lstsq(G[:, free], -g, rcond=None)[0]
        lam = 1.0
        while lam > 1e-4:
            y_try = y.copy()
            y_try[free] += lam * step
            g_try, G_try, vel_try = residual(y_try)
            n_try = np.max(np.abs(g_try), initial=0.0)
            if np.isfinite(n_try) and n_try < norm:
                y, g, G, vel, norm = y_try, g_try, G_try, vel_try, n_try
                break
            lam /= 2
        else:
            break
    if not norm <= tol:
        worst = int(np.argmax(np.abs(g)))
        state = ", ".join(f"{n}={val:.6g}" for n, val in zip(names, y))
        culprits = "" if skip is not None else "; ".join(
            _conflicts(numeric, x0, t0, fixed, tol, max_iter, targets))
        raise ConstraintError(
            f"{s.name}: no consistent initial state: {row_names[worst]!r} stays violated by "
            f"{abs(g[worst]):.3g} (Newton from the given values, fixed: {fixed or 'none'}; "
            f"reached {state})"
            + (f". It cannot hold together with: {culprits} (without any one of these a "
               "consistent state exists)" if culprits else ""))

    # velocities: C y' = -b' (all rows) plus the rates of initial conditions that give one
    A, rhs = vel[0], -vel[1]
    if ic is not None:
        rows = [r for r, i in enumerate(keep) if targets[i][1] is not None]
        if rows:
            A = np.vstack((A, G[mh:][rows]))
            rhs = np.concatenate((rhs, [targets[keep[r]][1] for r in rows]))
    coords = list(s.coordinates_.values())
    held_rates = {j for j, co in enumerate(coords)
                  if not co.guess_velocity or f"der({co.name})" in given}
    guesses = np.array([j for j in free if j not in held_rates], dtype=int)
    v_try, vres = _consistent_rates(A, rhs, v, guesses)
    if len(guesses) < len(free) and vres > 1e3 * tol * max(1.0, np.max(np.abs(v_try))):
        v_try, vres = _consistent_rates(A, rhs, v, free)  # the given rates do not fit: move them too
    v = v_try
    if vres > 1e3 * tol * max(1.0, np.max(np.abs(v))):
        raise ConstraintError(f"{s.name}: no consistent initial velocities (velocity constraints "
                              f"violated by {vres:.3g} with fixed: {fixed or 'none'})")

    moved = []
    for j, co in enumerate(coords):
        if (not co.guess or co.name in given) and abs(y[j] - y_given[j]) > warn_tol:
            moved.append(f"{co.name}: {y_given[j]:.9g} -> {y[j]:.9g}")
        if ((not co.guess_velocity or f"der({co.name})" in given)
                and abs(v[j] - v_given[j]) > warn_tol):
            moved.append(f"der({co.name}): {v_given[j]:.9g} -> {v[j]:.9g}")
    if moved:
        warnings.warn(f"{s.name}: initial values changed to satisfy the constraints: "
                      + "; ".join(moved), InconsistentInitialValuesWarning, stacklevel=3)
    return np.concatenate((y, v))
