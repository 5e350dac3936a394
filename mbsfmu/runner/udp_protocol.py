"""The UDP wire format of the HIL blocks (:class:`blocks.udp.UdpSend`, :class:`blocks.udp.UdpReceive`).

One datagram carries one sample: a fixed 20-byte header followed by ``n_values`` doubles.  Every
field is **little-endian**, without padding (C: ``#pragma pack(1)`` or byte-wise copies)::

    offset  size  type     field      meaning
    ------  ----  -------  ---------  ------------------------------------------------------------
         0     4  char[4]  magic      the ASCII bytes "MBSU" (0x4D 0x42 0x53 0x55)
         4     1  uint8    version    1 (VERSION); any other value is refused
         5     1  uint8    flags      reserved: senders write 0, receivers ignore it
         6     2  uint16   n_values   number of values that follow (0 .. MAX_VALUES)
         8     4  uint32   sequence   sender's sample counter, +1 per datagram, wraps 2^32-1 -> 0
        12     8  float64  timestamp  sender's simulation time of the sample [s]; finite
        20  8*n   float64  values[n]  the port values in port order (IEEE 754; NaN/inf allowed)

A datagram is exactly ``20 + 8 * n_values`` bytes long (at most 65507, the UDP payload limit over
IPv4, hence ``MAX_VALUES`` = 8185).  A peer that answers a request echoes the request's sequence
number, and its timestamp is the simulation time its measurement belongs to.

On a little-endian machine (x86, ARM as usually configured) the header is this C struct::

    #pragma pack(push, 1)
    typedef struct { char magic[4]; uint8_t version, flags; uint16_t n_values;
                     uint32_t sequence; double timestamp; } mbsu_header_t;   /* 20 bytes */
    #pragma pack(pop)
"""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Sequence

from .block import BlockError

MAGIC = b"MBSU"
VERSION = 1
HEADER = struct.Struct("<4sBBHId")
HEADER_SIZE = HEADER.size  # 20
VALUE_SIZE = 8
MAX_DATAGRAM = 65507
MAX_VALUES = (MAX_DATAGRAM - HEADER_SIZE) // VALUE_SIZE
SEQUENCE_MODULUS = 1 << 32

_VALUES: dict[int, struct.Struct] = {}


class ProtocolError(BlockError):
    """A datagram that does not follow the wire format (the message says which field is wrong)."""


def _values_struct(n: int) -> struct.Struct:
    s = _VALUES.get(n)
    if s is None:
        s = _VALUES[n] = struct.Struct(f"<{n}d")
    return s


def pack(seq: int, t: float, values: Sequence[float], *, flags: int = 0) -> bytes:
    """One datagram: header (``seq`` modulo 2^32, timestamp ``t``) followed by ``values``."""
    n = len(values)
    if n > MAX_VALUES:
        raise ProtocolError(f"{n} values do not fit in one datagram (at most {MAX_VALUES})")
    t = float(t)
    if not math.isfinite(t):
        raise ProtocolError(f"timestamp {t!r} is not finite")
    if not 0 <= flags <= 0xFF:
        raise ProtocolError(f"flags {flags!r} do not fit in one byte")
    seq = operator.index(seq) % SEQUENCE_MODULUS
    return HEADER.pack(MAGIC, VERSION, flags, n, seq, t) + _values_struct(n).pack(
        *(float(v) for v in values)
    )


def unpack(data: bytes, n_expected: int | None = None) -> tuple[int, float, tuple[float, ...]]:
    """``(sequence, timestamp, values)`` of one datagram; :class:`ProtocolError` if it is malformed.

    ``n_expected``, if given, is the number of values the receiver needs; another count is refused.
    """
    size = len(data)
    if size < HEADER_SIZE:
        raise ProtocolError(f"datagram of {size} bytes is shorter than the {HEADER_SIZE}-byte header")
    magic, version, _flags, n, seq, t = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise ProtocolError(f"bad magic {magic!r} (expected {MAGIC!r})")
    if version != VERSION:
        raise ProtocolError(f"protocol version {version} is not supported (expected {VERSION})")
    if size != HEADER_SIZE + VALUE_SIZE * n:
        raise ProtocolError(
            f"datagram of {size} bytes does not match n_values={n} "
            f"(expected {HEADER_SIZE} + 8*{n} = {HEADER_SIZE + VALUE_SIZE * n} bytes)"
        )
    if n_expected is not None and n != n_expected:
        raise ProtocolError(f"datagram carries {n} values, expected {n_expected}")
    if not math.isfinite(t):
        raise ProtocolError(f"timestamp {t!r} of sequence {seq} is not finite")
    return seq, t, _values_struct(n).unpack_from(data, HEADER_SIZE)
