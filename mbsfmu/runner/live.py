"""A live scope of a running diagram (``Diagram.run(..., live=True)`` or ``live=LiveView(...)``).

A local page (``http://127.0.0.1:<port>/``, the port given or chosen by the OS) plots chosen
recorded signals while the diagram runs: a rolling time window, one axes per block, pause, zoom
and the values at the cursor.  The page (``live_page.html``, plain canvas, no library, no
network) reads a Server-Sent Events stream (``/events``) served by the standard library's
``http.server`` in threads of this process (no dependency; SSE is one-way, which is all a scope
needs, and the browser's ``EventSource`` reconnects by itself).

What the real-time loop does for the view: nothing but one integer store per step.  The runner
already writes every step's recorded signals into its preallocated record (``rows`` of
``(N + 1, k)`` floats, allocated before the run); the loop publishes how many rows are complete
(:attr:`LiveView.rows`).  Rows below that count are never written again, so the server threads
read them without a lock (one numpy row assignment is atomic under the GIL).  No I/O, no lock,
no allocation in the loop; a page that is slow, disconnects or never connects cannot delay it.

Each client's thread, at most ``rate`` times a second, takes the rows recorded since its last
message and decimates them to what the screen shows: groups of ``g = max(1, floor(window /
(columns * step)))`` consecutive rows (aligned to multiples of ``g`` of the run's row index),
each sent as its first time, and the minimum and the maximum of every signal over the group
(the min/max-per-pixel-column envelope: a spike of one sample stays visible), plus the last
recorded row exactly.  A client that falls more than one window behind skips the rows older than
the window; those rows are counted per run as ``rows_skipped`` (``Result.stats["live"]``), not
waited for.  A client that does not read for ``SEND_TIMEOUT`` seconds is dropped (counted).

At the end of the run every connected client receives the remaining rows and an ``end`` event
(with the last row, the status and the counts); the server then stops and its port is freed
before ``run`` returns, also when the run fails.

The 3D view of a model block: for every FMU block whose FMU carries the model's view
(:mod:`mbsfmu.animation.model_view`) and whose coordinates are recorded, the scope page shows
``/view/<block>``: the 3D viewer page (three.js from ``mbsfmu/animation/vendor``, inlined, so
served by this server, no network) of the pose at the latest recorded row, which then follows
the stream ``/poses/<block>``: at most ``rate`` times a second the latest recorded row's
index, time, origins r_K (frames x 3) and the rotations S_K of the frames carrying a shape (9
each, row-major), evaluated in the client's server thread from the record (never in the run
loop), and ``end`` after the last row's pose.
"""

from __future__ import annotations

import difflib
import http.server
import json
import math
import pathlib
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Sequence

import numpy as np

from ..animation.scene import scene_of
from ..animation.viewer import viewer_page
from .scheduling import DiagramError

__all__ = ["LiveView", "read_events"]

PAGE = pathlib.Path(__file__).with_name("live_page.html")
#: seconds a blocked write to a client may take before the client is dropped
SEND_TIMEOUT = 1.0
#: seconds the end of a run waits for connected clients to receive the last rows
END_LINGER = 2.0
#: the live 3D view's camera frames this many times the extent of the pose it opens with (the
#: motion to come is not known yet; orbit, pan and zoom as in any viewer page)
LIVE_FRAMING = 2.5


def _number(name: str, value, lo: float, hi: float, *, integer: bool = False):
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if integer:
        ok = ok and float(value).is_integer()
    if not ok or not lo <= value <= hi:
        what = "an integer" if integer else "a number"
        raise DiagramError(f"LiveView {name} must be {what} in [{lo:g}, {hi:g}], not {value!r}")
    return int(value) if integer else float(value)


