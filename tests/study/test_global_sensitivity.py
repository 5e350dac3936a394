"""Global sensitivity (issue 25 item 4): Sobol' indices and Morris screening of a linear
oscillator's final position, against closed forms.

The model: a mass m = 1 on a spring k along x, gravity g along -z (which does not enter the motion
along x).  Its final position is, exactly,

    x(T) = x0 cos(w T) + v0 sin(w T) / w,     w = sqrt(k / m),

so with k fixed the metric is linear in the initial values (x0, v0): for independent uniform
parameters S1_i = ST_i = a_i^2 var_i / sum_j a_j^2 var_j, the Morris elementary effects are
EE_i = a_i (hi_i - lo_i) with sigma_i = 0, and g has every index 0 (its runs are the same run,
bit for bit).  With k in a range too the metric has interactions; the reference indices are the
variance integrals of this closed form, by scipy quadrature over k (independent of SALib and of
the engine).
"""

import json
import math

import numpy as np
import pytest
from scipy.integrate import quad

from mbsfmu import System
from mbsfmu.cli import main
from mbsfmu.core.errors import ParameterError, StudyError, StudyWarning
from mbsfmu.study import morris_screening, sobol_indices

T = 1.0
K0 = 4.0  # spring constant of the linear cases: w = 2
LINEAR = {"x": (-1.0, 1.0), "der(x)": (-1.0, 1.0), "g": (1.0, 20.0)}
XF = {"xf": "final(x)"}
RUN = dict(t_end=T, scheduler="synchronous")


def oscillator():
    s = System("osc")
    m, k, g = s.constants(m=1.0, k=K0, g=9.81)
    x, = s.coordinates("x")
    s.gravity([0, 0, -g])
    s.body("B", rel_pos=[x, 0, 0], mass=m, inertia=[1, 1, 1])
    s.generalized_force("spring", "x", -k * x)
    return s


@pytest.fixture(scope="module")
def system():
    return oscillator()


def linear_coefficients():
    """d x(T) / d (x0, v0) and d v(T) / d (x0, v0) of the closed form."""
    w = math.sqrt(K0)
    return {"xf": {"x": math.cos(w * T), "der(x)": math.sin(w * T) / w},
            "vf": {"x": -w * math.sin(w * T), "der(x)": math.cos(w * T)}}


def test_sobol_indices_of_a_linear_metric_are_its_variance_shares(system):
    a = linear_coefficients()["xf"]
    var = {p: a[p] ** 2 * (hi - lo) ** 2 / 12 for p, (lo, hi) in LINEAR.items() if p in a}
    r = sobol_indices(system, LINEAR, n=256, metrics=XF, **RUN)
    assert r.runs == 256 * (3 + 2) and r.method == "sobol"
    for p, v in var.items():
        want = v / sum(var.values())  # S1 = ST: additive
        row = r.indices.loc[("xf", p)]
        for index in ("S1", "ST"):
            # within the estimator's own 95 % interval, and within 0.01 (it is far closer: ~1e-4)
            assert abs(row[index] - want) <= min(row[f"{index}_conf"], 0.01), (p, index, row[index], want)
    # g does not enter x: every pair of runs that differ in g alone gives the same x, bit for bit
    g = r.indices.loc[("xf", "g")]
    assert (g["S1"], g["ST"], g["S1_conf"], g["ST_conf"]) == (0.0, 0.0, 0.0, 0.0)


def _interaction_reference(kr, xr, vr):
    """S1, ST and S2 of x(T) = x0 c(k) + v0 s(k), c = cos(sqrt(k) T), s = sin(sqrt(k) T) / sqrt(k),
    k, x0, v0 independent uniform: the variance integrals (moments of c and s by quadrature)."""
    def mean_k(f):
        return quad(f, *kr, epsabs=1e-14, epsrel=1e-13)[0] / (kr[1] - kr[0])

    c = lambda k: math.cos(math.sqrt(k) * T)  # noqa: E731
    s = lambda k: math.sin(math.sqrt(k) * T) / math.sqrt(k)  # noqa: E731
    Ec, Es = mean_k(c), mean_k(s)
    Ecc, Ess, Ecs = mean_k(lambda k: c(k) ** 2), mean_k(lambda k: s(k) ** 2), mean_k(lambda k: c(k) * s(k))
    mx, vx = sum(xr) / 2, (xr[1] - xr[0]) ** 2 / 12
    mv, vv = sum(vr) / 2, (vr[1] - vr[0]) ** 2 / 12
    Exx, Evv = mx ** 2 + vx, mv ** 2 + vv
    EY = mx * Ec + mv * Es
    V = Exx * Ecc + 2 * mx * mv * Ecs + Evv * Ess - EY ** 2
    var_c, var_s, cov = Ecc - Ec ** 2, Ess - Es ** 2, Ecs - Ec * Es
    S1 = {"k": (mx ** 2 * var_c + 2 * mx * mv * cov + mv ** 2 * var_s) / V,  # Var_k E[Y | k]
          "x": vx * Ec ** 2 / V, "der(x)": vv * Es ** 2 / V}
    ST = {"k": (Exx * var_c + 2 * mx * mv * cov + Evv * var_s) / V,          # E Var_k [Y | x0, v0]
          "x": vx * Ecc / V, "der(x)": vv * Ess / V}
    var_kx = Exx * Ecc + 2 * mx * mv * Ecs + mv ** 2 * Ess - EY ** 2  # Var E[Y | k, x0]
    var_kv = mx ** 2 * Ecc + 2 * mx * mv * Ecs + Evv * Ess - EY ** 2  # Var E[Y | k, v0]
    S2 = {("k", "x"): var_kx / V - S1["k"] - S1["x"], ("k", "der(x)"): var_kv / V - S1["k"] - S1["der(x)"],
          ("x", "der(x)"): 0.0}  # E[Y | x0, v0] = x0 E[c] + v0 E[s]: additive
    return S1, ST, S2


