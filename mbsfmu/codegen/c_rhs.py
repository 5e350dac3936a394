"""Compiled full right-hand side x' = f(t, x) of a tree model (no constraints).

``CompiledRHS(numeric)`` takes a :class:`~mbsfmu.equations.numeric_model.NumericModel` (for the
parameter, input and time-parameter values) and compiles ONE module from

* the generated model source (:func:`~mbsfmu.codegen.c_source.generate_c`: ``mbs_dynamics``
  writes M row-major, then q - k; on the ABA only the sizes and time parameters,
  :func:`~mbsfmu.codegen.c_source.sizes_source`),
* the FMU runtime's dense linear algebra (``mbsfmu/runtime/mbs_linalg.h`` and ``.c``, the
  header inlined in place of its ``#include``), and
* :data:`RHS_SOURCE`, the hand-written ``mbs_rhs``: x = [y, y'], x' = [y', y''] with
  M y'' = q - k solved by Cholesky (M of a tree model is symmetric positive definite).

**Algorithm.**  ``CompiledRHS(numeric, algorithm="auto")`` builds ``mbs_rhs`` on one of

``"aba"``
    The articulated-body algorithm (:mod:`mbsfmu.equations.articulated_body`,
    :mod:`~mbsfmu.codegen.c_aba`): y'' in O(N) operations, no M and no solve.  Applies to models
    whose coordinates are joint coordinates (each one places exactly one frame).
``"mass_matrix"``
    ``mbs_dynamics`` (M and q - k) followed by the straight-line Cholesky solve.

``"auto"`` takes the ABA where it applies and the mass matrix otherwise; ``rhs.algorithm`` tells
which one was built.  Both report a failed pivot (a singular configuration) as
:class:`~mbsfmu.errors.SingularMassMatrixError` naming the coordinate.

Calling the object, ``rhs(t, x)``, returns x' as a new numpy array; the values of
``numeric.prm`` and ``numeric.u`` are read at every call (``set_params`` / ``set_inputs`` are
seen), time parameters are evaluated by the generated ``mbs_time_parameters`` (or, for Python
callables, ``numeric._tp_at(t)``).

Two bindings, same results:

``"extension"`` (the default where the interpreter's ``Python.h`` is installed)
    The module is a CPython extension (:file:`rhs_extension.c`, package data read through
    ``importlib.resources``, appended to the sources): the object is its ``Kernel`` type, called
    by vectorcall, so one call costs the C work plus about 0.1 us (no ctypes marshalling, no
    Python frame).
``"ctypes"``
    A plain shared library called through a ``CFUNCTYPE`` prototype with integer addresses
    (about 1 us of ctypes and 1 us of Python per call): the fallback without ``Python.h``.

``CompiledRHS(numeric, binding="auto")`` picks the extension and falls back to ctypes only when
the headers are missing.  Both kinds of object are (virtual) instances of :class:`CompiledRHS`
and carry ``numeric``, ``f``, ``source``, ``path``, ``binding`` and ``algorithm``.
"""

from __future__ import annotations

import abc
import ctypes
import importlib.resources
import importlib.util
import pathlib
import sys

import numpy as np

from ..equations.articulated_body import articulated_body
from ..errors import MbsError, ModelError, SingularMassMatrixError
from ..runtime import source as runtime_source
from .c_aba import aba_source
from .c_backend import _source
from .c_cholesky import cholesky_solve_source
from .c_source import sizes, sizes_source, time_parameters_native
from .compile import MissingPythonHeaders, compile_extension, compile_shared

#: The hand-written part of the library.  ``mbs_dynamics`` and ``MBS_NY`` come from the
#: generated model source, ``rhs_solve`` from :mod:`~mbsfmu.codegen.c_cholesky`.
#: ``mbs_rhs`` returns 0, or the 1-based index of the first Cholesky pivot that failed (M not
#: positive definite, or not finite); xdot then holds y' and an unusable y''.
RHS_SOURCE = """
/* ---- mbs_rhs: full first-order right-hand side (mbsfmu.codegen.c_rhs) ----
 * x = [y (MBS_NY), yd (MBS_NY)],  xdot = [yd, ydd],  M ydd = q - k (Cholesky).
 * Returns the status of rhs_solve: 0 on success, k > 0 if pivot k-1 failed. */
int mbs_rhs(double t, const double *x, const double *prm, const double *u, const double *tp,
            double *xdot)
{
    double w[MBS_NY * MBS_NY + MBS_NY];
    double *M = w, *h = w + MBS_NY * MBS_NY;
    int i, status;

    mbs_dynamics(t, x, x + MBS_NY, prm, u, tp, w);
    status = rhs_solve(M, h);
    for (i = 0; i < MBS_NY; i++) {
        xdot[i] = x[MBS_NY + i];
        xdot[MBS_NY + i] = h[i];
    }
    return status;
}
"""


