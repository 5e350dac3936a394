"""The closed loop of a whole block diagram, linearized: ``mbsfmu.linearize(diagram, at=...)``.

Every block has a linear form at the operating point (:mod:`.block_forms`), stacked as

    ẋ = A x + B u,   y = C x + D u          (x, u, y: all blocks' states, inputs, outputs)

(or x[k+1] = ... in the discrete domain).  The wiring gives each input its driving output,
u = W y, and the sources' outputs are the loop's inputs r, y_src = E r.  With the blocks' direct
feed-through the signals solve y = C x + D W y + E r, so with S = (I - D W)⁻¹ (an algebraic loop
whose S does not exist is refused),

    A_cl = A + B W S C,   B_cl = B W S E,   C_cl = S C,   D_cl = S E.                     (1)

The outputs of the closed loop are every signal ``block.port``, its inputs the sources' signals,
its states ``block.state`` (e.g. ``pid.integral``, ``plant.der(x)``).

**Domains.**  ``domain="continuous"``: every block's continuous form (the ideal loop the sampled
one tends to as the step goes to 0; the PID as kp + ki/s + kd s/(tf s + 1), a transport delay as
a Padé approximant); refused if a block is discrete only (a unit delay, ``Delay``, a discrete
integrator).  ``domain="discrete"``: the loop the runner computes, at its step T: the continuous
parts (``StateSpace``, the plants) discretized with a zero-order hold at T
(:func:`scipy.signal.cont2discrete`, as the runner holds inputs over a step), the discrete blocks
by their difference equations, a transport delay as shifts.  Default: discrete, the loop that
will run (near the stability edge the ideal continuous loop can mislead: the crane of
``examples/crane_loop.py`` at 1 m, 30 kg has max Re s = 0.545 1/s continuous, 0.563 discrete).
A multi-rate diagram (a block with a sample time other than the step) is refused.

**Operating point** ``at``: None, the signals of the diagram at t0 (a run of one step); a
number t, the signals at time t of a run to t; or a mapping ``{"block.port": value}`` that sets
signals (or the signal driving an input) of the point at t0.  It decides the nonlinear blocks'
forms; a plant's linear model has its own point.

**Margins** (``loop_at="block.input"``): the wire into that input is cut; L is the negative of
the transfer function from the cut input to the signal that drove it (so that the loop closes as
1 + L = 0).  :func:`control.stability_margins` finds the crossovers, which are then polished on
the exact frequency response L(jω) (L(e^{jωT}) for a discrete loop; python-control samples it
there): GM = 1/|L(jω_180)| where Im L = 0, PM = 180° + ∠L(jω_c) where |L| = 1.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from ..core.errors import ParameterError
from ..runner.diagram import Diagram
from ..runner.fmu_block import FMU
from ..runner.scheduling import DiagramError
from . import arguments
from .block_forms import DOMAINS, LinearForm, form, lti_form
from .fmu_plant import fmu_linear_model

#: the default order of the Padé approximant of a transport delay
PADE_ORDER = 3


@dataclass
class Margins:
    """Gain margin (a factor; inf when the phase never crosses -180°), phase margin (degrees),
    their crossover frequencies (rad/s) and the loop they belong to."""

    loop_at: str
    gain_margin: float
    phase_margin: float
    phase_crossover: float
    gain_crossover: float

    @property
    def gain_margin_db(self) -> float:
        return 20.0 * math.log10(self.gain_margin) if self.gain_margin > 0 else -math.inf


@dataclass
class ClosedLoop:
    """The linearized closed loop of a diagram (see the module docstring)."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    states: list
    inputs: list
    outputs: list
    domain: str
    dt: float | None               # the period of a discrete loop
    point: dict = field(default_factory=dict)   # signal -> value at the operating point
    margins: Margins | None = None
    notes: list = field(default_factory=list)   # how each FMU plant was linearized

    @property
    def poles(self) -> np.ndarray:
        """Eigenvalues of A_cl (s-plane, or z-plane for a discrete loop), sorted by real part."""
        p = np.linalg.eigvals(self.A) if self.A.size else np.zeros(0, complex)
        return p[np.lexsort((p.imag, -np.abs(p) if self.domain == "discrete" else p.real))]

    @property
    def s_poles(self) -> np.ndarray:
        """The poles in the s-plane: ln(z)/T for a discrete loop (z = 0 gives -inf)."""
        p = self.poles
        if self.domain == "continuous":
            return p
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(p.astype(complex)) / self.dt

    @property
    def damping(self) -> np.ndarray:
        """ζ = -Re(s)/|s| of each pole (s-plane); 1 for a pole at z = 0, nan for s = 0."""
        s = self.s_poles
        with np.errstate(invalid="ignore", divide="ignore"):
            z = -s.real / np.abs(s)
        z[np.isneginf(s.real)] = 1.0
        return z

    @property
    def largest_real_part(self) -> float:
        """max Re(s) over the s-plane poles (< 0: stable, in either domain)."""
        s = self.s_poles
        return float(np.max(s.real)) if s.size else -math.inf

    @property
    def spectral_radius(self) -> float:
        """max |z| of a discrete loop's poles."""
        if self.domain != "discrete":
            raise ParameterError("spectral_radius: the loop is continuous (use largest_real_part)")
        return float(np.max(np.abs(self.poles))) if self.A.size else 0.0

    @property
    def stable(self) -> bool:
        """Continuous: max Re(p) < 0; discrete: max |z| < 1."""
        if not self.A.size:
            return True
        if self.domain == "discrete":
            return self.spectral_radius < 1.0
        return float(np.max(self.poles.real)) < 0.0

    def pole_table(self) -> str:
        plane = "z" if self.domain == "discrete" else "s"
        rows = [f"{'pole (' + plane + ')':>28}  {'|p|':>10}  {'damping':>8}"]
        for p, zeta in zip(self.poles, self.damping):
            rows.append(f"{p.real:13.6g} {p.imag:+13.6g}j  {abs(p):10.6g}  {zeta:8.4f}")
        verdict = "stable" if self.stable else "UNSTABLE"
        bound = (f"max |z| = {self.spectral_radius:.6g}" if self.domain == "discrete"
                 else f"max Re = {self.largest_real_part:.6g}")
        return "\n".join(rows + [f"{verdict} ({bound})"])

    def __str__(self) -> str:
        head = (f"closed loop, {self.domain}" + (f" (T = {self.dt:g} s)" if self.dt else "")
                + f": {len(self.states)} states")
        out = [head, *self.notes, self.pole_table()]
        if self.margins is not None:
            m = self.margins
            out.append(f"margins at {m.loop_at}: gain {m.gain_margin:.6g} ({m.gain_margin_db:.3g} dB) "
                       f"at {m.phase_crossover:.6g} rad/s, phase {m.phase_margin:.6g} deg at "
                       f"{m.gain_crossover:.6g} rad/s")
        return "\n".join(out)

    def to_dict(self) -> dict:
        """Everything as JSON-ready values: the matrices, names, poles ([re, im] pairs), damping,
        the verdict, the margins and the operating point."""
        m = self.margins
        return {
            "domain": self.domain, "dt": self.dt,
            "A": self.A.tolist(), "B": self.B.tolist(), "C": self.C.tolist(), "D": self.D.tolist(),
            "states": list(self.states), "inputs": list(self.inputs), "outputs": list(self.outputs),
            "poles": [[float(p.real), float(p.imag)] for p in self.poles],
            "damping": [float(z) for z in self.damping], "stable": bool(self.stable),
            "largest_real_part": self.largest_real_part,
            "margins": None if m is None else {
                "loop_at": m.loop_at, "gain_margin": m.gain_margin, "phase_margin": m.phase_margin,
                "phase_crossover": m.phase_crossover, "gain_crossover": m.gain_crossover},
            "point": dict(self.point), "notes": list(self.notes),
        }

    def to_control(self):
        """A python-control ``StateSpace`` (``.`` in names becomes ``_``)."""
        import control

        def names(ns):
            return [str(n).replace(".", "_") for n in ns]

        return control.ss(self.A, self.B, self.C, self.D, self.dt if self.dt else 0,
                          states=names(self.states), inputs=names(self.inputs),
                          outputs=names(self.outputs))


