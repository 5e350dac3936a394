"""The live view's server process (mbsfmu.runner.live_server) and its shared record
(mbsfmu.runner.live_record): the run does not depend on it, and nothing of it outlives the run.

- the server process killed mid-run: the run finishes with the same values as without a view,
  a RuntimeWarning says the view stopped, the counts the server kept before it died are read;
  one that hangs (stopped) is killed after the run within END_LINGER + EXIT_SLACK, and said so;
  one that cannot start is refused before the run;
- after a finished, a failed and an interrupted run (a real SIGINT to the process group, as
  Ctrl-C in a terminal): the server process is gone, the port refuses connections, no shared
  memory is left in /dev/shm nor mapped once the result is dropped, and the interpreter exits
  without any warning on stderr (no resource_tracker leak message).
"""

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from mbsfmu.runner import Block, Diagram
from mbsfmu.runner.live import LiveView, read_events
from mbsfmu.runner.live_record import SharedRecord

ROOT = pathlib.Path(__file__).resolve().parents[2]


class Wave(Block):
    outputs = ("sin", "t")

    def output(self, t, u):
        return (np.sin(7.0 * t), t)


def wave() -> Diagram:
    d = Diagram(1e-3)
    d.add("w", Wave())
    return d


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def test_the_server_killed_mid_run_leaves_the_run_to_finish_with_a_warning():
    view = LiveView(announce=False)
    got, killed = [], []

    def read_then_kill():
        while view.server_pid is None:
            time.sleep(0.005)
        stream = read_events(view.url)
        got.append(next(stream))  # meta: the server counted this client
        got.append(next(stream))  # a data message
        os.kill(view.server_pid, signal.SIGKILL)
        killed.append(time.perf_counter())
        try:
            got.extend(stream)
        except OSError:  # the server is gone: its stream breaks or just ends
            pass

    th = threading.Thread(target=read_then_kill)
    th.start()
    with pytest.warns(RuntimeWarning, match=r"live view at http://127\.0\.0\.1:\d+/: its server "
                      r"process ended during the run \(killed by SIGKILL\); the page did not "
                      r"follow the run to its end, the run went on without it"):
        res = wave().run(1.5, realtime=True, live=view)
    done = time.perf_counter()
    th.join(10)
    assert killed and done - killed[0] > 0.5  # killed mid-run, the run went on
    np.testing.assert_array_equal(res.values, wave().run(1.5).values)
    assert res.stats["rtf_achieved"] == pytest.approx(1.0, abs=0.02)
    live = res.stats["live"]
    assert live["status"] == "finished" and live["server"] == "ended during the run (killed by SIGKILL)"
    assert live["clients"] == 1 and live["messages"] >= 1  # kept in the shared header
    assert [k for k, _ in got[:2]] == ["meta", "data"] and "end" not in [k for k, _ in got]
    assert not pathlib.Path(f"/proc/{view.server_pid}").exists()
    assert refused(int(view.url.rsplit(":", 1)[1].strip("/")))


@pytest.mark.slow  # waits out END_LINGER + EXIT_SLACK: ~7 s
def test_a_server_that_hangs_is_killed_after_the_run_within_its_limit():
    """SIGSTOP mid-run: the server can neither serve nor exit; the run finishes, waits at most
    END_LINGER + EXIT_SLACK for it, kills it and says so."""
    from mbsfmu.runner.live import END_LINGER, EXIT_SLACK

    view = LiveView(announce=False)
    stopped = []

    def stop():
        while view.server_pid is None:
            time.sleep(0.005)
        time.sleep(0.2)
        os.kill(view.server_pid, signal.SIGSTOP)
        stopped.append(time.perf_counter())

    th = threading.Thread(target=stop)
    th.start()
    with pytest.warns(RuntimeWarning, match=r"its server process was killed: it did not stop "
                      r"within 5 s; the page did not follow the run to its end"):
        res = wave().run(0.5, realtime=True, live=view)
    th.join(10)
    waited = time.perf_counter() - stopped[0]
    assert 0.3 + END_LINGER + EXIT_SLACK - 0.5 < waited < 0.3 + END_LINGER + EXIT_SLACK + 1.5
    assert res.stats["live"]["server"] == "was killed: it did not stop within 5 s"
    assert len(res) == 501 and res.stats["live"]["status"] == "finished"
    assert not pathlib.Path(f"/proc/{view.server_pid}").exists()
    assert refused(int(view.url.rsplit(":", 1)[1].strip("/")))


def test_a_server_that_cannot_start_is_refused_before_the_run_and_leaves_nothing(monkeypatch):
    import mbsfmu.runner.live as live

    monkeypatch.setattr(live, "SERVER_MAIN", "raise SystemExit(3)")
    view = LiveView(announce=False)
    with pytest.raises(Exception, match=r"LiveView: the page's server process did not start: "
                       r"it ended \(exit code 3\)"):
        wave().run(0.1, live=view)
    assert view.url is None and view.rows == 0
    monkeypatch.undo()
    assert wave().run(0.1, live=view).stats["live"]["server"] == "served"  # the view is usable


