"""Stage 'analysis' of the pipeline: linearization about an operating point, state space,
modal analysis, transfer functions and control design (seed 002 §4.1).

    lin = mbsfmu.linearize(system, at={"theta": 0}, inputs=["F"])
    lin.M0, lin.D, lin.K, lin.F          # M0 δÿ + D δẏ + K δy = F δu
    lin.A, lin.B, lin.C, lin.ss.D        # state space, names in lin.states / inputs / outputs
    lin.modes(), lin.bode("bode.png"), lin.to_control()
    gain = lqr(lin, Q, R)                # u = -K x
    loop = mbsfmu.linearize(diagram, loop_at="pid.u")   # a runner diagram's closed loop
                                         # (mbsfmu.analysis.closed_loop): poles, margins
"""

from ..core.errors import ControlDesignWarning
from .control_design import ModeReport, StateFeedbackGain, dlqr, lqr, place
from .linear_model import Linearization, StateSpaceModel
from .linearize import linearize
from .modal import Mode

__all__ = ["linearize", "Linearization", "StateSpaceModel", "Mode", "lqr", "dlqr", "place",
           "StateFeedbackGain", "ModeReport", "ControlDesignWarning"]
