"""The frame tree of a System (seed 002 sec. 4.1): frames placed in a reference frame by a
position vector and a rotation, the loops that close kinematic chains between two frames
(seed 000 sec. 4), and the kinematics of a frame as outputs.

A frame K is placed in its reference frame P by ``rel_pos`` (the vector from P's origin to K's,
in P components) and ``rel_rot`` (the rotation of K relative to P: elementary rotations, Cardan
angles or a 3 x 3 matrix that must be a rotation, R^T R = E and det R = +1, for every value of
its symbols).  The inertial frame ``ISYS`` is the root.
"""

from __future__ import annotations

import sympy as sp

from ..core.checks import keyword_alias
from ..core.errors import ModelError
from .elements import Frame, LoopClosure, Output
from .expression_checks import check_rotation_matrix
from .names import CONSTRAINTS, FRAMES, INERTIAL
from .rotations import Rotation, as_rotation


class Frames:
    """The commands of a System's frame tree (a part of :class:`~mbsfmu.model.System`)."""

    #: the quantities of :meth:`frame_output` and the suffixes of their components
    _FRAME_QUANTITIES = {"position": ("x", "y", "z"), "velocity": ("vx", "vy", "vz"),
                         "angular_velocity": ("wx", "wy", "wz")}

    # ------------------------------------------------------------------ checked values
    def vector(self, value, where: str) -> sp.Matrix:
        """A checked 3-vector of expressions (None is the zero vector; a string "[a, b, c]")."""
        if value is None:
            return sp.zeros(3, 1)
        if isinstance(value, str):
            value = [p for p in value.strip("[] ").replace(";", ",").split(",")]
        items = list(value)
        if len(items) != 3:
            raise ModelError(f"{where}: a 3-vector is needed, got {len(items)} components")
        return sp.Matrix([self.expr(v, where) for v in items])

    def _rotation(self, value, where: str) -> Rotation:
        try:
            rot = as_rotation(value)
        except (ValueError, TypeError, sp.SympifyError) as exc:
            raise ModelError(f"{where}: cannot read {value!r} as a rotation "
                             f"({' '.join(str(exc).split())})") from None
        for _, angle in rot.sequence:
            self.expr(angle, where)
        if rot.matrix_ is not None:
            check_rotation_matrix(self._matrix3(rot.matrix_, where), where, self._sample_values())
        return rot

    def _sample_values(self) -> dict:
        """Numbers for every declared symbol, for numerical checks of expressions: constants at
        their default values (else 0.7), anything else (coordinates, rates, time parameters,
        inputs, t) left to the caller's random samples."""
        return {c.symbol: c.value if c.value is not None else 0.7 for c in self.constants_.values()}

    def _frame_name(self, name: str, where: str) -> str:
        name = getattr(name, "name", name)
        if name not in self.frames:
            for fb in self.flexible_bodies.values():
                if isinstance(name, str) and name.startswith(fb.name + "_"):
                    raise ModelError(f"{where}: flexible body {fb.name!r} has no node frame {name!r} "
                                     f"(its nodes: {', '.join(str(nd.id) for nd in fb.data.nodes)}; "
                                     f"node frames: {', '.join(fb.node_frames)})")
            known = ", ".join(self.frames)
            raise ModelError(f"{where}: unknown reference frame {name!r} (known frames: {known})")
        return name

    # ------------------------------------------------------------------ frames
    def frame(self, name: str, ref: str = INERTIAL, rel_pos=None, rel_rot=None, *, pos=None,
              rot=None) -> str:
        """Add a frame placed in ``ref`` by the position vector ``rel_pos`` (from the origin of
        ``ref``, in ``ref`` components) and the rotation ``rel_rot`` (as for :meth:`body`).
        ``pos`` and ``rot`` are older aliases of ``rel_pos`` and ``rel_rot``."""
        where = f"frame {name!r}"
        rel_pos, pos_kw = keyword_alias(where, "rel_pos", rel_pos, "pos", pos)
        rel_rot, rot_kw = keyword_alias(where, "rel_rot", rel_rot, "rot", rot)
        fr = self._new_frame(name, ref, rel_pos, rel_rot, where, (pos_kw, rot_kw))
        self._claim(name, where, FRAMES)
        self.frames[name] = fr
        return name

    def _new_frame(self, name, ref, pos, rot, where, keywords=("rel_pos", "rel_rot")) -> Frame:
        """A checked Frame record (not yet added); ``keywords`` name the position and rotation
        arguments in messages."""
        ref = self._frame_name(ref, where)
        self._check_name(name, where, FRAMES)
        return Frame(name, ref, self.vector(pos, f"{where} {keywords[0]}"),
                     self._rotation(rot, f"{where} {keywords[1]}"))

    # ------------------------------------------------------------------ kinematic loops
    def loop(self, name: str, a: str, b: str, translations: str = "xyz", rotations: str = "",
             in_frame: str | None = None) -> str:
        """Close a kinematic loop between frames ``a`` and ``b`` (seed 000 §4).

        The origins of a and b must coincide along the ``translations`` axes of ``in_frame``
        (default: frame a), and a and b may not rotate relative to each other about the
        ``rotations`` axes of ``in_frame``.  One constraint per listed axis; e.g.
        ``loop('pin', 'crank_end', 'ISYS', translations='xy')`` for a planar revolute joint."""
        where = f"loop {name!r}"
        a = self._frame_name(a, where)
        b = self._frame_name(b, where)
        in_frame = self._frame_name(in_frame if in_frame is not None else a, where + " (in_frame)")
        if a == b:
            raise ModelError(f"{where}: both ends are on frame {a!r}")
        for label, axes in (("translations", translations), ("rotations", rotations)):
            if not isinstance(axes, str) or any(c not in "xyz" for c in axes) or len(set(axes)) != len(axes):
                raise ModelError(f"{where}: {label} must be distinct axes from 'xyz', got {axes!r}")
        if not translations and not rotations:
            raise ModelError(f"{where}: no translational or rotational direction is constrained")
        el = LoopClosure(name, a, b, translations, rotations, in_frame)
        self._claim(name, where, CONSTRAINTS)
        self.loops.append(el)
        return name

    def _closure_rows(self) -> list[str]:
        """``loop.x``, ``loop.rz``: one row per constrained axis of every loop."""
        rows = []
        for lp in self.loops:
            rows += [f"{lp.name}.{ax}" for ax in lp.translations]
            rows += [f"{lp.name}.r{ax}" for ax in lp.rotations]
        return rows

    # ------------------------------------------------------------------ outputs
    def frame_output(self, frame: str, quantity: str = "position", prefix: str | None = None) -> list[str]:
        """Outputs ``<prefix>.x/.y/.z`` (position), ``.vx/.vy/.vz`` (velocity) or
        ``.wx/.wy/.wz`` (angular velocity) of a frame, in ISYS components."""
        frame = self._frame_name(frame, f"frame output {frame!r}")
        if quantity not in self._FRAME_QUANTITIES:
            raise ModelError(f"frame output of {frame!r}: quantity must be one of "
                             f"{', '.join(self._FRAME_QUANTITIES)}, got {quantity!r}")
        names = []
        for i, comp in enumerate(self._FRAME_QUANTITIES[quantity]):
            names.append(self._add_output(Output(
                f"{prefix or frame}.{comp}", f"{quantity.replace('_', ' ')} of frame {frame} "
                f"({'xyz'[i]}, ISYS)", frame=frame, quantity=quantity, component=i)))
        return names
