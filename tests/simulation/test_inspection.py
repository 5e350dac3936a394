"""What a user inspects lists everything it offers (issue 24 item 6): ``Result.columns`` the user
outputs a Result reads, ``mbsfmu info`` the rate symbols, the outputs and every signal."""

import csv

import numpy as np
import pytest

import mbsfmu
from mbsfmu.cli import main


@pytest.fixture(scope="module")
def cart():
    return mbsfmu.simulate(mbsfmu.load_model("models/cart_pendulum.py"), t_end=0.5, dt=0.05)


def test_result_columns_list_the_user_outputs_and_each_reads(cart):
    assert cart.columns == ["time", "x", "theta", "der(x)", "der(theta)",
                            "rod_centre.x", "rod_centre.y", "rod_centre.z", "drive_power"]
    for name in cart.columns:
        assert cart[name].shape == cart.t.shape, name
    # the rod's centre from the coordinates (rot_y(theta), cg at l = 0.5 along the rod's z):
    # an independent check that the output read under its listed name is that output
    x, theta = cart["x"], cart["theta"]
    np.testing.assert_allclose(cart["rod_centre.x"], x + 0.5 * np.sin(theta), rtol=0, atol=1e-12)
    np.testing.assert_allclose(cart["rod_centre.z"], 0.5 * np.cos(theta), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(cart["drive_power"], np.zeros_like(cart.t))  # F = 0


def test_unknown_signal_names_every_column(cart):
    with pytest.raises(KeyError) as err:
        cart["rod_centre.w"]
    assert "rod_centre.w" in str(err.value) and ", ".join(cart.columns) in str(err.value)


def test_csv_keeps_its_columns_and_reads_back(cart, tmp_path):
    path = tmp_path / "cart.csv"
    cart.to_csv(path)
    with open(path) as fh:
        header = next(csv.reader(fh))
    assert header == cart.csv_columns == ["time", "x", "theta", "der(x)", "der(theta)"]
    back = mbsfmu.Result.read_csv(path, cart.system)
    assert back.columns == cart.columns
    np.testing.assert_array_equal(back["rod_centre.x"], cart["rod_centre.x"])


def test_reactions_are_not_columns_but_are_listed_by_info(capsys):
    system = mbsfmu.load_model("models/slider_crank.py")
    res = mbsfmu.simulate(system, t_end=0.1, dt=0.05)
    assert "reaction.pivot.x" not in res.columns and res.columns[-3:] == ["pin.x", "pin.y", "pin.z"]
    assert set(res.multipliers()) == {"pivot.x", "pivot.y"}
    assert main(["info", "models/slider_crank.py"]) == 0
    out = capsys.readouterr().out
    assert "reaction.pivot.x (Lagrange multiplier of constraint pivot.x; res.multipliers())" in out
    assert f"result signals ({len(res.columns)}): {', '.join(res.columns)}\n" in out


def test_info_lists_rates_outputs_and_signals(capsys):
    assert main(["info", "models/cart_pendulum.py"]) == 0
    out = capsys.readouterr().out
    assert "rates (2): Dx = der(x), Dtheta = der(theta)\n" in out
    assert "outputs (4): rod_centre.x (position of frame rod_cg (x, ISYS)), " in out
    assert "drive_power (power of the drive force F [W])\n" in out
    assert ("result signals (9): time, x, theta, der(x), der(theta), rod_centre.x, rod_centre.y, "
            "rod_centre.z, drive_power\n") in out


def test_info_of_a_lagrangian_model_lists_its_rates(capsys):
    assert main(["info", "models/rolling_disc.py"]) == 0
    out = capsys.readouterr().out
    assert ("rates (5): Dx = der(x), Dy = der(y), Dphi = der(phi), Dtheta = der(theta), "
            "Dpsi = der(psi)\n") in out
    assert "outputs (0): \n" in out and out.count("constraint_residual") == 1
