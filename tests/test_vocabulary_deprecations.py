"""One vocabulary (issue 24 item 4): every old spelling of a public name keeps working for one
release and says which new one to use; the new spellings say nothing; an old and a new name for
the same setting given together are refused before any work.

The words are those of docs/architecture.md's glossary: ``method`` (not ``solver``) for the
integration method, ``kind`` (not ``backend``) for the FMU kind, the runner's ``Result.t``,
``Result.columns`` and ``plot(path, signals=...)``, ``mbsfmu.study.batch`` (not
``mbsfmu.study.runner``), the sizes ``Equations.m`` and ``Equations.mh``.  The suite turns these
DeprecationWarnings into errors (pyproject.toml), so everything outside this file uses the new
spellings.
"""

import re
import warnings

import numpy as np
import pytest
from fmu_support import MODELS, Slave

import mbsfmu
from mbsfmu.core.errors import ParameterError
from mbsfmu.runner.result import Result as DiagramResult

fmpy = pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")

CART = MODELS / "cart_pendulum.py"
KINDS = ("native", "pythonfmu")
#: what every deprecation says after the old spelling
GOES_AWAY = "is deprecated and goes away in the next release: use "


def deprecation(old: str, new: str) -> str:
    """The regular expression of the DeprecationWarning of ``old`` that names ``new``."""
    return "^" + re.escape(f"{old} {GOES_AWAY}{new}") + "$"


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    """The cart-pendulum as FMUs of both kinds, built with the new keywords (method 'stiff')."""
    out = tmp_path_factory.mktemp("vocabulary")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new spellings do not warn
        return {kind: mbsfmu.build_fmu(CART, out / kind / "cart.fmu", kind=kind, method="stiff")
                for kind in KINDS}


def start_value(path, name):
    md = fmpy.read_model_description(str(path))
    return next(v for v in md.modelVariables if v.name == name)


# ---------------------------------------------------------------- build_fmu's keywords
def test_new_keywords_build_without_a_warning(fmus):
    """kind= and method= (by a canonical name or an alias) say nothing; the FMU starts with the
    method asked for, and its deprecated variable 'solver' follows it."""
    for kind in KINDS:
        method, solver = start_value(fmus[kind], "method"), start_value(fmus[kind], "solver")
        assert (method.type, method.start, solver.type, solver.start) == ("Integer", "1", "Integer", "1")
        variables = fmpy.read_model_description(str(fmus[kind])).modelVariables
        assert solver.valueReference == max(v.valueReference for v in variables)  # the last one
        assert "deprecated" in solver.description and "'method'" in solver.description


def test_solver_keyword_warns_and_chooses_the_method(tmp_path):
    with pytest.warns(DeprecationWarning, match=deprecation("build_fmu(solver=...)", "method=")) as caught:
        path = mbsfmu.build_fmu(CART, tmp_path / "old.fmu", solver="dop853")
    assert len(caught) == 1 and caught[0].filename == __file__  # points at the caller
    assert start_value(path, "method").start == "2"


def test_backend_keyword_warns_and_chooses_the_kind(tmp_path):
    """backend='pythonfmu' is the pythonfmu kind: it wants the model file, as kind='pythonfmu'
    does (the refusal shows which kind was chosen; nothing is built)."""
    system = mbsfmu.load_model(CART)
    with pytest.warns(DeprecationWarning, match=deprecation("build_fmu(backend=...)", "kind=")), \
            pytest.raises(ParameterError, match=r"^the pythonfmu kind bundles the model file: pass its path, "
                                                r"not a System$"):
        mbsfmu.build_fmu(system, tmp_path / "old.fmu", backend="pythonfmu")
    with pytest.raises(ParameterError, match=r"^the pythonfmu kind bundles the model file"):
        mbsfmu.build_fmu(system, tmp_path / "new.fmu", kind="pythonfmu")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("old, new, value", [("solver", "method", "stiff"), ("backend", "kind", "native")])
def test_an_old_and_its_new_keyword_together_are_refused(tmp_path, old, new, value):
    message = (f"build_fmu: {old}= and {new}= name the same setting ({old}= is its deprecated name): "
               f"give only {new}=")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused before any deprecation is said
        with pytest.raises(ParameterError, match="^" + re.escape(message) + "$"):
            mbsfmu.build_fmu(CART, tmp_path / "x.fmu", **{old: value, new: value})
    assert not list(tmp_path.iterdir())


