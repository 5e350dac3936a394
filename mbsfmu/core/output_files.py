"""Output files, checked before any work (the CLI's options, ``Result.animate(path)``).

:func:`check_output_path` refuses a path that cannot be written (its folder missing or not
writable, the path a folder, an existing file not writable, a file that is one of the command's
inputs) with a ParameterError naming the option and the path; :func:`plot_path` adds that the suffix is
an image format matplotlib writes or .html (an interactive page); :func:`partial_path` is where the
part of a result computed before a failure or a stop goes (never over a complete result).
"""

from __future__ import annotations

import os
import pathlib
import tempfile

from .errors import ParameterError


def check_output_path(path, option: str, inputs=()) -> pathlib.Path:
    """The path of an output file, checked before any work: a file name (str or path) whose
    folder exists and is writable, not itself a folder, not an existing file that cannot be
    written, and none of the files ``inputs`` (a model file would be overwritten)."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise ParameterError(f"{option} must be a file name, got {path!r}")
    p = pathlib.Path(path)
    folder = p.parent if str(p.parent) else pathlib.Path(".")
    if p.is_dir():
        raise ParameterError(f"{option} {str(path)!r} is a directory; give a file name")
    if not folder.is_dir():
        raise ParameterError(f"{option} {str(path)!r}: the directory {str(folder)!r} does not exist")
    try:  # a real write (os.access says yes to root on a read-only file system)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".mbsfmu-probe-"):
            pass
    except OSError as exc:
        raise ParameterError(f"{option} {str(path)!r}: cannot write in {str(folder)!r} "
                             f"({exc.strerror})") from None
    if p.exists() and not os.access(p, os.W_OK):
        raise ParameterError(f"{option} {str(path)!r}: the file exists and is not writable")
    for name, given in inputs:
        if given is not None and _same_file(p, pathlib.Path(given)):
            raise ParameterError(f"{option} {str(path)!r} is the {name}: writing it would destroy it; give "
                                 "another file name")
    return p


def plot_path(path, option: str = "--plot", inputs=()) -> pathlib.Path:
    """A plot file, checked before any work as an output file (:func:`check_output_path`) whose
    suffix names an image format matplotlib writes (.png, .pdf, .svg, ...) or is .html (an
    interactive page, :mod:`mbsfmu.plotting`)."""
    p = check_output_path(path, option, inputs)
    from matplotlib.backend_bases import FigureCanvasBase

    kinds = FigureCanvasBase.get_supported_filetypes()
    suffix = p.suffix.lower().lstrip(".")
    if suffix not in kinds and suffix != "html":
        what = f"{p.suffix!r} is not an image format" if p.suffix else "no suffix says the image format"
        raise ParameterError(f"{option} {str(path)!r}: {what}; end the name in one of "
                             f"{', '.join('.' + k for k in sorted(kinds))}, or .html for an interactive page")
    return p


def _same_file(a: pathlib.Path, b: pathlib.Path) -> bool:
    if a.exists() and b.exists():
        return a.samefile(b)
    return a.resolve() == b.resolve()


def partial_path(path: pathlib.Path) -> pathlib.Path:
    """Where a partial result goes: out.csv -> out.partial.csv (never over a complete result)."""
    return path.with_name(f"{path.stem}.partial{path.suffix or '.csv'}")
