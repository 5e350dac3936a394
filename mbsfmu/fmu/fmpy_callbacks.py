"""Callbacks for driving FMUs with fmpy while keeping their log messages.

``recording_callbacks(messages)`` (FMI 2.0) returns an ``fmi2CallbackFunctions`` structure whose logger
appends ``(status, category, message)`` to the list ``messages`` and whose memory functions are
the C library's calloc/free.  Keep the returned object alive as long as the FMU instance (ctypes
callbacks must not be collected).  Our native FMUs escape '%' in their messages, so the logger
takes the message text as it is (no printf formatting).  ``fmi3_recorder(messages)`` is FMI 3.0's
counterpart: a ``logMessage`` function for fmpy's FMI 3.0 ``instantiate`` (and for
``simulate_fmu(logger=...)`` of an FMI 3.0 FMU, which hands it to the FMU without a proxy).

``recorded_messages(messages)`` is for ``fmpy.simulate_fmu``: within it, the log messages of FMUs
that this thread runs with fmpy's default callbacks are appended to ``messages``.  fmpy's own
``logger=`` option cannot be used for this: its C proxy (which formats the messages) keeps the
last logger given in one global pointer, which then dangles once that ``simulate_fmu`` call has
returned (the next FMU message of any instance crashes the process) and which concurrent runs
share.  So the proxy is pointed, once and for good, at one logger of ours that hands each message
to the list of the thread that runs the FMU, or prints it as fmpy's default logger does.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading

#: the sinks of the current thread's FMU messages (a list and a callable), for the dispatcher
_SINKS = threading.local()
#: the ctypes logger of fmpy's proxy, kept for the life of the process
_DISPATCHER = []


def recording_callbacks(messages: list):
    """fmpy callbacks that record every log message of an FMU instance in ``messages``."""
    from fmpy.fmi2 import (
        fmi2CallbackAllocateMemoryTYPE,
        fmi2CallbackFreeMemoryTYPE,
        fmi2CallbackFunctions,
        fmi2CallbackLoggerTYPE,
    )

    libc = ctypes.CDLL(None)
    libc.calloc.restype = ctypes.c_void_p
    libc.calloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]

    def logger(env, instance, status, category, message):
        messages.append((status, (category or b"").decode(), (message or b"").decode()))

    cb = fmi2CallbackFunctions()
    cb.logger = fmi2CallbackLoggerTYPE(logger)
    cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(libc.calloc)
    cb.freeMemory = fmi2CallbackFreeMemoryTYPE(libc.free)
    return cb


def fmi3_recorder(messages: list, also=None):
    """An FMI 3.0 ``logMessage(instanceEnvironment, status, category, message)`` that appends
    ``(status, category, message)`` to ``messages`` and passes its arguments on to ``also``."""

    def log_message(env, status, category, message):
        messages.append((int(status), (category or b"").decode(errors="replace"),
                         (message or b"").decode(errors="replace")))
        if also is not None:
            also(env, status, category, message)

    return log_message


def _dispatch(env, instance, status, category, message):
    sinks = getattr(_SINKS, "sinks", None)
    if sinks is None:
        from fmpy.fmi1 import printLogMessage

        printLogMessage(env, instance, status, category, message)
        return
    messages, also = sinks
    messages.append((int(status), (category or b"").decode(errors="replace"),
                     (message or b"").decode(errors="replace")))
    if also is not None:
        also(env, instance, status, category, message)


def _point_proxy_at_dispatcher() -> None:
    from fmpy.fmi2 import fmi2CallbackFunctions, fmi2CallbackLoggerTYPE

    try:
        from fmpy.logging import addLoggerProxy
    except Exception:  # fmpy without its proxy library (some platforms): nothing is recorded
        return

    if not _DISPATCHER:
        _DISPATCHER.append(fmi2CallbackLoggerTYPE(_dispatch))
    cb = fmi2CallbackFunctions()
    cb.logger = _DISPATCHER[0]
    addLoggerProxy(ctypes.byref(cb))  # the proxy's one global logger is now the dispatcher


@contextlib.contextmanager
def recorded_messages(messages: list, also=None):
    """Within: ``(status, category, message)`` of every message that an FMU run by this thread
    with fmpy's default callbacks (``simulate_fmu`` without ``logger``) logs goes to
    ``messages``, and the logger's arguments to ``also`` (a caller's logger) if given."""
    _point_proxy_at_dispatcher()  # again each time: someone's logger= may have taken it
    before = getattr(_SINKS, "sinks", None)
    _SINKS.sinks = (messages, also)
    try:
        yield messages
    finally:
        _SINKS.sinks = before
