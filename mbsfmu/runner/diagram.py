"""A block diagram: named blocks wired output -> input, stepped together on a fixed time grid.

>>> d = Diagram(step=1e-3)
>>> src = d.add("src", Constant(1.0))          # doctest: +SKIP
>>> d.connect("src.y", "gain.u")                # doctest: +SKIP
>>> res = d.run(1.0)                            # doctest: +SKIP
>>> res["gain.y"]                               # doctest: +SKIP

Semantics of one diagram step ``n`` at ``t = t0 + n * step`` (as Simulink's discrete sample times):

1. every block *due* at ``n`` (``n % k == 0`` with ``k = sample_time / step``) computes
   ``output(t, u)`` in execution order: the topological order of the direct-feed-through graph
   (:mod:`~mbsfmu.runner.scheduling`), so a block sees the outputs of its feed-through sources of
   the same instant; algebraic loops are refused or solved (:mod:`~mbsfmu.runner.algebraic_loops`);
   the outputs of blocks not due are held (zero-order hold);
2. the signals are recorded;
3. every due block's ``update(t, u)`` advances its state to its next sample instant.

The grid is ``t0, t0 + step, ..., t0 + N step`` with ``N = round((t_end - t0) / step)``; at the
last point only outputs are computed.  Each run ``start``\\ s every block (with its own period) and
``stop``\\ s them at the end, also after an error, so a diagram can be run again.

Errors during a run are raised as :class:`BlockRunError` (a :class:`~mbsfmu.runner.block.
BlockError` and a :class:`~mbsfmu.core.errors.SimulationError`) with the message prefix
``"<block> at t=<t>: "``, chained to the block's own exception, or as
:class:`~mbsfmu.runner.scheduling.AlgebraicLoopError` / :class:`~mbsfmu.runner.realtime.
RealtimeError`; every one carries ``.result``, the signals recorded up to the failing step.

Rollback: ``output`` does not change a block's state, so after a failure while outputs are
computed every block is still in its state at the start of the failing step.  A failure in the
update phase leaves some blocks advanced.  If every block's ``get_state()`` returns a snapshot
(not ``None``) and ``rollback=True`` (default), the runner keeps a checkpoint (all blocks'
``get_state()``) every :data:`CHECKPOINT_EVERY` steps and the signals of the steps since; after
a failed update it restores the checkpoint and replays the ``update`` calls of the steps since
(the same inputs, so the same states for deterministic blocks), so that every block is left in its
state at the start of the failing step (``error.rolled_back`` is then True).  This costs a list
copy per step and one snapshot per :data:`CHECKPOINT_EVERY` steps instead of a snapshot per step.
"""

from __future__ import annotations

import difflib
import math
import time
from collections.abc import Sequence
from operator import itemgetter
from types import MappingProxyType

import numpy as np

from ..core.errors import SimulationError
from .algebraic_loops import LoopSolver
from .block import PORT_TYPES, Block, BlockError
from .live import LiveView
from .live_record import ROWS
from .realtime import Pacer, RealtimeError
from .result import Result
from .scheduling import (
    AlgebraicLoop,
    AlgebraicLoopError,
    DiagramError,
    call_schedule,
    tearing_order,
)

__all__ = ["Diagram", "DiagramError", "AlgebraicLoopError", "RealtimeError", "BlockRunError",
           "AlgebraicLoop", "Result", "CHECKPOINT_EVERY"]

#: steps between two rollback checkpoints (see the module docstring)
CHECKPOINT_EVERY = 100
#: precompute the due-block lists for every phase if the multi-rate hyperperiod is at most this
MAX_PHASES = 4096
#: relative tolerance of "sample time is an integer multiple of the step"
SAMPLE_TIME_RTOL = 1e-9


class BlockRunError(BlockError, SimulationError):
    """A block failed during a run: ``.block`` (name), ``.t``, ``.result`` (signals so far),
    ``.rolled_back`` (blocks restored to the start of the failing step from snapshots),
    ``.non_finite`` (the signal ``block.port`` whose value was not finite, when that stopped the
    run with ``check_finite=True``; else None)."""

    def __init__(self, message: str, block: str | None = None, t: float | None = None,
                 non_finite: str | None = None):
        super().__init__(message)
        self.block = block
        self.t = t
        self.result = None
        self.rolled_back = False
        self.non_finite = non_finite


class _Fault(Exception):
    """Raised inside the step loop by the runner's own checks: (block index, message, and the
    port whose value was not finite)."""

    def __init__(self, block: int, message: str, port: str | None = None):
        super().__init__(message)
        self.block = block
        self.port = port


