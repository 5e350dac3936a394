"""Hardening of the pythonfmu kind (issue 10): every bad FMI call is refused with fmi2Error
and a message naming its culprit, with debug logging off, and changes nothing.

Three FMUs (slider-crank: loop, fixed geometry parameters; cart-pendulum: tree with an input;
a cart-pendulum with declared min/max) are built once and driven through fmpy.  Each FMU has one
"bench" instance with three saved FMU states (instantiated, initialization mode, after 5 steps)
and the run that continues from each of them.  A catalogue case restores a state, makes one bad
call, and checks: status fmi2Error (never fmi2Fatal, never fmi2OK), an error message with the
culprit in it, all variable values and the FMU time unchanged bit for bit, and the continued run
bit-identical to the one without the bad call.
"""

from __future__ import annotations

import ctypes
import math
import pathlib
import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")

from fmpy.fmi1 import FMICallException  # noqa: E402
from fmu_support import TOL, Slave  # noqa: E402

from mbsfmu.fmu.pythonfmu_export import build_pythonfmu  # noqa: E402

MODELS = pathlib.Path(__file__).resolve().parent.parent / "models"
H = 0.01        # communication step
WARMUP = 5      # steps before the "step" state
STEPS = 3       # steps of each continued run
MODES = ("instantiated", "initialization", "step")
#: the benches' settings: a limit on the internal step far above the steps these runs take (so it
#: changes none of them), which lets a case exceed the internal steps of one fmi2DoStep without a
#: set of max_internal_step (a changed value restarts the engine's integrator at the next step)
SETTINGS = {**TOL, "max_internal_step": 1.0}
ERROR, FATAL = 3, 4

#: the cart-pendulum with declared bounds on a constant and the input
BOUNDED_CART = '''
from mbsfmu import System, rot_y


def model():
    s = System("bounded_cart", "Cart-pendulum with declared bounds (test model)")
    mc = s.constant("mc", 1.0, min=0.1, max=10.0)
    m, l, g = s.constants(m=0.1, l=0.5, g=9.81)
    x, theta = s.coordinates("x", "theta")
    F = s.input("F", 0.0, min=-50.0, max=50.0)
    s.gravity([0, 0, -g])
    s.body("cart", ref="ISYS", rel_pos=[x, 0, 0], mass=mc, inertia=[0, 0, 0])
    J = m * (2 * l) ** 2 / 12
    s.body("rod", ref="cart", rel_rot=rot_y(theta), cg_pos=[0, 0, l], mass=m, inertia=[J, J, 0])
    s.force("drive", "cart", [F, 0, 0])
    s.initial(theta=0.1)
    return s
'''


def status_of(call) -> int:
    """The FMI status of an fmpy call (fmpy raises for anything worse than fmi2Warning)."""
    try:
        call()
    except FMICallException as exc:
        return exc.status
    return 0


class Bench:
    """One instance of a model's FMU, its saved states and the runs that continue from them."""

    def __init__(self, name, path, tmp):
        self.name, self.path, self.tmp = name, path, tmp
        self.slave = self.new_slave(f"bench_{name}")
        self.slave.instantiate(logging_on=False)
        self.fmu = self.slave.fmu
        self.vr = self.slave.vr
        self.real_vrs = sorted(r for n, r in self.vr.items() if self.slave.types[n] == "Real")
        self.int_vrs = sorted(r for n, r in self.vr.items() if self.slave.types[n] == "Integer")
        self.messages = self.slave.messages
        self.fmu.setupExperiment(startTime=0.0)
        self.slave.set(SETTINGS)
        self.states = {"instantiated": self.fmu.getFMUstate()}
        self.fmu.enterInitializationMode()
        self.states["initialization"] = self.fmu.getFMUstate()
        self.fmu.exitInitializationMode()
        self.slave.run(0.0, WARMUP, H, self.inputs)
        self.states["step"] = self.fmu.getFMUstate()
        self.blob = self.fmu.serializeFMUstate(self.states["step"])
        self.reference = {}
        for mode in MODES:
            self.restore(mode)
            self.reference[mode] = self.continue_run(mode)
        self.other: Bench | None = None

    def new_slave(self, instance_name):
        """Another fmpy slave of the same FMU, from the same extracted folder."""
        return Slave(self.path, self.tmp, instance_name, folder=self.name)

    def inputs(self, t):
        return {"F": math.sin(3 * t)} if "F" in self.vr else None

    def restore(self, mode):
        self.fmu.setFMUstate(self.states[mode])
        self.messages.clear()

    def values(self, fmu=None):
        """Every variable's value: the Reals, then the Integers (method and its old name solver)."""
        fmu = fmu or self.fmu
        return np.append(fmu.getReal(self.real_vrs), fmu.getInteger(self.int_vrs))

    def time(self):
        t = ctypes.c_double()
        assert self.raw("fmi2GetRealStatus", self.fmu.component, 2, ctypes.byref(t)) == 0
        return t.value

    def continue_run(self, mode):
        """From a state of ``mode``: initialize if needed, then STEPS steps; every variable and
        the time after each step."""
        if mode == "instantiated":
            self.fmu.enterInitializationMode()
        if mode in ("instantiated", "initialization"):
            self.fmu.exitInitializationMode()
        t0, rows = self.time(), []
        for k in range(STEPS):
            self.slave.set(self.inputs(t0 + k * H))
            self.fmu.doStep(t0 + k * H, H)
            rows.append(np.append(self.values(), self.time()))
        return np.array(rows)

    # the calls a catalogue case makes; each returns the FMI status
    def step(self, cp, h):
        return status_of(lambda: self.fmu.doStep(cp, h))

    def set(self, names, values):
        vrs = [self.vr[n] if isinstance(n, str) else n for n in names]
        return status_of(lambda: self.fmu.setReal(vrs, [float(v) for v in values]))

    def raw(self, fn, *args):
        """An FMI function called directly (NULL pointers, sizes fmpy would compute itself)."""
        return self.fmu._functions[fn](*args)

    def errors(self):
        return [m for s, c, m in self.messages if s >= ERROR]


