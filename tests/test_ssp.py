"""SSP export/import of diagrams (mbsfmu.runner.ssp), checked against fmpy's SSP simulator.

The diagram: the cart-pendulum native FMU and an integrating controller (a PID block with kp = 0
exported as an FMU), F = 5 ∫ x dt.  Neither connected output has direct feed-through and both
are 0 at t0, the case in which fmpy.ssp's Jacobi coupling (inputs from the previous step,
connectors starting at 0) and the runner's output-then-update steps are the same computation:
the results must agree to the last bit.
"""

import zipfile

import numpy as np
import pytest
from fmu_support import MODELS, TOL

import mbsfmu
from mbsfmu.runner.diagram import Diagram

fmpy = pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")

from fmpy.ssp.simulation import simulate_ssp  # noqa: E402
from fmpy.ssp.ssd import Parameter, ParameterSet, read_ssd  # noqa: E402

from blocks.control import PID  # noqa: E402
from blocks.fmu import FMU  # noqa: E402
from blocks.math_blocks import Gain  # noqa: E402
from mbsfmu.runner.block_fmu import export_block_fmu  # noqa: E402
from mbsfmu.runner.ssp import SSPError, export_ssp, import_ssp  # noqa: E402

H = 1.0 / 64  # a binary fraction: fmpy's accumulated time equals the runner's t0 + n h exactly
T_END = 1.0
PLANT = {"parameters": {**TOL, "mc": 2.0}, "start_values": {"theta": 0.05}}


@pytest.fixture(scope="module")
def fmus(tmp_path_factory, cache):
    out = tmp_path_factory.mktemp("ssp")
    return {"plant": mbsfmu.build_fmu(MODELS / "cart_pendulum.py", out),
            "ctrl": export_block_fmu(PID(kp=0.0, ki=5.0), out / "ctrl.fmu", step_size=H)}


def diagram(fmus, ctrl=None):
    d = Diagram(H)
    d.add("plant", FMU(fmus["plant"], **PLANT))
    d.add("ctrl", ctrl if ctrl is not None else FMU(fmus["ctrl"], sample_time=H))
    d.connect("plant.x", "ctrl.u")
    d.connect("ctrl.y", "plant.F")
    return d


def fmpy_ssp(path):
    """fmpy.ssp.simulate_ssp with the SSP's own parameter bindings (fmpy reads but does not
    apply them: they are passed as its parameter_set with hierarchical names)."""
    ssd = read_ssd(str(path))
    pset = ParameterSet(name="bindings")
    for comp in ssd.system.elements:
        for binding in comp.parameterBindings:
            for values in binding.parameterValues:
                for p in values.parameters:
                    pset.parameters.append(Parameter(name=f"{comp.name}.{p.name}", type=p.type,
                                                     value=p.value))
    return simulate_ssp(str(path), stop_time=T_END, step_size=H, parameter_set=pset)


def test_fmpy_simulate_ssp_equals_the_runner(fmus, tmp_path):
    d = diagram(fmus)
    ours = d.run(T_END)
    path = export_ssp(d, tmp_path / "loop.ssp")
    ref = fmpy_ssp(path)
    # fmpy's row k holds the values after the step from t_k: the runner's row k + 1
    assert len(ref) == len(ours.time) - 1
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
    ref = fmpy_ssp(path)
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
                                        "resources/plant.fmu"]


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
