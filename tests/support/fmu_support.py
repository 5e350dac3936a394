"""Helpers shared by the FMU tests: reference runs of ``mbsfmu.simulate``, comparisons, fmpy
slaves with a logger that records messages, FMUs built when a test first reads them."""

from __future__ import annotations

import pathlib
from collections.abc import Mapping

import numpy as np

import mbsfmu

MODELS = pathlib.Path(__file__).resolve().parents[2] / "models"
TOL = {"solver_rtol": 1e-10, "solver_atol": 1e-12}

#: model -> (end time, communication step, extra arguments of mbsfmu.simulate)
CASES = {
    "double_pendulum": (2.0, 0.01, {}),
    "cart_pendulum": (2.0, 0.01, {}),
    "slider_crank": (1.0, 0.01, {"method": "rkstab", "formulation": "qr"}),
    "andrews": (0.03, 0.001, {"method": "rkstab", "formulation": "qr"}),
}

_REFS: dict = {}


class Lazy(Mapping):
    """A module's FMUs by name, each made by its maker (a call without arguments, mostly
    conftest's ``built_fmu``) when a test first reads it: a run that selects some of a module's
    tests (``ci/test --fast``, ``-k``) builds only the FMUs those tests use."""

    def __init__(self, makers):
        self._makers, self._made = dict(makers), {}

    def __getitem__(self, key):
        if key not in self._made:
            self._made[key] = self._makers[key]()
        return self._made[key]

    def __iter__(self):
        return iter(self._makers)

    def __len__(self):
        return len(self._makers)

_VARIANT = '''"""{doc}"""

import importlib.util
import math

_BASE = {base!r}


def model():
    spec = importlib.util.spec_from_file_location("slider_crank_base", _BASE)
    base = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(base)
    s = base.model()
{body}
    return s
'''


def slider_crank_variant(path, doc: str, *lines: str) -> pathlib.Path:
    """Write a model file at ``path`` whose model() is models/slider_crank.py's with the
    statements ``lines`` (on the System ``s``; ``math`` is imported) added: an FMU built from it
    stands alone, as a user's model file that extends another."""
    path = pathlib.Path(path)
    path.write_text(_VARIANT.format(doc=doc, base=str(MODELS / "slider_crank.py"),
                                    body="\n".join(f"    {ln}" for ln in lines)))
    return path


def reference(name, t_end=None, dt=None, **kw):
    """mbsfmu.simulate of models/<name>.py at the FMU tolerances (cached per arguments)."""
    T, h, extra = CASES[name]
    args = {**extra, **kw}
    key = (name, t_end, dt, repr(sorted(args.items())))
    if key not in _REFS:
        _REFS[key] = mbsfmu.simulate(MODELS / f"{name}.py", t_end or T, dt or h, rtol=1e-10,
                                     atol=1e-12, **args)
    return _REFS[key]


def assert_matches(r, ref, tol=1e-8):
    """Every coordinate and rate of the fmpy result r equals the reference to tol, relative to
    the size of the signal where it exceeds 1 (Andrews' rates reach 1e3 rad/s)."""
    assert np.allclose(r["time"], ref.t, atol=1e-12, rtol=0)
    for i, n in enumerate(ref.coordinate_names):
        for got, want, label in ((r[n], ref.y[i], n), (r[f"der({n})"], ref.yd[i], f"der({n})")):
            scale = max(1.0, float(np.max(np.abs(want))))
            err = float(np.max(np.abs(got - want)))
            assert err < tol * scale, f"{label}: {err:.3g} > {tol:g} * {scale:.3g}"


class Slave:
    """An fmpy FMU2Slave of an FMU file with its value references and a recording logger."""

    def __init__(self, path, tmp_path, name="inst", folder="unzipped"):
        from fmpy import extract, read_model_description
        from fmpy.fmi2 import FMU2Slave

        md = read_model_description(str(path))
        d = pathlib.Path(tmp_path) / folder
        if not d.exists():
            extract(str(path), str(d))
        self.fmu = FMU2Slave(guid=md.guid, unzipDirectory=str(d),
                             modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
        self.vr = {v.name: v.valueReference for v in md.modelVariables}
        self.types = {v.name: v.type for v in md.modelVariables}  # Real, or Integer (method, old name solver)
        self.outputs = [v.name for v in md.modelVariables if v.causality == "output"]
        self.messages: list[tuple[int, str, str]] = []

    def instantiate(self, logging_on=False):
        from mbsfmu.fmu.fmpy_callbacks import recording_callbacks

        cb = recording_callbacks(self.messages)
        self._cb = cb  # keep the callbacks alive
        self.fmu.instantiate(callbacks=cb, loggingOn=logging_on)

    def start(self, values=None, t0=0.0, integers=None):
        """Instantiate (if needed), set values (Reals, and the Integers ``integers``) in
        initialization mode, initialize."""
        if getattr(self, "_cb", None) is None:
            self.instantiate()
        self.fmu.setupExperiment(startTime=t0)
        self.fmu.enterInitializationMode()
        self.set({**TOL, **(values or {})})
        if integers:
            self.fmu.setInteger([self.vr[k] for k in integers], list(integers.values()))
        return self.fmu.exitInitializationMode()

    def set(self, values):
        if values:
            self.fmu.setReal([self.vr[k] for k in values], [float(v) for v in values.values()])

    def get(self, names=None):
        names = names or self.outputs
        return np.array(self.fmu.getReal([self.vr[n] for n in names]))

    def run(self, t0, n, h, inputs=None):
        """n steps of size h from t0; returns the outputs after each step (n x outputs)."""
        rows = []
        for k in range(n):
            if inputs:
                self.set(inputs(t0 + k * h))
            self.fmu.doStep(t0 + k * h, h)
            rows.append(self.get())
        return np.array(rows)

    def errors(self):
        return [m for s, c, m in self.messages if s >= 3]

    def free(self):
        self.fmu.freeInstance()


def stepped_rows(block, k0: int, k1: int, h: float, F) -> list[list]:
    """A started block stepped by hand from communication point k0 to k1 (input F(t)): the rows
    of outputs at t_k0, ..., t_(k1-1), each before its step."""
    rows = []
    for k in range(k0, k1):
        t = k * h
        rows.append(list(block.output(t, [F(t)])))
        block.update(t, [F(t)])
    return rows
