"""``derive(model)``: the equations of motion of a model (:class:`~.minimal_form.Equations`),
derived once per model and kept on it until it changes, so that every stage (the numeric model,
the generated C, the engine, the FMUs, the linearization) shares one derivation.

A :class:`~mbsfmu.model.System` is derived by Newton-Euler and Jourdain's principle (seed 002
§2, steps 1-4: the kinematics of every frame, the forces of the force elements, the
constraints; M, k, q and the energies on first use, :mod:`.minimal_form`), a
:class:`~mbsfmu.model.LagrangianSystem` by Lagrange's equations (seed 003 eq. 1.2.1,
:mod:`.lagrange`).
"""

from __future__ import annotations

from ..core.errors import ModelError
from ..model.base import Model
from ..model.lagrangian import LagrangianSystem
from .articulated_body import own_coordinates
from .constraints import constraint_equations
from .intermediates import Intermediates
from .kinematics import Kinematics
from .lagrange import derive_lagrange
from .minimal_form import Equations
from .newton_euler import applied_forces, check_moved


def derive(model) -> Equations:
    """The equations of motion of ``model`` (a System or a LagrangianSystem), derived on the
    first call and the same object on every later one until the model changes."""
    if not isinstance(model, Model):
        raise ModelError(f"derive: {type(model).__name__} is not a model (a System or a LagrangianSystem)")
    return model.cached_equations(derive_lagrange if isinstance(model, LagrangianSystem)
                                  else derive_newton_euler)


Model.register_derivation(derive)  # what the deprecated Model.equations() calls


def derive_newton_euler(system) -> Equations:
    """Derive the equations of motion of a System (seed 002 §2, steps 1-4; M, k, q and the
    energies on first use, see :mod:`.minimal_form`), afresh."""
    w = Intermediates()
    kin = Kinematics(system, w)
    own, reason = own_coordinates(system)
    check_moved(system, kin, None if reason else own)
    q_applied = applied_forces(system, kin, w)
    c, C, b1, b2 = constraint_equations(system, kin, w)
    return Equations(system, w, kin, q_applied, c, C, b1, b2)
