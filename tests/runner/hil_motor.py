"""Plays the hardware of a HIL test: a DC motor behind a UDP link (run as a second process).

The motor's speed follows the voltage command with a first-order lag, its angle integrates the
speed::

    tau * omega' = K * u - omega,        theta' = omega

Per command datagram ``(sequence k, timestamp t_k, [u_k])`` the motor advances from the previous
command's time ``t_{k-1}`` to ``t_k`` with ``u_{k-1}`` held (the exact zero-order-hold solution),
then answers ``(k, t_k, [theta(t_k), omega(t_k)])`` to ``--reply-port`` and holds ``u_k``.  The
first command only sets the start time (the motor starts at rest).  A command older than the last
one is ignored.

It implements the wire format from the layout table of ``mbsfmu.runner.udp_protocol`` with its own
``struct`` code (as the other side in C would), without importing mbsfmu.

Fault injection, counted over the commands processed (the n-th command is number n, from 1):

``--drop-every N``
    no reply to every N-th command;
``--delay-every N [--delay-ms D]``
    every N-th reply is held back and sent right *after* the first reply sent at least D ms
    (default 0) later, so it reaches the receiver after a newer packet (a reply both dropped and
    delayed is dropped);
``--garbage-every N``
    every N-th reply is preceded by a malformed datagram (cycling through bad magic, bad version,
    a length that does not match n_values, three values instead of two, a NaN timestamp);
``--exit-after N``
    exit after N commands (the peer dies).

The process exits by itself after ``--idle-exit`` seconds (default 3) without a command, on
SIGTERM, and after ``--exit-after``; it first sends any reply still held back, then prints one
JSON line with what it did (``commands``, ``dropped``, ``delayed``, ``garbage`` sequence numbers,
``exit`` reason).  Before the first command it prints ``listening <port>`` (the port the OS chose
when ``--port 0``).
"""

from __future__ import annotations

import argparse
import json
import math
import select
import signal
import socket
import struct
import sys
import time

HEADER = struct.Struct("<4sBBHId")  # magic, version, flags, n_values, sequence, timestamp
MAGIC, VERSION = b"MBSU", 1


def encode(seq: int, t: float, values, *, magic=MAGIC, version=VERSION, n=None) -> bytes:
    n = len(values) if n is None else n
    return HEADER.pack(magic, version, 0, n, seq, t) + struct.pack(f"<{len(values)}d", *values)


def decode(data: bytes):
    """(sequence, timestamp, values), or None if the datagram is not a valid command."""
    if len(data) < HEADER.size:
        return None
    magic, version, _flags, n, seq, t = HEADER.unpack_from(data)
    if magic != MAGIC or version != VERSION or n < 1 or len(data) != HEADER.size + 8 * n:
        return None
    if not math.isfinite(t):
        return None
    return seq, t, struct.unpack_from(f"<{n}d", data, HEADER.size)


def garbage(kind: int, seq: int, t: float) -> bytes:
    """One malformed reply of five kinds, each refused by a conforming receiver of two values."""
    kind %= 5
    if kind == 0:
        return encode(seq, t, (0.0, 0.0), magic=b"XBSU")
    if kind == 1:
        return encode(seq, t, (0.0, 0.0), version=VERSION + 1)
    if kind == 2:
        return encode(seq, t, (0.0, 0.0))[:-3]  # truncated: length does not match n_values
    if kind == 3:
        return encode(seq, t, (0.0, 0.0, 0.0))  # well-formed, but three values
    return encode(seq, math.nan, (0.0, 0.0))


class Motor:
    """First-order speed lag plus integrator, advanced exactly over a step with the input held."""

    def __init__(self, gain: float, tau: float):
        self.gain, self.tau = gain, tau
        self.theta = self.omega = 0.0

    def advance(self, h: float, u: float) -> None:
        if h <= 0.0:
            return
        target = self.gain * u
        decay = math.exp(-h / self.tau)
        delta = self.omega - target
        self.theta += target * h + delta * self.tau * (1.0 - decay)
        self.omega = target + delta * decay


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True, help="port the commands arrive on (0: any)")
    p.add_argument("--reply-port", type=int, required=True, help="port on --host the replies go to")
    p.add_argument("--gain", type=float, default=2.0, help="K: steady-state speed per unit command")
    p.add_argument("--tau", type=float, default=0.05, help="time constant [s]")
    p.add_argument("--drop-every", type=int, default=0)
    p.add_argument("--delay-every", type=int, default=0)
    p.add_argument("--delay-ms", type=float, default=0.0)
    p.add_argument("--garbage-every", type=int, default=0)
    p.add_argument("--exit-after", type=int, default=0)
    p.add_argument("--idle-exit", type=float, default=3.0, help="seconds without a command before exit")
    return p.parse_args(argv)


def every(n: int, count: int) -> bool:
    return n > 0 and count % n == 0


def main(argv=None) -> int:
    args = parse(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((args.host, args.port))
    reply_to = (args.host, args.reply_port)
    print(f"listening {sock.getsockname()[1]}", flush=True)

    motor = Motor(args.gain, args.tau)
    report = {"commands": 0, "dropped": [], "delayed": [], "garbage": [], "ignored": 0, "exit": "signal"}
    held: list[tuple[float, bytes]] = []  # (earliest release, datagram)
    t_prev = u_prev = None
    try:
        last = time.monotonic()
        while True:
            wait = args.idle_exit - (time.monotonic() - last)
            if wait <= 0.0 or not select.select((sock,), (), (), wait)[0]:
                report["exit"] = "idle"
                break
            data = sock.recv(65536)
            last = time.monotonic()
            cmd = decode(data)
            if cmd is None or (t_prev is not None and cmd[1] < t_prev):
                report["ignored"] += 1
                continue
            seq, t, values = cmd
            if t_prev is not None:
                motor.advance(t - t_prev, u_prev)
            t_prev, u_prev = t, values[0]
            report["commands"] += 1
            count = report["commands"]
            reply = encode(seq, t, (motor.theta, motor.omega))

            if every(args.garbage_every, count):
                sock.sendto(garbage(len(report["garbage"]), seq, t), reply_to)
                report["garbage"].append(seq)
            if every(args.drop_every, count):
                report["dropped"].append(seq)
            elif every(args.delay_every, count):
                report["delayed"].append(seq)
                held.append((last + args.delay_ms / 1000.0, reply))
            else:
                sock.sendto(reply, reply_to)
                # held replies go out after this newer one, so they arrive out of order
                for d in [d for r, d in held if r <= last]:
                    sock.sendto(d, reply_to)
                held = [(r, d) for r, d in held if r > last]
            if args.exit_after and count >= args.exit_after:
                report["exit"] = "exit_after"
                break
    finally:
        for _, d in held:
            sock.sendto(d, reply_to)
        sock.close()
        print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
