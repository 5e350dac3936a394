"""Modal data of a flexible body: the Standard Input Data (SID) of Schwertassek and Wallrapp.

A flexible body moves as its frame of reference R plus a small elastic deformation described by
a Ritz approach over n shape functions (seed 002 §2, "Step 3 (elastic)"),

    r_P = r_R + S_R (c_P + Phi_P q),        rotation of a node: small angles Psi_P q,

with q the body's elastic coordinates.  With z = [v; w; q'] (the velocity of R's origin and R's
angular velocity in R components, and q'), the kinetic energy is T = 1/2 z^T Mbar(q) z with the
body's mass matrix (all blocks in R components)

    Mbar(q) = [[ m I,         mdCM(q)~^T,   Ct^T    ],
               [ mdCM(q)~,    J(q),         Cr(q)^T ],
               [ Ct,          Cr(q),        Me      ]]

where ``a~`` is the cross-product matrix of a.  Each quantity is a :class:`Taylor` object, a
polynomial in q with the coefficients the standard names M0, M1 (first order) and M2 (second
order):

===========  =================  ==========================================================
name         shape of M0        meaning
===========  =================  ==========================================================
mass         scalar             m, the body's mass
mdCM         (3,)               first moment of mass int c dm; M1 (3, n) = Ct^T
J            (3, 3)             inertia tensor about R's origin; M1 (3, 3, n), M2 (3, 3, n, n)
Ct           (n, 3)             translational coupling int Phi^T dm
Cr           (n, 3)             rotational coupling int Phi^T c~ dm ...; M1 (n, 3, n)
Me           (n, n)             modal mass int Phi^T Phi dm
Ke, De       (n, n)             modal stiffness and damping
ksigma       M1 (n, n, 12)      geometric stiffening: K_sigma = sum_l M1[:, :, l] * load_l
                                over the loads of :data:`LOAD_CASES`
===========  =================  ==========================================================

Each node (``nodes``) has ``origin`` (M0 its undeformed position (3,), M1 (3, n) its
translational mode shapes Phi) and ``psi`` (3, n), its rotational mode shapes.  ``frame_node``
names the node whose frame the frame of reference is (its mode shapes vanish there).

J carries its second-order term: Mbar(q) is then the exact mass matrix of the discretized body
for the Ritz approach, so that the centrifugal softening of a spinning beam (the term that makes
the spin-up benchmark of Kane, Ryan and Banerjee diverge without stiffening) is in the equations,
and ``ksigma`` is what bounds it.

:func:`from_fe` computes every quantity from a finite-element model with six degrees of freedom
per node (three displacements, three small rotations): the nodal velocities are V = B(q) z with,
for node i,

    translation rows:  [ I,  -c_i(q)~,  Phi_i ],        c_i(q) = X_i + Phi_i q
    rotation rows:     [ 0,   I,        Psi_i ],

so T = 1/2 V^T M_fe V gives Mbar(q) = B(q)^T M_fe B(q), B(q) = B0 + sum_j q_j B1_j, with one
exception: mdCM's first-order term is taken as Ct^T (the SID's definition), which the block of
B^T M_fe B misses by the rotation rows' share when M_fe couples translations and rotations (a
consistent beam mass; for a lumped mass the two agree).  Mbar(q) stays symmetric, and the
equations (Euler-Poincare, exact for any such T) stay energy-conserving.

The file format (:func:`save`, :func:`load`) is JSON: ``{"format": "mbsfmu-sid", "version": 1,
"mass": m, "mdCM": {"M0": ..., "M1": ...}, "J": {...}, "Ct": {...}, "Cr": {...},
"Me": {"M0": ...}, "Ke": {"M0": ...}, "De": {"M0": ...}, "ksigma": {"M1": ...} (optional),
"nodes": [{"id": 1, "origin": {"M0": ..., "M1": ...}, "psi": {"M0": ...}}, ...],
"frame_node": 1, "modes": ["q01", ...], "frequencies_hz": [...] (optional),
"description": "..."}``, arrays as nested lists in the shapes above.
"""

from __future__ import annotations

import json
import math
import numbers
import pathlib
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ...core.errors import ModelError
from ..matrices import check_symmetric, real_array

