"""The times of one ``simulate`` call, kept apart so that each number means one thing.

``Result.stats`` holds

* ``setup_seconds``: wall time from the call to the start of the integration: the equations
  with the given parameter values, the formulation, generating and compiling or loading code,
  the consistent initial state;
* ``compile_seconds``: the part of the set-up spent generating and compiling the model's C code
  or loading it from the compile cache (the engine's extension module, or the C kernel of a
  scipy method; 0 on the numpy backend and when this process has loaded it before);
* ``run_seconds``: wall time of the integration over the output grid;
* ``cpu_seconds``: CPU time of this process (all its threads, ``time.process_time``) during
  that integration: the cost of the method itself, whatever else the machine is doing.  The
  compiler runs in processes of its own and never counts here.
"""

from __future__ import annotations

import contextlib
import time


class RunClock:
    """Started when ``simulate`` is called; :meth:`compiling` times code generation and loading,
    :meth:`start_run` / :meth:`stop_run` the integration; :meth:`stats` gives the four numbers
    (the run counted up to now if it has not stopped, as for a failed or interrupted run)."""

    def __init__(self):
        self.entry = time.perf_counter()
        self.compile = 0.0
        self._run = None  # (wall, cpu) at the start of the run
        self._ran = None  # (wall, cpu) of the finished run

    @contextlib.contextmanager
    def compiling(self):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.compile += time.perf_counter() - start

    def start_run(self) -> None:
        self._run = (time.perf_counter(), time.process_time())
        self._ran = None

    def stop_run(self) -> None:
        if self._run is not None and self._ran is None:
            self._ran = (time.perf_counter() - self._run[0], time.process_time() - self._run[1])

    def stats(self) -> dict:
        if self._run is None:  # stopped before the integration started
            return {"setup_seconds": time.perf_counter() - self.entry, "compile_seconds": self.compile,
                    "run_seconds": 0.0, "cpu_seconds": 0.0}
        wall, cpu = self._ran or (time.perf_counter() - self._run[0], time.process_time() - self._run[1])
        return {"setup_seconds": self._run[0] - self.entry, "compile_seconds": self.compile,
                "run_seconds": wall, "cpu_seconds": cpu}


def timing_text(stats: dict) -> str:
    """The times of ``stats`` as the CLI and the demo print them: "run 0.88 ms (0.88 ms CPU),
    set-up 4.41 s (C code generated and compiled or loaded in 4.36 s)" (the part in brackets
    only where the call made or loaded C code)."""
    text = (f"run {_duration(stats['run_seconds'])} ({_duration(stats['cpu_seconds'])} CPU), set-up "
            f"{_duration(stats['setup_seconds'])}")
    if stats.get("compile_seconds", 0.0) >= 0.0005:
        text += f" (C code generated and compiled or loaded in {_duration(stats['compile_seconds'])})"
    return text


def _duration(seconds: float) -> str:
    return f"{seconds * 1e3:.2g} ms" if seconds < 0.1 else f"{seconds:.3g} s"
