"""Derivation time of spatial N-link chains: mbsfmu against sympy's KanesMethod.

The system (the same for both programs)
---------------------------------------
A spatial N-link chain hanging from the inertial origin under gravity ``[0, 0, -g]``.  Link i
is a rigid body of mass ``m`` and length ``L`` whose primary frame sits at the tip of link i-1
(at the origin for link 1); the link points along its own -z axis, its centre of gravity is at
``[0, 0, -L/2]`` and the next joint at ``[0, 0, -L]``.  Every link has the same full 3x3
inertia tensor about its centre of gravity, with products of inertia (a slightly skewed slender
box), so no term vanishes by symmetry.  All parameters are symbols (m, L, g and six inertia
components), as a user would write them to keep the equations parametric.

Joints (``--joint``):

* ``cycle`` (default): one revolute joint per link whose axis cycles x, y, z through the chain
  (link 1 about x, link 2 about y, link 3 about z, link 4 about x, ...), each axis fixed in the
  previous link.  N links therefore have N coordinates, as in the n-link pendulum benchmarks of
  sympy.physics.mechanics, and the chain is genuinely three-dimensional: the x and y joints
  swing the links out of each other's planes and the z joint twists everything below it.
* ``universal``: a Cardan (universal) joint Rx(a_i) Ry(b_i) per link, 2N coordinates; the
  standard spatial multiple pendulum.

What is timed (each in a fresh Python process, so sympy's cache starts empty)
----------------------------------------------------------------------------
* mbsfmu: building the ``System`` (constants, coordinates, bodies, frames) and
  ``derive(s)``, which returns M, k and q.
* Kane: building the frames (``orient_axis``), points (``locatenew`` + ``v2pt_theory``),
  rigid bodies and gravity loads, ``KanesMethod(...).kanes_equations(bodies, loads)`` and
  reading ``mass_matrix`` and ``forcing`` (generalized speeds u_i = q_i').  Kane runs in a
  subprocess that is killed after ``--kane-timeout`` seconds; the table then shows "> T" and the
  speed-up as a lower bound.
* compile: mbsfmu's ``eqs.numeric()`` plus its first ``mass_and_force`` call (code generation
  and Python compilation of M and q - k), not part of the derive time.

Correctness check
-----------------
At one random state (angles and rates uniform in [-1, 1], default parameter values) M and
q - k from mbsfmu are compared with Kane's ``mass_matrix`` and ``forcing`` and with an
independent numerical recursive Newton-Euler inverse dynamics written in numpy below (RNEA: joint
reactions from the tip inwards, M and q - k from tau(y, y', y'') = M y'' + k - q).  The relative
difference is max|A - B| / max|B| over M and over q - k; the run fails (exit status 1) if any
difference exceeds 1e-9.

Engine mode (``--engine``)
--------------------------
From the model to a running C engine, each size in a fresh process with an empty model cache:
building the ``System`` and ``derive(s)``, the engine's generated files
(``model_sources``: generate; model_aba.c and model_tree.c start compiling in the background
during it), gcc (``compile_engine``: model.c, the wait for those two, the engine files that no
model changes unless their objects are cached already, and the link; ``--cold`` also drops the
engine files' objects, a model's own cached objects are never reused), and loading the module,
``start`` and a 0.1 s run (first run).  The chain starts from a swung-out state so the run
moves.

Usage::

    .venv/bin/python bench/derive.py                       # N = 5 10 20, Kane timeout 300 s
    .venv/bin/python bench/derive.py --sizes 5 10 --kane-timeout 900
    .venv/bin/python bench/derive.py --joint universal --sizes 5 10 20
    .venv/bin/python bench/derive.py --no-kane             # mbsfmu and RNEA only
    .venv/bin/python bench/derive.py --engine --joint universal --sizes 20 50
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import os
import pathlib
import platform
import sys
import time

import numpy as np

from mbsfmu import derive

#: default parameter values (a 0.5 m slender box of 1 kg, slightly skewed principal axes)
PARAMS = {"m": 1.0, "L": 0.5, "g": 9.81, "Ixx": 0.0215, "Iyy": 0.022, "Izz": 0.0012,
          "Ixy": 0.0003, "Ixz": 0.0004, "Iyz": -0.0002}
TOLERANCE = 1e-9


def joint_axes(joint: str, i: int) -> str:
    """Elementary rotation axes of the joint of link i (1-based)."""
    if joint == "cycle":
        return "xyz"[(i - 1) % 3]
    if joint == "universal":
        return "xy"
    raise ValueError(f"unknown joint type {joint!r}")


def n_coordinates(joint: str, n: int) -> int:
    return sum(len(joint_axes(joint, i)) for i in range(1, n + 1))


# ---------------------------------------------------------------------------------- mbsfmu
def mbsfmu_chain(n: int, joint: str):
    """The chain as an mbsfmu System."""
    from mbsfmu import System, sequence

    s = System(f"chain{n}")
    m, L, g, Ixx, Iyy, Izz, Ixy, Ixz, Iyz = s.constants(**PARAMS)
    s.gravity([0, 0, -g])
    inertia = [[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]]
    ref = "ISYS"
    for i in range(1, n + 1):
        axes = joint_axes(joint, i)
        angles = s.coordinates(*[f"q{i}{a}" for a in axes])
        s.body(f"B{i}", ref=ref, rel_pos=[0, 0, 0], rel_rot=sequence(axes, angles),
               cg_pos=[0, 0, -L / 2], mass=m, inertia=inertia)
        ref = s.frame(f"B{i}_tip", ref=f"B{i}", pos=[0, 0, -L])
    return s


def run_mbsfmu(n: int, joint: str, y: np.ndarray, yd: np.ndarray, conn) -> None:
    """Child process: time the derivation and the numeric compilation, evaluate at (y, yd)."""
    import mbsfmu  # noqa: F401  (imports are not timed)

    t0 = time.perf_counter()
    s = mbsfmu_chain(n, joint)
    eqs = derive(s)
    t_derive = time.perf_counter() - t0
    conn.send({"derive": t_derive, "intermediates": len(eqs.intermediates)})
    t0 = time.perf_counter()
    num = eqs.numeric()
    M, h = num.mass_and_force(0.0, y, yd)
    t_compile = time.perf_counter() - t0
    conn.send({"compile": t_compile, "M": np.asarray(M, float), "h": np.asarray(h, float)})
    conn.close()


def run_engine(n: int, joint: str, cache: str, conn) -> None:
    """Child process: model -> running engine, timed per stage (see "Engine mode")."""
    os.environ["MBSFMU_CACHE"] = cache
    import mbsfmu.codegen.c_model as c_model
    import mbsfmu.codegen.compile as compile_
    from mbsfmu.engine.extension import Engine

    times = {"generate": 0.0, "gcc": 0.0}

    def timed(key, fn):
        def wrapper(*args, **kw):
            t = time.perf_counter()
            try:
                return fn(*args, **kw)
            finally:
                times[key] += time.perf_counter() - t
        return wrapper

    c_model.model_sources = timed("generate", c_model.model_sources)
    compile_.compile_engine = timed("gcc", compile_.compile_engine)
    t0 = time.perf_counter()
    s = mbsfmu_chain(n, joint)
    eqs = derive(s)
    times["derive"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    eng = Engine(s)
    f = len(s.y)
    eng.set({name: 0.3 for name in eng.names[:f]})
    eng.start()
    records, reached, status, message, code = eng.run(np.linspace(0.0, 0.1, 11))
    t2 = time.perf_counter()
    times["first run"] = t2 - t1 - times["generate"] - times["gcc"]
    times["total"] = t2 - t0
    times["M derived"] = eqs.is_derived("M")
    times["final"] = np.asarray(records[-1][:f], float)
    times["ok"] = status == 0 and bool(np.all(np.isfinite(records[-1])))
    conn.send(times)
    conn.close()


def engine_main(args) -> int:
    """``--engine``: model -> running engine per size, with the time split."""
    import shutil
    import tempfile

    from mbsfmu.codegen.compile import cache_dir

    print(f"# model -> running engine, spatial N-link chain, joint={args.joint}; {machine()}; "
          f"{datetime.datetime.now():%Y-%m-%d %H:%M}", flush=True)
    head = (f"{'N':>3} {'coords':>6} {'derive [s]':>10} {'generate [s]':>12} {'gcc [s]':>8} "
            f"{'first run [s]':>13} {'total [s]':>9} {'M derived':>9}")
    rows = []
    for n in args.sizes:
        tmp = tempfile.mkdtemp(prefix="mbsfmu-bench-")
        try:
            if not args.cold:  # the engine files' objects, the same for every model
                objects = cache_dir() / "objects"
                objects.mkdir(parents=True, exist_ok=True)
                os.mkdir(os.path.join(tmp, "objects"))
                for obj in objects.glob("*.o"):  # not a model's own (model_aba.c's) objects
                    if not obj.name.startswith("model_"):
                        os.symlink(obj, os.path.join(tmp, "objects", obj.name))
            got, _ = in_subprocess(run_engine, (n, args.joint, tmp), [None])
            if not args.cold:  # engine objects compiled by this run: kept for the next
                for obj in pathlib.Path(tmp, "objects").glob("*.o"):
                    if not obj.is_symlink() and not obj.name.startswith("model_"):
                        shutil.copy(obj, cache_dir() / "objects" / obj.name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        rows.append((n, got))
        print(f"N={n}: total {got['total']:.2f} s", flush=True)
    print()
    print(head)
    print("-" * len(head))
    ok = True
    for n, r in rows:
        print(f"{n:>3} {n_coordinates(args.joint, n):>6} {r['derive']:>10.2f} {r['generate']:>12.2f} "
              f"{r['gcc']:>8.2f} {r['first run']:>13.2f} {r['total']:>9.2f} {str(r['M derived']):>9}")
        ok &= r["ok"]
    big = max(rows, key=lambda r: r[0])
    print()
    print(f"target N={big[0]} model -> running engine <= 10 s: "
          f"{'met' if big[1]['total'] <= 10 else 'MISSED'} ({big[1]['total']:.2f} s)")
    print(f"runs finished with finite states: {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


# ------------------------------------------------------------------------------------ Kane
def kane_chain(n: int, joint: str):
    """The same chain with sympy.physics.mechanics; returns (KanesMethod, M, forcing, q, u)."""
    import sympy as sp
    import sympy.physics.mechanics as me

    m, L, g, Ixx, Iyy, Izz, Ixy, Ixz, Iyz = sp.symbols(list(PARAMS), real=True)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    parent, joint_point = N, O
    qs, us, bodies, loads = [], [], [], []
    for i in range(1, n + 1):
        frame = parent
        for a in joint_axes(joint, i):
            q = me.dynamicsymbols(f"q{i}{a}")
            qs.append(q)
            us.append(me.dynamicsymbols(f"u{i}{a}"))
            child = me.ReferenceFrame(f"B{i}{a}")
            child.orient_axis(frame, getattr(frame, a), q)
            frame = child
        B = frame
        G = joint_point.locatenew(f"G{i}", -L / 2 * B.z)
        tip = joint_point.locatenew(f"P{i}", -L * B.z)
        G.v2pt_theory(joint_point, N, B)
        tip.v2pt_theory(joint_point, N, B)
        inertia = me.inertia(B, Ixx, Iyy, Izz, Ixy, Iyz, Ixz)
        bodies.append(me.RigidBody(f"B{i}", G, B, m, (inertia, G)))
        loads.append((G, -m * g * N.z))
        parent, joint_point = B, tip
    t = me.dynamicsymbols._t
    kd = [q.diff(t) - u for q, u in zip(qs, us)]
    km = me.KanesMethod(N, q_ind=qs, u_ind=us, kd_eqs=kd)
    km.kanes_equations(bodies, loads)
    return km, km.mass_matrix, km.forcing, qs, us


def _evaluate(expr_matrix, values: dict) -> np.ndarray:
    """Numbers from a (possibly huge) sympy matrix by substituting floats bottom-up."""
    import sympy as sp

    out = expr_matrix.xreplace(values)
    return np.array(sp.Matrix(out).evalf().tolist(), dtype=float)


def run_kane(n: int, joint: str, y: np.ndarray, yd: np.ndarray, conn) -> None:
    """Child process: time Kane's method, then evaluate M and forcing at (y, yd)."""
    import sympy as sp
    import sympy.physics.mechanics  # noqa: F401  (imports are not timed)

    t0 = time.perf_counter()
    km, MM, F, qs, us = kane_chain(n, joint)
    t_kane = time.perf_counter() - t0
    conn.send({"derive": t_kane})
    values = {sp.Symbol(k, real=True): sp.Float(v) for k, v in PARAMS.items()}
    values.update({q: sp.Float(v) for q, v in zip(qs, y)})
    values.update({u: sp.Float(v) for u, v in zip(us, yd)})
    conn.send({"M": _evaluate(MM, values), "h": _evaluate(F, values)[:, 0]})
    conn.close()


