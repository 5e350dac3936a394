"""The model zoo as test cases: every model in ``models/``, its span, and its independent
reference, shared by tests/zoo/test_zoo_same_answer.py (shortened spans, CI) and bench/zoo.py (the
seeds' spans, every formulation).

A run -- of ``simulate`` on either backend, or of a native FMU through fmpy -- is a :class:`Run`
(times, coordinates, rates); :meth:`Case.error` compares it with the model's reference and gives
the largest deviation, relative to the size of the compared signal where that exceeds 1.  The
references are written apart from mbsfmu (numpy and scipy only):

* Lagrange's equations of the first kind, tests/support/zoo_reference.py's :class:`FirstKind`, for the
  double pendulum, the spinning top (Cardan angles), the cart-pendulum, the trolley crane, the
  four-bar (also the natural-coordinate one at the change point, mapped to its pins), the
  rolling disc (its two rolling conditions as velocity constraints), and those of the seed tests
  (tests/support/mechanism_references.py): Bricard, the flyball governor (scipy's Radau), the
  two-link arm, the TSDA slider-crank, the copy machine;
* one-degree-of-freedom reductions: the slider-crank (both front ends), the N four-bar
  (J phi'' = -K cos phi), the singular slider-crank (its linear reformulation);
* Hairer and Wanner's equations of Andrews' squeezer (tests/support/andrews_reference.py), for both
  front ends;
* invariants where no trajectory is known in closed form: the flexible double pendulum without
  geometric stiffening keeps its energy; the rotating beam's tip follows 16 rigid segments on
  springs (tests/support/rotating_beam_segments.py) within 2 % of its peak.

A reference is computed once per case and output grid (scipy at rtol 1e-12 or tighter, from the
run's own consistent start) and cached for the process.
"""

from __future__ import annotations

import math
import pathlib
from dataclasses import dataclass

import numpy as np
from andrews_reference import NAMES as ANDREWS_NAMES
from andrews_reference import andrews_reference
from mechanism_references import (
    arm_reference,
    bricard_reference,
    copy_machine_reference,
    flyball_reference,
    one_dof_reference,
    parallelogram_angle,
    slider_crank_reference,
    tsda_reference,
)
from rotating_beam_segments import rotating_beam_module, segment_model
from scipy.integrate import solve_ivp
from zoo_reference import FirstKind, stack

from mbsfmu import derive

MODELS = pathlib.Path(__file__).resolve().parents[2] / "models"


# ---------------------------------------------------------------- runs

@dataclass
class Run:
    """One run's output: times t (n), coordinates y and rates yd (f x n) in the model's order."""

    t: np.ndarray
    y: np.ndarray
    yd: np.ndarray
    names: list

    def __getitem__(self, name):
        return self.y[self.names.index(name)]

    @classmethod
    def of_result(cls, res):
        return cls(np.asarray(res.t), np.asarray(res.y), np.asarray(res.yd), list(res.coordinate_names))

    @classmethod
    def of_fmpy(cls, rec, names):
        return cls(np.asarray(rec["time"]), np.array([rec[n] for n in names]),
                   np.array([rec[f"der({n})"] for n in names]), list(names))


def _dev(got, want) -> float:
    want = np.asarray(want)
    return float(np.max(np.abs(np.asarray(got) - want))) / max(1.0, float(np.max(np.abs(want))))


# ---------------------------------------------------------------- references by hand (FirstKind)

def double_pendulum(m=2.0, L1=1.0, L2=1.0, Ix=0.01, g=9.81):
    """models/double_pendulum.py: two bodies turning about x, cgs at L below their hinges."""
    def velocities(q, qd, t):
        a, p = q[0], q[0] + q[1]
        ad, pd = qd[0], qd[0] + qd[1]
        v1y, v1z = L1 * np.cos(a) * ad, L1 * np.sin(a) * ad
        return stack(v1y, v1z, ad, v1y + L2 * np.cos(p) * pd, v1z + L2 * np.sin(p) * pd, pd)

    def potential(q, t):
        return -m * g * (2 * L1 * np.cos(q[0]) + L2 * np.cos(q[0] + q[1]))

    return FirstKind(2, velocities, [m, m, Ix, m, m, Ix], potential=potential)


