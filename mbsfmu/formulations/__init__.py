"""Stage 3 of the pipeline: how the equations are integrated (ODE in minimal form for trees)."""

from .minimal_ode import MinimalODE

__all__ = ["MinimalODE"]