class LiveView:
    """Options of the live scope, and the server while a run uses it (see the module docstring).

    ``signals``: the recorded ``"block.port"`` names to plot (default: every recorded signal;
    a bare block name: its recorded outputs); ``port``: the TCP port on 127.0.0.1 (0: the OS
    chooses; read :attr:`url` once the run has started); ``window``: the rolling time window [s
    of simulated time]; ``rate``: the most messages a second per page; ``columns``: the pixel
    columns the decimation aims at; ``announce``: print the page's address to stderr.
    """

    def __init__(self, signals: Sequence[str] | str | None = None, *, port: int = 0,
                 window: float = 10.0, rate: float = 30.0, columns: int = 1000,
                 announce: bool = True):
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
        self.url: str | None = None
        self.rows = 0  # rows of the record complete: the one thing the run loop writes
        self._server = None
        self._lock = threading.Lock()  # guards the counters, never taken by the run loop

    def __repr__(self) -> str:
        return (f"LiveView(signals={self.signals!r}, port={self.port}, window={self.window:g}, "
                f"rate={self.rate:g}, columns={self.columns})")

    # -- set-up before the run (a refusal here leaves nothing started) -------------------------
    def open(self, recorded: Sequence[str], t0: float, step: float, n_steps: int,
             views: dict | None = None) -> None:
        """Resolve the signals against the recorded names and listen on the port; ``views``:
        the blocks' :meth:`~mbsfmu.runner.block.Block.view` (name -> view and constants, or why
        none): those whose coordinates are recorded get a 3D view."""
        if self._server is not None:
            raise DiagramError(f"this LiveView already serves a run at {self.url}")
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
        self.models, self.models_missing = _live_models(views or {}, recorded)
        self.t0, self.step, self.N = float(t0), float(step), int(n_steps)
        self.group = max(1, int(self.window / (self.columns * self.step)))
        self.rows, self.ended, self.status = 0, False, "running"
        self._end = threading.Event()  # wakes the clients' threads at the end of the run
        self.counts = {"clients": 0, "messages": 0, "rows_skipped": 0, "clients_dropped": 0,
                       "pose_messages": 0}
        try:
            server = _Server(("127.0.0.1", self.port), _Handler)
        except OSError as exc:
            raise DiagramError(f"LiveView cannot listen on 127.0.0.1:{self.port}: "
                               f"{exc.strerror or exc}") from None
        server.view = self
        self._server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}/"

    def start(self, record: np.ndarray) -> None:
        """Serve ``record`` (the runner's preallocated record) from now on."""
        self.record = record
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={
            "poll_interval": 0.05}, name="mbsfmu-live", daemon=True)
        self._thread.start()
        if self.announce:
            print(f"live view of the run: {self.url}", file=sys.stderr, flush=True)

    def close(self, status: str = "finished") -> dict:
        """After the run: let connected pages receive the rest and ``end``, stop the server,
        free the port; returns the counts for ``Result.stats["live"]``."""
        server, self._server = self._server, None
        if server is None:
            return {}
        self.status, self.ended = status, True
        self._end.set()
        deadline = time.perf_counter() + END_LINGER
        for t in list(server.handlers):
            t.join(max(0.0, deadline - time.perf_counter()))
        if getattr(self, "_thread", None) is not None:
            server.shutdown()
            self._thread.join()
            self._thread = None
        server.server_close()
        return {"url": self.url, "signals": list(self.names), "group": self.group,
                "status": status, "views": list(self.models), "views_missing": dict(self.models_missing),
                **self.counts}

    # -- what a client's thread sends ---------------------------------------------------------
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
        block = self.record[start:stop, self.cols]
        whole = (stop - start) // g * g
        lo = [block[:whole].reshape(-1, g, block.shape[1]).min(axis=1)]
        hi = [block[:whole].reshape(-1, g, block.shape[1]).max(axis=1)]
        if whole < len(block):
            lo.append(block[whole:].min(axis=0, keepdims=True))
            hi.append(block[whole:].max(axis=0, keepdims=True))
        t = self.t0 + self.step * np.arange(start, stop, g)
        last = self.record[stop - 1, self.cols]
        msg = {"t": t.tolist(), "lo": _finite(np.concatenate(lo).T),
               "hi": _finite(np.concatenate(hi).T), "last_t": self.t0 + (stop - 1) * self.step,
               "last": _finite(last), "rows": stop}
        return msg, stop


