"""The user outputs that both front ends offer: expressions of the state, time and inputs, and
the Lagrange multipliers of the constraint rows (``reaction.<row>``).  A System adds the
kinematics of its frames (:meth:`~mbsfmu.model.frames.Frames.frame_output`) and the elastic
deflections of its flexible bodies; a LagrangianSystem the coordinates of its points.

Outputs have a namespace of their own; an output name without a dot is also an FMU variable,
so it must differ from the constants, coordinates and inputs.
"""

from __future__ import annotations

from ..core.errors import ModelError
from .elements import Output
from .names import OUTPUTS


class Outputs:
    """The commands that add outputs (a part of :class:`~mbsfmu.model.base.Model`)."""

    def _add_output(self, out: Output) -> str:
        name = out.name
        if not isinstance(name, str) or not all(p.isidentifier() for p in name.split(".")):
            raise ModelError(f"output name {name!r} must be identifiers joined by dots (e.g. tip.x)")
        if name in self.outputs:
            raise ModelError(f"duplicate output name {name!r}")
        if "." not in name:
            self._claim(name, f"output {name!r}", OUTPUTS, fmu=True)
        self.outputs[name] = out
        self._changed()
        return name

    def output(self, name: str, expression, description: str = "") -> str:
        """A user-named output: an expression of t, coordinates, their rates (``D<name>``),
        constants, time parameters and inputs (inputs make it a direct feed-through output)."""
        where = f"output {name!r}"
        e = self.expr(expression, where)
        allowed = set(self.y) | set(self.yd) | {self.t}
        allowed |= {c.symbol for c in self.constants_.values()}
        allowed |= {u.symbol for u in self.inputs.values()}
        for p in self.time_parameters.values():
            allowed |= {p.symbol, p.velocity, p.acceleration}
        bad = e.free_symbols - allowed
        if bad:
            raise ModelError(f"{where}: may depend on t, coordinates, rates, constants, time "
                             f"parameters and inputs only, not on {sorted(map(str, bad))}")
        return self._add_output(Output(name, description or f"output {name}", expression=e))

    def reaction_outputs(self) -> list[str]:
        """One output ``reaction.<constraint>`` per constraint row defined so far: its Lagrange
        multiplier (M y'' + k = q + C^T lambda; for a translational loop condition the reaction
        force along that axis on the loop's frame b, for a rotational one the torque)."""
        rows = self.constraint_names
        if not rows:
            raise ModelError(f"{self.name}: reaction outputs need loops or constraints (define them first)")
        return [self._add_output(Output(f"reaction.{r}", f"Lagrange multiplier of constraint {r}",
                                        constraint=r)) for r in rows]
