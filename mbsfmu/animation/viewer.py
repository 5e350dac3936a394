"""The interactive 3D viewer: one self-contained HTML page that draws a scene with three.js
(WebGL) and plays it in the browser (orbit, pan, zoom; play, pause, speed, time slider).

The page holds the poses, not images: the sample times, every frame origin r_K (ISYS
components) and, for each frame carrying a shape, the rotation S_K (row-major 3 x 3), all as
little-endian float32 arrays in base64.  The browser places each shape at world = r_K + S_K p
(the same map as :mod:`.scene`'s wires), draws the stick lines and flexible bodies as rods
from frame origin to frame origin (a flexible body deformed through its nodes), and marks
every frame origin.  three.js (MIT, vendored under
``vendor/``, refreshed by ``ci/vendor_three``) and the page's script (``viewer.js``) are
inlined, so the page opens with no network.

The page exposes ``window.mbsViewer`` (used by the browser test and scriptable by users):
``setSample(i)``, ``play()``, ``pause()``, ``sample``, ``time``, ``playing``, ``camera`` and
``markFrame(name, color, radius)`` (a sphere that follows a frame's origin, drawn in front of
everything).
"""

from __future__ import annotations

import base64
import html
import json
import pathlib

import numpy as np

from ..core.errors import ParameterError

_HERE = pathlib.Path(__file__).resolve().parent
#: the vendored three.js bundle (global THREE, THREE.OrbitControls)
THREE_JS = _HERE / "vendor" / "three.min.js"
#: the page's own script
VIEWER_JS = _HERE / "viewer.js"


def _b64(a) -> str:
    """A float array as base64 of its little-endian float32 bytes (C order)."""
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode("ascii")


def _indices(a) -> str:
    """An index array as base64 of its little-endian uint32 bytes (C order)."""
    return base64.b64encode(np.ascontiguousarray(a, dtype="<u4").tobytes()).decode("ascii")


def _shape(w, slot: int) -> dict:
    """A shape of the page: a mesh also carries its vertices (V, 3) in its frame as float32 and
    its triangles (F, 3) as uint32 indices, base64."""
    out = {"name": w.name, "shape": w.shape, "size": list(w.size), "color": _hex(w.color),
           "frame": int(w.frame), "slot": slot}
    if w.mesh is not None:
        out["vertices"], out["faces"] = _b64(w.mesh.vertices), _indices(w.mesh.faces)
    return out


def _hex(color) -> str:
    from matplotlib.colors import to_hex

    return to_hex(color)


def frame_indices(frame_names, names, what: str) -> list[int]:
    """Indices of the frames ``names`` (one name or several) in ``frame_names``; a
    ParameterError names an unknown one."""
    if isinstance(names, str):
        names = [names]
    try:
        names = list(names)
    except TypeError:
        raise ParameterError(f"animate: {what} must be frame names, got {names!r}") from None
    out = []
    for n in names:
        if n not in frame_names:
            raise ParameterError(f"animate: {what}: unknown frame {n!r} (frames: {', '.join(frame_names)})")
        out.append(frame_names.index(n))
    return out


def scene_data(scene, fps: float, traces=(), axes=(), bounds=None) -> dict:
    """What the page needs of a :class:`~mbsfmu.animation.scene.Scene`, JSON-ready: the
    arrays base64-encoded float32 (``times`` (n,), ``positions`` (n, frames, 3), ``rotations``
    (n, posed frames, 3, 3) of the frames carrying a shape or axes, a mesh's vertices and
    triangles (see :func:`_shape`)); ``shapes`` and ``axes``
    refer to a row of ``rotations`` by ``slot``; ``traces`` are the frames whose origin's path
    is drawn up to the current sample; ``bounds``: (centre, half width) the camera frames,
    default the scene's (:meth:`~mbsfmu.animation.scene.Scene.bounds`)."""
    traced = frame_indices(scene.frame_names, traces, "traces")
    with_axes = frame_indices(scene.frame_names, axes, "axes")
    shaped = sorted({w.frame for w in scene.wires} | set(with_axes))
    slot = {k: i for i, k in enumerate(shaped)}
    centre, half = scene.bounds() if bounds is None else bounds
    return {
        "title": scene.title,
        "fps": float(fps),
        "samples": int(scene.samples),
        "frames": list(scene.frame_names),
        "times": _b64(scene.times),
        "positions": _b64(scene.points),
        "rotations": _b64(scene.rotations[:, shaped]),
        "lines": [{"name": ln.name, "color": _hex(ln.color), "frames": list(ln.frames)}
                  for ln in scene.lines],
        "shapes": [_shape(w, slot[w.frame]) for w in scene.wires],
        "traces": traced,
        "axes": [{"frame": k, "slot": slot[k]} for k in with_axes],
        "up": [float(c) for c in scene.up],
        "centre": [float(c) for c in centre],
        "half": float(half),
    }


def viewer_page(scene, fps: float, traces=(), axes=(), bounds=None) -> str:
    """The complete HTML page of the 3D viewer of ``scene`` played at ``fps`` samples per
    second (speed 1), with the paths of the frames ``traces`` and the axes of the frames
    ``axes`` (names), the camera framing ``bounds`` (default the scene's)."""
    data = json.dumps(scene_data(scene, fps, traces, axes, bounds), separators=(",", ":"))
    three = THREE_JS.read_text(encoding="utf-8")
    script = VIEWER_JS.read_text(encoding="utf-8")
    # nothing in the inlined text may close its <script> element early
    data = data.replace("</", "<\\/")
    return f"""<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>{html.escape(scene.title)}</title>
<style>
html, body {{ margin: 0; height: 100%; overflow: hidden; font: 13px sans-serif; background: #fff; }}
#view {{ position: absolute; inset: 0 0 44px 0; }}
#bar {{ position: absolute; left: 0; right: 0; bottom: 0; height: 44px; display: flex; gap: 8px;
        align-items: center; padding: 0 10px; box-sizing: border-box; background: #eee; }}
#slider {{ flex: 1; }}
#title {{ position: absolute; top: 6px; left: 10px; pointer-events: none; }}
</style>
</head>
<body>
<div id="view"></div>
<div id="title"></div>
<div id="bar">
<button id="play" type="button">&#x25B6;</button>
<label>speed <select id="speed">
<option value="0.1">0.1&times;</option><option value="0.25">0.25&times;</option>
<option value="0.5">0.5&times;</option><option value="1" selected>1&times;</option>
<option value="2">2&times;</option><option value="4">4&times;</option></select></label>
<input id="slider" type="range" min="0" max="0" step="1" value="0">
<span id="time"></span>
</div>
<script id="mbs-data" type="application/json">{data}</script>
<script>{three}</script>
<script>{script}</script>
</body>
</html>
"""


def iframe(scene, fps: float, traces=(), axes=(), height: int = 480) -> str:
    """The viewer page as an HTML ``<iframe>`` (its ``srcdoc``), for a notebook's output."""
    doc = html.escape(viewer_page(scene, fps, traces, axes), quote=True)
    return (f'<iframe srcdoc="{doc}" style="width: 100%; height: {int(height)}px; border: 0" '
            f'title="{html.escape(scene.title)}"></iframe>')


def write_viewer(scene, path, fps: float, traces=(), axes=()) -> pathlib.Path:
    """Write the 3D viewer page of ``scene`` to ``path`` (see :func:`viewer_page`)."""
    path = pathlib.Path(path)
    page = viewer_page(scene, fps, traces, axes)  # a refused option writes nothing
    path.write_text(page, encoding="utf-8")
    return path
