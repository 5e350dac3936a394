"""The linear model of an FMU block of a diagram about its initial state (for :mod:`.closed_loop`).

An FMU with Model Exchange is a continuous system ẋ = f(x, u), y = g(x, u) (FMI 2.0 §3 / FMI 3.0
§3: states in the order of ``<ModelStructure><Derivatives>``).  A fresh instance of the block's
FMU (its parameters and start values, Model Exchange) is initialized at t0; with its states x0
there and the inputs u0 of the operating point,

    A = ∂f/∂x,  B = ∂f/∂u,  C = ∂g/∂x,  D = ∂g/∂u      at (x0, u0).

The derivatives are the FMU's own directional derivatives (``fmi2GetDirectionalDerivative``,
seeds e_j of the states and inputs) where the FMU declares and computes them for these knowns,
else central differences with the step h_j = 1e-6 (1 + |x_j|) (error O(h²) + O(ε/h), about 1e-9
relative for a smooth model).  The mbsfmu native FMUs give directional derivatives of their
outputs by their inputs only, so their A comes from differences.  An FMU without Model Exchange
is refused: build it with ``interface='both'``, or give its linear model in ``plants``.
"""

from __future__ import annotations

import numpy as np

from ..runner.fmu_block import FMU
from ..runner.scheduling import DiagramError

#: relative step of the central differences
FD_STEP = 1e-6


def fmu_linear_model(name: str, block: FMU, u0, t0: float):
    """(A, B, C, D, state names, how) of the FMU block ``name`` about its initial state at ``t0``
    with inputs ``u0``; ``how`` says where the derivatives came from."""
    md = block.model_description
    if md.modelExchange is None:
        raise DiagramError(f"block {name!r} (FMU {block.path.name}) has no Model Exchange interface, "
                           "whose derivatives the linearization needs: build it with "
                           f"interface='both', or give plants={{{name!r}: mbsfmu.linearize(model, ...)}}")
    kinds = {block.value_type(p) for p in block.inputs + block.outputs}
    if kinds - {"Real"}:
        raise DiagramError(f"block {name!r} (FMU {block.path.name}): only Real ports are linearized "
                           f"(it has {', '.join(sorted(kinds - {'Real'}))} ports)")
    states = [d.variable.derivative.name if d.variable.derivative is not None else d.variable.name
              for d in md.derivatives]
    probe = FMU(block.path, parameters=block.parameters, start_values=block.start_values,
                outputs=block.outputs, interface="me", instance_name=f"{block.instance_name}_linearize")
    probe.start(t0, 1.0)
    try:
        me = probe._me
        x0 = me.states()
        u0 = [float(v) for v in u0]

        def f(x, u):
            probe._set_inputs(probe._in_ft + probe._in_rest, u)
            dx = me.rhs(t0, x)
            return dx, np.asarray(probe.output(t0, u), dtype=float)

        n, m, p = len(x0), len(u0), len(block.outputs)
        J = np.zeros((n + p, n + m))
        z0 = np.concatenate([x0, u0])
        for j in range(n + m):
            h = FD_STEP * (1.0 + abs(z0[j]))
            hi, lo = z0.copy(), z0.copy()
            hi[j] += h
            lo[j] -= h
            fh, gh = f(hi[:n], list(hi[n:]))
            fl, gl = f(lo[:n], list(lo[n:]))
            J[:, j] = np.concatenate([fh - fl, gh - gl]) / (2.0 * h)
        how = "central differences of the FMU's Model Exchange derivatives and outputs"
        exact = _directional(probe, md, block, x0, u0, f)
        if exact is not None:
            J, how = exact, "the FMU's directional derivatives"
    finally:
        probe.stop()
    return J[:n, :n], J[:n, n:], J[n:, :n], J[n:, n:], states, how


def _directional(probe, md, block, x0, u0, f):
    """The Jacobian from fmi2GetDirectionalDerivative (None if the FMU does not provide it for
    states and inputs as knowns)."""
    if block.fmi_version != 2 or not md.modelExchange.providesDirectionalDerivative:
        return None
    f(x0, u0)  # back at the point
    unknown = ([d.variable.valueReference for d in md.derivatives]
               + [block.variables[o].valueReference for o in block.outputs])
    known = ([d.variable.derivative.valueReference for d in md.derivatives]
             + [block.variables[i].valueReference for i in block.inputs])
    try:
        cols = [probe._fmi.fmu.getDirectionalDerivative(unknown, known, list(np.eye(len(known))[j]))
                for j in range(len(known))]
    except Exception:  # the FMU refuses these knowns (a native FMU takes only inputs)
        return None
    return np.array(cols, dtype=float).T
