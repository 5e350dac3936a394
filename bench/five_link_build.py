"""Build time of a 3D natural-coordinate model: seed 003's five-link suspension.

Two forms of the same mechanism (both with the carrier as a three-point rigid element and the
rods on carrier points, ``body_point``):

* ``model file``: models/five_link_natural.py as it stands (rods as ``rod(..., inertia=...)``,
  the tire with ``rigid=False`` and the seed's two constraints C4, C5);
* ``as a user writes it``: the rods' T and weight written by hand (``kinetic_energy``,
  ``potential_energy``, ``distance``) and the tire as a three-point element with its three
  rigidity constraints, added after the rods, so that every element constraint meets the
  rods' degree-4 constraints in the duplicate check (the form issue 23 item 8 timed: 36 of 40 s
  in that check under load).  Its ``tire_e1e1`` repeats the carrier's rigidity: it is reported
  (RedundantConstraintWarning) and kept.

For each: the wall time of ``model()`` (the declarations, with the element-constraint check),
of ``derive()`` (Lagrange's equations), the share of the element-constraint check in
``model()`` (cProfile, a separate run), and with ``--engine`` the build of the C engine
(code generation and compilation, cached afterwards: run with a fresh ``MBSFMU_CACHE`` to time
it).  Each form runs in a fresh process, so sympy's cache starts empty.

Run: ``.venv/bin/python bench/five_link_build.py [--engine]``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pathlib
import pstats
import subprocess
import sys
import time
import warnings

import numpy as np
import sympy as sp

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import mbsfmu  # noqa: E402
from mbsfmu import LagrangianSystem, derive  # noqa: E402
from mbsfmu.engine.extension import engine_module  # noqa: E402
from mbsfmu.natural import dot  # noqa: E402
from models.five_link_natural import B0, BS0, BT0, L_XY, P0, ROD_INERTIA, ROD_MASS, F  # noqa: E402


def user_model():
    """The five-link suspension as a user writes it (see the module docstring)."""
    s = LagrangianSystem("five_link_user", dim=3)
    g, = s.constants(g=9.81)
    s.gravity([0, 0, -g])
    BT = s.point("B_T", initial=BT0)
    G = s.point("G", initial=BT0 + (L_XY, 0, 0))
    H = s.point("H", initial=BT0 + (0, L_XY, 0))
    J_wc = [[0.3, 0.01, 0.015], [0.01, 0.2, 0.05], [0.015, 0.05, 0.2]]
    s.rigid_body("carrier", 15.0, points=[(BT, [0, 0, 0]), (G, [L_XY, 0, 0]), (H, [0, L_XY, 0])],
                 inertia=J_wc)

    def on(p):
        return s.body_point("carrier", list(np.asarray(p) - BT0))

    for i in range(5):
        P, length = on(P0[i]), float(np.linalg.norm(P0[i] - F[i]))
        s.distance(f"rod{i + 1}", P, list(F[i]), length)
        Pd = s.velocity(P)
        s.kinetic_energy(ROD_INERTIA[i] * dot(Pd, Pd) / (2 * length**2), f"rod{i + 1}")
        s.potential_energy(ROD_MASS[i] * g * (P[2] + F[i][2]) / 2, f"rod{i + 1}_weight")
    B, BS = on(B0), on(BS0)
    axis = (B0 - BS0) / np.linalg.norm(B0 - BS0)
    up = np.array([0.0, -axis[2], axis[1]])
    W = s.point("W", initial=B0 + 0.3 * up, velocity=30.0 * np.cross(axis, up))
    a = float(np.linalg.norm(B0 - BS0))
    s.rigid_body("tire", 12.0, points=[(B, [0, 0, 0]), (2 * B - BS, [a, 0, 0]), (W, [0, 0.3, 0])],
                 inertia=[1.46, 0.74, 0.74])
    s.spring_damper("primary", (on(P0[4]) + sp.Matrix(F[4])) / 2, list((P0[4] + F[4]) / 2 + (0, 0, 0.88)),
                    stiffness=1.4e5, damping=1400.0, rest_length=0.88)
    return s


def file_model():
    return mbsfmu.load_model(ROOT / "models" / "five_link_natural.py")


def measure(form: str, engine: bool) -> dict:
    """One form's times (run in this process)."""
    make = user_model if form == "user" else file_model
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        s = make()
        t1 = time.perf_counter()
        eqs = derive(s)
        t2 = time.perf_counter()
        out = {"model": t1 - t0, "equations": t2 - t1, "constraints": s.constraint_names,
               "warnings": [str(w.message) for w in caught]}
        if engine:
            engine_module(s)
            out["engine"] = time.perf_counter() - t2
        del eqs
    prof = cProfile.Profile()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prof.enable()
        make()
        prof.disable()
    st = pstats.Stats(prof)
    check = sum(v[3] for k, v in st.stats.items() if k[2] == "_rigidity")
    out["check share"] = f"{check:.2f} of {st.total_tt:.2f} s under the profiler"
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", action="store_true", help="also time the C engine's build")
    ap.add_argument("--form", choices=("file", "user"), help=argparse.SUPPRESS)  # the child process
    args = ap.parse_args()
    if args.form:
        print(json.dumps(measure(args.form, args.engine)))
        return
    for form, label in (("file", "model file"), ("user", "as a user writes it")):
        cmd = [sys.executable, __file__, "--form", form] + (["--engine"] if args.engine else [])
        r = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True,
                                      cwd=ROOT).stdout.splitlines()[-1])
        line = f"{label:22s} model() {r['model']:6.2f} s   derive() {r['equations']:6.2f} s"
        if "engine" in r:
            line += f"   engine {r['engine']:6.2f} s"
        print(line + f"   element-constraint check {r['check share']}")
        print(f"{'':22s} {len(r['constraints'])} constraints: {', '.join(r['constraints'])}")
        for w in r["warnings"]:
            print(f"{'':22s} warning: {w}")


if __name__ == "__main__":
    main()