def _gather(idx: tuple[int, ...]):
    """A function picking the values at ``idx`` from the signal list as a sequence (one C call)."""
    if len(idx) == 0:
        return itemgetter(slice(0, 0))
    if len(idx) == 1:
        return itemgetter(slice(idx[0], idx[0] + 1))
    if idx == tuple(range(idx[0], idx[0] + len(idx))):
        return itemgetter(slice(idx[0], idx[0] + len(idx)))
    return itemgetter(*idx)


def _finite(x) -> bool:
    return isinstance(x, (int, float, np.number)) and math.isfinite(x)


def _note(err: Exception, text: str) -> None:
    """Attach ``text`` to ``err`` (PEP 678 notes where available, else the message)."""
    if hasattr(err, "add_note"):
        err.add_note(text)
    else:  # Python 3.10
        err.args = (f"{err.args[0] if err.args else ''} ({text})",)


def _check_port(ref: str, name: str, block: Block, port: str, kind: str) -> None:
    """DiagramError unless ``port`` is an ``kind`` ("output" for a connection's source, "input"
    for its destination) of the block ``name``; the message says what the port is instead."""
    if kind == "output":
        own, other, role, goes = block.outputs, block.inputs, "source", "from an output"
    else:
        own, other, role, goes = block.inputs, block.outputs, "destination", "to an input"
    if port in own:
        return
    listed = ", ".join(own) or "none"
    if port in other:
        what = "input" if kind == "output" else "output"
        raise DiagramError(f"{role} {ref!r} is an {what} of {name!r}: a connection goes {goes} "
                           f"({kind}s of {name!r}: {listed})")
    raise DiagramError(f"block {name!r} has no {kind} {port!r} ({kind}s: {listed})")


def _split(ref, role: str) -> tuple[str, str]:
    if not isinstance(ref, str) or "." not in ref:
        raise DiagramError(f"{role} {ref!r}: expected 'block.port'")
    name, port = ref.split(".", 1)
    return name, port


class _Plan:
    """Everything a run needs, derived from the wiring (built by :meth:`Diagram._compile`)."""


