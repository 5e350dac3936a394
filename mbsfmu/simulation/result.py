"""The result of a simulation: time, coordinates, velocities, frame kinematics, energy, CSV."""

from __future__ import annotations

import csv
import pathlib

import numpy as np

from ..animation import animate
from ..core.errors import SimulationError
from ..core.output_files import plot_path
from ..equations.derive import derive
from ..equations.numeric_model import NumericModel
from ..model.multibody import System
from ..plotting import Figure, Line, Panel, write
from .result_csv import read_columns
from .sensitivity_columns import signal_index


def output_names(system) -> list[str]:
    """The user outputs a Result gives by name (expressions and frame kinematics; reactions,
    which need the multipliers, are left out), in declaration order."""
    outputs = getattr(system, "outputs", {})
    return [o.name for o in outputs.values() if o.constraint is None]


def signal_names(system) -> list[str]:
    """Every name ``result[name]`` knows for a run of ``system``: time, the coordinates, their
    rates der(NAME), constraint_residual for a constrained model, and the user outputs."""
    coords = list(system.coordinates_)
    return (["time", *coords, *(f"der({n})" for n in coords)]
            + (["constraint_residual"] if system.constrained else []) + output_names(system))


def signal_values(res, name: str) -> np.ndarray:
    """The values of signal ``name`` on the output grid of ``res``: a coordinate, its rate, a
    user output, or a constraint's multiplier (by its name or a reaction output's)."""
    outputs = getattr(res.system, "outputs", {})
    constraint = outputs[name].constraint if name in outputs else None
    if constraint is not None:
        return res.multipliers()[constraint]
    if res.has_constraints and name in res.system.constraint_names:
        return res.multipliers()[name]
    return res[name]


