"""The linearized closed loop of a diagram (``mbsfmu.linearize(diagram)``, issue 28 item 3)
against loops built by hand with python-control, closed-form margins and the runner itself.

Tolerances: poles agree to 1e-8 relative (max |p - p_ref| / max(1, |p_ref|) after matching
each pole to its nearest reference); margins to 1e-9 relative (their crossovers are polished on
the exact frequency response); the discrete loop reproduces the runner's signals of a linear
diagram to 1e-9 (absolute, signals of order 1)."""

import functools
import pathlib

import control
import numpy as np
import pytest
from oscillator_models import K as SPRING_K
from oscillator_models import M as SPRING_M
from oscillator_models import oscillator
from scipy.optimize import brentq

import mbsfmu
from blocks import (
    PID,
    Delay,
    Gain,
    Lookup1D,
    Saturation,
    StateSpace,
    Step,
    Sum,
    TransferFunction,
    TransportDelay,
    UnitDelay,
)
from mbsfmu.analysis import dlqr, lqr
from mbsfmu.analysis.closed_loop import closed_loop_poles, largest_real_part
from mbsfmu.runner import Diagram, DiagramError

CART = pathlib.Path(__file__).resolve().parents[2] / "models" / "cart_pendulum.py"
POLE_RTOL = 1e-8


@functools.cache
def cart_lin():
    """The cart-pendulum upright, numeric; outputs: its four states."""
    return mbsfmu.linearize(mbsfmu.load_model(CART), at={"x": 0, "theta": 0}, inputs=["F"],
                            symbolic=False)


def assert_same_poles(p, ref, rtol=POLE_RTOL):
    p, ref = list(np.asarray(p, complex)), list(np.asarray(ref, complex))
    assert len(p) == len(ref), (p, ref)
    for r in ref:
        k = int(np.argmin([abs(q - r) for q in p]))
        assert abs(p[k] - r) <= rtol * max(1.0, abs(r)), (p[k], r)
        p.pop(k)


def wire(d, *pairs):
    for a, b in pairs:
        d.connect(a, b)


def state_loop(d, lin, gain, delay=False):
    """plant (StateSpace of lin) -> gain block (-K x) -> [unit delay] -> plant.F"""
    d.add("plant", StateSpace(lin))
    d.add("ctrl", gain.block())
    for s in lin.states:
        d.connect(f"plant.{s.replace('.', '_')}", f"ctrl.{s}")
    if delay:
        d.add("hold", UnitDelay())
        wire(d, ("ctrl.F", "hold.u"), ("hold.y", "plant.F"))
    else:
        d.connect("ctrl.F", "plant.F")


def plant_ss(lin):
    return control.ss(lin.A, lin.B, lin.C, lin.Du)


def pid_tf(kp, ki, kd, tf):
    s = control.tf("s")
    return kp + ki / s + kd * s / (tf * s + 1)


# ---------------------------------------------------------------------------- continuous
def test_cart_lqr_and_pid_loop_matches_python_control_feedback():
    """u = -K x + C(s)(0 - x): an LQR and a PID on the cart position, continuous domain, against
    feedback(P, K + C·[1 0 0 0]) built by hand."""
    lin = cart_lin()
    gain = lqr(lin, Q=[10, 10, 1, 1], R=[1])
    kp, ki, kd, tf = -2.0, -0.5, -0.5, 0.05  # (on the cart position an inverted pendulum needs
    # the "wrong" sign: with positive gains this loop is unstable)
    d = Diagram(step=0.01)
    d.add("plant", StateSpace(lin))
    d.add("ctrl", gain.block())
    d.add("neg", Gain(-1.0))
    d.add("pid", PID(kp, ki, kd, tf=tf))
    d.add("u", Sum("++"))
    for s in lin.states:
        d.connect(f"plant.{s}", f"ctrl.{s}")
    wire(d, ("plant.x", "neg.u"), ("neg.y", "pid.u"), ("ctrl.F", "u.u1"), ("pid.y", "u.u2"),
         ("u.y", "plant.F"))
    cl = mbsfmu.linearize(d, domain="continuous")
    assert cl.domain == "continuous" and cl.dt is None
    assert set(cl.states) == {"plant.x", "plant.theta", "plant.der(x)", "plant.der(theta)",
                              "pid.integral", "pid.filter"}
    pick_x = control.ss([], [], [], [[1, 0, 0, 0]])
    H = control.ss([], [], [], gain.K) + control.ss(pid_tf(kp, ki, kd, tf)) * pick_x
    ref = control.poles(control.feedback(plant_ss(lin), H))
    assert_same_poles(cl.poles, ref)
    assert cl.stable and cl.largest_real_part == pytest.approx(max(ref.real), rel=1e-8)
    # without the PID the loop's poles are the LQR design's own
    d2 = Diagram(step=0.01)
    state_loop(d2, lin, gain)
    assert_same_poles(closed_loop_poles(d2, domain="continuous"), gain.poles)


