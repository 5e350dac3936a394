"""The interface every formulation offers to the integrator.

A formulation turns the equations of motion (and constraints) into a first-order system
x' = F(t, x) with x = [y, y'], plus an optional projection ``project(t, x) -> x`` applied after
every accepted step, so that the integrator does not care which formulation it runs.  Inputs are
held by an :class:`~mbsfmu.equations.input_schedule.InputSchedule`.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ...core.constants import DEFAULTS, SINGULAR_PIVOT
from ...core.errors import MbsError
from ...equations.input_schedule import InputSchedule
from ...equations.python_source import failing_line
from .null_space import reduced_accelerations


class Formulation:
    """Base class: x' = F(t, x) with x = [y, y'] and an optional projection."""

    name = "base"
    #: True if ``project`` does something (the integrator then calls it after each step)
    projects = False
    #: True if the formulation copes with redundant (rank-deficient) constraints
    handles_redundant = False

    def __init__(self, numeric, inputs=None):
        self.numeric = numeric
        self.f = numeric.f
        self.m = numeric.m
        self.inputs = inputs if isinstance(inputs, InputSchedule) else InputSchedule(numeric, inputs)
        self.nfev = 0

    #: (t, text) of the last evaluation whose generated code left the domain of a function, or None
    undefined = None

    def __call__(self, t, x):
        """F(t, x).  Where the model's generated code leaves the domain of a function (math.sqrt
        of a negative number, acos beyond 1, an overflowing exp: a ValueError or ArithmeticError
        raised there), F is NaN, as in the engine, whose C functions return NaN there: the
        integrators take a non-finite F as a failed stage or Newton iteration and retry with a
        shorter step (a Newton iterate or a stage of a long step may leave the domain where the
        motion itself does not).  :attr:`undefined` keeps where and in which statement, for the
        message of a run that fails all the same."""
        self.nfev += 1
        try:
            return self.rhs(t, x)
        except (ValueError, ArithmeticError) as exc:
            line = None if isinstance(exc, MbsError) else failing_line(exc)
            if line is None:
                raise
            self.undefined = (t, f"the model's equations are not defined {self.where(t, x[:self.f])}: "
                                 f"{exc} in {line[:200]}")
            return np.full(np.shape(x), np.nan)

    def rhs(self, t, x):  # pragma: no cover - abstract
        raise NotImplementedError

    def project(self, t, x):
        return x

    def where(self, t, y) -> str:
        """'at t=... (x=..., alpha=...)' for error messages."""
        state = ", ".join(f"{n}={v:.6g}" for n, v in zip(self.numeric.coordinate_names, y))
        return f"at t={t:.6g} ({state})"

    #: the largest pivot of the column-pivoted QR of C^T at the start (:meth:`singularity_note`)
    pivot_scale = 0.0

    def _pivoted_qr(self, C, with_q: bool = False):
        """(Q (None unless ``with_q``), |diagonal of R|, row permutation, scale) of the
        column-pivoted QR C^T P = Q R of the rows of C; the scale is the larger of |R_00| and
        :attr:`pivot_scale` (the engine's pivot_ratio and mbs_form_singularity)."""
        if with_q:
            Q, R, perm = scipy.linalg.qr(C.T, pivoting=True)
        else:
            Q, (R, perm) = None, scipy.linalg.qr(C.T, mode="r", pivoting=True)
        piv = np.abs(np.diag(R))
        return Q, piv, perm, max(float(piv[0]) if piv.size else 0.0, self.pivot_scale)

    def record_pivot_scale(self, t, y) -> None:
        """Keep the largest pivot of C^T at a regular state (the consistent start) as the scale of
        :meth:`singularity_note`."""
        if self.m:
            self.pivot_scale = float(self._pivoted_qr(self.numeric.constraint_parts(t, y)[1])[1][0])

    def singularity_note(self, t, y) -> str:
        """For the message of a run that failed (the engine's mbs_form_singularity): a sentence if
        a pivot of the column-pivoted QR of C^T at (t, y) lies between SINGULAR_PIVOT's low and
        high times the larger of the largest pivot there and :attr:`pivot_scale` -- a singular
        position of the mechanism, naming the row that is nearly dependent on the others (below
        low: an exactly redundant row) -- else ""."""
        if not self.m:
            return ""
        _, d, perm, scale = self._pivoted_qr(self.numeric.constraint_parts(t, y)[1])
        if not scale > 0.0:
            return ""
        for k, ratio in enumerate(d / scale):
            if SINGULAR_PIVOT["low"] < ratio < SINGULAR_PIVOT["high"]:
                row = self.numeric.system.constraint_names[perm[k]]
                return (f"at t={t:.9g} the constraint Jacobian is nearly singular (a pivot of its "
                        f"column-pivoted QR is {ratio:.1e} of the largest, here or at the start; row "
                        f"'{row}' is nearly dependent on the others): a singular position of the "
                        "mechanism, which this formulation and tolerance do not pass")
        return ""

    def multipliers(self, t, x):
        """Lagrange multipliers lambda of M y'' + k = q + C^T lambda (seed 000 eq. 3) with y''
        solving eq. 8 -- the one algorithm of both implementations (the engine's
        mbs_form_multipliers), whatever the formulation:

            y''    = J (J^T M J)^-1 J^T (q - k - M gamma) + gamma     (eq. 31 at the given y')
            lambda = the minimum-norm solution of C^T lambda = M y'' - (q - k)

        with J an orthonormal null-space basis of C and gamma = -C^+ b'' from the QR of C^T.
        Both are defined also for redundant constraints (the multipliers are then not unique and
        the minimum-norm ones are given)."""
        f = self.f
        y, yd = x[:f], x[f:]
        M, h, c, C, b1, b2 = self.numeric.constrained_parts(t, y, yd, self.inputs(t))
        ydd = reduced_accelerations(M, h, C, b2, DEFAULTS["rank_tol"])
        return np.linalg.lstsq(C.T, M @ ydd - h, rcond=None)[0]


def kkt_solve(M, h, C, b2):
    """Solve eq. (8) of seed 000, ``[[M, C^T], [C, 0]] [y''; -lambda] = [q - k; -b'']``.

    Returns (y'', lambda); raises numpy.linalg.LinAlgError if the matrix is singular."""
    f, m = M.shape[0], C.shape[0]
    K = np.zeros((f + m, f + m))
    K[:f, :f] = M
    K[:f, f:] = C.T
    K[f:, :f] = C
    rhs = np.concatenate((h, -b2))
    sol = np.linalg.solve(K, rhs)
    return sol[:f], -sol[f:]
