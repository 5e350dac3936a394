"""Modal analysis, transfer functions and plots of a numeric :class:`Linearization`.

Eigenvalues λ of A; for each one with Im λ >= 0 (one of each conjugate pair):

    undamped natural frequency   f_n = |λ| / 2π  [Hz],
    damping ratio                ζ = -Re λ / |λ|          (ζ < 0: unstable, ζ = 1: real),
    damped frequency             f_d = Im λ / 2π.

The mode shape is the coordinate part φ of the eigenvector (the first n entries; the rates are
λ φ), mapped to all coordinates by δy = J φ and scaled so that its largest entry is 1 (real).

Rigid-body modes: a motion δy = φ that no stiffness resists (K φ = 0) makes [φ; 0] a null vector
of A, and λ = 0 an eigenvalue twice (``y = a + b t``: a Jordan block) or, when damping acts on it,
once.  Each such motion is one entry of kind ``"rigid body"`` (``multiplicity``: the zero
eigenvalues it stands for), not one row per zero eigenvalue with an undefined damping ratio.  The
motions are the null space of A (relative tolerance :data:`RIGID_RTOL` on its singular values),
in a basis that moves one coordinate each where it can (pivoted QR: each shape is 1 at its own
coordinate and 0 at the others' ones); the eigenvalues within :data:`ZERO_RTOL` of 0 (relative to
the largest |λ|, at most two per motion) are the ones they replace.

Transfer function of input j to output i: G_ij(s) = C_i (sI - A)⁻¹ B_j + D_ij.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import qr

from ..core.errors import ParameterError
from ..core.output_files import plot_path
from ..equations.derive import derive
from ..equations.numeric_model import NumericModel
from ..model.multibody import System
from ..plotting import Bars, Figure, Line, Panel, column, write
from . import arguments

#: relative tolerance of the singular values of A that make its null space (rigid-body motions)
RIGID_RTOL = 1e-10
#: eigenvalues within this fraction of the largest |λ| of 0 count as zero (a Jordan block's
#: computed eigenvalues scatter by about sqrt(machine epsilon) around 0)
ZERO_RTOL = 1e-6
RIGID_BODY = "rigid body"


@dataclass
class Mode:
    eigenvalue: complex
    frequency_hz: float          # undamped natural frequency |λ| / 2π
    damped_frequency_hz: float   # Im λ / 2π
    damping_ratio: float         # -Re λ / |λ| (nan for a rigid-body mode, λ = 0)
    shape: dict                  # coordinate name -> complex amplitude (largest 1)
    #: "rigid body" (λ = 0), "oscillatory" (a conjugate pair) or "real" (a real λ ≠ 0)
    kind: str = "oscillatory"
    #: the eigenvalues this entry stands for (a rigid-body motion: 2, or 1 when damped)
    multiplicity: int = 1

    @property
    def stable(self) -> bool:
        return self.eigenvalue.real < 0

    def as_dict(self) -> dict:
        return {"eigenvalue": [self.eigenvalue.real, self.eigenvalue.imag],
                "frequency_hz": self.frequency_hz, "damped_frequency_hz": self.damped_frequency_hz,
                "damping_ratio": None if math.isnan(self.damping_ratio) else self.damping_ratio,
                "kind": self.kind, "multiplicity": self.multiplicity,
                "shape": {k: [v.real, v.imag] for k, v in self.shape.items()}}


def _shape(lin, v) -> dict:
    """The coordinate part of a state vector, on all coordinates (δy = J φ), largest entry 1."""
    n = lin.n
    phi = np.asarray(lin.J, dtype=float) @ v[:n]
    if not np.any(np.abs(phi) > 0):
        phi = v[:n]
    big = phi[int(np.argmax(np.abs(phi)))]
    phi = phi / big if big != 0 else phi
    return {c: complex(x) for c, x in zip(lin.coordinates, phi)}


def rigid_body_motions(A) -> np.ndarray:
    """The null space of A (columns), each column 1 at its own pivot state and 0 at the other
    columns' pivots (see the module docstring)."""
    if A.size == 0:
        return np.zeros((0, 0))
    _, sv, Vh = np.linalg.svd(A)
    null = Vh[np.sum(sv > RIGID_RTOL * max(sv[0], 1e-300)):].conj().T
    if null.shape[1] == 0:
        return null
    _, _, piv = qr(null.T, pivoting=True)
    return np.real_if_close(null @ np.linalg.inv(null[piv[:null.shape[1]], :]))


