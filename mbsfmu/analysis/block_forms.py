"""The linear form of each block of a diagram at an operating point (for :mod:`.closed_loop`).

Each block says its own (:meth:`mbsfmu.runner.block.Block.linear_form`, built from the pieces of
:mod:`mbsfmu.runner.linear_form`; the standard blocks' forms are documented at each block):

* static maps (``Gain``, ``Sum``, ``StateFeedback``, a hold at the diagram's step): a matrix;
* ``StateSpace`` / ``TransferFunction``: A, B, C, D, discretized at T by the block's ``method``;
* ``PID``: continuous kp + ki/s + kd s/(tf s + 1), discrete its exact difference equations;
* delays: shift registers (discrete only: ``UnitDelay``, ``Memory``, ``Delay(N)``,
  ``DiscreteIntegrator``); ``TransportDelay``: a Padé approximant, or its own interpolation
  between shifts in a discrete loop;
* the piecewise maps (``Saturation``, ``DeadZone``, ``Quantizer``, lookups, switches, a
  feed-through ``Function``): their Jacobian at the point, refused at a kink or a jump;
* sources (``block.source``): their outputs are the loop's inputs.

Here: a block that is discrete only is refused in a continuous loop, and a plant given in
``plants`` (a :class:`~.linear_model.Linearization` or its ``ss``, inputs and outputs named like
the block's ports) takes the block's place; discrete: ZOH at T (exact for an FMU's
Co-Simulation, which holds its inputs over a step).
"""

from __future__ import annotations

import numpy as np

from ..runner.linear_form import DOMAINS, LinearForm, lti_form
from ..runner.scheduling import DiagramError

__all__ = ["DOMAINS", "LinearForm", "form", "lti_form"]


def form(name: str, block, u0, y0, domain: str, T: float, pade_order: int, plant=None) -> LinearForm:
    """The :class:`LinearForm` of ``block`` (named ``name``) with inputs ``u0`` and outputs
    ``y0`` at the operating point (see the module docstring); DiagramError naming the block if
    it has none."""
    if plant is not None:
        return _plant(name, block, plant, domain, T)
    if domain == "continuous" and getattr(block, "discrete_only", False):
        raise DiagramError(f"block {name!r} ({type(block).__name__}) is discrete: it has no continuous "
                           "form (linearize with domain='discrete', the loop at the diagram's step)")
    return block.linear_form(name, u0, y0, domain, T, pade_order)


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
