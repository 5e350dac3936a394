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
import pathlib
from dataclasses import dataclass, field

import numpy as np

from ...errors import ModelError

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
        """ModelError naming the quantity when shapes disagree, a matrix is not symmetric, Me is
        not positive definite or Ke, De not positive semidefinite, or mdCM's first-order term is
        not Ct^T (the two are one integral)."""
        n = self.n
        if not (np.isfinite(self.mass) and self.mass > 0):
            raise ModelError(f"modal data: mass must be a positive number, got {self.mass!r}")
        want = {"mdCM.M0": (self.mdCM.M0, (3,)), "mdCM.M1": (self.mdCM.M1, (3, n)),
                "J.M0": (self.J.M0, (3, 3)), "Ct.M0": (self.Ct.M0, (n, 3)), "Cr.M0": (self.Cr.M0, (n, 3)),
                "Me": (self.Me, (n, n)), "Ke": (self.Ke, (n, n)), "De": (self.De, (n, n))}
        if self.J.M1 is not None:
            want["J.M1"] = (self.J.M1, (3, 3, n))
        if self.J.M2 is not None:
            want["J.M2"] = (self.J.M2, (3, 3, n, n))
        if self.Cr.M1 is not None:
            want["Cr.M1"] = (self.Cr.M1, (n, 3, n))
        if self.ksigma is not None:
            want["ksigma.M1"] = (self.ksigma.M1, (n, n, len(LOAD_CASES)))
        for nd in self.nodes:
            want[f"node {nd.id} origin.M0"] = (nd.origin.M0, (3,))
            want[f"node {nd.id} origin.M1"] = (nd.origin.M1, (3, n))
            want[f"node {nd.id} psi"] = (nd.psi, (3, n))
        for name, (value, shape) in want.items():
            if value is None:
                raise ModelError(f"modal data: {name} is missing")
            a = np.asarray(value, dtype=float)
            if a.shape != shape:
                raise ModelError(f"modal data: {name} has the shape {a.shape}, expected {shape} "
                                 f"(n = {n} modes)")
            if not np.all(np.isfinite(a)):
                raise ModelError(f"modal data: {name} has entries that are not finite")
        if self.Ct.M1 is not None or self.Ct.M2 is not None:
            raise ModelError("modal data: Ct has no terms in q here (Ct = int Phi^T dm is constant for a "
                             "linear Ritz approach); remove Ct.M1/M2")
        # J.M0 semidefinite: point masses on a line (a lumped slender beam) have no inertia about it
        for name, A, definite in (("Me", self.Me, True), ("Ke", self.Ke, False), ("De", self.De, False),
                                  ("J.M0", self.J.M0, False)):
            check_symmetric(A, f"modal data: {name}", definite=definite, rtol=rtol)
        scale = max(np.abs(self.Ct.M0).max(initial=0.0), self.mass * 1e-12)
        if np.abs(np.asarray(self.mdCM.M1) - np.asarray(self.Ct.M0).T).max(initial=0.0) > rtol * scale * 1e3:
            raise ModelError("modal data: mdCM.M1 differs from Ct^T; both are the integral of the "
                             "translational mode shapes over the mass")
        ids = [nd.id for nd in self.nodes]
        if len(set(ids)) != len(ids):
            raise ModelError(f"modal data: node ids repeat ({ids})")
        # (that the frame node sits at R's origin with vanishing shapes is checked where the body
        # is placed, System.flexible_body)
        if self.frame_node is not None and self.frame_node not in ids:
            raise ModelError(f"modal data: frame_node {self.frame_node!r} is not a node (nodes: {ids})")
        if self.modes and len(self.modes) != n:
            raise ModelError(f"modal data: {len(self.modes)} mode names for {n} modes")


def check_symmetric(A, what: str, definite: bool | None, rtol: float = 1e-8) -> None:
    """ModelError unless A is square, symmetric to rtol of its largest entry and positive
    definite (``definite``) or semidefinite (to rtol of its largest eigenvalue); ``definite=None``
    checks the symmetry only (e.g. a geometric stiffness, which may be indefinite)."""
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ModelError(f"{what} must be a square matrix, got the shape {A.shape}")
    scale = np.abs(A).max(initial=0.0)
    asym = np.abs(A - A.T).max(initial=0.0)
    if asym > rtol * max(scale, 1e-300):
        i, j = np.unravel_index(np.argmax(np.abs(A - A.T)), A.shape)
        raise ModelError(f"{what} is not symmetric: entry ({i}, {j}) is {float(A[i, j])!r}, "
                         f"({j}, {i}) is {float(A[j, i])!r}")
    if A.size == 0 or definite is None:
        return
    ev = np.linalg.eigvalsh((A + A.T) / 2)
    floor = rtol * max(abs(ev).max(), 1e-300)
    if (definite and ev.min() <= floor) or ev.min() < -floor:
        kind = "positive definite" if definite else "positive semidefinite"
        raise ModelError(f"{what} is not {kind}: its smallest eigenvalue is {ev.min():.6g} "
                         f"(largest {ev.max():.6g})")


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
    M_fe = np.asarray(M_fe, dtype=float)
    K_fe = np.asarray(K_fe, dtype=float)
    X = np.asarray(nodes_xyz, dtype=float)
    Phi = np.asarray(modes, dtype=float)
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
    ids = list(range(1, N + 1)) if node_ids is None else [int(i) for i in node_ids]
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
    if damping is None:
        De = np.zeros((n, n))
    elif np.ndim(damping) == 0:
        zeta = float(damping)
        if not (np.isfinite(zeta) and zeta >= 0):
            raise ModelError(f"damping ratio must be a number >= 0, got {damping!r}")
        De = np.diag(2 * zeta * np.sqrt(np.clip(np.diag(Ke), 0, None) * np.diag(Me)))
    else:
        De = np.asarray(damping, dtype=float)
    ksigma = None
    if geometric_stiffness is not None:
        if len(geometric_stiffness) != len(LOAD_CASES):
            raise ModelError(f"geometric_stiffness must hold {len(LOAD_CASES)} matrices, one per load of "
                             f"{', '.join(LOAD_CASES)}; got {len(geometric_stiffness)}")
        ks = np.stack([Phi.T @ np.asarray(G, dtype=float) @ Phi for G in geometric_stiffness], axis=-1)
        ksigma = Taylor(M0=np.zeros((n, n)), M1=(ks + ks.transpose(1, 0, 2)) / 2)

    keep = ids if export is None else [int(i) for i in export]
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
                     frame_node=frame_node, ksigma=ksigma, modes=names,
                     frequencies_hz=None if frequencies_hz is None else [float(x) for x in frequencies_hz],
                     description=description)
    data.check()
    return data