def modes(lin) -> list[Mode]:
    """The modes of ``lin`` (numeric), sorted by natural frequency, then by real part; the
    rigid-body motions first, one entry each (module docstring)."""
    A = np.asarray(lin.A, dtype=float)
    w, V = np.linalg.eig(A)
    scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
    rigid = rigid_body_motions(A)
    zero = [k for k in np.argsort(np.abs(w)) if abs(w[k]) <= ZERO_RTOL * scale][:2 * rigid.shape[1]]
    out = []
    for j in range(rigid.shape[1]):
        share = len(zero) // rigid.shape[1] + (1 if j < len(zero) % rigid.shape[1] else 0)
        out.append(Mode(0j, 0.0, 0.0, float("nan"), _shape(lin, rigid[:, j]), RIGID_BODY,
                        max(share, 1)))
    for k in range(len(w)):
        lam = complex(w[k])
        if k in zero or lam.imag < -1e-12 * scale:
            continue
        if abs(lam.imag) <= 1e-12 * scale:
            lam = complex(lam.real, 0.0)
        r = abs(lam)
        out.append(Mode(lam, r / (2 * math.pi), lam.imag / (2 * math.pi),
                        -lam.real / r if r > 0 else float("nan"), _shape(lin, V[:, k]),
                        "oscillatory" if lam.imag else "real"))
    out.sort(key=lambda m: (m.kind != RIGID_BODY, round(m.frequency_hz, 12), m.eigenvalue.real))
    return out


def modal_table(lin) -> str:
    """A text table of the modes (one row per mode, the shape's real part by coordinate); a
    rigid-body motion is one row with ``rigid body`` in the damping column and its eigenvalue's
    multiplicity, ``0 (double)`` for a free motion (y = a + b t)."""
    ms = modes(lin)
    coords = list(lin.coordinates)
    head = f"{'mode':>4}  {'eigenvalue':>26}  {'f_n [Hz]':>10}  {'zeta':>10}  shape ({', '.join(coords)})"
    lines = [head]
    for i, m in enumerate(ms, 1):
        lam = m.eigenvalue
        re = lam.real + 0.0  # no "-0"
        ev = f"{re:.6g}" + (f" + {lam.imag:.6g}j" if lam.imag else "")
        if m.kind == RIGID_BODY:
            ev += " (double)" if m.multiplicity == 2 else ""
            zeta = RIGID_BODY
        else:
            zeta = "nan" if math.isnan(m.damping_ratio) else f"{m.damping_ratio:.4f}"
        shape = ", ".join(f"{m.shape[c].real:+.4f}" for c in coords)
        lines.append(f"{i:>4}  {ev:>26}  {m.frequency_hz:>10.5g}  {zeta:>10}  [{shape}]")
    return "\n".join(lines)


def _pair(lin, input, output, where: str) -> tuple[int, int]:
    """(input index, output index) of a pair of names; ParameterError naming a bad one, or a
    model without inputs or outputs."""
    if not lin.inputs:
        raise ParameterError(f"{where}: the linear model of {lin.system_name!r} has no inputs "
                             "(linearize with inputs=[...])")
    if not lin.outputs:
        raise ParameterError(f"{where}: the linear model of {lin.system_name!r} has no outputs "
                             "(linearize with outputs=[...] or leave outputs out for the states)")
    out = []
    for name, names, what in ((input, lin.inputs, "input"), (output, lin.outputs, "output")):
        if not isinstance(name, str):
            raise ParameterError(f"{where}: the {what} must be a name (a string), got {name!r}")
        if name not in names:
            raise ParameterError(f"{where}: unknown {what} {name!r} (known: {', '.join(names)})")
        out.append(list(names).index(name))
    return out[0], out[1]


def transfer_function(lin, input: str, output: str):
    """(num, den) of δz_output/δu_input in descending powers of s."""
    from scipy.signal import ss2tf

    j, i = _pair(lin, input, output, "transfer_function")
    num, den = ss2tf(lin.A, lin.B, lin.C, lin.Du, input=j)
    num = np.trim_zeros(np.where(np.abs(num[i]) < 1e-12 * max(1.0, np.max(np.abs(num[i]))), 0.0,
                                 num[i]), "f")
    return (num if num.size else np.zeros(1)), den


