"""Parameter studies (issue 23): a resumed sweep never returns stale or damaged rows.

The rows file's definition (what changed is named, the ways to start over or keep the rows),
the rows that count as done (cut off, bad status, run outside the design or not whole, repeated,
parameters not the design's: each run again with a warning naming file and line), failed rows
run again on request, what a resumed call says it took and ran, the file in run order at the
end, fixed values given to the sweep, and the trajectory files (atomic, a damaged part named).
The bad inputs themselves are catalogued in tests/fuzz/test_catalogue_sweep.py, random damage
to the rows file in tests/fuzz/test_fuzz_sweep_rows.py.
"""

import json
import logging
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import mbsfmu
from mbsfmu.cli import main
from mbsfmu.core.errors import ParameterError, StudyWarning
from mbsfmu.study import definition, trajectories
from mbsfmu.study.results import checksum, read_rows

CART = "models/cart_pendulum.py"
DESIGN = {"m": [0.1, 0.15, 0.2, 0.25]}
OPTIONS = dict(t_end=0.3, metrics={"th": "max(theta)", "x_end": "final(x)"}, scheduler="synchronous")


def _fresh(tmp_path, **extra):
    return mbsfmu.sweep(CART, DESIGN, out=tmp_path / "fresh.csv", **{**OPTIONS, **extra})


def _lines(path):
    return path.read_text().splitlines(keepends=True)


def _same(got, want):
    pd.testing.assert_frame_equal(got.drop(columns="wall_s"), want.drop(columns="wall_s"), check_exact=True)


def test_t_end_changed_is_refused_naming_it_and_keep_or_restart_are_on_purpose(tmp_path):
    out = tmp_path / "study.csv"
    short = mbsfmu.sweep(CART, DESIGN, out=out, **OPTIONS)
    with pytest.raises(ParameterError) as info:
        mbsfmu.sweep(CART, DESIGN, out=out, **{**OPTIONS, "t_end": 3.0})
    assert "t_end: 0.3 in study.csv, 3.0 now" in str(info.value)
    kept = mbsfmu.sweep(CART, DESIGN, out=out, resume="keep", **{**OPTIONS, "t_end": 3.0})
    _same(kept, short)  # the old rows, kept on purpose
    long = mbsfmu.sweep(CART, DESIGN, out=out, resume="restart", **{**OPTIONS, "t_end": 3.0})
    want = [mbsfmu.simulate(CART, t_end=3.0, params={"m": m})["x"][-1] for m in DESIGN["m"]]
    assert long["x_end"].tolist() == want  # run again to t_end = 3, bit for bit
    assert read_rows(tmp_path / "study.old-1.csv")["x_end"].tolist() == short["x_end"].tolist()
    # a metric redefined under the same name is no column that mixes max and min
    with pytest.raises(ParameterError, match=r"metric th: max\(theta\) in study.csv, min\(theta\) now"):
        mbsfmu.sweep(CART, DESIGN, out=out, **{**OPTIONS, "t_end": 3.0, "metrics": {"th": "min(theta)",
                                                                                      "x_end": "final(x)"}})


@pytest.mark.parametrize("label, damage, line", [
    ("cut off", lambda lines: lines[:-1] + [lines[-1][:25]], 5),
    ("status", lambda lines: lines[:2] + [lines[2].replace(",ok,", ",done,")] + lines[3:], 3),
    ("run -1", lambda lines: lines + [_row("-1", lines[4])], 6),
    ("run 4 of 4", lambda lines: lines + [_row("4", lines[4])], 6),
    ("run 1.5", lambda lines: lines[:2] + [_row("1.5", lines[2])] + lines[3:], 3),
    ("run repeated", lambda lines: lines + [lines[2]], 3),
    ("parameter", lambda lines: lines[:3] + [_row("2", lines[3], m="0.21")] + lines[4:], 4),
])
def test_unsound_rows_are_run_again_and_named(tmp_path, label, damage, line):
    want = _fresh(tmp_path)
    out = tmp_path / "rows.csv"
    out.write_text("".join(damage(_lines(tmp_path / "fresh.csv"))))
    (tmp_path / "rows.csv.definition.json").write_bytes((tmp_path / "fresh.csv.definition.json").read_bytes())
    with pytest.warns(StudyWarning, match=rf"rows.csv: \d row\(s\) are not sound and are run again:\n.*"
                                          rf"rows.csv line {line}: "):
        got = mbsfmu.sweep(CART, DESIGN, out=out, **OPTIONS)
    _same(got, want)  # never the damaged row: 4 rows, status ok, the fresh values
    assert got.attrs["resume"]["damaged"] and got.attrs["resume"]["taken"] + got.attrs["resume"]["ran"] == 4
    back = read_rows(out)  # the file ends consistent: one row per run, in run order
    assert back["run"].tolist() == [0, 1, 2, 3] and back["x_end"].tolist() == want["x_end"].tolist()