# ---------------------------------------------------------------------------- entry points
def linearize_diagram(diagram: Diagram, at=None, *, loop_at: str | None = None,
                      domain: str | None = None, plants=None,
                      pade_order: int = PADE_ORDER) -> ClosedLoop:
    """The :class:`ClosedLoop` of ``diagram`` (module docstring).

    ``plants``: ``{block name: linear model}`` (a Linearization or its ``ss``) for blocks that
    have no linear form of their own, such as an FMU of a model: ``mbsfmu.linearize(model,
    at=..., inputs=[...], outputs=[...])`` with the block's port names.  ``pade_order``
    (1..10): of the transport delays' Padé approximants (continuous domain)."""
    if not isinstance(diagram, Diagram):
        raise ParameterError(f"linearize: expected a Diagram, got {type(diagram).__name__}")
    if domain is not None and domain not in DOMAINS:
        raise ParameterError(f"linearize: domain must be 'continuous' or 'discrete', not {domain!r}")
    if isinstance(pade_order, bool) or not isinstance(pade_order, int) or not 1 <= pade_order <= 10:
        raise ParameterError(f"linearize: pade_order must be a whole number 1..10, not {pade_order!r}")
    plants = arguments.mapping(plants, "linearize: plants")
    blocks = dict(diagram.blocks)
    for name in plants:
        if name not in blocks:
            raise ParameterError(f"linearize: plants names {name!r}, which is no block of the "
                                 f"diagram (blocks: {', '.join(blocks)})")
    T = diagram.step
    for name, b in blocks.items():
        st = getattr(b, "sample_time", None)
        if st is not None and abs(st / T - 1.0) > 1e-9:
            raise DiagramError(f"linearize: block {name!r} runs every {st:g} s, the diagram every "
                               f"{T:g} s: multi-rate loops are not linearized (give every block the "
                               "diagram's step)")
    if domain is None:
        domain = "discrete"
    cut = _cut(diagram, loop_at)
    point = _point(diagram, at)
    forms, src, notes = {}, [], []
    for name, b in blocks.items():
        if b.source and name not in plants:
            src.extend(f"{name}.{p}" for p in b.outputs)
            continue
        if not b.outputs:
            continue
        u0 = [point[_driver(diagram, name, p)] for p in b.inputs]
        y0 = [point[f"{name}.{p}"] for p in b.outputs]
        if isinstance(b, FMU) and name not in plants:
            if isinstance(at, (int, float)):
                raise ParameterError(f"linearize: at = {at!r} (a time) with the FMU block {name!r}: "
                                     "an FMU is linearized at its initial state only; give at=None "
                                     "or a mapping, or its linear model in plants")
            A, B, C, D, names, how = fmu_linear_model(name, b, u0, diagram.t0)
            forms[name] = lti_form(A, B, C, D, names, domain, T)
            notes.append(f"{name}: {how}, at its initial state")
            continue
        forms[name] = form(name, b, u0, y0, domain, T, pade_order, plants.get(name))
    dt = T if domain == "discrete" else None
    loop = _connect(diagram, forms, src, None)
    loop.domain, loop.dt, loop.point, loop.notes = domain, dt, point, notes
    if cut is not None:
        loop.margins = _margins(diagram, forms, src, cut, dt)
    return loop


