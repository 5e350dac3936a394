"""A straight 3D beam of finite elements: mass and stiffness matrices with six DOFs per node.

The beam runs from ``start`` along the unit vector ``axis`` (R components) and is cut into N equal
elements of length L; nodes 1..N+1.  Every node carries [u_x, u_y, u_z, theta_x, theta_y, theta_z]
in R components, the ordering :func:`~mbsfmu.model.elastic.modal_data.from_fe` expects.

Element axes: local x along the beam, local y = the section's y axis (``y_axis``, default the
part of R's y perpendicular to the beam, or R's -x when the beam runs along y), local z = x × y.
Iy and Iz are the second moments of area about the local y and z axes: Iz resists bending in the
local x-y plane (deflection v, rotation theta_z = v'), Iy bending in the x-z plane (deflection w,
rotation theta_y = -w').  J is the torsion constant (GJ the torsional stiffness), Ip = Iy + Iz the
polar moment that carries the torsional rotary inertia rho Ip.

Element matrices (Przemieniecki, *Theory of Matrix Structural Analysis*, §5.6 and §11.4; Cook et
al., *Concepts and Applications of FEA*, ch. 2 and 16), in local DOFs [u, v, w, tx, ty, tz] of
node 1 then node 2:

* axial:   K = EA/L [[1, -1], [-1, 1]],   M = rho A L/6 [[2, 1], [1, 2]]            (u1, u2)
* torsion: K = GJ/L [[1, -1], [-1, 1]],   M = rho Ip L/6 [[2, 1], [1, 2]]           (tx1, tx2)
* bending in a plane with deflection d and rotation t = d' (x-y plane: d = v, t = tz, I = Iz,
  shear area As_y; x-z plane: d = w, t = -ty, I = Iy, shear area As_z), DOFs (d1, t1, d2, t2),
  with the shear parameter Phi = 12 E I / (G As L^2) (Phi = 0 for Euler-Bernoulli):

      K = E I / ((1 + Phi) L^3) [[12,   6L,            -12,  6L          ],
                                 [6L,   (4 + Phi)L^2,  -6L,  (2 - Phi)L^2],
                                 [-12,  -6L,           12,   -6L         ],
                                 [6L,   (2 - Phi)L^2,  -6L,  (4 + Phi)L^2]]

      M = rho A L/(1 + Phi)^2 [[m1, m2, m3, -m4], [m2, m5, m4, -m6], [m3, m4, m1, -m2],
                               [-m4, -m6, -m2, m5]]
          + rho I/((1 + Phi)^2 L) [[r1, r2, -r1, r2], [r2, r3, -r2, r4], [-r1, -r2, r1, -r2],
                                   [r2, r4, -r2, r3]]
      m1 = 13/35 + 7 Phi/10 + Phi^2/3         m2 = (11/210 + 11 Phi/120 + Phi^2/24) L
      m3 = 9/70 + 3 Phi/10 + Phi^2/6          m4 = (13/420 + 3 Phi/40 + Phi^2/24) L
      m5 = (1/105 + Phi/60 + Phi^2/120) L^2   m6 = (1/140 + Phi/60 + Phi^2/120) L^2
      r1 = 6/5,  r2 = (1/10 - Phi/2) L,  r3 = (2/15 + Phi/6 + Phi^2/3) L^2,
      r4 = (-1/30 - Phi/6 + Phi^2/6) L^2

  These are the consistent matrices of the element's exact static interpolation (cubic Hermite
  for Phi = 0).  The rotary-inertia part (rho I) belongs to Timoshenko theory and is left out for
  Euler-Bernoulli, whose closed-form frequencies have none.  For the x-z plane the sign of the
  rotation DOF is flipped (t = -ty), i.e. the 4x4 matrices are taken as S A S, S = diag(1,-1,1,-1).

Each element's 12x12 matrices are turned to R by T^T A T with T = blockdiag(Lam, Lam, Lam, Lam),
Lam's rows the local axes in R, and added into the 6(N+1) square global matrices.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ...core.errors import ModelError
from ..matrices import real_array

THEORIES = ("euler-bernoulli", "timoshenko")


@dataclass
class BeamModel:
    """A beam's finite-element model.  ``M``, ``K``: 6(N+1) square in R components; ``nodes``
    (N+1, 3) positions in R; ``elements`` (N, 2) 0-based node indices; ``rotation`` (3, 3) the
    element axes (rows: local x, y, z in R); the section and material as given."""

    M: np.ndarray
    K: np.ndarray
    nodes: np.ndarray
    elements: np.ndarray
    rotation: np.ndarray
    E: float
    G: float
    rho: float
    A: float
    Iy: float
    Iz: float
    J: float
    theory: str
    shear_area_y: float | None = None
    shear_area_z: float | None = None

    @property
    def node_ids(self) -> list[int]:
        return list(range(1, len(self.nodes) + 1))

    @property
    def element_length(self) -> float:
        return float(np.linalg.norm(self.nodes[1] - self.nodes[0]))

    def transformation(self) -> np.ndarray:
        """T (12, 12): local element DOFs = T @ element DOFs in R."""
        return np.kron(np.eye(4), self.rotation)

    def element_dofs(self, e: int) -> np.ndarray:
        i, j = self.elements[e]
        return np.r_[6 * i:6 * i + 6, 6 * j:6 * j + 6]

    def axial_forces(self, u) -> np.ndarray:
        """The axial force of every element (tension positive) for the global displacements u
        (6(N+1),): N_e = EA/L (u_2 - u_1) in the element's local x."""
        T = self.transformation()
        L = self.element_length
        out = np.empty(len(self.elements))
        for e in range(len(self.elements)):
            loc = T @ np.asarray(u, dtype=float)[self.element_dofs(e)]
            out[e] = self.E * self.A / L * (loc[6] - loc[0])
        return out


