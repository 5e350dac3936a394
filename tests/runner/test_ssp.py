"""SSP export/import of diagrams (mbsfmu.runner.ssp), checked against fmpy's SSP simulator.

The diagram: the cart-pendulum native FMU and an integrating controller (a PID block with kp = 0
exported as an FMU), F = 5 ∫ x dt.  Neither connected output has direct feed-through and both
are 0 at t0, the case in which fmpy.ssp's Jacobi coupling (inputs from the previous step,
connectors starting at 0) and the runner's output-then-update steps are the same computation:
the results must agree to the last bit.
"""

import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from fmu_support import MODELS, TOL

import mbsfmu
from mbsfmu.runner.diagram import Diagram

fmpy = pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")

from fmpy.ssp.simulation import simulate_ssp  # noqa: E402
from fmpy.ssp.ssd import read_ssv  # noqa: E402

from blocks.control import PID  # noqa: E402
from blocks.fmu import FMU  # noqa: E402
from blocks.math_blocks import Gain  # noqa: E402
from mbsfmu.runner.block_fmu import export_block_fmu  # noqa: E402
from mbsfmu.runner.ssp import (  # noqa: E402
    PARAMETERS_SSV,
    SSPError,
    export_ssp,
    fmpy_parameter_set,
    import_ssp,
    simulate_ssp_fmpy,
)

H = 1.0 / 64  # a binary fraction: fmpy's accumulated time equals the runner's t0 + n h exactly
T_END = 1.0
PLANT = {"parameters": {**TOL, "mc": 2.0}, "start_values": {"theta": 0.05}}


@pytest.fixture(scope="module")
def fmus(tmp_path_factory, built_fmu):
    out = tmp_path_factory.mktemp("ssp")
    return {"plant": built_fmu(MODELS / "cart_pendulum.py"),
            "ctrl": export_block_fmu(PID(kp=0.0, ki=5.0), out / "ctrl.fmu", step_size=H)}


def diagram(fmus, ctrl=None):
    d = Diagram(H)
    d.add("plant", FMU(fmus["plant"], **PLANT))
    d.add("ctrl", ctrl if ctrl is not None else FMU(fmus["ctrl"], sample_time=H))
    d.connect("plant.x", "ctrl.u")
    d.connect("ctrl.y", "plant.F")
    return d


def test_fmpy_simulate_ssp_equals_the_runner(fmus, tmp_path):
    d = diagram(fmus)
    ours = d.run(T_END)
    path = export_ssp(d, tmp_path / "loop.ssp")
    ref = simulate_ssp_fmpy(path, stop_time=T_END)
    # fmpy's row k holds the values after the step from t_k: the runner's row k + 1
    assert len(ref) == len(ours.t) - 1
    for name in ("plant.x", "plant.theta", "plant.der(x)", "plant.rod_centre.z", "ctrl.y"):
        assert np.array_equal(ref[name], ours[name][1:]), name
    assert np.array_equal(ref["plant.F"], ours["ctrl.y"][1:])
    assert np.ptp(ours["ctrl.y"]) > 1e-2 and np.ptp(ours["plant.theta"]) > 0.1


def test_python_blocks_exported_into_the_ssp(fmus, tmp_path):
    d = diagram(fmus, ctrl=PID(kp=0.0, ki=5.0))
    with pytest.raises(SSPError, match=r"not FMU blocks: ctrl \(PID\)"):
        export_ssp(d, tmp_path / "x.ssp")
    ours = d.run(T_END)
    path = export_ssp(d, tmp_path / "python.ssp", python_blocks="export")
    ref = simulate_ssp_fmpy(path, stop_time=T_END)
    assert np.array_equal(ref["plant.x"], ours["plant.x"][1:])
    assert np.array_equal(ref["ctrl.y"], ours["ctrl.y"][1:])


def test_round_trip(fmus, tmp_path):
    d = diagram(fmus)
    path = export_ssp(d, tmp_path / "rt.ssp")
    back = import_ssp(path, unpack_dir=tmp_path / "unpacked")
    assert (back.step, back.t0) == (d.step, d.t0)
    assert list(back.blocks) == list(d.blocks)
    assert back.connections == d.connections
    for name, b in d.blocks.items():
        c = back.blocks[name]
        assert isinstance(c, FMU)
        assert (c.inputs, c.outputs, c.feedthrough()) == (b.inputs, b.outputs, b.feedthrough())
        assert c.parameters == b.parameters and c.start_values == b.start_values
        assert (c.sample_time, c.instance_name) == (b.sample_time, b.instance_name)
        assert c.path.read_bytes() == b.path.read_bytes()
    assert np.array_equal(back.run(T_END).values, d.run(T_END).values)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["SystemStructure.ssd", "resources/ctrl.fmu",
                                        "resources/parameters.ssv", "resources/plant.fmu"]


