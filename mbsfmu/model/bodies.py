"""Rigid bodies of a System (Neweul-M2's ``newBody``, seed 002 sec. 4.1): a primary frame placed
in a reference frame, a centre-of-gravity frame placed in it, a mass and an inertia tensor about
the centre of gravity in cg-frame components.  Mass and inertia are checked where they have
values (positive mass; symmetric, positive semi-definite inertia whose principal moments satisfy
J1 + J2 >= J3) when the body is declared, the others when parameter values are given.
"""

from __future__ import annotations

import sympy as sp

from ..core.errors import ModelError
from .element_checks import check_mass_properties
from .elements import Body
from .names import FRAMES, INERTIAL


class Bodies:
    """The rigid-body command of a System (a part of :class:`~mbsfmu.model.System`)."""

    def body(self, name: str, ref: str = INERTIAL, rel_pos=None, rel_rot=None, cg_pos=None,
             cg_rot=None, mass=None, inertia=None) -> str:
        """Add a rigid body (``newBody``).

        Creates the primary frame ``name`` placed in ``ref`` by ``rel_pos``/``rel_rot`` and the
        centre-of-gravity frame ``name + '_cg'`` placed in the primary frame by
        ``cg_pos``/``cg_rot``.  A rotation is a :class:`Rotation` (``rot_z(q)``, ``cardan``, ...),
        three Cardan angles or a 3x3 matrix; a matrix must be a rotation (R^T R = E, det R = +1)
        for every value of its symbols (:func:`check_rotation_matrix`).  ``inertia`` is about
        the centre of gravity, in cg-frame components (a 3x3 matrix or three principal values).
        Everything is checked before the system is changed, so a rejected body leaves no trace."""
        where = f"body {name!r}"
        self._check_name(name, where, FRAMES)
        if mass is None:
            raise ModelError(f"{where}: a mass is needed")
        m = self.expr(mass, f"{where} mass")
        I = self._matrix3(inertia if inertia is not None else sp.zeros(3, 3), f"{where} inertia")
        asym = [(i, j) for i in range(3) for j in range(i + 1, 3)
                if sp.simplify(I[i, j] - I[j, i]) != 0]
        if asym:
            i, j = asym[0]
            raise ModelError(f"{where}: inertia tensor is not symmetric "
                             f"(I[{i},{j}] = {I[i, j]} but I[{j},{i}] = {I[j, i]})")
        cg = name + "_cg"
        primary = self._new_frame(name, ref, rel_pos, rel_rot, where)
        self._check_name(cg, f"cg frame of {where}", FRAMES)
        self.frames[name] = primary  # temporarily, so that the cg frame can refer to it
        try:
            cg_frame = self._new_frame(cg, name, cg_pos, cg_rot, where, ("cg_pos", "cg_rot"))
        finally:
            del self.frames[name]
        body = Body(name, name, cg, m, I)
        defaults = self.default_parameters(strict=False)
        if all(s.name in defaults for s in (m.free_symbols | I.free_symbols)):
            check_mass_properties(body, defaults)
        self._claim(name, where, FRAMES)
        self._claim(cg, f"cg frame of {where}", FRAMES)
        self.frames[name] = primary
        self.frames[cg] = cg_frame
        self.bodies[name] = body
        return name
