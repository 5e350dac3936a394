"""Reading a plot's interactive page (mbsfmu.plotting.plotly_figure) back: the traces and the
layout that the page hands to ``Plotly.newPlot``, arrays decoded (plotly writes numpy arrays as
base64 typed arrays), and the words of a matplotlib figure to compare them with."""

import base64
import json
import pathlib
import re

import numpy as np

PAGE_START = b"<html"


def page_figure(path) -> tuple[list[dict], dict]:
    """(traces, layout) of the figure in the page at ``path``, typed arrays as numpy arrays."""
    text = pathlib.Path(path).read_text(encoding="utf-8")
    call = re.search(r"Plotly\.newPlot\(\s*", text)
    assert call, "the page draws no plotly figure"
    decoder = json.JSONDecoder()
    rest = text[call.end():]
    _, end = decoder.raw_decode(rest)  # the div's id
    rest = rest[end:].lstrip().lstrip(",").lstrip()
    traces, end = decoder.raw_decode(rest)
    rest = rest[end:].lstrip().lstrip(",").lstrip()
    layout, _ = decoder.raw_decode(rest)
    return [_arrays(t) for t in traces], _arrays(layout)


def _arrays(value):
    if isinstance(value, dict):
        if set(value) >= {"dtype", "bdata"}:
            a = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
            shape = value.get("shape")
            return a.reshape([int(n) for n in str(shape).split(",")]) if shape else a
        return {k: _arrays(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_arrays(v) for v in value]
    return value


def page_words(layout: dict) -> dict:
    """The figure's title, the subplots' titles (non-empty, in order) and each subplot's axis
    titles (x, y) in the order of its axes (row by row)."""
    def title(axis):
        return (layout.get(axis, {}).get("title") or {}).get("text")

    n = len([k for k in layout if re.fullmatch(r"xaxis\d*", k)])
    suffixes = [""] + [str(i) for i in range(2, n + 1)]
    axes = [("xaxis" + i, "yaxis" + i) for i in suffixes]
    return {"title": (layout.get("title") or {}).get("text"),
            "panels": [a["text"] for a in layout.get("annotations", []) if a.get("text")],
            "axes": [(title(x), title(y)) for x, y in axes]}


def image_words(fig) -> dict:
    """The same words of a matplotlib Figure (colour bars are no panel)."""
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    suptitle = fig._suptitle.get_text() if fig._suptitle is not None else None
    return {"title": suptitle,
            "panels": [ax.get_title() for ax in axes if ax.get_title()],
            "axes": [(ax.get_xlabel() or None, ax.get_ylabel() or None) for ax in axes]}


def is_page(path) -> bool:
    """A self-contained page: HTML that carries plotly.js itself and loads no script from elsewhere."""
    text = pathlib.Path(path).read_bytes()
    return (PAGE_START in text[:200] and b"plotly.js v" in text
            and not re.search(rb"<script[^>]+src=", text))


def page_like_image(path, fig) -> list[dict]:
    """The traces of the page at ``path``, after checking that it is a self-contained page and
    says the words of the matplotlib Figure ``fig`` (the image's): the same figure title,
    panel titles and axis labels."""
    assert is_page(path), f"{path} is not a self-contained plotly page"
    traces, layout = page_figure(path)
    assert page_words(layout) == image_words(fig)
    return traces