@pytest.fixture(scope="module")
def benches(tmp_path_factory):
    out = tmp_path_factory.mktemp("hardening")
    (out / "bounded_cart.py").write_text(BOUNDED_CART)
    paths = {name: build_pythonfmu(MODELS / f"{name}.py", out) for name in ("slider_crank", "cart_pendulum")}
    paths["bounded_cart"] = build_pythonfmu(out / "bounded_cart.py", out)
    b = {name: Bench(name, path, out) for name, path in paths.items()}
    b["slider_crank"].other = b["cart_pendulum"]
    b["cart_pendulum"].other = b["slider_crank"]
    b["bounded_cart"].other = b["cart_pendulum"]
    yield b
    for bench in b.values():
        bench.slave.free()


# ---------------------------------------------------------------- the catalogue of bad calls
@dataclass
class Case:
    id: str
    model: str
    mode: str
    action: Callable    # bench -> FMI status
    culprits: Callable  # bench -> strings the error message must contain
    repair: Callable | None = None  # undoes what the case did legally before its bad call


def _t(b):
    return repr(b.time())


def _serialize_small(b):
    size = ctypes.c_size_t()
    st = b.states["step"]
    assert b.raw("fmi2SerializedFMUstateSize", b.fmu.component, st, ctypes.byref(size)) == 0
    buf = ctypes.create_string_buffer(size.value)
    return b.raw("fmi2SerializeFMUstate", b.fmu.component, st, buf, size.value - 1)


def _deserialize(b, data):
    return status_of(lambda: b.fmu.deSerializeFMUstate(data))


def _set_state(b, pointer):
    return status_of(lambda: b.fmu.setFMUstate(ctypes.c_void_p(pointer)))


def _free_then_set(b):
    st = b.fmu.getFMUstate()
    pointer = st.value
    b.fmu.freeFMUstate(st)
    return _set_state(b, pointer)


def _mixed(b, good, bad):
    """One fmi2SetReal whose first value is fine and second is not: nothing may be applied."""
    return b.set([good[0], bad[0]], [good[1], bad[1]])


BOTH = ("slider_crank", "cart_pendulum")
CASES: list[Case] = []


def case(id, models, mode, action, culprits, repair=None):
    for model in models:
        CASES.append(Case(f"{model}-{mode}-{id}", model, mode, action, culprits, repair))


# fmi2DoStep in step mode
case("doStep_point_ahead", BOTH, "step", lambda b: b.step(b.time() + 0.5, H),
     lambda b: ["fmi2DoStep", "communication point", repr(b.time() + 0.5), _t(b)])
case("doStep_point_behind", BOTH, "step", lambda b: b.step(b.time() - H, H),
     lambda b: ["fmi2DoStep", "communication point", repr(b.time() - H)])
case("doStep_point_off_1e-6", BOTH, "step", lambda b: b.step(b.time() + 1e-6, H),
     lambda b: ["fmi2DoStep", repr(b.time() + 1e-6)])