#: the loads of the geometric stiffening, in this order: the acceleration of R's origin less
#: gravity, R's angular acceleration, and the six products of R's angular velocity (R components)
LOAD_CASES = ("a_x", "a_y", "a_z", "alpha_x", "alpha_y", "alpha_z",
              "w_x*w_x", "w_y*w_y", "w_z*w_z", "w_x*w_y", "w_y*w_z", "w_z*w_x")

FORMAT = "mbsfmu-sid"
VERSION = 1


@dataclass
class Taylor:
    """A quantity as a polynomial in the elastic coordinates: M0 + M1 q + M2 q q.

    M1's last axis and M2's last two axes run over the coordinates; a missing order is zero."""

    M0: np.ndarray
    M1: np.ndarray | None = None
    M2: np.ndarray | None = None

    def at(self, q) -> np.ndarray:
        """The value at q (numbers)."""
        q = np.asarray(q, dtype=float)
        out = np.array(self.M0, dtype=float)
        if self.M1 is not None:
            out = out + self.M1 @ q
        if self.M2 is not None:
            out = out + (self.M2 @ q) @ q
        return out

    def to_json(self) -> dict:
        return {k: np.asarray(v).tolist() for k, v in (("M0", self.M0), ("M1", self.M1), ("M2", self.M2))
                if v is not None}


@dataclass
class Node:
    """A node of the body: its id, undeformed position and translational mode shapes
    (``origin``: M0 (3,), M1 (3, n)) and rotational mode shapes ``psi`` (3, n)."""

    id: int
    origin: Taylor
    psi: np.ndarray

    @property
    def position(self) -> np.ndarray:
        return np.asarray(self.origin.M0, dtype=float)

    @property
    def phi(self) -> np.ndarray:
        return np.asarray(self.origin.M1, dtype=float)


