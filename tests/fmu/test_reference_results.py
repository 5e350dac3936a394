"""Reference results (issue 26 item 5): every model file of models/ has one, current and with the
FMU's columns; each is checked against the model's independent reference of
tests/support/zoo_cases.py (scipy, Lagrange's equations of the first kind, closed forms), so the
shipped numbers are known right and not only self-consistent; the generator remakes them; the
comparison finds the worst signal; a native FMU carries them in documentation/ and fmpy's run of
it matches them (tests/support/reference_check.py)."""

import json
import shutil
import zipfile

import numpy as np
import pytest
import zoo_cases
from fmu_support import MODELS
from reference_check import CS_TOL, assert_matches_reference
from slow_cases import cases
from zoo_cases import CASES, Run

import mbsfmu
from mbsfmu.core.errors import ParameterError
from mbsfmu.fmu.reference_results import (
    DOCUMENTATION,
    ReferenceResult,
    compare,
    documentation_files,
    read_reference,
    reference_columns,
    reference_of,
    reference_path,
)
from mbsfmu.fmu.reference_runs import make_reference, model_files
from mbsfmu.model.loader import load_model

MODEL_FILES = model_files(MODELS)
#: bound on the deviation of a reference from the independent one (relative to the signal's scale
#: where that exceeds 1): the references run at rtol 1e-12 (1e-11 through singular positions),
#: the independent ones at 1e-12; measured at most 3e-11
BOUND = 1e-9
#: models whose default is not a case of zoo_cases (which runs them with other arguments or
#: not at all), each with what checks its reference instead
OTHER = {
    "five_link_natural": "the tire keeps its spin of 100 rad/s (no torque about its axis, Euler's "
                         "equation): tire_spin within 1e-9 of 100",
    "flexible_double_pendulum": "none: the zoo checks its variant without geometric stiffening (energy); "
                                "with it, no invariant or trajectory is known",
}
#: the checks that take seconds (scipy's Radau on the flyball, Bricard's 12 coordinates, 16
#: segments of the rotating beam)
SLOW = {"flyball_governor", "bricard", "rotating_beam"}


def _zoo_case(stem):
    """The zoo case of a model file's default arguments (None if there is none)."""
    defaults = {"four_bar_natural": {"N": 2}, "two_link_arm": {"case": "I"},
                "singular_slider_crank": {}, "slider_crank_tsda": {"k": 1000.0}}
    for c in CASES:
        if c.file == f"{stem}.py" and c.kwargs == defaults.get(stem, {}):
            return c
    return None


def test_every_model_has_a_current_reference_result():
    """Each model file has its CSV and settings, made from the file as it is now (its SHA-256),
    over a span of a few hundred rows at most."""
    assert len(MODEL_FILES) == 21
    for f in MODEL_FILES:
        ref = reference_of(f)
        assert ref is not None, f"{f.name} has no reference result: run ci/make_reference_results {f}"
        assert ref.current, f"{f.name} changed since its reference result: run ci/make_reference_results {f}"
        assert 30 <= len(ref.time) <= 301
        assert ref.settings["rtol"] <= 1e-11 and ref.settings["output_interval"] > 0


def test_no_reference_result_without_its_model():
    """Nothing in models/reference_results/ but a CSV and a settings file per model file."""
    names = {p.name for p in (MODELS / "reference_results").iterdir()}
    assert names == {f"{f.stem}{ext}" for f in MODEL_FILES for ext in (".csv", ".json")}


@pytest.mark.slow
def test_the_columns_are_the_fmu_outputs():
    """time, the coordinates, der(...) and the user outputs by their FMU names; no
    constraint_residual."""
    for f in MODEL_FILES:
        ref = reference_of(f)
        assert list(ref.names) == reference_columns(load_model(f)), f.name
        assert "constraint_residual" not in ref.names


@pytest.mark.parametrize("stem", cases([f.stem for f in MODEL_FILES], slow=SLOW))
def test_reference_against_the_independent_reference(stem, monkeypatch):
    """The shipped CSV's coordinates against zoo_cases' reference of the model (scipy at rtol
    1e-12 from the CSV's first state): within BOUND (the rotating beam: within its case's 2 % of
    the 16-segment model, a discretization of the beam)."""
    monkeypatch.setattr(zoo_cases, "_CACHE", {})  # this grid is not the zoo tests'
    ref = reference_of(MODELS / f"{stem}.py")
    case = _zoo_case(stem)
    if case is None:
        assert stem in OTHER, f"{stem}: no independent reference; say why in OTHER"
        if stem == "five_link_natural":
            assert np.max(np.abs(ref["tire_spin"] - 100.0)) < 1e-9
        return
    names = list(case.load().coordinates_)
    run = Run(ref.time, np.array([ref[n] for n in names]), np.array([ref[f"der({n})"] for n in names]), names)
    err = case.error(run)
    bound = case.bound if stem == "rotating_beam" else BOUND
    print(f"{stem}: {case.what} {err:.2e}")
    assert err < bound, f"{stem}: {case.what} {err:.2e} >= {bound:g}"