case("doStep_point_nan", BOTH, "step", lambda b: b.step(math.nan, H), lambda b: ["fmi2DoStep", "nan"])
case("doStep_point_inf", BOTH, "step", lambda b: b.step(math.inf, H), lambda b: ["fmi2DoStep", "inf"])
for label, h in (("zero", 0.0), ("negative", -H), ("nan", math.nan), ("inf", math.inf)):
    case(f"doStep_size_{label}", BOTH, "step", lambda b, h=h: b.step(b.time(), h),
         lambda b, h=h: ["fmi2DoStep", "step size", repr(h)])
case("doStep_too_many_internal_steps", BOTH, "step", lambda b: b.step(b.time(), 1e8),
     lambda b: ["fmi2DoStep", "max_internal_step = 1.0", "internal steps", "100000000.0"])

# value references and types
case("setReal_unknown_vr", BOTH, "step", lambda b: b.set([9999], [1.0]), lambda b: ["fmi2SetReal", "9999"])
case("setReal_vr_2**32-1", BOTH, "step", lambda b: b.set([2**32 - 1], [1.0]), lambda b: ["4294967295"])
case("getReal_unknown_vr", BOTH, "step", lambda b: status_of(lambda: b.fmu.getReal([12345])),
     lambda b: ["fmi2GetReal", "12345"])
case("setInteger", BOTH, "step", lambda b: status_of(lambda: b.fmu.setInteger([0], [1])),
     lambda b: ["fmi2SetInteger", "Integer"])
# the Integer parameter method (the integration method): its values only, and only as an Integer
for mode in MODES:
    case(f"setInteger_method_3_{mode}", BOTH, mode,
         lambda b: status_of(lambda: b.fmu.setInteger([b.vr["method"]], [3])),
         lambda b: ["fmi2SetInteger", "method = 3", "0 (rkstab", "1 (stiff", "2 (dop853"])
case("setInteger_method_-1", BOTH, "step",
     lambda b: status_of(lambda: b.fmu.setInteger([b.vr["method"]], [-1])),
     lambda b: ["fmi2SetInteger", "method = -1", "not one of its values"])
case("setReal_method", BOTH, "step", lambda b: b.set(["method"], [1.0]),
     lambda b: ["fmi2SetReal", "'method'", "Integer"])
case("getReal_method", BOTH, "step", lambda b: status_of(lambda: b.fmu.getReal([b.vr["method"]])),
     lambda b: ["fmi2GetReal", "'method'", "Integer"])
case("getInteger_real", BOTH, "step", lambda b: status_of(lambda: b.fmu.getInteger([b.vr["solver_rtol"]])),
     lambda b: ["fmi2GetInteger", "'solver_rtol'", "Real"])
case("getBoolean", BOTH, "step", lambda b: status_of(lambda: b.fmu.getBoolean([3])),
     lambda b: ["fmi2GetBoolean", "value reference 3"])
case("setString", BOTH, "step", lambda b: status_of(lambda: b.fmu.setString([1], ["a"])),
     lambda b: ["fmi2SetString", "String"])
case("getString", BOTH, "step", lambda b: status_of(lambda: b.fmu.getString([0])),
     lambda b: ["fmi2GetString"])

# states of the integrator after initialization, calculated outputs
case("set_coordinate", BOTH, "step", lambda b: b.set(["x"], [0.3]),
     lambda b: ["'x'", "0.3", "fmi2ExitInitializationMode", _t(b)])
case("set_velocity", BOTH, "step", lambda b: b.set(["der(x)"], [1.0]), lambda b: ["'der(x)'", "1.0"])
for model, name in (("slider_crank", "constraint_residual"), ("slider_crank", "pin.x"),
                    ("slider_crank", "reaction.pivot.y"), ("cart_pendulum", "drive_power"),
                    ("cart_pendulum", "rod_centre.z")):
    for mode in ("step", "initialization", "instantiated"):
        case(f"set_output_{name}", (model,), mode, lambda b, n=name: b.set([n], [1.5]),
             lambda b, n=name: [f"'{n}'", "1.5", "calculated output"])

# solver settings (one table of ranges: mbsfmu.core.solver_settings)
ATOL_RANGE = "0 (derived from rtol) or (0, 1]"
for name, value, rng in (("solver_rtol", 0.0, "[1e-14, 0.1]"), ("solver_rtol", 1e300, "[1e-14, 0.1]"),
                         ("solver_rtol", math.nan, "[1e-14, 0.1]"), ("solver_atol", -1.0, ATOL_RANGE),
                         ("solver_atol", 2.0, ATOL_RANGE), ("max_internal_step", -1.0, "1e-10"),
                         ("max_internal_step", 1e-300, "1e-10")):
    case(f"set_{name}_{value!r}", BOTH, "step", lambda b, n=name, v=value: b.set([n], [v]),
         lambda b, n=name, v=value, r=rng: [f"'{n}'", repr(v), r])
