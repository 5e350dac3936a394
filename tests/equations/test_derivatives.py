"""The tangent and adjoint code of the equations (equations/derivatives.py,
sensitivity_equations.py) against sympy's Jacobians of the closed-form expressions.

For four models of different kinds (a loop, a tree on the recursive Newton-Euler path, a
nonholonomic one, a natural-coordinate model) the directional derivative of R, G, c, V, e, E y'
along a random direction, and the gradient of a random weighting of R, G, c, V, both taken over
the intermediates, equal J d and J^T w of the expanded expressions at a random point to rounding
(1e-12 relative)."""

import importlib

import numpy as np
import pytest
import sympy as sp

from mbsfmu.equations.derivatives import adjoint, substitute, tangent
from mbsfmu.equations.derive import derive
from mbsfmu.equations.intermediates import Intermediates
from mbsfmu.equations.python_source import argument_symbols
from mbsfmu.equations.sensitivity_equations import initial_condition_rows, residuals, sensitivity_equations

MODELS = ["slider_crank", "double_pendulum", "rolling_disc", "slider_crank_natural"]


@pytest.fixture(scope="module", params=MODELS)
def case(request):
    s = importlib.import_module(f"models.{request.param}").model()
    eqs = derive(s)
    return s, eqs, sensitivity_equations(eqs)


def _point(s, se, seed=0):
    rng = np.random.default_rng(seed)
    args = [x for _, syms in argument_symbols(s) for x in syms]
    vals = {x: rng.uniform(0.3, 1.2) for x in args + se.z_tangent + se.z_adjoint}
    vals[s.t] = 0.37
    return vals


def _numbers(exprs, w, vals):
    return np.array([float(w.expand(sp.sympify(e)).xreplace(vals)) for e in exprs])


def test_tangent_equals_the_jacobian_times_the_direction(case):
    s, eqs, se = case
    w, f, m = eqs.intermediates, len(s.y), eqs.m
    vals = _point(s, se)
    R, G, c, V = residuals(eqs, se.z_tangent[:f], se.z_tangent[f:f + m])
    e, Eyd = initial_condition_rows(s)
    base = list(s.y) + list(s.yd) + [k.symbol for k in s.constants_.values()]
    J = sp.Matrix([w.expand(o) for o in R + G + c + V + e + Eyd]).jacobian(base)
    ref = np.array((J * sp.Matrix(se.z_tangent[f + m:])).xreplace(vals).evalf(), dtype=float).ravel()
    got = _numbers(se.tangent, w, vals)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(ref).max()))


def test_adjoint_equals_the_transposed_jacobian_times_the_weights(case):
    s, eqs, se = case
    w, f, m = eqs.intermediates, len(s.y), eqs.m
    vals = _point(s, se, seed=1)
    R, G, c, V = residuals(eqs, se.z_adjoint[:f], se.z_adjoint[f:f + m])
    base = list(s.y) + list(s.yd) + [k.symbol for k in s.constants_.values()]
    J = sp.Matrix([w.expand(o) for o in R + G + c + V]).jacobian(base)
    ref = np.array((J.T * sp.Matrix(se.z_adjoint[f + m:])).xreplace(vals).evalf(), dtype=float).ravel()
    got = _numbers(se.adjoint, w, vals)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(ref).max()))


def test_the_derivative_code_grows_with_the_equations_not_with_their_closed_form():
    """A chain of definitions w_k = sin(w_(k-1)) * x: the closed form of d w_n / dx nests n
    levels deep, the tangent adds a few definitions per definition (the tangent and the partial
    derivatives it reads)."""
    x, v = sp.symbols("x v", real=True)
    w = Intermediates()
    cur = x
    for _ in range(30):
        cur = w.aux(sp.sin(cur) * x)
    before = len(w)
    (d,) = tangent(w, [cur], {x: v})
    assert len(w) - before <= 4 * 30
    exact = sp.diff(w.expand(cur), x).subs(x, 0.7)
    assert float(w.expand(d).subs({x: 0.7, v: 1.0})) == pytest.approx(float(exact), rel=1e-12)
    (g,) = adjoint(w, [cur], [1.0], [x])
    assert float(w.expand(g).subs(x, 0.7)) == pytest.approx(float(exact), rel=1e-12)


def test_substitute_renames_an_argument_inside_the_definitions_that_read_it():
    x, y, a = sp.symbols("x y a", real=True)
    w = Intermediates()
    u = w.aux(sp.cos(x) * y)
    z = w.aux(u ** 2 + sp.sin(x))
    (out,) = substitute(w, [z + y], {y: a})
    assert sp.simplify(w.expand(out) - ((sp.cos(x) * a) ** 2 + sp.sin(x) + a)) == 0
    assert w.expand(z) == (sp.cos(x) * y) ** 2 + sp.sin(x)  # the original is untouched
