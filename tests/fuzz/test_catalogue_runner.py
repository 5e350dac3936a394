"""Catalogue of bad inputs of the runner surface: diagrams, runs, standard blocks, FMU blocks and
SSP files.  Each case asserts the exception type and that the message names the culprit (block,
port, parameter, value), by a regular expression; a run that fails names the block and the time
and keeps the signals computed so far."""

import math
import pathlib

import numpy as np
import pytest

from blocks.control import PID
from blocks.delays import Delay, TransportDelay
from blocks.discontinuities import DeadZone, Quantizer, Relay
from blocks.discrete import DiscreteIntegrator, ZeroOrderHold
from blocks.fmu import FMU
from blocks.lookup import Lookup1D, Lookup2D
from blocks.lti import StateSpace, TransferFunction
from blocks.math_blocks import Function, Gain, RateLimiter, Saturation, Sum
from blocks.routing import MultiportSwitch, Switch
from blocks.sinks import Recorder
from blocks.sources import Constant, Ramp, Sine, Step, Table
from blocks.udp import UdpReceive, UdpSend
from mbsfmu.core.errors import ParameterError
from mbsfmu.runner import BlockError, BlockRunError, Diagram, DiagramError, SSPError, import_ssp
from mbsfmu.runner.diagram import AlgebraicLoopError
from mbsfmu.runner.live import LiveView

MODELS = pathlib.Path(__file__).resolve().parents[2] / "models"

BLOCK_CASES = [
    ("PID kp nan", lambda: PID(kp=math.nan), r"PID kp must be finite, got nan"),
    ("PID tf negative", lambda: PID(kp=1, tf=-1),
     r"PID: derivative filter time constant tf must be >= 0, got -1"),
    ("PID limits", lambda: PID(kp=1, u_min=1, u_max=0), r"PID: u_min 1 must be less than u_max 0"),
    ("PID anti-windup", lambda: PID(kp=1, anti_windup="magic"), r"anti_windup must be .* got 'magic'"),
    ("StateSpace shapes", lambda: StateSpace([[1]], [[1, 2]], [[1]], [[0]]),
     r"StateSpace: D has shape \(1, 1\)"),
    ("StateSpace method", lambda: StateSpace([[0]], [[1]], [[1]], [[0]], method="euler2"),
     r"StateSpace: method must be one of .* got 'euler2'"),
    ("StateSpace nan", lambda: StateSpace([[math.nan]], [[1]], [[1]], [[0]]),
     r"StateSpace: A has non-finite"),
    ("TransferFunction improper", lambda: TransferFunction([1, 2, 3], [1, 1]),
     r"improper \(numerator degree 2"),
    ("TransferFunction zero denominator", lambda: TransferFunction([1], [0, 0]), r"the denominator is zero"),
    ("Gain text", lambda: Gain("two"), r"gain k must be a real number, got 'two'"),
    ("Sum signs", lambda: Sum("+*"), r"Sum: signs must be .* got '\+\*'"),
    ("Saturation order", lambda: Saturation(1.0, -1.0), r"Saturation: lower 1.0 > upper -1.0"),
    ("RateLimiter negative", lambda: RateLimiter(-1.0),
     r"RateLimiter: rising slew rate must be >= 0, got -1.0"),
    ("Function not callable", lambda: Function(3), r"Function: fn must be callable, got 3"),
    ("Delay zero steps", lambda: Delay(0), r"Delay steps must be >= 1 \(a delay of 0 samples is a direct"),
    ("Delay fractional steps", lambda: Delay(1.5), r"Delay steps must be a whole number >= 1, got 1.5"),
    ("TransportDelay negative", lambda: TransportDelay(-1e-3),
     r"TransportDelay delay must be > 0 s, got -0.001"),
    ("ZeroOrderHold without period", lambda: ZeroOrderHold(None), r"ZeroOrderHold needs a sample_time"),
    ("DiscreteIntegrator initial outside", lambda: DiscreteIntegrator(initial=-1.0, lower=0.0),
     r"DiscreteIntegrator: initial -1.0 is outside the limits \[0.0, inf\]"),
    ("DeadZone order", lambda: DeadZone(2.0, 1.0), r"DeadZone: lower 2.0 > upper 1.0"),
    ("Quantizer negative", lambda: Quantizer(-0.1), r"Quantizer interval must be > 0, got -0.1"),
    ("Relay band", lambda: Relay(0.0, 1.0), r"Relay: off_point 1.0 must be <= on_point 0.0"),
    ("Switch criterion", lambda: Switch(criterion="=="), r"Switch criterion must be one of .* got '=='"),
    ("MultiportSwitch one port", lambda: MultiportSwitch(1), r"MultiportSwitch ports must be >= 2, got 1"),
    ("Lookup1D not increasing", lambda: Lookup1D([0, 2, 1], [0, 1, 2]),
     r"Lookup1D: breakpoints x must be strictly increasing; x\[2\] = 1 follows 2"),
    ("Lookup2D table shape", lambda: Lookup2D([0, 1], [0, 1, 2], [[0, 1], [2, 3]]),
     r"Lookup2D: table values have shape \(2, 2\), the breakpoints need \(2, 3\)"),
    ("Constant nan", lambda: Constant(math.nan), r"Constant value must be finite, got nan"),
    ("Step time inf", lambda: Step(time=math.inf), r"Step time must be finite, got inf"),
    ("Ramp slope text", lambda: Ramp(slope="steep"), r"slope.*'steep'"),
    ("Sine frequency negative", lambda: Sine(frequency=-1), r"Sine frequency must be >= 0 Hz, got -1"),
    ("Table 1-D", lambda: Table(np.array([1.0, 2.0])), r"Table: the array must be 2-D .* got shape \(2,\)"),
    ("Table time decreasing", lambda: Table(np.array([[0, 1], [2, 2], [1, 3]])),
     r"Table array row 2: time 1.0 decreases \(previous 2.0\)"),
    ("Table interpolation", lambda: Table(np.array([[0, 1], [1, 2]]), interpolation="cubic9"),
     r"interpolation must be 'linear' or 'previous', got 'cubic9'"),
    ("Table missing file", lambda: Table("/nonexistent.csv"), r"Table: cannot read '/nonexistent.csv'"),
    ("Recorder duplicate inputs", lambda: Recorder(inputs=("a", "a")),
     r"Recorder inputs: duplicate port name\(s\) a"),
    ("UdpSend port 0", lambda: UdpSend("127.0.0.1", 0),
     r"UdpSend port must be an integer UDP port in 1..65535, got 0"),
    ("UdpReceive port", lambda: UdpReceive(70000), r"port must be an integer UDP port in 0\.\.65535"),
    ("UdpReceive timeout", lambda: UdpReceive(0, timeout=-1.0), r"timeout must be >= 0"),
    ("UdpReceive rcvbuf", lambda: UdpReceive(0, rcvbuf=10),
     r"rcvbuf must be a whole number of bytes in \[256, "),
    ("UdpReceive policy", lambda: UdpReceive(0, policy="drop"), r"policy must be one of \('hold', 'fail'\)"),
]