case("set_solver_rtol_init", ("cart_pendulum",), "initialization", lambda b: b.set(["solver_rtol"], [1.0]),
     lambda b: ["solver_rtol", "1.0"])

# physical parameters: finite, positive masses (NumericModel.set_params), fixed geometry
for model, name, value, culprit in (
        ("cart_pendulum", "g", math.nan, "nan"), ("cart_pendulum", "l", math.inf, "inf"),
        ("cart_pendulum", "m", -1.0, "m = -1.0"), ("cart_pendulum", "mc", 0.0, "mc = 0.0"),
        ("slider_crank", "m_crank", -0.3, "m_crank = -0.3"),
        ("slider_crank", "m_slider", 0.0, "m_slider = 0.0"),
        ("slider_crank", "g", -math.inf, "-inf")):
    case(f"set_{name}_{value!r}", (model,), "step", lambda b, n=name, v=value: b.set([n], [v]),
         lambda b, n=name, c=culprit: [n, c, "fmi2SetReal"])
for name in ("r", "l"):
    case(f"set_fixed_{name}", ("slider_crank",), "step", lambda b, n=name: b.set([n], [0.2]),
         lambda b, n=name: [f"'{n}'", "0.2", "fixed parameter"])

# one call, one good and one bad value: nothing applied (the snapshot compares g)
case("mixed_good_then_output", BOTH, "step", lambda b: _mixed(b, ("g", 5.0), ("der(x)", 1.0)),
     lambda b: ["'der(x)'"])
case("mixed_good_then_unknown_vr", BOTH, "step", lambda b: _mixed(b, ("g", 5.0), (777, 1.0)),
     lambda b: ["777"])
case("mixed_good_then_bad_mass", ("cart_pendulum",), "step", lambda b: _mixed(b, ("g", 5.0), ("m", -2.0)),
     lambda b: ["m = -2.0"])
case("mixed_input_then_nan", ("cart_pendulum",), "step", lambda b: _mixed(b, ("F", 3.0), ("g", math.nan)),
     lambda b: ["'g'", "nan"])

# inputs
for value in (math.nan, math.inf, -math.inf):
    for mode in ("step", "initialization"):
        case(f"set_F_{value!r}", ("cart_pendulum",), mode, lambda b, v=value: b.set(["F"], [v]),
             lambda b, v=value: ["'F'", repr(v)])

# declared min/max (System.constant/input min=, max=)
for mode in MODES:
    case("set_mc_below_min", ("bounded_cart",), mode, lambda b: b.set(["mc"], [0.05]),
         lambda b: ["'mc'", "0.05", "[0.1, 10.0]"])
    case("set_mc_above_max", ("bounded_cart",), mode, lambda b: b.set(["mc"], [20.0]),
         lambda b: ["'mc'", "20.0", "10.0"])
for value in (60.0, -50.000001):
    case(f"set_F_{value!r}_outside", ("bounded_cart",), "step", lambda b, v=value: b.set(["F"], [v]),
         lambda b, v=value: ["'F'", repr(v), "[-50.0, 50.0]"])

# calls in the wrong mode
case("setupExperiment_in_step", BOTH, "step",
     lambda b: status_of(lambda: b.fmu.setupExperiment(startTime=1.0)),
     lambda b: ["fmi2SetupExperiment", "'step'"])
case("enterInit_in_step", BOTH, "step", lambda b: status_of(b.fmu.enterInitializationMode),
     lambda b: ["fmi2EnterInitializationMode", "'step'"])
case("exitInit_in_step", BOTH, "step", lambda b: status_of(b.fmu.exitInitializationMode),
     lambda b: ["fmi2ExitInitializationMode", "'step'"])
case("doStep_in_init", BOTH, "initialization", lambda b: b.step(0.0, H),
     lambda b: ["fmi2DoStep", "'initialization'"])
case("terminate_in_init", BOTH, "initialization", lambda b: status_of(b.fmu.terminate),
     lambda b: ["fmi2Terminate", "'initialization'"])
case("exitInit_before_enter", BOTH, "instantiated", lambda b: status_of(b.fmu.exitInitializationMode),
     lambda b: ["fmi2ExitInitializationMode", "'instantiated'"])
case("doStep_before_init", BOTH, "instantiated", lambda b: b.step(0.0, H),
     lambda b: ["fmi2DoStep", "'instantiated'"])