#: ``mbs_rhs`` on the articulated-body algorithm: ``mbs_aba`` (:mod:`~mbsfmu.codegen.c_aba`)
#: writes y'' straight into xdot and returns 0 or the 1-based index of the coordinate whose pivot
#: failed.
ABA_RHS_SOURCE = """
/* ---- mbs_rhs: full first-order right-hand side (mbsfmu.codegen.c_rhs) ----
 * x = [y (MBS_NY), yd (MBS_NY)],  xdot = [yd, ydd],  ydd by the articulated-body algorithm.
 * Returns the status of mbs_aba: 0 on success, k > 0 if the pivot of coordinate k-1 failed. */
int mbs_rhs(double t, const double *x, const double *prm, const double *u, const double *tp,
            double *xdot)
{
    int i;
    for (i = 0; i < MBS_NY; i++) xdot[i] = x[MBS_NY + i];
    return mbs_aba(t, x, x + MBS_NY, prm, u, tp, xdot + MBS_NY);
}
"""

ALGORITHMS = ("auto", "aba", "mass_matrix")


def linalg_source() -> str:
    """mbs_linalg.h followed by mbs_linalg.c without its ``#include "mbs_linalg.h"`` line."""
    header = runtime_source("mbs_linalg.h")
    body = runtime_source("mbs_linalg.c")
    lines = [ln for ln in body.splitlines() if ln.strip() != '#include "mbs_linalg.h"']
    return header + "\n" + "\n".join(lines) + "\n"


def rhs_source(eqs, algorithm: str = "mass_matrix") -> str:
    """The complete C source of the right-hand side library of ``eqs`` (``algorithm`` "aba" or
    "mass_matrix")."""
    if algorithm == "aba":  # sizes and time parameters only: no M or k derived or printed
        head = eqs.derived("c_sizes_source", sizes_source)
        return head + "\n" + linalg_source() + aba_source(eqs) + ABA_RHS_SOURCE
    n = sizes(eqs)["NY"]
    return _source(eqs) + "\n" + linalg_source() + cholesky_solve_source(n) + RHS_SOURCE


#: included before anything else (Python.h must come first)
_EXTENSION_PROLOGUE = """#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
"""


def extension_source(eqs, algorithm: str = "mass_matrix") -> str:
    """The C source of the extension module (``@MODULE@`` still to be replaced)."""
    glue = importlib.resources.files(__package__).joinpath("rhs_extension.c").read_text()
    return _EXTENSION_PROLOGUE + rhs_source(eqs, algorithm) + glue


BINDINGS = ("auto", "extension", "ctypes")


class CompiledRHS(abc.ABC):  # noqa: B024 (a factory and a virtual base for isinstance)
    """x' = f(t, x) of a tree model in compiled C; ``rhs(t, x)`` with x = [y, y'].

    ``CompiledRHS(numeric, binding="auto", algorithm="auto")`` returns the extension ``Kernel``
    or a :class:`CtypesRHS` (see the module docstring); both are registered as subclasses."""

    def __new__(cls, numeric, binding: str = "auto", algorithm: str = "auto"):
        if binding not in BINDINGS:
            raise ValueError(f"unknown binding {binding!r}; choose one of {', '.join(BINDINGS)}")
        _check_tree(numeric)
        algorithm = choose_algorithm(numeric.eqs, algorithm)
        if binding == "ctypes":
            return CtypesRHS(numeric, algorithm)
        try:
            return _extension_kernel(numeric, algorithm)
        except MissingPythonHeaders:
            if binding == "extension":
                raise
            return CtypesRHS(numeric, algorithm)


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
    if eqs.n_constraints:
        raise ModelError(f"{eqs.system.name}: CompiledRHS handles tree models only; this model "
                         f"has {eqs.n_constraints} constraint(s) (use a formulation from "
                         f"mbsfmu.formulations)")


