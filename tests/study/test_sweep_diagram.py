"""Sweeps of block diagrams (issue 28 item 1): a factory of the parameters that returns a Diagram,
or an SSP file with parameters ``block.parameter``; metrics of the linearized closed loop.

The loop of ``diagram_loops.integrator_loop(k)``: ẋ = k (1 - x), continuous pole -k; the
runner's loop at step T has the pole z = 1 - kT (ln|z|/T in the s-plane), unstable for kT > 2.
These closed forms are the reference (1e-9); the nonlinear runs' verdicts must agree with them.
"""

import functools
import importlib.util
import math
import pathlib
import sys

import numpy as np
import pytest
from diagram_loops import STEP, fails_at_three, integrator_loop, not_a_diagram

import mbsfmu
from mbsfmu.core.errors import ParameterError
from mbsfmu.study import definition, morris_screening

GAINS = [2.0, 5.0, 12.0, 19.0, 21.0, 25.0]  # kT = 0.2 ... 2.5: the last two unstable
#: the ideal loop (pole s = -k) instead of the runner's sampled one, the default
CONTINUOUS = {"domain": "continuous"}


def test_linear_metrics_match_the_closed_form_poles_without_a_run():
    df = mbsfmu.sweep(integrator_loop, {"k": GAINS}, scheduler="synchronous", linearize=CONTINUOUS,
                      metrics={"sigma": "largest_real_part", "stable": "stable", "zeta": "min_damping"})
    assert df["sigma"].to_numpy() == pytest.approx([-k for k in GAINS], rel=0, abs=1e-9)
    assert df["stable"].tolist() == [1.0] * len(GAINS)
    assert df["zeta"].tolist() == pytest.approx([1.0] * len(GAINS), abs=1e-12)
    assert (df["status"] == "ok").all()
    assert df["wall_s"].max() < 0.5  # no run of 20 s of the loop


def test_discrete_verdict_agrees_with_the_simulation_at_every_point():
    df = mbsfmu.sweep(integrator_loop, {"k": GAINS}, t_end=200.0, scheduler="synchronous",
                      metrics={"sigma": "largest_real_part",
                               "settle": "settling(plant.y, reference=ref.y, bound=1e6)"},
                      linearize={"domain": "discrete"})
    want = [math.log(abs(1 - k * STEP)) / STEP for k in GAINS]
    assert df["sigma"].to_numpy() == pytest.approx(want, rel=0, abs=1e-9)
    unstable = df["sigma"] >= 0
    assert unstable.tolist() == [False] * 4 + [True] * 2
    assert (df.loc[unstable, "status"] == "diverged").all()
    bound = r"plant.y leaves its bound \|plant.y\| <= 1000000.0"
    assert df.loc[unstable, "message"].str.contains(bound).all()
    assert (df.loc[~unstable, "status"] == "ok").all()
    # without a bound the run at kT = 2.5 grows past the float range: the finite check stops it
    far = mbsfmu.sweep(integrator_loop, {"k": [25.0]}, t_end=200.0, scheduler="synchronous",
                       metrics={"settle": "settling(plant.y, reference=ref.y)"})
    assert far["status"][0] == "diverged"
    assert "ctrl.y is not finite at t=" in far["message"][0]
    # settled: the samples x_n = 1 - (1 - kT)^n are inside the 2 % band from the first n with
    # |1 - kT|^n <= 0.02 on (the band's crossing interpolated between samples n - 1 and n)
    for k, t in zip(GAINS[:4], df["settle"][:4]):
        n = math.ceil(math.log(0.02) / math.log(abs(1 - k * STEP)))
        assert (n - 1) * STEP - 1e-12 <= t <= n * STEP + 1e-12


def test_factory_failures_are_rows_and_bad_returns_name_the_factory():
    df = mbsfmu.sweep(fails_at_three, {"k": [1.0, 3.0, 5.0]}, t_end=1.0, scheduler="synchronous",
                      metrics={"y": "final(plant.y)"})
    assert df["status"].tolist() == ["ok", "failed", "ok"]
    want = "factory diagram_loops.fails_at_three(k=3.0) raised ValueError: no loop for k = 3"
    assert want in df["message"][1]
    with pytest.raises(ParameterError, match=r"returned dict .* not a mbsfmu.runner.Diagram"):
        mbsfmu.sweep(not_a_diagram, {"k": [1.0]}, t_end=1.0, scheduler="synchronous")