def test_mass_spring_with_pid_matches_feedback_and_damping():
    """The oscillator of tests/support (m = 2, k = 8) with a PID on x: poles and damping against
    feedback(P C); the open plant alone is undamped (ζ = 0 at ω = 2)."""
    lin = mbsfmu.linearize(oscillator(), at={"x": 0}, inputs=[], symbolic=False)
    assert lin.inputs == []
    s = control.tf("s")
    P = 1 / (SPRING_M * s ** 2 + SPRING_K)
    kp, ki, kd, tf = 20.0, 10.0, 4.0, 0.02
    d = Diagram(step=1e-3)
    d.add("ref", Step(0.5, 0.0, 1.0))
    d.add("err", Sum("+-"))
    d.add("pid", PID(kp, ki, kd, tf=tf))
    d.add("plant", TransferFunction([1.0], [SPRING_M, 0.0, SPRING_K]))
    wire(d, ("ref.y", "err.u1"), ("plant.y", "err.u2"), ("err.y", "pid.u"), ("pid.y", "plant.u"))
    cl = mbsfmu.linearize(d, domain="continuous")
    ref = control.poles(control.feedback(P * pid_tf(kp, ki, kd, tf)))
    assert_same_poles(cl.poles, ref)
    wn, zeta, _ = control.damp(control.feedback(P * pid_tf(kp, ki, kd, tf)), doprint=False)
    for p, z in zip(cl.poles, cl.damping):
        k = int(np.argmin(np.abs(np.asarray(control.poles(control.feedback(P * pid_tf(kp, ki, kd, tf))))
                                 - p)))
        assert z == pytest.approx(zeta[k], rel=1e-8, abs=1e-12)
    assert cl.inputs == ["ref.y"] and "plant.y" in cl.outputs
    # the open plant (the TransferFunction alone) has ζ = 0 at |s| = sqrt(k/m) = 2
    d0 = Diagram(step=1e-3)
    d0.add("ref", Step(0.5))
    d0.add("plant", TransferFunction([1.0], [SPRING_M, 0.0, SPRING_K]))
    d0.connect("ref.y", "plant.u")
    open_ = mbsfmu.linearize(d0, domain="continuous")
    assert np.allclose(np.abs(open_.poles), 2.0, rtol=1e-12) and np.allclose(open_.damping, 0.0, atol=1e-12)
    assert not open_.stable


def test_transport_delay_as_pade_matches_control_pade():
    """e^(-τs) in a continuous loop as the Padé approximant of order 3 (python-control's pade)."""
    tau, k = 0.3, 2.0
    d = Diagram(step=1e-3)
    d.add("ref", Step(0.1))
    d.add("err", Sum("+-"))
    d.add("k", Gain(k))
    d.add("dead", TransportDelay(tau))
    d.add("plant", TransferFunction([1.0], [1.0, 1.0]))
    wire(d, ("ref.y", "err.u1"), ("plant.y", "err.u2"), ("err.y", "k.u"), ("k.y", "dead.u"),
         ("dead.y", "plant.u"))
    for order in (1, 3, 5):
        cl = mbsfmu.linearize(d, pade_order=order, domain="continuous")
        num, den = control.pade(tau, order)
        L = k * control.tf(num, den) * control.tf([1], [1, 1])
        assert_same_poles(cl.poles, control.poles(control.feedback(L)), rtol=1e-7)
        assert len(cl.states) == order + 1


