"""Geometric stiffening of a beam body: one geometric stiffness matrix per load of LOAD_CASES.

A body whose frame of reference R accelerates carries the d'Alembert inertia load of its rigid
motion, and the stresses of that load change its stiffness (a spinning blade gets stiffer).  The
load is linear in the 12 quantities of :data:`~mbsfmu.model.elastic.modal_data.LOAD_CASES`:
the acceleration a of R's origin less gravity, R's angular acceleration alpha, and the six
products of R's angular velocity w (all R components).  The acceleration of the material point at
c (R components) in R's rigid motion is

    a_rigid(c) = a + alpha × c + w × (w × c),   w × (w × c) = w (w . c) - c |w|^2,

so the field of a unit value of each load case is: a_x: e_x; alpha_x: e_x × c; w_x*w_x:
e_x c_x - c (e.g. w_z*w_z: (-c_x, -c_y, 0)); w_x*w_y: e_x c_y + e_y c_x, and likewise.  A node's
rotation DOFs accelerate by alpha (the alpha cases) and by nothing else.  With A_l (6N,) these
nodal accelerations, the inertia load is the consistent d'Alembert force

    f_l = -M_fe A_l,

the static deflection solves K u_l = f_l on the free DOFs (the body's boundary conditions, as for
its modes), every element's axial force follows from u_l (tension positive, N_e = EA/L (u_2 - u_1)
along the element), and the geometric stiffness of load case l is the assembly of the elements'

    K_sigma,e = N_e/(30 L) [[36, 3L, -36, 3L], [3L, 4L^2, -3L, -L^2], [-36, -3L, 36, -3L],
                            [3L, -L^2, -3L, 4L^2]]     in each bending plane (d1, t1, d2, t2),
              + N_e Ip/(A L) [[1, -1], [-1, 1]]        in torsion (tx1, tx2)

(Przemieniecki, *Theory of Matrix Structural Analysis*, §15.4, the consistent geometric stiffness
of the cubic interpolation; the x-z plane with t = -ty as in fe_beam).  Only the axial force
enters: the bending moments and shear forces of the transverse load cases (e.g. alpha) are left
out, as in the standard beam geometric stiffness.  K_sigma = sum_l K_sigma,l * load_l, and the
modal projection Phi^T K_sigma,l Phi is from_fe's ``ksigma``.

Free bodies (no DOF held) are balanced by inertia relief: the part of f_l that the rigid-body
motion's own inertia takes, M_fe R (R^T M_fe R)^-1 R^T f_l (R (6N, 6) the rigid translations and
rotations about R's origin), is removed, and the balanced load is solved with the six DOFs of the
first node held (any node gives the same element forces, since the balanced load has no resultant).
A uniform acceleration then stresses a free body not at all, and a free beam spinning about its
end is stressed as if spinning about its centre of mass.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ...core.errors import ModelError
from .fe_beam import PLANE_XY, PLANE_XZ, TORSION, BeamModel
from .modal_data import LOAD_CASES

_AXES = {"x": 0, "y": 1, "z": 2}
_FLIP = np.diag([1.0, -1.0, 1.0, -1.0])


def rigid_accelerations(nodes_xyz) -> np.ndarray:
    """A (6N, 12): column l the nodal accelerations (translations a_l(c_i), rotations) of a unit
    value of LOAD_CASES[l] (module docstring)."""
    X = np.asarray(nodes_xyz, dtype=float)
    N = X.shape[0]
    out = np.zeros((6 * N, len(LOAD_CASES)))
    I3 = np.eye(3)
    for l, case in enumerate(LOAD_CASES):
        for i, c in enumerate(X):
            t, r = slice(6 * i, 6 * i + 3), slice(6 * i + 3, 6 * i + 6)
            if case.startswith("a_"):
                out[t, l] = I3[_AXES[case[2]]]
            elif case.startswith("alpha_"):
                e = I3[_AXES[case[6]]]
                out[t, l] = np.cross(e, c)
                out[r, l] = e
            else:
                a, b = (_AXES[p[2]] for p in case.split("*"))
                if a == b:
                    out[t, l] = I3[a] * c[a] - c
                else:
                    out[t, l] = I3[a] * c[b] + I3[b] * c[a]
    return out


def rigid_modes(nodes_xyz) -> np.ndarray:
    """R (6N, 6): unit rigid translations along x, y, z then unit rotations about R's axes."""
    X = np.asarray(nodes_xyz, dtype=float)
    out = np.zeros((6 * X.shape[0], 6))
    for i, c in enumerate(X):
        out[6 * i:6 * i + 3, :3] = np.eye(3)
        for k in range(3):
            out[6 * i:6 * i + 3, 3 + k] = np.cross(np.eye(3)[k], c)
        out[6 * i + 3:6 * i + 6, 3:] = np.eye(3)
    return out


