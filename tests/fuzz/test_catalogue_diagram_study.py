"""Catalogue of bad inputs of studies of a block diagram (issue 28 item 1): ``mbsfmu.sweep`` and
``mbsfmu.optimize`` of a factory (a function of the parameters that returns a Diagram), their
linearized-loop metrics, and the CLI's ``FILE.py:FUNCTION`` targets.

Each case is one bad input: the exception type and a regular expression naming the culprit, and
no file written (no rows file, no definition, no history).  The SSP target's names are refused
in tests/study/test_sweep_diagram.py (its fixture builds FMUs); a factory that raises for one
row makes a failed row there, not a refusal.
"""

import pathlib
import threading

import pytest
from diagram_loops import effort_loop, integrator_loop, not_a_diagram

import mbsfmu
from mbsfmu import ParameterError
from mbsfmu.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
CART = str(ROOT / "models" / "cart_pendulum.py")
K = {"k": [1.0, 2.0]}
COST = "iae(cost.y, reference=0)"


def sweep(tmp, target=integrator_loop, design=None, **options):
    kw = {"t_end": 1.0, "metrics": {"y": "final(plant.y)"}, "scheduler": "synchronous", "out": tmp / "o.csv",
          **options}
    return mbsfmu.sweep(target, K if design is None else design, **kw)


def optimize(tmp, target=effort_loop, **options):
    kw = {"minimize": COST, "params": {"k": (0.5, 5.0)}, "t_end": 10.0, "history": tmp / "h.csv", **options}
    return mbsfmu.optimize(target, **kw)


def always_fails(k):
    raise RuntimeError("cannot build")


def positional_only(k, /):
    return integrator_loop(k)


def multi_rate(k):
    """A hold at twice the step in the loop: a multi-rate loop, not linearized."""
    from blocks import ZeroOrderHold

    d = integrator_loop(k)
    d.add("hold", ZeroOrderHold(2 * d.step))
    d.connect("ref.y", "hold.u")
    return d


def algebraic(k):
    """The plant replaced by a feed-through gain: an algebraic loop."""
    from blocks import Gain, Step, Sum
    from mbsfmu.runner import Diagram

    d = Diagram(0.1)
    d.add("ref", Step())
    d.add("err", Sum("+-"))
    d.add("ctrl", Gain(k))
    d.connect("ref.y", "err.u1")
    d.connect("ctrl.y", "err.u2")
    d.connect("err.y", "ctrl.u")
    return d


_LOCK = threading.Lock()


def holds_a_lock(k):
    return integrator_loop(k) if _LOCK else None


def _multi_rate_linear(tmp):
    return sweep(tmp, multi_rate, metrics={"s": "largest_real_part"}, t_end=None)