# ---------------------------------------------------------------------------- discrete
def test_discrete_dlqr_with_unit_delay_matches_hand_built_z_loop():
    """dlqr at the diagram's step T with a one-sample computation delay: the loop is discrete
    (a unit delay), and its z-poles equal feedback(Pd · z⁻¹, K) with Pd = c2d(P, T, 'zoh')."""
    lin = cart_lin()
    T = 0.02
    gain = dlqr(lin, Q=[10, 10, 1, 1], R=[1], period=T)
    d = Diagram(step=T)
    state_loop(d, lin, gain, delay=True)
    cl = mbsfmu.linearize(d)
    assert cl.domain == "discrete" and cl.dt == T
    Pd = control.c2d(plant_ss(lin), T, "zoh")
    z_delay = control.ss([[0.0]], [[1.0]], [[1.0]], [[0.0]], T)
    ref = control.poles(control.feedback(Pd * z_delay, control.ss([], [], [], gain.K, T)))
    assert_same_poles(cl.poles, ref)
    assert "hold.u[k-1]" in cl.states
    # without the delay: exactly the design's z-poles
    d2 = Diagram(step=T)
    state_loop(d2, lin, gain)
    cl2 = mbsfmu.linearize(d2, domain="discrete")
    assert_same_poles(cl2.poles, gain.poles)
    assert cl2.stable and cl2.spectral_radius == pytest.approx(max(abs(gain.poles)), rel=1e-10)
    assert cl2.largest_real_part == pytest.approx(max(np.log(gain.poles.astype(complex)).real) / T,
                                                  rel=1e-8)


def test_discrete_loop_reproduces_the_runners_signals():
    """A linear diagram with every discrete form (PID with derivative, Delay(3), a transport
    delay of 2.3 steps, a ZOH-discretized plant, a unit delay): the closed loop's response to
    the step of the reference, x[k+1] = A x[k] + B r[k], y = C x + D r, is the runner's
    recorded signals to 1e-9: the discrete domain is the runner's own semantics."""
    T = 0.01
    d = Diagram(step=T)
    d.add("ref", Step(0.05, 0.0, 1.0))
    d.add("err", Sum("+-"))
    d.add("pid", PID(1.2, 0.8, 0.05))
    d.add("late", Delay(3))
    d.add("dead", TransportDelay(2.3 * T))
    d.add("plant", TransferFunction([2.0], [1.0, 0.6, 2.0]))
    d.add("z1", UnitDelay())
    wire(d, ("ref.y", "err.u1"), ("z1.y", "err.u2"), ("err.y", "pid.u"), ("pid.y", "late.u"),
         ("late.y", "dead.u"), ("dead.y", "plant.u"), ("plant.y", "z1.u"))
    cl = mbsfmu.linearize(d)
    assert cl.domain == "discrete"
    res = d.run(3.0)
    r = res["ref.y"]
    x = np.zeros(len(cl.states))
    Y = []
    for rk in r:
        Y.append(cl.C @ x + cl.D @ [rk])
        x = cl.A @ x + cl.B @ [rk]
    Y = np.array(Y)
    for j, name in enumerate(cl.outputs):
        assert np.max(np.abs(Y[:, j] - res[name])) < 1e-9, name
    assert np.max(np.abs(res["plant.y"])) > 0.5  # the step went round the loop


# ---------------------------------------------------------------------------- margins
def _pi_loop(kp, ki):
    d = Diagram(step=1e-3)
    d.add("ref", Step(0.1))
    d.add("err", Sum("+-"))
    d.add("pi", PID(kp, ki))
    d.add("plant", TransferFunction([1.0], [1.0, 1.0]))
    wire(d, ("ref.y", "err.u1"), ("plant.y", "err.u2"), ("err.y", "pi.u"), ("pi.y", "plant.u"))
    return d