case("setupExperiment_start_nan", BOTH, "instantiated",
     lambda b: status_of(lambda: b.fmu.setupExperiment(startTime=math.nan)),
     lambda b: ["fmi2SetupExperiment", "start time nan"])
case("setupExperiment_stop_before_start", BOTH, "instantiated",
     lambda b: status_of(lambda: b.fmu.setupExperiment(startTime=0.0, stopTime=-1.0)),
     lambda b: ["fmi2SetupExperiment", "stop time -1.0"])

# a bad parameter is found at fmi2ExitInitializationMode: the FMU stays in initialization mode
# (the engine writes the parameters of the body as "body 'rod': mass must be positive, got -1
# (m = -1, l = 0.5)"; the numpy path "-1.0")
for model, name, value, culprit in (("cart_pendulum", "m", -1.0, "(m = -1"),
                                    ("cart_pendulum", "l", 0.0, "'l'"),
                                    ("slider_crank", "r", 0.0, "'r'"),
                                    ("slider_crank", "m_crank", -0.3, "m_crank = -0.3"),
                                    ("bounded_cart", "m", 0.0, "(m = 0")):
    case(f"exitInit_with_{name}_{value!r}", (model,), "initialization",
         lambda b, n=name, v=value: b.set([n], [v]) or status_of(b.fmu.exitInitializationMode),
         lambda b, c=culprit: ["fmi2ExitInitializationMode", c, "initialization mode"],
         repair=lambda b, n=name: b.set([n], [b.saved[n]]))

# unsupported functions and NULL pointers (the guard checks them before Python sees the call)
case("getDirectionalDerivative", BOTH, "step",
     lambda b: b.raw("fmi2GetDirectionalDerivative", b.fmu.component, None, 0, None, 0, None, None),
     lambda b: ["fmi2GetDirectionalDerivative", "not supported"])
case("setRealInputDerivatives", BOTH, "step",
     lambda b: b.raw("fmi2SetRealInputDerivatives", b.fmu.component, (ctypes.c_uint * 1)(0), 1,
                     (ctypes.c_int * 1)(1), (ctypes.c_double * 1)(0.0)),
     lambda b: ["fmi2SetRealInputDerivatives"])
case("cancelStep", BOTH, "step", lambda b: b.raw("fmi2CancelStep", b.fmu.component),
     lambda b: ["fmi2CancelStep"])
case("getReal_NULL_vr", BOTH, "step",
     lambda b: b.raw("fmi2GetReal", b.fmu.component, None, 1, (ctypes.c_double * 1)()),
     lambda b: ["fmi2GetReal", "NULL value reference"])
case("setReal_NULL_values", BOTH, "step",
     lambda b: b.raw("fmi2SetReal", b.fmu.component, (ctypes.c_uint * 1)(0), 1, None),
     lambda b: ["fmi2SetReal", "NULL value array"])
case("getRealStatus_NULL", BOTH, "step", lambda b: b.raw("fmi2GetRealStatus", b.fmu.component, 2, None),
     lambda b: ["fmi2GetRealStatus", "NULL"])
case("setDebugLogging_NULL_categories", BOTH, "step",
     lambda b: b.raw("fmi2SetDebugLogging", b.fmu.component, 0, 1, None),
     lambda b: ["fmi2SetDebugLogging", "NULL"])
case("serializedFMUstateSize_NULL", BOTH, "step",
     lambda b: b.raw("fmi2SerializedFMUstateSize", b.fmu.component, b.states["step"], None),
     lambda b: ["fmi2SerializedFMUstateSize", "NULL"])
case("serializeFMUstate_buffer_too_small", BOTH, "step", _serialize_small,
     lambda b: ["fmi2SerializeFMUstate", "too small", str(len(b.blob))])

# FMU states
case("setFMUstate_other_model", BOTH, "step",
     lambda b: status_of(lambda: b.fmu.setFMUstate(b.other.states["step"])),
     lambda b: ["fmi2SetFMUstate", "not a live FMU state", b.name])
case("setFMUstate_pointer_0x1234", BOTH, "step", lambda b: _set_state(b, 0x1234),
     lambda b: ["fmi2SetFMUstate", "0x1234"])
case("setFMUstate_NULL", BOTH, "step", lambda b: _set_state(b, None), lambda b: ["fmi2SetFMUstate", "NULL"])
case("setFMUstate_freed", BOTH, "step", _free_then_set, lambda b: ["fmi2SetFMUstate", "freed"])
case("deSerialize_other_model", BOTH, "step", lambda b: _deserialize(b, b.other.blob),
     lambda b: ["fmi2DeSerializeFMUstate", b.other.name, b.name, "GUID"])