def frequency_response(lin, input: str, output: str, frequencies_hz, where="frequency_response"):
    """G(j 2π f) for each frequency (complex array); a frequency at a pole (an eigenvalue j 2π f
    of A, where G is infinite) is a ParameterError naming it."""
    j, i = _pair(lin, input, output, where)
    fs = arguments.frequencies(frequencies_hz, f"{where}: frequencies_hz", allow_zero=True)
    A, B, C, D = lin.A, lin.B[:, j], lin.C[i, :], lin.Du[i, j]
    eye = np.eye(len(A))
    out = []
    for f in fs:
        try:
            out.append(C @ np.linalg.solve(2j * math.pi * f * eye - A, B) + D)
        except np.linalg.LinAlgError:
            raise ParameterError(f"{where}: {f:g} Hz is a pole of the linear model (an eigenvalue "
                                 f"j 2π·{f:g} of A): the response is infinite there") from None
    return np.array(out)


def _default_frequencies(lin) -> np.ndarray:
    fs = [m.frequency_hz for m in modes(lin) if m.frequency_hz > 0]
    lo = min(fs) / 20 if fs else 0.01
    hi = max(fs) * 20 if fs else 100.0
    return np.logspace(math.log10(lo), math.log10(hi), 400)


def _pairs(lin, pairs) -> list[tuple[str, str]]:
    """The (input, output) pairs of a Bode plot, each checked (default: every pair)."""
    if pairs is None:
        return [(u, z) for u in lin.inputs for z in lin.outputs]
    if isinstance(pairs, (str, bytes)):
        raise ParameterError(f"bode: pairs must be a list of (input, output) pairs, got {pairs!r}")
    try:
        pairs = [tuple(p) for p in pairs]
    except TypeError:
        raise ParameterError(f"bode: pairs must be a list of (input, output) pairs, got {pairs!r}") \
            from None
    if not pairs or any(len(p) != 2 or isinstance(p, str) for p in pairs):
        raise ParameterError(f"bode: pairs must be a non-empty list of (input, output) pairs, "
                             f"got {pairs!r}")
    return pairs


def bode(lin, path, pairs=None, frequencies_hz=None):
    """The Bode plot of :func:`bode_figure` written to ``path`` (an image, or an interactive page
    for a name ending in .html)."""
    target = plot_path(path, "bode: path")
    write(bode_figure(lin, pairs, frequencies_hz), target)
    return path


def bode_figure(lin, pairs=None, frequencies_hz=None) -> Figure:
    """Magnitude (dB) and phase (deg, unwrapped) over frequency (Hz, logarithmic) for each
    (input, output) pair, as a :class:`mbsfmu.plotting.Figure`."""
    pairs = _pairs(lin, pairs)
    for u, z in pairs or [(None, None)]:  # no pair at all: a model without inputs or outputs
        _pair(lin, u, z, "bode")
    f = (_default_frequencies(lin) if frequencies_hz is None
         else arguments.frequencies(frequencies_hz, "bode: frequencies_hz"))
    responses = [frequency_response(lin, u, z, f, where="bode") for u, z in pairs]
    magnitude = Panel([Line(f, 20 * np.log10(np.maximum(np.abs(G), 1e-300)), label=f"{u} → {z}")
                       for (u, z), G in zip(pairs, responses)],
                      title=f"{lin.system_name}: Bode plot", ylabel="magnitude [dB]", xlog=True, grid=True,
                      legend="small")
    phase = Panel([Line(f, np.degrees(np.unwrap(np.angle(G)))) for G in responses],
                  xlabel="frequency [Hz]", ylabel="phase [deg]", xlog=True, grid=True)
    return column([magnitude, phase], size=(8, 6), sharex=True)


def frame_positions(lin):
    """``positions(y) -> (frames x 3)`` of the origins of the linearized model's frames (ISYS
    components), the frames' names and each one's reference frame; None for a model without
    frames (a LagrangianSystem) or without the model at hand.

    The origins come from :meth:`NumericModel.pose_series` (the one evaluation of frame poses,
    shared with the animation) at the operating point's time, with the constants the
    linearization substituted and the others at their defaults (0 where a constant has none)."""
    system = lin.system
    if not isinstance(system, System) or len(system.frames) < 2:
        return None
    frames = system.frames
    params = {c.name: (c.value if c.value is not None else 0.0) for c in system.constants_.values()}
    for name, v in lin.substituted.items():
        try:
            params[name] = float(v)
        except (TypeError, ValueError):  # a symbolic value: keep the default
            pass
    numeric = NumericModel(derive(system), params, check=False)
    names = list(frames)
    t_value = np.array([float(lin.point.get("t", 0.0))])
    refs = [frames[n].ref for n in names]

    def positions(y):
        return numeric.pose_series(names, t_value, np.asarray(y, dtype=float))[0][0]

    return positions, names, refs