#: the most elements a beam may have: its matrices are dense, 6 (N + 1) square (at 1000
#: elements two of 6006 x 6006, 0.6 GB, and a modal analysis of about a minute)
MAX_ELEMENTS = 1000


def _positive(name: str, value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) \
            or not (math.isfinite(value) and value > 0):
        raise ModelError(f"beam: {name} must be a positive number, got {value!r}")
    return float(value)


def _vector(v, name: str) -> np.ndarray:
    a = real_array(v, f"beam: {name}")
    if a.shape != (3,):
        raise ModelError(f"beam: {name} must be a 3-vector, got {v!r}")
    return a


def _unit(v, name: str) -> np.ndarray:
    a = _vector(v, name)
    if np.linalg.norm(a) == 0:
        raise ModelError(f"beam: {name} must be a nonzero 3-vector, got {v!r}")
    return a / np.linalg.norm(a)


def element_axes(axis, y_axis=None) -> np.ndarray:
    """Lam (3, 3): rows the element's local x (= axis), y and z = x × y in R components.  y is
    ``y_axis`` made perpendicular to x (default R's y, or R's -x for a beam along y)."""
    ex = _unit(axis, "axis")
    if y_axis is None:
        ref = np.array([0.0, 1.0, 0.0]) if abs(ex[1]) < 0.99 else np.array([-1.0, 0.0, 0.0])
    else:
        ref = _unit(y_axis, "y_axis")
    ey = ref - (ref @ ex) * ex
    if np.linalg.norm(ey) < 1e-8:
        raise ModelError(f"beam: y_axis {y_axis!r} is parallel to the beam's axis {axis!r}")
    ey /= np.linalg.norm(ey)
    return np.vstack([ex, ey, np.cross(ex, ey)])


def bending_stiffness(E: float, I: float, L: float, phi: float = 0.0) -> np.ndarray:
    """The 4x4 bending stiffness in (d1, t1, d2, t2), t = d' (module docstring)."""
    c = E * I / ((1 + phi) * L ** 3)
    return c * np.array([[12, 6 * L, -12, 6 * L],
                         [6 * L, (4 + phi) * L ** 2, -6 * L, (2 - phi) * L ** 2],
                         [-12, -6 * L, 12, -6 * L],
                         [6 * L, (2 - phi) * L ** 2, -6 * L, (4 + phi) * L ** 2]])