case("deSerialize_truncated", BOTH, "step", lambda b: _deserialize(b, b.blob[:-7]),
     lambda b: ["fmi2DeSerializeFMUstate", "checksum", str(len(b.blob) - 7)])
case("deSerialize_one_byte_changed", BOTH, "step",
     lambda b: _deserialize(b, b.blob[:-20] + bytes([b.blob[-20] ^ 1]) + b.blob[-19:]),
     lambda b: ["fmi2DeSerializeFMUstate", "checksum"])
case("deSerialize_empty", BOTH, "step", lambda b: _deserialize(b, b""), lambda b: ["0 bytes", "header"])
case("deSerialize_not_a_state", BOTH, "step", lambda b: _deserialize(b, b"\x00\xffnot a state\n{}"),
     lambda b: ["fmi2DeSerializeFMUstate", "header"])
case("deSerialize_into_foreign_handle", BOTH, "step",
     lambda b: status_of(lambda: b.fmu.deSerializeFMUstate(b.blob, ctypes.c_void_p(0x5678))),
     lambda b: ["fmi2DeSerializeFMUstate", "0x5678"])


def test_catalogue_size():
    assert len(CASES) >= 150
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_call_is_refused_and_changes_nothing(benches, case):
    b = benches[case.model]
    b.restore(case.mode)
    before, t_before = b.values(), b.time()
    reals = [n for n in b.vr if b.slave.types[n] == "Real"]
    b.saved = dict(zip(reals, b.fmu.getReal([b.vr[n] for n in reals])))
    status = case.action(b)
    errors = b.errors()
    assert status == ERROR, (status, b.messages)
    assert errors, "no error message reached the logger"
    text = " | ".join(errors)
    for culprit in case.culprits(b):
        assert culprit in text, f"{culprit!r} not in {text!r}"
    assert all(f" at t={b.time()!r}: " in m for m in errors), errors
    assert all(c == "logStatusError" for s, c, m in b.messages if s >= ERROR)
    assert not any(s == FATAL for s, c, m in b.messages)
    if case.repair:
        case.repair(b)
    assert np.array_equal(b.values(), before, equal_nan=True)
    assert b.time() == t_before
    assert np.array_equal(b.continue_run(case.mode), b.reference[case.mode])


# ---------------------------------------------------------------- corrupted serialized states
def _flip_bits(blob, rng):
    data = bytearray(blob)
    for _ in range(rng.randint(1, 8)):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return bytes(data)


def _truncate(blob, rng):
    return blob[:rng.randrange(len(blob))]


def _append(blob, rng):
    return blob + rng.randbytes(rng.randint(1, 64))


def _delete_slice(blob, rng):
    i = rng.randrange(len(blob))
    return blob[:i] + blob[i + rng.randint(1, 32):]


def _insert(blob, rng):
    i = rng.randrange(len(blob) + 1)
    return blob[:i] + rng.randbytes(rng.randint(1, 16)) + blob[i:]


def _overwrite(blob, rng):
    i = rng.randrange(len(blob))
    return blob[:i] + rng.randbytes(min(rng.randint(1, 32), len(blob) - i)) + blob[i + 32:]


def _digit_change(blob, rng):
    """Change one decimal digit of a number: still valid JSON, only the checksum can tell."""
    digits = [i for i, c in enumerate(blob) if 48 <= c <= 57]
    i = rng.choice(digits)
    return blob[:i] + bytes([48 + (blob[i] - 48 + rng.randint(1, 9)) % 10]) + blob[i + 1:]


def _swap_halves(blob, rng):
    i = rng.randrange(1, len(blob))
    return blob[i:] + blob[:i]


CORRUPTIONS = (_flip_bits, _truncate, _append, _delete_slice, _insert, _overwrite, _digit_change,
               _swap_halves)


def corrupted(blob, rng, n):
    """n corrupted copies of blob (each differs from it), of kinds drawn at random."""
    out = []
    while len(out) < n:
        kind = rng.choice(CORRUPTIONS)
        data = kind(blob, rng)
        if data != blob:
            out.append((kind.__name__, data))
    return out