def test_margins_of_a_first_order_plant_with_pi_equal_the_closed_form():
    """L = (kp s + ki) / (s (s + 1)): |L(jω)| = 1 at ω⁴ + (1 - kp²) ω² - ki² = 0, the phase
    margin 180° + atan2(kp ω, ki) - 90° - atan(ω); the phase never reaches -180°: GM = inf."""
    kp, ki = 2.0, 3.0
    cl = mbsfmu.linearize(_pi_loop(kp, ki), loop_at="pi.u", domain="continuous")
    w2 = (-(1 - kp ** 2) + np.sqrt((1 - kp ** 2) ** 2 + 4 * ki ** 2)) / 2
    w = np.sqrt(w2)
    pm = 180 + np.degrees(np.arctan2(kp * w, ki)) - 90 - np.degrees(np.arctan(w))
    m = cl.margins
    assert m.loop_at == "pi.u"
    assert m.phase_margin == pytest.approx(pm, rel=1e-9)
    assert m.gain_crossover == pytest.approx(w, rel=1e-9)
    assert np.isinf(m.gain_margin)
    # the same cut at the plant's input gives the same loop
    m2 = mbsfmu.linearize(_pi_loop(kp, ki), loop_at="plant.u", domain="continuous").margins
    assert m2.phase_margin == pytest.approx(pm, rel=1e-9)
    # the JSON form carries the same numbers (inf as JSON's Infinity)
    import json

    data = json.loads(json.dumps(cl.to_dict()))
    assert data["margins"]["phase_margin"] == m.phase_margin and data["stable"] is True
    assert data["states"] == cl.states and np.allclose(data["A"], cl.A, rtol=0, atol=0)
    assert [complex(*p) for p in data["poles"]] == list(cl.poles)


def test_gain_margin_of_a_third_order_loop():
    """k/(s + 1)³: the phase is -180° at ω = √3 where |G| = 1/8, so GM = 8/k (python-control
    on the hand-built L agrees)."""
    k = 2.0
    d = Diagram(step=1e-3)
    d.add("ref", Step(0.1))
    d.add("err", Sum("+-"))
    d.add("k", Gain(k))
    d.add("plant", TransferFunction([1.0], [1.0, 3.0, 3.0, 1.0]))
    wire(d, ("ref.y", "err.u1"), ("plant.y", "err.u2"), ("err.y", "k.u"), ("k.y", "plant.u"))
    m = mbsfmu.linearize(d, loop_at="k.u", domain="continuous").margins
    assert m.gain_margin == pytest.approx(8.0 / k, rel=1e-9)
    assert m.phase_crossover == pytest.approx(np.sqrt(3.0), rel=1e-9)
    assert m.gain_margin_db == pytest.approx(20 * np.log10(4.0), rel=1e-9)
    gm, pm, *_ = control.margin(k * control.tf([1], [1, 3, 3, 1]))
    assert m.phase_margin == pytest.approx(pm, rel=1e-9)


# ---------------------------------------------------------------------------- nonlinear blocks
def _sat_loop(upper=1.0, table=None):
    d = Diagram(step=1e-3)
    d.add("ref", Step(0.1, 0.0, 0.5))
    d.add("err", Sum("+-"))
    d.add("k", Gain(3.0))
    d.add("sat", Saturation(-upper, upper) if table is None else Lookup1D(*table))
    d.add("plant", TransferFunction([1.0], [1.0, 1.0]))
    wire(d, ("ref.y", "err.u1"), ("plant.y", "err.u2"), ("err.y", "k.u"), ("k.y", "sat.u"),
         ("sat.y", "plant.u"))
    return d