def _row(run, line, m=None):
    """A copy of a rows-file line with another run number (and value of m), checksum made right:
    only the rules on runs and parameters can find it."""
    fields = line.rstrip("\n").split(",")[:-1]
    fields[0] = run
    if m is not None:
        fields[1] = m
    return ",".join([*fields, checksum(fields)]) + "\n"


def test_each_damage_is_named_with_its_reason(tmp_path):
    _fresh(tmp_path)
    lines = _lines(tmp_path / "fresh.csv")
    out = tmp_path / "rows.csv"
    out.write_text("".join([lines[0], _row("-1", lines[1]), _row("1.5", lines[2]), lines[3],
                            lines[3].replace(",ok,", ",okay,"), lines[4][:20]]))
    (tmp_path / "rows.csv.definition.json").write_bytes((tmp_path / "fresh.csv.definition.json").read_bytes())
    with pytest.warns(StudyWarning) as caught:
        got = mbsfmu.sweep(CART, DESIGN, out=out, **OPTIONS)
    text = str(caught[0].message)
    assert "rows.csv line 2: run -1 is not a run of the design (0 to 3)" in text
    assert "rows.csv line 3: run '1.5' is not a whole number" in text
    assert "rows.csv line 5: status 'okay' is none of ok, unstable, not settled, diverged, failed" in text
    assert "rows.csv line 6: cut off (the file ends inside it)" in text
    assert got.attrs["resume"]["taken"] == 1 and got.attrs["resume"]["ran"] == 3


def test_failed_rows_are_taken_with_a_warning_and_retried_on_request(tmp_path, caplog):
    out = tmp_path / "rows.csv"
    broken = [True]

    def theta_end(result):  # fails while "broken", like a metric with a bug fixed between calls
        if broken[0]:
            raise RuntimeError("metric bug")
        return float(result["theta"][-1])

    options = {**OPTIONS, "metrics": {"te": theta_end}}
    first = mbsfmu.sweep(CART, DESIGN, out=out, **options)
    assert (first["status"] == "failed").all() and "metric bug" in first["message"][0]
    broken[0] = False
    with pytest.warns(StudyWarning, match=r"4 failed row\(s\) taken from the file as they are \(run\(s\) "
                                          r"0, 1, 2, 3\); retry_failed=True \(--retry-failed\) runs them "
                                          r"again"):
        with caplog.at_level(logging.INFO, logger="mbsfmu.study"):
            again = mbsfmu.sweep(CART, DESIGN, out=out, **options)
    assert (again["status"] == "failed").all()
    assert again.attrs["resume"] == {"file": str(out), "taken": 4, "failed_taken": 4, "ran": 0, "damaged": [],
                                     "retried": [], "moved": []}
    assert "4 row(s) taken from the file (4 failed), 0 run(s) to run" in caplog.text
    with warnings.catch_warnings():
        warnings.simplefilter("error", StudyWarning)  # nothing to warn about now
        fixed = mbsfmu.sweep(CART, DESIGN, out=out, retry_failed=True, **options)
    assert (fixed["status"] == "ok").all() and fixed.attrs["resume"]["retried"] == [0, 1, 2, 3]
    want = [mbsfmu.simulate(CART, t_end=0.3, params={"m": m})["theta"][-1] for m in DESIGN["m"]]
    assert fixed["te"].tolist() == want
    assert read_rows(out)["status"].tolist() == ["ok"] * 4  # rewritten, no second copy of the runs