# (label, call(tmp), exception, regex naming the culprit)
CASES = [
    ("factory returns a dict", lambda t: sweep(t, not_a_diagram),
     ParameterError, r"factory diagram_loops.not_a_diagram\(k=1.0\) returned dict .* not a "
                      r"mbsfmu.runner.Diagram"),
    ("factory raises on every probed row", lambda t: sweep(t, always_fails),
     ParameterError, r"no diagram to check the study on: the factory .*always_fails\(k=1.0\) raised "
                      r"RuntimeError: "
     r"cannot build \(and on the next 1 row\(s\)\)"),
    ("unknown column", lambda t: sweep(t, design={"gain": [1.0]}),
     ParameterError, r"the factory diagram_loops.integrator_loop has no parameter 'gain' \(it takes: k, "
                      r"step\)"),
    ("column typo", lambda t: sweep(t, design={"kk": [1.0]}),
     ParameterError, r"has no parameter 'kk' \(did you mean 'k'\?\)"),
    ("argument nothing sets", lambda t: sweep(t, design={"step": [0.1]}),
     ParameterError, r"needs 'k', which no design column and no params= value sets"),
    ("positional-only argument", lambda t: sweep(t, positional_only),
     ParameterError, r"takes 'k' positionally only: it is called with keyword arguments"),
    ("params= and a column", lambda t: sweep(t, params={"k": 1.0}),
     ParameterError, r"'k' given both in params= and as a design column"),
    ("realtime", lambda t: sweep(t, realtime=True),
     ParameterError, r"realtime= is refused for a diagram target: a study runs its diagrams as fast as "
                      r"they go"),
    ("live scope", lambda t: sweep(t, live=True),
     ParameterError, r"live= is refused for a diagram target: a study's runs have no live scope"),
    ("dt", lambda t: sweep(t, dt=0.01),
     ParameterError, r"dt= is refused for a diagram target: a diagram's runs step at its own step"),
    ("a simulate keyword", lambda t: sweep(t, method="rk4"),
     ParameterError, r"a diagram target takes no keyword 'method' \(it takes Diagram.run's record, "),
    ("metric signal not recorded", lambda t: sweep(t, metrics={"y": "final(plant.x)"}),
     ParameterError, r"metric 'y' = final\(plant.x\): the diagram records no signal 'plant.x'; did you mean "
     r"plant.y"),
    ("record names no port", lambda t: sweep(t, record=["plant.z"]),
     ParameterError, r"the diagram of the first run: DiagramError: cannot record 'plant.z': block 'plant' "
                      r"has "
     r"no port 'z'"),
    ("algebraic loop refused", lambda t: sweep(t, algebraic, metrics={"y": "final(ctrl.y)"}),
     ParameterError, r"the diagram of the first run: AlgebraicLoopError: .*ctrl"),
    ("t_end missing", lambda t: sweep(t, t_end=None),
     ParameterError, r"sweep: t_end= \(the end time of every run\) is required: metric 'y' is of a "
                      r"simulation"),
    ("t_end within a step", lambda t: sweep(t, t_end=0.01),
     ParameterError, r"t_end must be a finite time at least one step \(0.1 s\) after the diagram's t0 = 0, "
     r"not 0.01"),
    ("from= after t_end", lambda t: sweep(t, metrics={"s": "settling(plant.y, from=5)"}),
     ParameterError, r"from=5.0 lies beyond the end of the run \(t_end=1.0\)"),
    ("linear metric of a multi-rate loop", _multi_rate_linear,
     ParameterError, r"metric 's' = largest_real_part: the diagram of the first run cannot be linearized "
     r"\(DiagramError: linearize: block 'hold' runs every 0.2 s"),
    ("linearize= without a linear metric", lambda t: sweep(t, linearize={"domain": "discrete"}),
     ParameterError, r"linearize= is given but no metric is of the linearized closed loop"),
    ("linearize= option typo", lambda t: sweep(t, metrics={"s": "stable"}, linearize={"domian": "discrete"}),
     ParameterError, r"linearize= has no option 'domian'; did you mean 'domain'\?"),
    ("linearize= not a dict", lambda t: sweep(t, metrics={"s": "stable"}, linearize="discrete"),
     ParameterError, r"linearize= must be a dict of mbsfmu.linearize's options"),
    ("linearize= bad domain", lambda t: sweep(t, metrics={"s": "stable"}, linearize={"domain": "z"}),
     ParameterError, r"cannot be linearized \(ParameterError: linearize: domain must be 'continuous' or "
     r"'discrete', not 'z'\)"),
    ("linear metric of a "
     "model", lambda t: sweep(t, CART, design={"m": [0.1]}, metrics={"s": "largest_real_part"}),
     ParameterError, r"metric 's' = largest_real_part: a metric of the linearized closed loop is for a "
                      r"diagram "
     r"target"),
    ("linearize= of a model", lambda t: sweep(t, CART, design={"m": [0.1]}, metrics={"x": "final(x)"},
                                             linearize={"domain": "discrete"}),
     ParameterError, r"linearize= is for a diagram target"),
    ("factory that does not pickle",
     lambda t: sweep(t, lambda k: holds_a_lock(k) or _LOCK, scheduler="processes"),
     ParameterError, r"cannot be sent to worker processes \(TypeError: cannot pickle '_thread.lock' "
                      r"object\)"),
    ("FILE.py:FUNCTION without the file", lambda t: sweep(t, str(t / "none.py") + ":loop"),
     ParameterError, r"sweep target '.*none.py:loop': the file '.*none.py' does not exist"),
    # optimize
    ("optimize: unknown minimizer", lambda t: optimize(t, minimizer="simplex"),
     ParameterError, r"minimizer 'simplex' is not one of Nelder-Mead, Powell, COBYLA, L-BFGS-B, SLSQP \(the "
     r"integration method is method=\)"),
    ("optimize: method= of a diagram", lambda t: optimize(t, method="Powell"),
     ParameterError, r"method= is of a model's runs; a diagram target's minimizer is minimizer="),
    ("optimize: constraints and Powell", lambda t: optimize(t, minimizer="Powell",
                                                           constraints={"u": "maxabs(ctrl.y) <= 1"}),
     ParameterError, r"minimizer 'Powell' takes no constraints; use 'COBYLA' or 'SLSQP'"),
    ("optimize: start outside its range", lambda t: optimize(t, start={"k": 9.0}),
     ParameterError, r"optimize start of 'k': 9 is outside its range \[0.5, 5\]"),
    ("optimize: constants= and a parameter", lambda t: optimize(t, constants={"k": 1.0}),
     ParameterError, r"'k' given both as an optimized parameter and in constants="),
    ("optimize: unknown parameter", lambda t: optimize(t, params={"gain": (1.0, 2.0)}),
     ParameterError, r"optimize: the factory diagram_loops.effort_loop has no parameter 'gain'"),
    ("optimize: signal not recorded", lambda t: optimize(t, minimize="final(cost.z)"),
     ParameterError, r"metric 'objective' = final\(cost.z\): the diagram records no signal 'cost.z'; did you "
     r"mean cost.y\?"),
    ("optimize: derivative-free minimizer of a model",
     lambda t: mbsfmu.optimize(CART, minimize="final(x)", params={"m": (0.1, 0.2)}, t_end=0.1,
                               minimizer="Powell"),
     ParameterError, r"minimizer 'Powell': a model's runs give exact gradients, minimized by L-BFGS-B"),
    ("optimize: linearize= of a model",
     lambda t: mbsfmu.optimize(CART, minimize="final(x)", params={"m": (0.1, 0.2)}, t_end=0.1,
                               linearize={"domain": "discrete"}),
     ParameterError, r"linearize= is for a diagram target"),
]