def two_blocks():
    d = Diagram(0.1)
    d.add("c", Constant(1.0))
    d.add("g", Gain(2.0))
    return d


def wired():
    d = two_blocks()
    d.connect("c.y", "g.u")
    return d


DIAGRAM_CASES = [
    ("step zero", lambda: Diagram(step=0), DiagramError, r"step must be a positive finite number, not 0"),
    ("t0 nan", lambda: Diagram(step=0.1, t0=math.nan), DiagramError, r"t0 must be a finite number, not nan"),
    ("duplicate block", lambda: two_blocks().add("c", Constant(2.0)), DiagramError,
     r"block name 'c' is already used"),
    ("block name", lambda: two_blocks().add("1c", Constant(2.0)), DiagramError,
     r"block name '1c': must be an identifier"),
    ("not a block", lambda: two_blocks().add("x", 42), DiagramError, r"block 'x': int is not a Block"),
    ("unknown block", lambda: two_blocks().connect("q.y", "g.u"), DiagramError,
     r"unknown block 'q' in 'q.y'"),
    ("unknown port", lambda: two_blocks().connect("c.z", "g.u"), DiagramError,
     r"block 'c' has no output 'z'"),
    ("output as destination", lambda: two_blocks().connect("c.y", "g.y"), DiagramError,
     r"destination 'g.y' is an output of 'g'"),
    ("reference without dot", lambda: two_blocks().connect("cy", "g.u"), DiagramError,
     r"source 'cy': expected 'block.port'"),
    ("input driven twice", lambda: wired().connect("c.y", "g.u"), DiagramError,
     r"input 'g.u' is already driven by 'c.y'"),
    ("unconnected input", lambda: two_blocks().run(1.0), DiagramError, r"1 unconnected input\(s\): g.u"),
    ("t_end negative", lambda: wired().run(-1.0), DiagramError,
     r"t_end must be finite and greater than t0 = 0.0, not -1.0"),
    ("t_end nan", lambda: wired().run(math.nan), DiagramError, r"t_end .* not nan"),
    ("algebraic_loops option", lambda: wired().run(1.0, algebraic_loops="ignore"), DiagramError,
     r"algebraic_loops must be 'error' or 'iterate', not 'ignore'"),
    ("overrun policy", lambda: wired().run(1.0, realtime=True, overrun="panic"), DiagramError,
     r"overrun must be one of .* not 'panic'"),
    ("real-time factor", lambda: wired().run(1.0, realtime=True, rtf=0), DiagramError,
     r"rtf must be a positive finite number, not 0"),
    ("record unknown port", lambda: wired().run(1.0, record=["g.q"]), DiagramError,
     r"cannot record 'g.q': block 'g' has no port 'q'"),
    ("loop tolerance", lambda: wired().run(1.0, loop_tol=-1), DiagramError,
     r"loop_tol must be a positive number, not -1"),
    ("algebraic loop", lambda: _algebraic_loop().run(1.0), AlgebraicLoopError, r"g.*h|h.*g"),
    ("selector index out of range", lambda: _bad_index().run(1.0), BlockRunError,
     r"m at t=0.3: output\(\) failed: BlockError: MultiportSwitch: index 3.0 is not one of 1..2"),
    ("lookup input outside its breakpoints", lambda: _lookup_outside().run(1.0), BlockRunError,
     r"lut at t=0.3: output\(\) failed: BlockError: Lookup1D: input u = 1.3\d* is outside the "
     r"breakpoints \[-1, 1.25\] \(extrapolation='error'\)"),
    ("block fails during the run", lambda: _failing().run(1.0), BlockRunError,
     r"f at t=0.3.*ValueError: sensor disconnected"),
    ("non-finite output", lambda: _non_finite().run(1.0), BlockRunError, r"f at t=0.5.*y"),
    ("live option", lambda: wired().run(1.0, live="yes"), DiagramError,
     r"live must be True, False or a LiveView\(...\), not 'yes'"),
    ("live port negative", lambda: LiveView(port=-1), DiagramError,
     r"LiveView port must be an integer in \[0, 65535\], not -1"),
    ("live port text", lambda: LiveView(port="8080"), DiagramError,
     r"LiveView port must be an integer .* not '8080'"),
    ("live port fraction", lambda: LiveView(port=80.5), DiagramError,
     r"LiveView port must be an integer .* not 80.5"),
    ("live window zero", lambda: LiveView(window=0), DiagramError,
     r"LiveView window must be a number in \[1e-06, 1e\+09\], not 0"),
    ("live rate too high", lambda: LiveView(rate=1000), DiagramError,
     r"LiveView rate must be a number in \[0.1, 120\], not 1000"),
    ("live columns nan", lambda: LiveView(columns=math.nan), DiagramError,
     r"LiveView columns must be an integer .* not nan"),
    ("live signals empty", lambda: LiveView(signals=[]), DiagramError,
     r"LiveView signals must be a non-empty list of 'block.port' names, not \[\]"),
    ("live signals not names", lambda: LiveView(signals=[1]), DiagramError,
     r"LiveView signals must be .* not \[1\]"),
    ("live signal unknown", lambda: wired().run(1.0, live=LiveView(signals=["g.yy"])), DiagramError,
     r"LiveView signal 'g.yy' is not recorded \(did you mean g.y\?\); recorded: c.y, g.y"),
    ("live signal not recorded", lambda: wired().run(1.0, record=["c.y"],
                                                     live=LiveView(signals=["g.y"])),
     DiagramError,
     r"LiveView signal .g.y. is not recorded .*; recorded: c.y; a live signal must be one of record="),
    ("live port in use", lambda: _port_in_use(), DiagramError,
     r"LiveView cannot listen on 127.0.0.1:\d+: Address already in use"),
    # the result's plot: an image or an interactive page (issue 27 item 5)
    ("plot page misspelt", lambda: wired().run(0.3).plot("/tmp/p.htm"), ParameterError,
     r"plot '/tmp/p\.htm': '\.htm' is not an image format; end the name in one of .*\.png.*, "
     r"or \.html for an interactive page"),
    ("plot page a folder", lambda: wired().run(0.3).plot("/tmp"), ParameterError,
     r"plot '/tmp' is a directory; give a file name"),
    ("plot page in a folder not writable", lambda: wired().run(0.3).plot("/proc/p.html"), ParameterError,
     r"plot '/proc/p\.html': cannot write in '/proc'"),
    ("plot page without suffix", lambda: wired().run(0.3).plot("/tmp/p"), ParameterError,
     r"plot '/tmp/p': no suffix says the image format"),
]


