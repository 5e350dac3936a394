"""Property tests of a sweep's rows file (issue 23): whatever happens to the file between two
calls - cut off at any byte, a field changed, a row repeated, rows reordered or dropped, several
of these at once - the resumed sweep returns exactly the rows of a fresh sweep (every column
but wall_s, the metrics bit for bit), leaves a file that reads back as those rows in run order,
and a third call takes every row from that file and runs nothing.

The sweep is the cart pendulum over 6 runs, two of which fail (a negative cart mass), with
t_end = 0.05 on the synchronous scheduler: about 20 ms per sweep once the model is compiled.
40 examples per property (about 10 s); FUZZ_N=400 in the environment tries more.
"""

import csv
import io
import os
import pathlib
import shutil
import tempfile
import warnings

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mbsfmu
from mbsfmu.core.errors import StudyWarning
from mbsfmu.study.results import read_rows

ROOT = pathlib.Path(__file__).resolve().parents[2]
CART = str(ROOT / "models" / "cart_pendulum.py")
DESIGN = {"m": [0.1, 0.2], "mc": [1.0, -1.0, 2.0]}
OPTIONS = dict(t_end=0.05, metrics={"theta_max": "max(theta)", "x_end": "final(x)", "s": "settling(theta)"},
               scheduler="synchronous", batch=2)
EXAMPLES = settings(max_examples=int(os.environ.get("FUZZ_N", 40)), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _sweep(out, **extra):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StudyWarning)  # damaged rows are said; here they are counted
        return mbsfmu.sweep(CART, DESIGN, out=out, **OPTIONS, **extra)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A finished sweep: its rows, its file's text and its definition file."""
    folder = tmp_path_factory.mktemp("fresh")
    df = _sweep(folder / "rows.csv")
    assert df["status"].tolist().count("failed") == 2 and len(df) == 6
    return df, (folder / "rows.csv").read_text(), folder / "rows.csv.definition.json"


def _records(text: str) -> tuple[str, list[list[str]]]:
    header, _, body = text.partition("\n")
    return header, list(csv.reader(io.StringIO(body)))


def _text(header: str, rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return header + "\n" + out.getvalue()


# one damage: (kind, parameters drawn per kind)
FIELD_TEXT = st.one_of(st.sampled_from(["", "ok", "failed", "nan", "-1", "7", "1.5", "0.1", "OK", " ok",
                                        "1e308", "inf", "0.10000000000000001"]),
                       st.text(max_size=12))
DAMAGE = st.one_of(
    st.tuples(st.just("change"), st.integers(0, 5), st.integers(0, 9), FIELD_TEXT),
    st.tuples(st.just("repeat"), st.integers(0, 5), st.integers(0, 6)),
    st.tuples(st.just("reorder"), st.permutations(range(6))),
    st.tuples(st.just("drop"), st.sets(st.integers(0, 5), max_size=6)),
)


def _damage(text: str, damages, cut) -> str:
    header, rows = _records(text)
    for d in damages:
        if d[0] == "change" and d[1] < len(rows):
            row = list(rows[d[1]])
            row[d[2] % len(row)] = d[3]
            rows[d[1]] = row
        elif d[0] == "repeat" and d[1] < len(rows):
            rows.insert(min(d[2], len(rows)), list(rows[d[1]]))
        elif d[0] == "reorder":
            rows = [rows[i] for i in d[1] if i < len(rows)] + rows[len(d[1]):]
        elif d[0] == "drop":
            rows = [r for i, r in enumerate(rows) if i not in d[1]]
    data = _text(header, rows)
    return data if cut is None else data[: cut % (len(data) + 1)]


def _same_rows(got: pd.DataFrame, want: pd.DataFrame):
    pd.testing.assert_frame_equal(got.drop(columns="wall_s"), want.drop(columns="wall_s"), check_exact=True)


@pytest.mark.slow
@EXAMPLES
@given(damages=st.lists(DAMAGE, min_size=1, max_size=3), cut=st.one_of(st.none(), st.integers(0, 10**6)))
def test_a_damaged_rows_file_resumes_to_the_fresh_rows(fresh, damages, cut):
    want, text, definition = fresh
    with tempfile.TemporaryDirectory() as d:
        out = pathlib.Path(d) / "rows.csv"
        out.write_text(_damage(text, damages, cut))
        shutil.copy(definition, pathlib.Path(d) / definition.name)
        got = _sweep(out)
        _same_rows(got, want)
        back = read_rows(out)
        assert back["run"].tolist() == list(range(len(want)))  # consistent, in run order, no copies
        _same_rows(back.assign(message=back["message"].fillna("")), got)
        again = _sweep(out)
        assert again.attrs["resume"]["taken"] == len(want) and again.attrs["resume"]["ran"] == 0
        assert not again.attrs["resume"]["damaged"]
        _same_rows(again, want)


@EXAMPLES
@given(cut=st.integers(0, 10**6))
def test_a_file_cut_off_at_any_byte_keeps_every_complete_row(fresh, cut):
    """A crash while appending leaves a prefix of the file: every row complete before the cut
    is taken (none run again), the one cut off is run again."""
    want, text, definition = fresh
    cut = cut % (len(text) + 1)
    complete = max(text[:cut].count("\n") - 1, 0)  # whole rows before the cut
    with tempfile.TemporaryDirectory() as d:
        out = pathlib.Path(d) / "rows.csv"
        out.write_text(text[:cut])
        shutil.copy(definition, pathlib.Path(d) / definition.name)
        got = _sweep(out)
        _same_rows(got, want)
        assert got.attrs["resume"]["taken"] == complete
        assert got.attrs["resume"]["ran"] == len(want) - complete