def test_the_kinds_own_builders_take_the_old_keyword(tmp_path):
    """build_native_fmu and build_pythonfmu, public too, say the same (the refusal of an unknown
    method comes after the warning: the value was taken as the method)."""
    from mbsfmu.fmu.native import build_native_fmu
    from mbsfmu.fmu.pythonfmu_export import build_pythonfmu

    for build, name in ((build_native_fmu, "build_native_fmu"), (build_pythonfmu, "build_pythonfmu")):
        with pytest.warns(DeprecationWarning, match=deprecation(f"{name}(solver=...)", "method=")), \
                pytest.raises(ParameterError, match=r"^method must be one of .* got 'radau5'$"):
            build(CART, tmp_path / "x.fmu", solver="radau5")
    assert not list(tmp_path.iterdir())


# ---------------------------------------------------------------- the command line
def test_cli_old_options_work_with_a_note(tmp_path, capsys):
    from mbsfmu.cli import main

    assert main(["build", str(CART), "-o", str(tmp_path / "old.fmu"), "--solver", "stiff",
                 "--backend", "native"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["mbsfmu: warning: --backend is deprecated and goes away in the next release: use --kind",
                   "mbsfmu: warning: --solver is deprecated and goes away in the next release: use --method"]
    assert start_value(tmp_path / "old.fmu", "method").start == "1"


def test_cli_new_options_say_nothing_and_both_are_refused(tmp_path, capsys):
    from mbsfmu.cli import build_parser, main

    text = build_parser()._subparsers._group_actions[0].choices["build"].format_help()
    assert "--kind" in text and "--method" in text and "--solver" not in text and "--backend" not in text
    assert main(["build", str(CART), "-o", str(tmp_path / "new.fmu"), "--method", "dop853",
                 "--kind", "native"]) == 0
    assert capsys.readouterr().err == ""
    assert start_value(tmp_path / "new.fmu", "method").start == "2"
    assert main(["build", str(CART), "-o", str(tmp_path / "both.fmu"), "--solver", "stiff",
                 "--method", "stiff"]) == 2
    assert capsys.readouterr().err == ("mbsfmu: error: --solver and --method name the same setting (--solver "
                                       "is its deprecated name): give only --method\n")
    assert not (tmp_path / "both.fmu").exists()


# ---------------------------------------------------------------- the FMU variable 'solver'
def _deprecation_logs(messages):
    return [(status, category, text) for status, category, text in messages if "deprecated" in text]


@pytest.mark.parametrize("kind", KINDS)
def test_fmu_variable_solver_sets_method_and_logs_a_warning(fmus, tmp_path, kind):
    """Setting 'solver' through fmpy sets 'method' (read back under both names) and logs one
    warning through the FMU's logger (category logStatusWarning, status warning); the call
    itself succeeds.  Setting 'method' logs nothing."""
    old = Slave(fmus[kind], tmp_path, "old", folder=kind)
    old.instantiate(logging_on=True)
    assert old.start(integers={"solver": 2}) == 0  # fmi2OK
    old.fmu.setInteger([old.vr["solver"]], [0])  # a second set: said once per instance
    vr_old, vr_new = old.vr["solver"], old.vr["method"]
    assert old.fmu.getInteger([vr_new, vr_old]) == [0, 0]
    logs = _deprecation_logs(old.messages)
    assert len(logs) == 1, logs
    status, category, text = logs[0]
    assert (status, category) == (1, "logStatusWarning")  # fmi2Warning
    assert re.search(rf"^fmi2SetInteger(?: at t=0\.0)?: the variable 'solver' \(value reference {vr_old}\) "
                     rf"is deprecated and goes away in the next release: use 'method' \(value reference "
                     rf"{vr_new}\), which it sets$", text), text
    rows_old = old.run(0.0, 20, 0.01)
    new = Slave(fmus[kind], tmp_path, "new", folder=kind)
    new.instantiate(logging_on=True)
    new.start(integers={"method": 0})
    assert _deprecation_logs(new.messages) == []
    assert np.array_equal(new.run(0.0, 20, 0.01), rows_old)  # the same method ran: bit for bit
    for s in (old, new):
        s.free()


@pytest.mark.parametrize("kind", KINDS)
def test_fmu_variable_solver_through_simulate_fmu(fmus, kind):
    """fmpy.simulate_fmu with the start value 'solver' runs as with 'method'."""
    kw = {"stop_time": 0.2, "output_interval": 0.01}
    old = fmpy.simulate_fmu(str(fmus[kind]), start_values={"solver": 0}, **kw)
    new = fmpy.simulate_fmu(str(fmus[kind]), start_values={"method": 0}, **kw)
    stiff = fmpy.simulate_fmu(str(fmus[kind]), **kw)  # the build's method, stiff
    assert all(np.array_equal(old[n], new[n]) for n in new.dtype.names)
    assert not np.array_equal(old["theta"], stiff["theta"])  # ... which is another method


@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_value_of_solver_is_refused_naming_it(fmus, tmp_path, kind):
    from fmpy.fmi1 import FMICallException

    s = Slave(fmus[kind], tmp_path, "bad", folder=kind)
    s.start()
    with pytest.raises(FMICallException):
        s.fmu.setInteger([s.vr["solver"]], [7])
    assert "solver" in s.errors()[-1] and "7" in s.errors()[-1] and "0 (rkstab" in s.errors()[-1]
    assert s.fmu.getInteger([s.vr["method"]]) == [1]  # unchanged
    with pytest.raises(FMICallException):
        s.fmu.getReal([s.vr["solver"]])
    assert "'solver'" in s.errors()[-1] and "Integer" in s.errors()[-1]
    s.free()


# ---------------------------------------------------------------- simulate's method names
def test_dop853_and_scipys_spelling_are_one_method():
    """'dop853' is the canonical name, scipy's 'DOP853' stays accepted (no warning) and runs the
    same steps on both backends; the statistics say 'dop853'."""
    kw = {"t_end": 0.5, "dt": 0.1, "rtol": 1e-9}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for backend in ("c", "numpy"):
            a = mbsfmu.simulate(CART, method="dop853", backend=backend, **kw)
            b = mbsfmu.simulate(CART, method="DOP853", backend=backend, **kw)
            assert a.stats["method"] == b.stats["method"] == "dop853"
            assert np.array_equal(a.y, b.y) and a.stats["nfev"] == b.stats["nfev"]


# ---------------------------------------------------------------- sizes
def test_equations_sizes_by_their_letters():
    eqs = mbsfmu.derive(mbsfmu.load_model(MODELS / "slider_crank.py"))
    assert (eqs.f, eqs.m, eqs.mh) == (3, 2, 2)
    for old, new in (("n_constraints", "m"), ("n_holonomic", "mh")):
        with pytest.warns(DeprecationWarning, match=deprecation(f"Equations.{old}", f"Equations.{new}")):
            assert getattr(eqs, old) == getattr(eqs, new)


# ---------------------------------------------------------------- the runner's Result
def test_runner_result_old_names():
    r = DiagramResult(np.array([0.0, 0.5]), ["a.y"], [[1.0], [2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert r.columns == ["time", "a.y"] and np.array_equal(r["time"], r.t) and "time" in r
    with pytest.warns(DeprecationWarning, match=deprecation("runner Result.time",
                                                            "Result.t (as mbsfmu.Result names it)")):
        assert r.time is r.t
    with pytest.warns(DeprecationWarning, match=deprecation("runner Result.signals",
                                                            "Result.columns (time first, then the signals)")):
        assert r.signals == ("a.y",)
    with pytest.warns(DeprecationWarning, match=deprecation(
            "runner Result.plot(signals, path) with the signals first",
            "Result.plot(path, signals=...) (as mbsfmu.Result.plot takes them)")):
        fig = r.plot(["a.y"])
    assert len(fig.axes) == 1


# ---------------------------------------------------------------- the sweep's batches
def test_study_runner_module_is_the_batch_module():
    import sys

    import mbsfmu.study.batch as batch

    sys.modules.pop("mbsfmu.study.runner", None)
    with pytest.warns(DeprecationWarning, match=deprecation(
            "the module mbsfmu.study.runner", "mbsfmu.study.batch (the sweep's batches on Dask)")) as caught:
        import mbsfmu.study.runner as old
    assert old is batch and caught[0].filename == __file__