@dataclass
class ModalData:
    """The SID of one flexible body (see the module docstring for every quantity)."""

    mass: float
    mdCM: Taylor
    J: Taylor
    Ct: Taylor
    Cr: Taylor
    Me: np.ndarray
    Ke: np.ndarray
    De: np.ndarray
    nodes: list[Node]
    frame_node: int | None = None
    ksigma: Taylor | None = None
    modes: list[str] = field(default_factory=list)
    frequencies_hz: list[float] | None = None
    description: str = ""

    @property
    def n(self) -> int:
        """The number of elastic coordinates."""
        return int(np.shape(self.Me)[0])

    def node(self, node_id: int) -> Node:
        for nd in self.nodes:
            if nd.id == node_id:
                return nd
        known = ", ".join(str(n.id) for n in self.nodes)
        raise ModelError(f"modal data: no node {node_id!r} (nodes: {known})")

    def mass_matrix(self, q) -> np.ndarray:
        """Mbar(q) (6 + n square) at numbers q, the body's mass matrix of the module docstring."""
        n = self.n
        out = np.zeros((6 + n, 6 + n))
        out[:3, :3] = self.mass * np.eye(3)
        mc = _skew(self.mdCM.at(q))
        out[3:6, :3], out[:3, 3:6] = mc, mc.T
        out[3:6, 3:6] = self.J.at(q)
        out[6:, :3], out[:3, 6:] = self.Ct.M0, np.asarray(self.Ct.M0).T
        Cr = self.Cr.at(q)
        out[6:, 3:6], out[3:6, 6:] = Cr, Cr.T
        out[6:, 6:] = self.Me
        return out

    def check(self, rtol: float = 1e-8) -> None:
        """ModelError naming the quantity when a value is missing or not what it must be: the
        mass a positive number; every table real and finite, of the shape the number of modes n
        gives (n is the count most quantities agree on, so a wrong Me is named as Me, with the
        expected and the actual shape); Me symmetric positive definite, Ke, De and J.M0 symmetric
        positive semidefinite; mdCM's first-order term Ct^T (the two are one integral); node ids
        whole numbers >= 0, each once; ``frame_node`` one of them; ``modes`` n distinct names,
        ``frequencies_hz`` n numbers >= 0, ``description`` a text."""
        mass = self.mass
        if isinstance(mass, (bool, np.bool_)) or not isinstance(mass, numbers.Real) \
                or not (math.isfinite(mass) and mass > 0):
            raise ModelError(f"modal data: mass must be a positive number, got {mass!r}")
        for name in ("mdCM", "J", "Ct", "Cr", "ksigma"):
            value = getattr(self, name)
            if not isinstance(value, Taylor) and (value is not None or name != "ksigma"):
                raise ModelError(f"modal data: {name} must be a Taylor (its terms M0, M1, M2), got "
                                 f"{type(value).__name__}")
        if not isinstance(self.nodes, (list, tuple)) or not all(isinstance(nd, Node) for nd in self.nodes):
            raise ModelError(f"modal data: nodes must be a list of Node, got {self.nodes!r:.80}")
        ids = [node_id(nd.id, "modal data: nodes") for nd in self.nodes]
        tables = self._tables()
        n, agree = _mode_count(tables, self.modes, self.frequencies_hz)
        for name, (a, shape) in tables.items():
            want = tuple(n if d is None else d for d in shape)
            if a.shape != want:
                raise ModelError(f"modal data: {name} has the shape {a.shape}, expected {want} "
                                 f"(n = {n} modes, the count of {agree})")
        if self.Ct.M1 is not None or self.Ct.M2 is not None:
            raise ModelError("modal data: Ct has no terms in q here (Ct = int Phi^T dm is constant for a "
                             "linear Ritz approach); remove Ct.M1/M2")
        # J.M0 semidefinite: point masses on a line (a lumped slender beam) have no inertia about it
        for name, definite in (("Me", True), ("Ke", False), ("De", False), ("J.M0", False)):
            check_symmetric(tables[name][0], f"modal data: {name}", definite=definite, rtol=rtol)
        Ct, mdCM1 = tables["Ct.M0"][0], tables["mdCM.M1"][0]
        scale = max(np.abs(Ct).max(initial=0.0), self.mass * 1e-12)
        if np.abs(mdCM1 - Ct.T).max(initial=0.0) > rtol * scale * 1e3:
            raise ModelError("modal data: mdCM.M1 differs from Ct^T; both are the integral of the "
                             "translational mode shapes over the mass")
        if len(set(ids)) != len(ids):
            raise ModelError(f"modal data: node ids repeat ({ids})")
        # (that the frame node sits at R's origin with vanishing shapes is checked where the body
        # is placed, System.flexible_body)
        if self.frame_node is not None:
            if node_id(self.frame_node, "modal data: frame_node") not in ids:
                raise ModelError(f"modal data: frame_node {self.frame_node!r} is not a node (nodes: {ids})")
        mode_name_list(self.modes, n)
        mode_frequencies(self.frequencies_hz, n)
        if not isinstance(self.description, str):
            raise ModelError(f"modal data: description must be a text, got {self.description!r}")

    def _tables(self) -> dict:
        """name -> (float array, shape with None for n) of every table, each real and finite."""
        want = {"Me": (self.Me, (None, None)), "Ke": (self.Ke, (None, None)), "De": (self.De, (None, None)),
                "Ct.M0": (self.Ct.M0, (None, 3)), "Cr.M0": (self.Cr.M0, (None, 3)),
                "mdCM.M0": (self.mdCM.M0, (3,)), "mdCM.M1": (self.mdCM.M1, (3, None)),
                "J.M0": (self.J.M0, (3, 3))}
        if self.J.M1 is not None:
            want["J.M1"] = (self.J.M1, (3, 3, None))
        if self.J.M2 is not None:
            want["J.M2"] = (self.J.M2, (3, 3, None, None))
        if self.Cr.M1 is not None:
            want["Cr.M1"] = (self.Cr.M1, (None, 3, None))
        if self.ksigma is not None:
            want["ksigma.M1"] = (self.ksigma.M1, (None, None, len(LOAD_CASES)))
        for nd in self.nodes:
            want[f"node {nd.id} origin.M0"] = (nd.origin.M0, (3,))
            want[f"node {nd.id} origin.M1"] = (nd.origin.M1, (3, None))
            want[f"node {nd.id} psi"] = (nd.psi, (3, None))
        return {name: (real_array(value, f"modal data: {name}"), shape)
                for name, (value, shape) in want.items()}


def check_frame_node(data, where: str, rtol: float = 1e-9) -> None:
    """ModelError unless the node ``data.frame_node`` is R's origin with vanishing mode shapes
    (its frame is R's, so what the data say of it must agree)."""
    nd = data.node(data.frame_node)
    size = max([float(np.abs(n.position).max(initial=0.0)) for n in data.nodes] + [1e-300])
    shape = max([float(np.abs(n.phi).max(initial=0.0)) for n in data.nodes]
                + [float(np.abs(n.psi).max(initial=0.0)) for n in data.nodes] + [1e-300])
    for what, value, scale in (("position (origin.M0)", nd.position, size),
                               ("translational mode shapes (origin.M1)", nd.phi, shape),
                               ("rotational mode shapes (psi)", nd.psi, shape)):
        if float(np.abs(np.asarray(value, dtype=float)).max(initial=0.0)) > rtol * scale:
            raise ModelError(f"{where}: frame_node {nd.id} is the frame of reference, so its {what} "
                             f"must vanish; got {np.asarray(value).tolist()}")


