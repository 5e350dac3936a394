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

import sympy as sp

from ..core.errors import ModelError
from ..model.multibody import System
from ..model.names import INERTIAL
from ..model.rotations import AXES, elementary_matrix
from ..model.time_derivative import TimeDerivative
from .intermediates import Intermediates


def skew(v) -> sp.Matrix:
    """The cross-product matrix tilde(v) with tilde(v) w = v x w."""
    return sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def cross(a, b) -> sp.Matrix:
    return sp.Matrix([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                      a[0] * b[1] - a[1] * b[0]])


def dot(a, b) -> sp.Expr:
    """a . b as one sum of the nonzero products (what ``(a.T * b)[0]`` gives)."""
    return sp.Add(*[x * y for x, y in zip(a, b) if x and y])


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


class FrameKinematics:
    """Absolute kinematics of one frame, in ISYS components, as intermediate symbols.

    The Jacobians ``JT`` and ``JR`` (3 x f each, so O(f) per frame and O(N f) for the model)
    are formed on first use, from the reference frame's (eqs. 4-5): the articulated-body path
    reads only the columns of a frame's own coordinates (:meth:`joint_columns`)."""

    def __init__(self, name, S, r, omega, v, abar, alphabar, vbar=None, omegabar=None,
                 JT=None, JR=None, jacobians=None):
        self.name = name
        self.S = S                # rotation, components in frame -> ISYS
        self.r = r                # position of the origin
        self.omega = omega        # angular velocity
        self.v = v                # velocity of the origin
        self.abar = abar          # acceleration without the y'' part
        self.alphabar = alphabar  # angular acceleration without the y'' part
        self.vbar = vbar          # velocity without the y' part (rheonomic terms, eq. 4)
        self.omegabar = omegabar  # angular velocity without the y' part (eq. 5)
        self._JT, self._JR = JT, JR
        self._jacobians = jacobians  # () -> (JT, JR), formed on first use

    def _form_jacobians(self) -> None:
        if self._JT is None:
            self._JT, self._JR = self._jacobians()
            self._jacobians = None

    @property
    def JT(self) -> sp.Matrix:
        """Jacobian of translation, 3 x f (eq. 4)."""
        self._form_jacobians()
        return self._JT

    @property
    def JR(self) -> sp.Matrix:
        """Jacobian of rotation, 3 x f (eq. 5)."""
        self._form_jacobians()
        return self._JR

    @property
    def jacobians_formed(self) -> bool:
        return self._JT is not None


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
    """Absolute kinematics of the frames of a system, each computed once, from the root out,
    when first asked for.  A model without frames (a LagrangianSystem) has the inertial frame
    only: its time derivative ``D`` is what its constraint rows need."""

    def __init__(self, system, w: Intermediates):
        self.system = system
        self.w = w
        self.D = TimeDerivative(system)
        y = system.y
        self.y = y
        self.yd = system.yd
        f = len(y)
        zero3 = sp.zeros(3, 1)
        self.frames: dict[str, FrameKinematics] = {
            INERTIAL: FrameKinematics(INERTIAL, sp.eye(3), zero3, zero3, zero3, zero3, zero3,
                                      zero3, zero3, JT=sp.zeros(3, f), JR=sp.zeros(3, f))}
        #: the frames the model places (name -> Frame), the inertial frame first
        self.placed = system.frames if isinstance(system, System) else {INERTIAL: None}
        self._placement = {}  # frame -> (reference kinematics, rho, r_rel, w_rel)
        forbidden = set(system.yd) | {u.symbol for u in system.inputs.values()}
        for fr in list(self.placed.values())[1:]:
            used = fr.position.free_symbols | fr.rotation.matrix().free_symbols
            bad = used & forbidden
            if bad:
                raise ModelError(f"frame {fr.name!r}: its placement may depend on coordinates, "
                                 f"time, time parameters and constants only, not on {sorted(map(str, bad))}")
        # a frame's kinematics are formed when first asked for (``self[name]``), its reference
        # frames' before it: frames nothing uses (most nodes of a flexible body) cost nothing

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
        alphabar = w.matrix(P.alphabar + cross(P.omega, wrel_abs) + matmul(P.S, wd_rel))
        abar = w.matrix(P.abar + cross(P.alphabar, rho) + cross(P.omega, cross(P.omega, rho))
                        + 2 * cross(P.omega, vrel) + matmul(P.S, rdd_rel))
        no_yd = {q: 0 for q in yd}
        vbar = w.matrix(P.vbar + cross(P.omegabar, rho) + matmul(P.S, rd_rel.xreplace(no_yd)))
        omegabar = w.matrix(P.omegabar + matmul(P.S, w_rel.xreplace(no_yd)))
        self._placement[fr.name] = (P, rho, r_rel, w_rel)

        def jacobians():
            # P's first (a chain of frames whose Jacobians were never asked for is formed root first)
            pending = [P]
            while not pending[-1].jacobians_formed:
                pending.append(self._placement[pending[-1].name][0])
            for K in reversed(pending):
                K._form_jacobians()
            JT = w.matrix(P.JT - matmul(skew(rho), P.JR) + matmul(P.S, jacobian(r_rel, y)))
            JR = w.matrix(P.JR + matmul(P.S, jacobian(w_rel, yd)))
            return JT, JR

        return FrameKinematics(fr.name, S, r, omega, v, abar, alphabar, vbar, omegabar,
                               jacobians=jacobians)

    def joint_columns(self, name: str, own: list[int]) -> tuple[sp.Matrix, sp.Matrix]:
        """(J_R[:, own], J_T[:, own]) of frame ``name`` for coordinates that place this frame
        only (its *own* coordinates, :mod:`.articulated_body`), without forming the whole
        Jacobians: the reference frame does not depend on them, so eqs. 4-5 reduce to
        J_T,K e_j = S_P d(r_rel)/dy_j and J_R,K e_j = S_P d(w_rel)/dy'_j (the same entries as
        the full Jacobians', the same intermediates)."""
        K = self[name]
        if K.jacobians_formed or name not in self._placement:
            return K.JR[:, own], K.JT[:, own]
        P, _, r_rel, w_rel = self._placement[name]
        ys = [self.y[j] for j in own]
        yds = [self.yd[j] for j in own]
        JT = self.w.matrix(matmul(P.S, jacobian(r_rel, ys)))
        JR = self.w.matrix(matmul(P.S, jacobian(w_rel, yds)))
        return JR, JT

    def __getitem__(self, name: str) -> FrameKinematics:
        K = self.frames.get(name)
        if K is not None:
            return K
        frames = self.placed
        if name not in frames:
            raise ModelError(f"unknown frame {name!r} (known frames: {', '.join(frames)})")
        chain = []
        while name not in self.frames:
            chain.append(name)
            name = frames[name].ref
        for n in reversed(chain):
            self.frames[n] = self._child(self.frames[frames[n].ref], frames[n])
        return self.frames[chain[0]]


def expression_kinematics(vec, system, D: TimeDerivative, w) -> tuple:
    """(x, J, x', x'' at y'' = 0) of a vector expression x(y, t) of the coordinates and time (a
    natural-coordinate point or vector), as intermediate variables, J = dx/dy; derived once per
    derivation (kept in ``w.memo``)."""
    key = ("expression_kinematics", tuple(vec))
    if key not in w.memo:
        vel = D(vec, without_ydd=True)
        w.memo[key] = (w.matrix(vec), w.matrix(jacobian(vec, system.y)), w.matrix(vel),
                       w.matrix(D(vel, without_ydd=True)))
    return w.memo[key]


def time_partial(expr, system):
    """The partial derivative of an expression (or matrix) by time at fixed coordinates: through
    t and the time parameters (p -> D<p>, D<p> -> D2<p>)."""
    if isinstance(expr, sp.MatrixBase):
        return expr.applyfunc(lambda e: time_partial(e, system))
    out = sp.diff(expr, system.t)
    for p in system.time_parameters.values():
        for sym, dsym in ((p.symbol, p.velocity), (p.velocity, p.acceleration)):
            if sym in expr.free_symbols:
                out += sp.diff(expr, sym) * dsym
    return out