def test_saturation_inside_its_limits_is_a_gain_one_and_at_its_limit_is_refused():
    cl = mbsfmu.linearize(_sat_loop(), domain="continuous")  # at t0 the signals are 0: inside the limits
    assert_same_poles(cl.poles, [-4.0])           # 3/(s + 1) closed: s = -4
    assert cl.point["sat.y"] == 0.0
    beyond = mbsfmu.linearize(_sat_loop(), at={"sat.u": 2.5}, domain="continuous")   # saturated: a gain 0
    assert_same_poles(beyond.poles, [-1.0])
    with pytest.raises(DiagramError, match=r"block 'sat' \(Saturation\) is not differentiable at the "
                                           r"operating point \(u = 1: slope 1 on the left, 0 on the "
                                           r"right\)"):
        mbsfmu.linearize(_sat_loop(), at={"sat.u": 1.0}, domain="continuous")


def test_lookup_between_breakpoints_is_its_slope_and_refused_on_a_kink():
    table = ([-1.0, 0.0, 2.0], [-2.0, 0.0, 1.0])  # slopes 2 and 0.5
    assert_same_poles(mbsfmu.linearize(_sat_loop(table=table), at={"sat.u": 1.0}, domain="continuous").poles,
                      [-1.0 - 3.0 * 0.5])
    assert_same_poles(mbsfmu.linearize(_sat_loop(table=table), at={"sat.u": -0.5}, domain="continuous").poles,
                      [-1.0 - 3.0 * 2.0])
    with pytest.raises(DiagramError, match=r"block 'sat' \(Lookup1D\) is not differentiable"):
        mbsfmu.linearize(_sat_loop(table=table), domain="continuous")   # u = 0 is the kink


# ---------------------------------------------------------------------------- prediction vs runs
def _p_loop(k, T=0.01):
    d = Diagram(step=T)
    d.add("ref", Step(0.05, 0.0, 1.0))
    d.add("err", Sum("+-"))
    d.add("k", Gain(k))
    d.add("plant", TransferFunction([1.0], [1.0, 3.0, 3.0, 1.0]))
    wire(d, ("ref.y", "err.u1"), ("plant.y", "err.u2"), ("err.y", "k.u"), ("k.y", "plant.u"))
    return d


@pytest.mark.parametrize("k", [4.0, 12.0])
def test_closed_loop_poles_predict_what_the_runner_does(k):
    """k/(s + 1)³ in the runner (step 0.01): stable for k = 4, unstable for k = 12 (critical
    gain 8); the discrete loop's poles say so, and a 40 s run settles or grows accordingly."""
    d = _p_loop(k)
    cl = mbsfmu.linearize(d, domain="discrete")
    res = d.run(40.0)
    e = res["err.y"]
    late, early = np.max(np.abs(e[-500:])), np.max(np.abs(e[:1000]))
    final = 1.0 / (1.0 + k)  # the error's steady state of a type-0 loop
    if cl.stable:
        assert k == 4.0 and abs(e[-1] - final) < 1e-3
    else:
        assert k == 12.0 and late > 10 * early
    assert (largest_real_part(d, domain="discrete") < 0) == cl.stable
    assert (largest_real_part(d, domain="continuous") < 0) == cl.stable  # the continuous loop agrees here


def test_linear_model_as_plant_of_an_fmu_like_block():
    """A block without a linear form of its own takes one from plants={...}: here a StateSpace
    block stands for the plant and the linear model given for it replaces its own matrices
    (the same A, B, C, D: the same poles)."""
    lin = cart_lin()
    gain = lqr(lin, Q=[1, 1, 1, 1], R=[1])
    d = Diagram(step=0.01)
    state_loop(d, lin, gain)
    assert_same_poles(mbsfmu.linearize(d, plants={"plant": lin}, domain="continuous").poles, gain.poles)
    assert_same_poles(mbsfmu.linearize(d, plants={"plant": lin.ss}, domain="continuous").poles, gain.poles)


# ---------------------------------------------------------------------------- an FMU as the plant
@pytest.fixture(scope="module")
def cart_fmu(built_fmu):
    return built_fmu(CART, interface="both")


@pytest.fixture(scope="module")
def cart_fmus(built_fmu):
    return {v: built_fmu(CART, interface="both", fmi_version=v) for v in (2, 3)}


