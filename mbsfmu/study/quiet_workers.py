"""The worker processes of a sweep's own local cluster log only what is CRITICAL.

A sweep says itself what a user needs to know of a run or a worker (a failed row, a worker that
died, a lost scheduler).  Left at their default level, ``distributed``'s loggers in the worker
processes print tracebacks of the cluster's own teardown races into the user's terminal, for
instance a worker's heartbeat to the scheduler that closes after Ctrl-C or SIGTERM.  Only
worker processes that the sweep started get this plugin; a user's cluster keeps its logging,
and so does this process (the nannies here still say when a worker process dies).
"""

from __future__ import annotations

import functools
import logging

#: the name the plugin is registered under
NAME = "mbsfmu-quiet-worker-logs"


def quiet() -> None:
    """Raise the level of this process's ``distributed`` logger to CRITICAL."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


@functools.cache
def plugin_class() -> type:
    """A ``distributed`` WorkerPlugin that calls :func:`quiet` in each worker process it
    starts on (``distributed`` is an optional dependency: imported when a cluster starts)."""
    from distributed.diagnostics.plugin import WorkerPlugin

    return type("QuietWorkerLogs", (WorkerPlugin,), {"setup": lambda self, worker: quiet(),
                                                     "__module__": __name__})


def register(client) -> None:
    """Register the plugin on ``client``'s cluster (its present and future workers)."""
    client.register_plugin(plugin_class()(), name=NAME)