def linear_form(c0, c1, syms) -> sp.Expr:
    """c0 + c1 . syms with the numbers as sympy Floats (exact zeros dropped): the modal data's
    polynomials in the elastic coordinates (node positions, mdCM, Cr, their rates)."""
    terms = [sp.Float(float(c0))] if float(c0) != 0.0 else []
    terms += [sp.Float(float(c)) * s for c, s in zip(c1, syms) if float(c) != 0.0]
    return sp.Add(*terms)


def _mode_count(tables: dict, modes, frequencies) -> tuple[int, str]:
    """(n, the quantities that give it): the number of modes most tables (and the lists of mode
    names and frequencies) agree on, so that the one quantity that disagrees is named."""
    votes: dict[int, list[str]] = {}
    for name, (a, shape) in tables.items():
        sizes = {a.shape[k] for k, d in enumerate(shape) if d is None and k < a.ndim}
        for size in sizes:
            votes.setdefault(size, []).append(name)
    for name, value in (("modes", modes), ("frequencies_hz", frequencies)):
        if isinstance(value, (list, tuple, np.ndarray)) and len(value):
            votes.setdefault(len(value), []).append(name)
    if not votes:
        raise ModelError("modal data: no table gives the number of modes (Me, Ke, Ct, ...)")
    n = max(votes, key=lambda k: len(votes[k]))  # ties: the first count seen (Me's)
    if n < 1:
        raise ModelError("modal data: no modes (Me is 0 x 0); a body without elastic modes is a rigid "
                         "body (System.body)")
    names = [name for name in votes[n] if name not in tables or tables[name][0].shape
             == tuple(n if d is None else d for d in tables[name][1])]
    return n, ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def node_id(value, where: str, in_json: bool = False) -> int:
    """A node id: a whole number >= 0 (not True/False, not 4.7, not '2'), as int; the message
    shows the value as written in Python, or in JSON (``in_json``: true, null, "2")."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 0:
        shown = json.dumps(value) if in_json else repr(value)
        raise ModelError(f"{where}: {shown} is not a node id (a whole number >= 0)")
    return int(value)


def mode_name_list(names, n: int) -> list[str]:
    """The names of n modes ([] for the defaults q01, q02, ...): distinct texts of letters,
    digits and underscores (each becomes part of a coordinate name, <body>_<mode>)."""
    if names is None or (isinstance(names, (list, tuple)) and not names):
        return []
    if not isinstance(names, (list, tuple)) or not all(isinstance(x, str) for x in names):
        raise ModelError(f"modal data: modes must be a list of names, got {names!r}")
    if len(names) != n:
        raise ModelError(f"modal data: {len(names)} mode names for {n} modes")
    bad = [x for x in names if not f"q_{x}".isidentifier()]
    if bad:
        raise ModelError(f"modal data: mode name {bad[0]!r} is not letters, digits and underscores")
    twice = sorted({x for x in names if names.count(x) > 1})
    if twice:
        raise ModelError(f"modal data: mode names repeat ({', '.join(twice)})")
    return list(names)


def mode_frequencies(value, n: int) -> list[float] | None:
    """The natural frequencies of n modes as floats (None: not given); ModelError unless they
    are n finite numbers >= 0."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple, np.ndarray)):
        raise ModelError(f"modal data: frequencies_hz must be a list of {n} frequencies [Hz], got "
                         f"{value!r}")
    f = real_array(value, "modal data: frequencies_hz")
    if f.shape != (n,):
        raise ModelError(f"modal data: frequencies_hz must be {n} numbers (one per mode), got the "
                         f"shape {f.shape}")
    if np.any(f < 0):
        raise ModelError(f"modal data: frequencies_hz must be >= 0, got {float(f.min())!r}")
    return [float(x) for x in f]


