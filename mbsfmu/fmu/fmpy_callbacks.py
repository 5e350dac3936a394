"""FMI 2.0 callbacks for driving FMUs with fmpy's ``FMU2Slave`` while keeping their log messages.

``recording_callbacks(messages)`` returns an ``fmi2CallbackFunctions`` structure whose logger
appends ``(status, category, message)`` to the list ``messages`` and whose memory functions are
the C library's calloc/free.  Keep the returned object alive as long as the FMU instance (ctypes
callbacks must not be collected).  Our native FMUs escape '%' in their messages, so the logger
takes the message text as it is (no printf formatting).
"""

from __future__ import annotations

import ctypes


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