def closed_loop_poles(diagram: Diagram, at=None, **options) -> np.ndarray:
    """The poles of the linearized closed loop (s-plane, or z-plane for a discrete loop): a plain
    function for a sweep's metric (``options`` as for :func:`linearize_diagram`)."""
    return linearize_diagram(diagram, at, **options).poles


def largest_real_part(diagram: Diagram, at=None, **options) -> float:
    """max Re(s) of the closed loop's poles (a discrete loop's z mapped by s = ln(z)/T): < 0 is
    stable in either domain.  A plain function for a sweep's metric."""
    return linearize_diagram(diagram, at, **options).largest_real_part


# ---------------------------------------------------------------------------- pieces
def _driver(diagram: Diagram, block: str, port: str) -> str:
    src = diagram._driver.get((block, port))
    return f"{src[0]}.{src[1]}" if src is not None else f"{block}.{port}"


def _cut(diagram: Diagram, loop_at):
    if loop_at is None:
        return None
    if not isinstance(loop_at, str) or "." not in loop_at:
        raise ParameterError(f"linearize: loop_at must name a block input 'block.port', not {loop_at!r}")
    b, p = loop_at.split(".", 1)
    if b not in diagram.blocks or p not in diagram.blocks[b].inputs:
        inputs = [f"{n}.{q}" for n, blk in diagram.blocks.items() for q in blk.inputs]
        raise ParameterError(f"linearize: loop_at {loop_at!r} is no connected block input (inputs: "
                             f"{', '.join(inputs) or 'none'})")
    if (b, p) not in diagram._driver:
        raise ParameterError(f"linearize: loop_at {loop_at!r} is not connected")
    return b, p


