"""Conservative zoo models keep their energy; the top keeps its two other first integrals.

Requirement: relative energy drift <= 1e-8 over 10 s at rtol 1e-10.  For the symmetric top on a
fixed point the vertical angular momentum and the spin (body-axis angular velocity) are
conserved too (Euler's equations for A = B); they are computed here from the frame kinematics,
independently of the energy expression.
"""

import numpy as np
import pytest

import mbsfmu
from models import cart_pendulum, double_pendulum, spinning_top


@pytest.mark.parametrize("mod", [double_pendulum, cart_pendulum, spinning_top],
                         ids=lambda m: m.__name__.split(".")[-1])
def test_energy_drift_below_1e_8(mod):
    res = mbsfmu.simulate(mod.model(), t_end=10.0, rtol=1e-10, atol=1e-12)
    e = res.energy()
    assert np.ptp(e["kinetic"]) > 1e-3 * np.max(np.abs(e["total"]))  # it really moves
    assert res.relative_energy_drift() <= 1e-8


def test_spinning_top_first_integrals():
    s = spinning_top.model()
    res = mbsfmu.simulate(s, t_end=5.0, dt=0.01, rtol=1e-10, atol=1e-12)
    fr = res.frame("top_cg")
    S, w = fr["rotation"], fr["angular_velocity"]
    A, C = 2e-3, 3.5e-3
    m, h = 1.0, 0.1
    # body components of w; inertia about the fixed point (Steiner) is diag(A + m h^2, same, C)
    wb = np.einsum("nji,nj->ni", S, w)
    spin = wb[:, 2]
    Ifix = np.diag([A + m * h * h, A + m * h * h, C])
    L_inertial = np.einsum("nij,jk,nk->ni", S, Ifix, wb)
    assert np.max(np.abs(spin - spin[0])) <= 1e-8 * abs(spin[0])
    Lz = L_inertial[:, 2]
    assert np.max(np.abs(Lz - Lz[0])) <= 1e-8 * np.max(np.abs(L_inertial))
    # the top precesses: the axis direction's azimuth changes noticeably
    axis = S[:, :, 2]
    az = np.unwrap(np.arctan2(axis[:, 1], axis[:, 0]))
    assert abs(az[-1] - az[0]) > 0.1
