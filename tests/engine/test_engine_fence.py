"""No engine run touches the Python reference (issue 24 item 2): with every entry point of
``mbsfmu.reference`` -- building a formulation, its constructor, the consistent initialization,
the rank check, the integrators -- and numpy's and scipy's linear algebra made to raise, the zoo
runs on backend 'c', and the starts the engine refuses are explained by the engine alone, with
the exception and the message of the reference (tests/test_catalogue_simulate.py,
test_loops.py and test_bad_input.py check the same messages without the fence).

The models are loaded and run once before the fence goes up: their parameter checks (the mass
properties and the probes of mbsfmu.equations.parameter_requirements, which use numpy's
eigenvalues) belong to the model, are made once per model and parameter set, and are no part of
the engine's run.
"""

import sys
import warnings

import numpy as np
import pytest
import scipy.linalg
from zoo_cases import CASES

import mbsfmu
from mbsfmu import ConstraintError, SingularMassMatrixError, System, rot_x
from models import four_bar

ZOO = [c for c in CASES if c.label in ("slider_crank", "four_bar", "andrews", "rolling_disc",
                                        "double_pendulum", "slider_crank_natural", "copy_machine")]


def _axis():
    """A rod with zero inertia whose cg lies on its hinge axis: M = 0 for every q."""
    s = System("axis")
    q, = s.coordinates("q")
    s.body("B", rel_rot=rot_x(q), cg_pos=[1, 0, 0], mass=1, inertia=[0, 0, 0])
    return s


def _slider_with_condition():
    s = mbsfmu.load_model("models/slider_crank.py")
    s.initial_condition("slider_pos", s.coordinates_["x"].symbol, 2.0)
    return s


def _held_at_its_consistent_value():
    """Holding x at the consistent start's value (position and rate) leaves no rate that can turn
    the crank (tests/test_consistent_rates.py)."""
    x0 = float(_run(mbsfmu.load_model("models/slider_crank.py"), t_end=0.01).y[0, 0])
    return dict(fixed=["x"], initial={"x": x0})


#: starts the engine refuses: (model, simulate's keywords (or a function giving them), exception,
#: message)
REFUSED = [
    ("held coordinate conflicts", lambda: mbsfmu.load_model("models/slider_crank.py"),
     dict(initial={"x": 2.0}, fixed=["x"]), ConstraintError,
     r"slider_crank: no consistent initial state: 'pivot\.[xy]' stays violated by [0-9.]+ \(Newton from the "
     r"given values, fixed: \['x'\]; reached x=2, alpha=.*, beta=.*\)\. It cannot hold together with: held "
     r"coordinate x = 2 \(without any one of these a consistent state exists\)"),
    ("conflicting initial condition", _slider_with_condition, {}, ConstraintError,
     r"stays violated .* cannot hold together with: initial condition 'slider_pos' \(x = 2\)"),
    ("unreachable rates", lambda: mbsfmu.load_model("models/slider_crank.py"),
     _held_at_its_consistent_value, ConstraintError,
     r"slider_crank: no consistent initial velocities \(velocity constraints violated by [0-9.]+ with "
     r"fixed: \['x'\]\)"),
    ("unsatisfiable loop", four_bar.model, dict(params={"b": 0.01, "c": 0.01}), ConstraintError,
     r"four_bar: no consistent initial state: 'joint_C\.[xy]' stays violated"),
    ("redundant constraints", lambda: four_bar.model("3d"), dict(formulation="projection", fixed=["phi1"]),
     ConstraintError, r"four_bar: the 3 constraints are redundant \(rank of C is 2 with tolerance "
                      r"[0-9.e-]+\); formulation 'projection' cannot take redundant constraints: "
                      r"use 'qr' or 'svd'"),
    ("singular mass matrix", _axis, {}, SingularMassMatrixError,
     r"axis: the mass matrix is not positive definite \(the pivot of coordinate 'q' failed\) at t=0 \(q=0\): "
     r"a singular configuration, or a coordinate that moves no mass"),
]


@pytest.fixture
def fence(monkeypatch):
    """Every way into the reference, and numpy's and scipy's linear algebra, raise from here on."""
    touched = []

    def forbid(module, name):
        def refuse(*args, **kwargs):
            touched.append(f"{module.__name__}.{name}")
            raise AssertionError(f"an engine run called {module.__name__}.{name}")
        monkeypatch.setattr(module, name, refuse)

    for module in [m for name, m in sys.modules.items() if name.startswith("mbsfmu")]:
        for name in ("make_formulation", "consistent_state", "check_rank", "make_stepper", "sample",
                     "integrate", "integrate_projected", "use_c_kernel"):
            if hasattr(module, name):
                forbid(module, name)
    formulations = sys.modules["mbsfmu.reference.formulations.base"]
    forbid(formulations.Formulation, "__init__")
    for name in ("svd", "lstsq", "solve", "cholesky", "eigh", "eig", "eigvalsh", "qr", "inv", "pinv",
                 "matrix_rank"):
        forbid(np.linalg, name)
    for name in ("qr", "svd", "solve", "lu_factor", "cho_factor", "eigh", "null_space"):
        forbid(scipy.linalg, name)
    yield touched


def _run(system, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mbsfmu.simulate(system, kw.pop("t_end", 0.2), 0.01, backend="c", **kw)


def test_engine_runs_never_touch_the_reference(request):
    systems = [case.load() for case in ZOO]
    methods = ("explicit", "stiff", "dop853")
    for system in systems:  # the model's own checks, once, and the engine's build
        _run(system, t_end=0.02)
    refused = [(make(), kw() if callable(kw) else kw) for _, make, kw, _, _ in REFUSED]
    for system, kw in refused:
        with pytest.raises(mbsfmu.MbsError):
            _run(system, **kw)
    touched = request.getfixturevalue("fence")
    for system in systems:
        for method in methods:
            res = _run(system, method=method)
            assert res.stats["backend"] == "c" and res.formulation is None
            # what the Result offers beyond the states is the engine's
            res.multipliers()
            assert res.ydd.shape == res.y.shape
            assert res.constraint_residuals()["velocity"].shape == res.t.shape
            assert res.constraint_residual.shape == res.t.shape
    for (system, kw), (_, _, _, exc, pattern) in zip(refused, REFUSED):
        with pytest.raises(exc, match=pattern):
            _run(system, **kw)
    assert touched == []


@pytest.mark.parametrize("make, kw, exc, pattern", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_the_engine_explains_a_refused_start(make, kw, exc, pattern):
    kw = kw() if callable(kw) else kw
    with pytest.raises(exc, match=pattern):
        _run(make(), **kw)
