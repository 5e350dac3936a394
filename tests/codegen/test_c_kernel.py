"""The generated C kernel (compiled with -Wall -Wextra -Werror) agrees with the numpy backend."""


import numpy as np
import pytest
import sympy as sp
from c_support import shaker

from mbsfmu import derive
from mbsfmu.codegen import compile as cmp
from mbsfmu.codegen.c_source import generate_c
from mbsfmu.engine.c_kernel import CKernel, use_c_kernel
from models import andrews, cart_pendulum, double_pendulum, four_bar, slider_crank, spinning_top

MODELS = {"double_pendulum": double_pendulum, "cart_pendulum": cart_pendulum,
          "spinning_top": spinning_top, "slider_crank": slider_crank, "four_bar": four_bar,
          "andrews": andrews}


def _close(a, b, what):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, what
    if a.size == 0:
        return
    scale = np.max(np.abs(a))
    assert np.max(np.abs(a - b)) <= 1e-12 * scale + 1e-300, (what, a, b)


@pytest.mark.parametrize("name", [*MODELS, "shaker"])
def test_c_kernel_matches_numpy_backend(cache, name):
    s = shaker() if name == "shaker" else MODELS[name].model()
    num = derive(s).numeric()
    k = CKernel(num)
    assert k.path.parent == cache
    rng = np.random.default_rng(7)
    for _ in range(5):
        t = rng.uniform(0, 3)
        y, yd = rng.uniform(-2, 2, num.f), rng.uniform(-2, 2, num.f)
        u = rng.uniform(-5, 5, len(num.u))
        for a, b, g in ((num.mass_and_force(t, y, yd, u), k.mass_and_force(t, y, yd, u), "M, h"),
                        (num.mass_and_force(t, y, yd), k.mass_and_force(t, y, yd), "M, h (u)")):
            for x, z in zip(a, b):
                _close(x, z, f"{name} {g}")
        if num.m:
            for x, z in zip(num.constraint_parts(t, y), k.constraint_parts(t, y)):
                _close(x, z, f"{name} constraint_parts")
            for x, z in zip(num.constrained_parts(t, y, yd, u), k.constrained_parts(t, y, yd, u)):
                _close(x, z, f"{name} constrained_parts")
        T, V = num.energy_series(np.array([t]), y[:, None], yd[:, None],
                                 u[:, None] if len(u) else None)
        _close([T[0], V[0]], k.energy(t, y, yd, u), f"{name} energy")


def test_cache_reuses_library(fresh_cache):
    src = generate_c(derive(slider_crank.model()))
    first = cmp.compile_shared(src, "slider_crank")
    n, mtime = cmp.compile_count, first.stat().st_mtime_ns
    again = cmp.compile_shared(src, "slider_crank")
    assert again == first and cmp.compile_count == n and first.stat().st_mtime_ns == mtime
    # a different source is a different library
    other = cmp.compile_shared(src + "\n/* changed */\n", "slider_crank")
    assert other != first and cmp.compile_count == n + 1
    assert not list(fresh_cache.glob("*.tmp"))


def test_broken_source_raises_compile_error(cache):
    with pytest.raises(cmp.CompileError, match="undeclared_thing"):
        cmp.compile_shared("double f(void) { return undeclared_thing; }\n", "broken")
    # warnings are errors too
    with pytest.raises(cmp.CompileError, match="unused"):
        cmp.compile_shared("void g(void) { int a; }\n", "warns")
    assert not list(cache.glob("broken*.so")) and not list(cache.glob("*.tmp"))


def test_missing_compiler_is_reported(cache, monkeypatch):
    monkeypatch.setenv("CC", "no-such-compiler-mbsfmu")
    with pytest.raises(cmp.CompileError, match="not found"):
        cmp.compile_shared("int h(void) { return 0; }\n", "nocc")


def test_powers_are_products():
    src = generate_c(derive(shaker()))
    assert "pow(" not in src
    assert "mbs_constrained" in src and "#define MBS_NTP 3" in src and "tp[2]" in src


def test_parameter_and_input_changes_are_seen(cache):
    num = derive(cart_pendulum.model()).numeric()
    k = CKernel(num)
    y, yd = np.array([0.3, -0.7]), np.array([1.1, 0.4])
    k.mass_and_force(0.0, y, yd)
    name = num.constant_names[0]
    num.set_params({name: 2.5 * num.params[name]})
    num.set_inputs({num.input_names[0]: 3.0})
    for x, z in zip(num.mass_and_force(0.0, y, yd), k.mass_and_force(0.0, y, yd)):
        _close(x, z, "after set_params/set_inputs")
    assert num.u[0] == 3.0


