"""Scheduling (Tarjan, execution order) and algebraic loops: detection and iteration."""

import math

import numpy as np
import pytest
from runner_support import Clock, Const, Gain, Sum

from mbsfmu.runner import SISO, AlgebraicLoopError, Diagram, DiagramError
from mbsfmu.runner.algebraic_loops import solve_fixed_point
from mbsfmu.runner.scheduling import (
    AlgebraicLoop,
    execution_order,
    is_loop,
    strongly_connected_components,
)


class Func(SISO):
    """y = f(u) with direct feed-through."""

    def __init__(self, f):
        self.f = f

    def feedthrough(self):
        return {"y": ("u",)}

    def output(self, t, u):
        return (self.f(u[0]),)

    def get_state(self):
        return {}

    def set_state(self, state):
        pass


class Delay(SISO):
    """Unit delay: y_n = u_{n-1} (no feed-through)."""

    def start(self, t0, dt):
        self.x = 0.0

    def output(self, t, u):
        return (self.x,)

    def update(self, t, u):
        self.x = u[0]


def feedback(k, signs="+-", r=None):
    """r -> sum(+r, sign * k y) -> y: y = r + s k y."""
    d = Diagram(0.1)
    d.add("r", Const(1.0) if r is None else r)
    d.add("sum", Sum(signs))
    d.add("gain", Gain(k))
    d.connect("r.y", "sum.u1")
    d.connect("gain.y", "sum.u2")
    d.connect("sum.y", "gain.u")
    return d


# ---------------------------------------------------------------- graph algorithms


def test_tarjan_components_in_reverse_topological_order():
    # 0 -> 1 -> 2 -> 0 (a cycle), 2 -> 3, 3 -> 4 -> 3 (a cycle), 5 alone, 6 -> 6 (self loop)
    succ = [[1], [2], [0, 3], [4], [3], [], [6]]
    comps = strongly_connected_components(succ)
    assert sorted(map(tuple, comps)) == [(0, 1, 2), (3, 4), (5,), (6,)]
    pos = {tuple(c): i for i, c in enumerate(comps)}
    assert pos[(3, 4)] < pos[(0, 1, 2)]  # a component comes before those with edges into it
    order = execution_order(succ)
    assert order == [(0, 1, 2), (3, 4), (5,), (6,)]
    assert [is_loop(c, succ) for c in order] == [True, True, False, True]


def test_execution_order_is_topological_with_ties_by_number():
    # 3 -> 1 -> 0, 2 -> 0, 4 independent
    succ = [[], [0], [0], [1], []]
    assert execution_order(succ) == [(2,), (3,), (1,), (0,), (4,)]


def test_tarjan_is_iterative_on_a_long_chain():
    n = 20000  # a recursive DFS would exceed Python's recursion limit
    succ = [[i + 1] for i in range(n - 1)] + [[0]]
    comps = strongly_connected_components(succ)
    assert len(comps) == 1 and len(comps[0]) == n
    succ[-1] = []
    assert execution_order(succ) == [(i,) for i in range(n)]


# ---------------------------------------------------------------- detection


def test_algebraic_loop_error_lists_blocks_and_ports():
    d = feedback(0.5)
    with pytest.raises(AlgebraicLoopError) as info:
        d.check()
    msg = str(info.value)
    assert msg.startswith("1 algebraic loop(s): [sum, gain] via ")
    assert "gain.y -> sum.u2" in msg and "sum.y -> gain.u" in msg
    assert "algebraic_loops='iterate'" in msg
    assert info.value.loops == [AlgebraicLoop(("sum", "gain"),
                                              (("gain.y", "sum.u2"), ("sum.y", "gain.u")))]
    assert isinstance(info.value, DiagramError)


def test_two_loops_and_a_self_loop_are_all_reported():
    d = Diagram(0.1)
    d.add("c", Const(1.0))
    d.add("s1", Sum())
    d.add("g1", Gain(0.1))
    d.add("self_", Sum())
    d.connect("c.y", "s1.u1")
    d.connect("g1.y", "s1.u2")
    d.connect("s1.y", "g1.u")
    d.connect("s1.y", "self_.u1")
    d.connect("self_.y", "self_.u2")
    with pytest.raises(AlgebraicLoopError, match=r"2 algebraic loop\(s\): \[s1, g1\] via .*; "
                                                 r"\[self_\] via self_.y -> self_.u2\.") as info:
        d.run(1.0)
    assert [loop.blocks for loop in info.value.loops] == [("s1", "g1"), ("self_",)]
    assert [loop.blocks for loop in d.check(algebraic_loops="iterate")] == [("s1", "g1"),
                                                                            ("self_",)]


def test_a_delay_breaks_the_loop():
    d = Diagram(0.1)
    d.add("c", Const(1.0))
    d.add("sum", Sum("+-"))
    d.add("gain", Gain(0.5))
    d.add("z", Delay())
    d.connect("c.y", "sum.u1")
    d.connect("z.y", "sum.u2")
    d.connect("sum.y", "gain.u")
    d.connect("gain.y", "z.u")
    assert d.check() == []
    res = d.run(0.5)
    # y_n = 1 - 0.5 * 0.5 * ... : s_n = 1 - 0.5 s_{n-1}, s_0 = 1
    s = [1.0]
    for _ in range(5):
        s.append(1 - 0.5 * s[-1])
    np.testing.assert_allclose(res["sum.y"], s, rtol=1e-15)


# ---------------------------------------------------------------- iteration


