"""A tree model built for the engine derives and emits only what its run needs.

The articulated-body run needs neither M nor k: ``derive(system)`` derives them on first
use, the engine's model.c gets ``mbs_dynamics`` (used only by runs without the ABA) from the
recursive Newton-Euler M v, and the parameter probe takes M the same way.  What was derived and
emitted is checked, and the results against the numpy reference (no timings).
"""

import ctypes
import re

import numpy as np
import pytest

import mbsfmu
from mbsfmu import System, derive, sequence
from mbsfmu.codegen.c_model import model_sources
from mbsfmu.codegen.c_source import CHUNK_STATEMENTS, function_lines, generate_c_functions, sizes
from mbsfmu.codegen.compile import compile_shared
from mbsfmu.engine.extension import Engine
from mbsfmu.equations.recursive_newton_euler import recursive_newton_euler
from mbsfmu.model.loader import load_model


def chain(n: int) -> System:
    """A spatial chain of n links on universal joints (bench/derive.py --joint universal)."""
    s = System(f"uchain{n}")
    m, L, g, Ixx, Iyy, Izz, Ixy = s.constants(m=1.0, L=0.5, g=9.81, Ixx=0.0215, Iyy=0.022,
                                               Izz=0.0012, Ixy=0.0003)
    s.gravity([0, 0, -g])
    ref = "ISYS"
    for i in range(1, n + 1):
        a, b = s.coordinates(f"a{i}", f"b{i}")
        s.body(f"B{i}", ref=ref, rel_pos=[0, 0, 0], rel_rot=sequence("xy", [a, b]),
               cg_pos=[0, 0, -L / 2], mass=m, inertia=[[Ixx, Ixy, 0], [Ixy, Iyy, 0], [0, 0, Izz]])
        ref = s.frame(f"B{i}_tip", ref=f"B{i}", pos=[0, 0, -L])
    return s


def test_engine_build_of_a_tree_derives_no_mass_matrix():
    s = chain(3)
    eqs = derive(s)
    assert not eqs.is_derived("M") and not eqs.is_derived("k") and not eqs.is_derived("q")
    files = model_sources(s, "qr")
    src = files["model.c"]
    assert not eqs.is_derived("M") and not eqs.is_derived("k")
    assert "#define MBS_HAS_ABA 1" in files["model_config.h"]
    # mbs_aba in a file of its own, compiled in parallel with model.c
    assert "int mbs_aba(" in files["model_aba.c"] and "mbs_aba(" not in src
    # mbs_dynamics is the column loop over the recursive Newton-Euler M v, not a printed M
    assert "mbs_mass_times(t, y, e, prm, u, tp, col);" in src
    # its Newton-Euler parts in a file of their own, which needs no header
    assert "void mbs_mass_times(" in files["model_tree.c"] and "#include \"" not in files["model_tree.c"]
    dynamics = src[src.index("void mbs_dynamics("):]
    dynamics = dynamics[:dynamics.index("\n}\n")]
    assert "_w" not in dynamics
    # asking for M derives it
    assert eqs.M.shape == (6, 6) and eqs.is_derived("M")


def test_models_with_constraints_still_print_the_mass_matrix():
    s = load_model("models/slider_crank.py")
    files = model_sources(s, "qr")
    assert "mbs_mass_times" not in files["model.c"] and derive(s).is_derived("M")
    assert "mbs_aba(" not in files["model_aba.c"] and "#define MBS_HAS_ABA 0" in files["model_config.h"]


@pytest.mark.parametrize("model", ["models/double_pendulum.py", "models/spinning_top.py",
                                   "models/cart_pendulum.py"])
def test_recursive_newton_euler_is_the_assembled_mass_matrix(model):
    s = load_model(model)
    eqs = derive(s)
    rn = recursive_newton_euler(eqs)
    num = eqs.numeric()
    rng = np.random.default_rng(3)
    y, yd = rng.uniform(-1, 1, num.f), rng.uniform(-1, 1, num.f)
    M, h = num.mass_and_force(0.0, y, yd)
    fm = num._fn("test_mass_times", lambda: rn.mass_times)
    fh = num._fn("test_force", lambda: rn.force)
    tp = num._tp_at(0.0)
    M2 = np.column_stack([fm(0.0, y, e, num.prm, num.u, tp) for e in np.eye(num.f)])
    assert np.abs(M2 - M).max() <= 1e-13 * np.abs(M).max()
    assert np.abs(np.array(fh(0.0, y, yd, num.prm, num.u, tp)) - h).max() <= 1e-13 * np.abs(h).max()


