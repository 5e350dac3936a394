"""The live scope of a running diagram (mbsfmu.runner.live): what the stream delivers against what
the runner recorded, a client that is late, slow or absent does not hold the loop, the port is
freed after the run, the page is served and needs no network.

Real-time runs of 0.5 to 2 s; a Python thread reads the stream as a page would."""

import math
import socket
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

from mbsfmu.runner import Block, BlockRunError, Diagram
from mbsfmu.runner.live import LiveView, read_events


class Wave(Block):
    """Outputs that change every step and have spikes a decimation must keep."""

    outputs = ("sin", "spike", "t2")

    def output(self, t, u):
        n = round(t * 1000)
        return (math.sin(7.0 * t), 5.0 if n % 37 == 0 else 0.0, t * t)


class Many(Block):
    """Many signals: large messages, to fill a client's socket buffer quickly."""

    outputs = tuple(f"y{i}" for i in range(300))

    def output(self, t, u):
        return tuple(t + i for i in range(300))


class FailsAt(Block):
    outputs = ("y",)

    def output(self, t, u):
        if t > 0.2:
            raise ValueError("probe lost")
        return (t,)


def diagram(block=None) -> Diagram:
    d = Diagram(1e-3)
    d.add("w", block or Wave())
    return d


def wait_for_url(view: LiveView) -> float:
    """When the view serves (polled every ms)."""
    while view.url is None:
        time.sleep(0.001)
    return time.perf_counter()


def collect(view: LiveView, out: list, delay: float = 0.0) -> threading.Thread:
    """A client thread: waits for the server (and ``delay`` seconds), reads the whole stream."""

    def read():
        while view.url is None:
            time.sleep(0.005)
        time.sleep(delay)
        out.extend(read_events(view.url))

    th = threading.Thread(target=read)
    th.start()
    return th


def test_the_stream_is_the_record_decimated_and_ends_with_its_last_row():
    view = LiveView(window=1.0, columns=100, announce=False)  # groups of 10 rows at 1 ms
    got = []
    th = collect(view, got)
    res = diagram().run(1.0, realtime=True, live=view)
    th.join(10)
    kinds = [k for k, _ in got]
    assert kinds[0] == "meta" and kinds[-1] == "end" and set(kinds[1:-1]) == {"data"}
    meta = got[0][1]
    assert meta["signals"] == ["w.sin", "w.spike", "w.t2"] and meta["group"] == 10
    data = [d for k, d in got if k == "data"]
    last = data[-1]
    assert last["last"] == res.values[-1].tolist()  # exactly: JSON floats round-trip
    assert last["last_t"] == pytest.approx(res.t[-1], abs=1e-12) and last["rows"] == len(res)
    assert got[-1][1] == {"status": "finished", "rows": len(res), "rows_skipped": 0}
    # every group: its first time, and min / max of each signal over its rows, exactly
    start, g, checked = 0, 10, 0
    for msg in data:
        first = round(msg["t"][0] / 1e-3)
        assert first == start  # contiguous: nothing lost between messages
        for i, t in enumerate(msg["t"]):
            r = round(t / 1e-3)
            rows = res.values[r:min(r + g, msg["rows"])]
            assert [msg["lo"][j][i] for j in range(3)] == rows.min(axis=0).tolist()
            assert [msg["hi"][j][i] for j in range(3)] == rows.max(axis=0).tolist()
            checked += 1
        start = msg["rows"]
    assert start == len(res) and checked == math.ceil(len(res) / g)
    # a one-sample spike survives the decimation
    assert max(max(msg["hi"][1]) for msg in data) == 5.0
    assert res.stats["live"]["clients"] == 1 and res.stats["live"]["status"] == "finished"


def test_a_late_client_skips_what_is_older_than_the_window_and_the_loop_does_not_wait():
    view = LiveView(window=0.1, announce=False)
    got = []
    th = collect(view, got, delay=0.6)
    res = diagram().run(1.0, realtime=True, live=view)
    th.join(10)
    data = [d for k, d in got if k == "data"]
    assert data[0]["t"][0] >= 0.4  # joined at about 0.6 s: one window back at most (+ slack)
    assert data[-1]["last"] == res.values[-1].tolist()
    assert res.stats["live"]["rows_skipped"] >= 400
    assert got[-1][1]["rows_skipped"] == res.stats["live"]["rows_skipped"]
    assert res.stats["rtf_achieved"] == pytest.approx(1.0, abs=0.02)