def test_the_record_is_shared_between_two_mappings_and_counts_rows_after_writing_them():
    rec = SharedRecord.create(5, 3)
    try:
        other = SharedRecord.attach(os.dup(rec.fd), 5, 3)  # as the server maps it
        assert np.isnan(other.values).all() and other.rows == 0
        rec.values[0] = [1.0, 2.0, 3.0]
        rec.header[0] = 1
        assert other.rows == 1 and other.values[0].tolist() == [1.0, 2.0, 3.0]
        other.add("messages", 2)
        other.add("clients")
        assert rec.counts() == {"clients": 1, "messages": 2, "rows_skipped": 0,
                                "clients_dropped": 0, "pose_messages": 0}
        other.close_fd()
    finally:
        rec.close_fd()


SCRIPT = r"""
import gc, json, os, socket, sys, threading, time
from mbsfmu.runner import Block, BlockRunError, Diagram
from mbsfmu.runner.live import LiveView

class Ramp(Block):
    outputs = ("y",)
    def __init__(self, fail_at=None):
        self.fail_at = fail_at
    def output(self, t, u):
        if self.fail_at is not None and t > self.fail_at:
            raise ValueError("probe lost")
        return (t,)

def diagram(block):
    d = Diagram(1e-3)
    d.add("r", block)
    return d

def mapped():
    return sum("mbsfmu-live-record" in line for line in open("/proc/self/maps"))

def say_when_served(view):
    while view.url is None:
        time.sleep(0.005)
    print("serving", flush=True)

shm = set(os.listdir("/dev/shm"))
report = {}
for case, block, t_end in [("finished", Ramp(), 0.3), ("failed", Ramp(fail_at=0.1), 1.0),
                           ("interrupted", Ramp(), 30.0)]:
    view = LiveView(announce=False)
    if case == "interrupted":  # the test sends SIGINT once the page is served
        threading.Thread(target=say_when_served, args=(view,)).start()
    try:
        res = diagram(block).run(t_end, realtime=True, live=view)
        outcome, rows = "returned", len(res)
    except BlockRunError as exc:
        outcome, rows = "raised " + str(exc).split(":")[0], len(exc.result)
    except KeyboardInterrupt:
        outcome, rows = "interrupted", None
    with_result = mapped()
    res = exc = None
    gc.collect()
    port = int(view.url.rsplit(":", 1)[1].strip("/"))
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        port_state = "open"
    except ConnectionRefusedError:
        port_state = "refused"
    report[case] = {"outcome": outcome, "rows": rows,
                    "server_alive": os.path.exists(f"/proc/{view.server_pid}"),
                    "port": port_state, "mapped": [with_result, mapped()]}
# a shared_memory segment (psm_...) or one named after us; other processes on the machine make
# their own meanwhile (multiprocessing's sem.mp-...), which are not this run's
report["shm_new"] = sorted(n for n in set(os.listdir("/dev/shm")) - shm
                           if n.startswith("psm_") or "mbsfmu" in n)
print(json.dumps(report), flush=True)
"""


@pytest.mark.slow  # three runs in a fresh interpreter, each starting its server: ~7 s
def test_nothing_of_the_view_outlives_a_finished_a_failed_or_an_interrupted_run():
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout.readline().strip() == "serving"  # the 30 s run, its page served
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal: to the process group
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    report = json.loads(out)
    assert report["finished"] == {"outcome": "returned", "rows": 301, "server_alive": False,
                                  "port": "refused", "mapped": [1, 0]}
    assert report["failed"] == {"outcome": "raised r at t=0.101", "rows": 101,
                                "server_alive": False, "port": "refused", "mapped": [1, 0]}
    assert report["interrupted"] == {"outcome": "interrupted", "rows": None, "server_alive": False,
                                     "port": "refused", "mapped": [0, 0]}
    assert report["shm_new"] == []
    assert err == ""  # no warning, traceback or resource_tracker message, also at exit


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to pin the server apart")
def test_the_server_runs_on_the_cpus_it_is_given():
    """LiveView(cpus=...) pins the server process (a test bench's split: the loop on a core of its
    own); the run's own CPUs are left as they were."""
    cpus = sorted(os.sched_getaffinity(0))
    view = LiveView(announce=False, cpus={cpus[-1]})
    seen = []

    def look():
        while view.server_pid is None:
            time.sleep(0.001)
        seen.append(os.sched_getaffinity(view.server_pid))

    reader = threading.Thread(target=look)
    reader.start()
    res = wave().run(0.3, live=view)
    reader.join()
    assert seen == [{cpus[-1]}] and os.sched_getaffinity(0) == set(cpus)
    assert res.stats["live"]["server"] == "served"


@pytest.mark.parametrize("cpus", [set(), {-1}, {10_000}, "0", {0.0}, {True}])
def test_bad_cpus_are_refused_by_name(cpus):
    from mbsfmu.runner.scheduling import DiagramError

    with pytest.raises(DiagramError, match=r"LiveView cpus must be a non-empty set of CPU numbers 0\.\."):
        LiveView(cpus=cpus)
