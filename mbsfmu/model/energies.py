"""The energies of a LagrangianSystem (seed 003 ch. 1): terms of the kinetic energy T(y, y', t),
the potential V(y, t), a Lagrangian L = T - V and the Rayleigh dissipation function R(y, y', t),
each checked when it is added: T and R must be quadratic forms in the velocities that are
positive semi-definite (checked at the initial and at a random configuration, the motion with
T < 0 or R < 0 named), V and T may not depend on inputs.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..core.errors import ModelError
from .elements import EnergyTerm
from .start_values import number

#: relative tolerance of the definiteness check of T and R (eigenvalues relative to the largest)
DEFINITE_RTOL = 1e-9


class Energies:
    """The energy commands of a LagrangianSystem (a part of
    :class:`~mbsfmu.model.LagrangianSystem`)."""

    def kinetic_energy(self, T, name: str = "T") -> None:
        """Add a term to the kinetic energy T(y, y', t); it must be quadratic in the velocities
        with a mass matrix d2T/dy'dy' that does not depend on them."""
        self._add_velocity_term("T", T, name, f"kinetic energy {name!r}", "T is a function of the "
                                "velocities D<coordinate>; a term without them belongs in "
                                "potential_energy()")

    def _add_velocity_term(self, kind: str, value, name: str, where: str, why: str) -> None:
        """Add the term ``value`` of T or R (``kind``): a scalar without inputs that depends on a
        velocity, checked by :meth:`_check_kinetic_energy`; ``why`` explains a term without one."""
        e = self._scalar(value, where)
        self._refuse(e, where, ("u",), f"{kind} may depend on coordinates, velocities, time, time "
                     "parameters and constants only")
        if not e.free_symbols & set(self.yd):
            raise ModelError(f"{where}: {e} depends on no velocity ({why})")
        self._check_kinetic_energy(e, where, kind)
        self.energy_terms.append(EnergyTerm(name, kind, e))
        self._changed()

    def _check_kinetic_energy(self, T: sp.Expr, where: str, kind: str = "T") -> None:
        """A ModelError unless the matrix d2T/dy'dy' of the term T (of ``kind`` "T", a kinetic
        energy, or "R", a Rayleigh function) is positive semi-definite at the initial
        configuration and at one random configuration (the other symbols at their defaults,
        t = 0), naming the motion that would have T < 0.  Skipped where a symbol has no value
        (a constant without default, a time parameter given by functions) or the term is not
        quadratic in the velocities (the derivation reports that for T; R may be any function)."""
        matrix, what = (("mass matrix", "a kinetic energy") if kind == "T" else
                        ("damping matrix", "a Rayleigh function (R < 0 feeds energy in)"))
        rates = [v for v in self.yd if v in T.free_symbols]
        configurations = (("the initial configuration", self._start_values()),
                          ("a random configuration", self._start_values(np.random.default_rng(3))))
        for at, values in configurations:
            # the numbers first: the Hessian of a numeric quadratic polynomial is cheap
            Tn = T.xreplace({k: v for k, v in values.items() if k not in set(rates)})
            if Tn.free_symbols - set(rates):
                return
            poly = Tn.as_poly(*rates)
            if poly is None or poly.total_degree() > 2:
                return
            A = np.zeros((len(rates), len(rates)))    # T = 1/2 y'^T A y' + ...
            for monom, coeff in poly.terms():
                c = number(coeff)
                if c is None:
                    return
                if sum(monom) == 2:
                    i, j = [k for k, e in enumerate(monom) for _ in range(e)]
                    A[i, j] += c if i != j else 2 * c
                    A[j, i] += c if i != j else 0.0
            w, V = np.linalg.eigh(0.5 * (A + A.T))
            tol = DEFINITE_RTOL * max(float(np.abs(w).max()), 1e-300)
            if w[0] >= -tol:
                continue
            definite = ("negative definite" if w[-1] < -tol else "indefinite" if w[-1] > tol
                        else "negative semi-definite")
            v = np.abs(V[:, 0])
            moving = [str(r)[1:] for r, a in zip(rates, v) if a > 0.1 * v.max()]
            motion = ("every motion" if definite == "negative definite" else
                      f"moving coordinate {moving[0]!r}" if len(moving) == 1 else
                      f"moving the coordinates {', '.join(map(repr, moving))} together")
            raise ModelError(f"{where} is {definite} in the velocities: {motion} gives {kind} < 0 "
                             f"(eigenvalue {w[0]:.3g} of its {matrix} d2{kind}/dy'dy' at {at}); "
                             f"{what} must be >= 0 for every motion")

    def potential_energy(self, V, name: str = "V") -> None:
        """Add a term to the potential V(y, t) (conservative forces: q = -dV/dy)."""
        where = f"potential energy {name!r}"
        e = self._scalar(V, where)
        self._refuse(e, where, ("yd", "u"), "V may depend on coordinates, time, time parameters "
                     "and constants only (velocity-dependent potentials belong in lagrangian())")
        self.energy_terms.append(EnergyTerm(name, "V", e))
        self._changed()

    def lagrangian(self, L, name: str = "L") -> None:
        """Add a Lagrangian L(y, y', t) (a scalar): its terms with velocities count as kinetic
        energy, the rest (with opposite sign) as potential; precisely T = L - L|_(y'=0) and
        V = -L|_(y'=0), so T + V is the energy for the usual L = T - V."""
        where = f"Lagrangian {name!r}"
        e = self._scalar(L, where)
        self._refuse(e, where, ("u",), "L may depend on coordinates, velocities, time, time "
                     "parameters and constants only")
        yd = set(self.yd)
        args = e.args if e.is_Add else (e,)
        moving = sp.Add(*[a for a in args if a.free_symbols & yd])
        rest = sp.Add(*[a for a in args if not a.free_symbols & yd])
        at_rest = moving.xreplace({v: 0 for v in yd})
        if moving != 0:
            self._check_kinetic_energy(moving - at_rest, where)
            self.energy_terms.append(EnergyTerm(name, "T", moving - at_rest))
        if rest + at_rest != 0:
            self.energy_terms.append(EnergyTerm(name, "V", -(rest + at_rest)))
        self._changed()

    def dissipation(self, R, name: str = "R") -> None:
        """Add a term to the Rayleigh dissipation function R(y, y', t): q = -dR/dy'
        (seed 003 eq. 1.2.3)."""
        self._add_velocity_term("R", R, name, f"dissipation function {name!r}",
                                "R must be a function of the velocities")