def bending_mass(rho: float, A: float, I: float, L: float, phi: float = 0.0,
                 rotary: bool = False) -> np.ndarray:
    """The 4x4 consistent bending mass in (d1, t1, d2, t2), t = d'; translational inertia rho A,
    plus the rotary inertia rho I when ``rotary`` (module docstring)."""
    p = phi
    m1 = 13 / 35 + 7 * p / 10 + p ** 2 / 3
    m2 = (11 / 210 + 11 * p / 120 + p ** 2 / 24) * L
    m3 = 9 / 70 + 3 * p / 10 + p ** 2 / 6
    m4 = (13 / 420 + 3 * p / 40 + p ** 2 / 24) * L
    m5 = (1 / 105 + p / 60 + p ** 2 / 120) * L ** 2
    m6 = (1 / 140 + p / 60 + p ** 2 / 120) * L ** 2
    out = rho * A * L / (1 + p) ** 2 * np.array([[m1, m2, m3, -m4], [m2, m5, m4, -m6],
                                                 [m3, m4, m1, -m2], [-m4, -m6, -m2, m5]])
    if rotary:
        r1, r2 = 6 / 5, (1 / 10 - p / 2) * L
        r3 = (2 / 15 + p / 6 + p ** 2 / 3) * L ** 2
        r4 = (-1 / 30 - p / 6 + p ** 2 / 6) * L ** 2
        out = out + rho * I / ((1 + p) ** 2 * L) * np.array([[r1, r2, -r1, r2], [r2, r3, -r2, r4],
                                                             [-r1, -r2, r1, -r2], [r2, r4, -r2, r3]])
    return out


def _two_node(c: float) -> np.ndarray:
    return c * np.array([[1.0, -1.0], [-1.0, 1.0]])


def _place(out: np.ndarray, block: np.ndarray, dofs) -> None:
    out[np.ix_(dofs, dofs)] += block


#: local DOF indices of each part in the 12 element DOFs
AXIAL, TORSION = [0, 6], [3, 9]
PLANE_XY, PLANE_XZ = [1, 5, 7, 11], [2, 4, 8, 10]
_FLIP = np.diag([1.0, -1.0, 1.0, -1.0])


def element_matrices(L, E, G, rho, A, Iy, Iz, J, phi_y=0.0, phi_z=0.0, rotary=False):
    """(K, M) of one element, 12x12 in local DOFs; phi_y is the shear parameter of the x-y plane
    (12 E Iz/(G As_y L^2)), phi_z of the x-z plane (12 E Iy/(G As_z L^2))."""
    K = np.zeros((12, 12))
    M = np.zeros((12, 12))
    Ip = Iy + Iz
    _place(K, _two_node(E * A / L), AXIAL)
    _place(M, rho * A * L / 6 * np.array([[2.0, 1.0], [1.0, 2.0]]), AXIAL)
    _place(K, _two_node(G * J / L), TORSION)
    _place(M, rho * Ip * L / 6 * np.array([[2.0, 1.0], [1.0, 2.0]]), TORSION)
    _place(K, bending_stiffness(E, Iz, L, phi_y), PLANE_XY)
    _place(M, bending_mass(rho, A, Iz, L, phi_y, rotary), PLANE_XY)
    _place(K, _FLIP @ bending_stiffness(E, Iy, L, phi_z) @ _FLIP, PLANE_XZ)
    _place(M, _FLIP @ bending_mass(rho, A, Iy, L, phi_z, rotary) @ _FLIP, PLANE_XZ)
    return K, M


