"""The whole trajectories of a study's runs, when asked for, next to its rows.

``trajectories=DIR`` writes one CSV file per run, ``DIR/run_000012.csv`` (the columns of
:meth:`mbsfmu.Result.to_csv`: time, coordinates, velocities, constraint residual; for an FMU
every variable fmpy recorded), as each batch finishes.  ``trajectories=FILE.npz`` keeps them in
one array file: one structured array per run under the key ``run_000012``; the runs are kept in
``FILE.npz.parts/`` as they finish and packed into FILE.npz when the sweep ends, so an
interrupted sweep loses none and its restart packs them all.  A failed run has no trajectory.
Floats are written exactly (``repr`` in CSV, binary in .npz).
"""

from __future__ import annotations

import pathlib
import shutil

import numpy as np

from ..errors import ParameterError


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
        from .results import read_rows  # the exact float read-back of the rows file

        found = {int(f.stem[4:]): read_rows(f).to_records(index=False) for f in sorted(p.glob("run_*.csv"))}
    if run is None:
        return found
    if run not in found:
        raise ParameterError(f"no trajectory of run {run} in {str(p)!r}")
    return found[run]


class TrajectoryStore:
    """Where a sweep puts its trajectories (module docstring)."""

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.packed = self.path.suffix.lower() == ".npz"
        self.folder = self.path.with_name(self.path.name + ".parts") if self.packed else self.path
        if self.folder.exists() and not self.folder.is_dir():
            raise ParameterError(f"trajectories {str(self.folder)!r} exists and is not a folder")
        self.folder.mkdir(parents=True, exist_ok=True)

    def write(self, run: int, traj: np.ndarray) -> None:
        if self.packed:
            np.save(self.folder / f"{key(run)}.npy", traj, allow_pickle=False)
            return
        names = traj.dtype.names
        with open(self.folder / f"{key(run)}.csv", "w") as fh:
            fh.write(",".join(names) + "\n")
            for row in traj:
                fh.write(",".join(repr(float(v)) for v in row) + "\n")

    def finish(self) -> None:
        """Pack the runs into the one array file (with those it held from before)."""
        if not self.packed:
            return
        runs = {}
        if self.path.exists():
            with np.load(self.path) as z:
                runs.update({k: z[k] for k in z.files})
        for f in sorted(self.folder.glob("run_*.npy")):
            runs[f.stem] = np.load(f, allow_pickle=False)
        tmp = self.path.with_name(self.path.name + ".tmp.npz")
        np.savez(tmp, **runs)
        tmp.replace(self.path)
        shutil.rmtree(self.folder, ignore_errors=True)
