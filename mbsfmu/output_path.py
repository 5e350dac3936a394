"""Where a result goes: the path of an output file, checked before any work is done, so that a
long computation never ends in a file that cannot be written (used by the CLI for --out and
--plot, and by the analysis plots)."""

from __future__ import annotations

import os
import pathlib
import tempfile

from .errors import ParameterError


def check_output_path(path: str, option: str) -> pathlib.Path:
    """The path of an output file, checked before any work: its folder exists and is writable,
    and it is not itself a folder."""
    p = pathlib.Path(path)
    folder = p.parent if str(p.parent) else pathlib.Path(".")
    if p.is_dir():
        raise ParameterError(f"{option} {path!r} is a directory; give a file name")
    if not folder.is_dir():
        raise ParameterError(f"{option} {path!r}: the directory {str(folder)!r} does not exist")
    try:  # a real write (os.access says yes to root on a read-only file system)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".mbsfmu-probe-"):
            pass
    except OSError as exc:
        raise ParameterError(f"{option} {path!r}: cannot write in {str(folder)!r} "
                             f"({exc.strerror})") from None
    if p.exists() and not os.access(p, os.W_OK):
        raise ParameterError(f"{option} {path!r}: the file exists and is not writable")
    return p