def test_cli_says_what_it_took_and_retries_failed_rows(tmp_path, capsys):
    out = tmp_path / "rows.csv"
    args = ["sweep", CART, "--param", "mc=1.0,-1.0", "--metric", "th=max(theta)", "--t-end", "0.3", "--out",
            str(out), "--scheduler", "synchronous"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "resumed " + str(out) + ": 2 rows taken from the file (1 failed), 0 runs run" in captured.out
    assert "mbsfmu: warning: " in captured.err and "--retry-failed" in captured.err
    assert main([*args, "--retry-failed"]) == 0
    assert "0 damaged rows and 1 failed rows run again" in capsys.readouterr().out
    longer = [a if a != "0.3" else "3" for a in args]
    assert main(longer) == 2 and "t_end: 0.3 in rows.csv, 3.0 now" in capsys.readouterr().err
    assert main([*longer, "--resume", "restart"]) == 0
    assert f"moved {out} aside to {tmp_path / 'rows.old-1.csv'}" in capsys.readouterr().out
    assert main([*args, "--resume", "keep"]) == 0  # the t_end = 3 rows, kept on purpose under t_end = 0.3
    assert "2 rows taken from the file (1 failed), 0 runs run" in capsys.readouterr().out


def test_a_finished_file_is_in_run_order(tmp_path):
    """Rows are appended as they finish (here: runs 2 and 3 first, then 0 and 1); the finished
    file is in run order, CSV and Parquet."""
    for name in ("rows.csv", "rows.parquet"):
        out = tmp_path / name
        first = mbsfmu.sweep(CART, DESIGN, out=out, **OPTIONS)
        rows = out if name.endswith(".csv") else tmp_path / "late.csv"
        if name.endswith(".parquet"):  # stopped before the end: its rows in the partial CSV, late first
            out.unlink()
            rows = tmp_path / "rows.parquet.partial.csv"
            mbsfmu.sweep(CART, DESIGN, out=tmp_path / "late.csv", **OPTIONS)
            lines = _lines(tmp_path / "late.csv")
        else:
            lines = _lines(out)
        rows.write_text("".join([lines[0], lines[3], lines[4]]))  # runs 2 and 3 done
        again = mbsfmu.sweep(CART, DESIGN, out=out, **OPTIONS)
        assert again.attrs["resume"]["taken"] == 2 and again.attrs["resume"]["ran"] == 2
        back = read_rows(out)
        assert back["run"].tolist() == [0, 1, 2, 3]
        for c in ("m", "th", "x_end", "status"):
            assert back[c].tolist() == first[c].tolist()


def test_a_parquet_study_stopped_with_a_row_cut_off_keeps_its_sound_rows(tmp_path):
    """Rows grow in OUT.partial.csv until a Parquet study ends: a cut-off row there is run again,
    the sound ones stay on disk also if the resumed call is stopped again."""
    stop = [False]

    def x_end(result):
        if stop[0]:
            raise KeyboardInterrupt
        return float(result["x"][-1])

    options = {**OPTIONS, "metrics": {"x_end": x_end}}
    want = mbsfmu.sweep(CART, DESIGN, out=tmp_path / "fresh.csv", **options)
    out, partial = tmp_path / "rows.parquet", tmp_path / "rows.parquet.partial.csv"
    lines = _lines(tmp_path / "fresh.csv")
    partial.write_text("".join([lines[0], lines[2], lines[1], lines[3][:30]]))  # runs 1, 0 and a cut-off 2
    definition_file = tmp_path / "rows.parquet.definition.json"
    definition_file.write_bytes((tmp_path / "fresh.csv.definition.json").read_bytes())
    stop[0] = True
    with pytest.warns(StudyWarning, match=r"rows.parquet.partial.csv line 4: cut off"):
        with pytest.raises(KeyboardInterrupt):
            mbsfmu.sweep(CART, DESIGN, out=out, **options)
    assert read_rows(partial)["run"].tolist() == [0, 1]  # rewritten without the cut-off row, none lost
    stop[0] = False
    got = mbsfmu.sweep(CART, DESIGN, out=out, **options)
    _same(got, want)
    assert got.attrs["resume"]["taken"] == 2 and got.attrs["resume"]["ran"] == 2
    assert pd.read_parquet(out)["run"].tolist() == [0, 1, 2, 3] and not partial.exists()
    again = mbsfmu.sweep(CART, DESIGN, out=out, retry_failed=True, **options)  # nothing failed: none run
    assert again.attrs["resume"]["taken"] == 4 and again.attrs["resume"]["ran"] == 0


def test_rows_of_the_earlier_format_are_kept_on_purpose(tmp_path):
    """A rows file written before definitions and checksums (no OUT.definition.json) is refused,
    unless resume='keep': then its rows are taken, checked as rows, and rewritten with checksums."""
    want = _fresh(tmp_path)
    out = tmp_path / "old.csv"
    lines = (tmp_path / "fresh.csv").read_text().splitlines()
    old = "".join(line.rsplit(",", 1)[0] + "\r\n" for line in lines)  # no checksum, Windows line ends
    out.write_text(old)
    with pytest.raises(ParameterError, match="no definition file 'old.csv.definition.json'"):
        mbsfmu.sweep(CART, DESIGN, out=out, **OPTIONS)
    assert out.read_bytes() == old.encode()
    got = mbsfmu.sweep(CART, DESIGN, out=out, resume="keep", **OPTIONS)
    _same(got, want)
    assert got.attrs["resume"]["taken"] == 4 and got.attrs["resume"]["ran"] == 0
    assert out.read_text() == (tmp_path / "fresh.csv").read_text()  # the same rows, now with checksums
    stored = json.loads((tmp_path / "old.csv.definition.json").read_text())
    assert stored["earlier"][0]["definition"] is None and stored["definition"]["t_end"] == 0.3


def test_fixed_values_are_merged_with_every_run(tmp_path):
    """initial=, params= and inputs= given to the sweep are every run's fixed values (the
    issue's new user: sweep(..., initial={...}) failed all 40 runs with a TypeError)."""
    df = mbsfmu.sweep(CART, {"m": [0.1, 0.2]}, t_end=0.3, initial={"theta": 0.3, "Dx": 0.1},
                      params={"l": 0.6}, inputs={"F": lambda t: 0.2 * t}, metrics={"x_end": "final(x)"},
                      out=tmp_path / "rows.csv", scheduler="synchronous")
    assert (df["status"] == "ok").all(), df["message"].tolist()
    for _, row in df.iterrows():
        r = mbsfmu.simulate(CART, t_end=0.3, initial={"theta": 0.3, "Dx": 0.1},
                            params={"l": 0.6, "m": row["m"]}, inputs={"F": lambda t: 0.2 * t})
        assert row["x_end"] == r["x"][-1]  # bit for bit
    entries = json.loads((tmp_path / "rows.csv.definition.json").read_text())["definition"]
    assert entries["initial"] == {"theta": 0.3, "Dx": 0.1} and entries["params"] == {"l": 0.6}
    assert entries["inputs"]["F"].startswith("function test_sweep_resume.test_fixed_values_are_merged")


def test_a_model_file_edited_between_sweeps_is_loaded_again(tmp_path):
    """In one process (a notebook), the same path with new content is a new model: the runs use it
    and the definition sees it."""
    model = tmp_path / "cart.py"
    text = pathlib.Path(CART).read_text()
    model.write_text(text)
    a = mbsfmu.sweep(str(model), {"m": [0.1]}, t_end=0.3, metrics={"x": "final(x)"}, scheduler="synchronous")
    model.write_text(text.replace("g=9.81", "g=3.0"))
    b = mbsfmu.sweep(str(model), {"m": [0.1]}, t_end=0.3, metrics={"x": "final(x)"}, scheduler="synchronous")
    assert b["x"][0] == mbsfmu.simulate(str(model), t_end=0.3, params={"m": 0.1})["x"][-1] != a["x"][0]


PROBE = """
import sys
sys.path.insert(0, {root!r})
import mbsfmu
from mbsfmu.study import definition
print(definition.digest(lambda r: r["theta"][-1] * 2.0))
print(definition.digest(mbsfmu.load_model({model!r})))
"""


@pytest.mark.slow
def test_digests_are_the_same_in_another_process_and_change_with_the_model():
    root = os.getcwd()
    digests, lambdas = set(), set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", PROBE.format(root=root, model=CART)], capture_output=True,
                             text=True, env=env, cwd=root, timeout=120)
        assert out.returncode == 0, out.stderr
        lambdas.add(out.stdout.split()[-2])
        digests.add(out.stdout.split()[-1])
    here = mbsfmu.load_model(CART)
    assert digests == {definition.digest(here)}
    # a lambda metric by its name and byte code: the same in both processes, another for another body
    assert len(lambdas) == 1
    double, triple = (lambda r: r["theta"][-1] * 2.0), (lambda r: r["theta"][-1] * 3.0)
    assert definition.digest(double) != definition.digest(triple)
    mbsfmu.simulate(here, t_end=0.1)  # derived, compiled: caches are no part of the definition
    assert definition.digest(here) in digests
    here.constants_["g"].value = 9.80
    assert definition.digest(here) not in digests


