"""The linear form of each block of a diagram at an operating point (for :mod:`.closed_loop`).

A block with m inputs u and p outputs y becomes

    continuous:  ẋ = A x + B u,        y = C x + D u
    discrete:    x[k+1] = A x[k] + B u[k],   y[k] = C x[k] + D u[k]   (period T, the diagram's step)

in deviations from the operating point.  ``domain`` is the loop's: "continuous" (the ideal loop
the sampled one tends to as T -> 0) or "discrete" (what the runner computes at its step T).

* ``Gain``, ``Sum``, ``StateFeedback``: their matrices (static, both domains).
* ``StateSpace`` / ``TransferFunction``: A, B, C, D; discrete: :func:`scipy.signal.cont2discrete`
  with the block's own ``method`` at T, the matrices the block runs with.
* ``PID``: continuous kp + ki/s + kd s/(tf s + 1) (states ``integral`` and ``filter``; tf > 0
  needed when kd != 0); discrete its exact difference equations (:class:`blocks.control.PID`):
  states I, D[k-1], e[k-1].  Its output must lie strictly inside [u_min, u_max] at the point.
* ``UnitDelay``/``Memory`` (z⁻¹), ``Delay(N)`` (a shift register of N states),
  ``DiscreteIntegrator`` (x[k+1] = x[k] + gain T u[k], its output strictly inside its limits):
  discrete only.
* ``TransportDelay(τ)``: continuous, the Padé approximant of order n of e^(-τs),

      e^(-τs) ≈ Σ_k c_k (-τs)^k / Σ_k c_k (τs)^k,   c_k = (2n-k)! n! / ((2n)! k! (n-k)!);

  discrete, the block's own interpolation between shifts, y = (1-f) u[k-n] + f u[k-n-1]
  (τ/T = n + f), with n + 1 shift states.
* ``ZeroOrderHold`` at the diagram's step: a gain 1.  ``RateLimiter`` not limiting at the
  point (y = u there): a gain 1.
* The piecewise maps ``Saturation``, ``DeadZone``, ``Quantizer``, ``Lookup1D``, ``Lookup2D``,
  ``Switch``, ``MultiportSwitch`` and a feed-through ``Function``: the Jacobian of the map at the
  inputs of the point by central differences with step h = 1e-6 (1 + |u|), after checking that
  the one-sided differences agree (|d₊ - d₋| <= 1e-4 max(1, |d₊|, |d₋|)): else the map is not
  differentiable there (a kink, a jump) and the block is refused by name.  For the piecewise
  linear ones the differences are exact away from a kink.  A ``MultiportSwitch``'s index selects
  and is not differentiated (∂y/∂index = 0); a ``Relay`` is locally constant (gain 0) away from its
  switching points.
* Sources (``Constant``, ``Step``, ``Ramp``, ``Sine``, ``Table``): their outputs are the loop's
  inputs.  Blocks without outputs (``Recorder``): nothing.
* A plant: a ``StateSpace`` block, or any block named in ``plants`` with a linear model
  (a :class:`~.linear_model.Linearization` or its ``ss``) whose inputs and outputs are named like
  the block's ports; discrete: ZOH at T (exact for an FMU's Co-Simulation, which holds its inputs
  over a step).

Any other block is refused with its name and type.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np

from blocks.control import PID, StateFeedback
from blocks.delays import Delay, TransportDelay
from blocks.discontinuities import DeadZone, Quantizer, Relay
from blocks.discrete import DiscreteIntegrator, ZeroOrderHold
from blocks.lookup import Lookup1D, Lookup2D
from blocks.lti import StateSpace
from blocks.math_blocks import Function, Gain, RateLimiter, Saturation, Sum, UnitDelay
from blocks.routing import MultiportSwitch, Switch
from blocks.sources import Constant, Ramp, Sine, Step, Table

from ..runner.scheduling import DiagramError

DOMAINS = ("continuous", "discrete")
#: blocks that only have a discrete form
DISCRETE_ONLY = (UnitDelay, Delay, DiscreteIntegrator)
SOURCES = (Constant, Step, Ramp, Sine, Table)
#: static maps linearized by one-sided differences
PIECEWISE = (Saturation, DeadZone, Quantizer, Lookup1D, Lookup2D, Switch, MultiportSwitch)
#: relative step and agreement tolerance of the one-sided differences
DIFF_STEP = 1e-6
DIFF_AGREE = 1e-4


@dataclass
class LinearForm:
    """A block's linear form: matrices on its ports (in the order of block.inputs/outputs) and
    the names of its states."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    states: list


def static(D) -> LinearForm:
    D = np.atleast_2d(np.asarray(D, dtype=float))
    p, m = D.shape
    return LinearForm(np.zeros((0, 0)), np.zeros((0, m)), np.zeros((p, 0)), D, [])