def test_sobol_indices_with_interactions_match_the_variance_integrals(system):
    ranges = {"k": (1.0, 9.0), "x": (0.5, 1.5), "der(x)": (0.0, 2.0)}
    S1, ST, S2 = _interaction_reference(*ranges.values())
    assert ST["k"] - S1["k"] > 0.05  # the case has interactions: k's effect depends on x0 and v0
    r = sobol_indices(system, ranges, n=1024, metrics=XF, second_order=True, **RUN)
    assert r.runs == 1024 * (2 * 3 + 2)
    for p in ranges:
        row = r.indices.loc[("xf", p)]
        for index, want in (("S1", S1[p]), ("ST", ST[p])):
            # within the estimator's 95 % interval (n = 1024: half-widths 0.007 to 0.07)
            assert abs(row[index] - want) <= row[f"{index}_conf"], (p, index, row[index], want)
    for (a, b), want in S2.items():
        row = r.second_order.loc[("xf", a, b)]
        assert abs(row["S2"] - want) <= row["S2_conf"], (a, b, row["S2"], want)
    # the interaction is seen: ST - S1 of k within 0.02 of its value
    k = r.indices.loc[("xf", "k")]
    assert abs((k["ST"] - k["S1"]) - (ST["k"] - S1["k"])) < 0.02


def test_morris_effects_of_linear_metrics_are_the_coefficients_times_the_ranges(system, tmp_path):
    r = morris_screening(system, LINEAR, n=6, metrics={"xf": "final(x)", "vf": "final(der(x))"},
                         plot=tmp_path / "m.png", **RUN)
    assert r.runs == 6 * (3 + 1) and r.levels == 4
    for metric, a in linear_coefficients().items():
        for p, coefficient in a.items():
            row = r.indices.loc[(metric, p)]
            lo, hi = LINEAR[p]
            want = coefficient * (hi - lo)
            # to the integrator's tolerance (rtol 1e-8 on a metric of order 1)
            assert row["mu"] == pytest.approx(want, rel=1e-6, abs=1e-8), (metric, p)
            assert row["mu_star"] == pytest.approx(abs(want), rel=1e-6, abs=1e-8), (metric, p)
            assert row["sigma"] < 1e-6
        g = r.indices.loc[(metric, "g")]
        assert (g["mu_star"], g["mu"], g["sigma"]) == (0.0, 0.0, 0.0)  # exactly: g does not enter x
        ranking = r.indices.xs(metric, level="metric")["mu_star"].sort_values(ascending=False).index.tolist()
        assert ranking == sorted(LINEAR, key=lambda p: -abs(a.get(p, 0.0)) * (LINEAR[p][1] - LINEAR[p][0]))
    assert (tmp_path / "m.png").stat().st_size > 0


def test_same_seed_same_indices_and_the_rows_file_resumes(system, tmp_path):
    out = tmp_path / "s.csv"
    first = sobol_indices(system, LINEAR, n=16, metrics=XF, out=out, **RUN)
    again = sobol_indices(system, LINEAR, n=16, metrics=XF, out=out, **RUN)
    assert again.rows.attrs["resume"]["taken"] == first.runs and again.rows.attrs["resume"]["ran"] == 0
    assert again.indices.equals(first.indices)  # bit for bit: same design, same bootstrap draws
    other = sobol_indices(system, LINEAR, n=16, metrics=XF, seed=5, **RUN)
    assert not other.indices.equals(first.indices)
    with pytest.raises(ParameterError, match=r"holds rows of another sweep definition:\n  design: 80 runs"):
        sobol_indices(system, LINEAR, n=32, metrics=XF, out=out, **RUN)


FAIL_FAR = {"on": True}


def far_fails(result):
    """final(x), failing where x(T) > 0.5 while FAIL_FAR['on'] (a module-level switch, which the
    sweep's definition does not see: the same metric for resuming)."""
    x = float(result["x"][-1])
    if FAIL_FAR["on"] and x > 0.5:
        raise ValueError(f"x(T) = {x:.3f} is too far")
    return x