def inertia_loads(M, nodes_xyz) -> np.ndarray:
    """F (6N, 12): the d'Alembert load f_l = -M_fe A_l of every load case."""
    return -np.asarray(M, dtype=float) @ rigid_accelerations(nodes_xyz)


def static_deflections(K, M, nodes_xyz, held) -> np.ndarray:
    """U (6N, 12): K u_l = f_l on the free DOFs, u = 0 at ``held``; no DOF held: inertia relief
    and the first node held (module docstring)."""
    K = np.asarray(K, dtype=float)
    M = np.asarray(M, dtype=float)
    F = inertia_loads(M, nodes_xyz)
    held = list(held)
    if not held:
        R = rigid_modes(nodes_xyz)
        MR = M @ R
        F = F - MR @ scipy.linalg.solve(R.T @ MR, R.T @ F, assume_a="pos")
        held = list(range(6))
    free = np.setdiff1d(np.arange(K.shape[0]), held)
    U = np.zeros_like(F)
    try:
        U[free] = scipy.linalg.solve(K[np.ix_(free, free)], F[free], assume_a="pos")
    except np.linalg.LinAlgError:
        raise ModelError("geometric stiffness: the stiffness matrix on the free DOFs is singular; the "
                         "held DOFs do not stop the rigid-body motion") from None
    return U


def element_geometric_stiffness(L: float, P: float, A: float, Ip: float) -> np.ndarray:
    """K_sigma,e (12, 12) of one element in local DOFs for the axial force P (tension positive)."""
    plane = P / (30 * L) * np.array([[36, 3 * L, -36, 3 * L], [3 * L, 4 * L ** 2, -3 * L, -L ** 2],
                                     [-36, -3 * L, 36, -3 * L], [3 * L, -L ** 2, -3 * L, 4 * L ** 2]])
    out = np.zeros((12, 12))
    out[np.ix_(PLANE_XY, PLANE_XY)] = plane
    out[np.ix_(PLANE_XZ, PLANE_XZ)] = _FLIP @ plane @ _FLIP
    out[np.ix_(TORSION, TORSION)] = P * Ip / (A * L) * np.array([[1.0, -1.0], [-1.0, 1.0]])
    return out


def assemble(b: BeamModel, axial_forces) -> np.ndarray:
    """The global (6(N+1) square, R components) geometric stiffness for the elements' axial forces."""
    T = b.transformation()
    L = b.element_length
    Ip = b.Iy + b.Iz
    out = np.zeros_like(b.K)
    for e, P in enumerate(axial_forces):
        d = b.element_dofs(e)
        out[np.ix_(d, d)] += T.T @ element_geometric_stiffness(L, P, b.A, Ip) @ T
    return (out + out.T) / 2


def beam_geometric_stiffness(b: BeamModel, held) -> list[np.ndarray]:
    """The 12 geometric stiffness matrices of the beam ``b`` held at the DOFs ``held`` (0-based
    global indices, e.g. fe_modes.held_dofs('clamped', ...); empty: inertia relief), one per
    load of LOAD_CASES, for from_fe's ``geometric_stiffness``."""
    U = static_deflections(b.K, b.M, b.nodes, held)
    return [assemble(b, b.axial_forces(U[:, l])) for l in range(len(LOAD_CASES))]
