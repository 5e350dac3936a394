"""The live view's shared record: the runner's record in memory that the run's process and the
live view's server process both map (:mod:`mbsfmu.runner.live`, :mod:`mbsfmu.runner.live_server`).

Layout of the shared file: a header of :data:`HEADER_SLOTS` int64 (64 bytes), then the record,
``rows x cols`` float64 row by row (C order), filled with NaN when it is made (before the run,
so that its pages exist before the loop writes them).  Header slot :data:`ROWS` is the number of
complete rows, written only by the run's loop; the slots of :data:`COUNTERS` are the server's
counts, written only by the server (so a server killed mid-run still leaves its counts).

The ordering argument (why a reader never sees a half-written row): the loop writes row ``n``
(numpy's copy of the step's signals into the mapping) and *then* stores ``n + 1`` into the
aligned 8-byte slot :data:`ROWS` (one ``memoryview`` item store: one 8-byte store in C).  A row
below the count is never written again.  On x86-64 an aligned 8-byte store and load are atomic,
and stores become visible to other cores in program order (total store order), loads are not
reordered with older loads: a reader that loads count ``c`` and then reads rows ``< c`` sees
them complete.  The end of the run is signalled through a pipe (a system call on both sides, a
full barrier), so after it every row is visible on any architecture.  On weakly ordered CPUs
(aarch64) the newest row of a message sent *during* the run is not guaranteed by this argument
(a store barrier would be needed, which Python does not offer); the end message is.

Why an anonymous memory file (``os.memfd_create``, Linux; elsewhere an unlinked temporary file)
passed to the server as an open file descriptor, and not a named ``multiprocessing.shared_memory``
segment: the memory has no name, so nothing can be left in ``/dev/shm`` whatever happens to
either process (an error, Ctrl-C, SIGKILL), no ``resource_tracker`` is involved (no leak
warnings, no tracker process), and it is freed when the last mapping goes.  The run's process
never unmaps it by hand: its arrays (the run's record, then the result's values) keep their
mapping alive, and it goes with them.
"""

from __future__ import annotations

import mmap
import os
import tempfile

import numpy as np

#: header slots (int64) before the record; 8 slots = 64 bytes keep the record cache-line aligned
HEADER_SLOTS = 8
#: header slot of the number of complete rows (written by the run's loop only)
ROWS = 0
#: header slots of the server's counts (written by the server only), in this order from slot 1
COUNTERS = ("clients", "messages", "rows_skipped", "clients_dropped", "pose_messages")


def _memory_file() -> int:
    """A new anonymous shared-memory file's descriptor (not inherited across exec by itself)."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("mbsfmu-live-record", os.MFD_CLOEXEC)
    fd, path = tempfile.mkstemp(prefix="mbsfmu-live-")  # pragma: no cover (not Linux)
    os.unlink(path)  # pragma: no cover
    return fd  # pragma: no cover


class SharedRecord:
    """The header and the ``(rows, cols)`` record over one shared file (module docstring)."""

    def __init__(self, fd: int, rows: int, cols: int, *, create: bool):
        size = 8 * (HEADER_SLOTS + rows * cols)
        if create:
            os.ftruncate(fd, size)
        self.fd, self.shape = fd, (rows, cols)
        buf = mmap.mmap(fd, size)  # MAP_SHARED, read and write; unmapped when its arrays go
        #: the header: ``header[ROWS]`` (the loop's one store a step) and the counters
        self.header = memoryview(buf)[:8 * HEADER_SLOTS].cast("q")
        #: the record
        self.values = np.ndarray(self.shape, dtype=np.float64, buffer=buf, offset=8 * HEADER_SLOTS)
        if create:
            self.values.fill(np.nan)

    @classmethod
    def create(cls, rows: int, cols: int) -> SharedRecord:
        """A new record of ``rows x cols`` NaN, count 0 (its descriptor: :attr:`fd`, to be passed
        to the server and then closed with :meth:`close_fd`)."""
        fd = _memory_file()
        try:
            return cls(fd, rows, cols, create=True)
        except BaseException:
            os.close(fd)
            raise

    @classmethod
    def attach(cls, fd: int, rows: int, cols: int) -> SharedRecord:
        """The record made by :meth:`create` in another process, from its descriptor."""
        return cls(fd, rows, cols, create=False)

    @property
    def rows(self) -> int:
        """The number of complete rows."""
        return self.header[ROWS]

    def counts(self) -> dict:
        """The server's counters (name -> value)."""
        return {name: self.header[1 + i] for i, name in enumerate(COUNTERS)}

    def add(self, name: str, n: int = 1) -> None:
        """Add ``n`` to a counter (the server only; callers hold its lock)."""
        slot = 1 + COUNTERS.index(name)
        self.header[slot] += n

    def close_fd(self) -> None:
        """Close the descriptor (the mapping stays)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
