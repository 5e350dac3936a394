"""A live scope of a running diagram (``Diagram.run(..., live=True)`` or ``live=LiveView(...)``).

A local page (``http://127.0.0.1:<port>/``, the port given or chosen by the OS) plots chosen
recorded signals while the diagram runs: a rolling time window, one axes per block, pause, zoom
and the values at the cursor; where a block is a model FMU (its FMU carries the model's view,
:mod:`mbsfmu.animation.model_view`) and its coordinates are recorded, ``/view/<block>`` shows
it in 3D moving with the run.  The page (``live_page.html``, plain canvas, no library, no
network) reads a Server-Sent Events stream (``/events``) served by the standard library's
``http.server`` (no dependency; SSE is one-way, which is all a scope needs, and the browser's
``EventSource`` reconnects by itself).

The server runs in a process of its own (:mod:`.live_server`), so that serving pages never takes
the run's interpreter lock from the paced loop.  Before the run (:meth:`LiveView.open`) this
process binds the port on 127.0.0.1 (a bad or busy port is refused here, before any block
starts), makes the runner's record in shared memory (:mod:`.live_record`: ``(N + 1, k)``
floats, allocated and filled with NaN before the run), and starts the server process with both
inherited; the server maps the record, pays its imports and renders each model page once, then
says it is ready; only then does the run start and the address get announced.

What the real-time loop does for the view: it writes each step's recorded signals into the
record as it always does (the record *is* the shared memory), then one integer store: the count
of complete rows in the record's header.  No lock, no I/O, no allocation; the ordering argument
(a reader never sees a half-written row) is in :mod:`.live_record`.  A page that is slow,
disconnects or never connects, or a server process that dies, cannot delay the loop.

At the end of the run (:meth:`LiveView.close`, also after an error or Ctrl-C) the run's status
(``finished`` or ``failed: <message>``) goes to the server through a pipe; connected pages receive
the remaining rows and ``end``; the server stops (waiting at most ``END_LINGER`` seconds for
stalled pages) and exits, and ``run`` returns only once the process is gone and the port free
(a server that does not exit in time is killed).  The counts (clients, messages, rows skipped,
clients dropped, pose messages) are kept by the server in the shared header, so they are read
even from a server that died; a server that ended during the run is a ``RuntimeWarning`` and
``stats["live"]["server"]`` says how it ended, and the run goes on without its page.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import pathlib
import pickle
import select
import signal
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
import warnings
from collections.abc import Sequence

from .live_record import ROWS, SharedRecord
from .live_server import END_LINGER, SEND_TIMEOUT  # noqa: F401 (the server's limits, for users)
from .scheduling import DiagramError

__all__ = ["LiveView", "read_events"]

#: seconds the server process may take to start (its imports) before the run gives up on it
START_TIMEOUT = 60.0
#: seconds beyond END_LINGER the server process may take to exit before it is killed
EXIT_SLACK = 3.0
#: the server process's program (:func:`mbsfmu.runner.live_server.main`)
SERVER_MAIN = "from mbsfmu.runner.live_server import main; main()"
#: the directory holding the mbsfmu package, put first on the server process's path
_PACKAGE_ROOT = str(pathlib.Path(__file__).resolve().parents[2])


def _number(name: str, value, lo: float, hi: float, *, integer: bool = False):
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if integer:
        ok = ok and float(value).is_integer()
    if not ok or not lo <= value <= hi:
        what = "an integer" if integer else "a number"
        raise DiagramError(f"LiveView {name} must be {what} in [{lo:g}, {hi:g}], not {value!r}")
    return int(value) if integer else float(value)


def _cpus(cpus) -> set | None:
    """The checked ``cpus`` of a LiveView: None, or a non-empty set of this machine's CPUs."""
    if cpus is None:
        return None
    count = os.cpu_count() or 1
    try:
        chosen = set(cpus)
    except TypeError:
        chosen = None
    if not chosen or not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c < count
                             for c in chosen):
        raise DiagramError(f"LiveView cpus must be a non-empty set of CPU numbers 0..{count - 1} "
                           f"(this machine has {count}), not {cpus!r}")
    if not hasattr(os, "sched_setaffinity"):
        raise DiagramError("LiveView cpus: this system cannot pin a process to CPUs")
    return chosen


