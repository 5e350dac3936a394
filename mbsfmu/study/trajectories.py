"""The whole trajectories of a study's runs, when asked for, next to its rows.

``trajectories=DIR`` writes one CSV file per run, ``DIR/run_000012.csv`` (every signal of
:attr:`mbsfmu.Result.columns`: time, coordinates, velocities, constraint residual and the user
outputs; for an FMU every variable fmpy recorded), as each batch finishes.
``trajectories=FILE.npz`` keeps them in one array file: one structured array per run under the
key ``run_000012``; the runs are kept in ``FILE.npz.parts/`` as they finish and packed into
FILE.npz when the sweep ends, so an interrupted sweep loses none and its restart packs them all.
A failed run has no trajectory.
Floats are written exactly (``repr`` in CSV, binary in .npz).

Every file is written atomically (a temporary file, then a rename), so a stop mid-write leaves
the old file or the new one, never half of one.  A part file that cannot be read when the
runs are packed (damaged on disk) is left out with a :class:`~mbsfmu.core.errors.StudyWarning`
naming it, and the sweep's rows are returned and written all the same; an earlier FILE.npz
that cannot be read is moved aside to ``FILE.npz.damaged`` (named in the warning) instead of
being overwritten.
"""

from __future__ import annotations

import io
import pathlib
import shutil
import warnings
import zipfile

import numpy as np

from ..core.errors import ParameterError, StudyWarning
from .results import read_rows  # the exact float read-back of the rows file


def key(run: int) -> str:
    return f"run_{int(run):06d}"


def of_result(result) -> np.ndarray:
    """A run's trajectory as a structured array (one field per signal)."""
    if isinstance(result, np.ndarray) and result.dtype.names:
        return result  # fmpy's result
    cols = result.columns
    data = [np.asarray(result[c], dtype=float) for c in cols]
    out = np.empty(len(result.t), dtype=[(c, float) for c in cols])
    for c, d in zip(cols, data):
        out[c] = d
    return out


def read(path, run: int | None = None):
    """The trajectories written by a sweep: ``{run: structured array}``, or one run's."""
    p = pathlib.Path(path)
    if p.suffix.lower() == ".npz":
        with np.load(p) as z:
            found = {int(k[4:]): z[k] for k in z.files}
    else:
        found = {int(f.stem[4:]): read_rows(f).to_records(index=False) for f in sorted(p.glob("run_*.csv"))}
    if run is None:
        return found
    if run not in found:
        raise ParameterError(f"no trajectory of run {run} in {str(p)!r}")
    return found[run]


class TrajectoryStore:
    """Where a sweep puts its trajectories (module docstring)."""

    def __init__(self, path):
        """Checks the path (nothing is written before :meth:`open`)."""
        self.path = pathlib.Path(path)
        self.packed = self.path.suffix.lower() == ".npz"
        self.folder = self.path.with_name(self.path.name + ".parts") if self.packed else self.path
        if self.folder.exists() and not self.folder.is_dir():
            raise ParameterError(f"trajectories {str(self.folder)!r} exists and is not a folder")
        if self.packed and self.path.is_dir():
            raise ParameterError(f"trajectories {str(self.path)!r} is a folder; give a .npz file name")

    @property
    def paths(self) -> list[pathlib.Path]:
        """The files and folders the store writes."""
        return [self.path, self.folder] if self.packed else [self.path]

    def open(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)

    def write(self, run: int, traj: np.ndarray) -> None:
        if self.packed:
            buffer = io.BytesIO()
            np.save(buffer, traj, allow_pickle=False)
            _atomic(self.folder / f"{key(run)}.npy", buffer.getvalue())
            return
        names = traj.dtype.names
        lines = [",".join(names)] + [",".join(repr(float(v)) for v in row) for row in traj]
        _atomic(self.folder / f"{key(run)}.csv", ("\n".join(lines) + "\n").encode())

    def finish(self) -> None:
        """Pack the runs into the one array file (with those it held from before)."""
        if not self.packed:
            return
        runs = {}
        if self.path.exists():
            try:
                with open(self.path, "rb") as fh, np.load(fh) as z:
                    runs.update({k: z[k] for k in z.files})
            except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
                kept = self.path.with_name(self.path.name + ".damaged")
                self.path.replace(kept)
                warnings.warn(f"trajectories {str(self.path)!r} cannot be read ({exc}): moved aside to "
                              f"{kept.name!r}; the runs it held are not in the new one", StudyWarning,
                              stacklevel=3)
        for f in sorted(self.folder.glob("run_*.npy")):
            try:
                runs[f.stem] = np.load(f, allow_pickle=False)
            except (OSError, ValueError, EOFError) as exc:
                warnings.warn(f"trajectory part {str(f)!r} cannot be read ({exc}): run {int(f.stem[4:])} has "
                              f"no trajectory in {self.path.name!r}", StudyWarning, stacklevel=3)
        buffer = io.BytesIO()
        np.savez(buffer, **runs)
        _atomic(self.path, buffer.getvalue())
        shutil.rmtree(self.folder, ignore_errors=True)


def _atomic(path: pathlib.Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
