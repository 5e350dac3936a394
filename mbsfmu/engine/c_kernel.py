"""The compiled kernel: the generated C functions of a model's equations, loaded with ctypes.

``CKernel(numeric)`` takes a :class:`~mbsfmu.equations.numeric_model.NumericModel` (for the
parameter, input and time-parameter values), generates and compiles the C source (cached on
disk) and offers the same per-state methods with the same results: ``mass_and_force``,
``constraint_parts``, ``constrained_parts`` and ``energy``.  :func:`use_c_kernel` puts them in
place of a NumericModel's own, for the runs of ``simulate(backend='c')`` that the engine does
not make (scipy's methods) under the Python integrators.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..codegen.c_source import generate_c, sizes
from ..codegen.compile import MissingPythonHeaders, compile_shared
from ..core.errors import MbsError
from .compiled_rhs import CompiledRHS

_P = ctypes.POINTER(ctypes.c_double)
_GROUPS = ("dynamics", "constraints", "constrained", "energy")


def _source(eqs) -> str:
    return eqs.derived("c_source", generate_c)


class CKernel:
    """The compiled equations of one NumericModel (same parameter and input values)."""

    def __init__(self, numeric):
        self.numeric = num = numeric
        eqs = num.eqs
        self.f, self.m, self.mh = f, m, mh = num.f, num.m, num.mh
        self.source = _source(eqs)
        self.path = compile_shared(self.source, eqs.system.name)
        self.lib = lib = ctypes.CDLL(str(self.path))
        expect = sizes(eqs)
        got = (ctypes.c_int * 8)()
        lib.mbs_sizes.argtypes = [ctypes.POINTER(ctypes.c_int)]
        lib.mbs_sizes.restype = ctypes.c_int
        n = lib.mbs_sizes(got)
        if n != len(expect) or list(got[:n]) != list(expect.values()):
            raise MbsError(f"{eqs.system.name}: compiled kernel {self.path} has sizes "
                           f"{list(got[:n])}, expected {list(expect.values())}")
        # argument buffers (never empty, so every pointer is valid)
        self._y = np.zeros(max(f, 1))
        self._yd = np.zeros(max(f, 1))
        self._prm = np.zeros(max(expect["NPRM"], 1))
        self._u = np.zeros(max(expect["NU"], 1))
        self._tp = np.zeros(max(expect["NTP"], 1))
        self._has_tp = expect["NTP"] > 0
        nout = {"dynamics": f * f + f, "constraints": mh + m * f + m,
                "constrained": f * f + f + mh + m * f + 2 * m, "energy": 2}
        self._prm_src = self._prm_ptr = self._u_src = self._u_ptr = None
        self._out = {}
        self._call = {}
        ptrs = [a.ctypes.data_as(_P) for a in (self._y, self._yd, self._prm, self._u, self._tp)]
        for g in _GROUPS:
            fn = getattr(lib, f"mbs_{g}")
            fn.argtypes = [ctypes.c_double, _P, _P, _P, _P, _P, _P]
            fn.restype = None
            out = np.zeros(max(nout[g], 1))
            self._out[g] = out
            self._call[g] = (fn, *ptrs, out.ctypes.data_as(_P))

    def _direct(self, arr, buf):
        """A pointer to the data of the NumericModel's array ``arr`` (prm or u), so values set
        on the model are seen without a copy; ``None`` if ``arr`` must be copied into ``buf``."""
        if (isinstance(arr, np.ndarray) and arr.dtype == np.float64 and arr.flags.c_contiguous
                and arr.size == buf.size):
            return arr.ctypes.data_as(_P)
        return None

    def _run(self, g, t, y, yd, u):
        """Fill the argument buffers, call group ``g`` and return a copy of its outputs."""
        num = self.numeric
        self._y[: self.f] = y
        self._yd[: self.f] = yd
        fn, py, pyd, pprm, pu, ptp, pout = self._call[g]
        prm = num.prm
        if prm is not self._prm_src:   # set_params replaces the array
            self._prm_src, self._prm_ptr = prm, self._direct(prm, self._prm)
        if self._prm_ptr is not None:
            pprm = self._prm_ptr
        else:
            self._prm[: len(prm)] = prm
        if u is None:
            u = num.u
            if u is not self._u_src:
                self._u_src, self._u_ptr = u, self._direct(u, self._u)
            if self._u_ptr is not None:
                pu = self._u_ptr
            else:
                self._u[: len(u)] = u
        else:
            self._u[: len(num.u)] = u
        if self._has_tp:
            self._tp[:] = num._tp_at(t)
        fn(t, py, pyd, pprm, pu, ptp, pout)
        return self._out[g].copy()

    def mass_and_force(self, t, y, yd, u=None):
        """M (f x f) and q - k (f) at one state."""
        o = self._run("dynamics", t, y, yd, u)
        f = self.f
        return o[: f * f].reshape(f, f), o[f * f: f * f + f]

    def constraint_parts(self, t, y):
        """c (mh), C (m x f) and b' (m) at one configuration."""
        o = self._run("constraints", t, y, y, None)
        m, mh, f = self.m, self.mh, self.f
        return o[:mh], o[mh:mh + m * f].reshape(m, f), o[mh + m * f: mh + m + m * f]

    def constrained_parts(self, t, y, yd, u=None):
        """M, q - k, c, C, b', b'' at one state."""
        o = self._run("constrained", t, y, yd, u)
        f, m = self.f, self.m
        a = f * f
        b = a + f
        c = b + self.mh
        d = c + m * f
        e = d + m
        return (o[:a].reshape(f, f), o[a:b], o[b:c], o[c:d].reshape(m, f), o[d:e], o[e:e + m])

    def energy(self, t, y, yd, u=None):
        """(kinetic, potential) energy at one state."""
        o = self._run("energy", t, y, yd, u)
        return float(o[0]), float(o[1])


def use_c_kernel(numeric) -> None:
    """Evaluate the single states of ``numeric`` (a NumericModel) with its compiled C kernel from
    now on: the per-state methods (mass_and_force, constraint_parts, constrained_parts) are
    replaced on this instance, time series keep the vectorized numpy code; and
    ``numeric.compiled_rhs()`` gives the whole right-hand side of a tree on the engine
    (:class:`~.compiled_rhs.CompiledRHS`, which the reference's minimal ODE then calls once per
    evaluation), or None without the headers the engine extension needs."""
    kernel = CKernel(numeric)
    numeric.mass_and_force = kernel.mass_and_force
    numeric.constraint_parts = kernel.constraint_parts
    numeric.constrained_parts = kernel.constrained_parts
    numeric.backend = "c"
    numeric.compiled_rhs = lambda: _engine_rhs(numeric)


def _engine_rhs(numeric):
    """CompiledRHS(numeric), or None where the interpreter lacks Python.h (the per-state kernel
    stays)."""
    try:
        return CompiledRHS(numeric)
    except MissingPythonHeaders:
        return None