def test_fmi3_and_model_exchange_components(fmus, built_fmu, tmp_path):
    """An FMI 3.0 FMU run as Model Exchange (RK45, its tolerances) and the same FMU run as
    Co-Simulation, around the FMI 2.0 controller: the SSP records each component's interface in
    SSP's ``implementation`` attribute and the ME integrator in the block annotation; imported
    back, every block runs as it did and the diagram gives the same numbers to the last bit."""
    both = built_fmu(MODELS / "cart_pendulum.py", fmi_version=3, interface="both")
    d = Diagram(H)
    d.add("me", FMU(both, interface="me", method="RK45", rtol=1e-9, atol=1e-11, **PLANT))
    d.add("cs", FMU(both, **PLANT))
    d.add("ctrl", FMU(fmus["ctrl"], sample_time=H))
    d.connect("me.x", "ctrl.u")
    d.connect("ctrl.y", "me.F")
    d.connect("ctrl.y", "cs.F")
    path = export_ssp(d, tmp_path / "kinds.ssp")
    with zipfile.ZipFile(path) as z:
        ssd = z.read("SystemStructure.ssd").decode()
    assert ssd.count('implementation="ModelExchange"') == 1
    assert ssd.count('implementation="CoSimulation"') == 2
    assert 'method="RK45" rtol="1e-09" atol="1e-11" max_step="inf"' in ssd
    back = import_ssp(path, unpack_dir=tmp_path / "unpacked")
    for name, b in d.blocks.items():
        c = back.blocks[name]
        assert (c.fmi_version, c.interface, c.integrator) == (b.fmi_version, b.interface, b.integrator)
        assert c.parameters == b.parameters and c.start_values == b.start_values
    ours = d.run(T_END)
    assert np.array_equal(back.run(T_END).values, ours.values)
    assert np.max(np.abs(ours["me.x"] - ours["cs.x"])) < 1e-7  # the two interfaces agree
    assert np.ptp(ours["me.x"]) > 1e-3
    assert back.blocks["me"].statistics()["steps"] >= round(T_END / H)
    other = rewrite(path, tmp_path / "scheduled.ssp",
                    lambda s: s.replace('"ModelExchange"', '"ScheduledExecution"'))
    pattern = (r"component 'me': implementation 'ScheduledExecution' is not supported "
               r"\(the FMU block runs 'any', 'CoSimulation', 'ModelExchange'\)")
    with pytest.raises(SSPError, match=pattern):
        import_ssp(other)


def test_non_fmu_block_error_names_it(fmus, tmp_path):
    d = diagram(fmus)
    d.add("k", Gain(2.0))
    d.connect("plant.theta", "k.u")
    with pytest.raises(SSPError, match=r"not FMU blocks: k \(Gain\)"):
        export_ssp(d, tmp_path / "bad.ssp")
    assert not (tmp_path / "bad.ssp").exists()


