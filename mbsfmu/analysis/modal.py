"""Modal analysis, transfer functions and plots of a numeric :class:`Linearization`.

Eigenvalues λ of A; for each one with Im λ >= 0 (one of each conjugate pair):

    undamped natural frequency   f_n = |λ| / 2π  [Hz],
    damping ratio                ζ = -Re λ / |λ|          (ζ < 0: unstable, ζ = 1: real),
    damped frequency             f_d = Im λ / 2π.

The mode shape is the coordinate part φ of the eigenvector (the first n entries; the rates are
λ φ), mapped to all coordinates by δy = J φ and scaled so that its largest entry is 1 (real).

Transfer function of input j to output i: G_ij(s) = C_i (sI - A)⁻¹ B_j + D_ij.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.errors import ParameterError
from ..core.output_files import plot_path
from ..equations.derive import derive
from ..equations.numeric_model import NumericModel
from ..model.multibody import System
from ..plotting import Bars, Figure, Line, Panel, column, write
from . import arguments


@dataclass
class Mode:
    eigenvalue: complex
    frequency_hz: float          # undamped natural frequency |λ| / 2π
    damped_frequency_hz: float   # Im λ / 2π
    damping_ratio: float         # -Re λ / |λ| (nan for λ = 0)
    shape: dict                  # coordinate name -> complex amplitude (largest 1)

    @property
    def stable(self) -> bool:
        return self.eigenvalue.real < 0

    def as_dict(self) -> dict:
        return {"eigenvalue": [self.eigenvalue.real, self.eigenvalue.imag],
                "frequency_hz": self.frequency_hz, "damped_frequency_hz": self.damped_frequency_hz,
                "damping_ratio": None if math.isnan(self.damping_ratio) else self.damping_ratio,
                "shape": {k: [v.real, v.imag] for k, v in self.shape.items()}}


def modes(lin) -> list[Mode]:
    """The modes of ``lin`` (numeric), sorted by natural frequency, then by real part."""
    A = lin.A
    n = lin.n
    w, V = np.linalg.eig(A)
    out = []
    scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
    for k in range(len(w)):
        lam = complex(w[k])
        if lam.imag < -1e-12 * scale:
            continue
        if abs(lam.imag) <= 1e-12 * scale:
            lam = complex(lam.real, 0.0)
        phi = np.asarray(lin.J, dtype=float) @ V[:n, k]
        if not np.any(np.abs(phi) > 0):
            phi = V[:n, k]
        big = phi[int(np.argmax(np.abs(phi)))]
        phi = phi / big if big != 0 else phi
        r = abs(lam)
        out.append(Mode(lam, r / (2 * math.pi), lam.imag / (2 * math.pi),
                        -lam.real / r if r > 0 else float("nan"),
                        {c: complex(v) for c, v in zip(lin.coordinates, phi)}))
    out.sort(key=lambda m: (round(m.frequency_hz, 12), m.eigenvalue.real))
    return out


def modal_table(lin) -> str:
    """A text table of the modes (one row per mode, the shape's real part by coordinate)."""
    ms = modes(lin)
    coords = list(lin.coordinates)
    head = f"{'mode':>4}  {'eigenvalue':>26}  {'f_n [Hz]':>10}  {'zeta':>8}  shape ({', '.join(coords)})"
    lines = [head]
    for i, m in enumerate(ms, 1):
        lam = m.eigenvalue
        re = lam.real + 0.0  # no "-0"
        ev = f"{re:.6g}" + (f" + {lam.imag:.6g}j" if lam.imag else "")
        zeta = "nan" if math.isnan(m.damping_ratio) else f"{m.damping_ratio:.4f}"
        shape = ", ".join(f"{m.shape[c].real:+.4f}" for c in coords)
        lines.append(f"{i:>4}  {ev:>26}  {m.frequency_hz:>10.5g}  {zeta:>8}  [{shape}]")
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
    return Panel(lines, title=f"f_n = {mode.frequency_hz:.4g} Hz{_zeta(mode)}", title_size="small",
                 xlabel="xyz"[axes[0]], ylabel="xyz"[axes[1]], equal=True)


def _zeta(mode) -> str:
    """', ζ = ...' of a mode's title (nothing where the damping ratio is undefined)."""
    return "" if math.isnan(mode.damping_ratio) else f", ζ = {mode.damping_ratio:.3g}"


def _shape_bars(mode) -> Panel:
    """The real part of a mode's shape by coordinate, as bars."""
    names = list(mode.shape)
    return Panel([Bars(names, [mode.shape[c].real for c in names], color="tab:blue")],
                 title=f"λ = {mode.eigenvalue:.4g}: f_n = {mode.frequency_hz:.4g} Hz{_zeta(mode)}",
                 title_size="small", hlines=[(0.0, "k", 0.5)], ylim=(-1.1, 1.1))


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
