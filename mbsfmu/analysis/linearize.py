"""Linearization of the equations of motion about an operating point (seed 002 §4.1).

The nonlinear equations (seed 002 eq. 11)

    M(y, t) ÿ + k(y, ẏ, t) = q(y, ẏ, u, t),     h := q - k,

are expanded to first order about set values y0, ẏ0, u0 (numbers or sympy symbols) in the
deviations δy = y - y0, δẏ, δu.  With the nominal acceleration ÿ0 = M0⁻¹ h0,

    M0 δÿ + D δẏ + K δy = F δu,                                                          (1)
    M0 = M(y0),   D = -∂h/∂ẏ,   K = -∂h/∂y + ∂M/∂y · ÿ0,   F = ∂h/∂u   (all at the point),

where (∂M/∂y · ÿ0)_kl = Σ_j ∂M_kj/∂y_l ÿ0_j vanishes at an equilibrium (ẏ0 = 0, h0 = 0).
The derivatives are taken by the chain rule through the intermediate variables with the point
substituted at every step (:mod:`.taylor`), so no closed form of M, k, q is ever expanded.

**Constrained systems** (holonomic, scleronomic c(y) = 0) are linearized in
n = f - m independent coordinates y_i (:mod:`.velocity_transformation`): δy = J_i δy_i.  The
equations with multipliers, M ÿ = h + Cᵀλ, expand to

    M0 δÿ + D δẏ + (K - Σ_j λ0_j ∂C_jᵀ/∂y) δy = F δu + C0ᵀ δλ,

with λ0 from the operating point, λ0 = C_d⁻ᵀ (M0 ÿ0 - h0)_d.  Along the constraint manifold
δÿ = J_i δÿ_i + Γ δy_i, where Γ's column a is the curvature of the manifold (velocity
transformation eq. (1)) contracted with ÿ0: Γ_d,a = -C_d⁻¹ [(J_i e_a)ᵀ ∂C_jᵀ/∂y ÿ0]_j (zero at
an equilibrium).  Premultiplying by J_iᵀ removes the multipliers (C0 J_i = 0):

    M_r = J_iᵀ M0 J_i,   D_r = J_iᵀ D J_i,   F_r = J_iᵀ F,
    K_r = J_iᵀ [(K - Σ_j λ0_j ∂C_jᵀ/∂y) J_i + M0 Γ].                                      (2)

The term with λ0 is the geometric stiffness of the loaded constraints: it is why a
mechanism held by its joints against gravity or a spring has the stiffness it has.

At a **moving** point (ẏ0 ≠ 0, with C ẏ0 = 0: the rates of the dependent coordinates must be
given consistently, and a ConstraintError names the consistent values otherwise) the velocity
and acceleration constraints C ẏ = 0 and C ÿ + b'' = 0 add velocity-dependent terms (zero at
rest):

    ÿ0 = J_i ÿ_i0 + γ0,   γ0 = -C_d⁻¹ b''0 in the dependent rows,                           (4)
    δẏ = J_i δẏ_i + N δy_i,   N_d = -C_d⁻¹ ∂(C ẏ0)/∂y J_i,                                    (5)
    δÿ = J_i δÿ_i + P δẏ_i + (Γ + Q) δy_i,
         P_d = -C_d⁻¹ ∂b''/∂ẏ J_i,   Q_d = -C_d⁻¹ (∂b''/∂y J_i + ∂b''/∂ẏ N),              (6)

so that D_r gains J_iᵀ M0 P and K_r gains J_iᵀ (M0 Q + D N); the outputs' C gains ∂g/∂ẏ N.

**State space** with x = [δy_i; δẏ_i] and outputs z = g(y, ẏ, u) (model outputs, coordinates,
velocities):

    ẋ = A x + B δu,   A = [[0, I], [-M_r⁻¹ K_r, -M_r⁻¹ D_r]],   B = [[0], [M_r⁻¹ F_r]],
    δz = C x + D δu,  C = [∂g/∂y J_i, ∂g/∂ẏ J_i],   D = ∂g/∂u.                             (3)

Away from an equilibrium ẋ has the constant part [ẏ0; ÿ0] besides (3) (``Linearization.drift``).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..core.errors import ConstraintError, ModelError, ParameterError, SingularMassMatrixError
from ..equations.derive import derive
from ..equations.outputs import output_expressions
from ..model.loader import system_of
from ..runner.diagram import Diagram
from . import arguments
from .closed_loop import linearize_diagram
from .linear_model import Linearization, mass_singularity
from .operating_point import check_constants, complete_coordinates, constant_values, operating_point
from .taylor import PointDerivatives
from .velocity_transformation import choose_independent, velocity_transformation


def linearize(system, at=None, inputs=None, outputs=None, *, params=None, symbolic: bool = True,
              independent=None, equilibrium: bool = False, tol: float = 1e-8, **diagram_options):
    """Linearize ``system`` (a System or a model file) about the operating point ``at``.

    A runner ``Diagram`` instead gives its linearized closed loop
    (:func:`mbsfmu.analysis.closed_loop.linearize_diagram`: ``at``, and the keywords
    ``loop_at``, ``domain``, ``plants``, ``pade_order`` of ``diagram_options``).

    ``at``: set values by name (see :mod:`.operating_point`; numbers or sympy expressions).
    ``inputs``: input names (default: all of the model's); ``outputs``: names of model outputs
    (expression and frame outputs), coordinates (any of them, also dependent ones) or velocities
    ``der(name)`` (default: the states).  ``params``: constant values substituted before
    differentiating; ``symbolic=False`` substitutes every constant (defaults for the others),
    which gives numbers at once; otherwise the result keeps the constants as symbols (seed 002)
    and :meth:`Linearization.to_numeric` gives numbers.  ``independent``: names of the
    independent coordinates of a constrained system (default: the column-pivoted QR of C).
    ``equilibrium=True``: the point must be one (ẏ0 = 0 and ÿ0 = 0 within ``tol``, checked with
    the constants' values), else ParameterError; the ÿ0 terms are then left out.  ``tol`` (>= 0)
    is also the tolerance of the velocity constraints at a moving point.

    Every argument is checked before any work (ParameterError naming it); constants given in
    ``params`` or ``at`` must meet the model's requirements as in ``simulate`` (a constant with
    which the mass matrix is singular, a body's mass or inertia, declared bounds), and a mass
    matrix singular at the point is a SingularMassMatrixError naming the motion that moves no
    mass there.

    Returns a :class:`Linearization`: ``M0, D, K, F`` of eq. (1)/(2) and the state space
    ``A, B, C`` and ``ss.D`` of eq. (3) with named states, inputs and outputs."""
    if _is_diagram(system):
        unknown = sorted(set(diagram_options) - {"loop_at", "domain", "plants", "pade_order"})
        if unknown:
            raise ParameterError(f"linearize: unexpected keyword(s) {', '.join(unknown)} for a "
                                 "Diagram (it takes at, loop_at, domain, plants and pade_order)")
        given = [k for k, v in (("inputs", inputs), ("outputs", outputs), ("params", params),
                                ("independent", independent)) if v is not None]
        if given:
            raise ParameterError(f"linearize: {', '.join(given)} belong to a model; a Diagram's "
                                 "closed loop takes at, loop_at, domain, plants and pade_order")
        return linearize_diagram(system, at, **diagram_options)
    if diagram_options:
        raise ParameterError(f"linearize: unexpected keyword(s) {', '.join(sorted(diagram_options))} "
                             "(loop_at, domain, plants and pade_order are for a Diagram)")
    symbolic = arguments.flag(symbolic, "linearize: symbolic")
    equilibrium = arguments.flag(equilibrium, "linearize: equilibrium")
    tol = arguments.nonnegative(tol, "linearize: tol")
    at = arguments.mapping(at, "linearize: at")
    params = arguments.mapping(params, "linearize: params")
    system = _system_of(system)
    eqs = derive(system)
    if eqs.m > eqs.mh:
        raise ModelError(f"{system.name}: linearize does not handle nonholonomic constraints yet")
    coords = list(system.coordinates_)
    in_names = (list(system.inputs) if inputs is None else
                arguments.name_list(inputs, "linearize: inputs", system.inputs, "input"))
    if independent is not None:
        independent = arguments.name_list(independent, "linearize: independent", coords, "coordinate")
    op = operating_point(system, at, params, symbolic)
    given = [n for n in system.constants_ if n in params or n in at]
    values = constant_values(system, op) if given else None
    if values is not None:
        check_constants(system, values, "linearize")
    complete_coordinates(system, eqs, op)
    at_point = PointDerivatives(eqs.intermediates, op.substitution(system),
                                [*system.y, *system.yd, *(system.inputs[n].symbol for n in in_names)])
    y, yd = system.y, system.yd
    u = [system.inputs[n].symbol for n in in_names]
    f = len(y)
    h = list(eqs.q - eqs.k)
    mh = eqs.mh
    out_names, out_exprs = _outputs(system, eqs, outputs, independent_hint=None)
    parts = {
        "M0": at_point.values_of(eqs.M).reshape(f, f), "h0": at_point.values_of(h),
        "D": -at_point.jacobian(h, yd), "K": -at_point.jacobian(h, y), "F": at_point.jacobian(h, u),
        "C0": at_point.values_of(eqs.C[:mh, :]).reshape(mh, f),
        "Oy": at_point.jacobian(out_exprs, y), "Oyd": at_point.jacobian(out_exprs, yd),
        "Ou": at_point.jacobian(out_exprs, u)}
    numeric = not any(_free(m) for m in parts.values())
    alg = _Numeric() if numeric else _Symbolic()
    P = {k: alg.matrix(v) for k, v in parts.items()}
    M0, h0, K = P["M0"], P["h0"], P["K"]

    if mh:
        b1 = op.numeric_matrix(at_point.values_of(eqs.b1[:mh, :]))
        if b1 is None or np.max(np.abs(b1)) > 1e-12:
            raise ModelError(f"{system.name}: linearize handles scleronomic constraints only "
                             f"(c without t); b' = {b1.ravel().tolist() if b1 is not None else '?'}")
        C0num = op.numeric_matrix(parts["C0"])
        if C0num is None and independent is None:
            raise ParameterError("linearize: with symbolic set values of a constrained system, name "
                                 "the independent coordinates (independent=[...])")
        C0num = C0num if C0num is not None else np.ones((mh, f))
        ind, dep = choose_independent(C0num, coords, system.constraint_names[:mh], independent)
        J = alg.matrix(sp.Matrix(velocity_transformation(P["C0"], ind, dep, alg.solve)))
    else:
        if independent is not None:
            raise ParameterError(f"linearize: {system.name!r} has no constraints; all coordinates "
                                 "are independent (leave independent out)")
        ind, dep = list(range(f)), []
        J = alg.eye(f)
    names = [coords[k] for k in ind]
    if outputs is None:
        out_names, out_exprs = _outputs(system, eqs, None, independent_hint=names)
        P["Oy"] = alg.matrix(at_point.jacobian(out_exprs, y))
        P["Oyd"] = alg.matrix(at_point.jacobian(out_exprs, yd))
        P["Ou"] = alg.matrix(at_point.jacobian(out_exprs, u))

    Mr = J.T @ M0 @ J
    _check_mass(system, op, alg, Mr, J, coords, given)
    rest = all(v == 0 for v in op.yd.values())
    moving = bool(mh) and not rest
    if moving:
        # the velocities must satisfy C y' = 0; gamma0 = -C^+ b''0 in the dependent rows (eq. (4))
        _check_velocities(system, op, P["C0"], J, ind, dep, coords, tol)
        Cd = alg.cols(P["C0"], dep)
        gamma0 = _dependent_rows(alg, f, dep, -alg.solve(Cd, alg.matrix(at_point.values_of(
            list(eqs.b2[:mh])))))
        hr = J.T @ (h0 - M0 @ gamma0)
    else:
        hr = J.T @ h0
    zdd0 = alg.zeros(len(ind), 1) if alg.is_zero(hr) else alg.solve(Mr, hr)
    if equilibrium:
        _check_equilibrium(system, op, alg, zdd0, names, hr, tol)
        zdd0 = alg.zeros(len(ind), 1)
    ydd0 = J @ zdd0 + gamma0 if moving else J @ zdd0
    if not alg.is_zero(ydd0):
        K = K + alg.matrix(_mass_derivative(at_point, eqs.M, y, alg.to_sympy(ydd0)))
    Gamma = None
    if mh:
        minus_G, Gamma = _constraint_terms(at_point, eqs.C[:mh, :], y, alg, M0, ydd0, h0, J, ind,
                                           dep, P["C0"])
        K = K + minus_G
    Kr = J.T @ K @ J
    if Gamma is not None:
        Kr = Kr + J.T @ M0 @ Gamma
    Dr = J.T @ P["D"] @ J
    Cy = P["Oy"] @ J
    if moving:  # the velocity-dependent terms (eqs. (4)-(6)), zero at rest
        N, Pm, Qm = _moving_terms(at_point, eqs, y, yd, alg, mh, f, J, dep, Cd)
        Kr = Kr + J.T @ M0 @ Qm + J.T @ P["D"] @ N
        Dr = Dr + J.T @ M0 @ Pm
        Cy = Cy + P["Oyd"] @ N
    Fr = J.T @ P["F"]
    return Linearization(
        system_name=system.name, coordinates=coords, independent=names,
        J=J, M0=Mr, D=Dr, K=Kr, F=Fr, Cy=Cy, Cyd=P["Oyd"] @ J, Du=P["Ou"], inputs=in_names,
        outputs=out_names, point=op.as_dict(), acceleration=zdd0,
        velocity=alg.matrix(sp.Matrix([op.yd[coords[k]] for k in ind])),
        equilibrium=bool(rest and _numeric_zero(op, alg, zdd0, tol)),
        constants={c.symbol: c.value for c in system.constants_.values()},
        substituted=dict(op.constants), system=system)


# ---------------------------------------------------------------------------- pieces
def _is_diagram(obj) -> bool:
    """Whether ``obj`` is a runner Diagram."""
    return isinstance(obj, Diagram)


def _check_velocities(system, op, C0, J, ind, dep, coords, tol) -> None:
    """A moving operating point of a constrained system must satisfy C y'0 = 0: ConstraintError
    naming the worst velocity constraint, its residual and the consistent rates of the dependent
    coordinates for the given independent ones (y'0 = J y_i'0)."""
    C = op.numeric_matrix(C0)
    v = op.numeric_matrix(sp.Matrix([op.yd[c] for c in coords]))
    if C is None or v is None:
        return  # symbolic set values: the user's to keep consistent
    r = C @ v
    scale = max(1.0, float(np.max(np.abs(v))))
    if float(np.max(np.abs(r))) <= tol * scale:
        return
    row = int(np.argmax(np.abs(r)))
    Jn = op.numeric_matrix(sp.Matrix(J)) if not isinstance(J, np.ndarray) else J
    hint = ""
    if Jn is not None:
        vd = Jn @ v[ind]
        given = ", ".join(f"der({coords[k]})" for k in ind)
        hint = f"; for the given {given} they are " + ", ".join(
            f"der({coords[k]}) = {float(vd[k, 0]):.12g}" for k in dep)
    raise ConstraintError(f"linearize: the operating point's velocities violate the velocity "
                          f"constraint of {system.constraint_names[row]!r} (C y' = {float(r[row, 0]):.3g}); "
                          f"give the rates of the dependent coordinates consistently{hint}")


def _dependent_rows(alg, f, dep, X):
    """The f-row matrix with the rows of X in the dependent rows ``dep`` and zeros elsewhere."""
    out = alg.zeros(f, X.shape[1])
    for r, k in enumerate(dep):
        for a in range(X.shape[1]):
            out[k, a] = X[r, a]
    return out


def _moving_terms(at_point, eqs, y, yd, alg, mh, f, J, dep, Cd):
    """N, P, Q of a constrained system linearized at a moving point (module docstring, eqs.
    (4)-(6)): the velocity constraint C y' = 0 gives δy' = J δy_i' + N δy_i and the acceleration
    constraint C y'' + b'' = 0 gives δy'' = J δy_i'' + P δy_i' + (Γ + Q) δy_i, with
    N_d = -C_d⁻¹ ∂(C y'0)/∂y J,  P_d = -C_d⁻¹ ∂b''/∂y' J,  Q_d = -C_d⁻¹ (∂b''/∂y J + ∂b''/∂y' N)
    (zero rows for the independent coordinates)."""
    C = eqs.C[:mh, :]
    b2 = list(eqs.b2[:mh])
    Cv_y = alg.matrix(at_point.jacobian(list(C * sp.Matrix(yd)), y))
    b2_y = alg.matrix(at_point.jacobian(b2, y))
    b2_yd = alg.matrix(at_point.jacobian(b2, yd))
    N = _dependent_rows(alg, f, dep, -alg.solve(Cd, Cv_y @ J))
    Pm = _dependent_rows(alg, f, dep, -alg.solve(Cd, b2_yd @ J))
    Qm = _dependent_rows(alg, f, dep, -alg.solve(Cd, b2_y @ J + b2_yd @ N))
    return N, Pm, Qm

def _mass_derivative(at_point, M, y, ydd0) -> sp.Matrix:
    """(∂M/∂y · ÿ0)_kl = Σ_j ∂M_kj/∂y_l ÿ0_j (eq. 1)."""
    f = len(y)
    rows = []
    for k in range(f):
        G = at_point.jacobian([M[k, j] for j in range(f)], y)   # f x f: j, l
        rows.append([sum((G[j, l] * ydd0[j] for j in range(f)), sp.S.Zero) for l in range(f)])
    return sp.Matrix(rows)


def _constraint_terms(at_point, C, y, alg, M0, ydd0, h0, J, ind, dep, C0):
    """K - Σ_j λ0_j ∂C_jᵀ/∂y and Γ of eq. (2)."""
    m, f = C.shape
    # λ0 = C_d⁻ᵀ (M0 ÿ0 - h0)_d
    r = M0 @ ydd0 - h0
    Cd = alg.cols(C0, dep)
    lam = alg.solve(Cd.T, alg.rows(r, dep))
    H = [at_point.jacobian(list(C[j, :]), y) for j in range(m)]   # H_j[k, l] = ∂C_jk/∂y_l
    lam_s = alg.to_sympy(lam)
    G = sp.zeros(f, f)
    for j in range(m):
        if lam_s[j] != 0:
            G += lam_s[j] * H[j]
    Gamma = None
    if not alg.is_zero(ydd0):
        w = alg.to_sympy(ydd0)
        Js = alg.to_sympy(J)
        n = len(ind)
        S = sp.Matrix(m, n, lambda j, a: (Js[:, a].T * H[j] * w)[0])
        X = -alg.solve(Cd, alg.matrix(S))
        Gamma = alg.zeros(f, n)
        for r_, k in enumerate(dep):
            for a in range(n):
                Gamma[k, a] = X[r_, a]
    return alg.matrix(-G), Gamma


def _outputs(system, eqs, outputs, independent_hint):
    """(names, expressions) of the outputs; default (``outputs`` None): the states, once the
    independent coordinates are known (``independent_hint``; before: none)."""
    exprs = dict(zip(system.outputs, output_expressions(eqs)))
    if outputs is None:
        hint = independent_hint or []
        outputs = [*hint, *(f"der({n})" for n in hint)]
    given = outputs
    try:
        outputs = [outputs] if isinstance(outputs, str) else list(outputs)
    except TypeError:
        raise ParameterError(f"linearize: outputs must be a name or a list of names, got {given!r}") \
            from None
    for name in outputs:
        if not isinstance(name, str):
            raise ParameterError(f"linearize: outputs: {name!r} is not a name (a string)")
    result = []
    for name in outputs:
        if name in exprs:
            if exprs[name] is None:
                raise ParameterError(f"linearize: output {name!r} is a reaction (a Lagrange "
                                     "multiplier), which linearize does not handle")
            result.append(exprs[name])
        elif name in system.coordinates_:
            result.append(system.coordinates_[name].symbol)
        elif name.startswith("der(") and name.endswith(")") and name[4:-1] in system.coordinates_:
            result.append(system.coordinates_[name[4:-1]].velocity)
        elif name.startswith("D") and name[1:] in system.coordinates_:
            result.append(system.coordinates_[name[1:]].velocity)
        else:
            known = ([n for n, e in exprs.items() if e is not None] + list(system.coordinates_)
                     + [f"der({n})" for n in system.coordinates_])
            raise ParameterError(f"linearize: unknown output {name!r} of {system.name!r} "
                                 f"(outputs: {', '.join(known)})")
    canonical = [f"der({n[1:]})" if n.startswith("D") and n[1:] in system.coordinates_ else n
                 for n in outputs]
    twice = sorted({n for n in canonical if canonical.count(n) > 1})
    if twice:
        raise ParameterError(f"linearize: outputs: {', '.join(map(repr, twice))} given more than once")
    return canonical, result


def _system_of(model):
    """The System (or LagrangianSystem) of a model, its Equations or a model file (simulate's
    reading of a model, with linearize's message for anything else)."""
    try:
        return system_of(model)
    except TypeError:
        raise ParameterError(f"linearize: the model must be a System, its equations or the path of a "
                             f"model file, got {type(model).__name__} {model!r}") from None


def _check_mass(system, op, alg, Mr, J, coords, given) -> None:
    """SingularMassMatrixError when the (reduced) mass matrix is singular at the point, naming
    the motion that moves no mass there (:func:`.linear_model.mass_singularity`) and the
    constants the user set."""
    Mn, Jn = alg.numbers(Mr, op), alg.numbers(J, op)
    if Mn is None or Jn is None:
        return
    singular = mass_singularity(Mn, Jn, coords)
    if singular:
        what, motion, cond = singular
        with_constants = "".join(f", {n} = {op.constants[n]}" for n in given if n in op.constants)
        raise SingularMassMatrixError(f"{system.name}: {what} is singular at the operating point "
                                      f"({_point_text(op)}{with_constants}; condition number "
                                      f"{cond:.1e}): {motion} would move no mass there")


def _check_equilibrium(system, op, alg, zdd0, names, hr, tol) -> None:
    moving = _nonzero(op.yd)
    if moving:
        raise ParameterError(f"linearize: the operating point is not an equilibrium: velocities "
                             f"{moving} are not zero")
    a = alg.numbers(zdd0, op)
    if a is None:
        raise ParameterError("linearize: equilibrium=True needs numbers for the constants and set "
                             "values to check the point (give params or numeric set values)")
    a = a.ravel()
    worst = int(np.argmax(np.abs(a))) if a.size else 0
    if a.size and abs(a[worst]) > tol:
        forces = alg.numbers(hr, op).ravel()
        raise ParameterError(
            f"linearize: the operating point ({_point_text(op)}) is not an equilibrium: the "
            f"accelerations there are " + ", ".join(f"{n}''={v:.4g}" for n, v in zip(names, a))
            + " (generalized forces " + ", ".join(f"{n}: {v:.4g}" for n, v in zip(names, forces))
            + "); leave equilibrium=True out to linearize about a non-equilibrium point")


def _numeric_zero(op, alg, v, tol) -> bool:
    n = alg.numbers(v, op)
    return n is not None and (n.size == 0 or float(np.max(np.abs(n))) <= tol)


def _nonzero(d: dict) -> dict:
    return {k: v for k, v in d.items() if v != 0}


def _point_text(op) -> str:
    return ", ".join(f"{n}={v}" for n, v in op.y.items())


def _free(M) -> bool:
    return bool(getattr(M, "free_symbols", set()))


#: entries with more operations than this are not put over a common denominator
TIDY_OPS = 150


def _tidy(e):
    return sp.cancel(e) if sp.count_ops(e) <= TIDY_OPS else e


class _Numeric:
    """Matrix operations with numpy (every entry a number)."""

    @staticmethod
    def matrix(M):
        if isinstance(M, np.ndarray):
            return M
        return np.array(sp.Matrix(M).evalf(), dtype=float).reshape(sp.Matrix(M).shape)

    @staticmethod
    def eye(n):
        return np.eye(n)

    @staticmethod
    def zeros(r, c):
        return np.zeros((r, c))

    @staticmethod
    def solve(A, B):
        return np.linalg.solve(A, B)

    @staticmethod
    def is_zero(M):
        return not np.any(M)

    @staticmethod
    def cols(M, idx):
        return M[:, idx]

    @staticmethod
    def rows(M, idx):
        return M[idx, :]

    @staticmethod
    def to_sympy(M):
        return sp.Matrix(M)

    @staticmethod
    def numbers(M, op):
        return np.asarray(M, dtype=float)


class _Symbolic:
    """Matrix operations with sympy (no simplification: expressions stay as built)."""

    @staticmethod
    def matrix(M):
        return sp.Matrix(M)

    @staticmethod
    def eye(n):
        return sp.eye(n)

    @staticmethod
    def zeros(r, c):
        return sp.zeros(r, c)

    @staticmethod
    def solve(A, B):
        """A⁻¹B, each entry put over one denominator while it is small (a ratio of a few
        terms: C_d⁻¹ C_i, ÿ0, λ0); larger entries are left as they are."""
        return A.LUsolve(B).applyfunc(_tidy)

    @staticmethod
    def is_zero(M):
        return all(v == 0 for v in M)

    @staticmethod
    def cols(M, idx):
        return M.extract(list(range(M.rows)), list(idx))

    @staticmethod
    def rows(M, idx):
        return M.extract(list(idx), list(range(M.cols)))

    @staticmethod
    def to_sympy(M):
        return M

    @staticmethod
    def numbers(M, op):
        return op.numeric_matrix(M)