def fmu_loop(path, K, theta0=0.0, step=0.01):
    """The cart-pendulum FMU (native, Model Exchange and Co-Simulation) under u = -K (x - r):
    a step of the cart's reference r at 0.1 s."""
    from blocks import FMU, StateFeedback

    lin = cart_lin()
    d = Diagram(step=step)
    d.add("cart", FMU(path, start_values={"theta": theta0}, outputs=lin.states))
    d.add("ctrl", StateFeedback(K, lin.states, ["F"], references=["x"]))
    d.add("ref", Step(0.1, 0.0, 0.2))
    for s in lin.states:
        d.connect(f"cart.{s}", f"ctrl.{s}")
    wire(d, ("ctrl.F", "cart.F"), ("ref.y", "ctrl.x_ref"))
    return d


@pytest.mark.parametrize("version", [2, 3])
def test_fmu_plant_from_its_model_exchange_matches_the_symbolic_linearization(cart_fmus, version):
    """The FMU block's linear model (central differences of its ME derivatives about its initial
    state, upright at rest; FMI 2.0 and 3.0) gives the LQR design's poles to 1e-8; the same loop with the
    symbolic linearization given in plants agrees; the discrete loop at 0.01 s is the feedback
    of the plant's ZOH discretization."""
    gain = lqr(cart_lin(), Q=[10, 10, 1, 1], R=[1])
    d = fmu_loop(cart_fmus[version], gain.K)
    cl = mbsfmu.linearize(d, domain="continuous")
    assert cl.notes == ["cart: central differences of the FMU's Model Exchange derivatives and "
                        "outputs, at its initial state"]
    assert_same_poles(cl.poles, gain.poles)
    assert_same_poles(mbsfmu.linearize(d, plants={"cart": cart_lin()}, domain="continuous").poles, gain.poles)
    cld = mbsfmu.linearize(d, domain="discrete")
    Pd = control.c2d(plant_ss(cart_lin()), 0.01, "zoh")
    ref = control.poles(control.feedback(Pd, control.ss([], [], [], gain.K, 0.01)))
    assert_same_poles(cld.poles, ref, rtol=1e-8)


@pytest.mark.parametrize("theta_gain", [1.0, 0.1])
def test_poles_of_the_fmu_loop_predict_the_nonlinear_run(cart_fmu, theta_gain):
    """The LQR gain keeps the pendulum up (all poles left); with a tenth of its angle gain the
    loop has a pole in the right half-plane, and a run of the nonlinear FMU lets the pendulum
    fall (|theta| > 1 rad in 4 s), while the stable one follows the reference step to 1 mm in 8 s
    (its slowest pole, Re s = -1.26, leaves 0.2 e^(-1.26 · 7.9) < 1e-5)."""
    K = lqr(cart_lin(), Q=[10, 10, 1, 1], R=[1]).K * [[1.0, theta_gain, 1.0, 1.0]]
    d = fmu_loop(cart_fmu, K)
    cl = mbsfmu.linearize(d, domain="discrete")
    res = d.run(8.0 if theta_gain == 1.0 else 4.0, check_finite=False)
    theta, x = res["cart.theta"], res["cart.x"]
    if theta_gain == 1.0:
        assert cl.stable and cl.largest_real_part < 0
        assert abs(x[-1] - 0.2) < 1e-3 and np.max(np.abs(theta)) < 0.2
    else:
        assert not cl.stable and cl.largest_real_part > 0
        assert np.max(np.abs(theta)) > 1.0


def test_a_refused_linearization_leaves_the_diagram_as_it_was():
    """Refused (a saturation at its limit): the wiring is unchanged and a run gives the same
    signals as before."""
    d = _sat_loop()
    before_wires, before = d.connections, d.run(0.5)["plant.y"]
    with pytest.raises(DiagramError, match="'sat'"):
        mbsfmu.linearize(d, at={"sat.u": -1.0}, domain="continuous")
    assert d.connections == before_wires
    assert np.array_equal(d.run(0.5)["plant.y"], before)


