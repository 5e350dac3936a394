"""Control blocks: a discrete PID controller with output limits and anti-windup; static state
feedback (the gains of LQR and pole placement)."""

from __future__ import annotations

import math

import numpy as np

from mbsfmu.runner import linear_form as lf
from mbsfmu.runner.block import SISO, Block, BlockError
from mbsfmu.runner.scheduling import DiagramError

from .math_blocks import period, port_names, real

ANTI_WINDUP = ("clamping", "back_calculation", None)


class PID(SISO):
    """Discrete parallel PID acting on its input ``u = e`` (the control error), like Simulink's
    *Discrete PID Controller* with a forward-Euler integrator and a backward-Euler filtered
    derivative.  With the block's period ``T``::

        P[k]   = kp · e[k]
        D[k]   = (tf · D[k-1] + kd · (e[k] - e[k-1])) / (tf + T)     backward Euler of kd·s/(tf·s + 1)
        v[k]   = P[k] + I[k] + D[k]                                   unsaturated output
        y[k]   = min(max(v[k], u_min), u_max)                         output
        I[k+1] = I[k] + T · (ki · e[k] + a[k])                        forward Euler integrator

    starting from rest, ``I[0] = D[-1] = e[-1] = 0`` (so an initial error gives a derivative
    kick ``kd·e[0]/(tf + T)``, as in Simulink).  The anti-windup term ``a[k]``:

    - ``None``: ``a = 0``;
    - ``"clamping"`` (default): ``a = -ki·e[k]`` (the integrator holds) while the output saturates,
      ``y ≠ v``, and the integrand pushes further into the limit, ``ki·e·(v - y) > 0``; else 0;
    - ``"back_calculation"``: ``a = kb · (y[k] - v[k])``, which drives ``v`` back to the limit.
      Default ``kb = min(|ki/kp|, 1/T)`` (tracking time constant ``Ti = kp/ki``), ``1/T`` if
      ``kp = 0``.  In steady saturation ``v → limit + ki·e/kb``.

    ``tf`` (derivative filter time constant, >= 0; 0: an unfiltered backward difference)
    defaults to ``2·T``.  Being forward Euler, the integral term has no direct feed-through: ``y``
    depends on ``u`` at the same instant only if ``kp`` or ``kd`` is nonzero.
    """

    def __init__(self, kp: float, ki: float = 0.0, kd: float = 0.0, *, tf: float | None = None,
                 u_min: float = -math.inf, u_max: float = math.inf, anti_windup: str | None = "clamping",
                 kb: float | None = None, sample_time: float | None = None):
        self.kp = real("PID kp", kp)
        self.ki = real("PID ki", ki)
        self.kd = real("PID kd", kd)
        self.tf = None if tf is None else real("PID tf", tf)
        if self.tf is not None and self.tf < 0.0:
            raise BlockError(f"PID: derivative filter time constant tf must be >= 0, got {tf!r}")
        self.u_min = real("PID u_min", u_min, finite=False)
        self.u_max = real("PID u_max", u_max, finite=False)
        if not self.u_min < self.u_max:
            raise BlockError(f"PID: u_min {u_min!r} must be less than u_max {u_max!r}")
        if anti_windup not in ANTI_WINDUP:
            raise BlockError(f"PID: anti_windup must be 'clamping', 'back_calculation' or None, "
                             f"got {anti_windup!r}")
        self.anti_windup = anti_windup
        if kb is not None:
            if anti_windup != "back_calculation":
                raise BlockError(f"PID: kb is only used with anti_windup='back_calculation' "
                                 f"(anti_windup={anti_windup!r})")
            kb = real("PID kb", kb)
            if kb < 0.0:
                raise BlockError(f"PID: back-calculation gain kb must be >= 0, got {kb!r}")
        self.kb = kb
        self.sample_time = period(sample_time)
        self._T = self._ad = self._bd = self._kb = 0.0
        self._i = self._d = self._e = 0.0

    def feedthrough(self):
        return {"y": ("u",)} if (self.kp != 0.0 or self.kd != 0.0) else {}

    def start(self, t0, dt):
        T = self._T = float(dt)
        tf = 2.0 * T if self.tf is None else self.tf
        self._ad = tf / (tf + T)
        self._bd = self.kd / (tf + T)
        if self.kb is not None:
            self._kb = self.kb
        else:
            self._kb = min(abs(self.ki / self.kp), 1.0 / T) if self.kp != 0.0 else 1.0 / T
        self._i = self._d = self._e = 0.0

    def _terms(self, e):
        d = self._ad * self._d + self._bd * (e - self._e)
        v = self.kp * e + self._i + d
        y = self.u_min if v < self.u_min else (self.u_max if v > self.u_max else v)
        return d, v, y

    def output(self, t, u):
        return (self._terms(u[0])[2],)

    def update(self, t, u):
        e = u[0]
        d, v, y = self._terms(e)
        rate = self.ki * e
        if y != v:
            if self.anti_windup == "clamping":
                if rate * (v - y) > 0.0:
                    rate = 0.0
            elif self.anti_windup == "back_calculation":
                rate += self._kb * (y - v)
        self._i += self._T * rate
        self._d = d
        self._e = e

    @property
    def integral(self) -> float:
        """The integral term ``I[k]`` at the next sample instant."""
        return self._i

    def get_state(self):
        return (self._i, self._d, self._e)

    def set_state(self, state):
        self._i, self._d, self._e = state

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """Continuous kp + ki/s + kd s/(tf s + 1) (states integral, filter; tf > 0 where kd != 0);
        discrete its own difference equations, states I, D[k-1], e[k-1].  Its output must lie
        strictly inside [u_min, u_max] at the point."""
        lf.inside(name, self, y0[0], self.u_min, self.u_max, "its output")
        kp, ki, kd, T = self.kp, self.ki, self.kd, step
        tf = 2.0 * T if self.tf is None else self.tf
        if domain == "discrete" and kd == 0.0:  # the derivative term is absent: I alone
            return lf.LinearForm(np.eye(1), np.array([[T * ki]]), np.eye(1), np.array([[kp]]), ["integral"])
        if domain == "discrete":
            ad, bd = tf / (tf + T), kd / (tf + T)
            # x = [I, D[k-1], e[k-1]];  d = ad D + bd (e - e_prev);  y = kp e + I + d
            A = np.array([[1.0, 0.0, 0.0], [0.0, ad, -bd], [0.0, 0.0, 0.0]])
            B = np.array([[T * ki], [bd], [1.0]])
            C = np.array([[1.0, ad, -bd]])
            return lf.LinearForm(A, B, C, np.array([[kp + bd]]), ["integral", "derivative", "previous_error"])
        if kd != 0.0 and tf == 0.0:
            raise DiagramError(f"block {name!r} (PID): tf = 0 makes its derivative term kd·s improper, "
                               "with no continuous state-space form; give tf > 0")
        A, B, C, states, D = [[0.0]], [[ki]], [[1.0]], ["integral"], kp
        if kd != 0.0:  # kd s/(tf s + 1) = kd/tf - (kd/tf²)/(s + 1/tf)
            A, B, C = [[0.0, 0.0], [0.0, -1.0 / tf]], [[ki], [1.0]], [[1.0, -kd / tf ** 2]]
            D = kp + kd / tf
            states.append("filter")
        return lf.lti_form(A, B, C, [[D]], states, domain, T)