def beam(length, n_elements=10, *, E, rho, A, Iy, Iz, G=None, J=None, nu=0.3,
         theory="euler-bernoulli", shear_area_y=None, shear_area_z=None,
         axis=(1.0, 0.0, 0.0), start=(0.0, 0.0, 0.0), y_axis=None) -> BeamModel:
    """A straight uniform beam of ``n_elements`` elements (module docstring for the matrices).

    ``G`` defaults to E / (2 (1 + nu)); ``J`` (torsion constant) to Iy + Iz (exact for a circular
    section).  ``theory='timoshenko'`` adds shear deformation and rotary inertia; the shear areas
    default to 5/6 A (rectangle).  ModelError names a bad value: N < 1, a nonpositive property,
    an unknown theory, a zero axis."""
    if isinstance(n_elements, bool) or not isinstance(n_elements, (int, np.integer)) or n_elements < 1:
        raise ModelError(f"beam: n_elements must be an integer >= 1, got {n_elements!r}")
    if n_elements > MAX_ELEMENTS:
        raise ModelError(f"beam: n_elements = {n_elements} is more than {MAX_ELEMENTS}: the beam's "
                         f"matrices are dense, {6 * (n_elements + 1)} DOFs square; a beam's lowest "
                         "modes converge with a few dozen elements")
    if theory not in THEORIES:
        raise ModelError(f"beam: theory must be one of {', '.join(THEORIES)}, got {theory!r}")
    length = _positive("length", length)
    E, rho, A = _positive("E", E), _positive("rho", rho), _positive("A", A)
    Iy, Iz = _positive("Iy", Iy), _positive("Iz", Iz)
    if G is None:
        if isinstance(nu, bool) or not (isinstance(nu, (int, float)) and -1 < nu <= 0.5):
            raise ModelError(f"beam: Poisson's ratio nu must be in (-1, 0.5], got {nu!r}")
        G = E / (2 * (1 + float(nu)))
    G = _positive("G", G)
    J = Iy + Iz if J is None else _positive("J", J)
    timo = theory == "timoshenko"
    Asy = Asz = None
    if timo:
        Asy = 5 / 6 * A if shear_area_y is None else _positive("shear_area_y", shear_area_y)
        Asz = 5 / 6 * A if shear_area_z is None else _positive("shear_area_z", shear_area_z)
    lam = element_axes(axis, y_axis)
    x0 = _vector(start, "start")
    N = int(n_elements)
    L = length / N
    nodes = x0 + np.outer(np.linspace(0.0, length, N + 1), lam[0])
    phi_y = 12 * E * Iz / (G * Asy * L ** 2) if timo else 0.0
    phi_z = 12 * E * Iy / (G * Asz * L ** 2) if timo else 0.0
    k_loc, m_loc = element_matrices(L, E, G, rho, A, Iy, Iz, J, phi_y, phi_z, rotary=timo)
    T = np.kron(np.eye(4), lam)
    k_el, m_el = T.T @ k_loc @ T, T.T @ m_loc @ T
    dof = 6 * (N + 1)
    K = np.zeros((dof, dof))
    M = np.zeros((dof, dof))
    elements = np.array([[e, e + 1] for e in range(N)])
    for e in range(N):
        d = np.r_[6 * e:6 * e + 12]
        K[np.ix_(d, d)] += k_el
        M[np.ix_(d, d)] += m_el
    K = (K + K.T) / 2
    M = (M + M.T) / 2
    return BeamModel(M=M, K=K, nodes=nodes, elements=elements, rotation=lam, E=E, G=G, rho=rho, A=A,
                     Iy=Iy, Iz=Iz, J=J, theory=theory, shear_area_y=Asy, shear_area_z=Asz)


def rectangular_section(width_y: float, height_z: float) -> dict:
    """A, Iy, Iz, J and the shear areas of a solid rectangle of ``width_y`` (along local y) by
    ``height_z`` (along local z): Iy = b h^3/12, Iz = h b^3/12, J = a b^3 (1/3 - 0.21 b/a
    (1 - b^4/(12 a^4))) (Roark, a >= b the sides), shear areas 5/6 A."""
    b, h = _positive("width_y", width_y), _positive("height_z", height_z)
    a, c = max(b, h), min(b, h)
    A = b * h
    J = a * c ** 3 * (1 / 3 - 0.21 * c / a * (1 - c ** 4 / (12 * a ** 4)))
    return {"A": A, "Iy": b * h ** 3 / 12, "Iz": h * b ** 3 / 12, "J": J,
            "shear_area_y": 5 / 6 * A, "shear_area_z": 5 / 6 * A}


def circular_section(diameter: float) -> dict:
    """A, Iy = Iz = pi d^4/64, J = pi d^4/32 and the shear areas 0.9 A of a solid circle."""
    d = _positive("diameter", diameter)
    A = np.pi * d ** 2 / 4
    I = np.pi * d ** 4 / 64
    return {"A": A, "Iy": I, "Iz": I, "J": 2 * I, "shear_area_y": 0.9 * A, "shear_area_z": 0.9 * A}
