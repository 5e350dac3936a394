"""Sweeps over a named initial condition (issue 25): a design column or a fixed ``initial=`` value
named like the slider-crank's ``crank_angle`` (or its rate ``der(crank_angle)``) sets it in every
run, for a model file and for an FMU (where it is a parameter); the rows file's definition holds
it, so a resumed sweep with another fixed value is refused, naming it."""

import json
import math

import pytest
from fmu_support import MODELS

import mbsfmu
from mbsfmu.core.errors import ParameterError

SLIDER = MODELS / "slider_crank.py"
R, L = 0.15, 0.5  # crank and rod of models/slider_crank.py
ANGLES = [0.3, 1.0, 2.0]


def slider_x(theta):
    """The slider's position for the crank at the absolute angle theta (closed form)."""
    return R * math.cos(theta) + math.sqrt(L**2 - (R * math.sin(theta)) ** 2)


def crank_rate(r):
    return r["der(alpha)"][0] + r["der(beta)"][0]


METRICS = {"x0": lambda r: r["x"][0], "rate0": crank_rate}


def test_a_design_column_sets_the_condition_in_every_run(tmp_path):
    df = mbsfmu.sweep(SLIDER, {"crank_angle": ANGLES}, t_end=0.1, dt=0.05, metrics=METRICS,
                      initial={"der(crank_angle)": 1.5}, scheduler="synchronous", out=tmp_path / "rows.csv")
    assert (df["status"] == "ok").all(), df["message"].tolist()
    assert df["x0"].tolist() == pytest.approx([slider_x(a) for a in ANGLES], abs=1e-12)
    assert df["rate0"].tolist() == pytest.approx([1.5] * 3, abs=1e-12)
    for _, row in df.iterrows():  # each row is the run of simulate with the same values
        r = mbsfmu.simulate(SLIDER, t_end=0.1, dt=0.05, initial={"crank_angle": row["crank_angle"],
                                                                 "der(crank_angle)": 1.5})
        assert row["x0"] == r["x"][0]
    entries = json.loads((tmp_path / "rows.csv.definition.json").read_text())["definition"]
    assert entries["initial"] == {"der(crank_angle)": 1.5} and entries["parameters"] == ["crank_angle"]
    # another fixed rate is another definition: refused by name before any run
    with pytest.raises(ParameterError, match=r'initial: \{"der\(crank_angle\)": 1\.5\} in rows\.csv, '
                                             r'\{"der\(crank_angle\)": 2\.0\} now'):
        mbsfmu.sweep(SLIDER, {"crank_angle": ANGLES}, t_end=0.1, dt=0.05, metrics=METRICS,
                     initial={"der(crank_angle)": 2.0}, scheduler="synchronous", out=tmp_path / "rows.csv")


def test_an_fmu_sweep_sets_the_parameter(built_fmu):
    fmu = built_fmu(SLIDER)
    df = mbsfmu.sweep(fmu, {"crank_angle": ANGLES}, t_end=0.02, dt=0.01, metrics={"x0": lambda r: r["x"][0]},
                      scheduler="synchronous")
    assert (df["status"] == "ok").all(), df["message"].tolist()
    assert df["x0"].tolist() == pytest.approx([slider_x(a) for a in ANGLES], abs=1e-12)


def test_the_rate_and_its_other_name_are_one_value():
    with pytest.raises(ParameterError, match=r"'Dcrank_angle' given both in initial= and as a design column"):
        mbsfmu.sweep(SLIDER, {"der(crank_angle)": [1.0]}, t_end=0.1, initial={"Dcrank_angle": 2.0},
                     scheduler="synchronous")