def lti_form(A, B, C, D, states, domain, T, method="zoh") -> LinearForm:
    """A continuous system's form: as it is, or discretized at T by ``method`` (default ZOH)."""
    A, B, C, D = (np.atleast_2d(np.asarray(M, dtype=float)) for M in (A, B, C, D))
    if domain == "discrete" and A.shape[0]:
        from scipy.signal import cont2discrete

        A, B, C, D, _ = cont2discrete((A, B, C, D), T, method=method)
    return LinearForm(A, B, C, D, list(states))


def _shift(n: int, taps) -> LinearForm:
    """x1[k+1] = u[k], x_j[k+1] = x_{j-1}[k]; y = Σ taps_j x_j (x_j = u[k-j])."""
    A = np.eye(n, k=-1)
    B = np.zeros((n, 1))
    B[0, 0] = 1.0
    C = np.asarray(taps, dtype=float).reshape(1, n)
    return LinearForm(A, B, C, np.zeros((1, 1)), [f"u[k-{j + 1}]" for j in range(n)])


def pade(delay: float, order: int):
    """(num, den) of the Padé approximant of e^(-delay·s) of ``order``, descending powers of s."""
    c = [math.factorial(2 * order - k) * math.factorial(order)
         / (math.factorial(2 * order) * math.factorial(k) * math.factorial(order - k))
         for k in range(order + 1)]
    num = [c[k] * (-delay) ** k for k in range(order, -1, -1)]
    den = [c[k] * delay ** k for k in range(order, -1, -1)]
    return num, den


def _inside(name, block, value, lower, upper, what):
    if not lower < value < upper:
        raise DiagramError(f"block {name!r} ({type(block).__name__}): {what} = {value:.6g} is at "
                           f"its limit [{lower:g}, {upper:g}] at the operating point: a clamped "
                           "signal has no linear form there (choose a point inside the limits)")


def form(name: str, block, u0, y0, domain: str, T: float, pade_order: int, plant=None) -> LinearForm:
    """The :class:`LinearForm` of ``block`` (named ``name``) with inputs ``u0`` and outputs
    ``y0`` at the operating point (see the module docstring); DiagramError naming the block if
    it has none."""
    kind = type(block).__name__
    if plant is not None:
        return _plant(name, block, plant, domain, T)
    if domain == "continuous" and isinstance(block, DISCRETE_ONLY):
        raise DiagramError(f"block {name!r} ({kind}) is discrete: it has no continuous form "
                           "(linearize with domain='discrete', the loop at the diagram's step)")
    if isinstance(block, Gain):
        return static([[block.k]])
    if isinstance(block, Sum):
        return static([list(block._s)])
    if isinstance(block, StateFeedback):
        K = np.asarray(block.K, dtype=float)
        D = np.hstack([-K, K[:, block._ref_index]])
        return static(D)
    if isinstance(block, StateSpace):
        return lti_form(block.A, block.B, block.C, block.D, block.state_names, domain, T, block.method)
    if isinstance(block, PID):
        return _pid(name, block, y0[0], domain, T)
    if isinstance(block, UnitDelay):  # also Memory
        return _shift(1, [1.0])
    if isinstance(block, Delay):
        return _shift(block.steps, [0.0] * (block.steps - 1) + [1.0])
    if isinstance(block, DiscreteIntegrator):
        _inside(name, block, y0[0], block.lower, block.upper, "its output")
        return LinearForm(np.eye(1), np.array([[block.gain * T]]), np.eye(1), np.zeros((1, 1)), ["x"])
    if isinstance(block, TransportDelay):
        return _transport(block, domain, T, pade_order)
    if isinstance(block, ZeroOrderHold):
        return static([[1.0]])
    if isinstance(block, RateLimiter):
        if u0[0] != y0[0]:
            raise DiagramError(f"block {name!r} (RateLimiter) limits its slew at the operating point "
                               f"(u = {u0[0]:.6g}, y = {y0[0]:.6g}): no linear form there")
        return static([[1.0]])
    if isinstance(block, Relay):
        if u0[0] in (block.on_point, block.off_point) and block.on_value != block.off_value:
            raise DiagramError(f"block {name!r} (Relay) is at its switching point u = {u0[0]:.6g} "
                               "at the operating point: its output jumps there (no derivative)")
        return static([[0.0]])
    if isinstance(block, PIECEWISE) or (isinstance(block, Function) and block._feedthrough):
        return static(_jacobian(name, block, u0, T))
    if isinstance(block, Function):
        raise DiagramError(f"block {name!r} (Function without feed-through): a Python function "
                           "delayed by one sample has no linear form here; give it feedthrough=True "
                           "and a UnitDelay after it")
    raise DiagramError(f"block {name!r} ({kind}) has no linear form (give one in "
                       f"plants={{{name!r}: ...}}: a linear model with the block's port names)")


