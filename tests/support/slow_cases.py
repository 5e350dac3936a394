"""Rows of a parametrized table marked ``slow`` (left out by ``ci/test --fast``, which runs
``pytest -m "not slow"``), so that a catalogue or a sweep over models keeps a representative part
in the fast subset and the long rest for the full run:

    @pytest.mark.parametrize("args, pattern", cases(CLI_CASES, fast={"t-end zero", ...}))
    @pytest.mark.parametrize("call, exc, pattern", cases(UDP_CASES, slow={"inputs beyond a datagram"}))

Name either the rows that stay fast or the rows that are slow.  A name that is not a row of the
table is an error, so renaming a row cannot move it between the subsets unnoticed.
"""

import pytest


def _label(row):
    return row[0] if isinstance(row, tuple) else row


def _values(row):
    return row[1:] if isinstance(row, tuple) else (row,)


def cases(rows, *, fast=None, slow=None, label=_label, values=_values):
    """``pytest.param(*values(row), id=label(row))`` for every row, marked slow when its label is
    in ``slow``, or not in ``fast`` (give one of the two).  A row is a tuple (label, values...)
    or a single value that is its own label."""
    if (fast is None) == (slow is None):
        raise TypeError("give either fast or slow")
    labels = [label(row) for row in rows]
    named = set(fast if slow is None else slow)
    unknown = sorted(named - set(labels))
    if unknown:
        raise ValueError(f"rows not in the table: {', '.join(unknown)}")
    return [pytest.param(*values(row), id=name,
                         marks=pytest.mark.slow if (name in named) == (slow is not None) else ())
            for row, name in zip(rows, labels)]
