"""Closed loops as factories of a sweep (module-level functions: a sweep pickles them by value,
this folder being no installed package).

``integrator_loop(k)``: a reference step r = 1 at t = 0, e = r - y, u = k e into the plant
ẋ = u, y = x (``StateSpace``).  The closed loop is ẋ = -k x + k r: the continuous pole is -k;
the runner's loop at step T (the plant held over a step) is x[n+1] = (1 - kT) x[n] + kT r, the
discrete pole z = 1 - kT, stable for 0 < kT < 2, with s = ln|z|/T.

``lag_pi_loop(kp, ki)``: the same loop with the plant ẋ = -a x + u (a = 1) and a PI controller
u = kp e + ki ∫e, whose closed loop is second order: s² + (a + kp) s + ki = 0.
"""

from blocks import PID, Gain, StateSpace, Step, Sum
from mbsfmu.runner import Diagram

STEP = 0.1
LAG = 1.0


def integrator_loop(k, step=STEP):
    d = Diagram(step=step)
    d.add("ref", Step(time=0.0, before=1.0, after=1.0))
    d.add("err", Sum("+-"))
    d.add("ctrl", Gain(k))
    d.add("plant", StateSpace([[0.0]], [[1.0]], [[1.0]], [[0.0]]))
    d.connect("ref.y", "err.u1")
    d.connect("plant.y", "err.u2")
    d.connect("err.y", "ctrl.u")
    d.connect("ctrl.y", "plant.u")
    return d


def lag_pi_loop(kp, ki, step=0.01):
    d = Diagram(step=step)
    d.add("ref", Step(time=0.0, before=1.0, after=1.0))
    d.add("err", Sum("+-"))
    d.add("pi", PID(kp, ki))
    d.add("plant", StateSpace([[-LAG]], [[1.0]], [[1.0]], [[0.0]]))
    d.connect("ref.y", "err.u1")
    d.connect("plant.y", "err.u2")
    d.connect("err.y", "pi.u")
    d.connect("pi.y", "plant.u")
    return d


def not_a_diagram(k):
    return {"k": k}


def fails_at_three(k):
    if k == 3.0:
        raise ValueError("no loop for k = 3")
    return integrator_loop(k)


def effort_loop(k, rho=0.25, step=STEP):
    """``integrator_loop(k)`` with a cost signal c = e² + ρ u² (``cost.y``): its integral J(k) is
    (1 + ρ k²) Σ T (1 - kT)^{2n} - the trapezoidal rule's end corrections, in closed form
    (1 + ρ k²) (1/(k (2 - kT)) - T/2) for a run long enough that e has died out."""
    from blocks import Function

    d = integrator_loop(k, step)
    d.add("cost", Function(lambda t, e, u: e * e + rho * u * u, inputs=("e", "u")))
    d.connect("err.y", "cost.e")
    d.connect("ctrl.y", "cost.u")
    return d