def test_design_names_checked_against_the_signature():
    with pytest.raises(ParameterError, match=r"has no parameter 'kk' \(did you mean 'k'\?\)"):
        mbsfmu.sweep(integrator_loop, {"kk": [1.0]}, t_end=1.0, scheduler="synchronous")
    with pytest.raises(ParameterError, match=r"needs 'k', which no design column and no params= value sets"):
        mbsfmu.sweep(integrator_loop, {"step": [0.1]}, t_end=1.0, scheduler="synchronous")
    with pytest.raises(ParameterError, match=r"realtime= is refused for a diagram target"):
        mbsfmu.sweep(integrator_loop, {"k": [1.0]}, t_end=1.0, realtime=True, scheduler="synchronous")


def test_local_cluster_resume_and_the_definition_follows_the_factory(tmp_path):
    out = tmp_path / "rows.csv"
    opts = dict(t_end=5.0, metrics={"y": "final(plant.y)", "sigma": "largest_real_part"}, out=out)
    first = mbsfmu.sweep(integrator_loop, {"k": [1.0, 2.0, 3.0, 4.0]}, workers=2, **opts)  # the local default
    want = [1 - (1 - k * STEP) ** 50 for k in [1.0, 2.0, 3.0, 4.0]]
    assert first["y"].to_numpy() == pytest.approx(want, rel=1e-12)
    opts["scheduler"] = "synchronous"  # the rows file does not depend on where the runs ran
    again = mbsfmu.sweep(integrator_loop, {"k": [1.0, 2.0, 3.0, 4.0]}, **opts)
    assert again.attrs["resume"]["taken"] == 4 and again.attrs["resume"]["ran"] == 0
    # another factory (another code) is another study
    with pytest.raises(ParameterError, match="target: factory diagram_loops.integrator_loop in rows.csv"):
        mbsfmu.sweep(fails_at_three, {"k": [1.0, 2.0, 3.0, 4.0]}, **opts)
    # the step given as a fixed value is a setting of the study
    with pytest.raises(ParameterError, match="params:"):
        mbsfmu.sweep(integrator_loop, {"k": [1.0, 2.0, 3.0, 4.0]}, params={"step": 0.05}, **opts)


def test_factory_of_a_file_loaded_by_path_reaches_the_workers(tmp_path):
    """A module that no worker can import (loaded from a file by path) is pickled by value."""
    src = tmp_path / "loop_by_path.py"
    src.write_text("from diagram_loops import integrator_loop\n\n\ndef loop(k, gain=1.0):\n"
                   "    return integrator_loop(k * gain)\n")
    spec = importlib.util.spec_from_file_location("loop_by_path", src)
    module = importlib.util.module_from_spec(spec)
    sys.modules["loop_by_path"] = module
    spec.loader.exec_module(module)
    try:
        df = mbsfmu.sweep(module.loop, {"k": [1.0, 2.0]}, metrics={"sigma": "largest_real_part"},
                          linearize=CONTINUOUS, scheduler="processes", workers=2)
    finally:
        del sys.modules["loop_by_path"]
    assert df["sigma"].tolist() == pytest.approx([-1.0, -2.0], abs=1e-9)


def test_linear_metric_refused_on_a_model_and_bad_linearize_options():
    with pytest.raises(ParameterError, match="is for a diagram target"):
        mbsfmu.sweep("models/cart_pendulum.py", {"m": [0.1]}, t_end=0.1, metrics={"s": "largest_real_part"},
                     scheduler="synchronous")
    with pytest.raises(ParameterError, match=r"linearize= has no option 'domian'; did you mean 'domain'\?"):
        mbsfmu.sweep(integrator_loop, {"k": [1.0]}, metrics={"s": "largest_real_part"},
                     linearize={"domian": "discrete"}, scheduler="synchronous")