def _pid(name, block: PID, y0: float, domain: str, T: float) -> LinearForm:
    _inside(name, block, y0, block.u_min, block.u_max, "its output")
    kp, ki, kd = block.kp, block.ki, block.kd
    tf = 2.0 * T if block.tf is None else block.tf
    if domain == "discrete" and kd == 0.0:  # the derivative term is absent: I alone
        return LinearForm(np.eye(1), np.array([[T * ki]]), np.eye(1), np.array([[kp]]), ["integral"])
    if domain == "discrete":
        ad, bd = tf / (tf + T), kd / (tf + T)
        # x = [I, D[k-1], e[k-1]];  d = ad D + bd (e - e_prev);  y = kp e + I + d
        A = np.array([[1.0, 0.0, 0.0], [0.0, ad, -bd], [0.0, 0.0, 0.0]])
        B = np.array([[T * ki], [bd], [1.0]])
        C = np.array([[1.0, ad, -bd]])
        D = np.array([[kp + bd]])
        return LinearForm(A, B, C, D, ["integral", "derivative", "previous_error"])
    if kd != 0.0 and tf == 0.0:
        raise DiagramError(f"block {name!r} (PID): tf = 0 makes its derivative term kd·s improper, "
                           "with no continuous state-space form; give tf > 0")
    A, B, C, states = [[0.0]], [[ki]], [[1.0]], ["integral"]
    D = kp
    if kd != 0.0:  # kd s/(tf s + 1) = kd/tf - (kd/tf²)/(s + 1/tf)
        A, B, C = [[0.0, 0.0], [0.0, -1.0 / tf]], [[ki], [1.0]], [[1.0, -kd / tf ** 2]]
        D = kp + kd / tf
        states.append("filter")
    return lti_form(A, B, C, [[D]], states, domain, T)


def _transport(block: TransportDelay, domain: str, T: float, order: int) -> LinearForm:
    if domain == "discrete":
        probe = copy.deepcopy(block)
        probe.start(0.0, T)
        n, f = probe._n, probe._f
        taps = [0.0] * (n + 1)
        taps[n - 1], taps[n] = 1.0 - f, f
        return _shift(n + 1, taps)
    from scipy.signal import tf2ss

    num, den = pade(block.delay, order)
    A, B, C, D = tf2ss(num, den)
    return LinearForm(A, B, C, D, [f"pade{i + 1}" for i in range(order)])


def _jacobian(name: str, block, u0, T) -> np.ndarray:
    """∂y/∂u at u0 by central differences, refused where the one-sided ones disagree."""
    probe = copy.deepcopy(block)
    probe.start(0.0, T)
    u0 = [float(v) for v in u0]

    def y(u):
        return np.asarray(probe.output(0.0, u), dtype=float)

    y0 = y(u0)
    J = np.zeros((len(y0), len(u0)))
    for j, port in enumerate(block.inputs):
        if isinstance(block, MultiportSwitch) and port == "index":
            continue
        h = DIFF_STEP * (1.0 + abs(u0[j]))
        up, dn = list(u0), list(u0)
        up[j] += h
        dn[j] -= h
        dr, dl = (y(up) - y0) / h, (y0 - y(dn)) / h
        bad = np.abs(dr - dl) > DIFF_AGREE * np.maximum(1.0, np.maximum(np.abs(dr), np.abs(dl)))
        if np.any(bad):
            raise DiagramError(f"block {name!r} ({type(block).__name__}) is not differentiable at the "
                               f"operating point ({port} = {u0[j]:.6g}: slope {dl[bad][0]:.6g} on the "
                               f"left, {dr[bad][0]:.6g} on the right); choose another point")
        J[:, j] = 0.5 * (dr + dl)
    return J


def _plant(name: str, block, model, domain: str, T: float) -> LinearForm:
    """The form of a block given as a linear model (``plants``): its rows and columns picked by
    the block's port names (``.`` and ``_`` alike)."""
    ss = model.numeric().ss if hasattr(model, "numeric") else model
    for attr in ("A", "B", "C", "D", "inputs", "outputs", "states"):
        if not hasattr(ss, attr):
            raise DiagramError(f"plants[{name!r}]: {type(model).__name__} is no linear model (give "
                               "the result of mbsfmu.linearize or its .ss)")

    def pick(ports, names, what):
        key = {str(n).replace(".", "_"): i for i, n in enumerate(names)}
        idx = []
        for p in ports:
            i = key.get(p.replace(".", "_"))
            if i is None:
                raise DiagramError(f"plants[{name!r}]: the linear model has no {what} {p!r} for the "
                                   f"block's port ({what}s: {', '.join(map(str, names)) or 'none'})")
            idx.append(i)
        return idx

    ui = pick(block.inputs, ss.inputs, "input")
    yi = pick(block.outputs, ss.outputs, "output")
    A, B, C, D = (np.atleast_2d(np.asarray(M, dtype=float)) for M in (ss.A, ss.B, ss.C, ss.D))
    n = A.shape[0]
    B = B.reshape(n, -1)[:, ui]
    C = C.reshape(-1, n)[yi, :]
    D = D.reshape(len(ss.outputs), len(ss.inputs))[np.ix_(yi, ui)]
    return lti_form(A, B, C, D, [str(s) for s in ss.states], domain, T)