def spinning_top(m=1.0, h=0.1, A=2e-3, C=3.5e-3, g=9.81):
    """models/spinning_top.py: R = Rx(alpha) Ry(beta) Rz(gamma), cg at R (0, 0, h); body angular
    velocity w = Rz^T Ry^T (alpha', 0, 0) + Rz^T (0, beta', 0) + (0, 0, gamma')."""
    def velocities(q, qd, t):
        a, b, c = q
        ad, bd, cd = qd
        u0, u2 = ad * np.cos(b), ad * np.sin(b)
        w = (u0 * np.cos(c) + bd * np.sin(c), -u0 * np.sin(c) + bd * np.cos(c), u2 + cd)
        v = (h * np.cos(b) * bd, h * (-np.cos(a) * np.cos(b) * ad + np.sin(a) * np.sin(b) * bd),
             h * (-np.sin(a) * np.cos(b) * ad - np.cos(a) * np.sin(b) * bd))
        return stack(*v, *w)

    def potential(q, t):
        return m * g * h * np.cos(q[0]) * np.cos(q[1])

    return FirstKind(3, velocities, [m, m, m, A, A, C], potential=potential)


def cart_pendulum(mc=1.0, m=0.1, l=0.5, g=9.81):
    """models/cart_pendulum.py: cart at x, rod turned about y by theta, cg l along its axis."""
    J = m * (2 * l) ** 2 / 12

    def velocities(q, qd, t):
        th, xd, thd = q[1], qd[0], qd[1]
        return stack(xd, xd + l * np.cos(th) * thd, -l * np.sin(th) * thd, thd)

    return FirstKind(2, velocities, [mc, m, m, J], potential=lambda q, t: m * g * l * np.cos(q[1]))


def trolley_crane(M=20.0, m=50.0, L=2.0, g=9.81):
    """models/trolley_crane.py: trolley at x, point load at (x + L sin theta, 0, -L cos theta)."""
    def velocities(q, qd, t):
        th, xd, thd = q[1], qd[0], qd[1]
        return stack(xd, xd + L * np.cos(th) * thd, L * np.sin(th) * thd)

    return FirstKind(2, velocities, [M, m, m], potential=lambda q, t: -m * g * L * np.cos(q[1]))


FOUR_BAR = dict(a=0.2, b=0.45, c=0.5, d=0.26, ma=1.0, mb=2.0, mc=2.2, g=9.81)


def four_bar(a=0.2, b=0.45, c=0.5, d=0.26, ma=1.0, mb=2.0, mc=2.2, g=9.81):
    """models/four_bar.py in (phi1 crank, phi2 coupler relative to the crank, phi3 rocker):
    uniform bars, gravity -y, the coupler's end at the rocker's end (x and y)."""
    def velocities(q, qd, t):
        p1, p2, p3 = q[0], q[0] + q[1], q[2]
        w1, w2, w3 = qd[0], qd[0] + qd[1], qd[2]
        bx, by = -a * np.sin(p1) * w1, a * np.cos(p1) * w1
        return stack(-a / 2 * np.sin(p1) * w1, a / 2 * np.cos(p1) * w1, w1,
                      bx - b / 2 * np.sin(p2) * w2, by + b / 2 * np.cos(p2) * w2, w2,
                      -c / 2 * np.sin(p3) * w3, c / 2 * np.cos(p3) * w3, w3)

    def potential(q, t):
        p1, p2, p3 = q[0], q[0] + q[1], q[2]
        return g * (ma * a / 2 * np.sin(p1) + mb * (a * np.sin(p1) + b / 2 * np.sin(p2))
                    + mc * c / 2 * np.sin(p3))

    def constraints(q, t):
        p1, p2, p3 = q[0], q[0] + q[1], q[2]
        return stack(a * np.cos(p1) + b * np.cos(p2) - d - c * np.cos(p3),
                      a * np.sin(p1) + b * np.sin(p2) - c * np.sin(p3))

    def rates(q, qd, t):
        p1, p2, p3 = q[0], q[0] + q[1], q[2]
        w1, w2, w3 = qd[0], qd[0] + qd[1], qd[2]
        return stack(-a * np.sin(p1) * w1 - b * np.sin(p2) * w2 + c * np.sin(p3) * w3,
                      a * np.cos(p1) * w1 + b * np.cos(p2) * w2 - c * np.cos(p3) * w3)

    weights = [ma, ma, ma * a**2 / 12, mb, mb, mb * b**2 / 12, mc, mc, mc * c**2 / 12]
    return FirstKind(3, velocities, weights, potential=potential, constraints=constraints,
                     constraint_rates=rates)


