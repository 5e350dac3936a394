"""The multibody front end, in the spirit of Neweul-M2's modeling commands (seed 002 sec. 4.1).

Seed 002 defines a system by constants (``newUserVarKonst``), generalized coordinates
(``newGenCoord``), bodies placed relative to an existing frame (``newBody`` with ``RelPos``,
``RelRot``, ``CgPos``, ``CgRot``, ``Mass``, ``Inertia``), force elements and gravity.  The
:class:`System` below offers the same commands as Python methods::

    s = System("double_pendulum")
    m, L1 = s.constants(m=2.0, L1=1.0)
    alpha, = s.coordinates("alpha")
    s.body("P1", ref="ISYS", rel_rot=rot_x(alpha), cg_pos=[0, 0, -L1], mass=m,
           inertia=[[0.01, 0, 0], [0, 1, 0], [0, 0, 1]])

What it shares with the Lagrangian front end (symbols, constraints, outputs, generalized forces)
is :class:`~mbsfmu.model.base.Model`; its own commands come one concern per module: the frame
tree with loops and frame outputs (:mod:`.frames`), rigid bodies (:mod:`.bodies`), force
elements on frames (:mod:`.force_elements`), flexible bodies (:mod:`.flexible_bodies`) and
what the animation draws (:mod:`.visuals`).  Its equations come from Newton-Euler and
Jourdain's principle (:mod:`mbsfmu.equations.derive`, seed 002 eqs. 1-11).
"""

from __future__ import annotations

from .base import Model
from .bodies import Bodies
from .elements import AppliedForce, Body, FlexibleBody, Frame, LoopClosure, SpringDamper, Visual
from .flexible_bodies import FlexibleBodies
from .force_elements import ForceElements
from .frames import Frames
from .names import INERTIAL
from .visuals import Visuals


class System(Frames, Bodies, ForceElements, FlexibleBodies, Visuals, Model):
    """A multibody system: an inertial frame ``ISYS`` plus everything added to it."""

    def __init__(self, name: str, title: str = ""):
        super().__init__(name, title)
        self.frames: dict[str, Frame] = {INERTIAL: Frame(INERTIAL, None)}
        self.bodies: dict[str, Body] = {}
        self.flexible_bodies: dict[str, FlexibleBody] = {}
        self.spring_dampers: list[SpringDamper] = []
        self.applied: list[AppliedForce] = []
        self.loops: list[LoopClosure] = []
        self.visuals: dict[str, Visual] = {}  # name -> how the animation draws it

    def gravity(self, vector) -> None:
        """Set the gravity vector in ISYS components, e.g. ``gravity([0, 0, -g])``."""
        self.gravity_vector = self.vector(vector, "gravity")
        self._changed()

    def elements_with_mass(self) -> list[Body]:
        """The rigid bodies (flexible bodies carry their inertia in their modal data)."""
        return list(self.bodies.values())

    def _summary_elements(self) -> list[str]:
        lines = [f"  frames ({len(self.frames)}): " + ", ".join(self.frames),
                 f"  bodies ({len(self.bodies)}): " + ", ".join(self.bodies)]
        if self.flexible_bodies:
            lines.append(f"  flexible bodies ({len(self.flexible_bodies)}): " + ", ".join(
                f"{b.name} ({len(b.coordinates)} modes, {len(b.node_frames)} nodes)"
                for b in self.flexible_bodies.values()))
        forces = ([e.name for e in self.spring_dampers] + [e.name for e in self.applied]
                  + [e.name for e in self.generalized_forces])
        lines.append(f"  force elements ({len(forces)}): " + ", ".join(forces))
        return lines
