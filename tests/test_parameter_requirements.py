"""Parameter requirements (mbsfmu/equations/parameter_requirements.py) and their C counterpart
(mbs_parameters.c): what they find in the zoo is checked symbolically, the C checks agree with
the Python reference, and simulate's messages name the parameter and its value."""

import ctypes
import pathlib
import subprocess

import numpy as np
import pytest
import sympy as sp

import mbsfmu
from mbsfmu import ParameterError, System, derive, rot_z
from mbsfmu.equations.parameter_requirements import BodyCheck, parameter_requirements
from mbsfmu.model.element_checks import mass_property_problem

ROOT = pathlib.Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "mbsfmu" / "runtime"
MODELS = ROOT / "models"


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    out = tmp_path_factory.mktemp("params") / "libmbs_parameters.so"
    cmd = ["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fPIC", "-shared",
           str(RUNTIME / "mbs_parameters.c"), str(RUNTIME / "mbs_linalg.c"), "-o", str(out), "-lm"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0 and not res.stderr, res.stderr
    so = ctypes.CDLL(str(out))
    D = ctypes.POINTER(ctypes.c_double)
    so.mbs_sym3_eigenvalues.argtypes = [D, D]
    so.mbs_sym3_eigenvalues.restype = None
    so.mbs_mass_property_problem.argtypes = [D, ctypes.c_char_p, ctypes.c_size_t]
    so.mbs_mass_property_problem.restype = ctypes.c_int
    so.mbs_format_double.argtypes = [ctypes.c_double, ctypes.c_char_p, ctypes.c_size_t]
    so.mbs_format_double.restype = ctypes.c_char_p
    return so


def _ptr(a):
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


def _random_rotation(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    return q * np.sign(np.diag(r))


def test_sym3_eigenvalues_match_numpy(lib):
    rng = np.random.default_rng(1)
    worst = 0.0
    for k in range(3000):
        if k % 3 == 0:  # repeated eigenvalues: the trigonometric formula's edge
            ev = np.array([1.0, 1.0, rng.uniform(0, 3)]) * rng.uniform(0.1, 10)
            A = (R := _random_rotation(rng)) @ np.diag(ev) @ R.T
        elif k % 3 == 1:
            A = np.diag(rng.normal(size=3))
        else:
            B = rng.normal(size=(3, 3)) * 10.0 ** rng.uniform(-6, 6)
            A = B + B.T
        packed = np.array([A[0, 0], A[0, 1], A[0, 2], A[1, 1], A[1, 2], A[2, 2]])
        got = np.zeros(3)
        lib.mbs_sym3_eigenvalues(_ptr(packed), _ptr(got))
        want = np.linalg.eigvalsh(A)
        worst = max(worst, np.max(np.abs(got - want)) / max(np.abs(want).max(), 1e-300))
    assert worst < 1e-12


def test_c_mass_property_check_agrees_with_python(lib):
    """Random mass properties around the boundaries of possible inertias: the C check (closed-form
    eigenvalues) and the Python reference (numpy's eigvalsh) give the same verdict, away from a
    band of 1e-6 around the boundaries where the tolerances may differ."""
    rng = np.random.default_rng(2)
    verdicts = {0: 0, 1: 0, 3: 0, 4: 0}
    for _ in range(4000):
        J1, J2 = rng.uniform(0, 2, 2)
        J3 = rng.uniform(-0.5, J1 + J2 + 0.5)
        if abs(J3 - J1 - J2) < 1e-6 or abs(J3) < 1e-6:
            continue
        R = _random_rotation(rng)
        J = R @ np.diag([J1, J2, J3]) @ R.T
        m = rng.choice([1.0, 1.0, 1.0, 0.0, -0.5])
        mj = np.array([m, J[0, 0], J[0, 1], J[0, 2], J[1, 1], J[1, 2], J[2, 2]])
        msg = ctypes.create_string_buffer(256)
        code = lib.mbs_mass_property_problem(_ptr(mj), msg, 256)
        py = mass_property_problem(mj)
        kind = (0 if not py else 1 if py.startswith("mass") else 3 if "semi-definite" in py else 4)
        assert code == kind, (mj, py, msg.value)
        verdicts[code] += 1
    assert min(verdicts.values()) > 100  # every verdict was exercised


def test_format_double_is_shortest_round_trip(lib):
    buf = ctypes.create_string_buffer(32)
    for v, text in [(0.1, "0.1"), (10.0, "10"), (-0.3, "-0.3"), (1e300, "1e+300"), (1e-10, "1e-10"),
                    (123456.0, "123456"), (0.5, "0.5"), (1 / 3, "0.3333333333333333")]:
        assert lib.mbs_format_double(v, buf, 32).decode() == text
    rng = np.random.default_rng(3)
    for v in rng.normal(size=200) * 10.0 ** rng.uniform(-20, 20, 200):
        assert float(lib.mbs_format_double(v, buf, 32)) == v


# ------------------------------------------------------------------ what the probe finds


def _column_vanishes(eqs, coordinate, subs):
    """Column `coordinate` of M and of C vanish identically under subs (sympy, expanded)."""
    j = [c.name for c in eqs.system.coordinates_.values()].index(coordinate)
    M = eqs.expanded(eqs.M).xreplace(subs)
    cols = [M[i, j] for i in range(M.shape[0])]
    if eqs.m:
        C = eqs.expanded(eqs.C).xreplace(subs)
        cols += [C[i, j] for i in range(C.shape[0])]
    return all(sp.simplify(e) == 0 for e in cols)


def test_probe_finds_the_slider_crank_crank_length():
    s = mbsfmu.load_model(MODELS / "slider_crank.py")
    eqs = derive(s)
    req = parameter_requirements(eqs)
    assert set(req.nonzero) == {"r", "l"}
    assert "coordinate 'beta' would move no mass" in req.nonzero["r"]
    # independent check: with r = 0 the crank angle beta appears neither in M nor in C
    assert _column_vanishes(eqs, "beta", {s.constants_["r"].symbol: 0})
    assert not _column_vanishes(eqs, "beta", {})


def test_probe_finds_the_pendulum_length_of_the_cart():
    s = mbsfmu.load_model(MODELS / "cart_pendulum.py")
    eqs = derive(s)
    req = parameter_requirements(eqs)
    assert "l" in req.nonzero and "theta" in req.nonzero["l"]
    assert _column_vanishes(eqs, "theta", {s.constants_["l"].symbol: 0})
    # d (friction) and g enter no mass matrix: never required non-zero
    assert "d" not in req.nonzero and "g" not in req.nonzero


@pytest.mark.parametrize("name", ["double_pendulum", "andrews"])
def test_probe_flags_nothing_where_no_parameter_is_needed(name):
    """Each pendulum of the double pendulum keeps its own inertia Ix, and Andrews' bodies their
    inertias, so no single zero length makes M singular there."""
    s = mbsfmu.load_model(MODELS / f"{name}.py")
    assert parameter_requirements(derive(s)).nonzero == {}


# ------------------------------------------------------------------ simulate's messages


@pytest.mark.parametrize("params, message", [
    ({"m_crank": -0.3}, r"body 'crank': mass must be positive, got -0.3 \(m_crank = -0.3, r = 0.15\)"),
    ({"m_crank": 0.0}, r"body 'crank': mass must be positive, got 0.0"),
    ({"r": 0.0}, r"parameter 'r' = 0 is not allowed: with r = 0 the mass matrix reduced by the "
                 r"constraints is singular \(coordinate 'beta' would move no mass\)"),
    ({"l": 0.0}, r"parameter 'l' = 0 is not allowed: .*'beta', 'alpha'"),
])
def test_simulate_names_the_bad_parameter(params, message):
    with pytest.raises(ParameterError, match=message):
        mbsfmu.simulate(MODELS / "slider_crank.py", t_end=0.1, params=params)


def test_declared_bounds_of_constants_and_inputs():
    s = System("b")
    k = s.constant("k", 1.0, min=0.0, max=5.0)
    F = s.input("F", 0.0, min=-2.0, max=2.0)
    x, = s.coordinates("x")
    s.body("B", rel_pos=[x, 0, 0], mass=1.0, inertia=[0, 0, 0])
    s.generalized_force("spring", "x", -k * x + F)
    with pytest.raises(ParameterError, match=r"parameter 'k' = -1.0 is below its minimum 0.0"):
        mbsfmu.simulate(s, t_end=0.1, params={"k": -1.0})
    with pytest.raises(ParameterError, match=r"parameter 'k' = 6.0 is above its maximum 5.0"):
        mbsfmu.simulate(s, t_end=0.1, params={"k": 6.0})
    with pytest.raises(ParameterError, match=r"input 'F' = 3.0 is outside its range \[-2.0, 2.0\]"):
        mbsfmu.simulate(s, t_end=0.1, inputs={"F": 3.0})
    with pytest.raises(mbsfmu.ModelError, match=r"constant 'c': default value 3.0 is outside"):
        s.constant("c", 3.0, min=0.0, max=1.0)
    with pytest.raises(mbsfmu.ModelError, match=r"constant 'c2': min 2.0 is greater than max 1.0"):
        s.constant("c2", None, min=2.0, max=1.0)
    res = mbsfmu.simulate(s, t_end=0.1, params={"k": 5.0}, inputs={"F": 2.0})
    assert np.all(np.isfinite(res.y))


def test_body_check_lists_only_parameter_dependent_bodies():
    s = System("two")
    m, = s.constants(m=1.0)
    x, y = s.coordinates("x", "y")
    s.body("fixed_mass", rel_pos=[x, 0, 0], mass=2.0, inertia=[1, 1, 1])
    s.body("param_mass", ref="fixed_mass", rel_pos=[0, y, 0], mass=m, inertia=[0, 0, 0])
    req = parameter_requirements(derive(s))
    assert [b.body for b in req.bodies] == ["param_mass"]
    assert isinstance(req.bodies[0], BodyCheck) and req.bodies[0].parameters == ["m"]
    assert "m" in req.nonzero  # m = 0 leaves y moving no mass


def test_time_dependent_mass_is_refused():
    s = System("tm")
    x, = s.coordinates("x")
    p = s.time_parameter("p", 1 + s.t)
    s.body("B", rel_pos=[x, 0, 0], mass=p, inertia=[0, 0, 0])
    with pytest.raises(mbsfmu.ModelError, match=r"body 'B': mass and inertia may depend on constants "
                                                r"only, not on p"):
        mbsfmu.simulate(s, t_end=0.1)


def test_rot_z_model_has_no_spurious_requirements():
    """A pendulum with its own inertia about the hinge: neither its length nor its mass-free
    constants are required non-zero."""
    s = System("pend")
    m, l, J = s.constants(m=1.0, l=0.5, J=0.1)
    phi, = s.coordinates("phi")
    s.body("bob", rel_rot=rot_z(phi), cg_pos=[l, 0, 0], mass=m, inertia=[J, J, J])
    assert parameter_requirements(derive(s)).nonzero == {}
