"""The force elements of a System that act on frames (seed 002 sec. 4.1): point-to-point
spring-dampers between frame origins, applied forces at a frame's origin and torques on the body
that carries a frame, with components in any frame.  Generalized forces on one coordinate are
shared with the Lagrangian front end (:meth:`~mbsfmu.model.base.Model.generalized_force`).
Force elements have a namespace of their own.
"""

from __future__ import annotations

from ..core.errors import ModelError
from .elements import AppliedForce, SpringDamper
from .names import FORCES, INERTIAL


class ForceElements:
    """The force-element commands of a System (a part of :class:`~mbsfmu.model.System`)."""

    def spring_damper(self, name: str, a: str, b: str, stiffness=0, damping=0,
                      rest_length=0) -> str:
        """Point-to-point spring-damper between the origins of frames ``a`` and ``b``."""
        where = f"spring-damper {name!r}"
        a = self._frame_name(a, where)
        b = self._frame_name(b, where)
        if a == b:
            raise ModelError(f"{where}: both ends are on frame {a!r}")
        el = SpringDamper(name, a, b, self.expr(stiffness, where), self.expr(damping, where),
                          self.expr(rest_length, where))
        self._claim(name, where, FORCES)
        self.spring_dampers.append(el)
        return name

    def force(self, name: str, frame: str, vector, in_frame: str = INERTIAL) -> str:
        """Applied force at the origin of ``frame``, components given in ``in_frame``."""
        return self._applied(name, "force", frame, vector, in_frame)

    def torque(self, name: str, frame: str, vector, in_frame: str = INERTIAL) -> str:
        """Applied torque on the body carrying ``frame``, components given in ``in_frame``."""
        return self._applied(name, "torque", frame, vector, in_frame)

    def _applied(self, name, kind, frame, vector, in_frame) -> str:
        where = f"{kind} {name!r}"
        frame = self._frame_name(frame, where)
        in_frame = self._frame_name(in_frame, where + " (in_frame)")
        el = AppliedForce(name, kind, frame, self.vector(vector, where), in_frame)
        self._claim(name, where, FORCES)
        self.applied.append(el)
        return name
