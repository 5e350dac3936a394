"""Sensitivities: the engine's direct method against central differences and CasADi's integrator.

Gradients of three final-value metrics by the parameters of two models, each in mbsfmu and in
CasADi's own expression graph (``bench/casadi_models.py``: the equations written from the
mechanics, independently of mbsfmu's derivation; their trajectories are checked against
mbsfmu's at rtol 1e-12 first, and the script stops if they differ by more than 1e-7 relative):

* the slider-crank of ``models/slider_crank.py`` over ``--t-end`` (10 s): metrics the final
  slider position x, crank rate der(alpha) and pin.y output, by the five constants the equations
  read (r, l, m_crank, m_rod, m_slider) and the value and rate of the initial condition
  crank_angle (7 parameters).  CasADi: the ODE in the crank angle, the loop closed in closed form;
* a planar 20-link pendulum chain (``chain_with_link_constants``: each link its own mass m_i and
  length L_i, 40 parameters) over ``--chain-t-end`` (2 s) from a bent initial shape at rest:
  metrics the final tip.x, tip.y (the last link's free end) and der(q1).

Ways, all at rtol 1e-8 (``--rtol``):

* mbsfmu direct: one run with ``simulate(..., sensitivities=[...])`` (runtime/mbs_sensitivity.c);
* mbsfmu direct with ``sensitivity_error_control='state'`` (the plain run's steps);
* mbsfmu adjoint: ``mbsfmu.sensitivity.gradient(..., mode='adjoint')`` (runtime/mbs_adjoint.c);
* central differences: 2 p + 1 plain mbsfmu runs, step 1e-4 relative;
* CasADi 3.8 ``integrator('cvodes')`` (Adams, functional iteration: the fastest CVODES setting
  for these non-stiff ODEs; abstol = reltol) differentiated through CasADi's AD:
  forward sensitivities (``jtimes`` forward, one direction per parameter) and adjoint
  sensitivities (``jtimes`` reverse, one direction per metric: CVODES' backward integration);
  each at rtol 1e-8 and, where it is not already as accurate as the direct method, at the
  loosest of 1e-9, 1e-10, 1e-11 that is ("equal accuracy"; the last one tried is printed if
  none is).

The reference is CasADi's forward sensitivities at rtol 1e-12 (one call), printed against
mbsfmu's fourth-order central differences of plain runs at rtol 1e-12 (4 p runs) as a
cross-check: on the slider-crank those differ from it by 5e-6 relative, largest in a
derivative by the crank's initial rate, whose differences are truncation-limited (their error
grows about 4000 times from the step 1e-4 to 1e-3, near the h^4 of the formula), while the direct method
at rtol 1e-11 agrees with CasADi's reference to 4e-8; the errors of the CasADi rows are so
against CasADi's own tight run.
The relative error is max |G - G_ref| / max |G_ref| over the metrics x parameters matrix.
Times are wall-clock after a warm-up (builds are not timed), the best of ``--repeat`` (one run
for anything slower than 5 s); the ratio is to one plain mbsfmu run.  Then the direct method's
cost per parameter on the chain: p = 5, 10, 20, 40 of its parameters, with steps and
right-hand sides against a plain run.

    .venv/bin/python bench/sensitivity.py [--quick] [--t-end 10] [--chain-t-end 2] [--repeat 3]

``--quick``: one repeat, no tolerance scan.  Needs the ``bench`` extra (casadi).
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

import mbsfmu
from mbsfmu.sensitivity import gradient

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

SC_PARAMS = ["r", "l", "m_crank", "m_rod", "m_slider", "crank_angle", "der(crank_angle)"]
SC_METRICS = ["x", "der(alpha)", "pin.y"]
CHAIN_LINKS = 20
CHAIN_MASS, CHAIN_LENGTH = 0.5, 0.25
CHAIN_METRICS = ["tip.x", "tip.y", "der(q1)"]
TRAJECTORY_TOL = 1e-7
SCAN_TOLS = (1e-9, 1e-10, 1e-11)
REF_RTOL = 1e-12
SLOW = 5.0  # seconds: slower calls are timed once


def chain_initial_angles(n: int) -> list[float]:
    """Link 1 0.8 rad from hanging straight down, every further joint bent by 0.1 rad."""
    return [-math.pi / 2 + 0.8] + [0.1] * (n - 1)


def chain_with_link_constants(n: int):
    """bench/chain_rhs.py's planar chain (relative joint angles q1..qn about z, uniform rods,
    gravity along -y) with a mass m_i and a length L_i per link, the last tip as output tip.*."""
    from mbsfmu import System, rot_z

    s = System(f"planar_chain{n}_links")
    (g,) = s.constants(g=9.81)
    masses = s.constants(**{f"m{i}": CHAIN_MASS for i in range(1, n + 1)})
    lengths = s.constants(**{f"L{i}": CHAIN_LENGTH for i in range(1, n + 1)})
    s.gravity([0, -g, 0])
    ref = "ISYS"
    for i, (m, L) in enumerate(zip(masses, lengths), start=1):
        (q,) = s.coordinates(f"q{i}")
        J = m * L**2 / 12
        s.body(f"B{i}", ref=ref, rel_rot=rot_z(q), cg_pos=[L / 2, 0, 0], mass=m, inertia=[0, J, J])
        ref = s.frame(f"B{i}_tip", ref=f"B{i}", pos=[L, 0, 0])
    s.frame_output(ref, prefix="tip")
    s.initial(**{f"q{i}": a for i, a in enumerate(chain_initial_angles(n), start=1)})
    return s


@dataclass
class Case:
    """One model in both programs: mbsfmu's System and CasADi's ODE; ``split(P)`` maps the
    parameter vector (in the order of ``params``) to CasADi's (x0, p)."""

    title: str
    system: object
    t_end: float
    params: list[str]
    metrics: list[str]
    casadi: object
    split: object


