"""Compiled full right-hand side x' = f(t, x) of a tree model (no constraints), on the C engine.

``CompiledRHS(numeric)`` takes a :class:`~mbsfmu.equations.numeric_model.NumericModel` (for the
parameter, input and time-parameter values) and returns a callable over the model's engine
extension (:func:`mbsfmu.engine.extension.engine_module`, the same compiled module that
``simulate`` runs): an engine instance configured for the minimal ODE, and that module's ``RHS``
type bound to it and to ``numeric``.  A call evaluates the engine's own right-hand side
(``mbs_inst_rhs`` of ``mbs_instance.h``): x = [y, y'], x' = [y', y''] with

``"aba"``
    y'' by the generated articulated-body algorithm (:mod:`mbsfmu.equations.articulated_body`,
    :mod:`~mbsfmu.codegen.c_aba`): O(N) operations, no M and no solve.  Applies to models whose
    coordinates are joint coordinates (each one places exactly one frame).
``"mass_matrix"``
    M y'' = q - k (``mbs_dynamics`` of the model) solved by the engine's Cholesky
    (``MBS_FORM_MINIMAL`` of ``mbs_formulation.c``; M of a tree is symmetric positive definite).

``CompiledRHS(numeric, algorithm="auto")`` takes the ABA where it applies and the mass matrix
otherwise; ``rhs.algorithm`` tells which one runs.  Both report a failed pivot (a singular
configuration) as :class:`~mbsfmu.core.errors.SingularMassMatrixError` naming the coordinate.

Calling the object, ``rhs(t, x)``, returns x' as a new numpy array.  It is a vectorcall of the
extension (no argument tuple, no Python frame); ``numeric.prm`` and ``numeric.u`` are read at
every call (``set_params`` / ``set_inputs`` are seen) and handed to the engine for that one
evaluation, without the engine's parameter checks.  Time parameters are evaluated by the
generated ``mbs_time_parameters``, or, for Python callables, by ``numeric._tp_at(t)`` called from
the engine.

The object is an instance of the module's ``RHS`` type (registered as a virtual subclass of
:class:`CompiledRHS`) and carries ``numeric``, ``f``, ``source`` (the generated model files),
``path`` (the extension module), ``binding`` (always "extension"), ``algorithm`` and ``instance``
(the engine instance it evaluates).  There is no ctypes binding: the engine extension needs the
interpreter's ``Python.h`` like every engine run; without them
:class:`~mbsfmu.reference.formulations.minimal_ode.MinimalODE` keeps its per-state C kernel (ctypes).
"""

from __future__ import annotations

import abc
import pathlib

import numpy as np

from ..codegen.c_source import time_parameters_native
from ..core import constants
from ..core.errors import ModelError, SingularMassMatrixError
from ..equations.articulated_body import articulated_body
from .extension import engine_module

ALGORITHMS = ("auto", "aba", "mass_matrix")

#: "auto" and "extension" mean the same now; the ctypes binding was removed
BINDINGS = ("auto", "extension")


class CompiledRHS(abc.ABC):  # noqa: B024 (a factory and a virtual base for isinstance)
    """x' = f(t, x) of a tree model on the C engine; ``rhs(t, x)`` with x = [y, y'].

    ``CompiledRHS(numeric, binding="auto", algorithm="auto")`` returns the engine extension's
    ``RHS`` object (see the module docstring), registered as a subclass."""

    def __new__(cls, numeric, binding: str = "auto", algorithm: str = "auto"):
        if binding not in BINDINGS:
            raise ValueError(f"unknown binding {binding!r}; choose one of {', '.join(BINDINGS)} "
                             f"(the ctypes binding was removed: CompiledRHS runs on the engine)")
        _check_tree(numeric)
        return _engine_rhs(numeric, choose_algorithm(numeric.eqs, algorithm))


def choose_algorithm(eqs, algorithm: str = "auto") -> str:
    """The algorithm built for ``algorithm`` (one of :data:`ALGORITHMS`): "aba" or "mass_matrix";
    ModelError if the articulated-body algorithm is asked for but does not apply."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    if algorithm == "mass_matrix":
        return algorithm
    reason = articulated_body(eqs).reason
    if reason is None:
        return "aba"
    if algorithm == "aba":
        raise ModelError(f"{eqs.system.name}: the articulated-body algorithm does not apply: "
                         f"{reason}")
    return "mass_matrix"


def _check_tree(num) -> None:
    eqs = num.eqs
    if eqs.m:
        raise ModelError(f"{eqs.system.name}: CompiledRHS handles tree models only; this model "
                         f"has {eqs.m} constraint(s) (use a formulation from "
                         f"mbsfmu.reference.formulations)")


def _engine_rhs(num, algorithm: str):
    """The engine extension's RHS of ``num`` on a fresh instance running ``algorithm``."""
    system = num.eqs.system
    mod = engine_module(system, unset_constants=True)   # num.prm is handed in at every call
    inst = mod.Instance()
    inst.configure(constants.FORMULATION_KINDS["minimal"], aba=algorithm == "aba")
    if system.time_parameters and not time_parameters_native(system):
        inst.set_functions(None, num._tp_at)   # Python callables: the engine calls back
    CompiledRHS.register(mod.RHS)
    rhs = mod.RHS(inst, num, lambda t, pivot, x: _raise_singular(num, t, pivot, x, algorithm))
    rhs.numeric, rhs.f, rhs.instance = num, num.f, inst
    rhs.path, rhs.source = pathlib.Path(mod.__file__), mod.model_source
    rhs.binding, rhs.algorithm = "extension", algorithm
    return rhs


def _raise_singular(num, t, pivot, x, algorithm: str = "mass_matrix"):
    """Raise the SingularMassMatrixError of a failed pivot (1-based coordinate index): a
    Cholesky pivot of M, or the articulated-body pivot of a coordinate."""
    y = np.asarray(x, dtype=float)[: num.f]
    where = num.coordinate_names[pivot - 1] if 0 < pivot <= num.f else f"status {pivot}"
    kind, unfinite = (("articulated-body", "the equations are") if algorithm == "aba"
                      else ("Cholesky", "M is"))
    raise SingularMassMatrixError(num._where(
        f"mass matrix is not positive definite ({kind} pivot of {where!r} failed: a singular "
        f"configuration, a coordinate that moves no mass, or a state where {unfinite} not "
        f"finite)", float(t), y))
