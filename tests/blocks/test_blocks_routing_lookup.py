"""Switch and MultiportSwitch select the right input; Lookup1D / Lookup2D agree with numpy.interp
and scipy's RegularGridInterpolator (linear) inside the breakpoints and clip or refuse outside."""

import math

import numpy as np
import pytest
from scipy.interpolate import RegularGridInterpolator

from blocks import Constant, Lookup1D, Lookup2D, MultiportSwitch, Ramp, Sine, Switch
from mbsfmu.runner import BlockError, BlockRunError, Diagram
from mbsfmu.runner.block import block_type


@pytest.mark.parametrize("criterion, threshold, picks", [
    (">=", 0.5, [False, True, True]),
    (">", 0.5, [False, False, True]),
    ("!=0", 0.5, [True, True, True]),
])
def test_switch_criteria(criterion, threshold, picks):
    s = Switch(threshold, criterion)
    assert s.inputs == ("u1", "control", "u2") and s.feedthrough() == {"y": s.inputs}
    got = [s.output(0.0, (10.0, c, 20.0))[0] for c in (0.1, 0.5, 0.9)]
    assert got == [10.0 if p else 20.0 for p in picks]
    assert Switch(criterion="!=0").output(0.0, (1.0, 0.0, 2.0)) == (2.0,)


def test_switch_in_a_diagram_selects_by_a_sine():
    d = Diagram(0.01)
    d.add("a", Ramp(slope=1.0))
    d.add("b", Constant(-1.0))
    d.add("c", Sine(frequency=1.0))
    d.add("sw", Switch(0.0))
    d.connect("a.y", "sw.u1")
    d.connect("c.y", "sw.control")
    d.connect("b.y", "sw.u2")
    res = d.run(2.0, record=["sw.y", "c.y"])
    np.testing.assert_array_equal(res["sw.y"], np.where(res["c.y"] >= 0.0, res.t, -1.0))


def test_multiport_switch_selects_by_index():
    m = MultiportSwitch(3)
    assert m.inputs == ("index", "u1", "u2", "u3") and block_type("MultiportSwitch") is MultiportSwitch
    assert [m.output(0.0, (i, 10.0, 20.0, 30.0))[0] for i in (1, 2.0000000001, 3.0)] == [10.0, 20.0, 30.0]
    with pytest.raises(BlockError, match=r"MultiportSwitch: index 4.0 is not one of 1..3 "
                                         r"\(out_of_range='error'\)"):
        m.output(0.0, (4.0, 10.0, 20.0, 30.0))
    with pytest.raises(BlockError, match=r"index 1.5 is not one of 1..3"):
        m.output(0.0, (1.5, 10.0, 20.0, 30.0))
    c = MultiportSwitch(3, out_of_range="clip")
    assert [c.output(0.0, (i, 10.0, 20.0, 30.0))[0] for i in (-7.0, 2.4, 9.0)] == [10.0, 20.0, 30.0]
    with pytest.raises(BlockError, match=r"index nan is not one of 1..3$"):
        c.output(0.0, (math.nan, 1.0, 2.0, 3.0))


def test_a_bad_index_during_a_run_names_the_block_and_time():
    d = Diagram(0.1)
    d.add("i", Ramp(slope=10.0, initial=1.0))  # 1, 2, 3, 4 ...
    d.add("m", MultiportSwitch(3))
    for k in range(1, 4):
        d.add(f"c{k}", Constant(float(k)))
        d.connect(f"c{k}.y", f"m.u{k}")
    d.connect("i.y", "m.index")
    with pytest.raises(BlockRunError, match=r"m at t=0.3: output\(\) failed: BlockError: "
                                           r"MultiportSwitch: index 4.0 is not one of 1..3") as info:
        d.run(1.0)
    np.testing.assert_allclose(info.value.result["m.y"], [1.0, 2.0, 3.0], rtol=0, atol=1e-12)


X = [-1.0, 0.0, 0.5, 2.0, 4.0]
Y = [3.0, 1.0, -2.0, 0.0, 10.0]


def test_lookup_1d_matches_numpy_interp_and_clips():
    rng = np.random.default_rng(4)
    u = np.concatenate([rng.uniform(-3.0, 6.0, 300), X])
    lut = Lookup1D(X, Y)
    got = np.array([lut.output(0.0, (v,))[0] for v in u])
    np.testing.assert_allclose(got, np.interp(u, X, Y), rtol=0, atol=1e-14)
    assert got[u < -1.0].tolist() == [3.0] * int(np.sum(u < -1.0))  # held end values
    assert lut.feedthrough() == {"y": ("u",)} and block_type("Lookup1D") is Lookup1D


