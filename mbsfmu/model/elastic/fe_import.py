"""A user's own finite-element model as modal data: matrices and node coordinates from files.

Inputs (each a path or an array already in memory):

* the mass and stiffness matrices: ``mass=`` and ``stiffness=`` as Matrix Market files (``.mtx``,
  read by scipy.io.mmread, sparse or dense, a ``symmetric`` header is expanded) or numpy ``.npy``
  files; or ``matrices=`` one ``.npz`` file holding both under the keys ``M`` and ``K``;
* ``nodes=``: the undeformed node coordinates in the body's frame of reference R, (N, 3), as
  ``.npy`` or ``.csv`` (three numbers a line, comma-separated; one header line is skipped);
* DOF ordering: node by node, ``dofs_per_node`` each.  6: [u_x, u_y, u_z, theta_x, theta_y,
  theta_z] in R components (beam and shell models).  3: translations only (solid models); the
  rotations are padded as zero rows and columns and held, so the model enters from_fe as a
  6-DOF model whose rotational mode shapes are zero.  ``bc='clamped'`` is refused for a 3-DOF
  model (holding one node's translations leaves the solid free to rotate about it): give
  ``'free'`` or the list of held nodes/DOFs;
* ``geometric_stiffness=``: optional, 12 matrices (6N or 3N square, one per load of
  LOAD_CASES, in that order) as a list of paths/arrays, or one ``.npz`` with LOAD_CASES' names
  as keys.

Boundary conditions, mode and node selection and Craig-Bampton are fe_modes.fe_modal_data's.
Every bad input raises ModelError naming it: a missing or unreadable file, a matrix that is not
square, sizes that disagree with each other or with the node count, a non-symmetric mass or
stiffness matrix (the worst entry pair), an indefinite one (its smallest eigenvalue) — the last
two by model.matrices.check_symmetric, the one check the whole package uses.
"""

from __future__ import annotations

import pathlib

import numpy as np
import scipy.io
import scipy.sparse

from ...core.errors import ModelError
from ..matrices import real_array
from .fe_modes import fe_modal_data
from .modal_data import LOAD_CASES, ModalData, check_symmetric, node_ids_of


def _path(p, what) -> pathlib.Path:
    path = pathlib.Path(p)
    if not path.is_file():
        raise ModelError(f"{what} file {str(path)!r} does not exist")
    return path


def read_matrix(source, what: str) -> np.ndarray:
    """A dense float matrix from an array, a .mtx or a .npy file; ModelError naming ``what``."""
    if not isinstance(source, (str, pathlib.Path)):
        return real_array(source.toarray() if scipy.sparse.issparse(source) else source, f"the {what}",
                          finite=False)
    path = _path(source, what)
    try:
        if path.suffix == ".mtx":
            A = scipy.io.mmread(str(path))
            A = A.toarray() if scipy.sparse.issparse(A) else np.asarray(A)
        elif path.suffix == ".npy":
            A = np.load(path, allow_pickle=False)
        else:
            raise ModelError(f"{what} file {str(path)!r}: expected .mtx (Matrix Market) or .npy")
        A = real_array(A, f"{what} file {str(path)!r}", finite=False)
    except ModelError:
        raise
    except (OSError, ValueError, TypeError) as exc:
        raise ModelError(f"{what} file {str(path)!r} is not readable ({exc})") from None
    return A


def read_npz(source, keys, what: str) -> dict:
    """The arrays of ``keys`` in an .npz file; ModelError naming the file and a missing key."""
    path = _path(source, what)
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [k for k in keys if k not in z.files]
            if missing:
                raise ModelError(f"{what} file {str(path)!r} lacks the key(s) {', '.join(missing)} "
                                 f"(it has {', '.join(z.files) or 'none'})")
            return {k: np.asarray(z[k], dtype=float) for k in keys}
    except ModelError:
        raise
    except (OSError, ValueError) as exc:
        raise ModelError(f"{what} file {str(path)!r} is not a readable .npz ({exc})") from None


