"""mbsfmu.codegen.c_printer: the fast C printer of generated models.

Its text, compiled, evaluates every kind of expression it prints to within 1e-14 (relative) of
sympy's own evaluation; on the expressions of real models it prints exactly what sympy's C
printer prints (so the compiled code is bit-identical); the few things it does not print itself
go to sympy's printer, and symbols without a C name are reported."""

import ctypes
import importlib

import numpy as np
import pytest
import sympy as sp

from mbsfmu import derive
from mbsfmu.codegen import compile as cmp
from mbsfmu.codegen.c_printer import CPrinter, UnknownSymbols, _printer
from mbsfmu.codegen.c_source import c_names, output_groups
from mbsfmu.equations.articulated_body import articulated_body

x, y, z = sp.symbols("x y z", real=True)
NAMES = {x: "v[0]", y: "v[1]", z: "v[2]"}

#: one or more expressions of every kind the printer handles, and a few it hands to sympy
EXPRESSIONS = [
    x + y, x - y, -x - y + 3, x * y * z, -x * y, 2 * x * y, -3 * x * y * z, x / 2, -x / 2,
    -x / (2 * y), 3 * x / 7 + sp.Rational(5, 3), x / y, x / (y * z), -x * y / (z + 2),
    x**2, x**3, x**4, x**-1, x**-2, x / y**2, x / y**3, 2 * x / (y**2 * z**4), x**5, x**-5,
    y / (x + z)**2, (x + y)**-1, (x + y)**3 * z, -(x + y) * z, sp.sqrt(x**2 + 1),
    1 / sp.sqrt(x**2 + 1), x / sp.sqrt(y**2 + 2), (x**2 + 1)**sp.Rational(3, 2),
    (x**2 + 1)**sp.Rational(-3, 2), sp.cbrt(x), (x**2 + 2)**sp.Rational(1, 3) * y,
    sp.sin(x), sp.cos(x) * sp.sin(y) - sp.sin(x) * sp.cos(y) * z, sp.tan(x / 3),
    sp.asin(x / 4), sp.acos(y / 5), sp.atan(x * y), sp.atan2(y, x + 3), sp.sinh(x / 2),
    sp.cosh(y / 3), sp.tanh(z), sp.exp(-x**2), sp.log(y**2 + 2), sp.Abs(x - y),
    sp.sin(sp.cos(x)) ** 2, -sp.cos(x) ** 2 * y, sp.sqrt(2) * x, x / sp.pi, 2 * sp.pi * x,
    sp.Float(0.1) * x + sp.Float(2.5e-7) * y, x**y + 1, sp.Max(x, y) * z,
    sp.Piecewise((x, y > 0), (z, True)),
]


def _compile(texts, name):
    body = "\n".join(f"    out[{i}] = {t};" for i, t in enumerate(texts))
    macros = "".join(f"#ifndef {m}\n#define {m} {sp.N(v, 21)}\n#endif\n"
                     for m, v in (("M_PI", sp.pi), ("M_SQRT2", sp.sqrt(2))))
    src = f"#include <math.h>\n{macros}void f(const double *v, double *out)\n{{\n{body}\n}}\n"
    lib = ctypes.CDLL(str(cmp.compile_shared(src, name)))
    lib.f.argtypes = [ctypes.POINTER(ctypes.c_double)] * 2
    lib.f.restype = None
    return lib.f


def test_compiled_text_matches_sympy_evaluation(cache):
    f = _compile([CPrinter(NAMES).doprint(e) for e in EXPRESSIONS], "c_printer_kinds")
    rng = np.random.default_rng(11)
    for _ in range(20):
        v = rng.uniform(-0.9, 0.9, 3)
        out = np.zeros(len(EXPRESSIONS))
        f(v.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
          out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        ref = [complex(e.evalf(30, subs=dict(zip((x, y, z), map(sp.Float, v))))) for e in EXPRESSIONS]
        lam = sp.lambdify((x, y, z), EXPRESSIONS, "math")(*map(float, v))
        for e, got, r, l in zip(EXPRESSIONS, out, ref, lam):
            if abs(r.imag) > 0:  # outside the real domain at this point (x**y of x < 0)
                continue
            # relative to the value, or to 1 (the size of the terms) for a sum that cancels
            assert abs(got - l) <= 1e-14 * max(abs(l), 1.0), (e, got, l)
            assert abs(got - r.real) <= 1e-14 * max(abs(r.real), 1.0), (e, got, r)


def test_negative_powers_in_a_denominator_are_parenthesized():
    p = CPrinter(NAMES)
    assert p.doprint(x / y**2) == "v[0]/((v[1])*(v[1]))"
    assert p.doprint(x / (y**2 * z)) == "v[0]/(((v[1])*(v[1]))*v[2])"


def test_unknown_symbols_are_reported():
    w = sp.Symbol("w")
    with pytest.raises(UnknownSymbols) as info:
        CPrinter(NAMES).doprint(x + w * sp.sin(w))
    assert info.value.symbols == ["w"]
    with pytest.raises(UnknownSymbols):
        CPrinter(NAMES).doprint(sp.Max(x, w))  # through sympy's printer


def test_sub_expressions_can_be_named():
    p = CPrinter({**NAMES, sp.cos(x): "_f0"})
    assert p.doprint(y * sp.cos(x) + sp.sin(sp.cos(x))) == "v[1]*_f0 + sin(_f0)"


def _model_expressions(eqs):
    out = [sp.sympify(e) for g in output_groups(eqs).values() for e in g]
    ab = articulated_body(eqs)
    if ab.ydd is not None:
        out += list(ab.ydd)
    w = eqs.intermediates
    return [w.definitions[s] for s in w.symbols] + out


@pytest.mark.parametrize("name", ["andrews", "cart_pendulum", "double_pendulum", "four_bar",
                                  "slider_crank", "spinning_top"])
def test_same_text_as_sympy_on_model_expressions(name):
    eqs = derive(importlib.import_module(f"models.{name}").model())
    exprs = _model_expressions(eqs)  # derives them first: then every intermediate has a name
    names = c_names(eqs)
    ref = _printer()
    ref._print_Symbol = lambda e: names[e]  # sympy's printer without renaming (no re-sorting)
    p = CPrinter(names)
    assert exprs
    for e in exprs:
        assert p.doprint(e) == ref.doprint(e), e