def test_a_client_that_never_reads_is_dropped_and_does_not_hold_the_run():
    """300 signals a message fill the client's socket buffer within the run; the server's write
    then blocks (in its thread) until SEND_TIMEOUT, the client is dropped and counted; the run
    keeps its pace and returns soon after its end."""
    view = LiveView(window=1.0, columns=100_000, announce=False)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)

    def stall():
        while view.url is None:
            time.sleep(0.005)
        sock.connect(("127.0.0.1", int(view.url.rsplit(":", 1)[1].strip("/"))))
        sock.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")  # and never reads

    th = threading.Thread(target=stall)
    th.start()
    served = []  # when the page is served (its server process started): the run starts then
    threading.Thread(target=lambda: served.append(wait_for_url(view))).start()
    res = diagram(Many()).run(2.0, realtime=True, live=view)
    wall = time.perf_counter() - served[0]
    th.join()
    sock.close()
    live = res.stats["live"]
    assert live["clients"] == 1 and live["clients_dropped"] == 1
    assert res.stats["rtf_achieved"] == pytest.approx(1.0, abs=0.02)
    assert wall < 2.0 + 2.5  # the run, then at most END_LINGER for the stalled client


def test_no_client_changes_nothing_and_the_port_is_freed():
    with socket.socket() as s:  # a free port, given to the view
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    plain = diagram().run(0.5)
    res = diagram().run(0.5, live=LiveView(port=port, announce=False))
    np.testing.assert_array_equal(res.values, plain.values)
    assert res.stats["live"]["url"] == f"http://127.0.0.1:{port}/"
    assert res.stats["live"]["clients"] == 0
    with socket.socket() as s:  # listening again on it works: the run's server is gone
        s.bind(("127.0.0.1", port))
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
    res2 = diagram().run(0.5, live=LiveView(port=port, announce=False))  # and again
    assert res2.stats["live"]["status"] == "finished"


def test_a_failing_run_ends_the_stream_with_its_error_and_frees_the_port():
    view = LiveView(announce=False)
    got = []
    th = collect(view, got)
    with pytest.raises(BlockRunError, match="probe lost") as info:
        diagram(FailsAt()).run(1.0, realtime=True, live=view)
    th.join(10)
    assert got[-1][0] == "end" and got[-1][1]["status"].startswith("failed: w at t=0.201")
    data = [d for k, d in got if k == "data"]
    assert data[-1]["last"] == info.value.result.values[-1].tolist()
    assert info.value.result.stats["live"]["status"].startswith("failed")
    port = int(view.url.rsplit(":", 1)[1].strip("/"))
    with pytest.raises(ConnectionRefusedError):  # nobody listens
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    # the port can be listened on again (SO_REUSEADDR, as every server sets it: the connection
    # the server closed stays in TIME_WAIT for a minute)
    res = diagram().run(0.1, live=LiveView(port=port, announce=False))
    assert res.stats["live"]["status"] == "finished"


def test_the_page_is_served_and_loads_nothing_from_the_network():
    view = LiveView(announce=False)
    pages = {}

    def fetch():
        while view.url is None:
            time.sleep(0.005)
        pages["/"] = urllib.request.urlopen(view.url, timeout=5).read().decode()
        try:
            urllib.request.urlopen(view.url + "nothing", timeout=5)
        except urllib.error.HTTPError as exc:
            pages["404"] = exc.code

    th = threading.Thread(target=fetch)
    th.start()
    diagram().run(0.5, realtime=True, live=view)
    th.join(10)
    page = pages["/"]
    assert "<canvas" in page and 'new EventSource("events")' in page
    assert "http://" not in page and "https://" not in page and "src=" not in page
    assert pages["404"] == 404


def test_a_view_serves_one_run_at_a_time():
    view = LiveView(announce=False)
    view.open(["w.sin"], 0.0, 1e-3, 10)
    try:
        with pytest.raises(Exception, match="already serves a run at http://127.0.0.1:"):
            diagram().run(0.1, live=view)
    finally:
        view.close()


def test_live_true_serves_every_recorded_signal_and_says_where(capsys):
    res = diagram().run(0.05, live=True)
    live = res.stats["live"]
    assert live["signals"] == ["w.sin", "w.spike", "w.t2"] and live["group"] == 10
    assert capsys.readouterr().err == f"live view of the run: {live['url']}\n"
    assert diagram().run(0.05, live=LiveView(["w.t2", "w"], announce=False)).stats["live"][
        "signals"] == ["w.t2", "w.sin", "w.spike"]  # a block name: its recorded outputs


def test_the_end_of_the_run_wakes_a_client_that_waits_for_its_next_update():
    view = LiveView(rate=0.1, announce=False)  # one update every 10 s
    got = []
    th = collect(view, got)
    served = []  # when the page is served (its server process started): the run starts then
    threading.Thread(target=lambda: served.append(wait_for_url(view))).start()
    res = diagram().run(0.3, realtime=True, live=view)
    wall = time.perf_counter() - served[0]
    th.join(10)
    assert wall < 1.5 and got[-1][0] == "end"
    assert [d for k, d in got if k == "data"][-1]["last"] == res.values[-1].tolist()
