"""The live view's server process (:func:`main`, started by
:class:`mbsfmu.runner.live.LiveView` before a run): serves the scope page, its Server-Sent Events
stream and the 3D views of model blocks from the shared record (:mod:`.live_record`), in its own
process, so that serving a page never takes the run's interpreter lock.

How it is started (all of it before the run's loop): the run's process binds the listening
socket on 127.0.0.1 and makes the shared record, then starts this module with both file
descriptors inherited (``argv``: record fd, socket fd) and writes the configuration to its stdin
(one pickle: signals, columns, grid, decimation, the model views).  This process maps the
record, renders each model's page once (its imports and first evaluation paid now), starts the
HTTP server and writes ``ready`` to stdout (or ``error: <why>``).  It then waits on stdin for
the end of the run (one JSON line ``{"status": ...}``; end of file: the run's process went
away), lets connected pages receive the rest and ``end`` (at most ``END_LINGER`` seconds) and
exits.  Ctrl-C in the terminal is the run's business: this process ignores SIGINT and ends when
the run says so.  It runs at a lower priority (niceness + :data:`NICE`): where the CPU is short,
the kernel gives it to the run first.

Each client's thread, at most ``rate`` times a second, takes the rows recorded since its last
message and decimates them to what the screen shows: groups of ``g = max(1, floor(window /
(columns * step)))`` consecutive rows (aligned to multiples of ``g`` of the run's row index),
each sent as its first time, and the minimum and the maximum of every signal over the group
(the min/max-per-pixel-column envelope: a spike of one sample stays visible), plus the last
recorded row exactly.  A client that falls more than one window behind skips the rows older than
the window (counted ``rows_skipped``).  A client that does not read for ``SEND_TIMEOUT`` seconds
is dropped (counted ``clients_dropped``).  The counts are kept in the shared record's header.

A model block's 3D view: ``/view/<block>`` is the 3D viewer page (three.js from
``mbsfmu/animation/vendor``, inlined) of the pose at the latest recorded row, which then follows
``/poses/<block>``: at most ``rate`` times a second the latest row's index, time, origins r_K
(frames x 3) and the rotations S_K of the frames carrying a shape (9 each, row-major), and
``end`` after the last row's pose.
"""

from __future__ import annotations

import http.server
import json
import os
import pathlib
import pickle
import signal
import socket
import sys
import threading
import time
import urllib.parse

import numpy as np

from ..animation.scene import scene_of
from ..animation.viewer import viewer_page
from .live_record import SharedRecord

PAGE = pathlib.Path(__file__).with_name("live_page.html")
#: seconds a blocked write to a client may take before the client is dropped
SEND_TIMEOUT = 1.0
#: seconds the end of a run waits for connected clients to receive the last rows
END_LINGER = 2.0
#: the server process's niceness increment: it yields the CPU to the run's process (a page gets
#: fewer updates on a machine that is short of CPU; the run keeps its pace)
NICE = 10
#: the live 3D view's camera frames this many times the extent of the pose it opens with (the
#: motion to come is not known yet; orbit, pan and zoom as in any viewer page)
LIVE_FRAMING = 2.5


class LiveState:
    """What the server's threads share: the configuration, the record, the end of the run."""

    def __init__(self, config: dict, record: SharedRecord):
        self.names, self.cols = config["names"], config["cols"]
        self.t0, self.step, self.N = config["t0"], config["step"], config["N"]
        self.window, self.rate, self.group = config["window"], config["rate"], config["group"]
        self.models = {name: LiveModel(*m) for name, m in config["models"].items()}
        self.record = record
        self.ended, self.status = False, "running"
        self.end_event = threading.Event()  # wakes the clients' threads at the end of the run
        self.lock = threading.Lock()  # guards the counters

    @property
    def rows(self) -> int:
        return self.record.rows

    def add(self, name: str, n: int = 1) -> None:
        with self.lock:
            self.record.add(name, n)

    def end(self, status: str) -> None:
        self.status, self.ended = status, True
        self.end_event.set()

    def meta(self) -> dict:
        return {"signals": self.names, "t0": self.t0, "step": self.step,
                "t_end": self.t0 + self.N * self.step, "window": self.window,
                "group": self.group, "views": list(self.models)}

    def decimated(self, start: int, rows: int, final: bool) -> tuple[dict | None, int]:
        """The message for rows ``start .. rows - 1`` (whole groups, all rows if ``final``)
        and the next start."""
        g = self.group
        stop = rows if final else start + (rows - start) // g * g
        if stop <= start:
            return None, start
        values = self.record.values
        block = values[start:stop, self.cols]
        whole = (stop - start) // g * g
        lo = [block[:whole].reshape(-1, g, block.shape[1]).min(axis=1)]
        hi = [block[:whole].reshape(-1, g, block.shape[1]).max(axis=1)]
        if whole < len(block):
            lo.append(block[whole:].min(axis=0, keepdims=True))
            hi.append(block[whole:].max(axis=0, keepdims=True))
        t = self.t0 + self.step * np.arange(start, stop, g)
        last = values[stop - 1, self.cols]
        msg = {"t": t.tolist(), "lo": finite(np.concatenate(lo).T),
               "hi": finite(np.concatenate(hi).T), "last_t": self.t0 + (stop - 1) * self.step,
               "last": finite(last), "rows": stop}
        return msg, stop