def test_lookup_1d_error_extrapolation():
    lut = Lookup1D(X, Y, extrapolation="error")
    assert lut.output(0.0, (4.0,)) == (10.0,) and lut.output(0.0, (-1.0,)) == (3.0,)
    with pytest.raises(BlockError, match=r"Lookup1D: input u = 4.5 is outside the breakpoints "
                                         r"\[-1, 4\] \(extrapolation='error'\)"):
        lut.output(0.0, (4.5,))


X1 = [0.0, 1.0, 3.0]
X2 = [-2.0, 0.0, 1.0, 5.0]
F = np.array([[0.0, 1.0, 4.0, -1.0], [2.0, 2.0, 0.0, 3.0], [-5.0, 1.0, 7.0, 2.0]])


def test_lookup_2d_matches_regular_grid_interpolator():
    rng = np.random.default_rng(8)
    pts = np.column_stack([rng.uniform(0.0, 3.0, 400), rng.uniform(-2.0, 5.0, 400)])
    pts = np.vstack([pts, [[x1, x2] for x1 in X1 for x2 in X2]])  # the grid points themselves
    lut = Lookup2D(X1, X2, F)
    ref = RegularGridInterpolator((X1, X2), F, method="linear")
    got = np.array([lut.output(0.0, tuple(p))[0] for p in pts])
    np.testing.assert_allclose(got, ref(pts), rtol=0, atol=1e-13)
    outside = np.column_stack([rng.uniform(-2.0, 5.0, 200), rng.uniform(-6.0, 9.0, 200)])
    clipped = np.column_stack([np.clip(outside[:, 0], 0.0, 3.0), np.clip(outside[:, 1], -2.0, 5.0)])
    got = np.array([lut.output(0.0, tuple(p))[0] for p in outside])
    np.testing.assert_allclose(got, ref(clipped), rtol=0, atol=1e-13)
    assert lut.inputs == ("u1", "u2") and lut.feedthrough() == {"y": ("u1", "u2")}


def test_lookup_2d_error_names_the_input():
    lut = Lookup2D(X1, X2, F, extrapolation="error")
    with pytest.raises(BlockError, match=r"Lookup2D: input u2 = -2.5 is outside the breakpoints "
                                         r"\[-2, 5\]"):
        lut.output(0.0, (1.0, -2.5))


@pytest.mark.parametrize("make, match", [
    (lambda: Switch(criterion="<"), r"Switch criterion must be one of '>=', '>', '!=0', got '<'"),
    (lambda: Switch(math.inf), r"Switch threshold must be finite, got inf"),
    (lambda: MultiportSwitch(1), r"MultiportSwitch ports must be >= 2, got 1"),
    (lambda: MultiportSwitch(2.5), r"MultiportSwitch ports must be a whole number >= 2, got 2.5"),
    (lambda: MultiportSwitch(3, out_of_range="wrap"),
     r"MultiportSwitch out_of_range must be 'error' or 'clip', got 'wrap'"),
    (lambda: Lookup1D([0.0, 1.0, 1.0], [1, 2, 3]),
     r"Lookup1D: breakpoints x must be strictly increasing; x\[2\] = 1 follows 1"),
    (lambda: Lookup1D([0.0], [1.0]), r"Lookup1D: breakpoints x must be a 1-D sequence of at least 2"),
    (lambda: Lookup1D([0.0, 1.0], [1.0, 2.0, 3.0]),
     r"Lookup1D: table values have shape \(3,\), the breakpoints need \(2,\)"),
    (lambda: Lookup1D([0.0, math.nan], [1.0, 2.0]), r"Lookup1D: breakpoints x have non-finite entries"),
    (lambda: Lookup1D([0.0, 1.0], [1.0, "a"]), r"Lookup1D: table values must be numbers"),
    (lambda: Lookup1D([0.0, 1.0], [1.0, 2.0], extrapolation="linear"),
     r"Lookup1D: extrapolation must be 'clip' or 'error', got 'linear'"),
    (lambda: Lookup2D(X1, X2, F.T), r"Lookup2D: table values have shape \(4, 3\), the breakpoints "
                                    r"need \(3, 4\)"),
    (lambda: Lookup2D(X1, [1.0, 0.0], [[1, 2]] * 3),
     r"Lookup2D: breakpoints x2 must be strictly increasing; x2\[1\] = 0 follows 1"),
])
def test_bad_parameters(make, match):
    with pytest.raises(BlockError, match=match):
        make()