def _point(diagram: Diagram, at) -> dict:
    """Signal values at the operating point (module docstring)."""
    overrides = {}
    t_at = None
    if isinstance(at, (int, float)) and not isinstance(at, bool):
        t_at = arguments.real_number(at, "linearize: at")
        if t_at < diagram.t0 + diagram.step:
            raise ParameterError(f"linearize: at = {at!r} must be a time at least one step "
                                 f"({diagram.step:g} s) after t0 = {diagram.t0:g}")
    elif at is not None:
        overrides = arguments.mapping(at, "linearize: at")
    res = diagram.run(t_at if t_at is not None else diagram.t0 + diagram.step, algebraic_loops="iterate")
    row = -1 if t_at is not None else 0
    point = {n: float(res[n][row]) for n in res.columns[1:]}
    for key, v in overrides.items():
        v = arguments.real_number(v, f"linearize: at {key!r}")
        if not isinstance(key, str) or "." not in key:
            raise ParameterError(f"linearize: at key {key!r} must name a signal 'block.port'")
        b, p = key.split(".", 1)
        if b in diagram.blocks and p in diagram.blocks[b].inputs:
            key = _driver(diagram, b, p)
        if key not in point:
            raise ParameterError(f"linearize: at names {key!r}, which is no signal of the diagram "
                                 f"(signals: {', '.join(point)})")
        point[key] = v
    return point


