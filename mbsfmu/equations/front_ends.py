"""The equations of motion of any model, by the derivation its front end calls for.

A :class:`~mbsfmu.model.System` (frames and bodies) is derived with Newton-Euler and Jourdain's
principle (:mod:`.derive`, seed 002 eqs. 1-11), a :class:`~mbsfmu.model.LagrangianSystem`
(energies, natural coordinates) with Lagrange's equations of the first kind (:mod:`.lagrange`,
seed 003 eq. 1.2.1); both give the same :class:`~.derive.Equations`, ``M y'' + k = q`` with the
constraint rows, which every later stage takes.
"""

from __future__ import annotations

from ..errors import ModelError
from ..model.lagrangian import LagrangianSystem
from ..model.multibody import System
from .derive import Equations
from .derive import derive as derive_multibody
from .lagrange import derive_lagrange


def derive(model) -> Equations:
    """The equations of motion of ``model`` (a System or a LagrangianSystem)."""
    if isinstance(model, LagrangianSystem):
        return derive_lagrange(model)
    if isinstance(model, System):
        return derive_multibody(model)
    raise ModelError(f"derive: {type(model).__name__} is not a model (a System or a LagrangianSystem)")
