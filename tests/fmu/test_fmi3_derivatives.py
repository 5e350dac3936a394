"""FMI 3.0 Co-Simulation: directional and adjoint derivatives of the outputs by the inputs against
difference quotients of the FMU's own outputs (issue 26).

The slider-crank driven by two inputs, a motor torque ``T`` on the crank and a torque ``Tr`` on
the rod: its pivot reactions (Lagrange multipliers, outputs) depend on both directly through the
KKT system, and affinely, so a difference quotient of the outputs at one communication point is
exact up to rounding.  ``fmi3GetDirectionalDerivative`` gives J v, ``fmi3GetAdjointDerivative``
gives w^T J; both must equal the quotients' J to 1e-8 relative, and each other's transposes.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
from fmpy import extract, read_model_description
from fmpy.fmi3 import FMU3Slave

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "support"))

import mbsfmu  # noqa: E402
from mbsfmu.model.loader import load_model  # noqa: E402

OUTPUTS = ("reaction.pivot.x", "reaction.pivot.y")
INPUTS = ("T", "Tr")


@pytest.fixture(scope="module")
def driven(tmp_path_factory):
    """An FMU3Slave of the driven slider-crank, stepped 0.25 s, and its value references."""
    system = load_model(ROOT / "models" / "slider_crank.py")
    T, Tr = system.input("T", 0.0), system.input("Tr", 0.0)
    system.torque("motor", "crank", [0, 0, T])
    system.torque("rod_motor", "rod", [0, 0, Tr])
    out = tmp_path_factory.mktemp("fmi3_derivatives")
    path = mbsfmu.build_fmu(system, out / "driven3.fmu", fmi_version=3)
    md = read_model_description(str(path))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    fmu = FMU3Slave(guid=md.guid, unzipDirectory=extract(str(path), str(out / "unzipped")),
                    modelIdentifier=md.coSimulation.modelIdentifier, instanceName="driven")
    fmu.instantiate()
    fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()
    t = 0.0
    for _ in range(25):
        fmu.setFloat64([vr["T"], vr["Tr"]], [np.sin(4 * t), 0.5])
        fmu.doStep(t, 0.01)
        t += 0.01
    yield fmu, vr
    fmu.terminate()
    fmu.freeInstance()


def _jacobian_by_differences(fmu, vr, h=1e-3):
    """d outputs / d inputs by central differences of the outputs at the communication point."""
    u0 = np.array(fmu.getFloat64([vr[n] for n in INPUTS]))
    cols = []
    for k in range(len(INPUTS)):
        values = []
        for sign in (1, -1):
            u = u0.copy()
            u[k] += sign * h
            fmu.setFloat64([vr[n] for n in INPUTS], list(u))
            values.append(np.array(fmu.getFloat64([vr[n] for n in OUTPUTS])))
        cols.append((values[0] - values[1]) / (2 * h))
    fmu.setFloat64([vr[n] for n in INPUTS], list(u0))
    return np.column_stack(cols)


def test_directional_and_adjoint_derivatives_match_differences(driven):
    fmu, vr = driven
    unknowns, knowns = [vr[n] for n in OUTPUTS], [vr[n] for n in INPUTS]
    J = _jacobian_by_differences(fmu, vr)
    assert np.max(np.abs(J)) > 1.0  # not trivially zero
    rng = np.random.default_rng(26)
    for _ in range(3):
        v, w = rng.normal(size=len(INPUTS)), rng.normal(size=len(OUTPUTS))
        jv = np.array(fmu.getDirectionalDerivative(unknowns, knowns, list(v), len(unknowns)))
        wj = np.array(fmu.getAdjointDerivative(unknowns, knowns, list(w), len(knowns)))
        assert np.allclose(jv, J @ v, rtol=1e-8, atol=1e-9 * np.max(np.abs(J)))
        assert np.allclose(wj, w @ J, rtol=1e-8, atol=1e-9 * np.max(np.abs(J)))
        assert w @ jv == pytest.approx(wj @ v, rel=1e-12)  # <w, J v> = <J^T w, v>