class LiveModel:
    """A model block's 3D view during a run: its ModelView, the block's constants and the record's
    columns of its coordinates."""

    def __init__(self, view, params, cols):
        self.view, self.params, self.cols = view, params, cols
        #: the frames whose rotation the viewer page takes (its shapes' frames, as scene_data)
        self.posed = sorted({s.frame for s in view.layout.shapes})

    def coordinates(self, record, row: int) -> np.ndarray:
        """The block's coordinates in the record's ``row`` (a row < 0, before the first row of
        the run: every coordinate 0)."""
        return np.asarray(record[row, self.cols] if row >= 0 else np.zeros(len(self.cols)), dtype=float)

    def pose(self, record, row: int, t: float) -> dict:
        """The pose message of the record's ``row`` at time ``t``."""
        y = self.coordinates(record, row)
        r, S = self.view.poses([t], y[:, None], self.params)
        return {"row": int(row), "t": float(t), "coordinates": finite(y),
                "positions": finite(r[0].ravel()), "rotations": finite(S[0, self.posed].ravel())}

    def page(self, record, row: int, t: float, name: str) -> str:
        """The 3D viewer page of the pose at ``row``, following ``/poses/<name>``; every stick
        segment is kept (one of zero length now may open later; the page hides it meanwhile)."""
        r, S = self.view.poses([t], self.coordinates(record, row)[:, None], self.params)
        scene = scene_of(self.view.layout, [t], r, S, f"{name}: {self.view.layout.title} (live)",
                         drop_still=False)
        follow = LIVE_VIEW_SCRIPT.replace("POSES_URL", json.dumps(f"/poses/{urllib.parse.quote(name)}"))
        centre, half = scene.bounds()  # of one pose: the camera frames LIVE_FRAMING times more
        return viewer_page(scene, 30.0, bounds=(centre, LIVE_FRAMING * half)).replace(
            "</body>", follow + "</body>")


#: the script the live 3D page adds to the viewer page: it follows the pose stream
LIVE_VIEW_SCRIPT = """<script>
(function () {
  "use strict";
  ["play", "slider", "speed"].forEach(function (id) {
    const el = document.getElementById(id);
    (el.closest("label") || el).style.display = "none";
  });
  const live = window.mbsLive = { pose: null, poses: 0, ended: false };
  const es = new EventSource(POSES_URL);
  es.addEventListener("pose", function (e) {
    const m = JSON.parse(e.data);
    live.pose = m; live.poses++;
    window.mbsViewer.setPose(m.t, m.positions, m.rotations);
  });
  es.addEventListener("end", function (e) { live.ended = true; live.end = JSON.parse(e.data); es.close(); });
  es.onerror = function () { es.close(); };
})();
</script>
"""