def _port_in_use():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        wired().run(1.0, live=LiveView(port=s.getsockname()[1]))


def _algebraic_loop():
    d = Diagram(0.1)
    d.add("g", Gain(1.0))
    d.add("h", Gain(1.0))
    d.connect("g.y", "h.u")
    d.connect("h.y", "g.u")
    return d


def _sensor(t, u):
    if t > 0.25:
        raise ValueError("sensor disconnected")
    return u


def _overflow(t, u):
    return math.nan if t > 0.45 else u


def _with_function(fn):
    d = Diagram(0.1)
    d.add("c", Constant(1.0))
    d.add("f", Function(fn))
    d.connect("c.y", "f.u")
    return d


def _failing():
    return _with_function(_sensor)


def _non_finite():
    return _with_function(_overflow)


def _chain(source, block, name):
    d = Diagram(0.1)
    d.add("src", source)
    d.add(name, block)
    d.connect("src.y", f"{name}.u")
    return d


def _bad_index():
    """The selector's index ramps 1, 1.7, 2.4, 3.1 (rounded by a quantizer): 3 at t = 0.3."""
    d = _chain(Ramp(slope=7.0, initial=1.0), Quantizer(1.0), "q")
    d.add("m", MultiportSwitch(2))
    d.add("c", Constant(1.0))
    d.connect("q.y", "m.index")
    d.connect("c.y", "m.u1")
    d.connect("c.y", "m.u2")
    return d