# ---------------------------------------------------------------------------------- FMUs inside
ROOT = pathlib.Path(__file__).resolve().parents[2]


def unzips(result):
    """How often this process unpacked an FMU file (a function metric: read on the worker)."""
    from mbsfmu.runner.fmu_block import FMU_FILES

    return float(sum(FMU_FILES.extractions.values()))


@pytest.fixture(scope="module")
def demo(built_fmu):
    """ci/stability_map_demo.py loaded by path (no worker can import it), its FMU and gain."""
    spec = importlib.util.spec_from_file_location("stability_map_demo", ROOT / "ci" / "stability_map_demo.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["stability_map_demo"] = module
    spec.loader.exec_module(module)
    from mbsfmu.analysis import dlqr

    fmu = built_fmu(ROOT / "models" / "cart_pendulum.py", interface="both")
    lin = mbsfmu.linearize(mbsfmu.load_model(ROOT / "models" / "cart_pendulum.py"), at={"x": 0, "theta": 0},
                           inputs=["F"], symbolic=False)
    yield module, fmu, dlqr(lin, Q=[10, 100, 1, 1], R=[0.1], period=module.STEP)
    del sys.modules["stability_map_demo"]


@pytest.mark.slow
def test_fmu_unpacked_once_per_worker_and_the_map_agrees_with_the_runs(demo, tmp_path):
    module, fmu, gain = demo
    factory = functools.partial(module.diagram, fmu, gain)  # diagram(fmu, gain, l, m)
    lengths = [0.3, 0.5, 0.8, 1.2, 1.6, 2.0]
    df = mbsfmu.sweep(factory, {"l": lengths}, params={"m": 0.1}, t_end=5.0,
                      metrics={"sigma": "largest_real_part", "theta": "maxabs(cart.theta, bound=1.0)",
                               "unzips": unzips}, workers=1, batch=2, out=tmp_path / "cart.csv")
    # one worker process, six runs in three tasks: the FMU was unpacked there once
    finished = df["unzips"].notna()
    assert finished.sum() >= 4 and (df.loc[finished, "unzips"] == 1.0).all()
    stable = df["sigma"] < 0
    assert stable.any() and (~stable).any()
    assert (df.loc[stable, "status"] == "ok").all()
    assert (df.loc[~stable, "status"] == "diverged").all()
    # the FMU file is part of the study's definition
    entries = definition.read(definition.path_of(tmp_path / "cart.csv"))["definition"]
    assert list(entries["fmu files"]) == [str(pathlib.Path(fmu).resolve())]


# ---------------------------------------------------------------------------------- SSP files
@pytest.fixture(scope="module")
def ssp(built_fmu, tmp_path_factory):
    """The hanging cart-pendulum FMU (g reversed) with a PI controller of its position, as an
    SSP (the controller exported as an FMU)."""
    pytest.importorskip("pythonfmu")
    from blocks import FMU, PID
    from mbsfmu.runner import Diagram, export_ssp

    d = Diagram(0.01)
    d.add("plant", FMU(built_fmu(ROOT / "models" / "cart_pendulum.py"), parameters={"g": -9.81},
                       start_values={"x": 0.1}))
    d.add("ctrl", PID(kp=-20.0, ki=-1.0))
    d.connect("plant.x", "ctrl.u")
    d.connect("ctrl.y", "plant.F")
    return export_ssp(d, tmp_path_factory.mktemp("ssp") / "loop.ssp", python_blocks="export")


@pytest.mark.slow
def test_ssp_target_sets_block_parameters_and_runs_as_the_imported_diagram(ssp, tmp_path):
    from mbsfmu.runner import import_ssp

    design = {"plant.m": [0.1, 0.3], "plant.l": [0.5]}
    df = mbsfmu.sweep(ssp, design, t_end=1.0, metrics={"x": "final(plant.x)", "th": "maxabs(plant.theta)"},
                      scheduler="synchronous", out=tmp_path / "ssp.csv")
    for i, m in enumerate(design["plant.m"]):
        d = import_ssp(ssp)
        plant = d.blocks["plant"]
        plant.parameters.update({"m": m, "l": 0.5})
        res = d.run(1.0)
        assert df["x"][i] == res["plant.x"][-1]  # the same run, bit for bit
        assert df["th"][i] == np.max(np.abs(res["plant.theta"]))
    with pytest.raises(ParameterError, match=r"block 'plant' has no parameter or settable start value "
                                             r"'mass'"):
        mbsfmu.sweep(ssp, {"plant.mass": [0.1]}, t_end=1.0, scheduler="synchronous")
    with pytest.raises(ParameterError, match=r"'plnt.m' is not block.parameter of a block of the SSP "
                                             r".*did you mean plant.m"):
        mbsfmu.sweep(ssp, {"plnt.m": [0.1]}, t_end=1.0, scheduler="synchronous")
    # another SSP file is another study
    other = tmp_path / "other.ssp"
    other.write_bytes(ssp.read_bytes() + b"\0")
    with pytest.raises(ParameterError, match="target: SSP file sha256"):
        mbsfmu.sweep(other, design, t_end=1.0, metrics={"x": "final(plant.x)", "th": "maxabs(plant.theta)"},
                     scheduler="synchronous", out=tmp_path / "ssp.csv")


def test_morris_screening_of_a_diagram_from_its_linearization():
    """sigma = -k exactly (continuous loop): the elementary effects of k are -(3 - 1), of the
    step (which the continuous loop does not see) 0."""
    r = morris_screening(integrator_loop, {"k": (1.0, 3.0), "step": (0.05, 0.1)}, n=4,
                                metrics={"sigma": "largest_real_part"}, linearize=CONTINUOUS,
                                scheduler="synchronous")
    assert r.runs == 4 * 3
    k, step = r.indices.loc[("sigma", "k")], r.indices.loc[("sigma", "step")]
    assert k["mu"] == pytest.approx(-2.0, abs=1e-9) and k["mu_star"] == pytest.approx(2.0, abs=1e-9)
    assert (step["mu_star"], step["mu"], step["sigma"]) == (0.0, 0.0, 0.0)


@pytest.mark.slow
def test_a_cluster_at_an_address_runs_a_factory_its_workers_cannot_import(start_cli_cluster, tmp_path):
    """The workers of a cluster started by Dask's command line have the repository on their path,
    not tests/support: the factory's module goes by value."""
    cluster = start_cli_cluster(n_workers=1)
    df = mbsfmu.sweep(integrator_loop, {"k": [1.0, 2.0, 25.0]}, t_end=200.0, scheduler=cluster.address,
                      metrics={"y": "final(plant.y)", "sigma": "largest_real_part"},
                      linearize={"domain": "discrete"}, trajectories=tmp_path / "runs.npz",
                      plot=tmp_path / "y.png", out=tmp_path / "rows.csv")
    assert df["status"].tolist() == ["ok", "ok", "diverged"]
    assert df["y"][:2].tolist() == pytest.approx([1.0, 1.0], abs=1e-12)
    assert df["sigma"].tolist() == pytest.approx([math.log(abs(1 - k * STEP)) / STEP for k in (1, 2, 25)],
                                                 abs=1e-9)
    from mbsfmu.study import trajectories

    run0 = trajectories.read(tmp_path / "runs.npz", 0)
    assert run0.dtype.names[0] == "time" and "plant.y" in run0.dtype.names and len(run0) == 2001
    assert (tmp_path / "y.png").stat().st_size > 0
    # a file named FILE.py:FUNCTION whose function uses a helper module beside it and one of
    # tests/support: all go by value
    (tmp_path / "loop_helper.py").write_text("from blocks import Gain\n\n\ndef controller(k):\n"
                                             "    return Gain(k)\n")
    (tmp_path / "my_loop.py").write_text(
        "import os\nimport sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
        "from diagram_loops import integrator_loop\nfrom loop_helper import controller\n\n\n"
        "def loop(k):\n    d = integrator_loop(1.0)\n    d.add('extra', controller(k))\n"
        "    d.connect('plant.y', 'extra.u')\n    return d\n")
    df = mbsfmu.sweep(f"{tmp_path / 'my_loop.py'}:loop", {"k": [2.0, 3.0]}, t_end=1.0,
                      scheduler=cluster.address, metrics={"z": "final(extra.y)"})
    assert df["status"].tolist() == ["ok", "ok"]
    assert df["z"].tolist() == pytest.approx([2.0 * (1 - 0.9 ** 10), 3.0 * (1 - 0.9 ** 10)], rel=1e-12)


def test_threads_scheduler_runs_fresh_diagrams_per_run():
    """Threads share the process: every run builds its own diagram (no block shared between
    two runs at once), so the rows are those of the synchronous scheduler."""
    design = {"k": [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]}
    opts = dict(t_end=3.0, metrics={"e": "ise(plant.y, reference=ref.y)"})
    a = mbsfmu.sweep(integrator_loop, design, scheduler="threads", workers=2, batch=1, **opts)
    b = mbsfmu.sweep(integrator_loop, design, scheduler="synchronous", **opts)
    assert a["e"].tolist() == b["e"].tolist()


def test_an_unstable_linearized_loop_is_its_rows_status_and_kept_on_resume(tmp_path):
    """A study of the linearized loop only: the discrete pole z = 1 - kT leaves the unit circle
    for kT > 2 (k = 21, 25 at T = 0.1); those rows are 'unstable' with the pole in the message
    and their value ln|z|/T kept; a second sweep takes them from the rows file as finished runs;
    the map marks them and still shows their values."""
    out = tmp_path / "map.csv"
    df = mbsfmu.sweep(integrator_loop, {"k": GAINS}, metrics={"sigma": "largest_real_part"},
                      scheduler="synchronous", out=out)
    sigma = [math.log(abs(1 - k * STEP)) / STEP for k in GAINS]
    assert df["sigma"].to_numpy() == pytest.approx(sigma, rel=1e-12)
    assert df["status"].tolist() == ["ok"] * 4 + ["unstable"] * 2
    z = 1 - GAINS[-1] * STEP
    assert df["message"].iat[-1] == (f"metric 'sigma': the linearized closed loop is unstable (pole z = "
                                     f"{z:.6g}, |z| = {abs(z):.6g} > 1; s = ln(z)/T = "
                                     f"{complex(np.log(complex(z)) / STEP):.6g} 1/s at T = 0.1 s)")
    again = mbsfmu.sweep(integrator_loop, {"k": GAINS}, metrics={"sigma": "largest_real_part"},
                         scheduler="synchronous", out=out, retry_failed=True)
    assert again.attrs["resume"]["taken"] == len(GAINS) and again.attrs["resume"]["ran"] == 0
    assert again["status"].tolist() == df["status"].tolist()
    assert again["sigma"].tolist() == df["sigma"].tolist()
    ax = mbsfmu.study.plot_study(df, tmp_path / "map.png")
    marks = {line.get_label(): (line.get_color(), list(line.get_xdata()), list(line.get_ydata()))
             for line in ax.lines}
    assert marks["unstable (2)"] == ("tab:purple", GAINS[4:], pytest.approx(sigma[4:], rel=1e-12))
    assert ax.get_title() == "sigma: 4 of 6 runs ok, 2 unstable"


def test_a_monte_carlo_design_of_a_diagram_on_processes():
    """A Monte Carlo design of the gain (uniform on [1, 25], 40 draws, seeded) on Dask's process
    scheduler: every row's largest real part is its draw's ln|1 - kT|/T, and the rows 'unstable'
    are exactly the draws with kT > 2."""
    design = mbsfmu.study.designs.monte_carlo({"k": (1.0, 25.0)}, 40, seed=7)
    df = mbsfmu.sweep(integrator_loop, design, metrics={"sigma": "largest_real_part"},
                      scheduler="processes", workers=2)
    k = design["k"].to_numpy()
    assert df["k"].tolist() == k.tolist()
    assert df["sigma"].to_numpy() == pytest.approx(np.log(np.abs(1 - k * STEP)) / STEP, rel=1e-12)
    assert (df["status"] == "unstable").tolist() == (k * STEP > 2).tolist()
    assert 0 < (k * STEP > 2).sum() < len(k)