def test_the_generator_remakes_the_shipped_file(tmp_path):
    """make_reference on a copy of the model file and its settings gives the shipped numbers
    (to 1e-10 of scale: the CSV keeps 12 digits), the same columns and settings."""
    shutil.copy(MODELS / "double_pendulum.py", tmp_path)
    (tmp_path / "reference_results").mkdir()
    shutil.copy(MODELS / "reference_results" / "double_pendulum.json", tmp_path / "reference_results")
    out = make_reference(tmp_path / "double_pendulum.py")
    assert out == reference_path(tmp_path / "double_pendulum.py")
    again, shipped = read_reference(out), reference_of(MODELS / "double_pendulum.py")
    assert again.names == shipped.names and again.current
    assert compare(dict(zip(again.names, again.values.T)), shipped).deviation < 1e-10
    keep = ("stop_time", "output_interval", "method", "rtol", "atol", "formulation", "model_sha256", "note")
    assert {k: again.settings[k] for k in keep} == {k: shipped.settings[k] for k in keep}


def test_a_new_model_needs_its_span(tmp_path):
    shutil.copy(MODELS / "double_pendulum.py", tmp_path / "mine.py")
    with pytest.raises(ParameterError, match=r"mine.py: no settings file .*; give --stop-time and --output-"):
        make_reference(tmp_path / "mine.py")
    assert not (tmp_path / "reference_results").exists()


# ---------------------------------------------------------------- compare

@pytest.fixture(scope="module")
def slider():
    return reference_of(MODELS / "slider_crank.py")


def _table(ref, t=None):
    """The reference as a result table, on its own times or through its spline onto ``t``."""
    if t is None:
        return {n: ref[n].copy() for n in ref.names}
    from scipy.interpolate import CubicSpline

    return {"time": t, **{n: CubicSpline(ref.time, ref[n])(t) for n in ref.signals}}


def test_compare_finds_the_worst_signal_and_where(slider):
    table = _table(slider)
    assert compare(table, slider).deviation == 0.0
    scale = max(1.0, float(np.max(np.abs(slider["reaction.pivot.y"]))))
    table["reaction.pivot.y"][57] += 1e-6 * scale
    table["x"][3] += 1e-7
    c = compare(table, slider)
    assert c.worst.name == "reaction.pivot.y" and c.worst.time == pytest.approx(0.57)
    assert c.worst.deviation == pytest.approx(1e-6, rel=1e-6) and not c.interpolated
    assert {s.name: s.deviation for s in c.signals}["x"] == pytest.approx(1e-7, rel=1e-3)
    assert "reaction.pivot.y: 1e-06 of its scale" in str(c) and "at t = 0.57" in str(c)


def test_compare_interpolates_a_result_on_other_times(tmp_path):
    """A result on another grid is put onto the reference's times by its cubic spline: for
    sin(3 t) sampled every 1/750 s the spline's error is about h^4 max|f(4)| / 384 = 7e-14, and
    an offset of 1e-6 in the result is found."""
    t_ref = np.linspace(0.0, 2.0, 201)
    ref = ReferenceResult(tmp_path / "r.csv", {"model": "sine", "output_interval": 0.01}, ("time", "s"),
                          np.column_stack([t_ref, np.sin(3 * t_ref)]))
    t = np.linspace(0.0, 2.0, 1501)
    c = compare({"time": t, "s": np.sin(3 * t)}, ref)
    assert c.interpolated and c.deviation < 1e-12
    assert compare({"time": t, "s": np.sin(3 * t) + 1e-6}, ref).deviation == pytest.approx(1e-6, rel=1e-5)


def test_compare_takes_the_last_row_of_a_repeated_time(slider):
    """An importer that records an event writes two rows at one time: the later one counts."""
    table = _table(slider)
    i = 100
    for n, v in table.items():
        bad = v[i] + (0.0 if n == "time" else 1.0)
        table[n] = np.insert(v, i, bad)
    c = compare(table, slider)
    assert not c.interpolated and c.deviation == 0.0