def test_300_corrupted_states_all_refused(benches):
    rng = random.Random(20261124)
    counts = {"refused": 0, "accepted": 0, "fatal": 0, "silent": 0}
    kinds = {}
    for name in ("slider_crank", "cart_pendulum"):
        b = benches[name]
        b.restore("step")
        before, t_before = b.values(), b.time()
        for kind, data in corrupted(b.blob, rng, 150):
            kinds[kind] = kinds.get(kind, 0) + 1
            b.messages.clear()
            status = _deserialize(b, data)
            if status <= 1:
                counts["accepted"] += 1
            elif status == FATAL:
                counts["fatal"] += 1
            elif status == ERROR and any("fmi2DeSerializeFMUstate" in m for m in b.errors()):
                counts["refused"] += 1
            else:
                counts["silent"] += 1
        # nothing changed, and the intact state still works
        assert np.array_equal(b.values(), before) and b.time() == t_before
        assert np.array_equal(b.continue_run("step"), b.reference["step"])
        b.fmu.setFMUstate(b.fmu.deSerializeFMUstate(b.blob))
        assert np.array_equal(b.continue_run("step"), b.reference["step"])
    print(f"corrupted serialized states: {counts} by kind {kinds}")
    assert counts == {"refused": 300, "accepted": 0, "fatal": 0, "silent": 0}
    assert len(kinds) == len(CORRUPTIONS)


# ---------------------------------------------------------------- what must still work
def test_state_of_another_instance_of_the_same_model_is_accepted(benches):
    """The checks refuse foreign states, not states of the same model: a state serialized by
    the bench restores into a fresh instance and continues bit-identically."""
    b = benches["slider_crank"]
    fresh = b.new_slave("fresh")
    fresh.instantiate()
    fresh.fmu.setFMUstate(fresh.fmu.deSerializeFMUstate(b.blob))
    t0 = 0.0 + WARMUP * H
    rows = []
    for k in range(STEPS):
        fresh.fmu.doStep(t0 + k * H, H)
        rows.append(b.values(fresh.fmu))
    assert np.array_equal(np.array(rows), b.reference["step"][:, :-1])
    assert fresh.errors() == []
    fresh.free()


def test_failed_integration_keeps_the_last_communication_point(benches):
    """F = 1e300 is a legal input (finite, no declared bounds) that the integrator cannot
    take: fmi2DoStep fails with fmi2Error naming the input and the time; outputs and time stay
    those of the last communication point; stepping on is refused until a state is restored."""
    b = benches["cart_pendulum"]
    b.restore("step")
    before, t = b.values(), b.time()
    assert b.set(["F"], [1e300]) == 0
    assert b.step(t, H) == ERROR
    text = " ".join(b.errors())
    assert "fmi2DoStep" in text and "F = 1e+300" in text and f"at t={t!r}" in text
    after = b.values()
    i = b.real_vrs.index(b.vr["F"])
    assert np.array_equal(np.delete(after, i), np.delete(before, i)) and b.time() == t
    b.messages.clear()
    assert b.step(t, H) == ERROR and "'error'" in " ".join(b.errors())
    b.restore("step")
    assert np.array_equal(b.continue_run("step"), b.reference["step"])


def test_instantiate_refuses_wrong_guid_and_model_exchange(benches):
    from fmpy.fmi2 import FMU2Slave

    from mbsfmu.fmu.fmpy_callbacks import recording_callbacks

    b = benches["cart_pendulum"]
    messages = []
    callbacks = recording_callbacks(messages)
    fmu = FMU2Slave(guid="{00000000-0000-0000-0000-000000000000}", unzipDirectory=b.fmu.unzipDirectory,
                    modelIdentifier=b.fmu.modelIdentifier, instanceName="wrong_guid")
    with pytest.raises(Exception, match="instantiate"):
        fmu.instantiate(callbacks=callbacks)
    assert any("wrong GUID" in m and "00000000" in m and "cart_pendulum" in m for s, c, m in messages)
    messages.clear()
    resources = pathlib.Path(b.fmu.unzipDirectory, "resources").as_uri().encode()
    model_exchange = 0
    assert fmu._functions["fmi2Instantiate"](b"me", model_exchange, b.fmu.guid.encode(), resources,
                                             ctypes.byref(callbacks), 0, 0) is None
    assert any("Co-Simulation" in m for s, c, m in messages)


def test_messages_once_with_debug_logging_on(benches):
    """With debug logging on the refusal is logged once (the guard logs it; pythonfmu's own
    queue does not repeat it)."""
    b = benches["cart_pendulum"]
    s = b.new_slave("debug_on")
    s.instantiate(logging_on=True)
    assert s.start() == 0
    s.messages.clear()
    with pytest.raises(FMICallException):
        s.fmu.setReal([s.vr["drive_power"]], [1.0])
    errors = [m for st, c, m in s.messages if st >= ERROR]
    assert len(errors) == 1 and "'drive_power'" in errors[0]
    s.free()


