"""Real-time pacing of a diagram run (``Diagram.run(realtime=True)``).

Step ``n`` is due at the wall-clock time ``w0 + n * P`` with the period ``P = step / rtf``
(``rtf``: the wanted real-time factor, simulated seconds per wall-clock second).  Before each
step the runner sleeps (``time.sleep``) until about :data:`SPIN` before the deadline, then
busy-waits on ``time.perf_counter`` (sleep alone overshoots by up to a scheduler tick).

Measured per run:

* jitter of step ``n``: actual start minus its deadline (≥ 0), percentiles in µs;
* overruns: steps whose work ended after the next step's deadline;
* achieved real-time factor: simulated time ``t_end - t0`` over the wall time from ``w0`` to the
  start of the last step;
* ``wall_start``: ``w0`` itself (``time.perf_counter`` seconds), so that times a block or a HIL
  peer stamps with the same clock can be set against the schedule.

What happens at an overrun (``overrun=``):

* ``"catch_up"``: the schedule is kept; late steps run at once until the run is on time again
  (the achieved real-time factor stays on target if the overrun is transient);
* ``"skip"``: the schedule is re-anchored: the next step is due at the next tick of the original
  grid ``w0 + j P`` that is still in the future; the ticks jumped over are counted
  (``skipped_ticks``); simulated time is not skipped, so the run gets slower than real time;
* ``"fail"``: :class:`RealtimeError` at the first overrun, with the statistics so far.
"""

from __future__ import annotations

import gc
import math
import sys
import time

import numpy as np

from ..core.errors import SimulationError
from .scheduling import DiagramError

#: how long before a deadline sleeping stops and busy-waiting starts [s]
SPIN = 1e-3
#: Python's thread switch interval during a real-time run [s] (its default is 5 ms): the longest
#: another thread of this process (a UDP block's receiver, a thread of the user's; the live view's
#: server is a process of its own) holds the interpreter while the loop waits for it
SWITCH_INTERVAL = 1e-4
OVERRUN_POLICIES = ("catch_up", "skip", "fail")


class RealtimeError(DiagramError, SimulationError):
    """A real-time run overran with ``overrun="fail"``; ``.stats`` holds the statistics so far
    (and ``.result``, set by the diagram, the signals recorded so far)."""

    def __init__(self, message: str, stats: dict | None = None):
        super().__init__(message)
        self.stats = stats or {}
        self.result = None


class Pacer:
    """Paces ``n_steps`` steps of ``step`` simulated seconds at ``rtf``; see the module docstring."""

    def __init__(self, step: float, n_steps: int, rtf: float = 1.0, overrun: str = "catch_up"):
        if not (isinstance(rtf, (int, float)) and math.isfinite(rtf) and rtf > 0):
            raise ValueError(f"rtf must be a positive finite number, not {rtf!r}")
        if overrun not in OVERRUN_POLICIES:
            raise ValueError(f"overrun must be one of {OVERRUN_POLICIES}, not {overrun!r}")
        self.step = step
        self.rtf = float(rtf)
        self.period = step / rtf
        self.policy = overrun
        self.jitter = np.zeros(n_steps)
        self.overruns = 0
        self.skipped = 0
        self.shift = 0  # step n is due at tick n + shift
        self.w0 = 0.0
        self.last_start = 0.0
        self.done = 0  # steps started

    def prepare(self) -> None:
        """Before the blocks start: switch Python's cyclic garbage collector off until
        :meth:`stop`.  A full collection with sympy and numpy loaded takes milliseconds, a whole
        missed period at 1 kHz.  (Reference counting still frees everything that is not in a
        cycle; the blocks' steps make no cyclic garbage.  No collection is forced before the
        run: the memory it returns makes the first steps late, measured 25 us.)"""
        self.gc_was_enabled = gc.isenabled()
        gc.disable()
        self.switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL)

    def start(self) -> None:
        """Anchor the schedule: step 0 is due now."""
        self.w0 = time.perf_counter()

    def stop(self) -> None:
        """Switch the garbage collector back on if :meth:`prepare` switched it off (idempotent)."""
        if getattr(self, "gc_was_enabled", False):
            self.gc_was_enabled = False
            gc.enable()
        if getattr(self, "switch_interval", None) is not None:
            sys.setswitchinterval(self.switch_interval)
            self.switch_interval = None

    def wait(self, n: int) -> None:
        """Wait for step ``n``'s deadline; first account for an overrun of step ``n - 1``."""
        now = time.perf_counter()
        period = self.period
        deadline = self.w0 + (n + self.shift) * period
        if n and now > deadline:
            self.overruns += 1
            policy = self.policy
            if policy == "fail":
                raise RealtimeError(
                    f"real-time overrun: step {n - 1} ended {(now - deadline) * 1e6:.0f} µs after "
                    f"the deadline of step {n} (period {period * 1e6:.0f} µs)", stats=self.stats())
            if policy == "skip":
                tick = math.ceil((now - self.w0) / period)
                self.skipped += tick - (n + self.shift)
                self.shift = tick - n
                deadline = self.w0 + tick * period
        rest = deadline - now
        if rest > SPIN:
            time.sleep(rest - SPIN)
        clock = time.perf_counter
        now = clock()
        while now < deadline:
            now = clock()
        self.jitter[n] = now - deadline
        self.last_start = now
        self.done = n + 1

    def stats(self) -> dict:
        """Real-time statistics of the steps run so far."""
        j = self.jitter[: self.done] * 1e6
        wall = self.last_start - self.w0
        sim = (self.done - 1) * self.step
        return {
            "rtf_target": self.rtf,
            "rtf_achieved": sim / wall if wall > 0 and sim > 0 else float("nan"),
            "jitter_p50_us": float(np.percentile(j, 50)) if j.size else float("nan"),
            "jitter_p99_us": float(np.percentile(j, 99)) if j.size else float("nan"),
            "jitter_max_us": float(j.max()) if j.size else float("nan"),
            "overruns": self.overruns,
            "skipped_ticks": self.skipped,
            "overrun_policy": self.policy,
            "wall_start": self.w0,
        }