def test_a_damaged_trajectory_part_is_named_and_the_rows_are_kept(tmp_path):
    out, where = tmp_path / "rows.csv", tmp_path / "runs.npz"
    calls, limit = [], [2]

    def stops(result):
        calls.append(1)
        if limit[0] is not None and len(calls) > limit[0]:
            raise KeyboardInterrupt
        return result["x"][-1]

    options = dict(t_end=0.3, dt=0.1, metrics={"x_end": stops}, out=out, trajectories=where,
                   scheduler="synchronous", batch=1)
    with pytest.raises(KeyboardInterrupt):
        mbsfmu.sweep(CART, DESIGN, **options)
    part = tmp_path / "runs.npz.parts" / "run_000001.npy"
    part.write_bytes(part.read_bytes()[:40])  # damaged on disk
    limit[0] = None
    with pytest.warns(StudyWarning, match=r"trajectory part '.*run_000001.npy' cannot be read .*: run 1 has "
                                          r"no trajectory in 'runs.npz'"):
        df = mbsfmu.sweep(CART, DESIGN, **options)
    assert len(df) == 4 and (df["status"] == "ok").all() and len(read_rows(out)) == 4
    assert sorted(trajectories.read(where)) == [0, 2, 3]
    assert not list(tmp_path.glob("*.tmp*")) and not (tmp_path / "runs.npz.parts").exists()