def _mechanism(lin, mode, geometry) -> Panel:
    """The frames' origins joined to their reference frames, at the operating point (grey) and
    displaced along the mode's real part (blue), in the plane of the largest spread; each
    configuration one line whose segments (frame to reference frame) are broken by NaN."""
    positions, names, refs = geometry
    y0 = np.array([float(lin.point[c]) for c in lin.coordinates])
    shape = np.array([mode.shape[c].real for c in lin.coordinates])
    p0 = positions(y0)
    d = (positions(y0 + 1e-6 * shape) - p0) / 1e-6
    extent = float(np.max(np.ptp(p0, axis=0))) or 1.0
    eps = 0.2 * extent / max(float(np.max(np.abs(d))), 1e-300)
    p1 = positions(y0 + eps * shape)
    axes = np.sort(np.argsort(-(np.ptp(p0, axis=0) + np.ptp(p1, axis=0)))[:2])
    index = {n: i for i, n in enumerate(names)}
    links = [(index[r], i) for i, r in enumerate(refs) if r is not None]
    gap = np.full(1, np.nan)

    def segments(p, a):
        return np.concatenate([np.concatenate([p[[j, i], a], gap]) for j, i in links])

    lines = [Line(segments(p, axes[0]), segments(p, axes[1]), marker="o", size=3, color=color, width=width)
             for p, color, width in ((p0, "0.6", 1.5), (p1, "tab:blue", 2))]
    return Panel(lines, title=_plot_title(mode, with_eigenvalue=False), title_size="small",
                 xlabel="xyz"[axes[0]], ylabel="xyz"[axes[1]], equal=True)


def _shape_bars(mode) -> Panel:
    """The real part of a mode's shape by coordinate, as bars."""
    names = list(mode.shape)
    return Panel([Bars(names, [mode.shape[c].real for c in names], color="tab:blue")],
                 title=_plot_title(mode, with_eigenvalue=True),
                 title_size="small", hlines=[(0.0, "k", 0.5)], ylim=(-1.1, 1.1))


def _plot_title(m: Mode, with_eigenvalue: bool) -> str:
    """A mode plot panel's title: f_n and ζ, or "rigid body"."""
    if m.kind == RIGID_BODY:
        return "rigid body (λ = 0)"
    zeta = "" if math.isnan(m.damping_ratio) else f", ζ = {m.damping_ratio:.3g}"  # undefined: none
    head = f"λ = {m.eigenvalue:.4g}: " if with_eigenvalue else ""
    return f"{head}f_n = {m.frequency_hz:.4g} Hz{zeta}"


def plot_modes(lin, path, count: int = 6):
    """The mode shapes of :func:`modes_figure` written to ``path`` (an image, or an interactive
    page for a name ending in .html)."""
    target = plot_path(path, "plot_modes: path")
    write(modes_figure(lin, count), target)
    return path


def modes_figure(lin, count: int = 6) -> Figure:
    """One panel per mode (up to ``count``): for a model with frames the mechanism at the
    operating point (grey) and displaced along the mode (blue, scaled to a fifth of its size)
    in the plane where it spreads most; otherwise the real part of the shape by coordinate; as a
    :class:`mbsfmu.plotting.Figure`."""
    count = arguments.count(count, "plot_modes: count")
    ms = modes(lin)[:count]
    if not ms:
        raise ParameterError(f"plot_modes: the linear model of {lin.system_name!r} has no modes "
                             "(no degrees of freedom)")
    title = f"{lin.system_name}: mode shapes"
    geometry = frame_positions(lin)
    if geometry is not None:
        return Figure([[_mechanism(lin, m, geometry) for m in ms]], title=title,
                      size=(3.2 * len(ms) + 0.4, 3.6))
    return column([_shape_bars(m) for m in ms], title=title, size=(7, 1.9 * len(ms) + 0.6))