def rolling_disc(r=0.1, m=1.0, A=2.5e-3, C=5e-3, g=9.81):
    """models/rolling_disc.py in (x, y, phi, theta, psi): the centre G = (x, y, 0) + r u with
    u = cos theta e_z + sin theta e_n, e_n = (-sin phi, cos phi, 0); the angular velocity has
    the components (-theta', phi' cos theta, psi' + phi' sin theta) along the disc's principal
    axes (A, A, C); rolling: x' + r cos(phi) psi' = 0, y' + r sin(phi) psi' = 0, given as
    velocity constraints (no position-level rows: c = 0)."""
    def velocities(q, qd, t):
        ph, th = q[2], q[3]
        xd, yd, phd, thd, psd = qd
        return stack(xd - r * np.cos(th) * np.sin(ph) * thd - r * np.sin(th) * np.cos(ph) * phd,
                      yd + r * np.cos(th) * np.cos(ph) * thd - r * np.sin(th) * np.sin(ph) * phd,
                      -r * np.sin(th) * thd, -thd, phd * np.cos(th), psd + phd * np.sin(th))

    def rates(q, qd, t):
        return stack(qd[0] + r * np.cos(q[2]) * qd[4], qd[1] + r * np.sin(q[2]) * qd[4])

    return FirstKind(5, velocities, [m, m, m, A, A, C], potential=lambda q, t: m * g * r * np.cos(q[3]),
                     constraints=lambda q, t: stack(0 * q[0], 0 * q[0]), constraint_rates=rates)


# ---------------------------------------------------------------- cases

_CACHE: dict = {}


def _cached(key, t, compute):
    """compute(t) once per key on the longest grid asked for (grids of one key share dt)."""
    have = _CACHE.get(key)
    if have is None or have[0][-1] < t[-1] - 1e-12 or len(have[0]) < len(t):
        have = (np.array(t), compute(np.array(t)))
        _CACHE[key] = have
    n = len(t)
    return have[1][..., :n] if isinstance(have[1], np.ndarray) else tuple(v[..., :n] for v in have[1])


def _first_kind(label, make, run, compare=None):
    """Deviation of run's coordinates from FirstKind make() started at the run's own first state
    (compare(X) -> reference rows in run's order; default all coordinates)."""
    f = run.y.shape[0]
    ref = _cached((label, "fk"), run.t, lambda t: make().solve(np.concatenate([run.y[:, 0], run.yd[:, 0]]), t,
                                                               rtol=1e-12, atol=1e-13))
    want = ref[:f] if compare is None else compare(ref)
    return _dev(run.y, want)


def _double_pendulum(case, run):
    return _first_kind(case.label, double_pendulum, run)


def _spinning_top(case, run):
    return _first_kind(case.label, spinning_top, run)


def _cart_pendulum(case, run):
    return _first_kind(case.label, cart_pendulum, run)


def _trolley_crane(case, run):
    return _first_kind(case.label, trolley_crane, run)


def _four_bar(case, run):
    return _first_kind(case.label, four_bar, run)


def _rolling_disc(case, run):
    return _first_kind(case.label, rolling_disc, run)


def _slider_crank(case, run):
    _, x = _cached(("slider_crank", "1dof"), run.t, one_dof_reference)
    return _dev(run["B_x"] if "B_x" in run.names else run["x"], x)


def _four_bar_natural(case, run):
    N = case.kwargs["N"]
    phi = _cached((case.label, "phi"), run.t, lambda t: parallelogram_angle(t, N))
    return max(max(_dev(run[f"A{j}_x"], j + np.cos(phi)), _dev(run[f"A{j}_y"], np.sin(phi)))
               for j in range(N + 1))


def _four_bar_change_point(case, run):
    """The natural four-bar's pins B, C from FirstKind's four_bar started at the angles of its
    first state."""
    p = FOUR_BAR
    B, C = np.array([run["B_x"], run["B_y"]]), np.array([run["C_x"], run["C_y"]])
    Bd = np.array([run.yd[run.names.index(n)] for n in ("B_x", "B_y")])
    Cd = np.array([run.yd[run.names.index(n)] for n in ("C_x", "C_y")])
    p1 = math.atan2(B[1, 0], B[0, 0])
    p3 = math.atan2(C[1, 0], C[0, 0] - p["d"])
    p2 = math.atan2(C[1, 0] - B[1, 0], C[0, 0] - B[0, 0]) - p1
    w1 = (B[0, 0] * Bd[1, 0] - B[1, 0] * Bd[0, 0]) / p["a"] ** 2
    w3 = ((C[0, 0] - p["d"]) * Cd[1, 0] - C[1, 0] * Cd[0, 0]) / p["c"] ** 2
    e = C[:, 0] - B[:, 0]
    w2 = (e[0] * (Cd[1, 0] - Bd[1, 0]) - e[1] * (Cd[0, 0] - Bd[0, 0])) / p["b"] ** 2 - w1
    X = _cached((case.label, "fk"), run.t,
                lambda t: four_bar().solve([p1, p2, p3, w1, w2, w3], t, rtol=1e-12, atol=1e-13))
    bx, by = p["a"] * np.cos(X[0]), p["a"] * np.sin(X[0])
    cx, cy = p["d"] + p["c"] * np.cos(X[2]), p["c"] * np.sin(X[2])
    return max(_dev(B[0], bx), _dev(B[1], by), _dev(C[0], cx), _dev(C[1], cy))


