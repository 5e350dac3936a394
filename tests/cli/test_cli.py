"""The command line: info output, CSV layout on the regular grid, --set."""

import csv
import subprocess
import sys

import numpy as np
import pytest

import mbsfmu
from mbsfmu.cli import main


def read_csv(path):
    with open(path) as fh:
        rows = list(csv.reader(fh))
    return rows[0], np.array(rows[1:], dtype=float)


def test_info(capsys):
    assert main(["info", "models/cart_pendulum.py"]) == 0
    out = capsys.readouterr().out
    assert "coordinates (2): x=0 (D=0), theta=0.1 (D=0)" in out
    assert "inputs (1): F=0" in out
    assert "M 2x2, k 2x1, q 2x1" in out


def test_simulate_help_and_defaults_are_the_api_s():
    """Every default of `mbsfmu simulate` is simulate()'s, and its help names them."""
    from mbsfmu.cli import build_parser
    from mbsfmu.core.formulation_choice import DEFAULT_FORMULATION
    from mbsfmu.reference.formulations import FORMULATIONS
    from mbsfmu.simulation.simulate import (
        ATOL_FACTOR,
        METHOD_DESCRIPTIONS,
        OTHER_SCIPY_METHODS,
        simulate_defaults,
    )

    parser = build_parser()
    args = parser.parse_args(["simulate", "m.py", "--t-end", "1", "--out", "o.csv"])
    api = simulate_defaults()
    for key in ("dt", "rtol", "atol", "method", "formulation", "backend"):
        assert getattr(args, key) == api[key], key
    sub = parser._subparsers._group_actions[0].choices["simulate"]
    text = " ".join(sub.format_help().split())
    assert f"(default {api['dt']:g})" in text and f"(default {api['rtol']:g})" in text
    assert f"{ATOL_FACTOR['constrained']:g} rtol for models with constraints" in text
    assert f"{ATOL_FACTOR['tree']:g} rtol for trees" in text
    assert f"{api['method']} (default):" in text and f"{DEFAULT_FORMULATION} (default)" in text
    assert all(n in text for n in (*METHOD_DESCRIPTIONS, *OTHER_SCIPY_METHODS, *FORMULATIONS))


def test_simulate_csv_grid_columns_and_set(tmp_path):
    out = tmp_path / "dp.csv"
    rc = main(["simulate", "models/double_pendulum.py", "--t-end", "1.0", "--dt", "0.05",
               "--rtol", "1e-10", "--set", "m=3", "--set", "alpha=0.2", "--set", "der(phi)=0.5",
               "--out", str(out)])
    assert rc == 0
    header, data = read_csv(out)
    assert header == ["time", "alpha", "phi", "der(alpha)", "der(phi)"]
    np.testing.assert_allclose(data[:, 0], np.arange(21) * 0.05, rtol=0, atol=1e-15)
    assert data[0, 1] == 0.2 and data[0, 4] == 0.5
    ref = mbsfmu.simulate("models/double_pendulum.py", t_end=1.0, dt=0.05, rtol=1e-10,
                          params={"m": 3.0}, initial={"alpha": 0.2, "der(phi)": 0.5})
    np.testing.assert_allclose(data[:, 1:3], ref.y.T, rtol=0, atol=1e-14)


def test_set_takes_a_named_initial_condition_and_its_rate(tmp_path):
    """--set crank_angle=0.5 --set Dcrank_angle=1 starts the slider-crank as simulate(initial=...)
    does: at the closed-form slider position x = r cos 0.5 + sqrt(l^2 - r^2 sin^2 0.5)."""
    out = tmp_path / "sc.csv"
    assert main(["simulate", "models/slider_crank.py", "--t-end", "0.2", "--set", "crank_angle=0.5",
                 "--set", "Dcrank_angle=1", "--out", str(out)]) == 0
    header, data = read_csv(out)
    row = dict(zip(header, data[0]))
    assert row["alpha"] + row["beta"] - np.pi == pytest.approx(0.5, abs=1e-12)
    assert row["der(alpha)"] + row["der(beta)"] == pytest.approx(1.0, abs=1e-12)
    x = 0.15 * np.cos(0.5) + np.sqrt(0.25 - (0.15 * np.sin(0.5)) ** 2)
    assert row["x"] == pytest.approx(x, abs=1e-12)
    ref = mbsfmu.simulate("models/slider_crank.py", t_end=0.2,
                          initial={"crank_angle": 0.5, "der(crank_angle)": 1})
    np.testing.assert_array_equal(data[:, 1:4], ref.y.T)


