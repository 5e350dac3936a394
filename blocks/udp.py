"""UDP blocks for hardware in the loop: send input samples to a peer, receive its samples.

Both speak the wire format of :mod:`mbsfmu.runner.udp_protocol` (a 20-byte header with sequence
number and simulation timestamp, then the values as little-endian doubles).  Neither has
feed-through, so a loop ``controller -> UdpSend ... peer ... UdpReceive -> controller`` is never an
algebraic loop: the peer's answer to the command sent at ``t_k`` is read at ``t_{k+1}`` (the
one-sample transport delay of a request-reply HIL loop).

Both blocks own a socket, so they cannot snapshot their state (``get_state()`` is ``None``).
"""

from __future__ import annotations

import select
import socket
import sys
import time

from mbsfmu.runner.block import Block, BlockError
from mbsfmu.runner.udp_protocol import MAX_VALUES, SEQUENCE_MODULUS, ProtocolError, pack, unpack

from .math_blocks import period, port_names, real

_HALF = SEQUENCE_MODULUS // 2
#: how many of the most recent missing sequence numbers a receiver remembers, so that a packet
#: arriving after a newer one can be told apart from a duplicate (and taken off the loss count)
GAP_WINDOW = 4096
_RECV_SIZE = 65536
#: Linux: the socket option that makes the kernel attach its count of datagrams dropped for a full
#: receive buffer to every received datagram (socket(7)); the socket module may not name it
SO_RXQ_OVFL = getattr(socket, "SO_RXQ_OVFL", 40)
_OVFL_SPACE = socket.CMSG_SPACE(4)
#: Linux: getsockopt(SOL_SOCKET, SO_MEMINFO) reads the socket's memory counters (sock_diag.h), the
#: ninth of them (SK_MEMINFO_DROPS) the same cumulative drop count, at any time, no datagram needed
SO_MEMINFO = getattr(socket, "SO_MEMINFO", 55)
_MEMINFO_DROPS = 8


def _port(name: str, value, *, zero_ok: bool) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not (0 if zero_ok else 1) <= value <= 65535:
        lo = 0 if zero_ok else 1
        raise BlockError(f"{name} must be an integer UDP port in {lo}..65535, got {value!r}")
    return value


def _ports(kind: str, names) -> tuple[str, ...]:
    """Port names, at most the MAX_VALUES values one datagram carries."""
    names = port_names(kind, names)
    if len(names) > MAX_VALUES:
        raise BlockError(f"{kind}: {len(names)} ports, more than the {MAX_VALUES} values one datagram "
                         "carries")
    return names


def _host(name: str, value) -> str:
    if not isinstance(value, str) or not value:
        raise BlockError(f"{name} must be a host name or IPv4 address string, got {value!r}")
    return value


def _is_real(v) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _close(sock: socket.socket | None) -> None:
    if sock is not None:
        sock.close()


