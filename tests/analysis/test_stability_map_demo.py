"""ci/stability_map_demo.py (issue 28 item 3): the stability of the LQR-controlled cart-pendulum
FMU mapped over the rod's length and mass from the linearized closed loop, and three points of
the map confirmed by runs of the nonlinear loop."""

import importlib.util
import pathlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_demo():
    spec = importlib.util.spec_from_file_location("stability_map_demo", ROOT / "ci" / "stability_map_demo.py")
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    return demo


def test_the_map_and_its_three_confirmations(tmp_path):
    demo = load_demo()
    assert demo.run(ROOT, tmp_path) == 0   # every confirmed point agrees with its prediction
    rows = np.genfromtxt(tmp_path / "stability_map.csv", delimiter=",", names=True)
    assert len(rows) == len(demo.LENGTHS) * len(demo.MASSES)
    nominal = rows[(rows["l"] == 0.5) & (rows["m"] == 0.1)][0]
    assert nominal["stable"] == 1 and nominal["largest_real_part"] < -1.0
    # the gains designed for l = 0.5 do not hold a rod of twice that length, whatever its mass
    assert not np.any(rows[rows["l"] >= 1.0]["stable"])
    assert (tmp_path / "stability_map.png").stat().st_size > 10_000