def _lookup_outside():
    return _chain(Ramp(slope=4.0, initial=0.1), Lookup1D([-1.0, 1.25], [0.0, 1.0],
                                                          extrapolation="error"), "lut")


def test_transport_delay_below_the_step_is_refused_at_start():
    d = _chain(Sine(), TransportDelay(5e-4), "td")
    d.step = 1e-3
    with pytest.raises(BlockRunError, match=r"td at t=0: start\(\) failed: BlockError: TransportDelay: "
                       r"delay 0.0005 s is shorter than the block's period 0.001 s; a dead time "
                       r"below one period needs a smaller step") as info:
        d.run(0.1)
    assert len(info.value.result.t) == 0


@pytest.fixture(scope="module")
def cart(built_fmu):
    return built_fmu(MODELS / "cart_pendulum.py")


FMU_CASES = [
    ("missing file", lambda p: FMU(p.parent / "none.fmu"), r"FMU file '.*none.fmu' does not exist"),
    ("unknown parameter", lambda p: FMU(p, parameters={"mass": 1.0}), r"has no variable 'mass'"),
    ("input as parameter", lambda p: FMU(p, parameters={"F": 1.0}),
     r"'F' of cart_pendulum.fmu is not a parameter"),
    ("output start value", lambda p: FMU(p, start_values={"drive_power": 1.0}),
     r"the start value of 'drive_power' .* cannot be set"),
    ("text for a Real", lambda p: FMU(p, parameters={"m": "heavy"}), r"'m' is a Real variable; got 'heavy'"),
    ("out of declared range", lambda p: FMU(p, parameters={"solver_rtol": 1.0}),
     r"parameter 'solver_rtol' of cart_pendulum.fmu = 1.0 is outside its declared range \[1e-14, 0.1\]"),
    ("unknown port", lambda p: _fmu_diagram(p).connect("c.y", "plant.Q"), r"block 'plant' has no input 'Q'"),
]