class Diagram:
    """Blocks connected output -> input, run on a fixed grid of ``step`` seconds from ``t0``."""

    def __init__(self, step: float, t0: float = 0.0):
        if isinstance(step, bool) or not isinstance(step, (int, float)) or not (
                math.isfinite(step) and step > 0):
            raise DiagramError(f"step must be a positive finite number, not {step!r}")
        if isinstance(t0, bool) or not isinstance(t0, (int, float)) or not math.isfinite(t0):
            raise DiagramError(f"t0 must be a finite number, not {t0!r}")
        self.step = float(step)
        self.t0 = float(t0)
        self._blocks: dict[str, Block] = {}
        #: (destination block, input) -> (source block, output)
        self._driver: dict[tuple[str, str], tuple[str, str]] = {}

    # ------------------------------------------------------------------ wiring

    @property
    def blocks(self) -> MappingProxyType:
        """{name: block} in the order they were added (read-only)."""
        return MappingProxyType(self._blocks)

    @property
    def connections(self) -> list[tuple[str, str]]:
        """``("src.port", "dst.port")`` pairs in the order they were made."""
        return [(f"{a}.{p}", f"{b}.{q}") for (b, q), (a, p) in self._driver.items()]

    def __repr__(self) -> str:
        return (f"Diagram(step={self.step:g}, t0={self.t0:g}, {len(self._blocks)} blocks, "
                f"{len(self._driver)} connections)")

    def add(self, name: str, block: Block) -> Block:
        """Add ``block`` under ``name`` (an identifier: letters, digits, ``_``); returns it."""
        if not isinstance(name, str) or not name.isidentifier():
            raise DiagramError(f"block name {name!r}: must be an identifier (letters, digits, _; "
                               "no '.')")
        if name in self._blocks:
            raise DiagramError(f"block name {name!r} is already used")
        if not isinstance(block, Block):
            raise DiagramError(f"block {name!r}: {type(block).__name__} is not a Block")
        for kind in ("inputs", "outputs"):
            ports = getattr(block, kind)
            if not isinstance(ports, tuple) or not all(isinstance(p, str) and p for p in ports):
                raise DiagramError(f"block {name!r}: {kind} must be a tuple of port names, "
                                   f"not {ports!r}")
            if len(set(ports)) != len(ports):
                raise DiagramError(f"block {name!r}: duplicate names in {kind} {ports!r}")
        for port in block.inputs + block.outputs:
            if block.port_type(port) not in PORT_TYPES:
                raise DiagramError(f"block {name!r}: port {port!r} has type "
                                   f"{block.port_type(port)!r}, not one of {PORT_TYPES}")
        self._blocks[name] = block
        return block

    def _block(self, name: str, ref: str) -> Block:
        try:
            return self._blocks[name]
        except KeyError:
            close = difflib.get_close_matches(name, list(self._blocks), n=3)
            hint = f"did you mean {', '.join(close)}?" if close else (
                f"blocks: {', '.join(self._blocks) or 'none'}")
            raise DiagramError(f"unknown block {name!r} in {ref!r} ({hint})") from None

    def connect(self, src: str, dst: str) -> None:
        """Drive input ``dst`` (``"block.port"``) from output ``src`` (``"block.port"``)."""
        a, p = _split(src, "source")
        b, q = _split(dst, "destination")
        ba, bb = self._block(a, src), self._block(b, dst)
        _check_port(src, a, ba, p, "output")
        _check_port(dst, b, bb, q, "input")
        if (b, q) in self._driver:
            a0, p0 = self._driver[(b, q)]
            raise DiagramError(f"input {dst!r} is already driven by '{a0}.{p0}' (cannot also "
                               f"connect {src!r})")
        ta, tb = ba.port_type(p), bb.port_type(q)
        if ta != tb:
            raise DiagramError(f"port type mismatch: {src!r} is {ta}, {dst!r} is {tb}")
        self._driver[(b, q)] = (a, p)

    # ------------------------------------------------------------------ analysis

    def check(self, *, algebraic_loops: str = "error") -> list[AlgebraicLoop]:
        """Validate the diagram as :meth:`run` does before starting any block.

        Raises :class:`DiagramError` for unconnected inputs, bad sample times or a bad
        ``feedthrough()``, and :class:`AlgebraicLoopError` for algebraic loops unless
        ``algebraic_loops="iterate"``.  Returns the algebraic loops (empty if none).
        """
        return self._compile(algebraic_loops).loops

    def recorded_signals(self, record: Sequence[str] | None = None, *,
                         algebraic_loops: str = "error") -> list[str]:
        """The names ``block.port`` a :meth:`run` with these ``record`` and ``algebraic_loops``
        records (the columns of its result after ``time``), without running; the same errors
        as :meth:`check` and, for a name that cannot be recorded, a DiagramError."""
        return self._recorded(self._compile(algebraic_loops), record)[0]

    def execution_order(self) -> list[tuple[str, ...]]:
        """The ``output`` calls of one step in order: a block name, or a tuple of several names
        for an algebraic loop.  A block appears twice when one of its outputs is fed through
        from a signal that itself depends on another of its outputs (see
        :func:`~mbsfmu.runner.scheduling.call_schedule`); blocks without outputs are not
        listed (they are only updated)."""
        plan = self._compile("iterate")
        return [tuple(plan.names[i] for i in group) for _loop, group in plan.calls]

    def _compile(self, algebraic_loops: str, loop_tol: float = 1e-10,
                 loop_max_iter: int = 100) -> _Plan:
        """The plan of a run: sample periods, signal slots, the output calls in feed-through order
        with the algebraic loops among them, and the update order."""
        if algebraic_loops not in ("error", "iterate"):
            raise DiagramError(f"algebraic_loops must be 'error' or 'iterate', not "
                               f"{algebraic_loops!r}")
        if not self._blocks:
            raise DiagramError("the diagram has no blocks")
        plan = _Plan()
        plan.names, plan.blocks = list(self._blocks), list(self._blocks.values())
        missing = [f"{name}.{q}" for name, b in self._blocks.items() for q in b.inputs
                   if (name, q) not in self._driver]
        if missing:
            raise DiagramError(f"{len(missing)} unconnected input(s): {', '.join(missing)}")
        plan.ks = self._sample_periods()
        self._signal_slots(plan)
        slot_deps, owner = self._feedthrough(plan)
        plan.calls, slot_loops = call_schedule(owner, slot_deps)
        self._algebraic_loops(plan, slot_loops, slot_deps, owner)
        if plan.loops and algebraic_loops == "error":
            raise AlgebraicLoopError(
                f"{len(plan.loops)} algebraic loop(s): "
                + "; ".join(str(loop) for loop in plan.loops)
                + ". Break each with a block without direct feed-through (e.g. blocks.UnitDelay) or "
                "run with algebraic_loops='iterate'", loops=plan.loops)
        # every block is updated once per due step, in the order of its first output call
        seen = []
        for _loop, group in plan.calls:
            for i in group:
                if i not in seen:
                    seen.append(i)
        plan.update_order = seen + [i for i in range(len(plan.blocks)) if i not in seen]
        plan.tol, plan.max_iter = loop_tol, loop_max_iter
        plan.hyper = math.lcm(*plan.ks)
        plan.solvers = {}
        return plan

    def _sample_periods(self) -> list[int]:
        """Each block's sample period in diagram steps (1 without a sample time)."""
        ks = []
        for name, b in self._blocks.items():
            st = b.sample_time
            if st is None:
                ks.append(1)
                continue
            ok = not isinstance(st, bool) and isinstance(st, (int, float)) and math.isfinite(st) \
                and st > 0
            k = round(st / self.step) if ok else 0
            if not ok or k < 1 or abs(st / self.step - k) > SAMPLE_TIME_RTOL * (st / self.step):
                raise DiagramError(f"block {name!r}: sample_time {st!r} is not a positive integer "
                                   f"multiple of the diagram step {self.step!r}")
            ks.append(k)
        return ks

    def _signal_slots(self, plan: _Plan) -> None:
        """Signal slots (each block's outputs contiguous: lo..hi), the slots driving each block's
        inputs and the port types."""
        lo, slot = [], {}
        n = 0
        for name, b in self._blocks.items():
            lo.append(n)
            for p in b.outputs:
                slot[(name, p)] = n
                n += 1
        plan.lo = lo
        plan.hi = [lo[i] + len(b.outputs) for i, b in enumerate(plan.blocks)]
        plan.nsig = n
        plan.slot = slot
        plan.inputs = [tuple(slot[self._driver[(name, q)]] for q in b.inputs)
                       for name, b in self._blocks.items()]
        plan.types = [b.port_type(p) for b in plan.blocks for p in b.outputs]

    def _feedthrough(self, plan: _Plan) -> tuple[list[list[int]], list[int]]:
        """Feed-through per port: output slot s depends on the slots driving the inputs that s's
        block declares for s in feedthrough().  (slot_deps, the owning block of each slot); the
        feed-through inputs of each block go to plan.ft_inputs."""
        slot = plan.slot
        ft_inputs = []
        slot_deps: list[list[int]] = [[] for _ in range(plan.nsig)]
        owner = [i for i, b in enumerate(plan.blocks) for _ in b.outputs]
        for name, b in self._blocks.items():
            ft = b.feedthrough() or {}
            used = set()
            for out, ins in ft.items():
                if out not in b.outputs:
                    raise DiagramError(f"block {name!r}: feedthrough() names {out!r}, which is not "
                                       f"an output (outputs: {', '.join(b.outputs) or 'none'})")
                for q in ins:
                    if q not in b.inputs:
                        raise DiagramError(f"block {name!r}: feedthrough() says {out!r} depends "
                                           f"on {q!r}, which is not an input (inputs: "
                                           f"{', '.join(b.inputs) or 'none'})")
                    used.add(q)
                    src = slot[self._driver[(name, q)]]
                    if src not in slot_deps[slot[(name, out)]]:
                        slot_deps[slot[(name, out)]].append(src)
            ft_inputs.append(used)
        plan.ft_inputs = ft_inputs
        return slot_deps, owner

    def _algebraic_loops(self, plan: _Plan, slot_loops, slot_deps, owner) -> None:
        """The algebraic loops of the loop calls (plan.loops: their blocks and connections) and
        the tearing order of each loop call's blocks (plan.loop_members)."""
        slot, index = plan.slot, {name: i for i, name in enumerate(plan.names)}
        plan.loops = []
        plan.loop_members = {}
        slot_groups = iter(slot_loops)   # one per loop call, in the same order
        for pos, (is_loop_call, group) in enumerate(plan.calls):
            if not is_loop_call:
                continue
            members = set(group)
            loop_slots = next(slot_groups)
            in_loop = set(loop_slots)
            conns, deps = [], {}
            for x in loop_slots:
                for d in slot_deps[x]:
                    if d in in_loop:
                        deps.setdefault(owner[x], set()).add(owner[d])
            for (b, q), (a, p) in self._driver.items():
                if slot[(a, p)] in in_loop and index[b] in members and any(
                        slot[(a, p)] in slot_deps[x] for x in in_loop if owner[x] == index[b]):
                    conns.append((f"{a}.{p}", f"{b}.{q}"))
            plan.loops.append(AlgebraicLoop(tuple(plan.names[i] for i in group), tuple(conns)))
            plan.loop_members[pos] = tearing_order(group, {v: deps.get(v, set()) & members
                                                           for v in group})

    # ------------------------------------------------------------------ running

    @staticmethod
    def _phase(plan: _Plan, p: int, gets, chks) -> tuple[tuple, tuple]:
        """(output tasks, update tasks) of the blocks due at phase ``p`` of the hyperperiod."""
        outs = []
        for pos, (is_loop_call, group) in enumerate(plan.calls):
            if is_loop_call:
                due = tuple(i for i in plan.loop_members[pos] if p % plan.ks[i] == 0)
                if not due:
                    continue
                solver = plan.solvers.get(due)
                if solver is None:
                    solver = plan.solvers[due] = Diagram._loop_solver(plan, due, gets)
                outs.append((solver, solver.solve, None, 0, 0, any(chks[i] for i in due)))
            else:
                i = group[0]
                if p % plan.ks[i] == 0:
                    outs.append((i, plan.blocks[i].output, gets[i], plan.lo[i], plan.hi[i],
                                 chks[i]))
        upds = [(i, plan.blocks[i].update, gets[i]) for i in plan.update_order
                if p % plan.ks[i] == 0]
        return tuple(outs), tuple(upds)

    @staticmethod
    def _loop_solver(plan: _Plan, due: tuple[int, ...], gets) -> LoopSolver:
        pos = {v: j for j, v in enumerate(due)}
        producer = {}
        for v in due:
            for s in range(plan.lo[v], plan.hi[v]):
                producer[s] = v
        torn = []
        for v in due:
            b = plan.blocks[v]
            for q, s in zip(b.inputs, plan.inputs[v]):
                w = producer.get(s)
                if w is not None and q in plan.ft_inputs[v] and pos[w] >= pos[v] and s not in torn:
                    torn.append(s)
        members = [(plan.blocks[v].output, gets[v], plan.lo[v], plan.hi[v]) for v in due]
        solver = LoopSolver([plan.names[v] for v in due], members, torn, plan.tol, plan.max_iter)
        solver.index = due
        return solver

    def run(self, t_end: float, *, algebraic_loops: str = "error", loop_tol: float = 1e-10,
            loop_max_iter: int = 100, realtime: bool = False, rtf: float = 1.0,
            overrun: str = "catch_up", record: Sequence[str] | None = None,
            check_finite: bool = True, rollback: bool = True,
            live: bool | LiveView = False) -> Result:
        """Run from ``t0`` to ``t_end``; see the module docstring.

        ``algebraic_loops``: ``"error"`` (refuse them) or ``"iterate"`` (solve each at every
        step to ``loop_tol`` in at most ``loop_max_iter`` iterations).  ``realtime``: pace the
        steps to the wall clock at ``rtf`` (:mod:`~mbsfmu.runner.realtime`), ``overrun``:
        ``"catch_up"``, ``"skip"`` or ``"fail"``.  ``record``: the ``"block.port"`` names to
        record (an input records the signal driving it; a bare block name records all its
        outputs); default every output that is not a String.  ``check_finite``: raise on a
        non-finite Real output.  ``rollback``: see the module docstring.  ``live``: ``True`` or a
        :class:`~mbsfmu.runner.live.LiveView` serves a live scope of the recorded signals on
        127.0.0.1 during the run (its counts in ``stats["live"]``).
        """
        if isinstance(t_end, bool) or not isinstance(t_end, (int, float)) or not (
                math.isfinite(t_end) and t_end > self.t0):
            raise DiagramError(f"t_end must be finite and greater than t0 = {self.t0!r}, "
                               f"not {t_end!r}")
        if isinstance(loop_tol, bool) or not isinstance(loop_tol, (int, float)) or not (
                loop_tol > 0 and math.isfinite(loop_tol)):
            raise DiagramError(f"loop_tol must be a positive number, not {loop_tol!r}")
        if isinstance(loop_max_iter, bool) or not isinstance(loop_max_iter, int) or \
                loop_max_iter < 1:
            raise DiagramError(f"loop_max_iter must be a positive integer, not {loop_max_iter!r}")
        n_steps = round((t_end - self.t0) / self.step)
        if n_steps < 1:
            raise DiagramError(f"t_end = {t_end!r} is less than half a step ({self.step!r}) "
                               f"after t0 = {self.t0!r}")
        plan = self._compile(algebraic_loops, float(loop_tol), loop_max_iter)
        pacer = None
        if realtime:
            try:
                pacer = Pacer(self.step, n_steps + 1, rtf, overrun)
            except ValueError as exc:
                raise DiagramError(str(exc)) from None
        names, cols = self._recorded(plan, record)
        if live is True:
            live = LiveView()
        elif live is False or live is None:
            live = None
        elif not isinstance(live, LiveView):
            raise DiagramError(f"live must be True, False or a LiveView(...), not {live!r}")
        views = {name: v for name, b in zip(plan.names, plan.blocks)
                 if (v := b.view()) is not None}  # what the result (and a live page) can draw
        if live is not None:
            live.open(names, self.t0, self.step, n_steps, views)
        return self._execute(plan, n_steps, names, cols, pacer, bool(check_finite),
                             bool(rollback), live, views)

    def _recorded(self, plan: _Plan, record) -> tuple[list[str], tuple[int, ...]]:
        """Names and signal slots of the recorded signals."""
        if record is None:
            pairs = [(f"{n}.{p}", s) for (n, p), s in plan.slot.items()
                     if plan.types[s] != "String"]
            return [n for n, _ in pairs], tuple(s for _, s in pairs)
        if isinstance(record, str):
            record = [record]
        names, cols = [], []
        for ref in record:
            if isinstance(ref, str) and "." not in ref and ref in self._blocks:
                refs = [f"{ref}.{p}" for p in self._blocks[ref].outputs
                        if self._blocks[ref].port_type(p) != "String"]
            else:
                refs = [ref]
            for r in refs:
                b, p = _split(r, "recorded signal")
                blk = self._block(b, r)
                if (b, p) in plan.slot:
                    s = plan.slot[(b, p)]
                elif p in blk.inputs:
                    s = plan.slot[self._driver[(b, p)]]
                else:
                    ports = blk.outputs + blk.inputs
                    close = difflib.get_close_matches(p, ports, n=3)
                    raise DiagramError(f"cannot record {r!r}: block {b!r} has no port {p!r}"
                                       + (f" (did you mean {', '.join(close)}?)" if close else
                                          f" (ports: {', '.join(ports) or 'none'})"))
                if blk.port_type(p) == "String":
                    raise DiagramError(f"cannot record {r!r}: String signals are not recorded")
                if r not in names:
                    names.append(r)
                    cols.append(s)
        return names, tuple(cols)

    def _execute(self, plan: _Plan, N: int, rec_names, rec_cols, pacer, check_finite: bool,
                 rollback: bool, live: LiveView | None = None, views: dict | None = None) -> Result:
        """Start the blocks, step them over the grid, stop them (also after an error, which is
        raised with the signals so far and, where it can, the blocks rolled back); a live view
        is served from before the blocks start until they have stopped."""
        pending = None
        try:
            run = _Run(plan, N, self.t0, self.step, rec_cols, pacer, check_finite, live)
            run.views = dict(views or {})
            if live is not None:
                live.start()
            if pacer is not None:
                pacer.prepare()
            try:
                try:
                    run.start_blocks(rollback)
                    run.steps()
                except Exception as exc:
                    pending = run.failure(exc, rec_names)
                    raise pending from (None if isinstance(exc, (_Fault, RealtimeError)) else exc)
            finally:
                run.stop_blocks(pending)
        finally:
            if live is not None:
                status = "finished" if pending is None else f"failed: {pending}"
                counts = live.close(status)
                if pending is not None and pending.result is not None:
                    pending.result.stats["live"] = counts
        run.finish_stats()
        if live is not None:
            run.stats["live"] = counts
        return Result(self.t0 + self.step * np.arange(N + 1), rec_names, run.rec, run.stats, run.views)

    @staticmethod
    def _error(exc: Exception, phase: str, cur, n: int, t: float, plan: _Plan) -> Exception:
        """The exception to raise for ``exc``, raised in ``phase`` of step ``n``."""
        names = plan.names
        if isinstance(exc, RealtimeError):
            return exc
        if isinstance(cur, LoopSolver):
            if isinstance(exc, _Fault) and exc.block == -1:
                err_, it = cur.failure
                return AlgebraicLoopError(
                    f"algebraic loop [{', '.join(cur.names)}] at t={t:.9g}: not converged in "
                    f"{it} iterations, residual {err_:.3g} > loop_tol {cur.tol:.3g}",
                    loops=[loop for loop in plan.loops if set(cur.names) <= set(loop.blocks)],
                    t=t, residual=err_)
            if isinstance(exc, _Fault):
                name = names[exc.block]
            else:
                name = cur.names[cur.current]
        else:
            name = names[cur]
        if isinstance(exc, _Fault):
            message = str(exc)
        elif phase in ("start", "snapshot"):
            what = "start" if phase == "start" else "get_state"
            message = f"{what}() failed: {type(exc).__name__}: {exc}"
            if phase == "snapshot":
                message += " (run with rollback=False to skip state snapshots)"
        else:
            message = f"{phase}() failed: {type(exc).__name__}: {exc}"
        port = exc.port if isinstance(exc, _Fault) else None
        return BlockRunError(f"{name} at t={t:.9g}: {message}", name, t,
                             None if port is None else f"{name}.{port}")