class UdpSend(Block):
    """Send the inputs once per sample as one datagram to ``(host, port)``.

    Sending is a side effect, so it happens in :meth:`update` (once per sample period, never in
    ``output``, which the runner may call several times at one instant).  The datagram carries the
    sequence number (0 at ``start``, +1 per sample), the sample instant ``t`` and the inputs in
    port order.  ``bind=(host, port)`` fixes the local address the datagrams leave from (default:
    any, chosen by the OS).  The block has no outputs.

    Attributes: ``sent`` (datagrams sent since ``start``), ``address`` (local address after
    ``start``).
    """

    def __init__(self, host: str, port: int, inputs=("u",), *, sample_time=None, bind=None):
        self.host = _host("UdpSend host", host)
        self.port = _port("UdpSend port", port, zero_ok=False)
        self.inputs = _ports("UdpSend inputs", inputs)
        self.outputs = ()
        self.sample_time = period(sample_time)
        if bind is not None:
            try:
                bhost, bport = bind
            except (TypeError, ValueError):
                raise BlockError(f"UdpSend bind must be a (host, port) pair, got {bind!r}") from None
            bind = (_host("UdpSend bind host", bhost), _port("UdpSend bind port", bport, zero_ok=True))
        self.bind = bind
        self._sock: socket.socket | None = None
        self._seq = 0
        self.sent = 0

    def _peer(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def address(self) -> tuple[str, int] | None:
        """The local (host, port) the datagrams leave from; None before ``start``."""
        return self._sock.getsockname() if self._sock is not None else None

    def start(self, t0, dt):
        self.stop()
        try:
            self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            if self.bind is not None:
                self._sock.bind(self.bind)
        except OSError as e:
            self.stop()
            raise BlockError(f"UdpSend to {self._peer()}: cannot bind {self.bind}: {e}") from e
        self._seq = 0
        self.sent = 0

    def output(self, t, u):
        return ()

    def update(self, t, u):
        if self._sock is None:
            raise BlockError(f"UdpSend to {self._peer()}: update before start (or after stop)")
        if len(u) != len(self.inputs):
            raise BlockError(f"UdpSend to {self._peer()}: {len(u)} input values for ports {self.inputs}")
        try:
            data = pack(self._seq, t, u)
        except (TypeError, ValueError) as e:  # a value that is not a number
            bad = next((f"{p} = {v!r}" for p, v in zip(self.inputs, u) if not _is_real(v)), str(e))
            raise BlockError(f"UdpSend to {self._peer()}: input {bad} is not a number") from None
        except ProtocolError as e:  # a time stamp that is not finite
            raise ProtocolError(f"UdpSend to {self._peer()}: sequence {self._seq} at t={t!r}: {e}") from None
        try:
            self._sock.sendto(data, (self.host, self.port))
        except OSError as e:
            raise BlockError(f"UdpSend to {self._peer()}: sequence {self._seq} not sent: {e}") from e
        self._seq = (self._seq + 1) % SEQUENCE_MODULUS
        self.sent += 1

    def stop(self):
        sock, self._sock = self._sock, None
        _close(sock)

    def get_state(self):
        return None


class UdpReceive(Block):
    """Outputs the values of the newest datagram received on the local address ``(host, port)``.

    ``host`` is the address bound (default loopback; ``"0.0.0.0"`` for a peer on another
    machine); ``port=0`` lets the OS choose (read it from :attr:`address` after ``start``).
    Datagrams from any peer are accepted; each must carry ``len(outputs)`` values.

    Sampling (the choice made here)
        The socket is drained at the *first* ``output`` call of each sample instant ``t`` and the
        result is cached by ``t``: further calls at the same ``t`` (an algebraic-loop iteration)
        return the same values without touching the socket, so ``output`` stays idempotent, and
        the outputs at ``t`` reflect every datagram that arrived before the sample was computed.
        ``update`` does nothing.
    Draining
        Every queued datagram is read.  If none of them is a *fresh* packet (a new sequence number
        whose timestamp is not older than ``t - max_age``), the block waits up to ``timeout``
        seconds of wall-clock time for one (``select``; never an unbounded block).  The first
        sample after ``start`` does not wait: in a request-reply loop the first request leaves in
        the ``update`` of that sample, so no answer can be there yet.
    Sequence numbers (modulo 2^32, compared as serial numbers)
        The newest sequence wins.  ``received`` counts well-formed datagrams; ``lost`` counts the
        sequence numbers skipped between two packets (a skipped packet that turns up later is
        taken off again); ``out_of_order`` counts packets older than the newest one seen (their
        values are discarded); ``duplicates`` counts a (recent) sequence number received a second time;
        ``malformed`` counts datagrams refused by the protocol (bad header, wrong length or a
        number of values different from ``len(outputs)``).
    Receive buffer and kernel drops
        ``rcvbuf`` (bytes) asks the kernel for that receive buffer (SO_RCVBUF); what it granted
        is :attr:`rcvbuf_granted` (Linux doubles the request and has a floor).  A burst that
        does not fit is dropped by the kernel before the block sees it.  ``kernel_dropped``
        counts those datagrams exactly where the platform reports them: on Linux the kernel's
        count is read at every sample, after the queue is drained, and once more when the block
        stops (SO_MEMINFO), so a burst with no packet after it is counted by the next sample or
        at the end of the run (on older kernels the count arrives with the next datagram,
        SO_RXQ_OVFL).  Their sequence numbers count as ``lost`` as soon as a later packet
        arrives, like any gap (a tail that no packet follows is in ``kernel_dropped`` only).
    Lateness and policy
        ``late`` counts the samples at which no fresh packet arrived within ``timeout``.  A new
        packet older than ``max_age`` (seconds of simulation time; ``None``: no limit) still
        advances the sequence but does not refresh the outputs.  With ``policy="hold"`` the
        outputs then keep the last fresh values (``initial`` before the first one); with
        ``policy="fail"`` the sample raises :class:`BlockError` naming the address, the peer and
        the counters.  A malformed datagram raises too under ``policy="fail"``.

    Attributes: ``counters`` (the dict of the six counts, reset by ``start``), ``sequence`` and
    ``timestamp`` of the newest packet, ``peer`` (its sender), ``address`` (bound address).

    In a request-reply loop the peer's answer timestamped ``t_k`` is read at ``t_{k+1}``, so
    ``max_age`` must be at least one sample period there.  A peer that restarts its sequence at 0
    looks like a stream of old packets: restart the run with it.
    """

    POLICIES = ("hold", "fail")
    COUNTERS = ("received", "lost", "out_of_order", "late", "malformed", "duplicates",
                "kernel_dropped")
    #: receive buffer sizes accepted (bytes)
    RCVBUF_RANGE = (256, 1 << 30)
    #: the longest wait for one sample's packet (s): longer is a hang, not a timeout
    MAX_TIMEOUT = 3600.0

    def __init__(self, port: int, outputs=("y",), *, host: str = "127.0.0.1", timeout: float = 0.0,
                 policy: str = "hold", initial=0.0, max_age=None, sample_time=None, rcvbuf=None):
        self.port = _port("UdpReceive port", port, zero_ok=True)
        self.host = _host("UdpReceive host", host)
        self.outputs = _ports("UdpReceive outputs", outputs)
        self.inputs = ()
        self.timeout = real("UdpReceive timeout", timeout)
        if self.timeout < 0.0:
            raise BlockError(f"UdpReceive timeout must be >= 0 seconds, got {timeout!r}")
        if self.timeout > self.MAX_TIMEOUT:
            raise BlockError(f"UdpReceive timeout must be at most {self.MAX_TIMEOUT:g} seconds (the wait of "
                             f"one sample; longer is a hang), got {timeout!r}")
        if policy not in self.POLICIES:
            raise BlockError(f"UdpReceive policy must be one of {self.POLICIES}, got {policy!r}")
        self.policy = policy
        n = len(self.outputs)
        if isinstance(initial, (int, float)) and not isinstance(initial, bool):
            initial = (initial,) * n
        try:
            initial = tuple(initial)
        except TypeError:
            raise BlockError(f"UdpReceive initial must be a number or one per output, got {initial!r}") \
                from None
        if len(initial) != n:
            raise BlockError(f"UdpReceive initial has {len(initial)} values for outputs {self.outputs}")
        self.initial = tuple(real(f"UdpReceive initial {o}", v, finite=False)
                             for o, v in zip(self.outputs, initial))
        if max_age is not None:
            max_age = real("UdpReceive max_age", max_age)
            if max_age <= 0.0:
                raise BlockError(f"UdpReceive max_age must be positive seconds (or None), got {max_age!r}")
        self.max_age = max_age
        lo, hi = self.RCVBUF_RANGE
        if rcvbuf is not None and (isinstance(rcvbuf, bool) or not isinstance(rcvbuf, int)
                                   or not lo <= rcvbuf <= hi):
            raise BlockError(f"UdpReceive rcvbuf must be a whole number of bytes in [{lo}, {hi}] "
                             f"(or None for the system default), got {rcvbuf!r}")
        self.rcvbuf = rcvbuf
        #: the receive buffer the kernel granted (bytes), known after start
        self.rcvbuf_granted: int | None = None
        self.sample_time = period(sample_time)
        self._sock: socket.socket | None = None
        self._reset()

    def _reset(self):
        self.counters = dict.fromkeys(self.COUNTERS, 0)
        self._values = self.initial
        self._sampled_at: float | None = None
        self._first = True
        #: newest sequence number seen (None before the first well-formed packet)
        self.sequence: int | None = None
        self._first_seq: int | None = None
        self.timestamp: float | None = None  # its timestamp
        self.peer: tuple[str, int] | None = None  # where the last well-formed packet came from
        self._missing: dict[int, None] = {}  # recent skipped sequence numbers, oldest first
        self._last_error: str | None = None
        self._ovfl = 0  # the kernel's cumulative drop count when it was last read
        self._kernel_counts = None  # how it is read: "meminfo", "datagram" or None (not at all)

    @property
    def address(self) -> tuple[str, int] | None:
        """The bound (host, port) after ``start`` (the port the OS chose if ``port=0``)."""
        return self._sock.getsockname() if self._sock is not None else None

    def _where(self) -> str:
        addr = self.address or (self.host, self.port)
        peer = f" from {self.peer[0]}:{self.peer[1]}" if self.peer else " (no packet from any peer yet)"
        return f"UdpReceive on {addr[0]}:{addr[1]}{peer}"

    def start(self, t0, dt):
        self.stop()
        self._reset()
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        except OSError as e:
            raise BlockError(f"UdpReceive: cannot create a socket: {e}") from e
        try:
            sock.setblocking(False)
            if self.rcvbuf is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.rcvbuf)
            sock.bind((self.host, self.port))
            self._kernel_counts = _drop_count_source(sock)
        except OSError as e:
            sock.close()
            raise BlockError(f"UdpReceive: cannot bind {self.host}:{self.port}: {e}") from e
        self.rcvbuf_granted = sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        self._sock = sock

    # -- one datagram ----------------------------------------------------------------------------

    def _accept(self, data: bytes, peer, t: float) -> bool:
        """Count one datagram; True if it is fresh (its values are now the outputs)."""
        c = self.counters
        try:
            seq, stamp, values = unpack(data, len(self.outputs))
        except ProtocolError as e:
            c["malformed"] += 1
            self._last_error = f"{e} (from {peer[0]}:{peer[1]})"
            if self.policy == "fail":
                raise ProtocolError(f"{self._where()}: malformed datagram: {self._last_error}; "
                                    f"counters {self.counters}") from None
            return False
        c["received"] += 1
        self.peer = peer
        if self.sequence is not None:
            ahead = (seq - self.sequence) % SEQUENCE_MODULUS
            if ahead == 0:
                c["duplicates"] += 1
                return False
            if ahead >= _HALF:  # older than the newest
                if seq in self._missing:
                    del self._missing[seq]
                    c["lost"] -= 1
                    c["out_of_order"] += 1
                elif ((seq - self._first_seq) % SEQUENCE_MODULUS < _HALF
                      and (self.sequence - seq) % SEQUENCE_MODULUS <= GAP_WINDOW):
                    c["duplicates"] += 1  # recent, not missing, not before the first: received before
                else:
                    c["out_of_order"] += 1  # too old to tell
                return False
            c["lost"] += ahead - 1
            for s in range(max(1, ahead - GAP_WINDOW), ahead):
                self._missing[(self.sequence + s) % SEQUENCE_MODULUS] = None
            while len(self._missing) > GAP_WINDOW:
                del self._missing[next(iter(self._missing))]
        else:
            self._first_seq = seq
        self.sequence, self.timestamp = seq, stamp
        if self.max_age is not None and stamp < t - self.max_age:
            return False
        self._values = values
        return True

    def _drain(self, t: float) -> bool:
        """Read every queued datagram; True if one of them was fresh."""
        fresh = False
        sock = self._sock
        while True:
            try:
                if self._kernel_counts == "datagram":
                    data, anc, _, peer = sock.recvmsg(_RECV_SIZE, _OVFL_SPACE)
                    for level, kind, value in anc:
                        if level == socket.SOL_SOCKET and kind == SO_RXQ_OVFL and len(value) >= 4:
                            self._count_kernel_drops(int.from_bytes(value[:4], sys.byteorder))
                else:
                    data, peer = sock.recvfrom(_RECV_SIZE)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as e:  # e.g. ICMP port unreachable reported on Windows
                self._last_error = str(e)
                break
            fresh = self._accept(data, peer, t) or fresh
        self._poll_kernel_drops()
        return fresh

    def _poll_kernel_drops(self) -> None:
        """Read the kernel's drop count now, where it can be read without a datagram."""
        if self._kernel_counts == "meminfo" and self._sock is not None:
            total = _meminfo_drops(self._sock)
            if total is not None:
                self._count_kernel_drops(total)

    def _count_kernel_drops(self, total: int) -> None:
        """Add the kernel's new drops (its count is cumulative per socket, modulo 2^32)."""
        self.counters["kernel_dropped"] += (total - self._ovfl) % SEQUENCE_MODULUS
        self._ovfl = total

    def _sample(self, t: float) -> None:
        first, self._first = self._first, False
        fresh = self._drain(t)
        if not fresh and not first and self.timeout > 0.0:
            deadline = time.monotonic() + self.timeout
            while not fresh:
                remaining = deadline - time.monotonic()
                if remaining <= 0.0:
                    break
                ready, _, _ = select.select((self._sock,), (), (), remaining)
                if not ready:
                    break
                fresh = self._drain(t)
        if fresh or first:
            return
        self.counters["late"] += 1
        if self.policy == "fail":
            age = ("" if self.timestamp is None
                   else f", newest sequence {self.sequence} stamped t={self.timestamp:g}")
            stale = "" if self.max_age is None else f" (or none younger than max_age={self.max_age:g} s)"
            raise BlockError(f"{self._where()}: no new packet within timeout={self.timeout:g} s{stale} "
                             f"at t={t:g}{age}; counters {self.counters}")

    # -- block interface -------------------------------------------------------------------------

    def output(self, t, u):
        if self._sampled_at != t:
            if self._sock is None:
                raise BlockError(f"{self._where()}: output before start (or after stop)")
            self._sampled_at = t  # set first: a failed sample is not retried at the same t
            self._sample(t)
        return self._values

    def stop(self):
        """Close the socket, after a last reading of the kernel's drop count (the datagrams
        dropped since the last sample count too)."""
        self._poll_kernel_drops()
        sock, self._sock = self._sock, None
        _close(sock)

    def get_state(self):
        return None


def _meminfo_drops(sock) -> int | None:
    """The kernel's cumulative count of datagrams dropped on ``sock`` (Linux SO_MEMINFO), or
    None where the platform does not report it so."""
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, SO_MEMINFO, 4 * 16)
    except OSError:
        return None
    end = 4 * (_MEMINFO_DROPS + 1)
    return int.from_bytes(raw[end - 4:end], sys.byteorder) if len(raw) >= end else None


def _drop_count_source(sock) -> str | None:
    """How the kernel's drop count of ``sock`` is read: 'meminfo' (at any time, Linux >= 4.11),
    'datagram' (with each datagram received, SO_RXQ_OVFL) or None (not reported)."""
    if _meminfo_drops(sock) is not None:
        return "meminfo"
    if not hasattr(sock, "recvmsg"):
        return None
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RXQ_OVFL, 1)
    except OSError:
        return None
    return "datagram"


__all__ = ["UdpSend", "UdpReceive", "ProtocolError"]