def test_tree_engine_without_aba_runs_the_newton_euler_mass_matrix():
    """Both engine paths of the same build (ABA, and M from mbs_dynamics + Cholesky) against
    the numpy reference (M and q - k assembled symbolically)."""
    s = chain(4)
    grid = np.linspace(0.0, 0.5, 11)
    start = {"a1": 0.4, "b2": -0.3, "a3": 0.2, "b4": 0.5}
    runs = []
    for aba in (True, False):
        eng = Engine(s, aba=aba)
        eng.set({**start, "solver_rtol": 1e-11})
        eng.start()
        records, reached, status, message, code = eng.run(grid)
        assert status == 0, message
        runs.append(np.asarray(records)[:, :8])
    ref = mbsfmu.simulate(s, t_end=0.5, dt=0.05, rtol=1e-11, backend="numpy", method="rkstab",
                          initial=start)
    for r in runs:
        assert np.abs(r - ref.y.T).max() < 1e-8
    assert np.abs(runs[0] - runs[1]).max() < 1e-8


def test_tree_energy_from_the_newton_euler_mass_times(cache):
    """mbs_energy of an engine build of a scleronomic tree: T = y'^T (M v) / 2, V printed;
    neither derives the kinetic energy, both equal the numpy reference's energies."""
    s = chain(3)
    eqs = derive(s)
    functions, _ = generate_c_functions(eqs, tree_dynamics=True)
    assert not eqs.is_derived("energies")
    assert "mbs_mass_times(t, y, yd, prm, u, tp, my);" in functions
    n = sizes(eqs)
    src = "#include <math.h>\n" + "".join(f"#define MBS_{k} {v}\n" for k, v in n.items()) + functions
    lib = ctypes.CDLL(str(compile_shared(src, "tree_energy")))
    num = eqs.numeric()
    rng = np.random.default_rng(5)
    ptr = ctypes.POINTER(ctypes.c_double)
    for _ in range(3):
        y, yd = rng.uniform(-1, 1, num.f), rng.uniform(-1, 1, num.f)
        args = [np.ascontiguousarray(a, dtype=float) for a in (y, yd, num.prm, [0.0], [0.0])]
        out = np.zeros(2)
        lib.mbs_energy(ctypes.c_double(0.0), *[a.ctypes.data_as(ptr) for a in args],
                       out.ctypes.data_as(ptr))
        T, V = (float(v[0]) for v in num.energy_series(np.zeros(1), y[:, None], yd[:, None]))
        assert abs(out[0] - T) <= 1e-13 * abs(T) and abs(out[1] - V) <= 1e-13 * max(abs(V), 1.0)


def test_model_aba_is_compiled_while_the_model_is_generated(cache):
    """model_aba.c includes no model header: the engine build hands it to precompile_object as
    soon as it is printed, and links the cached object (no second compile of it)."""
    from mbsfmu.codegen import compile as cmp
    from mbsfmu.engine import extension  # the engine build, which calls precompile_object

    s = chain(2)
    started = []
    real = extension.precompile_object

    def spy(name, text, include_dirs=()):
        started.append((name, derive(s).is_derived("recursive_newton_euler")))
        real(name, text, include_dirs)

    extension.precompile_object = spy
    try:
        extension.engine_module(s)
    finally:
        extension.precompile_object = real
    # started before model.c's functions (the Newton-Euler parts) were derived
    assert started == [("model_aba.c", False), ("model_tree.c", True)]
    assert len(list((cache / "objects").glob("model_aba_*.o"))) == 1
    assert len(list((cache / "objects").glob("model_tree_*.o"))) == 1
    assert not cmp._PENDING


def test_compiled_rhs_on_the_aba_derives_no_mass_matrix(cache):
    """CompiledRHS of a tree runs the engine's mbs_aba: neither M nor k is derived, and the
    engine module's mbs_dynamics is the Newton-Euler one."""
    from mbsfmu.engine.compiled_rhs import CompiledRHS

    s = chain(3)
    eqs = derive(s)
    num = eqs.numeric()
    rhs = CompiledRHS(num)
    assert rhs.algorithm == "aba" and "mbs_mass_times" in rhs.source
    assert not eqs.is_derived("M") and not eqs.is_derived("k")
    x = np.random.default_rng(2).uniform(-1, 1, 2 * num.f)
    M, h = num.mass_and_force(0.0, x[:num.f], x[num.f:])
    ydd = np.linalg.solve(M, h)
    assert np.abs(rhs(0.0, x)[num.f:] - ydd).max() <= 1e-12 * np.abs(ydd).max()


def test_long_functions_are_split_into_parts():
    body = [f"    const double _w{i} = y[0] + {i};" for i in range(2 * CHUNK_STATEMENTS + 5)]
    body.append("    if (!(_w3 > 0)) return 1;")
    body.append(f"    out[0] = _w0 + _w{2 * CHUNK_STATEMENTS + 4};")
    text = "\n".join(function_lines("int", "mbs_f", body))
    assert text.count("static int mbs_f_part") == 3
    # _w0 and _w3 are read by the last part: stored in W, read from there
    assert re.search(r"W\[\d+\] = _w0;", text) and re.search(r"out\[0\] = W\[\d+\] \+ _w", text)
    assert "if ((rc = mbs_f_part2(t, y, yd, prm, u, tp, out, W)) != 0)" in text
    short = "\n".join(function_lines("void", "mbs_g", body[:10]))
    assert "part" not in short and "double W[" not in short
