"""The modal data of a beam body in one call: beam elements, modes, geometric stiffening.

Seed 002 §4.2 models each pendulum of a flexible double pendulum as a beam of 1 m extending in
-z from its frame of reference, the frame of node 1 (nodal-fixed frame), analysed with 10
elements, of which 4 nodes and 3 modes are exported (its SID file ``nodalfixed_yz_4n_3m``: modes
in the y-z plane).  :func:`beam_modal_data` is that recipe with those defaults::

    data = beam_modal_data(1.0, E=2.1e11, rho=7850, A=1e-4, Iy=8e-10, Iz=8e-10, plane="yz")

The material and the section have no defaults: they are the user's choice.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import ModelError
from .fe_beam import beam
from .fe_modes import fe_modal_data, held_dofs
from .geometric_stiffness import beam_geometric_stiffness
from .modal_data import ModalData

#: the DOFs (of DOF_NAMES) a node moves in within each plane; the others are held by ``plane``
_OUT_OF_PLANE = {"xy": ("uz", "rx", "ry"), "yz": ("ux", "ry", "rz"), "zx": ("uy", "rx", "rz")}


def beam_modal_data(length=1.0, *, E, rho, A, Iy, Iz, G=None, J=None, nu=0.3, theory="euler-bernoulli",
                    shear_area_y=None, shear_area_z=None, n_elements=10, export=4, modes=3,
                    axis=(0.0, 0.0, -1.0), start=(0.0, 0.0, 0.0), y_axis=None, bc="clamped", frame_node=1,
                    plane=None, damping=None, geometric_stiffening=True, reduction=None, boundary=None,
                    description=None) -> ModalData:
    """The ModalData of a straight beam (fe_beam.beam's arguments; fe_modes.fe_modal_data's ``bc``,
    ``frame_node``, ``modes``, ``export``, ``reduction``, ``boundary``, ``damping``).

    ``plane='xy'|'yz'|'zx'`` keeps the motion in that plane of R (the beam must lie in it): the
    out-of-plane translation and the two out-of-plane rotations of every node are held as well,
    so only in-plane bending and axial modes remain (torsion is out of plane); with bc='free' the
    in-plane rigid motions (zero frequency) are dropped.
    ``geometric_stiffening``: the 12 geometric stiffness matrices of geometric_stiffness.py with
    the same held DOFs as the modes (inertia relief for a free beam), projected as ksigma."""
    if not isinstance(geometric_stiffening, (bool, np.bool_)):
        raise ModelError(f"geometric_stiffening must be True or False, got {geometric_stiffening!r}")
    if description is not None and not isinstance(description, str):
        raise ModelError(f"description must be a text, got {description!r}")
    b = beam(length, n_elements, E=E, rho=rho, A=A, Iy=Iy, Iz=Iz, G=G, J=J, nu=nu, theory=theory,
             shear_area_y=shear_area_y, shear_area_z=shear_area_z, axis=axis, start=start, y_axis=y_axis)
    ids = b.node_ids
    free = isinstance(bc, str) and bc == "free"
    bc_label = bc if isinstance(bc, str) else "held DOFs"
    if plane is not None:
        if not isinstance(plane, str) or plane not in _OUT_OF_PLANE:
            raise ModelError(f"plane must be one of {', '.join(_OUT_OF_PLANE)} or None, got {plane!r}")
        normal = "xyz".index(next(c for c in "xyz" if c not in plane))
        if abs(b.rotation[0][normal]) > 1e-9:
            raise ModelError(f"plane={plane!r}: the beam's axis {tuple(float(x) for x in b.rotation[0])} "
                             f"does not lie in the {plane} plane (the motion out of it is held)")
        base = held_dofs(bc, ids, frame_node)
        extra = [6 * (k - 1) + ("ux", "uy", "uz", "rx", "ry", "rz").index(c)
                 for k in ids for c in _OUT_OF_PLANE[plane]]
        held = sorted(set(base) | set(extra))
        bc = [(ids[d // 6], d % 6 + 1) for d in held]
    # a free beam's stresses come from inertia relief, whatever the plane holds
    stiffening = (lambda held: beam_geometric_stiffness(b, [] if free else held)) if geometric_stiffening \
        else None
    if description is None:
        description = (f"beam {length} m along {tuple(float(x) for x in b.rotation[0])}, {n_elements} "
                       f"{theory} elements, bc {bc_label}"
                       f"{'' if plane is None else ', in plane ' + plane}")
    return fe_modal_data(b.M, b.K, b.nodes, bc=bc, frame_node=frame_node, modes=modes, export=export,
                      reduction=reduction, boundary=boundary, damping=damping,
                      geometric_stiffness=stiffening, description=description)