def read_nodes(source) -> np.ndarray:
    """(N, 3) node coordinates from an array, a .npy or a .csv file."""
    if isinstance(source, (str, pathlib.Path)):
        path = _path(source, "node coordinates")
        try:
            if path.suffix == ".npy":
                X = np.load(path, allow_pickle=False)
            elif path.suffix == ".csv":
                try:
                    X = np.loadtxt(path, delimiter=",", ndmin=2)
                except ValueError:
                    X = np.loadtxt(path, delimiter=",", ndmin=2, skiprows=1)
            else:
                raise ModelError(f"node coordinates file {str(path)!r}: expected .npy or .csv")
        except ModelError:
            raise
        except (OSError, ValueError) as exc:
            raise ModelError(f"node coordinates file {str(path)!r} is not readable ({exc})") from None
    else:
        X = source
    X = real_array(X, "node coordinates", finite=False)
    if X.ndim != 2 or X.shape[1] != 3 or X.shape[0] < 1:
        raise ModelError(f"node coordinates must be (N, 3), got the shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ModelError("node coordinates have entries that are not finite")
    return X


def pad_rotations(A: np.ndarray, n_nodes: int) -> np.ndarray:
    """A 3N-square matrix over translations as the 6N-square one with zero rotation rows/cols."""
    out = np.zeros((6 * n_nodes, 6 * n_nodes))
    t = np.concatenate([np.arange(6 * i, 6 * i + 3) for i in range(n_nodes)])
    out[np.ix_(t, t)] = A
    return out


def _check(A: np.ndarray, what: str, dof: int, definite: bool = False) -> None:
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ModelError(f"the {what} must be square, got the shape {A.shape}")
    if A.shape[0] != dof:
        raise ModelError(f"the {what} is {A.shape[0]} x {A.shape[1]}, but the nodes give {dof} DOFs")
    if not np.all(np.isfinite(A)):
        raise ModelError(f"the {what} has entries that are not finite")
    check_symmetric(A, f"the {what}", definite=definite)


def import_modal_data(nodes, *, mass=None, stiffness=None, matrices=None, dofs_per_node=6,
                      bc="clamped", frame_node=1, modes=3, export=None, node_ids=None, reduction=None,
                      boundary=None, damping=None, geometric_stiffness=None, description="") -> ModalData:
    """The ModalData of a user's FE model (module docstring for the inputs; the rest as
    fe_modes.fe_modal_data)."""
    X = read_nodes(nodes)
    N = X.shape[0]
    if isinstance(dofs_per_node, bool) or not isinstance(dofs_per_node, int) or dofs_per_node not in (3, 6):
        raise ModelError(f"dofs_per_node must be 6 (translations and rotations) or 3 (translations "
                         f"only), got {dofs_per_node!r}")
    if matrices is not None:
        if mass is not None or stiffness is not None:
            raise ModelError("give either matrices= (.npz with M and K) or mass= and stiffness=, not both")
        z = read_npz(matrices, ("M", "K"), "matrices")
        M, K = z["M"], z["K"]
        src = f" from {str(matrices)!r}" if isinstance(matrices, (str, pathlib.Path)) else ""
        m_name, k_name = f"mass matrix M{src}", f"stiffness matrix K{src}"
    else:
        if mass is None or stiffness is None:
            raise ModelError("import_modal_data needs mass= and stiffness= (or matrices=)")
        M, K = read_matrix(mass, "mass matrix"), read_matrix(stiffness, "stiffness matrix")
        m_name = "mass matrix" + (f" {str(mass)!r}" if isinstance(mass, (str, pathlib.Path)) else "")
        k_name = "stiffness matrix" + (f" {str(stiffness)!r}"
                                       if isinstance(stiffness, (str, pathlib.Path)) else "")
    dof = dofs_per_node * N
    _check(M, m_name, dof)
    _check(K, k_name, dof)
    G = _geometric(geometric_stiffness, dof)
    if dofs_per_node == 3:
        if isinstance(bc, str) and bc == "clamped":
            raise ModelError("bc='clamped' holds one node, which does not stop a solid (3 DOFs per node) "
                             "from rotating about it; give bc='free' or a list of held nodes")
        ids = list(range(1, N + 1)) if node_ids is None else node_ids_of(node_ids, "node_ids")
        user = [] if isinstance(bc, str) else list(bc)
        bc = user + [(k, r) for k in ids for r in ("rx", "ry", "rz")]
        M, K = pad_rotations(M, N), pad_rotations(K, N)
        if G is not None:
            G = [pad_rotations(g, N) for g in G]
    return fe_modal_data(M, K, X, bc=bc, frame_node=frame_node, modes=modes, export=export, node_ids=node_ids,
                      reduction=reduction, boundary=boundary, damping=damping, geometric_stiffness=G,
                      description=description)


def _geometric(source, dof):
    if source is None:
        return None
    if isinstance(source, (str, pathlib.Path)):
        z = read_npz(source, LOAD_CASES, "geometric stiffness")
        mats = [z[k] for k in LOAD_CASES]
    else:
        if not isinstance(source, (list, tuple)):
            raise ModelError(f"geometric_stiffness must be a list of {len(LOAD_CASES)} matrices (one per "
                             f"load of {', '.join(LOAD_CASES)}) or an .npz file, got {type(source).__name__}")
        mats = list(source)
        if len(mats) != len(LOAD_CASES):
            raise ModelError(f"geometric_stiffness must hold {len(LOAD_CASES)} matrices, one per load of "
                             f"{', '.join(LOAD_CASES)}; got {len(mats)}")
        mats = [read_matrix(g, f"geometric stiffness ({case})") for g, case in zip(mats, LOAD_CASES)]
    for g, case in zip(mats, LOAD_CASES):
        if g.shape != (dof, dof):
            raise ModelError(f"the geometric stiffness of {case} has the shape {g.shape}, "
                             f"expected ({dof}, {dof})")
        if not np.all(np.isfinite(g)):
            raise ModelError(f"the geometric stiffness of {case} has entries that are not finite")
        check_symmetric(g, f"the geometric stiffness of {case}", definite=None)
    return mats
