"""The gradient and optimize commands: the same numbers as the API (a thin shell), their
tables, --json, --history resumed by the same command, --plot."""

import json
import pathlib

import pytest

import mbsfmu
from mbsfmu.cli import main
from mbsfmu.sensitivity import gradient

ROOT = pathlib.Path(__file__).resolve().parents[2]
SLIDER_CRANK = str(ROOT / "models" / "slider_crank.py")


def test_gradient_command_is_the_api(capsys):
    argv = [
        "gradient",
        SLIDER_CRANK,
        "--wrt",
        "r",
        "--wrt",
        "crank_angle",
        "--metric",
        "xT=final(x)",
        "--metric",
        "P=integral(pin.y)",
        "--t-end",
        "0.5",
        "--set",
        "l=0.55",
    ]
    assert main([*argv, "--json", "--mode", "adjoint"]) == 0
    out = json.loads(capsys.readouterr().out)
    ref = gradient(
        SLIDER_CRANK,
        {"xT": "final(x)", "P": "integral(pin.y)"},
        ["r", "crank_angle"],
        0.5,
        mode="adjoint",
        params={"l": 0.55},
    )
    assert out == json.loads(json.dumps(ref.to_dict()))
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text.startswith("gradient by the forward method, t_end = 0.5") and "crank_angle" in text


def test_optimize_command_resumes_from_its_history(tmp_path, capsys):
    hist, plot = tmp_path / "h.jsonl", tmp_path / "o.png"
    argv = [
        "optimize",
        SLIDER_CRANK,
        "--param",
        "crank_angle=0:3",
        "--minimize",
        "final(x)",
        "--t-end",
        "0.3",
        "--constraint",
        "P=final(pin.y)>=0",
        "--history",
        str(hist),
        "--json",
    ]
    assert main([*argv, "--max-evaluations", "2"]) == 0
    part = json.loads(capsys.readouterr().out)
    assert part["evaluations"] == part["runs"] == 2 and not part["success"]
    assert main([*argv, "--plot", str(plot)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["taken"] == 2 and out["success"] and out["value"] == pytest.approx(0.35, abs=1e-9)
    assert (
        out["constraints"]["P"]["satisfied"]
        and out["constraints"]["P"]["active"]
        and plot.stat().st_size > 1000
    )
    api = mbsfmu.optimize(
        SLIDER_CRANK,
        minimize="final(x)",
        params={"crank_angle": (0, 3)},
        t_end=0.3,
        constraints={"P": "final(pin.y) >= 0"},
    )
    assert out["optimum"] == api.values and out["evaluations"] == api.evaluations
    assert main(argv[:-1]) == 0
    text = capsys.readouterr().out
    assert f"({api.evaluations} taken from {hist})" in text and "constraint P: final(pin.y) = " in text
    assert main([*(a if a != "0.3" else "0.4" for a in argv)]) == 2
    assert "t_end: 0.3 in h.jsonl, 0.4 now" in capsys.readouterr().err
