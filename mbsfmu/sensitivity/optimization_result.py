"""The result of :func:`mbsfmu.optimize`: the optimum, the objective and the constraints there,
the minimizer's verdict, the history of every evaluation, a table and a plot."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.output_files import plot_path
from ..plotting import Figure, Line, Panel, column, write


@dataclass
class OptimizationResult:
    """What an optimization found (:mod:`.optimization`).

    ``optimum`` (p,) in the order of ``names`` within ``lower``, ``upper`` (from ``start``);
    ``value`` the objective's metric there (``sense`` 'minimize' or 'maximize' of ``objective``);
    ``constraints`` {name: (value there, relation, bound)} of the metrics ``constraint_specs``;
    ``gradient`` (1 + constraints, p) their gradients by the parameters there; ``success`` and
    ``message`` scipy's verdict (or why max_evaluations stopped it); ``algorithm`` the minimizer,
    ``mode`` the gradient's ('forward', 'adjoint'; for a diagram 'finite differences' or 'none');
    ``evaluations`` every evaluation, ``runs`` those run now, ``taken``
    those taken from the history file; ``iterations`` the minimizer's; ``history`` one row per
    evaluation (the parameters, objective, constraints, gradient norm ||df/du|| with u the
    parameters scaled to [0, 1], seconds, whether taken from the file); ``seconds`` the wall time;
    ``history_file``, ``moved`` (files moved aside by resume='restart') and ``dropped`` (records
    of the file that could not be read, evaluated again)."""

    model: str
    sense: str
    objective: str
    names: list
    lower: np.ndarray
    upper: np.ndarray
    start: np.ndarray
    optimum: np.ndarray
    value: float
    constraints: dict
    constraint_specs: dict
    gradient: np.ndarray
    success: bool
    message: str
    algorithm: str
    mode: str
    evaluations: int
    runs: int
    taken: int
    iterations: int
    history: pd.DataFrame
    seconds: float
    history_file: str | None = None
    moved: list = field(default_factory=list)
    dropped: list = field(default_factory=list)

    def _gradients(self) -> str:
        """How the minimizer got its gradients: a model's by the direct or adjoint method, a
        diagram's by finite differences or none (a derivative-free minimizer)."""
        if self.mode == "none":
            return "derivative-free"
        if self.mode == "finite differences":
            return "gradients by finite differences"
        return f"gradients by the {self.mode} method"

    @property
    def values(self) -> dict[str, float]:
        """The optimum by name."""
        return dict(zip(self.names, map(float, self.optimum)))

    @property
    def at_bounds(self) -> list[str]:
        """The parameters that ended on a bound of their range."""
        span = self.upper - self.lower
        return [
            n
            for n, x, lo, hi, d in zip(self.names, self.optimum, self.lower, self.upper, span)
            if min(x - lo, hi - x) <= 1e-10 * d
        ]

    def _slack(self, name: str, value: float, bound: float) -> float:
        """1e-6 of the constraint's scale: max(|bound|, |its value at the start|) (1 where both
        are zero), as the minimizer scales it."""
        scale = max(abs(bound), abs(float(self.history[name].iloc[0])) if len(self.history) else abs(value))
        return 1e-6 * (scale if scale > 0 else 1.0)

    @property
    def active(self) -> list[str]:
        """The constraints that hold with equality at the optimum (to 1e-6 of their scale)."""
        return [
            n
            for n, (v, relation, bound) in self.constraints.items()
            if abs(v - bound) <= self._slack(n, v, bound)
        ]

    @property
    def satisfied(self) -> dict[str, bool]:
        """Whether each constraint holds at the optimum (to 1e-6 of its scale)."""
        out = {}
        for n, (v, relation, bound) in self.constraints.items():
            slack = self._slack(n, v, bound)
            out[n] = {"<=": v <= bound + slack, ">=": v >= bound - slack, "==": abs(v - bound) <= slack}[
                relation
            ]
        return out

    def table(self) -> pd.DataFrame:
        """One row per parameter: the optimum, the start, the bounds and the objective's
        gradient there."""
        return pd.DataFrame(
            {
                "optimum": self.optimum,
                "start": self.start,
                "low": self.lower,
                "high": self.upper,
                "d objective": self.gradient[0],
            },
            index=pd.Index(self.names, name="parameter"),
        )

    def __str__(self) -> str:
        resumed = f" ({self.taken} taken from {self.history_file})" if self.taken else ""
        lines = [
            f"{self.sense} {self.objective} of {self.model} over {', '.join(self.names)} by {self.algorithm} "
            f"({self._gradients()}): {self.evaluations} evaluations{resumed}, "
            f"{self.iterations} iterations in {self.seconds:.2f} s; {self.message}",
            f"{self.objective} = {self.value:.10g} at the optimum",
        ]
        for n, (v, relation, bound) in self.constraints.items():
            state = "active" if n in self.active else ("met" if self.satisfied[n] else "VIOLATED")
            lines.append(
                f"constraint {n}: {self.constraint_specs[n]} = {v:.10g} {relation} {bound:g} ({state})"
            )
        with pd.option_context("display.float_format", "{:.10g}".format, "display.width", 120):
            lines.append(str(self.table()))
        if self.at_bounds:
            lines.append(f"on a bound: {', '.join(self.at_bounds)}")
        if not self.success:
            lines.append("the minimizer did not report convergence: see the message above")
        return "\n".join(lines)

    __repr__ = __str__

    def to_dict(self) -> dict:
        """The result as plain numbers (the CLI's --json)."""
        return {
            "model": self.model,
            "sense": self.sense,
            "objective": self.objective,
            "parameters": self.names,
            "optimum": self.values,
            "value": self.value,
            "start": dict(zip(self.names, map(float, self.start))),
            "bounds": {n: [float(a), float(b)] for n, a, b in zip(self.names, self.lower, self.upper)},
            "constraints": {
                n: {
                    "metric": self.constraint_specs[n],
                    "value": v,
                    "relation": r,
                    "bound": b,
                    "satisfied": bool(self.satisfied[n]),
                    "active": n in self.active,
                }
                for n, (v, r, b) in self.constraints.items()
            },
            "gradient": dict(zip(self.names, map(float, self.gradient[0]))),
            "success": self.success,
            "message": self.message,
            "algorithm": self.algorithm,
            "mode": self.mode,
            "evaluations": self.evaluations,
            "runs": self.runs,
            "taken": self.taken,
            "iterations": self.iterations,
            "seconds": self.seconds,
            "at_bounds": self.at_bounds,
            "history_file": self.history_file,
            "history": self.history.to_dict(orient="list"),
        }

    def figure(self) -> Figure:
        """The objective (and the constraints) per evaluation (top) and each parameter's path,
        scaled to its range (below), as a :class:`mbsfmu.plotting.Figure` (what :meth:`plot`
        draws)."""
        h = self.history
        n = h["evaluation"] + 1
        top = Panel([Line(n, h["objective"], marker=".", color="C0", width=1)]
                    + [Line(n, h[name], label=f"constraint {name}", linestyle="--", marker=".", width=0.8)
                       for name in self.constraints],
                    title=f"{self.model}: {self.sense} {self.objective}", title_size=10,
                    ylabel=self.objective, legend=8 if self.constraints else None)
        bottom = Panel([Line(n, (h[name] - lo) / (hi - lo), marker=".", width=1,
                             label=f"{name} in [{lo:g}, {hi:g}]")
                        for name, lo, hi in zip(self.names, self.lower, self.upper)],
                       xlabel="evaluation", ylabel="(p - low) / (high - low)", ylim=(-0.05, 1.05), legend=8)
        return column([top, bottom], size=(7, 6), dpi=110, sharex=True)

    def plot(self, path) -> str:
        """The objective per evaluation (top) and each parameter's path (below, scaled to its
        range), written to ``path`` (an image file, or an interactive page for a name ending in
        .html); returns the path."""
        path = plot_path(path, "plot")
        write(self.figure(), path)
        return str(path)
