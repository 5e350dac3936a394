"""Checks of the symbolic expressions of a model, decided when the element is added (each
raises a ModelError naming the element and the keyword):

* :func:`check_linear_in_rates`: a nonholonomic constraint A(y, t) y' + a(y, t) = 0 is linear in
  the rates, decided on the structure of the expression (never by sampling);
* :func:`check_differentiable`: an expression with non-smooth functions (Abs, sign, Heaviside,
  Max, Min, Piecewise, floor, ...) has the derivatives the equations need (C = dc/dy, b', b'');
* :func:`check_rotation_matrix`: a matrix given as a rotation is orthonormal with det R = +1 for
  every value of its symbols (checked numerically at seeded random draws).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..core.errors import ModelError

#: The hint of a rotation matrix that is not a rotation for every value of its symbols.
NATURAL_COORDINATES_HINT = (
    "a matrix that is orthonormal only on a constraint manifold (natural coordinates) gives "
    "wrong velocities (omega from R' R^T) and a wrong, singular mass matrix here: model such "
    "bodies with the Lagrangian front end (LagrangianSystem), or give the position of the "
    "centre of gravity directly with rel_pos instead of placing it through this rotation")


def check_linear_in_rates(e: sp.Expr, rates, where: str) -> None:
    """A ModelError unless ``e`` is linear in the ``rates`` and contains at least one, i.e.
    e = A . rates + a with A and a free of the rates (every second derivative d2e/dv_i dv_j is
    identically zero).  Decided on the structure of ``e``, never by sampling: ``e`` must be a
    polynomial in the rates (its coefficients any expressions of the other symbols) of degree
    <= 1; a rate inside a function that is not a polynomial (Abs, sign, Heaviside, Max, Min,
    sin, a square root, a denominator, a Piecewise whose condition contains it) is refused, so
    is a term of degree 2 or more whatever its coefficient (1e-10 Dx^2 too), unless that
    coefficient simplifies to 0 (x' y' (sin^2 y + cos^2 y - 1)).  A Piecewise whose conditions
    are free of the rates is linear if each of its branches is.  The message names ``where``,
    the rate(s) and the term."""
    rates = [v for v in rates if v in e.free_symbols]
    if not rates:
        raise ModelError(f"{where}: {e} contains no rate D<coordinate>; a condition on the "
                         "positions alone is a holonomic constraint: use constraint()")
    problem = _nonlinearity(e, rates)
    if problem:
        raise ModelError(f"{where}: {e} is not linear in the rates: {problem}; a nonholonomic "
                         "constraint must have the form A(y, t) y' + a(y, t) = 0 with A and a "
                         "free of the rates D<coordinate>")


def _nonlinearity(e: sp.Expr, rates: list) -> str:
    """'' if ``e`` is linear in ``rates`` (see :func:`check_linear_in_rates`), else what makes
    it non-linear, naming the rate and the term."""
    try:
        poly = e.as_poly(*rates)
    except (sp.PolynomialError, sp.GeneratorsNeeded):
        poly = None
    if poly is None:
        folded = sp.piecewise_fold(e)
        if isinstance(folded, sp.Piecewise) and not any(
                c.free_symbols & set(rates) for _, c in folded.args):
            return next((p for p in (_nonlinearity(b, rates) for b, _ in folded.args) if p), "")
        for sub in sp.preorder_traversal(e):
            inside = sorted(set(rates) & sub.free_symbols, key=str)
            polynomial = (sub.is_Add or sub.is_Mul or sub.is_Symbol
                          or sub.is_Pow and sub.exp.is_Integer and sub.exp > 0)
            if inside and not polynomial:
                what = (f"the denominator {sub.base}" if sub.is_Pow and sub.exp.is_negative else
                        f"{type(sub).__name__}(...)" if len(str(sub)) > 60 else str(sub))
                return (f"the rate{'s' if len(inside) > 1 else ''} "
                        f"{', '.join(map(str, inside))} appear{'' if len(inside) > 1 else 's'} "
                        f"inside {what}, which is not a polynomial in the rates")
        return "it is not a polynomial in the rates"
    for monom, coeff in poly.terms():
        if sum(monom) < 2:
            continue
        if not coeff.is_number and sp.simplify(coeff) == 0:
            continue
        term = sp.Mul(coeff, *[v**k for v, k in zip(rates, monom)])
        used = [f"{v}^{k}" if k > 1 else str(v) for v, k in zip(rates, monom) if k]
        kind = (f"of degree {sum(monom)} in the rate {rates[monom.index(max(monom))]}"
                if len(used) == 1 else f"a product of the rates {' * '.join(used)}")
        return f"its term {term} is {kind}"
    return ""


#: functions whose derivatives may jump or be impulses: the expressions that contain one are
#: checked by :func:`check_differentiable`
_NONSMOOTH = (sp.Abs, sp.sign, sp.Heaviside, sp.DiracDelta, sp.Max, sp.Min, sp.Piecewise, sp.floor,
              sp.ceiling, sp.frac)


def check_differentiable(e: sp.Expr, variables, where: str, order: int, why: str) -> None:
    """A ModelError unless the derivatives of ``e`` up to ``order`` by the ``variables`` exist
    as functions: none of them may contain DiracDelta (the derivative of a jump, e.g. of sign(x)
    or Heaviside(x)) or stay an unevaluated Derivative (floor, ceiling).  Only an expression
    that contains one of the non-smooth functions (Abs, sign, Heaviside, Max, Min, Piecewise,
    floor, ...) is differentiated, function by function; ``why`` says what needs the
    derivatives.  The message names ``where``, the function and the variable."""
    if not e.has(*_NONSMOOTH):
        return
    variables = set(variables)
    found = [f for f in sp.preorder_traversal(e) if isinstance(f, _NONSMOOTH)]
    for f in found:
        for v in sorted(f.free_symbols & variables, key=str):
            d = f
            for k in range(1, order + 1):
                d = sp.diff(d, v)
                if d.has(sp.DiracDelta) or d.has(sp.Derivative):
                    nth = "" if k == 1 else {2: "second ", 3: "third "}.get(k, f"{k}th ")
                    raise ModelError(f"{where}: {f} is not differentiable enough: its {nth}"
                                     f"derivative by {v} is {d}; {why}, so the expression must be "
                                     f"{'once' if order == 1 else f'{order} times'} differentiable "
                                     "in the coordinates and time (write it with smooth functions)")


def check_rotation_matrix(R: sp.Matrix, where: str, constants: dict, samples: int = 3,
                          tol: float = 1e-9) -> None:
    """A ModelError unless R is a rotation, R^T R = E and det R = +1, for every value of its
    symbols.  Checked numerically, never by simplifying: at ``samples`` draws of a seeded random
    generator for the symbols other than the ``constants`` (which keep their values), each value
    uniform in [-2, 2]; draws where R is not finite (a square root of a negative draw) are
    replaced, up to ten times as many.  ``where`` names the element and the keyword."""
    free = sorted(R.free_symbols - set(constants), key=str)
    rng = np.random.default_rng(1)
    fn = sp.lambdify([free, list(constants)], R, "numpy")
    wanted = samples if free else 1
    for _ in range(10 * wanted):
        draw = rng.uniform(-2.0, 2.0, len(free))
        with np.errstate(all="ignore"):
            try:
                A = np.array(fn(draw, list(constants.values())), dtype=float)
            except (TypeError, ValueError, ZeroDivisionError):  # complex or undefined entries
                continue
        if not np.all(np.isfinite(A)):
            continue
        err = float(np.max(np.abs(A.T @ A - np.eye(3))))
        at = (" at " + ", ".join(f"{s}={v:.3g}" for s, v in zip(free, draw))) if free else ""
        if err > tol:
            raise ModelError(
                f"{where}: the matrix is not a rotation: R^T R differs from the identity by "
                f"{err:.3g}{at} (the rows of R must be orthonormal unit vectors"
                + (" for every value of " + ", ".join(map(str, free)) + "; " + NATURAL_COORDINATES_HINT
                   if free else "") + ")")
        det = float(np.linalg.det(A))
        if det < 0:
            raise ModelError(f"{where}: the matrix is a reflection (det R = {det:.3g}{at}), not a "
                             "rotation (det R = +1)")
        wanted -= 1
        if wanted == 0:
            return