# ------------------------------------------------------------------------ subprocess runner
def in_subprocess(target, args, timeouts):
    """Run ``target(*args, conn)`` in a fresh process; collect one message per timeout.

    Returns the merged messages received and whether the process had to be killed."""
    ctx = mp.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=target, args=(*args, send), daemon=True)
    proc.start()
    send.close()
    got, killed = {}, False
    for timeout in timeouts:
        try:
            ready = recv.poll(timeout)
        except (EOFError, OSError):
            ready = False
        if not ready:
            killed = proc.is_alive()
            break
        try:
            got.update(recv.recv())
        except EOFError:  # the child died (e.g. out of memory)
            break
    if proc.is_alive():
        proc.terminate()
        proc.join(5)
        if proc.is_alive():
            proc.kill()
    proc.join()
    if proc.exitcode not in (0, None) and not killed and len(got) == 0:
        raise RuntimeError(f"{target.__name__} failed with exit code {proc.exitcode}")
    return got, killed


# ------------------------------------------------------------------- numerical reference
def _rot(axis: str, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    if axis == "x":
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == "y":
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def rnea(n: int, joint: str, y, yd, ydd, p=PARAMS) -> np.ndarray:
    """tau = M y'' + k - q of the chain by recursive Newton-Euler inverse dynamics (numpy).

    Independent of both symbolic programs: absolute kinematics from the root out, then the
    joint reaction force F_i and torque N_i (exerted by link i-1 on link i at joint i) from the
    tip in; the generalized force of a rotation coordinate is N_i projected on its axis."""
    m, L = p["m"], p["L"]
    grav = np.array([0.0, 0.0, -p["g"]])
    I_body = np.array([[p["Ixx"], p["Ixy"], p["Ixz"]], [p["Ixy"], p["Iyy"], p["Iyz"]],
                       [p["Ixz"], p["Iyz"], p["Izz"]]])
    S = np.eye(3)
    w = np.zeros(3)
    al = np.zeros(3)
    a_joint = np.zeros(3)
    links = []
    k = 0
    for i in range(1, n + 1):
        axes_world = []
        for a in joint_axes(joint, i):
            u = S[:, "xyz".index(a)]
            al = al + np.cross(w, u) * yd[k] + u * ydd[k]
            w = w + u * yd[k]
            S = S @ _rot(a, y[k])
            axes_world.append((k, u))
            k += 1
        e_cg = S @ np.array([0.0, 0.0, -L / 2])
        e_tip = S @ np.array([0.0, 0.0, -L])
        a_cg = a_joint + np.cross(al, e_cg) + np.cross(w, np.cross(w, e_cg))
        links.append((S.copy(), w.copy(), al.copy(), e_cg, e_tip, a_cg, axes_world))
        a_joint = a_joint + np.cross(al, e_tip) + np.cross(w, np.cross(w, e_tip))
    tau = np.zeros(k)
    F_next = np.zeros(3)
    N_next = np.zeros(3)
    for S, w, al, e_cg, e_tip, a_cg, axes_world in reversed(links):
        Iw = S @ I_body @ S.T
        F = m * a_cg - m * grav + F_next
        # moments about the cg: joint at -e_cg, next joint at e_tip - e_cg from the cg
        Nn = Iw @ al + np.cross(w, Iw @ w) + N_next + np.cross(e_cg, F) \
            + np.cross(e_tip - e_cg, F_next)
        for j, u in axes_world:
            tau[j] = u @ Nn
        F_next, N_next = F, Nn
    return tau


def rnea_mass_and_force(n: int, joint: str, y, yd):
    """(M, q - k) from the inverse dynamics: q - k = -tau(y'' = 0), M e_j = tau(e_j) + (q - k)."""
    f = len(y)
    h = -rnea(n, joint, y, yd, np.zeros(f))
    M = np.column_stack([rnea(n, joint, y, yd, e) + h for e in np.eye(f)])
    return M, h


def rel_diff(A: dict, B: dict) -> float:
    """max over M and q - k of max|A - B| / max|B|."""
    return max(float(np.abs(A[k] - B[k]).max() / max(np.abs(B[k]).max(), 1e-300))
               for k in ("M", "h"))


# ------------------------------------------------------------------------------------ main
def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[5, 10, 20],
                    help="numbers of links N (default: 5 10 20)")
    ap.add_argument("--joint", choices=["cycle", "universal"], default="cycle",
                    help="revolute joints with axes cycling x, y, z (N coordinates, default) "
                         "or universal joints Rx*Ry (2N coordinates)")
    ap.add_argument("--kane-timeout", type=float, default=300.0, metavar="T",
                    help="seconds before Kane's derivation of one N is killed (default 300)")
    ap.add_argument("--eval-timeout", type=float, default=300.0, metavar="T",
                    help="seconds allowed for the numerical evaluation of Kane's result")
    ap.add_argument("--no-kane", action="store_true", help="skip KanesMethod")
    ap.add_argument("--seed", type=int, default=1, help="seed of the random test state")
    ap.add_argument("--engine", action="store_true",
                    help="time model -> running C engine (derive, generate, gcc, first run) instead")
    ap.add_argument("--cold", action="store_true",
                    help="with --engine: compile the engine files too (no cached objects)")
    args = ap.parse_args(argv)
    if args.engine:
        return engine_main(args)

    import sympy

    print(f"# spatial N-link chain, joint={args.joint}; sympy {sympy.__version__}; "
          f"{machine()}; {datetime.datetime.now():%Y-%m-%d %H:%M}", flush=True)
    rng = np.random.default_rng(args.seed)
    rows = []
    for n in args.sizes:
        f = n_coordinates(args.joint, n)
        y = rng.uniform(-1.0, 1.0, f)
        yd = rng.uniform(-1.0, 1.0, f)
        mb, _ = in_subprocess(run_mbsfmu, (n, args.joint, y, yd), [None, None])
        print(f"N={n}: mbsfmu derive {mb['derive']:.2f} s ({mb['intermediates']} intermediates),"
              f" compile {mb['compile']:.2f} s", flush=True)
        ref = dict(zip(("M", "h"), rnea_mass_and_force(n, args.joint, y, yd)))
        row = {"N": n, "f": f, "mb": mb["derive"], "compile": mb["compile"],
               "rnea": rel_diff(mb, ref), "kane": None, "kane_timeout": False, "kdiff": None}
        if not args.no_kane:
            kane, killed = in_subprocess(run_kane, (n, args.joint, y, yd),
                                         [args.kane_timeout, args.eval_timeout])
            if "derive" in kane:
                row["kane"] = kane["derive"]
            else:
                row["kane"], row["kane_timeout"] = args.kane_timeout, True
            if "M" in kane:
                row["kdiff"] = rel_diff(mb, kane)
            status = (f"> {args.kane_timeout:.0f} s (killed)" if row["kane_timeout"]
                      else f"{row['kane']:.2f} s")
            print(f"N={n}: Kane {status}", flush=True)
        rows.append(row)

    print()
    head = (f"{'N':>3} {'coords':>6} {'mbsfmu [s]':>10} {'Kane [s]':>10} {'Kane/mbsfmu':>11} "
            f"{'compile [s]':>11} {'diff vs Kane':>12} {'diff vs RNEA':>12}")
    print(head)
    print("-" * len(head))
    ok = True
    for r in rows:
        if r["kane"] is None:
            kane, ratio = "skipped", "-"
        elif r["kane_timeout"]:
            kane, ratio = f"> {r['kane']:.0f}", f"> {r['kane'] / r['mb']:.0f}"
        else:
            kane, ratio = f"{r['kane']:.2f}", f"{r['kane'] / r['mb']:.1f}"
        kd = "n/a" if r["kdiff"] is None else f"{r['kdiff']:.1e}"
        print(f"{r['N']:>3} {r['f']:>6} {r['mb']:>10.2f} {kane:>10} {ratio:>11} "
              f"{r['compile']:>11.2f} {kd:>12} {r['rnea']:>12.1e}")
        ok &= r["rnea"] <= TOLERANCE and (r["kdiff"] is None or r["kdiff"] <= TOLERANCE)
    print()
    big = max(rows, key=lambda r: r["N"])
    timed = [r for r in rows if r["kane"] is not None]
    if timed:
        worst = min(timed, key=lambda r: r["kane"] / r["mb"])
        ratio = worst["kane"] / worst["mb"]
        bound = ", a lower bound: Kane was killed" if worst["kane_timeout"] else ""
        print(f"target Kane/mbsfmu >= 5: {'met' if ratio >= 5 else 'MISSED'} "
              f"(smallest ratio {ratio:.1f} at N={worst['N']}{bound})")
    print(f"target mbsfmu N={big['N']} < 10 s: {'met' if big['mb'] < 10 else 'MISSED'} "
          f"({big['mb']:.2f} s)")
    print(f"numerical agreement (relative {TOLERANCE:g}): {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