@pytest.mark.parametrize("name, kw", [
    ("double_pendulum", {}),
    ("cart_pendulum", {"inputs": {"F": 0.5}}),
    ("slider_crank", {"formulation": "qr"}),
    ("andrews", {"formulation": "projection", "t_end": 0.03, "dt": 0.01}),
])
def test_simulate_with_c_backend_matches_numpy(name, kw, cache):
    """The whole simulation with the C kernel reproduces the numpy reference."""
    import importlib

    import mbsfmu

    mod = importlib.import_module(f"models.{name}")
    args = {"t_end": 1.0, "dt": 0.25, "rtol": 1e-10, **kw}
    ref = mbsfmu.simulate(mod.model(), backend="numpy", **args)
    fast = mbsfmu.simulate(mod.model(), backend="c", **args)
    assert fast.stats["backend"] == "c"
    np.testing.assert_allclose(fast.y, ref.y, rtol=0, atol=1e-9 * max(1.0, np.abs(ref.y).max()))
    with pytest.raises(mbsfmu.ParameterError, match="unknown backend 'fortran'"):
        mbsfmu.simulate(mod.model(), backend="fortran", **args)


def test_tree_simulation_with_c_backend_uses_the_compiled_right_hand_side(cache):
    """Constant inputs: one CompiledRHS call per evaluation; an input function of time: the
    per-state kernel.  Both reproduce the numpy reference."""
    import math

    import mbsfmu
    from mbsfmu.engine.compiled_rhs import CompiledRHS
    from mbsfmu.reference.formulations.minimal_ode import MinimalODE
    from models import cart_pendulum

    args = {"t_end": 1.0, "dt": 0.25, "rtol": 1e-10}
    for inputs in ({"F": 0.5}, {"F": lambda t: 0.5 * math.sin(3 * t)}):
        ref = mbsfmu.simulate(cart_pendulum.model(), inputs=inputs, **args)
        fast = mbsfmu.simulate(cart_pendulum.model(), inputs=inputs, backend="c", **args)
        np.testing.assert_allclose(fast.y, ref.y, rtol=0, atol=1e-9 * max(1.0, np.abs(ref.y).max()))
    num = derive(cart_pendulum.model()).numeric()
    use_c_kernel(num)
    assert isinstance(MinimalODE(num, {"F": 0.5}).rhs, CompiledRHS)
    assert not isinstance(MinimalODE(num, {"F": lambda t: t}).rhs, CompiledRHS)


def _driven_loop():
    """The shaker's pendulum with a second, free coordinate held by a rheonomic constraint
    (c depends on t through a time parameter, so b' and b'' have time terms)."""
    s = shaker()
    (x,) = s.coordinates("x")
    s.constraint("follow", x - s.time_parameters["p"].symbol - 0.2 * sp.sin(s.y[0]))
    s.body("slide", ref="ISYS", rel_pos=[x, 0, 0], mass=0.3, inertia=[0, 0, 0])
    return s


@pytest.mark.parametrize("name", ["slider_crank", "four_bar", "andrews", "driven_loop"])
def test_constrained_halves_equal_the_whole(cache, name):
    """mbs_constrained_positions (c, C, b' at y, and the intermediates it passes on) followed by
    mbs_constrained_velocities (M, q - k, b'' at (y, y')) write what mbs_constrained writes, and
    the first half does not read y'."""
    import ctypes

    from mbsfmu.codegen.c_source import constrained_split

    s = _driven_loop() if name == "driven_loop" else MODELS[name].model()
    eqs = derive(s)
    num = eqs.numeric()
    k = CKernel(num)
    f, m = num.f, num.m
    pos, vel, shared = constrained_split(eqs)
    n = f * f + f + 3 * m + m * f
    assert len(pos) == 2 * m + m * f and len(vel) == f * f + f + m
    assert sorted(i for i, _ in pos + vel) == list(range(n))
    P = ctypes.POINTER(ctypes.c_double)
    halves = [getattr(k.lib, f"mbs_constrained_{h}") for h in ("positions", "velocities")]
    for fn in halves:
        fn.argtypes, fn.restype = [ctypes.c_double, P, P, P, P, P, P], None
    rng = np.random.default_rng(11)
    prm = np.asarray(num.prm, dtype=float)
    for _ in range(4):
        t = rng.uniform(0, 2)
        y, yd = rng.uniform(-2, 2, f), rng.uniform(-2, 2, f)
        whole = np.concatenate([np.ravel(a) for a in k.constrained_parts(t, y, yd)])
        tp = np.asarray(num._tp_at(t), dtype=float) if len(num._tp_at(t)) else np.zeros(1)
        out = np.full(n + len(shared), np.nan)
        args = [np.ascontiguousarray(a) for a in (y, prm, np.zeros(max(len(num.u), 1)), tp)]
        ptr = [a.ctypes.data_as(P) for a in args]
        junk = np.full(f, np.nan)  # the first half must not read y'
        halves[0](t, ptr[0], junk.ctypes.data_as(P), ptr[1], ptr[2], ptr[3], out.ctypes.data_as(P))
        assert np.all(np.isfinite(out[f * f + f:2 * m + m * f + f * f + f]))
        halves[1](t, ptr[0], np.ascontiguousarray(yd).ctypes.data_as(P), ptr[1], ptr[2], ptr[3],
                  out.ctypes.data_as(P))
        _close(whole, out[:n], f"{name} halves")