def slider_crank_case(t_end: float) -> Case:
    import casadi_models

    from models.slider_crank import model

    cm, _ = casadi_models.slider_crank()
    return Case("slider-crank", model(), t_end, SC_PARAMS, SC_METRICS, cm,
                lambda P: (P[5:7], P[:5]))


def chain_case(t_end: float) -> Case:
    import casadi_models

    n = CHAIN_LINKS
    cm = casadi_models.chain(n)
    x0 = chain_initial_angles(n) + [0.0] * n
    return Case(f"planar {n}-link chain", chain_with_link_constants(n), t_end, cm.param_names,
                CHAIN_METRICS, cm, lambda P: (x0, P))


# ---------------------------------------------------------------- mbsfmu

def base_value(s, name: str) -> float:
    """The run's value of a constant, a named initial condition or its rate der(name)."""
    if name in s.constants_:
        return s.constants_[name].value
    ics = {ic.name: ic for ic in s.initial_conditions}
    if name.startswith("der("):
        return ics[name[4:-1]].rate
    return ics[name].value


def setting(s, name: str, value: float) -> dict:
    return {"params" if name in s.constants_ else "initial": {name: value}}


def run(case: Case, rtol: float, t_end: float | None = None, **kw):
    t_end = case.t_end if t_end is None else t_end
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mbsfmu.simulate(case.system, t_end, dt=t_end / 100, rtol=rtol, **kw)


def final_values(case: Case, res) -> np.ndarray:
    return np.array([res[m][-1] for m in case.metrics])


def central(case: Case, rtol: float, order: int = 2, h_rel: float = 1e-4, **kw) -> np.ndarray:
    """Central differences of final values: second order (2 runs per parameter) or fourth order
    (4 runs, (-f(2h) + 8 f(h) - 8 f(-h) + f(-2h)) / 12 h)."""
    s, cols = case.system, []
    for p in case.params:
        v = base_value(s, p)
        h = h_rel * (abs(v) or 1.0)
        ks = (1, -1) if order == 2 else (2, 1, -1, -2)
        f = [final_values(case, run(case, rtol, **setting(s, p, v + k * h), **kw)) for k in ks]
        cols.append((f[0] - f[1]) / (2 * h) if order == 2
                    else (-f[0] + 8 * f[1] - 8 * f[2] + f[3]) / (12 * h))
    return np.array(cols).T


def direct(case: Case, rtol: float, params=None, t_end=None, error_control: str = "all"):
    """The direct method as simulate runs it (the run's method: RKSTAB)."""
    params = case.params if params is None else params
    res = run(case, rtol, t_end, sensitivities=params, sensitivity_error_control=error_control)
    return np.array([[res.sensitivity(m, p)[-1] for p in params] for m in case.metrics]), res


def by_gradient(case: Case, rtol: float, mode: str, error_control: str = "all"):
    """mbsfmu.sensitivity.gradient (its default method, DOP853): (gradient, its Gradient)."""
    out = gradient(case.system, metrics={m: f"final({m})" for m in case.metrics}, wrt=case.params,
                   t_end=case.t_end, rtol=rtol, mode=mode, sensitivity_error_control=error_control)
    return out.gradient.loc[case.metrics, case.params].to_numpy(), out


# ---------------------------------------------------------------- CasADi

