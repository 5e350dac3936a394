"""The result of :func:`mbsfmu.fit`: estimates, their standard errors and correlations, the
residuals, the history of every evaluation, a table and a plot."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.errors import IdentifiabilityError
from ..core.output_files import plot_path
from ..plotting import Figure, Line, Panel, write


@dataclass
class FitResult:
    """What a fit found (:mod:`.least_squares_fit`, :mod:`.fit_statistics`).

    ``estimates`` (p,) in the order of ``names``; ``start``, ``lower``, ``upper`` the start and
    bounds; ``ssr`` the weighted sum of squared residuals S(p*) over ``n`` data values, ``cost``
    = S / 2 (scipy's), ``s2`` = S / (n - p) and ``covariance`` = s^2 (J^T J)^-1 (None, and
    ``singular`` the reason in words, where J is singular); ``fitted`` (n_t, n_s) the model at the
    data times; ``history`` one row per engine run (evaluation, the parameters, cost, seconds);
    ``evaluations`` the engine runs, ``nfev``/``njev`` the minimizer's counts, ``status`` and
    ``message`` its stop; ``seconds`` the fit's wall time; ``jacobian`` J at the optimum."""

    model: str
    names: list
    estimates: np.ndarray
    start: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    covariance: np.ndarray | None
    s2: float | None
    singular: str | None
    ssr: float
    n: int
    fitted: np.ndarray
    data: object  # MeasuredData
    weights: np.ndarray
    history: pd.DataFrame
    evaluations: int
    nfev: int
    njev: int
    status: int
    message: str
    seconds: float
    jacobian: np.ndarray

    @property
    def values(self) -> dict[str, float]:
        """The estimates by name."""
        return dict(zip(self.names, map(float, self.estimates)))

    @property
    def cost(self) -> float:
        return 0.5 * self.ssr

    @property
    def success(self) -> bool:
        """True if the minimizer met one of its tolerances (scipy's status > 0)."""
        return self.status > 0

    @property
    def at_bounds(self) -> list[str]:
        """The parameters that ended on a bound of their range (their standard errors describe
        the curvature there, not a confidence interval)."""
        span = self.upper - self.lower
        return [
            n
            for n, x, lo, hi, d in zip(self.names, self.estimates, self.lower, self.upper, span)
            if min(x - lo, hi - x) <= 1e-10 * d
        ]

    def _cov(self) -> np.ndarray:
        if self.covariance is None:
            raise IdentifiabilityError(f"{self.model}: no standard errors: {self.singular}")
        return self.covariance

    @property
    def standard_errors(self) -> pd.Series:
        """se_k = sqrt(Cov_kk) by name; an IdentifiabilityError where the fit is singular."""
        return pd.Series(np.sqrt(np.diag(self._cov())), index=self.names, name="standard error")

    @property
    def correlation(self) -> pd.DataFrame:
        """rho_jk = Cov_jk / (se_j se_k); an IdentifiabilityError where the fit is singular."""
        cov = self._cov()
        se = np.sqrt(np.diag(cov))
        return pd.DataFrame(cov / np.outer(se, se), index=self.names, columns=self.names)

    @property
    def residuals(self) -> pd.DataFrame:
        """data - model at the data times, one column per signal (unweighted)."""
        return pd.DataFrame(
            self.data.values - self.fitted,
            columns=self.data.signals,
            index=pd.Index(self.data.times, name="time"),
        )

    def table(self) -> pd.DataFrame:
        """One row per parameter: estimate, standard error (NaN where singular), its ratio to
        the estimate, start and bounds."""
        se = (
            np.full(len(self.names), np.nan) if self.covariance is None else np.sqrt(np.diag(self.covariance))
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.abs(se / self.estimates)
        return pd.DataFrame(
            {
                "estimate": self.estimates,
                "std error": se,
                "rel. error": rel,
                "start": self.start,
                "low": self.lower,
                "high": self.upper,
            },
            index=pd.Index(self.names, name="parameter"),
        )

    def __str__(self) -> str:
        p = len(self.names)
        head = (
            f"fit of {self.model} to {self.data.source}: {p} parameter(s), {self.n} data values "
            f"({len(self.data.times)} times x {len(self.data.signals)} signal(s): "
            f"{', '.join(self.data.signals)}); {self.evaluations} evaluations in {self.seconds:.2f} s; "
            f"{self.message}"
        )
        lines = [
            head,
            f"cost S/2 = {self.cost:.6g}"
            + (f", s = sqrt(S / (n - p)) = {np.sqrt(self.s2):.4g}" if self.s2 is not None else ""),
        ]
        with pd.option_context("display.float_format", "{:.6g}".format, "display.width", 120):
            table = self.table()
            if self.covariance is None:
                table = table.drop(columns=["std error", "rel. error"])
            lines.append(str(table))
            if self.covariance is None:
                lines.append(f"no standard errors: {self.singular}")
            elif p > 1:
                lines.append("correlation:")
                lines.append(str(self.correlation.round(4)))
        if self.at_bounds:
            lines.append(
                f"on a bound: {', '.join(self.at_bounds)} (widen the range: the standard error "
                "there is not a confidence interval)"
            )
        if not self.success:
            lines.append("the minimizer stopped before converging: raise max_evaluations")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """The result as plain numbers (the CLI's --json)."""
        out = {
            "model": self.model,
            "data": self.data.source,
            "parameters": self.names,
            "estimates": self.values,
            "start": dict(zip(self.names, map(float, self.start))),
            "bounds": {n: [float(a), float(b)] for n, a, b in zip(self.names, self.lower, self.upper)},
            "signals": self.data.signals,
            "weights": dict(zip(self.data.signals, map(float, self.weights))),
            "n": self.n,
            "ssr": self.ssr,
            "cost": self.cost,
            "evaluations": self.evaluations,
            "nfev": self.nfev,
            "njev": self.njev,
            "success": self.success,
            "message": self.message,
            "seconds": self.seconds,
            "at_bounds": self.at_bounds,
            "singular": self.singular,
        }
        if self.covariance is not None:
            out.update(
                s=float(np.sqrt(self.s2)),
                standard_errors=self.standard_errors.to_dict(),
                correlation=self.correlation.to_numpy().tolist(),
            )
        return out

    def figure(self) -> Figure:
        """Per signal: the data points and the fitted model over time (top), the residuals data -
        model (bottom), as a :class:`mbsfmu.plotting.Figure` (what :meth:`plot` draws)."""
        t = self.data.times
        tops, bottoms = [], []
        for j, s in enumerate(self.data.signals):
            data, model = self.data.values[:, j], self.fitted[:, j]
            tops.append(Panel([Line(t, data, label="data", linestyle="", marker=".", size=3.5, color="0.35"),
                               Line(t, model, label="fitted model", width=1.4, color="C0")],
                              title=s, legend=8))
            bottoms.append(Panel([Line(t, data - model, linestyle="", marker=".", size=3, color="C3")],
                                 xlabel="t [s]", ylabel="data - model", hlines=[(0.0, "0.6", 0.8)]))
        estimates = ", ".join(f"{n} = {v:.5g}" for n, v in self.values.items())
        return Figure([tops, bottoms], title=f"{self.model}: {estimates}", title_size=10,
                      size=(4.5 * len(tops), 5.5), dpi=110, sharex="col", height_ratios=[3, 1.4])

    def plot(self, path) -> str:
        """Per signal: the data points and the fitted model over time (top), the residuals data -
        model (bottom); written to ``path`` (an image file, or an interactive page for a name
        ending in .html); returns the path."""
        path = plot_path(path, "plot")
        write(self.figure(), path)
        return str(path)
