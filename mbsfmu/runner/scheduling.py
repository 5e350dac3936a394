"""Execution order of a diagram's blocks from its direct-feed-through graph; algebraic loops.

The graph has one node per block and an edge ``a -> b`` when an output of ``a`` drives an input
of ``b`` that some output of ``b`` depends on at the same instant (``b.feedthrough()``).  Within
one diagram step every block's ``output`` must run after the outputs it reads directly, i.e. in
a topological order of this graph.  A cycle in it is an algebraic loop: the outputs of the
blocks on the cycle depend on themselves at the same instant.

The strongly connected components (Tarjan 1972) are the maximal sets of blocks that reach each
other; a component of more than one block, or of one block with an edge to itself, is an
algebraic loop.  Contracting each component to one node leaves a DAG, whose topological order is
the execution order (ties broken by the order the blocks were added to the diagram, so that the
order is reproducible and reads like the user's own listing).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.errors import MbsError, SimulationError


class DiagramError(MbsError, ValueError):
    """A diagram is wired or configured wrongly (the message names the blocks and ports)."""


@dataclass(frozen=True)
class AlgebraicLoop:
    """One algebraic loop: its blocks and the direct-feed-through connections between them."""

    blocks: tuple[str, ...]
    #: ("src.port", "dst.port") pairs inside the loop whose destination input is feed-through
    connections: tuple[tuple[str, str], ...]

    def __str__(self) -> str:
        via = ", ".join(f"{a} -> {b}" for a, b in self.connections)
        return f"[{', '.join(self.blocks)}] via {via}"


class AlgebraicLoopError(DiagramError, SimulationError):
    """Algebraic loops in the diagram (``.loops``: list of :class:`AlgebraicLoop`), or, with
    ``algebraic_loops="iterate"``, a loop that did not converge (then also ``.t``, ``.residual``
    and ``.result``, the signals recorded before the failing step)."""

    def __init__(self, message: str, loops=(), t: float | None = None,
                 residual: float | None = None):
        super().__init__(message)
        self.loops = list(loops)
        self.t = t
        self.residual = residual
        self.result = None


def strongly_connected_components(succ: Sequence[Sequence[int]]) -> list[list[int]]:
    """Tarjan's algorithm, iterative (no recursion limit on long chains).

    ``succ[v]`` lists the successors of node ``v`` (nodes are ``0 .. len(succ) - 1``).  Returns
    the components, each a list of nodes, in reverse topological order of the condensed graph
    (a component is listed before every component that has an edge into it).
    """
    n = len(succ)
    index = [-1] * n  # discovery number, -1: not visited
    low = [0] * n  # smallest discovery number reachable through the DFS subtree + one back edge
    on_stack = [False] * n
    stack: list[int] = []
    components: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        # explicit DFS stack of (node, position of the next successor to visit)
        work = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, i = work[-1]
            if i < len(succ[v]):
                work[-1] = (v, i + 1)
                w = succ[v][i]
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp.append(w)
                    if w == v:
                        break
                components.append(sorted(comp))
    return components


def execution_order(succ: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """Components of the graph in execution order (topological, ties by smallest node number).

    Each entry is a tuple of nodes: one node for an ordinary block, several (or one with a self
    edge, see :func:`is_loop`) for an algebraic loop.
    """
    comps = strongly_connected_components(succ)
    comp_of = [0] * len(succ)
    for c, nodes in enumerate(comps):
        for v in nodes:
            comp_of[v] = c
    indeg = [0] * len(comps)
    csucc: list[set[int]] = [set() for _ in comps]
    for v, ws in enumerate(succ):
        for w in ws:
            a, b = comp_of[v], comp_of[w]
            if a != b and b not in csucc[a]:
                csucc[a].add(b)
                indeg[b] += 1
    # Kahn's algorithm with a heap keyed by the smallest node of each component
    heap = [(comps[c][0], c) for c in range(len(comps)) if indeg[c] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        _, c = heapq.heappop(heap)
        order.append(tuple(comps[c]))
        for d in csucc[c]:
            indeg[d] -= 1
            if indeg[d] == 0:
                heapq.heappush(heap, (comps[d][0], d))
    return order


def is_loop(component: Sequence[int], succ: Sequence[Sequence[int]]) -> bool:
    """True if ``component`` (from :func:`execution_order`) is an algebraic loop."""
    return len(component) > 1 or component[0] in succ[component[0]]


def tearing_order(members: Sequence[int], deps: dict[int, set[int]]) -> list[int]:
    """An order of the blocks of one loop that needs few torn signals.

    ``deps[v]`` holds the loop members whose outputs ``v`` reads with direct feed-through.
    Greedy: next comes the remaining block with the fewest direct dependencies on blocks not yet
    placed (ties: smallest number).  Every such dependency is a signal read before it is
    computed in a sweep, i.e. a torn signal that the loop solver iterates on.
    """
    remaining = list(members)
    placed: set[int] = set()
    order = []
    while remaining:
        best = min(remaining, key=lambda v: (len(deps.get(v, set()) - placed), v))
        remaining.remove(best)
        placed.add(best)
        order.append(best)
    return order


def call_schedule(owner: Sequence[int], slot_deps: Sequence[Sequence[int]]
                  ) -> tuple[list[tuple[bool, tuple[int, ...]]], list[tuple[int, ...]]]:
    """The sequence of ``output`` calls of one diagram step, from feed-through per *port*.

    ``owner[s]`` is the block of output slot ``s``; ``slot_deps[s]`` the slots that ``s``
    depends on at the same instant (the sources of the inputs in ``s``'s feed-through set).
    The graph on slots is ordered as in :func:`execution_order`; a cycle of slots is an
    algebraic loop.  Every call of a block computes all its outputs, so a block whose outputs
    are needed at different points of the order (the plant's state outputs first, an output
    fed through from the controller's force later) is called more than once: a slot is final
    after a call of its block that comes after the calls finishing all of its dependencies.
    Calling ``output`` again is allowed because it does not change the state.

    Returns ``(calls, loops)``: ``calls`` a list of ``(is_loop, blocks)``, ``blocks`` one block
    or the blocks of one loop (sorted); ``loops`` the slot sets of the loops, one per loop call
    and in the order of those calls.
    """
    n = len(owner)
    succ: list[list[int]] = [[] for _ in range(n)]
    for s, ds in enumerate(slot_deps):
        for d in ds:
            if s not in succ[d]:
                succ[d].append(s)
    final = [-1] * n          # position in calls of the call that finishes slot s
    last_call: dict[int, int] = {}
    calls: list[tuple[bool, tuple[int, ...]]] = []
    loops: list[tuple[int, ...]] = []
    for group in execution_order(succ):
        members = set(group)
        need = max((final[d] for s in group for d in slot_deps[s] if d not in members),
                   default=-1)
        if is_loop(group, succ):
            loops.append(group)
            blocks = tuple(sorted({owner[s] for s in group}))
            calls.append((True, blocks))
            pos = len(calls) - 1
            for b in blocks:
                last_call[b] = pos
        else:
            b = owner[group[0]]
            pos = last_call.get(b, -1)
            if pos <= need:
                calls.append((False, (b,)))
                pos = last_call[b] = len(calls) - 1
        for s in group:
            final[s] = pos
    return calls, loops