def rewrite(src, dst, fn):
    """Copy the SSP src to dst with its SystemStructure.ssd text passed through fn (None: drop)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "SystemStructure.ssd":
                text = fn(data.decode())
                if text is None:
                    continue
                data = text.encode()
            zout.writestr(info, data)
    return dst


def test_malformed_ssp(fmus, tmp_path):
    good = export_ssp(diagram(fmus), tmp_path / "good.ssp")
    with pytest.raises(SSPError, match="has no SystemStructure.ssd"):
        import_ssp(rewrite(good, tmp_path / "no_ssd.ssp", lambda s: None))
    typo = rewrite(good, tmp_path / "typo.ssp",
                   lambda s: s.replace('endElement="ctrl"', 'endElement="ctrll"'))
    with pytest.raises(SSPError, match=r"unknown component 'ctrll' \(components: plant, ctrl; "
                                       r"did you mean ctrl\?\)"):
        import_ssp(typo)
    missing = rewrite(good, tmp_path / "missing.ssp",
                      lambda s: s.replace('source="resources/ctrl.fmu"', 'source="resources/c.fmu"'))
    with pytest.raises(SSPError, match=r"component 'ctrl': source 'resources/c.fmu' is not in the SSP"):
        import_ssp(missing)
    bad_param = rewrite(good, tmp_path / "param.ssp", lambda s: s.replace('name="mc"', 'name="mcc"'))
    with pytest.raises(SSPError, match=r"unknown variables \['mcc'\] \(close names: mc"):
        import_ssp(bad_param)
    no_step = rewrite(good, tmp_path / "nostep.ssp", lambda s: s.replace(" step=", " stride="))
    with pytest.raises(SSPError, match="does not store a communication step: give step="):
        import_ssp(no_step)
    assert import_ssp(no_step, step=2 * H).step == 2 * H
    (tmp_path / "not_a_zip.ssp").write_text("hello")
    with pytest.raises(SSPError, match="not a zip archive"):
        import_ssp(tmp_path / "not_a_zip.ssp")


def test_parameters_reach_fmpy(fmus, tmp_path):
    """Two cart-pendulum FMUs with g = -9.81 (rods hanging), each one's position driving the
    other's force.  fmpy's run of the export, with the SSP's parameters applied (through
    simulate_ssp_fmpy, or fmpy's own read_ssv of resources/parameters.ssv), equals the runner's:
    no connected output has direct feed-through and all start at 0, so the Jacobi coupling error
    is zero and the comparison is bit for bit.  The same SSP run as fmpy runs it by default
    (no parameter_set) keeps g = +9.81 and differs by centimetres, which this test would see."""
    hanging = {"parameters": {**TOL, "g": -9.81}}
    d = Diagram(H)
    d.add("cart1", FMU(fmus["plant"], start_values={"theta": 0.3}, **hanging))
    d.add("cart2", FMU(fmus["plant"], **hanging))
    d.connect("cart1.x", "cart2.F")
    d.connect("cart2.x", "cart1.F")
    ours = d.run(2.0)
    path = export_ssp(d, tmp_path / "two_carts.ssp")
    ref = simulate_ssp_fmpy(path, stop_time=2.0)
    for name in ("cart1.x", "cart1.theta", "cart2.x", "cart2.theta"):
        assert np.array_equal(ref[name], ours[name][1:]), name
    own = simulate_ssp(str(path), stop_time=2.0, step_size=H,
                       parameter_set=read_ssv(str(path), resource=PARAMETERS_SSV))
    assert np.array_equal(own["cart2.x"], ref["cart2.x"])
    names = sorted(p.name for p in fmpy_parameter_set(path).parameters)
    assert names == ["cart1.g", "cart1.solver_atol", "cart1.solver_rtol", "cart1.theta", "cart2.g",
                     "cart2.solver_atol", "cart2.solver_rtol"]
    default = simulate_ssp(str(path), stop_time=2.0, step_size=H)
    assert np.max(np.abs(default["cart1.x"] - ref["cart1.x"])) > 1e-2


IMPORT_WITHOUT_BLOCKS = r"""
import json, sys
import mbsfmu.runner as runner
d = runner.import_ssp(sys.argv[1], unpack_dir=sys.argv[2])
r = d.run(0.25)
print(json.dumps({"blocks": sorted(m for m in sys.modules if m == "blocks" or m.startswith("blocks.")),
                  "kind": [type(b).__module__ + "." + type(b).__name__ for b in d.blocks.values()],
                  "x": r["cart1.x"].tolist()}))
"""


def test_ssp_import_runs_without_the_blocks_package(fmus, tmp_path):
    """mbsfmu.runner does not import the top-level package blocks (issue 24 item 1): in a fresh
    interpreter, importing the runner, reading an SSP and running it loads no module of blocks;
    its FMU components are the runner's own FMU block (the class blocks.FMU is), and the run
    equals the same diagram's run here to the last bit."""
    d = Diagram(H)
    d.add("cart1", FMU(fmus["plant"], start_values={"theta": 0.3}))
    d.add("cart2", FMU(fmus["plant"]))
    d.connect("cart1.x", "cart2.F")
    d.connect("cart2.x", "cart1.F")
    ours = d.run(0.25)
    path = export_ssp(d, tmp_path / "two_carts.ssp")
    out = subprocess.run([sys.executable, "-c", IMPORT_WITHOUT_BLOCKS, str(path), str(tmp_path / "fmus")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(MODELS.parent)})
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["blocks"] == []
    assert seen["kind"] == ["mbsfmu.runner.fmu_block.FMU"] * 2
    assert np.array_equal(seen["x"], ours["cart1.x"])
    assert FMU is mbsfmu.runner.FMU and np.ptp(ours["cart1.x"]) > 1e-3
