"""Constraint Jacobian C, b' and b'' (seed 000 eqs. 5-7) against sympy differentiation of the
closed-form constraint c(y, t): C = dc/dy, b' = dc/dt, b'' = d/dt(C y' + b') at y'' = 0."""

import numpy as np
import pytest
import sympy as sp

from mbsfmu import System, cardan, derive, rot_x, rot_y, rot_z


def spatial_loop_system(translations, rotations, in_frame, moving_base):
    s = System("loop3d")
    l1, l2, A = s.constants(l1=0.7, l2=0.4, A=0.3)
    a, b, c, d = s.coordinates("a", "b", "c", "d")
    base = "ISYS"
    if moving_base:
        z = s.time_parameter("z", A * sp.sin(2 * s.t))
        s.frame("base", pos=[0.1, z, 0], rot=rot_y(z / 3))
        base = "base"
    s.body("B1", ref=base, rel_rot=cardan(a, b, 0), cg_pos=[l1, 0, 0], mass=1, inertia=[1, 1, 1])
    s.body("B2", ref="B1_cg", rel_pos=[0, l2, 0], rel_rot=rot_x(c), cg_pos=[0, 0, l2], mass=1,
           inertia=[1, 1, 1])
    s.body("B3", ref="ISYS", rel_pos=[d, 0.2, 0], rel_rot=rot_z(d), mass=1, inertia=[1, 1, 1])
    s.loop("L", "B2_cg", "B3", translations=translations, rotations=rotations,
           in_frame=in_frame)
    return s


def check_against_differentiation(s, n_points=3, seed=0):
    eqs = derive(s)
    ex = eqs.expanded
    c, C, b1, b2 = ex(eqs.c), ex(eqs.C), ex(eqs.b1), ex(eqs.b2)
    y, yd = sp.Matrix(s.y), sp.Matrix(s.yd)
    D = eqs.kinematics.D
    C_ref = c.jacobian(y)
    b1_ref = D(c) - C_ref * yd
    b2_ref = D(C_ref * yd + b1_ref, without_ydd=True)
    rng = np.random.default_rng(seed)
    tps = list(s.time_parameters.values())
    symbols = (list(s.y) + list(s.yd) + [s.t]
               + [p for tp in tps for p in (tp.symbol, tp.velocity, tp.acceleration)]
               + [cc.symbol for cc in s.constants_.values()])
    pairs = [(sp.lambdify(symbols, got, "numpy"), sp.lambdify(symbols, ref, "numpy"))
             for got, ref in ((C, C_ref), (b1, b1_ref), (b2, b2_ref))]
    nq = 2 * len(s.y) + 1
    for _ in range(n_points):
        vals = list(rng.uniform(-1.5, 1.5, nq))
        t = vals[-1]
        for tp in tps:  # consistent p, p', p'' at the drawn time
            vals += [float(e.subs(s.t, t).subs(_consts(s))) for e in tp.expressions]
        vals += [cc.value for cc in s.constants_.values()]
        for got, ref in pairs:
            np.testing.assert_allclose(got(*vals), ref(*vals), rtol=1e-12, atol=1e-12)
    return c


def _consts(s):
    return {cc.symbol: cc.value for cc in s.constants_.values()}


@pytest.mark.parametrize("translations, rotations, in_frame, moving", [
    ("xyz", "", None, False),
    ("xz", "y", "B3", True),
    ("", "xyz", None, True),
    ("y", "z", "B1", False),
])
def test_loop_closure_derivatives(translations, rotations, in_frame, moving):
    s = spatial_loop_system(translations, rotations, in_frame, moving)
    c = check_against_differentiation(s)
    assert c.rows == len(translations) + len(rotations)
    assert s.constraint_names == [f"L.{a}" for a in translations] + [f"L.r{a}" for a in rotations]


def test_rotational_condition_is_sine_of_relative_angle():
    s = System("rot")
    a, b = s.coordinates("a", "b")
    s.body("A", rel_rot=rot_z(a), mass=1, inertia=[1, 1, 1])
    s.body("B", rel_rot=rot_z(b), mass=1, inertia=[1, 1, 1])
    s.loop("same", "A", "B", translations="", rotations="z")
    eqs = derive(s)
    assert sp.simplify(eqs.expanded(eqs.c)[0] - sp.sin(b - a)) == 0


def test_general_constraint_with_time_parameter():
    s = System("gen")
    w, = s.constants(w=1.3)
    p = s.time_parameter("p", sp.cos(w * s.t))
    x, y = s.coordinates("x", "y")
    s.body("P", rel_pos=[x, y, 0], mass=1, inertia=[1, 1, 1])
    s.constraint("circle", x**2 + y**2 - (1 + p / 4) ** 2)
    check_against_differentiation(s)