def _load_extension(module: str, path: pathlib.Path):
    mod = sys.modules.get(module)
    if mod is None:
        spec = importlib.util.spec_from_file_location(module, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules[module] = mod
    return mod


def _extension_kernel(num, algorithm: str = "mass_matrix"):
    """The extension module's Kernel bound to ``num``."""
    eqs = num.eqs
    template = extension_source(eqs, algorithm)
    module, path = compile_extension(template, f"{eqs.system.name}_rhs")
    mod = _load_extension(module, path)
    native_tp = time_parameters_native(eqs.system)
    tp_at = None if (native_tp or not eqs.system.time_parameters) else num._tp_at
    CompiledRHS.register(mod.Kernel)
    k = mod.Kernel(num, lambda t, status, x: _raise_singular(num, t, status, x, algorithm), tp_at)
    k.numeric, k.f, k.path, k.binding, k.algorithm = num, num.f, path, "extension", algorithm
    k.source = template.replace("@MODULE@", module)
    return k


def _raise_singular(num, t, status, x, algorithm: str = "mass_matrix"):
    """Raise the SingularMassMatrixError of a failed pivot ``status`` (1-based): a Cholesky
    pivot of M, or the articulated-body pivot of a coordinate."""
    y = np.asarray(x, dtype=float)[: num.f]
    where = (num.coordinate_names[status - 1] if 0 < status <= num.f else f"status {status}")
    pivot, unfinite = (("articulated-body", "the equations are") if algorithm == "aba"
                       else ("Cholesky", "M is"))
    raise SingularMassMatrixError(num._where(
        f"mass matrix is not positive definite ({pivot} pivot of {where!r} failed: a singular "
        f"configuration, a coordinate that moves no mass, or a state where {unfinite} not "
        f"finite)", float(t), y))


_PROTO = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


class CtypesRHS:
    """The ctypes binding of :class:`CompiledRHS` (a plain shared library)."""

    binding = "ctypes"

    def __init__(self, numeric, algorithm: str = "auto"):
        self.numeric = num = numeric
        eqs = num.eqs
        name = eqs.system.name
        _check_tree(num)
        self.algorithm = algorithm = choose_algorithm(eqs, algorithm)
        self.f = f = num.f
        n = sizes(eqs)
        self.source = rhs_source(eqs, algorithm)
        self.path = compile_shared(self.source, f"{name}_rhs")
        self.lib = lib = ctypes.CDLL(str(self.path))
        got = (ctypes.c_int * 8)()
        lib.mbs_sizes.argtypes = [ctypes.POINTER(ctypes.c_int)]
        lib.mbs_sizes.restype = ctypes.c_int
        k = lib.mbs_sizes(got)
        if list(got[:min(k, 5)]) != list(n.values()):
            raise MbsError(f"{name}: compiled right-hand side {self.path} has sizes "
                           f"{list(got[:k])}, expected {list(n.values())}")
        self._fn = _PROTO(ctypes.cast(lib.mbs_rhs, ctypes.c_void_p).value)
        # buffers (never empty, so every address is valid)
        self._x = np.zeros(max(2 * f, 1))
        self._out = np.zeros(max(2 * f, 1))
        self._prm = np.zeros(max(n["NPRM"], 1))
        self._u = np.zeros(max(n["NU"], 1))
        self._tp = np.zeros(max(n["NTP"], 1))
        self._nprm, self._nu = n["NPRM"], n["NU"]
        self._has_tp = n["NTP"] > 0
        self._px = self._x.ctypes.data
        self._pout = self._out.ctypes.data
        self._ptp = self._tp.ctypes.data
        self._pprm, self._prm_copy = self._bind(num.prm, self._prm, self._nprm)
        self._pu, self._u_copy = self._bind(num.u, self._u, self._nu)
        self._prm_src, self._u_src = num.prm, num.u
        self._fast = False   # True once prm, u are read in place and there is no tp

    @staticmethod
    def _bind(arr, buf, size):
        """(address, copy) for the model's array ``arr`` (prm or u): C reads a float64
        C-contiguous array of the right size in place (``copy`` False); anything else is copied
        into ``buf`` at every call.  An empty array needs neither (``buf`` is never read)."""
        if size == 0:
            return buf.ctypes.data, False
        if (type(arr) is np.ndarray and arr.dtype == np.float64 and arr.flags.c_contiguous
                and arr.size == size):
            return arr.ctypes.data, False
        return buf.ctypes.data, True

    def __call__(self, t, x):
        """x' = [y', y''] at time t and state x = [y, y'] (length 2 f)."""
        num = self.numeric
        self._x[:] = x
        if self._fast and num.prm is self._prm_src and num.u is self._u_src:
            status = self._fn(t, self._px, self._pprm, self._pu, self._ptp, self._pout)
        else:
            status = self._prepare_and_call(t)
        if status:
            self._singular(t, status)
        return self._out.copy()

    def _prepare_and_call(self, t):
        """The general path: (re)bind prm and u, copy what C cannot read in place, fill tp."""
        num = self.numeric
        prm, u = num.prm, num.u
        if prm is not self._prm_src:   # set_params replaces the array
            self._prm_src = prm
            self._pprm, self._prm_copy = self._bind(prm, self._prm, self._nprm)
        if self._prm_copy:
            self._prm[: self._nprm] = prm
        if u is not self._u_src:
            self._u_src = u
            self._pu, self._u_copy = self._bind(u, self._u, self._nu)
        if self._u_copy:
            self._u[: self._nu] = u
        if self._has_tp:
            self._tp[:] = num._tp_at(t)
        # nothing to copy or evaluate: the next calls can take the fast path
        self._fast = not (self._prm_copy or self._u_copy or self._has_tp)
        return self._fn(t, self._px, self._pprm, self._pu, self._ptp, self._pout)

    def _singular(self, t, status):
        _raise_singular(self.numeric, t, status, self._x, self.algorithm)


CompiledRHS.register(CtypesRHS)