def finite(a: np.ndarray) -> list:
    """``a.tolist()`` with non-finite values as ``None`` (JSON has no NaN)."""
    if np.isfinite(a).all():
        return a.tolist()
    return np.where(np.isfinite(a), a, None).tolist()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, sock: socket.socket, state: LiveState):
        self.handlers: list[threading.Thread] = []
        self.state = state
        super().__init__(sock.getsockname()[:2], _Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock  # bound and listening in the run's process

    def process_request(self, request, client_address):
        t = threading.Thread(target=self.process_request_thread, args=(request, client_address),
                             daemon=True)
        self.handlers.append(t)
        t.start()


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no access log on stderr
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path in ("/", "/index.html"):
            self.send_page(PAGE.read_bytes())
        elif path == "/events":
            self.events()
        elif path.startswith(("/view/", "/poses/")):
            kind, _, name = path[1:].partition("/")
            model = self.server.state.models.get(urllib.parse.unquote(name))
            if model is None:
                self.send_error(404, f"no 3D view of a block {urllib.parse.unquote(name)!r} in this run")
            elif kind == "view":
                state: LiveState = self.server.state
                row = state.rows - 1
                self.send_page(model.page(state.record.values, row, state.t0 + max(row, 0) * state.step,
                                          urllib.parse.unquote(name)).encode())
            else:
                self.poses(model)
        else:
            self.send_error(404, f"no {path} here: the page is /, its stream /events")

    def send_page(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def open_stream(self) -> None:
        self.connection.settimeout(SEND_TIMEOUT)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

    def send_event(self, kind: str, data: dict) -> None:
        self.wfile.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def poses(self, model: LiveModel) -> None:
        """A model block's pose stream: the latest recorded row's pose at most ``rate`` times a
        second (only when a new row is there), then the last row's and ``end``."""
        state: LiveState = self.server.state
        self.open_stream()
        sent = -1
        try:
            while True:
                ended = state.ended
                row = state.rows - 1
                if row > sent:
                    self.send_event("pose", model.pose(state.record.values, row, state.t0 + row * state.step))
                    sent = row
                    state.add("pose_messages")
                if ended:
                    self.send_event("end", {"status": state.status, "rows": state.rows})
                    return
                state.end_event.wait(1.0 / state.rate)
        except OSError:
            state.add("clients_dropped")

    def events(self) -> None:
        """One client's stream: ``meta``, then ``data`` at most ``rate`` times a second, ``end``."""
        state: LiveState = self.server.state
        self.open_stream()
        state.add("clients")
        period = 1.0 / state.rate
        window_rows = int(state.window / state.step) + 1
        g = state.group
        try:
            self.send_event("meta", state.meta())
            start = 0
            while True:
                ended = state.ended
                rows = state.rows
                first = max(0, rows - window_rows) // g * g
                if first > start:
                    state.add("rows_skipped", first - start)
                    start = first
                msg, start = state.decimated(start, rows, ended)
                if msg is not None:
                    self.send_event("data", msg)
                    state.add("messages")
                if ended:
                    self.send_event("end", {"status": state.status, "rows": rows,
                                            "rows_skipped": state.record.counts()["rows_skipped"]})
                    return
                state.end_event.wait(period)
        except OSError:  # the page went away or stopped reading: the run goes on without it
            state.add("clients_dropped")


def serve(record_fd: int, socket_fd: int, control, report) -> None:
    """The server process's life (module docstring): ``control`` (binary stdin) gives the
    configuration and then the end; ``report`` (text stdout) says ``ready`` or ``error: ...``."""
    try:
        config = pickle.load(control)
        record = SharedRecord.attach(record_fd, *config["shape"])
        state = LiveState(config, record)
        for name, model in state.models.items():  # imports and first evaluation, before the run
            model.page(None, -1, 0.0, name)
        server = _Server(socket.socket(fileno=socket_fd), state)
    except Exception as exc:
        report.write(f"error: {type(exc).__name__}: {exc}\n")
        report.flush()
        raise SystemExit(1) from None
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name="mbsfmu-live", daemon=True)
    thread.start()
    report.write("ready\n")
    report.flush()
    line = control.readline()
    state.end(json.loads(line)["status"] if line.strip() else "the run's process went away")
    deadline = time.perf_counter() + END_LINGER
    for t in list(server.handlers):
        t.join(max(0.0, deadline - time.perf_counter()))
    server.shutdown()
    thread.join()
    server.server_close()


def main() -> None:
    """The process's entry (``python -c "from mbsfmu.runner.live_server import main; main()"
    <record fd> <socket fd>``; not ``-m``: the package imports this module already)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the run; the run stops this
    os.nice(NICE)  # where the CPU is short, the run's process goes first
    serve(int(sys.argv[1]), int(sys.argv[2]), sys.stdin.buffer, sys.stdout)
