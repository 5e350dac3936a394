"""The sweep and optimize commands take a diagram: ``FILE.py:FUNCTION`` (a function of the
parameters that returns a Diagram, the file imported by path) or an SSP file; the same numbers
as the API."""

import json
import pathlib

import pandas as pd
import pytest

import mbsfmu
from mbsfmu.cli import main

SUPPORT = pathlib.Path(__file__).resolve().parents[1] / "support"


@pytest.fixture
def loops(tmp_path):
    """A file of factories outside any package (as a user's script)."""
    path = tmp_path / "my_loops.py"
    path.write_text(f"import sys\nsys.path.insert(0, {str(SUPPORT)!r})\n"
                    "from diagram_loops import effort_loop, integrator_loop\n\n\n"
                    "def loop(k):\n    return integrator_loop(k)\n\n\n"
                    "def tuned(k, rho=0.25):\n    return effort_loop(k, rho)\n")
    return path


def test_sweep_of_a_factory_file_from_its_linearization(loops, tmp_path, capsys):
    out = tmp_path / "rows.csv"
    assert main(["sweep", f"{loops}:loop", "--param", "k=1,2,3", "--metric", "sigma=largest_real_part",
                 "--linearize", "domain=discrete", "--out", str(out), "--scheduler", "synchronous"]) == 0
    assert "3 runs (0 failed)" in capsys.readouterr().out
    rows = pd.read_csv(out)
    from diagram_loops import integrator_loop

    api = mbsfmu.sweep(integrator_loop, {"k": [1.0, 2.0, 3.0]}, metrics={"sigma": "largest_real_part"},
                       linearize={"domain": "discrete"}, scheduler="synchronous")
    assert rows["sigma"].tolist() == api["sigma"].tolist()
    definition = json.loads(out.with_name("rows.csv.definition.json").read_text())["definition"]
    assert definition["target"] == "factory my_loops.py:loop"


def test_optimize_of_a_factory_file(loops, capsys):
    assert main(["optimize", f"{loops}:tuned", "--param", "k=0.5:5", "--minimize", "iae(cost.y, reference=0)",
                 "--t-end", "40", "--set", "rho=0.25", "--minimizer", "Powell", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["algorithm"] == "Powell"
    from diagram_loops import effort_loop

    api = mbsfmu.optimize(effort_loop, minimize="iae(cost.y, reference=0)", params={"k": (0.5, 5.0)},
                          t_end=40.0, minimizer="Powell")
    assert got["optimum"]["k"] == pytest.approx(api.values["k"], abs=1e-6)


def test_bad_factory_names_are_refused(loops, tmp_path, capsys):
    assert main(["sweep", f"{loops}:lop", "--param", "k=1", "--t-end", "1",
                 "--out", str(tmp_path / "r.csv")]) == 2
    assert "has no function 'lop'; did you mean loop?" in capsys.readouterr().err
    assert main(["sweep", f"{tmp_path}/none.py:loop", "--param", "k=1", "--t-end", "1",
                 "--out", str(tmp_path / "r.csv")]) == 2
    assert "none.py' does not exist" in capsys.readouterr().err
    assert not (tmp_path / "r.csv").exists()
