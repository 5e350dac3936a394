"""Modal analysis of a finite-element body with six DOFs per node, and its reduction to modal data.

Boundary conditions (``bc``) say which DOFs are held while the shape functions are computed:

* ``'clamped'``: the six DOFs of ``frame_node`` (default node 1).  The frame of reference R is
  attached to that node (the nodal-fixed frame of seed 002): the node's elastic displacement and
  rotation are zero in every mode, and R's motion is the node's motion.
* ``'free'``: nothing held (free-free modes).  The six lowest eigenvalues are the rigid-body
  motions (zero frequency); they are dropped because R's motion already carries them.  The data
  have no frame node.
* a list of held DOFs: each entry a node id (all six DOFs of that node) or a pair
  ``(node id, dof)`` with dof one of ``'ux', 'uy', 'uz', 'rx', 'ry', 'rz'`` (or 1..6).  Modes of
  zero frequency the list leaves free (a mechanism) are dropped.

Modes: the generalized eigenproblem K_ff phi = omega^2 M_ff phi on the free DOFs f
(scipy.linalg.eigh), mass-normalized (phi^T M_ff phi = 1), written full size (6N, n) with zeros at
the held DOFs, sign fixed so that each mode's largest entry is positive.  Modes of one repeated
frequency (a beam with Iy = Iz) are made independent of rounding (each moves one DOF alone, e.g.
one bending direction each); a selection that keeps only some of them warns.  ``modes=3`` keeps the
first three, ``modes=[1, 3]`` modes 1 and 3 (1-based, ascending frequency).

Craig-Bampton (``reduction='craig-bampton', boundary=[node ids]``): with the held DOFs removed,
the free DOFs split into the boundary DOFs b (all six of every boundary node) and the interior i.
The shape functions are the constraint modes [I; -K_ii^-1 K_ib] (a unit displacement of one
boundary DOF, the interior statically following, the other boundary DOFs held) and the first n
fixed-interface normal modes [0; phi_i] (K_ii phi_i = omega^2 M_ii phi_i, mass-normalized).  The
elastic coordinates are q = [u_b; eta]: the first 6 n_b coordinates ARE the boundary nodes'
displacements and rotations relative to R (names ``'<node>_ux'``, ...), the rest the modal
amplitudes of the fixed-interface modes (``'q01'``, ...).  Me and Ke are then full (not diagonal);
``frequencies_hz`` are those of the reduced model (eigh of Ke, Me).  A Craig-Bampton body needs
held DOFs (its R must be fixed to the body), so ``bc='free'`` is refused with it.

Exported nodes (``export``): a list of node ids, or an int k: k nodes evenly spaced over the
node list, both ends included.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from ...core.errors import ModelError
from ..matrices import real_array
from .modal_data import ModalData, check_symmetric, from_fe, node_id, node_ids_of

DOF_NAMES = ("ux", "uy", "uz", "rx", "ry", "rz")
REDUCTIONS = (None, "craig-bampton")


def held_dofs(bc, node_ids, frame_node=1) -> list[int]:
    """The 0-based global indices of the DOFs held by ``bc`` (module docstring)."""
    ids = list(node_ids)

    def index(node):
        k = node_id(node, "bc")
        if k not in ids:
            raise ModelError(f"boundary conditions name node {node!r}, which is not a node "
                             f"(nodes {ids[0]}..{ids[-1]})")
        return ids.index(k)

    if isinstance(bc, str):
        if bc == "clamped":
            if frame_node is None:
                raise ModelError("bc='clamped' holds the frame node: give frame_node (a node id)")
            i = index(frame_node)
            return list(range(6 * i, 6 * i + 6))
        if bc == "free":
            return []
        raise ModelError(f"bc must be 'clamped', 'free' or a list of held DOFs, got {bc!r}")
    held = set()
    try:
        entries = list(bc)
    except TypeError:
        raise ModelError(f"bc must be 'clamped', 'free' or a list of held DOFs, got {bc!r}") from None
    for entry in entries:
        if isinstance(entry, (int, np.integer)) and not isinstance(entry, bool):
            i = index(entry)
            held.update(range(6 * i, 6 * i + 6))
            continue
        try:
            node, comp = entry
        except (TypeError, ValueError):
            raise ModelError(f"bc entry {entry!r} must be a node id or (node id, dof)") from None
        if isinstance(comp, str) and comp in DOF_NAMES:
            k = DOF_NAMES.index(comp)
        elif isinstance(comp, (int, np.integer)) and 1 <= comp <= 6:
            k = int(comp) - 1
        else:
            raise ModelError(f"bc entry {entry!r}: the dof must be one of {', '.join(DOF_NAMES)} or 1..6")
        held.add(6 * index(node) + k)
    return sorted(held)


def export_ids(export, node_ids) -> list[int]:
    """The ids of the exported nodes: all (None), a list (each checked), or an int k (k nodes
    evenly spaced, both ends included)."""
    ids = list(node_ids)
    if export is None:
        return ids
    if isinstance(export, (int, np.integer)) and not isinstance(export, bool):
        k = int(export)
        if not 1 <= k <= len(ids):
            raise ModelError(f"export={k} asks for {k} evenly spaced nodes, but the model has "
                             f"{len(ids)} nodes")
        if k == 1:
            return [ids[0]]
        return [ids[int(round(x))] for x in np.linspace(0, len(ids) - 1, k)]
    if isinstance(export, (str, bytes)) or not hasattr(export, "__iter__"):
        raise ModelError(f"export must be a number of nodes or a list of node ids, got {export!r}")
    out = []
    for k in export:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or int(k) not in ids:
            raise ModelError(f"export names node {k!r}, which is not a node (nodes {ids[0]}..{ids[-1]})")
        out.append(int(k))
    if not out:
        raise ModelError("export=[] keeps no node; give at least one (a body needs a node to attach to)")
    if len(set(out)) != len(out):
        raise ModelError(f"export={out!r} names a node twice")
    return out


def select(selection, available: int) -> list[int]:
    """0-based indices of the modes chosen by ``selection`` (an int: the first that many; a list
    of 1-based indices) among ``available``."""
    if isinstance(selection, (int, np.integer)) and not isinstance(selection, bool):
        if not 1 <= selection <= available:
            raise ModelError(f"modes={selection!r} asks for {selection} modes, but {available} are "
                             f"available")
        return list(range(int(selection)))
    if isinstance(selection, (str, bytes)) or not hasattr(selection, "__iter__") or any(
            isinstance(k, bool) or not isinstance(k, (int, np.integer)) for k in selection):
        raise ModelError(f"modes must be a number or a list of 1-based mode indices, got {selection!r}")
    chosen = [int(k) for k in selection]
    if not chosen:
        raise ModelError("modes=[] selects no mode")
    bad = [k for k in chosen if not 1 <= k <= available]
    if bad:
        raise ModelError(f"modes={list(selection)!r} asks for mode {bad[0]}, but {available} modes are "
                         f"available (1..{available})")
    if len(set(chosen)) != len(chosen):
        raise ModelError(f"modes={list(selection)!r} names a mode twice")
    return [k - 1 for k in chosen]


def repeated_groups(lam, rtol: float = 1e-8) -> list[list[int]]:
    """Runs of indices of (ascending) eigenvalues equal to ``rtol`` of their size (a symmetric
    section's two bending planes, ...): the groups of more than one mode."""
    groups, run = [], [0] if len(lam) else []
    for j in range(1, len(lam)):
        if abs(lam[j] - lam[run[-1]]) <= rtol * max(abs(lam[j]), abs(lam[run[-1]]), 1e-300):
            run.append(j)
        else:
            groups.append(run)
            run = [j]
    if run:
        groups.append(run)
    return [g for g in groups if len(g) > 1]


def _align_repeated(lam, V, M):
    """Within each group of repeated eigenvalues the eigenvectors are any M-orthonormal basis of
    the eigenspace; pick the one that does not depend on rounding: W = V V[rows]^-1 (rows: the k
    DOFs a pivoted QR of V^T finds most independent, so each mode moves one of them alone), then
    Gram-Schmidt in the M inner product (for a beam of equal bending stiffnesses: one mode per
    bending direction)."""
    V = V.copy()
    for g in repeated_groups(lam):
        Vg = V[:, g]
        _, _, piv = scipy.linalg.qr(Vg.T, pivoting=True, mode="economic")
        rows = np.sort(piv[:len(g)])
        W = Vg @ np.linalg.inv(Vg[rows])
        for a in range(len(g)):
            for c in range(a):
                W[:, a] -= (W[:, c] @ M @ W[:, a]) * W[:, c]
            W[:, a] /= np.sqrt(W[:, a] @ M @ W[:, a])
        V[:, g] = W
    return V


def _fix_sign(V: np.ndarray) -> np.ndarray:
    idx = np.argmax(np.abs(V), axis=0)
    s = np.sign(V[idx, np.arange(V.shape[1])])
    s[s == 0] = 1.0
    return V * s


def eigenmodes(M, K, held, drop_rigid: int | None = 0):
    """(omega^2 (m,), modes (dof, m)) of K phi = omega^2 M phi on the DOFs not in ``held``, every
    eigenpair, ascending, mass-normalized, full size.  ``drop_rigid``: the number of lowest modes
    to drop (6 for a free body; ModelError unless they are zero modes and the next one is not),
    or None to drop every mode of zero frequency (to 1e-8 of the largest eigenvalue)."""
    M = np.asarray(M, dtype=float)
    K = np.asarray(K, dtype=float)
    dof = M.shape[0]
    free = np.setdiff1d(np.arange(dof), np.asarray(held, dtype=int))
    Mff, Kff = M[np.ix_(free, free)], K[np.ix_(free, free)]
    try:
        lam, V = scipy.linalg.eigh(Kff, Mff)
    except np.linalg.LinAlgError as exc:
        raise ModelError(f"modal analysis: the mass matrix on the free DOFs is not positive definite "
                         f"({exc})") from None
    scale = max(abs(lam).max(initial=0.0), 1e-300)
    tol = 1e-8 * scale
    if drop_rigid is None:
        keep = lam > tol
    else:
        if drop_rigid:
            zero = lam[:drop_rigid]
            nxt = lam[drop_rigid] if lam.size > drop_rigid else np.inf
            if np.abs(zero).max() > tol or nxt <= tol:
                raise ModelError(f"modal analysis: a free body must have exactly {drop_rigid} zero "
                                 f"eigenvalues (rigid-body motions); the lowest are "
                                 f"{', '.join(f'{x:.4g}' for x in lam[:drop_rigid + 1])}")
        keep = np.arange(lam.size) >= drop_rigid
    lam, V = lam[keep], V[:, keep]
    V = _align_repeated(lam, V, Mff)
    full = np.zeros((dof, V.shape[1]))
    full[free] = _fix_sign(V)
    return lam, full


def craig_bampton(M, K, held, boundary_dofs, n_modes):
    """(T (dof, nb + n_modes), omega^2 of the fixed-interface modes (n_modes,)): the constraint
    modes of ``boundary_dofs`` then ``n_modes`` fixed-interface normal modes (module docstring)."""
    M = np.asarray(M, dtype=float)
    K = np.asarray(K, dtype=float)
    dof = M.shape[0]
    b = np.asarray(boundary_dofs, dtype=int)
    i = np.setdiff1d(np.setdiff1d(np.arange(dof), held), b)
    Kii, Kib = K[np.ix_(i, i)], K[np.ix_(i, b)]
    T = np.zeros((dof, b.size + n_modes))
    T[b, np.arange(b.size)] = 1.0
    T[np.ix_(i, np.arange(b.size))] = -scipy.linalg.solve(Kii, Kib, assume_a="pos")
    if n_modes == 0:
        return T, np.zeros(0)
    lam, Vi = scipy.linalg.eigh(Kii, M[np.ix_(i, i)], subset_by_index=[0, n_modes - 1])
    T[np.ix_(i, b.size + np.arange(n_modes))] = _fix_sign(Vi)
    return T, lam


def fe_modal_data(M, K, nodes_xyz, *, bc="clamped", frame_node=1, modes=3, export=None, node_ids=None,
               reduction=None, boundary=None, damping=None, geometric_stiffness=None,
               description="") -> ModalData:
    """The ModalData of an FE model (6 DOFs per node) with the boundary conditions, mode and node
    selection and optional Craig-Bampton reduction of the module docstring.

    ``geometric_stiffness``: None, 12 matrices (6N square, one per load of LOAD_CASES), or a
    callable ``f(held_dofs) -> 12 matrices`` (so the static load cases can use the same held DOFs
    as the modes)."""
    X = real_array(nodes_xyz, "finite-element model: the node coordinates")
    M = real_array(M, "finite-element model: the mass matrix")
    K = real_array(K, "finite-element model: the stiffness matrix")
    if X.ndim != 2 or X.shape[1] != 3:
        raise ModelError(f"finite-element model: node coordinates must be (N, 3), got the shape {X.shape}")
    ids = list(range(1, X.shape[0] + 1)) if node_ids is None else node_ids_of(node_ids, "node_ids")
    if len(ids) != X.shape[0] or len(set(ids)) != len(ids):
        raise ModelError(f"finite-element model: node_ids must be {X.shape[0]} different numbers, "
                         f"got {node_ids!r}")
    dof = 6 * X.shape[0]
    for what, A in (("mass matrix", M), ("stiffness matrix", K)):
        if np.shape(A) != (dof, dof):
            raise ModelError(f"finite-element model: the {what} has the shape {np.shape(A)}, expected "
                             f"({dof}, {dof}) for {X.shape[0]} nodes with 6 degrees of freedom each")
        check_symmetric(A, f"finite-element model: the {what}", definite=None)
    keep = export_ids(export, ids)
    if frame_node is not None:
        node_id(frame_node, "frame_node")
    held = held_dofs(bc, ids, frame_node)
    fnode = None
    if isinstance(bc, str) and bc == "clamped":
        fnode = int(frame_node)
    elif not isinstance(bc, str) and frame_node is not None and frame_node in ids:
        i = ids.index(frame_node)
        fnode = int(frame_node) if set(range(6 * i, 6 * i + 6)) <= set(held) else None
    if reduction not in REDUCTIONS:
        raise ModelError(f"reduction must be None or 'craig-bampton', got {reduction!r}")
    names = None
    if reduction is None:
        if boundary is not None:
            raise ModelError("boundary= is only used with reduction='craig-bampton'")
        drop = None if not isinstance(bc, str) else 6 if bc == "free" else 0
        lam, Phi = eigenmodes(M, K, held, drop_rigid=drop)
        chosen = select(modes, lam.size)
        for g in repeated_groups(lam):
            if 0 < len(set(g) & set(chosen)) < len(g):
                warnings.warn(f"modes {', '.join(str(j + 1) for j in g)} have the same frequency "
                              f"({np.sqrt(max(lam[g[0]], 0)) / (2 * np.pi):.6g} Hz) and the selection "
                              f"keeps only some of them; the body is then stiffer in one direction "
                              f"than in the other", stacklevel=2)
        Phi = Phi[:, chosen]
        freqs = np.sqrt(np.clip(lam[chosen], 0, None)) / (2 * np.pi)
    else:
        if isinstance(bc, str) and bc == "free":
            raise ModelError("reduction='craig-bampton' needs held DOFs (bc='clamped' or a list): with a "
                             "free body the boundary DOFs would carry the rigid-body motion R already has")
        if not boundary or isinstance(boundary, (str, bytes)) or not hasattr(boundary, "__iter__"):
            raise ModelError(f"reduction='craig-bampton' needs boundary=[node ids], got {boundary!r}")
        b_dofs = []
        for k in boundary:
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or int(k) not in ids:
                raise ModelError(f"boundary names node {k!r}, which is not a node "
                                 f"(nodes {ids[0]}..{ids[-1]})")
            i = ids.index(int(k))
            dofs = list(range(6 * i, 6 * i + 6))
            if set(dofs) & set(held):
                raise ModelError(f"boundary node {k} has held DOFs; a boundary node must be free")
            b_dofs += dofs
        available = len(M) - len(held) - len(b_dofs)
        if isinstance(modes, (int, np.integer)) and not isinstance(modes, bool):
            n_fix = int(modes)
            if not 0 <= n_fix <= available:
                raise ModelError(f"modes={n_fix} asks for {n_fix} fixed-interface modes, but {available} "
                                 f"are available")
        else:
            raise ModelError("with reduction='craig-bampton', modes is the number of fixed-interface modes")
        Phi, _ = craig_bampton(M, K, held, b_dofs, n_fix)
        Kr, Mr = Phi.T @ K @ Phi, Phi.T @ M @ Phi
        lam = scipy.linalg.eigh((Kr + Kr.T) / 2, (Mr + Mr.T) / 2, eigvals_only=True)
        freqs = np.sqrt(np.clip(lam, 0, None)) / (2 * np.pi)
        names = ([f"{ids[d // 6]}_{DOF_NAMES[d % 6]}" for d in b_dofs]
                 + [f"q{j + 1:02d}" for j in range(n_fix)])
    G = geometric_stiffness(held) if callable(geometric_stiffness) else geometric_stiffness
    return from_fe(M, K, X, Phi, node_ids=ids, export=keep, frame_node=fnode, damping=damping,
                   geometric_stiffness=G, frequencies_hz=freqs, mode_names=names, description=description)