def _ended(code: int) -> str:
    """How a process ended, from its return code."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class LiveView:
    """Options of the live scope, and its server while a run uses it (see the module docstring).

    ``signals``: the recorded ``"block.port"`` names to plot (default: every recorded signal;
    a bare block name: its recorded outputs); ``port``: the TCP port on 127.0.0.1 (0: the OS
    chooses; read :attr:`url` once the run has started); ``window``: the rolling time window [s
    of simulated time]; ``rate``: the most messages a second per page; ``columns``: the pixel
    columns the decimation aims at; ``announce``: print the page's address to stderr;
    ``cpus``: the CPU numbers the server process may run on (default: those of the run's
    process).  At a test bench, pin the run's process to a core of its own
    (``os.sched_setaffinity(0, {0})``) and give the server and the browser the others
    (``cpus={1}``; the browser started with ``taskset -c 1``): the page then takes no CPU time
    from the loop (``bench/runner_overhead.py --live --pin``).
    """

    def __init__(self, signals: Sequence[str] | str | None = None, *, port: int = 0,
                 window: float = 10.0, rate: float = 30.0, columns: int = 1000,
                 announce: bool = True, cpus=None):
        if isinstance(signals, str):
            signals = [signals]
        if signals is not None:
            signals = list(signals) if isinstance(signals, (list, tuple)) else signals
            if not isinstance(signals, list) or not signals or not all(
                    isinstance(s, str) for s in signals):
                raise DiagramError(f"LiveView signals must be a non-empty list of 'block.port' "
                                   f"names, not {signals!r}")
        self.signals = signals
        self.port = _number("port", port, 0, 65535, integer=True)
        self.window = _number("window", window, 1e-6, 1e9)
        self.rate = _number("rate", rate, 0.1, 120)
        self.columns = _number("columns", columns, 10, 100_000, integer=True)
        self.announce = bool(announce)
        self.cpus = _cpus(cpus)
        self.url: str | None = None
        self.record = None   # the shared record while a run uses the view (:mod:`.live_record`)
        self.header = None   # its header: ``header[ROWS] = n + 1`` is the run loop's one store
        self._proc = None
        #: the server process's id while a run uses the view (kept after it, as :attr:`url`)
        self.server_pid: int | None = None

    def __repr__(self) -> str:
        return (f"LiveView(signals={self.signals!r}, port={self.port}, window={self.window:g}, "
                f"rate={self.rate:g}, columns={self.columns})")

    @property
    def rows(self) -> int:
        """Rows of the record complete (0 when no run uses the view)."""
        return self.header[ROWS] if self.header is not None else 0

    # -- set-up before the run (a refusal here leaves nothing started) -------------------------
    def open(self, recorded: Sequence[str], t0: float, step: float, n_steps: int,
             views: dict | None = None) -> None:
        """Resolve the signals against the recorded names, listen on the port, make the shared
        record of ``n_steps + 1`` rows and start the server process; returns once it serves.
        ``views``: the blocks' :meth:`~mbsfmu.runner.block.Block.view` (name -> view and
        constants, or why none): those whose coordinates are recorded get a 3D view."""
        if self._proc is not None:
            raise DiagramError(f"this LiveView already serves a run at {self.url}")
        self.url = self.server_pid = None  # until this run's server serves
        recorded = list(recorded)
        cols = []
        for name in self.signals if self.signals is not None else recorded:
            if name in recorded:
                cols.append(recorded.index(name))
                continue
            of_block = [j for j, r in enumerate(recorded) if r.split(".", 1)[0] == name]
            if "." not in name and of_block:
                cols.extend(of_block)
                continue
            close = difflib.get_close_matches(name, recorded, n=3)
            raise DiagramError(f"LiveView signal {name!r} is not recorded"
                               + (f" (did you mean {', '.join(close)}?)" if close else "")
                               + f"; recorded: {', '.join(recorded[:20]) or 'none'}"
                               + (", ..." if len(recorded) > 20 else "")
                               + "; a live signal must be one of record=")
        if not cols:
            raise DiagramError("LiveView: the run records no signal to plot")
        self.cols = list(dict.fromkeys(cols))
        self.names = [recorded[j] for j in self.cols]
        models, self.models_missing = _live_models(views or {}, recorded)
        self.models = list(models)
        self.group = max(1, int(self.window / (step * self.columns)))
        self.status, self.server = "running", "serving"
        sock = socket.socket()
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", self.port))
            sock.listen(64)
        except OSError as exc:
            sock.close()
            raise DiagramError(f"LiveView cannot listen on 127.0.0.1:{self.port}: "
                               f"{exc.strerror or exc}") from None
        port = sock.getsockname()[1]
        config = {"names": self.names, "cols": self.cols, "t0": float(t0), "step": float(step),
                  "N": int(n_steps), "window": self.window, "rate": self.rate, "group": self.group,
                  "models": models, "shape": (int(n_steps) + 1, len(recorded))}
        try:
            record = SharedRecord.create(*config["shape"])
            try:
                self._proc = self._start_server(record, sock, config)
            finally:
                record.close_fd()  # the server has its own copy; the mapping stays
        finally:
            sock.close()  # the server process listens on its copy
        self.record, self.header = record.values, record.header
        self._shared = record
        self.server_pid = self._proc.pid
        self.url = f"http://127.0.0.1:{port}/"

    def _start_server(self, record: SharedRecord, sock: socket.socket, config: dict):
        """Start the server process with the record and the socket, give it the configuration
        and wait until it serves (a DiagramError, and no process left, if it does not)."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_ROOT, env.get("PYTHONPATH")]))
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVER_MAIN, str(record.fd), str(sock.fileno())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env=env,
            pass_fds=(record.fd, sock.fileno()), start_new_session=True)
        try:
            if self.cpus is not None:  # while it imports, before it serves anything
                os.sched_setaffinity(proc.pid, self.cpus)
            try:
                pickle.dump(config, proc.stdin)
            except BrokenPipeError:  # it ended already: what it says (or its exit) tells why
                pass
            ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT)
            line = proc.stdout.readline().decode().strip() if ready else ""
            if line != "ready":
                why = (line.removeprefix("error: ") if line else
                       f"it ended ({_ended(proc.wait(5))})" if ready else
                       f"it did not start within {START_TIMEOUT:g} s")
                raise DiagramError(f"LiveView: the page's server process did not start: {why}")
        except BaseException:
            _stop(proc)
            raise
        return proc

    def start(self) -> None:
        """The run starts: say where the page is."""
        if self.announce:
            print(f"live view of the run: {self.url}", file=sys.stderr, flush=True)

    def close(self, status: str = "finished") -> dict:
        """After the run: tell the server the run's status, let it give connected pages the
        rest and ``end``, and make sure it is gone and the port free; returns the counts for
        ``Result.stats["live"]``."""
        proc, self._proc = self._proc, None
        if proc is None:
            return {}
        self.status = status
        try:
            code = proc.poll()
            if code is not None:
                self.server = f"ended during the run ({_ended(code)})"
            else:
                try:
                    proc.stdin.write((json.dumps({"status": status}) + "\n").encode())
                    proc.stdin.flush()
                except OSError:  # it died just now
                    pass
                try:
                    code = proc.wait(END_LINGER + EXIT_SLACK)
                    self.server = ("served" if code == 0 else
                                   f"ended at the end of the run ({_ended(code)})")
                except subprocess.TimeoutExpired:
                    self.server = f"was killed: it did not stop within {END_LINGER + EXIT_SLACK:g} s"
        finally:
            _stop(proc)
        if self.server != "served":
            warnings.warn(f"live view at {self.url}: its server process {self.server}; the page "
                          f"did not follow the run to its end, the run went on without it",
                          RuntimeWarning, stacklevel=4)
        counts = self._shared.counts()
        self.record = self.header = self._shared = None  # the run keeps its record
        return {"url": self.url, "signals": list(self.names), "group": self.group,
                "status": status, "server": self.server, "views": list(self.models),
                "views_missing": dict(self.models_missing), **counts}


