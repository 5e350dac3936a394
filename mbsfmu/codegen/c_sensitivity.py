"""The sensitivity functions of a model in C (built into the engine on demand).

Three functions with the arguments of the model contract and one more array ``z`` (the
layouts of :mod:`mbsfmu.equations.sensitivity_equations`):

``mbs_sens_tangent``
    the tangents of R, G, c, V, e, E y' along (dy, dy', dp) at given a, lambda;
``mbs_sens_adjoint``
    the gradient by y, y', p of wR.R + wG.G + wc.c + wV.V at given a, lambda;
``mbs_sens_outputs``
    the tangents of the expression outputs along (dy, dy', dp).

They are printed like every equation (:mod:`.c_source`): one ``const double`` per
intermediate, the derivatives' definitions after those of the equations they differentiate.
"""

from __future__ import annotations

from ..equations.sensitivity_equations import sensitivity_equations
from .c_printer import CPrinter
from .c_source import _statements, c_names, function_lines

#: the generated functions, in the order they are printed
SENSITIVITY_FUNCTIONS = ("sens_tangent", "sens_adjoint", "sens_outputs")


def sensitivity_functions(eqs) -> list[str]:
    """The C lines of the three functions (module doc)."""
    se = sensitivity_equations(eqs)
    lines = []
    for name, z, outputs in (("sens_tangent", se.z_tangent, se.tangent),
                             ("sens_adjoint", se.z_adjoint, se.adjoint),
                             ("sens_outputs", se.z_outputs, se.outputs_tangent)):
        names = dict(c_names(eqs))
        names.update((s, f"z[{i}]") for i, s in enumerate(z))
        body = _statements(name, list(enumerate(outputs)), eqs, CPrinter(names))
        lines += ["", *function_lines("void", f"mbs_{name}", body, extra=True)]
    return lines