def test_reset_returns_to_instantiated(benches):
    b = benches["cart_pendulum"]
    b.restore("step")
    b.fmu.reset()
    assert b.time() == 0.0
    assert b.step(0.0, H) == ERROR and "'instantiated'" in " ".join(b.errors())
    b.fmu.setupExperiment(startTime=0.0)
    b.slave.set(SETTINGS)
    b.fmu.enterInitializationMode()
    b.fmu.exitInitializationMode()
    b.slave.run(0.0, WARMUP, H, b.inputs)
    b.states["step"] = b.fmu.getFMUstate()  # the bench's old handles stay valid as well
    b.restore("step")
    assert np.array_equal(b.continue_run("step"), b.reference["step"])


def test_validate_fmu(benches):
    from fmpy.validation import validate_fmu

    for b in benches.values():
        assert validate_fmu(str(b.path)) == []


def test_warning_reaches_the_logger(benches):
    """Start values that violate the loop: the consistent initialization moves them and says
    so as fmi2Warning (logStatusWarning), debug logging off."""
    b = benches["slider_crank"]
    b.restore("initialization")
    b.set(["x", "alpha"], [0.2, 2.5])
    assert b.raw("fmi2ExitInitializationMode", b.fmu.component) == 1
    warnings = [(c, m) for s, c, m in b.messages if s == 1]
    assert len(warnings) == 1 and warnings[0][0] == "logStatusWarning"
    assert "fmi2ExitInitializationMode at t=0.0" in warnings[0][1] and "x: 0.2 ->" in warnings[0][1]


def test_start_time(benches):
    """The FMU time starts at fmi2SetupExperiment's start time (the cart-pendulum does not
    depend on t: the same run shifted by 2 s, equal up to the rounding of the step sizes)."""
    b = benches["cart_pendulum"]
    s = b.new_slave("late_start")
    s.instantiate()
    assert s.start(t0=2.0) == 0
    rows = s.run(2.0, WARMUP, H)
    ref = b.new_slave("early_start")
    ref.instantiate()
    ref.start()
    assert np.allclose(rows, ref.run(0.0, WARMUP, H), rtol=1e-10, atol=1e-12)
    with pytest.raises(FMICallException):
        s.fmu.doStep(0.0, H)
    assert "communication point 0.0 does not match the FMU time 2.05" in " ".join(s.errors())
    s.free()
    ref.free()


def _copy_binaries(b, folder, name):
    """The FMU's Linux binaries copied to ``folder``, the guard under ``name``."""
    import shutil

    folder.mkdir()
    src = pathlib.Path(b.fmu.unzipDirectory) / "binaries" / "linux64"
    shutil.copy(src / "pythonfmu-export.so", folder)
    shutil.copy(src / f"{b.fmu.modelIdentifier}.so", folder / name)
    return folder / name


def _slave_from(b, library, instance_name, messages):
    from fmpy.fmi2 import FMU2Slave

    from mbsfmu.fmu.fmpy_callbacks import recording_callbacks

    fmu = FMU2Slave(guid=b.fmu.guid, unzipDirectory=b.fmu.unzipDirectory, libraryPath=str(library),
                    modelIdentifier=b.fmu.modelIdentifier, instanceName=instance_name)
    fmu.callbacks_ = recording_callbacks(messages)
    return fmu


def test_binary_loaded_from_elsewhere(benches, tmp_path):
    """An importer that loads a copy of the binary: the slave finds it among the loaded
    libraries, and refusals still reach the logger as fmi2Error."""
    b = benches["cart_pendulum"]
    messages = []
    fmu = _slave_from(b, _copy_binaries(b, tmp_path / "copy", "cart_pendulum.so"), "copied", messages)
    fmu.instantiate(callbacks=fmu.callbacks_)
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    with pytest.raises(FMICallException) as err:
        fmu.setReal([b.vr["drive_power"]], [1.0])
    assert err.value.status == ERROR and any("'drive_power'" in m for s, c, m in messages)
    fmu.freeInstance()


def test_slave_without_its_guard_does_not_start(benches, tmp_path):
    """A guard the slave cannot find (renamed): rather than run with refusals the importer would
    not see, fmi2Instantiate fails and says why."""
    b = benches["cart_pendulum"]
    messages = []
    fmu = _slave_from(b, _copy_binaries(b, tmp_path / "renamed", "renamed.so"), "renamed", messages)
    with pytest.raises(Exception, match="instantiate"):
        fmu.instantiate(callbacks=fmu.callbacks_)
    assert any("did not find this library" in m for s, c, m in messages)