@pytest.mark.parametrize("call, exc, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_refused(tmp_path, call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written


CLI_CASES = [
    ("no such function", ["sweep", "{loops}:lop", "--param", "k=1", "--t-end", "1", "--out", "{tmp}/o.csv"],
     r"has no function 'lop'; did you mean loop\?"),
    ("linearize not KEY=VALUE", ["sweep", "{loops}:loop", "--param", "k=1", "--metric", "s=stable",
                                 "--linearize", "discrete", "--out", "{tmp}/o.csv"],
     r"--linearize 'discrete': expected KEY=VALUE"),
    ("file that does not import", ["sweep", "{broken}:loop", "--param", "k=1", "--t-end", "1",
                                   "--out", "{tmp}/o.csv"],
     r"importing broken.py failed \(ZeroDivisionError: division by zero\)"),
    ("optimize: unknown minimizer", ["optimize", "{loops}:loop", "--param", "k=1:2", "--minimize",
                                     "final(plant.y)", "--t-end", "1", "--minimizer", "simplex"],
     r"argument --minimizer: invalid choice: 'simplex'"),
]


@pytest.mark.parametrize("argv, pattern", [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
def test_cli(tmp_path, capsys, argv, pattern):
    src = tmp_path / "src"
    src.mkdir()
    (src / "loops.py").write_text(f"import sys\nsys.path.insert(0, {str(ROOT / 'tests' / 'support')!r})\n"
                                  "from diagram_loops import integrator_loop\n\n\n"
                                  "def loop(k):\n    return integrator_loop(k)\n")
    (src / "broken.py").write_text("x = 1 / 0\n")
    out = tmp_path / "out"
    out.mkdir()
    args = [a.format(loops=src / "loops.py", broken=src / "broken.py", tmp=out) for a in argv]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    assert code == 2
    import re

    assert re.search(pattern, capsys.readouterr().err)
    assert list(out.iterdir()) == []


def test_catalogue_size():
    """The number of bad inputs catalogued here (reported in the issue note)."""
    assert len(CASES) + len(CLI_CASES) == 39