def test_lower_gain_margin_of_an_open_loop_unstable_plant_is_where_the_loop_falls():
    """The inverted cart under dlqr with one period of delay: its open loop is unstable, the gain
    margin at the plant's input is below 1 and equals the factor s of the gain K at which the
    discrete loop's largest real part crosses 0 (found by brentq, to 1e-9 relative)."""
    from blocks import StateFeedback

    lin = cart_lin()
    T = 0.01
    gain = dlqr(lin, Q=[10, 100, 1, 1], R=[0.1], period=T)

    def scaled(s):
        d = Diagram(step=T)
        d.add("plant", StateSpace(lin))
        d.add("ctrl", StateFeedback(s * gain.K, gain.states, gain.inputs))
        d.add("late", UnitDelay())
        for st in lin.states:
            d.connect(f"plant.{st}", f"ctrl.{st}")
        wire(d, ("ctrl.F", "late.u"), ("late.y", "plant.F"))
        return d

    gm = mbsfmu.linearize(scaled(1.0), loop_at="plant.F").margins.gain_margin
    assert 0.2 < gm < 1.0
    edge = brentq(lambda s: largest_real_part(scaled(s)), 0.2, 0.6, xtol=1e-12)
    assert gm == pytest.approx(edge, rel=1e-9)
    # the block copies the gain: changing the block's K leaves the design alone
    K = gain.K.copy()
    block = gain.block()
    block.K[0, 0] = 0.0
    assert np.array_equal(gain.K, K)


def test_piecewise_blocks_at_differentiable_points():
    """The forms of the piecewise maps where they are differentiable, against their slopes:
    f(u1, u2) = u1·u2 on a 2x2 grid has the gradient (u2, u1) inside its cell; a switch passes
    the selected input (its control has slope 0); a multiport switch its selected port; a dead
    zone outside its zone a 1, inside a 0; a quantizer between its jumps and a relay away from
    its switching points a 0."""
    from blocks import DeadZone, Lookup2D, MultiportSwitch, Quantizer, Relay, Switch
    from mbsfmu.analysis.block_forms import form

    def D(block, u0, y0=(0.0,)):
        f = form("b", block, u0, list(y0), "continuous", 0.01, 3)
        assert f.A.shape == (0, 0)
        return f.D

    grid = Lookup2D([0.0, 2.0], [0.0, 4.0], [[0.0, 0.0], [0.0, 8.0]])   # f = u1·u2 at the corners
    assert np.allclose(D(grid, [0.5, 1.5]), [[1.5, 0.5]], rtol=1e-9)
    assert np.allclose(D(Switch(0.0), [3.0, 1.0, 5.0]), [[1.0, 0.0, 0.0]], atol=1e-12)
    assert np.allclose(D(Switch(0.0), [3.0, -1.0, 5.0]), [[0.0, 0.0, 1.0]], atol=1e-12)
    assert np.allclose(D(MultiportSwitch(3), [2.0, 1.0, 2.0, 3.0]), [[0.0, 0.0, 1.0, 0.0]], atol=1e-12)
    assert np.allclose(D(DeadZone(-0.2, 0.2), [0.5]), [[1.0]], rtol=1e-9)
    assert np.allclose(D(DeadZone(-0.2, 0.2), [0.1]), [[0.0]], atol=1e-12)
    assert np.allclose(D(Quantizer(0.5), [0.3]), [[0.0]], atol=1e-12)
    assert np.allclose(D(Relay(0.5, -0.5), [0.0]), [[0.0]], atol=1e-12)
    from blocks import Function
    assert D(Function(lambda t, u: np.sin(u)), [0.3])[0, 0] == pytest.approx(np.cos(0.3), rel=1e-8)
    with pytest.raises(DiagramError, match=r"block 'b' \(Switch\) is not differentiable at the "
                                           r"operating point \(control = 0"):
        D(Switch(0.0, ">"), [3.0, 0.0, 5.0])