class Result:
    """Simulation output on the output grid.

    ``res.t`` (n,), ``res.y`` and ``res.yd`` (f, n); ``res['alpha']`` and ``res['der(alpha)']``
    give single signals; ``res.frame('P2_cg')`` gives the kinematics of any frame;
    ``res.energy()`` the kinetic, potential and total energy.

    What the equations give beyond the states -- the multipliers, the accelerations, the
    constraint residuals -- a run on the engine recorded at every output point (``recorded``:
    'multipliers' (m, n), 'accelerations' (f, n), 'residuals' (2, n), 'constraint_residual' (n,));
    a run on the reference computes them from its ``formulation`` when asked."""

    def __init__(self, numeric, t, y, yd, u=None, stats=None, formulation=None, partial=False,
                 stop_reason="", recorded=None):
        #: True for the part of a run that failed or was interrupted (see ``stop_reason``)
        self.partial = partial
        self.stop_reason = stop_reason
        self.numeric = numeric
        self.system = numeric.system
        self.t = np.asarray(t)
        self.y = np.asarray(y)
        self.yd = np.asarray(yd)
        self.u = u
        self.stats = stats or {}
        self.coordinate_names = list(numeric.coordinate_names)
        self.formulation = formulation
        self.recorded = recorded or {}
        self._ydd = self.recorded.get("accelerations")
        self._lambda = self.recorded.get("multipliers")

    @property
    def has_constraints(self) -> bool:
        return self.numeric.m > 0

    @property
    def csv_columns(self) -> list[str]:
        """The columns :meth:`to_csv` writes and :meth:`read_csv` needs back: ``time``, the
        coordinates, their rates ``der(<name>)`` and, with constraints, ``constraint_residual``."""
        cols = ["time"] + self.coordinate_names + [f"der({n})" for n in self.coordinate_names]
        return cols + (["constraint_residual"] if self.has_constraints else [])

    @property
    def columns(self) -> list[str]:
        """Every signal ``result[name]`` reads: the :attr:`csv_columns`, then the user outputs
        that are expressions or frame kinematics (``System.output``, ``frame_output``,
        ``deflection_output``, ``point_output``) in declaration order.  The reactions of
        ``reaction_outputs`` are Lagrange multipliers: :meth:`multipliers`, :meth:`reactions`."""
        return self.csv_columns + output_names(self.system)

    @property
    def constraint_residual(self) -> np.ndarray:
        """max_i |c_i(y(t), t)| at every output time, and with nonholonomic constraints the
        larger of that and max_j |A_j y' + a_j| (zero without constraints)."""
        if "constraint_residual" in self.recorded:
            return self.recorded["constraint_residual"]
        return self.numeric.constraint_series(self.t, self.y, self.yd)

    def constraint_residuals(self) -> dict[str, np.ndarray]:
        """The constraint residuals at every output time, one level each: 'position' max |c|
        (the holonomic rows, seed 000 eq. 5) and 'velocity' max |C y' + b'| (every row,
        nonholonomic ones included, eq. 6); zero without constraints."""
        if "residuals" in self.recorded:
            position, velocity = self.recorded["residuals"]
        elif not self.has_constraints:
            position = velocity = np.zeros(len(self.t))
        else:
            parts = [self.numeric.constraint_parts(ti, self.y[:, i]) for i, ti in enumerate(self.t)]
            position = np.array([np.max(np.abs(c), initial=0.0) for c, _, _ in parts])
            velocity = np.array([np.max(np.abs(C @ self.yd[:, i] + b1), initial=0.0)
                                 for i, (_, C, b1) in enumerate(parts)])
        return {"position": position, "velocity": velocity}

    def multipliers(self) -> dict[str, np.ndarray]:
        """Lagrange multipliers per constraint (seed 000 eq. 3, M y'' + k = q + C^T lambda):
        for a translational loop condition the reaction force along that axis acting on the
        loop's frame b, for a rotational one the reaction torque about the axis.  The
        minimum-norm solution of C^T lambda = M y'' - (q - k), defined also for redundant
        constraints (the engine's mbs_form_multipliers, the reference's
        Formulation.multipliers)."""
        if self._lambda is None:
            x = np.vstack((self.y, self.yd))
            lam = [self._formulation("multipliers").multipliers(ti, x[:, i]) for i, ti in enumerate(self.t)]
            self._lambda = np.array(lam).T if lam else np.zeros((0, 0))
        return dict(zip(self.system.constraint_names, self._lambda))

    @property
    def sensitivity_names(self) -> list[str]:
        """The parameters of ``simulate(..., sensitivities=...)`` (empty for a run without)."""
        return list(self.recorded["sensitivities"][0]) if "sensitivities" in self.recorded else []

    def sensitivity(self, signal: str, wrt: str) -> np.ndarray:
        """d signal(t) / d wrt at every output time, from the direct method of the run
        (``simulate(..., sensitivities=[...])``, :mod:`mbsfmu.runtime` mbs_sensitivity.h):
        ``signal`` a coordinate, ``der(coordinate)``, a user output (expression, frame
        kinematics or reaction) or a constraint's multiplier by its name; ``wrt`` one of
        :attr:`sensitivity_names`."""
        if "sensitivities" not in self.recorded:
            raise SimulationError(f"{self.system.name}: this result has no sensitivities; run "
                                  "simulate(..., sensitivities=[names])")
        names, values = self.recorded["sensitivities"]
        if wrt not in names:
            raise SimulationError(f"sensitivity by {wrt!r}: the run computed them by "
                                  f"{', '.join(names)} only")
        column = values[:, names.index(wrt), :]
        return column[:, signal_index(self.system, signal)]

    def _formulation(self, what: str):
        """The run's reference formulation, which computes ``what`` (a Result read from a file
        has none)."""
        if self.formulation is None:
            source = f" read from {self.stats['source']}" if "source" in self.stats else ""
            raise SimulationError(f"{self.system.name}: this result has no {what} (it holds only the "
                                  f"states{source}); simulate the model to get them")
        return self.formulation

    def __getitem__(self, name: str) -> np.ndarray:
        if name == "time":
            return self.t
        if name in self.coordinate_names:
            return self.y[self.coordinate_names.index(name)]
        if name.startswith("der(") and name.endswith(")") and name[4:-1] in self.coordinate_names:
            return self.yd[self.coordinate_names.index(name[4:-1])]
        if name == "constraint_residual" and self.has_constraints:
            return self.constraint_residual
        names = output_names(self.system)
        if name in names:  # a user output (System.output, frame_output, deflection_output)
            return self.output_series()[:, names.index(name)]
        raise KeyError(f"no signal {name!r} in the result (signals: {', '.join(self.columns)})")

    def output_series(self) -> np.ndarray:
        """The user outputs that are expressions or frame kinematics (reactions left out), at
        every output time: (samples, outputs), in declaration order."""
        if getattr(self, "_outputs", None) is None:
            self._outputs = self.numeric.expression_output_series(self.t, self.y, self.yd, self.u)
        return self._outputs

    @property
    def ydd(self) -> np.ndarray:
        """Accelerations y'' from the equations of motion at the output times (with constraints,
        the formulation's, as the integrator evaluated it)."""
        if self._ydd is None:
            if self.has_constraints:  # y'' of the constrained motion, from the formulation
                f = self.numeric.f
                x = np.vstack((self.y, self.yd))
                form = self._formulation("accelerations")
                self._ydd = np.array([form.rhs(ti, x[:, i])[f:] for i, ti in enumerate(self.t)]).T
            else:
                self._ydd = self.numeric.accelerations_series(self.t, self.y, self.yd, self.u)
        return self._ydd

    def frame(self, name: str) -> dict[str, np.ndarray]:
        """Kinematics of a frame over time: position (n,3), rotation (n,3,3), velocity,
        angular_velocity, acceleration, angular_acceleration (n,3), ISYS components."""
        return self.numeric.frame_series(name, self.t, self.y, self.yd, self.ydd, self.u)

    def reactions(self) -> dict[str, dict[str, np.ndarray]]:
        """Reaction force and torque of every loop closure over time, acting on the loop's
        frame b (from frame a), in ISYS components: {loop: {'force': (n,3), 'torque': (n,3)}} (empty
        for a model without frames).

        A translational condition along axis d of ``in_frame`` carries the force lambda d; a
        rotational condition about axis k of frame a carries the torque lambda n_k with
        n_k = (w_i x u_j - w_j x u_i) / 2 (see :mod:`mbsfmu.equations.constraints`)."""
        lam = self.multipliers()
        out = {}
        axis = {"x": 0, "y": 1, "z": 2}
        cyclic = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}
        for lp in self.system.loops if isinstance(self.system, System) else ():
            n = len(self.t)
            force, torque = np.zeros((n, 3)), np.zeros((n, 3))
            S_in = self.frame(lp.in_frame)["rotation"]
            for ax in lp.translations:
                force += lam[f"{lp.name}.{ax}"][:, None] * S_in[:, :, axis[ax]]
            if lp.rotations:
                Sa, Sb = self.frame(lp.a)["rotation"], self.frame(lp.b)["rotation"]
                for ax in lp.rotations:
                    i, j = cyclic[ax]
                    nk = (np.cross(Sb[:, :, i], Sa[:, :, j]) - np.cross(Sb[:, :, j], Sa[:, :, i])) / 2
                    torque += lam[f"{lp.name}.r{ax}"][:, None] * nk
            out[lp.name] = {"force": force, "torque": torque}
        return out

    def energy(self) -> dict[str, np.ndarray]:
        """Kinetic, potential (gravity and springs) and total mechanical energy over time."""
        T, V = self.numeric.energy_series(self.t, self.y, self.yd, self.u)
        return {"kinetic": T, "potential": V, "total": T + V}

    def relative_energy_drift(self) -> float:
        """max |E(t) - E(0)| / max(|E(0)|, max T) over the run."""
        e = self.energy()
        E = e["total"]
        scale = max(abs(E[0]), float(np.max(np.abs(e["kinetic"]))), 1e-300)
        return float(np.max(np.abs(E - E[0])) / scale)

    def to_csv(self, path, extra: dict[str, np.ndarray] | None = None) -> pathlib.Path:
        """Write the :attr:`csv_columns` (plus ``extra`` columns, e.g. ``{name: result[name]}``
        for user outputs) with a header row; returns the path (as the runner's Result does)."""
        cols = self.csv_columns + list(extra or {})
        data = [self.t, *self.y, *self.yd]
        if self.has_constraints:
            data.append(self.constraint_residual)
        data += list((extra or {}).values())
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(cols)
            for row in np.column_stack(data):
                w.writerow([repr(float(v)) for v in row])
        return pathlib.Path(path)

    @classmethod
    def read_csv(cls, path, system, params: dict | None = None) -> Result:
        """A Result of ``system`` from a CSV written by :meth:`to_csv` (``mbsfmu simulate --out``):
        the columns ``time``, every coordinate and ``der(<coordinate>)`` are needed (others are
        ignored); ``params`` binds constants as in simulate (defaults otherwise).  Every value
        read must be a finite number and time must increase: a ParameterError names missing
        columns, and the line and column of a bad value (:mod:`.result_csv`)."""
        coords = list(system.coordinates_)
        col = read_columns(path, ["time"] + coords + [f"der({c})" for c in coords],
                           f"model {system.name!r}")
        numeric = NumericModel(derive(system), params or {})
        n = len(col["time"])
        y = np.array([col[c] for c in coords]).reshape(len(coords), n)
        yd = np.array([col[f"der({c})"] for c in coords]).reshape(len(coords), n)
        return cls(numeric, col["time"], y, yd, stats={"source": str(path)})

    def animate(self, path=None, fps: float | None = None, every: int = 1, dpi: float = 80,
                size: float = 5.0, player: str = "3d", traces=(), axes=(), deformation_scale: float = 1.0):
        """An :class:`~mbsfmu.animation.Animation` of the motion, written to ``path`` (.html: a
        self-contained page, by default the interactive 3D viewer, ``player='images'`` a player
        of matplotlib images; .gif) when given: every frame origin as a marker,
        each frame joined to its reference frame (coloured per body), flexible bodies as lines
        through their nodes, the shapes of ``System.visual``; one animation frame per output
        sample (``every``: every n-th), played in real time by default (``fps``); the 3D viewer
        draws the paths of the frames ``traces`` and the axes of the frames ``axes``;
        ``deformation_scale`` multiplies the flexible bodies' elastic coordinates in the
        drawing (e.g. 100 shows a beam's millimetres as decimetres; the title says it)."""
        return animate(self, path, fps=fps, every=every, dpi=dpi, size=size, player=player,
                       traces=traces, axes=axes, deformation_scale=deformation_scale)

    def figure(self, signals=None, title=None) -> Figure:
        """The plot of the coordinates (or the named ``signals``) over time, one line each, as a
        :class:`mbsfmu.plotting.Figure` (what :meth:`plot` draws)."""
        signals = signals or self.coordinate_names
        panel = Panel([Line(self.t, self[s], label=s) for s in signals], title=title or self.system.title,
                      xlabel="time [s]", legend="medium", grid=True)
        return Figure([[panel]], size=(8, 4.5), dpi=120)

    def plot(self, path, signals=None, title=None):
        """Plot coordinates (or the named signals) over time into ``path``: an image (PNG, ...)
        or, for a name ending in .html, an interactive page."""
        path = plot_path(path, "plot")
        write(self.figure(signals, title), path)