class _LiveModel:
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
        return {"row": int(row), "t": float(t), "coordinates": _finite(y),
                "positions": _finite(r[0].ravel()), "rotations": _finite(S[0, self.posed].ravel())}

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


def _live_models(views: dict, recorded) -> tuple[dict, dict]:
    """The blocks the live page draws (name -> _LiveModel) and why the others are not drawn."""
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
        model = _LiveModel(view, params, [list(recorded).index(s) for s in signals])
        model.page(None, -1, 0.0, name)  # once before the run: what a page needs is imported
        models[name] = model
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


def _finite(a: np.ndarray) -> list:
    """``a.tolist()`` with non-finite values as ``None`` (JSON has no NaN)."""
    if np.isfinite(a).all():
        return a.tolist()
    return np.where(np.isfinite(a), a, None).tolist()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, *args):
        self.handlers: list[threading.Thread] = []
        super().__init__(*args)

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
            body = PAGE.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif path == "/events":
            self.events()
        elif path.startswith(("/view/", "/poses/")):
            kind, _, name = path[1:].partition("/")
            model = self.server.view.models.get(urllib.parse.unquote(name))
            if model is None:
                self.send_error(404, f"no 3D view of a block {urllib.parse.unquote(name)!r} in this run")
            elif kind == "view":
                self.view_page(model, urllib.parse.unquote(name))
            else:
                self.poses(model)
        else:
            self.send_error(404, f"no {path} here: the page is /, its stream /events")

    def view_page(self, model: _LiveModel, name: str) -> None:
        view: LiveView = self.server.view
        row = view.rows - 1
        body = model.page(view.record, row, view.t0 + max(row, 0) * view.step, name).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def poses(self, model: _LiveModel) -> None:
        """A model block's pose stream: the latest recorded row's pose at most ``rate`` times a
        second (only when a new row is there), then the last row's and ``end``."""
        view: LiveView = self.server.view
        self.connection.settimeout(SEND_TIMEOUT)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        sent = -1
        try:
            while True:
                ended = view.ended
                row = view.rows - 1
                if row > sent:
                    self.send_event("pose", model.pose(view.record, row, view.t0 + row * view.step))
                    sent = row
                    with view._lock:
                        view.counts["pose_messages"] += 1
                if ended:
                    self.send_event("end", {"status": view.status, "rows": view.rows})
                    return
                view._end.wait(1.0 / view.rate)
        except OSError:
            with view._lock:
                view.counts["clients_dropped"] += 1

    def send_event(self, kind: str, data: dict) -> None:
        self.wfile.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def events(self) -> None:
        """One client's stream: ``meta``, then ``data`` at most ``rate`` times a second, ``end``."""
        view: LiveView = self.server.view
        self.connection.settimeout(SEND_TIMEOUT)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        with view._lock:
            view.counts["clients"] += 1
        period = 1.0 / view.rate
        window_rows = int(view.window / view.step) + 1
        g = view.group
        try:
            self.send_event("meta", view.meta())
            start = 0
            while True:
                ended = view.ended
                rows = view.rows
                first = max(0, rows - window_rows) // g * g
                if first > start:
                    with view._lock:
                        view.counts["rows_skipped"] += first - start
                    start = first
                msg, start = view.decimated(start, rows, ended)
                if msg is not None:
                    self.send_event("data", msg)
                    with view._lock:
                        view.counts["messages"] += 1
                if ended:
                    self.send_event("end", {"status": view.status, "rows": rows,
                                            "rows_skipped": view.counts["rows_skipped"]})
                    return
                view._end.wait(period)
        except OSError:  # the page went away or stopped reading: the run goes on without it
            with view._lock:
                view.counts["clients_dropped"] += 1