def _connect(diagram: Diagram, forms: dict, src: list, cut) -> ClosedLoop:
    """Eq. (1); with ``cut = (block, port)`` that input is driven by an extra loop input
    ``cut`` instead of its wire (for the margins)."""
    names = list(forms)
    sig = src + [f"{n}.{p}" for n in names for p in diagram.blocks[n].outputs]
    s_index = {s: i for i, s in enumerate(sig)}
    ext = src + ([f"{cut[0]}.{cut[1]}"] if cut else [])
    nx = sum(f.A.shape[0] for f in forms.values())
    nu = sum(len(diagram.blocks[n].inputs) for n in names)
    ny = len(sig)
    A, B = np.zeros((nx, nx)), np.zeros((nx, nu))
    C, D = np.zeros((ny, nx)), np.zeros((ny, nu))
    W, E = np.zeros((nu, ny)), np.zeros((ny, len(ext)))
    Wext = np.zeros((nu, len(ext)))
    for i in range(len(src)):
        E[i, i] = 1.0
    states = []
    ix = iu = 0
    iy = len(src)
    for n in names:
        f: LinearForm = forms[n]
        b = diagram.blocks[n]
        k, m, p = f.A.shape[0], len(b.inputs), len(b.outputs)
        A[ix:ix + k, ix:ix + k] = f.A
        B[ix:ix + k, iu:iu + m] = f.B
        C[iy:iy + p, ix:ix + k] = f.C
        D[iy:iy + p, iu:iu + m] = f.D
        for j, port in enumerate(b.inputs):
            if cut == (n, port):
                Wext[iu + j, len(ext) - 1] = 1.0
                continue
            d = _driver(diagram, n, port)
            if d in s_index:
                W[iu + j, s_index[d]] = 1.0
        states += [f"{n}.{s}" for s in f.states]
        ix, iu, iy = ix + k, iu + m, iy + p
    M = np.eye(ny) - D @ W
    if np.linalg.cond(M) > 1e12:
        null = np.linalg.svd(M)[2][-1]
        loop_signals = [sig[i] for i in np.flatnonzero(np.abs(null) > 1e-6 * np.max(np.abs(null)))]
        raise DiagramError(f"linearize: the diagram's algebraic loop through {', '.join(loop_signals)} "
                           "is singular at the operating point (I - D W has no inverse: its loop "
                           "gain is 1), so its signals are not determined")
    S = np.linalg.solve(M, np.eye(ny))
    Ein = E + D @ Wext          # the loop inputs reach the signals through the sources and the cut
    return ClosedLoop(A=A + B @ W @ S @ C, B=B @ (W @ S @ Ein + Wext), C=S @ C, D=S @ Ein,
                      states=states, inputs=ext, outputs=sig, domain="", dt=None)


def _margins(diagram, forms, src, cut, dt) -> Margins:
    """The margins of L (module docstring): python-control's crossover frequencies, polished on
    the exact frequency response (its discrete-time margins come from a sampled response)."""
    import control

    open_loop = _connect(diagram, forms, src, cut)
    w = open_loop.outputs.index(_driver(diagram, *cut))
    v = len(open_loop.inputs) - 1
    A, B = open_loop.A, open_loop.B[:, [v]]
    C, D = -open_loop.C[[w], :], -open_loop.D[w, v].reshape(1, 1)
    with warnings.catch_warnings():  # python-control notes its switch to the frequency response
        warnings.filterwarnings("ignore", message="stability_margins: Falling back")
        _, _, _, w_phase, w_gain, _ = control.stability_margins(control.ss(A, B, C, D, dt if dt else 0))

    def L(omega):
        s = np.exp(1j * omega * dt) if dt else 1j * omega
        return complex((C @ np.linalg.solve(s * np.eye(len(A)) - A, B) + D)[0, 0])

    w_phase = _polish(lambda om: L(om).imag, w_phase, dt)
    w_gain = _polish(lambda om: abs(L(om)) - 1.0, w_gain, dt)
    gm = 1.0 / abs(L(w_phase)) if math.isfinite(w_phase) else math.inf
    # 180° + the phase of L at the gain crossover, in (-180°, 180°]
    pm = math.degrees(np.angle(-L(w_gain))) if math.isfinite(w_gain) else math.inf
    return Margins(f"{cut[0]}.{cut[1]}", float(gm), float(pm), float(w_phase), float(w_gain))


def _polish(f, omega, dt) -> float:
    """The root of f near the crossover frequency ``omega`` (brentq on a bracket of ±2 %, kept
    below the Nyquist frequency); ``omega`` itself if there is no sign change (nan stays nan)."""
    omega = float(omega)
    if not (math.isfinite(omega) and omega > 0):
        return omega
    lo, hi = 0.98 * omega, 1.02 * omega
    if dt:
        hi = min(hi, (1 - 1e-12) * math.pi / dt)
    try:
        if f(lo) * f(hi) < 0:
            return float(brentq(f, lo, hi, xtol=1e-14 * omega, rtol=1e-15))
    except (ValueError, np.linalg.LinAlgError):
        pass
    return omega
