"""Right-hand side of a planar 10-link pendulum chain: mbsfmu's CompiledRHS against PyDy's cython.

The issue's target: the compiled kernel's full right-hand side x' = f(t, x) of a 10-link chain,
called from Python, is at least 20 times faster than PyDy's cython backend called the same way.

**The system.** N links (default 10) hinged end to end by revolute joints about z, moving in
the x-y plane under gravity along -y.  Link i has mass m and length L, lies along its own x
axis (joint at 0, centre of gravity at L/2, next joint at L) and is a uniform rod (inertia
m L^2 / 12 about the cg for rotations about y and z).  The coordinates are the *relative*
joint angles q_i (link i against link i-1; link 1 against the inertial x axis), in both
programs; the speeds are u_i = q_i'.  m, L and g are symbols with default values.

* mbsfmu: ``System`` -> ``mbsfmu.derive`` -> ``numeric()`` -> :class:`CompiledRHS` (the C
  engine's right-hand side of the model: generated C for y'' by the articulated-body algorithm,
  called through the engine extension's ``RHS`` type by vectorcall; the breakdown also times the
  engine's mass-matrix path: M and q - k, Cholesky solve).
* PyDy: ``sympy.physics.mechanics.KanesMethod`` (``orient_axis``, ``v2pt_theory``,
  ``RigidBody``) and ``pydy.codegen.ode_function_generators.generate_ode_function`` with
  ``generator='cython'`` in the minimal form M(q) u' = F(q, u), q' = u (PyDy solves the f x f
  system with numpy), ``constants_arg_type='array'`` (its fastest argument form).

**Check.** At one random state (angles and rates uniform in [-1, 1], default parameters) the two
x' must agree to 1e-10 relative (max |a - b| / max |b|); otherwise the script exits with
status 1 before timing.

**What is timed**, in one process at that state, per call from Python with ``timeit`` (best of
``--repeat`` repeats of ``--number`` calls): ``rhs(t, x)`` of mbsfmu's CompiledRHS and PyDy's
``rhs(x, t, p)`` (no specified inputs, so PyDy's function has no ``r`` argument).  For the
breakdown it also times the engine instance's own ``rhs(t, x)`` (its stored values: no reads of
``numeric.prm`` and ``numeric.u``), ``numpy.empty`` of x' (the allocation every call makes),
``numpy.linalg.solve`` of an N x N system (which PyDy calls inside its rhs) and mbsfmu's numpy
reference backend.
Derivation and compilation times are printed but are not part of the comparison.

    .venv/bin/python bench/chain_rhs.py [--links 10] [--number 20000] [--repeat 7] [--seed 1]

Needs the ``bench`` extra (``pip install -e .[bench]``: pydy, cython) and a C compiler.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
import timeit

import numpy as np

from mbsfmu import derive

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PARAMS = {"m": 1.0, "L": 0.5, "g": 9.81}
TARGET = 20.0
MB = "mbsfmu CompiledRHS rhs(t, x) (engine)"
PYDY = "PyDy cython rhs(x, t, p)"


def mbsfmu_chain(n: int):
    """The planar chain as an mbsfmu System (relative joint angles q1..qn)."""
    from mbsfmu import System, rot_z

    s = System(f"planar_chain{n}")
    m, L, g = s.constants(**PARAMS)
    s.gravity([0, -g, 0])
    J = m * L**2 / 12
    ref = "ISYS"
    for i in range(1, n + 1):
        (q,) = s.coordinates(f"q{i}")
        s.body(f"B{i}", ref=ref, rel_rot=rot_z(q), cg_pos=[L / 2, 0, 0], mass=m,
               inertia=[0, J, J])
        ref = s.frame(f"B{i}_tip", ref=f"B{i}", pos=[L, 0, 0])
    return s


def kane_chain(n: int):
    """The same chain with KanesMethod; returns (M, forcing, qs, us, constants)."""
    import sympy as sp
    import sympy.physics.mechanics as me

    m, L, g = sp.symbols(list(PARAMS), real=True)
    J = m * L**2 / 12
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    parent, joint = N, O
    qs, us, bodies, loads = [], [], [], []
    for i in range(1, n + 1):
        q, u = me.dynamicsymbols(f"q{i} u{i}")
        qs.append(q)
        us.append(u)
        B = me.ReferenceFrame(f"B{i}")
        B.orient_axis(parent, parent.z, q)
        B.set_ang_vel(parent, u * parent.z)
        G = joint.locatenew(f"G{i}", L / 2 * B.x)
        tip = joint.locatenew(f"P{i}", L * B.x)
        G.v2pt_theory(joint, N, B)
        tip.v2pt_theory(joint, N, B)
        bodies.append(me.RigidBody(f"B{i}", G, B, m, (me.inertia(B, 0, J, J), G)))
        loads.append((G, -m * g * N.y))
        parent, joint = B, tip
    t = me.dynamicsymbols._t
    kd = [q.diff(t) - u for q, u in zip(qs, us)]
    km = me.KanesMethod(N, q_ind=qs, u_ind=us, kd_eqs=kd)
    km.kanes_equations(bodies, loads)
    return km.mass_matrix, km.forcing, qs, us, [m, L, g]


def best_us(stmt, number: int, repeat: int) -> float:
    """Best time of one call in microseconds."""
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number * 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--links", type=int, default=10)
    ap.add_argument("--number", type=int, default=20000, help="calls per timing repeat")
    ap.add_argument("--repeat", type=int, default=7, help="timing repeats (best is taken)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    n = args.links

    import sympy as sp
    from pydy.codegen.ode_function_generators import generate_ode_function

    from mbsfmu.engine.compiled_rhs import CompiledRHS

    # ---------------------------------------------------------------- build both
    t0 = time.perf_counter()
    num = derive(mbsfmu_chain(n)).numeric()
    t_mb_derive = time.perf_counter() - t0
    t0 = time.perf_counter()
    rhs_mb = CompiledRHS(num)
    t_mb_compile = time.perf_counter() - t0

    t0 = time.perf_counter()
    M, F, qs, us, consts = kane_chain(n)
    t_kane = time.perf_counter() - t0
    t0 = time.perf_counter()
    rhs_pydy = generate_ode_function(F, qs, us, consts, mass_matrix=M,
                                     coordinate_derivatives=sp.Matrix(us), generator="cython",
                                     constants_arg_type="array")
    t_pydy_compile = time.perf_counter() - t0
    p = np.array([PARAMS[str(c)] for c in consts])

    print(f"planar {n}-link chain, {n} coordinates (relative joint angles), "
          f"{len(num.eqs.intermediates)} mbsfmu intermediates, algorithm {rhs_mb.algorithm!r}")
    print(f"mbsfmu: derivation + numeric {t_mb_derive:.2f} s, C generation + compile "
          f"{t_mb_compile:.2f} s")
    print(f"PyDy:   KanesMethod {t_kane:.2f} s, cython generation + compile {t_pydy_compile:.2f} s")

    # ---------------------------------------------------------------- check
    rng = np.random.default_rng(args.seed)
    x = rng.uniform(-1, 1, 2 * n)
    t = 0.0
    a, b = rhs_mb(t, x), rhs_pydy(x, t, p)
    ref = num.accelerations(t, x[:n], x[n:])
    diff = np.max(np.abs(a - b)) / np.max(np.abs(b))
    diff_np = np.max(np.abs(a[n:] - ref)) / np.max(np.abs(ref))
    print(f"check at a random state: max|mbsfmu - PyDy| / max|PyDy| = {diff:.1e}, "
          f"against mbsfmu's numpy backend {diff_np:.1e}")
    if not diff <= 1e-10:
        print("the two right-hand sides disagree: not timing")
        return 1

    # ---------------------------------------------------------------- time
    nb, rp = args.number, args.repeat
    # for the breakdown only: the engine's mass-matrix path, the engine instance's own rhs
    # (its stored values, equal to num's defaults: no reads of num.prm and num.u)
    rhs_mm = CompiledRHS(num, algorithm="mass_matrix")   # M + Cholesky instead of the ABA
    rhs_mm(t, x)
    own = rhs_mb.instance.rhs
    assert np.array_equal(own(t, x), rhs_mb(t, x))
    A = np.eye(n) + 0.1
    times = {
        MB: best_us(lambda: rhs_mb(t, x), nb, rp),
        PYDY: best_us(lambda: rhs_pydy(x, t, p), nb, rp),
        "  mbsfmu engine, M + Cholesky algorithm": best_us(lambda: rhs_mm(t, x), nb, rp),
        "  mbsfmu engine Instance.rhs(t, x)": best_us(lambda: own(t, x), nb, rp),
        f"  numpy.empty({2 * n}) (the returned x')": best_us(lambda: np.empty(2 * n), nb, rp),
        f"  numpy.linalg.solve, {n}x{n} (PyDy uses it)": best_us(lambda: np.linalg.solve(A, x[:n]),
                                                              nb, rp),
        "mbsfmu numpy backend accelerations": best_us(lambda: num.accelerations(t, x[:n], x[n:]),
                                                      max(nb // 20, 1), rp),
    }
    print()
    print(f"{'per call from Python':<44} {'us':>9}")
    print("-" * 54)
    for k, v in times.items():
        print(f"{k:<44} {v:9.2f}")
    ratio = times[PYDY] / times[MB]
    print()
    print(f"PyDy / mbsfmu = {ratio:.1f}")
    print(f"target PyDy / mbsfmu >= {TARGET:g}: {'met' if ratio >= TARGET else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
