"""The view a model carries into its FMU: what the 3D viewer needs to draw the model from
recorded coordinates alone, without the model file, sympy's derivation or the C engine.

An FMU built from a model (:func:`mbsfmu.fmu.native.build_native_fmu` and
:func:`mbsfmu.fmu.pythonfmu_export.build_pythonfmu`) holds :data:`RESOURCE`, one JSON document
(:data:`FORMAT`, version :data:`VERSION`) with

* ``layout``: the frames (a natural-coordinate model's points), stick segments, lines and
  shapes of ``System.visual`` (:class:`~mbsfmu.animation.scene.Layout`);
* ``coordinates`` and ``constants`` (name -> the model's value): the names the pose depends on,
  which are the FMU's variables of the same names (a frame's placement depends on coordinates,
  time, time parameters and constants only, never on inputs or velocities);
* ``elastic``: the coordinates that are flexible bodies' elastic coordinates (what a
  ``deformation_scale`` multiplies, :mod:`.scene`; absent in a file of an earlier build: none);
* ``program``: the pose of every frame, 12 values a frame (r_K, S_K row by row; seed 002
  eq. 3), as an expression program (:mod:`mbsfmu.codegen.expression_program`) over the
  intermediate variables of the model's kinematics, with the time parameters computed from t
  first; or ``unavailable``: why the model's pose could not be written (a time parameter given
  as a Python function, an operation the program does not know).

Why the pose is carried as expressions and not the model: an FMU is often built from a
``System`` made in Python, which has no file to carry; re-deriving a model costs seconds of
sympy; and running a model file found in an archive would run whatever code it holds.  The
program is data: read without ``eval``, checked before use, evaluated by numpy over a whole
time series at once.  It is the same symbolic kinematics that ``NumericModel.pose_series``
evaluates (the tests compare both).
"""

from __future__ import annotations

import json
import pathlib
import zipfile
from dataclasses import dataclass

import numpy as np

from ..codegen.expression_program import ProgramError, check_program, evaluate, program
from ..core.checks import finite_number
from ..core.errors import ModelError, ParameterError
from ..equations.derive import derive
from ..equations.python_source import argument_symbols
from .scene import (
    Layout,
    Scene,
    check_deformation_scale_of,
    elastic_coordinates,
    layout_of,
    pose_expressions,
    scale_deformation,
    scene_of,
)

#: where an FMU carries its view (a path inside the archive)
RESOURCE = "resources/mbsfmu_viewer.json"
FORMAT = "mbsfmu-viewer"
VERSION = 1