class CasadiGradients:
    """CasADi's integrator over the case's run at one tolerance: ``plain(P)`` the final metrics,
    ``forward(P)`` and ``adjoint(P)`` their Jacobian by the parameters (metrics x parameters)."""

    def __init__(self, case: Case, rtol: float):
        import casadi as ca

        cm = case.casadi
        F = ca.integrator("F", "cvodes", {"x": cm.x, "p": cm.p, "ode": cm.ode}, 0.0, case.t_end,
                          {"reltol": rtol, "abstol": rtol, "max_num_steps": 10**6,
                           "linear_multistep_method": "adams",
                           "nonlinear_solver_iteration": "functional"})
        h = cm.metrics_function(case.metrics)
        P = ca.MX.sym("P", len(case.params))
        x0, p = case.split(P)
        m = h(F(x0=x0, p=p)["xf"], p)
        self.plain = ca.Function("plain", [P], [m])
        self._fwd = ca.Function("fwd", [P], [ca.jtimes(m, P, ca.MX.eye(P.numel()), False)])
        self._adj = ca.Function("adj", [P], [ca.jtimes(m, P, ca.MX.eye(m.numel()), True)])

    def forward(self, P):
        return np.array(self._fwd(P))

    def adjoint(self, P):
        return np.array(self._adj(P)).T


def check_trajectories(case: Case, P0) -> float:
    """max over the metrics of max_t |mbsfmu - CasADi| / max_t |mbsfmu| on 100 output times,
    both at rtol 1e-12 (CasADi's Adams at 1e-13)."""
    import casadi as ca

    cm = case.casadi
    grid = np.linspace(0, case.t_end, 101)[1:]
    F = ca.integrator("F", "cvodes", {"x": cm.x, "p": cm.p, "ode": cm.ode}, 0.0, grid,
                      {"reltol": 1e-13, "abstol": 1e-13, "max_num_steps": 10**6,
                       "linear_multistep_method": "adams",
                       "nonlinear_solver_iteration": "functional"})
    P = ca.MX.sym("P", len(case.params))
    x0, p = case.split(P)
    X = F(x0=x0, p=p)["xf"]
    h = cm.metrics_function(case.metrics)
    traj = ca.Function("traj", [P], [h.map(grid.size)(X, ca.repmat(p, 1, grid.size))])
    mine = np.array(traj(P0))
    res = run(case, 1e-12)
    ref = np.array([res[m][1:] for m in case.metrics])
    return float((np.abs(mine - ref).max(axis=1) / np.abs(ref).max(axis=1)).max())


# ---------------------------------------------------------------- timing and the table