def _skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _skew_basis() -> np.ndarray:
    """E (3, 3, 3) with E[:, :, k] = e_k~, so a~ = E @ a."""
    E = np.zeros((3, 3, 3))
    for k in range(3):
        E[:, :, k] = _skew(np.eye(3)[k])
    return E


def from_fe(M_fe, K_fe, nodes_xyz, modes, *, node_ids=None, export=None, frame_node=None,
            damping=None, geometric_stiffness=None, frequencies_hz=None, mode_names=None,
            description: str = "") -> ModalData:
    """The modal data of a finite-element body with six degrees of freedom per node.

    ``M_fe``, ``K_fe``: mass and stiffness matrices (6N square, the nodes' [u_x, u_y, u_z,
    theta_x, theta_y, theta_z] in node order, R components); ``nodes_xyz`` (N, 3): the undeformed
    node positions in R; ``modes`` (6N, n): the shape functions over every degree of freedom
    (zero where the body is held, e.g. at the node R is attached to).  ``node_ids`` (default
    1..N) name the nodes, ``export`` the ids of the nodes to keep in the data (default all; the
    integrals always run over the whole model).  ``damping``: None, a modal damping matrix (n, n),
    or a damping ratio zeta for every mode (De = 2 zeta sqrt(Ke_jj Me_jj) on the diagonal).
    ``geometric_stiffness``: 12 matrices (6N square), the geometric stiffness of the stresses
    under a unit value of each load of :data:`LOAD_CASES`; projected onto the modes as ksigma.

    Mbar(q) = B(q)^T M_fe B(q) (module docstring) gives every inertia quantity but mdCM.M1 (= Ct^T),
    Ke = Phi^T K_fe Phi.
    """
    M_fe = real_array(M_fe, "finite-element model: the mass matrix")
    K_fe = real_array(K_fe, "finite-element model: the stiffness matrix")
    X = real_array(nodes_xyz, "finite-element model: the node coordinates")
    Phi = real_array(modes, "finite-element model: the matrix of mode shapes")
    if X.ndim != 2 or X.shape[1] != 3:
        raise ModelError(f"finite-element model: node coordinates must be (N, 3), got the shape {X.shape}")
    N = X.shape[0]
    dof = 6 * N
    for what, A in (("mass matrix", M_fe), ("stiffness matrix", K_fe)):
        if A.shape != (dof, dof):
            raise ModelError(f"finite-element model: the {what} has the shape {A.shape}, expected "
                             f"({dof}, {dof}) for {N} nodes with 6 degrees of freedom each")
    check_symmetric(M_fe, "finite-element model: the mass matrix", definite=False)
    check_symmetric(K_fe, "finite-element model: the stiffness matrix", definite=False)
    if Phi.ndim != 2 or Phi.shape[0] != dof or Phi.shape[1] < 1:
        raise ModelError(f"finite-element model: the mode shapes must be ({dof}, n >= 1), "
                         f"got the shape {Phi.shape}")
    n = Phi.shape[1]
    ids = list(range(1, N + 1)) if node_ids is None else node_ids_of(node_ids, "finite-element model")
    if len(ids) != N or len(set(ids)) != N:
        raise ModelError(f"finite-element model: node_ids must be {N} different numbers, got {node_ids!r}")

    # B(q) = B0 + sum_j q_j B1[j]; rows 6i..6i+2 translation of node i, 6i+3..6i+5 its rotation
    B0 = np.zeros((dof, 6 + n))
    B1 = np.zeros((n, dof, 6 + n))
    E = _skew_basis()
    for i in range(N):
        t, r = slice(6 * i, 6 * i + 3), slice(6 * i + 3, 6 * i + 6)
        B0[t, :3] = np.eye(3)
        B0[t, 3:6] = -_skew(X[i])
        B0[t, 6:] = Phi[t]
        B0[r, 3:6] = np.eye(3)
        B0[r, 6:] = Phi[r]
        for j in range(n):
            B1[j, t, 3:6] = -(E @ Phi[t, j])
    MB0 = M_fe @ B0
    Mbar0 = B0.T @ MB0
    Mbar1 = np.stack([B0.T @ M_fe @ B1[j] + B1[j].T @ MB0 for j in range(n)], axis=-1)  # (6+n, 6+n, n)
    MB1 = np.stack([M_fe @ B1[j] for j in range(n)])
    Mbar2 = np.einsum("jda,kdb->abjk", B1, MB1)  # (6+n, 6+n, n, n): B1_j^T M B1_k

    mass = float(np.trace(Mbar0[:3, :3]) / 3)
    if not np.allclose(Mbar0[:3, :3], mass * np.eye(3), rtol=1e-9, atol=1e-12 * abs(mass)):
        raise ModelError("finite-element model: the mass matrix does not give the same mass in x, y and z "
                         "(its rigid-body translations are not represented)")
    if not mass > 0:
        raise ModelError(f"finite-element model: the total mass is {mass!r}, not positive")

    def vee(A):  # the vector a of a skew part A = a~
        S = (A - A.T) / 2
        return np.array([S[2, 1], S[0, 2], S[1, 0]])

    mdCM0 = vee(Mbar0[3:6, :3])
    Ct0 = Mbar0[6:, :3]
    # mdCM.M1 = Ct^T, the SID definition (mdCM(q) = int (c + Phi q) dm).  B(q)^T M_fe B(q) alone
    # gives vee(Mbar1[3:6, :3, j]), which misses the term Psi^T (sum_k M_fe[rot, trans_k]) that a
    # consistent mass matrix (translation-rotation coupling, e.g. a beam's) puts into Ct; for a
    # lumped mass matrix the two are equal.  Using Ct^T keeps the momentum m v + ... equal to the
    # mass times the velocity of the centre of mass of the interpolated field.
    mdCM1 = np.array(Ct0.T)
    Cr0 = Mbar0[6:, 3:6]
    Cr1 = Mbar1[6:, 3:6, :]
    J0 = Mbar0[3:6, 3:6]
    J1 = Mbar1[3:6, 3:6, :]
    J2 = Mbar2[3:6, 3:6, :, :]
    J2 = (J2 + J2.transpose(0, 1, 3, 2)) / 2
    Me = (Mbar0[6:, 6:] + Mbar0[6:, 6:].T) / 2
    Ke = Phi.T @ K_fe @ Phi
    Ke = (Ke + Ke.T) / 2
    De = modal_damping(damping, Ke, Me)
    ksigma = None
    if geometric_stiffness is not None:
        if len(geometric_stiffness) != len(LOAD_CASES):
            raise ModelError(f"geometric_stiffness must hold {len(LOAD_CASES)} matrices, one per load of "
                             f"{', '.join(LOAD_CASES)}; got {len(geometric_stiffness)}")
        ks = np.stack([Phi.T @ np.asarray(G, dtype=float) @ Phi for G in geometric_stiffness], axis=-1)
        ksigma = Taylor(M0=np.zeros((n, n)), M1=(ks + ks.transpose(1, 0, 2)) / 2)

    keep = ids if export is None else node_ids_of(export, "finite-element model: export")
    for k in keep:
        if k not in ids:
            raise ModelError(f"finite-element model: export names node {k}, which is not a node "
                             f"(nodes {ids[0]}..{ids[-1]})")
    node_list = []
    for k in keep:
        i = ids.index(k)
        t, r = slice(6 * i, 6 * i + 3), slice(6 * i + 3, 6 * i + 6)
        node_list.append(Node(id=k, origin=Taylor(M0=X[i].copy(), M1=Phi[t].copy()), psi=Phi[r].copy()))
    names = list(mode_names) if mode_names is not None else [f"q{j + 1:02d}" for j in range(n)]
    data = ModalData(mass=mass, mdCM=Taylor(M0=mdCM0, M1=mdCM1), J=Taylor(M0=J0, M1=J1, M2=J2),
                     Ct=Taylor(M0=Ct0), Cr=Taylor(M0=Cr0, M1=Cr1), Me=Me, Ke=Ke, De=De, nodes=node_list,
                     frame_node=frame_node, ksigma=ksigma, modes=mode_name_list(names, n),
                     frequencies_hz=mode_frequencies(frequencies_hz, n), description=description)
    data.check()
    return data