def test_a_damaged_trajectory_archive_is_moved_aside(tmp_path):
    where = tmp_path / "runs.npz"
    where.write_bytes(b"PK\x03\x04 not a whole zip file")
    with pytest.warns(StudyWarning, match=r"trajectories '.*runs.npz' cannot be read .*moved aside to "
                                          r"'runs.npz.damaged'"):
        df = mbsfmu.sweep(CART, {"m": [0.1]}, t_end=0.3, dt=0.1, trajectories=where, scheduler="synchronous")
    assert (df["status"] == "ok").all()
    assert (tmp_path / "runs.npz.damaged").read_bytes().startswith(b"PK\x03\x04 not")
    assert sorted(trajectories.read(where)) == [0]


@pytest.mark.parametrize("name", ["runs.npz", "runs"])
def test_trajectory_files_are_written_atomically(tmp_path, monkeypatch, name):
    """A stop before a trajectory file is complete leaves nothing under its name (part files,
    CSV files and the archive are written to a temporary file and renamed)."""
    store = trajectories.TrajectoryStore(tmp_path / name)
    store.open()
    traj = np.zeros(3, dtype=[("time", float), ("x", float)])
    traj["x"] = [0.1, 0.2, 1 / 3]

    def stop(self, target):
        raise KeyboardInterrupt  # stopped between writing and renaming

    with monkeypatch.context() as m:
        m.setattr(type(tmp_path), "replace", stop)
        with pytest.raises(KeyboardInterrupt):
            store.write(0, traj)
    assert not list(store.folder.glob("run_*.npy")) and not list(store.folder.glob("run_*.csv"))
    store.write(0, traj)
    if store.packed:
        with monkeypatch.context() as m:
            m.setattr(type(tmp_path), "replace", stop)
            with pytest.raises(KeyboardInterrupt):
                store.finish()
        assert not (tmp_path / "runs.npz").exists()
    store.finish()
    kept = trajectories.read(tmp_path / name, 0)
    assert all(np.array_equal(np.asarray(kept[c], dtype=float), traj[c]) for c in traj.dtype.names)


def test_a_grown_design_table_keeps_its_rows_on_purpose(tmp_path):
    out = tmp_path / "rows.csv"
    first = mbsfmu.sweep(CART, pd.DataFrame({"m": [0.1, 0.2]}), out=out, **OPTIONS)
    grown = pd.DataFrame({"m": [0.1, 0.2, 0.3]})
    with pytest.raises(ParameterError, match=r"design: 2 runs, sha256 \w+ in rows.csv, 3 runs, "):
        mbsfmu.sweep(CART, grown, out=out, **OPTIONS)
    df = mbsfmu.sweep(CART, grown, out=out, resume="keep", **OPTIONS)
    assert df.attrs["resume"]["taken"] == 2 and df.attrs["resume"]["ran"] == 1
    _same(df.iloc[:2], first)
    assert df["x_end"][2] == mbsfmu.simulate(CART, t_end=0.3, params={"m": 0.3})["x"][-1]
