"""Tree models on the C engine against what a user would pick instead, at equal accuracy (issue 11).

**The systems**, with the same parameters, gravity and initial state in every program:

* Double pendulum, ``models/double_pendulum.py`` (seed 002 sec. 4.1): two links hinged about x,
  moving in the y-z plane; m = 2, L1 = L2 = 1, inertia diag(0.01, 1, 1) about the cg (only
  Ixx = 0.01 enters the planar motion), cg at [0, 0, -L] in the link's frame, the second link
  hinged at the first one's cg; gravity 9.81 along -z; from alpha = 0.4, phi = 1.5 at rest; 40 s.
* Planar 10-link chain of ``bench/chain_rhs.py``: relative joint angles about z, uniform rods
  m = 1, L = 0.5 (cg at L/2, inertia diag(0, J, J), J = m L^2 / 12); gravity 9.81 along -y; from
  hanging straight down turned by 1 rad as a whole (q1 = 1 - pi/2, q2..q10 = 0) at rest; 10 s.
  Released from the horizontal (q = 0) the chain is chaotic over 10 s: runs at rtol 1e-12, 1e-13
  and 1e-14 differ by O(100) rad/s, so no reference would be accurate enough to compare with.

**The programs:**

(a) engine: ``mbsfmu.simulate(system, t_end, 0.01, rtol=1e-8, backend='c')``: for a tree the
    engine's Dormand-Prince 5(4) on the generated articulated-body algorithm, atol = rtol / 100,
    one C call over the whole output grid;
(b) scipy ``solve_ivp(method='DOP853', t_eval=grid)`` on mbsfmu's ``CompiledRHS`` (the same
    generated ABA, called from Python);
(c) Pinocchio: a ``pinocchio.Model`` built with ``addJoint(JointModelRX / JointModelRZ)`` and
    ``appendBodyToJoint`` (same masses, cg offsets and inertias), ``pinocchio.aba`` in a Python
    right-hand side, scipy DOP853;
(d) MuJoCo: MJCF with hinge joints and an explicit ``<inertial>`` per body (no geoms, so nothing
    adds mass; ``inertiafromgeom="false"``), ``<option integrator="RK4">``, contacts and
    constraints disabled, no damping, armature or friction (MuJoCo refuses a zero principal
    moment, so the rods' moment about their own axis is 1e-6 J there instead of 0: it does not
    enter the motion about the hinge axis); ``mj_step`` in a Python loop,
    qpos/qvel recorded at every grid point; (d') the same with ``mj_step(m, d, nstep=k)`` once
    per grid interval (the inner stepping loop in C).

The scipy contenders (b), (c) use atol = rtol / 100 like the engine.

**Check.** At one random state (angles and rates uniform in [-1, 1]) the accelerations of
Pinocchio (``aba``) and MuJoCo (``mj_forward``, ``qacc``) must agree with CompiledRHS to 1e-9
relative (max |a - b| / max |b|); otherwise the script exits with status 1 before timing.

**Reference and equal accuracy.** The reference is scipy DOP853 at rtol 1e-13, atol 1e-15 on
CompiledRHS; the engine at rtol 1e-13 (atol 1e-15) must agree with it to 1 % of the target
error (exit 1 otherwise).  Error = max over the output grid (dt = 0.01) and over all states
(angles in rad, rates in rad/s) of |x - x_ref|.  Target = the engine's error at rtol 1e-8.  For
(b) and (c) rtol goes down from 1e-5 in steps of 10^(1/2) until the error is <= the target, then
is bisected (in log) three times between the last failing and the first passing value; for (d)
the steps per output interval k = 1, 2, 4, ... (step h = dt / k, so the grid is hit exactly),
then integer bisection.  The loosest setting found that meets the target is timed.

**What is timed.** CPU seconds (``time.process_time``) of one run at the setting found, best of
``--repeat`` rounds (each round runs every program once, so that a burst of load on a shared
machine spoils one round of all programs rather than every repeat of one): (a) the whole
``simulate()`` call as a user makes it (the engine module compiled and cached by a first, untimed
call; the engine's own time in C, ``stats['engine_seconds']``, is printed beside it); (b), (c)
the ``solve_ivp`` call; (d) setting the initial state, the stepping loop and the recording.
Building and compiling the models is not timed.  The ratio is contender CPU / engine CPU (the
issue's target: >= 10 for every contender).

**Breakdown** (``--breakdown``, for a model whose target is not met): wall time of the whole
``simulate()`` call, of the parts before the C call that cost (``eqs.numeric()``, ``Engine(...)``),
of the engine's C run on the output grid and on [0, t_end] alone (NFCN, ns per NFCN), and of one
``CompiledRHS`` call from Python.

    .venv/bin/python bench/tree.py [--quick] [--repeat 5] [--seed 1] [--breakdown]

``--quick``: 10 s of the double pendulum, 2 s of the chain, one timing repeat.  Needs the ``bench``
extra (``pip install -e .[bench]``: pin, mujoco) and a C compiler.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np

from mbsfmu import derive

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

DT = 0.01
RTOL_ENGINE = 1e-8
RTOL_REF, ATOL_REF = 1e-13, 1e-15
ATOL_FACTOR = 0.01        # atol = rtol / 100, the engine's default for trees
CHECK_TOL = 1e-9          # accelerations of Pinocchio and MuJoCo against CompiledRHS
REF_AGREEMENT = 0.01      # engine at 1e-13 against the reference, as a fraction of the target
TARGET = 10.0
MUJOCO_MIN_INERTIA = 1e-6  # a zero principal moment becomes this fraction of the largest one


@dataclass
class Link:
    """One link of a serial chain of revolute joints, all about the same axis of their frames."""

    joint: tuple          # joint position in the parent link's frame
    cg: tuple             # centre of gravity in the link's frame
    mass: float
    inertia: tuple        # principal moments about the cg, along the link's frame axes


@dataclass
class Case:
    name: str
    system: object
    t_end: float
    initial: dict          # coordinate name -> initial angle (all rates zero)
    axis: str              # 'x' or 'z'
    gravity: tuple
    links: list


def double_pendulum() -> Case:
    from models.double_pendulum import model

    s = model()
    c = {k: v.value for k, v in s.constants_.items()}
    m, ix = c["m"], c["Ix"]
    links = [Link((0, 0, 0), (0, 0, -c["L1"]), m, (ix, 1.0, 1.0)),
             Link((0, 0, -c["L1"]), (0, 0, -c["L2"]), m, (ix, 1.0, 1.0))]
    initial = {k: v.initial for k, v in s.coordinates_.items()}
    return Case("double pendulum (models/double_pendulum.py)", s, 40.0, initial, "x",
                (0, 0, -c["g"]), links)


def chain(n: int = 10) -> Case:
    from chain_rhs import PARAMS, mbsfmu_chain

    s = mbsfmu_chain(n)
    m, L, g = PARAMS["m"], PARAMS["L"], PARAMS["g"]
    J = m * L**2 / 12
    links = [Link((0, 0, 0) if i == 0 else (L, 0, 0), (L / 2, 0, 0), m, (0.0, J, J))
             for i in range(n)]
    initial = {f"q{i}": 0.0 for i in range(1, n + 1)}
    initial["q1"] = 1.0 - math.pi / 2
    return Case(f"planar {n}-link chain (bench/chain_rhs.py)", s, 10.0, initial, "z",
                (0, -g, 0), links)


# ------------------------------------------------------------------------------- the programs
def pinocchio_model(case: Case):
    import pinocchio as pin

    model = pin.Model()
    model.gravity = pin.Motion(np.array([*case.gravity, 0.0, 0.0, 0.0]))
    joint_type = {"x": pin.JointModelRX, "z": pin.JointModelRZ}[case.axis]
    parent = 0
    for i, link in enumerate(case.links):
        placement = pin.SE3(np.eye(3), np.array(link.joint, dtype=float))
        parent = model.addJoint(parent, joint_type(), placement, f"joint{i + 1}")
        inertia = pin.Inertia(link.mass, np.array(link.cg, dtype=float), np.diag(link.inertia))
        model.appendBodyToJoint(parent, inertia, pin.SE3.Identity())
    return model


def pinocchio_rhs(case: Case):
    import pinocchio as pin

    model = pinocchio_model(case)
    data = model.createData()
    n = model.nv
    tau = np.zeros(n)
    aba = pin.aba

    def rhs(t, x):
        return np.concatenate((x[n:], aba(model, data, x[:n], x[n:], tau)))

    return rhs


def mjcf(case: Case, timestep: float) -> str:
    """The case as MJCF: nested bodies, one hinge each, explicit inertial, no geoms."""
    axis = {"x": "1 0 0", "z": "0 0 1"}[case.axis]
    fmt = " ".join
    body = ""
    for i, link in reversed(list(enumerate(case.links))):
        # MuJoCo refuses a zero principal moment (mjMINVAL); the rods' moment about their own
        # axis never enters the planar motion about the hinge axis
        inertia = [v if v > 0 else MUJOCO_MIN_INERTIA * max(link.inertia) for v in link.inertia]
        body = (f'<body name="B{i + 1}" pos="{fmt(map(repr, map(float, link.joint)))}">'
                f'<joint name="q{i + 1}" type="hinge" axis="{axis}" damping="0" armature="0" '
                f'frictionloss="0" limited="false"/>'
                f'<inertial pos="{fmt(map(repr, map(float, link.cg)))}" mass="{link.mass!r}" '
                f'diaginertia="{fmt(map(repr, map(float, inertia)))}"/>{body}</body>')
    return (f'<mujoco model="tree"><compiler angle="radian" inertiafromgeom="false"/>'
            f'<option integrator="RK4" timestep="{timestep!r}" '
            f'gravity="{fmt(map(repr, map(float, case.gravity)))}">'
            f'<flag contact="disable" constraint="disable"/></option>'
            f"<worldbody>{body}</worldbody></mujoco>")


def mujoco_model(case: Case, timestep: float):
    import mujoco

    m = mujoco.MjModel.from_xml_string(mjcf(case, timestep))
    n = len(case.links)
    assert m.nq == m.nv == n and m.ngeom == 0, (m.nq, m.nv, m.ngeom)
    assert np.allclose(m.body_mass[1:], [lk.mass for lk in case.links], rtol=0, atol=0)
    assert not m.dof_armature.any() and not m.dof_damping.any() and not m.dof_frictionloss.any()
    return m


def mujoco_run(case: Case, grid, q0, k: int, inner_c: bool = False):
    """MuJoCo RK4 at h = dt / k from q0 at rest: (states on the grid [2n x len(grid)], NFCN)."""
    import mujoco

    m = mujoco_model(case, DT / k)
    d = mujoco.MjData(m)
    return _mujoco_loop(m, d, grid, q0, k, inner_c), 4 * k * (len(grid) - 1)


def _mujoco_loop(m, d, grid, q0, k, inner_c):
    import mujoco

    n = m.nq
    step = mujoco.mj_step
    rec = np.empty((len(grid), 2 * n))
    mujoco.mj_resetData(m, d)
    d.qpos[:] = q0
    d.qvel[:] = 0.0
    rec[0, :n], rec[0, n:] = d.qpos, d.qvel
    qpos, qvel = d.qpos, d.qvel
    if inner_c:
        for i in range(1, len(grid)):
            step(m, d, k)
            rec[i, :n] = qpos
            rec[i, n:] = qvel
    else:
        for i in range(1, len(grid)):
            for _ in range(k):
                step(m, d)
            rec[i, :n] = qpos
            rec[i, n:] = qvel
    return rec.T


# ------------------------------------------------------------------------------- checks
def check_accelerations(case: Case, rhs_mb, seed: int) -> bool:
    import mujoco
    import pinocchio as pin

    n = len(case.links)
    x = np.random.default_rng(seed).uniform(-1, 1, 2 * n)
    ref = rhs_mb(0.0, x)[n:]
    pm = pinocchio_model(case)
    a_pin = pin.aba(pm, pm.createData(), x[:n], x[n:], np.zeros(n))
    m = mujoco_model(case, DT)
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = x[:n], x[n:]
    mujoco.mj_forward(m, d)
    ok = True
    for name, a in (("Pinocchio aba", a_pin), ("MuJoCo mj_forward qacc", d.qacc.copy())):
        diff = np.max(np.abs(a - ref)) / np.max(np.abs(ref))
        ok &= bool(diff <= CHECK_TOL)
        print(f"  check at a random state: {name:24} against CompiledRHS {diff:.1e}")
    return ok


def max_error(X, ref) -> float:
    return float(np.max(np.abs(np.asarray(X) - ref)))


# ------------------------------------------------------------------------------- searches
def loosest_rtol(run, target: float):
    """The loosest rtol (sweep down by 10^(1/2) from 1e-5, then 3 log-bisections) whose run has
    error <= target: (rtol, error, run output)."""
    fail, passed = None, None
    for e in np.arange(5.0, 13.01, 0.5):
        rtol = 10.0 ** -e
        err, out = run(rtol)
        if err <= target:
            passed = (rtol, err, out)
            break
        fail = rtol
    if passed is None:
        raise RuntimeError(f"no rtol down to 1e-13 reaches the target error {target:.1e}")
    if fail is not None:
        lo, hi = math.log10(passed[0]), math.log10(fail)  # lo: passes (tight), hi: fails (loose)
        for _ in range(3):
            mid = (lo + hi) / 2
            err, out = run(10.0**mid)
            if err <= target:
                lo, passed = mid, (10.0**mid, err, out)
            else:
                hi = mid
    return passed


def fewest_steps(run, target: float, k_max: int = 1 << 14):
    """The smallest number of RK4 steps per output interval k (doubling, then integer
    bisection) whose run has error <= target: (k, error, run output)."""
    k_fail, k = 0, 1
    while True:
        err, out = run(k)
        if err <= target:
            passed = (k, err, out)
            break
        k_fail, k = k, 2 * k
        if k > k_max:
            raise RuntimeError(f"MuJoCo RK4 does not reach {target:.1e} with {k_max} steps per dt")
    lo, hi = k_fail, passed[0]  # lo fails, hi passes
    while hi - lo > 1:
        mid = (lo + hi) // 2
        err, out = run(mid)
        if err <= target:
            hi, passed = mid, (mid, err, out)
        else:
            lo = mid
    return passed


def cpu_seconds(fn) -> float:
    """CPU seconds of one call of fn()."""
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


# ------------------------------------------------------------------------------- one case
def run_case(case: Case, t_end: float, repeat: int, seed: int) -> tuple[bool, bool]:
    """Print the table of one case; returns (checks passed, target met)."""
    import mujoco
    from scipy.integrate import solve_ivp

    import mbsfmu
    from mbsfmu.engine.compiled_rhs import CompiledRHS
    from mbsfmu.simulation.simulate import output_grid

    s, n = case.system, len(case.links)
    grid = output_grid(t_end, DT)
    names = list(s.coordinates_)
    q0 = np.array([case.initial[k] for k in names])
    x0 = np.concatenate((q0, np.zeros(n)))
    print(f"\n=== {case.name}: {n} coordinates, {t_end:g} s, output grid dt = {DT:g} "
          f"({len(grid)} points)")
    print(f"  initial state: {', '.join(f'{k} = {v:.6g}' for k, v in case.initial.items())}, "
          "all rates 0")

    rhs_mb = CompiledRHS(derive(s).numeric())
    if not check_accelerations(case, rhs_mb, seed):
        print(f"  the accelerations disagree by more than {CHECK_TOL:g}: not timing")
        return False, False

    def simulate(rtol, atol=None, method="explicit"):
        r = mbsfmu.simulate(s, t_end, DT, rtol=rtol, atol=atol, initial=case.initial, backend="c",
                            method=method)
        return r, np.vstack((r.y, r.yd))

    def dop853(rhs, rtol, atol):
        sol = solve_ivp(rhs, (0.0, grid[-1]), x0, method="DOP853", t_eval=grid, rtol=rtol,
                        atol=atol)
        if sol.status != 0:
            raise RuntimeError(sol.message)
        return sol

    # ---------------------------------------------------------------- reference and target
    simulate(RTOL_ENGINE)  # compiles the engine module once (cached), not timed
    ref = dop853(rhs_mb, RTOL_REF, ATOL_REF).y
    _, X_tight = simulate(RTOL_REF, ATOL_REF)
    agreement = max_error(X_tight, ref)
    r_eng, X_eng = simulate(RTOL_ENGINE)
    target = max_error(X_eng, ref)
    print(f"  reference: scipy DOP853 rtol {RTOL_REF:g} atol {ATOL_REF:g} on CompiledRHS; the "
          f"engine at the same tolerances differs by {agreement:.1e}")
    print(f"  target error (engine at rtol {RTOL_ENGINE:g}): {target:.2e}; largest |state| of the "
          f"reference {np.abs(ref).max():.3g}")
    if not agreement <= REF_AGREEMENT * target:
        print(f"  the reference is not accurate enough (agreement above {REF_AGREEMENT:g} x the "
              "target): not timing")
        return False, False

    # ---------------------------------------------------------------- equal accuracy
    # programs: (label, setting, run() -> (states on the grid, NFCN, extra)), settings searched first
    rhs_pin = pinocchio_rhs(case)

    def engine():
        r, X = simulate(RTOL_ENGINE)
        return X, r.stats["nfev"], r.stats

    programs = [("(a) mbsfmu engine simulate(backend='c')", f"rtol {RTOL_ENGINE:.3g}", engine)]

    def run_e8(rtol):
        r, X = simulate(rtol, method="dop853")
        return max_error(X, ref), r

    rtol8 = loosest_rtol(run_e8, target)[0]

    def engine8(rtol=rtol8):
        r, X = simulate(rtol, method="dop853")
        return X, r.stats["nfev"], None

    programs.append(("(a') engine, method='dop853'", f"rtol {rtol8:.3g}", engine8))
    for label, rhs in (("(b) scipy DOP853 + CompiledRHS", rhs_mb),
                       ("(c) scipy DOP853 + Pinocchio aba", rhs_pin)):
        def run(rtol, rhs=rhs):
            sol = dop853(rhs, rtol, ATOL_FACTOR * rtol)
            return max_error(sol.y, ref), sol

        rtol = loosest_rtol(run, target)[0]

        def at(rhs=rhs, rtol=rtol):
            sol = dop853(rhs, rtol, ATOL_FACTOR * rtol)
            return sol.y, sol.nfev, None

        programs.append((label, f"rtol {rtol:.3g}", at))

    def run_mj(k):
        X, _ = mujoco_run(case, grid, q0, k)
        return max_error(X, ref), X

    k = fewest_steps(run_mj, target)[0]
    m = mujoco_model(case, DT / k)
    d = mujoco.MjData(m)
    for label, inner_c in (("(d) MuJoCo RK4, mj_step loop", False),
                           ("(d') MuJoCo RK4, mj_step(nstep=k)", True)):
        programs.append((label, f"h = {DT / k:.3g} (k {k})",
                         lambda inner_c=inner_c: (_mujoco_loop(m, d, grid, q0, k, inner_c),
                                                  4 * k * (len(grid) - 1), None)))

    # timing in rounds of every program, best per program: a burst of load on the machine then
    # costs one round of all programs rather than every repeat of one
    cpu = [math.inf] * len(programs)
    for _ in range(repeat):
        for i, (*_, fn) in enumerate(programs):
            cpu[i] = min(cpu[i], cpu_seconds(fn))
    rows, st = [], None
    for (label, setting, fn), c in zip(programs, cpu):
        X, nfev, extra = fn()
        rows.append((label, setting, nfev, max_error(X, ref), c))
        if extra is not None:
            st = extra  # the engine's statistics
    engine_c = st["engine_seconds"]

    # ---------------------------------------------------------------- table
    eng_cpu = min(rows[0][4], rows[1][4])  # the engine's better method at this accuracy
    print(f"\n  {'program':38} {'setting':>18} {'NFCN':>9} {'max error':>10} {'CPU [s]':>9} "
          f"{'us/NFCN':>8} {'ratio':>7}")
    print("  " + "-" * 105)
    for label, setting, nfev, err, cpu in rows:
        ratio = "" if label.startswith("(a") else f"{cpu / eng_cpu:7.1f}"
        print(f"  {label:38} {setting:>18} {nfev:9d} {err:10.2e} {cpu:9.4f} "
              f"{1e6 * cpu / nfev:8.2f} {ratio:>7}")
    print(f"  (ratio = contender CPU / the engine's better method's CPU; engine (a): {st['naccept']} "
          f"steps, {st['nreject']} "
          f"rejected; its C call eng.run took {1e3 * engine_c:.2f} ms wall of simulate()'s "
          f"{1e3 * eng_cpu:.2f} ms CPU; MuJoCo NFCN = 4 per RK4 step)")
    worst = min(cpu / eng_cpu for *_, cpu in rows[2:])
    met = worst >= TARGET
    print(f"  target engine >= {TARGET:g}x faster than every contender: "
          f"{'met' if met else 'NOT met'} (smallest ratio {worst:.1f})")
    return True, met


# ------------------------------------------------------------------------------- breakdown
def breakdown(case: Case, t_end: float, repeat: int = 15) -> None:
    """Where the engine's simulate() time goes (wall seconds, best of ``repeat``)."""
    import timeit

    import mbsfmu
    from mbsfmu.engine.compiled_rhs import CompiledRHS
    from mbsfmu.engine.extension import Engine
    from mbsfmu.simulation.simulate import output_grid

    s = case.system
    eqs = derive(s)

    def best(fn):
        return min(timeit.repeat(fn, number=1, repeat=repeat))

    def run(grid):
        eng = Engine(s, "minimal", method="rkstab")
        eng.set({"solver_rtol": RTOL_ENGINE, "solver_atol": ATOL_FACTOR * RTOL_ENGINE, **case.initial})
        eng.start(0.0, t_end)
        t0 = time.perf_counter()
        eng.run(grid)
        return time.perf_counter() - t0, eng.statistics()["nfev"]

    sim = best(lambda: mbsfmu.simulate(s, t_end, DT, rtol=RTOL_ENGINE, initial=case.initial,
                                        backend="c"))
    numeric = best(lambda: eqs.numeric())
    engine = best(lambda: Engine(s, "minimal", method="rkstab"))
    rhs = CompiledRHS(eqs.numeric())
    x = np.random.default_rng(0).uniform(-1, 1, 2 * len(case.links))
    per_rhs = min(timeit.repeat(lambda: rhs(0.0, x), number=20000, repeat=5)) / 20000
    print(f"\n  breakdown of the engine's run ({case.name}, {t_end:g} s, rtol {RTOL_ENGINE:g}; wall, "
          f"best of {repeat}):")
    print(f"    simulate() as a whole                      {1e3 * sim:8.3f} ms")
    print(f"      eqs.numeric() (parameter checks)         {1e3 * numeric:8.3f} ms")
    print(f"      Engine(...) (module lookup, configure)   {1e3 * engine:8.3f} ms")
    for label, grid in (("eng.run on the output grid (C)", output_grid(t_end, DT)),
                        ("eng.run on [0, t_end] only (C)", np.array([0.0, t_end]))):
        t, nfev = min(run(grid) for _ in range(repeat))
        print(f"      {label:40} {1e3 * t:8.3f} ms, NFCN {nfev}, {1e9 * t / nfev:.0f} ns per NFCN")
    print(f"    CompiledRHS rhs(t, x) from Python: {1e9 * per_rhs:.0f} ns per call (the C kernel plus "
          "about 0.2 us of call and allocation)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10 s / 2 s runs, one timing repeat")
    ap.add_argument("--repeat", type=int, default=5, help="timing rounds (best is taken)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--breakdown", action="store_true",
                    help="also break the engine's time down where the target is not met")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")

    import mujoco
    import pinocchio
    import scipy

    repeat = 1 if args.quick else args.repeat
    print(f"Python {sys.version.split()[0]}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"pinocchio {pinocchio.__version__}, mujoco {mujoco.__version__}; CPU = time.process_time, "
          f"best of {repeat}")
    ok = True
    for case, t_quick in ((double_pendulum(), 10.0), (chain(), 2.0)):
        t_end = t_quick if args.quick else case.t_end
        checked, met = run_case(case, t_end, repeat, args.seed)
        ok &= checked
        if checked and not met and args.breakdown:
            breakdown(case, t_end)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