def best(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        if times[-1] > SLOW:
            break
    return min(times), out


def rel_error(G, ref) -> float:
    return float(np.abs(G - ref).max() / np.abs(ref).max())


def describe(G, ref, case: Case) -> str:
    """The relative error of G and its largest entry."""
    i, j = np.unravel_index(np.argmax(np.abs(G - ref)), ref.shape)
    return (f"relative error {rel_error(G, ref):.1e}, largest at d {case.metrics[i]} / "
            f"d {case.params[j]}: {G[i, j]:.9g} against {ref[i, j]:.9g}")


def bench_case(case: Case, a) -> dict:
    rtol, repeat = a.rtol, a.repeat
    s = case.system
    P0 = [base_value(s, p) for p in case.params]
    print(f"\n=== {case.title}, {case.t_end:g} s, rtol {rtol:g}: gradients of {len(case.metrics)} "
          f"metrics ({', '.join(case.metrics)}) by {len(case.params)} parameters")
    t0 = time.perf_counter()
    run(case, rtol, t_end=case.t_end / 100)
    direct(case, rtol, t_end=case.t_end / 100)
    print(f"mbsfmu builds (plain and sensitivity engine): {time.perf_counter() - t0:.1f} s")
    diff = check_trajectories(case, P0)
    print(f"trajectories, CasADi against mbsfmu at rtol 1e-12: max relative difference {diff:.1e}")
    if not diff <= TRAJECTORY_TOL:
        raise SystemExit(f"{case.title}: the CasADi model's trajectories differ from mbsfmu's by "
                         f"{diff:.1e} > {TRAJECTORY_TOL:g}: not benchmarking")
    t0 = time.perf_counter()
    ref = CasadiGradients(case, REF_RTOL).forward(P0)
    t_ref = time.perf_counter() - t0
    t0 = time.perf_counter()
    fd4 = central(case, REF_RTOL, order=4)
    print(f"reference: CasADi forward sensitivities at rtol {REF_RTOL:g} ({t_ref:.1f} s); "
          f"against mbsfmu's 4th-order central differences at rtol {REF_RTOL:g} "
          f"({4 * len(case.params)} runs, {time.perf_counter() - t0:.1f} s): {describe(fd4, ref, case)}")
    rows = []  # (label, time, error)
    t_plain, res_plain = best(lambda: run(case, rtol), repeat)
    rows.append(("mbsfmu one plain run (rkstab)", t_plain, None))
    t_p8, _ = best(lambda: run(case, rtol, method="dop853"), repeat)
    rows.append(("mbsfmu one plain run (dop853)", t_p8, None))
    by_gradient(case, rtol, "adjoint")  # warm-up: builds
    for mode, ec, label in (("forward", "all", "gradient(), direct method"),
                            ("forward", "state", "gradient(), direct, error test of the state"),
                            ("adjoint", "all", "gradient(), adjoint method")):
        t, (g, _) = best(lambda mode=mode, ec=ec: by_gradient(case, rtol, mode, ec), repeat)
        rows.append((label, t, rel_error(g, ref)))
    t_dir, (g_dir, res_dir) = best(lambda: direct(case, rtol), repeat)
    err_dir = rel_error(g_dir, ref)
    rows.append(("simulate(sensitivities=) (rkstab)", t_dir, err_dir))
    t_fd8, g_fd8 = best(lambda: central(case, rtol, method="dop853"), repeat)
    runs = 2 * len(case.params) + 1
    rows.append((f"central differences, dop853 ({runs} runs)", t_fd8, rel_error(g_fd8, ref)))
    t_fd, g_fd = best(lambda: central(case, rtol), repeat)
    rows.append((f"central differences, rkstab ({runs} runs)", t_fd, rel_error(g_fd, ref)))

    cas = CasadiGradients(case, rtol)
    cas.plain(P0)
    t, _ = best(lambda: cas.plain(P0), repeat)
    rows.append((f"CasADi plain run, rtol {rtol:g}", t, None))
    scan = {"forward": not a.quick, "adjoint": not a.quick}
    for mode in ("forward", "adjoint"):
        tols = (rtol,) + (SCAN_TOLS if scan[mode] else ())
        for tol in tols:
            c = cas if tol == rtol else CasadiGradients(case, tol)
            t, g = best(lambda c=c, mode=mode: getattr(c, mode)(P0), repeat)
            err = rel_error(g, ref)
            if tol == rtol or err <= err_dir or tol == tols[-1]:
                rows.append((f"CasADi {mode}, rtol {tol:g}", t, err))
            if err <= err_dir:
                break

    print(f"{'method':48s} {'time [s]':>10s} {'/ one run':>10s} {'rel. error':>11s}")
    for label, t, err in rows:
        e = "" if err is None else f"{err:.2e}"
        print(f"{label:48s} {t:10.4f} {t / t_plain:10.1f} {e:>11s}")
    print("(/ one run: against the plain rkstab run, simulate's default)")
    print(f"direct: {describe(g_dir, ref, case)}")
    print(f"steps: plain run {res_plain.stats['naccept']}, direct {res_dir.stats['naccept']}; "
          f"right-hand sides: plain {res_plain.stats['nfev']}, direct {res_dir.stats['nfev']}")
    return {"t_plain": t_plain, "res_plain": res_plain}


def cost_per_parameter(case: Case, a, t_plain: float, res_plain) -> None:
    print(f"\ncost per parameter of the direct method on the {case.title} "
          f"(one plain run {t_plain:.4f} s, {res_plain.stats['naccept']} steps, "
          f"{res_plain.stats['nfev']} right-hand sides)")
    print(f"{'p':>3s} {'time [s]':>10s} {'/ one run':>10s} {'per parameter / one run':>24s} "
          f"{'steps':>7s} {'rhs':>7s}")
    for p in (5, 10, 20, 40):
        names = case.params[:p // 2] + case.params[len(case.params) // 2:][:p - p // 2]
        t, (_, res) = best(lambda names=names: direct(case, a.rtol, names), a.repeat)
        print(f"{p:3d} {t:10.4f} {t / t_plain:10.1f} {(t - t_plain) / t_plain / p:24.2f} "
              f"{res.stats['naccept']:7d} {res.stats['nfev']:7d}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=10.0, help="slider-crank run [s]")
    ap.add_argument("--chain-t-end", type=float, default=2.0, help="chain run [s]")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--quick", action="store_true",
                    help="one repeat, no tolerance scan")
    a = ap.parse_args(argv)
    if a.quick:
        a.repeat = 1
    t0 = time.perf_counter()
    bench_case(slider_crank_case(a.t_end), a)
    chain = chain_case(a.chain_t_end)
    out = bench_case(chain, a)
    cost_per_parameter(chain, a, out["t_plain"], out["res_plain"])
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