def test_iterate_solves_a_contracting_loop():
    # y = r - 0.5 y  ->  y = r / 1.5 for r = t
    d = feedback(0.5, r=Clock())
    res = d.run(1.0, algebraic_loops="iterate")
    np.testing.assert_allclose(res["sum.y"], res.t / 1.5, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res["gain.y"], 0.5 * res.t / 1.5, rtol=0, atol=1e-12)
    assert 0 < res.stats["loop_iterations"] <= 11 * 20


def test_iterate_solves_a_loop_where_plain_iteration_diverges():
    # y = r + (-2) y  ->  y = r / 3; the plain iteration y <- r - 2 y diverges (|-2| > 1)
    x = 0.0
    for _ in range(30):
        x = 1.0 - 2.0 * x
    assert abs(x - 1 / 3) > 1e6  # diverges indeed
    d = feedback(-2.0, signs="++", r=Clock())
    res = d.run(1.0, algebraic_loops="iterate", loop_tol=1e-12)
    np.testing.assert_allclose(res["sum.y"], res.t / 3.0, rtol=0, atol=1e-11)


def test_iterate_solves_a_nonlinear_three_block_loop():
    # y = cos(x), x = 0.5 + 2 y  ->  y = cos(0.5 + 2 y); 3 blocks in the loop
    d = Diagram(0.5)
    d.add("c", Const(0.5))
    d.add("sum", Sum("++"))
    d.add("g", Gain(2.0))
    d.add("f", Func(math.cos))
    d.connect("c.y", "sum.u1")
    d.connect("g.y", "sum.u2")
    d.connect("sum.y", "f.u")
    d.connect("f.y", "g.u")
    res = d.run(1.0, algebraic_loops="iterate")
    y = res["f.y"]
    np.testing.assert_allclose(y, np.cos(0.5 + 2 * y), rtol=0, atol=1e-10)
    # the root of y - cos(0.5 + 2 y) by bisection, independently
    lo, hi = -1.0, 1.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if mid - math.cos(0.5 + 2 * mid) > 0:
            hi = mid
        else:
            lo = mid
    np.testing.assert_allclose(y, lo, rtol=0, atol=1e-9)


def test_a_loop_without_solution_is_reported_with_blocks_time_and_residual():
    # y = 1 + y has no solution
    d = feedback(1.0, signs="++")
    with pytest.raises(AlgebraicLoopError, match=r"^algebraic loop \[(sum, gain|gain, sum)\] at t=0: "
                                                 r"not converged in 7 iterations, residual \S+ > "
                                                 r"loop_tol 1e-10") as info:
        d.run(1.0, algebraic_loops="iterate", loop_max_iter=7)
    err = info.value
    assert err.t == 0.0 and err.residual > 1e-10
    assert len(err.result) == 0
    assert [loop.blocks for loop in err.loops] == [("sum", "gain")]


def test_loop_is_warm_started_from_the_previous_solution():
    d = feedback(0.5)
    gain = d.blocks["gain"]
    res = d.run(0.1, algebraic_loops="iterate")  # one step: 2 points, constant input
    # first point: a scalar linear loop takes 2 Anderson (secant) steps, 3 sweeps; second
    # point: the previous solution is still the solution, 1 sweep and no iteration
    assert res.stats["loop_iterations"] == 2
    assert gain.calls == 4
    np.testing.assert_allclose(res["sum.y"], [2 / 3, 2 / 3], rtol=0, atol=1e-14)


# ---------------------------------------------------------------- the solver alone


def test_anderson_converges_on_a_linear_map_with_spectral_radius_above_one():
    A = np.array([[0.0, -2.0, 0.3], [1.5, 0.2, 0.0], [0.0, 0.7, -1.1]])
    b = np.array([1.0, -2.0, 0.5])
    assert max(abs(np.linalg.eigvals(A))) > 1
    x_exact = np.linalg.solve(np.eye(3) - A, b)
    x, it, err, ok = solve_fixed_point(lambda x: A @ x + b, np.zeros(3), tol=1e-12, max_iter=50)
    assert ok and err <= 1e-12
    np.testing.assert_allclose(x, x_exact, rtol=0, atol=1e-10)


def test_newton_converges_quadratically_on_a_nonlinear_system():
    def g(x):  # fixed point of g: x0 = sin(x1) + 1, x1 = x0**2 / 4
        return np.array([math.sin(x[1]) + 1.0, x[0] ** 2 / 4])

    x, it, err, ok = solve_fixed_point(g, [0.0, 0.0], tol=1e-13, max_iter=20, method="newton")
    assert ok and it <= 8
    np.testing.assert_allclose(g(x), x, rtol=0, atol=1e-12)


def test_stalled_anderson_switches_to_newton():
    # g(x) = x + 1 - exp(x): fixed point 0; near x0 = 3 plain steps explode (g'(3) = -19)
    calls = []

    def g(x):
        calls.append(x.copy())
        return x + 1.0 - np.exp(x)

    with np.errstate(over="ignore", invalid="ignore"):
        x, it, err, ok = solve_fixed_point(g, [3.0], tol=1e-12, max_iter=60, memory=1)
    assert ok
    np.testing.assert_allclose(x, [0.0], atol=1e-11)
    # Newton's finite differences: two calls of g at points 1e-8 apart, only after Anderson
    gaps = [abs(a[0] - b[0]) for a, b in zip(calls, calls[1:])]
    assert min(gaps[:3]) > 1e-3 and min(gaps) < 1e-6
    with pytest.raises(ValueError, match="method must be"):
        solve_fixed_point(g, [0.0], method="broyden")


def test_non_convergence_is_reported_by_the_solver():
    x, it, err, ok = solve_fixed_point(lambda x: x + 1.0, [0.0], tol=1e-10, max_iter=9)
    assert not ok and it == 9 and err > 1e-3
