"""FMU states of the pythonfmu FMUs: fmi2GetFMUstate, fmi2SetFMUstate and their serialization,
each state checked before it is used.

A state is {format, version, guid, model, sha256, payload}: payload is the JSON text of
{mode, time, stop_time, backend, data} and sha256 its checksum; backend names what saved it (the
engine's build, or "numpy") and data is its state (the engine's saved state in base64, or the
numpy path's {values, x}).  Serialized, it is the JSON header (everything but payload) on one
line, a newline, then the payload.
A state of another model, another build of the slave, a corrupted or truncated one is refused
with the reason, and nothing changes.
"""

import base64
import hashlib
import json
import math

from pythonfmu.enums import Fmi2Status

from mbsfmu.core.solver_settings import DEPRECATED_FMU_NAMES

from .backend import NUMPY, STEPPING, Refused
from .guard import call_time, to_guard
from .text import is_number

MODES = ("instantiated", "initialization", "step", "terminated", "error")
STATE_FORMAT = "mbsfmu-pythonfmu-state"
STATE_VERSION = 2
STATE_HEADER = ("format", "version", "guid", "model", "sha256")
STATE_FIELDS = ("mode", "time", "stop_time", "backend", "data")


def seal(model, payload):
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return {"format": STATE_FORMAT, "version": STATE_VERSION, "guid": model.MODEL_GUID,
            "model": model.MODEL_NAME,
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "payload": text}


def open_state(model, state):
    """(None, payload) for a state of this model whose checksum and contents are right, else
    (why not, None)."""
    if isinstance(state, dict) and "refused" in state:
        return f"it was refused when it was deserialized ({state['refused']})", None
    if not isinstance(state, dict) or any(k not in state for k in (*STATE_HEADER, "payload")):
        return "it is not a state of an mbsfmu pythonfmu FMU", None
    if state["format"] != STATE_FORMAT or state["version"] != STATE_VERSION:
        return f"unknown state format {state['format']!r} version {state['version']!r}", None
    if state["guid"] != model.MODEL_GUID:
        return (f"it was made by model {state['model']!r} (GUID {state['guid']!r}), this FMU is model "
                f"{model.MODEL_NAME!r} (GUID {model.MODEL_GUID!r}): a state of another FMU, or a corrupted "
                "header"), None
    text = state["payload"]
    if not isinstance(text, str) or not isinstance(state["sha256"], str) or \
            hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() != state["sha256"]:
        return "its checksum does not match its contents (corrupted or truncated)", None
    try:
        p = json.loads(text)
    except ValueError:
        return "its contents are not readable", None
    problem = payload_problem(model, p)
    return (problem, None) if problem else (None, p)


def payload_problem(model, p):
    if not isinstance(p, dict) or sorted(p) != sorted(STATE_FIELDS):
        return "its contents do not have the fields " + ", ".join(STATE_FIELDS)
    if p["mode"] not in MODES:
        return f"unknown mode {p['mode']!r}"
    if not (is_number(p["time"]) and math.isfinite(p["time"])):
        return f"time {p['time']!r} is not a finite number"
    if p["stop_time"] is not None and not (is_number(p["stop_time"]) and math.isfinite(p["stop_time"])):
        return f"stop time {p['stop_time']!r} is not a finite number"
    if p["backend"] == NUMPY:
        return numpy_data_problem(model, p["mode"], p["data"])
    if not isinstance(p["backend"], str) or not isinstance(p["data"], str):
        return "its engine state is not readable"
    try:
        base64.b64decode(p["data"], validate=True)
    except ValueError:  # binascii.Error
        return "its engine state is not readable"
    return None


def numpy_data_problem(model, mode, data):
    if not isinstance(data, dict) or sorted(data) != ["values", "x"]:
        return "its numpy state does not have the fields values, x"
    values = data["values"]
    held = [n for n in model.VARIABLES if n not in DEPRECATED_FMU_NAMES]  # a deprecated name holds no value
    if not isinstance(values, dict) or sorted(values) != sorted(held):
        return "its values are not those of this model's variables"
    for name in held:
        if not is_number(values[name]) or math.isnan(values[name]):
            return f"the value of {name!r} is {values[name]!r}"
    x = data["x"]
    if mode in STEPPING:
        if not isinstance(x, list) or len(x) != model.N_STATE or \
                not all(is_number(v) and math.isfinite(v) for v in x):
            return f"its integrator state is not {model.N_STATE} finite numbers"
    elif x is not None:
        return f"mode {mode!r} has no integrator state"
    return None


def read_state(model, data):
    """(None, state) for serialized bytes of a state of this model, else (why not, None)."""
    head, newline, payload = bytes(data).partition(b"\n")
    if not newline:
        return "it has no header line", None
    try:
        header = json.loads(head.decode("utf-8"))
    except ValueError:  # also UnicodeDecodeError
        return "its header is not readable", None
    if not isinstance(header, dict) or sorted(header) != sorted(STATE_HEADER):
        return "its header does not have the fields " + ", ".join(STATE_HEADER), None
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        return "its contents are not UTF-8 text (corrupted)", None
    state = {**header, "payload": text}
    problem, _ = open_state(model, state)
    return (problem, None) if problem else (None, state)


class FMUStates:
    """The FMU-state calls of the slave (a part of :class:`~.slave.MbsfmuSlave`)."""

    def _get_fmu_state(self):
        try:
            return seal(self, {"mode": self.mode, "time": self.time, "stop_time": self.stop_time,
                                "backend": self.backend.name, "data": self.backend.save()})
        except Exception as exc:
            self._internal("fmi2GetFMUstate", exc)
            return {"refused": "fmi2GetFMUstate failed"}

    def _set_fmu_state(self, state):
        fn = "fmi2SetFMUstate"
        try:
            problem, p = open_state(self, state)
            if p is not None and p["backend"] != self.backend.name:
                problem = (f"it was saved by an instance running on {p['backend']}, this instance runs "
                           f"on {self.backend.name} (another build of mbsfmu's engine, or the numpy path "
                           "where no C compiler was found): restore it where it was saved")
            if problem:
                return self._fail(fn, f"state refused: {problem}; nothing was changed")
            try:
                self.backend.restore(p["data"], p["mode"], p["time"])
            except Refused as exc:
                return self._fail(fn, f"state refused: {exc}; nothing was changed")
            self.hmax = self.backend.get([self.vr_hmax])[0]  # a restored state has its outputs
            self.time = float(p["time"])
            self.stop_time = None if p["stop_time"] is None else float(p["stop_time"])
            self.mode = p["mode"]
            self._tell_time()
        except Exception as exc:
            self._internal(fn, exc)

    @classmethod
    def _fmu_state_to_bytes(cls, state):
        try:
            head = json.dumps({k: state[k] for k in STATE_HEADER}, sort_keys=True, separators=(",", ":"))
            return (head + "\n" + state["payload"]).encode("utf-8")
        except Exception as exc:
            to_guard(Fmi2Status.error, f"fmi2SerializeFMUstate{call_time()}: the state cannot be "
                      f"serialized: {type(exc).__name__}: {exc}")
            return b""

    @classmethod
    def _fmu_state_from_bytes(cls, data):
        try:
            problem, state = read_state(cls, data)
        except Exception as exc:
            problem, state = f"internal error {type(exc).__name__}: {exc}", None
        if problem:
            to_guard(Fmi2Status.error, f"fmi2DeSerializeFMUstate{call_time()}: serialized state of "
                      f"{len(data)} bytes refused: {problem}")
            return {"refused": problem}
        return state