def node_ids_of(value, where: str) -> list[int]:
    """A list of node ids (each checked by :func:`node_id`)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ModelError(f"{where}: give a list of node ids, got {value!r}")
    return [node_id(k, where) for k in value]


def modal_damping(damping, Ke, Me) -> np.ndarray:
    """De: None (no damping), one damping ratio zeta >= 0 for every mode (De = 2 zeta sqrt(Ke_jj
    Me_jj) on the diagonal), or a modal damping matrix (n x n)."""
    n = len(Me)
    if damping is None:
        return np.zeros((n, n))
    if isinstance(damping, (bool, np.bool_)) or isinstance(damping, (str, bytes)):
        raise ModelError(f"damping must be a damping ratio (a number >= 0) or a modal damping matrix "
                         f"of {n} x {n}, got {damping!r}")
    if np.ndim(damping) == 0:
        if not isinstance(damping, numbers.Real) or not (math.isfinite(damping) and damping >= 0):
            raise ModelError(f"damping ratio must be a number >= 0, got {damping!r}")
        return np.diag(2 * float(damping) * np.sqrt(np.clip(np.diag(Ke), 0, None) * np.diag(Me)))
    De = real_array(damping, "damping (the modal damping matrix)")
    if De.shape != (n, n):
        raise ModelError(f"damping must be a damping ratio (a number >= 0) or a modal damping matrix "
                         f"of {n} x {n} (one row and column per mode), got the shape {De.shape}")
    return De


def save(data: ModalData, path) -> pathlib.Path:
    """Write ``data`` as an mbsfmu-sid JSON file (format in the module docstring)."""
    data.check()
    doc = {"format": FORMAT, "version": VERSION, "description": data.description, "mass": data.mass,
           "mdCM": data.mdCM.to_json(), "J": data.J.to_json(), "Ct": data.Ct.to_json(),
           "Cr": data.Cr.to_json(), "Me": {"M0": np.asarray(data.Me).tolist()},
           "Ke": {"M0": np.asarray(data.Ke).tolist()}, "De": {"M0": np.asarray(data.De).tolist()},
           "nodes": [{"id": int(nd.id), "origin": nd.origin.to_json(),
                      "psi": {"M0": np.asarray(nd.psi).tolist()}} for nd in data.nodes],
           "frame_node": None if data.frame_node is None else int(data.frame_node), "modes": list(data.modes)}
    if data.ksigma is not None:
        doc["ksigma"] = data.ksigma.to_json()
    if data.frequencies_hz is not None:
        doc["frequencies_hz"] = list(data.frequencies_hz)
    p = pathlib.Path(path)
    p.write_text(json.dumps(doc, indent=1))
    return p


REQUIRED = ("mass", "mdCM", "J", "Ct", "Cr", "Me", "Ke", "nodes")
#: every key of the file: the required ones, then the optional ones
KEYS = ("format", "version", *REQUIRED, "De", "ksigma", "frame_node", "modes", "frequencies_hz",
        "description")
#: the terms each Taylor quantity of the file may have (Me, Ke, De are constant; ksigma is linear)
TERMS = {"mdCM": ("M0", "M1"), "J": ("M0", "M1", "M2"), "Ct": ("M0", "M1", "M2"), "Cr": ("M0", "M1"),
         "Me": ("M0",), "Ke": ("M0",), "De": ("M0",), "ksigma": ("M0", "M1")}


def load(path) -> ModalData:
    """Read an mbsfmu-sid JSON file; ModelError naming the file and the missing or bad quantity
    (a key the format does not have, a table that is not a rectangular table of numbers, a node
    id that is not a whole number, ...; then everything :meth:`ModalData.check` checks)."""
    if not isinstance(path, (str, pathlib.PurePath)):
        raise ModelError(f"modal data: give the path of an {FORMAT} file, got {path!r}")
    p = pathlib.Path(path)
    try:
        doc = json.loads(p.read_text())
    except FileNotFoundError:
        raise ModelError(f"modal data file {str(p)!r} does not exist") from None
    except (OSError, ValueError) as exc:
        raise ModelError(f"modal data file {str(p)!r} is not readable JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ModelError(f"modal data file {str(p)!r} is not an {FORMAT} file (no \"format\": \"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise ModelError(f"modal data file {str(p)!r} has version {doc.get('version')!r}; "
                         f"this mbsfmu reads {VERSION}")
    missing = [k for k in REQUIRED if k not in doc]
    if missing:
        raise ModelError(f"modal data file {str(p)!r} lacks the required "
                         f"quantit{'y' if len(missing) == 1 else 'ies'} {', '.join(missing)}")
    try:
        return _from_doc(doc)
    except ModelError as exc:
        raise ModelError(f"modal data file {str(p)!r}: {exc}") from None


def _from_doc(doc: dict) -> ModalData:
    """The ModalData of a parsed file, each entry checked for its JSON kind first."""
    unknown = [k for k in doc if k not in KEYS]
    if unknown:
        raise ModelError(f"unknown key(s) {', '.join(map(repr, unknown))} (the format has "
                         f"{', '.join(KEYS)})")
    mass = doc["mass"]
    if isinstance(mass, bool) or not isinstance(mass, (int, float)):
        raise ModelError(f"mass must be a number, got {json.dumps(mass)}")
    frame_node = doc.get("frame_node")
    if frame_node is not None:
        node_id(frame_node, "frame_node", in_json=True)
    description = doc.get("description", "")
    if not isinstance(description, str):
        raise ModelError(f"description must be a text, got {description!r}")
    nodes = doc["nodes"]
    if not isinstance(nodes, list) or not nodes:
        raise ModelError(f"nodes must be a non-empty list of nodes, got {nodes!r:.80}")
    Me = taylor_of(doc["Me"], "Me").M0
    n = len(Me) if Me.ndim else 0
    data = ModalData(mass=float(mass), mdCM=taylor_of(doc["mdCM"], "mdCM"), J=taylor_of(doc["J"], "J"),
                     Ct=taylor_of(doc["Ct"], "Ct"), Cr=taylor_of(doc["Cr"], "Cr"), Me=Me,
                     Ke=taylor_of(doc["Ke"], "Ke").M0,
                     De=taylor_of(doc["De"], "De").M0 if "De" in doc else np.zeros((n, n)),
                     nodes=[_node(nd, k) for k, nd in enumerate(nodes)], frame_node=frame_node,
                     ksigma=taylor_of(doc["ksigma"], "ksigma") if "ksigma" in doc else None,
                     modes=doc.get("modes") or [], frequencies_hz=doc.get("frequencies_hz"),
                     description=description)
    data.check()
    return data


def _node(entry, k: int) -> Node:
    """Node number k (0-based) of the file's list: {"id": ..., "origin": {M0, M1}, "psi": {M0}}."""
    where = f"nodes[{k}]"
    if not isinstance(entry, dict):
        raise ModelError(f"{where} must be an object with id, origin and psi, got {entry!r:.80}")
    unknown = [x for x in entry if x not in ("id", "origin", "psi")]
    missing = [x for x in ("id", "origin", "psi") if x not in entry]
    if unknown or missing:
        raise ModelError(f"{where} must have the keys id, origin and psi"
                         + (f"; it lacks {', '.join(missing)}" if missing else "")
                         + (f"; unknown: {', '.join(map(repr, unknown))}" if unknown else ""))
    nid = node_id(entry["id"], f"{where}.id", in_json=True)
    origin = _terms(entry["origin"], f"node {nid} origin", ("M0", "M1"))
    psi = _terms(entry["psi"], f"node {nid} psi", ("M0",))
    if "M1" not in origin:
        raise ModelError(f"node {nid} origin lacks its term M1 (the translational mode shapes)")
    return Node(id=nid, origin=Taylor(**origin), psi=psi["M0"])