@pytest.fixture(scope="module")
def kinds(built_fmu):
    """The cart as FMI 3.0 with both interfaces, and with Model Exchange only."""
    return {interface: built_fmu(MODELS / "cart_pendulum.py", fmi_version=3, interface=interface)
            for interface in ("both", "me")}


#: bad interface and integrator options of the FMU block (FMI 3.0 and Model Exchange)
KIND_CASES = [
    ("ME of a CS-only FMU", lambda k, cs: FMU(cs, interface="me"),
     r"cart_pendulum.fmu does not declare Model Exchange \(only Co-Simulation\): interface='me' needs "
     r"an FMU built with interface='me' or 'both'"),
    ("CS of an ME-only FMU", lambda k, cs: FMU(k["me"], interface="cs"),
     r"does not declare Co-Simulation \(only Model Exchange\)"),
    ("unknown interface", lambda k, cs: FMU(k["both"], interface="ModelExchange"),
     r"interface 'ModelExchange' is not an FMI interface of the FMU block; choose 'cs' \(Co-Simulation\) "
     r"or 'me' \(Model Exchange\)"),
    ("unknown method", lambda k, cs: FMU(k["both"], interface="me", method="euler"),
     r"method 'euler' is not an integration method of the Model Exchange FMU block; choose one of "
     r"RK45, DOP853, Radau, BDF"),
    ("method of a number", lambda k, cs: FMU(k["me"], method=2), r"method 2 is not an integration method"),
    ("integrator options with CS", lambda k, cs: FMU(k["both"], method="RK45", rtol=1e-6),
     r"method, rtol set the integrator of Model Exchange; this block runs the FMU's Co-Simulation"),
    ("rtol too large", lambda k, cs: FMU(k["me"], rtol=0.5), r"rtol must be in \[1e-13, 0.1\], got 0.5"),
    ("rtol nan", lambda k, cs: FMU(k["me"], rtol=math.nan), r"rtol must be in \[1e-13, 0.1\], got nan"),
    ("atol zero", lambda k, cs: FMU(k["me"], atol=0.0), r"atol must be > 0 and finite, got 0.0"),
    ("atol text", lambda k, cs: FMU(k["me"], atol="small"), r"atol must be a number, got 'small'"),
    ("max_step negative", lambda k, cs: FMU(k["me"], max_step=-1.0), r"max_step must be > 0, got -1.0"),
    ("FMI 3.0 parameter type", lambda k, cs: FMU(k["both"], parameters={"method": 1.5}),
     r"'method' is an Integer variable; got 1.5 of type float"),
    ("FMI 3.0 range", lambda k, cs: FMU(k["both"], parameters={"method": 7}),
     r"parameter 'method' of cart_pendulum.fmu = 7 is outside its declared range"),
]


@pytest.mark.parametrize("make, pattern", [c[1:] for c in KIND_CASES], ids=[c[0] for c in KIND_CASES])
def test_fmu_kinds(kinds, cart, make, pattern):
    with pytest.raises(BlockError, match=pattern):
        make(kinds, cart)


def _fmu_diagram(path, **kw):
    d = Diagram(0.01)
    d.add("plant", FMU(path, **kw))
    d.add("c", Constant(0.0))
    return d


@pytest.mark.parametrize("make, pattern", [c[1:] for c in BLOCK_CASES], ids=[c[0] for c in BLOCK_CASES])
def test_block_parameters(make, pattern):
    with pytest.raises(BlockError, match=pattern):
        make()


@pytest.mark.parametrize("call, exc, pattern", [c[1:] for c in DIAGRAM_CASES],
                         ids=[c[0] for c in DIAGRAM_CASES])