@dataclass
class ModelView:
    """A model's :class:`Layout` and the program of its frames' poses (module docstring)."""

    model: str
    layout: Layout
    coordinates: list
    constants: dict                 # name -> the model's value (None: none given)
    program: dict | None = None
    unavailable: str | None = None  # why there is no program
    elastic: list = ()              # the flexible bodies' elastic coordinates

    @classmethod
    def from_model(cls, system) -> ModelView:
        """The view of ``system`` (a ModelError if it has nothing to draw)."""
        layout = layout_of(system)
        args = dict(argument_symbols(system))
        constants = {c.name: (None if c.value is None else float(c.value))
                     for c in system.constants_.values()}
        view = cls(system.name, layout, list(system.coordinates_), constants,
                   elastic=elastic_coordinates(system))
        lines = []
        for p in system.time_parameters.values():
            if p.expressions is None:
                view.unavailable = (f"time parameter {p.name!r} of model {system.name!r} is a Python "
                                    "function, which the FMU cannot carry")
                return view
            lines += list(zip((p.symbol, p.velocity, p.acceleration), p.expressions))
        try:
            view.program = program(derive(system).intermediates, pose_expressions(system),
                                   {"t": [system.t], "y": args["y"], "prm": args["prm"]}, tuple(lines))
        except ProgramError as exc:
            view.program, view.unavailable = None, f"the pose of model {system.name!r}: {exc}"
        return view

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "version": VERSION, "model": self.model,
                           "layout": self.layout.to_dict(), "coordinates": self.coordinates,
                           "constants": self.constants, "elastic": list(self.elastic),
                           "program": self.program, "unavailable": self.unavailable},
                          separators=(",", ":"))

    @classmethod
    def from_json(cls, text, where: str = "the view") -> ModelView:
        """The view written by :meth:`to_json`; a ModelError names ``where`` and what is wrong."""
        try:
            d = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ModelError(f"{where} is not JSON: {exc}") from None
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise ModelError(f"{where} is not an mbsfmu viewer file (format {FORMAT!r})")
        if d.get("version") != VERSION:
            raise ModelError(f"{where} has version {d.get('version')!r}; this mbsfmu reads version "
                             f"{VERSION} (rebuild the FMU with this mbsfmu)")
        try:
            layout = Layout.from_dict(d["layout"])
            view = cls(str(d["model"]), layout, [str(c) for c in d["coordinates"]],
                       {str(k): (None if v is None else float(v)) for k, v in d["constants"].items()},
                       d["program"], d.get("unavailable"), [str(c) for c in d.get("elastic", [])])
            if not set(view.elastic) <= set(view.coordinates):
                raise ValueError("an elastic coordinate is not one of the coordinates")
            if view.program is not None:
                check_program(view.program)
                arguments = view.program["arguments"]
                if [len(arguments[a]) for a in ("y", "prm")] != [len(view.coordinates), len(view.constants)]:
                    raise ValueError("the program's arguments do not match the coordinates and constants")
                if len(view.program["outputs"]) != 12 * len(layout.frame_names):
                    raise ValueError("the program does not give 12 values for every frame")
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # ProgramError is a ValueError
            raise ModelError(f"{where} is malformed: {type(exc).__name__}: {exc}") from None
        return view

    def poses(self, t, Y, params=None) -> tuple[np.ndarray, np.ndarray]:
        """Origins (n, frames, 3) and rotations (n, frames, 3, 3) of the layout's frames at the
        times t (n,) and coordinates Y (coordinates, n), with the model's constant values
        updated by ``params`` (name -> value)."""
        if self.program is None:
            raise ModelError(f"the view of {self.model!r} holds no pose: {self.unavailable}")
        t = np.atleast_1d(np.asarray(t, dtype=float))
        n = len(t)
        Y = np.asarray(Y, dtype=float).reshape(len(self.coordinates), n)
        values = dict(self.constants)
        for k, v in (params or {}).items():
            if k not in values:
                raise ParameterError(f"{self.model}: unknown constant {k!r} (constants: "
                                     f"{', '.join(self.constants) or 'none'})")
            values[k] = finite_number(v, f"constant {k!r}")
        unset = [k for k, v in values.items() if v is None]
        if unset:
            raise ParameterError(f"{self.model}: constant(s) {', '.join(unset)} have no value; give them")
        out = evaluate(self.program, {"t": t, "y": list(Y), "prm": list(values.values())}, n)
        vals = np.stack(out, axis=-1).reshape(n, -1, 12)
        return vals[:, :, :3].copy(), vals[:, :, 3:].reshape(n, -1, 3, 3)

    def scene(self, t, Y, params=None, title: str | None = None, deformation_scale: float = 1.0) -> Scene:
        """The :class:`~mbsfmu.animation.scene.Scene` at the times t and coordinates Y, the
        elastic coordinates multiplied by ``deformation_scale`` (as :func:`~.scene.build_scene`
        does; a ParameterError for a scale that is not a finite number > 0, or not 1 for a model
        with no elastic coordinate)."""
        self.check_deformation_scale(deformation_scale)
        if deformation_scale != 1:
            rows = [self.coordinates.index(c) for c in self.elastic]
            Y, title = scale_deformation(np.reshape(Y, (len(self.coordinates), -1)), rows,
                                         deformation_scale, title or self.layout.title)
        points, rotations = self.poses(t, Y, params)
        return scene_of(self.layout, t, points, rotations, title)

    def check_deformation_scale(self, scale) -> None:
        """A ParameterError for a ``deformation_scale`` this view cannot draw (see :meth:`scene`)."""
        check_deformation_scale_of(self.model, bool(self.elastic), scale)


def view_resources(system) -> dict[str, str]:
    """The FMU archive's files that carry ``system``'s view: {RESOURCE: JSON}; none for a model
    with nothing to draw."""
    try:
        view = ModelView.from_model(system)
    except ModelError:
        return {}
    return {RESOURCE: view.to_json()}


def read_view(fmu_path) -> ModelView:
    """The view an FMU carries; a ModelError says why there is none (no such resource: an FMU
    not built by mbsfmu from a model, or by an mbsfmu before the viewer; unreadable; malformed)."""
    name = pathlib.Path(fmu_path).name
    try:
        with zipfile.ZipFile(fmu_path) as z:
            if RESOURCE not in z.namelist():
                raise ModelError(f"{name} carries no {RESOURCE}, so the viewer cannot draw it: "
                                 "an FMU carries its model's view when mbsfmu.build_fmu built it "
                                 "from a model (either kind), and this one was built elsewhere or by "
                                 "an mbsfmu before the 3D viewer")
            text = z.read(RESOURCE)
    except (OSError, zipfile.BadZipFile) as exc:
        raise ModelError(f"cannot read the view of {name}: {exc}") from None
    return ModelView.from_json(text, f"{RESOURCE} of {name}")