def test_compare_takes_the_rows_at_the_reference_times_of_a_finer_grid(slider):
    """A result with output points every tenth of the reference's interval (an Euler run) is
    compared at the reference's times, without interpolation; a changed row between them does
    not count."""
    fine = np.round(np.linspace(0.0, 2.0, 2001), 12)
    table = _table(slider, fine)
    table["x"][5] += 1.0  # t = 0.005, between two reference times
    c = compare(table, slider)
    assert not c.interpolated and c.deviation < 1e-12


def test_compare_reports_a_result_that_is_not_finite(slider):
    table = _table(slider)
    table["pin.x"][10] = np.nan
    c = compare(table, slider)
    assert c.worst.name == "pin.x" and c.worst.deviation == np.inf and c.worst.time == pytest.approx(0.1)


def test_compare_a_structured_array(slider):
    """fmpy's result type: a numpy structured array with a field per column."""
    rec = np.zeros(len(slider.time), dtype=[(n, float) for n in slider.names])
    for n in slider.names:
        rec[n] = slider[n]
    assert compare(rec, slider).deviation == 0.0
    assert compare(rec, slider, signals=["x"]).signals[0].name == "x"


# ---------------------------------------------------------------- the FMU carries it

def test_documentation_files_of_a_model_file_and_of_a_system(tmp_path):
    files = documentation_files(MODELS / "four_bar.py")
    assert set(files) == set(DOCUMENTATION.values())
    ref = reference_of(MODELS / "four_bar.py")
    assert files[DOCUMENTATION["csv"]] == ref.csv.read_bytes()
    assert json.loads(files[DOCUMENTATION["settings"]])["method"] == "dop853"
    page = files[DOCUMENTATION["index"]].decode()
    assert "reference_result.csv" in page and "solver_rtol" in page and "four_bar" in page
    assert documentation_files(load_model(MODELS / "four_bar.py")) == {}  # a System has no file
    # a model file changed after its reference was made ships none
    shutil.copy(MODELS / "four_bar.py", tmp_path)
    shutil.copytree(MODELS / "reference_results", tmp_path / "reference_results")
    assert set(documentation_files(tmp_path / "four_bar.py")) == set(DOCUMENTATION.values())
    (tmp_path / "four_bar.py").write_text((MODELS / "four_bar.py").read_text() + "\n# changed\n")
    assert documentation_files(tmp_path / "four_bar.py") == {}
    assert reference_of(tmp_path / "four_bar.py").current is False


@pytest.mark.parametrize("fmi_version,interface", [(2, "cs"), (3, "both")])
def test_the_native_fmu_carries_the_reference(built_fmu, fmi_version, interface):
    """Every native kind ships it: FMI 2.0 Co-Simulation, FMI 3.0 with both interfaces."""
    pytest.importorskip("fmpy")
    from fmpy.validation import validate_fmu

    fmu = built_fmu(MODELS / "slider_crank.py", fmi_version=fmi_version, interface=interface)
    with zipfile.ZipFile(fmu) as z:
        names = set(z.namelist())
        assert set(DOCUMENTATION.values()) <= names
        shipped = (MODELS / "reference_results" / "slider_crank.csv").read_bytes()
        assert z.read(DOCUMENTATION["csv"]) == shipped
    assert validate_fmu(str(fmu)) == []


@pytest.mark.slow
def test_an_fmu_of_a_system_has_no_documentation(tmp_path):
    pytest.importorskip("fmpy")
    fmu = mbsfmu.build_fmu(load_model(MODELS / "double_pendulum.py"), tmp_path / "dp.fmu")
    with zipfile.ZipFile(fmu) as z:
        assert not [n for n in z.namelist() if n.startswith("documentation/")]


@pytest.mark.parametrize("stem", cases(["double_pendulum", "four_bar", "slider_crank", "cart_pendulum"],
                                       fast={"slider_crank"}))
def test_fmpy_run_of_the_fmu_matches_its_reference(stem, built_fmu):
    """A tree, a loop, one with user outputs and reactions, one with outputs and an input (held at
    0): fmpy's Co-Simulation run at solver_rtol 1e-10 within CS_TOL of each signal's scale."""
    pytest.importorskip("fmpy")
    check = assert_matches_reference(built_fmu(MODELS / f"{stem}.py"), MODELS / f"{stem}.py")
    print(check)
    assert check.deviation <= CS_TOL