def test_diagrams_and_runs(call, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        call()
    if isinstance(info.value, BlockRunError):
        assert len(info.value.result.t) >= 3  # the signals before the failure are kept


@pytest.mark.parametrize("make, pattern", [c[1:] for c in FMU_CASES], ids=[c[0] for c in FMU_CASES])
def test_fmu_blocks(cart, make, pattern):
    with pytest.raises((BlockError, DiagramError), match=pattern):
        make(cart)


@pytest.mark.parametrize("values, pattern", [
    ({"m": -0.1}, r"body 'rod': mass must be positive, got -0.1 \(m = -0.1, l = 0.5\)"),
    ({"l": 0.0}, r"parameter 'l' = 0 is not allowed: with l = 0 the mass matrix is singular"),
    ({"mc": 0.0}, r"body 'cart': mass must be positive, got 0 \(mc = 0\)"),
])
def test_fmu_block_start_names_the_bad_parameter(cart, values, pattern):
    """The FMU's own refusal at initialization reaches the user through the block and the run."""
    d = _fmu_diagram(cart, parameters=values)
    d.connect("c.y", "plant.F")
    with pytest.raises((BlockRunError, BlockError), match=pattern):
        d.run(0.1)


def _without(cart, folder, name, text=None):
    """A copy of the cart FMU named ``name`` whose view resource is left out (or replaced by
    ``text``)."""
    import zipfile

    from mbsfmu.animation.model_view import RESOURCE

    out = folder / name
    with zipfile.ZipFile(cart) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            if item.filename != RESOURCE:
                dst.writestr(item, src.read(item.filename))
        if text is not None:
            dst.writestr(RESOURCE, text)
    return out


@pytest.fixture(scope="module")
def viewed(cart, tmp_path_factory):
    """Results of short runs of the cart FMU: with its view, without it, with a broken one, two
    plants with views, the cart's x recorded alone, and a diagram without any FMU."""
    folder = tmp_path_factory.mktemp("views")

    def run(*fmus, **kw):
        d = Diagram(0.01)
        d.add("c", Constant(0.0))
        for name, path in fmus:
            d.add(name, FMU(path))
            d.connect("c.y", f"{name}.F")
        return d.run(0.05, **kw)

    import json
    import zipfile

    from mbsfmu.animation.model_view import RESOURCE
    from mbsfmu.runner.block_fmu import export_block_fmu

    with zipfile.ZipFile(cart) as z:
        view = json.loads(z.read(RESOURCE))
    view.update(program=None, unavailable="time parameter 'p' of model 'cart_pendulum' is a Python "
                "function, which the FMU cannot carry")
    foreign = Diagram(0.01)
    foreign.add("c", Constant(1.0))
    foreign.add("gain", FMU(export_block_fmu(Gain(2.0), folder / "gain.fmu", step_size=0.01)))
    foreign.connect("c.y", "gain.u")
    return {"cart": run(("plant", cart)),
            "bare": run(("plant", _without(cart, folder, "bare.fmu"))),
            "no pose": run(("plant", _without(cart, folder, "nopose.fmu", json.dumps(view)))),
            "foreign": foreign.run(0.05),
            "broken": run(("plant", _without(cart, folder, "broken.fmu", "{not json"))),
            "two": run(("plant", cart), ("twin", cart)),
            "x only": run(("plant", cart), record=["plant.x"]),
            "no FMU": wired().run(0.3)}


#: bad calls of the runner's Result.animate (issue 27 item 4)
VIEW_CASES = [
    ("no FMU in the run", "no FMU", {}, DiagramError,
     r"^animate: no block of this run carries a 3D view \(an FMU block of an FMU that mbsfmu.build_fmu "
     r"built from a model does\)$"),
    ("FMU without the view", "bare", {}, DiagramError,
     r"no block of this run carries a 3D view .*; plant: bare.fmu carries no "
     r"resources/mbsfmu_viewer.json, so the viewer cannot draw it: an FMU carries its model's view when "
     r"mbsfmu.build_fmu built it from a model \(either kind\), and this one was built elsewhere or by an "
     r"mbsfmu before the 3D viewer$"),
    ("block= without the view", "bare", {"block": "plant"}, DiagramError,
     r"^animate: block 'plant' has no 3D view: bare.fmu carries no resources/mbsfmu_viewer.json, so the "
     r"viewer cannot draw it"),
    ("FMU of a block, not of a model", "foreign", {"block": "gain"}, DiagramError,
     r"^animate: block 'gain' has no 3D view: gain.fmu carries no resources/mbsfmu_viewer.json, so the "
     r"viewer cannot draw it: an FMU carries its model's view when mbsfmu.build_fmu built it from a "
     r"model \(either kind\), and this one was built elsewhere"),
    ("view without a pose", "no pose", {"block": "plant"}, DiagramError,
     r"^animate: block 'plant' has no 3D view: its FMU's view holds no pose: time parameter 'p' of "
     r"model 'cart_pendulum' is a Python function, which the FMU cannot carry$"),
    ("block a list", "cart", {"block": ["plant"]}, DiagramError,
     r"animate: no block \['plant'\] with a 3D view in this run \(blocks with one: plant\)"),
    ("broken view", "broken", {}, DiagramError,
     r"plant: resources/mbsfmu_viewer.json of broken.fmu is not JSON: Expecting property name"),
    ("unknown block", "cart", {"block": "plnt"}, DiagramError,
     r"animate: no block 'plnt' with a 3D view in this run \(blocks with one: plant\)"),
    ("block not a name", "cart", {"block": 3}, DiagramError, r"no block 3 with a 3D view"),
    ("two views", "two", {}, DiagramError,
     r"animate: 2 blocks of this run carry a 3D view \(plant, twin\); choose one with block="),
    ("coordinate not recorded", "x only", {}, DiagramError,
     r"animate: the run did not record 'plant.theta', the coordinate 'theta' of the model in 'plant'; "
     r"record it: Diagram.run\(..., record=\[..., 'plant.theta'\]\) \(or record=\['plant'\] for all "
     r"of the block's outputs; a coordinate is an output of the FMU block unless its outputs= leaves "
     r"it out\)"),
    ("fps zero", "cart", {"fps": 0}, ParameterError, r"animate: fps must be a positive number, got 0"),
    ("fps too high", "cart", {"fps": 1000}, ParameterError,
     r"animate: fps must be at most 100 frames per second, got 1000"),
    ("unknown trace", "cart", {"traces": ["tip"]}, ParameterError,
     r"animate: traces: unknown frame 'tip' \(frames: ISYS, cart, cart_cg, rod, rod_cg\)"),
    ("unknown suffix", "cart", {"path": "loop.mp4"}, ParameterError, r"\.mp4"),
    ("deformation scale of a rigid model", "cart", {"path": "loop.html", "deformation_scale": 100},
     ParameterError, r"^animate: deformation_scale 100 scales flexible bodies' elastic coordinates, and "
     r"model 'cart_pendulum' has no flexible body; leave it at 1$"),
    ("deformation scale zero", "cart", {"deformation_scale": 0}, ParameterError,
     r"^animate: deformation_scale must be a finite number > 0, got 0$"),
    ("deformation scale nan", "cart", {"deformation_scale": math.nan}, ParameterError,
     r"deformation_scale must be a finite number > 0, got nan"),
    ("deformation scale a string", "cart", {"deformation_scale": "100"}, ParameterError,
     r"deformation_scale must be a finite number > 0, got '100'"),
    ("player unknown", "cart", {"path": "loop.html", "player": "vr"}, ParameterError,
     r"^animate: player must be one of '3d', 'images', got 'vr'$"),
    ("traces in a GIF", "cart", {"path": "loop.gif", "traces": ["rod_cg"]}, ParameterError,
     r"^animate: traces and axes are drawn by the 3D viewer only \(an .html file with player '3d'\), "
     r"not in 'loop.gif' with player '3d'$"),
    ("axes on the images page", "cart", {"path": "loop.html", "axes": ["rod"], "player": "images"},
     ParameterError, r"traces and axes are drawn by the 3D viewer only"),
    ("dpi too large", "cart", {"path": "loop.gif", "dpi": 1000}, ParameterError,
     r"^animate: dpi 1000 x size 5 in = 5000 pixels a side, more than 4000; choose a smaller dpi$"),
    ("size negative", "cart", {"path": "loop.gif", "size": -1}, ParameterError,
     r"^animate: size must be a positive number, got -1$"),
]


@pytest.mark.parametrize("which, kw, exc, pattern", [c[1:] for c in VIEW_CASES],
                         ids=[c[0] for c in VIEW_CASES])
def test_result_animate(viewed, which, kw, exc, pattern, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(exc, match=pattern):
        viewed[which].animate(**kw)
    assert not list(tmp_path.iterdir())  # a refused call writes nothing


def test_ssp_that_is_not_a_zip(tmp_path):
    (tmp_path / "x.ssp").write_text("hello")
    with pytest.raises(SSPError, match=r"not a zip archive"):
        import_ssp(tmp_path / "x.ssp")


def test_catalogue_size():
    """The number of bad inputs catalogued here (reported in the issue note)."""
    assert len(BLOCK_CASES) + len(DIAGRAM_CASES) + len(FMU_CASES) + len(KIND_CASES) + len(VIEW_CASES) \
        + 3 + 1 >= 85