def _stop(proc: subprocess.Popen) -> None:
    """Make sure ``proc`` is gone (killed if it still runs) and its pipes closed."""
    try:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    finally:
        for pipe in (proc.stdin, proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass


def _live_models(views: dict, recorded) -> tuple[dict, dict]:
    """The blocks the live page draws (name -> (view, constants, the record's columns of its
    coordinates)) and why the others are not drawn."""
    models, missing = {}, {}
    for name, v in views.items():
        if isinstance(v, str):
            missing[name] = v
            continue
        view, params = v
        signals = [f"{name}.{c}" for c in view.coordinates]
        absent = [s for s in signals if s not in recorded]
        if absent or view.program is None:
            missing[name] = (f"not recorded: {', '.join(absent)}" if absent else
                             f"the view holds no pose: {view.unavailable}")
            continue
        models[name] = (view, params, [list(recorded).index(s) for s in signals])
    return models, missing


def read_events(url: str, timeout: float = 10.0):
    """Read a live view's stream from Python: yields ``(event, data)`` (``"meta"``, ``"data"``,
    ``"end"``; ``data`` decoded from JSON; a model block's ``/poses/<block>``: ``"pose"``,
    ``"end"``) until the stream ends.  ``url``: the page's address (:attr:`LiveView.url`, then
    ``/events`` is read) or a stream's."""
    if urllib.parse.urlsplit(url).path.rstrip("/") in ("", "/index.html"):
        url = url.rstrip("/") + "/events"
    with urllib.request.urlopen(url, timeout=timeout) as stream:
        event = None
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                yield event, json.loads(line[6:])


