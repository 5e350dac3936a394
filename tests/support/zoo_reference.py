"""Lagrange's equations of the first kind, coded here apart from mbsfmu (numpy only, no sympy),
as the reference of the zoo tests (tests/zoo/test_zoo_seed003.py, tests/zoo/test_zoo_seed004.py):

    M(q) q'' = h(q, q', t) - C^T lambda,     C q'' = -gamma - 2 a c' - a^2 c,

C = dc/dq, gamma = d/dt c' at q'' = 0 (index 1 with Baumgarte's terms, which act only off the
constraint manifold), integrated with scipy's DOP853 (or Radau for a stiff model).

A mechanism is given by numpy functions of batches of states (arrays with a trailing batch
axis, complex allowed):

* ``velocities(q, qd, t)``: quantities v_k linear in the velocities (components of centre-of-
  gravity velocities, angular-velocity components, ...) with ``weights`` w_k, so
  T = 1/2 sum_k w_k v_k^2;
* ``potential(q, t)``: V; ``dissipation(q, qd, t)``: r_k linear in the velocities with
  ``damping`` c_k, R = 1/2 sum_k c_k r_k^2; ``forces(q, qd, t)``: generalized forces Q;
* ``constraints(q, t)``: c; ``constraint_rates(q, qd, t)``: c' = C q' + c_t, written out by the
  chain rule.

Derivatives are complex steps (f(x + i h e) = f(x) + i h f'(x) e + O(h^2), h = 1e-30: exact to
rounding): with J = dv/dq' (columns v(q, e_i)), D = dv/dq and J' = d/dt J (the complex step of
J along (q', 1)), Lagrange's d/dt dT/dq' - dT/dq gives

    M = J^T W J,     h = Q - dV/dq - J_r^T diag(c) r - (J'^T W v + J^T W D q' - D^T W v),

and gamma is the complex step of c'(q, q', t) along (q', 1).  A model may instead give
``mass_force(q, qd, t) -> (M, f)`` (one state, M q'' = f + Q) directly.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

H = 1e-30


def stack(*rows):
    """One array of the rows, broadcast to a common batch shape."""
    return np.stack(np.broadcast_arrays(*rows))


def dot(a, b):
    """Batched dot product of (3, ...) arrays (no conjugation: complex-step safe)."""
    return np.sum(a * b, axis=0)


def cross(a, b):
    """Batched cross product of (3, ...) arrays."""
    return np.stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


class FirstKind:
    """The reference equations of one mechanism (see the module docstring)."""

    def __init__(self, n, velocities=None, weights=None, mass_force=None, potential=None, dissipation=None,
                 damping=None, forces=None, constraints=None, constraint_rates=None, alpha=20.0):
        self.n, self.alpha = n, alpha
        self.velocities, self.w = velocities, None if weights is None else np.asarray(weights, float)
        self.mass_force = mass_force
        self.potential, self.forces = potential, forces
        self.dissipation, self.c_damp = dissipation, None if damping is None else np.asarray(damping, float)
        self.constraints, self.constraint_rates = constraints, constraint_rates

    def _grad(self, fn, q, t):
        """d fn / dq (rows: outputs, columns: coordinates) by complex steps."""
        n = self.n
        return np.imag(fn(q[:, None] + 1j * H * np.eye(n), t)) / H

    def mass_and_h(self, t, q, qd):
        n, eye = self.n, np.eye(self.n)
        h = np.zeros(n)
        if self.forces is not None:
            h += np.real(self.forces(q[:, None], qd[:, None], t))[:, 0]
        if self.potential is not None:
            h -= self._grad(self.potential, q, t)
        if self.dissipation is not None:
            Jr = np.real(self.dissipation(q[:, None], eye, t))
            h -= Jr.T @ (self.c_damp * (Jr @ qd))
        if self.mass_force is not None:
            M, f = self.mass_force(q, qd, t)
            return M, h + f
        W = self.w
        # columns i: v(q + i H q', e_i, t + i H) -> J (real part) and J' (complex step)
        vj = self.velocities(q[:, None] + 1j * H * qd[:, None], eye, t + 1j * H)
        J, Jdot = np.real(vj), np.imag(vj) / H
        D = np.imag(self.velocities(q[:, None] + 1j * H * eye, qd[:, None], t)) / H
        v = J @ qd
        M = J.T @ (W[:, None] * J)
        h -= Jdot.T @ (W * v) + J.T @ (W * (D @ qd)) - D.T @ (W * v)
        return M, h

    def constraint_parts(self, t, q, qd):
        """(c, c', C, gamma)."""
        n = self.n
        c = np.real(self.constraints(q[:, None], t))[:, 0]
        ct = np.real(self.constraint_rates(q[:, None], np.zeros((n, 1)), t))[:, 0]
        C = np.real(self.constraint_rates(q[:, None], np.eye(n), t)) - ct[:, None]
        shifted = self.constraint_rates(q[:, None] + 1j * H * qd[:, None], qd[:, None], t + 1j * H)
        gamma = np.imag(shifted)[:, 0] / H
        return c, C @ qd + ct, C, gamma

    def accelerations(self, t, x):
        """(q'', lambda) at the state x = (q, q')."""
        n = self.n
        q, qd = x[:n], x[n:]
        M, h = self.mass_and_h(t, q, qd)
        if self.constraints is None:
            return np.linalg.solve(M, h), np.zeros(0)
        c, cd, C, gamma = self.constraint_parts(t, q, qd)
        m = len(c)
        A = np.block([[M, C.T], [C, np.zeros((m, m))]])
        b = np.concatenate([h, -gamma - 2 * self.alpha * cd - self.alpha**2 * c])
        sol = np.linalg.solve(A, b)
        return sol[:n], sol[n:]

    def rhs(self, t, x):
        return np.concatenate([x[self.n:], self.accelerations(t, x)[0]])

    def solve(self, x0, t_eval, rtol=1e-12, atol=1e-12, method="DOP853"):
        """States (2n, len(t_eval)) from the (consistent) state x0."""
        sol = solve_ivp(self.rhs, (float(t_eval[0]), float(t_eval[-1])), np.asarray(x0, dtype=float),
                        method=method, rtol=rtol, atol=atol, t_eval=t_eval)
        assert sol.success, sol.message
        return sol.y
