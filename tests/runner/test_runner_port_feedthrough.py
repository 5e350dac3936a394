"""Feed-through is per port: a block with a state output and a fed-through output in a loop with a
controller is not an algebraic loop; the runner calls it again for the fed-through output."""

import pytest

from blocks import Gain
from mbsfmu.runner import AlgebraicLoopError, Block, Diagram
from mbsfmu.runner.scheduling import call_schedule


class Plant(Block):
    """x[k+1] = x[k] + h u[k] (output ``x``, no feed-through); ``p = u * x`` (feed-through)."""

    inputs = ("u",)
    outputs = ("x", "p")

    def feedthrough(self):
        return {"p": ("u",)}

    def start(self, t0, dt):
        self.h, self.x, self.calls = dt, 1.0, 0

    def output(self, t, u):
        self.calls += 1
        return (self.x, u[0] * self.x)

    def update(self, t, u):
        self.x += self.h * u[0]


def test_state_output_and_fed_through_output_in_one_loop():
    d = Diagram(step=0.1)
    plant = d.add("plant", Plant())
    d.add("ctrl", Gain(-2.0))
    d.connect("plant.x", "ctrl.u")
    d.connect("ctrl.y", "plant.u")
    assert d.check() == []
    assert d.execution_order() == [("plant",), ("ctrl",), ("plant",)]
    res = d.run(1.0)
    x = 1.0
    for k in range(11):
        assert res["plant.x"][k] == pytest.approx(x, rel=1e-15)
        assert res["plant.p"][k] == pytest.approx(-2.0 * x * x, rel=1e-15)   # u of the same step
        x += 0.1 * (-2.0 * x)
    assert plant.calls == 22


def test_a_loop_through_the_fed_through_output_is_still_found():
    d = Diagram(step=0.1)
    d.add("plant", Plant())
    d.add("ctrl", Gain(-2.0))
    d.connect("plant.p", "ctrl.u")
    d.connect("ctrl.y", "plant.u")
    with pytest.raises(AlgebraicLoopError, match=r"\[plant, ctrl\] via plant.p -> ctrl.u, "
                                                 r"ctrl.y -> plant.u\. Break each"):
        d.check()
    assert [lp.blocks for lp in d.check(algebraic_loops="iterate")] == [("plant", "ctrl")]


def test_call_schedule_reuses_a_call_when_it_comes_late_enough():
    # slots 0, 1 of block 0 (1 depends on slot 2), slot 2 of block 1 (depends on slot 0)
    calls, loops = call_schedule([0, 0, 1], [[], [2], [0]])
    assert calls == [(False, (0,)), (False, (1,)), (False, (0,))] and loops == []
    # both outputs of block 0 depend only on block 1, which depends on nothing: one call each
    calls, loops = call_schedule([0, 0, 1], [[2], [2], []])
    assert calls == [(False, (1,)), (False, (0,))]
    # a self loop of one slot
    calls, loops = call_schedule([0], [[0]])
    assert calls == [(True, (0,))] and loops == [(0,)]