def test_an_algebraic_loop_is_solved_by_the_wiring():
    """v = r - a v - x (a feed-through loop through the gain a) and ẋ = -x + v: v = (r - x)/(1 + a),
    so the pole is -1 - 1/(1 + a) (-1.25 for a = 3); the runner's point run iterates the loop."""
    d = Diagram(step=0.01)
    d.add("ref", Step(0.1, 0.0, 1.0))
    d.add("err", Sum("+--"))
    d.add("g", Gain(3.0))
    d.add("plant", TransferFunction([1.0], [1.0, 1.0]))
    wire(d, ("ref.y", "err.u1"), ("g.y", "err.u2"), ("plant.y", "err.u3"), ("err.y", "g.u"),
         ("err.y", "plant.u"))
    cl = mbsfmu.linearize(d, domain="continuous")
    assert_same_poles(cl.poles, [-1.25])
    assert cl.D[cl.outputs.index("err.y"), 0] == pytest.approx(0.25, rel=1e-12)


def test_directional_derivatives_are_assembled_by_columns():
    """Where an FMU gives directional derivatives for states and inputs, column j of the Jacobian
    [[A, B], [C, D]] is the answer to the seed e_j (a stand-in FMU answering with a known
    matrix); the native FMUs answer only for inputs, so their linear model comes from
    differences (the note of the test above)."""
    from types import SimpleNamespace

    from mbsfmu.analysis.fmu_plant import _directional

    J = np.arange(1.0, 13.0).reshape(3, 4)   # 2 states + 1 output, 2 states + 2 inputs
    var = lambda vr, der=None: SimpleNamespace(valueReference=vr, derivative=der)  # noqa: E731
    md = SimpleNamespace(modelExchange=SimpleNamespace(providesDirectionalDerivative=True),
                         derivatives=[SimpleNamespace(variable=var(10, var(0))),
                                      SimpleNamespace(variable=var(11, var(1)))])
    block = SimpleNamespace(fmi_version=2, inputs=("u1", "u2"), outputs=("y",),
                            variables={"u1": var(20), "u2": var(21), "y": var(30)})
    asked = []

    def answer(unknown, known, seed):
        asked.append((unknown, known))
        return list(J @ np.asarray(seed))

    probe = SimpleNamespace(_fmi=SimpleNamespace(fmu=SimpleNamespace(getDirectionalDerivative=answer)))
    got = _directional(probe, md, block, [0.0, 0.0], [0.0, 0.0], lambda x, u: None)
    assert np.array_equal(got, J)
    assert asked[0] == ([10, 11, 30], [0, 1, 20, 21])

    def refuse(unknown, known, seed):
        raise RuntimeError("fmi2GetDirectionalDerivative: known 0 is no input")

    probe.__dict__["_fmi"] = SimpleNamespace(fmu=SimpleNamespace(getDirectionalDerivative=refuse))
    assert _directional(probe, md, block, [0.0, 0.0], [0.0, 0.0], lambda x, u: None) is None


def test_a_users_block_gives_its_own_linear_form():
    """The closed loop asks each block for its form (Block.linear_form): a user's block that says
    y = -a u closes the loop ẋ = u, u = -a x of a TransferFunction 1/s, whose pole is -a; a
    user's block that says nothing is refused by name."""
    from mbsfmu.runner import SISO
    from mbsfmu.runner.linear_form import static

    class Damper(SISO):
        def __init__(self, a):
            self.a = a

        def feedthrough(self):
            return {"y": ("u",)}

        def output(self, t, u):
            return (-self.a * u[0],)

        def linear_form(self, name, u0, y0, domain, step, pade_order):
            return static([[-self.a]])

    class Opaque(Damper):
        linear_form = SISO.linear_form

    for block, poles in ((Damper(3.0), [-3.0]), (Opaque(3.0), None)):
        d = Diagram(0.01)
        d.add("plant", TransferFunction([1.0], [1.0, 0.0]))
        d.add("fb", block)
        wire(d, ("plant.y", "fb.u"), ("fb.y", "plant.u"))
        if poles is None:
            with pytest.raises(DiagramError, match=r"block 'fb' \(Opaque\) has no linear form"):
                mbsfmu.linearize(d, domain="continuous")
        else:
            assert_same_poles(mbsfmu.linearize(d, domain="continuous").poles, poles)
