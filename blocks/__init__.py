"""Standard blocks for the block-diagram runner (:mod:`mbsfmu.runner`), one module per family."""

from .control import PID, StateFeedback
from .fmu import FMU
from .lti import StateSpace, TransferFunction
from .math_blocks import Function, Gain, RateLimiter, Saturation, Sum, UnitDelay
from .sinks import Recorder
from .sources import Constant, Ramp, Sine, Step, Table
from .udp import UdpReceive, UdpSend

__all__ = [
    "Constant", "Step", "Ramp", "Sine", "Table",
    "Gain", "Sum", "Saturation", "RateLimiter", "UnitDelay", "Function",
    "PID", "StateFeedback",
    "StateSpace", "TransferFunction",
    "Recorder",
    "FMU",
    "UdpSend", "UdpReceive",
]