class _LazyPhases:
    """Phase plans computed on demand (a hyperperiod too long to precompute)."""

    def __init__(self, plan, gets, chks):
        self.args = plan, gets, chks

    def __getitem__(self, p):
        plan, gets, chks = self.args
        return Diagram._phase(plan, p, gets, chks)


class _Run:
    """One run of a compiled diagram (:meth:`Diagram._execute`): the signals and the record, the
    blocks started, where the run is (``phase``: start, snapshot, output, pacing or update;
    ``cur``: the block or loop solver at work; ``n``: the step) and the rollback checkpoint."""

    def __init__(self, plan: _Plan, N: int, t0: float, step: float, rec_cols, pacer,
                 check_finite: bool, live=None):
        self.plan, self.N, self.t0, self.step, self.pacer = plan, N, t0, step, pacer
        self.live = live
        blocks = plan.blocks
        gets = [_gather(idx) for idx in plan.inputs]
        chks = [check_finite and all(b.port_type(p) != "String" for p in b.outputs)
                and len(b.outputs) > 0 for b in blocks]
        L = plan.hyper
        if L <= MAX_PHASES:
            self.plans = [Diagram._phase(plan, p, gets, chks) for p in range(L)]
        else:
            self.plans = _LazyPhases(plan, gets, chks)
        self.solvers = list(plan.solvers.values())
        self.sig = [("" if ty == "String" else 0.0) for ty in plan.types]
        # with a live view the record is its shared memory (made NaN before the run, as here)
        self.rec = live.record if live is not None else np.full((N + 1, len(rec_cols)), np.nan)
        if rec_cols == tuple(range(plan.nsig)):
            self.rget = None  # record the whole signal list
        elif rec_cols:
            self.rget = itemgetter(*rec_cols)
        else:
            self.rget = False
        self.stats = {"steps": N, "points": N + 1, "wall_time": float("nan"), "loop_iterations": 0,
                      "rollback": False, "realtime": pacer is not None}
        self.started: list[Block] = []
        self.views: dict = {}
        self.phase, self.cur, self.n = "start", 0, 0
        self.ck_state = self.hist = None
        self.ck_n = 0
        self.wall0 = time.perf_counter()

    def start_blocks(self, rollback: bool) -> None:
        """Start every block (with its own period) and, for rollback, take the first checkpoint
        if every block gives a snapshot."""
        plan = self.plan
        for i, b in enumerate(plan.blocks):
            self.cur = i
            self.started.append(b)
            b.start(self.t0, plan.ks[i] * self.step)
        if rollback:
            self.cur = 0
            self.phase = "snapshot"
            states = []
            for i, b in enumerate(plan.blocks):
                self.cur = i
                states.append(b.get_state())
            if all(s is not None for s in states):
                self.ck_state, self.hist = states, []
        self.stats["rollback"] = self.hist is not None

    def steps(self) -> None:
        """The time loop (module docstring): at each grid point the due blocks' outputs in
        execution order, the record, their updates; a checkpoint every CHECKPOINT_EVERY steps.
        Local names throughout (the hot loop); where it is goes back to the run at the end."""
        plan, plans, L, N, pacer = self.plan, self.plans, self.plan.hyper, self.N, self.pacer
        blocks, sig, rec, rget, hist = plan.blocks, self.sig, self.rec, self.rget, self.hist
        live, rows = (self.live.header, ROWS) if self.live is not None else (None, 0)
        t0, step, ck_state, ck_n, cur, n = self.t0, self.step, self.ck_state, self.ck_n, self.cur, self.n
        phase = "output"
        try:
            wait = pacer.wait if pacer is not None else None
            if pacer is not None:
                pacer.start()
            isfinite = math.isfinite
            every = CHECKPOINT_EVERY
            self.wall0 = time.perf_counter()
            for n in range(N + 1):
                t = t0 + n * step
                if wait is not None:
                    phase = "pacing"
                    wait(n)
                phase = "output"
                outs, upds = plans[n % L]
                for cur, out, get, lo, hi, chk in outs:
                    if get is None:
                        if not out(t, sig):
                            raise _Fault(-1, "")
                        if chk:
                            _check_loop(cur, sig, plan)
                        continue
                    y = out(t, get(sig))
                    if len(y) != hi - lo:
                        raise _Fault(cur, f"output() returned {len(y)} values for "
                                          f"{hi - lo} outputs {blocks[cur].outputs}")
                    if chk:
                        s = sum(y)
                        if not isfinite(s):
                            _check_values(cur, y, blocks[cur].outputs)
                    sig[lo:hi] = y
                if rget is None:
                    rec[n] = sig
                elif rget:
                    rec[n] = rget(sig)
                if live is not None:
                    live[rows] = n + 1  # the live view's only cost in the loop: rows complete
                if n == N:
                    break
                phase = "update"
                if hist is not None:
                    if n - ck_n >= every:
                        phase = "snapshot"
                        ck_state = []
                        for cur, b in enumerate(blocks):  # noqa: B007 (cur: for errors)
                            ck_state.append(b.get_state())
                        ck_n = n
                        hist.clear()
                        phase = "update"
                    hist.append(sig[:])
                for cur, upd, get in upds:  # noqa: B007 (cur names a failing block)
                    upd(t, get(sig))
        finally:
            self.phase, self.cur, self.n, self.ck_state, self.ck_n = phase, cur, n, ck_state, ck_n

    def finish_stats(self) -> None:
        """The run's wall time, the loop solvers' iterations and the pacer's statistics."""
        self.stats["wall_time"] = time.perf_counter() - self.wall0
        self.stats["loop_iterations"] = sum(s.iterations for s in self.solvers)
        if self.pacer is not None:
            self.stats.update(self.pacer.stats())

    def failure(self, exc: Exception, rec_names) -> Exception:
        """The error to raise for ``exc``, with the signals recorded so far; after a failed update
        the blocks are rolled back to the start of the failing step where a checkpoint allows."""
        self.finish_stats()
        phase, n, step = self.phase, self.n, self.step
        rows = 0 if phase == "start" else n + 1 if phase in ("update", "snapshot") else n
        res = Result(self.t0 + step * np.arange(rows), rec_names, self.rec[:rows], self.stats, self.views)
        err = Diagram._error(exc, phase, self.cur, n, self.t0 + n * step, self.plan)
        err.result = res
        if phase == "update" and self.ck_state is not None:
            self.roll_back(err)
        elif isinstance(err, BlockRunError):
            err.rolled_back = False
        return err

    def roll_back(self, err: Exception) -> None:
        """Restore the checkpoint and replay the updates of the steps since (module docstring)."""
        try:
            for b, s in zip(self.plan.blocks, self.ck_state):
                b.set_state(s)
            for m in range(self.ck_n, self.n):
                tm = self.t0 + m * self.step
                u = self.hist[m - self.ck_n]
                for _i, upd, get in self.plans[m % self.plan.hyper][1]:
                    upd(tm, get(u))
            err.rolled_back = True
        except Exception as exc2:  # the original error matters more
            _note(err, f"rollback failed: {type(exc2).__name__}: {exc2}")

    def stop_blocks(self, pending: Exception | None) -> None:
        """Stop every started block (in reverse), even if one fails: its failure is noted on the
        run's error, or raised if there is none."""
        if self.pacer is not None:
            self.pacer.stop()
        stop_error = None
        for b in reversed(self.started):
            try:
                b.stop()
            except Exception as exc:  # stop every block even if one fails
                if stop_error is None:
                    stop_error = (b, exc)
        if stop_error is None:
            return
        b, exc = stop_error
        name = self.plan.names[self.plan.blocks.index(b)]
        t_end = self.t0 + self.N * self.step
        if pending is not None:
            _note(pending, f"{name}.stop() also failed: {type(exc).__name__}: {exc}")
        else:
            raise BlockRunError(f"{name} at t={t_end:.9g}: stop failed: {exc}", name, t_end) from exc


def _check_values(i: int, y, ports) -> None:
    """Raise :class:`_Fault` naming the first non-finite output of block ``i``."""
    for port, v in zip(ports, y):
        if not _finite(v) and not isinstance(v, np.bool_):
            raise _Fault(i, f"non-finite output {port} = {v!r}", port)


def _check_loop(solver: LoopSolver, sig: list, plan: _Plan) -> None:
    for v in solver.index:
        lo, hi = plan.lo[v], plan.hi[v]
        if plan.types[lo:hi] and "String" not in plan.types[lo:hi]:
            _check_values(v, sig[lo:hi], plan.blocks[v].outputs)