def _andrews(case, run):
    Q = _cached(("andrews", "hw"), run.t, andrews_reference)
    if "beta" in run.names:
        return max(_dev(run[n], Q[i]) for i, n in enumerate(ANDREWS_NAMES))
    beta = np.unwrap(np.arctan2(run["P_y"], run["P_x"]))  # the crank angle of the natural model
    return _dev(beta, Q[0])


def _copy_machine(case, run):
    bx, by, cy = _cached(("copy_machine", "2dof"), run.t, copy_machine_reference)
    return max(_dev(run["B_x"], bx), _dev(run["B_y"], by), _dev(run["C_y"], cy))


def _bricard(case, run):
    return _first_kind(case.label, bricard_reference, run)


def _flyball(case, run):
    x0 = np.concatenate([run.y[:, 0], run.yd[:, 0]])

    def solve(t):
        ref = flyball_reference()[0]
        # rtol 1e-11: within 1e-11 of the 1e-12 run and half its time (1.4 ms per complex-step rhs)
        sol = solve_ivp(ref.rhs, (0.0, float(t[-1])), x0, method="Radau", rtol=1e-11, atol=1e-11, t_eval=t)
        assert sol.success, sol.message
        return sol.y

    return _dev(run.y, _cached(("flyball", "radau"), run.t, solve)[:6])


def _two_link_arm(case, run):
    return _first_kind(case.label, lambda: arm_reference(case.kwargs["case"]), run)


def _singular_slider_crank(case, run):
    a, b = _cached(("singular_slider_crank", "linear"), run.t, lambda t: slider_crank_reference(t, omega=5.0))
    return max(_dev(run["theta1"], a), _dev(run["theta2"], b))


def _tsda(case, run):
    ref, geometry = tsda_reference(case.kwargs["k"])
    X = _cached((case.label, "1dof"), run.t, lambda t: ref.solve([math.pi / 2, 0.0], t))
    return max(_dev(run["theta2"], X[0]), _dev(run["x4"], geometry(X[0])[1]))


def _energy(case, run):
    """The relative energy drift of a conservative model (its own energy function)."""
    from mbsfmu.model.loader import load_model

    num = derive(load_model(MODELS / case.file, **case.kwargs)).numeric()
    T, V = num.energy_series(run.t, run.y, run.yd)
    E = T + V
    return float(np.max(np.abs(E - E[0]))) / max(float(np.max(np.abs(T))), 1e-300)


def _rotating_beam(case, run):
    """The tip's y in the hub frame against 16 rigid segments, relative to its peak."""
    import mbsfmu

    rb = rotating_beam_module()
    tip = rb.beam_data().nodes[-1].phi[1] @ run.y

    def segments(t):
        r = mbsfmu.simulate(segment_model(16), t_end=float(t[-1]), dt=float(t[1] - t[0]), rtol=1e-9)
        pos = r.frame("end16")["position"]
        theta = np.array([float(rb.spin_angle(tt)) for tt in r.t])
        return -np.sin(theta) * pos[:, 0] + np.cos(theta) * pos[:, 1]

    ref = _cached(("rotating_beam", "16"), run.t, segments)
    return float(np.max(np.abs(tip - ref))) / float(np.max(np.abs(ref)))


@dataclass
class Case:
    """label, model file and its keyword arguments, the seeds' span (bench) and a short one (CI),
    the output step, the error function (case, run) -> float and its bound at rtol 1e-10, the
    default method ('stiff' for the flyball governor), the span of the numpy backend's run in
    CI (None: not run there), what the error measures, and whether CI builds its FMU."""

    label: str
    file: str
    kwargs: dict
    t_end: float
    t_ci: float
    dt: float
    check: object
    bound: float = 1e-7
    method: str = "explicit"
    numpy_ci: float | None = None
    what: str = "max deviation"
    fmu_ci: bool = True  # its FMU built in CI (Bricard's generated C takes 35 s to compile)

    def load(self):
        from mbsfmu.model.loader import load_model

        return load_model(MODELS / self.file, **self.kwargs)

    def error(self, run) -> float:
        return float(self.check(self, run))