def _terms(entry, name: str, allowed) -> dict:
    """{term: float array} of a Taylor object of the file: M0 and the terms ``allowed``, each a
    rectangular table of numbers."""
    if not isinstance(entry, dict) or "M0" not in entry:
        raise ModelError(f"{name} must be an object with at least M0")
    extra = [t for t in entry if t not in allowed]
    if extra:
        raise ModelError(f"{name} has no term {', '.join(map(repr, extra))} here (terms: "
                         f"{', '.join(allowed)})")
    return {t: _numbers(v, f"{name}.{t}") for t, v in entry.items()}


def _numbers(value, name: str) -> np.ndarray:
    """A number or nested lists of numbers (JSON: no true/false, text or null) as an array."""
    def bad(v, at):
        if isinstance(v, list):
            for i, x in enumerate(v):
                found = bad(x, f"{at}[{i}]")
                if found:
                    return found
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return f"{name}{at} is {json.dumps(v)}, not a number"
        return None

    problem = bad(value, "")
    if problem:
        raise ModelError(problem)
    return real_array(value, name, finite=False)  # ragged lists; non-finite numbers: check()


def taylor_of(entry, name: str = "quantity") -> Taylor:
    """The Taylor object of a file entry {"M0": ..., "M1": ..., "M2": ...} (terms the quantity
    ``name`` has, numbers only)."""
    return Taylor(**_terms(entry, name, TERMS.get(name, ("M0", "M1", "M2"))))
