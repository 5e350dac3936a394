"""The one interface every block of a diagram implements (the runner relies on nothing else).

A block is a sampled system with named scalar ports.  Over one of its sample periods
``[t, t + dt)`` the runner treats it exactly like a Simulink block with a discrete sample time:

1. ``output(t, u)``: the block's outputs at ``t`` from its state at ``t`` and, for outputs with
   direct feed-through, the inputs ``u`` at ``t``.  It must not change the state: the runner calls
   it again with other ``u`` while it iterates an algebraic loop.
2. ``update(t, u)``: advance the state from ``t`` to ``t + dt`` with the inputs ``u`` held
   (zero-order hold).  Called once per sample period, after every block's ``output``.

Between two of its sample instants a block's outputs are held.  ``u`` is a sequence of input values
in the order of :attr:`Block.inputs`; ``output`` returns a sequence in the order of
:attr:`Block.outputs`.

Ports
    ``inputs`` / ``outputs`` are tuples of port names (no ``.``): single-input single-output blocks
    use ``u`` and ``y``; ``port_type(name)`` gives ``"Real"`` (default), ``"Integer"``,
    ``"Boolean"`` or ``"String"``; the runner refuses a connection between different types.
Feed-through
    ``feedthrough()`` maps each output to the inputs it depends on at the same instant (missing
    outputs: none).  The runner orders the blocks from it and finds algebraic loops with it.
Sample time
    ``sample_time``: ``None`` means the diagram's step; otherwise a positive integer multiple of it.
Life cycle
    ``start(t0, dt)`` once before the first step (``dt`` is the block's own period; open files,
    sockets, instantiate FMUs, reset the state); ``stop()`` once at the end, also after an error,
    and it must be safe to call twice.  ``get_state()`` / ``set_state(s)`` snapshot and restore
    the state (for rollback); a block that cannot returns ``None`` from ``get_state``.
Errors
    A block raises :class:`BlockError` (or a subclass) with a message that names what went wrong;
    the runner adds the block's name and the time.
Block types
    Every subclass registers itself by its name (:data:`BLOCK_TYPES`, :func:`block_type`) when its
    module is imported, so the runner finds a block type by name without importing the packages
    that define them (SSP import finds its FMU block, ``'FMU'``, this way; the standard blocks of
    the top-level package ``blocks`` register when ``blocks`` is imported).  The first class of a
    name keeps it; a class sets ``type_name`` to register under another name; private classes
    (a leading ``_``) are not registered.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

from ..core.errors import MbsError
from .linear_form import no_linear_form

PORT_TYPES = ("Real", "Integer", "Boolean", "String")


class BlockError(MbsError, RuntimeError):
    """A block was misused or failed while running (the runner prefixes the block and time)."""


#: the registry of block types: name -> class (see the module docstring)
BLOCK_TYPES: dict[str, type] = {}


def block_type(name: str) -> type:
    """The block type registered under ``name``; a BlockError naming the registered ones."""
    try:
        return BLOCK_TYPES[name]
    except (KeyError, TypeError):
        known = ", ".join(sorted(BLOCK_TYPES)) or "none"
        raise BlockError(f"unknown block type {name!r} (registered: {known}; a block type registers "
                         "when the module that defines it is imported)") from None


class Block:
    """Base class: a block with no ports, no state and no feed-through."""

    #: port names, in the order of ``u`` and of the sequence ``output`` returns
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    #: None: the diagram's step; else a positive integer multiple of it
    sample_time: float | None = None
    #: a block with a difference equation only (a unit delay): no continuous linear form
    discrete_only: bool = False
    #: a signal source: its outputs are inputs of a linearized loop, not signals of it
    source: bool = False

    def __init_subclass__(cls, **kwargs):
        """Register the new block type under ``type_name`` (its own, else the class name),
        unless another class has that name already (the same class defined again, as by a
        reload, takes its place); private classes (``_Source``) are not block types."""
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("type_name", cls.__name__)
        if name.startswith("_"):
            return
        known = BLOCK_TYPES.get(name)
        if known is None or (known.__module__, known.__qualname__) == (cls.__module__, cls.__qualname__):
            BLOCK_TYPES[name] = cls

    def port_type(self, port: str) -> str:
        """``"Real"``, ``"Integer"``, ``"Boolean"`` or ``"String"``."""
        return "Real"

    def feedthrough(self) -> Mapping[str, Sequence[str]]:
        """{output: inputs it depends on directly}; outputs not listed depend on none."""
        return {}

    def start(self, t0: float, dt: float) -> None:
        """Prepare a run that starts at ``t0`` with sample period ``dt``."""

    def output(self, t: float, u: Sequence[float]) -> Sequence[float]:
        """Outputs at ``t`` (no change of state)."""
        return ()

    def update(self, t: float, u: Sequence[float]) -> None:
        """Advance the state from ``t`` to ``t + dt`` with the inputs ``u`` held."""

    def stop(self) -> None:
        """Release what ``start`` acquired (idempotent)."""

    def get_state(self):
        """A snapshot of the state for :meth:`set_state`; ``None`` if the block cannot."""
        return copy.deepcopy(vars(self))

    def set_state(self, state) -> None:
        """Restore a snapshot taken by :meth:`get_state`."""
        vars(self).update(copy.deepcopy(state))

    def linear_form(self, name: str, u0, y0, domain: str, step: float, pade_order: int):
        """The block's :class:`~mbsfmu.runner.linear_form.LinearForm` at the operating point
        (inputs ``u0``, outputs ``y0``) in the loop's ``domain`` ('continuous', or 'discrete' at
        the diagram's ``step``; ``pade_order``: of a time delay's continuous approximant), for
        :func:`mbsfmu.linearize` of a diagram; ``name``: the block's in the diagram, for the
        messages.  A block without one raises DiagramError naming it (this default)."""
        raise no_linear_form(name, self)

    def view(self):
        """What the 3D viewer can draw of this block: None (nothing: every block but the FMU
        block), a :class:`~mbsfmu.animation.model_view.ModelView` and the values of the model's
        constants the block sets (name -> value), or a text saying why a model block has none.
        A run's result keeps them (:meth:`mbsfmu.runner.result.Result.animate`)."""
        return None


class SISO(Block):
    """A single-input single-output block: input ``u``, output ``y``."""

    inputs = ("u",)
    outputs = ("y",)
