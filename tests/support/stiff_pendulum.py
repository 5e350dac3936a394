"""A model file's text for the long-run tests (tests/simulation/test_long_runs.py, the CLI's
stop catalogue): an elastic pendulum so stiff (k = 1e12 N/m, d = 2e6 N s/m on 1 kg: a double
eigenvalue at -1e6 1/s) that an explicit method crawls, about a second per 2 s simulated."""

STIFF_MODEL = '''\
"""A pendulum whose rod is a very stiff, critically damped spring (k = 1e12 N/m, d = 2e6 N s/m on
1 kg: a double eigenvalue at -1e6 1/s): stiff, and the fast mode decays."""
from mbsfmu import System, rot_z


def model():
    s = System("elastic_pendulum")
    k, d, m, L, g = s.constants(k=1e12, d=2e6, m=1.0, L=1.0, g=9.81)
    phi, r = s.coordinates("phi", "r")
    s.gravity([0, -g, 0])
    s.frame("arm", rot=rot_z(phi))
    s.body("bob", ref="arm", rel_pos=[0, -(L + r), 0], mass=m, inertia=[0, 0, 0])
    s.generalized_force("spring", "r", -k * r - d * s.coordinates_["r"].velocity)
    s.initial(phi=0.5)
    return s
'''