class StateFeedback(Block):
    """Static state feedback ``u = u0 - K (x - x0 - r)``, the law of an LQR or pole placement
    (:mod:`mbsfmu.analysis.control_design`; ``gain.block()`` builds one).

    ``K`` (m x n) acts on the input ports named ``states`` (n, e.g. ``x``, ``theta``,
    ``der(x)``) and drives the output ports ``outputs`` (m, e.g. ``F``).  ``x0``/``u0``: the
    operating point the gain was designed about (default 0).  ``references``: states that get a
    reference input port ``<state>_ref`` (r, added to x0); the others' reference is 0.  All
    outputs depend directly on all inputs (a static map)."""

    def __init__(self, K, states, outputs=("u",), *, references=(), x0=None, u0=None,
                 sample_time: float | None = None):
        states = port_names("StateFeedback states", states)
        outputs = port_names("StateFeedback outputs", outputs)
        K = np.array(K, dtype=float, ndmin=2)  # a copy: the block never shares the gain's array
        if K.shape != (len(outputs), len(states)) or not np.all(np.isfinite(K)):
            raise BlockError(f"StateFeedback: K must be {len(outputs)}x{len(states)} finite numbers "
                             f"(outputs x states), got shape {K.shape}")
        references = tuple(references)
        unknown = [r for r in references if r not in states]
        if unknown:
            raise BlockError(f"StateFeedback: references {unknown} are not states ({', '.join(states)})")
        self.K, self.states, self.references = K, states, references
        self.x0 = np.zeros(len(states)) if x0 is None else np.asarray(x0, dtype=float).ravel()
        self.u0 = np.zeros(len(outputs)) if u0 is None else np.asarray(u0, dtype=float).ravel()
        if self.x0.shape != (len(states),) or self.u0.shape != (len(outputs),):
            raise BlockError(f"StateFeedback: x0 needs {len(states)} and u0 {len(outputs)} values")
        self.inputs = states + tuple(f"{r}_ref" for r in references)
        self.outputs = outputs
        self._ref_index = [states.index(r) for r in references]
        self.sample_time = period(sample_time)

    def feedthrough(self):
        return {y: self.inputs for y in self.outputs}

    def output(self, t, u):
        n = len(self.states)
        e = np.asarray(u[:n], dtype=float) - self.x0
        for k, i in enumerate(self._ref_index):
            e[i] -= u[n + k]
        return (self.u0 - self.K @ e).tolist()

    def linear_form(self, name, u0, y0, domain, step, pade_order):
        """y = -K x + K r (its reference inputs)."""
        K = np.asarray(self.K, dtype=float)
        return lf.static(np.hstack([-K, K[:, self._ref_index]]))
