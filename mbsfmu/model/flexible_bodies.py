"""Flexible bodies of a System (seed 002 "Step 2-4 (elastic)"; Schwertassek and Wallrapp's
standard input data, SID): a frame of reference R placed like a rigid body's primary frame,
elastic coordinates q (one per mode) and one frame per node, placed in R at the node's
deformed position; and the elastic deflections u = Phi q of the nodes as outputs.  Their
equations are in :mod:`mbsfmu.equations.flexible`.
"""

from __future__ import annotations

import os

import sympy as sp

from ..core.errors import ModelError
from .elastic import modal_data as md
from .elastic.modal_data import check_frame_node, linear_form
from .elements import FlexibleBody, Frame
from .names import FRAMES, INERTIAL, SYMBOLS
from .rotations import Rotation


class FlexibleBodies:
    """The flexible-body commands of a System (a part of :class:`~mbsfmu.model.System`)."""

    def flexible_body(self, name: str, ref: str = INERTIAL, rel_pos=None, rel_rot=None, data=None,
                      geometric_stiffening: bool = True, stiffness_factor=1, damping_factor=1) -> str:
        """Add a flexible body (seed 002 "Step 2-4 (elastic)"; Schwertassek and Wallrapp's SID).

        ``data`` is a :class:`~mbsfmu.model.elastic.ModalData` or the path of an mbsfmu-sid
        JSON file (:func:`~mbsfmu.model.elastic.load`).  The body's frame of reference R is the
        frame ``name``, placed in ``ref`` by ``rel_pos``/``rel_rot`` as the primary frame of
        :meth:`body`.  Its elastic coordinates q are new coordinates ``<name>_<mode>`` (mode
        names from ``data.modes``, default q01, q02, ...), starting at 0 (set them with
        :meth:`initial` like any coordinate).  Every node gets a frame ``<name>_<node id>``,
        an ordinary frame placed in R at

            c(q) = origin.M0 + origin.M1 q,    rotated by  rot_x(a_1) rot_y(a_2) rot_z(a_3),  a = psi q,

        the elementary rotations by the small angles psi q: equal to the node's small rotation
        to first order in q, and exact as a placement (its velocities follow from it), so force
        elements, loops, outputs and bodies on a node frame keep the equations consistent.  The
        frame of ``data.frame_node`` coincides with R (its mode shapes must vanish).
        ``geometric_stiffening``: use ``data.ksigma`` (if given) as in
        :mod:`mbsfmu.equations.flexible`.  ``stiffness_factor``, ``damping_factor``: numbers or
        expressions of constants multiplying the modal stiffness Ke and damping De (a constant
        makes them FMU parameters that a sweep can vary; for a beam, scaling Ke is scaling E).
        Everything is checked before the system changes."""
        where = f"flexible body {name!r}"
        if not isinstance(geometric_stiffening, bool):
            raise ModelError(f"{where}: geometric_stiffening must be True or False, got "
                             f"{geometric_stiffening!r}")
        factors = []
        for label, value in (("stiffness_factor", stiffness_factor), ("damping_factor", damping_factor)):
            e = self.expr(value, f"{where}: {label}")
            bad = e.free_symbols - {c.symbol for c in self.constants_.values()}
            if bad:
                raise ModelError(f"{where}: {label} may depend on constants only, not on "
                                 f"{sorted(map(str, bad))}")
            if e.is_number and not (e.is_real and e >= 0):
                raise ModelError(f"{where}: {label} must be a number >= 0, got {value!r}")
            factors.append(e)
        self._check_name(name, where, FRAMES)
        data = self._modal_data(data, where)
        modes = list(data.modes) if data.modes else [f"q{j + 1:02d}" for j in range(data.n)]
        coords = [f"{name}_{mode}" for mode in modes]
        node_frames = [f"{name}_{nd.id}" for nd in data.nodes]
        for cname in coords:
            cw = f"elastic coordinate {cname!r} of {where}"
            self._check_name(cname, cw, SYMBOLS, fmu=True)
            for dn in ("D" + cname, "D2" + cname):
                self._check_name(dn, f"rates of {cw}", SYMBOLS)
        if len(set(coords)) != len(coords):
            raise ModelError(f"{where}: mode names repeat ({', '.join(modes)})")
        for fname in node_frames:
            self._check_name(fname, f"node frame {fname!r} of {where}", FRAMES)
        primary = self._new_frame(name, ref, rel_pos, rel_rot, where)
        if data.frame_node is not None:
            check_frame_node(data, where)

        self._claim(name, where, FRAMES)
        self.frames[name] = primary
        syms = [self.coordinate(cname) for cname in coords]
        for nd, fname in zip(data.nodes, node_frames):
            if nd.id == data.frame_node:
                pos, rot = sp.zeros(3, 1), Rotation()
            else:
                pos = sp.Matrix([linear_form(nd.origin.M0[i], nd.phi[i], syms) for i in range(3)])
                angles = [linear_form(0.0, nd.psi[i], syms) for i in range(3)]
                rot = Rotation(tuple((ax, a) for ax, a in zip("xyz", angles) if a != 0))
            self._claim(fname, f"node frame {fname!r} of {where}", FRAMES)
            self.frames[fname] = Frame(fname, name, pos, rot)
        self.flexible_bodies[name] = FlexibleBody(name, name, data, coords, node_frames,
                                                  bool(geometric_stiffening), *factors)
        return name

    @staticmethod
    def _modal_data(data, where: str):
        """The checked ModalData of ``data`` (a ModalData or a path of an mbsfmu-sid file)."""
        if isinstance(data, md.ModalData):
            try:
                data.check()
            except ModelError as exc:
                raise ModelError(f"{where}: {exc}") from None
            return data
        if isinstance(data, (str, os.PathLike)):
            try:
                return md.load(data)
            except ModelError as exc:
                raise ModelError(f"{where}: {exc}") from None
        raise ModelError(f"{where}: data must be modal data (mbsfmu.model.elastic.ModalData) or the "
                         f"path of an mbsfmu-sid JSON file, got {type(data).__name__}")

    def deflection_output(self, node_frame: str, prefix: str | None = None) -> list[str]:
        """Outputs ``<prefix>.ux/.uy/.uz``: the elastic displacement u = Phi q of a flexible
        body's node (the node frame's name, e.g. ``'P1_11'``), in the components of the body's
        frame of reference (seed 002 "Step 3 (elastic)": u = Phi(R) y_elastic).  The node's
        position is :meth:`frame_output` of the same frame."""
        where = f"deflection output {node_frame!r}"
        for fb in self.flexible_bodies.values():
            if node_frame in fb.node_frames:
                node = fb.data.nodes[fb.node_frames.index(node_frame)]
                q = [self.coordinates_[c].symbol for c in fb.coordinates]
                names = []
                for i, comp in enumerate(("ux", "uy", "uz")):
                    u = linear_form(0.0, node.phi[i], q)
                    names.append(self.output(f"{prefix or node_frame}.{comp}", u,
                                             f"elastic displacement of node {node_frame} ({'xyz'[i]}, "
                                             f"frame {fb.frame})"))
                return names
        nodes = [n for fb in self.flexible_bodies.values() for n in fb.node_frames]
        raise ModelError(f"{where}: not a node of a flexible body (nodes: {', '.join(nodes) or 'none'})")
