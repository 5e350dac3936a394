"""The spin-up benchmark's beam (Kane, Ryan and Banerjee 1987; models/rotating_beam.py) as n
rigid segments joined by rotational springs, written with the rigid-body API apart from the
modal model: geometrically exact, so it carries the centrifugal stiffening itself
(tests/zoo/test_rotating_beam.py, the zoo's case in zoo_cases.py, bench/elastic.py).
"""

import importlib.util
import pathlib

from mbsfmu import System, rot_z

MODELS = pathlib.Path(__file__).resolve().parents[2] / "models"


def rotating_beam_module():
    """models/rotating_beam.py as a module: its beam data, spin law and model()."""
    spec = importlib.util.spec_from_file_location("rotating_beam_module", MODELS / "rotating_beam.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def segment_model(n: int) -> System:
    """n uniform rigid segments of length L/n on the spinning hub, joint i turning by phi_i about
    z with a spring EI/l (2 EI/l at the clamp, whose segment bends over half a length)."""
    rb = rotating_beam_module()
    s = System(f"kane_segments_{n}")
    theta = s.time_parameter("theta", rb.spin_angle(s.t))
    s.frame("hub", rel_rot=rot_z(theta))
    ell = rb.LENGTH / n
    m = rb.RHO * rb.AREA * ell
    J = m * ell**2 / 12
    EI = rb.E * rb.INERTIA
    ref = "hub"
    for i in range(1, n + 1):
        phi = s.coordinate(f"phi{i}")
        s.body(f"seg{i}", ref=ref, rel_rot=rot_z(phi), cg_pos=[ell / 2, 0, 0], mass=m, inertia=[0, J, J])
        s.frame(f"end{i}", ref=f"seg{i}", pos=[ell, 0, 0])
        s.generalized_force(f"spring{i}", f"phi{i}", -(2 if i == 1 else 1) * EI / ell * phi)
        ref = f"end{i}"
    return s
