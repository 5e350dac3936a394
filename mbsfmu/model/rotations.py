"""Rotations of a frame relative to its reference frame.

A rotation is stored as a sequence of elementary rotations (axis, angle).  For a frame K placed
in its reference frame P, the matrix ``R`` maps components in K to components in P,
``x_P = R x_K``, so that successive body-fixed rotations multiply from the right:

    R = R_a1(q1) R_a2(q2) ... R_an(qn).

The relative angular velocity of K with respect to P, in P components, follows from the same
sequence without differentiating matrices (seed 002 eq. 5 for one joint):

    omega_rel = e_a1 q1' + R_a1(q1) e_a2 q2' + ... + R_a1...R_a(n-1) e_an qn'.

A general 3x3 matrix is accepted too; its angular velocity is taken from the skew-symmetric
matrix  R' R^T  (valid whenever R is orthonormal for all arguments).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

AXES = {"x": 0, "y": 1, "z": 2}


def elementary_matrix(axis: str, angle) -> sp.Matrix:
    """Rotation matrix for a right-handed rotation by ``angle`` about ``axis`` ('x', 'y', 'z')."""
    c, s = sp.cos(angle), sp.sin(angle)
    if axis == "x":
        return sp.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == "y":
        return sp.Matrix([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    if axis == "z":
        return sp.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    raise ValueError(f"unknown rotation axis {axis!r}; use 'x', 'y' or 'z'")


@dataclass(frozen=True)
class Rotation:
    """A relative rotation: a sequence of elementary rotations, or a general matrix."""

    sequence: tuple = ()  # tuple of (axis, sympy angle)
    matrix_: sp.Matrix | None = None

    def matrix(self) -> sp.Matrix:
        if self.matrix_ is not None:
            return self.matrix_
        R = sp.eye(3)
        for axis, angle in self.sequence:
            R = R * elementary_matrix(axis, angle)
        return R

    def is_identity(self) -> bool:
        return self.matrix_ is None and all(a == 0 for _, a in self.sequence)

    def __mul__(self, other: Rotation) -> Rotation:
        if self.matrix_ is not None or other.matrix_ is not None:
            return Rotation(matrix_=self.matrix() * other.matrix())
        return Rotation(self.sequence + other.sequence)


def rot_x(angle) -> Rotation:
    """Elementary rotation about the x axis."""
    return Rotation((("x", sp.sympify(angle)),))


def rot_y(angle) -> Rotation:
    """Elementary rotation about the y axis."""
    return Rotation((("y", sp.sympify(angle)),))


def rot_z(angle) -> Rotation:
    """Elementary rotation about the z axis."""
    return Rotation((("z", sp.sympify(angle)),))


def sequence(axes: str, angles) -> Rotation:
    """Body-fixed rotation sequence, e.g. ``sequence('zxz', [psi, theta, phi])``."""
    angles = list(angles)
    if len(axes) != len(angles) or any(a not in AXES for a in axes):
        raise ValueError(f"rotation sequence {axes!r} does not match {len(angles)} angles")
    return Rotation(tuple((a, sp.sympify(q)) for a, q in zip(axes, angles)))


def cardan(alpha, beta, gamma) -> Rotation:
    """Cardan (Tait-Bryan) angles, body-fixed x-y-z: R = Rx(alpha) Ry(beta) Rz(gamma).

    This is Neweul-M2's ``RelRot = [alpha; beta; gamma]`` (seed 002 sec. 4.1)."""
    return sequence("xyz", (alpha, beta, gamma))


def euler(psi, theta, phi) -> Rotation:
    """Classical Euler angles, body-fixed z-x-z: R = Rz(psi) Rx(theta) Rz(phi)."""
    return sequence("zxz", (psi, theta, phi))


def as_rotation(value) -> Rotation:
    """Accept a Rotation, three Cardan angles, a 3x3 matrix or None (identity)."""
    if value is None:
        return Rotation()
    if isinstance(value, Rotation):
        return value
    M = sp.Matrix(value) if not isinstance(value, sp.MatrixBase) else value
    if M.shape == (3, 3):
        return Rotation(matrix_=sp.Matrix(M))
    if M.shape in ((3, 1), (1, 3)):
        return cardan(*list(M))
    raise ValueError(f"a rotation must be a Rotation, 3 Cardan angles or a 3x3 matrix, got shape {M.shape}")