CASES = [
    Case("double_pendulum", "double_pendulum.py", {}, 10.0, 2.0, 0.01, _double_pendulum, numpy_ci=1.0),
    Case("spinning_top", "spinning_top.py", {}, 10.0, 2.0, 0.01, _spinning_top, numpy_ci=0.5),
    Case("cart_pendulum", "cart_pendulum.py", {}, 10.0, 2.0, 0.01, _cart_pendulum, numpy_ci=1.0),
    Case("trolley_crane", "trolley_crane.py", {}, 10.0, 2.0, 0.01, _trolley_crane, numpy_ci=1.0),
    Case("slider_crank", "slider_crank.py", {}, 10.0, 2.0, 0.01, _slider_crank, numpy_ci=0.5),
    Case("slider_crank_natural", "slider_crank_natural.py", {}, 10.0, 2.0, 0.01, _slider_crank, numpy_ci=0.5),
    # near a change point (a + c within 1 cm of b + d) the motion is sensitive: the error of RKSTAB at
    # rtol 1e-10 grows to 1e-6 (relative) over 10 s and falls with the tolerance (7e-9 at 1e-12)
    Case("four_bar", "four_bar.py", {}, 10.0, 2.0, 0.01, _four_bar, bound=1e-5, numpy_ci=0.5),
    Case("four_bar_change_point_natural", "four_bar_change_point_natural.py", {}, 3.0, 2.0, 0.01,
         _four_bar_change_point, numpy_ci=0.5),
    Case("four_bar_natural N=2", "four_bar_natural.py", {"N": 2}, 10.0, 2.0, 0.01, _four_bar_natural,
         numpy_ci=1.5),
    Case("four_bar_natural N=10", "four_bar_natural.py", {"N": 10}, 10.0, 2.0, 0.01, _four_bar_natural),
    Case("andrews", "andrews.py", {}, 0.03, 0.03, 0.001, _andrews, numpy_ci=0.01),
    Case("andrews_natural", "andrews_natural.py", {}, 0.03, 0.03, 0.001, _andrews),
    Case("copy_machine", "copy_machine.py", {}, 10.0, 2.0, 0.01, _copy_machine, numpy_ci=0.5),
    Case("bricard", "bricard.py", {}, 10.0, 0.5, 0.05, _bricard, numpy_ci=0.1, fmu_ci=False),
    Case("flyball_governor", "flyball_governor.py", {}, 1.0, 0.1, 0.01, _flyball, method="stiff",
         numpy_ci=0.1),
    Case("two_link_arm I", "two_link_arm.py", {"case": "I"}, 10.0, 2.0, 0.01, _two_link_arm, numpy_ci=0.5),
    Case("two_link_arm II", "two_link_arm.py", {"case": "II"}, 2.0, 2.0, 0.01, _two_link_arm, numpy_ci=0.5),
    Case("singular_slider_crank", "singular_slider_crank.py", {}, 3.0, 2.0, 0.01, _singular_slider_crank,
         numpy_ci=1.0),
    Case("singular_slider_crank linear", "singular_slider_crank.py", {"constraint": "linear"}, 3.0, 2.0,
         0.01, _singular_slider_crank, numpy_ci=1.0),
    Case("slider_crank_tsda k=1e3", "slider_crank_tsda.py", {"k": 1000.0}, 0.5, 0.5, 0.01, _tsda,
         numpy_ci=0.2),
    Case("slider_crank_tsda k=1e4", "slider_crank_tsda.py", {"k": 10000.0}, 0.5, 0.5, 0.01, _tsda,
         numpy_ci=0.2),
    Case("rolling_disc", "rolling_disc.py", {}, 5.0, 2.0, 0.05, _rolling_disc, numpy_ci=0.5),
    Case("flexible_double_pendulum", "flexible_double_pendulum.py", {"geometric_stiffening": False},
         2.0, 0.5, 0.01, _energy, bound=1e-8, what="energy drift"),
    Case("rotating_beam", "rotating_beam.py", {}, 20.0, 5.0, 0.05, _rotating_beam, bound=0.02,
         what="tip vs 16 segments / peak"),
]