def save(data: ModalData, path) -> pathlib.Path:
    """Write ``data`` as an mbsfmu-sid JSON file (format in the module docstring)."""
    data.check()
    doc = {"format": FORMAT, "version": VERSION, "description": data.description, "mass": data.mass,
           "mdCM": data.mdCM.to_json(), "J": data.J.to_json(), "Ct": data.Ct.to_json(),
           "Cr": data.Cr.to_json(), "Me": {"M0": np.asarray(data.Me).tolist()},
           "Ke": {"M0": np.asarray(data.Ke).tolist()}, "De": {"M0": np.asarray(data.De).tolist()},
           "nodes": [{"id": nd.id, "origin": nd.origin.to_json(), "psi": {"M0": np.asarray(nd.psi).tolist()}}
                     for nd in data.nodes],
           "frame_node": data.frame_node, "modes": list(data.modes)}
    if data.ksigma is not None:
        doc["ksigma"] = data.ksigma.to_json()
    if data.frequencies_hz is not None:
        doc["frequencies_hz"] = list(data.frequencies_hz)
    p = pathlib.Path(path)
    p.write_text(json.dumps(doc, indent=1))
    return p


REQUIRED = ("mass", "mdCM", "J", "Ct", "Cr", "Me", "Ke", "nodes")


def load(path) -> ModalData:
    """Read an mbsfmu-sid JSON file; ModelError naming the file and the missing or bad quantity."""
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

    def taylor(name, orders=("M0",)):
        entry = doc.get(name)
        if not isinstance(entry, dict) or "M0" not in entry:
            raise ModelError(f"modal data file {str(p)!r}: {name} must be an object with at least M0")
        for o in orders:
            if o not in entry:
                raise ModelError(f"modal data file {str(p)!r}: {name} lacks its term {o}")
        return Taylor(**{k: np.asarray(entry[k], dtype=float) for k in ("M0", "M1", "M2") if k in entry})

    try:
        nodes = [Node(id=int(nd["id"]), origin=taylor_of(nd["origin"]),
                      psi=np.asarray(nd["psi"]["M0"], dtype=float)) for nd in doc["nodes"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"modal data file {str(p)!r}: a node lacks id, origin (M0, M1) or psi (M0): "
                         f"{exc}") from None
    try:
        return _from_doc(doc, nodes, taylor)
    except ModelError as exc:
        raise ModelError(f"modal data file {str(p)!r}: {exc}") from None
    except (TypeError, ValueError) as exc:  # a quantity of the wrong kind (a number where a table belongs)
        raise ModelError(f"modal data file {str(p)!r}: a quantity is malformed ({exc})") from None


def _from_doc(doc: dict, nodes: list, taylor) -> ModalData:
    frame_node = doc.get("frame_node")
    if frame_node is not None and (isinstance(frame_node, bool) or not isinstance(frame_node, int)):
        raise ModelError(f"frame_node must be a node id (a whole number) or null, got {frame_node!r}")
    modes = doc.get("modes") or []
    if not isinstance(modes, list) or not all(isinstance(x, str) for x in modes):
        raise ModelError(f"modes must be a list of names, got {modes!r}")
    n = len(taylor("Me").M0)
    data = ModalData(mass=float(doc["mass"]), mdCM=taylor("mdCM", ("M0", "M1")), J=taylor("J"),
                     Ct=taylor("Ct"), Cr=taylor("Cr"), Me=taylor("Me").M0, Ke=taylor("Ke").M0,
                     De=taylor("De").M0 if "De" in doc else np.zeros((n, n)), nodes=nodes,
                     frame_node=frame_node,
                     ksigma=taylor("ksigma", ("M1",)) if "ksigma" in doc else None,
                     modes=list(modes), frequencies_hz=doc.get("frequencies_hz"),
                     description=str(doc.get("description", "")))
    data.check()
    return data


def taylor_of(entry) -> Taylor:
    return Taylor(**{k: np.asarray(entry[k], dtype=float) for k in ("M0", "M1", "M2") if k in entry})