def test_grid_includes_t_end_when_not_a_multiple(tmp_path):
    out = tmp_path / "c.csv"
    assert main(["simulate", "models/cart_pendulum.py", "--t-end", "0.105", "--out", str(out)]) == 0
    _, data = read_csv(out)
    assert len(data) == 12 and data[-1, 0] == 0.105 and abs(data[-2, 0] - 0.1) < 1e-15


@pytest.mark.slow
def test_console_script_runs_as_module(tmp_path):
    out = tmp_path / "top.csv"
    png = tmp_path / "top.png"
    r = subprocess.run([sys.executable, "-m", "mbsfmu", "simulate", "models/spinning_top.py",
                        "--t-end", "0.5", "--out", str(out), "--plot", str(png)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert png.stat().st_size > 1000
    header, data = read_csv(out)
    assert header[1:4] == ["alpha", "beta", "gamma"] and len(data) == 51


def test_simulate_loop_model_writes_constraint_residual(tmp_path, capsys):
    out = tmp_path / "sc.csv"
    assert main(["simulate", "models/slider_crank.py", "--t-end", "0.5", "--dt", "0.1",
                 "--formulation", "projection", "--out", str(out)]) == 0
    assert "formulation projection, max constraint residual" in capsys.readouterr().out
    header, data = read_csv(out)
    assert header == ["time", "x", "alpha", "beta", "der(x)", "der(alpha)", "der(beta)",
                      "constraint_residual"]
    assert len(data) == 6 and np.all(data[:, -1] < 1e-12)
    assert main(["info", "models/slider_crank.py"]) == 0
    assert "constraints (2): pivot.x, pivot.y" in capsys.readouterr().out
    assert main(["simulate", "models/slider_crank.py", "--t-end", "0.5", "--formulation",
                 "nope", "--out", str(out)]) == 2
    assert "unknown formulation 'nope'" in capsys.readouterr().err


@pytest.mark.slow
def test_simulate_with_c_backend(tmp_path, monkeypatch):
    monkeypatch.setenv("MBSFMU_CACHE", str(tmp_path / "cache"))
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    base = ["simulate", "models/double_pendulum.py", "--t-end", "0.5", "--rtol", "1e-10",
            "--method", "rkstab"]
    assert main(base + ["--out", str(a)]) == 0
    assert main(base + ["--backend", "c", "--out", str(b)]) == 0  # the C engine (same RKSTAB)
    # the engine steps past output points with dense output, the reference stops at them: the
    # two runs agree to the accuracy asked for (rtol 1e-10 over 0.5 s), not bitwise
    np.testing.assert_allclose(read_csv(b)[1], read_csv(a)[1], rtol=0, atol=3e-9)


@pytest.mark.slow
def test_build_native_and_pythonfmu(tmp_path, capsys):
    fmpy = pytest.importorskip("fmpy")
    from fmpy.validation import validate_fmu

    out = tmp_path / "sc.fmu"
    assert main(["build", "models/slider_crank.py", "-o", str(out), "--formulation", "baumgarte"]) == 0
    assert out.exists() and validate_fmu(str(out)) == []
    assert "native" in capsys.readouterr().out
    md = fmpy.read_model_description(str(out))
    assert md.coSimulation.modelIdentifier == "slider_crank"
    assert main(["build", "models/cart_pendulum.py", "-o", str(tmp_path), "--kind", "pythonfmu"]) == 0
    assert validate_fmu(str(tmp_path / "cart_pendulum.fmu")) == []


def test_build_errors_exit_2(tmp_path, capsys):
    assert main(["build", "models/slider_crank.py", "-o", str(tmp_path), "--formulation", "minimal"]) == 2
    assert "'minimal' needs a system without constraints" in capsys.readouterr().err
    assert main(["build", "models/slider_crank.py", "-o", str(tmp_path), "--formulation", "nope"]) == 2
    assert "unknown formulation 'nope'" in capsys.readouterr().err
    assert main(["build", "models/none.py", "-o", str(tmp_path)]) == 2
    assert not list(tmp_path.iterdir())  # nothing half-written
