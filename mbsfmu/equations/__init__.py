"""Stage 2 of the pipeline: symbolic equations of motion ``M(y,t) y'' + k(y,y',t) = q(y,y',t,u)``.

``derive(model)`` returns an :class:`Equations` object (by Newton-Euler for a System, by
Lagrange's equations for a LagrangianSystem: :mod:`.derive`) holding M, k, q and the
kinematics of every frame as sympy matrices over intermediate variables (a
common-subexpression form), plus ``expanded(...)`` to obtain closed-form expressions.
``eqs.numeric(params)`` returns a :class:`NumericModel`, the equations evaluated with numbers
(generated Python/numpy functions, :mod:`.python_source`), which the formulations and the
Result use.
"""

from .derive import derive
from .intermediates import Intermediates
from .kinematics import FrameKinematics, Kinematics
from .minimal_form import Equations
from .numeric_model import NumericModel

__all__ = ["derive", "Equations", "Intermediates", "Kinematics", "FrameKinematics", "NumericModel"]
