"""``gradient(model, metrics, wrt, t_end)``: the values of metrics of a run and their gradient by
constants and initial values, by the engine's direct or adjoint method (seed 002 §4).

Both give the gradient of the exact solution to the integrator's tolerance
(docs/guide/gradients.md):

* ``mode='forward'`` (the direct method): one run integrates the state, the sensitivities
  ds/dp_j of every parameter and the integrals of the integral metrics' signals with theirs
  (``mbs_sens_run``); its cost grows with the number of parameters, not of metrics;
* ``mode='adjoint'``: a plain forward run kept as its continuous extension, then one backward
  integration of the adjoint equations of all metrics at once (``mbs_adj_run``); its cost grows
  with the number of metrics, not of parameters;
* ``mode='auto'``: the adjoint method when there are more than twice as many parameters as
  metrics, else the direct one.

The word ``method`` keeps its meaning of every other call of mbsfmu: the integration method
('explicit', 'dop853', 'stiff').
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..core.errors import ParameterError
from ..model.loader import system_of
from ..simulation.result import signal_values
from ..simulation.sensitivity_columns import request, signal_names
from ..simulation.simulate import simulate
from .metrics import expression_model, parse_metrics

#: the modes of :func:`gradient`
MODES = ("auto", "forward", "adjoint")
#: the integration method of a gradient where none is given: the eighth-order pair takes the
#: fewest steps at the tolerances a gradient is wanted at (for a stiff model give 'stiff')
DEFAULT_METHOD = "dop853"


class Gradient:
    """The result of :func:`gradient`: ``values`` ({metric: value}), ``gradient`` (a DataFrame,
    one row per metric, one column per parameter), the ``mode`` that ran and its ``stats``."""

    def __init__(self, values: dict, gradient: pd.DataFrame, mode: str, stats: dict, t_end: float):
        self.values = values
        self.gradient = gradient
        self.mode = mode
        self.stats = stats
        self.t_end = t_end

    def to_dict(self) -> dict:
        return {"t_end": self.t_end, "mode": self.mode, "values": dict(self.values),
                "gradient": {m: dict(row) for m, row in self.gradient.iterrows()}}

    def __str__(self) -> str:
        table = self.gradient.copy()
        table.insert(0, "value", [self.values[m] for m in table.index])
        return (f"gradient by the {self.mode} method, t_end = {self.t_end:g}\n"
                + table.to_string(float_format=lambda v: f"{v: .9g}"))

    __repr__ = __str__


def choose_mode(mode: str, n_parameters: int, n_metrics: int) -> str:
    """The mode that runs for ``mode`` (see the module doc)."""
    if mode not in MODES:
        raise ParameterError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode != "auto":
        return mode
    return "adjoint" if n_parameters > 2 * n_metrics else "forward"


def gradient(model, metrics, wrt, t_end: float, mode: str = "auto", method: str | None = None,
             rtol: float = 1e-8, atol: float | None = None, params: dict | None = None,
             initial: dict | None = None, inputs: dict | None = None, formulation: str | None = None,
             formulation_options: dict | None = None, fixed=(), max_step: float = math.inf,
             progress=None, sensitivity_error_control: str = "all") -> Gradient:
    """The values of ``metrics`` ({name: 'final(x)' | 'integral(S)' | 'mean(S)' |
    least_squares(data, signals)}, :mod:`.metrics`) of a run to ``t_end`` and their gradient by
    ``wrt`` (names of constants, initial values and named initial conditions, as
    ``simulate(..., sensitivities=...)`` takes them), by the engine's ``mode`` ('forward',
    'adjoint' or 'auto', see the module doc).  The run is simulate's with the same keywords
    (``method`` is the integration method, default :data:`DEFAULT_METHOD`;
    ``sensitivity_error_control`` that of the forward mode, see
    :func:`~mbsfmu.simulation.simulate.simulate`).  Everything is checked before the run."""
    system = system_of(model)
    number = isinstance(t_end, (int, float)) and not isinstance(t_end, bool)
    if not (number and math.isfinite(t_end) and t_end > 0):
        raise ParameterError(f"t_end must be a positive number, got {t_end!r}")
    system, terms = expression_model(system, parse_metrics(system, metrics, t_end))
    names = list(dict.fromkeys(m.name for m in terms))
    req = request(system, wrt, sensitivity_error_control)
    mode = choose_mode(mode, len(req.names), len(names))
    kw = dict(method=DEFAULT_METHOD if method is None else method, rtol=rtol, atol=atol, params=params,
              initial=initial, inputs=inputs,
              formulation=formulation, formulation_options=formulation_options, fixed=fixed,
              max_step=max_step, backend="c", progress=progress)
    if mode == "adjoint":
        req.adjoint = [(m.engine_kind, m.index) for m in terms]
        req.points = [m.points for m in terms]
        res = simulate(system, t_end, dt=t_end, sensitivities=req, **kw)
        values, grad = res.recorded["adjoint"]
    else:
        req.integrals = [m.index for m in terms if m.engine_kind == "integral"]
        data_times = (t for m in terms if m.points is not None for t in m.points[:, 0])
        times = sorted({0.0, float(t_end), *data_times})
        res = simulate(system, sensitivities=req, times=times, **kw)
        values, grad = _forward_values(res, terms)
    scale = np.array([1.0 / t_end if m.kind == "mean" else 1.0 for m in terms])
    values = np.asarray(values) * scale
    grad = np.asarray(grad).reshape(len(terms), len(req.names)) * scale[:, None]
    rows = [[i for i, m in enumerate(terms) if m.name == n] for n in names]  # a metric's terms, summed
    table = pd.DataFrame([grad[r].sum(axis=0) for r in rows], index=names, columns=list(req.names))
    total = {n: float(values[r].sum()) for n, r in zip(names, rows)}
    return Gradient(total, table, mode, dict(res.stats), float(t_end))


def _forward_values(res, terms) -> tuple[np.ndarray, np.ndarray]:
    """Values and gradients of the metric terms from a run with sensitivities (and integrals)."""
    names, sens = res.recorded["sensitivities"]
    quad = res.recorded.get("integrals")
    values, grad, q = [], [], 0
    for m in terms:
        if m.engine_kind == "integral":
            values.append(quad[-1, 0, q])
            grad.append(quad[-1, 1:, q])
            q += 1
        elif m.engine_kind == "least_squares":
            rows = np.searchsorted(res.t, m.points[:, 0])
            r = _signal(res, m)[rows] - m.points[:, 1]
            values.append(float(np.sum(m.points[:, 2] * r * r)))
            grad.append(2.0 * (m.points[:, 2] * r) @ sens[rows, :, m.index])
        else:
            values.append(_signal(res, m)[-1])
            grad.append(sens[-1, :, m.index])
    return np.array(values), np.array(grad)


def _signal(res, metric) -> np.ndarray:
    """The metric's signal at every output time of the run (by its name in the engine's layout)."""
    return signal_values(res, signal_names(res.system)[metric.index])