def test_failed_runs_are_refused_by_name_and_retry_failed_completes_the_study(system, tmp_path):
    out = tmp_path / "f.csv"
    FAIL_FAR["on"] = True
    refused = (r"Sobol' indices need every run, and \d+ of 80 failed \(runs [0-9, -]+\); leaving them out "
               r"would bias every index.*run \d+ \(x=.*: ParameterError: metric 'xf' failed on run \d+: "
               r"ValueError: x\(T\) = .* is too far.*retry_failed=True \(--retry-failed\)")
    with pytest.raises(StudyError, match=refused) as caught:
        sobol_indices(system, LINEAR, n=16, metrics={"xf": far_fails}, out=out, **RUN)
    rows = caught.value.rows
    assert len(rows) == 80 and 0 < (rows["status"] == "failed").sum() < 80
    FAIL_FAR["on"] = False
    done = sobol_indices(system, LINEAR, n=16, metrics={"xf": far_fails}, out=out, retry_failed=True, **RUN)
    assert done.rows.attrs["resume"]["ran"] == (rows["status"] == "failed").sum()
    plain = sobol_indices(system, LINEAR, n=16, metrics=XF, **RUN)
    assert np.array_equal(done.indices.to_numpy(), plain.indices.to_numpy())


def test_a_metric_without_variance_has_nan_indices_and_a_warning(system):
    with pytest.warns(StudyWarning, match=r"metric 'xf' is -0.208\d* in every run: no variance to apportion"):
        r = sobol_indices(system, {"g": (1.0, 20.0)}, n=8, metrics=XF, initial={"x": 0.5}, **RUN)
    assert r.indices.isna().all().all()
    assert json.loads(json.dumps(r.to_dict()))["indices"][0]["S1"] is None


def test_plot_and_json(system, tmp_path):
    r = sobol_indices(system, LINEAR, n=8, metrics={"xf": "final(x)", "vf": "final(der(x))"},
                      second_order=True, plot=tmp_path / "s.png", **RUN)
    assert (tmp_path / "s.png").stat().st_size > 0
    fig = r.plot(metric="vf")
    assert len(fig.axes) == 1 and fig.axes[0].get_title() == "vf"
    d = json.loads(json.dumps(r.to_dict()))
    assert d["runs"] == 8 * 8 and len(d["indices"]) == 6 and len(d["second_order"]) == 6
    assert d["ranges"] == {k: list(v) for k, v in LINEAR.items()}
    with pytest.raises(ParameterError, match=r"no metric 'zz' among the indices \(metrics: xf, vf\)"):
        r.plot(metric="zz")


MODEL_FILE = '''from mbsfmu import System


def model():
    s = System("osc")
    m, k, g = s.constants(m=1.0, k=4.0, g=9.81)
    x, = s.coordinates("x")
    s.gravity([0, 0, -g])
    s.body("B", rel_pos=[x, 0, 0], mass=m, inertia=[1, 1, 1])
    s.generalized_force("spring", "x", -k * x)
    return s
'''


@pytest.mark.parametrize("command", ["sobol", "morris"])
def test_cli_gives_the_api_numbers(tmp_path, capsys, command):
    model = tmp_path / "osc.py"
    model.write_text(MODEL_FILE)
    argv = [command, str(model), "--param", "x=-1:1", "--param", "der(x)=-1:1", "--param", "g=1:20",
            "--metric", "xf=final(x)", "--t-end", "1", "-n", "8", "--scheduler", "synchronous"]
    assert main([*argv, "--json", "--out", str(tmp_path / "r.csv"), "--plot", str(tmp_path / "r.png")]) == 0
    got = json.loads(capsys.readouterr().out)
    api = (sobol_indices if command == "sobol" else morris_screening)(
        str(model), LINEAR, n=8, metrics=XF, **RUN)
    assert got["indices"] == api.to_dict()["indices"] and got["runs"] == api.runs
    assert (tmp_path / "r.csv").exists() and (tmp_path / "r.png").exists()
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert ("S1  S1_conf" in text if command == "sobol" else "mu_star  mu_star_conf" in text)
    assert f"{api.runs} runs" in text


CART = "models/cart_pendulum.py"
CART_RANGES = {"m": (0.05, 0.2), "theta": (0.05, 0.2)}
CART_RUN = dict(t_end=0.5, dt=0.01, metrics={"th": "max(theta)"})


@pytest.mark.slow
def test_the_default_local_cluster_gives_the_in_process_indices_bit_for_bit():
    on_cluster = sobol_indices(CART, CART_RANGES, n=16, workers=2, **CART_RUN)  # Dask worker processes
    in_process = sobol_indices(CART, CART_RANGES, n=16, scheduler="synchronous", **CART_RUN)
    assert on_cluster.indices.equals(in_process.indices)


@pytest.mark.slow
def test_an_fmu_target_gives_the_model_files_effects(built_fmu):
    fmu = built_fmu(CART)
    of_fmu = morris_screening(fmu, CART_RANGES, n=4, scheduler="synchronous", **CART_RUN)
    of_model = morris_screening(CART, CART_RANGES, n=4, scheduler="synchronous", **CART_RUN)
    assert of_fmu.runs == of_model.runs == 4 * 3
    # a native FMU gives simulate's states bit for bit (docs/guarantees.md): the same effects
    assert of_fmu.indices.equals(of_model.indices)
