"""M v and q - k of a tree model by recursive Newton-Euler (RNEA), in O(N) intermediates.

The mass matrix of eq. 11 (seed 002) has f^2 entries, each a sum over the bodies: for a chain
of N bodies it costs O(N f^2) terms to derive, print and compile, although a tree model run on
the articulated-body algorithm (:mod:`.articulated_body`) never needs it.  Where M is still
asked for on such a model (the mass-matrix formulation of the engine, the parameter probe of
:mod:`.parameter_requirements`) it is taken column by column from the inverse dynamics

    tau(y, y', y'') = M(y) y'' + k(y, y') - q(y, y'),

split into its two parts, each one pass over the frames (notation and spatial algebra of
:mod:`.articulated_body`: motions (alpha, a) and wrenches (n, f) at a frame's origin, ISYS
components, X the rigid transport from the reference frame P to K over rho = r_K - r_P):

**M v** (:attr:`RecursiveNewtonEuler.mass_times`), the part linear in y'' = v:

    forward:   Delta_ISYS = 0,   Delta_K = X_K Delta_P + S_K v_K
    bodies:    w_B = (I_w Delta_alpha, m Delta_a)        at the body's cg frame (about the cg)
    backward:  W_K = sum of the bodies at K + sum_c X_c^T W_c,   (M v)_K = S_K^T W_K

**q - k** (:attr:`RecursiveNewtonEuler.force`), the rest at y'' = 0, with gravity as the
acceleration -g of ISYS (Featherstone's trick, as in the ABA):

    bodies:    p_B = (I_w alphabar + w x (I_w w),  m (abar - g))
    backward:  P_K = sum of the bodies at K + sum_c X_c^T P_c,   (q - k)_K = tau_K - S_K^T P_K

with tau the joint forces of the force elements (``Equations.q_applied``, gravity excluded).
v is carried by the velocity symbols y' (``mass_times`` reads y' as v and nothing else from
it), so a generated function with the usual arguments (t, y, yd, prm, u, tp) evaluates M v
with yd = v, and column j of M is M e_j.  Both agree with eq. 11 to rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .articulated_body import _transport_motion, _transport_wrench, own_coordinates
from .kinematics import cross, matmul
from .newton_euler import _products


@dataclass
class RecursiveNewtonEuler:
    """M(y) v (v in the places of y') and q - k, f expressions each, over the intermediates;
    None with the ``reason`` where the model is not a tree on joint coordinates."""

    mass_times: list | None
    force: list | None
    reason: str | None = None


def recursive_newton_euler(eqs) -> RecursiveNewtonEuler:
    """The RNEA parts of ``eqs`` (derived once per Equations object)."""
    return eqs.derived("recursive_newton_euler", _derive)


def world_inertia(w, K, body) -> sp.Matrix:
    """I_w = S I_b S^T of a body at its cg frame K (upper triangle as intermediates, mirrored)."""
    SI = matmul(K.S, body.inertia)
    Iw = sp.zeros(3, 3)
    for i in range(3):
        for j in range(i, 3):
            Iw[i, j] = Iw[j, i] = w.aux(sp.Add(*_products(list(SI[i, :]), list(K.S[j, :]))))
    return Iw


def _add(W: dict, name: str, wrench: sp.Matrix) -> None:
    W[name] = wrench if W.get(name) is None else W[name] + wrench


def _derive(eqs) -> RecursiveNewtonEuler:
    system = eqs.system
    if eqs.m:
        return RecursiveNewtonEuler(None, None, "the model has constraints (kinematic loops)")
    own, reason = own_coordinates(system)
    if reason:
        return RecursiveNewtonEuler(None, None, reason)
    w, kin = eqs.intermediates, eqs.kinematics
    f = len(system.y)
    v = list(system.yd)
    g = system.gravity_vector
    frames = list(system.frames.values())[1:]
    rho = {fr.name: w.matrix(matmul(kin[fr.ref].S, fr.position)) for fr in frames}
    joint = {fr.name: sp.Matrix.vstack(*kin.joint_columns(fr.name, own[fr.name]))
             for fr in frames if own[fr.name]}

    # forward pass of the part linear in y'' (= v)
    delta = {"ISYS": sp.zeros(6, 1)}
    for fr in frames:
        d = _transport_motion(w, delta[fr.ref], rho[fr.name])
        if fr.name in joint:
            d = w.matrix(d + joint[fr.name] * sp.Matrix([v[j] for j in own[fr.name]]))
        delta[fr.name] = d

    # the bodies' wrenches at their cg frames
    WM: dict = {}
    WB: dict = {}
    for body in system.bodies.values():
        name = body.cg_frame
        K = kin[name]
        Iw, m, d = world_inertia(w, K, body), body.mass, delta[name]
        _add(WM, name, sp.Matrix([*w.matrix(matmul(Iw, d[:3, :])), *w.matrix(m * d[3:, :])]))
        Iwo = w.matrix(matmul(Iw, K.omega))
        n = w.matrix(matmul(Iw, K.alphabar) + cross(K.omega, Iwo))
        _add(WB, name, sp.Matrix([*n, *w.matrix(m * (K.abar - g))]))

    # backward pass: joint projections, then transport to the reference frame
    Mv = [sp.S.Zero] * f
    h = list(eqs.q_applied)
    for fr in reversed(frames):
        for W in (WM, WB):
            if W.get(fr.name) is not None:
                W[fr.name] = w.matrix(W[fr.name])
        if fr.name in joint:
            S = joint[fr.name]
            for c, j in enumerate(own[fr.name]):
                col = list(S[:, c])
                if WM.get(fr.name) is not None:
                    Mv[j] = sp.Add(*_products(col, list(WM[fr.name])))
                if WB.get(fr.name) is not None:
                    h[j] = h[j] - sp.Add(*_products(col, list(WB[fr.name])))
        if fr.ref == "ISYS":
            continue
        for W in (WM, WB):
            if W.get(fr.name) is not None:
                _add(W, fr.ref, _transport_wrench(w, W[fr.name], rho[fr.name]))
    return RecursiveNewtonEuler(Mv, h, None)
