"""Standard blocks for the block-diagram runner (:mod:`mbsfmu.runner`), one module per family."""

from .control import PID, StateFeedback
from .delays import Delay, TransportDelay
from .discontinuities import DeadZone, Quantizer, Relay
from .discrete import DiscreteIntegrator, Memory, ZeroOrderHold
from .fmu import FMU
from .lookup import Lookup1D, Lookup2D
from .lti import StateSpace, TransferFunction
from .math_blocks import Function, Gain, RateLimiter, Saturation, Sum, UnitDelay
from .routing import MultiportSwitch, Switch
from .sinks import Recorder
from .sources import Constant, Ramp, Sine, Step, Table
from .udp import UdpReceive, UdpSend

__all__ = [
    "Constant", "Step", "Ramp", "Sine", "Table",
    "Gain", "Sum", "Saturation", "RateLimiter", "UnitDelay", "Function",
    "Delay", "TransportDelay", "ZeroOrderHold", "Memory", "DiscreteIntegrator",
    "DeadZone", "Quantizer", "Relay",
    "Switch", "MultiportSwitch",
    "Lookup1D", "Lookup2D",
    "PID", "StateFeedback",
    "StateSpace", "TransferFunction",
    "Recorder",
    "FMU",
    "UdpSend", "UdpReceive",
]
