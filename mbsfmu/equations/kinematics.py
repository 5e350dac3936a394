"""Recursive kinematics of all frames (seed 002 eqs. 3-7), frame by frame from the root.

For a frame K placed in its reference frame P by the relative position r_rel (P components) and
the relative rotation R_rel, with all absolute quantities in ISYS components:

    S_K   = S_P R_rel                                   rotation (eq. 3)
    rho   = S_P r_rel,          r_K = r_P + rho          position (eq. 3)
    w_K   = w_P + S_P w_rel                              angular velocity (eq. 5)
    v_K   = v_P + w_P x rho + S_P r_rel'                 velocity (eq. 4)
    J_T,K = J_T,P - tilde(rho) J_R,P + S_P d(r_rel)/dy   Jacobian of translation (eq. 4)
    J_R,K = J_R,P + S_P d(w_rel)/dy'                     Jacobian of rotation (eq. 5)
    abar_K = abar_P + alphabar_P x rho + w_P x (w_P x rho) + 2 w_P x (S_P r_rel')
             + S_P r_rel''|_(y''=0)                      local acceleration (eq. 6)
    alphabar_K = alphabar_P + w_P x (S_P w_rel) + S_P w_rel'|_(y''=0)        (eq. 7)

so that a_K = J_T,K y'' + abar_K and alpha_K = J_R,K y'' + alphabar_K.  The same recursion
with y' = 0 gives the rheonomic parts vbar_K, omegabar_K of eqs. 4-5 (zero for scleronomic
systems, where no intermediate variables are created for them).  Primes on relative
quantities are time derivatives in P components (total derivatives through y, t and the
time-dependent parameters).  Only the small relative expressions are ever differentiated; every
absolute quantity is stored as intermediate variables (:mod:`.intermediates`).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..errors import ModelError
from ..model.rotations import AXES, elementary_matrix
from .intermediates import Intermediates


def skew(v) -> sp.Matrix:
    """The cross-product matrix tilde(v) with tilde(v) w = v x w."""
    return sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def cross(a, b) -> sp.Matrix:
    return sp.Matrix([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                      a[0] * b[1] - a[1] * b[0]])


def matmul(A, B) -> sp.Matrix:
    """The product A B of two small symbolic matrices, entry by entry.

    Each entry is ``Add(*products)`` over the nonzero products, which is what sympy's own
    ``A * B`` computes (sparse EXRAW product); doing it directly avoids the conversion of both
    operands to and from a DomainMatrix for every product, which dominated the derivation time
    of large systems.  A zero entry of A or B skips its products."""
    m, n = A.shape
    if B.shape[0] != n:
        raise ValueError(f"matmul: shapes {A.shape} and {B.shape} do not match")
    p = B.shape[1]
    a = A.tolist()
    b = B.tolist()
    out = []
    for i in range(m):
        nz = [(k, x) for k, x in enumerate(a[i]) if x]
        for j in range(p):
            out.append(sp.Add(*[x * b[k][j] for k, x in nz if b[k][j]]))
    return sp.Matrix(m, p, out)


def jacobian(vec, syms) -> sp.Matrix:
    """``vec.jacobian(syms)``, differentiating only by the symbols an entry contains."""
    out = []
    for e in vec:
        free = e.free_symbols
        out.extend(sp.diff(e, s) if s in free else sp.S.Zero for s in syms)
    return sp.Matrix(len(vec), len(syms), out)


@dataclass
class FrameKinematics:
    """Absolute kinematics of one frame, in ISYS components, as intermediate symbols."""

    name: str
    S: sp.Matrix          # rotation, components in frame -> ISYS
    r: sp.Matrix          # position of the origin
    omega: sp.Matrix      # angular velocity
    v: sp.Matrix          # velocity of the origin
    JT: sp.Matrix         # 3 x f
    JR: sp.Matrix         # 3 x f
    abar: sp.Matrix       # acceleration without the y'' part
    alphabar: sp.Matrix   # angular acceleration without the y'' part
    vbar: sp.Matrix = None      # velocity without the y' part (rheonomic terms, eq. 4)
    omegabar: sp.Matrix = None  # angular velocity without the y' part (eq. 5)


class TimeDerivative:
    """Total time derivative d/dt through coordinates, time and time-dependent parameters."""

    def __init__(self, system):
        self.t = system.t
        chain = []  # (symbol, its time derivative)
        for c in system.coordinates_.values():
            chain.append((c.symbol, c.velocity))
            chain.append((c.velocity, c.acceleration))
        for p in system.time_parameters.values():
            chain.append((p.symbol, p.velocity))
            chain.append((p.velocity, p.acceleration))
        self.chain = dict(chain)
        self.accelerations = {c.acceleration for c in system.coordinates_.values()}

    def __call__(self, expr, without_ydd: bool = False):
        if isinstance(expr, sp.MatrixBase):
            return expr.applyfunc(lambda e: self(e, without_ydd))
        expr = sp.sympify(expr)
        out = sp.diff(expr, self.t) if self.t in expr.free_symbols else sp.S.Zero
        for s in expr.free_symbols:
            ds = self.chain.get(s)
            if ds is None or (without_ydd and ds in self.accelerations):
                continue
            out += sp.diff(expr, s) * ds
        return out


def relative_angular_velocity(rotation, D: TimeDerivative) -> sp.Matrix:
    """w_rel in reference-frame components for a rotation (see :mod:`mbsfmu.model.rotations`)."""
    if rotation.matrix_ is not None:
        R = rotation.matrix_
        W = D(R) * R.T  # skew-symmetric for an orthonormal R
        return sp.Matrix([W[2, 1], W[0, 2], W[1, 0]])
    w = sp.zeros(3, 1)
    R = sp.eye(3)
    for axis, angle in rotation.sequence:
        e = sp.zeros(3, 1)
        e[AXES[axis]] = 1
        w += R * e * D(angle)
        R = R * elementary_matrix(axis, angle)
    return w


class Kinematics:
    """Absolute kinematics of every frame of a system, computed once from the root out."""

    def __init__(self, system, w: Intermediates):
        self.system = system
        self.w = w
        self.D = TimeDerivative(system)
        y = system.y
        self.y = y
        self.yd = system.yd
        f = len(y)
        zero3 = sp.zeros(3, 1)
        root = system.frames["ISYS"]
        self.frames: dict[str, FrameKinematics] = {
            root.name: FrameKinematics(root.name, sp.eye(3), zero3, zero3, zero3, sp.zeros(3, f),
                                       sp.zeros(3, f), zero3, zero3, zero3, zero3)}
        forbidden = set(system.yd) | {u.symbol for u in system.inputs.values()}
        for fr in list(system.frames.values())[1:]:
            used = fr.position.free_symbols | fr.rotation.matrix().free_symbols
            bad = used & forbidden
            if bad:
                raise ModelError(f"frame {fr.name!r}: its placement may depend on coordinates, "
                                 f"time, time parameters and constants only, not on {sorted(map(str, bad))}")
            self.frames[fr.name] = self._child(self.frames[fr.ref], fr)

    def _child(self, P: FrameKinematics, fr) -> FrameKinematics:
        w, D, y, yd = self.w, self.D, self.y, self.yd
        r_rel = fr.position
        rot = fr.rotation
        rd_rel = D(r_rel)
        rdd_rel = D(rd_rel, without_ydd=True)
        if rot.is_identity():
            S = P.S
            w_rel = sp.zeros(3, 1)
        else:
            S = w.matrix(matmul(P.S, rot.matrix()))
            w_rel = relative_angular_velocity(rot, D)
        wd_rel = D(w_rel, without_ydd=True)
        rho = w.matrix(matmul(P.S, r_rel))
        vrel = w.matrix(matmul(P.S, rd_rel))
        wrel_abs = w.matrix(matmul(P.S, w_rel))
        r = w.matrix(P.r + rho)
        omega = w.matrix(P.omega + wrel_abs)
        v = w.matrix(P.v + cross(P.omega, rho) + vrel)
        JT = w.matrix(P.JT - matmul(skew(rho), P.JR) + matmul(P.S, jacobian(r_rel, y)))
        JR = w.matrix(P.JR + matmul(P.S, jacobian(w_rel, yd)))
        alphabar = w.matrix(P.alphabar + cross(P.omega, wrel_abs) + matmul(P.S, wd_rel))
        abar = w.matrix(P.abar + cross(P.alphabar, rho) + cross(P.omega, cross(P.omega, rho))
                        + 2 * cross(P.omega, vrel) + matmul(P.S, rdd_rel))
        no_yd = {q: 0 for q in yd}
        vbar = w.matrix(P.vbar + cross(P.omegabar, rho) + matmul(P.S, rd_rel.xreplace(no_yd)))
        omegabar = w.matrix(P.omegabar + matmul(P.S, w_rel.xreplace(no_yd)))
        return FrameKinematics(fr.name, S, r, omega, v, JT, JR, abar, alphabar, vbar, omegabar)

    def __getitem__(self, name: str) -> FrameKinematics:
        if name not in self.frames:
            raise ModelError(f"unknown frame {name!r} (known frames: {', '.join(self.frames)})")
        return self.frames[name]
